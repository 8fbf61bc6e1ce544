"""Input checks shared by every learner; each raises an error that names the problem."""
from __future__ import annotations

import math
import numbers
from collections.abc import Hashable

import numpy as np

from treelearn._scan import float_flags


class TreeLearnValueError(ValueError):
    """Bad input or parameter; the message says what and where."""


class TreeLearnTypeError(TypeError):
    """Input of a type treelearn cannot use (e.g. an unhashable value in a column)."""


def as_2d_raw(X, *, what: str = "X") -> np.ndarray:
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
    if arr.dtype == object:
        arr = _missing_as_nan(arr)
    return _native(arr)


def _missing_as_nan(arr: np.ndarray) -> np.ndarray:
    """An object array with every missing cell (None, NaN, ``pd.NA``) as the float NaN."""
    try:
        import pandas as pd

        mask = np.asarray(pd.isna(arr), dtype=bool)
    except ImportError:  # pragma: no cover
        mask = np.frompyfunc(is_missing, 1, 1)(arr).astype(bool)
    if mask.any():
        arr = arr.copy()
        arr[mask] = np.nan
    return arr


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


def native_float_flags(arr: np.ndarray):
    """``(nan, inf)`` per column of a 2-D matrix of native float32/float64 in one compiled pass
    (no boolean matrix); None for any other dtype (the caller looks another way)."""
    if arr.ndim == 2 and arr.dtype in (np.float32, np.float64) and arr.dtype.isnative:
        return float_flags(arr)
    return None


def check_finite(arr: np.ndarray, *, what: str = "X", allow_nan: bool = True) -> None:
    """Reject infinities (and, with ``allow_nan=False``, NaN), naming the first offending cell.

    NaN is a missing value: every Tree routes it (see ``Tree.missing_go_to_left``), so X may hold
    it by default; a learner that cannot fit on missing values calls :func:`reject_missing`."""
    if arr.dtype.kind != "f":
        return
    cols = None
    flags = native_float_flags(arr)
    if flags is not None:  # only the offending columns are looked at again
        nan, inf = flags
        offending = inf if allow_nan else inf | nan
        if not offending.any():
            return
        cols = np.flatnonzero(offending)
        arr = arr[:, cols]
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        idx = np.argwhere(bad)[0]
        v = arr[tuple(idx)]
        if cols is not None:
            idx = (idx[0], cols[idx[1]])
        if np.isnan(v):
            raise TreeLearnValueError(
                f"{what} contains NaN (a missing value) at row {idx[0]}, column {idx[1]} ({int(bad.sum())} such "
                "values); missing values are not allowed here: impute or drop them first"
            )
        raise TreeLearnValueError(
            f"{what} contains infinity at row {idx[0]}, column {idx[1]} ({int(bad.sum())} such values); "
            "treelearn does not support infinite values (NaN marks a missing value): replace them first"
        )


def is_missing(v) -> bool:
    """Whether one cell is a missing value: None, NaN (float or numpy) or ``pd.NA``/``pd.NaT``."""
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return v != v
    try:
        import pandas as pd

        return v is pd.NA or v is pd.NaT
    except ImportError:  # pragma: no cover
        return False


def reject_missing(Xe: np.ndarray, learner: str) -> None:
    """Raise a named error when the numeric matrix ``Xe`` (the raw input or its encoding) holds a
    missing value (NaN).

    The check of a learner that does not handle missing values (the estimators' base calls it in
    fit and predict when the class sets ``_supports_missing = False``: the query learner). Nothing
    is copied: integer and boolean dtypes cannot hold NaN, and a float matrix is scanned by its
    minimum (NaN propagates) before any per-cell mask is made for the error message."""
    if Xe.dtype.kind not in "fc" or Xe.size == 0:
        return
    if not np.isnan(np.min(Xe)):
        return
    nan = np.isnan(Xe)
    i, j = np.argwhere(nan.reshape(len(nan), -1))[0]
    raise TreeLearnValueError(
        f"X contains missing values (NaN/None/pd.NA), first at row {i}, column {j} ({int(nan.sum())} in all), "
        f"which {learner} does not support: impute or drop them, or use another treelearn learner "
        "(every other learner handles them)"
    )


class ContinuousTargetWarning(UserWarning):
    """A classifier was given integer labels that look like a continuous target."""


def warn_if_continuous(classes: np.ndarray, n_samples: int, estimator: str) -> None:
    """Warn (once per call site, Python's default) when integer labels look like a numeric target:
    more distinct values than half the rows (and at least 20 rows), as a birth weight in grams
    would; a regressor is what fits them."""
    if n_samples >= 20 and classes.dtype.kind in "iuf" and len(classes) > n_samples / 2:
        import warnings

        warnings.warn(
            f"{estimator}: y has {len(classes)} distinct numeric values in {n_samples} samples: it looks like a "
            "continuous target, and each value becomes a class. For regression use treelearn.GreedyTreeRegressor.",
            ContinuousTargetWarning, stacklevel=4)


def check_regression_target(y, n_samples: int) -> np.ndarray:
    """A regression target: float64, shape (n,) or (n, k) (k outputs, as scikit-learn's
    regressors), finite; a named error for None, text, NaN, infinities, a wrong length or shape."""
    if y is None:
        raise TreeLearnValueError("y is None: this estimator requires y to be passed, but the target y is None; "
                                  "a regressor needs a numeric target y")
    try:
        import pandas as pd

        if isinstance(y, (pd.Series, pd.DataFrame)):
            y = y.to_numpy()
    except ImportError:  # pragma: no cover
        pass
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        if y.dtype.kind == "O":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                y = None
        if y is None or y.dtype.kind not in "biuf":
            raise TreeLearnValueError("y must be numeric for a regressor (got non-numeric values)")
    if y.ndim == 0 or y.ndim > 2:
        raise TreeLearnValueError(f"y must be 1-D or 2-D (one column per output), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise TreeLearnValueError(f"X has {n_samples} rows but y has {y.shape[0]}")
    if y.ndim == 2 and y.shape[1] == 0:
        raise TreeLearnValueError("y has no output column")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise TreeLearnValueError("y contains NaN or infinite values; every sample needs a finite target")
    return y


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
                "labels (integers, strings or other hashable values), not a continuous target (for a numeric "
                "target use a regressor: treelearn.GreedyTreeRegressor)"
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
            # do not fit an int64); non-negative labels (the usual 0..K-1) are their own offsets
            as_is = y.dtype.kind in "iu" and lo >= 0 and hi <= 4 * y.size + 1024 \
                and (y.dtype.itemsize < 8 or y.dtype == np.int64)
            off = y if as_is else (y - y.min()).astype(np.int64) if y.dtype.kind == "u" else y.astype(np.int64) - lo
            base = 0 if as_is else lo
            present = np.flatnonzero(np.bincount(off, minlength=hi - base + 1))
            classes = present.astype(y.dtype) if as_is else present.astype(y.dtype) + y.min()
            if as_is and present.size == hi + 1:  # labels 0..K-1, all present: their own codes (a copy)
                return classes, y.astype(np.int64)
            lookup = np.zeros(hi - base + 1, dtype=np.int64)
            lookup[present] = np.arange(present.size)
            return classes, lookup[off]
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


def weight_scale(wmin: float, wmax: float) -> float:
    """What a fit divides the kept rows' weights by (their smallest and largest): their common
    value when all are equal (the learner sees ones: the unweighted tree), else the power of two
    ``2**e`` with ``wmax / 2**e`` in [1, 2) (exact: every count scales back bit for bit). The one
    rule of the local fit (``base``) and of the fits on row shards."""
    hi = float(wmax)
    if hi == float(wmin):
        return hi
    _, e = np.frexp(hi)
    return float(np.ldexp(1.0, int(e) - 1))


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
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite_float(value):
        raise TreeLearnValueError(f"{name} must be a finite number a float64 can hold, got {_describe_value(value)}")
    if low is not None and (value <= low if low_open else value < low):
        raise TreeLearnValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value >= high if high_open else value > high):
        raise TreeLearnValueError(f"{name} must be {'<' if high_open else '<='} {high}, got {value}")
    return float(value)


def resolve_alias(owner: str, name: str, value, alias: str, alias_value, default=None):
    """One parameter under two names (ours, ``name``, and scikit-learn's, ``alias``): the alias
    when it is set (not None), else ``value``. Both set to different values (``value`` other than
    its ``default``) is a named error rather than a silent choice."""
    if alias_value is None:
        return value
    if value is not None and value != default and value != alias_value:
        raise TreeLearnValueError(f"{owner}: {name}={value!r} and {alias}={alias_value!r} conflict; {alias} is "
                                  f"scikit-learn's name of {name}: set one of them")
    return alias_value


# ---------------------------------------------------------------------------------- parameters
# Every estimator declares its parameters once, in scikit-learn's ``_parameter_constraints``
# style: a class attribute mapping each ``__init__`` parameter to a list of allowed forms (a value
# is valid when it satisfies one of them); ``None`` in the list allows None. The base class checks
# them once per ``fit`` with :func:`validate_parameters`. We keep our own small equivalent of
# ``sklearn.utils._param_validation`` because that module is private (it may change in any
# release) and because every failure must be a TreeLearnValueError whose message names the
# parameter, the value and what is allowed.
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


class RealNotInt:
    """Marker for :class:`Interval`: a real number that is not an integer (``0.5``, not ``1``)."""


def _finite_float(value) -> bool:
    """Whether a real number is finite as a float64 (an integer such as 10**400 is not: float()
    overflows; numpy cannot even test 2**64 for finiteness)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _describe_value(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Interval:
    """Numbers of one kind (``numbers.Integral``, ``numbers.Real`` or :class:`RealNotInt`)
    between ``low`` and ``high`` (None: unbounded); ``closed`` is ``"both"``, ``"left"``,
    ``"right"`` or ``"neither"``. Booleans and non-finite values never qualify."""

    def __init__(self, kind, low=None, high=None, *, closed="both"):
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed={closed!r}")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def matches_type(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is numbers.Integral:
            return isinstance(value, numbers.Integral)
        if self.kind is RealNotInt:
            return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
        return isinstance(value, numbers.Real)

    def _low_ok(self, value) -> bool:
        if self.low is None:
            return True
        return value >= self.low if self.closed in ("both", "left") else value > self.low

    def _high_ok(self, value) -> bool:
        if self.high is None:
            return True
        return value <= self.high if self.closed in ("both", "right") else value < self.high

    def _finite(self, value) -> bool:
        # an integer parameter may be any size (its bounds say how large); a real one becomes a
        # float64 in the learner, so an integer such as 10**400 must fit one
        return (self.kind is numbers.Integral and isinstance(value, numbers.Integral)) or _finite_float(value)

    def is_satisfied_by(self, value) -> bool:
        return self.matches_type(value) and self._finite(value) and self._low_ok(value) and self._high_ok(value)

    def range_error(self, name: str, value) -> str:
        """The message for a value of the right type outside the interval."""
        if not self._finite(value):
            return f"{name} must be a finite number a float64 can hold, got {_describe_value(value)}"
        if not self._low_ok(value):
            op = ">=" if self.closed in ("both", "left") else ">"
            return f"{name} must be {op} {self.low}, got {_describe_value(value)}"
        op = "<=" if self.closed in ("both", "right") else "<"
        return f"{name} must be {op} {self.high}, got {_describe_value(value)}"

    def __str__(self) -> str:
        what = {numbers.Integral: "an integer", RealNotInt: "a non-integer number"}.get(self.kind, "a number")
        if self.low is None and self.high is None:
            return what
        lo = "-inf" if self.low is None else str(self.low)
        hi = "inf" if self.high is None else str(self.high)
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        return f"{what} in {left}{lo}, {hi}{right}"


class Options:
    """One of a fixed set of values (strings, or True/False)."""

    def __init__(self, *values):
        self.values = values

    def is_satisfied_by(self, value) -> bool:
        try:
            return any(isinstance(value, type(v)) and value == v for v in self.values) or (
                isinstance(value, np.bool_) and any(v is bool(value) for v in self.values))
        except Exception:  # an object whose == fails or returns an array
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


BOOLEAN = Options(True, False)


class Check:
    """A value accepted by a check function that raises a named TreeLearnValueError itself (for
    values with a structure of their own: a criterion, a list of columns, a class-weight dict).
    What the check returns, when not None, is the value resolved for the fit (e.g. the criterion
    object for a name), so that it is resolved once. A Check comes last in its list (it raises
    instead of letting the next form be tried)."""

    def __init__(self, check, description: str):
        self.check, self.description = check, description

    def is_satisfied_by(self, value) -> bool:
        self.check(value)  # raises with its own message
        return True

    def __str__(self) -> str:
        return self.description


def _check_random_state(value) -> None:
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TreeLearnValueError(
            f"random_state must be None, an integer in [0, {2**32 - 1}], a numpy RandomState or Generator, "
            f"got {_describe_value(value)}")
    if not 0 <= value <= 2**32 - 1:
        raise TreeLearnValueError(f"random_state must be an integer in [0, {2**32 - 1}], got {value}")


#: scikit-learn's random_state forms (a seed, a RandomState, a Generator, or None)
RANDOM_STATE = [None, Check(_check_random_state, "a seed in [0, 2**32 - 1], a RandomState or a Generator")]


def _check_columns(value) -> None:
    """``categorical``: a list of column indices or names, or a boolean mask (checked against the
    columns of X when fitting)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TreeLearnValueError(
            f"categorical must be None, a list of column indices or names, or a boolean mask, "
            f"got {_describe_value(value)}")
    arr = np.asarray(value, dtype=object).ravel() if len(value) else np.zeros(0, dtype=object)
    for c in arr.tolist():
        if not isinstance(c, (str, numbers.Integral, np.bool_)):
            raise TreeLearnValueError(
                f"categorical lists column indices (int) or names (str), or is a boolean mask; "
                f"got the entry {_describe_value(c)}")


COLUMNS = Check(_check_columns, "a list of column indices or names, or a boolean mask")


def check_class_weight(value) -> None:
    """``class_weight``: None, ``"balanced"`` or a dict {class label: positive weight}."""
    if isinstance(value, str):
        if value != "balanced":
            raise TreeLearnValueError(f"class_weight must be None, 'balanced' or a dict, got {value!r}")
        return
    if not isinstance(value, dict):
        raise TreeLearnValueError(f"class_weight must be None, 'balanced' or a dict, got {_describe_value(value)}")
    for label, wt in value.items():
        if isinstance(wt, (bool, np.bool_)) or not isinstance(wt, numbers.Real) or not math.isfinite(wt) or wt < 0:
            raise TreeLearnValueError(
                f"class_weight[{label!r}] must be a finite number >= 0, got {_describe_value(wt)}")


CLASS_WEIGHT = [None, Check(check_class_weight, "'balanced' or a dict {class: weight}")]


# Values of these types are validated once per constraint list: a fit checks its parameters on
# every call, and they are nearly always the same few numbers and names. An entry keeps its
# constraint list alive, so the list's id cannot be reused while the entry exists.
_SCALAR_TYPES = frozenset({int, float, str, bool, np.int64, np.int32, np.float64, np.bool_})
_ACCEPTED: dict = {}
_ACCEPTED_MAX = 4096


def validate_parameters(owner: str, constraints: dict, params: dict) -> dict:
    """Check every parameter in ``constraints`` against its allowed forms; the first invalid one
    raises a TreeLearnValueError naming it. A value of the right type but outside a range gets
    that range's message (``max_depth must be >= 0, got -1``); any other value gets the list of
    forms (``scoring must be one of 'gain', 'gain_ratio', got 'x'``). Returns the parameters with
    the values a :class:`Check` resolved (e.g. a criterion name -> its Criterion)."""
    out = dict(params)
    for name, allowed in constraints.items():
        value = params[name]
        if value is None and None in allowed:
            continue
        key = (id(allowed), type(value), value) if type(value) in _SCALAR_TYPES else None
        known = _ACCEPTED.get(key) if key is not None else None
        if known is not None and known[0] is allowed:
            if known[1] is not None:
                out[name] = known[1]
            continue
        satisfied, resolved = _accepts(allowed, value)
        if satisfied:
            if resolved is not None:
                out[name] = resolved
            if key is not None:
                if len(_ACCEPTED) >= _ACCEPTED_MAX:
                    _ACCEPTED.clear()
                _ACCEPTED[key] = (allowed, resolved)
            continue
        forms = [c for c in allowed if c is not None]
        typed = [c for c in forms if isinstance(c, Interval) and c.matches_type(value)]
        if len(typed) == 1:
            raise TreeLearnValueError(typed[0].range_error(name, value))
        described = [str(c) for c in forms] + (["None"] if None in allowed else [])
        text = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
        raise TreeLearnValueError(f"{name} must be {text}, got {_describe_value(value)} ({type(value).__name__})"
                                  if not isinstance(value, str) else f"{name} must be {text}, got {value!r}")
    unknown = set(params) - set(constraints)
    if unknown:  # a parameter without a declaration is a programming error of the estimator
        raise TypeError(f"{owner} declares no constraint for {sorted(unknown)}")
    return out


def _accepts(allowed: list, value) -> tuple[bool, object]:
    """Whether one of the forms (None entries aside) accepts ``value``, and what a Check resolved it
    to (None: the value itself). A Check raises its own named error instead of returning False."""
    for c in allowed:
        if c is None:
            continue
        if isinstance(c, Check):  # no state kept on the (shared) constraint: thread-safe
            return True, c.check(value)  # raises with its own message
        if c.is_satisfied_by(value):
            return True, None
    return False, None
