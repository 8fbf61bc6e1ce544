"""Drawing a treelearn tree with matplotlib: :func:`plot_tree`.

Works on a :class:`~treelearn.tree.Tree` or on any fitted treelearn estimator (every learner
returns the same ``Tree``), without going through scikit-learn. Each box shows the node's
condition, its impurity labelled with the tree's own criterion (``entropy``, ``gini``,
``kearns_mansour``; plain ``impurity`` when the criterion is unknown), the number of samples,
the class counts and the majority class; when the tree stores where missing values go, the
condition says so (``NaN → left``).
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.tree.formats import as_tree, missing_directions, tree_criterion  # the last two re-exported
from treelearn.tree.tree import CATEGORICAL, Tree

__all__ = ["plot_tree", "dtreeviz_model", "tree_criterion", "missing_directions", "node_labels"]


def _fmt_threshold(t: float, precision: int) -> str:
    """``precision`` decimals for |t| >= 1 (780.53, 27), significant digits below (0.0178)."""
    if abs(t) >= 1:
        text = f"{t:.{precision}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{t:.{max(precision, 1)}g}"


def _fmt_count(v: float, precision: int) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.{precision}f}"


def node_labels(obj, *, feature_names=None, class_names=None, impurity: bool = True, precision: int = 3,
                proportion: bool = False, node_ids: bool = False, criterion: str | None = None) -> list[str]:
    """The text of every node's box, as :func:`plot_tree` draws it (one string per node)."""
    from treelearn.tree.formats import class_names_of, feature_names_of

    tree = as_tree(obj)
    names = feature_names_of(tree, feature_names)
    reg = tree.is_regression  # a regression tree: value = the node's mean(s), no class
    classes = [] if reg else class_names_of(tree, class_names)
    crit = criterion if criterion is not None else (tree_criterion(obj) or "impurity")
    missing = missing_directions(tree)
    pred = tree.leaf_class_index()
    has_samples = bool(tree.n_node_samples.any())
    labels = []
    for node in range(tree.node_count):
        parts = []
        if node_ids:
            parts.append(f"node #{node}")
        if tree.children_left[node] >= 0:
            f = int(tree.feature[node])
            if tree.kind[node] == CATEGORICAL:
                cond = f"{names[f]} == {tree.schema.categories[f][int(tree.threshold[node])]}"
            elif tree.threshold[node] == np.inf:  # the missing-only split
                cond = f"{names[f]} is missing"
            else:
                cond = f"{names[f]} >= {_fmt_threshold(tree.threshold[node], precision)}"
            if missing is not None and tree.threshold[node] != np.inf:
                cond += "  (NaN \u2192 " + ("left" if missing[node] else "right") + ")"
            parts.append(cond)
        if impurity:
            parts.append(f"{crit} = {tree.impurity[node]:.{precision}f}")
        v = tree.value[node]
        if proportion and not reg:
            tot = v.sum()
            share = tree.n_node_samples[node] / max(tree.n_node_samples[0], 1)
            parts.append(f"samples = {100 * share:.1f}%")
            parts.append("value = [" + ", ".join(f"{x / tot if tot > 0 else 0:.{precision}f}" for x in v) + "]")
        else:
            if has_samples:  # trees learned from queries weigh regions, they have no samples
                parts.append(f"samples = {int(tree.n_node_samples[node])}")
            parts.append("value = [" + ", ".join(_fmt_count(x, precision) for x in v) + "]")
        if not reg:
            parts.append(f"class = {classes[pred[node]]}")
        labels.append("\n".join(parts))
    return labels


def _layout(tree: Tree, max_depth: int | None):
    """x (leaf order, parents centred over their children) and depth of every drawn node."""
    n = tree.node_count
    x = np.zeros(n)
    depth = np.zeros(n, dtype=np.int64)
    drawn = np.zeros(n, dtype=bool)
    # iterative post-order: a node is a "leaf" of the drawing when it is a leaf or at max_depth
    next_leaf = 0.0
    stack = [(0, 0, False)]
    while stack:
        node, d, done = stack.pop()
        l, r = int(tree.children_left[node]), int(tree.children_right[node])
        cut = l < 0 or (max_depth is not None and d >= max_depth)
        if not done:
            drawn[node] = True
            depth[node] = d
            if cut:
                x[node] = next_leaf
                next_leaf += 1.0
                continue
            stack.append((node, d, True))
            stack.append((r, d + 1, False))
            stack.append((l, d + 1, False))  # left drawn first (popped first)
        else:
            x[node] = 0.5 * (x[l] + x[r])
    return x, depth, drawn, max(next_leaf, 1.0)


def plot_tree(est_or_tree, *, feature_names=None, class_names=None, max_depth: int | None = None,
              impurity: bool = True, filled: bool = True, proportion: bool = False, node_ids: bool = False,
              precision: int = 3, fontsize: float | None = None, ax=None, criterion: str | None = None):
    """Draw a tree with matplotlib (any treelearn learner's; no scikit-learn needed).

    Parameters follow ``sklearn.tree.plot_tree``: ``feature_names``, ``class_names`` (default:
    the tree's own names and labels), ``max_depth`` (deeper subtrees are drawn as ``(...)``),
    ``impurity``, ``filled`` (boxes coloured by majority class, the more saturated the purer),
    ``proportion``, ``node_ids``, ``precision``, ``fontsize`` and ``ax`` (default: the current
    axes). The impurity is labelled with the tree's criterion (:func:`tree_criterion`;
    ``criterion=`` overrides the label). The right child is the branch where the condition
    holds (``x >= t`` / ``x == v``), edges are labelled True/False as in scikit-learn's drawing.

    Returns the list of the boxes' ``matplotlib.text.Annotation`` objects, in node order.

    >>> from sklearn.datasets import load_iris
    >>> from treelearn import GreedyTreeClassifier, plot_tree
    >>> import matplotlib; matplotlib.use("Agg")
    >>> est = GreedyTreeClassifier(criterion="entropy", max_depth=2).fit(*load_iris(return_X_y=True))
    >>> boxes = plot_tree(est)
    >>> len(boxes) == est.tree_.node_count
    True
    >>> boxes[0].get_text().splitlines()[1].startswith("entropy = ")
    True
    """
    import matplotlib.pyplot as plt

    from treelearn.tree.formats import class_colors, fill_color, value_color

    tree = as_tree(est_or_tree)
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer))
                                  or max_depth < 0):
        raise TreeLearnValueError(f"max_depth must be None or a non-negative integer, got {max_depth!r}")
    labels = node_labels(est_or_tree, feature_names=feature_names, class_names=class_names, impurity=impurity,
                         precision=precision, proportion=proportion, node_ids=node_ids, criterion=criterion)
    x, depth, drawn, width = _layout(tree, max_depth)
    if ax is None:
        ax = plt.gca()
    ax.clear()
    ax.set_axis_off()
    max_d = int(depth[drawn].max()) if drawn.any() else 0
    colors = class_colors(max(tree.n_classes, 1))
    # positions in axes fraction: leaves spread over [0, 1], depth top-down
    xs = (x + 0.5) / width
    ys = 1.0 - (depth + 0.5) / (max_d + 1)
    if fontsize is None:
        fontsize = max(4.0, min(10.0, 60.0 / max(width, 1.0)))
    annotations = [None] * tree.node_count
    parent = tree.parents()
    for node in range(tree.node_count):
        if not drawn[node]:
            continue
        cut = (tree.children_left[node] >= 0 and max_depth is not None and depth[node] >= max_depth)
        text = labels[node] + ("\n(subtree not drawn)" if cut else "")
        face = "white" if not filled else (value_color(tree, node) if tree.is_regression
                                           else fill_color(tree.value[node], colors))
        bbox = dict(boxstyle="round", fc=face, ec="black", lw=0.8)
        p = int(parent[node])
        kw = dict(xycoords="axes fraction", textcoords="axes fraction", ha="center", va="center",
                  fontsize=fontsize, bbox=bbox, zorder=3)
        if p < 0:
            ann = ax.annotate(text, xy=(xs[node], ys[node]), **kw)
        else:
            ann = ax.annotate(text, xy=(xs[p], ys[p]), xytext=(xs[node], ys[node]),
                              arrowprops=dict(arrowstyle="<-", lw=0.8), **kw)
            if p == 0:  # label the root's edges as sklearn does
                holds = node == tree.children_right[0]
                ax.annotate(str(bool(holds)), xy=(0.5 * (xs[p] + xs[node]), 0.5 * (ys[p] + ys[node])),
                            xycoords="axes fraction", ha="center", va="center", fontsize=fontsize,
                            bbox=dict(boxstyle="round", fc="white", ec="none", alpha=0.8), zorder=4)
        annotations[node] = ann
    return [a for a in annotations if a is not None]


def dtreeviz_model(est_or_tree, X, y=None, *, feature_names=None, class_names=None, target_name: str = "class",
                   **kwargs):
    """A ``dtreeviz.model`` of any treelearn tree, with nothing to convert by hand.

    dtreeviz wants a scikit-learn tree whose classes are ``0..C-1``, training labels as those
    codes and the input in the tree's column layout; this does all of it: ``X`` is raw input
    (array or DataFrame, categorical columns included), ``y`` the labels (default: the tree's own
    predictions). Feature names default to :func:`~treelearn.tree.export.sklearn_feature_columns`
    (categorical conditions become ``x == v`` indicator columns), class names to the tree's
    labels. Further keyword arguments go to ``dtreeviz.model``. dtreeviz draws no missing value:
    each is shown at a value that takes its branch (see :func:`_drawable`).
    """
    import dtreeviz

    from treelearn.tree.export import sklearn_feature_columns, sklearn_input, to_sklearn

    tree = as_tree(est_or_tree)
    Xs = sklearn_input(tree, X)
    labels = tree.predict(X) if y is None else np.asarray(y)
    lookup = {c: i for i, c in enumerate(tree.classes.tolist())}
    try:
        codes = np.array([lookup[v] for v in labels.tolist()], dtype=np.int64)
    except KeyError as exc:
        raise TreeLearnValueError(f"y holds the label {exc.args[0]!r}, which is not one of the tree's classes "
                                  f"{tree.classes.tolist()}") from None
    except TypeError:
        raise TreeLearnValueError("y must be a 1-d array of the tree's class labels") from None
    names = list(feature_names) if feature_names is not None else sklearn_feature_columns(tree)
    cls_names = list(class_names) if class_names is not None else [str(c) for c in tree.classes.tolist()]
    sk = to_sklearn(est_or_tree, class_codes=True)
    Xs, keep = _drawable(tree, sk, Xs, tree.apply(X))
    return dtreeviz.model(sk, X_train=Xs, y_train=codes[keep], feature_names=names, target_name=target_name,
                          class_names=cls_names, **kwargs)


def _drawable(tree, sk, Xs: np.ndarray, leaves: np.ndarray):
    """``(X, rows)`` for dtreeviz, which refuses NaN: each column's missing cells become the one
    value that sends the most of their rows to the tree's own leaves (tried: below and above every
    threshold of the column, and between each two of them; so a column whose splits send missing
    values left at a higher threshold and right at a lower one is drawn exactly too), so that the
    drawing's counts are the tree's; a row that no such value routes as the tree does is left out,
    with a warning."""
    import warnings

    nan = np.isnan(Xs)
    if not nan.any():
        return Xs, np.ones(Xs.shape[0], dtype=bool)
    Xd = np.where(nan, 0.0, Xs)
    feature = np.asarray(sk.tree_.feature)
    threshold = np.asarray(sk.tree_.threshold)
    internal = tree.children_left >= 0
    for k in np.flatnonzero(nan.any(axis=0)):
        rows = np.flatnonzero(nan[:, k])
        thr = np.unique(threshold[internal & (feature == k)])
        thr = thr[np.abs(thr) < 1e300]  # not the missing-only split's
        present = Xs[~nan[:, k], k]
        lo = min(present.min(initial=np.inf), thr.min(initial=np.inf))
        hi = max(present.max(initial=-np.inf), thr.max(initial=-np.inf))
        lo, hi = (0.0, 0.0) if not np.isfinite(lo) else (lo, hi)
        margin = max(1.0, 0.05 * (hi - lo))
        candidates = np.concatenate([[lo - margin, hi + margin], (thr[1:] + thr[:-1]) / 2.0])
        best, best_hits = candidates[0], -1
        for v in candidates:  # sklearn sends x <= t left: a midpoint is strictly between two thresholds
            Xd[rows, k] = v
            hits = int(np.count_nonzero(np.asarray(sk.apply(Xd[rows])) == leaves[rows]))
            if hits > best_hits:
                best, best_hits = v, hits
        Xd[rows, k] = best
    keep = np.asarray(sk.apply(Xd)) == leaves
    if not keep.all():
        warnings.warn(f"dtreeviz_model: {int((~keep).sum())} of {keep.size} rows with missing values are left out "
                      "of the drawing (no single value per column takes their path: splits of one column send "
                      "missing values both ways)", UserWarning, stacklevel=3)
    return Xd[keep], keep
