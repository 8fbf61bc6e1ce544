"""The ``treelearn`` command line.

    treelearn fit data.csv --label class --learner topk --k 3 --max-depth 4 --out model.json
    treelearn predict model.json new.csv [--out predictions.csv] [--format text|csv|json]
    treelearn show model.json [--format text|dot|json|html]
    treelearn evaluate model.json test.csv [--format text|csv|json]
    treelearn demo [--out-dir results/demo]
    treelearn experiment NAME [ARGS...]

Models are the JSON documents of :func:`treelearn.tree.export.tree_to_json` (never pickles).
Errors in the input (missing or unreadable files, unknown columns, malformed models, bad
parameter values) print one line on stderr and exit with code 2.
"""
from __future__ import annotations

import importlib
import json
import math
import pkgutil
import re
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import numpy as np
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
        except KeyboardInterrupt:
            rv = 130
        code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        if code == 130:  # typer turns Ctrl-C (KeyboardInterrupt) into exit code 130
            typer.echo("treelearn: interrupted", err=True)
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
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_show_locals=False,
)


# ---------------------------------------------------------------------------------------- CSV input
DEFAULT_NA_VALUES = ("?", "", "NA")


def _na_list(na_values: Optional[str]) -> list[str]:
    """``--na-values``: comma-separated markers of missing cells (default ``?``, empty, ``NA``);
    ``--na-values none``: no marker (every cell is a value)."""
    if na_values is None:
        return list(DEFAULT_NA_VALUES)
    if na_values.strip().lower() == "none":
        return []
    return [v.strip() for v in na_values.split(",")]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _detect_header(rows: list[list[str]], na: set[str]) -> bool:
    """Whether the first row of a CSV (read as strings) is a header row.

    A header when no cell of the first row is a number or a missing marker, and some column
    is told apart by it: numeric below but not in the first row, or (text columns) a first-row
    value that never occurs again in its column."""
    first = rows[0]
    if len(rows) < 2:  # one line: a header unless it holds a number or a missing marker
        return not any(c.strip() in na or _is_number(c.strip()) for c in first)
    if any(c.strip() in na or _is_number(c.strip()) for c in first):
        return False
    body = rows[1:]
    for j, name in enumerate(first):
        col = [r[j].strip() for r in body if j < len(r) and r[j].strip() not in na]
        if col and all(_is_number(v) for v in col):
            return True  # a numeric column under a text cell
    for j, name in enumerate(first):
        col = {r[j].strip() for r in body if j < len(r)}
        if name.strip() not in col:
            return True  # a name that never occurs as a value
    return False


def _read_csv(path: Path, *, sep: str = ",", na_values: Optional[str] = None, header: Optional[bool] = None,
              quiet: bool = False):
    """Read a CSV file: every row kept; cells in ``na_values`` are missing (NaN); a column whose
    other cells are all numbers is numeric (a ``?`` in it does not make it text); the header row
    is detected unless ``header`` says whether there is one (without one, the columns are named
    ``x0, x1, ...``)."""
    import pandas as pd

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a CSV file")
    na = _na_list(na_values)
    try:
        raw = pd.read_csv(path, sep=sep, header=None, dtype=str, keep_default_na=False, na_filter=False,
                          skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise CLIError(f"{path}: cannot read as CSV: {exc}") from None
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    rows = raw.to_numpy(dtype=object).tolist()
    if not rows:
        raise CLIError(f"{path}: the file is empty")
    has_header = _detect_header([[str(c) for c in r] for r in rows[:1000]], set(na)) if header is None else header
    if has_header:
        names = [str(c).strip() for c in rows[0]]
        body = rows[1:]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:  # as pandas does: a, a.1, a.2, ...
            seen: dict[str, int] = {}
            taken = set(names)
            for j, n in enumerate(names):
                if n in seen:
                    k = seen[n]
                    while f"{n}.{k}" in taken:
                        k += 1
                    names[j] = f"{n}.{k}"
                    taken.add(names[j])
                    seen[n] = k + 1
                else:
                    seen[n] = 1
            if not quiet:
                shown = ", ".join(map(repr, dup[:5])) + (", ..." if len(dup) > 5 else "")
                typer.echo(f"{path}: the header row repeats the column name(s) {shown}; the repeats are "
                           "renamed NAME.1, NAME.2, ...", err=True)
    else:
        names = [f"x{j}" for j in range(len(rows[0]))]
        body = rows
        if header is None and not quiet:
            typer.echo(f"{path}: no header row detected; the columns are named x0..x{len(names) - 1} "
                       "(--header to read the first row as names)", err=True)
    if not body:
        raise CLIError(f"{path}: no data rows (only a header)")
    df = pd.DataFrame(body, columns=names)
    na_set = set(na)
    for c in names:
        col = df[c].astype(str).str.strip()
        missing = col.isin(na_set)
        values = col.where(~missing)
        present = values[~missing]
        try:
            numeric = pd.to_numeric(present)
        except (ValueError, TypeError, OverflowError):
            df[c] = values.astype(object).where(~missing, np.nan)
            continue
        if numeric.dtype.kind not in "iuf":  # e.g. integers too large for int64/uint64
            df[c] = values.astype(object).where(~missing, np.nan)
            continue
        out = pd.Series(np.nan, index=df.index, dtype=np.float64) if missing.any() else None
        if out is None:
            df[c] = numeric
        else:
            out[~missing] = numeric.astype(np.float64)
            df[c] = out
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
    """Make the listed columns categorical (their values as strings; missing cells stay NaN)."""
    import pandas as pd

    for c in columns:
        if c not in df.columns:
            raise CLIError(f"{path}: missing column {c!r} that the model needs")
        col = df[c]
        df[c] = col.map(lambda v: v if pd.isna(v) else (str(int(v)) if isinstance(v, float) and v.is_integer()
                                                          else str(v))).astype(object)


def _split_xy(df, label: str, path: Path):
    X = df.drop(columns=[label])
    if X.shape[1] == 0:
        raise CLIError(f"{path}: no feature columns besides the label {label!r}")
    y = df[label]
    if y.isna().any():
        raise CLIError(f"{path}: the label column {label!r} has {int(y.isna().sum())} missing value(s); "
                       "every row needs a label")
    return X, y


MAX_MODEL_BYTES = 256 * 1024 * 1024


def _load_model(path: Path):
    from treelearn.tree.export import load_tree_json

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a JSON model")
    try:
        tree, meta = load_tree_json(path, max_bytes=MAX_MODEL_BYTES, return_metadata=True)
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    except TreeLearnValueError as exc:
        raise CLIError(f"{path}: not a valid treelearn model: {exc}") from None
    return tree, (meta if isinstance(meta, dict) else {})


def _used_features(tree) -> list[int]:
    return sorted({int(f) for f in tree.feature[tree.children_left >= 0]})


def _features_for(tree, meta: dict, df, path: Path):
    """The model's feature columns from a CSV, by name when the model has names. Only the
    columns the tree reads are required; the others are filled with a placeholder."""
    label = meta.get("label") if isinstance(meta.get("label"), str) else None
    columns = [str(c) for c in df.columns]
    df.columns = columns
    names = tree.feature_names
    used = _used_features(tree)
    if names is not None:
        needed = [names[j] for j in used]
        missing = [n for n in needed if n not in columns]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10]) + (", ..." if len(missing) > 10 else "")
            raise CLIError(f"{path}: missing column(s) {shown} that the model needs")
        cat = meta.get("categorical")
        if isinstance(cat, list) and all(isinstance(c, str) for c in cat):
            _as_categorical(df, [c for c in cat if c in columns], path)
        X = df.reindex(columns=list(names))
        for j, name in enumerate(names):
            if j not in used and name not in columns:
                cats = tree.schema.categories[j]
                X[name] = cats[0] if cats is not None else 0.0
        return X
    X = df.drop(columns=[label]) if label in columns else df
    if X.shape[1] != tree.n_features:
        raise CLIError(f"{path}: has {X.shape[1]} feature columns, the model expects {tree.n_features}")
    return X


def _json_safe(v: Any):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return repr(v)


def _same_kind(pred, y):
    pred = np.asarray(pred)
    y = np.asarray(y)
    if pred.dtype.kind != y.dtype.kind and not (pred.dtype.kind in "iuf" and y.dtype.kind in "iuf"):
        pred, y = pred.astype(str), y.astype(str)
    return pred, y


def _accuracy(pred, y) -> float:
    pred, y = _same_kind(pred, y)
    return float(np.mean(pred == y))


# ---------------------------------------------------------------------------------------- learners
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


class Criterion(str, Enum):
    entropy = "entropy"
    gini = "gini"
    kearns_mansour = "kearns_mansour"


class Pruning(str, Enum):
    bound = "bound"
    ccp = "ccp"
    mcart = "mcart"


class Format(str, Enum):
    text = "text"
    dot = "dot"
    json = "json"
    html = "html"


class OutFormat(str, Enum):
    text = "text"
    csv = "csv"
    json = "json"


def make_learner(learner: str, params: dict):
    """An estimator of ``learner`` (greedy, topk, optimal, minrank, pruned) with the given
    parameters (``None`` values are left at the learner's default). A parameter the learner
    does not take is an error that names the learner's options."""
    import treelearn

    cls = getattr(treelearn, LEARNER_CLASSES[learner], None)
    if cls is None:
        raise CLIError(f"the {learner} learner is not available in this version of treelearn")
    est = cls()
    accepted = est.get_params(deep=False)
    given = {k: v for k, v in params.items() if v is not None}
    bad = sorted(k for k in given if k not in accepted)
    if bad:
        opts = ", ".join("--" + k.replace("_", "-") for k in bad)
        takes = ", ".join("--" + k.replace("_", "-") for k in sorted(accepted) if k in _CLI_PARAMS)
        raise CLIError(f"{opts} does not apply to --learner {learner} (it takes {takes})")
    try:
        est.set_params(**given)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return est


#: estimator parameters that have a `fit` option
_CLI_PARAMS = {"criterion", "max_depth", "max_leaves", "min_samples_leaf", "max_thresholds", "k",
               "max_binary_features", "max_rank", "pruning", "delta", "cv", "time_limit", "memory_limit_mb",
               "n_jobs", "random_state", "verbose", "categorical"}


def _fitted_facts(est) -> dict:
    """What a fitted estimator says about its search (those attributes it has)."""
    facts = {}
    for attr in ("is_optimal_", "timed_out_", "training_error_", "rank_", "n_binary_features_", "ccp_alpha_",
                 "bound_"):
        v = getattr(est, attr, None)
        if isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating)):
            facts[attr.rstrip("_")] = v.item() if hasattr(v, "item") else v
    return facts


# ---------------------------------------------------------------------------------------- commands
_LABEL_HELP = "Label column: a name or an index (negative counts from the end); default: the last column."
_NA_HELP = "Comma-separated markers of missing cells (default: '?,,NA', i.e. ?, empty and NA); 'none' for no marker."
_HEADER_HELP = "Whether the first row names the columns (default: detected)."


@app.command()
def fit(
    data: Path = typer.Argument(..., help="Training data: a CSV file (header row detected, or --header/--no-header)."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help=_LABEL_HELP),
    learner: Learner = typer.Option(Learner.greedy, "--learner", "-L",
                                    help="greedy (ID3/CART/Kearns-Mansour, paper 000), topk and optimal (003), "
                                         "minrank (minimum-rank consistent tree, 001), pruned (bound pruning, 002)."),
    criterion: Optional[Criterion] = typer.Option(None, help="Impurity function G (greedy, topk, optimal, pruned; "
                                                             "default entropy, pruned: gini)."),
    max_depth: Optional[int] = typer.Option(None, min=0, help="Depth limit (0: a single leaf). greedy/pruned: none "
                                                              "by default; topk/optimal: 3."),
    max_leaves: Optional[int] = typer.Option(None, min=1, help="greedy: grow best-first (BuildTopDownDT) to this many "
                                                               "leaves; pruned: leaves of the tree before pruning."),
    min_samples_leaf: Optional[int] = typer.Option(None, min=1, help="Minimum number of samples in a leaf "
                                                                     "(greedy, pruned)."),
    max_thresholds: Optional[int] = typer.Option(None, min=1, help="At most this many quantile thresholds per "
                                                                   "numeric column (default: every midpoint)."),
    k: Optional[int] = typer.Option(None, "--k", "-k", min=1, help="topk: the k best features tried at every node."),
    max_binary_features: Optional[int] = typer.Option(None, min=1, help="topk/optimal: binary features the search "
                                                                        "uses (default 100)."),
    max_rank: Optional[int] = typer.Option(None, min=0, help="minrank: fail when the sample's rank exceeds this."),
    pruning: Optional[Pruning] = typer.Option(None, help="pruned: bound (Shawe-Taylor bound, no CV), ccp (CART "
                                                         "cost-complexity with CV) or mcart."),
    delta: Optional[float] = typer.Option(None,
                                          help="pruned: confidence of the bound."),
    cv: Optional[int] = typer.Option(None, min=2, help="pruned (ccp, mcart): folds of the cross-validation."),
    time_limit: Optional[float] = typer.Option(None,
                                               help="Seconds the search may take (topk, optimal, minrank)."),
    memory_limit_mb: Optional[float] = typer.Option(None,
                                                    help="Memory cap of the search in MB (topk, optimal, minrank)."),
    n_jobs: Optional[int] = typer.Option(None, help="Threads of the search (topk, optimal)."),
    categorical: Optional[list[str]] = typer.Option(
        None, "--categorical", "-c", help="Treat this column (name or index) as categorical (conditions x == v); "
                                          "repeat for several. Text columns are categorical anyway."),
    random_state: Optional[int] = typer.Option(None, help="Seed (for reproducible results)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print progress on stderr (the search's own when "
                                                                 "the learner reports it)."),
    na_values: Optional[str] = typer.Option(None, help=_NA_HELP),
    header: Optional[bool] = typer.Option(None, "--header/--no-header", help=_HEADER_HELP),
    sep: str = typer.Option(",", help="CSV field separator."),
    out: Path = typer.Option(Path("model.json"), "--out", "-o", help="Where to write the JSON model."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f", help="Report as text, csv or json."),
):
    """Fit a tree with any treelearn learner on a CSV file and save it as JSON."""
    from treelearn.tree.export import tree_to_json

    df = _read_csv(data, sep=sep, na_values=na_values, header=header)
    y_col = _label_column(df, label, data)
    cat_cols = sorted({_label_column(df, c, data, what="categorical") for c in (categorical or [])})
    if y_col in cat_cols:
        raise CLIError(f"{data}: the label column {y_col!r} cannot also be a categorical feature")
    _as_categorical(df, cat_cols, data)
    X, y = _split_xy(df, y_col, data)
    params = dict(criterion=criterion.value if criterion else None, max_depth=max_depth, max_leaves=max_leaves,
                  min_samples_leaf=min_samples_leaf, max_thresholds=max_thresholds, k=k,
                  max_binary_features=max_binary_features, max_rank=max_rank,
                  pruning=pruning.value if pruning else None, delta=delta, cv=cv, time_limit=time_limit,
                  memory_limit_mb=memory_limit_mb, n_jobs=n_jobs, random_state=random_state)
    est = make_learner(learner.value, params)
    if verbose and "verbose" in est.get_params(deep=False):
        est.set_params(verbose=1)
    nan_cols = [str(c) for c in X.columns if X[c].isna().any()]
    if verbose:
        shown = {k_: v for k_, v in est.get_params(deep=False).items()}
        typer.echo(f"treelearn fit: {type(est).__name__}({', '.join(f'{a}={b!r}' for a, b in shown.items())}) on "
                   f"{X.shape[0]} rows x {X.shape[1]} columns of {data.name}, label {y_col!r}"
                   + (f"; missing values in {', '.join(nan_cols)}" if nan_cols else ""), err=True)
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
    except ValueError as exc:  # TreeLearnValueError and sklearn's parameter errors
        msg = _one_line(str(exc))
        if nan_cols and not any(c in msg for c in nan_cols):
            msg = (f"column {nan_cols[0]!r} has missing values, which --learner {learner.value} does not accept "
                   f"yet ({msg})")
        raise CLIError(f"{data}: {msg}") from None
    except MemoryError:
        raise CLIError(f"{data}: out of memory while fitting; lower --max-depth, --k or --memory-limit-mb") from None
    seconds = time.perf_counter() - t0
    tree = est.tree_
    params_out = {k_: _json_safe(v) for k_, v in est.get_params(deep=False).items()}
    facts = _fitted_facts(est)
    meta = {"label": y_col, "categorical": cat_cols, "learner": type(est).__name__, "params": params_out,
            "source": data.name, "fit": {k_: _json_safe(v) for k_, v in facts.items()}}
    try:
        text = tree_to_json(tree, indent=1, metadata=meta)
    except TreeLearnValueError as exc:
        raise CLIError(f"cannot save the model: {exc}") from None
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{out}: cannot write the model: {exc.strerror or exc}") from None
    acc = _accuracy(tree.predict(X), y)
    report = {"learner": learner.value, "estimator": type(est).__name__, "rows": int(len(y)),
              "seconds": round(seconds, 6), "leaves": tree.n_leaves, "depth": tree.depth,
              "training_accuracy": acc, **facts, "model": str(out)}
    if format == OutFormat.json:
        typer.echo(json.dumps(report))
    elif format == OutFormat.csv:
        typer.echo(",".join(report) + "\n" + ",".join(_csv_cell(v) for v in report.values()))
    else:
        extra = "".join(f", {k_.replace('_', ' ')} {v}" for k_, v in facts.items() if k_ != "training_error")
        typer.echo(f"fitted {type(est).__name__} on {len(y)} rows in {seconds:.3f} s: {tree.n_leaves} leaves, "
                   f"depth {tree.depth}, training accuracy {acc:.4f}{extra}; wrote {out}")


def _csv_cell(v) -> str:
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if any(ch in s for ch in ',"\n') else s


@app.command()
def predict(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    data: Path = typer.Argument(..., help="A CSV file with the columns the tree uses (others are ignored)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write a CSV of predictions here "
                                                                 "(default: stdout)."),
    proba: bool = typer.Option(False, help="Print class probabilities (one column per class) instead."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f",
                                     help="stdout: text (one per line), csv (with a header) or json."),
    na_values: Optional[str] = typer.Option(None, help=_NA_HELP),
    header: Optional[bool] = typer.Option(None, "--header/--no-header", help=_HEADER_HELP),
    sep: str = typer.Option(",", help="CSV field separator."),
):
    """Predict the class of every row of a CSV file."""
    import pandas as pd

    tree, meta = _load_model(model)
    df = _read_csv(data, sep=sep, na_values=na_values, header=header)
    X = _features_for(tree, meta, df, data)
    try:
        if proba:
            result = pd.DataFrame(tree.predict_proba(X), columns=[str(c) for c in tree.classes.tolist()])
        else:
            name = meta.get("label") if isinstance(meta.get("label"), str) else "prediction"
            result = pd.DataFrame({name: tree.predict(X)})
    except (TreeLearnValueError, ValueError) as exc:
        raise CLIError(f"{data}: {_one_line(exc)}") from None
    if out is not None:
        try:
            result.to_csv(out, index=False)
        except OSError as exc:
            raise CLIError(f"{out}: cannot write: {exc.strerror or exc}") from None
        typer.echo(f"wrote {len(result)} predictions to {out}", err=True)
        return
    if format == OutFormat.json:
        rows = result.to_dict(orient="records") if proba else result.iloc[:, 0].tolist()
        typer.echo(json.dumps([{k_: _json_safe(_py(v)) for k_, v in r.items()} for r in rows] if proba
                              else [_json_safe(_py(v)) for v in rows]))
    elif proba or format == OutFormat.csv:
        typer.echo(result.to_csv(index=False), nl=False)
    else:
        typer.echo("\n".join(str(v) for v in result.iloc[:, 0].tolist()))


def _py(v):
    return v.item() if hasattr(v, "item") else v


@app.command()
def show(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    format: Format = typer.Option(Format.text, "--format", "-f",
                                  help="text (rules), dot (Graphviz), json, or html (interactive page)."),
    decimals: int = typer.Option(2, min=0, max=17, help="Decimals of thresholds (text) / numbers (dot)."),
    show_weights: bool = typer.Option(False, help="text: print each leaf's class counts."),
    max_depth: int = typer.Option(10, min=0, help="text: truncate branches below this depth."),
    filled: bool = typer.Option(True, help="dot: colour nodes by majority class."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout."),
):
    """Print a model as text rules, Graphviz DOT, JSON or a self-contained interactive HTML page."""
    from treelearn.tree.export import export_graphviz, export_text, tree_to_json
    from treelearn.tree.html import export_html

    tree, meta = _load_model(model)
    if format == Format.text:
        text = export_text(tree, decimals=decimals, show_weights=show_weights, max_depth=max_depth)
    elif format == Format.dot:
        text = export_graphviz(tree, filled=filled, precision=decimals, rounded=True)
    elif format == Format.html:
        params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
        learner = meta.get("learner") if isinstance(meta.get("learner"), str) else "tree"
        crit = params.get("criterion") if isinstance(params.get("criterion"), str) else None
        if crit is not None:
            tree.criterion = crit  # labels the impurity
        text = export_html(tree, title=f"{learner} from {model.name}")
    else:
        text = tree_to_json(tree, indent=1, metadata=meta or None) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{out}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"wrote {out}", err=True)


def evaluation_report(tree, X, y) -> dict:
    """Accuracy, balanced accuracy, confusion matrix and per-class precision/recall/F1 of a
    tree on labelled data (scikit-learn's metrics)."""
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix, precision_recall_fscore_support

    pred, yy = _same_kind(tree.predict(X), np.asarray(y))
    classes = np.asarray(tree.classes)
    if pred.dtype.kind == "U" and classes.dtype.kind != "U":
        classes = classes.astype(str)
    labels = [_py(c) for c in classes.tolist()]
    labels += sorted(set(_py(v) for v in yy.tolist()) - set(labels), key=str)  # classes the tree never saw
    labels = [_py(c) for c in labels]
    cm = confusion_matrix(yy, pred, labels=labels)
    p, r, f, s = precision_recall_fscore_support(yy, pred, labels=labels, zero_division=0)
    return {
        "samples": int(len(yy)), "accuracy": float(np.mean(pred == yy)),
        "balanced_accuracy": float(balanced_accuracy_score(yy, pred)),
        "leaves": tree.n_leaves, "depth": tree.depth,
        "classes": [str(c) for c in labels],
        "confusion_matrix": cm.tolist(),
        "per_class": [{"class": str(c), "precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]),
                       "support": int(s[i])} for i, c in enumerate(labels)],
    }


@app.command()
def evaluate(
    model: Path = typer.Argument(..., help="A JSON model written by `treelearn fit`."),
    data: Path = typer.Argument(..., help="A labelled CSV file (test data)."),
    label: Optional[str] = typer.Option(None, "--label", "-l",
                                        help="Label column (name or index); default: the model's label "
                                             "column if the file has it, else the last column."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f", help="text, csv (long format) or json."),
    na_values: Optional[str] = typer.Option(None, help=_NA_HELP),
    header: Optional[bool] = typer.Option(None, "--header/--no-header", help=_HEADER_HELP),
    sep: str = typer.Option(",", help="CSV field separator."),
):
    """Accuracy, balanced accuracy, confusion matrix and per-class precision/recall on labelled data."""
    tree, meta = _load_model(model)
    df = _read_csv(data, sep=sep, na_values=na_values, header=header)
    df.columns = [str(c) for c in df.columns]
    if label is None and isinstance(meta.get("label"), str) and meta["label"] in df.columns:
        label = meta["label"]
    y_col = _label_column(df, label, data)
    if df[y_col].isna().any():
        raise CLIError(f"{data}: the label column {y_col!r} has missing values")
    X = _features_for(tree, meta, df.drop(columns=[y_col]), data)
    try:
        rep = evaluation_report(tree, X, df[y_col].to_numpy())
    except (TreeLearnValueError, ValueError) as exc:
        raise CLIError(f"{data}: {_one_line(exc)}") from None
    if format == OutFormat.json:
        typer.echo(json.dumps(rep))
        return
    if format == OutFormat.csv:
        lines = ["metric,class,predicted,value"]
        for key in ("samples", "accuracy", "balanced_accuracy", "leaves", "depth"):
            lines.append(f"{key},,,{rep[key]}")
        for row in rep["per_class"]:
            for key in ("precision", "recall", "f1", "support"):
                lines.append(f"{key},{_csv_cell(row['class'])},,{row[key]}")
        for i, a in enumerate(rep["classes"]):
            for j, b in enumerate(rep["classes"]):
                lines.append(f"confusion,{_csv_cell(a)},{_csv_cell(b)},{rep['confusion_matrix'][i][j]}")
        typer.echo("\n".join(lines))
        return
    typer.echo(f"accuracy: {rep['accuracy']:.4f}")
    typer.echo(f"balanced accuracy: {rep['balanced_accuracy']:.4f}")
    typer.echo(f"samples: {rep['samples']}")
    typer.echo(f"leaves: {rep['leaves']}")
    typer.echo(f"depth: {rep['depth']}")
    width = max([len("true \\ predicted")] + [len(c) for c in rep["classes"]])
    cw = max(6, *(len(c) for c in rep["classes"]))
    typer.echo("confusion matrix (rows: true class, columns: predicted):")
    typer.echo("  " + "true \\ predicted".ljust(width) + " " + " ".join(c.rjust(cw) for c in rep["classes"]))
    for c, row in zip(rep["classes"], rep["confusion_matrix"]):
        typer.echo("  " + c.ljust(width) + " " + " ".join(str(v).rjust(cw) for v in row))
    typer.echo("per class:")
    typer.echo("  " + "class".ljust(width) + "  precision  recall      f1  support")
    for row in rep["per_class"]:
        typer.echo("  " + row["class"].ljust(width) + f"  {row['precision']:9.4f}  {row['recall']:6.4f}  "
                   f"{row['f1']:6.4f}  {row['support']:7d}")


@app.command()
def demo(
    out_dir: Path = typer.Option(Path("results/demo"), "--out-dir", "-o",
                                 help="Where the figure (demo.png) and the page of trees (demo.html) go."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Directory of the real datasets (default "
                                            "../shared/datasets or TREELEARN_DATA_DIR); optional."),
    random_state: int = typer.Option(0, help="Seed of the splits and searches."),
    quick: bool = typer.Option(False, help="A smaller tour (for tests)."),
):
    """A tour of the five papers' learners on real data: a table, a figure and a page of trees."""
    from treelearn.demo import run_demo

    try:
        run_demo(out_dir=out_dir, data_dir=data_dir, random_state=random_state, quick=quick)
    except TreeLearnValueError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"{out_dir}: {exc.strerror or exc}") from None


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
