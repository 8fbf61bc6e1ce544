"""From a learner's search result to a :class:`~treelearn.tree.tree.Tree`: the one path.

Every learner ends a fit here (the greedy learner through :func:`split_thresholds` only: its
kernel returns raw-column splits with their node counts):

* :func:`binary_tree`: a result on binary features (Top-k / optimal, min-rank) as a Tree on the
  raw columns, each numeric split at its node-local midpoint;
* :func:`recount`: node counts of a result that has none (the continuous solver, min-rank), from
  the leaf each training row reaches through the compiled router (``_tree.apply_rows`` or the
  ±1 evaluator) and :func:`treelearn.tree._tree.node_counts`;
* :func:`node_local_midpoints` = :func:`node_split_extremes` + :func:`apply_node_midpoints`.

The threshold convention (scikit-learn's)
-----------------------------------------
A numeric split separates the largest training value of its node going left, ``a``, from the
smallest going right, ``b``. scikit-learn stores their midpoint ``m = (a + b) / 2`` and sends
``x <= m`` left. A Tree sends ``x >= t`` right, so every learner stores ``t = nextafter(m, +inf)``,
the next double above ``m`` (:func:`split_thresholds`): a new value equal to the midpoint goes
left, as in scikit-learn, every training value goes where it went in the fit, and the
scikit-learn export gets ``m`` back exactly (``nextafter(t, -inf)``). When ``a`` and ``b`` are
adjacent doubles (no double strictly between them) the threshold is ``b``. On 0/1 data the
threshold is ``nextafter(0.5, +inf)``, on ±1 data ``nextafter(0.0, +inf)``.
"""
from __future__ import annotations

import math

import numpy as np

from treelearn.tree._tree import apply_rows, node_counts, split_extremes
from treelearn.tree.tree import NUMERIC, Tree

__all__ = ["split_threshold", "split_thresholds", "binary_tree", "recount", "route", "node_local_midpoints",
           "node_split_extremes", "apply_node_midpoints"]

#: up to this many splits, :func:`split_thresholds` computes in Python floats (a dozen NumPy
#: calls cost more than a few scalar operations each)
_SCALAR_SPLITS = 24


def split_threshold(a: float, b: float) -> float:
    """The Tree threshold of a numeric split between the values ``a < b`` (see the module doc)."""
    a, b = float(a), float(b)
    m = (a + b) / 2.0
    if not math.isfinite(m):  # a + b overflowed
        m = a / 2.0 + b / 2.0
    t = math.nextafter(m, math.inf)
    return t if a < t <= b else b


def split_thresholds(a, b) -> np.ndarray:
    """:func:`split_threshold` of every pair ``(a[i], b[i])`` (the same IEEE operations)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.size <= _SCALAR_SPLITS:
        return np.array([split_threshold(x, y) for x, y in zip(a.tolist(), b.tolist())], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        m = (a + b) / 2.0
    fin = np.isfinite(m)
    if not fin.all():
        m = np.where(fin, m, a / 2.0 + b / 2.0)
    t = np.nextafter(m, np.inf)
    return np.where((a < t) & (t <= b), t, b)


def binary_tree(binz, split_feature, *, Xe=None, **fields) -> Tree:
    """The Tree on raw columns of a learner's result on binary features: ``split_feature`` per
    node the binarizer's feature it splits on (-1 at a leaf), ``fields`` the Tree's other arrays
    (children, value, ...). Each split's missing values go where its binary feature sends them
    (see :func:`treelearn.data.binarize.tree_splits`), and to the child with more training weight
    when its column had no missing value in training.

    Numeric thresholds follow the module's convention: with ``Xe`` (the encoded training rows)
    at the node-local midpoints; on a 0/1 or ±1 matrix packed as it is (``binz.binary_values_``)
    between its two values; otherwise the binarizer's own thresholds (the same training
    partition)."""
    from treelearn.data.binarize import tree_splits

    feature, threshold, kind, missing_left = tree_splits(binz, split_feature)
    pair = getattr(binz, "binary_values_", None)
    if Xe is None and pair is not None:
        num = (kind == NUMERIC) & np.isfinite(threshold) & (np.asarray(split_feature) >= 0)
        threshold = np.where(num, split_threshold(*pair), threshold)
    # trusted construction: a kernel's node arrays and the binarizer's splits are a tree by
    # construction (Tree._check, the validation of arrays from outside, would only repeat it)
    tree = Tree(feature=feature, threshold=threshold, kind=kind, validate=False, **fields)
    rec = missing_left >= 0
    if rec.any():
        m = tree.missing_go_to_left.copy()
        m[rec] = missing_left[rec]
        tree = Tree(feature=feature, threshold=threshold, kind=kind, missing_go_to_left=m, validate=False, **fields)
    if Xe is not None:
        node_local_midpoints(tree, Xe)
    return tree


def recount(left, right, leaves, y, w, n_classes: int):
    """``(value, n_node_samples)`` of a tree (children arrays, children after parents) from the
    leaf each training row reaches (``leaves``, from the compiled router): a node's counts are
    the weights (``w``; None: 1) of the rows below it, summed in row order."""
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    parent = np.full(left.size, -1, dtype=np.int64)
    internal = np.flatnonzero(left >= 0)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    return node_counts(np.ascontiguousarray(leaves, dtype=np.int64), parent,
                       np.ascontiguousarray(y, dtype=np.int64), w, int(n_classes))


def route(tree: Tree, Xe: np.ndarray, missing_left=None) -> np.ndarray:
    """The leaf of every row of the encoded matrix ``Xe`` (the compiled router); ``missing_left``
    overrides the tree's missing-value directions."""
    m = tree.missing_go_to_left if missing_left is None else np.ascontiguousarray(missing_left, dtype=np.uint8)
    return apply_rows(np.ascontiguousarray(Xe, dtype=np.float64), tree.children_left, tree.children_right,
                      tree.feature, tree.threshold, tree.kind, m)


def node_local_midpoints(tree: Tree, Xe: np.ndarray) -> Tree:
    """Every numeric split's threshold at its node-local midpoint (the module's convention), from
    the training rows ``Xe`` (rows with a missing value aside). The training partition of every
    node is unchanged (so are training errors and optimality); what changes is where new values
    between the two sides fall. The tree is changed in place and returned."""
    if tree.node_count == 1:
        return tree
    lo, hi = node_split_extremes(tree, Xe)
    return apply_node_midpoints(tree, lo, hi)


def node_split_extremes(tree: Tree, Xe: np.ndarray):
    """Per node of ``tree``, over the rows of ``Xe`` reaching it (the compiled router, with the
    tree's thresholds and missing directions): the largest value of its split column going left
    (``lo``, -inf when none) and the smallest going right (``hi``, +inf when none), for numeric
    splits with a finite threshold (the others: -inf, +inf), missing values aside. Row shards'
    extremes merge by max / min."""
    return split_extremes(np.ascontiguousarray(Xe, dtype=np.float64), tree.children_left, tree.children_right,
                          tree.feature, tree.threshold, tree.kind, tree.missing_go_to_left)


def apply_node_midpoints(tree: Tree, lo: np.ndarray, hi: np.ndarray) -> Tree:
    """Set each numeric split's threshold to :func:`split_thresholds` of ``lo`` and ``hi`` of
    :func:`node_split_extremes` where both are finite; in place, returns the tree."""
    nodes = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi))
    if nodes.size:
        tree.threshold[nodes] = split_thresholds(np.asarray(lo)[nodes], np.asarray(hi)[nodes])
    return tree
