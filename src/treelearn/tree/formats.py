"""Text, Graphviz DOT and JSON formats of a :class:`~treelearn.tree.Tree`.

This module sits *below* the Tree class: it reads a tree's arrays (a Tree, or a fitted estimator
holding one in ``tree_``) and never builds one, so that ``Tree.export_text``/``to_json``/... can
use it without an import cycle. The JSON reader returns the Tree's keyword arguments;
:mod:`treelearn.tree.export` (the public functions, above the Tree) and ``Tree.from_json`` build
the Tree from them.

* :func:`export_text` — an indented listing like ``sklearn.tree.export_text``;
* :func:`export_graphviz` — Graphviz DOT source like ``sklearn.tree.export_graphviz``;
* :func:`tree_to_json` / :func:`read_json` — a versioned JSON document with a lossless
  round trip (``Tree.from_json(t.to_json()) == t``, floats bit-exact). Reading never evaluates
  or unpickles anything; malformed or hostile input raises :class:`TreeLearnValueError`.
"""
from __future__ import annotations

import json
import math
import numbers
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.tree._nodes import CATEGORICAL
# the reader lives in model_file; its names are re-exported here, where they always were
from treelearn.tree.model_file import (JSON_FORMAT, JSON_VERSION, MAX_CLASSES_BYTES, MAX_INT_DIGITS,
                                       MAX_JSON_SIZE, MAX_UNUSED_LABEL_WIDTH, read_json, read_json_file,
                                       read_model_file, show_value)

if TYPE_CHECKING:  # annotations only
    from treelearn.tree.tree import Tree

__all__ = ["export_text", "export_graphviz", "tree_to_json", "read_json", "read_json_file", "read_model_file",
           "printable", "JSON_FORMAT",
           "JSON_VERSION", "MAX_JSON_SIZE", "MAX_INT_DIGITS", "MAX_CLASSES_BYTES", "MAX_UNUSED_LABEL_WIDTH"]



# what a terminal, a DOT renderer or a reader could take for anything but text: C0 controls (line
# breaks, ESC, BEL, NUL), DEL, C1 controls (0x9b is a CSI on some terminals), the Unicode line
# and paragraph separators, the bidirectional overrides and isolates (they reorder what is shown)
# and lone surrogates (no encoding can write them)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(s) -> str:
    """``str(s)`` with every character that could act on a terminal or forge a line (controls,
    line separators, bidirectional overrides, lone surrogates) written as a ``\\xNN`` or
    ``\\uNNNN`` escape: names, categories and labels from a model file or a data file are shown
    through it, so that they can neither move the cursor nor add a rule or a row."""
    s = str(s)
    return _UNPRINTABLE.sub(_escape_char, s) if _UNPRINTABLE.search(s) else s


def tree_criterion(obj) -> str | None:
    """The impurity criterion a tree was grown with, or ``None`` when unknown.

    Read from the estimator's ``criterion`` parameter (a name; a callable G gives ``"G"``), else
    from a ``criterion`` attribute of the Tree itself.
    """
    for holder in (obj, getattr(obj, "tree_", None)):
        if holder is None:
            continue
        c = getattr(holder, "criterion", None)
        if isinstance(c, str):
            return c
        if c is not None and callable(c):
            return getattr(c, "__name__", "G") if getattr(c, "__name__", "<lambda>") != "<lambda>" else "G"
    return None


def missing_directions(tree: Tree):
    """Per node, ``True`` when a missing value goes to the left child, ``False`` when right;
    ``None`` when the tree records no missing-value directions (``missing_go_to_left``)."""
    m = getattr(tree, "missing_go_to_left", None)
    if m is None or getattr(tree, "missing_recorded", True) is False:
        return None
    m = np.asarray(m)
    if m.shape != (tree.node_count,):
        return None
    return m.astype(bool)


def _is_tree(obj) -> bool:
    # structural: this module sits below the Tree class and never imports it
    return all(hasattr(obj, a) for a in ("children_left", "children_right", "feature", "threshold", "kind",
                                            "value", "schema", "classes"))


def as_tree(obj) -> Tree:
    if _is_tree(obj):
        return obj
    tree = getattr(obj, "tree_", None)
    if _is_tree(tree):
        return tree
    if hasattr(obj, "fit") and tree is None:
        raise TreeLearnValueError(f"{type(obj).__name__} is not fitted yet: call fit before exporting its tree")
    raise TreeLearnValueError(
        f"expected a treelearn Tree or a fitted treelearn estimator, got {type(obj).__name__}"
    )


def feature_names_of(tree: Tree, feature_names) -> list[str]:
    n = tree.n_features
    if feature_names is None:
        return [tree.schema.column_name(j) for j in range(n)]
    names = [str(v) for v in feature_names]
    if len(names) != n:
        raise TreeLearnValueError(f"feature_names has {len(names)} names, but the tree has {n} features")
    return names


def class_names_of(tree: Tree, class_names) -> list[str]:
    if class_names is None:
        return [str(c) for c in tree.classes.tolist()]
    names = [str(v) for v in class_names]
    if len(names) != tree.n_classes:
        raise TreeLearnValueError(f"class_names has {len(names)} names, but the tree has {tree.n_classes} classes")
    return names


def _check_nonneg_int(name, value, *, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise TreeLearnValueError(f"{name} must be a non-negative integer, got {show_value(value)}")
    return int(value)


def _condition(tree: Tree, node: int, names: list[str], decimals: int, negate: bool, missing=None) -> str:
    """Readable condition of an internal node (``negate``: the condition of the left branch);
    ``missing`` (the tree's recorded missing-value directions, or None) adds ``or missing`` to the
    branch missing values take."""
    f = int(tree.feature[node])
    # "or missing" only where a missing value was seen in training: elsewhere the direction is
    # the default one, no rule the tree learned
    noted = missing is not None and tree.schema.had_missing(f)
    tail = "" if not noted or bool(missing[node]) != negate else " or missing"
    if tree.kind[node] == CATEGORICAL:
        value = printable(tree.schema.categories[f][int(tree.threshold[node])])
        return f"{names[f]} {'!=' if negate else '=='} {value}{tail}"
    t = tree.threshold[node]
    if t == np.inf:  # the missing-only split: every value goes left, missing values right
        return f"{names[f]} is not missing" if negate else f"{names[f]} is missing"
    return f"{names[f]} {'< ' if negate else '>='} {t:.{decimals}f}{tail}"


# ---------------------------------------------------------------------------------------- text
def export_text(tree, *, feature_names=None, class_names=None, max_depth: int = 10, spacing: int = 3,
                decimals: int = 2, show_weights: bool = False) -> str:
    """The tree as indented text rules, like ``sklearn.tree.export_text``.

    Each internal node prints two lines, its left branch (condition false: ``x <  t`` or
    ``x != v``) then its right branch (``x >= t`` or ``x == v``), each followed by its subtree;
    when the tree records where missing values go, the branch they take ends with ``or missing``;
    a leaf prints ``class: <majority class>`` (with ``weights: [...]``, the weighted class
    counts, when ``show_weights``); a regression tree's leaf ``value: [<mean>], impurity: <its
    squared error (or the criterion's impurity)>`` (and ``weight: <weight>``). Subtrees deeper than ``max_depth`` print as
    ``truncated branch of depth d``.
    """
    tree = as_tree(tree)
    names = [printable(n) for n in feature_names_of(tree, feature_names)]
    classes = [] if tree.is_regression else [printable(c) for c in class_names_of(tree, class_names)]
    max_depth = _check_nonneg_int("max_depth", max_depth)
    decimals = _check_nonneg_int("decimals", decimals)
    spacing = _check_nonneg_int("spacing", spacing)
    if spacing < 1:
        raise TreeLearnValueError("spacing must be >= 1")
    pred = tree.leaf_class_index()
    heights = _heights(tree)
    missing = missing_directions(tree)
    branch = "|" + "-" * spacing + " "
    pad = "|" + " " * spacing
    lines: list[str] = []

    def leaf_text(node: int) -> str:
        if tree.is_regression:  # the leaf's mean(s) and its impurity (squared error, or the criterion's)
            s = "value: [" + ", ".join(f"{v:.{decimals}f}" for v in tree.value[node]) + "]"
            s += f", impurity: {tree.impurity[node]:.{decimals}f}"
            if show_weights:
                s += f", weight: {tree.weighted_n_node_samples[node]:.{decimals}f}"
            return s
        s = ""
        if show_weights:
            s = "weights: [" + ", ".join(f"{v:.{decimals}f}" for v in tree.value[node]) + "] "
        return s + f"class: {classes[pred[node]]}"

    # iterative preorder; a stack item is ("node", node, depth) or ("line", text)
    stack: list[tuple] = [("node", 0, 0)]
    while stack:
        item = stack.pop()
        if item[0] == "line":
            lines.append(item[1])
            continue
        _, node, depth = item
        indent = pad * depth
        if tree.children_left[node] < 0:
            lines.append(indent + branch + leaf_text(node))
            continue
        if depth >= max_depth:
            lines.append(indent + branch + f"truncated branch of depth {heights[node]}")
            continue
        left, right = int(tree.children_left[node]), int(tree.children_right[node])
        # pushed in reverse order of printing
        stack.append(("node", right, depth + 1))
        stack.append(("line", indent + branch + _condition(tree, node, names, decimals, False, missing)))
        stack.append(("node", left, depth + 1))
        stack.append(("line", indent + branch + _condition(tree, node, names, decimals, True, missing)))
    return "\n".join(lines) + "\n"


def _heights(tree: Tree) -> np.ndarray:
    """Height of every node's subtree (a leaf: 0); children come after parents."""
    h = np.zeros(tree.node_count, dtype=np.int64)
    for node in range(tree.node_count - 1, -1, -1):
        l = tree.children_left[node]
        if l >= 0:
            h[node] = 1 + max(h[l], h[tree.children_right[node]])
    return h


# ---------------------------------------------------------------------------------------- DOT
def _dot_escape(s: str) -> str:
    """Escape a string for a double-quoted DOT label (``\\n`` separators are added by the caller):
    controls (NUL, line breaks, ...) as visible escapes, then backslashes and quotes."""
    return printable(s).replace("\\", "\\\\").replace('"', '\\"')


def class_colors(n: int) -> list[tuple[int, int, int]]:
    """n well-separated RGB colours (evenly spaced hues), as sklearn does."""
    import colorsys

    out = []
    for i in range(max(n, 1)):
        r, g, b = colorsys.hsv_to_rgb(i / max(n, 1), 0.75, 0.9)
        out.append((int(round(r * 255)), int(round(g * 255)), int(round(b * 255))))
    return out


def fill_color(value: np.ndarray, colors) -> str:
    tot = value.sum()
    if tot <= 0:
        return "#ffffff"
    p = value / tot
    order = np.argsort(-p, kind="stable")
    top = p[order[0]]
    second = p[order[1]] if p.size > 1 else 0.0
    # sklearn's rule: the more the majority dominates the runner-up, the more saturated
    alpha = 1.0 if p.size == 1 else ((top - second) / (1.0 - second) if second < 1 else 0.0)
    rgb = colors[int(order[0])]
    mixed = [int(round(alpha * c + (1 - alpha) * 255)) for c in rgb]
    return "#{:02x}{:02x}{:02x}".format(*mixed)


def export_graphviz(tree, *, feature_names=None, class_names=None, filled: bool = False, impurity: bool = True,
                    node_ids: bool = False, proportion: bool = False, rounded: bool = False, precision: int = 3,
                    max_depth: int | None = None, rotate: bool = False, fontname: str = "helvetica") -> str:
    """Graphviz DOT source of the tree, like ``sklearn.tree.export_graphviz``.

    Each internal node shows its condition (``x >= t`` or ``x == v``); the edge to the right
    child is labelled True (the condition holds), the edge to the left child False; when the tree
    records where missing values go, an internal node also shows ``missing -> left`` or
    ``missing -> right``. Each node
    shows its impurity (``impurity``), sample count, class counts (or proportions with
    ``proportion``) and majority class. ``filled`` colours nodes by majority class, the more
    saturated the purer. Subtrees below ``max_depth`` are drawn as a ``(...)`` box.
    Render with ``dot -Tpng`` or the ``graphviz`` Python package.
    """
    tree = as_tree(tree)
    names = [printable(n) for n in feature_names_of(tree, feature_names)]
    reg = tree.is_regression
    classes = [] if reg else [printable(c) for c in class_names_of(tree, class_names)]
    precision = _check_nonneg_int("precision", precision)
    max_depth = _check_nonneg_int("max_depth", max_depth, allow_none=True)
    colors = class_colors(max(tree.n_classes, 1))
    pred = tree.leaf_class_index()
    style = ['"filled' + (", rounded" if rounded else "") + '"'] if filled else (['"rounded"'] if rounded else [])
    font = _dot_escape(str(fontname))
    out = ["digraph Tree {"]
    node_attrs = ["shape=box"]
    if style:
        node_attrs.append("style=" + style[0])
    node_attrs.append(f'fontname="{font}"')
    out.append(f"node [{', '.join(node_attrs)}] ;")
    out.append(f'edge [fontname="{font}"] ;')
    if rotate:
        out.append("rankdir=LR ;")
    total_n = tree.n_node_samples[0]
    missing = missing_directions(tree)

    def fmt(v: float) -> str:
        if float(v).is_integer() and not proportion:
            return str(int(v))
        return f"{v:.{precision}f}"

    stack = [(0, 0)]
    while stack:
        node, depth = stack.pop()
        attrs = []
        if max_depth is not None and depth > max_depth:
            out.append(f'{node} [label="(...)"' + (', fillcolor="#C0C0C0"' if filled else "") + "] ;")
            continue
        parts = []
        if node_ids:
            parts.append(f"node #{node}")
        if tree.children_left[node] >= 0:
            parts.append(_condition(tree, node, names, precision, negate=False))
            if (missing is not None and tree.threshold[node] != np.inf
                    and tree.schema.had_missing(int(tree.feature[node]))):
                parts.append("missing -> " + ("left" if missing[node] else "right"))
        if impurity:
            parts.append(f"impurity = {tree.impurity[node]:.{precision}f}")
        if proportion:
            share = tree.n_node_samples[node] / total_n if total_n > 0 else 0.0
            parts.append(f"samples = {100 * share:.{max(precision - 2, 1)}f}%")
            v = tree.value[node] / tree.value[node].sum() if tree.value[node].sum() > 0 and not reg else tree.value[node]
        else:
            parts.append(f"samples = {int(tree.n_node_samples[node])}")
            v = tree.value[node]
        parts.append("value = [" + ", ".join(fmt(x) for x in v) + "]")
        if not reg:
            parts.append(f"class = {classes[pred[node]]}")
        label = "\\n".join(_dot_escape(p) for p in parts)
        attrs.append(f'label="{label}"')
        if filled:
            attrs.append(f'fillcolor="{value_color(tree, node) if reg else fill_color(tree.value[node], colors)}"')
        out.append(f"{node} [{', '.join(attrs)}] ;")
        l, r = int(tree.children_left[node]), int(tree.children_right[node])
        if l >= 0:
            for child, holds in ((l, False), (r, True)):
                edge = f"{node} -> {child}"
                if node == 0:
                    angle = (-45 if holds else 45) * (-1 if rotate else 1)
                    edge += f' [labeldistance=2.5, labelangle={angle}, headlabel="{holds}"]'
                out.append(edge + " ;")
            stack.append((r, depth + 1))
            stack.append((l, depth + 1))
    out.append("}")
    return "\n".join(out) + "\n"


def value_color(tree: Tree, node: int) -> str:
    """A regression node's fill: the more saturated, the larger its (first output's) mean among
    the tree's nodes (as scikit-learn colours regressors)."""
    v = tree.value[:, 0]
    lo, hi = float(v.min()), float(v.max())
    alpha = 0.0 if hi <= lo else (float(v[node]) - lo) / (hi - lo)
    r, g, b = (229, 129, 57)
    mix = [int(round(alpha * c + (1 - alpha) * 255)) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


# ---------------------------------------------------------------------------------------- JSON
def _json_scalar(v, what: str):
    """A class label or category -> a JSON value that loads back equal (and of the same JSON type)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        f = float(v)
        if not math.isfinite(f):
            raise TreeLearnValueError(f"{what} {v!r} is not finite and cannot be stored in JSON")
        return f
    if isinstance(v, (str, np.str_)):
        return str(v)
    raise TreeLearnValueError(
        f"{what} {v!r} of type {type(v).__name__} cannot be stored in JSON (use str, int, float or bool)"
    )


def _finite_list(a: np.ndarray, what: str) -> list:
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise TreeLearnValueError(f"tree array {what} has NaN or infinite values; they cannot be stored in JSON")
    return a.tolist()


def _threshold_list(t: np.ndarray) -> list:
    """The thresholds for JSON: ``+inf`` (a missing-only split) as the string ``"inf"``."""
    inf = t == np.inf
    out = _finite_list(np.where(inf, 0.0, t), "threshold")
    for i in np.flatnonzero(inf).tolist():
        out[i] = "inf"
    return out


def tree_to_json(tree, *, indent: int | None = None, metadata: dict | None = None) -> str:
    """The tree as a JSON document (a lossless round trip through :func:`tree_from_json`).

    The document is an object with ``format`` (``"treelearn.tree"``), ``version``, the schema
    (``n_features``, ``feature_names``, per-column ``categories``: ``null`` for numeric), the
    ``classes`` with their numpy ``classes_dtype``, and ``nodes``: the per-node arrays
    ``children_left``, ``children_right``, ``feature``, ``kind``, ``threshold``, ``value``
    (rows of class counts), ``n_node_samples``, ``impurity`` and, when the tree records them,
    ``missing_go_to_left`` (0/1 per node; a document without it loads with the heavier-child
    default). A regression tree has ``task`` ``"regression"``, ``n_outputs``, ``classes`` null,
    ``value`` rows of the nodes' means and ``nodes.weighted_n_node_samples``; and ``missing_columns`` (the columns with missing values in training, when known).
    A threshold of ``+inf`` (a missing-only split) is written ``"inf"``. Floats are written with
    Python's shortest round-tripping repr, so they load back bit-exact. ``metadata``: an
    optional JSON-serialisable dict stored alongside (e.g. the learner's parameters).
    """
    tree = as_tree(tree)
    classes = tree.classes if tree.classes is not None else np.zeros(0)
    dt = classes.dtype
    if tree.is_regression:
        cdt = None
    elif dt.kind in "biuf":
        cdt = dt.str if dt.kind != "b" else "bool"
    elif dt.kind == "U":
        cdt = dt.str
        longest = max((len(c) for c in classes.tolist()), default=0)
        if dt.itemsize // 4 > max(longest, MAX_UNUSED_LABEL_WIDTH):
            # the loader refuses widths no label needs (they only cost memory): write the
            # labels' own width, so that every model this writes loads back
            cdt = np.dtype(f"U{max(longest, 1)}").str
    elif dt.kind == "O":
        cdt = "object"
    else:
        raise TreeLearnValueError(f"classes of dtype {dt} cannot be stored in JSON")
    schema = tree.schema
    categories = []
    for j, cats in enumerate(schema.categories):
        if cats is None:
            categories.append(None)
        else:
            categories.append([_json_scalar(v, f"category of column {schema.column_name(j)}") for v in list(cats)])
    doc: dict[str, Any] = {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "n_nodes": tree.node_count,
        "n_features": schema.n_features,
        "feature_names": None if schema.feature_names is None else [str(s) for s in schema.feature_names],
        "categories": categories,
        "classes": None if tree.is_regression else [_json_scalar(c, "class label") for c in classes.tolist()],
        "classes_dtype": cdt,
        "nodes": {
            "children_left": tree.children_left.tolist(),
            "children_right": tree.children_right.tolist(),
            "feature": tree.feature.tolist(),
            "kind": tree.kind.astype(np.int64).tolist(),
            "threshold": _threshold_list(tree.threshold),
            "value": _finite_list(tree.value, "value"),
            "n_node_samples": tree.n_node_samples.tolist(),
            "impurity": _finite_list(tree.impurity, "impurity"),
        },
    }
    if tree.is_regression:  # (absent: classification, as every file written before regression trees)
        doc["task"] = "regression"
        doc["n_outputs"] = tree.n_outputs
        doc["nodes"]["weighted_n_node_samples"] = _finite_list(tree.weighted_n_node_samples, "weighted_n_node_samples")
    if schema.missing is not None:  # the columns with missing values in training (absent: not known)
        doc["missing_columns"] = [j for j, m in enumerate(schema.missing) if m]
    if missing_directions(tree) is not None:  # absent: the heavier-child default (older files too)
        doc["nodes"]["missing_go_to_left"] = np.asarray(tree.missing_go_to_left).astype(np.int64).tolist()
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise TreeLearnValueError("metadata must be a dict")
        doc["metadata"] = metadata
    try:
        # ASCII-only output (non-ASCII as \\u escapes): safe to write in any encoding, even
        # strings with lone surrogates, and loads back to the same strings
        return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=True)
    except (TypeError, ValueError) as exc:
        raise TreeLearnValueError(f"the tree's metadata cannot be stored in JSON: {exc}") from None
