"""The command line on a numeric target: `fit --task regression` (and auto, with one line saying
so), `predict` printing values, `evaluate` printing RMSE, MAE and R^2 (checked against
scikit-learn's metrics on the saved model's predictions)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
from typer.testing import CliRunner

import treelearn.cli as cli
from treelearn.tree import Tree

runner = CliRunner()


def _csv(tmp_path, n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    df["weight"] = np.round(3000 + 400 * df["a"] + 100 * (df["b"] > 0) + rng.normal(scale=50, size=n))
    path = tmp_path / "births.csv"
    df.to_csv(path, index=False)
    return path, df


def test_fit_auto_chooses_regression_and_evaluate_reports_rmse_mae_r2(tmp_path):
    path, df = _csv(tmp_path)
    model = tmp_path / "m.json"
    res = runner.invoke(cli.app, ["fit", str(path), "--max-depth", "3", "-o", str(model)])
    assert res.exit_code == 0, res.output
    assert "fitting a regression tree" in res.output and "training R^2" in res.output
    tree = Tree.load(model)
    assert tree.is_regression
    pred = tree.predict(df[["a", "b"]].to_numpy())
    res = runner.invoke(cli.app, ["evaluate", str(model), str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    y = df["weight"].to_numpy()
    assert rep["rmse"] == np.sqrt(mean_squared_error(y, pred))
    assert rep["mae"] == mean_absolute_error(y, pred) and rep["r2"] == r2_score(y, pred)
    res = runner.invoke(cli.app, ["evaluate", str(model), str(path)])
    assert "RMSE:" in res.output and "MAE:" in res.output and "R^2:" in res.output
    res = runner.invoke(cli.app, ["predict", str(model), str(path)])
    assert res.exit_code == 0
    np.testing.assert_allclose([float(v) for v in res.output.split()], pred)
    res = runner.invoke(cli.app, ["predict", str(model), str(path), "--proba"])
    assert res.exit_code != 0 and "probabilities" in res.output


def test_task_flags(tmp_path):
    path, _ = _csv(tmp_path)
    model = tmp_path / "m.json"
    res = runner.invoke(cli.app, ["fit", str(path), "--task", "classification", "--max-depth", "2", "-o",
                                  str(model)])
    assert res.exit_code == 0 and not Tree.load(model).is_regression
    res = runner.invoke(cli.app, ["fit", str(path), "--task", "regression", "--criterion", "poisson",
                                  "--max-depth", "2", "-o", str(model)])
    assert res.exit_code == 0 and Tree.load(model).is_regression
    assert "fitting a regression tree" not in res.output
    res = runner.invoke(cli.app, ["fit", str(path), "--task", "regression", "--learner", "pruned", "--cv", "3",
                                  "-o", str(model)])
    assert res.exit_code == 0 and Tree.load(model).is_regression
    res = runner.invoke(cli.app, ["fit", str(path), "--task", "regression", "--learner", "topk", "-o", str(model)])
    assert res.exit_code != 0 and "--task regression needs --learner greedy or pruned" in res.output
