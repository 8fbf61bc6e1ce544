"""The error-size front: every point equals an exhaustive search over all trees of the depth
budget with that many leaves at most; its cost-complexity path gives the optimal tree of every
ccp_alpha between its breakpoints."""
import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TreeLearnValueError, error_size_front
from tests.topk.test_topk_sparse import _data, _exhaustive, _objective


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("weights", ["unit", "fractional"])
def test_every_point_of_the_front_is_the_exhaustive_optimum(seed, weights):
    B, y, C, ws = _data(seed)
    w = ws[weights]
    front = error_size_front(B, y, max_depth=3, sample_weight=w)
    assert list(front.max_leaves) == list(range(1, 9))
    for b, err, leaves, tree in zip(front.max_leaves, front.errors, front.n_leaves, front.trees):
        assert err / w.sum() == pytest.approx(_exhaustive(B, y, w, 3, C, max_leaves=int(b)), abs=1e-9)
        assert leaves <= b and tree.n_leaves == leaves
        assert np.allclose(tree.value[0], np.bincount(y, weights=w, minlength=C))  # (counts in the input's units)
    assert np.all(np.diff(front.errors) <= 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_path_gives_the_optimal_tree_of_every_ccp_alpha(seed):
    B, y, C, ws = _data(seed, n=40, d=4)
    w = ws["integer"]
    front = error_size_front(B, y, max_depth=3, sample_weight=w)
    alphas = list(front.ccp_alphas)
    assert alphas == sorted(alphas) and alphas[0] == 0.0 and front.n_leaves[front.hull[-1]] == 1
    probes = [(a + b) / 2 for a, b in zip(alphas, alphas[1:])] + [alphas[-1] + 0.05]
    for i, alpha in zip(front.hull, probes):
        est = OptimalTreeClassifier(max_depth=3, ccp_alpha=alpha).fit(B, y, sample_weight=w)
        point = front.error_rates[i] + alpha * front.n_leaves[i]
        assert _objective(est, B, y, w, alpha) == pytest.approx(point, abs=1e-9)
        assert est.get_n_leaves() == front.n_leaves[i]


def test_front_method_fits_the_largest_budget_and_restores_the_parameter():
    B, y, C, ws = _data(1, n=50, d=4)
    est = OptimalTreeClassifier(max_depth=2)
    front = est.error_size_front(B, y)
    assert est.max_leaves is None and len(front.trees) == 4
    assert est.training_error_ == front.errors[-1] and est.get_n_leaves() == front.n_leaves[-1]
    assert front is est.front_
    with pytest.raises(TreeLearnValueError, match="ccp_alpha"):
        OptimalTreeClassifier(ccp_alpha=0.1).error_size_front(B, y)
    one = error_size_front(B, np.zeros(50, int), max_depth=2)  # one class: the leaf
    assert set(one.n_leaves) == {1} and not one.errors.any() and one.trees[0].value.shape == (1, 1)


def test_a_budget_that_does_not_bind_searches_the_plain_fits_space():
    """On numeric columns the plain fit adds the greedy tree's thresholds to its binary features;
    a leaf budget (and the front) adds the same ones, so a budget of 2^depth returns the plain
    fit's error and the front ends there."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=150) > 0.4).astype(int)
    plain = OptimalTreeClassifier(max_depth=3).fit(X, y)
    budget = OptimalTreeClassifier(max_depth=3, max_leaves=8).fit(X, y)
    front = error_size_front(X, y, max_depth=3)
    assert plain.feature_space_["n_greedy_thresholds"] > 0
    assert budget.feature_space_["description"] == plain.feature_space_["description"]
    assert budget.training_error_ == plain.training_error_ == front.errors[-1]
