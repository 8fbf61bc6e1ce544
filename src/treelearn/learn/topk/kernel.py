"""The compiled Top-k search module for this CPU (portable or AVX-512 build) and the search of
the root's candidates one at a time (the Dask fit's shares, :mod:`treelearn.learn.topk.sharded`)."""
from __future__ import annotations

import numpy as np

from treelearn.criteria import get_criterion
from treelearn.learn.topk import _topk as _topk_baseline


def cpu_has_avx512_popcnt() -> bool:
    """x86-64-v4 plus AVX-512 VPOPCNTDQ, as NumPy's CPU dispatcher sees the machine."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # pragma: no cover - NumPy 1.x
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return False
    need = ("AVX2", "BMI2", "FMA3", "F16C", "AVX512F", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512VL",
            "AVX512VPOPCNTDQ")
    return all(feats.get(f, False) for f in need)


def pick_search_module():
    """The compiled search for this CPU: the AVX-512 build (popcounts of eight column words per
    instruction) when the CPU has it and it was built, else the portable build. The environment
    variable ``TREELEARN_SIMD=baseline`` forces the portable one. Both give identical results."""
    import os

    if os.environ.get("TREELEARN_SIMD", "").strip().lower() in ("baseline", "off", "none", "0"):
        return _topk_baseline, "baseline"
    if not cpu_has_avx512_popcnt():
        return _topk_baseline, "baseline"
    try:
        from treelearn.learn.topk import _topk_avx512
    except ImportError:  # not built (compiler without the flags, or not x86-64)
        return _topk_baseline, "baseline"
    return _topk_avx512, "avx512"


_topk, SEARCH_KERNEL = pick_search_module()
#: the compiled search module chosen for this CPU
search_module = _topk


# ---------------------------------------------------------------- the search on Dask (sharded.py)
def root_search(columns, y, n_classes: int, weights, *, k, max_depth: int, criterion="entropy", scoring="gain",
                time_limit=None, memory_limit_mb=1024, cache_depth1=None, feature_classes=False):
    """The search of the root's candidates one at a time, for a caller that runs shares of them
    elsewhere (:mod:`treelearn.distributed`): a compiled ``RootSearch`` over the packed columns
    ``(d, n_words)``, class codes ``y`` and weights (None: unit), with the settings of
    :func:`topk_search` (built-in criteria). Its ``candidates()`` are the root's candidates in
    rank order (duplicates removed), ``search(f, ub)`` the error of the best tree whose root
    splits on f when it is below ``ub`` (else None), ``build(f)`` that tree (node arrays as
    :func:`topk_search` returns them, before :func:`~treelearn.tree.tree.kernel_nodes`),
    ``stats()`` the search statistics. Taking, for every share, its candidates' errors below the
    share's best and the lowest rank among the smallest errors gives :func:`topk_search`'s tree
    (the root's candidates are what ``n_jobs`` threads share too)."""
    crit = get_criterion(criterion)
    if crit.code < 0:
        raise TypeError("root_search takes a built-in criterion")
    columns = np.ascontiguousarray(columns, dtype=np.uint64)
    d, n_words = columns.shape
    kk = d if k is None or k == "all" else int(k)
    if cache_depth1 is None:
        cache_depth1 = d >= 2 * n_words and kk < d
    kk = max(1, min(kk, max(d, 1)))
    y = np.asarray(y)
    y = y if y.dtype == np.uint8 else np.ascontiguousarray(y, dtype=np.int64)  # bytes: read in place
    return _topk.RootSearch(columns, y, int(n_classes), weights, kk,
                            int(max_depth), int(crit.code), scoring == "gain_ratio",
                            float(time_limit) if time_limit is not None else 0.0,
                            float(memory_limit_mb) * 1024.0 * 1024.0, bool(cache_depth1), bool(feature_classes))
