"""``treelearn fit``: any learner on a CSV file, saved as a JSON model.

The data are read by the one reader (:mod:`treelearn.cli.csvio`) and the reading options are
stored in the model, so that ``predict`` and ``evaluate`` read their files the same way. A search
stopped by its time limit or by Ctrl-C saves the best tree it found, says so on stderr and exits
with its own code (:mod:`treelearn.cli.common`).
"""
from __future__ import annotations

import json
import time
import warnings
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from treelearn.cli import csvio
from treelearn.cli.common import (
    EXIT_DONE, EXIT_INTERRUPTED_SAVED, EXIT_LIMIT, CLIError, OutFormat, accuracy, csv_cell, json_safe, one_line,
)
from treelearn.cli.model import column_name


class Learner(str, Enum):
    greedy = "greedy"
    topk = "topk"
    optimal = "optimal"
    minrank = "minrank"
    pruned = "pruned"


LEARNER_CLASSES = {
    "greedy": "GreedyTreeClassifier",
    "topk": "TopKTreeClassifier",
    "optimal": "OptimalTreeClassifier",
    "minrank": "MinRankTreeClassifier",
    "pruned": "PrunedTreeClassifier",
}
#: the learners of ``--task regression``
REGRESSOR_CLASSES = {
    "greedy": "GreedyTreeRegressor",
    "pruned": "PrunedTreeRegressor",
}


class Task(str, Enum):
    auto = "auto"
    classification = "classification"
    regression = "regression"


class Criterion(str, Enum):
    entropy = "entropy"
    gini = "gini"
    kearns_mansour = "kearns_mansour"
    squared_error = "squared_error"
    friedman_mse = "friedman_mse"
    absolute_error = "absolute_error"
    poisson = "poisson"


def looks_continuous(y) -> bool:
    """A numeric label column with more distinct values than half its rows (and at least 20
    rows): ``--task auto`` fits a regression tree on it."""
    import numpy as np
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y) or len(y) < 20:
        return False
    return int(np.unique(np.asarray(y)).size) > len(y) / 2


class Splitter(str, Enum):
    best = "best"
    random = "random"


def max_features_value(text: str | None):
    """``--max-features``: "sqrt", "log2", an integer or a fraction, as scikit-learn's."""
    if text is None or text in ("sqrt", "log2"):
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise CLIError(f"--max-features must be sqrt, log2, an integer or a fraction in (0, 1], got {text!r}")


def binary_features_value(text: str | None):
    """``--max-binary-features``: an integer, "auto" or "all" (every threshold: the estimator's
    ``max_binary_features=None``, returned as the string "all" for the caller to set)."""
    if text is None or text in ("auto", "all"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise CLIError(f"--max-binary-features must be a positive integer, auto or all, got {text!r}")
    return value


class Pruning(str, Enum):
    bound = "bound"
    ccp = "ccp"
    mcart = "mcart"


#: estimator parameters that have a `fit` option
CLI_PARAMS = {"criterion", "max_depth", "max_leaves", "min_samples_leaf", "max_thresholds", "k",
              "max_binary_features", "max_rank", "pruning", "delta", "cv", "time_limit", "memory_limit_mb",
              "n_jobs", "random_state", "verbose", "categorical", "min_weight_fraction_leaf", "max_features",
              "splitter"}


def make_learner(learner: str, params: dict, regression: bool = False):
    """An estimator of ``learner`` (greedy, topk, optimal, minrank, pruned; a regressor with
    ``regression``) with the given parameters (``None`` values are left at the learner's
    default). A parameter the learner does not take is an error that names the learner's options."""
    import treelearn

    if regression and learner not in REGRESSOR_CLASSES:
        raise CLIError(f"--task regression needs --learner {' or '.join(REGRESSOR_CLASSES)} (got {learner})")
    cls = getattr(treelearn, (REGRESSOR_CLASSES if regression else LEARNER_CLASSES)[learner], None)
    if cls is None:
        raise CLIError(f"the {learner} learner is not available in this version of treelearn")
    est = cls()
    accepted = est.get_params(deep=False)
    given = {k: v for k, v in params.items() if v is not None}
    bad = sorted(k for k in given if k not in accepted)
    if bad:
        opts = ", ".join("--" + k.replace("_", "-") for k in bad)
        takes = ", ".join("--" + k.replace("_", "-") for k in sorted(accepted) if k in CLI_PARAMS)
        raise CLIError(f"{opts} does not apply to --learner {learner} (it takes {takes})")
    try:
        est.set_params(**given)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return est


def fitted_facts(est) -> dict:
    """What a fitted estimator says about its search (those attributes it has)."""
    import numpy as np

    facts = {}
    for attr in ("is_optimal_", "timed_out_", "training_error_", "rank_", "n_binary_features_", "ccp_alpha_",
                 "bound_"):
        v = getattr(est, attr, None)
        if isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating)):
            facts[attr.rstrip("_")] = v.item() if hasattr(v, "item") else v
    if hasattr(est, "feature_space_"):  # Top-k / optimal: over which space the tree is optimal, in words
        from treelearn.learn.topk.summary import optimality_summary

        facts["optimality"] = optimality_summary(est)
    return facts


def _run_fit(est, X, y, data: Path, learner: str, nan_cols: list):
    """Fit; returns ``(tree, stop, why)`` where ``stop`` is None (done), ``"limit"`` (a time limit
    or memory cap stopped the search: its best tree) or ``"interrupted"`` (Ctrl-C: the best tree so
    far, when the search had one; without one KeyboardInterrupt propagates), and ``why`` says what
    stopped it."""
    from treelearn._limits import SearchLimitWarning

    limits: list[str] = []
    others: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SearchLimitWarning)
        try:
            est.fit(X, y)
        except KeyboardInterrupt as exc:
            partial = getattr(exc, "partial_tree", None)
            if partial is None:
                raise
            return partial, "interrupted", f"{type(est).__name__} was interrupted (Ctrl-C)"
        except ValueError as exc:  # TreeLearnValueError and sklearn's parameter errors
            msg = one_line(str(exc))
            if nan_cols and not any(c in msg for c in nan_cols):
                msg = (f"column {nan_cols[0]!r} has missing values, which --learner {learner} does not accept "
                       f"yet ({msg})")
            raise CLIError(f"{data}: {msg}") from None
        except MemoryError:
            raise CLIError(f"{data}: out of memory while fitting; lower --max-depth, --k or --memory-limit-mb") \
                from None
        finally:
            for w in caught:  # the limit is reported by the caller; any other warning is shown as usual
                if issubclass(w.category, SearchLimitWarning):
                    limits.append(str(w.message).split(";")[0])
                else:
                    others.append(w)
    for w in others:  # (after the recording: inside it, showing one would record it again)
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if getattr(est, "timed_out_", False) or limits:
        return est.tree_, "limit", limits[0] if limits else f"{type(est).__name__} stopped at a limit"
    return est.tree_, None, ""


def _stop_line(why: str, tree, out: Path) -> str:
    """The line of a fit that stopped early (time limit, memory cap, Ctrl-C): what stopped it and
    what was saved."""
    return (f"treelearn fit: {why}; saved the best tree found so far ({tree.n_leaves} leaves, "
            f"{tree.training_misclassifications():g} training errors) to {out}")


def _save(tree, meta: dict, out: Path) -> None:
    try:
        text = tree.to_json(indent=1, metadata=meta)
    except ValueError as exc:  # TreeLearnValueError: what JSON cannot hold
        raise CLIError(f"cannot save the model: {exc}") from None
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{out}: cannot write the model: {exc.strerror or exc}") from None


def fit(
    data: Path = typer.Argument(..., help="Training data: a CSV file (header row detected, or --header/--no-header)."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="Label column: a name or an index (negative "
                                                                     "counts from the end); default: the last column."),
    task: Task = typer.Option(Task.auto, "--task", help="classification, regression (a numeric label: the leaves "
                                                         "predict means), or auto: regression when the label is "
                                                         "numeric with more distinct values than half the rows."),
    learner: Learner = typer.Option(Learner.greedy, "--learner", "-L",
                                    help="greedy (ID3/CART/Kearns-Mansour, paper 000), topk and optimal (003), "
                                         "minrank (minimum-rank consistent tree, 001), pruned (bound pruning, 002)."),
    criterion: Optional[Criterion] = typer.Option(None, help="Impurity function G (greedy, topk, optimal, pruned; "
                                                             "default: the learner's); regression: squared_error, "
                                                             "friedman_mse, absolute_error or poisson."),
    max_depth: Optional[int] = typer.Option(None, min=0, help="Depth limit (0: a single leaf). greedy/pruned: none "
                                                              "by default; topk/optimal: 3."),
    max_leaves: Optional[int] = typer.Option(None, min=1, help="greedy: grow best-first (BuildTopDownDT) to this many "
                                                               "leaves; pruned: leaves of the tree before pruning."),
    min_samples_leaf: Optional[int] = typer.Option(None, min=1, help="Minimum number of samples in a leaf "
                                                                     "(greedy, pruned)."),
    min_weight_fraction_leaf: Optional[float] = typer.Option(
        None, help="Every leaf holds at least this fraction of the training weight (greedy, pruned, topk, optimal)."),
    max_features: Optional[str] = typer.Option(None, help="greedy: features drawn per node (sqrt, log2, a number or "
                                                          "a fraction), as scikit-learn's."),
    splitter: Optional[Splitter] = typer.Option(None, help="greedy: best, or random (one random threshold per "
                                                           "drawn feature)."),
    max_thresholds: Optional[int] = typer.Option(None, min=1, help="At most this many quantile thresholds per "
                                                                   "numeric column (default: every midpoint)."),
    k: Optional[int] = typer.Option(None, "--k", "-k", min=1, help="topk: the k best features tried at every node."),
    max_binary_features: Optional[str] = typer.Option(None, help="topk/optimal: about this many binary features "
                                                                   "(an integer), all (every threshold, whatever "
                                                                   "it costs) or auto (the default: every "
                                                                   "threshold when the estimate is cheap, else 100)."),
    max_rank: Optional[int] = typer.Option(None, min=0, help="minrank: fail when the sample's rank exceeds this."),
    pruning: Optional[Pruning] = typer.Option(None, help="pruned: bound (Shawe-Taylor bound, no CV), ccp (CART "
                                                         "cost-complexity with CV) or mcart."),
    delta: Optional[float] = typer.Option(None, help="pruned: confidence of the bound."),
    cv: Optional[int] = typer.Option(None, min=2, help="pruned (ccp, mcart): folds of the cross-validation."),
    time_limit: Optional[float] = typer.Option(None, help="Seconds the search may take (topk, optimal, minrank); at "
                                                          "the limit the best tree found is saved (exit code 3)."),
    memory_limit_mb: Optional[float] = typer.Option(None,
                                                    help="Memory cap of the search in MB (topk, optimal, minrank)."),
    n_jobs: Optional[int] = typer.Option(None, help="Threads of the search (topk, optimal)."),
    categorical: Optional[list[str]] = typer.Option(
        None, "--categorical", "-c", help="Read this column (name or index) as categorical (conditions x == v) "
                                          "whatever its cells; repeat for several. Text columns are categorical anyway."),
    random_state: Optional[int] = typer.Option(None, help="Seed (for reproducible results)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print progress on stderr (the search's own when "
                                                                 "the learner reports it)."),
    na_values: Optional[str] = csvio.NA_OPTION,
    header: Optional[bool] = csvio.HEADER_OPTION,
    sep: Optional[str] = csvio.SEP_OPTION,
    decimal: Optional[str] = csvio.DECIMAL_OPTION,
    out: Path = typer.Option(Path("model.json"), "--out", "-o", help="Where to write the JSON model."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f", help="Report as text, csv or json."),
):
    """Fit a tree with any treelearn learner on a CSV file and save it as JSON. Ctrl-C or the time
    limit saves the best tree found so far."""
    opts = csvio.CsvOptions.from_cli(sep=sep, decimal=decimal, na_values=na_values, header=header)
    table = csvio.read_table(data, opts)
    y_col = column_name(table.names, label, data)
    cat_cols = sorted({column_name(table.names, c, data, what="categorical") for c in (categorical or [])})
    if y_col in cat_cols:
        raise CLIError(f"{data}: the label column {y_col!r} cannot also be a categorical feature")
    df, columns = csvio.typed_frame(table, categorical=cat_cols, labels={y_col})
    X = df.drop(columns=[y_col])
    if X.shape[1] == 0:
        raise CLIError(f"{data}: no feature columns besides the label {y_col!r}")
    y = df[y_col]
    if y.isna().any():
        raise CLIError(f"{data}: the label column {y_col!r} has {int(y.isna().sum())} missing value(s); "
                       "every row needs a label")
    regression = task == Task.regression or (task == Task.auto and looks_continuous(y))
    if regression and task == Task.auto:
        typer.echo(f"treelearn fit: the label {y_col!r} is numeric with {y.nunique()} distinct values in {len(y)} "
                   "rows: fitting a regression tree (--task classification to classify)", err=True)
    params = dict(criterion=criterion.value if criterion else None, max_depth=max_depth, max_leaves=max_leaves,
                  min_samples_leaf=min_samples_leaf, max_thresholds=max_thresholds, k=k,
                  max_binary_features=None if (mbf := binary_features_value(max_binary_features)) == "all" else mbf,
                  max_rank=max_rank,
                  pruning=pruning.value if pruning else None, delta=delta, cv=cv, time_limit=time_limit,
                  memory_limit_mb=memory_limit_mb, n_jobs=n_jobs, random_state=random_state,
                  min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features_value(max_features),
                  splitter=splitter.value if splitter else None)
    est = make_learner(learner.value, params, regression)
    if mbf == "all":  # (None is "not given" to make_learner: every threshold is set here)
        if "max_binary_features" not in est.get_params(deep=False):
            raise CLIError(f"--max-binary-features does not apply to --learner {learner.value}")
        est.set_params(max_binary_features=None)
    if verbose and "verbose" in est.get_params(deep=False):
        est.set_params(verbose=1)
    if verbose:
        shown = est.get_params(deep=False)
        typer.echo(f"treelearn fit: {type(est).__name__}({', '.join(f'{a}={b!r}' for a, b in shown.items())}) on "
                   f"{X.shape[0]} rows x {X.shape[1]} columns of {data.name}, label {y_col!r}; "
                   f"{columns.summary()}", err=True)
    t0 = time.perf_counter()
    tree, stop, why = _run_fit(est, X, y, data, learner.value, columns.missing)
    seconds = time.perf_counter() - t0
    facts = fitted_facts(est) if stop != "interrupted" else {"interrupted": True}
    meta = {"label": y_col, "categorical": columns.categorical, "learner": type(est).__name__,
            "task": "regression" if regression else "classification",
            "params": {k_: json_safe(v) for k_, v in est.get_params(deep=False).items()},
            "source": data.name, "csv": opts.to_json(), "fit": {k_: json_safe(v) for k_, v in facts.items()}}
    _save(tree, meta, out)
    typer.echo(f"treelearn fit: {data.name}: {len(y)} rows, {X.shape[1]} feature columns; {columns.summary()}",
               err=True)
    if stop is not None:
        typer.echo(_stop_line(why, tree, out), err=True)
    _report(format, learner.value, est, tree, X, y, seconds, facts, columns, out)
    raise typer.Exit({None: EXIT_DONE, "limit": EXIT_LIMIT, "interrupted": EXIT_INTERRUPTED_SAVED}[stop])


def _report(format: OutFormat, learner: str, est, tree, X, y, seconds: float, facts: dict, columns, out: Path):
    if tree.is_regression:
        from sklearn.metrics import r2_score

        acc = float(r2_score(y.to_numpy(dtype=float), tree.predict(X)))
        measure = ("training_r2", "training R^2")
    else:
        acc = accuracy(tree.predict(X), y)
        measure = ("training_accuracy", "training accuracy")
    report = {"learner": learner, "estimator": type(est).__name__, "rows": int(len(y)),
              "seconds": round(seconds, 6), "leaves": tree.n_leaves, "depth": tree.depth,
              measure[0]: acc, **facts, "categorical": list(columns.categorical), "model": str(out)}
    if format == OutFormat.json:
        typer.echo(json.dumps(report))
    elif format == OutFormat.csv:
        report["categorical"] = " ".join(report["categorical"])
        typer.echo(",".join(report) + "\n" + ",".join(csv_cell(v) for v in report.values()))
    else:
        extra = "".join(f", {k_.replace('_', ' ')} {v}" for k_, v in facts.items()
                        if k_ not in ("training_error", "interrupted"))
        typer.echo(f"fitted {type(est).__name__} on {len(y)} rows in {seconds:.3f} s: {tree.n_leaves} leaves, "
                   f"depth {tree.depth}, {measure[1]} {acc:.4f}{extra}; wrote {out}")
