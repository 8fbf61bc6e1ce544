"""The tasks of the Top-k / optimal search on Dask, run on the workers (the Top-k room's plug-in,
``sharded.py``, submits them).

* :func:`pack_block`: a block's kept rows as bit columns, laid out from bit ``start % 64`` of a
  word so that the blocks' words OR together into the sample's columns (:func:`assemble`);
* :func:`search_share`: share ``t`` of ``T`` of the root's candidates (candidates ``t``,
  ``t + T``, ...), each searched below the smaller of the share's own best (ties go to the
  earlier rank, so strictly below) and the best error any share has published so far plus a tie
  allowance (a lower-rank candidate of equal error in this share must still be found); then the
  tree of the share's best candidate is rebuilt from its warm cache;
* :func:`full_search` and :func:`top1_search`: the whole search in one task (depth <= 2, and the
  Top-1 incumbent of 0/1 data);
* :func:`block_extremes`: per node of the returned tree, the largest value going left and the
  smallest going right among a block's rows (CART's node-local midpoints, merged by max / min).

The shared bound and the stop request are :mod:`treelearn.distributed.farm`'s (the search then
returns what it found, marked ``timed_out``).
"""
from __future__ import annotations

import time

import numpy as np

from treelearn.data.bitmatrix import n_words_for, pack_columns
from treelearn.distributed import farm
from treelearn.distributed.blocks import kept_rows
from treelearn.tree.build import node_split_extremes


def pack_rows(binz, xk: np.ndarray, r: int) -> np.ndarray:
    """The Binarizer's features of the rows ``xk`` packed as bit columns ``(d, n_words)``, row 0 at
    bit ``r`` (0..63) of word 0, in blocks of about 4 MiB of 0/1 bytes."""
    m, d = xk.shape[0], int(binz.n_binary_features_)
    out = np.zeros((d, (r + m + 63) // 64), dtype=np.uint64)
    if d == 0 or m == 0:
        return out
    step = max(64, (4 * 2**20 // d) // 64 * 64)
    a, bit = 0, r
    while a < m:
        pad = bit % 64
        b = min(m, a + step - pad)
        block = binz.transform_encoded(xk[a:b])
        if pad:
            block = np.vstack([np.zeros((pad, d), dtype=np.uint8), block])
        packed = pack_columns(block)
        w0 = bit // 64
        out[:, w0:w0 + packed.shape[1]] |= packed
        bit += b - a
        a = b
    return out


def pack_block(x, y, w, binz, start, classes, scale, weighted):
    """A block's part of the packed sample: its kept rows' bits from bit ``start`` (the block's
    first kept row among all kept rows), class codes and (``weighted``) weights / ``scale``."""
    xk, yk, wk = kept_rows(x, y, w)
    codes = np.searchsorted(classes, yk)
    dtype = np.uint8 if classes.size <= 255 else np.int32
    return {"w0": int(start) // 64, "words": pack_rows(binz, xk, int(start) % 64), "y": codes.astype(dtype),
            "w": np.ascontiguousarray(wk / scale) if weighted else None}


def assemble(n_rows, n_features, n_classes, *parts):
    """The packed sample from the blocks' parts (in row order): columns ``(d, n_words)``, class
    codes, weights (None: unit)."""
    nw = n_words_for(n_rows)
    cols = np.zeros((int(n_features), nw), dtype=np.uint64)
    for p in parts:
        cols[:, p["w0"]:p["w0"] + p["words"].shape[1]] |= p["words"]
    y = np.concatenate([p["y"] for p in parts]) if parts else np.zeros(0, np.uint8)
    w = None if not parts or parts[0]["w"] is None else np.concatenate([p["w"] for p in parts])
    return {"columns": cols, "y": y, "w": w, "n_classes": int(n_classes)}


def problem_nbytes(problem) -> int:
    return int(sum(v.nbytes for v in problem.values() if isinstance(v, np.ndarray)))


def weight_total(problem) -> float:
    """The sample's total weight as the local fit sums it (``BinaryData.weights.sum()``)."""
    return float(problem["w"].sum()) if problem["w"] is not None else float(problem["y"].shape[0])


def _root_search(problem, cfg, deadline):
    from treelearn.learn.topk.estimator import root_search

    return root_search(problem["columns"], problem["y"], problem["n_classes"], problem["w"], k=cfg["k"],
                       max_depth=cfg["max_depth"], criterion=cfg["criterion"], scoring=cfg["scoring"],
                       time_limit=farm.seconds_left(deadline), memory_limit_mb=cfg["memory_limit_mb"])


def search_share(problem, t, T, cfg, ub_start, tie, deadline, bound_name, stop_name):
    """Share ``t`` of ``T`` of the root's candidates (see the module doc). Returns the candidates,
    the errors found (``{rank: error}``), the rank of the share's best and its tree, statistics."""
    t0 = time.perf_counter()
    rs = _root_search(problem, cfg, deadline)
    t_setup = time.perf_counter() - t0
    with farm.TaskLink(bound_name, stop_name, rs) as bound:
        cand = rs.candidates()
        errs, best, best_ci = {}, float(ub_start), -1
        for ci in range(t, len(cand), T):
            if rs.stopped:
                break
            ub = min(best, bound.get() + tie)
            e = rs.search(int(cand[ci]), ub)
            if e is not None:
                errs[ci], best, best_ci = e, e, ci
                bound.offer(e)
            if best <= 0:
                break
        t_build = time.perf_counter()
        tree = rs.build(int(cand[best_ci])) if best_ci >= 0 else None
        t_build = time.perf_counter() - t_build
        stats = rs.stats()
    return {"t": t, "candidates": cand, "errs": errs, "best": best_ci, "tree": tree, "stats": stats,
            "seconds": time.perf_counter() - t0, "setup_seconds": t_setup, "build_seconds": t_build}


def full_search(problem, cfg, upper_bound, deadline):
    """The whole search in this task (:func:`~treelearn.learn.topk.estimator.topk_search`, one thread)."""
    from treelearn.data.bitmatrix import BinaryData
    from treelearn.learn.topk.estimator import topk_search

    data = BinaryData.from_packed(problem["columns"], problem["y"], problem["n_classes"], problem["w"])
    return topk_search(data, k=cfg["k"], max_depth=cfg["max_depth"], criterion=cfg["criterion"],
                       scoring=cfg["scoring"], time_limit=farm.seconds_left(deadline), memory_limit_mb=cfg["memory_limit_mb"],
                       upper_bound=upper_bound)


def top1_search(problem, cfg, deadline):
    """The Top-1 tree of 0/1 data (the greedy incumbent there, as the local fit grows it)."""
    return full_search(problem, {**cfg, "k": 1, "scoring": "gain", "memory_limit_mb": 1024}, None, deadline)


def block_extremes(x, y, w, tree):
    """Per node of ``tree``: the largest value going left and the smallest going right among the
    block's kept rows (:func:`treelearn.tree.build.node_split_extremes`)."""
    xk, _, _ = kept_rows(x, y, w)
    return node_split_extremes(tree, xk)
