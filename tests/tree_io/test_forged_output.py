"""Output nobody can forge: names, categories and class labels come from data files and model
files, so they may hold terminal controls (ESC, BEL), line breaks, NUL, bidirectional overrides or
lone surrogates. Every view of a tree (text, DOT, HTML, the command line's ``show``, ``predict``
and ``evaluate``) shows them as visible escapes: nothing printed moves the cursor, adds a rule
or a row, ends a DOT string or a script element; a model listing a feature name twice is refused."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import treelearn.cli as cli
from treelearn import GreedyTreeClassifier, export_html
from treelearn._validation import TreeLearnValueError
from treelearn.tree import Tree
from treelearn.tree.formats import export_graphviz, export_text, printable

runner = CliRunner()
ESC_TITLE = "\x1b]0;owned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _fit(names, cats=("red", "green"), labels=("yes", "no")):
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({names[0]: rng.normal(size=n), names[1]: rng.normal(size=n),
                      names[2]: pd.Series(rng.choice(list(cats), size=n), dtype=object)})
    y = np.where((X[names[0]] > 0) ^ (X[names[2]] == cats[0]), labels[0], labels[1])
    return GreedyTreeClassifier(max_depth=3).fit(X, y), X, y


HOSTILE = ["a" + ESC_TITLE, "b\nclass: forged\n|--- c >= 0", "cat" + CLEAR]


def test_printable_escapes_every_control_and_keeps_ordinary_text():
    assert printable("petal width (cm) é ü 中") == "petal width (cm) é ü 中"
    assert printable("a\x1b[2Jb\x07\x00\n\r\t\x7f\x9b") == "a\\x1b[2Jb\\x07\\x00\\x0a\\x0d\\x09\\x7f\\x9b"
    assert printable("x\u202ey\u2028z\ud800") == "x\\u202ey\\u2028z\\ud800"
    assert RAW.search(printable("".join(map(chr, range(0x2100))) + "\udfff")) is None
    assert printable(printable("\x1b")) == printable("\x1b")  # escapes are themselves printable


def test_text_export_shows_controls_and_line_breaks_as_escapes():
    clean, _, _ = _fit(["a", "b", "cat"])
    est, _, _ = _fit(HOSTILE, cats=("r\x1b[31m", "g\x07"), labels=("y\nforged", "n\x1b[1m"))
    text = export_text(est)
    assert RAW.search(text) is None and "\n\n" not in text
    # the same number of rules as the tree with ordinary names: no line was forged
    assert len(text.splitlines()) == len(export_text(clean).splitlines())
    assert "\\x1b]0;owned\\x07" in text and "\\x0a" in text


def test_dot_export_has_no_nul_and_no_raw_controls():
    est, _, _ = _fit(["a\x00b", "q\"uote\\", "c\n"], cats=("\x00", "x"))
    dot = export_graphviz(est, filled=True)
    assert "\x00" not in dot and RAW.search(dot) is None
    assert "a\\\\x00b" in dot  # the backslash of the escape is itself escaped for DOT
    # every label is one well-formed double-quoted string
    for line in dot.splitlines():
        if "label=" in line:
            body = line.split('label="', 1)[1]
            assert re.match(r'(?:[^"\\]|\\.)*"', body), line


def test_html_payload_has_no_angle_bracket_and_reads_back_the_names():
    names = ["<!--<script", "</script><script>alert(1)</script>", "__proto__"]
    est, _, _ = _fit(names, cats=("<!--", "&amp;"), labels=("<b>", "x\x1by"))
    page = export_html(est, title="t <!--<script")
    payloads = re.findall(r'<script type="application/json" class="tl-data">(.*?)</script>', page, re.S)
    assert len(payloads) == 1 and "<" not in payloads[0] and ">" not in payloads[0]
    data = json.loads(payloads[0])
    assert data["feature_names"] == names  # raw: a pasted sample is matched by them
    assert all(RAW.search(c) is None for c in data["classes"])
    assert page.count("<script") == 2  # the payload and the code, no other


def test_duplicate_feature_names_are_refused_on_load(tmp_path):
    est, _, _ = _fit(["a", "b", "cat"])
    doc = json.loads(est.tree_.to_json())
    doc["feature_names"] = ["a", "a", "cat"]
    with pytest.raises(TreeLearnValueError, match="feature_names lists 'a' twice"):
        Tree.from_json(json.dumps(doc))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    r = runner.invoke(cli.app, ["show", str(path)])
    assert r.exit_code == 2 and "twice" in r.output and len(r.output.strip().splitlines()) == 1


def _hand_edited(tmp_path, names, cats, labels):
    """A model file whose names, categories and labels were edited by hand (a lone surrogate
    cannot pass through pandas, but a JSON file can hold one)."""
    est, _, _ = _fit(["a", "b", "cat"], cats=("r", "g"), labels=("y", "n"))
    doc = json.loads(est.tree_.to_json())
    doc["feature_names"] = list(names)
    doc["categories"][2] = list(cats)
    doc["classes"] = list(labels)
    doc["classes_dtype"] = "object"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("fmt", ["text", "dot", "html", "json"])
def test_cli_show_never_prints_a_raw_control_or_a_traceback(tmp_path, fmt):
    path = _hand_edited(tmp_path, ["a" + ESC_TITLE, "b\ud800", "c\x00"], ("r\x1b[2J", "g"), ("y\x07", "n\ud83d"))
    r = runner.invoke(cli.app, ["show", str(path), "--format", fmt])
    assert r.exit_code == 0, r.output
    assert r.exception is None and "Traceback" not in r.output
    assert RAW.search(r.output) is None


def test_cli_predict_and_evaluate_print_one_line_per_row_and_no_controls(tmp_path):
    # names stay plain here: a CSV file cannot hold a line break in a header the model matches
    # by name without quoting, and the predict path matches columns as the file spells them
    est, X, y = _fit(["a", "b", "cat"], labels=("yes\nforged", "no" + CLEAR))
    path = tmp_path / "m.json"
    path.write_text(est.tree_.to_json(metadata={"label": "label"}))
    data = tmp_path / "d.csv"
    X.to_csv(data, index=False)
    for fmt in ("text", "csv"):
        r = runner.invoke(cli.app, ["predict", str(path), str(data), "--format", fmt])
        assert r.exit_code == 0, r.output
        out = r.stdout
        assert RAW.search(out) is None
        assert len(out.strip("\n").split("\n")) == len(X) + (fmt == "csv")
    r = runner.invoke(cli.app, ["predict", str(path), str(data), "--proba"])
    assert r.exit_code == 0 and RAW.search(r.stdout) is None
    X.assign(label=y).to_csv(data, index=False)
    r = runner.invoke(cli.app, ["evaluate", str(path), str(data)])
    assert r.exit_code == 0, r.output
    assert RAW.search(r.stdout) is None and "yes\\x0aforged" in r.stdout


def test_cli_errors_escape_what_the_file_says(tmp_path):
    est, X, _ = _fit(["a" + CLEAR, "b", "cat"])
    path = tmp_path / "m.json"
    path.write_text(est.tree_.to_json())
    data = tmp_path / "d.csv"
    X.rename(columns={"a" + CLEAR: "other"}).to_csv(data, index=False)
    r = runner.invoke(cli.app, ["predict", str(path), str(data)])
    assert r.exit_code == 2 and RAW.search(r.output) is None
