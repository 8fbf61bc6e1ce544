"""PrunedTreeRegressor: the cost-complexity α chosen by K-fold CV, against the same choice made
with scikit-learn's DecisionTreeRegressor(ccp_alpha) on the same folds; scikit-learn's checks."""
import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeRegressor

from treelearn import PrunedTreeRegressor
from treelearn.prune.pruners import alpha_grid


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32).astype(np.float64)
    y = np.sin(2 * X[:, 0]) + (X[:, 1] > 0) + 0.5 * rng.normal(size=n)
    return X, y


def test_cv_alpha_is_sklearns_choice_on_the_same_folds():
    X, y = _data()
    est = PrunedTreeRegressor(cv=4, random_state=0, min_samples_leaf=3).fit(X, y)
    full = DecisionTreeRegressor(min_samples_leaf=3, random_state=0)
    grid = alpha_grid(full.cost_complexity_pruning_path(X, y).ccp_alphas)
    np.testing.assert_allclose(alpha_grid(est.ccp_alphas_), grid, rtol=1e-7, atol=1e-12)
    errs = np.zeros(len(grid))
    for tr, te in KFold(4, shuffle=True, random_state=0).split(X):
        for i, a in enumerate(grid):
            sk = DecisionTreeRegressor(min_samples_leaf=3, random_state=0, ccp_alpha=a).fit(X[tr], y[tr])
            errs[i] += np.sum((sk.predict(X[te]) - y[te]) ** 2)
    best = grid[np.flatnonzero(errs <= errs.min() + 1e-9 * errs.min())[-1]]
    assert est.ccp_alpha_ == pytest.approx(best, rel=1e-6)
    assert est.get_n_leaves() < est.unpruned_tree_.n_leaves
    sk = DecisionTreeRegressor(min_samples_leaf=3, random_state=0, ccp_alpha=est.ccp_alpha_).fit(X, y)
    np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=1e-9)


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(PrunedTreeRegressor(cv=3))
