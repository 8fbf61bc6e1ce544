"""The import rules of docs/architecture.md, checked on the source (no import is executed).

Every ``import`` in ``src/treelearn`` (module level and inside functions; ``if TYPE_CHECKING:``
blocks excepted, they are annotations only) is an edge of the module graph. The graph must have no
cycle, and every edge must go to the same layer or a lower one:

    0 _validation, _scan, _limits,     input and parameter checks (and their compiled scans); limits
      _lazy, _exact                    of a fit; lazy facades; exact sums
    1 criteria, data.*                 impurities; schema, binarization, packed bits
    2 tree.*, distributed.*            the Tree model, its evaluation and formats; Dask plumbing
    3 base, prune.*                    the estimator seam; Tree -> Tree bounds and pruning
    4 learn.*                          the learners, one room each (with its Dask plug-in)
    5 datasets.*, experiments.*, cli, demo, the package __init__ files (facades)

Within the learners, a learner imports another one only where listed in ``ALLOWED_ACROSS``; a
module directly in ``learn/`` (not a room folder, e.g. ``learn/anytime.py``) is shared by every
learner and imports no room. The Dask plumbing (``distributed/``, its facade included) knows no
learner: it imports no room and not the estimator seam.

No module uses a private name of another module: ``from m import _x`` (a private submodule or
compiled binding only from the module's own package) or ``obj._x`` where the module itself does
not define ``_x`` (``self._x``, ``super()._x`` and the names of scikit-learn's estimator protocol
excepted). The C++ headers keep to their rooms: a header is included by name from its own folder
or from ``core/`` (``#include "core/limits.h"``), never with ``../``, and every header lives in
``core/`` or in the room of the one extension that includes it.
"""
from __future__ import annotations

import ast
import bisect
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "treelearn"

LAYERS = [
    ("treelearn._validation", 0),
    ("treelearn._limits", 0),
    ("treelearn._lazy", 0),  # the lazy facades of the package __init__ files
    ("treelearn._scan", 0),  # the compiled scans of the input checks
    ("treelearn._exact", 0),  # exact sums, whatever the order of the rows
    ("treelearn._criteria", 1),
    ("treelearn.criteria", 1),
    ("treelearn.data", 1),
    ("treelearn.tree", 2),
    ("treelearn.base", 3),
    ("treelearn.prune", 3),  # Tree -> Tree: bounds and pruning routines (no learner)
    ("treelearn.learn", 4),
    ("treelearn.datasets", 5),
    ("treelearn.experiments", 5),
    ("treelearn.cli", 5),
    ("treelearn.demo", 5),
    # Dask plumbing (client, row blocks, farmed-out tasks, reports): no learner; the estimator
    # seam hands Dask input to it and the rooms' plug-ins (learn/<room>/sharded.py) build on it
    ("treelearn.distributed", 2),
]
# learner room -> the rooms whose public functions it may use
ALLOWED_ACROSS = {
    "treelearn.learn.pruned": {"treelearn.learn.greedy"},  # grows the greedy tree it prunes
    "treelearn.learn.continuous": {"treelearn.learn.greedy"},  # the greedy tree is its first incumbent
    # OptimalTreeClassifier(solver="continuous"); the greedy tree is the first incumbent
    "treelearn.learn.topk": {"treelearn.learn.continuous", "treelearn.learn.greedy"},
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    mods = {_module_name(p): p for p in PKG.rglob("*.py")}
    for p in list(PKG.rglob("*.pyx")):  # compiled modules are nodes too (they import nothing of ours)
        mods.setdefault(_module_name(p), p)
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: pathlib.Path, name: str, modules) -> set[str]:
    if path.suffix != ".py":
        return set()
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"

    def resolve(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("treelearn"):
                        out.add(resolve(a.name))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    pkg = name if is_pkg else name.rpartition(".")[0]
                    for _ in range(child.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = f"{pkg}.{base}" if base else pkg
                if not base.startswith("treelearn"):
                    continue
                for a in child.names:  # "from pkg import submodule" is an edge to the submodule
                    full = f"{base}.{a.name}"
                    out.add(full if full in modules else resolve(base))
            visit(child)

    visit(tree)
    out.discard(None)
    out.discard(name)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(path, name, mods) for name, path in mods.items()}


def _layer(module: str) -> int | None:
    if module == "treelearn" or (module.count(".") >= 1 and (PKG / module.split(".", 1)[1].replace(".", "/")
                                                           / "__init__.py").exists()):
        return 5  # package __init__ files re-export: a facade above everything
    best = None
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return None if best is None else best[1]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of modules (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = dict.fromkeys(graph, WHITE)
    for start in sorted(graph):
        if color[start] != WHITE:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        color[start] = GREY
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = BLACK
                stack.pop()
                path.pop()
                continue
            if nxt not in color:
                continue
            if color[nxt] == GREY:
                return path[path.index(nxt):] + [nxt]
            if color[nxt] == WHITE:
                color[nxt] = GREY
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def forbidden_edges(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(graph.items()):
        lm = _layer(mod)
        for t in sorted(targets):
            lt = _layer(t)
            if lm is None or lt is None:
                bad.append(f"{mod} -> {t}: module outside the layer table")
            elif lt > lm:
                bad.append(f"{mod} (layer {lm}) -> {t} (layer {lt}): imports upwards")
            elif lm == lt == 4 and is_shared_learner_module(mod) and not is_shared_learner_module(t):
                bad.append(f"{mod} -> {t}: a module every learner shares importing one learner")
            elif lm == lt == 4 and not _same_learner(mod, t) and not is_shared_learner_module(t) and \
                    learner_room(t) not in ALLOWED_ACROSS.get(learner_room(mod), ()):
                bad.append(f"{mod} -> {t}: one learner importing another (not in ALLOWED_ACROSS)")
            if _in_package(mod, "treelearn.distributed") and (_in_package(t, "treelearn.learn")
                                                             or _in_package(t, "treelearn.base")):
                bad.append(f"{mod} -> {t}: the Dask plumbing imports a learner (a room's plug-in supplies it)")
    return bad


def is_shared_learner_module(module: str) -> bool:
    """A module directly in ``learn/`` (a file, not a room folder): what every learner shares."""
    parts = module.split(".")
    return len(parts) == 3 and parts[1] == "learn" and (PKG / "learn" / f"{parts[2]}.py").is_file()


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# ------------------------------------------------------------------ private names (Dask scope)
#: attributes named privately but documented by their owners: a Dask collection's ``_meta`` (its
#: empty pandas / numpy counterpart), ``sys._getframe``, scikit-learn's estimator protocol
THIRD_PARTY_PRIVATE_ATTRS = {"_meta", "_getframe", "_parameter_constraints", "_get_param_names"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str, module: str, modules, is_package: bool = False) -> list[str]:
    """The private names (``_x``, not dunders) ``module`` takes from another module: imported
    (``from m import _x``; a private submodule, a compiled binding, only from the module's own
    package) or read as an attribute of anything but ``self`` / ``cls`` (``est._k_value()``)."""
    own_pkg = module if is_package else module.rpartition(".")[0]
    out = []
    tree = ast.parse(source)
    defined = _defined_private_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = own_pkg
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            if not base.startswith("treelearn"):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if _private(a.name) and not (full in modules and base == own_pkg):
                    out.append(f"{module} line {node.lineno}: imports {a.name} from {base}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in THIRD_PARTY_PRIVATE_ATTRS \
                and node.attr not in defined:
            v = node.value
            if not ((isinstance(v, ast.Name) and v.id in ("self", "cls")) or
                    (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super")):
                out.append(f"{module} line {node.lineno}: reads {ast.unparse(node)}")
    return out


def _defined_private_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: its functions, classes and methods, and what it
    assigns (``_x = ...``, ``self._x = ...``, class attributes)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        out.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        out.add(sub.attr)
    return {n for n in out if _private(n)}


def test_no_private_name_is_used_across_modules():
    mods = _modules()
    bad = []
    for name, path in sorted(mods.items()):
        if path.suffix == ".py":
            bad += private_uses(path.read_text(), name, mods, is_package=path.name == "__init__.py")
    assert bad == [], "give these a public name:\n" + "\n".join(bad)


def test_the_checker_sees_the_dask_rules():
    mods = {"treelearn.learn.greedy._level": None, "treelearn.data._binning": None}
    assert forbidden_edges({"treelearn.distributed": {"treelearn.learn.greedy.sharded"}}) == [
        "treelearn.distributed -> treelearn.learn.greedy.sharded: the Dask plumbing imports a learner "
        "(a room's plug-in supplies it)"]
    assert forbidden_edges({"treelearn.distributed.blocks": {"treelearn.base"}}) != []
    assert forbidden_edges({"treelearn.learn.topk.sharded": {"treelearn.distributed.farm"}}) == []
    src = ("from treelearn.learn.greedy import _level\nfrom treelearn.data import _binning\n"
           "from treelearn.distributed.farm import _wait, run_tasks\n"
           "def f(est, self):\n    self._x = est._k_value() + X._meta + est.__class__ + super()._fit()\n"
           "    return est._x + est._f()\n"
           "def _f():\n    pass\n")
    assert private_uses(src, "treelearn.learn.greedy.sharded", mods) == [
        "treelearn.learn.greedy.sharded line 2: imports _binning from treelearn.data",
        "treelearn.learn.greedy.sharded line 3: imports _wait from treelearn.distributed.farm",
        "treelearn.learn.greedy.sharded line 5: reads est._k_value"]


def learner_room(module: str) -> str:
    """The room a learner module belongs to: ``treelearn.learn.<room>`` (its estimator, search,
    binding, headers and Dask plug-in)."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[1] == "learn" else module


def _same_learner(a: str, b: str) -> bool:
    return learner_room(a) == learner_room(b)


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_imports_follow_the_layers():
    assert forbidden_edges(import_graph()) == []


def test_the_checker_sees_cycles_and_upward_imports():
    g = {"treelearn.tree.tree": {"treelearn.tree.export"}, "treelearn.tree.export": {"treelearn.tree.tree"}}
    assert find_cycle(g) == ["treelearn.tree.export", "treelearn.tree.tree", "treelearn.tree.export"]
    assert find_cycle({"treelearn.a": {"treelearn.b"}, "treelearn.b": set()}) is None
    assert forbidden_edges({"treelearn.data.schema": {"treelearn.base"}}) == [
        "treelearn.data.schema (layer 1) -> treelearn.base (layer 3): imports upwards"]
    assert forbidden_edges({"treelearn.learn.topk.estimator": {"treelearn.learn.minrank.estimator"}}) != []
    assert forbidden_edges({"treelearn.learn.topk.estimator": {"treelearn.learn.topk._topk"}}) == []
    assert forbidden_edges({"treelearn.learn.topk.estimator": {"treelearn.learn.anytime"}}) == []
    assert forbidden_edges({"treelearn.learn.anytime": {"treelearn.learn.topk.estimator"}}) != []


@pytest.mark.parametrize("module", ["treelearn.tree.tree", "treelearn.learn.queries.oracle", "treelearn.base"])
def test_graph_has_the_edges_it_should(module):
    g = import_graph()
    assert module in g and g[module]  # each of these imports something of ours: the parser sees it


def _doc_example():
    text = (SRC.parent / "docs" / "architecture.md").read_text()
    block = text.split("```python\nimport numbers\n", 1)[1].split("```", 1)[0]
    ns: dict = {}
    exec("import numbers\n" + block, ns)  # noqa: S102 - our own documentation
    return ns["BestStumpClassifier"]


def test_worked_example_of_the_architecture_document():
    import numpy as np
    import pandas as pd

    from treelearn import OptimalTreeClassifier

    Stump = _doc_example()
    rng = np.random.default_rng(0)
    for trial in range(6):
        n = 60
        X = pd.DataFrame({"a": rng.normal(size=n), "c": rng.choice(["r", "g", "b"], size=n),
                          "b": rng.integers(0, 2, size=n)})
        y = np.where((X["a"] > 0.3) ^ (rng.random(n) < 0.2), "yes", "no")
        w = rng.integers(0, 3, size=n).astype(float) if trial % 2 else None
        m = Stump().fit(X, y, sample_weight=w)
        ref = OptimalTreeClassifier(max_depth=1).fit(X, y, sample_weight=w)
        weights = np.ones(n) if w is None else w
        err = float(np.sum(weights * (m.predict(X) != y)))
        assert err == float(np.sum(weights * (ref.predict(X) != y)))
        assert m.get_depth() <= 1
    Xb = rng.integers(0, 2, size=(40, 5)).astype(bool)  # the packed fast path
    yb = Xb[:, 2] | Xb[:, 4]
    assert Stump().fit(Xb, yb).score(Xb, yb) == OptimalTreeClassifier(max_depth=1).fit(Xb, yb).score(Xb, yb)


# ---------------------------------------------------------------------------------------- sizes
# Source files stay under about 800 lines and functions under about 120 (docs/architecture.md,
# "Conventions"): past that a module is split by responsibility and a function into named steps.
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
SOURCE_SUFFIXES = (".py", ".pyx", ".pxi", ".pxd", ".h")
# files or functions (path relative to src/treelearn, or "path::function") over a limit, each with
# the reason it may be; an entry that no longer needs its exception fails the test, so the list
# only ever shrinks
SIZE_EXCEPTIONS: dict[str, str] = {}

_CPP_NOT_FUNCTION = re.compile(
    r"^\s*(?:template\s*<.*>\s*)?(?:struct|class|union|enum|namespace|extern)\b|^\s*(?:if|for|while|switch|catch|do|"
    r"else|try)\b", re.S)


def _strip_cpp(text: str) -> str:
    """C++ source with comments, string and character literals and preprocessor lines blanked
    (newlines kept, so positions keep their line numbers)."""
    def blank(m):
        t = m.group()
        return t[0] * 2 if t[0] in "\"'" else "\n" * t.count("\n")

    text = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", blank, text, flags=re.S)
    return re.sub(r"(?m)^[ \t]*#.*(?:\\\n.*)*$", lambda m: "\n" * m.group().count("\n"), text)


def cpp_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each outermost C++ function body: a brace block whose
    head (the text since the previous ``;``, ``{`` or ``}``) has a parameter list and is not a
    type, a namespace, an initialiser or a control statement. Lambdas and local blocks count
    inside their function."""
    src = _strip_cpp(text)
    line_starts = [0] + [m.end() for m in re.finditer("\n", src)]
    out, stack, head_start = [], [], 0
    for m in re.finditer(r"[{};]", src):
        pos = m.start()
        if m.group() == "{":
            head = src[head_start:pos]
            is_function = ("(" in head and not any(kind for kind, _, _ in stack)
                           and not _CPP_NOT_FUNCTION.search(head) and not head.rstrip().endswith(("=", "return")))
            names = re.findall(r"([A-Za-z_~][\w:~]*)\s*\(", head)
            first = head_start + len(head) - len(head.lstrip())
            stack.append((is_function, first, names[0] if names else "?"))
        elif m.group() == "}" and stack:
            is_function, first, name = stack.pop()
            if is_function:
                out.append((name, bisect.bisect_right(line_starts, first), bisect.bisect_right(line_starts, pos)))
        head_start = pos + 1
    return out


_PYX_DEF = re.compile(r"^(\s*)(?:async\s+def|def|cdef|cpdef)\s+(?!class\b|extern\b|struct\b|enum\b|union\b|packed\b)"
                      r"[^=]*?([A-Za-z_]\w*)\s*\(")


def pyx_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each outermost def/cdef/cpdef function of Cython source:
    from its signature (which ends with ``:``; a declaration without a body is not counted) to its
    last line indented deeper than the signature."""
    lines = text.splitlines()
    out, i = [], 0
    code = [ln.split("#")[0].rstrip() for ln in lines]
    while i < len(lines):
        m = _PYX_DEF.match(lines[i])
        if not m:
            i += 1
            continue
        j = i
        while j < len(lines) and not code[j].endswith(":") and (j == i or code[j]):
            j += 1
        if j >= len(lines) or not code[j].endswith(":"):
            i += 1
            continue
        indent, last, k = len(m.group(1)), j, j + 1
        while k < len(lines) and (not code[k].strip() or len(lines[k]) - len(lines[k].lstrip()) > indent):
            if code[k].strip():
                last = k
            k += 1
        out.append((m.group(2), i + 1, last + 1))
        i = last + 1
    return out


def py_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every function and method (nested ones too: each is
    measured whole, its nested functions included)."""
    return [(n.name, n.lineno, n.end_lineno) for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def functions_of(path: pathlib.Path) -> list[tuple[str, int, int]]:
    text = path.read_text()
    if path.suffix == ".py":
        return py_functions(text)
    return pyx_functions(text) if path.suffix in (".pyx", ".pxi", ".pxd") else cpp_functions(text)


def _sources():
    return sorted(p for p in PKG.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file())


def size_violations() -> tuple[list[str], set[str]]:
    """Files and functions over the limits that are not excepted, and the exceptions in use."""
    bad, used = [], set()
    for path in _sources():
        rel = path.relative_to(PKG).as_posix()
        n = path.read_text().count("\n")
        if n > MAX_FILE_LINES:
            (used.add(rel) if rel in SIZE_EXCEPTIONS else bad.append(f"{rel}: {n} lines (> {MAX_FILE_LINES})"))
        for name, first, last in functions_of(path):
            key, length = f"{rel}::{name}", last - first + 1
            if length > MAX_FUNCTION_LINES:
                (used.add(key) if key in SIZE_EXCEPTIONS else
                 bad.append(f"{key} (line {first}): {length} lines (> {MAX_FUNCTION_LINES})"))
    return bad, used


def test_files_and_functions_stay_small():
    bad, used = size_violations()
    assert bad == [], "split these by responsibility:\n" + "\n".join(bad)
    stale = sorted(set(SIZE_EXCEPTIONS) - used)
    assert stale == [], f"no longer over the limits, remove from SIZE_EXCEPTIONS: {stale}"


def test_the_size_measures_see_functions():
    cpp = ("#define F(x) { x }\nnamespace a {\nstruct S {\n  int f(int x) const {\n    if (x) { return 1; }\n"
           "    auto g = [&](int y) { return y; };\n    return g(x); // }\n  }\n};\n"
           "template <class T>\ninline T h(T t) {\n  const char* s = \"}\";\n  return t;\n}\n}\n")
    assert cpp_functions(cpp) == [("f", 4, 8), ("h", 10, 14)]  # h from its template line
    pyx = ("cdef extern from 'x.h':\n    void f(int a) nogil\n\ncdef inline int g(int a,\n"
           "                  int b) noexcept nogil:\n    cdef int c = a\n\n    return c + b\n\n"
           "def h(x):  # a comment:\n    return x\n")
    assert pyx_functions(pyx) == [("g", 4, 8), ("h", 10, 11)]
    py = "def f():\n    def g():\n        return 1\n\n    return g()\n"
    assert py_functions(py) == [("f", 1, 5), ("g", 2, 3)]
    # the real sources: a known function and the largest file are seen with plausible sizes
    found = functions_of(PKG / "learn" / "topk" / "search.h")
    assert any(name == "solve" and 20 < last - first < MAX_FUNCTION_LINES for name, first, last in found)
    assert len(_sources()) > 50


# ------------------------------------------------------------------ C++ headers and their rooms
_INCLUDE = re.compile(r'(?:#include|cdef extern from)\s+"([^"]+)"')
SYSTEM_HEADERS = {"Python.h"}


def include_problems(files: dict[str, str]) -> list[str]:
    """What breaks the header rules in ``files`` (path relative to ``src/treelearn`` -> text):
    an include with ``../``; an include of a path that is neither ``core/<name>`` nor a header
    of the including file's own folder; a header outside ``core/`` in a folder with no
    extension (``.pyx``) of its own."""
    bad = []
    folders_with_ext = {p.rpartition("/")[0] for p in files if p.endswith(".pyx")}
    for path, text in sorted(files.items()):
        folder = path.rpartition("/")[0]
        if path.endswith(".h") and folder != "core" and folder not in folders_with_ext:
            bad.append(f"{path}: a header outside core/ and outside any room with an extension")
        for m in _INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if "../" in inc:
                bad.append(f"{path} line {line}: includes {inc!r} (a relative path out of its folder)")
            elif inc in SYSTEM_HEADERS:
                continue
            elif inc.startswith("core/"):
                if inc not in files:
                    bad.append(f"{path} line {line}: includes {inc!r}, which core/ does not have")
            elif "/" in inc or f"{folder}/{inc}" not in files:
                bad.append(f"{path} line {line}: includes {inc!r}, not a header of its room ({folder}/) nor of core/")
    return bad


def _compiled_sources() -> dict[str, str]:
    out = {}
    for p in PKG.rglob("*"):
        if p.suffix in (".h", ".pyx", ".pxi", ".pxd"):
            out[p.relative_to(PKG).as_posix()] = p.read_text()
    return out


def test_compiled_code_keeps_to_its_room():
    assert include_problems(_compiled_sources()) == []


def test_the_checker_sees_headers_out_of_their_rooms():
    files = {
        "core/limits.h": "", "learn/topk/_topk.pyx": 'cdef extern from "search.h":\n',
        "learn/topk/search.h": '#include "core/limits.h"\n#include "../greedy/grow.h"\n#include "learn/greedy/grow.h"\n',
        "learn/greedy/_greedy.pyx": 'cdef extern from "grow.h":\n    pass\ncdef extern from "core/nothing.h":\n',
        "learn/greedy/grow.h": '#include "Python.h"\n', "learn/shared.h": "",
    }
    assert include_problems(files) == [
        "learn/greedy/_greedy.pyx line 3: includes 'core/nothing.h', which core/ does not have",
        "learn/shared.h: a header outside core/ and outside any room with an extension",
        "learn/topk/search.h line 2: includes '../greedy/grow.h' (a relative path out of its folder)",
        "learn/topk/search.h line 3: includes 'learn/greedy/grow.h', not a header of its room (learn/topk/) "
        "nor of core/",
    ]


# ------------------------------------------------------------------ the document names what is
_DOC_NAMED = re.compile(r"`([^`\s(]+)")
_FILE_LIKE = re.compile(r"^[\w./-]+(\.(py|pyx|pxi|pxd|h|md|rst|toml)|/)$")


def missing_paths(text: str, repo: pathlib.Path) -> list[str]:
    """The file and folder names in backquotes of ``text`` that do not exist: a path with a ``/``
    relative to the repository, ``src/``, ``src/treelearn/`` or its ``learn/``; a bare file name
    anywhere under ``src/``, ``tests/``, ``benchmarks/`` or ``docs/`` (named in the context of
    its folder). Patterns (``*``, ``<room>``) are not names."""
    bases = [repo, repo / "src", repo / "src" / "treelearn", repo / "src" / "treelearn" / "learn"]
    names = None
    out = []
    for m in _DOC_NAMED.finditer(text):
        t = m.group(1)
        if not _FILE_LIKE.match(t):
            continue
        if "/" in t.rstrip("/"):
            if not any((b / t).exists() for b in bases):
                out.append(t)
        else:
            if names is None:
                names = {p.name for d in ("src", "tests", "benchmarks", "docs") for p in (repo / d).rglob("*")}
                names |= {p.name for p in repo.iterdir()}
            if t.rstrip("/") not in names:
                out.append(t)
    return sorted(set(out))


def test_every_path_the_architecture_document_names_exists():
    repo = SRC.parent
    assert missing_paths((repo / "docs" / "architecture.md").read_text(), repo) == []


def test_every_learner_room_is_in_the_layer_table():
    text = (SRC.parent / "docs" / "architecture.md").read_text()
    rooms = sorted(p.name for p in (PKG / "learn").iterdir() if p.is_dir() and not p.name.startswith("_"))
    assert rooms, "no rooms found"
    absent = [r for r in rooms if f"| 4 | `learn/{r}/" not in text]
    assert absent == [], f"rooms missing from the layer table of docs/architecture.md: {absent}"


def test_the_path_checker_sees_what_is_missing(tmp_path):
    (tmp_path / "src" / "treelearn" / "learn" / "topk").mkdir(parents=True)
    (tmp_path / "src" / "treelearn" / "learn" / "topk" / "search.h").write_text("")
    text = "`learn/topk/search.h`, `topk/search.h`, `search.h`, `topk/gone.h`, `gone.py`, `learn/<room>/x.py`, `a b`"
    assert missing_paths(text, tmp_path) == ["gone.py", "topk/gone.h"]


def test_no_history_in_the_sources():
    """Comments say what is and why; the history of a line is in its commit message."""
    bad = []
    for p in sorted(PKG.rglob("*")):
        if p.suffix in (".py", ".pyx", ".pxi", ".pxd", ".h"):
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if re.search(r"\b[Ii]ssues? #?\d+", line):
                    bad.append(f"{p.relative_to(SRC)}:{i}: {line.strip()}")
    assert bad == []
