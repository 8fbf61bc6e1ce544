"""Binarizer against naive references: every midpoint (exact), quantile thresholds, the Top-k
paper's global budget (003 App. C, checked against the anchors' spambase matrix), one-hot
categorical columns, two-valued columns, unseen categories, names, sklearn conformance."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

from treelearn import BinaryData, Binarizer, TreeLearnValueError


# ---------------------------------------------------------------------- naive references
def naive_exact(col):
    u = sorted(set(col.tolist()))
    return [(a + b) / 2 for a, b in zip(u[:-1], u[1:])]


def naive_transform(X, feats):
    """feats: list of (column, kind, value) with kind '>=' or '=='."""
    out = np.zeros((X.shape[0], len(feats)), dtype=np.uint8)
    for k, (j, kind, v) in enumerate(feats):
        for r in range(X.shape[0]):
            out[r, k] = X[r, j] >= v if kind == ">=" else X[r, j] == v
    return out


def _binarizer_feats(bz):
    feats = []
    for f, k, t in zip(bz.feature_, bz.kind_, bz.threshold_):
        if k == 0:
            feats.append((int(f), ">=", float(t)))
        else:
            feats.append((int(f), "==", bz.schema_.categories[f][int(t)]))
    return feats


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
                  elements=st.sampled_from([-3.0, -1.5, 0.0, 0.25, 1.0, 2.0, 7.5, 1e6])))
@settings(max_examples=80, deadline=None, derandomize=True)
def test_exact_every_midpoint(X):
    bz = Binarizer().fit(X)
    for j in range(X.shape[1]):
        got = bz.threshold_[bz.feature_ == j].tolist()
        assert got == pytest.approx(naive_exact(X[:, j]))
    assert np.all(bz.kind_ == 0)
    np.testing.assert_array_equal(bz.transform(X), naive_transform(X, _binarizer_feats(bz)))
    # a row's conditions are monotone in the threshold: x >= t holds for a prefix of each column's features
    T = bz.transform(X)
    for j in range(X.shape[1]):
        sub = T[:, bz.feature_ == j]
        assert np.all(np.diff(sub.astype(int), axis=1) <= 0)


def test_exact_close_values_keep_midpoints_strictly_between():
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [b]])
    bz = Binarizer().fit(X)
    assert bz.n_binary_features_ == 1
    np.testing.assert_array_equal(bz.transform(X).ravel(), [0, 1])


def _naive_quantile_thresholds(col, m):
    """At most m thresholds: for i = 1..m, the sample quantile q_i = sorted[(i n) // (m + 1)]; the
    condition separates q_i from the next larger distinct value (x >= midpoint above q_i)."""
    s = np.sort(col)
    u = np.unique(col)
    if u.size - 1 <= m:
        return naive_exact(col)
    out = set()
    for i in range(1, m + 1):
        q = s[(i * s.size) // (m + 1)]
        k = int(np.searchsorted(u, q))
        if k + 1 < u.size:
            out.add((u[k] + u[k + 1]) / 2)
    return sorted(out)


@pytest.mark.parametrize("m", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("seed", range(4))
def test_max_thresholds_quantiles(m, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=300), rng.integers(0, 5, 300), rng.exponential(size=300).round(1)])
    bz = Binarizer(max_thresholds=m).fit(X)
    for j in range(X.shape[1]):
        got = bz.threshold_[bz.feature_ == j]
        assert got.size <= m
        assert got.tolist() == pytest.approx(_naive_quantile_thresholds(X[:, j], m))
        # every threshold is one of the exact midpoints
        assert set(np.round(got, 12)) <= set(np.round(naive_exact(X[:, j]), 12))
    # bins of roughly equal mass for a continuous column: each bin gets about n / (m + 1) rows
    if m <= 7:
        T = bz.transform(X)[:, bz.feature_ == 0]
        bins = np.bincount(T.sum(axis=1), minlength=m + 1)
        assert bins.min() >= 300 // (m + 1) - 2 and bins.max() <= 300 // (m + 1) + 2


def _naive_topk_budget(col, B, n_numeric):
    """003 App. C as the Top-k code does it: m + 1 = B // n_numeric + 1 buckets, conditions x >= q_i with
    q_i the linearly interpolated i/(m+1) quantile of the distinct values."""
    u = np.unique(col)
    buckets = min(B // n_numeric + 1, u.size)
    return [float(np.quantile(u, i / buckets)) for i in range(1, buckets)]


@pytest.mark.parametrize("B", [12, 20, 60, 200])
def test_max_binary_features_global_budget(B):
    rng = np.random.default_rng(B)
    X = np.column_stack([rng.normal(size=200).round(2), rng.integers(0, 3, 200), rng.gamma(2, size=200).round(1),
                         rng.integers(0, 50, 200)]).astype(float)
    bz = Binarizer(max_binary_features=B).fit(X)
    per_col = max(1, B // 4)
    feats = []
    for j in range(4):
        assert np.sum(bz.feature_ == j) <= per_col
        feats += [(j, ">=", q) for q in _naive_topk_budget(X[:, j], B, 4)]
    # the same conditions on the training rows as the naive Top-k encoding
    np.testing.assert_array_equal(bz.transform(X), naive_transform(X, feats))
    assert bz.n_binary_features_ <= B


def test_categorical_one_hot_and_unseen():
    X = pd.DataFrame({"color": pd.Categorical(["red", "blue", "green", "red", "blue"]),
                      "size": ["s", "m", "l", "m", "s"],
                      "yes": [True, False, True, True, False],
                      "n": [1.0, 2.0, 3.0, 4.0, 5.0]})
    bz = Binarizer().fit(X)
    feats = _binarizer_feats(bz)
    # naive: one x == v per category of a categorical column (sorted), one for a two-valued column
    expect = [(0, "==", v) for v in ["blue", "green", "red"]] + [(1, "==", v) for v in ["l", "m", "s"]] \
        + [(2, "==", True)] + [(3, ">=", t) for t in [1.5, 2.5, 3.5, 4.5]]
    assert feats == expect
    np.testing.assert_array_equal(bz.transform(X), naive_transform(X.to_numpy(dtype=object), expect))
    assert list(bz.get_feature_names_out()) == [
        "color == blue", "color == green", "color == red", "size == l", "size == m", "size == s", "yes == True",
        "n >= 1.5", "n >= 2.5", "n >= 3.5", "n >= 4.5"]
    new = pd.DataFrame({"color": ["purple"], "size": ["xl"], "yes": [True], "n": [2.0]})
    row = bz.transform(new)[0]
    assert row[:6].tolist() == [0] * 6  # unseen categories: every x == v false
    assert row[6:].tolist() == [1, 1, 0, 0, 0]


def test_categorical_given_by_index_name_or_mask():
    X = np.array([[1, 10], [2, 20], [3, 10], [1, 30]])
    a = Binarizer(categorical=[0]).fit(X)
    assert a.kind_.tolist() == [1, 1, 1, 0, 0]
    b = Binarizer(categorical=[True, False]).fit(X)
    assert b.kind_.tolist() == a.kind_.tolist()
    df = pd.DataFrame(X, columns=["a", "b"])
    c = Binarizer(categorical=["b"]).fit(df)
    assert c.kind_.tolist() == [0, 0, 1, 1, 1] and c.get_feature_names_out()[2] == "b == 10"
    with pytest.raises(TreeLearnValueError, match="not a column name"):
        Binarizer(categorical=["zz"]).fit(df)
    with pytest.raises(TreeLearnValueError, match="out of range"):
        Binarizer(categorical=[5]).fit(X)
    with pytest.raises(TreeLearnValueError, match="mask has shape"):
        Binarizer(categorical=[True]).fit(X)


@given(hnp.arrays(np.uint8, hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=30),
                  elements=st.integers(0, 1)))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_binary_data_passes_through(B):
    varying = [j for j in range(B.shape[1]) if np.unique(B[:, j]).size == 2]
    bz = Binarizer().fit(B)
    # a two-valued column is exactly one feature x >= 0.5; a constant column gives none
    assert bz.feature_.tolist() == varying
    assert np.all(bz.threshold_ == 0.5)
    np.testing.assert_array_equal(bz.transform(B), B[:, varying])
    # {-1, +1} data is the same with threshold 0
    S = 2.0 * B - 1
    bs = Binarizer().fit(S)
    assert np.all(bs.threshold_ == 0.0)
    np.testing.assert_array_equal(bs.transform(S), B[:, varying])


def test_two_valued_columns_give_one_feature():
    X = pd.DataFrame({"a": [3.0, 7.0, 3.0], "b": ["x", "y", "y"], "c": [5.0, 5.0, 5.0]})
    bz = Binarizer().fit(X)
    assert bz.get_feature_names_out().tolist() == ["a >= 5", "b == y"]
    for m in (1, 4):
        assert Binarizer(max_thresholds=m).fit(X).n_binary_features_ == 2


def test_errors_and_missing_values():
    with pytest.raises(TreeLearnValueError, match="max_thresholds must be >= 1"):
        Binarizer(max_thresholds=0).fit(np.zeros((2, 1)))
    with pytest.raises(TreeLearnValueError, match="max_binary_features must be an integer"):
        Binarizer(max_binary_features=2.5).fit(np.zeros((2, 1)))
    # missing values are features of their own (see test_missing_values_binary_learners.py)
    assert Binarizer().fit(np.array([[1.0], [np.nan]])).get_feature_names_out().tolist() == ["x0 is missing"]
    assert Binarizer().fit(pd.DataFrame({"c": pd.Categorical(["a", None])})).get_feature_names_out().tolist() == [
        "c is missing"]
    bz = Binarizer().fit(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="expecting 2 features"):
        bz.transform(np.zeros((1, 3)))
    with pytest.raises(TreeLearnValueError, match="infinity"):
        bz.transform(np.array([[np.inf, 0.0]]))
    num = Binarizer().fit(pd.DataFrame({"n": [1.0, 2.0]}))
    with pytest.raises(TreeLearnValueError, match="non-numeric"):
        num.transform(pd.DataFrame({"n": ["a"]}))


def test_binary_data_and_sklearn_api():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = rng.integers(0, 2, 50)
    bz = Binarizer(max_thresholds=4)
    data = bz.fit(X).binary_data(X, y, 2, sample_weight=np.full(50, 2.0))
    assert isinstance(data, BinaryData) and data.n_features == bz.n_binary_features_
    T = bz.transform(X)
    np.testing.assert_allclose(data.count(data.full_cover())[:, 1], 2.0 * T[y == 1].sum(axis=0))
    assert clone(bz).get_params() == bz.get_params()
    np.testing.assert_array_equal(make_pipeline(Binarizer(max_thresholds=4)).fit_transform(X), T)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_check_estimator():
    check_estimator(Binarizer())


@pytest.mark.parametrize("name", ["car", "tic-tac-toe", "monks-1", "nursery", "kr-vs-kp", "spambase", "fico-binary",
                                  "fico-binary-17"])
def test_binarizer_reproduces_every_anchor_matrix(data_dir, name):
    """The peers' inputs (../anchors/binarized) rebuilt from the raw data: Top-k's full one-hot of its
    categorical sets, its 3-thresholds-per-feature spambase, TreeBenchmark's complete fico encoding."""
    from treelearn.datasets.loaders import default_anchors_dir, load_anchor_source, load_binarized_anchor

    d = default_anchors_dir(data_dir)
    if not (d / f"{name}.csv").is_file():
        pytest.skip(f"anchors' {name} matrix not found in {d}")
    B, yb = load_binarized_anchor(name, d)
    X, y, params = load_anchor_source(name, data_dir)
    bz = Binarizer(**params).fit(X)
    np.testing.assert_array_equal(bz.transform(X), B)
    np.testing.assert_array_equal(np.unique(y.to_numpy(), return_inverse=True)[1], yb)
    if params.get("full_one_hot"):
        two_valued = sum(X[c].nunique() == 2 for c in X.columns)
        assert Binarizer().fit(X).n_binary_features_ == B.shape[1] - two_valued


def test_full_one_hot_and_unique_names():
    X = pd.DataFrame({"b": ["x", "y", "y"], "n": [0.0, 1.0, 1.0]})
    assert Binarizer(full_one_hot=True).fit(X).get_feature_names_out().tolist() == ["b == x", "b == y", "n >= 0.5"]
    assert Binarizer().fit(X).get_feature_names_out().tolist() == ["b == y", "n >= 0.5"]
    # thresholds that read alike at 6 digits get more digits
    names = Binarizer().fit(np.array([[1e6], [1e6 + 0.5], [1e6 + 1.5]])).get_feature_names_out().tolist()
    assert names == ["x0 >= 1000000.2", "x0 >= 1000001"] and len(set(names)) == 2


def test_set_output_pandas_in_a_pipeline_with_a_classifier():
    """scikit-learn's set_output: the Binarizer returns a DataFrame named by its conditions; a
    pipeline ending in a treelearn classifier passes it on (the classifier, like scikit-learn's,
    has no output to set) and the classifier sees the condition names."""
    import pandas as pd
    from sklearn.pipeline import make_pipeline

    from treelearn import GreedyTreeClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    bz = Binarizer(max_thresholds=2).set_output(transform="pandas")
    out = bz.fit_transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(bz.get_feature_names_out())
    np.testing.assert_array_equal(out.to_numpy(), Binarizer(max_thresholds=2).fit_transform(X))
    pipe = make_pipeline(Binarizer(max_thresholds=2), GreedyTreeClassifier(max_depth=2)).set_output(transform="pandas")
    pipe.fit(X, y)
    assert list(pipe[-1].feature_names_in_) == list(pipe[0].get_feature_names_out())
    np.testing.assert_array_equal(pipe.predict(X), GreedyTreeClassifier(max_depth=2).fit(
        Binarizer(max_thresholds=2).fit_transform(X), y).predict(Binarizer(max_thresholds=2).fit(X).transform(X)))
    assert not hasattr(GreedyTreeClassifier(), "set_output")  # as DecisionTreeClassifier
