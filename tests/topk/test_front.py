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


def _budget_dp(B, y, w, depth, budget, n_classes, alpha=0.0):
    """The best weighted training error (+ alpha * leaves * total weight) of a tree of depth <=
    depth and at most budget leaves, by the plain recursion over row sets (no bounds, no cache
    beyond exact memoisation): leaf, or a split f with the budget shared k + (budget - k)."""
    rows0 = tuple(range(len(y)))
    memo = {}

    def best(rows, h, b):
        key = (rows, h, b)
        if key not in memo:
            cw = np.bincount(y[list(rows)], weights=w[list(rows)], minlength=n_classes)
            cost = cw.sum() - cw.max() + alpha * w.sum()
            if h > 0 and b > 1:
                for f in range(B.shape[1]):
                    r1 = tuple(r for r in rows if B[r, f] == 1)
                    r0 = tuple(r for r in rows if B[r, f] == 0)
                    if r0 and r1:
                        for k in range(1, b):
                            cost = min(cost, best(r0, h - 1, k) + best(r1, h - 1, b - k))
            memo[key] = cost
        return memo[key]

    return best(rows0, depth, budget)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("weights", ["unit", "fractional"])
def test_deep_fronts_equal_the_plain_recursion_over_budgets(seed, weights):
    """Depth 4 and 5: every budget's error equals the plain recursion's (the search's bounds,
    its budget-depth normalisation and its depth-2 step for three leaves change nothing)."""
    B, y, C, ws = _data(seed, n=36, d=4)
    w = ws[weights]
    for depth in (4, 5):
        front = error_size_front(B, y, max_depth=depth, max_leaves=12, sample_weight=w)
        for b, err, leaves in zip(front.max_leaves, front.errors, front.n_leaves):
            assert err == pytest.approx(_budget_dp(B, y, w, depth, int(b), C), abs=1e-9)
            assert leaves <= b
    for b in (3, 5, 6):  # the same through one budgeted fit, and with a leaf penalty
        est = OptimalTreeClassifier(max_depth=4, max_leaves=b, ccp_alpha=0.01).fit(B, y, sample_weight=w)
        ref = _budget_dp(B, y, w, 4, b, C, alpha=0.01)
        assert est.training_error_ + 0.01 * w.sum() * est.get_n_leaves() == pytest.approx(ref, abs=1e-9)


def test_a_budget_that_does_not_bind_searches_the_plain_fits_space():
    """On numeric columns the plain fit adds the greedy tree's thresholds to its binary features;
    a leaf budget (and the front) adds the same ones, so a budget of 2^depth returns the plain
    fit's error and the front ends there."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=150) > 0.4).astype(int)
    plain = OptimalTreeClassifier(max_depth=3, max_binary_features=100).fit(X, y)  # (the binary search's space)
    budget = OptimalTreeClassifier(max_depth=3, max_leaves=8).fit(X, y)
    front = error_size_front(X, y, max_depth=3)
    assert plain.feature_space_["n_greedy_thresholds"] > 0
    assert budget.feature_space_["description"] == plain.feature_space_["description"]
    assert budget.training_error_ == plain.training_error_ == front.errors[-1]
