"""One threshold convention for every learner, scikit-learn's: a numeric split between the
training values a < b has the midpoint m = (a + b) / 2, and a new value equal to m goes where
scikit-learn's ``x <= m`` sends it, left (treelearn.tree.build); the scikit-learn export gives m
back exactly."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import treelearn as tl
from treelearn.tree.build import split_threshold, split_thresholds
from treelearn.tree.export import to_sklearn_arrays

# one numeric column whose best (and only useful) split lies between 1.25 and 2.5: m = 1.875
X_NUM = np.array([[0.0], [0.5], [1.25], [2.5], [3.0], [4.0]])
Y_NUM = np.array([0, 0, 0, 1, 1, 1])
MID = (1.25 + 2.5) / 2.0

LEARNERS = {
    "greedy": lambda: tl.GreedyTreeClassifier(max_depth=1),
    "top-k": lambda: tl.TopKTreeClassifier(k=2, max_depth=1),
    "optimal (binary)": lambda: tl.OptimalTreeClassifier(max_depth=1, solver="binary"),
    "optimal (continuous)": lambda: tl.OptimalTreeClassifier(max_depth=1, solver="continuous"),
    "min-rank": lambda: tl.MinRankTreeClassifier(),
    "pruned": lambda: tl.PrunedTreeClassifier(pruning=None),
}


def _numeric_splits(est, X):
    """(node, a, b) of every numeric split: the largest training value of its column going left
    and the smallest going right, read from the training rows' decision paths."""
    t = est.tree_
    paths = est.decision_path(X).toarray().astype(bool)
    out = []
    for node in np.flatnonzero((t.children_left >= 0) & (t.kind == 0)).tolist():
        col = X[:, t.feature[node]]
        left, right = paths[:, t.children_left[node]], paths[:, t.children_right[node]]
        out.append((node, float(col[left].max()), float(col[right].min())))
    return out


def _passes(est, x, node, child) -> bool:
    path = est.decision_path(np.array([[x]])).toarray()[0].astype(bool)
    return bool(path[node] and path[child])


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_a_value_at_the_midpoint_goes_left_as_in_scikit_learn(name):
    est = LEARNERS[name]().fit(X_NUM, Y_NUM)
    t = est.tree_
    splits = _numeric_splits(est, X_NUM)
    assert splits and any((a, b) == (1.25, 2.5) for _, a, b in splits)
    sk = DecisionTreeClassifier(max_depth=1).fit(X_NUM, Y_NUM)
    assert sk.tree_.threshold[0] == MID
    exported = to_sklearn_arrays(t).threshold
    for node, a, b in splits:
        m = (a + b) / 2.0
        assert exported[node] == m  # the export is scikit-learn's own threshold, the midpoint
        left, right = int(t.children_left[node]), int(t.children_right[node])
        for x in (m, np.nextafter(m, -np.inf), a):  # a value at the midpoint goes left: x <= m
            assert _passes(est, x, node, left), (node, x)
        for x in (np.nextafter(m, np.inf), b):
            assert _passes(est, x, node, right), (node, x)
    # training rows keep their sides
    np.testing.assert_array_equal(est.predict(X_NUM), Y_NUM)


@pytest.mark.parametrize("values", [(0.0, 1.0), (-1.0, 1.0)])
@pytest.mark.parametrize("name", ["top-k", "optimal (binary)", "min-rank", "greedy", "query"])
def test_binary_data_send_the_midpoint_left(name, values):
    """0/1 (and ±1) matrices are packed as they are, without thresholds: the split between the
    two values still follows the convention (x <= 0.5, x <= 0 go left)."""
    rng = np.random.default_rng(1)
    lo, hi = values
    X = np.where(rng.random((64, 3)) < 0.5, lo, hi)
    X[:2, 0] = lo, hi
    y = (X[:, 0] == hi).astype(int)
    est = (tl.QueryTreeClassifier(size=2) if name == "query" else LEARNERS[name]()).fit(X, y)
    t = est.tree_
    node = int(np.flatnonzero((t.children_left >= 0) & (t.feature == 0))[0])
    assert t.threshold[node] == split_threshold(lo, hi) == np.nextafter((lo + hi) / 2, np.inf)
    probe = np.tile(X[:1], (2, 1))
    probe[:, 0] = (lo + hi) / 2, hi
    assert list(est.predict(probe)) == [0, 1]


def test_split_thresholds_rule():
    a = np.array([1.25, 0.0, -1.0, 1.0, -1e308, 5e-324])
    b = np.array([2.5, 1.0, 1.0, np.nextafter(1.0, 2.0), 1e308, 1e-323])
    t = split_thresholds(a, b)
    assert t[0] == np.nextafter(1.875, np.inf) and t[1] == np.nextafter(0.5, np.inf)
    assert t[2] == np.nextafter(0.0, np.inf)
    assert t[3] == b[3]  # adjacent doubles: the upper value itself separates them
    assert t[4] == np.nextafter(0.0, np.inf)  # a + b overflows: a/2 + b/2
    assert np.all((a < t) & (t <= b))
    # the vectorised and the scalar forms are one rule
    big_a = np.repeat(a, 10)
    big_b = np.repeat(b, 10)
    np.testing.assert_array_equal(split_thresholds(big_a, big_b), np.repeat(t, 10))
    assert [split_threshold(x, y) for x, y in zip(a, b)] == t.tolist()
