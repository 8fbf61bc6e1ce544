"""Input hardening (issue 12): huge numbers, unsigned labels, big-endian arrays, integers above
2**53, weight scaling and one-class fits, for every estimator."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treelearn import (
    GreedyTreeClassifier,
    MinRankTreeClassifier,
    OptimalTreeClassifier,
    PrunedTreeClassifier,
    QueryTreeClassifier,
    TopKTreeClassifier,
    TreeLearnValueError,
)
from treelearn._validation import check_sample_weight, check_target

ALL = [
    lambda: GreedyTreeClassifier(max_depth=3),
    lambda: GreedyTreeClassifier(max_leaves=4, criterion="kearns_mansour"),
    lambda: TopKTreeClassifier(k=2, max_depth=2),
    lambda: OptimalTreeClassifier(max_depth=2),
    lambda: MinRankTreeClassifier(),
    lambda: PrunedTreeClassifier(pruning="bound"),
    lambda: PrunedTreeClassifier(pruning="ccp", cv=2, random_state=0),
]
# (the query learner ignores sample weights and stores its own leaf values: weight tests skip it)
IDS = ["greedy", "greedy-km-best-first", "topk", "optimal", "minrank", "pruned-bound", "pruned-ccp"]
BINARY = ALL + [lambda: QueryTreeClassifier(size=4, random_state=0)]
BINARY_IDS = IDS + ["query"]


def _binary_data(n=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((X[:, 0] == 1) & (X[:, 1] == 1)) | (X[:, 2] == 1)
    return X, y.astype(int)


def _structure(est):
    t = est.tree_
    return (t.children_left.tolist(), t.children_right.tolist(), t.feature.tolist(), t.threshold.tolist())


# ---------------------------------------------------------------------------------- big numbers
@pytest.mark.parametrize("make", ALL, ids=IDS)
def test_400_digit_integer_in_X_is_a_named_error(make):
    X = np.empty((6, 2), dtype=object)
    X[:, 0] = [1, 2, 3, 10**400, 5, 6]
    X[:, 1] = [0, 1, 0, 1, 0, 1]
    with pytest.raises(TreeLearnValueError, match=r"column x0 has an integer of 401 digits at row 3"):
        make().fit(X, [0, 1, 0, 1, 0, 1])


def test_400_digit_integer_at_predict_time_is_a_named_error():
    X, y = _binary_data()
    est = GreedyTreeClassifier().fit(X, y)
    Xt = X[:3].astype(object)
    Xt[1, 2] = -(10**400)
    with pytest.raises(TreeLearnValueError, match="too large for a float64"):
        est.predict(Xt)


@pytest.mark.parametrize("make", ALL, ids=IDS)
def test_integers_above_2_53_are_exact_or_a_named_error(make):
    big = 2**53
    # distinct integers that float64 would merge: refused, naming both
    X = np.array([[big], [big + 1], [big], [big + 1]] * 3, dtype=np.int64)
    y = np.array([0, 1, 0, 1] * 3)
    with pytest.raises(TreeLearnValueError, match=r"9007199254740992 and 9007199254740993.*equal as float64"):
        make().fit(X, y)
    with pytest.raises(TreeLearnValueError, match="equal as float64"):  # a DataFrame's int64 column
        make().fit(pd.DataFrame({"a": X[:, 0]}), y)
    with pytest.raises(TreeLearnValueError, match="equal as float64"):  # pandas' nullable Int64, mixed frame
        make().fit(pd.DataFrame({"a": pd.array(X[:, 0], dtype="Int64"), "b": X[:, 0] % 2 == 0}), y)
    with pytest.raises(TreeLearnValueError, match="equal as float64"):  # Python ints in an object array
        make().fit(X.astype(object), y)
    with pytest.raises(TreeLearnValueError, match="equal as float64"):  # uint64
        make().fit((X.astype(np.uint64) + np.uint64(2**62)), y)
    # integers above 2**53 that stay distinct as float64 are used exactly
    X = np.array([[2**60], [2**61], [2**60], [2**61]] * 3, dtype=np.int64)
    est = make().fit(X, y)
    assert np.array_equal(est.predict(X), y)


# ---------------------------------------------------------------------------------- labels, byte order
@pytest.mark.parametrize("make", ALL, ids=IDS)
def test_uint64_labels_above_2_63(make):
    X, y = _binary_data()
    labels = np.where(y == 1, np.uint64(2**64 - 1), np.uint64(2**63)).astype(np.uint64)
    est = make().fit(X, labels)
    assert est.classes_.dtype == np.uint64 and est.classes_.tolist() == [2**63, 2**64 - 1]
    ref = make().fit(X, y)
    assert np.array_equal(est.predict(X), np.where(ref.predict(X) == 1, labels.max(), labels.min()))


def test_check_target_unsigned_and_big_endian():
    classes, codes = check_target(np.array([2**63 + 7, 5, 2**63 + 7], dtype=np.uint64), 3)
    assert classes.tolist() == [5, 2**63 + 7] and codes.tolist() == [1, 0, 1]
    classes, codes = check_target(np.array([2**64 - 1, 2**64 - 3], dtype=np.uint64), 2)  # small range
    assert classes.dtype == np.uint64 and classes.tolist() == [2**64 - 3, 2**64 - 1] and codes.tolist() == [1, 0]
    classes, codes = check_target(np.array([-128, 127, 0], dtype=np.int8), 3)  # int8 range end to end
    assert classes.tolist() == [-128, 0, 127] and codes.tolist() == [0, 2, 1]
    classes, codes = check_target(np.array([3, 1, 3], dtype=">i8"), 3)
    assert classes.tolist() == [1, 3] and codes.tolist() == [1, 0, 1] and classes.dtype.isnative


@pytest.mark.parametrize("make", BINARY, ids=BINARY_IDS)
@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i8", ">i4", ">u2"])
def test_big_endian_input_gives_the_native_tree(make, dtype):
    X, y = _binary_data()
    ref = make().fit(X, y)
    est = make().fit(X.astype(dtype), y.astype(">i8"), sample_weight=np.ones(len(y), dtype=">f8"))
    assert _structure(est) == _structure(ref)
    assert np.array_equal(est.predict(X.astype(dtype)), ref.predict(X))
    assert np.array_equal(est.predict_proba(X.astype(dtype)), ref.predict_proba(X))


# ---------------------------------------------------------------------------------- weights
@pytest.mark.parametrize("make", ALL, ids=IDS)
@pytest.mark.parametrize("k", [-600, -200, 1, 200, 600])
def test_trees_invariant_to_scaling_all_weights(make, k):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = ((X[:, 0] + rng.integers(0, 2, 60)) > 2).astype(int)
    y[X[:, 1] == 3] = 2
    if make is ALL[4]:  # the min-rank tree needs a consistent sample
        _, inv = np.unique(X, axis=0, return_inverse=True)
        y = y[np.array([np.flatnonzero(inv.ravel() == g)[0] for g in inv.ravel()])]
    w = rng.integers(1, 5, 60).astype(float)
    ref = make().fit(X, y, sample_weight=w)
    est = make().fit(X, y, sample_weight=w * 2.0**k)
    assert _structure(est) == _structure(ref)
    np.testing.assert_array_equal(est.tree_.value, ref.tree_.value * 2.0**k)  # counts in the caller's units
    assert np.array_equal(est.predict_proba(X), ref.predict_proba(X))
    for name in ("training_error_", "lower_bound_"):
        if getattr(ref, name, None) is not None:
            assert getattr(est, name) == getattr(ref, name) * 2.0**k


@pytest.mark.parametrize("make", ALL, ids=IDS)
def test_uniform_weights_give_the_unweighted_tree(make):
    X, y = _binary_data(seed=4)
    ref = make().fit(X, y)
    for c in (1e-300, 0.3, 7.0, 1e300):
        est = make().fit(X, y, sample_weight=np.full(len(y), c))
        assert _structure(est) == _structure(ref)
        np.testing.assert_allclose(est.tree_.value, ref.tree_.value * c, rtol=1e-12)


def test_kearns_mansour_best_first_keeps_its_tree_under_tiny_weights():
    # the case of the issue: a best-first Kearns-Mansour tree collapsed to one leaf at 2**-600
    X, y = _binary_data(n=200, d=6, seed=5)
    w = np.random.default_rng(5).uniform(0.5, 2.0, 200)
    ref = GreedyTreeClassifier(max_leaves=6, criterion="kearns_mansour").fit(X, y, sample_weight=w)
    assert ref.get_n_leaves() > 1
    for k in (-600, 600):
        est = GreedyTreeClassifier(max_leaves=6, criterion="kearns_mansour").fit(X, y, sample_weight=w * 2.0**k)
        assert _structure(est) == _structure(ref)


def test_weights_whose_sum_overflows_are_a_named_error():
    with pytest.raises(TreeLearnValueError, match="sums to more than the largest float64"):
        check_sample_weight(np.full(3, 1e308), 3)
    with pytest.raises(TreeLearnValueError, match="too large for a float64"):
        check_sample_weight([1, 10**400], 2)
    with pytest.raises(TreeLearnValueError, match="too large for a float64"):
        check_sample_weight(10**400, 2)
    w = check_sample_weight(np.array([1.0, 2.0], dtype=">f8"), 2)
    assert w.dtype == np.float64 and w.dtype.isnative


# ---------------------------------------------------------------------------------- one class
def _fitted_attributes(est) -> set:
    return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}


@pytest.mark.parametrize("make", BINARY, ids=BINARY_IDS)
@pytest.mark.parametrize("how", ["one label", "one weighted class", "one class of two in classes_"])
def test_one_class_fit_sets_every_fitted_attribute(make, how):
    X, y = _binary_data()
    ordinary = make().fit(X, y)
    if how == "one label":
        est, yy, w = make().fit(X, np.ones_like(y)), np.ones_like(y), None
    elif how == "one weighted class":
        w = (y == 1).astype(float)
        est, yy = make().fit(X, y, sample_weight=w), y
    else:
        w = np.where(y == 1, 1.0, 0.0)
        est, yy = make().fit(X[y == 1], y[y == 1]), y[y == 1]
    missing = _fitted_attributes(ordinary) - _fitted_attributes(est)
    assert not missing, f"a one-class fit does not set {sorted(missing)}"
    assert est.get_n_leaves() == 1
    pred = est.predict(X)
    assert np.all(pred == 1)
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), len(est.classes_))
    assert np.allclose(proba[:, list(est.classes_).index(1)], 1.0)
    if hasattr(est, "training_error_"):
        assert est.training_error_ == 0.0
    if hasattr(est, "is_optimal_") and isinstance(est, OptimalTreeClassifier):
        assert est.is_optimal_ and not est.timed_out_
    if w is not None and how == "one weighted class" and not isinstance(est, QueryTreeClassifier):
        assert est.tree_.value[0].tolist() == [0.0, float(np.sum(w))]
    del yy


# ---------------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("make, name", [
    (GreedyTreeClassifier, "ccp_alpha"), (GreedyTreeClassifier, "min_impurity_decrease"),
    (TopKTreeClassifier, "time_limit"), (OptimalTreeClassifier, "memory_limit_mb"),
    (MinRankTreeClassifier, "time_limit"), (MinRankTreeClassifier, "memory_limit_mb"),
    (QueryTreeClassifier, "max_memory_mb"), (QueryTreeClassifier, "tau"),
])
@pytest.mark.parametrize("value", [2**64, 10**400], ids=["2**64", "10**400"])
def test_real_parameter_given_an_integer_no_float64_holds_is_a_named_error(make, name, value):
    # 10**400 overflowed in float(), 2**64 in numpy's isfinite: deep OverflowError/TypeError before
    X, y = _binary_data()
    if value == 2**64:  # a float64 holds it: a fit, or a named range error (tau must be <= 1/4)
        try:
            est = make(**{name: value}).fit(X, y)
        except TreeLearnValueError as exc:
            assert name in str(exc)
        else:
            assert est.get_n_leaves() >= 1
        return
    with pytest.raises(TreeLearnValueError, match=f"{name} must be a finite number a float64 can hold"):
        make(**{name: value}).fit(X, y)
