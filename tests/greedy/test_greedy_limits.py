"""The greedy growth within a byte budget (``grow_greedy(max_bytes=...)``): what an exact search's
memory cap gives its greedy incumbent. The tree's class counts take at most half the budget and
the split finder's class histograms the other half; a budget that binds nowhere changes nothing."""
from __future__ import annotations

import numpy as np
import pytest

from treelearn.learn.greedy.estimator import grow_greedy


def _data(n_classes, n=1500, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, n_classes, n)
    return X, y


@pytest.mark.parametrize("n_classes,max_thresholds", [(300, 64), (300, None), (3, 64)])
def test_many_classes_tree_within_half_the_bytes(n_classes, max_thresholds):
    X, y = _data(n_classes)
    cap = 2.0 * 2**20
    tree = grow_greedy(X, y, n_classes, max_depth=40, max_thresholds=max_thresholds, max_bytes=cap)
    assert tree.node_count * n_classes * 24 <= cap / 2
    full = grow_greedy(X, y, n_classes, max_depth=40, max_thresholds=max_thresholds)
    if full.node_count * n_classes * 24 <= cap / 2:  # the budget did not bind: the same tree
        np.testing.assert_array_equal(tree.feature, full.feature)
        np.testing.assert_array_equal(tree.threshold, full.threshold)
    else:  # best-first to the leaf budget that fits: fewer training errors than the root leaf
        assert tree.n_leaves == (int(cap / 2 // (n_classes * 24)) + 1) // 2
        assert tree.training_misclassifications() < y.size - np.bincount(y).max()


def test_a_budget_that_never_binds_changes_nothing():
    X, y = _data(4, n=3000)
    for mt in (None, 32):
        a = grow_greedy(X, y, 4, max_depth=8, max_thresholds=mt)
        b = grow_greedy(X, y, 4, max_depth=8, max_thresholds=mt, max_bytes=1e9)
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
        np.testing.assert_array_equal(a.value, b.value)


def test_histograms_over_the_budget_use_the_sorted_finder_and_the_same_tree():
    """A budget that fits the tree but not three class histograms: the row-sorted finder, which
    finds the same splits as the histograms do (the finders are interchangeable)."""
    X, y = _data(200, n=800, d=6, seed=4)
    a = grow_greedy(X, y, 200, max_depth=3, max_thresholds=16, finder="hist")
    one_hist = 6 * 17 * 201 * 8.0
    b = grow_greedy(X, y, 200, max_depth=3, max_thresholds=16, max_bytes=2 * (2 * one_hist))
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
