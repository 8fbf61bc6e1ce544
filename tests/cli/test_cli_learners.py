"""The CLI for every learner (issue 15): `fit --learner ...` gives the estimator's own tree;
evaluate's metrics against scikit-learn's; predict with only the columns the tree uses;
machine-readable output; CSV reading (missing markers, header detection, no dropped row); the
model-size check; one-line errors; shell completion; the demo."""
from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import treelearn as tl
import treelearn.cli as cli
from treelearn.tree import Tree

runner = CliRunner()


def invoke(*args, **kw):
    return runner.invoke(cli.app, [str(a) for a in args], **kw)


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.exit_code, result.output)
    err = result.stderr.strip()
    assert err and "\n" not in err, repr(result.stderr)
    assert "Traceback" not in result.output
    for frag in fragments:
        assert frag in err, (frag, err)


@pytest.fixture()
def wine_csv(tmp_path):
    from sklearn.datasets import load_wine

    d = load_wine(as_frame=True)
    df = d.data.copy()
    df.columns = [c.replace("/", "_") for c in df.columns]
    df["kind"] = np.asarray(["barolo", "grignolino", "barbera"])[d.target.to_numpy()]
    path = tmp_path / "wine.csv"
    df.to_csv(path, index=False)
    return path, df


LEARNERS = [
    ("greedy", ["--criterion", "gini", "--max-depth", "3"], lambda: tl.GreedyTreeClassifier(criterion="gini",
                                                                                            max_depth=3)),
    ("topk", ["--k", "2", "--max-depth", "2", "--max-binary-features", "20", "--time-limit", "60"],
     lambda: tl.TopKTreeClassifier(k=2, max_depth=2, max_binary_features=20, time_limit=60)),
    ("optimal", ["--max-depth", "2", "--max-binary-features", "15", "--time-limit", "60"],
     lambda: tl.OptimalTreeClassifier(max_depth=2, max_binary_features=15, time_limit=60)),
    ("optimal", ["--max-depth", "2", "--max-binary-features", "all", "--time-limit", "60"],
     lambda: tl.OptimalTreeClassifier(max_depth=2, max_binary_features=None, time_limit=60)),
    ("pruned", ["--pruning", "ccp", "--cv", "3", "--max-leaves", "10", "--random-state", "0"],
     lambda: tl.PrunedTreeClassifier(pruning="ccp", cv=3, max_leaves=10, random_state=0)),
]


def test_max_binary_features_takes_all_auto_or_a_count(wine_csv):
    """``--max-binary-features all`` is every threshold (the estimator's None: see the learners
    above), ``auto`` the default; anything else, or a learner without the option, is a one-line error."""
    path, _ = wine_csv
    r = invoke("fit", path, "--learner", "optimal", "--max-depth", "2", "--max-binary-features", "auto")
    assert r.exit_code == 0, r.output
    assert_one_line_error(invoke("fit", path, "--learner", "optimal", "--max-binary-features", "many"),
                          "--max-binary-features must be a positive integer, auto or all", "'many'")
    assert_one_line_error(invoke("fit", path, "--learner", "optimal", "--max-binary-features", "0"),
                          "--max-binary-features must be")
    assert_one_line_error(invoke("fit", path, "--learner", "greedy", "--max-binary-features", "all"),
                          "does not apply to --learner greedy")


@pytest.mark.parametrize("learner,args,make", LEARNERS, ids=[c[0] + "-" + c[1][-3] for c in LEARNERS])
def test_fit_with_every_learner_gives_the_estimators_tree(tmp_path, wine_csv, learner, args, make):
    path, df = wine_csv
    model = tmp_path / f"{learner}.json"
    r = invoke("fit", path, "--learner", learner, *args, "--out", model, "--format", "json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    est = make().fit(df.drop(columns=["kind"]), df["kind"])
    tree, meta = tl.tree_from_json(model.read_text(), return_metadata=True)
    assert tree == est.tree_
    assert meta["learner"] == type(est).__name__ and report["estimator"] == type(est).__name__
    assert report["leaves"] == tree.n_leaves
    assert report["training_accuracy"] == pytest.approx(est.score(df.drop(columns=["kind"]), df["kind"]))
    if learner == "optimal":
        assert report["is_optimal"] is True
        assert report["optimality"].startswith("optimal over ") and report["optimality"] in repr(est)


def test_fit_minrank_on_a_consistent_binary_sample(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(150, 7))
    y = np.where((X[:, 0] & X[:, 1]) | X[:, 2], "yes", "no")
    df = pd.DataFrame(X, columns=[f"v{j}" for j in range(7)])
    df["y"] = y
    path = tmp_path / "bin.csv"
    df.to_csv(path, index=False)
    model = tmp_path / "rank.json"
    r = invoke("fit", path, "--learner", "minrank", "--time-limit", "30", "-o", model)
    assert r.exit_code == 0, r.output
    est = tl.MinRankTreeClassifier(time_limit=30).fit(df.drop(columns=["y"]), y)
    tree = Tree.from_json(model.read_text())
    assert tree == est.tree_ and "rank" in r.stdout
    r = invoke("evaluate", model, path)
    assert r.exit_code == 0 and "accuracy: 1.0000" in r.stdout


@pytest.mark.parametrize("learner,extra", [("greedy", ["--max-depth", "3"]), ("topk", ["--k", "2", "--max-depth", "2"]),
                                           ("optimal", ["--max-depth", "2"]), ("minrank", ["--time-limit", "60"]),
                                           ("pruned", [])])
def test_every_learner_on_a_shared_dataset(tmp_path, data_dir, learner, extra):
    path = Path(data_dir) / "benchmark" / "monk-1-binary.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    model = tmp_path / "m.json"
    r = invoke("fit", path, "--learner", learner, *extra, "-o", model)
    assert r.exit_code == 0, r.output
    r = invoke("evaluate", model, path, "--format", "json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["samples"] == len(pd.read_csv(path))
    if learner == "minrank":
        assert rep["accuracy"] == 1.0


def test_options_a_learner_does_not_take_are_one_line_errors(wine_csv):
    path, _ = wine_csv
    assert_one_line_error(invoke("fit", path, "--k", "3"), "--k does not apply to --learner greedy", "--max-depth")
    assert_one_line_error(invoke("fit", path, "--learner", "minrank", "--criterion", "gini"), "--criterion")
    assert_one_line_error(invoke("fit", path, "--learner", "greedy", "--time-limit", "5"), "--time-limit")
    assert_one_line_error(invoke("fit", path, "--learner", "nope"), "--learner")
    assert_one_line_error(invoke("fit", path, "--learner", "topk", "--k", "0"), "--k")


def test_verbose_reports_on_stderr(tmp_path, wine_csv):
    path, _ = wine_csv
    r = invoke("fit", path, "--learner", "topk", "--k", "2", "--max-depth", "2", "--verbose", "-o", tmp_path / "m.json")
    assert r.exit_code == 0, r.output
    assert "TopKTreeClassifier" in r.stderr and "rows" in r.stderr


def test_evaluate_metrics_match_sklearn(tmp_path, wine_csv):
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix, precision_recall_fscore_support

    path, df = wine_csv
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", "2", "-o", model).exit_code == 0
    tree = Tree.from_json(model.read_text())
    y = df["kind"].to_numpy()
    pred = tree.predict(df.drop(columns=["kind"]))
    labels = [str(c) for c in tree.classes]
    r = invoke("evaluate", model, path, "--format", "json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["classes"] == labels
    assert rep["accuracy"] == pytest.approx(np.mean(pred == y))
    assert rep["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred))
    assert rep["confusion_matrix"] == confusion_matrix(y, pred, labels=labels).tolist()
    p, rc, f, s = precision_recall_fscore_support(y, pred, labels=labels, zero_division=0)
    for i, row in enumerate(rep["per_class"]):
        assert (row["precision"], row["recall"], row["support"]) == (pytest.approx(p[i]), pytest.approx(rc[i]), s[i])
    text = invoke("evaluate", model, path).stdout
    assert "balanced accuracy: " in text and "confusion matrix" in text and "precision" in text
    long = pd.read_csv(io.StringIO(invoke("evaluate", model, path, "--format", "csv").stdout))
    assert list(long.columns) == ["metric", "class", "predicted", "value"]
    acc = long.loc[long.metric == "accuracy", "value"].astype(float).iloc[0]
    assert acc == pytest.approx(rep["accuracy"])
    assert int(long.loc[long.metric == "confusion", "value"].astype(int).sum()) == len(y)


def test_predict_needs_only_the_columns_the_tree_uses(tmp_path, wine_csv):
    path, df = wine_csv
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", "2", "-o", model).exit_code == 0
    tree = Tree.from_json(model.read_text())
    used = sorted({tree.feature_names[f] for f in tree.feature[tree.children_left >= 0]})
    assert len(used) < tree.n_features
    few = tmp_path / "few.csv"
    df[used].to_csv(few, index=False)
    r = invoke("predict", model, few, "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == tree.predict(df.drop(columns=["kind"])).tolist()
    r = invoke("predict", model, few, "--format", "csv")
    assert r.exit_code == 0 and r.stdout.splitlines()[0] == "kind"
    r = invoke("predict", model, few, "--proba", "--format", "json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)) == len(df)
    missing_used = tmp_path / "missing_used.csv"
    df[used[1:]].to_csv(missing_used, index=False)
    assert_one_line_error(invoke("predict", model, missing_used), used[0])


def test_csv_missing_markers_keep_numeric_columns_numeric(tmp_path):
    text = "a,b,c,label\n1.5,x,3,p\n?,y,,q\n2.5,?,NA,p\n3.5,x,4,q\n"
    path = tmp_path / "q.csv"
    path.write_text(text)
    df = cli.read_csv(path)
    assert df["a"].dtype.kind == "f" and np.isnan(df.loc[1, "a"]) and df["a"].notna().sum() == 3
    assert df["c"].dtype.kind == "f" and df["c"].isna().sum() == 2
    assert df["b"].isna().tolist() == [False, False, True, False]
    assert len(df) == 4
    # other markers: '?' is a value now, so column a is text
    df2 = cli.read_csv(path, na_values="NA")
    assert df2["a"].dtype == object and df2.loc[1, "a"] == "?" and np.isnan(df2.loc[2, "c"])
    df3 = cli.read_csv(path, na_values="none")
    assert df3.isna().sum().sum() == 0


def test_a_learner_that_rejects_nan_names_the_column(tmp_path):
    from sklearn.datasets import load_iris

    d = load_iris(as_frame=True)
    df = d.frame.copy()
    df.columns = ["sl", "sw", "pl", "pw", "y"]
    df = df.astype({"pl": object})
    df.loc[[3, 50, 120], "pl"] = "?"
    path = tmp_path / "holes.csv"
    df.to_csv(path, index=False)
    read = cli.read_csv(path)
    assert read["pl"].dtype.kind == "f"  # not turned categorical by the '?' cells
    for learner in ("greedy", "topk", "optimal", "minrank", "pruned"):
        r = invoke("fit", path, "--learner", learner, "-o", tmp_path / "m.json")
        if r.exit_code == 0:  # the learner handles missing values: the column stayed numeric
            tree = Tree.from_json((tmp_path / "m.json").read_text())
            assert tree.schema.categories[2] is None
        else:
            assert_one_line_error(r, "pl")


def test_header_detection_never_drops_a_row(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    df = pd.DataFrame(X)
    df["y"] = np.asarray(["setosa", "versicolor", "virginica"])[y]
    path = tmp_path / "nohead.csv"
    df.to_csv(path, index=False, header=False)
    read = cli.read_csv(path)
    assert len(read) == 150 and list(read.columns) == ["x0", "x1", "x2", "x3", "x4"]
    with_head = tmp_path / "head.csv"
    df.to_csv(with_head, index=False, header=["a", "b", "c", "d", "label"])
    assert list(cli.read_csv(with_head).columns) == ["a", "b", "c", "d", "label"]
    assert len(cli.read_csv(with_head)) == 150
    # text-only data: a first row whose values recur below is data
    cat = tmp_path / "cat.csv"
    cat.write_text("x,red,yes\ny,blue,no\nx,blue,yes\ny,red,no\n")
    assert len(cli.read_csv(cat)) == 4
    named = tmp_path / "named.csv"
    named.write_text("shape,color,label\nx,red,yes\ny,blue,no\n")
    assert list(cli.read_csv(named).columns) == ["shape", "color", "label"]
    # forced either way
    assert len(cli.read_csv(named, header=False)) == 3
    assert list(cli.read_csv(cat, header=True).columns) == ["x", "red", "yes"]
    model = tmp_path / "m.json"
    r = invoke("fit", path, "--max-depth", "2", "-o", model)
    assert r.exit_code == 0 and "no header row detected" in r.stderr
    r = invoke("evaluate", model, path, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["samples"] == 150


def test_model_size_is_checked_before_reading(tmp_path, monkeypatch, wine_csv):
    path, _ = wine_csv
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # a sparse file: large on paper, nothing to read
        fh.truncate(cli.MAX_MODEL_BYTES + 10)
    read = []
    real_open = Path.open

    def spy(self, *a, **kw):
        if self == big:
            read.append(self)
        return real_open(self, *a, **kw)

    monkeypatch.setattr(Path, "open", spy)
    for args in (("show", big), ("predict", big, path), ("evaluate", big, path)):
        assert_one_line_error(invoke(*args), "not a valid treelearn model", "bytes")
    assert read == []


def test_show_html(tmp_path, wine_csv):
    path, _ = wine_csv
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--criterion", "gini", "--max-depth", "2", "-o", model).exit_code == 0
    out = tmp_path / "tree.html"
    r = invoke("show", model, "--format", "html", "-o", out)
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and '"criterion": "gini"' in page
    assert invoke("show", model, "--format", "html").stdout == page


def test_shell_completion_is_offered():
    import subprocess
    import sys

    r = invoke("--help")
    assert "--install-completion" in r.stdout and "--show-completion" in r.stdout
    env = dict(os.environ, _TREELEARN_COMPLETE="complete_bash", COMP_WORDS="treelearn fit x.csv --learner ",
               COMP_CWORD="4")
    r = subprocess.run([sys.executable, "-m", "treelearn.cli"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["greedy", "topk", "optimal", "minrank", "pruned"]


def test_keyboard_interrupt_is_one_line(monkeypatch, tmp_path, wine_csv, capsys):
    path, _ = wine_csv

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(tl.GreedyTreeClassifier, "fit", boom)
    assert cli.main(["fit", str(path), "-o", str(tmp_path / "m.json")]) == 130
    assert capsys.readouterr().err.strip() == "treelearn: interrupted"


# ---------------------------------------------------------------------------------------- demo
def test_demo_quick_writes_table_png_and_html(tmp_path):
    out = tmp_path / "demo"
    r = invoke("demo", "--quick", "--out-dir", out)
    assert r.exit_code == 0, r.output
    for frag in ("greedy (000)", "Top-k (003)", "min-rank (001)", "pruning (002)", "queries (004)",
                 "recovered exactly", "Optimal (k = all)", "scikit-learn", "error-size front", "the bound picks"):
        assert frag in r.stdout, frag
    png = out / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    page = (out / "demo.html").read_text()
    # greedy, optimal, optimal of the bound's size (with its front), min-rank, pruned, hidden, learned
    assert page.count('<section class="tl-view"') == 7 and page.count('<svg class="tl-front"') == 1


def test_run_demo_numbers_are_the_estimators(tmp_path):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    # without the data directory the min-rank step falls back to a synthetic sample
    res = __import__("treelearn.demo", fromlist=["run_demo"]).run_demo(out_dir=tmp_path, quick=True,
                                                                       data_dir=tmp_path / "no-data")
    rows = {r["learner"]: r for r in res["rows"]}
    d = load_breast_cancer(as_frame=True)
    y = np.asarray(d.target_names)[d.target.to_numpy()]
    Xtr, Xte, ytr, yte = train_test_split(d.data, y, test_size=0.3, stratify=y, random_state=0)
    est = tl.GreedyTreeClassifier(criterion="entropy", max_depth=4).fit(Xtr, ytr)
    assert rows["treelearn entropy"]["accuracy"] == pytest.approx(est.score(Xte, yte))
    sel = tl.OptimalTreeClassifier(max_depth=3, max_thresholds=4, max_binary_features=None, select="bound")
    sel.fit(Xtr, ytr)
    row = rows["Optimal, size by bound"]
    assert row["accuracy"] == pytest.approx(sel.score(Xte, yte)) and row["leaves"] == sel.get_n_leaves()
    path = res["topk_path"]
    assert path[-1]["k"] == "all"
    assert path[-1]["train"] >= max(p["train"] for p in path[:-1]) - 1e-12  # optimal on its features
    assert res["query_error"] == 0.0
    assert rows["FINDMIN"]["data"] == "synthetic rank-2 sample" and rows["FINDMIN"]["accuracy"] == 1.0
    note = rows["FINDMIN"]["note"]
    n_vars = int(re.search(r"n (\d+)\)", note).group(1))
    assert res["eh_sample_size"] == tl.eh_sample_size(n_vars, max(res["rank"], 1), 0.1, 0.05)
    assert f"asks m = {res['eh_sample_size']}" in note


def test_evaluate_counts_labels_the_tree_never_saw(tmp_path, wine_csv):
    path, df = wine_csv
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", "1", "-o", model).exit_code == 0
    test = df.copy()
    test.loc[:9, "kind"] = "nebbiolo"  # a class absent from training
    tpath = tmp_path / "test.csv"
    test.to_csv(tpath, index=False)
    rep = json.loads(invoke("evaluate", model, tpath, "--format", "json").stdout)
    assert rep["classes"][-1] == "nebbiolo"
    assert sum(rep["confusion_matrix"][-1]) == 10 and rep["per_class"][-1]["recall"] == 0.0
    assert sum(map(sum, rep["confusion_matrix"])) == len(test)


def test_repeated_header_names_are_renamed_not_fatal(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("a,a,b,a,label\n1,2,3,4,x\n5,6,7,8,y\n")
    df = cli.read_csv(path)
    assert list(df.columns) == ["a", "a.1", "b", "a.2", "label"] and len(df) == 2
    r = invoke("fit", path, "-o", tmp_path / "m.json")
    assert r.exit_code == 0 and "repeats the column name" in r.stderr


@pytest.mark.parametrize("args,params", [
    (["--min-weight-fraction-leaf", "0.1"], dict(min_weight_fraction_leaf=0.1)),
    (["--max-features", "sqrt", "--splitter", "random", "--random-state", "3"],
     dict(max_features="sqrt", splitter="random", random_state=3)),
    (["--max-features", "0.5", "--random-state", "1"], dict(max_features=0.5, random_state=1)),
    (["--max-features", "4", "--random-state", "1"], dict(max_features=4, random_state=1)),
])
def test_fit_takes_sklearns_greedy_options(tmp_path, wine_csv, args, params):
    path, df = wine_csv
    model = tmp_path / "m.json"
    r = invoke("fit", path, *args, "--out", model, "--format", "json")
    assert r.exit_code == 0, r.output
    tree, meta = tl.tree_from_json(model.read_text(), return_metadata=True)
    assert tree == tl.GreedyTreeClassifier(**params).fit(df.drop(columns=["kind"]), df["kind"]).tree_
    assert all(meta["params"][k] == v for k, v in params.items())
    assert_one_line_error(invoke("fit", path, "--max-features", "most"), "--max-features must be sqrt")
    assert_one_line_error(invoke("fit", path, "--learner", "topk", "--splitter", "random"), "--splitter")
