"""The default search space (issue 26, item 4): ``max_binary_features="auto"`` searches every
threshold when the cost estimate is within the budget, else about 100 binary features, and says
which and why (``feature_space_["chosen_by"]``, the fitted repr)."""
from functools import lru_cache

import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TopKTreeClassifier
from treelearn.learn.topk import space


def brute_force(X, y, depth):
    """Fewest misclassifications over all trees of depth <= depth splitting x_f >= t at every
    threshold between two distinct values of x_f among the node's rows."""
    @lru_cache(maxsize=None)
    def opt(rows, h):
        r = np.asarray(rows)
        cnt = np.bincount(y[r])
        best = int(cnt.sum() - cnt.max())
        if h == 0 or best == 0:
            return best
        for f in range(X.shape[1]):
            vals = np.unique(X[r, f])
            for a, b in zip(vals[:-1], vals[1:]):
                go = X[r, f] >= (a + b) / 2
                lo = opt(tuple(r[~go]), h - 1)
                if lo < best:
                    best = min(best, lo + opt(tuple(r[go]), h - 1))
        return best

    return opt(tuple(range(X.shape[0])), depth)


def _numeric(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.7, size=n) > 0.3).astype(int)
    return X, y


def test_small_numeric_data_searches_every_threshold():
    X, y = _numeric()
    est = OptimalTreeClassifier(max_depth=3).fit(X, y)
    fs = est.feature_space_
    assert est.get_params()["max_binary_features"] == "auto"
    assert est.solver_ == "continuous" and fs["thresholds"] == "all"
    assert "estimated at" in fs["chosen_by"] and "<= the budget" in fs["chosen_by"]
    assert "optimal over every threshold" in repr(est) and "max_binary_features='auto'" in repr(est)
    explicit = OptimalTreeClassifier(max_depth=3, max_binary_features=None).fit(X, y)
    assert est.training_error_ == explicit.training_error_
    np.testing.assert_array_equal(est.tree_.feature, explicit.tree_.feature)
    np.testing.assert_array_equal(est.tree_.threshold, explicit.tree_.threshold)
    assert explicit.feature_space_["chosen_by"] == "max_binary_features=None, max_thresholds=None"
    # the old default searched fewer thresholds: never fewer errors than every threshold
    old = OptimalTreeClassifier(max_depth=3, max_binary_features=100).fit(X, y)
    assert old.feature_space_["thresholds"] != "all" and old.training_error_ >= est.training_error_


def test_a_large_estimate_keeps_the_binary_features(monkeypatch):
    X, y = _numeric()
    monkeypatch.setattr(space, "BUDGET_SECONDS", 1e-9)  # every estimate is above it
    est = OptimalTreeClassifier(max_depth=3).fit(X, y)
    fs = est.feature_space_
    assert est.solver_ == "binary" and fs["thresholds"] == "distinct_quantiles"
    assert "> the budget 1e-09 s" in fs["chosen_by"]
    assert "binary features" in repr(est) and "every threshold" in repr(est)  # (the reason names both)
    old = OptimalTreeClassifier(max_depth=3, max_binary_features=100).fit(X, y)
    assert est.training_error_ == old.training_error_ and est.n_binary_features_ == old.n_binary_features_


def test_the_budget_is_a_share_of_a_short_time_limit(monkeypatch):
    assert space.auto_budget(None) == space.BUDGET_SECONDS
    assert space.auto_budget(1.0) == pytest.approx(space.BUDGET_SHARE)
    seen = []
    real = space.continuous_cost
    monkeypatch.setattr(space, "continuous_cost", lambda *a: seen.append(real(*a)) or 0.5 * space.BUDGET_SHARE)
    X, y = _numeric()
    assert OptimalTreeClassifier(max_depth=2, time_limit=1.0).fit(X, y).solver_ == "continuous"
    monkeypatch.setattr(space, "continuous_cost", lambda *a: 2.0 * space.BUDGET_SHARE)
    assert OptimalTreeClassifier(max_depth=2, time_limit=1.0).fit(X, y).solver_ == "binary"
    assert seen and seen[0] > 0


def test_the_estimate_grows_with_the_problem():
    c = space.continuous_cost
    assert c(1000, 10, 5000, 3) < c(2000, 10, 5000, 3) < c(2000, 20, 5000, 3) < c(2000, 20, 9000, 3)
    assert c(1000, 10, 5000, 2) < c(1000, 10, 5000, 3) < c(1000, 10, 5000, 4) < c(1000, 10, 5000, 5)
    assert c(1000, 10, 5000, 3, 2) < c(1000, 10, 5000, 3, 8)
    # the calibration's extremes (benchmarks/bench_space.py --calibrate): iris at depth 3 is cheap,
    # ionosphere at depth 4 (17.6 s measured) is not
    assert c(150, 4, 119, 3, 3) < space.BUDGET_SECONDS < c(351, 33, 8114, 4, 2)


@pytest.mark.parametrize("seed", range(12))
def test_default_fit_equals_every_threshold_brute_force(seed, monkeypatch):
    """Small random data: its few thresholds are searched as binary features; with the binary
    budget below them, the estimate sends the same data to the continuous solver: both reach
    the every-threshold optimum."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(6, 14)), int(rng.integers(1, 4))
    X = rng.integers(0, int(rng.integers(2, 7)), size=(n, d)).astype(float)
    X += rng.normal(scale=0.01, size=X.shape) * (rng.random(X.shape) < 0.4)
    y = rng.integers(0, int(rng.integers(2, 4)), size=n)
    y[0], y[-1] = 0, 1
    depth = int(rng.integers(1, 4))
    want = brute_force(X, y, depth)
    est = OptimalTreeClassifier(max_depth=depth).fit(X, y)
    assert est.training_error_ == want
    if est.feature_space_ is not None and len(np.unique(X)) > 2:
        assert est.feature_space_["thresholds"] == "all" and est.is_optimal_
        assert "as binary features" in est.feature_space_["chosen_by"]
    monkeypatch.setattr(space, "AUTO_BINARY_FEATURES", 1)
    est = OptimalTreeClassifier(max_depth=depth).fit(X, y)
    assert est.training_error_ == want
    if len(np.unique(X)) > 2:
        assert est.feature_space_["thresholds"] == "all"


def test_few_thresholds_are_searched_as_binary_features():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, size=(400, 6)).astype(float)  # 24 thresholds in all
    y = ((X[:, 0] > 2) ^ (X[:, 1] > 1)).astype(int)
    y[rng.random(400) < 0.1] ^= 1
    est = OptimalTreeClassifier(max_depth=3).fit(X, y)
    assert est.solver_ == "binary" and est.feature_space_["thresholds"] == "all"
    assert "24 in all" in est.feature_space_["chosen_by"]
    assert est.training_error_ == OptimalTreeClassifier(max_depth=3, solver="continuous").fit(X, y).training_error_


@pytest.mark.parametrize("params,why", [
    (dict(ccp_alpha=0.01), "binary search only"), (dict(min_samples_leaf=5), "binary search only"),
    (dict(max_leaves=4), "binary search only"), (dict(min_weight_fraction_leaf=0.05), "binary search only"),
    (dict(monotonic_cst=[1, 0, 0]), "binary search only"), (dict(solver="binary"), "solver='binary'"),
    (dict(max_thresholds=8), "max_thresholds"),
])
def test_binary_only_settings_keep_the_binary_features(params, why):
    X, y = _numeric()
    est = OptimalTreeClassifier(max_depth=2, **params).fit(X, y)
    assert est.solver_ == "binary" and est.feature_space_["thresholds"] != "all"
    assert why in est.feature_space_["chosen_by"]


def test_topk_integer_k_keeps_the_binary_features_and_all_searches_every_threshold():
    X, y = _numeric()
    est = TopKTreeClassifier(k=2, max_depth=2).fit(X, y)
    assert est.feature_space_["thresholds"] != "all" and "Top-2" in est.feature_space_["chosen_by"]
    every = TopKTreeClassifier(k="all", max_depth=2).fit(X, y)
    assert every.solver_ == "continuous" and every.feature_space_["thresholds"] == "all"


def test_select_keeps_the_binary_features():
    X, y = _numeric(n=120)
    est = OptimalTreeClassifier(max_depth=2, select="bound").fit(X, y)
    assert est.feature_space_["thresholds"] != "all"


def test_a_wide_sample_stops_counting_once_over_the_budget():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 200))
    y = (X[:, 0] > 0).astype(int)
    _, sample = OptimalTreeClassifier()._training_sample(X, y, None)
    m, t, whole = space.searched_columns(sample.encoded, sample.schema)
    assert whole and (m, t) == (200, 200 * 2999)
    seen = []
    m, t, whole = space.searched_columns(sample.encoded, sample.schema, lambda m, t: seen.append(m) or m >= 5)
    assert not whole and (m, t) == (5, 5 * 2999) and seen == [0, 1, 2, 3, 4, 5]
    est = OptimalTreeClassifier(max_depth=3, time_limit=30).fit(X, y)
    assert est.solver_ == "binary" and "estimated at least" in est.feature_space_["chosen_by"]
