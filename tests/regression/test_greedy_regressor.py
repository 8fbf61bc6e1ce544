"""GreedyTreeRegressor against independent references: scikit-learn's DecisionTreeRegressor node
for node on data without ties (every criterion, weighted and unweighted, depth-first and
best-first), brute force over every threshold for the split search, and the Tree's plumbing."""
import pickle

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from treelearn import GreedyTreeRegressor
from treelearn._validation import TreeLearnValueError

CRITERIA = ["squared_error", "friedman_mse", "absolute_error", "poisson"]


def _data(n=300, d=5, k=1, seed=0, poisson=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)  # scikit-learn's trees read float32
    signal = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 2] > 0)
    if poisson:
        # positive and without ties (counts would tie: splits of equal deviance)
        y = rng.gamma(2.0, np.exp(0.5 * signal[:, None] + 0.1 * np.arange(k)) / 2.0, size=(n, k))
    else:
        y = signal[:, None] + np.arange(k) + 0.3 * rng.normal(size=(n, k))
    return X, (y[:, 0] if k == 1 else y)


def _children_cost(tr, node):
    l, r = tr.children_left[node], tr.children_right[node]
    return tr.weighted_n_node_samples[l] * tr.impurity[l] + tr.weighted_n_node_samples[r] * tr.impurity[r]


def _assert_same_tree(ours, sk, X, max_ties=0.05):
    """Walk both trees from the root: the same feature, threshold (sklearn's midpoint m is stored
    by treelearn as nextafter(m, +inf)), value, weighted count and impurity at every node. Where
    two different conditions cut a node's rows the same way (a node of two rows, or one row set
    apart on either side), the children are matched by their rows (value and count) and compared
    on; where two different cuts are exactly as good, scikit-learn draws among them by its random
    feature order: there both must cost the same, and their subtrees are not compared (at most
    ``max_ties`` of the nodes)."""
    t, s = ours.tree_, sk.tree_

    def same_node(c, e):
        return (t.n_node_samples[c] == s.n_node_samples[e]
                and np.allclose(t.value[c], s.value[e].reshape(-1), rtol=1e-12, atol=1e-12))

    stack = [(0, 0)]
    ties = compared = 0
    while stack:
        a, b = stack.pop()
        compared += 1
        assert (t.children_left[a] < 0) == (s.children_left[b] < 0), (a, b)
        np.testing.assert_allclose(t.value[a], s.value[b].reshape(-1), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(t.weighted_n_node_samples[a], s.weighted_n_node_samples[b], rtol=1e-12)
        np.testing.assert_allclose(t.impurity[a], s.impurity[b], rtol=1e-7, atol=1e-9)
        if t.children_left[a] < 0:
            continue
        tl_, tr_, sl, sr = t.children_left[a], t.children_right[a], s.children_left[b], s.children_right[b]
        if t.feature[a] == s.feature[b] and t.threshold[a] == np.nextafter(s.threshold[b], np.inf):
            stack += [(tl_, sl), (tr_, sr)]
        elif same_node(tl_, sl) and same_node(tr_, sr):
            stack += [(tl_, sl), (tr_, sr)]
        elif same_node(tl_, sr) and same_node(tr_, sl):
            stack += [(tl_, sr), (tr_, sl)]
        else:
            assert _children_cost(t, a) == pytest.approx(_children_cost(s, b), rel=1e-9, abs=1e-12), (a, b)
            ties += 1
    assert ties <= max_ties * compared, (ties, compared)
    if ties == 0:
        assert t.node_count == s.node_count
        np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [1, 2])
def test_depth_first_equals_sklearn(criterion, weighted, k):
    X, y = _data(k=k, seed=k + 3 * weighted, poisson=criterion == "poisson")
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y)) if weighted else None
    for params in ({"max_depth": 6}, {"max_depth": None, "min_samples_leaf": 5}, {"min_samples_split": 30}):
        sk = DecisionTreeRegressor(criterion=criterion, random_state=0, **params).fit(X, y, sample_weight=w)
        ours = GreedyTreeRegressor(criterion=criterion, **params).fit(X, y, sample_weight=w)
        _assert_same_tree(ours, sk, X)


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("weighted", [False, True])
def test_best_first_equals_sklearn(criterion, weighted):
    X, y = _data(seed=7, poisson=criterion == "poisson")
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(y)) if weighted else None
    for leaves in (2, 5, 17):
        sk = DecisionTreeRegressor(criterion=criterion, max_leaf_nodes=leaves, random_state=0).fit(X, y, sample_weight=w)
        ours = GreedyTreeRegressor(criterion=criterion, max_leaves=leaves).fit(X, y, sample_weight=w)
        _assert_same_tree(ours, sk, X)
        alias = GreedyTreeRegressor(criterion=criterion, max_leaf_nodes=leaves).fit(X, y, sample_weight=w)
        assert alias.tree_ == ours.tree_


@pytest.mark.parametrize("criterion", CRITERIA)
def test_min_impurity_decrease_and_ccp_alpha_as_sklearn(criterion):
    X, y = _data(seed=11, poisson=criterion == "poisson")
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y)) * 8.0  # weights not in [1, 2): scaled
    sk_full = DecisionTreeRegressor(criterion=criterion, random_state=0).fit(X, y, sample_weight=w)
    imp = sk_full.tree_.impurity[0]
    for mid in (0.001 * imp, 0.01 * imp):
        sk = DecisionTreeRegressor(criterion=criterion, min_impurity_decrease=mid, random_state=0).fit(X, y, sample_weight=w)
        ours = GreedyTreeRegressor(criterion=criterion, min_impurity_decrease=mid).fit(X, y, sample_weight=w)
        _assert_same_tree(ours, sk, X)
    path = sk_full.cost_complexity_pruning_path(X, y, sample_weight=w)
    ours_path = GreedyTreeRegressor(criterion=criterion).cost_complexity_pruning_path(X, y, sample_weight=w)
    np.testing.assert_allclose(ours_path.ccp_alphas, path.ccp_alphas, rtol=1e-6, atol=1e-12)
    mid = len(path.ccp_alphas) // 2  # (between two steps of the path: no rounding decides it)
    alpha = 0.5 * (path.ccp_alphas[mid] + path.ccp_alphas[mid + 1])
    sk = DecisionTreeRegressor(criterion=criterion, ccp_alpha=alpha, random_state=0).fit(X, y, sample_weight=w)
    ours = GreedyTreeRegressor(criterion=criterion, ccp_alpha=alpha).fit(X, y, sample_weight=w)
    assert ours.get_n_leaves() == sk.get_n_leaves()
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=1e-9)


def _brute_best_split(X, y, w):
    """The split of least weighted squared error over every feature and every midpoint."""
    best = (np.inf, None, None)
    for f in range(X.shape[1]):
        u = np.unique(X[:, f])
        for a, b in zip(u[:-1], u[1:]):
            t = (a + b) / 2
            left = X[:, f] <= t
            sse = 0.0
            for side in (left, ~left):
                m = np.average(y[side], weights=w[side])
                sse += float(np.sum(w[side] * (y[side] - m) ** 2))
            if sse < best[0] - 1e-9:
                best = (sse, f, t)
    return best


def test_stump_is_the_brute_force_split():
    rng = np.random.default_rng(5)
    for _ in range(20):
        X = rng.integers(0, 6, size=(25, 3)).astype(float)  # ties in X
        y = rng.normal(size=25)
        w = rng.uniform(0.5, 2, size=25)
        sse, f, t = _brute_best_split(X, y, w)
        est = GreedyTreeRegressor(max_depth=1).fit(X, y, sample_weight=w)
        tr = est.tree_
        got = sum(tr.weighted_n_node_samples[i] * tr.impurity[i] for i in (1, 2))
        assert got == pytest.approx(sse, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_histogram_mode_threads_and_random_state(criterion):
    X, y = _data(n=3000, d=6, seed=9, poisson=criterion == "poisson")
    base = GreedyTreeRegressor(criterion=criterion, max_depth=8).fit(X, y)
    for n_jobs in (2, 4):
        assert GreedyTreeRegressor(criterion=criterion, max_depth=8, n_jobs=n_jobs).fit(X, y).tree_ == base.tree_
    hist = GreedyTreeRegressor(criterion=criterion, max_depth=8, max_thresholds=255).fit(X, y)
    assert hist.score(X, y) > base.score(X, y) - 0.05
    # exact mode with at most 255 distinct values per column: histogram mode is the same tree
    Xr = np.round(X, 1)
    a = GreedyTreeRegressor(criterion=criterion, max_depth=6).fit(Xr, y)
    b = GreedyTreeRegressor(criterion=criterion, max_depth=6, max_thresholds=100000).fit(Xr, y)
    np.testing.assert_allclose(a.predict(Xr), b.predict(Xr))


@pytest.mark.parametrize("criterion", ["squared_error", "poisson", "absolute_error"])
@pytest.mark.parametrize("kw", [{"max_depth": 7}, {"max_leaves": 30}, {"max_depth": 6, "min_samples_leaf": 9},
                                {"max_depth": 5, "ccp_alpha": 0.01}, {"max_depth": 0}])
def test_histogram_growth_knows_each_rows_leaf(criterion, kw):
    """Histogram mode records each training row's leaf while growing, and the nodes' exact sums
    use it in place of routing the rows through the Tree: it is the leaf the Tree routes the row
    to (missing values, weights, best-first growth), and with pruning (ccp_alpha) nothing is
    recorded."""
    from treelearn.data.schema import ColumnSchema
    from treelearn.learn.greedy.estimator import grow_checked
    from treelearn.learn.greedy.regressor import node_values, regression_stats
    from treelearn.tree.build import route

    X, y = _data(n=4000, d=5, seed=3, poisson=criterion == "poisson")
    rng = np.random.default_rng(4)
    X[rng.random(X.shape) < 0.05] = np.nan
    w = rng.integers(1, 4, size=y.size).astype(float)
    est = GreedyTreeRegressor(criterion=criterion, max_thresholds=31, **kw)
    stats, shift = regression_stats(y, w, criterion)
    known = []
    tree = grow_checked(X, None, 0, w, ColumnSchema(categories=[None] * 5), est.grow_params(y.size), stats=stats,
                        nodes=node_values(criterion, shift), row_leaves=known)
    if "ccp_alpha" in kw:
        assert known == [] and tree.node_count > 1
        return
    assert len(known) == 1
    np.testing.assert_array_equal(known[0], route(tree, X))
    assert (tree.children_left[known[0]] < 0).all()
    if kw.get("max_depth") != 0:
        assert tree.node_count > 9
    # exact mode records them when its finder is the histogram one (few codes: a stump), else
    # the tree is routed
    known = []
    tree = grow_checked(X, None, 0, w, ColumnSchema(categories=[None] * 5),
                        est.set_params(max_thresholds=None).grow_params(y.size), stats=stats,
                        nodes=node_values(criterion, shift), row_leaves=known)
    assert len(known) == (kw.get("max_depth") == 0)
    if known:
        np.testing.assert_array_equal(known[0], route(tree, X))


def test_missing_values_r2_at_least_sklearns():
    X, y = _data(n=4000, d=5, seed=13)
    rng = np.random.default_rng(4)
    Xn = X.copy()
    Xn[rng.random(X.shape) < 0.15] = np.nan
    tr, te = slice(0, 3000), slice(3000, None)
    for params in ({"max_depth": 6}, {"max_leaves": 30}):
        sk = DecisionTreeRegressor(random_state=0, max_depth=params.get("max_depth"),
                                   max_leaf_nodes=params.get("max_leaves")).fit(Xn[tr], y[tr])
        ours = GreedyTreeRegressor(**params).fit(Xn[tr], y[tr])
        assert ours.score(Xn[te], y[te]) >= sk.score(Xn[te], y[te]) - 0.005
        binned = GreedyTreeRegressor(max_thresholds=255, **params).fit(Xn[tr], y[tr])  # 255 quantile bins
        assert binned.score(Xn[te], y[te]) >= sk.score(Xn[te], y[te]) - 0.02
    # on the training rows, exact mode is scikit-learn's tree (both directions tried per split)
    sk = DecisionTreeRegressor(random_state=0, max_depth=5).fit(Xn, y)
    ours = GreedyTreeRegressor(max_depth=5).fit(Xn, y)
    np.testing.assert_allclose(ours.predict(Xn), sk.predict(Xn), rtol=1e-9, atol=1e-9)


def test_target_checks_and_constant_target():
    X, y = _data(n=50)
    with pytest.raises(TreeLearnValueError, match="NaN or infinite"):
        GreedyTreeRegressor().fit(X, np.where(np.arange(50) == 3, np.nan, y))
    with pytest.raises(TreeLearnValueError, match="numeric"):
        GreedyTreeRegressor().fit(X, np.array(["a"] * 50))
    with pytest.raises(TreeLearnValueError, match="rows but y has"):
        GreedyTreeRegressor().fit(X, y[:-1])
    with pytest.raises(TreeLearnValueError, match="negative"):
        GreedyTreeRegressor(criterion="poisson").fit(X, y - 10)
    with pytest.raises(TreeLearnValueError, match="criterion"):
        GreedyTreeRegressor(criterion="gini").fit(X, y)
    est = GreedyTreeRegressor().fit(X, np.full(50, 2.5))
    assert est.get_n_leaves() == 1 and np.all(est.predict(X) == 2.5)


def test_fitted_regressor_plumbing():
    X, y = _data(n=200, k=2)
    w = np.random.default_rng(0).uniform(0.1, 3, size=200)
    # (leaves of 3 rows: no node of two rows, which any feature splits alike)
    est = GreedyTreeRegressor(max_depth=4, min_samples_leaf=3).fit(X, y, sample_weight=w)
    sk = DecisionTreeRegressor(max_depth=4, min_samples_leaf=3, random_state=0).fit(X, y, sample_weight=w)
    assert est.predict(X).shape == (200, 2) and est.n_outputs_ == 2
    np.testing.assert_allclose(est.feature_importances_, sk.feature_importances_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.decision_path(X).toarray().sum(1), est.tree_.node_depths()[est.apply(X)] + 1)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert est.score(X, y) == pytest.approx(sk.score(X, y))
    zero = w.copy()
    zero[:20] = 0
    a = GreedyTreeRegressor(max_depth=4).fit(X, y, sample_weight=zero)
    b = GreedyTreeRegressor(max_depth=4).fit(X[20:], y[20:], sample_weight=w[20:])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    scaled = GreedyTreeRegressor(max_depth=4, min_samples_leaf=3).fit(X, y, sample_weight=w * 2.0**40)
    np.testing.assert_array_equal(scaled.predict(X), est.predict(X))
    np.testing.assert_allclose(scaled.tree_.weighted_n_node_samples, est.tree_.weighted_n_node_samples * 2.0**40)


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(GreedyTreeRegressor())


def test_formats_and_sklearn_conversions():
    import treelearn
    from treelearn.tree.export import sklearn_input

    X, y = _data(n=300, k=1, seed=21)
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    est = GreedyTreeRegressor(max_depth=4).fit(Xn, y)
    tree = est.tree_
    again = treelearn.tree_from_json(tree.to_json())
    assert again == tree and again.is_regression
    np.testing.assert_array_equal(again.predict(Xn), est.predict(Xn))
    text = tree.export_text()
    assert "value: [" in text and "impurity:" in text and "class" not in text
    dot = tree.export_graphviz(filled=True)
    assert "value = [" in dot and "class =" not in dot
    sk = treelearn.to_sklearn(est)
    from sklearn.tree import DecisionTreeRegressor

    assert isinstance(sk, DecisionTreeRegressor)
    np.testing.assert_array_equal(sk.predict(sklearn_input(tree, Xn)), est.predict(Xn))
    back = treelearn.from_sklearn(sk)
    np.testing.assert_array_equal(back.predict(Xn), est.predict(Xn))
    # a scikit-learn regressor, two outputs
    X2, y2 = _data(n=200, k=2, seed=22)
    skr = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X2, y2)
    t2 = treelearn.from_sklearn(skr)
    np.testing.assert_allclose(t2.predict(X2), skr.predict(X2))
    np.testing.assert_allclose(t2.weighted_n_node_samples, skr.tree_.weighted_n_node_samples)
    # classification files (written before regression trees) still load as classification
    from treelearn import GreedyTreeClassifier

    clf = GreedyTreeClassifier(max_depth=2).fit(X, y > 0)
    assert treelearn.tree_from_json(clf.tree_.to_json()).task == "classification"


def test_views_of_a_regression_tree():
    import matplotlib

    matplotlib.use("Agg")
    import treelearn
    from treelearn.tree.html import export_html
    from treelearn.tree.plot import node_labels

    X, y = _data(n=200, seed=23)
    est = GreedyTreeRegressor(max_depth=3).fit(X, y)
    page = export_html(est)
    assert '"label": "value"' in page and '"shown": ' in page
    labels = node_labels(est)
    assert all("value = [" in s and "class" not in s for s in labels)
    leaf = int(np.flatnonzero(est.tree_.children_left < 0)[0])
    assert f"{est.tree_.value[leaf, 0]:.3f}" in labels[leaf]
    treelearn.plot_tree(est, filled=True)


@pytest.mark.parametrize("params", [{"max_depth": 5}, {"max_leaves": 9, "max_thresholds": 32},
                                    {"criterion": "poisson", "max_depth": 4}])
def test_dask_input_equals_local_fit(params):
    """Dask input gives the local tree: gathered blocks (exact mode) bit for bit; histogram mode on
    the row shards (tests/contracts/test_dask_regression.py) the same splits and row counts, and
    the same values to the bit (exact sums of the channels)."""
    da = pytest.importorskip("dask.array")
    X, y = _data(n=1200, seed=31, poisson=params.get("criterion") == "poisson")
    local = GreedyTreeRegressor(**params).fit(X, y)
    dist = GreedyTreeRegressor(**params).fit(da.from_array(X, chunks=(400, 5)), da.from_array(y, chunks=400))
    if params.get("max_thresholds") is None:
        assert dist.tree_ == local.tree_
        np.testing.assert_array_equal(dist.tree_.value, local.tree_.value)
    else:
        for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples", "value",
                     "weighted_n_node_samples", "impurity"):
            np.testing.assert_array_equal(getattr(dist.tree_, name), getattr(local.tree_, name), err_msg=name)
