"""Exact searches return trees without sibling leaves that predict the same class (n_leaves is the
tree's real size); each leaf's counts are the class weights of the training rows it holds, so
predict_proba is the distribution of those rows and predict is unchanged."""
import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TopKTreeClassifier


def _same_prediction_siblings(tree):
    pred = np.argmax(tree.value, axis=1)
    left, right = tree.children_left, tree.children_right
    return [i for i in range(tree.node_count) if left[i] >= 0 and left[left[i]] < 0 and left[right[i]] < 0
            and pred[left[i]] == pred[right[i]]]


@pytest.mark.parametrize("solver", ["binary", "continuous"])
@pytest.mark.parametrize("seed", range(3))
def test_optimal_trees_have_no_same_prediction_siblings(solver, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 4))
    y = ((X[:, 0] > 0.3) | (X[:, 1] > 1.0)).astype(int)  # depth 3 leaves many same-label siblings
    w = rng.uniform(0.5, 2.0, 200)
    est = OptimalTreeClassifier(max_depth=3, solver=solver, max_binary_features=None).fit(X, y, sample_weight=w)
    t = est.tree_
    assert _same_prediction_siblings(t) == []
    assert est.get_n_leaves() == t.simplify().n_leaves
    leaf = est.apply(X)
    for node in np.unique(leaf):
        counts = np.bincount(y[leaf == node], weights=w[leaf == node], minlength=2)
        np.testing.assert_allclose(t.value[node], counts, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(est.predict_proba(X[leaf == node][:1])[0], counts / counts.sum(), rtol=1e-9)
    assert float(w[est.predict(X) != y].sum()) == pytest.approx(est.training_error_)


def test_the_merge_shrinks_an_optimal_tree_and_keeps_its_predictions():
    """The leaves of a depth-3 optimum on data a depth-1 tree separates merge; its predictions
    are those of the unmerged tree (the same search with k = the number of features, not merged)."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(120, 5)).astype(float)
    y = (X[:, 0].astype(int) ^ (rng.random(120) < 0.1)).astype(int)
    merged = OptimalTreeClassifier(max_depth=3).fit(X, y)
    kept = TopKTreeClassifier(k=5, max_depth=3).fit(X, y)  # k >= d: the same search, not merged
    assert merged.get_n_leaves() < kept.get_n_leaves()
    np.testing.assert_array_equal(merged.predict(X), kept.predict(X))
    assert merged.training_error_ == kept.training_error_
    assert _same_prediction_siblings(kept.tree_) != []  # (the data does make such leaves)
