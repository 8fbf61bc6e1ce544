"""Hypothesis strategies of the fuzz suite: datasets (shapes, dtypes, values, labels, weights) and
estimator parameters, valid and hostile."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

ESTIMATORS = ("GreedyTreeClassifier", "TopKTreeClassifier", "OptimalTreeClassifier", "MinRankTreeClassifier",
              "PrunedTreeClassifier", "QueryTreeClassifier")
#: learners with an exponential search: always fuzzed with a time limit
LIMITS = {"TopKTreeClassifier": dict(time_limit=5.0, memory_limit_mb=64),
          "OptimalTreeClassifier": dict(time_limit=5.0, memory_limit_mb=64),
          "MinRankTreeClassifier": dict(time_limit=5.0, memory_limit_mb=64),
          "QueryTreeClassifier": dict(time_limit=5.0, max_memory_mb=64)}

CRITERIA = st.sampled_from(["entropy", "gini", "kearns_mansour"])


def valid_params(name: str):
    """Parameters in each learner's documented ranges (small, so fits stay fast)."""
    opt_int = lambda lo, hi: st.one_of(st.none(), st.integers(lo, hi))  # noqa: E731
    if name == "GreedyTreeClassifier":
        return st.fixed_dictionaries({
            "criterion": CRITERIA, "max_depth": opt_int(0, 5), "max_leaves": opt_int(1, 8),
            "min_samples_leaf": st.one_of(st.integers(1, 3), st.floats(0.01, 0.49)),
            "min_impurity_decrease": st.sampled_from([0.0, 0.0, 0.01, 0.2]),
            "max_thresholds": opt_int(1, 8)})
    if name == "TopKTreeClassifier":
        return st.fixed_dictionaries({
            "k": st.one_of(st.integers(1, 3), st.just("all")), "max_depth": st.integers(0, 3),
            "criterion": CRITERIA, "scoring": st.sampled_from(["gain", "gain_ratio"]),
            "max_thresholds": opt_int(1, 8), "max_binary_features": st.one_of(st.none(), st.integers(1, 24)),
            "n_jobs": st.sampled_from([None, 1, 2])}).map(lambda p: {**p, **LIMITS[name]})
    if name == "OptimalTreeClassifier":
        return st.fixed_dictionaries({
            "max_depth": st.integers(0, 3), "max_thresholds": opt_int(1, 8),
            "max_binary_features": st.one_of(st.none(), st.integers(1, 24)),
            "n_jobs": st.sampled_from([None, 1, 2])}).map(lambda p: {**p, **LIMITS[name]})
    if name == "MinRankTreeClassifier":
        return st.fixed_dictionaries({"max_rank": opt_int(0, 4)}).map(lambda p: {**p, **LIMITS[name]})
    if name == "PrunedTreeClassifier":
        return st.fixed_dictionaries({
            "pruning": st.sampled_from(["bound", "ccp", "mcart", None]), "criterion": CRITERIA,
            "max_leaves": opt_int(1, 12), "cv": st.integers(2, 3), "max_depth": opt_int(0, 6),
            "random_state": st.integers(0, 3)})
    if name == "QueryTreeClassifier":
        return st.fixed_dictionaries({
            "size": st.integers(1, 6), "epsilon": st.sampled_from([0.1, 0.25, 0.5]),
            "random_state": st.integers(0, 3)}).map(lambda p: {**p, **LIMITS[name]})
    raise KeyError(name)


#: values that no parameter should accept silently or crash on
HOSTILE_VALUES = st.one_of(
    st.sampled_from([None, -1, 0, 1, 2**31, 2**63, -(2**63), 2**64, 10**400, 1.5, -0.0, float("nan"),
                     float("inf"), -float("inf"), 1e308, True, False, "x", "", "all", "auto", [], [1], {},
                     (1, 2), object(), b"1", np.int64(3), np.float32(0.5), np.nan]),
    st.integers(), st.floats(), st.text(max_size=5))


def hostile_params(name: str):
    """One parameter of ``name`` set to a hostile value (the others valid)."""
    import treelearn  # (the lazy facade: a name's module loads on first attribute access)

    keys = sorted(getattr(treelearn, name)().get_params())
    return st.tuples(valid_params(name), st.sampled_from(keys), HOSTILE_VALUES).map(
        lambda t: {**t[0], t[1]: t[2], **({} if t[1] in ("time_limit",) else
                                          {k: v for k, v in LIMITS.get(name, {}).items() if k != t[1]})})


# ---------------------------------------------------------------------------------- data
NUMERIC_DTYPES = ["<f8", "<f4", ">f8", ">f4", "<i8", ">i8", "<i4", "|u1", "<u8", ">u2", "|b1", "|i1"]


def _column_values(kind: str):
    if kind == "small":
        return st.integers(-3, 3)
    if kind == "binary":
        return st.integers(0, 1)
    if kind == "float":
        return st.floats(allow_nan=False, allow_infinity=False, width=64)
    if kind == "extreme":
        return st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e308, -1e308, 1.7976931348623157e308,
                                2.0**53, 2.0**53 + 2, 1.0, 0.5])
    if kind == "bigint":
        return st.sampled_from([2**53, 2**53 + 1, 2**62, 2**63 - 1, -(2**63), 2**53 - 1, 3])
    raise KeyError(kind)


@st.composite
def numeric_matrix(draw, max_rows=30, max_cols=4, binary=False):
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_cols))
    kind = "binary" if binary else draw(st.sampled_from(["small", "small", "binary", "float", "extreme", "bigint"]))
    vals = draw(st.lists(_column_values(kind), min_size=n * d, max_size=n * d))
    if binary:
        dtype = draw(st.sampled_from(["<f8", ">f8", "<i8", ">i4", "|u1", "|b1", "<f4"]))
    elif kind == "bigint":
        dtype = draw(st.sampled_from(["<i8", ">i8", "object"]))
    elif kind in ("float", "extreme"):
        dtype = draw(st.sampled_from(["<f8", ">f8", "object"]))
    else:
        dtype = draw(st.sampled_from(NUMERIC_DTYPES + ["object"]))
    if dtype == "object":
        X = np.empty((n, d), dtype=object)
        X[:] = np.array(vals, dtype=object).reshape(n, d)
        return X
    with np.errstate(all="ignore"):
        arr = np.array(vals, dtype=np.float64 if kind in ("float", "extreme") else object).reshape(n, d)
        try:
            return arr.astype(np.dtype(dtype))
        except (OverflowError, ValueError):
            return arr.astype(np.float64)


@st.composite
def object_matrix(draw, max_rows=30, max_cols=3):
    """Mixed object columns: strings (categorical), Python ints of up to 400 digits, floats, None."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_cols))
    cell = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", "c", ""]), st.just(10**400),
                     st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.none(), st.booleans())
    col_kinds = draw(st.lists(st.sampled_from(["int", "str", "mixed", "huge"]), min_size=d, max_size=d))
    X = np.empty((n, d), dtype=object)
    for j, k in enumerate(col_kinds):
        s = {"int": st.integers(-3, 3), "str": st.sampled_from(["a", "b", "c"]), "mixed": cell,
             "huge": st.sampled_from([10**400, -(10**400), 1, 2**64, 2**53 + 1])}[k]
        X[:, j] = draw(st.lists(s, min_size=n, max_size=n))
    return X


def labels(n: int):
    """Label arrays of length n: ints, uint64 >= 2**63, strings, bools, floats, one class, many."""
    def arr(dtype):
        return lambda v: np.array(v, dtype=dtype)
    return st.one_of(
        st.lists(st.integers(0, 1), min_size=n, max_size=n).map(arr(np.int64)),
        st.lists(st.integers(-2, 2), min_size=n, max_size=n).map(arr(">i8")),
        st.lists(st.sampled_from([2**63, 2**64 - 1, 3]), min_size=n, max_size=n).map(arr(np.uint64)),
        st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=n, max_size=n).map(arr(object)),
        st.lists(st.sampled_from(["yes", "no"]), min_size=n, max_size=n).map(arr("<U3")),
        st.lists(st.booleans(), min_size=n, max_size=n).map(arr(bool)),
        st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n).map(arr(np.float64)),
        st.lists(st.integers(0, 9), min_size=n, max_size=n).map(arr(np.int32)),
        st.just(np.zeros(n, dtype=np.int64)),  # one class
    )


def weights(n: int):
    """None, or weights: positive, some zero, scaled by 2**+-600, or hostile (negative, NaN, all 0)."""
    pos = st.lists(st.floats(0.01, 100.0), min_size=n, max_size=n).map(np.array)
    return st.one_of(
        st.none(),
        pos,
        st.tuples(pos, st.sampled_from([2.0**-600, 2.0**600, 2.0**-1000, 2.0**1000, 3.0, 1e-300])).map(
            lambda t: t[0] * t[1]),
        st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n).map(np.array),
        st.lists(st.sampled_from([0.0, -1.0, 1.0, float("nan"), float("inf")]), min_size=n, max_size=n).map(
            np.array),
        st.just(np.zeros(n)),
        st.just(np.full(n, 1e308)),
    )


@st.composite
def dataset(draw, binary=False, objects=True):
    X = draw(numeric_matrix(binary=binary) if (binary or not objects) else
             st.one_of(numeric_matrix(), numeric_matrix(), object_matrix()))
    n = X.shape[0]
    y = draw(labels(n))
    w = draw(weights(n))
    return X, y, w
