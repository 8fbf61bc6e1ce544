"""GreedyTreeClassifier as a scikit-learn estimator: estimator checks, meta-estimators, pickling,
parameter validation, pandas input."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn import GreedyTreeClassifier, TreeLearnValueError


# every check passes (check_class_weight_classifiers too: it sets min_weight_fraction_leaf=0.01, as for
# scikit-learn's tree)
@parametrize_with_checks([GreedyTreeClassifier(), GreedyTreeClassifier(criterion="gini", max_leaves=6),
                          GreedyTreeClassifier(max_thresholds=8, max_depth=3),
                          GreedyTreeClassifier(max_features="sqrt", splitter="random", random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.5, "yes", "no")
    return X, y


def test_pipeline_gridsearch_clone():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), GreedyTreeClassifier())
    gs = GridSearchCV(pipe, {"greedytreeclassifier__max_depth": [1, 3, 5],
                             "greedytreeclassifier__criterion": ["entropy", "gini", "kearns_mansour"]}, cv=3)
    gs.fit(X, y)
    assert gs.best_score_ > 0.8
    assert gs.best_estimator_[-1].get_depth() <= gs.best_params_["greedytreeclassifier__max_depth"]
    est = GreedyTreeClassifier(max_leaves=4, criterion="gini")
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    assert cross_val_score(GreedyTreeClassifier(max_depth=3), X, y, cv=4).mean() > 0.8


def test_pickle_round_trip_and_byte_stable():
    X, y = _data(1)
    est = GreedyTreeClassifier(max_depth=4).fit(X, y)
    a = pickle.dumps(est)
    assert pickle.dumps(est) == a
    est2 = pickle.loads(a)
    assert pickle.dumps(est2) == a
    np.testing.assert_array_equal(est2.predict(X), est.predict(X))
    assert est2.tree_ == est.tree_
    # a refit gives the same bytes (determinism, no stored training data or timestamps)
    assert pickle.dumps(GreedyTreeClassifier(max_depth=4).fit(X, y)) == a
    assert len(a) < 20000  # the model does not store the training data


@pytest.mark.parametrize("params, message", [
    ({"criterion": "bogus"}, "unknown criterion"),
    ({"criterion": lambda p: p}, "not"),
    ({"criterion": 3}, "criterion must be"),
    ({"max_depth": -1}, "max_depth must be >= 0"),
    ({"max_depth": 2.5}, "max_depth must be an integer"),
    ({"max_leaves": 0}, "max_leaves must be >= 1"),
    ({"min_samples_leaf": 0}, "min_samples_leaf must be >= 1"),
    ({"min_samples_leaf": 1.5}, "min_samples_leaf must be <"),
    ({"min_impurity_decrease": -0.1}, "min_impurity_decrease must be >= 0"),
    ({"max_thresholds": 0}, "max_thresholds must be >= 1"),
    ({"max_thresholds": "many"}, "max_thresholds must be an integer"),
])
def test_params_validated_in_fit(params, message):
    est = GreedyTreeClassifier(**params)  # never in __init__
    assert est.get_params()[next(iter(params))] is params[next(iter(params))]
    X, y = _data()
    with pytest.raises(TreeLearnValueError, match=message):
        est.fit(X, y)


def test_bad_input_errors():
    X, y = _data()
    with pytest.raises(ValueError, match="infinity"):
        Xn = X.copy()
        Xn[3, 2] = np.inf
        GreedyTreeClassifier().fit(Xn, y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        GreedyTreeClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="2-D"):
        GreedyTreeClassifier().fit(X[:, 0], y)
    with pytest.raises(ValueError, match="negative"):
        GreedyTreeClassifier().fit(X, y, sample_weight=-np.ones(len(y)))


def test_pandas_categorical_and_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], n), "size": rng.normal(size=n),
                       "flag": rng.choice(["a", "b"], n)})
    y = ((df["color"] == "green") ^ (df["size"] > 0.7)).to_numpy()
    est = GreedyTreeClassifier(max_depth=3).fit(df, y)
    assert list(est.feature_names_in_) == ["color", "size", "flag"]
    assert est.score(df, y) == 1.0
    t = est.tree_
    assert set(t.kind[t.feature == 0].tolist()) == {1}  # color == v conditions
    # unseen category: every x == v condition is false
    new = df.head(3).copy()
    new["color"] = ["purple", "purple", "purple"]
    assert est.predict(new).shape == (3,)
    # the same tree from the same data given as codes with categorical=[0, 2]
    codes = np.column_stack([pd.Categorical(df["color"], categories=["blue", "green", "red"]).codes, df["size"],
                             (df["flag"] == "b").astype(int)]).astype(float)
    est2 = GreedyTreeClassifier(max_depth=3, categorical=[0, 2]).fit(codes, y)
    np.testing.assert_array_equal(est2.predict(codes), est.predict(df))


def test_fitted_attributes_and_inspection():
    X, y = _data(2)
    est = GreedyTreeClassifier(max_leaves=5).fit(X, y)
    assert est.get_n_leaves() == 5
    assert est.n_features_in_ == 5
    assert list(est.classes_) == ["no", "yes"]
    fi = est.feature_importances_
    assert fi.shape == (5,) and fi.sum() == pytest.approx(1.0)
    assert est.decision_path(X).shape == (len(y), est.tree_.node_count)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))


def test_single_class_and_zero_depth():
    X, y = _data(4)
    one = GreedyTreeClassifier().fit(X, np.full(len(y), "x"))
    assert one.get_n_leaves() == 1 and set(one.predict(X)) == {"x"}
    stump = GreedyTreeClassifier(max_depth=0).fit(X, y)
    assert stump.get_n_leaves() == 1
    assert set(stump.predict(X)) == {"no" if (y == "no").sum() >= (y == "yes").sum() else "yes"}


def test_docstring_examples():
    import doctest

    import treelearn.learn.greedy.estimator as mod

    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
