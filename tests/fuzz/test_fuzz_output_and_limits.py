"""Fuzzing what a hostile name can do to the output, what a model file can make the loader
allocate, and whether the limits hold on hard inputs and under Ctrl-C in a thread.

* terminal payloads: names, categories and labels full of controls (ESC/BEL sequences, line
  breaks, NUL, bidi overrides, lone surrogates) in a model file, through ``show`` (text, DOT,
  HTML, JSON) and ``predict``: exit code 0 or a one-line error, no raw control on stdout, as many
  text rules as the same tree with plain names;
* HTML payloads: names made of ``<!--``, ``<script``, ``</script>``, ``__proto__``, ...: the
  view's data script holds no ``<`` and reads back the names;
* amplifying model files: a valid model whose metadata is many tiny values (``{}``, ``[]``, small
  integers, floats) of random density, loaded under a random byte cap: a named error or a tree,
  quickly, within the worker's memory;
* limits on hard inputs: a learner, a shape and a small time limit: the fit ends within
  ``limit * 1.1 + 0.5 s`` (plus a margin for a loaded machine);
* signals in threads: a fit in a worker thread, SIGINT to the process: the fit stops within 1 s
  (plus the margin).
"""
from __future__ import annotations

import json
import re

import fuzz_harness as fh
import numpy as np
import pytest
from hypothesis import strategies as st

pytestmark = pytest.mark.fuzz

_MARGIN_S = 1.0  # a loaded machine
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_PIECES = ["\x1b[2J", "\x1b]0;t\x07", "\x07", "\n", "\r", "\x00", "\x9b31m", "\u202e", "\u2028", "\ud800", "\udfff",
           "\t", "a", "b", "é", "<!--", "<script", "</script>", "&amp;", "__proto__", '"', "\\", "=", ",", " "]
_NAME = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6).map("".join)


def _model_doc(names, cats, labels) -> str:
    from treelearn.data.schema import ColumnSchema
    from treelearn.tree import Tree

    tree = Tree(children_left=[1, -1, 3, -1, -1], children_right=[2, -1, 4, -1, -1], feature=[0, -2, 2, -2, -2],
                threshold=[0.5, -2, 0, -2, -2], kind=[0, -1, 1, -1, -1],
                value=[[4, 4], [3, 0], [1, 4], [1, 0], [0, 4]], classes=np.asarray(["p", "q"]),
                schema=ColumnSchema(categories=[None, None, np.asarray(["u", "v"], dtype=object)],
                                    feature_names=["f0", "f1", "f2"]))
    doc = json.loads(tree.to_json())
    doc["feature_names"], doc["categories"][2], doc["classes"], doc["classes_dtype"] = names, cats, labels, "object"
    return json.dumps(doc)


@st.composite
def hostile_names(draw):
    names = draw(st.lists(_NAME, min_size=3, max_size=3, unique=True))
    cats = draw(st.lists(_NAME, min_size=2, max_size=2, unique=True))
    labels = draw(st.lists(_NAME, min_size=2, max_size=2, unique=True))
    return names, cats, labels


def test_fuzz_terminal_payloads_through_the_cli():
    area = "terminal payloads (CLI)"
    plain = None

    def check(case):
        nonlocal plain
        names, cats, labels = case
        model = _model_doc(names, cats, labels).encode()
        if plain is None:
            res = fh.call("cli", [["show", "{dir}/m.json"]], {"m.json": _model_doc(["a", "b", "c"], ["u", "v"],
                                                                                       ["p", "q"]).encode()})
            plain = len(res["runs"][0]["stdout"].splitlines())
        commands = [["show", "{dir}/m.json", "--format", f] for f in ("text", "dot", "html", "json")]
        desc = f"names={names!r}, categories={cats!r}, labels={labels!r}"
        res = fh.call("cli", commands, {"m.json": model}, timeout=30)
        if not fh.expect_clean(area, res, desc):
            return
        bad = [r for r in res["runs"] if r["code"] not in (0, 2) or "Traceback" in r["stderr"]
               or _RAW.search(r["stdout"]) or _RAW.search(r["stderr"])]
        if not bad and res["runs"][0]["code"] == 0 and len(res["runs"][0]["stdout"].splitlines()) != plain:
            bad = [res["runs"][0]]  # a forged rule
        fh.record(area, "wrong" if bad else "ok", desc,
                  "; ".join(f"{r['argv'][:4]}: exit {r['code']}, stdout {r['stdout'][:300]!r}" for r in bad))

    fh.run(hostile_names(), check, examples=10)


def test_fuzz_html_payloads():
    area = "HTML payloads"
    from treelearn._validation import TreeLearnValueError
    from treelearn.tree import Tree
    from treelearn.tree.html import export_html

    def check(case):  # pure Python (no compiled code runs): in this process
        names, cats, labels = case
        desc = f"names={names!r}, categories={cats!r}, labels={labels!r}"
        try:
            page = export_html(Tree.from_json(_model_doc(names, cats, labels)), title=names[0])
        except TreeLearnValueError as exc:  # e.g. a name twice
            fh.expect_clean(area, {"status": "error", "type": "treelearn.TreeLearnValueError",
                                   "bases": ["builtins.ValueError"], "message": str(exc), "origin": "treelearn/x.py"},
                            desc)
            return
        fh.expect_clean(area, {"status": "ok"}, desc)
        payloads = re.findall(r'<script type="application/json" class="tl-data">(.*?)</script>', page, re.S)
        # (as JSON and JavaScript read them: a surrogate pair written as two escapes is one character)
        ok = (len(payloads) == 1 and "<" not in payloads[0]
              and json.loads(payloads[0])["feature_names"] == json.loads(json.dumps(names)))
        ok = ok and page.count("<script") == 2 and _RAW.search(page) is None
        fh.record(area, "ok" if ok else "wrong", desc, f"page {page[:600]!r}")

    fh.run(hostile_names(), check, examples=10)


@st.composite
def amplifying_model(draw):
    unit = draw(st.sampled_from(["{}", "[]", "1", "10", "1.5", "[1]", '""', "null", "{\"a\":[]}"]))
    count = draw(st.integers(1, 400_000))
    cap_factor = draw(st.sampled_from([1.0, 1.5, 4.0, 64.0]))
    base = _model_doc(["a", "b", "c"], ["u", "v"], ["p", "q"])
    text = base[:-1] + ', "metadata": [' + ",".join([unit] * count) + "]}"
    return text, int(len(text) * cap_factor)


def test_fuzz_amplifying_model_files():
    area = "amplifying model files"

    def check(case):
        text, cap = case
        desc = f"{len(text)} bytes ({text[-40:]!r}), max_size={cap}"
        res = fh.call("json_capped", text, cap, timeout=20)
        if not fh.expect_clean(area, res, desc):
            return
        fh.record(area, "ok" if res["seconds"] < 5.0 else "limit", desc, f"{res['seconds']:.1f} s to load")

    fh.run(amplifying_model(), check, examples=10)


_LEARNERS = {
    "TopKTreeClassifier": lambda d, lim: {"k": d.draw(st.integers(1, 4)), "max_depth": d.draw(st.integers(2, 6)),
                                          "time_limit": lim},
    "OptimalTreeClassifier": lambda d, lim: {"max_depth": d.draw(st.integers(2, 6)), "time_limit": lim,
                                             "solver": d.draw(st.sampled_from(["binary", "continuous"]))},
    "MinRankTreeClassifier": lambda d, lim: {"time_limit": lim},
}


@st.composite
def hard_fit(draw):
    name = draw(st.sampled_from(sorted(_LEARNERS)))
    limit = draw(st.sampled_from([0.01, 0.1, 0.5, 1.0]))
    params = _LEARNERS[name](type("D", (), {"draw": staticmethod(draw)}), limit)
    n = draw(st.sampled_from([2_000, 50_000, 200_000]))
    d = draw(st.sampled_from([5, 20, 60]))
    seed = draw(st.integers(0, 2**16))
    return name, params, n, d, seed


def _data(name, n, d, seed):
    rng = np.random.default_rng(seed)
    if name == "MinRankTreeClassifier":
        X = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
        return X, (X[:, 0] ^ X[:, 1 % d] ^ (rng.random(n) < 0.1)).astype(int)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + X[:, 1 % d] * X[:, 2 % d] + rng.normal(size=n) > 0).astype(int)


def test_fuzz_limits_on_hard_inputs():
    area = "time limits on hard inputs"

    def check(case):
        name, params, n, d, seed = case
        X, y = _data(name, n, d, seed)
        desc = f"{name}({params}) on {n} x {d}, seed {seed}"
        res = fh.call("timed_fit", name, params, X, y, timeout=60)
        if not fh.expect_clean(area, res, desc):
            return
        bound = params["time_limit"] * 1.1 + 0.5 + _MARGIN_S
        fh.record(area, "ok" if res["seconds"] <= bound else "wrong", desc,
                  f"took {res['seconds']:.2f} s, bound {bound:.2f} s")

    fh.run(hard_fit(), check, examples=6)


@st.composite
def thread_fit(draw):
    name = draw(st.sampled_from(["GreedyTreeClassifier", "TopKTreeClassifier", "OptimalTreeClassifier"]))
    params = {"GreedyTreeClassifier": {}, "TopKTreeClassifier": {"k": 3, "max_depth": 6, "time_limit": 600},
              "OptimalTreeClassifier": {"max_depth": 5, "time_limit": 600,
                                        "solver": draw(st.sampled_from(["binary", "continuous"]))}}[name]
    return name, params, draw(st.sampled_from([100_000, 300_000])), draw(st.floats(0.05, 1.5)), draw(st.integers(0, 99))


def test_fuzz_sigint_in_a_worker_thread():
    area = "Ctrl-C in a worker thread"

    def check(case):
        name, params, n, delay, seed = case
        X, y = _data(name, n, 20, seed)
        desc = f"{name}({params}) on {n} x 20, SIGINT after {delay:.2f} s"
        res = fh.call("sigint_thread", name, params, X, y, delay, timeout=150)
        if not fh.expect_clean(area, res, desc):
            return
        ok = res["how"] in ("fitted", "interrupted") and res["latency"] <= 1.0 + _MARGIN_S
        fh.record(area, "ok" if ok else "wrong", desc, f"{res['how']} {res['latency']:.2f} s after the signal")

    fh.run(thread_fit(), check, examples=4)
