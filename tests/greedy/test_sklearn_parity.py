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


# ---------------------------------------------------------------------- max_features, splitter
_M64 = 2**64 - 1
_GOLDEN = 0x9E3779B97F4A7C15


class _NodeRng:
    """The per-node generator of the compiled growth (greedy/types.h NodeRng: splitmix64 seeded
    by the growth's seed and the node id), written out again as the reference's source of draws."""

    def __init__(self, seed, node):
        self.s = (seed ^ ((_GOLDEN * (node + 1)) & _M64)) & _M64
        self.next()

    def next(self):
        self.s = (self.s + _GOLDEN) & _M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


def _gini_score(y, right):
    """W_L * Gini(L) + W_R * Gini(R) of a 0/1 target split by the mask ``right``."""
    s = 0.0
    for side in (y[right], y[~right]):
        if side.size:
            p = side.mean()
            s += side.size * 2 * p * (1 - p)
    return s


def _reference_node(X, y, rows, node, seed, mtry, random_split):
    """The reference search of one node: features in the drawn order, those constant at the node
    skipped, stopping after mtry varied ones (every varied feature has a valid split here);
    returns (visited features, best score)."""
    rng = _NodeRng(seed, node)
    d = X.shape[1]
    order = list(range(d))
    visited, best = [], np.inf
    for i in range(d):
        j = i + rng.below(d - i)
        order[i], order[j] = order[j], order[i]
        f = order[i]
        col = X[rows, f]
        if col.min() == col.max():
            continue
        codes = np.searchsorted(np.unique(X[:, f]), col)  # the column's ranks, as the coding
        lo, hi = int(codes.min()), int(codes.max())
        ks = [lo + 1 + rng.below(hi - lo)] if random_split else np.unique(codes)[1:].tolist()
        best = min([best] + [_gini_score(y[rows], codes >= k) for k in ks])
        visited.append(f)
        if len(visited) >= mtry:
            break
    return visited, best


@pytest.mark.parametrize("max_features,mtry", [(1, 1), (2, 2), ("sqrt", 2), ("log2", 2), (0.5, 3), (None, 6)])
@pytest.mark.parametrize("random_split", [False, True])
@pytest.mark.parametrize("random_state", [0, 7])
def test_drawn_features_and_random_conditions_follow_the_reference(max_features, mtry, random_split, random_state):
    """Every node's split is the best of the reference's drawn features (and, with
    splitter="random", of its drawn conditions), with the growth's seed drawn from random_state."""
    X, y = _noisy(10, n=150, d=6)
    X[:, 5] = np.round(X[:, 5])  # a few values: constant in small nodes (skipped, not counted)
    if max_features is None and not random_split:
        return  # every feature in order: the deterministic search of the other tests
    est = GreedyTreeClassifier(criterion="gini", max_depth=5, max_features=max_features,
                               splitter="random" if random_split else "best", random_state=random_state).fit(X, y)
    seed = np.random.RandomState(random_state).randint(2**63 - 1)
    t = est.tree_
    paths = est.decision_path(X).tocsc()
    for node in np.flatnonzero(t.children_left >= 0):
        rows = paths.indices[paths.indptr[node]:paths.indptr[node + 1]]
        visited, best = _reference_node(X, y, rows, int(node), seed, mtry, random_split)
        f = int(t.feature[node])
        assert f in visited
        assert _gini_score(y[rows], X[rows, f] >= t.threshold[node]) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("params", [dict(max_features="sqrt"), dict(splitter="random"),
                                    dict(max_features=2, splitter="random", max_leaves=9)])
def test_drawn_growth_is_reproducible_and_the_same_for_any_n_jobs(params):
    import pandas as pd

    X, y = _noisy(11, n=3000, d=8)
    X[::7, 2] = np.nan  # missing values
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(8)])
    df["cat"] = pd.Categorical(np.array(["a", "b", "c", "d"])[np.arange(3000) % 4])
    trees = [GreedyTreeClassifier(random_state=3, n_jobs=j, **params).fit(df, y).tree_ for j in (1, 2, 1)]
    assert trees[0] == trees[1] == trees[2]
    other = GreedyTreeClassifier(random_state=4, **params).fit(df, y).tree_
    assert other != trees[0]
    # quantile codes too (the draws run on the sorted finder there as well)
    hist = [GreedyTreeClassifier(random_state=3, max_thresholds=64, n_jobs=j, **params).fit(df, y).tree_
            for j in (1, 2)]
    assert hist[0] == hist[1]


def test_max_features_and_splitter_are_checked():
    X, y = _noisy(12, n=50)
    for bad in (0, 1.5, "auto", -1):
        with pytest.raises(TreeLearnValueError, match="max_features"):
            GreedyTreeClassifier(max_features=bad).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="max_features=5 is more than the 4 features"):
        GreedyTreeClassifier(max_features=5).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="splitter"):
        GreedyTreeClassifier(splitter="worst").fit(X, y)


def test_bagging_and_a_random_forest_of_greedy_trees():
    """BaggingClassifier of drawn-feature trees runs, and a random forest of them (bootstrap rows,
    max_features="sqrt" per node) is as accurate as scikit-learn's RandomForestClassifier on
    breast cancer (5-fold CV, within 1.5 points)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import BaggingClassifier, RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = load_breast_cancer(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    extra = BaggingClassifier(GreedyTreeClassifier(max_features="sqrt", splitter="random"), n_estimators=30,
                              random_state=0).fit(X, y)
    assert extra.score(X, y) > 0.97
    ours = BaggingClassifier(GreedyTreeClassifier(criterion="gini", max_features="sqrt"), n_estimators=100,
                             random_state=0)
    theirs = RandomForestClassifier(n_estimators=100, random_state=0)
    a = cross_val_score(ours, X, y, cv=cv).mean()
    b = cross_val_score(theirs, X, y, cv=cv).mean()
    assert a >= b - 0.015, (a, b)


# ------------------------------------------------------------------------------ monotonic_cst
def _monotone_data(seed, n=500):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.3 * np.sin(5 * X[:, 0]) + 0.5 * rng.normal(size=n) - X[:, 1] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("cst", [[1, 0, 0], [1, -1, 0], [-1, 0, 1]])
@pytest.mark.parametrize("growth", [dict(max_depth=4), dict(max_leaf_nodes=10)])
def test_monotonic_cst_matches_sklearn(seed, cst, growth):
    X, y = _monotone_data(seed)
    ours = GreedyTreeClassifier(criterion="gini", monotonic_cst=cst, **growth).fit(X, y)
    theirs = DecisionTreeClassifier(monotonic_cst=cst, random_state=0, **growth).fit(X, y)
    assert _same_tree(ours, theirs, X)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("cst", [[1, 0, 0], [0, -1, 1], [-1, 1, -1]])
@pytest.mark.parametrize("params", [dict(), dict(criterion="entropy", max_leaves=15), dict(max_thresholds=16),
                                    dict(random_state=1, max_features=2), dict(min_samples_leaf=3, n_jobs=2)])
def test_monotonic_cst_makes_probabilities_monotone(cst, params):
    """The independent check: along each constrained feature, with the others fixed, the
    predicted probability of classes_[1] never moves against the constraint."""
    X, y = _monotone_data(5, n=800)
    labels = np.where(y == 1, "yes", "no")  # classes_[1] == "yes"
    est = GreedyTreeClassifier(monotonic_cst=cst, **params).fit(X, labels)
    free = GreedyTreeClassifier(**params).fit(X, labels)
    rng = np.random.default_rng(0)
    grid = np.linspace(-3, 3, 121)
    violations_free = 0
    for j in np.flatnonzero(cst):
        for base in X[rng.choice(800, 30, replace=False)]:
            Z = np.repeat(base[None, :], grid.size, axis=0)
            Z[:, j] = grid
            assert np.all(cst[j] * np.diff(est.predict_proba(Z)[:, 1]) >= -1e-12)
            violations_free += np.any(cst[j] * np.diff(free.predict_proba(Z)[:, 1]) < 0)
    assert violations_free > 0  # the unconstrained tree is not monotone: the check can fail


def test_monotonic_cst_same_tree_for_any_finder_and_threads():
    from treelearn.learn.greedy.estimator import grow_greedy

    X, y = _monotone_data(6, n=2000)
    Xq = np.round(X, 1)  # few values: the histogram finder applies
    trees = [grow_greedy(Xq, y, 2, finder=f, n_jobs=j, monotonic_cst=[1, -1, 0]) for f, j in
             [("sorted", 1), ("hist", 1), ("sorted", 2)]]
    assert trees[0] == trees[1] == trees[2]


def test_monotonic_cst_is_checked():
    import pandas as pd

    X, y = _monotone_data(7, n=100)
    with pytest.raises(TreeLearnValueError, match="one entry per feature: 3"):
        GreedyTreeClassifier(monotonic_cst=[1, 0]).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="-1, 0 and 1"):
        GreedyTreeClassifier(monotonic_cst=[2, 0, 0]).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="two classes"):
        GreedyTreeClassifier(monotonic_cst=[1, 0, 0]).fit(X, np.arange(100) % 3)
    Xn = X.copy()
    Xn[0, 2] = np.nan
    with pytest.raises(TreeLearnValueError, match="missing values"):
        GreedyTreeClassifier(monotonic_cst=[1, 0, 0]).fit(Xn, y)
    df = pd.DataFrame({"a": X[:, 0], "c": pd.Categorical(np.array(["u", "v"])[y])})
    with pytest.raises(TreeLearnValueError, match="categorical columns \\[1\\]"):
        GreedyTreeClassifier(monotonic_cst=[0, 1]).fit(df, y)
    # all zeros: no constraint (missing values and three classes are fine)
    assert GreedyTreeClassifier(monotonic_cst=[0, 0, 0]).fit(Xn, np.arange(100) % 3).tree_ == \
        GreedyTreeClassifier().fit(Xn, np.arange(100) % 3).tree_
