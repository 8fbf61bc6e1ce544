"""Input checks shared by every learner; each raises an error that names the problem."""
from __future__ import annotations

import numbers
from collections.abc import Hashable

import numpy as np


class TreeLearnValueError(ValueError):
    """Bad input or parameter; the message says what and where."""


class TreeLearnTypeError(TypeError):
    """Input of a type treelearn cannot use (e.g. an unhashable value in a column)."""


def _as_2d_raw(X, *, what: str = "X") -> np.ndarray:
    """X (array-like or DataFrame) -> a 2-D numpy array (numeric or object), with shape checks."""
    if X is None:
        raise TreeLearnValueError(f"{what} is None; expected a 2-D array of shape (n_samples, n_features)")
    try:
        import pandas as pd

        if isinstance(X, pd.DataFrame):
            for name, dt in zip(X.columns, X.dtypes):
                if pd.api.types.is_complex_dtype(dt):
                    raise TreeLearnValueError(
                        f"{what}: column {name!r} has complex values: Complex data not supported; expected real numbers"
                    )
                if (pd.api.types.is_datetime64_any_dtype(dt) or pd.api.types.is_timedelta64_dtype(dt)
                        or isinstance(dt, (pd.PeriodDtype, pd.IntervalDtype))):
                    raise TreeLearnValueError(
                        f"{what}: column {name!r} has unsupported dtype {dt}; convert it to numbers or categories first"
                    )
            if all(pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt) for dt in X.dtypes):
                arr = X.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                arr = X.to_numpy(dtype=object)
                arr = np.where(pd.isna(X).to_numpy(), np.nan, arr).astype(object)
            _check_shape(arr, what)
            return arr
        if isinstance(X, pd.Series):
            raise TreeLearnValueError(
                f"{what} is a 1-D Series; expected a 2-D array: use X.to_frame() for one feature"
            )
    except ImportError:  # pragma: no cover
        pass
    if hasattr(X, "toarray") and hasattr(X, "nnz"):
        raise TreeLearnValueError(f"{what} is a sparse matrix; treelearn needs dense input (X.toarray())")
    try:
        arr = np.asarray(X)
    except ValueError as exc:
        raise TreeLearnValueError(f"{what} could not be read as an array: {exc}") from None
    if arr.dtype.kind == "c":
        raise TreeLearnValueError(f"{what} has complex values: Complex data not supported; expected real numbers")
    if arr.dtype.kind not in "biufO" and arr.dtype.kind not in "USb":
        raise TreeLearnValueError(f"{what} has unsupported dtype {arr.dtype}")
    _check_shape(arr, what)
    return _native(arr)


def _native(arr: np.ndarray) -> np.ndarray:
    """The array in the machine's byte order (compiled kernels read native buffers only)."""
    if not arr.dtype.isnative:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _check_shape(arr: np.ndarray, what: str) -> None:
    if arr.ndim != 2:
        hint = (" (Reshape your data either using X.reshape(-1, 1) if it has a single feature "
                "or X.reshape(1, -1) if it contains a single sample)") if arr.ndim == 1 else ""
        raise TreeLearnValueError(
            f"{what} must be 2-D of shape (n_samples, n_features), got {arr.ndim}-D with shape {arr.shape}{hint}"
        )
    if arr.shape[0] == 0:
        raise TreeLearnValueError(
            f"{what} is empty: Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.shape[1] == 0:
        raise TreeLearnValueError(
            f"{what} has no features: Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is "
            "required."
        )


def check_finite(arr: np.ndarray, *, what: str = "X") -> None:
    """Reject NaN (missing values) and infinities, naming the first offending cell."""
    if arr.dtype.kind != "f":
        return
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.argwhere(bad)[0]
        v = arr[tuple(idx)]
        kind = "NaN (a missing value)" if np.isnan(v) else "infinity"
        raise TreeLearnValueError(
            f"{what} contains {kind} at row {idx[0]}, column {idx[1]} ({int(bad.sum())} such values); "
            "treelearn does not support missing or infinite values: impute or drop them first"
        )


def check_target(y, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """y -> (classes, codes); classes sorted, any hashable labels; clear errors on bad y."""
    if y is None:
        raise TreeLearnValueError(
            "y is None: this estimator requires y to be passed, but the target y is None; "
            "expected a 1-D array of class labels"
        )
    try:
        import pandas as pd

        if isinstance(y, pd.DataFrame):
            if y.shape[1] != 1:
                raise TreeLearnValueError(f"y must be 1-D, got a DataFrame with {y.shape[1]} columns")
            y = y.iloc[:, 0]
        if isinstance(y, pd.Series):
            if y.isna().any():
                raise TreeLearnValueError("y contains missing values (NaN/None); every sample needs a label")
            y = y.to_numpy()
    except ImportError:  # pragma: no cover
        pass
    if not isinstance(y, np.ndarray):
        seq = y
        try:
            y = np.asarray(seq)
        except ValueError:  # ragged nested labels, e.g. tuples of different lengths
            y = None
        if y is None or (y.ndim != 1 and isinstance(seq, (list, tuple)) and seq
                         and all(isinstance(v, tuple) for v in seq)):
            # tuple labels such as ("a", 1): NumPy would make them a 2-D array
            y = np.empty(len(seq), dtype=object)
            y[:] = list(seq)
        elif y.dtype.kind in "US" and y.ndim == 1 and (
                not all(isinstance(v, (str, bytes)) for v in seq)
                or any(v[-1:] in ("\x00", b"\x00") for v in seq)):
            # NumPy's fixed-width strings drop trailing NULs ('a\x00' would become 'a'): keep the labels
            # mixed labels such as [0, 'a']: NumPy would turn 0 into '0'; keep the labels as they are
            y = np.empty(len(seq), dtype=object)
            y[:] = list(seq)
    y = _native(y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                      "to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise TreeLearnValueError(f"y must be 1-D (one label per sample), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise TreeLearnValueError(
            f"X and y have different numbers of samples: X has {n_samples}, y has {y.shape[0]}"
        )
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise TreeLearnValueError("y contains NaN or infinite values; every sample needs a finite label")
        if not np.all(y == np.round(y)):
            raise TreeLearnValueError(
                "Unknown label type: continuous. y has non-integer float values; a classifier needs class "
                "labels (integers, strings or other hashable values), not a continuous target"
            )
    elif y.dtype == object:
        values = y.tolist()
        try:
            import pandas as pd

            missing = bool(np.any(pd.isna(y)))
        except ImportError:  # pragma: no cover
            missing = any(v is None or (isinstance(v, float) and v != v) for v in values)
        if missing:
            raise TreeLearnValueError("y contains missing values (NaN/None); every sample needs a label")
        bad = next((v for v in values if not isinstance(v, Hashable)), None)
        if bad is not None:
            raise TreeLearnValueError(f"y has a label of unhashable type {type(bad).__name__}; labels must be hashable")
    elif y.dtype.kind not in "biuUS":
        raise TreeLearnValueError(f"y has unsupported dtype {y.dtype}; expected class labels")
    if y.dtype.kind in "biu" and y.size:
        # integer labels over a small range: classes by a count, codes by a lookup (no sort)
        lo, hi = int(y.min()), int(y.max())
        if hi - lo <= 4 * y.size + 1024:
            # offsets from the minimum, computed without leaving y's range (uint64 labels >= 2**63
            # do not fit an int64)
            off = (y - y.min()).astype(np.int64) if y.dtype.kind == "u" else y.astype(np.int64) - lo
            present = np.flatnonzero(np.bincount(off, minlength=hi - lo + 1))
            lookup = np.zeros(hi - lo + 1, dtype=np.int64)
            lookup[present] = np.arange(present.size)
            return present.astype(y.dtype) + y.min(), lookup[off]
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        # mixed, unorderable labels: order by (type name, repr) for determinism
        labels = y.tolist()
        uniq = sorted(set(labels), key=lambda v: (type(v).__name__, repr(v)))
        lookup = {v: i for i, v in enumerate(uniq)}
        classes = np.empty(len(uniq), dtype=object)
        classes[:] = uniq
        codes = np.array([lookup[v] for v in labels], dtype=np.int64)
    return classes, codes.astype(np.int64).ravel()


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """None -> ones; otherwise a finite non-negative 1-D float64 array of length n with a positive sum."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    try:
        if isinstance(sample_weight, numbers.Number):
            w = np.full(n_samples, float(sample_weight))
        else:
            w = np.asarray(sample_weight, dtype=np.float64)
    except OverflowError:
        raise TreeLearnValueError("sample_weight has a number too large for a float64") from None
    except (TypeError, ValueError):
        raise TreeLearnValueError("sample_weight must be numeric") from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise TreeLearnValueError(
            f"sample_weight must be 1-D with one weight per sample: got shape {w.shape}, expected ({n_samples},)"
        )
    if not np.all(np.isfinite(w)):
        raise TreeLearnValueError("sample_weight contains NaN or infinite values")
    if np.any(w < 0):
        raise TreeLearnValueError("sample_weight has negative values; weights must be >= 0")
    if not np.any(w > 0):
        raise TreeLearnValueError(
            "sample_weight sums to 0 (every sample weight is zero); at least one sample needs a positive weight"
        )
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total):
        raise TreeLearnValueError(
            f"sample_weight sums to more than the largest float64 (max weight {w.max():.3g}); "
            "divide all weights by a constant (the tree does not change)"
        )
    return np.ascontiguousarray(w)


def check_int_param(name: str, value, *, low=None, high=None, allow_none: bool = False):
    if value is None:
        if allow_none:
            return None
        raise TreeLearnValueError(f"{name} must be an integer, got None")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TreeLearnValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if low is not None and value < low:
        raise TreeLearnValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise TreeLearnValueError(f"{name} must be <= {high}, got {value}")
    return int(value)


def check_float_param(name: str, value, *, low=None, high=None, low_open=False, high_open=False,
                      allow_none: bool = False):
    if value is None:
        if allow_none:
            return None
        raise TreeLearnValueError(f"{name} must be a number, got None")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TreeLearnValueError(f"{name} must be a finite number, got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise TreeLearnValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value >= high if high_open else value > high):
        raise TreeLearnValueError(f"{name} must be {'<' if high_open else '<='} {high}, got {value}")
    return float(value)
