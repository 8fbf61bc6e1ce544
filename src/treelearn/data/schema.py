"""Column schema: which raw columns are numeric and which are categorical.

Every learner and the Tree work on the *encoded* matrix: a float64 array with one column per
raw column, numeric columns as their values and categorical columns as integer codes into the
column's category list (a value not seen in training becomes -1, which equals no code: every
``x_j == v`` condition is false for it, the same as an all-zero one-hot row).
"""
from __future__ import annotations

import itertools
import numbers
import operator
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from treelearn._validation import TreeLearnTypeError, TreeLearnValueError, _as_2d_raw, check_finite

try:  # pandas is a dependency, but keep the import local to what needs it
    import pandas as pd
except ImportError:  # pragma: no cover
    pd = None


def _is_dataframe(X) -> bool:
    return pd is not None and isinstance(X, pd.DataFrame)


@dataclass
class ColumnSchema:
    """Per raw column: ``None`` for numeric, else the array of its categories (sorted)."""

    categories: list = field(default_factory=list)
    feature_names: list | None = None

    @property
    def n_features(self) -> int:
        return len(self.categories)

    def is_categorical(self, j: int) -> bool:
        return self.categories[j] is not None

    @property
    def all_numeric(self) -> bool:
        """No categorical column."""
        return all(map(operator.is_, self.categories, itertools.repeat(None)))

    @classmethod
    def infer(cls, X, categorical=None) -> "ColumnSchema":
        """Decide the column kinds from training data.

        Inferred: pandas ``category``/``object``/``string``/``bool`` columns and columns with
        non-numeric values are categorical, the rest (numpy bool arrays included, as 0/1) numeric.
        ``categorical`` (a list of column indices or names, or a boolean mask) makes more columns
        categorical: it adds to the inference, it does not replace it.
        """
        names = [str(c) for c in X.columns] if _is_dataframe(X) else None
        raw = _as_2d_raw(X)
        n_features = raw.shape[1]
        if raw.dtype == object:
            for j in range(n_features):
                values = raw[:, j].tolist()
                try:
                    distinct = set(values)
                except TypeError:
                    i, v = next((i, v) for i, v in enumerate(values) if not isinstance(v, Hashable))
                    raise TreeLearnTypeError(
                        f"column {names[j] if names else j} has a value of unsupported type "
                        f"{type(v).__name__} at row {i}: argument must be a string or a number "
                        "(or another hashable category)"
                    ) from None
                if any(isinstance(v, (complex, np.complexfloating)) for v in distinct):
                    i = next(i for i, v in enumerate(values) if isinstance(v, (complex, np.complexfloating)))
                    raise TreeLearnValueError(
                        f"column {names[j] if names else j} has a complex value at row {i}: "
                        "Complex data not supported; expected real numbers or categories"
                    )
        # inferred kinds: pandas category/object/string/bool columns, and non-numeric values of
        # an object or string array, are categorical; numbers (numpy bool included: 0/1) numeric
        mask = np.zeros(n_features, dtype=bool)
        if _is_dataframe(X):
            for j, dt in enumerate(X.dtypes):
                if not (pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt)):
                    mask[j] = True
        elif raw.dtype.kind in "US":
            mask[:] = True
        elif raw.dtype == object:
            # an object array: columns whose values are not all numbers are categorical
            for j in range(n_features):
                if not all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in raw[:, j]):
                    mask[j] = True
        if categorical is not None:  # the listed columns are categorical too (added to the inferred ones)
            cat = np.asarray(categorical)
            if cat.dtype == bool:
                if cat.shape != (n_features,):
                    raise TreeLearnValueError(
                        f"categorical mask has shape {cat.shape}, expected ({n_features},)"
                    )
                mask |= cat
            else:
                for c in cat.ravel().tolist():
                    if isinstance(c, str):
                        if names is None or c not in names:
                            raise TreeLearnValueError(f"categorical column {c!r} is not a column name")
                        mask[names.index(c)] = True
                    elif isinstance(c, numbers.Integral) and -n_features <= c < n_features:
                        mask[c] = True
                    else:
                        raise TreeLearnValueError(
                            f"categorical column index {c!r} out of range for {n_features} columns"
                        )
        if not mask.any():  # all numeric (the common case): no per-column work
            return cls(categories=[None] * n_features, feature_names=names)
        categories = []
        for j in range(n_features):
            if not mask[j]:
                categories.append(None)
                continue
            col = raw[:, j]
            if _is_dataframe(X) and raw.dtype != object:
                # an all-numeric frame was read as float64: take the column's own values (10, not 10.0)
                orig = X.iloc[:, j]
                col = np.where(pd.isna(orig).to_numpy(), np.nan, orig.to_numpy(dtype=object)).astype(object)
            if any(v is None or v is getattr(pd, "NA", None) or (isinstance(v, float) and np.isnan(v)) for v in col):
                raise TreeLearnValueError(
                    f"column {names[j] if names else j} has missing values; "
                    "treelearn does not support missing values: impute or drop them first"
                )
            try:
                values = sorted(set(col.tolist()), key=lambda v: (str(type(v)), v))
            except TypeError:  # values of one type that cannot be ordered: a deterministic order
                values = sorted(set(col.tolist()), key=lambda v: (str(type(v)), repr(v)))
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            categories.append(arr)
        return cls(categories=categories, feature_names=names)

    def encode(self, X, *, what: str = "X") -> np.ndarray:
        """Raw X -> encoded float64 matrix (categorical columns as codes, unseen -> -1)."""
        raw = _as_2d_raw(X, what=what)
        if raw.shape[1] != self.n_features:
            raise TreeLearnValueError(
                f"{what} has {raw.shape[1]} features, but the tree is expecting {self.n_features} features as input"
            )
        if self.all_numeric:
            try:
                out = np.ascontiguousarray(raw, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TreeLearnValueError(
                    f"{what} has non-numeric values but no categorical columns were fitted: {exc}"
                ) from None
            check_finite(out, what=what)
            return out
        out = np.empty(raw.shape, dtype=np.float64)
        for j, cats in enumerate(self.categories):
            col = raw[:, j]
            if cats is None:
                try:
                    out[:, j] = np.asarray(col, dtype=np.float64)
                except (TypeError, ValueError):
                    raise TreeLearnValueError(
                        f"{what}: column {self._name(j)} is numeric in training but has non-numeric values"
                    ) from None
            else:
                lookup = {v: i for i, v in enumerate(cats.tolist())}
                values = col.tolist()
                if any(v is None or (isinstance(v, float) and v != v) for v in values):
                    raise TreeLearnValueError(
                        f"{what}: column {self._name(j)} has missing values; "
                        "treelearn does not support missing values: impute or drop them first"
                    )
                out[:, j] = [lookup.get(v, -1) for v in values]
        check_finite(out, what=what)
        return out

    def column_name(self, j: int) -> str:
        """The name of raw column j (its DataFrame name, else ``x{j}``)."""
        return self.feature_names[j] if self.feature_names else f"x{j}"

    _name = column_name  # the old private name, for code written against it
