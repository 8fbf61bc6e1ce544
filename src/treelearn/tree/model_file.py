"""Reading a JSON model: the file (its size checked before it is read), the document (bounded
before it is parsed) and the fields of the Tree it describes (every one checked).

A model file comes from anywhere, so reading one must cost no more than its size allows: the
file's bytes are capped (``max_bytes``), the number of JSON values and of containers (lists and
objects) it may hold is capped in proportion (:func:`check_budget`, a count of separators before
anything is parsed: a file of a quarter-gigabyte of ``{}`` once took 5 GB), the parse runs in the
standard library's C scanner with no Python hook per literal (numbers are checked afterwards, per
array, by numpy), and every failure, ``MemoryError`` included, is a :class:`TreeLearnValueError`
of one line naming the problem. :mod:`treelearn.tree.formats` writes what this reads.
"""
from __future__ import annotations

import gc
import itertools
import json
import math
import numbers
import re
import sys
from typing import Any

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree._nodes import CATEGORICAL, LEAF, NUMERIC

__all__ = ["read_json", "read_json_file", "read_model_file", "check_budget", "show_value", "JSON_FORMAT",
           "JSON_VERSION", "MAX_JSON_SIZE", "MAX_INT_DIGITS", "MAX_CLASSES_BYTES", "MAX_UNUSED_LABEL_WIDTH",
           "BYTES_PER_VALUE", "BYTES_PER_CONTAINER"]

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
#: the JSON values (numbers, strings, lists, objects, keys) a document may hold: one per this many
#: bytes of the size cap (a model as :func:`tree_to_json` writes it takes at least 3 bytes per
#: value: a digit and ", ")
BYTES_PER_VALUE = 3
#: the lists and objects a document may hold: one per this many bytes of the size cap (a model
#: writes one list per node, ``value``'s row, of at least 12 bytes)
BYTES_PER_CONTAINER = 64
#: the budgets' floor, so that a small cap still reads a small model
_MIN_BUDGET = 4096


def check_budget(text, max_size: int) -> None:
    """Refuse a document holding more JSON values or containers than ``max_size`` allows, before
    it is parsed. Counts bytes, not tokens: every value but the first of a container follows a
    ``,`` and every container opens with ``[`` or ``{``, so ``,`` + ``[`` + ``{`` + 1 bounds the
    values from above (separators inside strings count too: the bound errs on the safe side)."""
    count = text.count
    if isinstance(text, str):
        containers, commas = count("[") + count("{"), count(",")
    else:
        containers, commas = count(b"[") + count(b"{"), count(b",")
    most_containers = max(_MIN_BUDGET, max_size // BYTES_PER_CONTAINER)
    most_values = max(_MIN_BUDGET, max_size // BYTES_PER_VALUE)
    if containers > most_containers:
        raise TreeLearnValueError(
            f"JSON model holds {containers} lists and objects; at most {most_containers} are read for a size cap "
            f"of {max_size} bytes (one per {BYTES_PER_CONTAINER} bytes)"
        )
    if commas + containers + 1 > most_values:
        raise TreeLearnValueError(
            f"JSON model holds up to {commas + containers + 1} values; at most {most_values} are read for a size "
            f"cap of {max_size} bytes (one per {BYTES_PER_VALUE} bytes)"
        )


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_REQUIRED = ("format", "version", "n_nodes", "n_features", "feature_names", "categories", "classes",
             "classes_dtype", "nodes")
_NODE_KEYS = ("children_left", "children_right", "feature", "kind", "threshold", "value", "n_node_samples",
              "impurity")
_OPTIONAL_NODE_KEYS = ("missing_go_to_left", "weighted_n_node_samples")
_U_DTYPE = re.compile(r"^[<>|=]?U(\d{1,7})$")
_NUM_DTYPES = {"bool", "|b1"} | {e + k + s for e in "<>|=" for k, s in
                                 (("i", "1"), ("i", "2"), ("i", "4"), ("i", "8"), ("u", "1"), ("u", "2"),
                                  ("u", "4"), ("u", "8"), ("f", "2"), ("f", "4"), ("f", "8"))}


def _reject_constant(name):
    raise TreeLearnValueError(f"JSON model contains {name}; only finite numbers are allowed")


def _short(exc: BaseException, limit: int = 200) -> str:
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def show_value(value, limit: int = 80) -> str:
    """A value from a (possibly hostile) file, quoted and cut to one short line for an error."""
    return _short(repr(value), limit)


def _parse_int(literal: str) -> int:
    # bound the literal's length before int() (its cost grows quadratically with the digits)
    digits = len(literal) - (literal[:1] == "-")
    if digits > MAX_INT_DIGITS:
        raise _too_many_digits(digits)
    return int(literal)


def _too_many_digits(digits) -> TreeLearnValueError:
    return TreeLearnValueError(f"JSON model has an integer literal of {digits} digits; at most {MAX_INT_DIGITS} "
                               "are read")


def _int_hook():
    """``None`` (the C scanner's own conversion, no Python call per literal) when Python's limit
    on the digits of ``int(str)`` already bounds the literals (the default, 4300); otherwise
    (the limit raised or lifted) the Python check of :func:`_parse_int`."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return None if 0 < limit <= MAX_INT_DIGITS else _parse_int


def _parsed(text: str):
    """The document parsed by the C scanner: names for every failure; a literal that
    overflows a float64 (``1e999``) is found afterwards (:func:`_check_finite`)."""
    # the cyclic collector off while the parser builds containers (none of them cyclic): each of
    # its passes walks every container built so far, and 400,000 small objects took 2.4 s instead
    # of 0.8 s; it is put back as it was (a user who turned it off keeps it off)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_int_hook(),
                          object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise TreeLearnValueError(f"not a JSON document: {_short(exc)}") from None
    except TreeLearnValueError:
        raise
    except (ValueError, OverflowError) as exc:  # a literal no Python number can hold
        m = re.search(r"has (\d+) digits", str(exc))
        if m:  # Python's own limit on int(str)
            raise _too_many_digits(m.group(1)) from None
        raise TreeLearnValueError(f"not a readable JSON document: {_short(exc)}") from None
    except RecursionError:
        raise TreeLearnValueError("JSON model is nested too deeply") from None
    except MemoryError:
        raise TreeLearnValueError(f"JSON model of {len(text)} characters needs more memory than is available "
                                  "to be read") from None
    finally:
        if collecting:
            gc.enable()


def _check_finite(value, what: str) -> None:
    """Every number in ``value`` (the metadata: any JSON) finite; iterative (any depth), a list
    at a time (its types counted in C)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if not isinstance(v, list):
            v = [v]
        types = set(map(type, v))
        if float in types and not all(map(math.isfinite, [x for x in v if type(x) is float])):
            raise TreeLearnValueError(f"JSON model has a number in its {what} too large for a float64")
        if list in types or dict in types:
            stack.extend([x for x in v if type(x) is list or type(x) is dict])


def _no_duplicates(pairs):
    # called once per JSON object: the dict built in C, the key found only when one repeats
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise TreeLearnValueError(f"JSON model has the key {show_value(k)} twice in one object")
            seen.add(k)
    return d


#: a literal the parser may have read as an infinite float (past 1.8e308): an exponent of 100 or
#: more, or else a run of 100 digits (an exponent below 100 needs 209 of them). It matches inside
#: strings too: then the walk of :func:`_check_finite` decides.
_MAY_OVERFLOW = re.compile(r"[eE]\+?0*[1-9][0-9]{2}|[0-9]{100}")


def _int_list(v, what: str, n: int) -> np.ndarray:
    if not isinstance(v, list):
        raise TreeLearnValueError(f"JSON model: {what} must be a list, got {type(v).__name__}")
    if len(v) != n:
        raise TreeLearnValueError(f"JSON model: {what} has {len(v)} entries, expected {n} (n_nodes)")
    if not set(map(type, v)) <= {int}:  # one pass in C; the culprit named only on failure
        x = next(x for x in v if type(x) is not int)
        raise TreeLearnValueError(f"JSON model: {what} must hold integers, found {type(x).__name__} {x!r:.40}")
    try:
        return np.array(v, dtype=np.int64)
    except OverflowError:
        raise TreeLearnValueError(f"JSON model: {what} holds an integer out of the int64 range") from None


def _float_list(v, what: str, n: int) -> np.ndarray:
    if not isinstance(v, list):
        raise TreeLearnValueError(f"JSON model: {what} must be a list, got {type(v).__name__}")
    if len(v) != n:
        raise TreeLearnValueError(f"JSON model: {what} has {len(v)} entries, expected {n}")
    if not set(map(type, v)) <= {int, float}:
        x = next(x for x in v if type(x) not in (int, float))
        raise TreeLearnValueError(f"JSON model: {what} must hold numbers, found {type(x).__name__} {x!r:.40}")
    try:
        a = np.array(v, dtype=np.float64)
    except OverflowError:
        raise TreeLearnValueError(f"JSON model: {what} holds a number too large for a float64") from None
    if not np.all(np.isfinite(a)):  # the parser's infinity: a literal such as 1e999
        raise TreeLearnValueError(f"JSON model: {what} holds a number too large for a float64")
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
            raise TreeLearnValueError(f"JSON model: {what} holds a number too large for a float64")
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
        raise TreeLearnValueError(f"JSON model: unsupported classes_dtype {show_value(dtype)}")
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
        check_budget(text, max_size)
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TreeLearnValueError(f"JSON model is not valid UTF-8: {_short(exc)}") from None
        except MemoryError:
            raise TreeLearnValueError("JSON model needs more memory than is available to be read") from None
    if isinstance(text, str):
        if len(text) > max_size:
            raise TreeLearnValueError(f"JSON model is too large ({len(text)} characters > {max_size})")
        check_budget(text, max_size)
        doc = _parsed(text)
        if isinstance(doc, dict) and _MAY_OVERFLOW.search(text):  # a walk of the metadata only when needed
            _check_finite(doc.get("metadata"), "metadata")
    elif isinstance(text, dict):
        doc = text
    else:
        raise TreeLearnValueError(f"a JSON model must be a JSON string, bytes or dict, got {type(text).__name__}")
    try:
        return _tree_from_doc(doc)
    except RecursionError:
        raise TreeLearnValueError("JSON model is nested too deeply") from None
    except MemoryError:
        raise TreeLearnValueError("JSON model needs more memory than is available to be read") from None


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


def _target_of(doc) -> tuple[str, Any, int]:
    """``(task, classes, columns of value)``: a classification tree's classes, or a regression
    tree's (``task`` "regression": ``classes`` null, ``n_outputs`` columns of means). A file
    without ``task`` (every file written before regression trees) is a classification tree."""
    task = doc.get("task", "classification")
    if task not in ("classification", "regression"):
        raise TreeLearnValueError(f"JSON model: task must be 'classification' or 'regression', got {show_value(task)}")
    if task == "regression":
        k = doc.get("n_outputs")
        if type(k) is not int or k < 1 or doc["classes"] is not None:
            raise TreeLearnValueError("JSON model: a regression tree needs n_outputs (a positive integer) and "
                                      "classes null")
        return task, None, k
    classes_list = _label_list(doc["classes"], "classes")
    if len(classes_list) < 1:
        raise TreeLearnValueError("JSON model: classes must not be empty")
    if len(set((type(x).__name__, x) for x in classes_list)) != len(classes_list):
        raise TreeLearnValueError("JSON model: classes lists a class twice")
    return task, _classes_array(classes_list, doc["classes_dtype"]), len(classes_list)


def _node_weights(nodes: dict, n: int) -> np.ndarray:
    """A regression tree's ``weighted_n_node_samples`` (required, non-negative)."""
    if "weighted_n_node_samples" not in nodes:
        raise TreeLearnValueError("JSON model: a regression tree needs nodes.weighted_n_node_samples")
    weighted = _float_list(nodes["weighted_n_node_samples"], "weighted_n_node_samples", n)
    if np.any(weighted < 0):
        raise TreeLearnValueError("JSON model: weighted_n_node_samples must be non-negative")
    return weighted


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
    unknown = sorted(set(doc) - set(_REQUIRED) - {"metadata", "missing_columns", "task", "n_outputs"})
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
        if len(set(names)) != n_features:  # columns are matched by name: a repeat would route the wrong one
            seen: set = set()
            twice = next(s for s in names if s in seen or seen.add(s))
            raise TreeLearnValueError(f"JSON model: feature_names lists {show_value(twice)} twice")
    task, classes, k = _target_of(doc)
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
    for i, row in enumerate(rows):
        if type(row) is not list or len(row) != k:
            raise TreeLearnValueError(f"JSON model: value row {i} must be a list of {k} numbers (one per "
                                      f"{'class' if classes is not None else 'output'})")
    value = _float_list(list(itertools.chain.from_iterable(rows)), "value", n * k).reshape(n, k)
    weighted = _node_weights(nodes, n) if task == "regression" else None
    # structure: -1 marks a leaf, anything else must be a node index (Tree checks the rest)
    for a, what in ((left, "children_left"), (right, "children_right")):
        if np.any((a < 0) & (a != LEAF)) or np.any(a >= n):
            raise TreeLearnValueError(f"JSON model: {what} holds an index outside -1..{n - 1}")
    if np.any((kind != -1) & (kind != NUMERIC) & (kind != CATEGORICAL)):
        raise TreeLearnValueError("JSON model: kind must be -1 (leaf), 0 (x >= t) or 1 (x == category)")
    internal = left >= 0
    if np.any(kind[internal] < 0):
        raise TreeLearnValueError("JSON model: an internal node has kind -1")
    if (task == "classification" and np.any(value < 0)) or np.any(n_node_samples < 0):
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
    if task == "regression":
        fields.update(task=task, weighted_n_node_samples=weighted)
    return fields, doc.get("metadata")
