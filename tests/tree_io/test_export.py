"""Exports of the Tree: JSON round trip (lossless, hostile input), text, DOT, sklearn arrays/adapter.

References are independent of the code under test: the tree's own arrays walked in the test,
scikit-learn's ``export_text`` / ``plot_tree`` / ``predict``, and dtreeviz.
"""
from __future__ import annotations

import json
import logging
import re
import shutil
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treelearn import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree import Tree
from treelearn.tree.export import (
    export_graphviz,
    export_text,
    from_sklearn,
    sklearn_feature_columns,
    sklearn_input,
    to_sklearn,
    to_sklearn_arrays,
    tree_from_json,
    tree_to_json,
)

# ---------------------------------------------------------------------------------------- random trees
WEIRD_FLOATS = [0.0, -0.0, 0.1 + 0.2, 1e-300, 5e-324, -1.7976931348623157e308, 1 / 3, 2.0**60, -2.5]

CLASS_SETS = [
    np.array(["no", "yes"]),
    np.array(["a", "bb", "ccc", "élan ✓"]),
    np.array([-3, 0, 7, 2**62], dtype=np.int64),
    np.array([1, 2, 3], dtype=np.int32),
    np.array([0.5, 1.25, 1e300]),
    np.array([0.5, 2.0], dtype=np.float32),
    np.array([False, True]),
    np.array([1, "one", 2.5, True], dtype=object),
    np.array(["only"]),
]

CATEGORY_SETS = [
    ["blue", "green", "red"],
    [1, 2, 10],
    [0.5, 1.5],
    [False, True],
    ["x", 3, 2.5, True, 'quote" back\\slash'],
]


def random_tree(rng: np.random.Generator, *, max_nodes: int = 41, classes=None, n_features=None,
                categorical: bool = True, names: bool | None = None) -> Tree:
    """A random valid Tree: random schema (numeric and categorical columns), random preorder
    structure, random thresholds (including awkward floats), weighted non-integer counts."""
    n_features = n_features or int(rng.integers(1, 6))
    cats = []
    for _ in range(n_features):
        if categorical and rng.random() < 0.4:
            c = CATEGORY_SETS[int(rng.integers(len(CATEGORY_SETS)))]
            arr = np.empty(len(c), dtype=object)
            arr[:] = c
            cats.append(arr)
        else:
            cats.append(None)
    if names is None:
        names = rng.random() < 0.6
    odd = 'weird "name\\ {x}'
    feature_names = [odd if j == 0 else f"f{j} (col)" for j in range(n_features)] if names else None
    schema = ColumnSchema(categories=cats, feature_names=feature_names)
    if classes is None:
        classes = CLASS_SETS[int(rng.integers(len(CLASS_SETS)))]
    n_classes = len(classes)
    target = int(rng.integers(1, max_nodes + 1))
    left, right, feature, threshold, kind = [], [], [], [], []

    def new_node():
        left.append(-1)
        right.append(-1)
        feature.append(-2)
        threshold.append(-2.0)
        kind.append(-1)
        return len(left) - 1

    remaining = [target - 1]

    def grow(node, depth):
        if remaining[0] < 2 or depth > 12 or rng.random() < 0.25:
            return
        remaining[0] -= 2
        f = int(rng.integers(n_features))
        if cats[f] is not None:
            kind[node], threshold[node] = 1, float(rng.integers(len(cats[f])))
        else:
            kind[node] = 0
            threshold[node] = (float(rng.choice(WEIRD_FLOATS)) if rng.random() < 0.2
                               else float(rng.normal() * 10.0 ** rng.integers(-3, 4)))
        feature[node] = f
        left[node] = new_node()
        grow(left[node], depth + 1)
        right[node] = new_node()
        grow(right[node], depth + 1)

    grow(new_node(), 0)
    n = len(left)
    value = rng.random((n, n_classes)) * rng.choice([1.0, 10.0, 1e-3])
    value[rng.random((n, n_classes)) < 0.2] = 0.0
    if rng.random() < 0.5:
        value = np.round(value * 100)
    return Tree(children_left=left, children_right=right, feature=feature, threshold=threshold, kind=kind,
                value=value, n_node_samples=rng.integers(0, 10**6, n), impurity=rng.random(n),
                classes=classes, schema=schema)


def random_raw_X(tree: Tree, rng: np.random.Generator, n: int = 300) -> np.ndarray:
    """Raw rows for the tree's schema: float32-representable numbers (so sklearn's float32 cast
    is exact), categorical values drawn from the categories plus an unseen one."""
    X = np.empty((n, tree.n_features), dtype=object)
    for j, cats in enumerate(tree.schema.categories):
        if cats is None:
            X[:, j] = (rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, size=n)).astype(np.float32).astype(float)
        else:
            pool = list(cats) + ["__unseen__"]
            X[:, j] = [pool[i] for i in rng.integers(len(pool), size=n)]
    if all(c is None for c in tree.schema.categories):
        return X.astype(float)
    return X


def assert_same_tree_exactly(a: Tree, b: Tree) -> None:
    assert a == b
    for name in ("threshold", "value", "impurity"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == np.float64
        assert np.array_equal(x.view(np.uint64), y.view(np.uint64)), f"{name} not bit-exact"
    for name in ("children_left", "children_right", "feature", "kind", "n_node_samples"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a.classes.dtype == b.classes.dtype
    assert [type(v) for v in a.classes.tolist()] == [type(v) for v in b.classes.tolist()]
    assert a.classes.tolist() == b.classes.tolist()
    assert a.schema.feature_names == b.schema.feature_names
    for ca, cb in zip(a.schema.categories, b.schema.categories):
        assert (ca is None) == (cb is None)
        if ca is not None:
            assert [(type(v), v) for v in ca.tolist()] == [(type(v), v) for v in cb.tolist()]


# ---------------------------------------------------------------------------------------- JSON round trip
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_json_round_trip_random_trees(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng)
    text = tree_to_json(tree)
    back = Tree.from_json(text)
    assert_same_tree_exactly(tree, back)
    # the document is plain JSON with the format/version fields
    doc = json.loads(text)
    assert doc["format"] == "treelearn.tree" and doc["version"] == 1
    # and the loaded tree predicts like the original
    X = random_raw_X(tree, rng, 50)
    assert np.array_equal(tree.apply(X), back.apply(X))
    # a second round trip is the identity on the text
    assert back.to_json() == text


@settings(max_examples=60, deadline=None)
@given(thresholds=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=6),
       weights=st.lists(st.floats(min_value=0, max_value=1e300, allow_nan=False), min_size=2, max_size=2))
def test_json_round_trip_any_finite_float(thresholds, weights):
    # a left-deep chain: node 0 splits, its right child is a leaf, its left child splits again, ...
    k = len(thresholds)
    n = 2 * k + 1
    left, right, feature, thr, kind = [-1] * n, [-1] * n, [-2] * n, [-2.0] * n, [-1] * n
    for i, t in enumerate(thresholds):
        node = 2 * i
        left[node], right[node], feature[node], thr[node], kind[node] = node + 2, node + 1, 0, t, 0
    value = np.tile(np.array(weights), (n, 1))
    tree = Tree(children_left=left, children_right=right, feature=feature, threshold=thr, kind=kind,
                value=value, n_node_samples=[7] * n, classes=np.array([0, 1]), n_features=1)
    assert_same_tree_exactly(tree, tree_from_json(tree_to_json(tree, indent=2)))


_LABEL = st.one_of(st.text(st.characters(codec=None), max_size=12), st.integers(-2**70, 2**70),
                   st.floats(allow_nan=False, allow_infinity=False), st.booleans())


@settings(max_examples=80, deadline=None)
@given(classes=st.lists(_LABEL, min_size=1, max_size=6, unique_by=lambda v: (type(v), v)),
       cats=st.lists(st.one_of(st.text(max_size=8), st.integers(-10**6, 10**6)), min_size=1, max_size=5,
                     unique=True),
       surrogate=st.booleans())
def test_json_round_trip_any_labels(classes, cats, surrogate):
    if surrogate:
        classes = classes + ["lone \ud800 surrogate"]
    arr = np.empty(len(classes), dtype=object)
    arr[:] = classes
    cat_arr = np.empty(len(cats), dtype=object)
    cat_arr[:] = cats
    schema = ColumnSchema(categories=[None, cat_arr], feature_names=["num", "caté\u2603"])
    k = len(classes)
    tree = Tree(children_left=[1, -1, 3, -1, -1], children_right=[2, -1, 4, -1, -1], feature=[0, -2, 1, -2, -2],
                threshold=[0.25, -2, len(cats) - 1, -2, -2], kind=[0, -1, 1, -1, -1],
                value=np.arange(5 * k, dtype=float).reshape(5, k), classes=arr, schema=schema)
    text = tree_to_json(tree)
    assert text.isascii()
    assert_same_tree_exactly(tree, tree_from_json(text.encode("ascii")))


def test_json_metadata_and_estimator_input():
    rng = np.random.default_rng(1)
    tree = random_tree(rng, classes=np.array(["a", "b"]))

    class Fitted:  # anything with a Tree in tree_ counts as a fitted treelearn estimator
        tree_ = tree

    text = tree_to_json(Fitted(), metadata={"label": "y", "params": {"max_depth": 3}})
    back, meta = tree_from_json(text.encode("utf-8"), return_metadata=True)
    assert back == tree and meta == {"label": "y", "params": {"max_depth": 3}}
    assert tree_from_json(json.loads(text)) == tree


def test_json_refuses_what_json_cannot_hold():
    tree = random_tree(np.random.default_rng(2), classes=np.array(["a", "b"]))
    bad = tree.copy()
    bad.classes = np.empty(2, dtype=object)
    bad.classes[:] = [(1, 2), (3, 4)]
    with pytest.raises(TreeLearnValueError, match="cannot be stored in JSON"):
        tree_to_json(bad)
    bad = tree.copy()
    bad.impurity = bad.impurity.copy()
    bad.impurity[0] = np.nan
    with pytest.raises(TreeLearnValueError, match="NaN or infinite"):
        tree_to_json(bad)
    with pytest.raises(TreeLearnValueError, match="metadata"):
        tree_to_json(tree, metadata={"x": object()})
    with pytest.raises(TreeLearnValueError, match="expected a treelearn Tree"):
        tree_to_json("not a tree")


# ---------------------------------------------------------------------------------------- hostile JSON
def _valid_doc() -> dict:
    tree = Tree(children_left=[1, -1, 3, -1, -1], children_right=[2, -1, 4, -1, -1], feature=[0, -2, 1, -2, -2],
                threshold=[0.5, -2, 1.0, -2, -2], kind=[0, -1, 1, -1, -1],
                value=[[3, 3], [2, 0], [1, 3], [0, 3], [1, 0]], classes=np.array(["n", "y"]),
                schema=ColumnSchema(categories=[None, np.array(["a", "b"], dtype=object)],
                                    feature_names=["num", "cat"]))
    return json.loads(tree_to_json(tree))


def _mut(fn):
    def apply():
        d = _valid_doc()
        fn(d)
        return json.dumps(d)
    return apply


def _set(path, value):
    def fn(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return fn


def _delete(path):
    def fn(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]
    return fn


HOSTILE = {
    "not json": lambda: "this is not json",
    "empty": lambda: "",
    "truncated": lambda: json.dumps(_valid_doc())[:-7],
    "top-level list": lambda: "[1, 2, 3]",
    "top-level string": lambda: '"treelearn.tree"',
    "wrong format": _mut(_set(["format"], "sklearn.tree")),
    "future version": _mut(_set(["version"], 2)),
    "version as string": _mut(_set(["version"], "1")),
    "missing nodes": _mut(_delete(["nodes"])),
    "missing classes": _mut(_delete(["classes"])),
    "missing node array": _mut(_delete(["nodes", "threshold"])),
    "unknown field": _mut(_set(["__class__"], "os.system")),
    "unknown node array": _mut(_set(["nodes", "pickle"], [1])),
    "n_nodes as string": _mut(_set(["n_nodes"], "5")),
    "n_nodes mismatch": _mut(_set(["n_nodes"], 7)),
    "n_nodes zero": _mut(_set(["n_nodes"], 0)),
    "huge n_nodes": _mut(_set(["n_nodes"], 10**12)),
    "huge n_features": _mut(_set(["n_features"], 10**12)),
    "short array": _mut(lambda d: d["nodes"]["feature"].pop()),
    "value row short": _mut(lambda d: d["nodes"]["value"][2].pop()),
    "value not rows": _mut(_set(["nodes", "value"], [1, 2, 3, 4, 5])),
    "nodes not object": _mut(_set(["nodes"], [[1]])),
    "float child index": _mut(lambda d: d["nodes"]["children_left"].__setitem__(0, 1.0)),
    "bool child index": _mut(lambda d: d["nodes"]["children_left"].__setitem__(0, True)),
    "string threshold": _mut(lambda d: d["nodes"]["threshold"].__setitem__(0, "0.5")),
    "null threshold": _mut(lambda d: d["nodes"]["threshold"].__setitem__(0, None)),
    "self loop": _mut(lambda d: d["nodes"]["children_left"].__setitem__(2, 2)),
    "cycle to root": _mut(lambda d: (d["nodes"]["children_left"].__setitem__(2, 0))),
    "shared child": _mut(lambda d: d["nodes"]["children_right"].__setitem__(2, 1)),
    "child out of range": _mut(lambda d: d["nodes"]["children_right"].__setitem__(0, 99)),
    "negative child": _mut(lambda d: d["nodes"]["children_right"].__setitem__(0, -7)),
    "one child only": _mut(lambda d: d["nodes"]["children_right"].__setitem__(0, -1)),
    "int64 overflow": _mut(lambda d: d["nodes"]["n_node_samples"].__setitem__(0, 2**70)),
    "feature out of range": _mut(lambda d: d["nodes"]["feature"].__setitem__(0, 5)),
    "negative feature": _mut(lambda d: d["nodes"]["feature"].__setitem__(0, -1)),
    "bad kind": _mut(lambda d: d["nodes"]["kind"].__setitem__(0, 300)),
    "internal kind -1": _mut(lambda d: d["nodes"]["kind"].__setitem__(0, -1)),
    "category code out of range": _mut(lambda d: d["nodes"]["threshold"].__setitem__(2, 5.0)),
    "category code not integer": _mut(lambda d: d["nodes"]["threshold"].__setitem__(2, 0.5)),
    "categorical test on numeric column": _mut(lambda d: d["nodes"]["kind"].__setitem__(0, 1)),
    "negative counts": _mut(lambda d: d["nodes"]["value"][1].__setitem__(0, -2.0)),
    "categories length": _mut(_set(["categories"], [None])),
    "duplicate categories": _mut(_set(["categories"], [None, ["a", "a"]])),
    "category object": _mut(_set(["categories"], [None, [{"a": 1}, "b"]])),
    "feature names wrong length": _mut(_set(["feature_names"], ["only one"])),
    "feature names not strings": _mut(_set(["feature_names"], [1, 2])),
    "classes empty": _mut(_set(["classes"], [])),
    "classes duplicated": _mut(_set(["classes"], ["n", "n"])),
    "classes nested": _mut(_set(["classes"], [["n"], ["y"]])),
    "classes count vs value": _mut(_set(["classes"], ["n", "y", "z"])),
    "classes dtype bogus": _mut(_set(["classes_dtype"], "V100")),
    "classes dtype huge": _mut(_set(["classes_dtype"], "<U999999999999")),
    "classes dtype mismatch": _mut(_set(["classes_dtype"], "<i8")),
    "classes dtype too narrow": _mut(_set(["classes_dtype"], "<U0")),
    "classes int overflow": _mut(lambda d: (d.__setitem__("classes", [1, 2**64]), d.__setitem__("classes_dtype", "<i8"))),
    "NaN literal": lambda: json.dumps(_valid_doc()).replace('"threshold": [0.5', '"threshold": [NaN'),
    "Infinity literal": lambda: json.dumps(_valid_doc()).replace('"threshold": [0.5', '"threshold": [Infinity'),
    "overflowing float": lambda: json.dumps(_valid_doc()).replace('"threshold": [0.5', '"threshold": [1e400'),
    "duplicate key": lambda: json.dumps(_valid_doc()).replace('{"format"', '{"version": 1, "format"', 1),
    "deep nesting": lambda: "[" * 200_000 + "]" * 200_000,
    "deep nesting in metadata": lambda: json.dumps(_valid_doc())[:-1] + ', "metadata": ' + "[" * 100_000
    + "]" * 100_000 + "}",
    "invalid utf-8": lambda: b'{"format": "\xff\xfe"}',
    "wrong python type": lambda: 12345,
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_json_raises_clear_error(case):
    text = HOSTILE[case]()
    t0 = time.perf_counter()
    with pytest.raises(TreeLearnValueError) as info:
        tree_from_json(text)
    assert time.perf_counter() - t0 < 2.0
    msg = str(info.value)
    assert msg and "\n" not in msg and len(msg) < 400


def test_valid_doc_loads_and_size_limit():
    text = json.dumps(_valid_doc())
    assert tree_from_json(text).n_leaves == 3
    with pytest.raises(TreeLearnValueError, match="too large"):
        tree_from_json(text, max_size=100)


def test_json_never_evaluates_or_unpickles(monkeypatch):
    import builtins
    import pickle

    def boom(*a, **k):
        raise AssertionError("must not be called")

    monkeypatch.setattr(pickle, "loads", boom)
    monkeypatch.setattr(builtins, "eval", boom)
    rng = np.random.default_rng(5)
    tree = random_tree(rng)
    assert tree_from_json(tree_to_json(tree)) == tree


# ---------------------------------------------------------------------------------------- text
_TEXT_LINE = re.compile(r"^((?:\|   )*)\|--- (.*)$")


def _parse_text(text: str):
    """Rebuild (condition-or-leaf, children) structure from export_text's lines: an independent
    reading of the indentation."""
    lines = text.rstrip("\n").split("\n")
    pos = 0

    def parse(depth):
        nonlocal pos
        m = _TEXT_LINE.match(lines[pos])
        assert m and len(m.group(1)) == 4 * depth, lines[pos]
        body = m.group(2)
        if body.startswith("class:") or body.startswith("weights:") or body.startswith("truncated"):
            pos += 1
            return ("leaf", body)
        neg = body
        pos += 1
        left = parse(depth + 1)
        m2 = _TEXT_LINE.match(lines[pos])
        assert m2 and len(m2.group(1)) == 4 * depth
        pos_cond = m2.group(2)
        pos += 1
        right = parse(depth + 1)
        return ("split", neg, pos_cond, left, right)

    root = parse(0)
    assert pos == len(lines)
    return root


def _expected_structure(tree: Tree, node: int, decimals: int, show_weights: bool):
    if tree.children_left[node] < 0:
        cls = tree.classes[np.argmax(tree.value[node])]
        body = f"class: {cls}"
        if show_weights:
            body = "weights: [" + ", ".join(f"{v:.{decimals}f}" for v in tree.value[node]) + "] " + body
        return ("leaf", body)
    f = tree.feature[node]
    name = tree.schema.feature_names[f] if tree.schema.feature_names else f"x{f}"
    if tree.kind[node] == 1:
        v = tree.schema.categories[f][int(tree.threshold[node])]
        neg, pos = f"{name} != {v}", f"{name} == {v}"
    else:
        t = f"{tree.threshold[node]:.{decimals}f}"
        neg, pos = f"{name} <  {t}", f"{name} >= {t}"
    return ("split", neg, pos, _expected_structure(tree, tree.children_left[node], decimals, show_weights),
            _expected_structure(tree, tree.children_right[node], decimals, show_weights))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), decimals=st.integers(0, 6), show_weights=st.booleans())
def test_export_text_structure_matches_tree(seed, decimals, show_weights):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng)
    text = export_text(tree, decimals=decimals, show_weights=show_weights, max_depth=100)
    assert _parse_text(text) == _expected_structure(tree, 0, decimals, show_weights)
    assert sum(1 for line in text.splitlines() if "class: " in line) == tree.n_leaves


def test_export_text_matches_sklearn_export_text():
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.tree import export_text as sk_export_text

    X, y = load_iris(return_X_y=True)
    names = ["sepal length", "sepal width", "petal length", "petal width"]
    for depth in (1, 3, 5):
        clf = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        ref = sk_export_text(clf, feature_names=names, show_weights=True, decimals=3)
        # sklearn: "x <= t" goes left, printed first; ours: "x <  t'" (t' just above t) / "x >= t'"
        ref = ref.replace(" <= ", " <  ").replace(" >  ", " >= ")
        ours = export_text(from_sklearn(clf, feature_names=names), show_weights=True, decimals=3)
        assert ours == ref


def test_export_text_options():
    tree = random_tree(np.random.default_rng(3), max_nodes=61, classes=np.array(["a", "b"]))
    deep = export_text(tree, max_depth=1)
    assert ("truncated branch of depth" in deep) == (tree.depth > 1)
    named = export_text(tree, feature_names=[f"F{j}" for j in range(tree.n_features)], class_names=["A", "B"])
    assert "class: a" not in named and "class: b" not in named
    with pytest.raises(TreeLearnValueError, match="feature_names"):
        export_text(tree, feature_names=["too", "many", "names", "here", "for", "it", "!"])
    with pytest.raises(TreeLearnValueError, match="decimals"):
        export_text(tree, decimals=-1)
    assert tree.export_text() == export_text(tree)


# ---------------------------------------------------------------------------------------- DOT
_DOT_STRING = r'"(?:[^"\\]|\\.)*"'
_DOT_NODE = re.compile(r"^(\d+) \[label=(" + _DOT_STRING + r")(?:, fillcolor=\"(#[0-9a-f]{6})\")?\] ;$")
_DOT_EDGE = re.compile(r"^(\d+) -> (\d+)(?: \[labeldistance=2\.5, labelangle=-?45, headlabel=\"(True|False)\"\])? ;$")


def _parse_dot(dot: str):
    lines = dot.rstrip("\n").split("\n")
    assert lines[0] == "digraph Tree {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith(("node [", "edge [", "rankdir")):
            continue
        m = _DOT_NODE.match(line)
        if m:
            assert int(m.group(1)) not in nodes
            label = m.group(2)[1:-1]
            nodes[int(m.group(1))] = re.sub(r"\\(.)", lambda k: "\n" if k.group(1) == "n" else k.group(1), label)
            continue
        m = _DOT_EDGE.match(line)
        assert m, f"not a DOT statement: {line!r}"
        edges.append((int(m.group(1)), int(m.group(2))))
    return nodes, edges


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), filled=st.booleans(), proportion=st.booleans())
def test_export_graphviz_structure(seed, filled, proportion):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng)
    dot = export_graphviz(tree, filled=filled, proportion=proportion, rounded=True, precision=4)
    nodes, edges = _parse_dot(dot)
    assert sorted(nodes) == list(range(tree.node_count))
    expected_edges = sorted((p, int(c)) for p in range(tree.node_count) if tree.children_left[p] >= 0
                            for c in (tree.children_left[p], tree.children_right[p]))
    assert sorted(edges) == expected_edges
    names = tree.schema.feature_names
    for node, label in nodes.items():
        first = label.split("\n")[0]
        if tree.children_left[node] >= 0:
            f = tree.feature[node]
            name = names[f] if names else f"x{f}"
            if tree.kind[node] == 1:
                assert first == f"{name} == {tree.schema.categories[f][int(tree.threshold[node])]}"
            else:
                assert first == f"{name} >= {tree.threshold[node]:.4f}"
        assert f"class = {tree.classes[np.argmax(tree.value[node])]}" in label
    assert ("fillcolor" in dot) == filled


def test_export_graphviz_renders_with_dot_when_available():
    graphviz = pytest.importorskip("graphviz")
    tree = random_tree(np.random.default_rng(7), max_nodes=21)
    dot = export_graphviz(tree, filled=True)
    if shutil.which("dot") is None:
        pytest.skip("the Graphviz `dot` program is not installed; the structural DOT test covers the syntax")
    svg = graphviz.Source(dot).pipe(format="svg").decode()
    assert svg.count('class="node"') == tree.node_count


def test_export_graphviz_max_depth_and_options():
    tree = random_tree(np.random.default_rng(11), max_nodes=61)
    dot = export_graphviz(tree, max_depth=1, node_ids=True, impurity=False, rotate=True)
    assert "rankdir=LR" in dot and "impurity" not in dot and "node #0" in dot
    if tree.depth > 2:
        assert '(...)' in dot


# ---------------------------------------------------------------------------------------- sklearn
def test_sklearn_arrays_follow_sklearn_convention():
    rng = np.random.default_rng(21)
    tree = random_tree(rng, max_nodes=41)
    a = to_sklearn_arrays(tree)
    cl, cr, feat, thr, value, nns, imp = a  # unpacks as the 7 arrays
    internal = tree.children_left >= 0
    assert np.array_equal(cl[internal], tree.children_left[internal])
    assert np.all(cl[~internal] == -1) and np.all(feat[~internal] == -2) and np.all(thr[~internal] == -2)
    num = internal & (tree.kind == 0)
    # x <= t' exactly when x < t
    assert np.all(thr[num] < tree.threshold[num]) and np.all(np.nextafter(thr[num], np.inf) == tree.threshold[num])
    assert np.array_equal(value, tree.value) and np.array_equal(nns, tree.n_node_samples)
    cols = sklearn_feature_columns(tree)
    assert len(cols) >= tree.n_features and np.all(feat[internal] < len(cols))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_sklearn_adapter_predicts_like_the_tree(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, max_nodes=61)
    clf = to_sklearn(tree)
    X = random_raw_X(tree, rng)
    Xs = sklearn_input(tree, X)
    assert np.array_equal(clf.apply(Xs), tree.apply(X))
    assert np.array_equal(clf.predict(Xs), tree.predict(X))
    assert np.allclose(clf.predict_proba(Xs), tree.predict_proba(X))
    assert clf.get_n_leaves() == tree.n_leaves and clf.get_depth() == tree.depth


def test_from_sklearn_and_back():
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    clf = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    tree = from_sklearn(clf)
    assert np.array_equal(tree.predict(X), clf.predict(X))
    back = to_sklearn(tree)
    assert np.array_equal(back.tree_.threshold, clf.tree_.threshold)
    assert np.allclose(back.tree_.value, clf.tree_.value)
    assert np.array_equal(back.predict(X), clf.predict(X))


def test_sklearn_export_text_reads_the_adapter():
    from sklearn.tree import export_text as sk_export_text

    rng = np.random.default_rng(31)
    tree = random_tree(rng, max_nodes=31, classes=np.array(["a", "b", "c"]), categorical=True)
    names = sklearn_feature_columns(tree)
    ref = sk_export_text(to_sklearn(tree), feature_names=names, decimals=2, max_depth=50)
    # same shape and leaves as ours, with sklearn's orientation of every condition
    ours = export_text(tree, decimals=2, max_depth=50)
    assert len(ref.splitlines()) == len(ours.splitlines())
    assert [line for line in ref.splitlines() if "class:" in line] == \
        [line for line in ours.splitlines() if "class:" in line]


def test_exports_accept_fitted_estimators_and_refuse_unfitted():
    from sklearn.datasets import load_iris

    import treelearn

    Greedy = getattr(treelearn, "GreedyTreeClassifier", None)
    if Greedy is None:
        pytest.skip("GreedyTreeClassifier is not in this checkout")
    X, y = load_iris(return_X_y=True)
    est = Greedy(max_depth=2).fit(X, y)
    assert export_text(est) == export_text(est.tree_)
    assert export_graphviz(est) == est.tree_.export_graphviz()
    assert tree_from_json(tree_to_json(est)) == est.tree_
    assert np.array_equal(to_sklearn(est).predict(X), est.predict(X))
    with pytest.raises(TreeLearnValueError, match="not fitted"):
        export_text(Greedy())


@pytest.fixture()
def quiet_matplotlib():
    import matplotlib

    matplotlib.use("Agg")
    logger = logging.getLogger("matplotlib.font_manager")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_tree_draws_every_node(quiet_matplotlib):
    import matplotlib.pyplot as plt
    from sklearn.tree import plot_tree

    rng = np.random.default_rng(8)
    for classes in (np.array(["no", "yes"]), np.array([1, 2, 3])):
        tree = random_tree(rng, max_nodes=31, classes=classes)
        clf = to_sklearn(tree)
        fig, ax = plt.subplots()
        boxes = plot_tree(clf, feature_names=sklearn_feature_columns(tree), class_names=[str(c) for c in classes],
                          filled=True, ax=ax)
        # the node boxes (the root's "True"/"False" arrow labels are annotations without a box)
        boxes = [b for b in boxes if b.get_bbox_patch() is not None]
        assert len(boxes) == tree.node_count
        texts = [b.get_text() for b in boxes]
        assert sum(t.count("samples = ") for t in texts) == tree.node_count
        # the root box shows the root's condition, in sklearn's "<=" form
        if tree.children_left[0] >= 0:
            assert "<=" in texts[0]
        plt.close(fig)


def test_dtreeviz_draws_a_treelearn_tree(quiet_matplotlib):
    dtreeviz = pytest.importorskip("dtreeviz")
    rng = np.random.default_rng(9)
    tree = random_tree(rng, max_nodes=15, classes=np.array(["no", "yes"]), categorical=False, names=True)
    while tree.n_leaves < 3:
        tree = random_tree(rng, max_nodes=15, classes=np.array(["no", "yes"]), categorical=False, names=True)
    X = random_raw_X(tree, rng, 400)
    y = tree.predict(X)
    codes = np.searchsorted(tree.classes, y)
    clf = to_sklearn(tree, class_codes=True)  # dtreeviz wants classes 0..C-1
    viz = dtreeviz.model(clf, X_train=sklearn_input(tree, X), y_train=codes,
                         feature_names=sklearn_feature_columns(tree), target_name="label",
                         class_names=[str(c) for c in tree.classes])
    render = viz.view(fontname="DejaVu Sans")  # dtreeviz draws node plots with matplotlib, emits DOT
    dot = render.dot
    assert dot.lstrip().startswith("digraph")
    assert len(set(re.findall(r"\bleaf(\d+)\b", dot))) == tree.n_leaves
    # the prediction path names our conditions (in sklearn's orientation)
    path = viz.explain_prediction_path(sklearn_input(tree, X[:1])[0])
    assert isinstance(path, str)
    if shutil.which("dot") is None:
        return  # rendering to SVG needs the Graphviz program; the DOT above is what it would draw
    assert "<svg" in render.svg()
