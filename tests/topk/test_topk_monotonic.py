"""monotonic_cst in the Top-k / optimal binary search, against an independent brute force.

The search's semantics are scikit-learn's sufficient condition on hard labels (see
``treelearn.learn.monotone``): at every split on a feature constrained +1 (-1) every leaf of the
left subtree predicts a class <= (>=) every leaf of the right subtree. The brute force below
enumerates every tree of depth <= 3 over the binary features with every assignment of leaf
labels, keeps those whose leaf-label sets satisfy that condition at every constrained split
(checked on the leaves themselves, not by the search's collapse formula) and takes the least
weighted training error. The returned trees are checked for monotone predictions and
probabilities directly, on rows that differ in one constrained column only.
"""
import numpy as np
import pytest

from treelearn import GreedyTreeClassifier, OptimalTreeClassifier, TopKTreeClassifier
from treelearn._validation import TreeLearnValueError


# ---------------------------------------------------------------- the brute force
def _all_trees(B, depth, sign):
    """Every admissible tree of depth <= depth over the 0/1 columns of B: (predictions on B's
    rows, the set of its leaves' labels). Admissible: at a split on column f with sign s != 0,
    max(left labels) <= min(right labels) (s = +1) or min(left) >= max(right) (s = -1)."""
    n = B.shape[0]
    out = [(np.zeros(n, dtype=np.int64), frozenset({0})), (np.ones(n, dtype=np.int64), frozenset({1}))]
    if depth == 0:
        return out
    sub = _all_trees(B, depth - 1, sign)
    for f in range(B.shape[1]):
        go_right = B[:, f] > 0
        for pl, ll in sub:
            for pr, lr in sub:
                if sign[f] > 0 and max(ll) > min(lr):
                    continue
                if sign[f] < 0 and min(ll) < max(lr):
                    continue
                out.append((np.where(go_right, pr, pl), ll | lr))
    return out


def brute_force_error(B, y, w, depth, sign):
    """The least weighted training error of an admissible tree of depth <= depth (<= 3): depth
    3 as a split over two independently chosen depth-2 trees, each side's best per label set."""
    if depth <= 2:
        return min(float(np.sum(w[p != y])) for p, _ in _all_trees(B, depth, sign))
    sub = _all_trees(B, 2, sign)
    best = min(float(np.sum(w[p != y])) for p, _ in _all_trees(B, 0, sign))
    for f in range(B.shape[1]):
        go_right = B[:, f] > 0
        side = {}
        for r, mask in ((0, ~go_right), (1, go_right)):
            for p, labels in sub:
                e = float(np.sum(w[mask & (p != y)]))
                side[r, labels] = min(side.get((r, labels), np.inf), e)
        for (r0, l0), e0 in side.items():
            for (r1, l1), e1 in side.items():
                if r0 != 0 or r1 != 1:
                    continue
                if sign[f] > 0 and max(l0) > min(l1):
                    continue
                if sign[f] < 0 and min(l0) < max(l1):
                    continue
                best = min(best, e0 + e1)
    return best


def _thresholds(X):
    """Every binary feature x_j >= t of the numeric columns (t between consecutive values)."""
    cols, feats = [], []
    for j in range(X.shape[1]):
        v = np.unique(X[:, j])
        for t in (v[1:] + v[:-1]) / 2:
            cols.append(X[:, j] >= t)
            feats.append(j)
    return np.array(cols, dtype=np.int64).T.reshape(X.shape[0], -1), np.array(feats, dtype=np.int64)


def assert_monotone(model, X, cst, grid=None):
    """predict and predict_proba of classes_[1] monotone in every constrained column, on rows of X
    with that column replaced by every value of a grid (the rest unchanged)."""
    for j in np.flatnonzero(cst):
        g = np.unique(np.concatenate([X[:, j], np.linspace(X[:, j].min() - 1, X[:, j].max() + 1, 9)]))
        for row in X:
            Z = np.repeat(row[None, :], g.size, axis=0)
            Z[:, j] = g
            p = model.predict_proba(Z)[:, 1] * cst[j]
            lab = (model.predict(Z) == model.classes_[1]).astype(int) * cst[j]
            assert np.all(np.diff(lab) >= 0), (j, row)
            assert np.all(np.diff(p) >= -1e-12), (j, row, p)


def _data(seed, n, p, binary=True, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(float) if binary else rng.integers(0, 4, size=(n, p)).astype(float)
    y = ((X @ rng.normal(size=p)) + rng.normal(scale=1.0, size=n) > 0).astype(np.int64)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else np.ones(n)
    return X, y, w


CASES = [  # (seed, n, p, constraints)
    (0, 40, 4, [1, 0, 0, 0]), (1, 40, 4, [-1, 0, 0, 0]), (2, 50, 4, [1, -1, 0, 0]), (3, 50, 4, [1, 1, -1, -1]),
    (4, 30, 3, [-1, -1, -1]), (5, 60, 4, [0, 1, 0, -1]), (6, 25, 4, [1, 1, 1, 1]),
]


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_binary_optimum_equals_brute_force(case, weighted, depth):
    seed, n, p, cst = case
    X, y, w = _data(seed, n, p, weighted=weighted)
    cst = np.array(cst)
    want = brute_force_error(X.astype(np.int64), y, w, depth, cst)
    m = OptimalTreeClassifier(max_depth=depth, monotonic_cst=cst).fit(X, y, sample_weight=w if weighted else None)
    assert m.training_error_ == pytest.approx(want, abs=1e-9)
    assert float(np.sum(w[m.predict(X) != y])) == pytest.approx(want, abs=1e-9)  # the tree's own errors
    assert m.is_optimal_
    assert_monotone(m, X, cst)
    # the constraint costs something only when it binds: never below the unconstrained optimum
    free = OptimalTreeClassifier(max_depth=depth).fit(X, y, sample_weight=w if weighted else None)
    assert m.training_error_ >= free.training_error_ - 1e-9


@pytest.mark.parametrize("seed,cst", [(10, [1, 0, -1]), (11, [-1, 1, 0]), (12, [1, 1, 0])])
@pytest.mark.parametrize("depth", [2, 3])
def test_every_threshold_optimum_equals_brute_force(seed, cst, depth):
    X, y, w = _data(seed, 28, 3, binary=False, weighted=seed % 2 == 0)
    cst = np.array(cst)
    B, feats = _thresholds(X)
    if depth == 3:  # (three levels over every threshold: fewer rows keep the brute force quick)
        X, y, w = X[:16], y[:16], w[:16]
        B, feats = _thresholds(X)
    want = brute_force_error(B, y, w, depth, cst[feats])
    m = OptimalTreeClassifier(max_depth=depth, monotonic_cst=cst, max_binary_features=None,
                              solver="auto").fit(X, y, sample_weight=w)
    assert m.solver_ == "binary"  # (auto: the binary search over every threshold carries the constraint)
    assert m.training_error_ == pytest.approx(want, abs=1e-9)
    assert float(np.sum(w[m.predict(X) != y])) == pytest.approx(want, abs=1e-9)
    assert_monotone(m, X, cst)


def test_ties_and_pure_sides():
    # duplicated rows with opposite labels (ties everywhere) and a column equal to another's
    # complement: a constrained column and its mirror are not the same split
    X = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 1], [0, 1, 1], [1, 0, 0]] * 3, dtype=float)
    y = np.array([0, 1, 1, 0, 1, 0] * 3)
    for cst in ([1, 1, 0], [1, -1, 0], [-1, -1, 1], [0, 1, -1]):
        cst = np.array(cst)
        for depth in (1, 2, 3):
            want = brute_force_error(X.astype(np.int64), y, np.ones(len(y)), depth, cst)
            m = OptimalTreeClassifier(max_depth=depth, monotonic_cst=cst).fit(X, y)
            assert m.training_error_ == want
            assert_monotone(m, X, cst)


def test_topk_hierarchy_holds_under_the_constraint():
    X, y, _ = _data(21, 80, 6)
    cst = np.array([1, -1, 0, 1, 0, -1])
    errors = [TopKTreeClassifier(k=k, max_depth=3, monotonic_cst=cst, greedy_incumbent=False).fit(X, y).training_error_
              for k in (1, 2, 3, 4, 6)]
    assert all(a >= b for a, b in zip(errors, errors[1:])), errors
    opt = OptimalTreeClassifier(max_depth=3, monotonic_cst=cst).fit(X, y)
    assert opt.training_error_ == errors[-1]
    assert opt.training_error_ == brute_force_error(X.astype(np.int64), y, np.ones(len(y)), 3, cst)


def test_greedy_incumbent_is_feasible_and_never_beaten_by_it():
    X, y, _ = _data(22, 120, 5, binary=False)
    cst = np.array([1, 0, -1, 0, 1])
    g = GreedyTreeClassifier(max_depth=3, monotonic_cst=cst).fit(X, y)
    assert_monotone(g, X, cst)  # the incumbent's own predictions are monotone (scikit-learn's bounds)
    m = OptimalTreeClassifier(max_depth=3, monotonic_cst=cst, max_binary_features=None).fit(X, y)
    assert m.greedy_error_ == float(np.sum(g.predict(X) != y))
    assert m.training_error_ <= m.greedy_error_
    assert m.training_error_ == float(np.sum(m.predict(X) != y))
    assert_monotone(m, X, cst)


def test_threads_give_the_same_tree():
    X, y, w = _data(23, 200, 8, binary=False, weighted=True)
    cst = np.array([1, -1, 0, 0, 1, 0, -1, 0])
    trees = [OptimalTreeClassifier(max_depth=3, monotonic_cst=cst, n_jobs=j).fit(X, y, sample_weight=w).tree_
             for j in (1, 2)]
    for a in ("children_left", "feature", "threshold", "value"):
        np.testing.assert_array_equal(getattr(trees[0], a), getattr(trees[1], a))


def test_time_limit_returns_a_monotone_tree():
    rng = np.random.default_rng(24)
    X = rng.normal(size=(400, 12))
    y = (X[:, 0] - X[:, 1] + rng.normal(size=400) > 0).astype(int)
    cst = np.array([1, -1] * 6)
    m = OptimalTreeClassifier(max_depth=4, monotonic_cst=cst, max_binary_features=None, time_limit=0.2)
    with pytest.warns(Warning):
        m.fit(X, y)
    assert m.training_error_ == float(np.sum(m.predict(X) != y))
    assert_monotone(m, X[:40], cst)


def test_sufficient_condition_is_stronger_than_monotone_predictions():
    # the majority of three columns, each constrained +1, is monotone and a depth-3 tree; but
    # every depth-3 tree of it splits a constrained column with a 1 left and a 0 right: outside
    # scikit-learn's condition, so not searched (documented in the estimator)
    X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=float)
    y = (X.sum(axis=1) >= 2).astype(int)
    free = OptimalTreeClassifier(max_depth=3).fit(X, y)
    assert free.training_error_ == 0
    m = OptimalTreeClassifier(max_depth=3, monotonic_cst=[1, 1, 1]).fit(X, y)
    assert m.training_error_ == brute_force_error(X.astype(np.int64), y, np.ones(8), 3, np.ones(3)) > 0
    assert_monotone(m, X, np.ones(3, dtype=int))


@pytest.mark.parametrize("make,match", [
    (lambda: (np.c_[np.arange(9.0), np.arange(9.0)], np.arange(9) % 3, [1, 0]), "two classes"),
    (lambda: (np.c_[np.arange(8.0), np.r_[np.arange(7.0), np.nan]], np.arange(8) % 2, [1, 0]), "missing"),
    (lambda: (np.c_[np.arange(8.0), np.arange(8.0)], np.arange(8) % 2, [1, 0, 0]), "one entry per feature"),
    (lambda: (np.c_[np.arange(8.0), np.arange(8.0)], np.arange(8) % 2, [2, 0]), "-1, 0 and 1"),
])
def test_bad_constraints_get_named_errors(make, match):
    X, y, cst = make()
    for est in (OptimalTreeClassifier(max_depth=2, monotonic_cst=cst), TopKTreeClassifier(monotonic_cst=cst)):
        with pytest.raises(TreeLearnValueError, match=match):
            est.fit(X, y)


def test_categorical_and_continuous_solver_are_named_errors():
    import pandas as pd

    df = pd.DataFrame({"a": np.arange(8.0), "c": pd.Categorical(list("xyxyxyxy"))})
    y = np.arange(8) % 2
    with pytest.raises(TreeLearnValueError, match="categorical"):
        OptimalTreeClassifier(max_depth=2, monotonic_cst=[0, 1]).fit(df, y)
    with pytest.raises(TreeLearnValueError, match="continuous solver"):
        OptimalTreeClassifier(max_depth=2, monotonic_cst=[1, 0], solver="continuous").fit(np.c_[np.arange(8.0),
                                                                                                  np.arange(8.0)], y)


def test_monotone_values_keep_forced_labels_and_order():
    # one split on a column constrained +1, its leaves counted [1, 3] (left) and [4, 2] (right):
    # either the left leaf is forced to class 0 or the right one to class 1 (the search's two
    # collapses); the probabilities keep the labels (ties to the first class) and their order
    from treelearn.learn.monotone import HALF_UP, monotone_values
    from treelearn.tree.tree import Tree

    def tree():
        return Tree(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2],
                    threshold=[0.5, -2.0, -2.0], kind=[0, -1, -1], value=[[5.0, 5.0], [1.0, 3.0], [4.0, 2.0]],
                    classes=np.arange(2))

    X = np.array([[0.0], [1.0]])
    t = monotone_values(tree(), np.array([1]), label=[-1, 0, -1])  # left forced to 0: the middle value 1/2
    np.testing.assert_allclose(t.predict_proba(X)[:, 1], [0.5, 0.5])
    np.testing.assert_array_equal(t.predict(X), [0, 0])
    np.testing.assert_allclose(t.value[1:].sum(axis=1), [4.0, 6.0])  # the leaves keep their weight
    t = monotone_values(tree(), np.array([1]), label=[-1, -1, 1])  # right forced to 1: just above 1/2
    np.testing.assert_allclose(t.predict_proba(X)[:, 1], [HALF_UP, HALF_UP])
    np.testing.assert_array_equal(t.predict(X), [1, 1])
    t = monotone_values(tree(), np.array([-1]), label=None)  # -1: the majorities (1 left, 0 right) fit
    np.testing.assert_allclose(t.predict_proba(X)[:, 1], [0.75, 1 / 3])
