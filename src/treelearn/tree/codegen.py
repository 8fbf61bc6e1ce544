"""Trees that ship: a tree as Python, C or SQL source (and ONNX, :mod:`treelearn.tree.onnx_export`)
with no treelearn dependency, predicting exactly as ``Tree.predict`` does.

:func:`export_code` writes

* ``"python"``: a module of plain Python (standard library only) with ``predict(rows)``,
  ``predict_proba(rows)``, ``predict_row(x)`` and ``predict_proba_row(x)`` (``predict`` is the
  ``name`` argument) and the tables ``FEATURES`` and ``CLASSES``. A row is a sequence of the raw
  values in ``FEATURES`` order: numbers for numeric columns, the categories themselves (strings,
  as in training) for categorical ones; ``None`` or NaN (or ``pandas.NA``) is missing.
* ``"c"``: C99, one prediction function ``int predict(const double *x, double *proba)`` that
  returns the class index (into the generated ``predict_classes`` table) and, when ``proba``
  is not NULL, writes the class probabilities. ``x`` holds one row of doubles: numbers for
  numeric columns; for a categorical column the category's **code**, its index in the
  generated table ``predict_categories_<j>`` (``predict_category_code(j, text)`` looks a
  category up by its text, ``str(value)``, and gives -1 for a value not seen in training); NaN
  is missing (``#include <math.h>``'s ``NAN``). Thresholds are C99 hexadecimal floats: the
  compiler reads the tree's float64 exactly.
* ``"sql"``: one ``CASE`` expression (SQLite, PostgreSQL, ...) giving the class label, a ``WHEN``
  per leaf with the tests of its path; with
  ``table=...`` a ``SELECT`` of it. Numeric columns must hold numbers (REAL or INTEGER), NULL
  is missing, categorical columns hold the categories (TEXT for strings). A threshold is written
  as a quotient of two integers that every engine computes exactly (SQLite's reading of decimal
  literals is not always correctly rounded), its decimal value in a comment.
* ``"onnx"``: the bytes of an ONNX model (:mod:`treelearn.tree.onnx_export`).

Every node routes as the Tree does: ``x >= t`` (or ``x == category``) goes right, a missing
value goes where the node's ``missing_go_to_left`` says, a category not seen in training goes
left. Feature names, categories and class labels only ever appear as escaped literals (Python
``ascii()``, C octal escapes, SQL doubled quotes), so no name can inject code; C and SQL refuse
NUL characters, every language refuses strings that are not valid Unicode.
"""
from __future__ import annotations

import keyword
import math
import re
from fractions import Fraction

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.tree._nodes import CATEGORICAL
from treelearn.tree.formats import as_tree

__all__ = ["export_code", "LANGUAGES"]

LANGUAGES = ("python", "c", "sql", "onnx")
#: deeper trees are written as a node table (Python) or with goto (C) instead of nested ifs
#: (Python's parser allows 100 levels of indentation)
MAX_NESTED_DEPTH = 60
#: SQLite refuses expressions nested deeper than 1000 (a leaf's AND of its path's tests is one
#: level per test, and a test a few)
MAX_SQL_DEPTH = 400
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ---------------------------------------------------------------------------------------- the tree, flattened
class _Flat:
    """What every language needs of a tree, in plain Python values: per node its children,
    feature, kind, threshold or category, missing direction, and per leaf its class and
    probabilities (computed as ``Tree.predict_proba`` computes them)."""

    def __init__(self, tree):
        self.tree = tree
        self.left = tree.children_left.tolist()
        self.right = tree.children_right.tolist()
        self.feature = tree.feature.tolist()
        self.kind = tree.kind.tolist()
        self.threshold = tree.threshold.tolist()
        self.missing_left = tree.missing_go_to_left.astype(bool).tolist()
        self.klass = tree.leaf_class_index().tolist()
        v = tree.value
        tot = v.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.proba = np.where(tot > 0, v / np.where(tot > 0, tot, 1), 1.0 / v.shape[1]).tolist()
        self.classes = [_plain(c, "class label") for c in tree.classes.tolist()]
        self.names = [tree.schema.column_name(j) for j in range(tree.n_features)]
        self.categories = [None if c is None else [_plain(v, "category") for v in c.tolist()]
                           for c in tree.schema.categories]
        self.depth = tree.depth
        self.n_nodes = tree.node_count

    def is_leaf(self, node: int) -> bool:
        return self.left[node] < 0

    def category(self, node: int):
        return self.categories[self.feature[node]][int(self.threshold[node])]

    def test(self, node: int):
        """The node's test in the raw values: ``("ge", t)`` (a numeric column), ``("eq", v)`` (a
        category), or ``("in", values, unseen)`` for a threshold on a categorical column's codes
        (the continuous solver's "missing or not" split): the categories whose code is >= t, and
        whether a category not seen in training (code -1) is >= t too."""
        j, t = self.feature[node], self.threshold[node]
        cats = self.categories[j]
        if self.kind[node] == CATEGORICAL:
            return ("eq", self.category(node))
        if cats is None:
            return ("ge", t)
        return ("in", [c for code, c in enumerate(cats) if code >= t], -1 >= t)

    def leaves(self) -> list[int]:
        return [i for i in range(self.n_nodes) if self.left[i] < 0]


def _plain(v, what: str):
    """A label or category as a plain Python str, int, float or bool (numpy scalars unwrapped)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, str):
        v = str(v)
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise TreeLearnValueError(f"a {what} is not valid Unicode text (a lone surrogate): {v!r}") from None
        return v
    if isinstance(v, (bool, int)) or (isinstance(v, float) and math.isfinite(v)):
        return v
    raise TreeLearnValueError(f"a {what} of type {type(v).__name__} ({v!r:.40}) cannot be written as code: "
                              "labels and categories must be strings, integers, finite floats or booleans")


def _check_identifier(name: str, language: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise TreeLearnValueError(f"name must be a {language} identifier (letters, digits and _), got {name!r}")
    return name


# ---------------------------------------------------------------------------------------- Python
def _py_literal(v) -> str:
    """A Python literal of a plain value: ASCII only (``ascii()`` escapes everything else)."""
    if isinstance(v, str):
        return ascii(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else f"float({repr(str(v))})"
    return repr(v)


def _py_condition(flat: _Flat, node: int) -> str:
    """The Python test that sends a row right at ``node`` (the missing direction included)."""
    j = flat.feature[node]
    test = flat.test(node)
    if test[0] == "eq":
        test = f"x[{j}] == {_py_literal(test[1])}"
    elif test[0] == "ge":
        test = f"float(x[{j}]) >= {_py_literal(test[1])}"
    else:  # membership, as the Tree's dictionary look-up of a category
        values, unseen = test[1], test[2]
        others = [c for c in flat.categories[j] if c not in values]
        listed = ", ".join(_py_literal(c) for c in (others if unseen else values))
        test = f"x[{j}] {'not in' if unseen else 'in'} {{{listed}}}" if listed else ("True" if unseen else "False")
    if flat.missing_left[node]:
        return f"not _missing(x[{j}]) and {test}"
    return f"_missing(x[{j}]) or {test}"


def _py_nested(flat: _Flat) -> list[str]:
    lines = ["def _leaf(x):", '    """The node id of the leaf row ``x`` reaches."""']
    stack = [(0, 1)]
    while stack:  # preorder; an else line is pushed as a pseudo node
        node, depth = stack.pop()
        pad = "    " * depth
        if isinstance(node, str):
            lines.append(pad + node)
            continue
        if flat.is_leaf(node):
            lines.append(f"{pad}return {node}")
            continue
        lines.append(f"{pad}if {_py_condition(flat, node)}:")
        stack.append((flat.left[node], depth + 1))
        stack.append(("else:", depth))
        stack.append((flat.right[node], depth + 1))
    return lines


def _py_table(flat: _Flat) -> list[str]:
    rows = []
    for node in range(flat.n_nodes):
        if flat.is_leaf(node):
            rows.append("    None,")
            continue
        test = flat.test(node)
        if test[0] == "in":  # as "not in" the other categories when unseen ones go right too
            others = [c for c in flat.categories[flat.feature[node]] if c not in test[1]]
            test = ("out", others) if test[2] else ("in", test[1])
            value = "frozenset({" + ", ".join(_py_literal(c) for c in test[1]) + "})"
        else:
            value = _py_literal(test[1])
        rows.append(f"    ({flat.feature[node]}, {test[0]!r}, {value}, {flat.missing_left[node]}, "
                    f"{flat.left[node]}, {flat.right[node]}),")
    return ["# per node: (feature, test, threshold / category / categories, missing goes left, left, right); "
            "None at a leaf",
            "_NODES = (", *rows, ")", "", "",
            "def _leaf(x):",
            '    """The node id of the leaf row ``x`` reaches."""',
            "    node = 0",
            "    while _NODES[node] is not None:",
            "        j, test, value, missing_left, left, right = _NODES[node]",
            "        v = x[j]",
            "        if _missing(v):",
            "            node = left if missing_left else right",
            "            continue",
            "        if test == 'ge':",
            "            go_right = float(v) >= value",
            "        elif test == 'eq':",
            "            go_right = v == value",
            "        else:",
            "            go_right = (v in value) == (test == 'in')",
            "        node = right if go_right else left",
            "    return node"]


def _python(flat: _Flat, name: str) -> str:
    name = _check_identifier(name, "Python")
    leaves = flat.leaves()
    body = _py_nested(flat) if flat.depth <= MAX_NESTED_DEPTH else _py_table(flat)
    classes = ", ".join(_py_literal(c) for c in flat.classes)
    features = ", ".join(_py_literal(n) for n in flat.names)
    leaf_class = ", ".join(f"{i}: {flat.klass[i]}" for i in leaves)
    leaf_proba = "\n".join(f"    {i}: ({', '.join(repr(p) for p in flat.proba[i])},)," for i in leaves)
    return "\n".join([
        '"""A decision tree exported by treelearn: it predicts exactly as the tree\'s ``predict`` and',
        "``predict_proba``. Plain Python, no dependency.",
        "",
        "A row ``x`` is a sequence of the raw values in ``FEATURES`` order: numbers for numeric",
        "columns, the categories themselves for categorical ones; None or NaN is a missing value.",
        '"""',
        "",
        f"FEATURES = [{features}]",
        f"CLASSES = [{classes}]",
        "# per leaf (node id): the index of its class in CLASSES, and the class probabilities",
        f"_LEAF_CLASS = {{{leaf_class}}}",
        "_LEAF_PROBA = {",
        leaf_proba,
        "}",
        "",
        "",
        "def _missing(v):",
        "    if v is None:",
        "        return True",
        "    try:",
        "        return bool(v != v)  # NaN",
        "    except TypeError:  # pandas.NA",
        "        return True",
        "",
        "",
        *body,
        "",
        "",
        f"def {name}_row(x):",
        '    """The class of one row."""',
        "    return CLASSES[_LEAF_CLASS[_leaf(x)]]",
        "",
        "",
        f"def {name}_proba_row(x):",
        '    """The class probabilities of one row (in CLASSES order)."""',
        "    return _LEAF_PROBA[_leaf(x)]",
        "",
        "",
        f"def {name}(rows):",
        f"    return [{name}_row(x) for x in rows]",
        "",
        "",
        f"def {name}_proba(rows):",
        f"    return [{name}_proba_row(x) for x in rows]",
        ""])


# ---------------------------------------------------------------------------------------- C
def _c_string(s: str) -> str:
    """A C string literal: printable ASCII as is (but ``"``, ``\\`` and ``?``, against trigraphs),
    every other byte of the UTF-8 text as a three-digit octal escape."""
    if "\x00" in s:
        raise TreeLearnValueError(f"C strings cannot hold a NUL character: {s!r}")
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 32 <= b < 127 and ch not in '"\\?' else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _c_double(t: float) -> str:
    if math.isinf(t):
        return "INFINITY" if t > 0 else "-INFINITY"
    return float(t).hex()


def _c_condition(flat: _Flat, node: int) -> str:
    j = flat.feature[node]
    if flat.kind[node] == CATEGORICAL:
        test = f"x[{j}] == {int(flat.threshold[node])}.0"  # the category's code
    else:
        test = f"x[{j}] >= {_c_double(flat.threshold[node])}"
    # a NaN compares false: the left branch unless missing values go right
    return test if flat.missing_left[node] else f"isnan(x[{j}]) || {test}"


def _c_body(flat: _Flat) -> list[str]:
    if flat.depth > MAX_NESTED_DEPTH:  # flat: one label per node
        lines = []
        for node in range(flat.n_nodes):
            label = f"n{node}: " if node else ""  # nothing jumps to the root
            if flat.is_leaf(node):
                lines.append(f"{label}leaf = {node}; goto done;")
            else:
                lines.append(f"{label}if ({_c_condition(flat, node)}) goto n{flat.right[node]}; "
                             f"else goto n{flat.left[node]};")
        return ["    " + ln for ln in lines] + ["done:"]
    lines, stack = [], [(0, 1)]
    while stack:
        node, depth = stack.pop()
        pad = "    " * depth
        if isinstance(node, str):
            lines.append(pad + node)
        elif flat.is_leaf(node):
            lines.append(f"{pad}leaf = {node};")
        else:
            lines.append(f"{pad}if ({_c_condition(flat, node)}) {{")
            stack += [("}", depth), (flat.left[node], depth + 1), ("} else {", depth), (flat.right[node], depth + 1)]
    return lines


def _c(flat: _Flat, name: str) -> str:
    name = _check_identifier(name, "C")
    C, F = len(flat.classes), len(flat.names)
    leaves = flat.leaves()
    row_of = {leaf: r for r, leaf in enumerate(leaves)}
    tables = [f"const char *const {name}_classes[{C}] = {{{', '.join(_c_string(str(c)) for c in flat.classes)}}};",
              f"const char *const {name}_features[{F}] = {{{', '.join(_c_string(n) for n in flat.names)}}};"]
    lookups = []
    for j, cats in enumerate(flat.categories):
        if cats is None:
            continue
        tables.append(f"const char *const {name}_categories_{j}[{len(cats)}] = "
                      f"{{{', '.join(_c_string(str(c)) for c in cats)}}};")
        lookups.append(f"    if (feature == {j}) {{ table = {name}_categories_{j}; n = {len(cats)}; }}")
    proba = ",\n".join("    {" + ", ".join(_c_double(p) for p in flat.proba[leaf]) + "}" for leaf in leaves)
    row = ", ".join(str(row_of.get(i, -1)) for i in range(flat.n_nodes))
    klass = ", ".join(str(flat.klass[i] if i in row_of else -1) for i in range(flat.n_nodes))
    return "\n".join([
        "/* A decision tree exported by treelearn: predicts exactly as the tree's predict and",
        "   predict_proba. C99; compile with -lm (isnan). x: one row of doubles in the order of the",
        f"   {name}_features table: numbers for numeric columns, category codes for categorical",
        f"   ones ({name}_category_code), NaN for a missing value. */",
        "#include <math.h>",
        "#include <string.h>",
        "",
        *tables,
        f"static const int {name}_leaf_class[{flat.n_nodes}] = {{{klass}}};",
        f"static const int {name}_leaf_row[{flat.n_nodes}] = {{{row}}};",
        f"static const double {name}_leaf_proba[{len(leaves)}][{C}] = {{",
        proba,
        "};",
        "",
        "/* the code of a category of column `feature` given as text: its index in the column's",
        "   table; -1 for a text not seen in training or a column that is not categorical */",
        f"int {name}_category_code(int feature, const char *text)",
        "{",
        "    const char *const *table = 0;",
        "    int n = 0, i;",
        "    (void)feature;",
        *lookups,
        "    for (i = 0; i < n; ++i)",
        "        if (strcmp(table[i], text) == 0) return i;",
        "    return -1;",
        "}",
        "",
        "/* the index of the class of row x (into the classes table); with proba != NULL the class",
        "   probabilities are written there */",
        f"int {name}(const double *x, double *proba)",
        "{",
        "    int leaf = 0, c;",
        *_c_body(flat),
        "    if (proba)",
        f"        for (c = 0; c < {C}; ++c) proba[c] = {name}_leaf_proba[{name}_leaf_row[leaf]][c];",
        f"    return {name}_leaf_class[leaf];",
        "}",
        ""])


# ---------------------------------------------------------------------------------------- SQL
def _sql_string(s: str) -> str:
    if "\x00" in s:
        raise TreeLearnValueError(f"SQL strings cannot hold a NUL character: {s!r}")
    return "'" + s.replace("'", "''") + "'"


def _sql_identifier(s: str) -> str:
    if "\x00" in s:
        raise TreeLearnValueError(f"SQL identifiers cannot hold a NUL character: {s!r}")
    return '"' + s.replace('"', '""') + '"'


def _sql_literal(v) -> str:
    if isinstance(v, str):
        return _sql_string(v)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return _sql_number(float(v))


def _sql_number(t: float) -> str:
    """An exact SQL expression of the float64 ``t``: ``m * 2^k`` or ``m / 2^k`` with an integer
    ``|m| < 2**53`` and steps of at most ``2**52`` (integers below 2**53 are read exactly, and
    products and quotients by powers of two are exact), its decimal value in a comment."""
    f = Fraction(t)
    num, den = f.numerator, f.denominator
    shift = 0
    if den == 1 and num:
        shift = (num & -num).bit_length() - 1  # num = m * 2^shift, |m| < 2**53
        num >>= shift
    if den == 1 and shift == 0:
        return f"{num}.0"
    parts, k, op = [f"{num}.0"], (shift if den == 1 else den.bit_length() - 1), ("*" if den == 1 else "/")
    while k > 0:
        step = min(k, 52)
        parts.append(f"{op} {2 ** step}.0")
        k -= step
    return f"({' '.join(parts)} /* {t!r} */)"


def _sql_condition(flat: _Flat, node: int, right: bool) -> str:
    """The SQL test that sends a row to the ``right`` (or left) child of ``node``, the missing
    direction included (NULL makes a comparison NULL, which a WHEN treats as false)."""
    j = flat.feature[node]
    col = _sql_identifier(flat.names[j])
    kind = flat.test(node)
    if kind[0] == "eq":
        value = _sql_literal(kind[1])
        test = f"{col} = {value}" if right else f"{col} <> {value}"
    elif kind[0] == "in":  # membership; a category not seen in training goes where code -1 does
        values, unseen = kind[1], kind[2]
        # right: v IN values, or (unseen categories right too) v NOT IN the other categories
        listed = [c for c in flat.categories[j] if c not in values] if unseen else values
        negate = right == unseen
        if listed:
            test = f"{col} {'NOT IN' if negate else 'IN'} ({', '.join(_sql_literal(c) for c in listed)})"
        else:
            test = "1 = 1" if negate else "0 = 1"
    elif math.isinf(kind[1]):  # the missing-only split: no value is >= +inf
        test = "0 = 1" if right else "1 = 1"
    else:
        test = f"{col} {'>=' if right else '<'} {_sql_number(kind[1])}"
    if (not flat.missing_left[node]) == right:  # missing values take this branch
        return f"({col} IS NULL OR {test})"
    # a comparison with NULL is NULL (false); a constant test needs the NULL check spelled out
    return f"({col} IS NOT NULL AND {test})" if test in ("0 = 1", "1 = 1") else test


def _sql(flat: _Flat, name: str, table: str | None) -> str:
    """One CASE with a WHEN per leaf: the conjunction of the tests on its path (a flat CASE: SQL
    parsers refuse CASEs nested a dozen deep, and a chain of ANDs does not deepen their stack)."""
    if flat.depth > MAX_SQL_DEPTH:
        raise TreeLearnValueError(f"the tree has depth {flat.depth}; SQL engines refuse expressions nested "
                                  f"that deep (at most {MAX_SQL_DEPTH} here)")
    whens, stack = [], [(0, [])]
    while stack:  # preorder over (node, tests on its path)
        node, path = stack.pop()
        if flat.is_leaf(node):
            whens.append((path, _sql_literal(flat.classes[flat.klass[node]])))
            continue
        stack.append((flat.right[node], path + [_sql_condition(flat, node, True)]))
        stack.append((flat.left[node], path + [_sql_condition(flat, node, False)]))
    lines = ["CASE"]
    for path, label in whens[:-1]:
        lines.append(f"  WHEN {' AND '.join(path)} THEN {label}")
    lines.append(f"  ELSE {whens[-1][1]}")
    lines.append("END")
    expr = "\n".join(lines)
    if table is None:
        return expr + "\n"
    return f"SELECT\n{expr}\nAS {_sql_identifier(name)}\nFROM {_sql_identifier(table)};\n"


# ---------------------------------------------------------------------------------------- entry
def export_code(est_or_tree, language: str, *, name: str = "predict", table: str | None = None):
    """The tree of a fitted estimator (or a :class:`~treelearn.tree.Tree`) as code with no
    treelearn dependency that predicts exactly as ``predict`` does, missing values and
    categorical splits included (the module docstring describes each language's input).

    Parameters
    ----------
    language : {"python", "c", "sql", "onnx"}
    name : str
        The generated function (``python``, ``c``; also the prefix of C's tables), the column of a
        SQL ``SELECT``, or the ONNX graph's name.
    table : str, optional
        ``sql`` only: a ``SELECT`` of the prediction from this table instead of the bare ``CASE``
        expression.

    Returns
    -------
    str, or bytes for ``onnx`` (a serialized ``onnx.ModelProto``).
    """
    tree = as_tree(est_or_tree)
    if language not in LANGUAGES:
        raise TreeLearnValueError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    if table is not None and language != "sql":
        raise TreeLearnValueError("table applies to language='sql' only")
    if language == "onnx":
        from treelearn.tree.onnx_export import to_onnx

        return to_onnx(tree, name=name).SerializeToString()
    flat = _Flat(tree)
    if language == "python":
        return _python(flat, name)
    if language == "c":
        return _c(flat, name)
    return _sql(flat, name, table)
