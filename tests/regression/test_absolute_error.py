"""GreedyTreeRegressor(criterion="absolute_error") against independent references: a NumPy weighted
median and brute force over every split of tiny data (ties, integer weights whose halves fall
between two targets, missing values both ways, categorical columns), scikit-learn's medians, and
the identities of the grower's modes (exact, histogram, threads). The node-for-node comparisons
with scikit-learn's DecisionTreeRegressor are in test_greedy_regressor.py (its CRITERIA)."""
import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from treelearn import GreedyTreeRegressor


def _median(y, w):
    """scikit-learn's weighted median: the smallest target whose cumulative weight exceeds half the
    total; the mean of the two middle targets when the lower ones weigh exactly half."""
    order = np.argsort(y, kind="stable")
    ys, cw = y[order], np.cumsum(w[order])
    half = cw[-1] / 2
    i = int(np.searchsorted(cw, half, side="right"))
    if i > 0 and cw[i - 1] == half:
        return (ys[i - 1] + ys[i]) / 2
    return ys[i]


def _deviation(y, w):
    return float(np.sum(w * np.abs(y - _median(y, w)))) if len(y) else 0.0


def _brute_stump(X, y, w, categorical=()):
    """The least summed absolute deviation of the two sides over every split of every column:
    numeric midpoints with missing rows right or left, and present-left / missing-right; for a
    categorical column, one category (with the missing rows or without) against the rest."""
    best = np.inf
    for f in range(X.shape[1]):
        x = X[:, f]
        miss = np.isnan(x)
        u = np.unique(x[~miss])
        if f in categorical:
            sides = [x == v for v in u] if len(u) > 1 else []
            sides += [(x == v) | miss for v in u] if miss.any() and len(u) > 1 else []
        else:
            sides = [(x > (a + b) / 2) | (miss & m) for a, b in zip(u[:-1], u[1:]) for m in (True, False)]
        if miss.any() and len(u) > 0:
            sides.append(miss)
        for right in sides:
            if right.all() or not right.any():
                continue
            best = min(best, _deviation(y[right], w[right]) + _deviation(y[~right], w[~right]))
    return best


def _leaf_cost(est, X, y, w):
    leaves = est.apply(X)
    return sum(_deviation(y[leaves == v], w[leaves == v]) for v in np.unique(leaves))


def test_leaf_values_are_sklearns_weighted_medians():
    rng = np.random.default_rng(0)
    for n in range(1, 12):
        y = rng.integers(0, 6, size=n).astype(float)  # ties in y
        w = rng.integers(1, 4, size=n).astype(float)  # halves falling between two targets
        X = np.zeros((n, 1))
        sk = DecisionTreeRegressor(criterion="absolute_error").fit(X, y, sample_weight=w)
        ours = GreedyTreeRegressor(criterion="absolute_error").fit(X, y, sample_weight=w)
        assert ours.tree_.value.ravel()[0] == sk.tree_.value.ravel()[0] == _median(y, w)
        assert ours.tree_.impurity[0] == pytest.approx(_deviation(y, w) / w.sum(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("max_thresholds", [None, 1000])
def test_stump_is_the_brute_force_split(max_thresholds):
    rng = np.random.default_rng(5)
    for trial in range(30):
        X = rng.integers(0, 5, size=(20, 3)).astype(float)  # ties in X
        if trial % 2:
            X[rng.random(X.shape) < 0.2] = np.nan
        y = rng.integers(0, 8, size=20).astype(float) + (trial % 3 == 0) * rng.normal(size=20)
        w = rng.integers(1, 4, size=20).astype(float) if trial % 4 < 2 else np.ones(20)
        categorical = [0] if trial % 5 == 0 else []
        est = GreedyTreeRegressor(criterion="absolute_error", max_depth=1, categorical=categorical or None,
                                  max_thresholds=max_thresholds).fit(X, y, sample_weight=w)
        best = _brute_stump(X, y, w, categorical)
        if est.get_n_leaves() == 1:  # no split improves on the root (or none exists)
            assert not np.isfinite(best) or best >= _deviation(y, w) - 1e-9
            continue
        assert _leaf_cost(est, X, y, w) == pytest.approx(best, rel=1e-9, abs=1e-9)
        tr = est.tree_
        reported = sum(tr.weighted_n_node_samples[i] * tr.impurity[i] for i in (1, 2))
        assert reported == pytest.approx(best, rel=1e-9, abs=1e-9)
        leaves = est.apply(X)
        for v in np.unique(leaves):  # every leaf predicts its rows' weighted median
            assert tr.value.ravel()[v] == _median(y[leaves == v], w[leaves == v])


def test_deeper_trees_leaves_and_modes():
    rng = np.random.default_rng(8)
    n = 2000
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.where(np.nan_to_num(X[:, 0]) > 0, 3.0, 0.0) + rng.standard_cauchy(n) * 0.2  # heavy tails
    w = rng.integers(1, 3, size=n).astype(float)
    base = GreedyTreeRegressor(criterion="absolute_error", max_depth=5).fit(X, y, sample_weight=w)
    leaves = base.apply(X)
    for v in np.unique(leaves):
        assert base.tree_.value.ravel()[v] == _median(y[leaves == v], w[leaves == v])
    for n_jobs in (2, 3):
        assert GreedyTreeRegressor(criterion="absolute_error", max_depth=5, n_jobs=n_jobs).fit(
            X, y, sample_weight=w).tree_ == base.tree_
    # a histogram that holds every distinct value: the exact tree
    Xr = np.round(X, 1)
    a = GreedyTreeRegressor(criterion="absolute_error", max_leaves=20)
    b = GreedyTreeRegressor(criterion="absolute_error", max_leaves=20, max_thresholds=100000)
    a, b = a.fit(Xr, y, sample_weight=w), b.fit(Xr, y, sample_weight=w)
    np.testing.assert_array_equal(a.predict(Xr), b.predict(Xr))
    # the median is robust where the mean is not: the absolute error's tree predicts the test rows better in MAE
    test = slice(1500, None)
    sq = GreedyTreeRegressor(max_depth=3).fit(X[:1500], y[:1500])
    ae = GreedyTreeRegressor(criterion="absolute_error", max_depth=3).fit(X[:1500], y[:1500])
    assert np.mean(np.abs(ae.predict(X[test]) - y[test])) < np.mean(np.abs(sq.predict(X[test]) - y[test]))
