"""Fuzzing the file formats: hostile JSON models (tree_from_json) and malformed CSVs through the
CLI's commands (fit, predict, evaluate, show).

Property for models: a TreeLearnValueError naming the problem, or a tree whose predict_proba
rows are probabilities; loaded within the worker's time and memory limits. For the CLI: exit
code 0, or 2 with one ``error:`` line on stderr; never a traceback or another exit code.
"""
from __future__ import annotations

import json

import fuzz_harness as fh
import numpy as np
import pytest
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

#: JSON values that stress the loader wherever they land
_HOSTILE_JSON = st.one_of(
    st.sampled_from([None, True, 0, -1, 1, 2**63, -(2**63) - 1, 10**30, 1e308, -1e308, 5e-324, 0.5, "", "x",
                     "<U9999999", "<U1024", "|S5", "object", "<i8", "<u8", ">f8", "bool", "V8", "O", "<M8[s]",
                     [], [[]], [None], [1e308, 1e308], [-1], {}, {"a": 1}]),
    st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
    st.lists(st.integers(-2, 6), max_size=8), st.lists(st.floats(0, 1e308), max_size=4))

_RAW_SNIPPETS = ["1e999", "-1e999", "9" * 5000, "-" + "9" * 4301, "NaN", "Infinity", "[" * 50_000, '"\\ud800"',
                 "1" + "0" * 400, "true", "null", "{}", '"<U9999999"', "\x00", "\xff"]


def _random_tree_doc(rng: np.random.Generator, n_classes: int, n_features: int, depth: int) -> dict:
    from treelearn.data.schema import ColumnSchema
    from treelearn.tree import Tree

    left, right, feature, thr, kind, value = [], [], [], [], [], []

    def grow(d):
        i = len(left)
        left.append(-1), right.append(-1), feature.append(-2), thr.append(-2.0), kind.append(-1)
        value.append(rng.integers(0, 5, n_classes).astype(float).tolist())
        if d < depth and rng.random() < 0.7:
            feature[i], thr[i], kind[i] = int(rng.integers(n_features)), float(rng.normal()), 0
            left[i] = grow(d + 1)
            right[i] = grow(d + 1)
        return i

    grow(0)
    tree = Tree(children_left=left, children_right=right, feature=feature, threshold=thr, kind=kind,
                value=value, classes=np.array([f"c{i}" for i in range(n_classes)]),
                schema=ColumnSchema(categories=[None] * n_features))
    return json.loads(tree.to_json())


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):
            yield from _paths(v, prefix + (i,))


@st.composite
def hostile_model(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    doc = _random_tree_doc(rng, draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(0, 3)))
    how = draw(st.sampled_from(["set", "set", "delete", "text", "truncate", "valid"]))
    if how in ("set", "delete"):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        obj = doc
        for k in path[:-1]:
            obj = obj[k]
        if how == "delete":
            del obj[path[-1]]
        else:
            obj[path[-1]] = draw(_HOSTILE_JSON)
        return json.dumps(doc)
    text = json.dumps(doc)
    if how == "text":
        # put a raw snippet where a number or a string starts
        spots = [i for i, c in enumerate(text) if c in "-0123456789\""][:400]
        i = draw(st.sampled_from(spots))
        j = i + draw(st.integers(0, 8))
        return text[:i] + draw(st.sampled_from(_RAW_SNIPPETS)) + text[j:]
    if how == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    return text


def test_fuzz_hostile_json_models():
    area = "JSON models"
    X_test = np.random.default_rng(0).normal(size=(7, 3))

    def check(text):
        case = f"tree_from_json({text[:1500]!r})"
        res = fh.call("json", text, X_test, timeout=10)
        if not fh.expect_clean(area, res, case):
            return
        if "proba" in res:
            p = res["proba"]
            ok = (p.shape == (7, len(res["classes"])) and np.all(np.isfinite(p)) and np.all(p >= 0)
                  and np.allclose(p.sum(axis=1), 1.0))
            fh.record(area, "ok" if ok else "wrong", case, f"predict_proba {p.tolist()[:2]}")
        else:
            fh.record(area, "ok", case)

    fh.run(hostile_model(), check, examples=40)


# ---------------------------------------------------------------------------------- CSV via the CLI
_CELLS = st.one_of(st.integers(-3, 3).map(str), st.sampled_from(
    ["", "nan", "NaN", "inf", "-inf", "1e999", "9" * 400, "-" + "9" * 400, "1e-400", "a", "b", '"q,uoted"', '"',
     "0x10", "1_000", " 1", "True", "\u00e9", "\t", "18446744073709551616", "9223372036854775808", "2.5"]),
    st.floats(allow_nan=False).map(repr))


@st.composite
def csv_file(draw):
    n_cols = draw(st.integers(1, 4))
    n_rows = draw(st.integers(0, 12))
    header = draw(st.one_of(
        st.just([f"c{j}" for j in range(n_cols - 1)] + ["label"]),
        st.lists(st.sampled_from(["a", "a", "label", "", "x y", "1"]), min_size=n_cols, max_size=n_cols)))
    rows = []
    for _ in range(n_rows):
        width = n_cols if draw(st.integers(0, 9)) else draw(st.integers(0, n_cols + 2))
        rows.append(draw(st.lists(_CELLS, min_size=width, max_size=width)))
    text = "\n".join(",".join(r) for r in [header] + rows)
    data = text.encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        data = data[: len(data) // 2] + b"\xff\xfe" + data[len(data) // 2:]
    if draw(st.integers(0, 9)) == 0:
        data = data.replace(b",", b";")
    return data


def test_fuzz_malformed_csv_through_cli():
    area = "CSV through the CLI"

    def check(case):
        data, label, depth = case
        fit = ["fit", "{dir}/d.csv", "--out", "{dir}/m.json", "--max-depth", str(depth)]
        if label is not None:
            fit += ["--label", label]
        commands = [fit, ["predict", "{dir}/m.json", "{dir}/d.csv"], ["evaluate", "{dir}/m.json", "{dir}/d.csv"],
                    ["show", "{dir}/m.json"]]
        desc = f"csv={data[:1500]!r}, commands={commands}"
        res = fh.call("cli", commands, {"d.csv": data}, timeout=30)
        if not fh.expect_clean(area, res, desc):
            return
        # a clean failure: exit code 2 and a one-line error last on stderr (warnings about the
        # input, e.g. renamed duplicate columns, may come before it)
        bad = [r for r in res["runs"]
               if not (r["code"] == 0 or (r["code"] == 2
                                          and "error:" in (r["stderr"].strip().splitlines() or [""])[-1]))
               or "Traceback" in r["stderr"] or "Traceback" in r["stdout"]]
        if bad:
            fh.STATS[area].counts["ok"] -= 1  # the call returned, but the command failed uncleanly
        elif res["runs"][-1]["code"] != 0:
            fh.STATS[area].counts["ok"] -= 1  # a clean one-line error (exit code 2): a named error
            fh.STATS[area].counts["named"] += 1
        fh.record(area, "unclear" if bad else "ok", desc,
                  "; ".join(f"{r['argv'][0]}: exit code {r['code']}, stderr {r['stderr'][:400]!r}" for r in bad))

    fh.run(st.tuples(csv_file(), st.sampled_from([None, "label", "0", "-1", "99", "missing"]),
                     st.integers(0, 3)), check, examples=15)
