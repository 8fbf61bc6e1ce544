"""OptimalTreeRegressor and TopKTreeRegressor against independent references: the training SSE
of a brute force over every tree of the depth (every node-local threshold, missing values on
either side, one-hot categories, min_samples_leaf), pystreed's optimal regression on 0/1
features, the greedy regressor (Top-1 is the greedy tree), and the limits (time, memory, Ctrl-C),
the parameters and the plumbing of a fitted regressor."""
import os
import pickle
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import treelearn
from treelearn import GreedyTreeRegressor, OptimalTreeRegressor, SearchLimitWarning, TopKTreeRegressor
from treelearn._limits import ResourceLimitError
from treelearn._validation import TreeLearnValueError


# ----------------------------------------------------------------------------- the brute force
def _sse(y, w):
    if w.sum() <= 0:
        return 0.0
    m = (w[:, None] * y).sum(axis=0) / w.sum()
    return float((w[:, None] * (y - m) ** 2).sum())


def _splits(X, categorical):
    """Every split of the rows X (a boolean mask of the left side), written independently of the
    search: numeric columns at every midpoint with missing values on either side and "missing or
    not"; categorical columns "x == v or not"."""
    for j in range(X.shape[1]):
        x = X[:, j]
        nan = np.isnan(x)
        u = np.unique(x[~nan])
        if j in categorical:
            for v in u:
                yield x == v
            continue
        for t in (u[:-1] + u[1:]) / 2:
            yield (x < t) & ~nan
            if nan.any():
                yield (x < t) | nan
        if nan.any() and u.size:
            yield nan


def _brute(X, y, w, depth, msl=1, categorical=(), lam=0.0):
    """The least SSE + lam * leaves over every tree of the depth (lam: a penalty per leaf)."""
    best = _sse(y, w) + lam
    if depth == 0:
        return best
    for left in _splits(X, categorical):
        if left.sum() < msl or (~left).sum() < msl:
            continue
        c = _brute(X[left], y[left], w[left], depth - 1, msl, categorical, lam)
        if c < best:
            c += _brute(X[~left], y[~left], w[~left], depth - 1, msl, categorical, lam)
            best = min(best, c)
    return best


def _case(seed, ties=True, nan=False, cat=False, weighted=False, n=None, k=1):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(8, 22))
    d = int(rng.integers(2, 4))
    if ties:
        X = rng.integers(0, 5, size=(n, d)).astype(float)
        y = rng.integers(0, 4, size=(n, k)).astype(float)
    else:
        X = rng.normal(size=(n, d))
        y = rng.normal(size=(n, k))
    if nan:
        X[rng.random(n) < 0.25, 0] = np.nan
    if cat:
        X[:, -1] = rng.integers(0, 4, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else np.ones(n)
    return X, (y[:, 0] if k == 1 else y), w


def _train_sse(est, X, y, w):
    p = est.predict(X).reshape(len(X), -1)
    return float((w[:, None] * (y.reshape(len(X), -1) - p) ** 2).sum())


CASES = [dict(), dict(ties=False), dict(weighted=True), dict(nan=True), dict(cat=True), dict(nan=True, weighted=True),
         dict(k=2)]


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_training_sse_equals_brute_force(depth, case):
    for seed in range(4 if depth < 3 else 2):
        opts = CASES[case]
        X, y, w = _case(100 * case + seed, **opts)
        cat = [X.shape[1] - 1] if opts.get("cat") else []
        Y = y.reshape(len(y), -1)
        est = OptimalTreeRegressor(max_depth=depth, categorical=cat or None).fit(X, y, sample_weight=w)
        ref = _brute(X, Y, w, depth, categorical=cat)
        assert est.is_optimal_
        assert est.train_sse_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert _train_sse(est, X, y, w) == pytest.approx(ref, rel=1e-9, abs=1e-9)  # the Tree predicts so
        assert est.lower_bound_ == pytest.approx(ref, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("msl", [2, 3])
@pytest.mark.parametrize("depth", [2, 3])
def test_min_samples_leaf_equals_brute_force(msl, depth):
    for seed in range(3):
        X, y, w = _case(7000 + seed, n=16)
        est = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=msl).fit(X, y)
        assert est.train_sse_ == pytest.approx(_brute(X, y[:, None], w, depth, msl), rel=1e-9, abs=1e-9)
        assert est.tree_.n_node_samples[est.tree_.children_left < 0].min() >= msl


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("case", [0, 1, 2, 3, 4, 6])
def test_ccp_alpha_equals_brute_force(depth, case):
    """A penalty per leaf (scikit-learn's ccp_alpha, so SSE + ccp_alpha * W per leaf): the
    objective equals the brute force's least SSE + penalty * leaves over every tree of the depth,
    the tree's own SSE and leaves make it up, and larger penalties never add leaves."""
    opts = CASES[case]
    for seed in range(2):
        X, y, w = _case(4000 + 100 * case + seed, **opts)
        cat = [X.shape[1] - 1] if opts.get("cat") else []
        Y = y.reshape(len(y), -1)
        root = _sse(Y, w)
        leaves = []
        for frac in (0.0, 0.002, 0.02, 0.08, 0.3):
            alpha = frac * root / w.sum()  # (a penalty of frac of the root's SSE per leaf)
            est = OptimalTreeRegressor(max_depth=depth, ccp_alpha=alpha, categorical=cat or None)
            est.fit(X, y, sample_weight=w)
            ref = _brute(X, Y, w, depth, categorical=cat, lam=alpha * w.sum())
            assert est.is_optimal_
            assert est.objective_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
            assert est.lower_bound_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
            assert _train_sse(est, X, y, w) == pytest.approx(est.train_sse_, rel=1e-9, abs=1e-9)
            assert est.objective_ == pytest.approx(est.train_sse_ + alpha * w.sum() * est.tree_.n_leaves, rel=1e-9)
            leaves.append(est.tree_.n_leaves)
        assert leaves == sorted(leaves, reverse=True)


@pytest.mark.parametrize("seed,msl", [(12, 2), (16, 3), (17, 3), (36, 3), (40, 4)])
def test_min_samples_leaf_with_neighbour_trees_equals_brute_force(seed, msl):
    """A neighbouring split's child tree caps a child's budget only when its rows are a subset of
    the child's (with min_samples_leaf > 1 a superset's tree may leave too few rows in a leaf, and
    its SSE is then below the constrained optimum): cases where the capped search missed it."""
    X, y, w = _case(seed, n=22, ties=bool(seed % 2))
    est = OptimalTreeRegressor(max_depth=3, min_samples_leaf=msl).fit(X, y)
    assert est.train_sse_ == pytest.approx(_brute(X, y[:, None], w, 3, msl), rel=1e-9, abs=1e-9)


def test_ccp_alpha_with_min_samples_leaf_threads_and_switches():
    """The penalty with min_samples_leaf equals the brute force; threads give the same tree and the
    ablation switches the same objective; 0/1 data (whose own search has no penalty) takes the
    every-threshold search."""
    from treelearn.learn.continuous.regressor import regression_fit

    for seed in range(3):
        X, y, w = _case(4800 + seed, n=18)
        alpha = 0.03 * _sse(y[:, None], w) / w.sum()
        est = OptimalTreeRegressor(max_depth=3, min_samples_leaf=2, ccp_alpha=alpha).fit(X, y)
        assert est.objective_ == pytest.approx(_brute(X, y[:, None], w, 3, 2, lam=alpha * w.sum()), rel=1e-9)
        X, y, w = _case(4900 + seed, n=80, ties=False)
        lam_alpha = 0.01 * _sse(y[:, None], w) / w.sum()
        trees = [OptimalTreeRegressor(max_depth=3, ccp_alpha=lam_alpha, n_jobs=j).fit(X, y).tree_ for j in (None, 2)]
        for a in ("feature", "threshold", "children_left", "children_right"):
            assert np.array_equal(getattr(trees[0], a), getattr(trees[1], a)), a
        base = regression_fit(X, y, w, None, max_depth=3, ccp_alpha=lam_alpha)[1]["objective"]
        for sw in ({"use_intervals": 0}, {"use_d2": 0}, {"use_kmeans": 0}, {"use_fbounds": 0, "use_warm_children": 0},
                   {"warm_cells": 0}):
            assert regression_fit(X, y, w, None, max_depth=3, ccp_alpha=lam_alpha, **sw)[1]["objective"] == \
                pytest.approx(base, rel=1e-9)
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 5)).astype(float)
    y = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=60)
    alpha = 0.01 * _sse(y[:, None], np.ones(60)) / 60
    est = OptimalTreeRegressor(max_depth=3, ccp_alpha=alpha).fit(X, y)
    assert est._solver == "continuous"
    assert est.objective_ == pytest.approx(_brute(X, y[:, None], np.ones(60), 3, lam=alpha * 60), rel=1e-9)


def test_ablation_switches_give_the_same_sse():
    from treelearn.learn.continuous.regressor import regression_fit

    X, y, w = _case(5, n=40, ties=False)
    base = regression_fit(X, y, w, None, max_depth=3)[1]["sse"]
    for sw in ({"use_intervals": 0}, {"use_d2": 0}, {"use_intervals": 0, "use_d2": 0}, {"large_first": 1},
               {"use_kmeans": 0}, {"use_ends": 1}, {"use_fbounds": 0, "use_warm_children": 0}, {"warm_rounds": 2}):
        assert regression_fit(X, y, w, None, max_depth=3, **sw)[1]["sse"] == pytest.approx(base, rel=1e-9)


@pytest.mark.parametrize("opts", [dict(ties=False), dict(), dict(weighted=True, nan=True), dict(k=2)])
def test_feature_bounds_and_neighbour_trees_keep_the_tree(opts):
    """The depth-2 evaluation's feature bounds (a feature skipped on a side when its bound, from a
    subset of the side, reaches what the side must beat) and the neighbouring split's child trees
    (a child's budget capped by their SSE on its rows) prune only what cannot win: the tree, node for
    node, of the search without them, and the warm start's rounds change the budget, not the SSE."""
    from treelearn.learn.continuous.regressor import regression_fit

    for seed in range(3):
        X, y, w = _case(900 + seed, n=70, **opts)
        for depth in (3, 4):
            off_tree, off = regression_fit(X, y, w, None, max_depth=depth, use_fbounds=0, use_warm_children=0)
            for sw in ({"use_fbounds": 1, "use_warm_children": 0}, {"use_fbounds": 0, "use_warm_children": 1}, {}):
                tree, info = regression_fit(X, y, w, None, max_depth=depth, **sw)
                assert info["sse"] == pytest.approx(off["sse"], rel=1e-12, abs=1e-12)
                for a in ("feature", "threshold", "children_left", "children_right"):
                    np.testing.assert_array_equal(getattr(tree, a), getattr(off_tree, a))
            for rounds in (0, 1, 2):
                info = regression_fit(X, y, w, None, max_depth=depth, warm_cells=2, warm_rounds=rounds)[1]
                assert info["sse"] == pytest.approx(off["sse"], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("depth", [2, 3])
def test_quantile_warm_start_and_threads_keep_the_optimum(depth, threads):
    """The warm start's restricted searches (here 2 and 8 quantile cells, so that they run on
    brute-force sizes) and threads sharing the root: the SSE and the bound stay the optimum's."""
    from treelearn.learn.continuous.regressor import regression_fit

    for case in (0, 1, 2, 3, 6):  # ties, no ties, weights, NaN, two outputs
        X, y, w = _case(100 * case + 7, n=20, **CASES[case])
        ref = _brute(X, y.reshape(len(y), -1), w, depth)
        info = regression_fit(X, y, w, None, max_depth=depth, warm_cells=2, n_threads=threads)[1]
        assert not info["timed_out"]
        assert info["sse"] == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert info["lower_bound"] == pytest.approx(ref, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("depth", [2, 3])
def test_threads_give_the_same_tree(depth):
    """Ties everywhere (few values, a duplicated column, integer targets): the tree of 2 and 3
    threads is the tree of one, node for node."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 40, size=(160, 4)).astype(float)
        X[:, 3] = X[:, 1]
        y = rng.integers(0, 3, size=160).astype(float)
        trees = [OptimalTreeRegressor(max_depth=depth, n_jobs=j).fit(X, y).tree_ for j in (None, 2, 3)]
        for t in trees[1:]:
            for a in ("feature", "threshold", "children_left", "children_right", "value"):
                assert np.array_equal(getattr(t, a), getattr(trees[0], a)), a


def test_the_warm_start_bounds_the_search():
    """On many distinct values the quantile trees come first and the search ends at the same
    optimum as without them; when a quantile tree is optimal, it is the answer."""
    from treelearn.learn.continuous.regressor import regression_fit

    X, y = _hard(n=400, d=3, seed=4)
    on = regression_fit(X, y, None, None, max_depth=2)[1]
    off = regression_fit(X, y, None, None, max_depth=2, warm_cells=0)[1]
    assert on["sse"] == pytest.approx(off["sse"], rel=1e-9)
    assert on["nodes"] > off["nodes"]  # the restricted searches ran
    # XOR of two halves: no single split helps (greedy misses it), and the root's threshold is
    # the 8th of 16 quantile cuts of 100 distinct values
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.permutation(100), rng.permutation(100)]).astype(float)
    y = ((X[:, 0] >= 50) ^ (X[:, 1] >= 50)).astype(float)
    est = OptimalTreeRegressor(max_depth=2).fit(X, y)
    assert est.train_sse_ == 0.0 and est.is_optimal_
    assert est.greedy_error_ > 0 and est.incumbent_source_ == "quantiles"


def test_kmeans_pruning_keeps_the_optimum():
    """Targets in a few tight clusters, where the k-means bound reaches the budgets of many nodes:
    the SSE is the search's without it."""
    from treelearn.learn.continuous.regressor import regression_fit

    rng = np.random.default_rng(8)
    X = rng.normal(size=(600, 4))
    y = 3.0 * (X[:, 0] > 0.3) + 2.0 * (X[:, 1] > -0.5) * (X[:, 2] > 0) + 0.05 * rng.normal(size=600)
    on = regression_fit(X, y, None, None, max_depth=3)[1]
    off = regression_fit(X, y, None, None, max_depth=3, use_kmeans=0)[1]
    assert on["sse"] == pytest.approx(off["sse"], rel=1e-9)


def test_never_worse_than_greedy_and_the_bound_is_below():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=400)
    for depth in (2, 3):
        opt = OptimalTreeRegressor(max_depth=depth).fit(X, y)
        greedy = GreedyTreeRegressor(max_depth=depth).fit(X, y)
        assert opt.train_sse_ <= _train_sse(greedy, X, y, np.ones(400)) + 1e-9
        assert opt.greedy_error_ == pytest.approx(_train_sse(greedy, X, y, np.ones(400)))
        assert opt.lower_bound_ <= opt.train_sse_ + 1e-9
        assert opt.incumbent_history_[-1][1] == pytest.approx(opt.train_sse_)


# ----------------------------------------------------------------------------- pystreed on 0/1 features
@pytest.mark.parametrize("depth", [2, 3])
def test_equals_pystreed_on_binary_features(depth):
    pystreed = pytest.importorskip("pystreed")
    rng = np.random.default_rng(depth)
    X = rng.integers(0, 2, size=(300, 8)).astype(float)
    y = X[:, 0] * 2 + X[:, 1] * X[:, 2] - X[:, 3] + rng.normal(scale=0.5, size=300)
    st = pystreed.STreeDRegressor(max_depth=depth, cost_complexity=0.0, time_limit=60)
    st.fit(X.astype(int), y)
    ref = float(((y - st.predict(X.astype(int))) ** 2).sum())
    ours = OptimalTreeRegressor(max_depth=depth).fit(X, y)
    assert ours.train_sse_ == pytest.approx(ref, rel=1e-7)


# ----------------------------------------------------------------------------- Top-k
def _shape(tree, i=0):
    """The tree as nested tuples (feature, threshold, left, right) from node i (node numbering aside)."""
    if tree.children_left[i] < 0:
        return None
    return (int(tree.feature[i]), round(float(tree.threshold[i]), 12),
            _shape(tree, tree.children_left[i]), _shape(tree, tree.children_right[i]))


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_top1_is_the_greedy_tree(depth):
    rng = np.random.default_rng(10 + depth)
    X = rng.normal(size=(300, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=300)
    top1 = TopKTreeRegressor(k=1, max_depth=depth).fit(X, y)
    greedy = GreedyTreeRegressor(max_depth=depth).fit(X, y)
    if depth <= 3:
        assert _shape(top1.tree_) == _shape(greedy.tree_)
    # (deeper, a node of a few rows may be cut the same way by two columns: either may be taken)
    np.testing.assert_allclose(top1.predict(X), greedy.predict(X), rtol=1e-12, atol=1e-12)
    assert top1.train_sse_ == pytest.approx(_train_sse(greedy, X, y, np.ones(len(y))), rel=1e-12)
    assert top1.lower_bound_ is None


def test_topk_between_greedy_and_optimal():
    X, y, w = _case(11, n=60, ties=False)
    sse = [TopKTreeRegressor(k=k, max_depth=3).fit(X, y).train_sse_ for k in (1, 2, 4)]
    opt = OptimalTreeRegressor(max_depth=3).fit(X, y).train_sse_
    assert sse[0] >= sse[1] - 1e-9 >= sse[2] - 2e-9 >= opt - 3e-9
    assert TopKTreeRegressor(k="all", max_depth=3).fit(X, y).train_sse_ == pytest.approx(opt)
    assert TopKTreeRegressor(k=10 ** 6, max_depth=3).fit(X, y).train_sse_ == pytest.approx(opt)


# ----------------------------------------------------------------------------- limits
def _hard(n=6000, d=6, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + np.cos(2 * X[:, 2]) + rng.normal(scale=0.5, size=n)
    return X, y


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_time_limit_returns_a_tree_no_worse_than_greedy(n_jobs):
    X, y = _hard()
    with pytest.warns(SearchLimitWarning):
        est = OptimalTreeRegressor(max_depth=4, time_limit=0.5, n_jobs=n_jobs).fit(X, y)
    greedy = GreedyTreeRegressor(max_depth=4).fit(X, y)
    assert not est.is_optimal_ and est.timed_out_
    assert est.train_sse_ <= _train_sse(greedy, X, y, np.ones(len(y))) + 1e-9
    assert est.lower_bound_ <= est.train_sse_


def _kmeans_brute(y, w, k):
    """The least weighted SSE over every assignment of the points to at most k groups."""
    import itertools

    best = np.inf
    for labels in itertools.product(range(k), repeat=len(y)):
        lab = np.asarray(labels)
        best = min(best, sum(_sse(y[lab == c][:, None], w[lab == c]) for c in range(k)))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_kmeans_bound_equals_brute_force(seed):
    from treelearn.learn.continuous._regression import kmeans_1d_bound

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 8)), int(rng.integers(1, 4))
    y = np.sort(rng.integers(0, 5, size=n).astype(float) if seed % 2 else rng.normal(size=n))
    w = rng.integers(1, 4, size=n).astype(float) if seed % 3 else np.ones(n)
    assert kmeans_1d_bound(y, w, k) == pytest.approx(_kmeans_brute(y, w, k), abs=1e-9)


def test_a_timed_out_fit_reports_the_kmeans_bound():
    from treelearn.learn.continuous._regression import kmeans_1d_bound

    X, y = _hard()
    with pytest.warns(SearchLimitWarning):
        est = OptimalTreeRegressor(max_depth=4, time_limit=0.3).fit(X, y)
    ys = np.sort(y)
    ref = kmeans_1d_bound(ys, np.ones(len(y)), 16)
    assert 0 < est.lower_bound_ <= est.train_sse_
    assert est.lower_bound_ == pytest.approx(ref, rel=1e-6)


def test_memory_limit_refuses_with_the_named_error():
    X, y = _hard(n=20000)
    with pytest.raises(ResourceLimitError, match="memory_limit_mb"):
        OptimalTreeRegressor(max_depth=3, memory_limit_mb=1).fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_ctrl_c_stops_the_fit(n_jobs):
    X, y = _hard()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    # SIGINT may be ignored when the test runner is a background job: Python's handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            OptimalTreeRegressor(max_depth=5, time_limit=None, n_jobs=n_jobs).fit(X, y)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - t0 < 30
    partial = getattr(info.value, "partial_tree", None)
    assert partial is not None and partial.is_regression


@pytest.mark.parametrize("params, match", [
    ({"max_depth": -1}, "max_depth"), ({"min_samples_leaf": 0}, "min_samples_leaf"), ({"k": 0}, "^k must"),
    ({"time_limit": 0}, "time_limit"), ({"memory_limit_mb": -1}, "memory_limit_mb"), ({"k": "some"}, "^k must")])
def test_bad_parameters_name_the_problem(params, match):
    X, y, _ = _case(1)
    with pytest.raises(TreeLearnValueError, match=match):
        TopKTreeRegressor(**params).fit(X, y)


def test_too_many_outputs_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(TreeLearnValueError, match="outputs"):
        OptimalTreeRegressor(max_depth=1).fit(rng.normal(size=(30, 2)), rng.normal(size=(30, 17)))


# ----------------------------------------------------------------------------- plumbing
def test_fitted_regressor_plumbing():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + (X[:, 1] > 0) + 0.1 * rng.normal(size=200)
    est = OptimalTreeRegressor(max_depth=2).fit(X, y)
    assert est.score(X, y) > 0.5
    assert est.apply(X).shape == (200,) and est.decision_path(X).shape[0] == 200
    assert est.feature_importances_.sum() == pytest.approx(1.0)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    back = treelearn.tree_from_json(est.tree_.to_json())
    assert back == est.tree_
    assert "value" in treelearn.export_text(est) and "digraph" in treelearn.export_graphviz(est)
    assert "<html" in treelearn.export_html(est).lower()
    sk = treelearn.to_sklearn(est)
    np.testing.assert_allclose(sk.predict(X.astype(np.float32)), est.predict(X))


def test_constant_target_is_one_leaf():
    X = np.arange(20.0).reshape(10, 2)
    est = OptimalTreeRegressor().fit(X, np.full(10, 3.0))
    assert est.tree_.node_count == 1 and est.is_optimal_ and est.train_sse_ == 0.0


def test_sample_weight_units():
    X, y, w = _case(3, weighted=True, ties=False, n=30)
    a = OptimalTreeRegressor(max_depth=2).fit(X, y, sample_weight=w)
    b = OptimalTreeRegressor(max_depth=2).fit(X, y, sample_weight=w * 1e6)
    assert b.train_sse_ == pytest.approx(a.train_sse_ * 1e6, rel=1e-9)
    assert b.lower_bound_ == pytest.approx(a.lower_bound_ * 1e6, rel=1e-9)


@pytest.mark.parametrize("Est", [OptimalTreeRegressor, TopKTreeRegressor])
def test_check_estimator(Est):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchLimitWarning)
        check_estimator(Est(max_depth=2))


def test_dask_input_equals_local_fit():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(31)
    X = rng.normal(size=(600, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.2 * rng.normal(size=600)
    for alpha in (0.0, 0.1):  # (0.1: 3 leaves instead of 4)
        local = OptimalTreeRegressor(max_depth=2, ccp_alpha=alpha).fit(X, y)
        dist = OptimalTreeRegressor(max_depth=2, ccp_alpha=alpha).fit(da.from_array(X, chunks=(200, 4)),
                                                                      da.from_array(y, chunks=200))
        assert dist.tree_ == local.tree_
        np.testing.assert_array_equal(dist.tree_.value, local.tree_.value)
        assert dist.objective_ == local.objective_


def test_verbose_prints_the_incumbents(capsys):
    X, y = _hard(n=800, d=4)
    est = OptimalTreeRegressor(max_depth=3, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "[OptimalTreeRegressor]" in err and "incumbent SSE" in err
    assert len(est.incumbent_history_) >= 1
    assert all(b[1] < a[1] for a, b in zip(est.incumbent_history_, est.incumbent_history_[1:]))
