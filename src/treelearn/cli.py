"""The ``treelearn`` command line.

    treelearn fit data.csv --label class --criterion gini --max-depth 4 --out model.json
    treelearn predict model.json new.csv [--out predictions.csv]
    treelearn show model.json [--format text|dot]
    treelearn evaluate model.json test.csv
    treelearn demo
    treelearn experiment NAME [ARGS...]

Models are the JSON documents of :func:`treelearn.tree.export.tree_to_json` (never pickles).
Errors in the input (missing or unreadable files, unknown columns, malformed models, bad
parameter values) print one line on stderr and exit with code 2.
"""
from __future__ import annotations

import importlib
import math
import pkgutil
import re
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from treelearn._validation import TreeLearnValueError

EXIT_BAD_INPUT = 2


class CLIError(typer.TyperException):
    """A user error: printed as one line, exit code 2."""

    exit_code = EXIT_BAD_INPUT


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


class _OneLineErrorGroup(TyperGroup):
    """Typer's group with usage errors and CLIErrors printed as one line on stderr."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name or "treelearn", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except typer.TyperException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `treelearn` alone: print the help
                typer.echo(exc.format_message())
                return self._exit(0, standalone_mode)
            where = "treelearn"
            ctx = getattr(exc, "ctx", None)
            if ctx is not None and ctx.command_path:
                where = ctx.command_path
            typer.echo(f"{where}: error: {_one_line(exc.format_message())}", err=True)
            rv = exc.exit_code
        except typer.Abort:
            typer.echo("treelearn: aborted", err=True)
            rv = 1
        code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        return self._exit(code, standalone_mode)

    @staticmethod
    def _exit(code: int, standalone_mode: bool) -> int:
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=_OneLineErrorGroup,
    name="treelearn",
    help="Decision trees learned with the algorithms learning theory says work.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


# ---------------------------------------------------------------------------------------- helpers
def _read_csv(path: Path, *, sep: str = ","):
    import pandas as pd

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a CSV file")
    try:
        df = pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise CLIError(f"{path}: cannot read as CSV: {exc}") from None
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    if df.shape[0] == 0:
        raise CLIError(f"{path}: no data rows (only a header)")
    return df


def _label_column(df, label: Optional[str], path: Path, *, what: str = "label") -> str:
    """A column's name from a column name or an integer index (negative from the end);
    ``None``: the last column."""
    columns = [str(c) for c in df.columns]
    df.columns = columns
    if label is None:
        return columns[-1]
    if label in columns:
        return label
    if re.fullmatch(r"[+-]?\d+", label.strip()):
        i = int(label)
        if -len(columns) <= i < len(columns):
            return columns[i]
        raise CLIError(f"{path}: {what} column index {i} out of range for {len(columns)} columns")
    shown = ", ".join(columns[:20]) + (", ..." if len(columns) > 20 else "")
    raise CLIError(f"{path}: unknown {what} column {label!r}; the columns are {shown}")


def _as_categorical(df, columns, path: Path) -> None:
    """Make the listed columns categorical (their values as strings), in place."""
    for c in columns:
        if c not in df.columns:
            raise CLIError(f"{path}: missing column {c!r} that the model needs")
        if df[c].isna().any():
            raise CLIError(f"{path}: column {c!r} has missing values; impute or drop them first")
        df[c] = df[c].astype(str).astype(object)


def _split_xy(df, label: str, path: Path):
    X = df.drop(columns=[label])
    if X.shape[1] == 0:
        raise CLIError(f"{path}: no feature columns besides the label {label!r}")
    return X, df[label]


def _load_model(path: Path):
    from treelearn.tree.export import tree_from_json

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a JSON model")
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    try:
        tree, meta = tree_from_json(text, return_metadata=True)
    except TreeLearnValueError as exc:
        raise CLIError(f"{path}: not a valid treelearn model: {exc}") from None
    return tree, (meta if isinstance(meta, dict) else {})


def _features_for(tree, meta: dict, df, path: Path):
    """The model's feature columns from a CSV (by name when the model has names)."""
    label = meta.get("label") if isinstance(meta.get("label"), str) else None
    columns = [str(c) for c in df.columns]
    df.columns = columns
    cat = meta.get("categorical")
    if isinstance(cat, list) and all(isinstance(c, str) for c in cat):
        _as_categorical(df, cat, path)
    names = tree.feature_names
    if names is not None:
        missing = [n for n in names if n not in columns]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10]) + (", ..." if len(missing) > 10 else "")
            raise CLIError(f"{path}: missing column(s) {shown} that the model needs")
        return df[list(names)]
    X = df.drop(columns=[label]) if label in columns else df
    if X.shape[1] != tree.n_features:
        raise CLIError(f"{path}: has {X.shape[1]} feature columns, the model expects {tree.n_features}")
    return X


def _make_learner(criterion: str, max_depth, max_leaves, min_samples_leaf, max_thresholds, random_state):
    """The learner ``fit`` and ``demo`` use (the greedy top-down learner of issue 2)."""
    try:
        from treelearn import GreedyTreeClassifier
    except ImportError:
        raise CLIError("GreedyTreeClassifier is not available in this version of treelearn") from None
    return GreedyTreeClassifier(criterion=criterion, max_depth=max_depth, max_leaves=max_leaves,
                                min_samples_leaf=min_samples_leaf, max_thresholds=max_thresholds,
                                random_state=random_state)


def _json_safe(v: Any):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return repr(v)


def _accuracy(pred, y) -> float:
    import numpy as np

    pred = np.asarray(pred)
    y = np.asarray(y)
    if pred.dtype.kind != y.dtype.kind and not (pred.dtype.kind in "iuf" and y.dtype.kind in "iuf"):
        pred, y = pred.astype(str), y.astype(str)
    return float(np.mean(pred == y))


class Criterion(str, Enum):
    entropy = "entropy"
    gini = "gini"
    kearns_mansour = "kearns_mansour"


class Format(str, Enum):
    text = "text"
    dot = "dot"
    json = "json"


# ---------------------------------------------------------------------------------------- commands
@app.command()
def fit(
    data: Path = typer.Argument(..., help="Training data: a CSV file with a header row."),
    label: Optional[str] = typer.Option(None, "--label", "-l",
                                        help="Label column: a name or an index (negative counts from the end); "
                                             "default: the last column."),
    criterion: Criterion = typer.Option(Criterion.entropy, help="Impurity function G."),
    max_depth: Optional[int] = typer.Option(None, min=0, help="Depth limit (0: a single leaf); default: none."),
    max_leaves: Optional[int] = typer.Option(None, min=1, help="Grow best-first (BuildTopDownDT) to this many "
                                                                "leaves; without it, grow depth-first."),
    min_samples_leaf: int = typer.Option(1, min=1, help="Minimum number of samples in a leaf."),
    max_thresholds: Optional[int] = typer.Option(None, min=1, help="At most this many quantile thresholds per numeric "
                                                            "column (default: every midpoint)."),
    categorical: Optional[list[str]] = typer.Option(
        None, "--categorical", "-c", help="Treat this column (name or index) as categorical (conditions x == v); "
                                          "repeat for several. Text columns are categorical anyway."),
    random_state: Optional[int] = typer.Option(None, help="Seed (for reproducible results)."),
    sep: str = typer.Option(",", help="CSV field separator."),
    out: Path = typer.Option(Path("model.json"), "--out", "-o", help="Where to write the JSON model."),
):
    """Fit a greedy top-down tree on a CSV file and save it as JSON."""
    from treelearn.tree.export import tree_to_json

    df = _read_csv(data, sep=sep)
    y_col = _label_column(df, label, data)
    cat_cols = sorted({_label_column(df, c, data, what="categorical") for c in (categorical or [])})
    if y_col in cat_cols:
        raise CLIError(f"{data}: the label column {y_col!r} cannot also be a categorical feature")
    _as_categorical(df, cat_cols, data)
    X, y = _split_xy(df, y_col, data)
    est = _make_learner(criterion.value, max_depth, max_leaves, min_samples_leaf, max_thresholds, random_state)
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
    except ValueError as exc:  # TreeLearnValueError and sklearn's parameter errors
        raise CLIError(f"{data}: {exc}") from None
    seconds = time.perf_counter() - t0
    tree = est.tree_
    params = {k: _json_safe(v) for k, v in est.get_params().items()}
    meta = {"label": y_col, "categorical": cat_cols, "learner": type(est).__name__, "params": params,
            "source": data.name}
    try:
        text = tree_to_json(tree, indent=1, metadata=meta)
    except TreeLearnValueError as exc:
        raise CLIError(f"cannot save the model: {exc}") from None
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{out}: cannot write the model: {exc.strerror or exc}") from None
    acc = _accuracy(tree.predict(X), y)
    typer.echo(f"fitted {type(est).__name__}({criterion.value}) on {len(y)} rows in {seconds:.3f} s: "
               f"{tree.n_leaves} leaves, depth {tree.depth}, training accuracy {acc:.4f}; wrote {out}")


@app.command()
def predict(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    data: Path = typer.Argument(..., help="A CSV file with the model's feature columns (extra columns are ignored)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write a CSV of predictions here "
                                                                 "(default: one per line on stdout)."),
    proba: bool = typer.Option(False, help="Print class probabilities (one column per class) instead."),
    sep: str = typer.Option(",", help="CSV field separator."),
):
    """Predict the class of every row of a CSV file."""
    import pandas as pd

    tree, meta = _load_model(model)
    df = _read_csv(data, sep=sep)
    X = _features_for(tree, meta, df, data)
    try:
        if proba:
            result = pd.DataFrame(tree.predict_proba(X), columns=[str(c) for c in tree.classes.tolist()])
        else:
            name = meta.get("label") if isinstance(meta.get("label"), str) else "prediction"
            result = pd.DataFrame({name: tree.predict(X)})
    except TreeLearnValueError as exc:
        raise CLIError(f"{data}: {exc}") from None
    if out is None:
        if proba:
            typer.echo(result.to_csv(index=False), nl=False)
        else:
            typer.echo("\n".join(str(v) for v in result.iloc[:, 0].tolist()))
        return
    try:
        result.to_csv(out, index=False)
    except OSError as exc:
        raise CLIError(f"{out}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"wrote {len(result)} predictions to {out}", err=True)


@app.command()
def show(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    format: Format = typer.Option(Format.text, "--format", "-f", help="text (rules), dot (Graphviz) or json."),
    decimals: int = typer.Option(2, min=0, max=17, help="Decimals of thresholds (text) / numbers (dot)."),
    show_weights: bool = typer.Option(False, help="text: print each leaf's class counts."),
    max_depth: int = typer.Option(10, min=0, help="text: truncate branches below this depth."),
    filled: bool = typer.Option(True, help="dot: colour nodes by majority class."),
):
    """Print a model as text rules, Graphviz DOT or JSON."""
    from treelearn.tree.export import export_graphviz, export_text, tree_to_json

    tree, meta = _load_model(model)
    if format == Format.text:
        typer.echo(export_text(tree, decimals=decimals, show_weights=show_weights, max_depth=max_depth), nl=False)
    elif format == Format.dot:
        typer.echo(export_graphviz(tree, filled=filled, precision=decimals, rounded=True), nl=False)
    else:
        typer.echo(tree_to_json(tree, indent=1, metadata=meta or None))


@app.command()
def evaluate(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    data: Path = typer.Argument(..., help="A labelled CSV file (test data)."),
    label: Optional[str] = typer.Option(None, "--label", "-l",
                                        help="Label column (name or index); default: the model's label "
                                             "column if the file has it, else the last column."),
    sep: str = typer.Option(",", help="CSV field separator."),
):
    """Accuracy, size and depth of a model on a labelled CSV file."""
    tree, meta = _load_model(model)
    df = _read_csv(data, sep=sep)
    df.columns = [str(c) for c in df.columns]
    if label is None and isinstance(meta.get("label"), str) and meta["label"] in df.columns:
        label = meta["label"]
    y_col = _label_column(df, label, data)
    if df[y_col].isna().any():
        raise CLIError(f"{data}: the label column {y_col!r} has missing values")
    X = _features_for(tree, meta, df.drop(columns=[y_col]), data)
    try:
        pred = tree.predict(X)
    except TreeLearnValueError as exc:
        raise CLIError(f"{data}: {exc}") from None
    acc = _accuracy(pred, df[y_col].to_numpy())
    typer.echo(f"accuracy: {acc:.4f}")
    typer.echo(f"samples: {len(pred)}")
    typer.echo(f"leaves: {tree.n_leaves}")
    typer.echo(f"depth: {tree.depth}")


@app.command()
def demo(
    max_depth: int = typer.Option(4, min=1, help="Depth limit of the depth-first trees."),
    max_leaves: int = typer.Option(8, min=2, help="Leaf budget of the best-first trees."),
    test_size: float = typer.Option(0.3, min=0.05, max=0.95, help="Fraction of rows held out for testing."),
    random_state: int = typer.Option(0, help="Seed of the train/test split."),
    trees: bool = typer.Option(True, help="Print every fitted tree."),
):
    """Greedy trees vs scikit-learn on the breast-cancer data (a quick tour)."""
    try:
        run_demo(max_depth=max_depth, max_leaves=max_leaves, test_size=test_size, random_state=random_state,
                 show_trees=trees, make_learner=_make_learner)
    except TreeLearnValueError as exc:
        raise CLIError(str(exc)) from None


def run_demo(*, max_depth: int = 4, max_leaves: int = 8, test_size: float = 0.3, random_state: int = 0,
             show_trees: bool = True, make_learner=None, repeats: int = 5) -> list[dict]:
    """Fit the greedy learners (each criterion; depth-first to ``max_depth`` and best-first to
    ``max_leaves`` leaves) and scikit-learn's DecisionTreeClassifier with the same limits on a
    stratified split of scikit-learn's breast-cancer data; print the trees and a comparison
    table. Returns the table's rows (dicts). Fit times are medians of ``repeats`` fits."""
    import numpy as np
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    from treelearn.tree.export import export_text

    make_learner = make_learner or _make_learner
    console = Console(width=None if sys.stdout.isatty() else 132, highlight=False)
    data = load_breast_cancer(as_frame=True)
    X = data.data
    y = np.asarray(data.target_names)[data.target.to_numpy()]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, stratify=y,
                                                        random_state=random_state)
    console.print(f"[bold]breast cancer[/bold]: {X.shape[0]} rows, {X.shape[1]} numeric features, classes "
                  f"{', '.join(data.target_names)}; stratified split {len(y_train)} train / {len(y_test)} test "
                  f"(random_state={random_state})")

    def timed_fit(make):
        times, est = [], None
        for _ in range(max(1, repeats)):
            est = make()
            t0 = time.perf_counter()
            est.fit(X_train, y_train)
            times.append(time.perf_counter() - t0)
        return est, float(np.median(times))

    rows = []
    for crit in ("entropy", "gini", "kearns_mansour"):
        for growth, depth, leaves in (("depth-first", max_depth, None), ("best-first", None, max_leaves)):
            ours, t_ours = timed_fit(lambda: make_learner(crit, depth, leaves, 1, None, random_state))
            row = {"criterion": crit, "growth": growth,
                   "limit": f"max_depth={depth}" if depth is not None else f"max_leaves={leaves}",
                   "leaves": ours.tree_.n_leaves, "depth": ours.tree_.depth,
                   "accuracy": float(ours.score(X_test, y_test)), "fit_ms": 1000 * t_ours}
            if crit in ("entropy", "gini"):
                sk, t_sk = timed_fit(lambda: DecisionTreeClassifier(
                    criterion=crit, max_depth=depth, max_leaf_nodes=leaves, random_state=random_state))
                row.update(sk_leaves=int(sk.get_n_leaves()), sk_depth=int(sk.get_depth()),
                           sk_accuracy=float(sk.score(X_test, y_test)), sk_fit_ms=1000 * t_sk)
            rows.append(row)
            if show_trees:
                console.rule(f"treelearn {crit}, {growth} ({row['limit']}): {row['leaves']} leaves, "
                             f"depth {row['depth']}, test accuracy {row['accuracy']:.4f}")
                console.print(Text(export_text(ours, decimals=3).rstrip("\n")))
    table = Table(title="Greedy top-down trees (treelearn) vs scikit-learn's DecisionTreeClassifier",
                  caption="acc: accuracy on the held-out test rows; ms: median fit time; "
                          "scikit-learn has no Kearns-Mansour criterion")
    table.add_column("criterion", no_wrap=True)
    table.add_column("growth", no_wrap=True)
    for col in ("leaves", "depth", "acc", "ms"):
        table.add_column(col, justify="right", style="cyan", no_wrap=True)
    for col in ("sklearn leaves", "depth", "acc", "ms"):
        table.add_column(col, justify="right", style="magenta", no_wrap=True)
    for r in rows:
        sk = ([str(r["sk_leaves"]), str(r["sk_depth"]), f"{r['sk_accuracy']:.4f}", f"{r['sk_fit_ms']:.2f}"]
              if "sk_leaves" in r else ["n/a"] * 4)
        growth = r["growth"] + (f", depth <= {max_depth}" if r["growth"] == "depth-first" else f", {max_leaves} leaves")
        table.add_row(r["criterion"], growth, str(r["leaves"]), str(r["depth"]),
                      f"{r['accuracy']:.4f}", f"{r['fit_ms']:.2f}", *sk)
    console.print(table)
    return rows


def available_experiments() -> list[str]:
    """Names (with dashes) of the modules in ``treelearn.experiments``."""
    import treelearn.experiments as pkg

    names = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    return sorted(n.replace("_", "-") for n in names)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
def experiment(
    ctx: typer.Context,
    name: Optional[str] = typer.Argument(None, help="The experiment (see the list with --help)."),
):
    """Run an experiment: treelearn experiment NAME [ARGS...] (ARGS go to the experiment; NAME --help shows them)."""
    available = available_experiments()
    if name is None or name in ("-h", "--help"):
        typer.echo("Usage: treelearn experiment NAME [ARGS...]\n")
        typer.echo("Runs treelearn.experiments.<NAME with - as _>.main(ARGS); `treelearn experiment NAME --help`")
        typer.echo("lists an experiment's options (--data-dir, --out-dir, --quick, ...).\n")
        typer.echo("Available experiments: " + (", ".join(available) if available else "(none yet)"))
        return
    key = name.replace("_", "-")
    if key not in available:
        raise CLIError(f"unknown experiment {name!r}; available: {', '.join(available) if available else '(none yet)'}")
    module = importlib.import_module("treelearn.experiments." + key.replace("-", "_"))
    entry = getattr(module, "main", None)
    if not callable(entry):
        raise CLIError(f"experiment {key!r} has no main(argv) function")
    try:
        rc = entry(list(ctx.args))
    except SystemExit as exc:  # argparse --help / usage errors
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except TreeLearnValueError as exc:
        raise CLIError(f"experiment {key}: {exc}") from None
    raise typer.Exit(int(rc or 0))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``treelearn`` console script; returns the exit code."""
    command = typer.main.get_command(app)
    return command.main(args=argv, prog_name="treelearn", standalone_mode=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
