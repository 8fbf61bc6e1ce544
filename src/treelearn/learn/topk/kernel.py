"""The compiled Top-k search module for this CPU (portable or AVX-512 build), the whole search on
a :class:`~treelearn.data.bitmatrix.BinaryData` (:func:`topk_search`, the estimators' and
``select``'s) and the search of the root's candidates one at a time (the Dask fit's shares,
:mod:`treelearn.learn.topk.sharded`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from treelearn.criteria import get_criterion
from treelearn.learn.topk import _topk as _topk_baseline
from treelearn.tree.tree import kernel_nodes

if TYPE_CHECKING:
    from treelearn.data.bitmatrix import BinaryData


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


def topk_search(data: BinaryData, *, k, max_depth, criterion="entropy", scoring="gain", time_limit=None,
                memory_limit_mb=1024, n_jobs=1, cache_depth1=None, feature_classes=False,
                upper_bound=None, progress=None, min_weight=0.0, mono=None, min_rows=0, leaf_penalty=0.0,
                max_leaves=0, front=False):
    """Run the compiled search on a :class:`BinaryData`; returns the tree (over binary features,
    preorder arrays ``feature``/``children_left``/``children_right``/``value``/``n_node_samples``, the
    names of :data:`treelearn.tree.tree.KERNEL_NODE_KEYS`) and statistics
    (``error``, ``lower_bound``, ``timed_out``, ``nodes``, ``cache_hits``, ``evictions``, ``peak_bytes``).

    Tuning switches (none changes the result): ``cache_depth1`` also caches depth-1 subproblems
    (default: for k < d when there are at least twice as many features as 64-row words, i.e. when
    ranking a node costs more than hashing its cover); ``feature_classes`` groups the features identical on
    an h = 2 node before its depth-1 steps (off by default: the grouping costs more than it saves on
    the benchmark data).

    ``upper_bound``: the error of a known tree (the incumbent); the search only looks for trees
    with a smaller error (branch and bound from the start). When there is none, ``found`` is
    False and the tree arrays are empty (``lower_bound`` is then a bound >= ``upper_bound``).

    ``min_weight``: every leaf of a searched tree holds at least this weight (in ``data.weights``'
    units, rows when unweighted): scikit-learn's ``min_weight_fraction_leaf`` times the total;
    ``min_rows`` at least this many rows. ``leaf_penalty``: each leaf costs this many weighted errors
    (``ccp_alpha`` times the total weight; ``error`` and ``upper_bound`` are then of that cost).
    ``max_leaves``: at most this many leaves (0: none; one thread, ``upper_bound`` ignored);
    ``front``: the list of results for every budget 1..``max_leaves`` (:func:`error_size_front`).

    ``mono``: None or the monotonic constraint (-1, 0, 1) of each binary feature (two classes,
    :mod:`treelearn.learn.monotone`); the result's ``label`` then gives each node's forced class
    (-1: its majority)."""
    crit = get_criterion(criterion)
    # a user G (code -1): the search asks for a node's candidates' side costs in one batch
    cost = crit.weighted_impurity if crit.code < 0 else None
    d = data.n_features
    kk = d if k is None or k == "all" else int(k)
    if cache_depth1 is None:
        cache_depth1 = d >= 2 * data.n_words and kk < d
    kk = max(1, min(kk, max(d, 1)))
    out = _topk.search(
        np.ascontiguousarray(data.columns, dtype=np.uint64).reshape(d, data.n_words),
        np.ascontiguousarray(data.y, dtype=np.int64),
        int(data.n_classes),
        data.weights,
        kk,
        int(max_depth),
        int(crit.code),
        scoring == "gain_ratio",
        float(time_limit) if time_limit is not None else 0.0,
        float(memory_limit_mb) * 1024.0 * 1024.0,
        int(n_jobs),
        bool(cache_depth1),
        bool(feature_classes),
        cost,
        None if upper_bound is None else float(upper_bound),
        progress,
        float(min_weight),
        mono,
        int(min_rows),
        float(leaf_penalty),
        int(max_leaves),
        bool(front),
    )
    return [kernel_nodes(r) for r in out] if front else kernel_nodes(out)


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
