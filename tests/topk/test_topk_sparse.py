"""Sparse objectives of the binary exact search (``ccp_alpha``, ``min_samples_leaf``): the optimal
tree's objective equals an exhaustive search over ALL trees of the depth budget (enumerated one by
one, independent of the search's recursion) on small random data with ties and weights; the
returned tree meets the constraints, is the same for any ``n_jobs``, and agrees with pystreed."""
import itertools

import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TopKTreeClassifier, TreeLearnValueError


def _all_trees(d, h):
    """Every tree of depth <= h over d binary features: None (a leaf) or (f, left, right)."""
    if h == 0:
        return [None]
    sub = _all_trees(d, h - 1)
    return [None] + [(f, a, b) for f in range(d) for a, b in itertools.product(sub, sub)]


def _leaf_sets(tree, patterns, rows):
    """The leaves of ``tree`` as lists of row-pattern indices (``rows``: the patterns reaching it)."""
    if tree is None:
        return [rows]
    f, a, b = tree
    return (_leaf_sets(a, patterns, [r for r in rows if patterns[r][f] == 0])
            + _leaf_sets(b, patterns, [r for r in rows if patterns[r][f] == 1]))


def _exhaustive(B, y, w, depth, n_classes, alpha=0.0, min_rows=1, min_weight=0.0, max_leaves=None):
    """min over every tree of depth <= depth with at most max_leaves leaves, whose leaves all hold
    >= min_rows rows (>= 1) and >= min_weight weight, of: weighted errors / total weight + alpha *
    leaves."""
    patterns, inv = np.unique(B.astype(int), axis=0, return_inverse=True)
    inv = inv.ravel()
    cw = np.zeros((len(patterns), n_classes))
    np.add.at(cw, (inv, y), w)
    nrows = np.bincount(inv, minlength=len(patterns))
    total = w.sum()
    best = np.inf
    for tree in _all_trees(B.shape[1], depth):
        cost, ok = 0.0, True
        leaves = _leaf_sets(tree, patterns, list(range(len(patterns))))
        if max_leaves is not None and len(leaves) > max_leaves:
            continue
        for leaf in leaves:
            t = cw[leaf].sum(axis=0)
            if nrows[leaf].sum() < max(1, min_rows) or t.sum() < min_weight:
                ok = False
                break
            cost += (t.sum() - t.max()) / total + alpha
        if ok:
            best = min(best, cost)
    return best


def _objective(est, B, y, w, alpha):
    wrong = est.predict(B) != y
    return float(w[wrong].sum()) / w.sum() + alpha * est.tree_.n_leaves


def _data(seed, n=30, d=3):
    rng = np.random.default_rng(seed)
    C = 2 + seed % 2
    B = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((B[:, 0] + B[:, 1] * B[:, 2] + rng.integers(0, 2, n)) % C).astype(int)
    weights = {"unit": np.ones(n), "integer": rng.integers(1, 4, n).astype(float),
               "fractional": rng.uniform(0.1, 2.0, n)}
    return B, y, C, weights


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("alpha", [0.0, 0.02, 0.08])
@pytest.mark.parametrize("weights", ["unit", "integer", "fractional"])
def test_ccp_alpha_is_the_exhaustive_optimum(seed, depth, alpha, weights):
    B, y, C, ws = _data(seed)
    w = ws[weights]
    ref = _exhaustive(B, y, w, depth, C, alpha=alpha)
    est = OptimalTreeClassifier(max_depth=depth, ccp_alpha=alpha, time_limit=60).fit(B, y, sample_weight=w)
    assert est.is_optimal_ and est.solver_ == "binary"
    assert _objective(est, B, y, w, alpha) == pytest.approx(ref, abs=1e-9)
    # a split is only kept when it pays: no internal node whose removal keeps the objective
    if alpha > 0:
        assert est.lower_bound_ <= (ref * w.sum()) * (1 + 1e-12) + 1e-9


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("msl", [3, 7, 0.2])
@pytest.mark.parametrize("weights", ["unit", "fractional"])
def test_min_samples_leaf_is_the_exhaustive_optimum(seed, depth, msl, weights):
    B, y, C, ws = _data(seed)
    w = ws[weights]
    rows = msl if isinstance(msl, int) else int(np.ceil(msl * len(y)))
    ref = _exhaustive(B, y, w, depth, C, min_rows=rows)
    est = OptimalTreeClassifier(max_depth=depth, min_samples_leaf=msl).fit(B, y, sample_weight=w)
    assert est.is_optimal_
    assert est.training_error_ / w.sum() == pytest.approx(ref, abs=1e-9)
    assert np.bincount(est.apply(B))[np.unique(est.apply(B))].min() >= rows


@pytest.mark.parametrize("seed", range(4))
def test_all_sparse_options_together(seed):
    B, y, C, ws = _data(seed, n=36)
    w = ws["integer"]
    ref = _exhaustive(B, y, w, 3, C, alpha=0.02, min_rows=3, min_weight=0.1 * w.sum())
    est = OptimalTreeClassifier(max_depth=3, ccp_alpha=0.02, min_samples_leaf=3,
                                min_weight_fraction_leaf=0.1).fit(B, y, sample_weight=w)
    assert _objective(est, B, y, w, 0.02) == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth,budget", [(2, 2), (2, 3), (3, 2), (3, 3), (3, 5), (3, 7), (3, 8)])
@pytest.mark.parametrize("weights", ["unit", "fractional"])
def test_max_leaves_is_the_exhaustive_optimum(seed, depth, budget, weights):
    B, y, C, ws = _data(seed)
    w = ws[weights]
    ref = _exhaustive(B, y, w, depth, C, max_leaves=budget)
    for kw in ({"max_leaves": budget}, {"max_leaf_nodes": budget}):
        est = OptimalTreeClassifier(max_depth=depth, **kw).fit(B, y, sample_weight=w)
        assert est.is_optimal_
        assert est.training_error_ / w.sum() == pytest.approx(ref, abs=1e-9)
        assert est.get_n_leaves() <= budget and est.get_depth() <= depth


@pytest.mark.parametrize("seed", range(3))
def test_max_leaves_with_ccp_alpha_and_min_samples_leaf(seed):
    B, y, C, ws = _data(seed, n=36, d=4)
    w = ws["integer"]
    for budget in (3, 4, 6):
        ref = _exhaustive(B, y, w, 3, C, alpha=0.01, min_rows=2, max_leaves=budget)
        est = OptimalTreeClassifier(max_depth=3, max_leaves=budget, ccp_alpha=0.01, min_samples_leaf=2).fit(
            B, y, sample_weight=w)
        assert _objective(est, B, y, w, 0.01) == pytest.approx(ref, abs=1e-9)


def test_ccp_alpha_on_numeric_columns_every_threshold():
    """Numeric columns, every threshold by the binary search: the exhaustive search over the
    threshold indicators."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 1) ^ (rng.random(40) < 0.2)).astype(int)
    B = np.column_stack([(X[:, j] >= t) for j in range(2) for t in (1, 2)]).astype(float)
    w = np.ones(40)
    for alpha in (0.0, 0.02, 0.08):
        est = OptimalTreeClassifier(max_depth=2, max_binary_features=None, ccp_alpha=alpha, solver="binary").fit(X, y)
        assert est.solver_ == "binary" and est.is_optimal_
        assert _objective(est, X, y, w, alpha) == pytest.approx(_exhaustive(B, y, w, 2, 2, alpha=alpha), abs=1e-9)


def test_ccp_alpha_trades_errors_for_leaves():
    B, y, C, ws = _data(1, n=60, d=5)
    leaves = [OptimalTreeClassifier(max_depth=3, ccp_alpha=a).fit(B, y).tree_.n_leaves for a in (0.0, 0.02, 0.1, 1.0)]
    assert leaves == sorted(leaves, reverse=True) and leaves[-1] == 1 and leaves[0] > 1


@pytest.mark.parametrize("seed", range(3))
def test_ties_give_the_same_tree_for_any_n_jobs(seed):
    """Many ties (duplicated columns, tiny data): the canonical tie rule holds with threads."""
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(24, 4)).astype(float)
    B = np.hstack([B, B[:, :2]])
    y = rng.integers(0, 2, 24)
    for kw in ({"ccp_alpha": 0.03}, {"min_samples_leaf": 3}, {"ccp_alpha": 0.01, "min_samples_leaf": 2},
               {"max_leaves": 5}):
        trees = [OptimalTreeClassifier(max_depth=4, n_jobs=j, **kw).fit(B, y).tree_ for j in (1, 2)]
        for attr in ("feature", "children_left", "children_right", "value"):
            np.testing.assert_array_equal(getattr(trees[0], attr), getattr(trees[1], attr))


def test_topk_with_sparse_options_never_beats_the_optimum():
    B, y, C, ws = _data(2, n=40, d=4)
    for kw in ({"ccp_alpha": 0.03}, {"min_samples_leaf": 4}, {"max_leaves": 4}):
        opt = OptimalTreeClassifier(max_depth=3, **kw).fit(B, y)
        top = TopKTreeClassifier(k=2, max_depth=3, **kw).fit(B, y)
        alpha = kw.get("ccp_alpha", 0.0)
        assert _objective(top, B, y, np.ones(40), alpha) >= _objective(opt, B, y, np.ones(40), alpha) - 1e-12
        full = TopKTreeClassifier(k="all", max_depth=3, **kw).fit(B, y)
        np.testing.assert_array_equal(full.tree_.feature, opt.tree_.feature)


def test_sparse_options_are_checked():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    for bad in ({"ccp_alpha": -0.1}, {"min_samples_leaf": 0}, {"min_samples_leaf": 1.5}, {"max_leaves": 0},
                {"max_leaves": 3, "max_leaf_nodes": 4}):
        with pytest.raises(TreeLearnValueError):
            OptimalTreeClassifier(**bad).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="continuous solver has none of them"):
        OptimalTreeClassifier(solver="continuous", ccp_alpha=0.01).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="monotonic_cst"):
        OptimalTreeClassifier(ccp_alpha=0.01, monotonic_cst=[1, 0]).fit(X, y)
    # solver="auto" with a sparse option: the binary search
    assert OptimalTreeClassifier(max_binary_features=None, ccp_alpha=0.01).fit(X, y).solver_ == "binary"


@pytest.mark.parametrize("seed", range(3))
def test_agrees_with_pystreed(seed):
    """STreeD's cost_complexity is a cost per branch node as a fraction of the rows (n_leaves - 1
    branch nodes on a binary tree: the same optimum as ccp_alpha, up to a constant), its
    min_leaf_node_size scikit-learn's min_samples_leaf in rows, its max_num_nodes max_leaves - 1."""
    streed = pytest.importorskip("pystreed")
    rng = np.random.default_rng(seed)
    n = 80
    B = rng.integers(0, 2, size=(n, 6))
    y = ((B[:, 0] + B[:, 1] * B[:, 2] + (rng.random(n) < 0.3)) % 2).astype(int)
    w = np.ones(n)
    for a in (0.01, 0.03):
        s = streed.STreeDClassifier(optimization_task="cost-complex-accuracy", max_depth=3, cost_complexity=a,
                                    time_limit=60).fit(B, y)
        t = OptimalTreeClassifier(max_depth=3, ccp_alpha=a).fit(B, y)
        ref = float((s.predict(B) != y).sum()) / n + a * s.get_n_leaves()
        assert _objective(t, B, y, w, a) == pytest.approx(ref, abs=1e-12)
    for m in (3, 8):
        s = streed.STreeDClassifier(max_depth=3, min_leaf_node_size=m, time_limit=60).fit(B, y)
        t = OptimalTreeClassifier(max_depth=3, min_samples_leaf=m).fit(B, y)
        assert t.training_error_ == float((s.predict(B) != y).sum())
    for branches in (1, 2, 4):  # STreeD's max_num_nodes counts branch nodes: leaves - 1
        s = streed.STreeDClassifier(max_depth=3, max_num_nodes=branches, time_limit=60).fit(B, y)
        t = OptimalTreeClassifier(max_depth=3, max_leaves=branches + 1).fit(B, y)
        assert t.training_error_ == float((s.predict(B) != y).sum())


@pytest.mark.parametrize("kw", [{"max_leaves": 9}, {"ccp_alpha": 0.001}, {"min_samples_leaf": 2}])
def test_time_limit_holds_with_sparse_options(kw):
    """A search too large for its time limit stops near it and returns a valid tree."""
    import time
    import warnings

    rng = np.random.default_rng(0)
    B = rng.integers(0, 2, size=(3000, 60)).astype(float)
    y = (B[:, :7].sum(axis=1) % 2).astype(int) ^ (rng.random(3000) < 0.1)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OptimalTreeClassifier(max_depth=6, time_limit=0.5, **kw).fit(B, y)
    assert time.perf_counter() - t0 < 0.5 * 1.1 + 1.5
    assert est.timed_out_ and not est.is_optimal_
    assert est.training_error_ == float((est.predict(B) != y).sum())
    if "max_leaves" in kw:
        assert est.get_n_leaves() <= kw["max_leaves"]


@pytest.mark.parametrize("msl", [31, 2**31, 2**62])
def test_min_samples_leaf_above_the_rows_is_one_leaf(msl):
    # any count above the rows allows no split (as in scikit-learn), however large: no overflow
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    for est in (OptimalTreeClassifier(min_samples_leaf=msl), TopKTreeClassifier(k=2, min_samples_leaf=msl)):
        assert est.fit(X, y).tree_.node_count == 1


@pytest.mark.parametrize("alpha", [1.0, 1e308])
def test_a_leaf_penalty_above_every_error_is_one_leaf(alpha):
    # ccp_alpha >= 1 (a leaf costs the whole sample's weight) allows no split, however large
    X = np.random.default_rng(1).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    for est in (OptimalTreeClassifier(ccp_alpha=alpha), TopKTreeClassifier(k=2, ccp_alpha=alpha)):
        assert est.fit(X, y).tree_.node_count == 1
