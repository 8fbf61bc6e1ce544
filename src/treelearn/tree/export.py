"""Exports of a treelearn :class:`~treelearn.tree.Tree`: text, Graphviz DOT, JSON, sklearn arrays.

Every function takes a ``Tree`` or a fitted treelearn estimator (anything with a ``tree_``
attribute holding a ``Tree``).

* :func:`export_text` — an indented listing like ``sklearn.tree.export_text``;
* :func:`export_graphviz` — Graphviz DOT source like ``sklearn.tree.export_graphviz``;
* :func:`tree_to_json` / :func:`tree_from_json` — a versioned JSON document with a lossless
  round trip (``Tree.from_json(t.to_json()) == t``, floats bit-exact). Loading never evaluates
  or unpickles anything; malformed or hostile input raises :class:`TreeLearnValueError`;
  (text, DOT and JSON are written and read in :mod:`treelearn.tree.formats`, below the Tree;
  this module, above it, adds what builds Trees and the scikit-learn conversions)
* :func:`to_sklearn_arrays` and :func:`to_sklearn` — the tree in scikit-learn's array layout,
  and a real fitted ``sklearn.tree.DecisionTreeClassifier`` carrying it, so that
  ``sklearn.tree.plot_tree`` and ``dtreeviz`` can draw a treelearn tree;
  :func:`from_sklearn` goes the other way.

Threshold convention
--------------------
treelearn sends a row **right** when ``x >= t`` (so left when ``x < t``); scikit-learn sends a
row **left** when ``x <= t``. The sklearn export therefore uses the threshold
``t' = nextafter(t, -inf)`` (the largest float64 below ``t``): for every float64 ``x``,
``x <= t'`` exactly when ``x < t``, so both models route every row the same way. The learners
store ``t = nextafter(m, +inf)`` for a split's midpoint ``m`` (:mod:`treelearn.tree.build`), so
``t'`` is ``m`` itself, scikit-learn's threshold. (scikit-learn
casts X to float32 before comparing; a float64 value that rounds across ``t`` in that cast can
still go the other way: only values within float32 rounding of a threshold are affected.)
Categorical conditions ``x_j == v`` have no counterpart in scikit-learn: the export adds one
0/1 indicator column per (column, category) used by the tree, after the raw columns, with the
threshold 0.5; :func:`sklearn_input` builds the matching input matrix from raw X.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree.formats import (
    JSON_FORMAT,
    JSON_VERSION,
    MAX_JSON_SIZE,
    as_tree,
    feature_names_of,
    export_graphviz,
    export_text,
    tree_to_json,
)
from treelearn.tree.tree import CATEGORICAL, LEAF, NUMERIC, UNDEFINED, Tree

__all__ = [
    "export_text",
    "export_graphviz",
    "tree_to_json",
    "tree_from_json",
    "load_tree_json",
    "SklearnArrays",
    "to_sklearn_arrays",
    "sklearn_feature_columns",
    "sklearn_input",
    "to_sklearn",
    "from_sklearn",
    "JSON_FORMAT",
    "JSON_VERSION",
]


def tree_from_json(text, *, return_metadata: bool = False, max_size: int = MAX_JSON_SIZE):
    """Load a tree written by :func:`tree_to_json` (``text``: str, bytes, or the parsed dict).

    Validates everything before building the tree (see :func:`treelearn.tree.formats.read_json`):
    any problem raises :class:`TreeLearnValueError` naming it. With ``return_metadata``, returns
    ``(tree, metadata)`` (``metadata`` is ``None`` when absent).
    """
    return Tree.from_json(text, return_metadata=return_metadata, max_size=max_size)


def load_tree_json(path, *, max_bytes: int = MAX_JSON_SIZE, return_metadata: bool = False):
    """Load a tree from a JSON model file, checking its size before reading it.

    A file larger than ``max_bytes`` raises :class:`TreeLearnValueError` without being read (a
    regular file by its size on disk; a pipe, device or growing file after at most
    ``max_bytes + 1`` bytes). The text is then checked as by :func:`tree_from_json`. A file
    that cannot be opened raises the usual ``OSError`` (``FileNotFoundError``,
    ``IsADirectoryError``, ``PermissionError``).
    """
    return Tree.load(path, max_bytes=max_bytes, return_metadata=return_metadata)


# ---------------------------------------------------------------------------------------- sklearn
class SklearnArrays(NamedTuple):
    """The tree in scikit-learn's ``Tree`` layout (``x <= threshold`` goes left).

    ``feature`` indexes the columns of :func:`sklearn_feature_columns` (the raw columns, then
    one indicator column per categorical condition); leaves have ``children_* = -1``,
    ``feature = -2`` and ``threshold = -2``; ``value`` is (node_count, n_classes) weighted class counts.
    """

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    n_node_samples: np.ndarray
    impurity: np.ndarray


def _indicator_columns(tree: Tree) -> list[tuple[int, int]]:
    """The (raw column, category code) pairs of the tree's categorical conditions, sorted."""
    internal = tree.children_left >= 0
    cat = internal & (tree.kind == CATEGORICAL)
    pairs = {(int(f), int(t)) for f, t in zip(tree.feature[cat], tree.threshold[cat])}
    return sorted(pairs)


def sklearn_feature_columns(tree) -> list[str]:
    """Names of the columns the sklearn export reads: the raw columns, then ``x == v`` indicators."""
    tree = as_tree(tree)
    names = feature_names_of(tree, None)
    extra = [f"{names[f]} == {tree.schema.categories[f][c]}" for f, c in _indicator_columns(tree)]
    return names + extra


def sklearn_input(tree, X) -> np.ndarray:
    """Raw X -> the float64 matrix the sklearn export expects (encoded columns + indicators)."""
    tree = as_tree(tree)
    Xe = tree.encode(X)
    pairs = _indicator_columns(tree)
    if not pairs:
        return Xe
    # a missing category stays missing (NaN) in its indicators: the split sends it its own way
    ind = np.column_stack([np.where(np.isnan(Xe[:, f]), np.nan, (Xe[:, f] == c).astype(np.float64))
                           for f, c in pairs])
    return np.hstack([Xe, ind])


def to_sklearn_arrays(tree) -> SklearnArrays:
    """The tree as scikit-learn's arrays (see :class:`SklearnArrays` and the module docstring)."""
    tree = as_tree(tree)
    internal = tree.children_left >= 0
    pairs = _indicator_columns(tree)
    column_of = {p: tree.n_features + i for i, p in enumerate(pairs)}
    feature = np.full(tree.node_count, UNDEFINED, dtype=np.int64)
    threshold = np.full(tree.node_count, float(UNDEFINED), dtype=np.float64)
    for node in np.nonzero(internal)[0]:
        f = int(tree.feature[node])
        if tree.kind[node] == CATEGORICAL:
            feature[node] = column_of[(f, int(tree.threshold[node]))]
            threshold[node] = 0.5
        else:
            feature[node] = f
            with np.errstate(over="ignore"):  # -max float -> -inf: no finite x is below either
                threshold[node] = np.nextafter(tree.threshold[node], -np.inf)
    left = np.where(internal, tree.children_left, LEAF).astype(np.int64)
    right = np.where(internal, tree.children_right, LEAF).astype(np.int64)
    return SklearnArrays(left, right, feature, threshold, tree.value.copy(), tree.n_node_samples.copy(),
                         tree.impurity.copy())


def to_sklearn(tree, *, class_codes: bool = False):
    """A fitted ``sklearn.tree.DecisionTreeClassifier`` holding the tree, for sklearn's tools
    (a regression tree: a ``DecisionTreeRegressor`` that predicts as the tree does).

    Built from :func:`to_sklearn_arrays` through ``sklearn.tree._tree.Tree.__setstate__``
    (scikit-learn's own pickle format), so ``sklearn.tree.plot_tree``, ``export_text`` and
    dtreeviz can draw it and its ``predict`` works on :func:`sklearn_input` ``(tree, X)``
    (equal to the encoded X when the tree has no categorical conditions). Pass
    ``feature_names=sklearn_feature_columns(tree)`` to sklearn's plotting functions for
    readable names (``feature_names_in_`` is not set: the adapter reads numpy input). Its ``tree_.value``
    holds class proportions, as scikit-learn >= 1.4 stores them. This relies on scikit-learn's
    private node layout, checked at run time.

    Its ``criterion`` is the tree's own, read from the estimator passed in (``entropy``,
    ``gini``, ``kearns_mansour``; ``"impurity"`` when unknown, e.g. for a bare Tree or a
    min-rank tree), so scikit-learn's ``plot_tree`` labels the impurity values correctly.

    ``class_codes=True`` sets ``classes_`` to ``0..n_classes-1`` instead of the tree's labels
    (dtreeviz requires that; :func:`treelearn.dtreeviz_model` does this and the other
    conversions dtreeviz needs).
    """
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.tree._tree import NODE_DTYPE
    from sklearn.tree._tree import Tree as SkTree

    obj = tree
    tree = as_tree(tree)
    a = to_sklearn_arrays(tree)
    n = tree.node_count
    names = sklearn_feature_columns(tree)
    n_columns = len(names)
    expected = {"left_child", "right_child", "feature", "threshold", "impurity", "n_node_samples",
                "weighted_n_node_samples"}
    if not expected <= set(NODE_DTYPE.names or ()):
        raise TreeLearnValueError(f"this scikit-learn's tree node layout {NODE_DTYPE.names} is not supported")
    nodes = np.zeros(n, dtype=NODE_DTYPE)
    nodes["left_child"] = a.children_left
    nodes["right_child"] = a.children_right
    nodes["feature"] = a.feature
    nodes["threshold"] = a.threshold
    nodes["impurity"] = a.impurity
    nodes["n_node_samples"] = a.n_node_samples
    weighted = tree.node_weights().astype(np.float64)
    nodes["weighted_n_node_samples"] = weighted
    if "missing_go_to_left" in NODE_DTYPE.names:  # where the tree sends missing values (recorded or default)
        nodes["missing_go_to_left"] = np.asarray(tree.missing_go_to_left, dtype=np.uint8)
    if tree.is_regression:
        return _sklearn_regressor(obj, tree, nodes, n_columns)
    with np.errstate(invalid="ignore", divide="ignore"):
        proportions = np.where(weighted[:, None] > 0, a.value / np.where(weighted > 0, weighted, 1)[:, None],
                               1.0 / tree.n_classes)
    n_classes = tree.n_classes
    sk_tree = SkTree(n_columns, np.array([n_classes], dtype=np.intp), 1)
    sk_tree.__setstate__({
        "max_depth": tree.depth,
        "node_count": n,
        "nodes": nodes,
        "values": np.ascontiguousarray(proportions.reshape(n, 1, n_classes)),
    })
    clf = DecisionTreeClassifier(max_depth=tree.depth if tree.depth > 0 else None)
    # the tree's own criterion, so that sklearn's plot_tree labels the impurity correctly
    # (sklearn reads it only as a label; "impurity" when the learner has none, e.g. min-rank trees)
    from treelearn.tree.formats import tree_criterion

    clf.criterion = tree_criterion(obj) or "impurity"
    clf.tree_ = sk_tree
    clf.n_features_in_ = n_columns
    clf.n_outputs_ = 1
    clf.classes_ = np.arange(n_classes) if class_codes else tree.classes.copy()
    clf.n_classes_ = n_classes
    clf.max_features_ = n_columns
    return clf


def _sklearn_regressor(obj, tree: Tree, nodes, n_columns: int):
    """A fitted ``DecisionTreeRegressor`` holding the regression tree (its nodes' means as
    ``value``, (n, n_outputs, 1)), predicting as the tree does."""
    from sklearn.tree import DecisionTreeRegressor
    from sklearn.tree._tree import Tree as SkTree
    from treelearn.tree.formats import tree_criterion

    n, k = tree.node_count, tree.n_outputs
    sk_tree = SkTree(n_columns, np.ones(k, dtype=np.intp), k)
    sk_tree.__setstate__({"max_depth": tree.depth, "node_count": n, "nodes": nodes,
                          "values": np.ascontiguousarray(tree.value.reshape(n, k, 1))})
    reg = DecisionTreeRegressor(max_depth=tree.depth if tree.depth > 0 else None)
    reg.criterion = tree_criterion(obj) or "squared_error"
    reg.tree_ = sk_tree
    reg.n_features_in_ = n_columns
    reg.n_outputs_ = k
    reg.max_features_ = n_columns
    return reg


def from_sklearn(clf, *, feature_names=None) -> Tree:
    """A treelearn Tree equivalent to a fitted single-output ``DecisionTreeClassifier`` (or a
    ``DecisionTreeRegressor``, any number of outputs: a regression Tree of its nodes' means).

    scikit-learn's ``x <= t`` goes left becomes ``x >= nextafter(t, +inf)`` goes right; the
    class counts are the node's class proportions times its weighted sample count; the tree's
    ``missing_go_to_left`` (scikit-learn >= 1.3) is kept (recorded when it differs from the
    heavier-child default), a missing-only split's threshold ``inf`` too.
    """
    sk = getattr(clf, "tree_", None)
    if sk is None or not hasattr(sk, "children_left"):
        raise TreeLearnValueError("from_sklearn expects a fitted sklearn DecisionTreeClassifier or DecisionTreeRegressor")
    regression = not hasattr(clf, "classes_")
    if getattr(clf, "n_outputs_", 1) != 1 and not regression:
        raise TreeLearnValueError("from_sklearn supports single-output classifiers only")
    left = np.asarray(sk.children_left, dtype=np.int64)
    right = np.asarray(sk.children_right, dtype=np.int64)
    internal = left >= 0
    threshold = np.where(internal, np.nextafter(np.asarray(sk.threshold), np.inf), float(UNDEFINED))
    feature = np.where(internal, sk.feature, UNDEFINED)
    w = np.asarray(sk.weighted_n_node_samples, dtype=np.float64)
    if regression:  # (n, n_outputs, 1): the nodes' means
        value = np.asarray(sk.value)[:, :, 0]
    else:
        value = np.asarray(sk.value)[:, 0, :]
        if np.all(np.abs(value.sum(axis=1) - 1.0) < 1e-9):
            value = value * w[:, None]
    if feature_names is None and hasattr(clf, "feature_names_in_"):
        feature_names = [str(s) for s in clf.feature_names_in_]
    schema = ColumnSchema(categories=[None] * int(clf.n_features_in_),
                          feature_names=None if feature_names is None else list(feature_names))
    fields = dict(children_left=left, children_right=right, feature=feature, threshold=threshold,
                  kind=np.where(internal, NUMERIC, -1), value=value, n_node_samples=sk.n_node_samples,
                  impurity=sk.impurity, classes=None if regression else np.asarray(clf.classes_), schema=schema)
    if regression:
        fields.update(task="regression", weighted_n_node_samples=w)
    tree = Tree(**fields)
    missing = getattr(sk, "missing_go_to_left", None)
    if missing is not None:
        missing = np.asarray(missing, dtype=np.uint8)
        # recorded where they differ from the Tree's default (scikit-learn decides by sample
        # counts where we use weights; a tree fitted on missing values chose its own)
        if np.any(missing[internal] != tree.missing_go_to_left[internal]):
            tree = Tree(**fields, missing_go_to_left=missing)
    return tree
