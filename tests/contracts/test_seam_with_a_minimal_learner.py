"""The shared estimator layer (BaseTreeClassifier), exercised through a small learner written here:
a weighted-Gini depth-1 stump over every midpoint / category, checked against a brute-force search."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

from treelearn import Tree, TreeLearnValueError
from treelearn._validation import check_int_param
from treelearn.base import BaseTreeClassifier


class Stump(BaseTreeClassifier):
    """Best weighted-Gini single split (ties: lowest feature, then lowest threshold), or a leaf."""

    _supports_missing = False  # a learner without missing values: the base rejects them (named)

    def __init__(self, min_samples_leaf=1):
        self.min_samples_leaf = min_samples_leaf

    def _check_params(self):
        check_int_param("min_samples_leaf", self.min_samples_leaf, low=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # one split cannot fit sklearn's 3-class test data
        return tags

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema):
        def counts(mask):
            return np.bincount(y[mask], weights=sample_weight[mask], minlength=n_classes)

        def gini(c):
            t = c.sum()
            return 0.0 if t <= 0 else t * (1 - np.sum((c / t) ** 2))

        root = counts(np.ones(len(y), bool))
        best = (gini(root) - 1e-12, None)
        for j in range(Xe.shape[1]):
            u = np.unique(Xe[:, j])
            if schema.is_categorical(j):
                cands = [(1, v) for v in u]
            else:
                cands = [(0, (a + b) / 2) for a, b in zip(u[:-1], u[1:])]
            for kind, t in cands:
                right = Xe[:, j] >= t if kind == 0 else Xe[:, j] == t
                if min(right.sum(), (~right).sum()) < self.min_samples_leaf:
                    continue
                score = gini(counts(~right)) + gini(counts(right))
                if score < best[0]:
                    best = (score, (j, kind, t, right))
        if best[1] is None:
            return Tree.leaf(root, np.arange(n_classes), schema=schema)
        j, kind, t, right = best[1]
        value = np.vstack([root, counts(~right), counts(right)])
        return Tree(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[j, -2, -2],
                    threshold=[t, -2, -2], kind=[kind, -1, -1], value=value,
                    n_node_samples=[len(y), (~right).sum(), right.sum()], classes=np.arange(n_classes), schema=schema)


def _brute_force_stump_error(X, y, w):
    """Smallest weighted training error of a depth-<=1 tree with majority leaves (over all midpoints)."""
    classes = np.unique(y)

    def err(mask):
        if not mask.any():
            return 0.0
        return w[mask].sum() - max(w[mask & (y == c)].sum() for c in classes)

    best = err(np.ones(len(y), bool))
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        for t in (u[:-1] + u[1:]) / 2:
            r = X[:, j] >= t
            best = min(best, err(r) + err(~r))
    return best


# ---------------------------------------------------------------------- sklearn conformance
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_check_estimator_on_a_learner_built_on_the_base():
    check_estimator(Stump())


def test_unfitted_and_feature_checks():
    with pytest.raises(NotFittedError):
        Stump().predict(np.zeros((2, 2)))
    with pytest.raises(NotFittedError):
        Stump().decision_path(np.zeros((2, 2)))
    m = Stump().fit(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0]]), [0, 1, 1])
    with pytest.raises(ValueError, match="expecting 2 features"):
        m.predict(np.zeros((1, 3)))
    with pytest.raises(TreeLearnValueError, match="min_samples_leaf must be >= 1"):
        Stump(min_samples_leaf=0).fit(np.zeros((2, 1)), [0, 1])


# ---------------------------------------------------------------------- behaviour
def test_single_class_gives_one_leaf():
    X = np.random.default_rng(0).normal(size=(10, 3))
    m = Stump().fit(X, ["only"] * 10)
    assert m.tree_.n_leaves == 1 and m.get_depth() == 0 and m.get_n_leaves() == 1
    assert m.classes_.tolist() == ["only"]
    assert m.predict(X).tolist() == ["only"] * 10
    np.testing.assert_array_equal(m.predict_proba(X), np.ones((10, 1)))
    assert m.tree_.n_node_samples[0] == 10
    np.testing.assert_array_equal(m.feature_importances_, np.zeros(3))
    # one class left after zero-weight rows are removed
    w = np.array([1.0] * 9 + [0.0])
    m = Stump().fit(X, ["a"] * 9 + ["b"], sample_weight=w)
    assert m.tree_.n_leaves == 1 and m.classes_.tolist() == ["a", "b"]
    assert m.predict(X).tolist() == ["a"] * 10


@pytest.mark.parametrize("labels", [
    np.array(["no", "yes"]), np.array([3, 7]), np.array([-1.0, 1.0]), np.array([False, True]),
    np.array([("a", 1), ("b", 2)] + [None], dtype=object)[:2],
])
def test_labels_of_any_hashable_type_round_trip(labels):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    idx = (X[:, 0] > 0).astype(int)
    y = labels[idx]
    m = Stump().fit(X, y)
    pred = m.predict(X)
    assert [p == q for p, q in zip(pred.tolist(), y.tolist())] == [True] * 40
    assert len(m.classes_) == 2


def test_pandas_input_with_names_and_categories():
    df = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0, 60.0, 70.0],
                       "color": pd.Categorical(["r", "g", "b", "r", "g", "b"])})
    y = np.array([0, 1, 0, 0, 1, 0])  # color == g
    m = Stump().fit(df, y)
    assert m.feature_names_in_.tolist() == ["age", "color"] and m.n_features_in_ == 2
    assert m.tree_.condition_name(0) == "color == g"
    np.testing.assert_array_equal(m.predict(df), y)
    np.testing.assert_array_equal(m.predict(pd.DataFrame({"age": [1.0], "color": ["unseen"]})), [0])
    with pytest.warns(UserWarning, match="feature names"):
        m.predict(df.to_numpy(dtype=object))


@pytest.mark.parametrize("seed", range(6))
def test_sample_weight_semantics(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 3)).round(1)
    y = rng.integers(0, 3, 30)
    a = Stump().fit(X, y)
    b = Stump().fit(X, y, sample_weight=np.ones(30))
    assert a.tree_ == b.tree_  # all-ones weights: exactly the unweighted result
    # integer weights = repeated rows
    w = rng.integers(0, 4, 30).astype(float)
    w[0] = max(w[0], 1.0)
    c = Stump().fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(30), w.astype(int))
    d = Stump().fit(X[rep], y[rep])
    np.testing.assert_allclose(c.tree_.value, d.tree_.value)
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    # zero-weight rows change nothing
    keep = w > 0
    e = Stump().fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(e.tree_.value, c.tree_.value)
    np.testing.assert_array_equal(e.tree_.threshold, c.tree_.threshold)
    # the learned stump is optimal for weighted Gini; its error is at least the brute-force optimum
    err = np.sum(w * (c.predict(X) != y))
    assert err >= _brute_force_stump_error(X, y, w) - 1e-9


def test_proba_path_importances_and_inspection():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3))
    y = (X[:, 1] > 0.3).astype(int)
    m = Stump().fit(X, y)
    P = m.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.classes_[P.argmax(axis=1)], m.predict(X))
    np.testing.assert_allclose(np.exp(m.predict_log_proba(X)), P)
    dp = m.decision_path(X).toarray()
    np.testing.assert_array_equal(dp[:, 0], 1)
    np.testing.assert_array_equal(dp[np.arange(50), m.apply(X)], 1)
    assert m.feature_importances_.tolist() == [0.0, 1.0, 0.0]
    assert m.get_depth() == 1 and m.get_n_leaves() == 2
    assert m.score(X, y) == 1.0


def test_clone_pickle_pipeline_gridsearch():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    m = Stump(min_samples_leaf=2).fit(X, y)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X), m.predict(X))
    assert clone(m).get_params() == {"min_samples_leaf": 2} and not hasattr(clone(m), "tree_")
    assert make_pipeline(Stump()).fit(X, y).score(X, y) == 1.0
    gs = GridSearchCV(Stump(), {"min_samples_leaf": [1, 5]}, cv=3).fit(X, y)
    assert gs.best_params_["min_samples_leaf"] in (1, 5)


def test_bad_input_errors():
    X = np.zeros((3, 2))
    with pytest.raises(TreeLearnValueError, match="X has 3, y has 2"):
        Stump().fit(X, [0, 1])
    with pytest.raises(TreeLearnValueError, match="NaN"):
        Stump().fit(np.array([[np.nan, 1.0], [0.0, 1.0]]), [0, 1])
    with pytest.raises(TreeLearnValueError, match="missing"):
        Stump().fit(pd.DataFrame({"c": pd.Categorical(["a", None])}), [0, 1])
    with pytest.raises(TreeLearnValueError, match="negative"):
        Stump().fit(X, [0, 1, 1], sample_weight=[1, -1, 1])
    with pytest.raises(TreeLearnValueError, match="2-D"):
        Stump().fit(np.zeros(3), [0, 1, 1])
    with pytest.raises(TreeLearnValueError, match=r"0 sample\(s\)"):
        Stump().fit(np.zeros((0, 2)), [])
    with pytest.raises(TreeLearnValueError, match="continuous"):
        Stump().fit(X, [0.5, 1.5, 2.25])
