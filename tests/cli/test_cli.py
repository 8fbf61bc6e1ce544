"""The `treelearn` command line through typer's CliRunner: fit/predict/show/evaluate on temporary
CSV files, the demo, experiments, and one-line errors with exit code 2 on bad input."""
from __future__ import annotations

import sys
import types

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import treelearn
import treelearn.cli as cli
from treelearn.base import BaseTreeClassifier
from treelearn.tree import Tree
from treelearn.tree.export import export_graphviz, export_text, from_sklearn

runner = CliRunner()


class _SklearnBackedLearner(BaseTreeClassifier):
    """Stand-in for GreedyTreeClassifier while it is not in this checkout (same constructor)."""

    def __init__(self, criterion="entropy", max_depth=None, max_leaves=None, min_samples_leaf=1,
                 max_thresholds=None, random_state=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.max_thresholds = max_thresholds
        self.random_state = random_state

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema):
        from sklearn.tree import DecisionTreeClassifier

        crit = "log_loss" if self.criterion == "kearns_mansour" else self.criterion
        sk = DecisionTreeClassifier(criterion=crit, max_depth=self.max_depth, max_leaf_nodes=self.max_leaves,
                                    min_samples_leaf=self.min_samples_leaf, random_state=0)
        t = from_sklearn(sk.fit(Xe, y, sample_weight=sample_weight))
        return Tree(children_left=t.children_left, children_right=t.children_right, feature=t.feature,
                    threshold=t.threshold, kind=t.kind, value=t.value, n_node_samples=t.n_node_samples,
                    impurity=t.impurity, classes=np.arange(n_classes), schema=schema)


@pytest.fixture()
def learner(monkeypatch):
    """The class `treelearn fit` uses: the real GreedyTreeClassifier when present."""
    cls = getattr(treelearn, "GreedyTreeClassifier", None)
    if cls is None:
        cls = _SklearnBackedLearner
        monkeypatch.setattr(cli, "_make_learner", lambda c, d, l, m, t, r: cls(criterion=c, max_depth=d,
                                                                                max_leaves=l, min_samples_leaf=m,
                                                                                max_thresholds=t, random_state=r))
    return cls


@pytest.fixture()
def iris_csv(tmp_path):
    """Iris with string labels, a categorical string column and a label column in the middle."""
    from sklearn.datasets import load_iris

    d = load_iris(as_frame=True)
    df = d.frame.drop(columns=["target"])
    df.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    rng = np.random.default_rng(0)
    df.insert(1, "species", np.asarray(d.target_names)[d.target.to_numpy()])
    df["color"] = rng.choice(["red", "green", "blue"], size=len(df))
    path = tmp_path / "iris.csv"
    df.to_csv(path, index=False)
    return path, df


def invoke(*args):
    return runner.invoke(cli.app, [str(a) for a in args])


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.exit_code, result.output)
    err = result.stderr.strip()
    assert err and "\n" not in err, repr(result.stderr)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for frag in fragments:
        assert frag in err, (frag, err)


# ---------------------------------------------------------------------------------------- fit / predict / show / evaluate
def test_fit_predict_show_evaluate(tmp_path, iris_csv, learner):
    path, df = iris_csv
    model = tmp_path / "m.json"
    r = invoke("fit", path, "--label", "species", "--criterion", "gini", "--max-depth", 3, "--out", model)
    assert r.exit_code == 0, r.output
    assert model.exists() and "leaves" in r.stdout
    # the saved model is the tree the learner fits on the same data
    X, y = df.drop(columns=["species"]), df["species"]
    est = learner(criterion="gini", max_depth=3).fit(X, y)
    tree = Tree.from_json(model.read_text())
    assert tree == est.tree_
    expected = est.predict(X)

    r = invoke("predict", model, path)
    assert r.exit_code == 0, r.output
    assert r.stdout.split("\n")[:-1] == [str(v) for v in expected]

    # columns in another order and without the label: matched by name
    shuffled = tmp_path / "shuffled.csv"
    X[list(reversed(X.columns))].to_csv(shuffled, index=False)
    out = tmp_path / "pred.csv"
    r = invoke("predict", model, shuffled, "--out", out)
    assert r.exit_code == 0, r.output
    written = pd.read_csv(out)
    assert list(written.columns) == ["species"] and written["species"].tolist() == list(expected)

    r = invoke("predict", model, path, "--proba")
    assert r.exit_code == 0
    proba = pd.read_csv(__import__("io").StringIO(r.stdout))
    assert np.allclose(proba.to_numpy(), est.predict_proba(X))

    r = invoke("show", model)
    assert r.exit_code == 0 and r.stdout == export_text(tree)
    r = invoke("show", model, "--format", "dot")
    assert r.exit_code == 0 and r.stdout == export_graphviz(tree, filled=True, precision=2, rounded=True)
    r = invoke("show", model, "--format", "json")
    assert r.exit_code == 0 and Tree.from_json(r.stdout) == tree

    r = invoke("evaluate", model, path)
    assert r.exit_code == 0, r.output
    acc = float(np.mean(expected == y.to_numpy()))
    lines = dict(line.split(": ") for line in r.stdout.strip().split("\n")[:5])
    assert float(lines["accuracy"]) == pytest.approx(acc, abs=1e-4)
    assert int(lines["leaves"]) == tree.n_leaves and int(lines["depth"]) == tree.depth
    assert int(lines["samples"]) == len(df)


def test_label_option_by_index_and_default(tmp_path, iris_csv, learner):
    path, df = iris_csv
    for label, name in (("1", "species"), ("-5", "species"), (None, "color")):
        model = tmp_path / f"m{label}.json"
        args = ["fit", path, "--max-depth", 2, "--out", model] + ([] if label is None else ["--label", label])
        r = invoke(*args)
        assert r.exit_code == 0, r.output
        tree, meta = __import__("treelearn").tree.export.tree_from_json(model.read_text(), return_metadata=True)
        assert meta["label"] == name
        assert set(tree.classes.tolist()) == set(df[name])
        assert name not in tree.feature_names


def test_best_first_and_other_criteria(tmp_path, iris_csv, learner):
    path, _ = iris_csv
    for crit in ("entropy", "kearns_mansour"):
        model = tmp_path / f"{crit}.json"
        r = invoke("fit", path, "-l", "species", "--criterion", crit, "--max-leaves", 4, "-o", model)
        assert r.exit_code == 0, r.output
        assert Tree.from_json(model.read_text()).n_leaves <= 4


def test_categorical_option(tmp_path, learner):
    rng = np.random.default_rng(3)
    n = 300
    zone = rng.integers(1, 5, size=n)            # integer codes of a categorical column
    noise = rng.normal(size=n)
    y = np.where(zone == 3, "hot", "cold")       # x == 3 decides, no threshold isolates it
    df = pd.DataFrame({"zone": zone, "noise": noise, "y": y})
    path = tmp_path / "zones.csv"
    df.to_csv(path, index=False)
    model = tmp_path / "zones.json"
    r = invoke("fit", path, "--categorical", "zone", "--max-depth", 1, "--out", model)
    assert r.exit_code == 0, r.output
    tree = Tree.from_json(model.read_text())
    assert tree.kind[0] == 1 and tree.schema.categories[0] is not None and tree.n_leaves == 2
    r = invoke("evaluate", model, path)
    assert r.exit_code == 0 and "accuracy: 1.0000" in r.stdout
    new = tmp_path / "new.csv"
    pd.DataFrame({"noise": [0.0, 1.0, 2.0], "zone": [3, 1, 7]}).to_csv(new, index=False)
    r = invoke("predict", model, new)
    assert r.exit_code == 0 and r.stdout.split() == ["hot", "cold", "cold"]   # 7: unseen category
    assert_one_line_error(invoke("fit", path, "--categorical", "nope"), "unknown categorical column")
    assert_one_line_error(invoke("fit", path, "--categorical", "y"), "label column")


# ---------------------------------------------------------------------------------------- errors
@pytest.fixture()
def model_file(tmp_path, iris_csv, learner):
    path, _ = iris_csv
    model = tmp_path / "model.json"
    r = invoke("fit", path, "--label", "species", "--max-depth", 2, "--out", model)
    assert r.exit_code == 0, r.output
    return model


def test_bad_files_give_one_line_errors(tmp_path, iris_csv, model_file, learner):
    path, df = iris_csv
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b,c\n")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3,4,5,6\n")
    assert_one_line_error(invoke("fit", tmp_path / "missing.csv"), "no such file")
    assert_one_line_error(invoke("fit", tmp_path), "directory")
    assert_one_line_error(invoke("fit", empty), "empty")
    assert_one_line_error(invoke("fit", header_only), "no data rows")
    assert_one_line_error(invoke("fit", ragged), "cannot read as CSV")
    assert_one_line_error(invoke("predict", tmp_path / "nope.json", path), "no such file")
    assert_one_line_error(invoke("evaluate", model_file, tmp_path / "nope.csv"), "no such file")


def test_unknown_columns_give_one_line_errors(tmp_path, iris_csv, model_file, learner):
    path, df = iris_csv
    assert_one_line_error(invoke("fit", path, "--label", "nosuch"), "unknown label column 'nosuch'")
    assert_one_line_error(invoke("fit", path, "--label", "17"), "out of range")
    only_label = tmp_path / "one.csv"
    df[["species"]].to_csv(only_label, index=False)
    assert_one_line_error(invoke("fit", only_label), "no feature columns")
    fewer = tmp_path / "fewer.csv"
    df.drop(columns=["petal_width"]).to_csv(fewer, index=False)
    assert_one_line_error(invoke("predict", model_file, fewer), "petal_width")
    assert_one_line_error(invoke("evaluate", model_file, path, "--label", "zzz"), "zzz")


def test_bad_values_in_data_give_one_line_errors(tmp_path, iris_csv, model_file, learner):
    path, df = iris_csv
    holes = tmp_path / "holes.csv"
    d = df.copy()
    d.loc[3, "sepal_width"] = np.nan
    d.to_csv(holes, index=False)
    # a missing cell: the learners handle it
    r = invoke("fit", holes, "--label", "species", "--out", tmp_path / "holes.json")
    assert r.exit_code == 0, r.output
    r = invoke("fit", holes, "--label", "species", "--learner", "topk", "--max-depth", 2,
               "--out", tmp_path / "holes2.json")
    assert r.exit_code == 0, r.output  # every learner but the query learner takes missing values
    words = tmp_path / "words.csv"
    d = df.copy().astype({"petal_width": object})
    d.loc[0, "petal_width"] = "wide"
    d.to_csv(words, index=False)
    assert_one_line_error(invoke("predict", model_file, words), "petal_width")
    no_label = tmp_path / "nolabel.csv"
    d = df.copy()
    d.loc[5, "species"] = None
    d.to_csv(no_label, index=False)
    assert_one_line_error(invoke("evaluate", model_file, no_label), "missing")
    assert_one_line_error(invoke("fit", no_label, "--label", "species"), "missing")


def test_bad_models_give_one_line_errors(tmp_path, iris_csv, learner):
    path, _ = iris_csv
    cases = {
        "notjson.json": "{{{ not json",
        "list.json": "[1, 2]",
        "format.json": '{"format": "pickle", "version": 1}',
        "nan.json": '{"format": "treelearn.tree", "version": 1, "n_nodes": NaN}',
        "deep.json": "[" * 100000 + "]" * 100000,
    }
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text)
        for args in (("show", f), ("predict", f, path), ("evaluate", f, path)):
            assert_one_line_error(invoke(*args), "not a valid treelearn model")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\x80\x81\xff")
    assert_one_line_error(invoke("show", binary), "not a valid treelearn model")


def test_bad_parameter_values_give_one_line_errors(iris_csv, learner):
    path, _ = iris_csv
    assert_one_line_error(invoke("fit", path, "--max-depth", "abc"), "--max-depth")
    assert_one_line_error(invoke("fit", path, "--max-depth", "-1"), "--max-depth")
    assert_one_line_error(invoke("fit", path, "--max-leaves", "0"), "--max-leaves")
    assert_one_line_error(invoke("fit", path, "--min-samples-leaf", "0"), "--min-samples-leaf")
    assert_one_line_error(invoke("fit", path, "--max-thresholds", "0"), "--max-thresholds")
    assert_one_line_error(invoke("fit", path, "--criterion", "chaos"), "--criterion")
    assert_one_line_error(invoke("fit", path, "--no-such-option"), "no-such-option")
    assert_one_line_error(invoke("fit"), "Missing argument")
    assert_one_line_error(invoke("show", "m.json", "--format", "png"), "--format")
    assert_one_line_error(invoke("frobnicate"), "No such command")


def test_help_everywhere():
    for args in ([], ["--help"], ["fit", "--help"], ["predict", "--help"], ["show", "--help"],
                 ["evaluate", "--help"], ["demo", "--help"], ["experiment", "--help"]):
        r = invoke(*args)
        assert r.exit_code == 0, (args, r.output)
        assert "Usage" in r.stdout, args
    assert "--max-depth" in invoke("fit", "--help").stdout
    assert "Available experiments" in invoke("experiment", "--help").stdout


def test_main_returns_exit_codes(tmp_path, capsys):
    assert cli.main(["show", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no such file" in err
    assert cli.main(["--help"]) == 0


# ---------------------------------------------------------------------------------------- experiment
@pytest.fixture()
def fake_experiment(monkeypatch):
    calls = []
    mod = types.ModuleType("treelearn.experiments.fake_exp")

    def main(argv=None):
        calls.append(list(argv))
        if "--help" in argv:
            print("usage: fake-exp [--quick]")
            raise SystemExit(0)
        if "--fail" in argv:
            return 3
        if "--bad" in argv:
            raise treelearn.TreeLearnValueError("bad value for --bad")
        return 0

    mod.main = main
    monkeypatch.setitem(sys.modules, "treelearn.experiments.fake_exp", mod)
    import treelearn.cli.group as group

    real = group.available_experiments
    monkeypatch.setattr(group, "available_experiments", lambda: sorted(real() + ["fake-exp"]))
    return calls


def test_experiment_runs_module_main_with_args(fake_experiment):
    r = invoke("experiment", "fake-exp", "--quick", "--out-dir", "x", "extra")
    assert r.exit_code == 0, r.output
    assert fake_experiment == [["--quick", "--out-dir", "x", "extra"]]
    r = invoke("experiment", "fake-exp", "--fail")
    assert r.exit_code == 3
    r = invoke("experiment", "fake-exp", "--help")
    assert r.exit_code == 0 and "usage: fake-exp" in r.stdout
    assert_one_line_error(invoke("experiment", "fake-exp", "--bad"), "bad value")


def test_unknown_experiment_lists_available(fake_experiment):
    assert_one_line_error(invoke("experiment", "no-such-thing"), "unknown experiment", "fake-exp")
    assert_one_line_error(invoke("experiment", "../../etc"), "unknown experiment")
    assert "fake-exp" in invoke("experiment").stdout


def test_console_entry_point_exit_codes(tmp_path):
    """The installed entry point (treelearn.cli:main) as a separate process: exit code 2 and one
    line on stderr, no traceback."""
    import subprocess

    r = subprocess.run([sys.executable, "-m", "treelearn.cli", "show", str(tmp_path / "missing.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "no such file" in r.stderr and "Traceback" not in r.stderr
