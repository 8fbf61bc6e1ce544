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

Missing values (NaN, None, ``pd.NA``). A column with missing values in training gets, for each of
its conditions c (threshold or category), both missing directions as two binary features, and
one more feature for missingness itself:

* ``c and not missing`` (a missing value makes it false: ``missing_ == MISSING_FALSE``),
* ``c or missing`` (a missing value makes it true: ``missing_ == MISSING_TRUE``),
* ``x_j is missing`` (``kind_ == IS_MISSING``).

These are exactly the splits a :class:`~treelearn.Tree` node on the column can make (a condition
with the missing values sent left or right; a threshold beyond every value with the missing
values on one side is "is missing"), so a learner that is optimal over the binary features is
optimal over every tree whose splits use these thresholds and categories, with every missing
direction. The thresholds are chosen from the present values. A column without missing values
in training gets plain conditions (``missing_ == MISSING_NONE``): a missing value met later makes
them false in :meth:`Binarizer.transform`, and goes to the child with more training weight in
the learners' trees (:func:`tree_nodes`).
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
    as_2d_raw,
    validate_parameters,
)
from treelearn.data import _binning, _bitset, sketch
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.schema import ColumnSchema

NUMERIC = 0
CATEGORICAL = 1
#: kind of the feature "x_j is missing" (in a Tree: a numeric node ``x_j >= +inf`` that sends
#: missing values right, i.e. only the missing values go right)
IS_MISSING = 2

#: ``missing_`` of a binary feature: the column had no missing value in training / a missing
#: value makes the condition false / makes it true
MISSING_NONE = 0
MISSING_FALSE = 1
MISSING_TRUE = 2


def numeric_thresholds(col: np.ndarray, max_thresholds: int | None = None, *, distinct_quantiles: bool = False):
    """Thresholds t (ascending) for conditions ``x >= t`` on one numeric column (its missing
    values ignored): every midpoint between consecutive distinct values (a midpoint that rounds
    onto the upper value is that value) when there are at most ``max_thresholds`` (or it is
    None); else the midpoints just above the data quantiles ``s[(i n) // (m + 1)]``, i = 1..m, of
    the sorted values ``s`` (as histogram bins of about equal mass), or with
    ``distinct_quantiles`` those just below the i/(m+1) quantiles of the *distinct* values (003
    App. C). The midpoints and the data quantiles are computed by the compiled coding the greedy
    learner codes its features with (``core/coding.h``): one definition."""
    col = np.asarray(col)
    if not distinct_quantiles or max_thresholds is None:
        return _binning.column_thresholds(col, 0 if max_thresholds is None else int(max_thresholds))
    mids = _binning.column_thresholds(col, 0)
    if mids.size <= max_thresholds:
        return mids
    # 003 App. C / the Top-k code: the condition x >= q_i with q_i the (linearly interpolated)
    # i/(m+1) quantile of the *distinct* values, i = 1..m. On the training values that is
    # x >= u[pos_i] with pos_i the first distinct value >= q_i, i.e. x >= the midpoint below it.
    u = np.unique(col[~np.isnan(col)] if col.dtype.kind == "f" else col)
    q = np.quantile(u, np.arange(1, max_thresholds + 1) / (max_thresholds + 1))
    pos = np.unique(np.clip(np.searchsorted(u, q, side="left"), 1, u.size - 1))
    return mids[pos - 1]


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
    kind_ : (n_binary,) 0 for ``x >= threshold``, 1 for ``x == category`` (threshold = code),
        2 for ``x is missing`` (threshold +inf)
    threshold_ : (n_binary,) threshold or category code
    missing_ : (n_binary,) what a missing value makes the condition: 0 (MISSING_NONE, the
        column had none in training: false), 1 (MISSING_FALSE) or 2 (MISSING_TRUE); see the
        module docstring
    feature_names_out_ : readable names, e.g. ``age >= 30.5``, ``color == red``
    thresholds_ : how the numeric thresholds were chosen: ``"all"`` (every midpoint between
        consecutive distinct training values), ``"quantiles"`` (``max_thresholds``) or
        ``"distinct_quantiles"`` (``max_binary_features``)
    n_added_thresholds_ : thresholds added to those by ``extra_thresholds`` of :meth:`fit_encoded`
        (the estimators add their greedy tree's thresholds)
    binary_values_ : ``(0.0, 1.0)`` or ``(-1.0, 1.0)`` when fitted by :meth:`fit_binary_columns`
        (every column holds these two values, each feature's threshold lies between them), else
        None
    n_thresholds_ : (n_features_in_,) binary features per raw column
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
        as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        schema = ColumnSchema.infer(X, self.categorical)
        Xe = schema.encode(X)
        self.fit_encoded(Xe, schema)
        return self

    def fit_encoded(self, Xe: np.ndarray, schema: ColumnSchema, extra_thresholds: dict | None = None,
                    threshold_rows: np.ndarray | None = None):
        """Fit on an encoded matrix (``schema.encode(X)``) whose schema is known.

        ``extra_thresholds``: {numeric column: thresholds} added to the column's own (e.g. the
        node-local midpoints of a greedy tree, so that its splits are binary features: a
        condition ``x >= t`` on the training rows reproduces the greedy split's partition). With
        every midpoint (no budget) they are not needed: every threshold's partition is already
        there, and none is added. ``threshold_rows`` (a boolean mask or row indices): the
        numeric thresholds are chosen from these rows' values only (the learners' threshold
        sample above :data:`~treelearn.data.sketch.SKETCH_ROWS` rows, see :func:`binarize_sample`);
        which columns have missing values, and the categories, are always those of every row."""
        n_cols = schema.n_features
        has_missing = np.zeros(n_cols, dtype=bool)
        has_present = np.zeros(n_cols, dtype=bool)
        categories = {}
        sample = Xe if threshold_rows is None else Xe[threshold_rows]
        for j in range(n_cols):
            col = Xe[:, j]
            nan = np.isnan(col)
            has_missing[j] = bool(nan.any())
            has_present[j] = col.size > 0 and (not has_missing[j] or not bool(nan.all()))
            if schema.is_categorical(j):
                categories[j] = np.unique(col[~nan] if has_missing[j] else col)
        return self.fit_summary(schema, sample, has_missing, has_present, categories, extra_thresholds)

    def fit_summary(self, schema: ColumnSchema, sample: np.ndarray, has_missing, has_present, categories: dict,
                    extra_thresholds: dict | None = None):
        """The fit from what it needs of the rows, which row shards can compute and merge (issue
        14): ``sample``, the encoded rows whose present values choose the numeric thresholds;
        per column ``has_missing`` (some row is missing) and ``has_present`` (some row is not);
        ``categories``: {categorical column: its present category codes, ascending}. See
        :meth:`fit_encoded` for ``extra_thresholds``."""
        self.schema_ = schema
        self.n_features_in_ = schema.n_features
        if schema.feature_names is not None:
            self.feature_names_in_ = np.asarray(schema.feature_names, dtype=object)
        numeric = [j for j in range(schema.n_features) if not schema.is_categorical(j)]
        per_col, distinct = self.max_thresholds, False
        if self.max_binary_features is not None and numeric:
            per_col, distinct = max(1, self.max_binary_features // len(numeric)), True
        self.thresholds_ = "all" if per_col is None else ("distinct_quantiles" if distinct else "quantiles")
        extra = {} if per_col is None or not extra_thresholds else extra_thresholds
        n_added = 0
        feature, kind, threshold, missing = [], [], [], []
        for j in range(schema.n_features):
            has_nan = bool(has_missing[j])
            if schema.is_categorical(j):
                present = np.asarray(categories[j])
                present = present[present >= 0].astype(np.int64)
                if present.size == 2 and not getattr(self, "full_one_hot", False):
                    codes = present[1:]
                else:
                    # one present category and missing values: "x == v" is "not missing"
                    codes = present if present.size >= 2 else present[:0]
                k, values = CATEGORICAL, codes.astype(np.float64)
            else:
                col = sample[:, j]
                if has_nan:
                    col = col[~np.isnan(col)]
                ts = numeric_thresholds(col, per_col, distinct_quantiles=distinct)
                add = np.asarray(extra.get(j, ()), dtype=np.float64)
                if add.size:
                    add = np.setdiff1d(add[np.isfinite(add)], ts)
                    n_added += int(add.size)
                    ts = np.union1d(ts, add)
                k, values = NUMERIC, ts
            if not has_nan:
                feature += [j] * values.size
                kind += [k] * values.size
                threshold += values.tolist()
                missing += [MISSING_NONE] * values.size
                continue
            if not has_present[j]:  # every value missing: no split
                continue
            # both missing directions of every condition, then "is missing"
            for m in (MISSING_FALSE, MISSING_TRUE):
                feature += [j] * values.size
                kind += [k] * values.size
                threshold += values.tolist()
                missing += [m] * values.size
            feature.append(j)
            kind.append(IS_MISSING)
            threshold.append(np.inf)
            missing.append(MISSING_TRUE)
        self.feature_ = np.asarray(feature, dtype=np.int64)
        self.kind_ = np.asarray(kind, dtype=np.int8)
        self.threshold_ = np.asarray(threshold, dtype=np.float64)
        self.missing_ = np.asarray(missing, dtype=np.int8)
        self.n_added_thresholds_ = n_added
        self.binary_values_ = None
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
        self.missing_ = np.zeros(self.feature_.size, dtype=np.int8)
        self.thresholds_ = "all"  # the one threshold of a two-valued column is every threshold
        self.n_added_thresholds_ = 0
        self.binary_values_ = (2.0 * float(threshold) - 1.0, 1.0)  # (0, 1) or (-1, +1)
        self._feature_names_out = None
        return self

    @property
    def n_thresholds_(self) -> np.ndarray:
        """Number of binary features of each raw column (thresholds, or one-hot categories)."""
        return np.bincount(self.feature_, minlength=self.n_features_in_).astype(np.int64)

    def describe_space(self) -> str:
        """The binary feature space in words, e.g. ``"100 binary features: distinct_quantiles
        thresholds (+3 added), one-hot categories"``."""
        miss = self.missing_
        n_num = int(np.sum((self.kind_ == NUMERIC) & (miss != MISSING_TRUE)))
        n_cat = int(np.sum((self.kind_ == CATEGORICAL) & (miss != MISSING_TRUE)))
        n_miss = int(np.sum(self.kind_ == IS_MISSING))
        parts = [f"{self.n_binary_features_} binary features"]
        if n_num:
            added = getattr(self, "n_added_thresholds_", 0)
            parts.append(f"{n_num} numeric thresholds ({self.thresholds_}"
                         + (f", {added} added" if added else "") + ")")
        if n_cat:
            parts.append(f"{n_cat} one-hot categories")
        if n_miss:
            parts.append(f"both missing directions and 'is missing' on {n_miss} column(s) with missing values")
        return ", ".join(parts)

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
        if self.kind_[i] == IS_MISSING:
            return f"{name} is missing"
        if self.kind_[i] == CATEGORICAL:
            cond = f"{name} == {self.schema_.categories[j][int(self.threshold_[i])]}"
        else:
            cond = f"{name} >= {self.threshold_[i]:.{precision}g}"
        miss = self.__dict__.get("missing_")
        if miss is not None and miss[i] == MISSING_TRUE:
            return f"{cond} or {name} is missing"
        if miss is not None and miss[i] == MISSING_FALSE:
            return f"{cond} and {name} is not missing"
        return cond

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
        as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        Xe = self.schema_.encode(X)
        return self.transform_encoded(Xe)

    def transform_encoded(self, Xe: np.ndarray) -> np.ndarray:
        # one raw column at a time: memory n x n_binary uint8, no float copy of every feature
        out = np.empty((Xe.shape[0], self.feature_.size), dtype=np.uint8)
        if self.feature_.size == 0:
            return out
        miss = self.__dict__.get("missing_")
        if miss is None:  # a Binarizer fitted before missing values were supported
            miss = np.zeros(self.feature_.size, dtype=np.int8)
        order = np.argsort(self.feature_, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(self.feature_[order]) != 0])
        as_bool = out.view(bool)
        for a, b in zip(starts, np.r_[starts[1:], order.size]):
            idx = order[a:b]
            col = Xe[:, self.feature_[idx[0]]]
            nan = np.isnan(col)
            any_nan = bool(nan.any())
            kind = self.kind_[idx]
            thr = self.threshold_[idx]
            num = kind == NUMERIC
            block = idx[-1] - idx[0] == idx.size - 1 and np.all(np.diff(idx) == 1)  # the usual case
            if num.all():
                # x >= t_k  <=>  rank(t_k) < #{distinct thresholds <= x} (NaN: counted below)
                u = np.unique(thr)
                cnt = np.searchsorted(u, col, side="right")
                rank = np.searchsorted(u, thr, side="left")
                if block:
                    np.less(rank[None, :], cnt[:, None], out=as_bool[:, int(idx[0]):int(idx[-1]) + 1])
                else:
                    out[:, idx] = rank[None, :] < cnt[:, None]
            elif (kind == CATEGORICAL).all():
                if block:
                    np.equal(col[:, None], thr, out=as_bool[:, int(idx[0]):int(idx[-1]) + 1])
                else:
                    out[:, idx] = col[:, None] == thr
            else:
                if num.any():
                    out[:, idx[num]] = col[:, None] >= thr[num]
                cat = kind == CATEGORICAL
                if cat.any():
                    out[:, idx[cat]] = col[:, None] == thr[cat]
                ism = kind == IS_MISSING
                if ism.any():
                    out[:, idx[ism]] = nan[:, None]
            if any_nan:
                # a missing value: the feature's missing direction (false for a column that had none)
                out[np.ix_(np.flatnonzero(nan), idx)] = (miss[idx] == MISSING_TRUE)[None, :]
        return out

    def binary_data(self, X, y_codes, n_classes=None, sample_weight=None) -> BinaryData:
        """Transform X and pack it with the labels into a BinaryData."""
        return BinaryData(self.transform(X), y_codes, n_classes=n_classes, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []  # always 0/1 uint8
        return tags


def tree_splits(binz: Binarizer, f: np.ndarray):
    """A kernel's splits on binary features -> the Tree's split arrays on raw columns.

    ``f``: per node the binary feature it splits on (-1 at a leaf). Returns ``(feature,
    threshold, kind, missing_left)`` with ``missing_left`` per node 1 (a missing value goes left:
    the condition is false for it), 0 (goes right) or -1 (the feature's column had no missing
    value in training: the Tree's default, the child with more training weight) and -1 at a
    leaf. "x is missing" becomes the numeric split ``x >= +inf`` sending missing values right."""
    f = np.asarray(f, dtype=np.int64)
    internal = f >= 0
    fi = np.where(internal, f, 0)
    if binz.feature_.size == 0:
        fi = np.zeros(0, dtype=np.int64) if f.size == 0 else fi
        n = f.size
        return (np.full(n, -2, np.int64), np.full(n, -2.0), np.full(n, -1, np.int8), np.full(n, -1, np.int8))
    kind = binz.kind_[fi]
    miss = binz.__dict__.get("missing_")
    miss = np.zeros(binz.feature_.size, np.int8)[fi] if miss is None else miss[fi]
    feature = np.where(internal, binz.feature_[fi], -2)
    threshold = np.where(internal, binz.threshold_[fi], -2.0)
    tkind = np.where(internal, np.where(kind == IS_MISSING, NUMERIC, kind), -1).astype(np.int8)
    left = np.where(miss == MISSING_FALSE, 1, np.where(miss == MISSING_TRUE, 0, -1))
    left = np.where(internal, left, -1).astype(np.int8)
    return feature, threshold, tkind, left


def threshold_sample_rows(n: int, binz: Binarizer):
    """The rows whose values choose a budgeted Binarizer's numeric thresholds in a learner's fit:
    above :data:`~treelearn.data.sketch.SKETCH_ROWS` rows, the fixed index-hashed sample
    of :func:`~treelearn.data.sketch.sketch_mask` (as the greedy learner's histogram thresholds),
    so that row shards find the same thresholds from their offsets alone; else (or with every
    threshold asked for) every row (None)."""
    if (binz.max_thresholds is None and binz.max_binary_features is None) or n <= sketch.SKETCH_ROWS:
        return None
    return sketch.sketch_mask(0, n, n)


def binarize_sample(X, schema: ColumnSchema, y_codes, n_classes: int, sample_weight=None, *, max_thresholds=None,
                    max_binary_features=None, signed: bool = False, Xe=None,
                    extra_thresholds: dict | None = None, clock=None,
                    max_bytes=None, copies: int = 1) -> tuple[Binarizer, BinaryData]:
    """The one path from a learner's input to a :class:`BinaryData`: ``(binarizer, data)``.

    ``X`` is the raw matrix; ``Xe`` its encoding ``schema.encode(X)`` when the caller has it. When
    every column is numeric and every value is 0 or 1 (or, with ``signed``, every value is -1 or
    +1), the columns are packed straight into bits (one compiled pass in X's own dtype, no float
    copy; a bool or uint8 matrix costs n·d/8 bytes) and each non-constant column is one feature
    ``x >= 0.5`` (``x >= 0``): the features the Binarizer's exact encoding gives such data, in the
    same order. Any other X is
    encoded and binarized by ``Binarizer(max_thresholds, max_binary_features)`` (with
    ``extra_thresholds``, see :meth:`Binarizer.fit_encoded`), in blocks of rows
    packed as they are made (the 0/1 bytes of all rows never exist at once). Weights of 1
    everywhere give unweighted (integer) counts. Above
    :data:`~treelearn.data.sketch.SKETCH_ROWS` rows a budgeted Binarizer chooses its numeric
    thresholds from the fixed threshold sample (:func:`threshold_sample_rows`), so that a fit on
    Dask row shards binarizes exactly as this one.

    Limits: ``clock`` (a :class:`treelearn._limits.FitClock`) is checked between
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
    binz.fit_encoded(Xe, schema, extra_thresholds, threshold_rows=threshold_sample_rows(n, binz))
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
