"""Binarizer: raw columns -> binary conditions (a scikit-learn transformer).

* numeric column j -> threshold conditions ``x_j >= t``:
  - ``max_thresholds=None`` and ``max_binary_features=None`` (exact): every midpoint between
    consecutive distinct training values;
  - ``max_thresholds=m``: at most m thresholds per column, at quantiles of the training values
    (histogram-style, as gradient-boosting libraries bin features), each moved to the midpoint
    between the two distinct values it separates;
  - ``max_binary_features=B`` (003 App. C, "total binary features about 100"): each numeric
    column gets ``m = max(1, B // n_numeric)`` thresholds, at the i/(m+1) quantiles (linear
    interpolation) of its *distinct* values, the encoding of the Top-k paper's experiments
    (with B = 200 it reproduces the 171-feature spambase matrix the Top-k code builds);
* categorical column j (pandas category/object/string/bool dtype, or listed in ``categorical``)
  -> one-hot ``x_j == v``, one feature per category seen in training. A value not seen in
  training gets all zeros (every ``x_j == v`` false) at transform time.
* a column with exactly two training values becomes exactly one binary feature (numeric:
  ``x_j >= midpoint``; categorical: ``x_j == larger value``), so 0/1 data passes through
  unchanged; a constant column gives no feature.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from treelearn._validation import (
    BOOLEAN,
    COLUMNS,
    INT32_MAX,
    Interval,
    _as_2d_raw,
    validate_parameters,
)
from treelearn.data import _bitset
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.schema import ColumnSchema

NUMERIC = 0
CATEGORICAL = 1


def _midpoints(u: np.ndarray) -> np.ndarray:
    mid = (u[:-1] + u[1:]) / 2.0
    # a midpoint may round onto the upper value; it must stay strictly above the lower one
    bad = mid <= u[:-1]
    mid[bad] = u[1:][bad]
    return mid


def numeric_thresholds(col: np.ndarray, max_thresholds: int | None = None, *, distinct_quantiles: bool = False):
    """Thresholds t (ascending) for conditions ``x >= t`` on one numeric column."""
    u = np.unique(col)
    if u.size <= 1:
        return np.zeros(0)
    mids = _midpoints(u)
    if max_thresholds is None or mids.size <= max_thresholds:
        return mids
    if distinct_quantiles:
        # 003 App. C / the Top-k code: the condition x >= q_i with q_i the (linearly interpolated)
        # i/(m+1) quantile of the *distinct* values, i = 1..m. On the training values that is
        # x >= u[pos_i] with pos_i the first distinct value >= q_i, i.e. x >= the midpoint below it.
        q = np.quantile(u, np.arange(1, max_thresholds + 1) / (max_thresholds + 1))
        pos = np.unique(np.clip(np.searchsorted(u, q, side="left"), 1, u.size - 1))
        return mids[pos - 1]
    # quantiles of the data: cut the sorted sample into m + 1 bins of about equal mass
    s = np.sort(col)
    qs = s[np.clip((np.arange(1, max_thresholds + 1) * s.size) // (max_thresholds + 1), 0, s.size - 1)]
    # the threshold just above the quantile value separates it from the next distinct value
    idx = np.unique(np.searchsorted(u, qs, side="left"))
    idx = idx[idx < mids.size]
    return mids[idx]


class Binarizer(TransformerMixin, BaseEstimator):
    """Map numeric and categorical columns to binary conditions (see the module docstring).

    Parameters
    ----------
    max_thresholds : int or None
        At most this many quantile thresholds per numeric column (None: every midpoint).
    max_binary_features : int or None
        Global budget of binary features for numeric columns, split evenly (003 App. C).
        Overrides ``max_thresholds``.
    categorical : None, list of int/str, or bool mask
        Categorical columns; None infers them from pandas dtypes / non-numeric object columns.
    full_one_hot : bool, default False
        Give a two-valued *categorical* column both of its ``x == v`` features instead of one (the
        Top-k code's encoding of its categorical datasets: every value becomes a 0/1 column).

    Attributes
    ----------
    schema_ : ColumnSchema
    feature_ : (n_binary,) raw column of each binary feature
    kind_ : (n_binary,) 0 for ``x >= threshold``, 1 for ``x == category`` (threshold = code)
    threshold_ : (n_binary,) threshold or category code
    feature_names_out_ : readable names, e.g. ``age >= 30.5``, ``color == red``
    """

    def __init__(self, max_thresholds=None, max_binary_features=None, categorical=None, full_one_hot=False):
        self.max_thresholds = max_thresholds
        self.max_binary_features = max_binary_features
        self.categorical = categorical
        self.full_one_hot = full_one_hot

    _parameter_constraints = {
        "max_thresholds": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "max_binary_features": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "categorical": [COLUMNS, None],
        "full_one_hot": [BOOLEAN],
    }

    def fit(self, X, y=None):
        validate_parameters(type(self).__name__, self._parameter_constraints, self.get_params(deep=False))
        _as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        schema = ColumnSchema.infer(X, self.categorical)
        Xe = schema.encode(X)
        self.fit_encoded(Xe, schema)
        return self

    def fit_encoded(self, Xe: np.ndarray, schema: ColumnSchema):
        """Fit on an encoded matrix (``schema.encode(X)``) whose schema is known."""
        self.schema_ = schema
        self.n_features_in_ = schema.n_features
        if schema.feature_names is not None:
            self.feature_names_in_ = np.asarray(schema.feature_names, dtype=object)
        numeric = [j for j in range(schema.n_features) if not schema.is_categorical(j)]
        per_col, distinct = self.max_thresholds, False
        if self.max_binary_features is not None and numeric:
            per_col, distinct = max(1, self.max_binary_features // len(numeric)), True
        feature, kind, threshold = [], [], []
        for j in range(schema.n_features):
            if schema.is_categorical(j):
                present = np.unique(Xe[:, j]).astype(np.int64)
                present = present[present >= 0]
                if present.size == 2 and not getattr(self, "full_one_hot", False):
                    codes = present[1:]
                else:
                    codes = present if present.size >= 2 else present[:0]
                for c in codes:
                    feature.append(j)
                    kind.append(CATEGORICAL)
                    threshold.append(float(c))
            else:
                for t in numeric_thresholds(Xe[:, j], per_col, distinct_quantiles=distinct):
                    feature.append(j)
                    kind.append(NUMERIC)
                    threshold.append(float(t))
        self.feature_ = np.asarray(feature, dtype=np.int64)
        self.kind_ = np.asarray(kind, dtype=np.int8)
        self.threshold_ = np.asarray(threshold, dtype=np.float64)
        self._feature_names_out = None  # built on first use (thousands of names cost a fit's time)
        return self

    def fit_binary_columns(self, schema: ColumnSchema, keep: np.ndarray, threshold: float = 0.5):
        """The fit of a matrix whose every value is 0 or 1 (``threshold=0.5``) or -1 or +1
        (``threshold=0``), given the indices ``keep`` of its non-constant columns: one
        ``x >= threshold`` feature per kept column, as :meth:`fit` gives for such data (the midpoint
        of the two values), without the per-column threshold search."""
        self.schema_ = schema
        self.n_features_in_ = schema.n_features
        if schema.feature_names is not None:
            self.feature_names_in_ = np.asarray(schema.feature_names, dtype=object)
        self.feature_ = np.asarray(keep, dtype=np.int64)
        self.kind_ = np.zeros(self.feature_.size, dtype=np.int8)
        self.threshold_ = np.full(self.feature_.size, float(threshold))
        self._feature_names_out = None
        return self

    @property
    def feature_names_out_(self) -> np.ndarray:
        names = self.__dict__.get("_feature_names_out")
        if names is None:
            names = np.asarray(self._unique_names(), dtype=object)
            self._feature_names_out = names
        return names

    @feature_names_out_.setter
    def feature_names_out_(self, names) -> None:
        self._feature_names_out = np.asarray(names, dtype=object)

    @property
    def n_binary_features_(self) -> int:
        return int(self.feature_.size)

    def condition_name(self, i: int, precision: int = 6) -> str:
        j = int(self.feature_[i])
        name = self.schema_.column_name(j)
        if self.kind_[i] == CATEGORICAL:
            return f"{name} == {self.schema_.categories[j][int(self.threshold_[i])]}"
        return f"{name} >= {self.threshold_[i]:.{precision}g}"

    def _unique_names(self) -> list[str]:
        # readable names (6 significant digits), more digits where two thresholds would read alike
        names = [self.condition_name(i) for i in range(self.feature_.size)]
        for precision in (8, 10, 12, 14, 17):
            seen: dict[str, int] = {}
            for n in names:
                seen[n] = seen.get(n, 0) + 1
            dup = [i for i, n in enumerate(names) if seen[n] > 1 and self.kind_[i] == NUMERIC]
            if not dup:
                break
            for i in dup:
                names[i] = self.condition_name(i, precision)
        return names

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "feature_")
        return self.feature_names_out_.copy()

    def transform(self, X) -> np.ndarray:
        """Raw X -> (n_samples, n_binary) uint8 matrix of 0/1."""
        check_is_fitted(self, "feature_")
        _as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.transform_encoded(self.schema_.encode(X))

    def transform_encoded(self, Xe: np.ndarray) -> np.ndarray:
        # one raw column at a time: memory n x n_binary uint8, no float copy of every feature
        out = np.empty((Xe.shape[0], self.feature_.size), dtype=np.uint8)
        if self.feature_.size == 0:
            return out
        order = np.argsort(self.feature_, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(self.feature_[order]) != 0])
        as_bool = out.view(bool)
        for a, b in zip(starts, np.r_[starts[1:], order.size]):
            idx = order[a:b]
            col = Xe[:, self.feature_[idx[0]], None]
            num = self.kind_[idx] == NUMERIC
            if idx[-1] - idx[0] == idx.size - 1 and np.all(np.diff(idx) == 1):  # the usual case: a block
                sl = slice(int(idx[0]), int(idx[-1]) + 1)
                thr = self.threshold_[sl]
                if num.all() and np.all(thr[1:] > thr[:-1]):
                    # ascending thresholds: x >= t_k  <=>  k < #{thresholds <= x}
                    cnt = np.searchsorted(thr, col[:, 0], side="right")
                    np.less(np.arange(thr.size)[None, :], cnt[:, None], out=as_bool[:, sl])
                    continue
                if not num.any():
                    np.equal(col, thr, out=as_bool[:, sl])
                    continue
            if num.all():
                out[:, idx] = col >= self.threshold_[idx]
            elif not num.any():
                out[:, idx] = col == self.threshold_[idx]
            else:
                out[:, idx[num]] = col >= self.threshold_[idx[num]]
                out[:, idx[~num]] = col == self.threshold_[idx[~num]]
        return out

    def binary_data(self, X, y_codes, n_classes=None, sample_weight=None) -> BinaryData:
        """Transform X and pack it with the labels into a BinaryData."""
        return BinaryData(self.transform(X), y_codes, n_classes=n_classes, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []  # always 0/1 uint8
        return tags


def binarize_sample(X, schema: ColumnSchema, y_codes, n_classes: int, sample_weight=None, *, max_thresholds=None,
                    max_binary_features=None, signed: bool = False, Xe=None, clock=None,
                    max_bytes=None, copies: int = 1) -> tuple[Binarizer, BinaryData]:
    """The one path from a learner's input to a :class:`BinaryData`: ``(binarizer, data)``.

    ``X`` is the raw matrix; ``Xe`` its encoding ``schema.encode(X)`` when the caller has it. When
    every column is numeric and every value is 0 or 1 (or, with ``signed``, every value is -1 or
    +1), the columns are packed straight into bits (one compiled pass in X's own dtype, no float
    copy; a bool or uint8 matrix costs n·d/8 bytes) and each non-constant column is one feature
    ``x >= 0.5`` (``x >= 0``): the features the Binarizer's exact encoding gives such data, in the
    same order. Any other X is
    encoded and binarized by ``Binarizer(max_thresholds, max_binary_features)``, in blocks of rows
    packed as they are made (the 0/1 bytes of all rows never exist at once). Weights of 1
    everywhere give unweighted (integer) counts.

    Limits (issue 12): ``clock`` (a :class:`treelearn._limits.FitClock`) is checked between
    blocks (:class:`~treelearn._limits.FitTimeout` when the fit's deadline passed);
    ``max_bytes`` refuses, before allocating them, packed columns whose ``copies`` (the learner's
    own copies of the bits counted in) need more than that
    (:class:`~treelearn._limits.ResourceLimitError`).
    """
    n = int(np.asarray(y_codes).shape[0])
    binz = Binarizer(max_thresholds=max_thresholds, max_binary_features=max_binary_features)
    X = np.asarray(X)
    packed, threshold = None, 0.5
    if schema.all_numeric and X.dtype.kind in "biuf" and X.ndim == 2 and X.shape[0] == n:
        packed = _bitset.pack_binary(X)
        if packed is None and signed and X.dtype.kind in "if" and np.all((X == 1) | (X == -1)):
            packed, threshold = _bitset.pack_binary(X > 0), 0.0
    if packed is not None:
        columns, ones = packed
        keep = np.flatnonzero((ones > 0) & (ones < n))
        binz.fit_binary_columns(schema, keep, threshold)
        if keep.size != columns.shape[0]:
            columns = columns[keep]
        return binz, BinaryData.from_packed(columns, y_codes, n_classes, sample_weight)
    if Xe is None:
        Xe = schema.encode(X)
    if clock is not None:
        clock.check()
    binz.fit_encoded(Xe, schema)
    d = int(binz.feature_.size)
    n_words = int(_bitset.n_words_for(n))
    if max_bytes is not None and copies * 8.0 * d * n_words > max_bytes:
        from treelearn._limits import ResourceLimitError

        held = "" if copies == 1 else f" x {copies} copies the search holds"
        raise ResourceLimitError(
            f"the binarized sample ({n} rows x {d} binary features) needs {8.0 * d * n_words / 2**20:.0f} MiB"
            f"{held}, over the memory cap of {max_bytes / 2**20:.0f} MiB (memory_limit_mb plus the input's own "
            "size); lower max_binary_features / max_thresholds or raise memory_limit_mb")
    columns = np.zeros((d, n_words), dtype=np.uint64)
    # rows in blocks of a multiple of 64 (whole words), about 4 MiB of 0/1 bytes each (the
    # clock is checked between blocks: a block takes well under 0.1 s)
    step = max(64, (4 * 2**20 // max(d, 1)) // 64 * 64)
    for r0 in range(0, n, step):
        if clock is not None:
            clock.check()
        r1 = min(n, r0 + step)
        block = binz.transform_encoded(Xe[r0:r1])
        columns[:, r0 // 64:(r1 + 63) // 64] = _bitset.pack_columns(block)
    return binz, BinaryData.from_packed(columns, y_codes, n_classes, sample_weight)
