"""scikit-learn parity of GreedyTreeClassifier: scikit-learn's parameter names and methods
(``max_leaf_nodes``, ``cost_complexity_pruning_path``), each checked against scikit-learn's own
DecisionTreeClassifier on data where both grow the same tree."""
import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from treelearn import GreedyTreeClassifier, PrunedTreeClassifier, TreeLearnValueError
from treelearn.tree.export import from_sklearn
from treelearn.tree.weakest_link import ccp_path


def _noisy(seed, n=300, d=4):
    """Continuous features (no tied values, so no tied splits) and a noisy target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


def _same_tree(ours, theirs, X) -> bool:
    """The same nodes: every node of one tree holds the same training rows as a node of the other
    (splits that tie may differ in feature or threshold but not in what they do to the rows)."""
    def nodes(est):
        paths = est.decision_path(X).tocsc()
        return sorted(tuple(paths.indices[paths.indptr[j]:paths.indptr[j + 1]].tolist())
                      for j in range(paths.shape[1]))
    return nodes(ours) == nodes(theirs)


# ----------------------------------------------------------------------------- max_leaf_nodes
@pytest.mark.parametrize("leaves", [2, 5, 12])
def test_max_leaf_nodes_is_max_leaves_and_sklearns_best_first_growth(leaves):
    X, y = _noisy(1)
    a = GreedyTreeClassifier(criterion="gini", max_leaf_nodes=leaves).fit(X, y)
    b = GreedyTreeClassifier(criterion="gini", max_leaves=leaves).fit(X, y)
    assert a.tree_ == b.tree_ and a.get_n_leaves() == leaves
    sk = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(X, y)
    assert _same_tree(a, sk, X)
    np.testing.assert_array_equal(a.predict(X), sk.predict(X))


def test_max_leaf_nodes_and_max_leaves_must_agree():
    X, y = _noisy(2)
    assert GreedyTreeClassifier(max_leaves=4, max_leaf_nodes=4).fit(X, y).get_n_leaves() == 4
    with pytest.raises(TreeLearnValueError, match="max_leaves=3 and max_leaf_nodes=5 conflict"):
        GreedyTreeClassifier(max_leaves=3, max_leaf_nodes=5).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="max_leaf_nodes"):  # scikit-learn's range: >= 2
        GreedyTreeClassifier(max_leaf_nodes=1).fit(X, y)


def test_pruned_learner_takes_max_leaf_nodes():
    X, y = _noisy(3)
    a = PrunedTreeClassifier(pruning=None, max_leaf_nodes=6).fit(X, y)
    b = PrunedTreeClassifier(pruning=None, max_leaves=6).fit(X, y)
    assert a.tree_ == b.tree_ and a.get_n_leaves() == 6
    with pytest.raises(TreeLearnValueError, match="conflict"):
        PrunedTreeClassifier(max_leaves=7, max_leaf_nodes=6).fit(X, y)


# ---------------------------------------------------------------- cost_complexity_pruning_path
@pytest.mark.parametrize("seed", range(5))
def test_ccp_path_of_a_tree_is_sklearns(seed):
    """The path routine on scikit-learn's own tree (imported) equals scikit-learn's path."""
    X, y = _noisy(seed)
    sk = DecisionTreeClassifier(random_state=0)
    ref = sk.cost_complexity_pruning_path(X, y)
    alphas, impurities = ccp_path(from_sklearn(sk.fit(X, y)))
    np.testing.assert_allclose(alphas, ref.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(impurities, ref.impurities, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_cost_complexity_pruning_path_method_equals_sklearns(seed):
    X, y = _noisy(seed)
    # (depth 4: deeper nodes hold a few rows, whose tied splits the two libraries break differently)
    est = GreedyTreeClassifier(criterion="gini", max_depth=4, ccp_alpha=0.3)  # the method grows with ccp_alpha=0
    sk = DecisionTreeClassifier(random_state=0, max_depth=4)
    assert _same_tree(GreedyTreeClassifier(criterion="gini", max_depth=4).fit(X, y), sk.fit(X, y), X)
    path = est.cost_complexity_pruning_path(X, y)
    ref = sk.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(path.ccp_alphas, ref.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(path.impurities, ref.impurities, rtol=1e-9, atol=1e-15)
    assert not hasattr(est, "tree_")  # the estimator itself stays unfitted, as scikit-learn's
    # between two α of the path (at one, the last bits of the two libraries' sums decide), the
    # pruned tree is scikit-learn's
    a = path.ccp_alphas
    for alpha in (a[:-1] + a[1:]) / 2:
        ours = GreedyTreeClassifier(criterion="gini", max_depth=4, ccp_alpha=alpha).fit(X, y)
        theirs = DecisionTreeClassifier(random_state=0, max_depth=4, ccp_alpha=alpha).fit(X, y)
        assert ours.get_n_leaves() == theirs.get_n_leaves()
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_cost_complexity_pruning_path_with_weights():
    X, y = _noisy(5, n=200)
    w = np.random.default_rng(5).integers(1, 4, size=200).astype(float)
    est = GreedyTreeClassifier(criterion="gini")
    a = est.cost_complexity_pruning_path(X, y, sample_weight=w)
    b = est.cost_complexity_pruning_path(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(a.ccp_alphas, b.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(a.impurities, b.impurities, rtol=1e-9, atol=1e-15)
    assert np.all(np.diff(a.ccp_alphas) >= 0) and np.all(np.diff(a.impurities) >= -1e-15)


# ------------------------------------------------------------------- min_weight_fraction_leaf
@pytest.mark.parametrize("frac", [0.02, 0.05, 0.3])  # (at 0.1 a leaf has two splits of equal gain)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("max_thresholds", [None, 16])
def test_min_weight_fraction_leaf_holds_and_matches_sklearn(frac, weighted, max_thresholds):
    X, y = _noisy(6, n=400)
    w = np.random.default_rng(6).uniform(0.2, 3.0, size=400) if weighted else None
    est = GreedyTreeClassifier(criterion="gini", max_depth=4, min_weight_fraction_leaf=frac,
                               max_thresholds=max_thresholds).fit(X, y, sample_weight=w)
    ww = np.ones(400) if w is None else w
    leaf_weight = np.bincount(est.apply(X), weights=ww, minlength=est.tree_.node_count)
    leaves = est.tree_.children_left < 0
    assert leaf_weight[leaves].min() >= frac * ww.sum() * (1 - 1e-12)
    if max_thresholds is None:  # scikit-learn's tree (every threshold)
        sk = DecisionTreeClassifier(max_depth=4, min_weight_fraction_leaf=frac, random_state=0).fit(X, y, w)
        assert _same_tree(est, sk, X)


def test_min_weight_fraction_leaf_with_class_weight_and_finders():
    """class_weight multiplies the weights the fraction is taken of (as scikit-learn); the sorted,
    histogram and threaded finders grow the same tree."""
    from treelearn.learn.greedy.estimator import grow_greedy

    X, y = _noisy(7, n=500)
    a = GreedyTreeClassifier(min_weight_fraction_leaf=0.05, class_weight={0: 1.0, 1: 4.0}).fit(X, y)
    w = np.where(y == 1, 4.0, 1.0)
    leaf_weight = np.bincount(a.apply(X), weights=w)
    assert leaf_weight[leaf_weight > 0].min() >= 0.05 * w.sum() * (1 - 1e-12)
    trees = [grow_greedy(X, y, 2, w, finder=f, n_jobs=j, min_weight_fraction_leaf=0.05)
             for f, j in [("sorted", 1), ("hist", 1), ("sorted", 2)]]
    assert trees[0] == trees[1] == trees[2] == a.tree_
    with pytest.raises(TreeLearnValueError, match="min_weight_fraction_leaf"):
        GreedyTreeClassifier(min_weight_fraction_leaf=0.6).fit(X, y)


def test_pruned_learner_takes_min_weight_fraction_leaf():
    X, y = _noisy(8)
    est = PrunedTreeClassifier(pruning=None, max_leaves=None, min_weight_fraction_leaf=0.1).fit(X, y)
    counts = np.bincount(est.apply(X))
    assert counts[counts > 0].min() >= 30
