"""The min-rank room's Dask plug-in: the blocks' distinct points, for 0/1 and ±1 data.

FINDMIN's answer depends only on the set of distinct points of the sample (the local learner
already searches the distinct rows), and the tree's node counts only on how many rows of each
class, and of what weight, each distinct point has. So the reduction is one pass over the
blocks: every block returns its distinct rows (packed bits of every column, with the label) and,
per distinct (row, label), its row count and weight sum, plus each column's count of ones (which
columns are constant) and whether every value is 0/1 or ±1. The driver merges them, drops the
constant columns, orders the distinct rows as the local learner does, and runs the same search on
them (``MinRankTreeClassifier._fit_sharded``: the local search and its result step); the node
counts come from the distinct rows' multiplicities (exact integers without weights). The search
itself stays on the driver: FIND is a sequential procedure whose answer is
the first variable (in order) that succeeds, over a memo shared by the whole search; farming its
variables out would lose the memo and need an ordered first success, while the distinct rows of
0/1 data are at most 2^d (typically far fewer than the rows).

Any other data (numeric columns get the exact Binarizer: every midpoint of every column is a
variable, which needs every distinct value) is gathered.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError, check_target, weight_scale
from treelearn.criteria import gini_index
from treelearn.data.binarize import Binarizer
from treelearn.tree.build import recount


def supports(data, *, class_weight, categorical) -> bool:
    """Numeric columns without ``class_weight`` may be 0/1 or ±1 (decided by :func:`distinct_points`)."""
    return class_weight is None and categorical is None and data.is_numeric()


def block_points(x, y, w):
    """A block's distinct points: labels of every row, kept rows, weight range, whether every kept
    value is 0/1 (``zero_one``) or ±1 (``signed``), ones per column, and per distinct (row bits,
    label): the packed row, the label, the row count and the weight sum."""
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TreeLearnValueError(f"X has dtype {x.dtype}: the distributed fit needs numeric columns")
    y = np.asarray(y).ravel()
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64).ravel()
    if w.size and (not np.isfinite(w).all() or w.min() < 0):
        raise TreeLearnValueError("sample_weight must be finite and non-negative")
    keep = w > 0
    xk, yk, wk = (x, y, w) if keep.all() else (x[keep], y[keep], w[keep])
    out = {"labels": np.unique(y), "kept_labels": np.unique(yk), "n_kept": int(yk.shape[0]),
           "wmin": float(wk.min()) if wk.size else np.inf, "wmax": float(wk.max()) if wk.size else -np.inf}
    if x.dtype.kind == "f" and np.isinf(xk).any():
        raise TreeLearnValueError("X contains infinity: the distributed fit needs finite values or NaN")
    out["zero_one"] = bool(((xk == 0) | (xk == 1)).all())
    out["signed"] = x.dtype.kind in "if" and bool(((xk == 1) | (xk == -1)).all())
    if not (out["zero_one"] or out["signed"]):
        return out
    bits = xk > 0
    out["ones"] = np.count_nonzero(bits, axis=0).astype(np.int64)
    packed = np.packbits(bits, axis=1)
    # distinct (row, label): the row's bytes and the label's position among the block's labels
    lab = np.searchsorted(out["kept_labels"], yk)
    rec = np.concatenate([packed, lab.astype(np.int64).view(np.uint8).reshape(-1, 8)], axis=1)
    key = np.ascontiguousarray(rec).view(np.dtype((np.void, rec.shape[1]))).ravel()
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = inv.ravel()
    out["rows"] = packed[first]
    out["row_labels"] = yk[first]
    out["count"] = np.bincount(inv, minlength=first.size).astype(np.int64)
    out["wsum"] = np.bincount(inv, weights=wk, minlength=first.size)
    return out


def distinct_points(data):
    """One pass over the blocks (:func:`block_points`): the sample's distinct points in the local
    learner's order, with their multiplicities (a dict: ``binz`` the Binarizer of the 0/1 or ±1
    columns, ``B`` the points' bits, ``y`` their class codes, ``classes``, ``scale`` the weights'
    divisor, ``count`` and ``wsum`` per point, ...); None when the blocks are not all 0/1 or all ±1
    or have one class (the local fit on the gathered blocks)."""
    import dask

    ex, blocks = data.executor, data.blocks
    parts = ex.gather(ex.compute([dask.delayed(block_points)(x, yb, wb)
                                  for x, yb, wb in zip(blocks.x, blocks.y, blocks.w)]))
    present = np.unique(np.concatenate([p["kept_labels"] for p in parts]))
    zero_one = all(p["zero_one"] for p in parts)
    signed = all(p["signed"] for p in parts)
    if len(present) <= 1 or not (zero_one or signed):
        return None
    labels = np.unique(np.concatenate([p["labels"] for p in parts]))
    classes, _ = check_target(labels, labels.shape[0])
    pts = _merge(parts, classes, blocks.n_features, 0.5 if zero_one else 0.0, data.schema())
    pts["classes"] = classes
    return pts


def _merge(parts, classes, d, threshold, schema):
    """The sample's distinct points in the local learner's order, with their multiplicities."""
    n = int(sum(p["n_kept"] for p in parts))
    ones = np.sum([p["ones"] for p in parts], axis=0)
    keep = np.flatnonzero((ones > 0) & (ones < n))
    binz = Binarizer()
    binz.fit_binary_columns(schema, keep, threshold)
    rows = np.concatenate([p["rows"] for p in parts], axis=0)
    B = np.unpackbits(rows, axis=1, count=d)[:, keep]
    codes = np.searchsorted(classes, np.concatenate([p["row_labels"] for p in parts]))
    count = np.concatenate([p["count"] for p in parts])
    wsum = np.concatenate([p["wsum"] for p in parts])
    wmin, wmax = min(p["wmin"] for p in parts), max(p["wmax"] for p in parts)
    scale = weight_scale(wmin, wmax)
    # the local learner's keys of the rows (their packed bits) and its order of the distinct rows
    from treelearn.learn.minrank.estimator import group_rows, row_keys

    keys = row_keys(B)
    first, inv = group_rows(keys)
    inv = inv.ravel()
    bad = np.flatnonzero(codes != codes[first][inv])
    if bad.size:
        _inconsistent(inv, bad, codes, count, classes)
    m = first.size
    return {"binz": binz, "B": np.ascontiguousarray(B[first]), "y": codes[first], "n": n, "scale": scale,
            "unit": wmax == wmin, "count": np.bincount(inv, weights=count, minlength=m).astype(np.int64),
            "wsum": np.bincount(inv, weights=wsum / scale, minlength=m), "threshold": threshold, "keep": keep,
            "d": d}


def _inconsistent(inv, bad, codes, count, classes):
    from treelearn.learn.minrank.estimator import InconsistentSampleError

    groups = np.unique(inv[bad])
    shown = []
    for g in groups[:5]:
        members = np.flatnonzero(inv == g)
        labels = {}
        for i in members.tolist():
            labels[classes[codes[i]]] = labels.get(classes[codes[i]], 0) + int(count[i])
        shown.append("[" + ", ".join(f"{c!s}: {k} row(s)" for c, k in labels.items()) + "]")
    more = f" and {len(groups) - 5} more groups" if len(groups) > 5 else ""
    raise InconsistentSampleError(
        f"inconsistent sample: {len(groups)} group(s) of identical rows (after binarization) carry different labels, "
        f"so no decision tree is consistent with it; labels of each group: {'; '.join(shown)}{more}",
        [np.flatnonzero(inv == g) for g in groups])


def node_counts(tree, pts) -> None:
    """value / n_node_samples / impurity of every node of the search's tree from the distinct
    points' multiplicities (the local learner routes every row; the counts are the same, sums of
    weights up to order): each point routed by the compiled router, its rows and weight summed up
    the tree by :func:`treelearn.tree.build.recount`."""
    X = np.zeros((pts["B"].shape[0], pts["d"]))
    low = 0.0 if pts["threshold"] == 0.5 else -1.0
    X[:, pts["keep"]] = np.where(pts["B"] > 0, 1.0, low)
    leaves = tree.apply_encoded(X)
    left, right = tree.children_left, tree.children_right
    count = pts["count"].astype(np.float64)
    value, _ = recount(left, right, leaves, pts["y"], count if pts["unit"] else pts["wsum"], pts["classes"].size)
    rows, _ = recount(left, right, leaves, np.zeros_like(pts["y"]), count, 1)
    tree.value = value
    tree.n_node_samples = rows[:, 0].astype(np.int64)
    tree.impurity = gini_index(value)
