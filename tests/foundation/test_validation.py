"""Input validation: property tests over random shapes, NaN/inf positions, label types and weights;
every bad input gives a TreeLearnValueError naming the problem."""
from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from treelearn import ColumnSchema, TreeLearnValueError
from treelearn._validation import (
    as_2d_raw,
    check_finite,
    reject_missing,
    check_float_param,
    check_int_param,
    check_sample_weight,
    check_target,
)


# ---------------------------------------------------------------------- shapes
@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
@settings(max_examples=120, deadline=None, derandomize=True)
def test_shapes(shape):
    X = np.zeros(shape)
    if len(shape) != 2:
        with pytest.raises(TreeLearnValueError, match=f"must be 2-D.*got {len(shape)}-D"):
            as_2d_raw(X)
        if len(shape) == 1:
            with pytest.raises(TreeLearnValueError, match="Reshape your data"):
                as_2d_raw(X)
    elif shape[0] == 0:
        with pytest.raises(TreeLearnValueError, match=r"0 sample\(s\)"):
            as_2d_raw(X)
    elif shape[1] == 0:
        with pytest.raises(TreeLearnValueError, match=r"0 feature\(s\)"):
            as_2d_raw(X)
    else:
        assert as_2d_raw(X).shape == shape


@given(st.integers(1, 8), st.integers(1, 6), st.data())
@settings(max_examples=120, deadline=None, derandomize=True)
def test_nan_inf_position_is_named(n, d, data):
    X = data.draw(hnp.arrays(np.float64, (n, d), elements=st.floats(-1e6, 1e6)))
    r, c = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, d - 1))
    bad = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    X[r, c] = bad
    if np.isnan(bad):  # a missing value: accepted, kept as NaN; named where it is not allowed
        check_finite(X)
        assert np.isnan(ColumnSchema(categories=[None] * d).encode(X)[r, c])
        with pytest.raises(TreeLearnValueError, match=f"NaN.*row {r}, column {c}"):
            check_finite(X, allow_nan=False)
        with pytest.raises(TreeLearnValueError, match=f"missing values.*row {r}, column {c}.*MyLearner"):
            reject_missing(X, "MyLearner")
    else:
        with pytest.raises(TreeLearnValueError, match=f"infinity.*row {r}, column {c}"):
            check_finite(X)
        # the same through the schema (what every estimator and the Binarizer use)
        with pytest.raises(TreeLearnValueError, match="infinity"):
            ColumnSchema(categories=[None] * d).encode(X)
    X[r, c] = 0.0
    check_finite(X)
    reject_missing(X, "MyLearner")


def test_other_bad_X():
    with pytest.raises(TreeLearnValueError, match="None"):
        as_2d_raw(None)
    with pytest.raises(TreeLearnValueError, match="1-D Series"):
        as_2d_raw(pd.Series([1, 2]))
    with pytest.raises(TreeLearnValueError, match="could not be read|2-D"):
        as_2d_raw([[1, 2], [3]])
    with pytest.raises(TreeLearnValueError, match="Complex data not supported"):
        as_2d_raw(np.array([[1 + 2j]]))
    with pytest.raises(TreeLearnValueError, match="Complex data not supported"):
        as_2d_raw(pd.DataFrame({"c": [1 + 1j, 2j]}))
    with pytest.raises(TreeLearnValueError, match="unsupported dtype"):
        as_2d_raw(np.array([[np.datetime64("2020-01-01")]]))
    with pytest.raises(TreeLearnValueError, match="column 'when' has unsupported dtype"):
        as_2d_raw(pd.DataFrame({"when": pd.to_datetime(["2020-01-01"]), "x": [1.0]}))
    from scipy.sparse import csr_matrix

    with pytest.raises(TreeLearnValueError, match="sparse"):
        as_2d_raw(csr_matrix(np.eye(2)))
    from treelearn._validation import TreeLearnTypeError

    with pytest.raises(TreeLearnTypeError, match="unsupported type list at row 1: argument must be a string or a number"):
        ColumnSchema.infer(np.array([["a", None], [[1], None]], dtype=object)[:, :1])
    obj = np.empty((2, 1), dtype=object)
    obj[:, 0] = [1.0, 2j]
    with pytest.raises(TreeLearnValueError, match="complex value at row 1"):
        ColumnSchema.infer(obj)


def test_missing_values_are_kept_as_nan():
    """None, NaN and pd.NA are missing values in every kind of column: no category, NaN when
    encoded, and they do not make a numeric column categorical."""
    df = pd.DataFrame({"age": [1.0, None, 3.0], "c": ["a", "b", "a"]})
    Xe = ColumnSchema.infer(df).encode(df)
    assert np.isnan(Xe[1, 0]) and not np.isnan(Xe[:, 1]).any()
    df = pd.DataFrame({"age": [1.0, 2.0, 3.0], "color": pd.Categorical(["a", None, "a"])})
    sch = ColumnSchema.infer(df)
    assert list(sch.categories[1]) == ["a"]
    assert np.array_equal(np.isnan(sch.encode(df)[:, 1]), [False, True, False])
    df = pd.DataFrame({"color": pd.array(["a", pd.NA, "b"], dtype="string")})
    sch = ColumnSchema.infer(df)
    assert list(sch.categories[0]) == ["a", "b"]
    assert np.isnan(sch.encode(df)[1, 0]) and sch.encode(df)[2, 0] == 1
    obj = np.array([["a"], [None]], dtype=object)
    assert list(ColumnSchema.infer(obj).categories[0]) == ["a"]
    nums = np.array([[1.5], [None], [pd.NA], [np.nan], [2]], dtype=object)
    sch = ColumnSchema.infer(nums)
    assert sch.all_numeric  # missing cells do not make a numeric column categorical
    assert np.array_equal(np.isnan(sch.encode(nums)[:, 0]), [False, True, True, True, False])
    with pytest.raises(TreeLearnValueError, match="infinity"):
        sch.encode(np.array([[np.inf]], dtype=object))


def test_pandas_names_and_kinds():
    df = pd.DataFrame({"n": [1.0, 2.0], "i": [1, 2], "s": ["x", "y"], "b": [True, False],
                       "k": pd.Categorical(["u", "v"])})
    sch = ColumnSchema.infer(df)
    assert sch.feature_names == ["n", "i", "s", "b", "k"]
    assert [sch.is_categorical(j) for j in range(5)] == [False, False, True, True, True]
    Xe = sch.encode(df)
    assert Xe.dtype == np.float64 and Xe[:, 2].tolist() == [0, 1] and Xe[:, 4].tolist() == [0, 1]
    # categorical given by name keeps integer categories as integers
    sch = ColumnSchema.infer(pd.DataFrame({"a": [10, 20, 10]}), categorical=["a"])
    assert sch.categories[0].tolist() == [10, 20]
    assert ColumnSchema.infer(pd.DataFrame({"a": [10, 20, 10]}), categorical=["a"]).encode(
        np.array([[20.0], [30.0]])).ravel().tolist() == [1, -1]


# ---------------------------------------------------------------------- labels
LABELS = st.one_of(
    st.lists(st.integers(-5, 5), min_size=1, max_size=30),
    st.lists(st.text(max_size=3), min_size=1, max_size=30),
    st.lists(st.integers(-10, 10).map(float), min_size=1, max_size=30),  # integral floats (1.0, 2.0) are labels
    st.lists(st.booleans(), min_size=1, max_size=30),
    st.lists(st.one_of(st.integers(0, 3), st.text(max_size=2)), min_size=1, max_size=30),
)


@given(LABELS, st.sampled_from(["list", "array", "series", "frame"]))
@settings(max_examples=80, deadline=None, derandomize=True)
def test_labels_of_any_hashable_type(labels, container):
    y = {"list": labels, "array": np.asarray(labels, dtype=object), "series": pd.Series(labels, dtype=object),
         "frame": pd.DataFrame({"t": pd.Series(labels, dtype=object)})}[container]
    classes, codes = check_target(y, len(labels))
    assert codes.dtype == np.int64 and codes.shape == (len(labels),)
    assert len(classes) == len(set(labels))
    assert [classes[c] for c in codes] == labels
    assert codes.min() == 0 and codes.max() == len(classes) - 1
    # deterministic, and sorted whenever the labels are mutually comparable
    c2, k2 = check_target(list(labels), len(labels))
    assert list(c2) == list(classes) and np.array_equal(k2, codes)
    try:
        expect = sorted(set(labels))
    except TypeError:
        return
    assert list(classes) == expect


@given(st.integers(1, 20), st.integers(0, 25))
@settings(derandomize=True)
def test_label_length_mismatch(n, m):
    assume(n != m)
    with pytest.raises(TreeLearnValueError, match=f"X has {n}, y has {m}"):
        check_target(np.zeros(m), n)


def test_bad_labels():
    with pytest.raises(TreeLearnValueError, match="requires y to be passed, but the target y is None"):
        check_target(None, 2)
    with pytest.raises(TreeLearnValueError, match="NaN"):
        check_target([1.0, np.nan], 2)
    with pytest.raises(TreeLearnValueError, match="missing"):
        check_target(["a", None], 2)
    with pytest.raises(TreeLearnValueError, match="missing"):
        check_target(pd.Series(["a", pd.NA]), 2)
    with pytest.raises(TreeLearnValueError, match="must be 1-D"):
        check_target(np.zeros((3, 2)), 3)
    with pytest.raises(TreeLearnValueError, match="DataFrame with 2 columns"):
        check_target(pd.DataFrame({"a": [1, 2], "b": [1, 2]}), 2)
    with pytest.raises(TreeLearnValueError, match="unsupported dtype complex"):
        check_target(np.array([1j, 2j]), 2)
    with pytest.raises(TreeLearnValueError, match="unhashable type list"):
        y = np.empty(2, dtype=object)
        y[:] = [[1], [2]]
        check_target(y, 2)
    with pytest.raises(TreeLearnValueError, match="Unknown label type: continuous"):
        check_target(np.array([0.5, 1.0]), 2)
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning, match="column-vector y"):
        classes, codes = check_target(np.array([[1], [0], [1]]), 3)  # a column vector is accepted
    assert classes.tolist() == [0, 1] and codes.tolist() == [1, 0, 1]
    classes, codes = check_target([("a", 1), ("b", 2), ("a", 1)], 3)  # tuple labels stay tuples
    assert classes.tolist() == [("a", 1), ("b", 2)] and codes.tolist() == [0, 1, 0]
    classes, codes = check_target([("a", 1), ("b",), ("a", 1)], 3)
    assert len(classes) == 2 and codes.tolist() == [0, 1, 0]
    with pytest.raises(TreeLearnValueError, match="unhashable type list"):
        check_target([[1, 2], [3]], 2)
    classes, codes = check_target(["a\x00", "a"], 2)  # NumPy strings would drop the trailing NUL
    assert classes.tolist() == ["a", "a\x00"] and codes.tolist() == [1, 0]
    dates = [datetime.date(2020, 1, 2), datetime.date(2020, 1, 1)]
    classes, codes = check_target(np.array(dates, dtype=object), 2)
    assert codes.tolist() == [1, 0]


# ---------------------------------------------------------------------- weights
@given(st.integers(1, 30), st.data())
@settings(max_examples=120, deadline=None, derandomize=True)
def test_sample_weight(n, data):
    w = data.draw(hnp.arrays(np.float64, n, elements=st.floats(0, 100)))
    if w.sum() > 0:
        out = check_sample_weight(w, n)
        assert out.dtype == np.float64 and np.array_equal(out, w) and out.flags.c_contiguous
        out = check_sample_weight(list(w), n)
        assert np.array_equal(out, w)
    else:
        with pytest.raises(TreeLearnValueError, match="sums to 0"):
            check_sample_weight(w, n)
    pos = data.draw(st.integers(0, n - 1))
    bad = w.copy()
    bad[pos] = data.draw(st.sampled_from([-1.0, np.nan, np.inf]))
    with pytest.raises(TreeLearnValueError, match="negative|NaN or infinite"):
        check_sample_weight(bad, n)
    with pytest.raises(TreeLearnValueError, match=f"expected \\({n + 1},\\)"):
        check_sample_weight(np.ones(n), n + 1)
    assert np.array_equal(check_sample_weight(None, n), np.ones(n))
    assert np.array_equal(check_sample_weight(2.5, n), np.full(n, 2.5))


def test_bad_weights():
    with pytest.raises(TreeLearnValueError, match="numeric"):
        check_sample_weight(["a", "b"], 2)
    with pytest.raises(TreeLearnValueError, match="1-D"):
        check_sample_weight(np.ones((2, 1)), 2)


# ---------------------------------------------------------------------- parameters
def test_int_and_float_params():
    assert check_int_param("k", 3, low=1) == 3 and check_int_param("k", np.int64(3)) == 3
    assert check_int_param("k", None, allow_none=True) is None
    for bad, match in [(None, "got None"), (True, "integer"), (2.0, "integer"), ("3", "integer"), (0, ">= 1"),
                       (11, "<= 10")]:
        with pytest.raises(TreeLearnValueError, match=match):
            check_int_param("k", bad, low=1, high=10)
    assert check_float_param("a", 0.5, low=0, high=1) == 0.5
    for bad, kw, match in [(np.nan, {}, "finite"), (np.inf, {}, "finite"), ("x", {}, "finite"), (True, {}, "finite"),
                           (0.0, dict(low=0, low_open=True), "> 0"), (1.0, dict(high=1, high_open=True), "< 1"),
                           (-1.0, dict(low=0), ">= 0"), (None, {}, "got None")]:
        with pytest.raises(TreeLearnValueError, match=match):
            check_float_param("a", bad, **kw)
    assert check_float_param("a", None, allow_none=True) is None


def test_errors_are_value_errors():
    assert issubclass(TreeLearnValueError, ValueError)


@given(st.integers(0, 3000), st.integers(1, 6), st.sampled_from([np.float32, np.float64]),
       st.sampled_from(["C", "F", "rows", "reversed", "strided"]), st.integers(0, 6), st.integers(0, 2**32))
@settings(max_examples=150, deadline=None, derandomize=True)
def test_float_flags_equal_numpy(n, d, dtype, layout, n_bad, seed):
    """The compiled per-column NaN/infinity scan (the fit's input check) equals NumPy's on every
    layout the fit may be given, with bad values anywhere (the blocks' edges included)."""
    from treelearn._scan import float_flags

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    for _ in range(n_bad if n else 0):
        X[rng.integers(n), rng.integers(d)] = rng.choice([np.nan, np.inf, -np.inf])
    view = {"C": X, "F": np.asfortranarray(X), "rows": X[::3], "reversed": X[::-1, ::-1],
            "strided": X[:, ::2]}[layout]
    nan, inf = float_flags(view)
    np.testing.assert_array_equal(nan, np.isnan(view).any(axis=0))
    np.testing.assert_array_equal(inf, np.isinf(view).any(axis=0))


def test_float_flags_refuses_other_dtypes():
    from treelearn._scan import float_flags

    with pytest.raises(TypeError, match="float32/float64"):
        float_flags(np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="float32/float64"):
        float_flags(np.zeros(3))


@given(dtype=st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                              np.bool_]),
       values=st.lists(st.integers(0, 120), min_size=1, max_size=40), shift=st.sampled_from([0, 1, 7]))
@settings(max_examples=150, deadline=None)
def test_integer_labels_match_unique(dtype, values, shift):
    # the counting fast paths (labels 0..K-1 as their own codes, gaps through a lookup, any
    # offset) give np.unique's classes and inverse, and never hand back the caller's array
    y = (np.asarray(values) + shift).astype(dtype) if dtype is not np.bool_ else np.asarray(values) % 2 == 1
    classes, codes = check_target(y, y.size)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, ref_classes)
    assert classes.dtype == y.dtype
    np.testing.assert_array_equal(codes, ref_codes.ravel())
    assert codes.dtype == np.int64 and not np.shares_memory(codes, y)
