"""The greedy learner's options that need the data to resolve: scikit-learn's ``max_features`` (a
number of features to draw per node) and ``monotonic_cst`` (checked against the sample by
:mod:`treelearn.learn.monotone`, shared with the exact searches), and the byte budget of a growth
(:class:`ByteBudget`: a search's memory cap given to its greedy incumbent)."""
from __future__ import annotations

import numbers

import numpy as np

from treelearn._validation import INT64_MAX, Interval, Options, RealNotInt, TreeLearnValueError
from treelearn.learn.monotone import MONOTONIC_CST, check_monotonic_cst

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
