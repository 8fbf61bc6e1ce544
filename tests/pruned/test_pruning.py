"""Pruners of paper 002 §6: bound pruning (compiled vs exact integers), CART / M-CART, the estimator."""
import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification

from treelearn._validation import TreeLearnValueError
from treelearn.learn.greedy.estimator import grow_greedy
from treelearn.prune.bounds import as_shape, shawe_taylor_bound
from treelearn.learn.pruned.estimator import PrunedTreeClassifier
from treelearn.prune.pruners import cost_complexity_pruning_path, prune_cost_complexity, prune_with_bound, tree_bound


def _data(name, seed=0):
    if name == "iris":
        X, y = load_iris(return_X_y=True)
    elif name == "wine":
        X, y = load_wine(return_X_y=True)
    elif name == "cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(n_samples=400, n_features=6, n_informative=4, n_classes=3, flip_y=0.15,
                                   random_state=seed)
    return X, y


def _grow(X, y, max_leaves, criterion="gini"):
    return grow_greedy(X, y, int(y.max()) + 1, criterion=criterion, max_leaves=max_leaves)


def _is_pruning_of(small, big):
    """small equals big with some nodes made leaves (the prune keeps the nodes above its leaves)."""
    def walk(vs, vb):
        if small.children_left[vs] < 0:
            return np.array_equal(small.value[vs], big.value[vb])
        if big.children_left[vb] < 0:
            return False
        if (small.feature[vs], small.threshold[vs], small.kind[vs]) != (big.feature[vb], big.threshold[vb], big.kind[vb]):
            return False
        return walk(small.children_left[vs], big.children_left[vb]) and walk(
            small.children_right[vs], big.children_right[vb])
    return walk(0, 0)


def _internal_nodes(tree):
    return [v for v in range(tree.node_count) if tree.children_left[v] >= 0]


@pytest.mark.parametrize("name,leaves", [("iris", 12), ("wine", 15), ("cancer", 25), ("synth", 40), ("synth", 80)])
def test_fast_matches_exact_integers(name, leaves):
    X, y = _data(name)
    tree = _grow(X, y, leaves)
    fast, info_f = prune_with_bound(tree, method="fast", return_info=True)
    exact, info_e = prune_with_bound(tree, method="exact", return_info=True)
    assert info_f.method == "fast" and info_e.method == "exact"
    assert fast == exact
    assert np.allclose(info_f.bounds, info_e.bounds, rtol=1e-10)


@pytest.mark.parametrize("name,leaves,loose", [("synth", 30, True), ("wine", 15, False), ("synth", 20, False)])
def test_bound_pruning_is_a_pruning_and_never_raises_the_bound(name, leaves, loose):
    X, y = _data(name)
    tree = _grow(X, y, leaves)
    pruned, info = prune_with_bound(tree, loose=loose, return_info=True)
    assert _is_pruning_of(pruned, tree)
    assert pruned.n_leaves <= tree.n_leaves
    b = info.bounds
    assert all(b[i + 1] <= b[i] + 1e-12 for i in range(len(b) - 1))
    # independent recomputation of the final bound from Eq. (8) on the pruned tree
    m = int(tree.n_node_samples[0])
    k = pruned.training_misclassifications()
    direct = shawe_taylor_bound(as_shape(pruned), k, m, tree.n_classes, tree.n_features, loose=loose)
    assert direct == pytest.approx(b[-1], rel=1e-12)
    assert tree_bound(pruned, loose=loose) == pytest.approx(b[-1], rel=1e-12)
    # local optimality: no single further prune lowers the bound (checked with exact integers)
    for v in _internal_nodes(pruned):
        assert tree_bound(pruned.prune([v]), loose=loose) > b[-1] - 1e-12


def test_first_step_is_the_best_single_prune():
    X, y = _data("synth", seed=3)
    tree = _grow(X, y, 25)
    start = tree_bound(tree)
    cands = {v: tree_bound(tree.prune([v])) for v in _internal_nodes(tree)}
    best_v = min(cands, key=lambda v: (cands[v], v))
    _, info = prune_with_bound(tree, return_info=True)
    if cands[best_v] <= start:
        assert info.bounds[1] == pytest.approx(cands[best_v], rel=1e-12)
        assert best_v in info.pruned_nodes or any(u in info.pruned_nodes for u in _ancestors(tree, best_v))
    else:
        assert len(info.bounds) == 1


def _ancestors(tree, v):
    par = tree.parents()
    out = []
    while par[v] >= 0:
        v = par[v]
        out.append(v)
    return out


def test_custom_priors_route_to_exact_and_change_the_result():
    X, y = _data("synth")
    tree = _grow(X, y, 30)
    lenient = prune_with_bound(tree, log_q_k=lambda k: -0.01 * k - 1.0)
    default = prune_with_bound(tree)
    # a weak penalty on errors prunes at least as much
    assert lenient.n_leaves <= default.n_leaves
    with pytest.raises(TreeLearnValueError, match="fast"):
        prune_with_bound(tree, loose=False, method="fast")


def test_bad_arguments():
    X, y = _data("iris")
    tree = _grow(X, y, 5)
    with pytest.raises(TreeLearnValueError, match="delta"):
        prune_with_bound(tree, delta=1.5)
    with pytest.raises(TreeLearnValueError, match="method"):
        prune_with_bound(tree, method="magic")
    with pytest.raises(TreeLearnValueError, match="Tree"):
        prune_with_bound("tree")
    with pytest.raises(TreeLearnValueError, match="complexity"):
        cost_complexity_pruning_path(tree, complexity="depth")


# ---------------------------------------------------------------------- cost complexity
def _all_prunings(tree):
    """Every pruning of a small tree, as sets of collapsed nodes (brute force)."""
    def rec(v):
        if tree.children_left[v] < 0:
            return [frozenset()]
        out = [frozenset([v])]
        for a in rec(int(tree.children_left[v])):
            for b in rec(int(tree.children_right[v])):
                out.append(a | b)
        return out
    return rec(0)


def _risk(tree, cut):
    total = tree.value[0].sum()
    t = tree.prune(cut) if cut else tree
    return t.training_misclassifications() / total, t.n_leaves


def test_weakest_link_sequence_contains_every_optimal_subtree():
    """Breiman's theorem: for every α the minimiser of R + α·L over all prunings is in the sequence."""
    X, y = _data("synth", seed=1)
    tree = _grow(X, y, 9)
    path = cost_complexity_pruning_path(tree)
    assert np.all(np.diff(path.ccp_alphas) >= 0) and path.n_leaves[-1] == 1 and path.n_leaves[0] == tree.n_leaves
    prunings = [(_risk(tree, c)) for c in _all_prunings(tree)]
    for alpha in np.concatenate([path.ccp_alphas, path.ccp_alphas + 1e-4, [0.5, 1.0]]):
        best_all = min(r + alpha * L for r, L in prunings)
        t = prune_cost_complexity(tree, alpha, path=path)
        r, L = _risk(t, set())
        assert r + alpha * L == pytest.approx(best_all, abs=1e-12)
    # each path entry's risk is the risk of its pruning
    for cut, risk in zip(path.pruned_nodes, path.impurities):
        assert _risk(tree, cut)[0] == pytest.approx(risk)


def test_mcart_complexity_and_path():
    X, y = _data("synth", seed=2)
    tree = _grow(X, y, 20)
    path = cost_complexity_pruning_path(tree, complexity="mcart")
    m, l = int(tree.n_node_samples[0]), tree.n_features
    for L, c in zip(path.n_leaves, path.complexities):
        d = L * math.log(L * l)
        assert c == pytest.approx(d / m * math.log(m / d))
    assert path.n_leaves[-1] == 1
    assert np.all(np.diff(path.n_leaves) < 0)
    for cut, L in zip(path.pruned_nodes, path.n_leaves):
        assert (tree.prune(cut) if cut else tree).n_leaves == L


# ---------------------------------------------------------------------- estimator
@pytest.mark.parametrize("pruning", ["bound", "ccp", "mcart", None])
def test_classifier_fits_and_prunes(pruning):
    X, y = load_wine(return_X_y=True)
    clf = PrunedTreeClassifier(pruning=pruning, max_leaves=20, random_state=0, cv=5).fit(X, y)
    assert _is_pruning_of(clf.tree_, clf.unpruned_tree_)
    assert clf.unpruned_tree_.n_leaves <= 20
    assert clf.score(X, y) > 0.85
    assert clf.pruning_time_ >= 0
    if pruning == "bound":
        assert clf.bound_ == pytest.approx(tree_bound(clf.tree_), rel=1e-12)
    if pruning in ("ccp", "mcart"):
        assert clf.ccp_alpha_ is not None
    if pruning is None:
        assert clf.tree_ == clf.unpruned_tree_


def test_classifier_is_reproducible_and_validates():
    X, y = _data("synth")
    a = PrunedTreeClassifier(pruning="ccp", random_state=3, cv=4).fit(X, y)
    b = PrunedTreeClassifier(pruning="ccp", random_state=3, cv=4).fit(X, y)
    assert a.tree_ == b.tree_ and a.ccp_alpha_ == b.ccp_alpha_
    with pytest.raises(TreeLearnValueError, match="pruning"):
        PrunedTreeClassifier(pruning="rep").fit(X, y)
    with pytest.raises(TreeLearnValueError, match="delta"):
        PrunedTreeClassifier(delta=0).fit(X, y)
    one = PrunedTreeClassifier().fit(X, np.zeros(len(y)))
    # a one-class fit runs the pruner too (issue 12): the one-leaf tree with its own bound
    assert one.tree_.n_leaves == 1 and 0 < one.bound_ < 1 and one.unpruned_tree_.n_leaves == 1


def test_sklearn_api():
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, y = load_iris(return_X_y=True)
    clf = PrunedTreeClassifier(max_leaves=10)
    assert clone(clf).get_params()["max_leaves"] == 10
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.mean() > 0.85


def test_experiment_quick_writes_outputs(tmp_path):
    import csv

    from treelearn.experiments.pruning import main

    assert main(["--quick", "--splits", "1", "--cv", "3", "--out-dir", str(tmp_path),
                 "--datasets", "sklearn/iris,sklearn/wine"]) == 0
    for f in ("results.csv", "summary.csv", "table1.md", "table1.png"):
        assert (tmp_path / f).is_file()
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert {r["model"] for r in rows} == {"Original", "CART", "M-CART", "CART-paper", "M-CART-paper", "CART-WL",
                                         "M-CART-WL", "Bound"}
    # each pruned model keeps at most the leaves of the original tree of its split
    orig = {(r["dataset"], r["split"]): int(r["n_leaves"]) for r in rows if r["model"] == "Original"}
    assert all(int(r["n_leaves"]) <= orig[(r["dataset"], r["split"])] for r in rows)
    assert "Bound best or within" in (tmp_path / "table1.md").read_text()


@pytest.mark.parametrize("pruning", ["bound", "ccp"])
def test_sklearn_estimator_checks(pruning):
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(PrunedTreeClassifier(pruning=pruning, cv=3), on_fail=None)
    # every check passes (check_class_weight_classifiers too: it sets min_weight_fraction_leaf=0.01)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert not failed


@pytest.mark.parametrize("n_classes", [2, 3])
def test_fast_matches_exact_when_the_stirling_cap_binds(n_classes):
    """Few examples, many leaves: the cap min(., S(m, c)) of Thm 9 is active in the recursion."""
    from treelearn.prune.bounds import _loose_vectors, stirling2

    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(60, 5))
    y = rng.integers(0, n_classes, size=60)
    tree = _grow(X, y, 30)
    m, L = 60, tree.n_leaves
    e = 2 * m - L
    vecs = _loose_vectors(as_shape(tree), e, 5, 2)
    assert any(not s.is_leaf and v[2] == stirling2(s.n_leaves + e, 2) for s, v in vecs.items())
    fast, info_f = prune_with_bound(tree, method="fast", return_info=True)
    exact, info_e = prune_with_bound(tree, method="exact", return_info=True)
    assert fast == exact
    assert np.allclose(info_f.bounds, info_e.bounds, rtol=1e-10)
