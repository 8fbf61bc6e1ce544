"""Models on the command line: reading a JSON model (its size checked first; no scikit-learn is
imported), the label and feature columns it stores, and a data file's columns matched to them.

``predict`` and ``evaluate`` use the model's own label and feature names: the features are
matched by name (only those the tree reads are required) and typed as in the model, and
``evaluate`` scores against the model's label column, never against an arbitrary one.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from treelearn.cli.common import CLIError

MAX_MODEL_BYTES = 256 * 1024 * 1024


def load_model(path: Path):
    """``(tree, metadata)`` of a JSON model file; every problem is a one-line :class:`CLIError`."""
    from treelearn.tree.tree import Tree

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a JSON model")
    try:  # the one JSON entry: the size is checked before anything is read
        tree, meta = Tree.load(path, max_bytes=MAX_MODEL_BYTES, return_metadata=True)
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # TreeLearnValueError, naming the problem
        raise CLIError(f"{path}: not a valid treelearn model: {exc}") from None
    return tree, (meta if isinstance(meta, dict) else {})


def stored_label(meta: dict) -> Optional[str]:
    label = meta.get("label")
    return label if isinstance(label, str) else None


def column_name(columns: list, label: Optional[str], path: Path, *, what: str = "label") -> str:
    """A column's name from a column name or an integer index (negative from the end);
    ``None``: the last column."""
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


def evaluation_label(meta: dict, columns: list, label: Optional[str], path: Path) -> str:
    """The column ``evaluate`` scores against: ``--label`` when given, else the model's label
    column, which the file must have (an error naming it otherwise)."""
    if label is not None:
        return column_name(columns, label, path)
    name = stored_label(meta)
    if name is None:
        raise CLIError(f"{path}: the model does not name its label column; pass --label COLUMN")
    if name not in columns:
        raise CLIError(f"{path}: no column {name!r}, the model's label column; add it, or pass --label COLUMN "
                       "to score against another column")
    return name


def used_features(tree) -> list[int]:
    return sorted({int(f) for f in tree.feature[tree.children_left >= 0]})


def column_kinds(tree, columns: list, label: Optional[str]) -> dict:
    """``{file column: "numeric" | "categorical"}`` for the model's feature columns (by name; by
    position after removing the label column when the model has no names)."""
    cats = tree.schema.categories
    names = tree.feature_names
    if names is None:
        names = [c for c in columns if c != label][:tree.n_features]
    return {str(n): ("numeric" if cats[j] is None else "categorical") for j, n in enumerate(names)}


def features_for(tree, df, path: Path, label: Optional[str] = None):
    """The model's feature columns from a typed frame, by name when the model has names. Only the
    columns the tree reads are required; the others are filled with a placeholder."""
    columns = [str(c) for c in df.columns]
    names = tree.feature_names
    used = used_features(tree)
    if names is not None:
        needed = [names[j] for j in used]
        missing = [n for n in needed if n not in columns]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10]) + (", ..." if len(missing) > 10 else "")
            raise CLIError(f"{path}: missing column(s) {shown} that the model needs")
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
