"""The Tree model against brute force on random trees built here: routing, structure, rank (001),
average depth Δ(T) (004), simplify, training error and prune."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn import ColumnSchema, Tree, TreeLearnValueError


# ---------------------------------------------------------------------- random trees (nested form)
def _random_nested(rng, depth_left, n_features, n_classes, schema, path_features=(), distinct=False,
                   p_leaf=0.3, thresholds=None):
    if depth_left == 0 or (rng.random() < p_leaf and path_features):
        return {"leaf": rng.integers(0, 6, n_classes).astype(float)}
    choices = [j for j in range(n_features) if not (distinct and j in path_features)]
    if not choices:
        return {"leaf": rng.integers(0, 6, n_classes).astype(float)}
    j = int(rng.choice(choices))
    cats = schema.categories[j]
    if cats is not None:
        kind, t = 1, float(rng.integers(0, len(cats)))
    else:
        kind, t = 0, float(thresholds if thresholds is not None else np.round(rng.normal(), 2))
    kids = [_random_nested(rng, depth_left - 1, n_features, n_classes, schema, path_features + (j,), distinct,
                           p_leaf, thresholds) for _ in range(2)]
    return {"feature": j, "kind": kind, "threshold": t, "left": kids[0], "right": kids[1]}


def _fill_values(node):
    if "leaf" in node:
        node["value"] = node["leaf"]
    else:
        node["value"] = _fill_values(node["left"]) + _fill_values(node["right"])
    return node["value"]


def _to_tree(nested, classes, schema) -> Tree:
    arrays = {k: [] for k in ("children_left", "children_right", "feature", "threshold", "kind", "value")}

    def add(node):
        i = len(arrays["feature"])
        for k in arrays:
            arrays[k].append(None)
        arrays["value"][i] = node["value"]
        if "leaf" in node:
            arrays["children_left"][i] = arrays["children_right"][i] = -1
            arrays["feature"][i], arrays["threshold"][i], arrays["kind"][i] = -2, -2.0, -1
        else:
            arrays["feature"][i], arrays["threshold"][i], arrays["kind"][i] = node["feature"], node["threshold"], node["kind"]
            arrays["children_left"][i] = add(node["left"])
            arrays["children_right"][i] = add(node["right"])
        return i

    add(nested)
    return Tree(**arrays, classes=classes, schema=schema)


def _make(seed, n_features=4, n_classes=3, max_depth=5, categorical=(), distinct=False, thresholds=None):
    rng = np.random.default_rng(seed)
    cats = [np.array(["a", "b", "c"], dtype=object) if j in categorical else None for j in range(n_features)]
    schema = ColumnSchema(categories=cats, feature_names=[f"f{j}" for j in range(n_features)])
    nested = _random_nested(rng, max_depth, n_features, n_classes, schema, distinct=distinct, thresholds=thresholds)
    _fill_values(nested)
    return nested, _to_tree(nested, np.arange(n_classes), schema)


def _naive_walk(nested, xe):
    """(leaf node dict, list of nodes on the path) for one encoded row."""
    node, path = nested, [nested]
    while "leaf" not in node:
        v = xe[node["feature"]]
        holds = v >= node["threshold"] if node["kind"] == 0 else v == node["threshold"]
        node = node["right"] if holds else node["left"]
        path.append(node)
    return node, path


def _preorder(nested):
    out = [nested]
    if "leaf" not in nested:
        out += _preorder(nested["left"]) + _preorder(nested["right"])
    return out


def _naive_rank(node):
    if "leaf" in node:
        return 0
    a, b = _naive_rank(node["left"]), _naive_rank(node["right"])
    return max(a, b) if a != b else a + 1


def _random_X(rng, n, tree):
    cols = []
    for cats in tree.schema.categories:
        if cats is None:
            cols.append(np.round(rng.normal(size=n), 2))  # ties with thresholds happen
        else:
            cols.append(rng.choice(np.append(cats, "unseen"), n))
    return pd.DataFrame({f"f{j}": c for j, c in enumerate(cols)})


# ---------------------------------------------------------------------- routing
@pytest.mark.parametrize("seed", range(12))
def test_apply_predict_proba_decision_path_vs_naive_walk(seed):
    nested, tree = _make(seed, categorical=(1,) if seed % 2 else ())
    rng = np.random.default_rng(100 + seed)
    X = _random_X(rng, 80, tree)
    Xe = tree.encode(X)
    ids = {id(n): i for i, n in enumerate(_preorder(nested))}
    leaves = tree.apply(X)
    proba = tree.predict_proba(X)
    pred = tree.predict(X)
    dp = tree.decision_path(X).toarray()
    assert dp.shape == (80, tree.node_count)
    for r in range(80):
        leaf, path = _naive_walk(nested, Xe[r])
        assert leaves[r] == ids[id(leaf)]
        v = leaf["value"]
        expect_p = v / v.sum() if v.sum() > 0 else np.full(v.size, 1 / v.size)
        np.testing.assert_allclose(proba[r], expect_p)
        assert pred[r] == np.argmax(v)
        assert set(np.nonzero(dp[r])[0]) == {ids[id(n)] for n in path}
    # unseen categories are -1: every x == v condition is false
    if tree.schema.categories[1] is not None:
        assert np.all(Xe[X["f1"] == "unseen", 1] == -1)


@pytest.mark.parametrize("seed", range(8))
def test_structure_vs_naive(seed):
    nested, tree = _make(seed, max_depth=6)
    nodes = _preorder(nested)
    ids = {id(n): i for i, n in enumerate(nodes)}
    assert tree.node_count == len(nodes)
    assert tree.n_leaves == sum("leaf" in n for n in nodes)

    def depths(node, d, out):
        out[ids[id(node)]] = d
        if "leaf" not in node:
            depths(node["left"], d + 1, out)
            depths(node["right"], d + 1, out)
        return out

    d = depths(nested, 0, {})
    np.testing.assert_array_equal(tree.node_depths(), [d[i] for i in range(len(nodes))])
    assert tree.depth == max(d.values()) == tree.max_depth
    par = tree.parents()
    assert par[0] == -1
    for n in nodes:
        if "leaf" not in n:
            assert par[ids[id(n["left"])]] == ids[id(n)] == par[ids[id(n["right"])]]
    for v in range(tree.node_count):
        assert sorted(tree.subtree_nodes(v)) == sorted(ids[id(m)] for m in _preorder(nodes[v]))
    assert tree.rank == _naive_rank(nested)
    assert tree.copy() == tree and tree.copy() is not tree


# ---------------------------------------------------------------------- rank (001)
def _complete(depth, n_features):
    def build(d):
        if d == 0:
            return {"leaf": np.array([1.0, 0.0])}
        return {"feature": d - 1, "kind": 0, "threshold": 0.5, "left": build(d - 1), "right": build(d - 1)}

    nested = build(depth)
    _fill_values(nested)
    return _to_tree(nested, np.arange(2), ColumnSchema(categories=[None] * n_features))


def _decision_list(length):
    def build(i):
        if i == length:
            return {"leaf": np.array([1.0, 0.0])}
        return {"feature": i, "kind": 0, "threshold": 0.5, "left": build(i + 1), "right": {"leaf": np.array([0.0, 1.0])}}

    nested = build(0)
    _fill_values(nested)
    return _to_tree(nested, np.arange(2), ColumnSchema(categories=[None] * max(length, 1)))


@pytest.mark.parametrize("d", range(0, 7))
def test_rank_known_trees(d):
    assert _complete(d, max(d, 1)).rank == d          # a complete depth-d tree has rank d
    assert _decision_list(d).rank == min(d, 1)        # a decision list has rank 1 (a leaf 0)
    # 001 Lemma 1: a rank-r tree has at least 2^(r+1) - 1 nodes; rank <= floor(log2 size)
    t = _complete(d, max(d, 1))
    assert t.node_count == 2 ** (d + 1) - 1


@given(st.integers(0, 10_000))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_rank_property(seed):
    nested, tree = _make(seed, max_depth=7)
    r = tree.rank
    assert r == _naive_rank(nested)
    assert tree.node_count >= 2 ** (r + 1) - 1
    assert r <= math.floor(math.log2(tree.n_leaves)) if tree.n_leaves > 1 else r == 0


# ---------------------------------------------------------------------- average depth Δ(T) (004)
@pytest.mark.parametrize("seed", range(10))
def test_average_depth_uniform_vs_enumeration(seed):
    n = 5
    nested, tree = _make(seed, n_features=n, n_classes=2, max_depth=n, distinct=True, thresholds=0.0)
    cube = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    depths = tree.node_depths()[tree.apply(cube)]
    assert tree.average_depth() == pytest.approx(depths.mean(), abs=1e-12)
    assert tree.average_depth(cube) == pytest.approx(depths.mean(), abs=1e-12)
    assert tree.average_depth() <= math.log2(tree.n_leaves) + 1e-12  # Δ(T) <= log s
    # 004 Eq. (4): ½ (Δ(T_-1) + Δ(T_1)) = Δ(T) − 1 for a tree whose root is a query
    if tree.node_count > 1:
        subs = []
        for child in (nested["left"], nested["right"]):
            subs.append(_to_tree(child, np.arange(2), tree.schema).average_depth())
        assert (subs[0] + subs[1]) / 2 == pytest.approx(tree.average_depth() - 1)


def test_average_depth_empirical_is_mean_depth():
    nested, tree = _make(3, max_depth=6)
    X = _random_X(np.random.default_rng(0), 500, tree)
    Xe = tree.encode(X)
    naive = np.mean([len(_naive_walk(nested, Xe[r])[1]) - 1 for r in range(500)])
    assert tree.average_depth(X) == pytest.approx(naive)
    assert Tree.leaf([3, 1], np.arange(2)).average_depth() == 0.0


# ---------------------------------------------------------------------- simplify / prune / training error
@pytest.mark.parametrize("seed", range(15))
def test_simplify_keeps_predictions_and_merges_equal_siblings(seed):
    nested, tree = _make(seed, n_classes=2, max_depth=6)
    s = tree.simplify()
    X = _random_X(np.random.default_rng(seed), 300, tree)
    np.testing.assert_array_equal(s.predict(X), tree.predict(X))
    assert s.n_leaves <= tree.n_leaves
    lab = s.leaf_class_index()
    for v in range(s.node_count):
        l, r = s.children_left[v], s.children_right[v]
        if l >= 0 and s.children_left[l] < 0 and s.children_left[r] < 0:
            assert lab[l] != lab[r]
    assert s.simplify() == s  # idempotent
    # naive: the number of leaves after merging = the number of maximal same-label subtrees
    def merged(node):
        if "leaf" in node:
            return 1, int(np.argmax(node["value"]))
        (a, la), (b, lb) = merged(node["left"]), merged(node["right"])
        if a == 1 and b == 1 and la == lb:
            return 1, la
        return a + b, None

    assert s.n_leaves == merged(nested)[0]


def test_simplify_when_node_counts_disagree_with_leaves():
    # the internal node's own counts say class 0 but both leaves predict class 1
    t = Tree(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2], threshold=[0.5, -2, -2],
             kind=[0, -1, -1], value=[[5.0, 0.0], [0.0, 1.0], [0.0, 2.0]], classes=np.array(["a", "b"]))
    s = t.simplify()
    assert s.n_leaves == 1
    X = np.array([[0.0], [1.0]])
    np.testing.assert_array_equal(s.predict(X), t.predict(X))


@pytest.mark.parametrize("weighted", [False, True])
def test_training_error_vs_counts(weighted):
    _, shape = _make(7, n_classes=3, max_depth=5)
    rng = np.random.default_rng(1)
    X = _random_X(rng, 400, shape)
    y = rng.integers(0, 3, 400)
    w = rng.random(400) * 2 if weighted else np.ones(400)
    leaves = shape.apply(X)
    # counts of the sample at every node: a row counts at every node on its path
    dp = shape.decision_path(X).toarray()
    value = np.zeros((shape.node_count, 3))
    for c in range(3):
        value[:, c] = (dp * (w * (y == c))[:, None]).sum(axis=0)
    t = Tree(children_left=shape.children_left, children_right=shape.children_right, feature=shape.feature,
             threshold=shape.threshold, kind=shape.kind, value=value, classes=np.arange(3), schema=shape.schema)
    pred = t.predict(X)
    assert t.training_error() == pytest.approx(np.sum(w * (pred != y)) / w.sum())
    assert t.training_misclassifications() == pytest.approx(np.sum(w * (pred != y)))
    assert t.error(X, y, sample_weight=w) == pytest.approx(t.training_error())
    np.testing.assert_array_equal(leaves, t.apply(X))


@pytest.mark.parametrize("seed", range(8))
def test_prune_vs_naive(seed):
    nested, tree = _make(seed, max_depth=6)
    internal = np.nonzero(tree.children_left >= 0)[0]
    if internal.size == 0:
        return
    rng = np.random.default_rng(seed)
    cut = set(rng.choice(internal, size=min(2, internal.size), replace=False).tolist())
    p = tree.prune(cut)
    X = _random_X(rng, 200, tree)
    Xe = tree.encode(X)
    nodes = _preorder(nested)
    cut_ids = {id(nodes[v]) for v in cut}
    for r in range(200):
        # naive: walk until a pruned node or a leaf
        node = nested
        while "leaf" not in node and id(node) not in cut_ids:
            v = Xe[r, node["feature"]]
            holds = v >= node["threshold"] if node["kind"] == 0 else v == node["threshold"]
            node = node["right"] if holds else node["left"]
        assert p.predict(X.iloc[[r]])[0] == np.argmax(node["value"])
    removed = set()
    for v in cut:
        removed |= set(tree.subtree_nodes(v)) - {v}
    assert p.node_count == tree.node_count - len(removed)
    assert tree.prune([]) == tree


# ---------------------------------------------------------------------- construction and names
def test_leaf_and_names():
    t = Tree.leaf([1.0, 3.0], np.array(["no", "yes"]), n_features=2)
    assert t.n_leaves == 1 and t.depth == 0 and t.rank == 0 and t.node_count == 1
    np.testing.assert_array_equal(t.predict(np.zeros((3, 2))), ["yes"] * 3)
    assert t.training_error() == pytest.approx(0.25)
    schema = ColumnSchema(categories=[None, np.array(["red", "blue"], dtype=object)], feature_names=["age", "color"])
    t = Tree(children_left=[1, -1, 3, -1, -1], children_right=[2, -1, 4, -1, -1], feature=[0, -2, 1, -2, -2],
             threshold=[30.5, -2, 1, -2, -2], kind=[0, -1, 1, -1, -1], value=np.ones((5, 2)), classes=[0, 1],
             schema=schema)
    assert t.condition_name(0) == "age >= 30.5"
    assert t.condition_name(0, negate=True) == "age < 30.5"
    assert t.condition_name(2) == "color == blue"
    assert t.condition_name(2, negate=True) == "color != blue"
    assert "n_leaves=3" in repr(t)


def _arrays(**over):
    a = dict(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2], threshold=[0.5, -2, -2],
             kind=[0, -1, -1], value=np.ones((3, 2)), classes=[0, 1])
    a.update(over)
    return a


@pytest.mark.parametrize("over, match", [
    (dict(children_left=[], children_right=[], feature=[], threshold=[], kind=[], value=np.ones((0, 2))),
     "at least one node"),
    (dict(children_right=[2, -1]), "children_right has shape"),
    (dict(value=np.ones((3, 3))), "value has shape"),
    (dict(value=[[1, 1], [np.nan, 1], [1, 1]]), "NaN"),
    (dict(children_right=[-1, -1, -1]), "two children or none"),
    (dict(children_left=[1, -1, -1], children_right=[1, -1, -1]), "not describe a tree"),
    (dict(children_left=[1, -1, -1], children_right=[5, -1, -1]), "out of range"),
    (dict(kind=[3, -1, -1]), "kind must be"),
    (dict(kind=[1, -1, -1]), "categorical condition"),
    (dict(feature=[4, -2, -2], n_features=2), "feature index out of range"),
])
def test_malformed_arrays_rejected(over, match):
    with pytest.raises(TreeLearnValueError, match=match):
        Tree(**_arrays(**over))


def test_children_must_follow_parents():
    # node 4 is internal with children 1 and 2, listed before it
    with pytest.raises(TreeLearnValueError, match="after its parent"):
        Tree(children_left=[3, -1, -1, -1, 1], children_right=[4, -1, -1, -1, 2], feature=[0, -2, -2, -2, 0],
             threshold=[0.5, -2, -2, -2, 0.5], kind=[0, -1, -1, -1, 0], value=np.ones((5, 2)), classes=[0, 1])


def test_predict_checks_input():
    _, tree = _make(0, n_features=3)
    with pytest.raises(TreeLearnValueError, match="expecting 3 features"):
        tree.predict(np.zeros((2, 4)))
    with pytest.raises(TreeLearnValueError, match="infinity"):
        tree.predict(np.array([[np.inf, 0, 0]]))
    tree.predict(np.array([[np.nan, 0, 0]]))  # a missing value: routed (tests/contracts/test_missing_values_tree_and_greedy.py)
