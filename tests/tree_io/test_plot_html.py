"""plot_tree (matplotlib), export_html (structure; the browser test drives it), to_sklearn's
criterion and dtreeviz on the defaults, for the trees of every learner.

References: the tree's own arrays (impurity, counts, conditions) read in the test, and
scikit-learn's plot_tree on the to_sklearn adapter."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import treelearn as tl
from treelearn.tree.html import export_html_page, tree_view_data
from treelearn.tree.plot import missing_directions, node_labels, tree_criterion
from treelearn.tree.tree import Tree


@pytest.fixture(autouse=True)
def agg_backend():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def _wine():
    from sklearn.datasets import load_wine

    d = load_wine()
    return d.data, np.asarray(d.target_names)[d.target], list(d.feature_names)


def _learners():
    X, y, names = _wine()
    rng = np.random.default_rng(0)
    Xb = rng.integers(0, 2, size=(200, 6)).astype(float)
    yb = np.where((Xb[:, 0] == 1) & (Xb[:, 1] == 1) | (Xb[:, 2] == 1) & (Xb[:, 3] == 0), "pos", "neg")
    from treelearn.datasets.boolean import random_tree

    return [
        ("greedy-entropy", tl.GreedyTreeClassifier(criterion="entropy", max_depth=3), X, y, "entropy"),
        ("greedy-gini", tl.GreedyTreeClassifier(criterion="gini", max_leaves=5), X, y, "gini"),
        ("greedy-km", tl.GreedyTreeClassifier(criterion="kearns_mansour", max_depth=2), X, y, "kearns_mansour"),
        ("topk", tl.TopKTreeClassifier(k=2, max_depth=2, max_binary_features=20), X, y, "entropy"),
        ("optimal", tl.OptimalTreeClassifier(max_depth=2, criterion="gini", max_binary_features=20,
                                             time_limit=30), X, y, "gini"),
        ("minrank", tl.MinRankTreeClassifier(time_limit=30), Xb, yb, None),
        ("pruned", tl.PrunedTreeClassifier(pruning="bound", criterion="gini", max_leaves=10), X, y, "gini"),
        ("queries", tl.QueryTreeClassifier(size=4, epsilon=0.1, mode="realizable", random_state=0),
         random_tree(6, 4, random_state=1), None, None),
    ]


@pytest.mark.parametrize("name,est,X,y,criterion", _learners(), ids=[c[0] for c in _learners()])
def test_plot_tree_draws_every_learner_with_its_own_labels(name, est, X, y, criterion):
    est = est.fit_oracle(X) if y is None else est.fit(X, y)
    tree = est.tree_
    assert tree_criterion(est) == criterion
    feature_names = [f"feat_{j}" for j in range(tree.n_features)]
    boxes = tl.plot_tree(est, feature_names=feature_names)
    assert len(boxes) == tree.node_count
    crit_label = criterion or "impurity"
    pred = np.argmax(tree.value, axis=1)
    for i, box in enumerate(boxes):
        lines = box.get_text().splitlines()
        if tree.children_left[i] >= 0:
            f = int(tree.feature[i])
            assert lines[0].startswith(feature_names[f] + " "), lines[0]
            if tree.kind[i] == 0:  # the threshold drawn is the tree's, at 3 significant digits
                assert float(lines[0].split(">= ")[1]) == pytest.approx(tree.threshold[i], rel=5e-3, abs=1e-12)
            lines = lines[1:]
        # the impurity line: the tree's criterion and its stored value (3 decimals)
        m = re.fullmatch(r"(\w+) = (-?[\d.]+)", lines[0])
        assert m, lines[0]
        assert m.group(1) == crit_label
        assert float(m.group(2)) == pytest.approx(tree.impurity[i], abs=5.1e-4)
        if tree.n_node_samples.any():
            assert lines[1] == f"samples = {tree.n_node_samples[i]}"
            lines = lines[1:]
        else:  # a tree learned from queries: region weights, no samples
            assert not any(line.startswith("samples") for line in lines)
        counts = [float(v) for v in lines[1][len("value = ["):-1].split(", ")]
        assert counts == pytest.approx(tree.value[i].tolist(), abs=5e-4)
        assert lines[2] == f"class = {tree.classes[pred[i]]}"


def test_plot_tree_class_names_max_depth_and_errors():
    X, y, names = _wine()
    est = tl.GreedyTreeClassifier(max_depth=3).fit(X, y)
    boxes = tl.plot_tree(est, class_names=["A", "B", "C"], max_depth=1, impurity=False)
    drawn = [b.get_text() for b in boxes]
    n_shallow = int(np.sum(est.tree_.node_depths() <= 1))
    assert len(drawn) == n_shallow
    assert all(not re.search(r"^entropy = ", t, re.M) for t in drawn)
    assert any("class = " in t and t.split("class = ")[1].split("\n")[0] in "ABC" for t in drawn)
    assert sum("subtree not drawn" in t for t in drawn) >= 1
    with pytest.raises(tl.TreeLearnValueError):
        tl.plot_tree(est, feature_names=["too", "few"])
    with pytest.raises(tl.TreeLearnValueError):
        tl.plot_tree(tl.GreedyTreeClassifier())


def test_missing_directions_are_drawn_when_the_tree_has_them():
    X, y, names = _wine()
    est = tl.GreedyTreeClassifier(max_depth=2).fit(X, y)
    tree = est.tree_
    assert missing_directions(tree) is None  # no missing value in training: nothing recorded
    assert "NaN" not in "".join(node_labels(est))
    # a tree that records them (as a learner fitted on missing values does)
    directions = (np.arange(tree.node_count) % 2 == 0) & (tree.children_left >= 0)
    est.tree_ = Tree(children_left=tree.children_left, children_right=tree.children_right, feature=tree.feature,
                     threshold=tree.threshold, kind=tree.kind, value=tree.value, n_node_samples=tree.n_node_samples,
                     impurity=tree.impurity, classes=tree.classes, schema=tree.schema,
                     missing_go_to_left=directions.astype(np.uint8))
    labels = node_labels(est)
    for i in np.nonzero(tree.children_left >= 0)[0]:
        assert ("NaN \u2192 left" if directions[i] else "NaN \u2192 right") in labels[i]
    sk = tl.to_sklearn(est)
    internal = tree.children_left >= 0
    assert np.array_equal(sk.tree_.missing_go_to_left[internal].astype(bool), directions[internal])
    data = tree_view_data(est)
    assert all(n["missing_left"] == bool(directions[n["id"]]) for n in data["nodes"] if n["left"] >= 0)
    # without recorded directions the view still routes by the default (the heavier child)
    data = tree_view_data(tree)
    assert all(n["missing_left"] == bool(tree.missing_go_to_left[n["id"]]) for n in data["nodes"] if n["left"] >= 0)


@pytest.mark.parametrize("criterion", ["entropy", "gini", "kearns_mansour"])
def test_to_sklearn_sets_the_real_criterion(criterion):
    from sklearn.tree import plot_tree as sk_plot_tree

    X, y, names = _wine()
    est = tl.GreedyTreeClassifier(criterion=criterion, max_depth=2).fit(X, y)
    sk = tl.to_sklearn(est)
    assert sk.criterion == criterion
    texts = [t.get_text() for t in sk_plot_tree(sk) if "samples = " in t.get_text()]  # not the edge labels
    assert len(texts) == est.tree_.node_count
    assert all(f"{criterion} = " in t for t in texts)
    # scikit-learn draws the tree's own impurity values
    drawn = sorted(float(re.search(rf"{criterion} = (-?[\d.]+)", t).group(1)) for t in texts)
    assert drawn == pytest.approx(sorted(est.tree_.impurity.tolist()), abs=6e-3)
    # a bare Tree does not know its criterion
    assert tl.to_sklearn(est.tree_).criterion == "impurity"
    rank = tl.MinRankTreeClassifier().fit(np.eye(4), [0, 1, 1, 0])
    assert tl.to_sklearn(rank).criterion == "impurity"


def test_dtreeviz_works_on_the_defaults():
    """dtreeviz needs classes 0..C-1, coded labels and the sklearn column layout:
    dtreeviz_model does it all from raw X and the original (string) labels."""
    dtreeviz = pytest.importorskip("dtreeviz")  # noqa: F841
    import pandas as pd

    X, y, names = _wine()
    df = pd.DataFrame(X, columns=names)
    df["region"] = np.where(np.arange(len(df)) % 3 == 0, "north", "south")  # a categorical column
    est = tl.GreedyTreeClassifier(max_depth=3, categorical=["region"]).fit(df, y)
    viz = tl.dtreeviz_model(est, df, y, target_name="wine")
    dot = viz.view(fontname="DejaVu Sans").dot
    assert dot.lstrip().startswith("digraph")
    assert len(set(re.findall(r"\bleaf(\d+)\b", dot))) == est.tree_.n_leaves
    path = viz.explain_prediction_path(tl.tree.export.sklearn_input(est, df.iloc[:1])[0])
    assert isinstance(path, str) and path
    viz2 = tl.dtreeviz_model(est.tree_, df)  # labels default to the tree's predictions
    assert viz2.view(fontname="DejaVu Sans").dot.lstrip().startswith("digraph")
    with pytest.raises(tl.TreeLearnValueError, match="not one of the tree's classes"):
        tl.dtreeviz_model(est, df, np.array(["nope"] * len(df)))


def test_export_html_is_self_contained_and_describes_every_node():
    X, y, names = _wine()
    est = tl.GreedyTreeClassifier(criterion="gini", max_depth=3).fit(X, y)
    page = tl.export_html(est, feature_names=names)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)  # no network resources
    payload = re.search(r'<script type="application/json" class="tl-data">(.*?)</script>', page, re.S).group(1)
    data = json.loads(payload.replace("<\\/", "</"))
    tree = est.tree_
    assert len(data["nodes"]) == tree.node_count and data["criterion"] == "gini"
    for n in data["nodes"]:
        i = n["id"]
        assert n["samples"] == tree.n_node_samples[i]
        assert n["value"] == pytest.approx(tree.value[i].tolist())
        assert (n["left"], n["right"]) == (tree.children_left[i], tree.children_right[i])
        if n["left"] >= 0:
            assert n["threshold"] == tree.threshold[i] and names[n["feature"]] in n["cond"]
    # a class label or name with markup cannot break out of the page
    page2 = export_html_page([("<script>alert(1)</script>", est)])
    assert "<script>alert(1)</script>" not in page2


def test_dtreeviz_draws_a_tree_fitted_on_missing_values():
    """dtreeviz refuses NaN: dtreeviz_model shows each missing value at a value that takes its
    branch, so the drawing's rows reach the tree's leaves (those no single value routes are left
    out, with a warning)."""
    pytest.importorskip("dtreeviz")
    import warnings

    from treelearn.tree.plot import _drawable

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "up", "down")
    X[rng.random(X.shape) < 0.1] = np.nan
    for depth in (1, 4):
        est = tl.GreedyTreeClassifier(max_depth=depth).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            viz = tl.dtreeviz_model(est, X, y)
        assert viz.view(fontname="DejaVu Sans").dot.lstrip().startswith("digraph")
        Xs = tl.tree.export.sklearn_input(est, X)
        drawn, keep = _drawable(est.tree_, tl.to_sklearn(est, class_codes=True), Xs, est.tree_.apply(X))
        assert not np.isnan(drawn).any()
        assert np.array_equal(tl.to_sklearn(est).apply(drawn), est.tree_.apply(X)[keep])
        if depth == 1:  # one split: every missing value has one branch, no row is left out
            assert keep.all()


@pytest.mark.parametrize("kw", [dict(precision=-1), dict(precision=float("nan")), dict(precision=2**63),
                                dict(precision=True), dict(precision=2.0), dict(open_depth=-1),
                                dict(open_depth=2**63), dict(open_depth="3"), dict(title=123),
                                dict(title=b"x"), dict(feature_names=["a"]), dict(class_names=[1])])
def test_export_html_names_every_bad_parameter(kw):
    from treelearn._validation import TreeLearnValueError

    est = tl.GreedyTreeClassifier(max_depth=2).fit(*_iris())
    with pytest.raises(TreeLearnValueError):
        tl.export_html(est, **kw)


@pytest.mark.parametrize("trees", ["abc", [("t",)], [["t", None]], [(1, None)], [("t", None, 5)], 7])
def test_export_html_page_names_a_bad_list_of_trees(trees):
    from treelearn._validation import TreeLearnValueError
    from treelearn.tree.html import export_html_page

    with pytest.raises(TreeLearnValueError):
        export_html_page(trees)


def _iris():
    from sklearn.datasets import load_iris

    return load_iris(return_X_y=True)
