"""The import rules of docs/architecture.md, checked on the source (no import is executed).

Every ``import`` in ``src/treelearn`` (module level and inside functions; ``if TYPE_CHECKING:``
blocks excepted, they are annotations only) is an edge of the module graph. The graph must have no
cycle, and every edge must go to the same layer or a lower one:

    0 _validation, _limits             input and parameter checks; limits of a fit
    1 criteria, data.*                 impurities; schema, binarization, packed bits
    2 tree.*                           the Tree model, its evaluation and formats
    3 base                             the estimator seam
    4 learn.*, prune.*                 the learners
    5 datasets.*, experiments.*, cli, demo, the package __init__ files (facades)

Within the learners, a learner imports another one only where listed in ``ALLOWED_ACROSS``.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "treelearn"

LAYERS = [
    ("treelearn._validation", 0),
    ("treelearn._limits", 0),
    ("treelearn._criteria", 1),
    ("treelearn.criteria", 1),
    ("treelearn.data", 1),
    ("treelearn.tree", 2),
    ("treelearn.base", 3),
    ("treelearn.learn", 4),
    ("treelearn.prune", 4),
    ("treelearn.datasets", 5),
    ("treelearn.experiments", 5),
    ("treelearn.cli", 5),
    ("treelearn.demo", 5),
]
# learner -> learners it may use (their public functions)
ALLOWED_ACROSS = {
    "treelearn.prune.pruners": {"treelearn.learn.greedy"},  # grows the greedy tree it prunes
    "treelearn.learn.continuous": {"treelearn.learn.greedy"},  # the greedy tree is its first incumbent
    "treelearn.learn.topk": {"treelearn.learn.continuous"},  # OptimalTreeClassifier(solver="continuous")
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
            elif lm == lt == 4 and not _same_learner(mod, t) and t not in ALLOWED_ACROSS.get(mod, ()):
                bad.append(f"{mod} -> {t}: one learner importing another (not in ALLOWED_ACROSS)")
    return bad


def _same_learner(a: str, b: str) -> bool:
    # a learner is a module of learn/ or prune/ (with its compiled kernels) or the queries subpackage
    def key(m):
        parts = m.split(".")
        if parts[:3] == ["treelearn", "learn", "queries"]:
            return "treelearn.learn.queries"
        if parts[1] == "prune":
            return "treelearn.prune"
        return {"_topk": "topk", "_topk_avx512": "topk", "_greedy": "greedy", "_rank": "rank",
                "_continuous": "continuous"}.get(
            parts[-1], parts[-1]) if parts[1] == "learn" else m
    return key(a) == key(b)


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
    assert forbidden_edges({"treelearn.learn.topk": {"treelearn.learn.rank"}}) != []
    assert forbidden_edges({"treelearn.learn.topk": {"treelearn.learn._topk"}}) == []


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
