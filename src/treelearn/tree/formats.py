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

import itertools
import json
import math
import numbers
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree._nodes import CATEGORICAL, LEAF, NUMERIC

if TYPE_CHECKING:  # annotations only
    from treelearn.tree.tree import Tree

__all__ = ["export_text", "export_graphviz", "tree_to_json", "read_json", "read_json_file", "read_model_file",
           "JSON_FORMAT",
           "JSON_VERSION", "MAX_JSON_SIZE", "MAX_INT_DIGITS", "MAX_CLASSES_BYTES", "MAX_UNUSED_LABEL_WIDTH"]

JSON_FORMAT = "treelearn.tree"
JSON_VERSION = 1
#: refuse JSON documents longer than this many characters unless ``max_size`` says otherwise
#: (a tree of a million nodes and two classes takes about 100 MB)
MAX_JSON_SIZE = 256 * 1024 * 1024
#: the longest integer literal a model may hold (Python's own limit for ``int(str)``)
MAX_INT_DIGITS = 4300
#: the most memory the classes array of a loaded model may take (its dtype is chosen by the file)
MAX_CLASSES_BYTES = 64 * 1024 * 1024
#: the widest fixed-width string dtype accepted for the classes when no label needs more
MAX_UNUSED_LABEL_WIDTH = 1024


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
        raise TreeLearnValueError(f"{name} must be a non-negative integer, got {_show(value)}")
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
        value = tree.schema.categories[f][int(tree.threshold[node])]
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
    counts, when ``show_weights``). Subtrees deeper than ``max_depth`` print as
    ``truncated branch of depth d``.
    """
    tree = as_tree(tree)
    names = feature_names_of(tree, feature_names)
    classes = class_names_of(tree, class_names)
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
    """Escape a string for a double-quoted DOT label (``\\n`` separators are added by the caller)."""
    return (s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " "))


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
    names = feature_names_of(tree, feature_names)
    classes = class_names_of(tree, class_names)
    precision = _check_nonneg_int("precision", precision)
    max_depth = _check_nonneg_int("max_depth", max_depth, allow_none=True)
    colors = class_colors(tree.n_classes)
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
            v = tree.value[node] / tree.value[node].sum() if tree.value[node].sum() > 0 else tree.value[node]
        else:
            parts.append(f"samples = {int(tree.n_node_samples[node])}")
            v = tree.value[node]
        parts.append("value = [" + ", ".join(fmt(x) for x in v) + "]")
        parts.append(f"class = {classes[pred[node]]}")
        label = "\\n".join(_dot_escape(p) for p in parts)
        attrs.append(f'label="{label}"')
        if filled:
            attrs.append(f'fillcolor="{fill_color(tree.value[node], colors)}"')
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
    default) and ``missing_columns`` (the columns with missing values in training, when known).
    A threshold of ``+inf`` (a missing-only split) is written ``"inf"``. Floats are written with
    Python's shortest round-tripping repr, so they load back bit-exact. ``metadata``: an
    optional JSON-serialisable dict stored alongside (e.g. the learner's parameters).
    """
    tree = as_tree(tree)
    classes = tree.classes
    dt = classes.dtype
    if dt.kind in "biuf":
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
        "classes": [_json_scalar(c, "class label") for c in classes.tolist()],
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


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_REQUIRED = ("format", "version", "n_nodes", "n_features", "feature_names", "categories", "classes",
             "classes_dtype", "nodes")
_NODE_KEYS = ("children_left", "children_right", "feature", "kind", "threshold", "value", "n_node_samples",
              "impurity")
_OPTIONAL_NODE_KEYS = ("missing_go_to_left",)
_U_DTYPE = re.compile(r"^[<>|=]?U(\d{1,7})$")
_NUM_DTYPES = {"bool", "|b1"} | {e + k + s for e in "<>|=" for k, s in
                                 (("i", "1"), ("i", "2"), ("i", "4"), ("i", "8"), ("u", "1"), ("u", "2"),
                                  ("u", "4"), ("u", "8"), ("f", "2"), ("f", "4"), ("f", "8"))}


def _reject_constant(name):
    raise TreeLearnValueError(f"JSON model contains {name}; only finite numbers are allowed")


def _short(exc: BaseException, limit: int = 200) -> str:
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def _show(value, limit: int = 80) -> str:
    """A value from a (possibly hostile) file, quoted and cut to one short line for an error."""
    return _short(repr(value), limit)


def _parse_int(literal: str) -> int:
    # bound the literal's length before int() (its cost grows quadratically with the digits)
    digits = len(literal) - (literal[:1] == "-")
    if digits > MAX_INT_DIGITS:
        raise TreeLearnValueError(
            f"JSON model has an integer literal of {digits} digits; at most {MAX_INT_DIGITS} are read"
        )
    return int(literal)


def _parse_float(literal: str) -> float:
    f = float(literal)
    if not math.isfinite(f):  # 1e999 parses as infinity
        raise TreeLearnValueError(f"JSON model has the number {literal[:40]}, too large for a float64")
    return f


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise TreeLearnValueError(f"JSON model has the key {_show(k)} twice in one object")
        d[k] = v
    return d


def _int_list(v, what: str, n: int) -> np.ndarray:
    if not isinstance(v, list):
        raise TreeLearnValueError(f"JSON model: {what} must be a list, got {type(v).__name__}")
    if len(v) != n:
        raise TreeLearnValueError(f"JSON model: {what} has {len(v)} entries, expected {n} (n_nodes)")
    for x in v:
        if type(x) is not int:
            raise TreeLearnValueError(f"JSON model: {what} must hold integers, found {type(x).__name__} {x!r:.40}")
        if not _INT64_MIN <= x <= _INT64_MAX:
            raise TreeLearnValueError(f"JSON model: {what} holds an integer out of the int64 range")
    return np.array(v, dtype=np.int64)


def _float_list(v, what: str, n: int) -> np.ndarray:
    if not isinstance(v, list):
        raise TreeLearnValueError(f"JSON model: {what} must be a list, got {type(v).__name__}")
    if len(v) != n:
        raise TreeLearnValueError(f"JSON model: {what} has {len(v)} entries, expected {n}")
    for x in v:
        if type(x) not in (int, float):
            raise TreeLearnValueError(f"JSON model: {what} must hold numbers, found {type(x).__name__} {x!r:.40}")
    try:
        a = np.array(v, dtype=np.float64)
    except OverflowError:
        raise TreeLearnValueError(f"JSON model: {what} holds a number too large for float64") from None
    if not np.all(np.isfinite(a)):
        raise TreeLearnValueError(f"JSON model: {what} holds a non-finite number")
    return a


def _label_list(v, what: str) -> list:
    if not isinstance(v, list):
        raise TreeLearnValueError(f"JSON model: {what} must be a list, got {type(v).__name__}")
    for x in v:
        if type(x) not in (str, int, float, bool):
            raise TreeLearnValueError(
                f"JSON model: {what} must hold strings, numbers or booleans, found {type(x).__name__}"
            )
        if type(x) is float and not math.isfinite(x):
            raise TreeLearnValueError(f"JSON model: {what} holds a non-finite number")
    return v


def _classes_array(values: list, dtype: str) -> np.ndarray:
    if not isinstance(dtype, str):
        raise TreeLearnValueError("JSON model: classes_dtype must be a string")
    n = len(values)
    if dtype == "object":
        arr = np.empty(n, dtype=object)
        arr[:] = values
        return arr
    m = _U_DTYPE.match(dtype)
    if m:
        if not all(type(x) is str for x in values):
            raise TreeLearnValueError(f"JSON model: classes_dtype {dtype} needs string classes")
        width = int(m.group(1))
        longest = max((len(x) for x in values), default=0)
        if longest > width:
            raise TreeLearnValueError(f"JSON model: a class label is longer than classes_dtype {dtype} allows")
        # the dtype decides the allocation (4 bytes per character per class): bound it before
        # numpy allocates, whatever the file asks for
        if width > max(longest, MAX_UNUSED_LABEL_WIDTH):
            raise TreeLearnValueError(
                f"JSON model: classes_dtype {dtype[:20]} is wider than its labels need (the longest has "
                f"{longest} characters; at most {MAX_UNUSED_LABEL_WIDTH} are accepted)"
            )
        if 4 * width * n > MAX_CLASSES_BYTES:
            raise TreeLearnValueError(
                f"JSON model: {n} classes of classes_dtype {dtype[:20]} would take {4 * width * n} bytes "
                f"(at most {MAX_CLASSES_BYTES})"
            )
        return np.array(values, dtype=np.dtype(dtype)) if n else np.zeros(0, dtype=np.dtype(dtype))
    if dtype not in _NUM_DTYPES:
        raise TreeLearnValueError(f"JSON model: unsupported classes_dtype {_show(dtype)}")
    dt = np.dtype(dtype)
    if dt.kind == "b":
        ok = all(type(x) is bool for x in values)
    elif dt.kind in "iu":
        ok = all(type(x) is int for x in values)
    else:
        ok = all(type(x) in (int, float) for x in values)
    if not ok:
        raise TreeLearnValueError(f"JSON model: classes do not match classes_dtype {dtype}")
    try:
        with np.errstate(over="raise"):
            arr = np.array(values, dtype=dt)
    except (OverflowError, FloatingPointError, ValueError):
        raise TreeLearnValueError(f"JSON model: a class label does not fit classes_dtype {dtype}") from None
    if dt.kind == "f" and (not np.all(np.isfinite(arr)) or any(float(a) != x for a, x in zip(arr.tolist(), values))):
        raise TreeLearnValueError(f"JSON model: a class label does not fit classes_dtype {dtype}")
    return arr


def read_json(text, *, max_size: int = MAX_JSON_SIZE) -> tuple[dict, Any]:
    """``(fields, metadata)`` of a tree written by :func:`tree_to_json` (``text``: str, bytes, or
    the parsed dict): ``fields`` are the keyword arguments of the Tree (``Tree(**fields)``, which
    :func:`treelearn.tree.export.tree_from_json` and ``Tree.from_json`` call).

    Validates everything before the tree is built: the format and version, every key and
    type, array lengths, integer ranges, finiteness (NaN/Infinity are rejected), that the
    children describe a tree (no cycles, no shared or unreachable nodes, children after their
    parents), feature indices and category codes in range. Any problem raises
    :class:`TreeLearnValueError` naming it (the Tree's own checks, when it is built, too);
    ``metadata`` is ``None`` when absent.
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_size:
            raise TreeLearnValueError(f"JSON model is too large ({len(text)} bytes > {max_size})")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TreeLearnValueError(f"JSON model is not valid UTF-8: {exc}") from None
    if isinstance(text, str):
        if len(text) > max_size:
            raise TreeLearnValueError(f"JSON model is too large ({len(text)} characters > {max_size})")
        try:
            doc = json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float,
                             object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise TreeLearnValueError(f"not a JSON document: {exc}") from None
        except TreeLearnValueError:
            raise
        except (ValueError, OverflowError) as exc:  # e.g. a literal no Python number can hold
            raise TreeLearnValueError(f"not a readable JSON document: {_short(exc)}") from None
        except RecursionError:
            raise TreeLearnValueError("JSON model is nested too deeply") from None
    elif isinstance(text, dict):
        doc = text
    else:
        raise TreeLearnValueError(f"a JSON model must be a JSON string, bytes or dict, got {type(text).__name__}")
    try:
        return _tree_from_doc(doc)
    except RecursionError:
        raise TreeLearnValueError("JSON model is nested too deeply") from None


def read_json_file(path, *, max_bytes: int = MAX_JSON_SIZE) -> tuple[dict, Any]:
    """:func:`read_json` of a JSON model file, its size checked before it is read
    (:func:`read_model_file`)."""
    return read_json(read_model_file(path, max_bytes=max_bytes), max_size=max_bytes)


def read_model_file(path, *, max_bytes: int = MAX_JSON_SIZE) -> bytes:
    """The bytes of a JSON model file, checking its size before reading it.

    A file larger than ``max_bytes`` raises :class:`TreeLearnValueError` without being read (a
    regular file by its size on disk; a pipe, device or growing file after at most
    ``max_bytes + 1`` bytes). A file that cannot be opened raises the usual ``OSError``
    (``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``).
    """
    import os
    import stat

    if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral) or max_bytes < 1:
        raise TreeLearnValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    max_bytes = int(max_bytes)
    with open(os.fspath(path), "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{path}: is a directory, expected a JSON model")
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise TreeLearnValueError(
                f"JSON model file {path} is too large ({st.st_size} bytes > max_bytes={max_bytes})"
            )
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise TreeLearnValueError(f"JSON model file {path} is too large (more than max_bytes={max_bytes} bytes)")
    return data


def _missing_columns(v, n_features: int):
    """The optional ``missing_columns`` field (indices of the columns with missing values in
    training) as one flag per column; ``None`` when absent."""
    if v is None:
        return None
    if not isinstance(v, list) or not all(type(j) is int and 0 <= j < n_features for j in v):
        raise TreeLearnValueError(f"JSON model: missing_columns must be a list of column indices below {n_features}")
    flags = [False] * n_features
    for j in v:
        flags[j] = True
    return flags


def _tree_from_doc(doc) -> tuple[dict, Any]:
    if not isinstance(doc, dict):
        raise TreeLearnValueError(f"JSON model must be an object, got {type(doc).__name__}")
    if doc.get("format") != JSON_FORMAT:
        raise TreeLearnValueError(f"not a treelearn tree: the 'format' field must be {JSON_FORMAT!r}")
    version = doc.get("version")
    if type(version) is not int:
        raise TreeLearnValueError("JSON model: 'version' must be an integer")
    if version != JSON_VERSION:
        raise TreeLearnValueError(
            f"JSON model has version {version}; this treelearn reads version {JSON_VERSION}"
        )
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise TreeLearnValueError(f"JSON model is missing the field(s) {', '.join(missing)}")
    unknown = sorted(set(doc) - set(_REQUIRED) - {"metadata", "missing_columns"})
    if unknown:
        raise TreeLearnValueError(f"JSON model has unknown field(s) {', '.join(map(str, unknown))}")
    n = doc["n_nodes"]
    if type(n) is not int or n < 1:
        raise TreeLearnValueError(f"JSON model: n_nodes must be a positive integer, got {n!r:.40}")
    n_features = doc["n_features"]
    if type(n_features) is not int or n_features < 1:
        raise TreeLearnValueError(f"JSON model: n_features must be a positive integer, got {n_features!r:.40}")
    cats = doc["categories"]
    if not isinstance(cats, list) or len(cats) != n_features:
        raise TreeLearnValueError(f"JSON model: categories must be a list with one entry per feature ({n_features})")
    categories = []
    for j, c in enumerate(cats):
        if c is None:
            categories.append(None)
            continue
        values = _label_list(c, f"categories of column {j}")
        if len(values) == 0:
            raise TreeLearnValueError(f"JSON model: categorical column {j} has no categories")
        keys = [(type(x).__name__, x) for x in values]
        if len(set(keys)) != len(keys) or len(set(values)) != len(values):
            raise TreeLearnValueError(f"JSON model: categorical column {j} lists a category twice")
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        categories.append(arr)
    names = doc["feature_names"]
    if names is not None:
        if not isinstance(names, list) or len(names) != n_features or not all(type(s) is str for s in names):
            raise TreeLearnValueError(f"JSON model: feature_names must be null or {n_features} strings")
    classes_list = _label_list(doc["classes"], "classes")
    if len(classes_list) < 1:
        raise TreeLearnValueError("JSON model: classes must not be empty")
    if len(set((type(x).__name__, x) for x in classes_list)) != len(classes_list):
        raise TreeLearnValueError("JSON model: classes lists a class twice")
    classes = _classes_array(classes_list, doc["classes_dtype"])
    nodes = doc["nodes"]
    if not isinstance(nodes, dict):
        raise TreeLearnValueError("JSON model: 'nodes' must be an object of per-node arrays")
    missing = [k for k in _NODE_KEYS if k not in nodes]
    if missing:
        raise TreeLearnValueError(f"JSON model: nodes is missing the array(s) {', '.join(missing)}")
    unknown = sorted(set(nodes) - set(_NODE_KEYS) - set(_OPTIONAL_NODE_KEYS))
    if unknown:
        raise TreeLearnValueError(f"JSON model: nodes has unknown array(s) {', '.join(map(str, unknown))}")
    left = _int_list(nodes["children_left"], "children_left", n)
    right = _int_list(nodes["children_right"], "children_right", n)
    feature = _int_list(nodes["feature"], "feature", n)
    kind = _int_list(nodes["kind"], "kind", n)
    raw_thr = nodes["threshold"]
    inf_at = [i for i, x in enumerate(raw_thr) if x == "inf"] if isinstance(raw_thr, list) else []
    if inf_at:
        raw_thr = [0.0 if x == "inf" else x for x in raw_thr]
    threshold = _float_list(raw_thr, "threshold", n)
    threshold[inf_at] = np.inf  # Tree allows it at numeric splits only
    missing_left = None
    if "missing_go_to_left" in nodes:
        missing_left = _int_list(nodes["missing_go_to_left"], "missing_go_to_left", n)
        if np.any((missing_left != 0) & (missing_left != 1)):
            raise TreeLearnValueError("JSON model: missing_go_to_left must hold 0 (right) or 1 (left)")
    n_node_samples = _int_list(nodes["n_node_samples"], "n_node_samples", n)
    impurity = _float_list(nodes["impurity"], "impurity", n)
    rows = nodes["value"]
    if not isinstance(rows, list) or len(rows) != n:
        raise TreeLearnValueError(f"JSON model: value must be a list of {n} rows (one per node)")
    k = len(classes_list)
    for i, row in enumerate(rows):
        if type(row) is not list or len(row) != k:
            raise TreeLearnValueError(f"JSON model: value row {i} must be a list of {k} numbers (one per class)")
    value = _float_list(list(itertools.chain.from_iterable(rows)), "value", n * k).reshape(n, k)
    # structure: -1 marks a leaf, anything else must be a node index (Tree checks the rest)
    for a, what in ((left, "children_left"), (right, "children_right")):
        if np.any((a < 0) & (a != LEAF)) or np.any(a >= n):
            raise TreeLearnValueError(f"JSON model: {what} holds an index outside -1..{n - 1}")
    if np.any((kind != -1) & (kind != NUMERIC) & (kind != CATEGORICAL)):
        raise TreeLearnValueError("JSON model: kind must be -1 (leaf), 0 (x >= t) or 1 (x == category)")
    internal = left >= 0
    if np.any(kind[internal] < 0):
        raise TreeLearnValueError("JSON model: an internal node has kind -1")
    if np.any(value < 0) or np.any(n_node_samples < 0):
        raise TreeLearnValueError("JSON model: value and n_node_samples must be non-negative")
    with np.errstate(over="ignore"):
        row_sums = value.sum(axis=1)
        total = row_sums.sum()
    if not np.isfinite(total):
        # a node's counts summing to infinity would give probabilities 0/inf (rows of zeros)
        bad = int(np.argmax(~np.isfinite(row_sums))) if not np.all(np.isfinite(row_sums)) else None
        where = f" (node {bad})" if bad is not None else ""
        raise TreeLearnValueError(
            f"JSON model: the class counts in value are too large{where}: their sum overflows float64"
        )
    schema = ColumnSchema(categories=categories, feature_names=names,
                          missing=_missing_columns(doc.get("missing_columns"), n_features))
    fields = dict(children_left=left, children_right=right, feature=feature, threshold=threshold, kind=kind,
                  value=value, n_node_samples=n_node_samples, impurity=impurity, classes=classes, schema=schema,
                  missing_go_to_left=missing_left)
    return fields, doc.get("metadata")
