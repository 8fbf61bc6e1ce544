"""The estimator seam (base.py): declared parameters with named errors, class_weight as in
scikit-learn, categorical columns added to the inferred ones, numpy bool X as 0/1 numbers, the one
path to a BinaryData, zero-weight rows."""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight

from treelearn import (
    GreedyTreeClassifier,
    MinRankTreeClassifier,
    OptimalTreeClassifier,
    QueryTreeClassifier,
    TopKTreeClassifier,
    Tree,
    TreeLearnValueError,
)
from treelearn.base import BaseTreeClassifier
from treelearn.data.binarize import Binarizer, binarize_sample
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.schema import ColumnSchema
from treelearn.learn.pruned.estimator import PrunedTreeClassifier

ESTIMATORS = [GreedyTreeClassifier, TopKTreeClassifier, OptimalTreeClassifier, MinRankTreeClassifier,
              QueryTreeClassifier, PrunedTreeClassifier]


def _data(n=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d))
    y = (X[:, 0] ^ X[:, 1]) | X[:, 2]
    return X, y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_is_declared_once(cls):
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    assert set(cls._parameter_constraints) == params
    assert "class_weight" in params


@pytest.mark.parametrize("cls, params, message", [
    (GreedyTreeClassifier, {"max_depth": 2**63}, "max_depth must be <= 2147483647"),
    (GreedyTreeClassifier, {"random_state": -1}, "random_state must be an integer in"),
    (GreedyTreeClassifier, {"max_leaves": 2**70}, "max_leaves must be <="),
    (GreedyTreeClassifier, {"class_weight": "even"}, "class_weight must be None, 'balanced' or a dict"),
    (GreedyTreeClassifier, {"class_weight": {0: -1.0}}, r"class_weight\[0\] must be a finite number >= 0"),
    (GreedyTreeClassifier, {"categorical": "a"}, "categorical must be None, a list"),
    (TopKTreeClassifier, {"max_depth": 2**63}, "max_depth must be <= 64"),
    (TopKTreeClassifier, {"k": "most"}, "k must be"),
    (TopKTreeClassifier, {"n_jobs": 0}, "n_jobs must be"),
    (TopKTreeClassifier, {"n_jobs": 2**40}, "n_jobs must be"),
    (TopKTreeClassifier, {"memory_limit_mb": float("nan")}, "memory_limit_mb must be a finite number"),
    (TopKTreeClassifier, {"time_limit": -1}, "time_limit must be > 0"),
    (TopKTreeClassifier, {"random_state": -1}, "random_state"),
    (OptimalTreeClassifier, {"scoring": "x"}, "scoring must be one of 'gain', 'gain_ratio'"),
    (MinRankTreeClassifier, {"max_rank": 2**63}, "max_rank must be <="),
    (MinRankTreeClassifier, {"memory_limit_mb": "big"}, "memory_limit_mb must be a number"),
    (QueryTreeClassifier, {"max_memory_mb": "x"}, "max_memory_mb must be a number"),
    (QueryTreeClassifier, {"max_memory_mb": 0}, "max_memory_mb must be > 0"),
    (QueryTreeClassifier, {"random_state": -1}, "random_state"),
    (QueryTreeClassifier, {"influence": "guess"}, "influence must be one of"),
    (QueryTreeClassifier, {"size": 2**63}, "size must be <="),
    (PrunedTreeClassifier, {"cv": "x"}, "cv must be an integer >= 2, a CV splitter"),
    (PrunedTreeClassifier, {"cv": 1}, "cv must be >= 2"),
    (PrunedTreeClassifier, {"loose": "yes"}, "loose must be one of True, False"),
    (PrunedTreeClassifier, {"pruning": "all"}, "pruning must be one of 'bound', 'ccp', 'mcart' or None"),
    (PrunedTreeClassifier, {"max_depth": 2**63}, "max_depth must be <="),
])
def test_named_errors(cls, params, message):
    X, y = _data()
    with pytest.raises(TreeLearnValueError, match=message):
        cls(**params).fit(X, y)


def test_undeclared_parameter_is_a_programming_error():
    class Bad(BaseTreeClassifier):
        _parameter_constraints = {}

        def __init__(self, depth=1):
            self.depth = depth

    with pytest.raises(TypeError, match="declares no constraint"):
        Bad().fit(*_data())


def test_class_weight_balanced_gives_sklearns_tree():
    rng = np.random.default_rng(3)
    n = 400
    X = rng.normal(size=(n, 5))  # continuous: no ties between splits
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 1.0, 1, 0)  # about 1 in 5 positive
    assert 0.1 < y.mean() < 0.35
    for depth in (2, 4):
        ours = GreedyTreeClassifier(criterion="gini", max_depth=depth, class_weight="balanced").fit(X, y)
        ref = DecisionTreeClassifier(criterion="gini", max_depth=depth, class_weight="balanced",
                                     random_state=0).fit(X, y)
        assert ours.get_n_leaves() == ref.get_n_leaves()
        # the same training partition, the same predictions
        part = lambda leaves: sorted(tuple(np.flatnonzero(leaves == v)) for v in np.unique(leaves))  # noqa: E731
        assert part(ours.apply(X)) == part(ref.apply(X))
        assert np.array_equal(ours.predict(X), ref.predict(X))
        # leaf class counts: the same weighted proportions
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", [GreedyTreeClassifier, TopKTreeClassifier, OptimalTreeClassifier,
                                 PrunedTreeClassifier])
def test_class_weight_multiplies_sample_weight(cls):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=120)]
    y[X[:, 0] > 0.8] = "c"
    sw = rng.integers(1, 4, size=120).astype(float)
    for cw in ("balanced", {"a": 1.0, "b": 3.5, "c": 0.5}):
        a = cls(class_weight=cw).fit(X, y, sample_weight=sw)
        b = cls().fit(X, y, sample_weight=sw * compute_sample_weight(cw, y))
        assert a.tree_ == b.tree_


def test_class_weight_reaches_every_estimator():
    X, y = _data()
    Xpm = 2 * X - 1
    for cls in ESTIMATORS:
        est = cls(class_weight="balanced")
        if cls is QueryTreeClassifier:
            with pytest.warns(UserWarning, match="ignores sample_weight and class_weight"):
                est.fit(Xpm, y)
        else:
            est.fit(X, y)
        assert est.predict(X if cls is not QueryTreeClassifier else Xpm).shape == y.shape
    with pytest.raises(TreeLearnValueError, match="not classes of y"):
        GreedyTreeClassifier(class_weight={0: 1.0, 7: 2.0}).fit(X, np.where(y == 1, 1, 2))
    with pytest.raises(TreeLearnValueError, match="every sample weight zero"):
        GreedyTreeClassifier(class_weight={0: 0.0, 1: 0.0}).fit(X, y)


def test_categorical_adds_to_inference():
    rng = np.random.default_rng(0)
    n = 90
    df = pd.DataFrame({"color": rng.choice(["red", "green"], size=n), "size": rng.integers(0, 4, size=n),
                       "x": rng.normal(size=n)})
    y = np.where((df["color"] == "red") & (df["size"] == 2), 1, 0)
    schema = ColumnSchema.infer(df, ["size"])
    assert schema.is_categorical(0) and schema.is_categorical(1) and not schema.is_categorical(2)
    for cls in (GreedyTreeClassifier, TopKTreeClassifier, MinRankTreeClassifier):
        est = cls(categorical=["size"]).fit(df, y)
        assert (est.predict(df) == y).all()
    mask = ColumnSchema.infer(df, [False, True, False])
    assert mask.is_categorical(0) and mask.is_categorical(1)


def test_numpy_bool_is_binary_numeric_and_packed():
    rng = np.random.default_rng(0)
    Xb = rng.random((1000, 20_000)) < 0.5
    y = Xb[:, 7] | Xb[:, 11]
    schema = ColumnSchema.infer(Xb)
    assert schema.all_numeric
    binz, data = binarize_sample(Xb, schema, y.astype(np.int64), 2)
    assert data.n_features == 20_000 and np.all(binz.threshold_ == 0.5)
    m = TopKTreeClassifier(k=2, max_depth=2).fit(Xb, y)
    assert m.score(Xb, y) == 1.0
    assert m.n_binary_features_ == 20_000
    u8 = TopKTreeClassifier(k=2, max_depth=2).fit(Xb.view(np.uint8), y)
    assert m.tree_ == u8.tree_


def test_one_path_to_binary_data_matches_the_binarizer():
    rng = np.random.default_rng(2)
    for values, signed in (((0, 1), False), ((-1, 1), True)):
        X = np.asarray(values)[rng.integers(0, 2, size=(70, 6))].astype(np.int8)
        X[:, 3] = values[1]  # a constant column gives no feature
        y = rng.integers(0, 3, size=70)
        schema = ColumnSchema.infer(X)
        binz, data = binarize_sample(X, schema, y, 3, signed=signed)
        ref = Binarizer().fit(X)
        assert np.array_equal(binz.feature_, ref.feature_) and np.array_equal(binz.threshold_, ref.threshold_)
        want = BinaryData(ref.transform(X), y, 3)
        assert np.array_equal(data.columns, want.columns) and np.array_equal(data.class_bits, want.class_bits)
    X = np.asarray((-1, 1))[rng.integers(0, 2, size=(30, 3))]
    binz, data = binarize_sample(X, ColumnSchema.infer(X), rng.integers(0, 2, size=30), 2)  # not signed
    assert np.array_equal(binz.feature_, Binarizer().fit(X).feature_)  # via the Binarizer: same features


def test_minrank_takes_pm1_through_the_path():
    X, y = _data(n=64, d=5, seed=4)
    a = MinRankTreeClassifier().fit(X, y)
    b = MinRankTreeClassifier().fit(2 * X - 1, y)
    assert a.rank_ == b.rank_ and a.get_n_leaves() == b.get_n_leaves()
    assert np.array_equal(a.predict(X), b.predict(2 * X - 1))


def test_zero_weight_rows_never_reach_the_learner():
    seen = []

    class Probe(BaseTreeClassifier):
        _parameter_constraints = {}

        def _fit(self, sample, params):
            seen.append((sample.n_samples, None if sample.rows is None else sample.rows.tolist(),
                         sample.n_input_rows, bool(np.all(sample.weights > 0))))
            counts = np.bincount(sample.y, weights=sample.weights, minlength=sample.n_classes)
            return Tree.leaf(counts, np.arange(sample.n_classes), schema=sample.schema)

    X, y = _data(n=10)
    w = np.array([1, 0, 2, 0, 1, 1, 1, 1, 1, 1], dtype=float)
    Probe().fit(X, y, sample_weight=w)
    assert seen == [(8, [0, 2, 4, 5, 6, 7, 8, 9], 10, True)]


def test_binarizer_declares_its_parameters():
    X, _ = _data()
    assert set(Binarizer._parameter_constraints) == set(Binarizer().get_params())
    with pytest.raises(TreeLearnValueError, match="max_thresholds must be >= 1"):
        Binarizer(max_thresholds=0).fit(X)
    with pytest.raises(TreeLearnValueError, match="full_one_hot must be one of True, False"):
        Binarizer(full_one_hot="yes").fit(X)


def test_parameters_are_resolved_once_without_shared_state():
    from concurrent.futures import ThreadPoolExecutor

    from treelearn.criteria import get_criterion

    def resolved(name):
        return GreedyTreeClassifier(criterion=name)._validate_params()["criterion"]

    names = ["gini", "entropy", "kearns_mansour"] * 200
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(resolved, names))
    assert all(g is get_criterion(n) for g, n in zip(got, names))


def test_query_search_limits_are_checked_in_the_functions_too():
    from treelearn.datasets import majority
    from treelearn.learn.queries import build_dt, learn_from_queries

    f = majority(5)
    with pytest.raises(TreeLearnValueError, match="max_memory_mb must be a finite number"):
        build_dt(f, 4, depth=3, tau=0.1, max_memory_mb="x")
    with pytest.raises(TreeLearnValueError, match="time_limit must be > 0"):
        build_dt(f, 4, depth=3, tau=0.1, time_limit=0)
    with pytest.raises(TreeLearnValueError, match="max_queries must be >= 1"):
        build_dt(f, 4, depth=3, tau=0.1, max_queries=0)
    with pytest.raises(TreeLearnValueError, match="max_memory_mb"):
        learn_from_queries(f, 4, 0.2, mode="monotone", n_samples=200, max_memory_mb=-1)
