"""The greedy learner's options that need the data to resolve: scikit-learn's ``max_features`` (a
number of features to draw per node) and ``monotonic_cst`` (checked against the sample), and the
byte budget of a growth (:class:`ByteBudget`: a search's memory cap given to its greedy incumbent)."""
from __future__ import annotations

import numbers

import numpy as np

from treelearn._validation import INT64_MAX, Check, Interval, Options, RealNotInt, TreeLearnValueError

__all__ = ["MAX_FEATURES", "MONOTONIC_CST", "ByteBudget", "n_drawn_features", "check_monotonic_cst"]

#: scikit-learn's ``max_features``: a number, a fraction of the features, "sqrt", "log2" or None (all)
MAX_FEATURES = [Interval(numbers.Integral, 1, INT64_MAX), Interval(RealNotInt, 0, 1, closed="right"),
                Options("sqrt", "log2"), None]


def n_drawn_features(max_features, d: int) -> int:
    """scikit-learn's ``max_features`` of d features as a number to draw per node (0: every
    feature, searched in order: None, or a number >= d)."""
    if max_features is None:
        return 0
    if isinstance(max_features, str):
        k = max(1, int(np.sqrt(d) if max_features == "sqrt" else np.log2(d)))
    elif isinstance(max_features, numbers.Integral):
        if max_features > d:
            raise TreeLearnValueError(f"max_features={max_features} is more than the {d} features of X")
        k = int(max_features)
    else:
        k = max(1, int(float(max_features) * d))
    return 0 if k >= d else k


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


class ByteBudget:
    """``max_bytes`` (None: no cap) for a growth over ``n_classes`` classes, half for the tree's
    class counts and half for the split finder's class histograms."""

    #: bytes a node takes per class: its class counts held by the grower, by the returned Tree and
    #: by one conversion between them
    NODE_BYTES_PER_CLASS = 3 * 8

    def __init__(self, max_bytes, n_classes: int):
        self.max_bytes, self.n_classes = max_bytes, int(n_classes)

    def leaf_budget(self, n: int, max_depth, max_leaves):
        """``max_leaves`` for the growth: unchanged when every tree of ``n`` rows and ``max_depth``
        fits the tree's half, else the leaf budget that fits (a best-first growth: the same first
        splits, the most useful leaves first)."""
        if self.max_bytes is None:
            return max_leaves
        max_nodes = int(self.max_bytes / 2 // (self.NODE_BYTES_PER_CLASS * self.n_classes))
        full = 2.0 * n - 1 if max_depth is None else min(2.0 * n - 1, 2.0 ** (min(max_depth, 62) + 1) - 1)
        budget = max(2, (max_nodes + 1) // 2)
        if full <= max_nodes or (max_leaves is not None and max_leaves <= budget):
            return max_leaves
        return budget

    def histograms(self, n_codes: float):
        """Bytes of histograms kept for waiting nodes (-1: the finder's default; None: even one
        split's three histograms, the node's and its children's, do not fit the finder's half).
        A histogram holds the class sums and the row count of each of ``n_codes`` codes."""
        if self.max_bytes is None:
            return -1.0
        one = n_codes * (self.n_classes + 1) * 8.0
        half = self.max_bytes / 2
        return None if 3.0 * one > half else half - 3.0 * one
