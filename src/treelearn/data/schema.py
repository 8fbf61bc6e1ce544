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
import sys
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from treelearn._validation import (
    TreeLearnTypeError,
    TreeLearnValueError,
    as_2d_raw,
    check_finite,
    is_missing,
    native_float_flags,
)


def _pandas():
    """pandas when something has imported it, else None: a DataFrame exists only then, so the
    schema never imports pandas itself (reading a model stays light)."""
    return sys.modules.get("pandas")


def _is_dataframe(X) -> bool:
    pd = _pandas()
    return pd is not None and isinstance(X, pd.DataFrame)


@dataclass
class ColumnSchema:
    """Per raw column: ``None`` for numeric, else the array of its categories (sorted);
    ``missing``: per column, whether the training data had a missing value there (``None``:
    not known, e.g. a schema built by hand or read from an older model)."""

    categories: list = field(default_factory=list)
    feature_names: list | None = None
    missing: list | None = None

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
    def infer(cls, X, categorical=None, *, missing=None) -> "ColumnSchema":
        """Decide the column kinds from training data.

        Inferred: pandas ``category``/``object``/``string``/``bool`` columns and columns with
        non-numeric values are categorical, the rest (numpy bool arrays included, as 0/1) numeric.
        ``categorical`` (a list of column indices or names, or a boolean mask) makes more columns
        categorical: it adds to the inference, it does not replace it. ``missing``: per column
        whether it holds a missing value, when the caller already knows (else computed).
        """
        pd = _pandas()
        names = [str(c) for c in X.columns] if _is_dataframe(X) else None
        raw = as_2d_raw(X)
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
        _check_exact_numbers(X, raw, mask, names)
        if missing is None:
            missing = _missing_columns(X, raw)
        if not mask.any():  # all numeric (the common case): no per-column work
            return cls(categories=[None] * n_features, feature_names=names, missing=missing)
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
            # missing values (None, NaN, pd.NA) are no category: they stay missing (NaN) when encoded
            present = {v for v in col.tolist() if not is_missing(v)}
            try:
                values = sorted(present, key=lambda v: (str(type(v)), v))
            except TypeError:  # values of one type that cannot be ordered: a deterministic order
                values = sorted(present, key=lambda v: (str(type(v)), repr(v)))
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            categories.append(arr)
        return cls(categories=categories, feature_names=names, missing=missing)

    def had_missing(self, j: int) -> bool:
        """Whether column j had a missing value in training (True when not known)."""
        return self.missing is None or bool(self.missing[j])

    def encode(self, X, *, what: str = "X", checked: bool = False) -> np.ndarray:
        """Raw X -> encoded float64 matrix (categorical columns as codes, unseen -> -1).
        ``checked``: X's numeric values are known to be finite or NaN (not checked again)."""
        raw = as_2d_raw(X, what=what)
        if raw.shape[1] != self.n_features:
            raise TreeLearnValueError(
                f"{what} has {raw.shape[1]} features, but the tree is expecting {self.n_features} features as input"
            )
        if self.all_numeric:
            try:
                out = np.ascontiguousarray(raw, dtype=np.float64)
            except OverflowError:
                _raise_too_large(raw, what, self._name)
            except (TypeError, ValueError) as exc:
                raise TreeLearnValueError(
                    f"{what} has non-numeric values but no categorical columns were fitted: {exc}"
                ) from None
            if not checked:
                check_finite(out, what=what)
            return out
        out = np.empty(raw.shape, dtype=np.float64)
        for j, cats in enumerate(self.categories):
            col = raw[:, j]
            if cats is None:
                try:
                    out[:, j] = np.asarray(col, dtype=np.float64)
                except OverflowError:
                    _raise_too_large(raw, what, self._name, columns=[j])
                except (TypeError, ValueError):
                    raise TreeLearnValueError(
                        f"{what}: column {self._name(j)} is numeric in training but has non-numeric values"
                    ) from None
            else:
                lookup = {v: i for i, v in enumerate(cats.tolist())}
                # a missing value stays missing (NaN); a value not seen in training is -1 (no category)
                out[:, j] = [np.nan if is_missing(v) else lookup.get(v, -1) for v in col.tolist()]
        check_finite(out, what=what)
        return out

    def column_name(self, j: int) -> str:
        """The name of raw column j (its DataFrame name, else ``x{j}``)."""
        return self.feature_names[j] if self.feature_names else f"x{j}"

    _name = column_name  # the old private name, for code written against it

def _missing_columns(X, raw: np.ndarray) -> list:
    """Per column, whether it holds a missing value (None, NaN, ``pd.NA``)."""
    if _is_dataframe(X):
        return [bool(v) for v in X.isna().any(axis=0).tolist()]
    flags = native_float_flags(raw)
    if flags is not None:
        return flags[0].tolist()
    if raw.dtype.kind == "f":
        return [bool(v) for v in np.isnan(raw).any(axis=0).tolist()]
    if raw.dtype == object:
        return [any(is_missing(v) for v in raw[:, j].tolist()) for j in range(raw.shape[1])]
    return [False] * raw.shape[1]


# ---------------------------------------------------------------------------------- exactness
#: integers of magnitude above this may share a float64 with their neighbours
_EXACT_INT = 2**53


def _raise_too_large(raw: np.ndarray, what: str, name, columns=None):
    """Name the first cell of an object array holding a number float64 cannot hold."""
    cols = range(raw.shape[1]) if columns is None else columns
    for j in cols:
        for i, v in enumerate(raw[:, j].tolist()):
            try:
                float(v)
            except OverflowError:
                digits = len(str(abs(v))) if isinstance(v, numbers.Integral) else None
                shown = f"an integer of {digits} digits" if digits else f"the number {str(v)[:30]}"
                raise TreeLearnValueError(
                    f"{what}: column {name(j)} has {shown} at row {i}, too large for a float64 "
                    "(treelearn's features are float64); rescale the column or make it categorical"
                ) from None
            except (TypeError, ValueError):
                continue
    raise TreeLearnValueError(f"{what} has a number too large for a float64")  # pragma: no cover


def _merged_pair(values: np.ndarray):
    """Two distinct values of a numeric column that are equal as float64, or None."""
    if values.dtype == object:
        vals = [v for v in values.tolist()]
        try:
            as_float = [float(v) for v in vals]
        except (TypeError, ValueError):
            return None
        seen: dict = {}
        for v, f in zip(vals, as_float):
            if f in seen and seen[f] != v:
                return seen[f], v
            seen.setdefault(f, v)
        return None
    u = np.unique(values)
    f = u.astype(np.float64)
    same = np.flatnonzero(f[1:] == f[:-1])  # u is sorted and the conversion is monotone
    return (u[same[0]].item(), u[same[0] + 1].item()) if same.size else None


def _check_exact_numbers(X, raw: np.ndarray, categorical: np.ndarray, names) -> None:
    """A numeric column becomes float64, exact for integers up to 2**53 only: refuse (with the
    column and two values) a column whose distinct integers float64 would merge, and name a
    number too large for a float64, instead of fitting on silently changed data."""
    def name(j):
        return names[j] if names else f"x{j}"

    def fail(j, pair):
        a, b = pair
        raise TreeLearnValueError(
            f"X: column {name(j)} has the distinct integers {a} and {b}, which are equal as float64 "
            f"(treelearn's features are float64, exact for integers up to 2**53 = {_EXACT_INT}); "
            "subtract an offset, rescale the column or make it categorical"
        )

    if _is_dataframe(X):
        pd = _pandas()
        for j, dt in enumerate(X.dtypes):
            if categorical[j] or not pd.api.types.is_integer_dtype(dt):
                continue
            s = X.iloc[:, j].dropna()
            col = s.to_numpy(dtype=np.uint64 if pd.api.types.is_unsigned_integer_dtype(dt) else np.int64)
            if col.size and (col.max() > _EXACT_INT or col.min() < -_EXACT_INT):
                pair = _merged_pair(col)
                if pair is not None:
                    fail(j, pair)
        if raw.dtype != object:
            return
    elif raw.dtype.kind in "iu":
        if raw.dtype.itemsize < 8:  # at most 32 bits: every value is exact in float64
            return
        big = (raw > _EXACT_INT) if raw.dtype.kind == "u" else ((raw > _EXACT_INT) | (raw < -_EXACT_INT))
        for j in np.flatnonzero(big.any(axis=0) & ~categorical):
            pair = _merged_pair(raw[:, j])
            if pair is not None:
                fail(int(j), pair)
        return
    if raw.dtype == object:
        for j in np.flatnonzero(~categorical):
            col = raw[:, j]
            values = col.tolist()
            if not any(isinstance(v, numbers.Integral) and not -_EXACT_INT <= v <= _EXACT_INT for v in values):
                continue
            try:
                for v in values:
                    float(v)
            except OverflowError:
                _raise_too_large(raw, "X", name, columns=[int(j)])
            except (TypeError, ValueError):
                continue
            pair = _merged_pair(col)
            if pair is not None:
                fail(int(j), pair)
