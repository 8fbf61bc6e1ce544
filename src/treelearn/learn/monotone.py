"""scikit-learn's ``monotonic_cst``, shared by the learners that take it (the greedy learner and
the exact searches): the parameter's check, and for the hard-label optimal trees the rule that
makes ``predict_proba`` monotone.

The exact searches (Top-k / optimal, ``learn/topk/mono.h``) use scikit-learn's sufficient
condition on hard labels: at every split on a feature constrained +1 every leaf of the left
(``x <= t``) subtree predicts a class <= every leaf of the right subtree (-1: >=). With two
classes: the left subtree predicts ``classes_[0]`` everywhere or the right one ``classes_[1]``
everywhere. The search may then give a leaf the class of its minority (a side collapsed to one
leaf); the result's ``label`` names such leaves.

Probabilities (:func:`monotone_values`): a leaf's fraction p of ``classes_[1]`` is first moved
into its label's half (``p <= 1/2`` for ``classes_[0]``, ``p >= HALF_UP`` for ``classes_[1]``,
:data:`HALF_UP` just above 1/2: predict keeps the label, ties going to the first class), then
clipped to bounds passed down as scikit-learn does, the middle value of a constrained split
being 1/2 when its decreasing side (left for +1) predicts ``classes_[0]`` everywhere, else
:data:`HALF_UP` (its increasing side then predicts ``classes_[1]`` everywhere). Every leaf
left of such a split then has p <= the middle <= every leaf right of it: p is monotone, and
``predict`` (the larger probability) is the search's hard label.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import Check, TreeLearnValueError
from treelearn.tree._nodes import NUMERIC

__all__ = ["MONOTONIC_CST", "check_monotonic_cst", "binary_constraints", "leaf_labels", "labelled_errors",
           "monotone_values", "HALF_UP"]

#: the probability of a leaf labelled ``classes_[1]`` at least (just above 1/2, see the module doc)
HALF_UP = 0.5 + 1e-9


def _check_constraints(value) -> None:
    cst = np.asarray(value)
    if cst.ndim != 1 or cst.dtype.kind not in "iuf" or not np.isin(cst, (-1, 0, 1)).all():
        raise TreeLearnValueError(f"monotonic_cst must be a 1-D array-like of -1, 0 and 1 (one per feature), got "
                                  f"{value!r}")


#: scikit-learn's ``monotonic_cst``: None or one of -1, 0, 1 per feature (its length is checked by the fit)
MONOTONIC_CST = [None, Check(_check_constraints, "an array-like of -1, 0 and 1, one per feature")]


def check_monotonic_cst(monotonic_cst, n_features: int, n_classes: int, is_categorical,
                        has_missing) -> np.ndarray | None:
    """scikit-learn's ``monotonic_cst`` checked against the sample: one of -1, 0, 1 per feature,
    two classes, constrained columns numeric, no missing value in X (scikit-learn's rules; a
    named error otherwise). Returns the int8 array, or None when nothing is constrained.
    ``is_categorical(j)``: whether column j is categorical; ``has_missing()``: whether X has a
    missing value (asked only when something is constrained)."""
    if monotonic_cst is None:
        return None
    cst = np.asarray(monotonic_cst)
    if cst.ndim != 1 or cst.shape[0] != n_features:
        raise TreeLearnValueError(f"monotonic_cst needs one entry per feature: {n_features}, got shape {cst.shape}")
    if cst.dtype.kind not in "iuf" or not np.isin(cst, (-1, 0, 1)).all():
        raise TreeLearnValueError(f"monotonic_cst entries must be -1, 0 or 1, got {np.unique(cst).tolist()!r}")
    cst = cst.astype(np.int8)
    if not cst.any():
        return None
    if n_classes > 2:
        raise TreeLearnValueError("monotonic_cst needs two classes (a constraint on the probability of the "
                                  "second class, as scikit-learn's); y has more")
    cat = [j for j in np.flatnonzero(cst).tolist() if is_categorical(j)]
    if cat:
        raise TreeLearnValueError(f"monotonic_cst constrains categorical columns {cat}; only numeric columns have an "
                                  "order")
    if has_missing():
        raise TreeLearnValueError("monotonic_cst with missing values in X is not supported (as in scikit-learn)")
    return cst


def binary_constraints(cst: np.ndarray, feature, kind) -> np.ndarray:
    """The constraint of each binary feature (raw column ``feature``, condition ``kind``): its
    column's for ``x >= t`` (1 = the larger values), 0 for any other condition."""
    feature = np.asarray(feature, dtype=np.int64)
    out = np.zeros(feature.size, dtype=np.int8)
    num = (np.asarray(kind) == NUMERIC) & (feature >= 0)
    out[num] = cst[feature[num]]
    return out


def leaf_labels(value, label=None) -> np.ndarray:
    """Per node its class index: ``label`` where >= 0 (a forced class), else the majority of
    ``value`` (ties to the first class)."""
    lab = np.argmax(np.asarray(value), axis=1)
    if label is not None:
        label = np.asarray(label)
        lab = np.where(label >= 0, label, lab)
    return lab


def labelled_errors(children_left, value, label) -> float:
    """Weighted training misclassifications of a tree whose leaves predict ``leaf_labels``: at
    every leaf its weight outside the predicted class."""
    value = np.asarray(value, dtype=np.float64)
    leaf = np.asarray(children_left) < 0
    lab = leaf_labels(value, label)[leaf]
    v = value[leaf]
    return float(np.sum(np.maximum(v.sum(axis=1) - v[np.arange(v.shape[0]), lab], 0.0)))


def _constrained_split(lab, left_leaves, right_leaves, s):
    """The middle value of a split constrained s whose subtrees' leaves have labels lab[...]."""
    low_side = left_leaves if s > 0 else right_leaves  # the side whose values must stay below
    return 0.5 if not np.any(lab[low_side]) else HALF_UP


def monotone_values(tree, cst: np.ndarray, label=None):
    """Rewrite the leaves' ``value`` of a two-class hard-label tree satisfying the sufficient
    condition (module doc) so that ``predict_proba`` is monotone and ``predict`` gives the
    leaves' labels (``label``: forced classes, -1 the majority); each leaf keeps its weight.
    Internal nodes keep their counts. In place; returns the tree."""
    left, right = tree.children_left, tree.children_right
    value = np.array(tree.value, dtype=np.float64)  # (a copy: the search's counts stay as they are)
    lab = leaf_labels(value, label)
    n = left.size
    leaves_of = [None] * n  # the leaves under each node, children before parents
    for i in range(n - 1, -1, -1):
        leaves_of[i] = [i] if left[i] < 0 else leaves_of[left[i]] + leaves_of[right[i]]
    lo, hi = np.zeros(n), np.ones(n)
    for i in range(n):  # preorder: a parent before its children
        if left[i] < 0:
            continue
        a, b = left[i], right[i]
        lo[a], hi[a], lo[b], hi[b] = lo[i], hi[i], lo[i], hi[i]
        s = int(cst[tree.feature[i]]) if tree.kind[i] == NUMERIC else 0
        if s == 0:
            continue
        mid = _constrained_split(lab, leaves_of[a], leaves_of[b], s)
        low, high = (a, b) if s > 0 else (b, a)
        hi[low] = min(hi[low], mid)
        lo[high] = max(lo[high], mid)
    for i in np.flatnonzero(left < 0):
        w = value[i].sum()
        p = value[i, 1] / w if w > 0 else 0.5
        p = min(p, 0.5) if lab[i] == 0 else max(p, HALF_UP)
        p = min(max(p, lo[i]), hi[i])
        value[i] = (w if w > 0 else 1.0) * np.array([1.0 - p, p])
    tree.value = value
    return tree


def prediction_errors(tree, Xe, y, weights=None) -> float:
    """Weighted training misclassifications of ``tree`` by its predictions on the encoded rows
    ``Xe`` (class codes ``y``): for trees whose values are not counts (a constrained greedy
    tree's clipped probabilities)."""
    pred = tree.leaf_class_index()[tree.apply_encoded(Xe)]
    wrong = pred != np.asarray(y)
    return float(np.sum(np.asarray(weights)[wrong])) if weights is not None else float(np.sum(wrong))
