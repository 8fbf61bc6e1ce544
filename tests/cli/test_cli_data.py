"""The command line a user can trust: fit, predict and evaluate read data the same way and never
change a column's type silently; evaluate scores against the model's label; Ctrl-C and the time
limit save the best tree with exit codes of their own; `treelearn export`; and a CLI that starts
at once (no scikit-learn, SciPy, pandas, matplotlib or Dask before a command needs them)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import treelearn.cli as cli
from treelearn.tree import Tree

runner = CliRunner()
HEAVY = ("sklearn", "scipy", "pandas", "matplotlib", "dask")


def invoke(*args):
    return runner.invoke(cli.app, [str(a) for a in args])


def one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.exit_code, result.output)
    err = result.stderr.strip()
    assert err and "\n" not in err, repr(result.stderr)
    for frag in fragments:
        assert frag in err, (frag, err)
    return err


@pytest.fixture()
def penguins(tmp_path):
    """A numeric table with two text columns (the issue's shape: bill sizes, island, sex)."""
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"bill_length_mm": np.round(rng.normal(44, 5, n), 1),
                       "bill_depth_mm": np.round(rng.normal(17, 2, n), 1),
                       "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
                       "sex": rng.choice(["male", "female"], n)})
    df["species"] = np.where(df["bill_length_mm"] > 44, "Gentoo", np.where(df["island"] == "Dream", "Chinstrap",
                                                                           "Adelie"))
    path = tmp_path / "penguins.csv"
    df.to_csv(path, index=False)
    return path, df


# ---------------------------------------------------------------------------------------- column types
def test_one_stray_token_is_an_error_naming_column_cells_and_fixes(tmp_path, penguins):
    path, df = penguins
    bad = df.astype({"bill_length_mm": object})
    bad.loc[16, "bill_length_mm"] = "39,1"  # a decimal comma (quoted in the CSV)
    bad.loc[40, "bill_length_mm"] = "n/a"
    f = tmp_path / "stray.csv"
    bad.to_csv(f, index=False)
    err = one_line_error(invoke("fit", f, "-o", tmp_path / "m.json"), "'bill_length_mm'", "data row 17: '39,1'",
                         "data row 41: 'n/a'", "--decimal ,", "--na-values", "--categorical 'bill_length_mm'")
    assert "2 of its 300 cells" in err
    assert not (tmp_path / "m.json").exists()
    # the fixes the message names work: the stray cells as missing values, or the column as text
    r = invoke("fit", f, "--na-values", "?,,NA,n/a", "-o", tmp_path / "m.json")
    one_line_error(r, "1 of its 299 cells is not a number", "'39,1'")  # a marker holds no comma
    r = invoke("fit", f, "--categorical", "bill_length_mm", "-o", tmp_path / "m.json")
    assert r.exit_code == 0, r.output
    assert "read as categorical: 'bill_length_mm'" in r.stderr


def test_fit_summary_lists_the_categorical_columns(tmp_path, penguins):
    path, df = penguins
    model = tmp_path / "m.json"
    r = invoke("fit", path, "--max-depth", 2, "-o", model, "--format", "json")
    assert r.exit_code == 0, r.output
    assert "read as categorical: 'island', 'sex'" in r.stderr
    assert json.loads(r.stdout)["categorical"] == ["island", "sex"]
    # a text column with many number-like cells is categorical, and the summary says how mixed it is
    mixed = df.copy()
    mixed["doors"] = np.where(np.arange(len(df)) % 4 == 0, "5more", (np.arange(len(df)) % 3 + 2).astype(str))
    f = tmp_path / "mixed.csv"
    mixed.to_csv(f, index=False)
    r = invoke("fit", f, "--label", "species", "--max-depth", 2, "-o", model)
    assert r.exit_code == 0 and "'doors' (75% of its cells are numbers)" in r.stderr, r.stderr


def test_semicolon_decimal_comma_file_reads_as_numbers(tmp_path, penguins):
    path, df = penguins
    f = tmp_path / "semi.csv"
    df.to_csv(f, index=False, sep=";", decimal=",")
    # without --decimal the numbers with a decimal comma are an error that says so
    one_line_error(invoke("fit", f, "--sep", ";", "-o", tmp_path / "x.json"), "'bill_length_mm'", "--decimal ,")
    one_line_error(invoke("fit", f, "-o", tmp_path / "x.json"), "--sep ';'")  # the separator is named too
    model = tmp_path / "m.json"
    r = invoke("fit", f, "--sep", ";", "--decimal", ",", "--max-depth", 3, "-o", model)
    assert r.exit_code == 0, r.output
    tree, meta = Tree.from_json(model.read_text(), return_metadata=True)
    names = tree.feature_names
    assert tree.schema.categories[names.index("bill_length_mm")] is None  # numeric, thresholds x >= t
    assert meta["csv"] == {"sep": ";", "decimal": ",", "na_values": ["?", "", "NA"]}
    ref = invoke("fit", path, "--max-depth", 3, "-o", tmp_path / "ref.json")
    assert ref.exit_code == 0 and Tree.from_json((tmp_path / "ref.json").read_text()) == tree
    # predict and evaluate read the file as fit did (the model's separator and decimal mark)
    r = invoke("predict", model, f)
    assert r.exit_code == 0, r.output
    assert r.stdout.split() == tree.predict(df.drop(columns=["species"])).tolist()
    r = invoke("evaluate", model, f, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["samples"] == len(df)
    one_line_error(invoke("fit", f, "--sep", ",", "--decimal", ","), "--decimal")


def test_predict_rejects_what_fit_rejects(tmp_path, penguins):
    path, df = penguins
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", 3, "-o", model).exit_code == 0
    bad = df.astype({"bill_length_mm": object})
    bad.loc[5, "bill_length_mm"] = "39,1"
    f = tmp_path / "bad.csv"
    bad.to_csv(f, index=False)
    for cmd in ("predict", "evaluate"):
        one_line_error(invoke(cmd, model, f), "'bill_length_mm' is numeric in the model", "data row 6: '39,1'",
                       "--decimal ,")


# ---------------------------------------------------------------------------------------- evaluate's label
def test_evaluate_scores_against_the_models_label_only(tmp_path, penguins):
    path, df = penguins
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--label", "island", "--max-depth", 3, "-o", model).exit_code == 0
    # the label column in the middle of the file, not last: it is still the one scored against
    moved = df[["island", "bill_length_mm", "bill_depth_mm", "sex", "species"]]
    f = tmp_path / "moved.csv"
    moved.to_csv(f, index=False)
    rep = json.loads(invoke("evaluate", model, f, "--format", "json").stdout)
    tree = Tree.from_json(model.read_text())
    want = float(np.mean(tree.predict(df.drop(columns=["island"])) == df["island"].to_numpy()))
    assert rep["accuracy"] == pytest.approx(want) and set(rep["classes"]) == {"Biscoe", "Dream", "Torgersen"}
    # a file without the label column: one line naming it, never a score against another column
    f2 = tmp_path / "nolabel.csv"
    df.drop(columns=["island"]).to_csv(f2, index=False)
    one_line_error(invoke("evaluate", model, f2), "no column 'island', the model's label column", "--label")
    f3 = tmp_path / "renamed.csv"
    df.rename(columns={"island": "truth"}).to_csv(f3, index=False)
    r = invoke("evaluate", model, f3, "--label", "truth", "--format", "json")  # asked for explicitly
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["accuracy"] == pytest.approx(want)


# ---------------------------------------------------------------------------------------- limits and Ctrl-C
def test_time_limit_saves_the_best_tree_with_its_own_exit_code(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    df["y"] = (X[:, 0] > 0.5) ^ (X[:, 1] > 0.3) ^ (rng.random(3000) < 0.1)
    f = tmp_path / "d.csv"
    df.to_csv(f, index=False)
    model = tmp_path / "m.json"
    r = invoke("fit", f, "--learner", "optimal", "--max-depth", 4, "--max-binary-features", "5000",
               "--time-limit", "0.5", "-o", model)
    assert r.exit_code == cli.EXIT_LIMIT == 3, r.output
    assert "stopped at its time limit" in r.stderr and "saved the best tree found so far" in r.stderr
    assert Tree.from_json(model.read_text()).n_leaves > 1


def test_ctrl_c_saves_the_best_tree_so_far(tmp_path, sigint_after_ready):
    rng = np.random.default_rng(0)
    X = rng.random((6000, 8))
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(8)])
    df["y"] = np.where((X[:, 0] > 0.5) ^ (rng.random(6000) < 0.3), "a", "b")
    f = tmp_path / "d.csv"
    df.to_csv(f, index=False)
    model = tmp_path / "m.json"
    code = f"""
        import pandas, sklearn, treelearn
        from treelearn.cli import main
        treelearn.OptimalTreeClassifier  # imported before the clock starts: the wait is the fit's
        print("ready", flush=True)
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()):  # the fit's report: only the exit code is printed
            rc = main(["fit", {str(f)!r}, "--learner", "optimal", "--max-depth", "6", "--time-limit", "600",
                       "-o", {str(model)!r}])
        print("exit", rc, flush=True)
        """
    line, _, err, _ = sigint_after_ready(code, wait=4.0)
    assert line == f"exit {cli.EXIT_INTERRUPTED_SAVED}", (line, err[-2000:])
    assert "interrupted (Ctrl-C); saved the best tree found so far" in err
    tree = Tree.from_json(model.read_text())
    assert tree.n_leaves > 1 and set(tree.classes.tolist()) == {"a", "b"}


def test_exit_codes_are_documented():
    text = invoke("--help").stdout
    for code in ("0 done", "3 done at a limit", "4 interrupted", "130", "2 bad input"):
        assert code in " ".join(text.split()), code


# ---------------------------------------------------------------------------------------- export
def test_export_command(tmp_path, penguins):
    path, df = penguins
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", 3, "-o", model).exit_code == 0
    tree = Tree.from_json(model.read_text())
    X = df.drop(columns=["species"])
    r = invoke("export", model, "--format", "python")
    assert r.exit_code == 0, r.output
    ns: dict = {}
    exec(r.stdout, ns)  # noqa: S102 - the code under test
    assert ns["predict"](X.to_numpy(dtype=object).tolist()) == tree.predict(X).tolist()
    for lang, marker in (("c", "int predict(const double *x, double *proba)"), ("sql", "CASE")):
        r = invoke("export", model, "--format", lang)
        assert r.exit_code == 0 and marker in r.stdout
    r = invoke("export", model, "--format", "sql", "--table", "penguins", "--name", "species")
    assert r.stdout.startswith("SELECT") and 'FROM "penguins"' in r.stdout
    one_line_error(invoke("export", model, "--format", "onnx"), "--out")
    if pytest.importorskip("onnx"):
        out = tmp_path / "m.onnx"
        assert invoke("export", model, "--format", "onnx", "-o", out).exit_code == 0 and out.stat().st_size > 0
    one_line_error(invoke("export", model, "--format", "c", "--name", "1bad"), "identifier")


# ---------------------------------------------------------------------------------------- start-up
def _child(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_importing_the_cli_imports_nothing_heavy():
    out = _child("import sys, treelearn.cli\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
                 f"{HEAVY!r}))")
    assert out.strip() == "[]", out


def test_show_reads_a_model_without_scikit_learn(tmp_path, penguins):
    path, _ = penguins
    model = tmp_path / "m.json"
    assert invoke("fit", path, "--max-depth", 3, "-o", model).exit_code == 0
    out = _child("import sys\nfrom treelearn.cli import main\n"
                 f"assert main(['show', {str(model)!r}]) == 0\n"
                 f"print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    assert "HEAVY []" in out and "class: " in out
    assert out.split("HEAVY")[0] == invoke("show", model).stdout


def test_the_package_names_resolve_lazily():
    import treelearn

    names = treelearn.__all__
    assert {"GreedyTreeClassifier", "Tree", "export_code", "TreeLearnValueError", "plot_tree"} <= set(names)
    assert set(names) <= set(dir(treelearn))
    for name in names:
        assert getattr(treelearn, name) is not None
    out = _child("import sys, treelearn\nfrom treelearn import Tree, TreeLearnValueError\n"
                 f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    assert out.strip() == "[]", out
    with pytest.raises(AttributeError):
        treelearn.no_such_name  # noqa: B018
