"""``treelearn predict``, ``show``, ``evaluate`` and ``export``: what is done with a saved model.

``predict`` and ``evaluate`` read their file with the reader and the options ``fit`` used (stored
in the model; an option given here wins), type its columns as the model does and match them by
name; ``evaluate`` scores against the model's label column. ``show`` and ``export`` (but for
``--format onnx``) read the model without importing scikit-learn or pandas.
"""
from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from treelearn.cli import csvio
from treelearn.cli.common import CLIError, OutFormat, csv_cell, json_safe, one_line, py, same_kind, shown
from treelearn.cli.model import column_kinds, evaluation_label, features_for, load_model, stored_label

MODEL_HELP = "A JSON model written by `treelearn fit`."


class Format(str, Enum):
    text = "text"
    dot = "dot"
    json = "json"
    html = "html"


class Language(str, Enum):
    python = "python"
    c = "c"
    sql = "sql"
    onnx = "onnx"


def _read_for_model(tree, meta: dict, data: Path, *, sep, decimal, na_values, header, label=None):
    """A data file read as ``fit`` read the training file, its columns typed as the model's:
    ``(frame, label column or None)``."""
    opts = csvio.CsvOptions.from_cli(sep=sep, decimal=decimal, na_values=na_values, header=header,
                                     stored=meta.get("csv"))
    table = csvio.read_table(data, opts)
    y_col = None if label is False else evaluation_label(meta, table.names, label, data)
    kinds = column_kinds(tree, table.names, y_col if y_col is not None else stored_label(meta))
    df, _ = csvio.typed_frame(table, kinds=kinds, labels=() if y_col is None else {y_col})
    return df, y_col


def predict(
    model: Path = typer.Argument(..., help=MODEL_HELP),
    data: Path = typer.Argument(..., help="A CSV file with the columns the tree uses (others are ignored)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write a CSV of predictions here "
                                                                 "(default: stdout)."),
    proba: bool = typer.Option(False, help="Print class probabilities (one column per class) instead."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f",
                                     help="stdout: text (one per line), csv (with a header) or json."),
    na_values: Optional[str] = csvio.NA_OPTION,
    header: Optional[bool] = csvio.HEADER_OPTION,
    sep: Optional[str] = csvio.SEP_OPTION,
    decimal: Optional[str] = csvio.DECIMAL_OPTION,
):
    """Predict the class of every row of a CSV file (columns matched to the model's by name)."""
    import pandas as pd

    tree, meta = load_model(model)
    df, _ = _read_for_model(tree, meta, data, sep=sep, decimal=decimal, na_values=na_values, header=header,
                            label=False)
    X = features_for(tree, df, data, stored_label(meta))
    if proba and tree.is_regression:
        raise CLIError(f"{model}: a regression tree predicts values, not class probabilities (drop --proba)")
    try:
        if proba:
            result = pd.DataFrame(tree.predict_proba(X), columns=[str(c) for c in tree.classes.tolist()])
        else:
            result = pd.DataFrame({stored_label(meta) or "prediction": tree.predict(X)})
    except ValueError as exc:  # TreeLearnValueError among them
        raise CLIError(f"{data}: {one_line(exc)}") from None
    if out is not None:
        try:
            result.to_csv(out, index=False)
        except OSError as exc:
            raise CLIError(f"{out}: cannot write: {exc.strerror or exc}") from None
        typer.echo(f"wrote {len(result)} predictions to {out}", err=True)
        return
    if format == OutFormat.json:
        rows = result.to_dict(orient="records") if proba else result.iloc[:, 0].tolist()
        typer.echo(json.dumps([{k_: json_safe(py(v)) for k_, v in r.items()} for r in rows] if proba
                              else [json_safe(py(v)) for v in rows]))
    elif proba or format == OutFormat.csv:  # a file keeps the labels as they are; a terminal sees escapes
        result.columns = [shown(c) for c in result.columns]
        result = result.apply(lambda col: col if pd.api.types.is_numeric_dtype(col) else col.map(shown))
        typer.echo(result.to_csv(index=False), nl=False)
    else:  # one line per row, whatever a label holds
        typer.echo("\n".join(shown(v) for v in result.iloc[:, 0].tolist()))


def _write(text, out: Optional[Path]) -> None:
    if out is None:
        if isinstance(text, bytes):
            raise CLIError("the ONNX model is binary: give a file with --out")
        typer.echo(text, nl=False)
        return
    try:
        if isinstance(text, bytes):
            out.write_bytes(text)
        else:
            out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{out}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"wrote {out}", err=True)


def show(
    model: Path = typer.Argument(..., help=MODEL_HELP),
    format: Format = typer.Option(Format.text, "--format", "-f",
                                  help="text (rules), dot (Graphviz), json, or html (interactive page)."),
    decimals: int = typer.Option(2, min=0, max=17, help="Decimals of thresholds (text) / numbers (dot)."),
    show_weights: bool = typer.Option(False, help="text: print each leaf's class counts."),
    max_depth: int = typer.Option(10, min=0, help="text: truncate branches below this depth."),
    filled: bool = typer.Option(True, help="dot: colour nodes by majority class."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout."),
):
    """Print a model as text rules, Graphviz DOT, JSON or a self-contained interactive HTML page."""
    from treelearn.tree.formats import export_graphviz, export_text, tree_to_json

    tree, meta = load_model(model)
    if format == Format.text:
        text = export_text(tree, decimals=decimals, show_weights=show_weights, max_depth=max_depth)
    elif format == Format.dot:
        text = export_graphviz(tree, filled=filled, precision=decimals, rounded=True)
    elif format == Format.html:
        from treelearn.tree.html import export_html

        params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
        learner = meta.get("learner") if isinstance(meta.get("learner"), str) else "tree"
        crit = params.get("criterion") if isinstance(params.get("criterion"), str) else None
        if crit is not None:
            tree.criterion = crit  # labels the impurity
        text = export_html(tree, title=f"{learner} from {model.name}")
    else:
        text = tree_to_json(tree, indent=1, metadata=meta or None) + "\n"
    _write(text, out)


def export(
    model: Path = typer.Argument(..., help=MODEL_HELP),
    format: Language = typer.Option(..., "--format", "-f", help="python (a module), c (one function), sql (one "
                                                                "CASE expression) or onnx (needs --out)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to this file instead of stdout."),
    name: str = typer.Option("predict", help="Name of the generated function (python, c) or of the ONNX graph."),
    table: Optional[str] = typer.Option(None, help="sql: a SELECT of the prediction from this table "
                                                   "(default: the CASE expression alone)."),
):
    """Export a model as code with no treelearn dependency that predicts exactly as `predict` does
    (missing values and categorical splits included): Python, C, SQL or ONNX."""
    from treelearn.tree.codegen import export_code

    tree, _ = load_model(model)
    try:
        code = export_code(tree, format.value, name=name, **({"table": table} if table else {}))
    except ImportError as exc:
        raise CLIError(f"--format {format.value} needs the 'export' extra (pip install treelearn[export]): "
                       f"{exc}") from None
    except ValueError as exc:  # TreeLearnValueError: a model the language cannot express
        raise CLIError(f"{model}: {one_line(exc)}") from None
    _write(code, out)


def evaluation_report(tree, X, y) -> dict:
    """Accuracy, balanced accuracy, confusion matrix and per-class precision/recall/F1 of a
    tree on labelled data (scikit-learn's metrics)."""
    import numpy as np
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix, precision_recall_fscore_support

    pred, yy = same_kind(tree.predict(X), np.asarray(y))
    classes = np.asarray(tree.classes)
    if pred.dtype.kind == "U" and classes.dtype.kind != "U":
        classes = classes.astype(str)
    labels = [py(c) for c in classes.tolist()]
    labels += sorted(set(py(v) for v in yy.tolist()) - set(labels), key=str)  # classes the tree never saw
    labels = [py(c) for c in labels]
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


def regression_report(tree, X, y) -> dict:
    """RMSE, MAE and R^2 of a regression tree on data with a numeric target (scikit-learn's metrics)."""
    import numpy as np
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    try:
        yy = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise CLIError("the label column must be numeric to evaluate a regression tree") from None
    pred = tree.predict(X)
    return {"samples": int(len(yy)), "rmse": float(np.sqrt(mean_squared_error(yy, pred))),
            "mae": float(mean_absolute_error(yy, pred)), "r2": float(r2_score(yy, pred)),
            "leaves": tree.n_leaves, "depth": tree.depth}


def evaluate(
    model: Path = typer.Argument(..., help=MODEL_HELP),
    data: Path = typer.Argument(..., help="A labelled CSV file (test data)."),
    label: Optional[str] = typer.Option(None, "--label", "-l",
                                        help="Label column (name or index); default: the model's label column, "
                                             "which the file must have."),
    format: OutFormat = typer.Option(OutFormat.text, "--format", "-f", help="text, csv (long format) or json."),
    na_values: Optional[str] = csvio.NA_OPTION,
    header: Optional[bool] = csvio.HEADER_OPTION,
    sep: Optional[str] = csvio.SEP_OPTION,
    decimal: Optional[str] = csvio.DECIMAL_OPTION,
):
    """Accuracy, balanced accuracy, confusion matrix and per-class precision/recall on labelled data
    (a regression model: RMSE, MAE and R^2)."""
    tree, meta = load_model(model)
    df, y_col = _read_for_model(tree, meta, data, sep=sep, decimal=decimal, na_values=na_values, header=header,
                                label=label)
    if df[y_col].isna().any():
        raise CLIError(f"{data}: the label column {y_col!r} has missing values")
    X = features_for(tree, df.drop(columns=[y_col]), data)
    try:
        rep = (regression_report if tree.is_regression else evaluation_report)(tree, X, df[y_col].to_numpy())
    except ValueError as exc:  # TreeLearnValueError among them
        raise CLIError(f"{data}: {one_line(exc)}") from None
    if tree.is_regression:
        if format == OutFormat.json:
            typer.echo(json.dumps(rep))
        elif format == OutFormat.csv:
            typer.echo("metric,value\n" + "\n".join(f"{k_},{v}" for k_, v in rep.items()))
        else:
            typer.echo(f"RMSE: {rep['rmse']:.6g}\nMAE: {rep['mae']:.6g}\nR^2: {rep['r2']:.4f}\n"
                       f"samples: {rep['samples']}\nleaves: {rep['leaves']}\ndepth: {rep['depth']}")
        return
    if format == OutFormat.json:
        typer.echo(json.dumps(rep))
    elif format == OutFormat.csv:
        typer.echo(_report_csv(_shown_report(rep)))
    else:
        typer.echo(_report_text(_shown_report(rep)))


def _shown_report(rep: dict) -> dict:
    """The report with its class names as the terminal shows them (controls escaped)."""
    return {**rep, "classes": [shown(c) for c in rep["classes"]],
            "per_class": [{**row, "class": shown(row["class"])} for row in rep["per_class"]]}


def _report_csv(rep: dict) -> str:
    lines = ["metric,class,predicted,value"]
    for key in ("samples", "accuracy", "balanced_accuracy", "leaves", "depth"):
        lines.append(f"{key},,,{rep[key]}")
    for row in rep["per_class"]:
        for key in ("precision", "recall", "f1", "support"):
            lines.append(f"{key},{csv_cell(row['class'])},,{row[key]}")
    for i, a in enumerate(rep["classes"]):
        for j, b in enumerate(rep["classes"]):
            lines.append(f"confusion,{csv_cell(a)},{csv_cell(b)},{rep['confusion_matrix'][i][j]}")
    return "\n".join(lines)


def _report_text(rep: dict) -> str:
    lines = [f"accuracy: {rep['accuracy']:.4f}", f"balanced accuracy: {rep['balanced_accuracy']:.4f}",
             f"samples: {rep['samples']}", f"leaves: {rep['leaves']}", f"depth: {rep['depth']}"]
    width = max([len("true \\ predicted")] + [len(c) for c in rep["classes"]])
    cw = max(6, *(len(c) for c in rep["classes"]))
    lines.append("confusion matrix (rows: true class, columns: predicted):")
    lines.append("  " + "true \\ predicted".ljust(width) + " " + " ".join(c.rjust(cw) for c in rep["classes"]))
    for c, row in zip(rep["classes"], rep["confusion_matrix"]):
        lines.append("  " + c.ljust(width) + " " + " ".join(str(v).rjust(cw) for v in row))
    lines.append("per class:")
    lines.append("  " + "class".ljust(width) + "  precision  recall      f1  support")
    for row in rep["per_class"]:
        lines.append("  " + row["class"].ljust(width) + f"  {row['precision']:9.4f}  {row['recall']:6.4f}  "
                     f"{row['f1']:6.4f}  {row['support']:7d}")
    return "\n".join(lines)
