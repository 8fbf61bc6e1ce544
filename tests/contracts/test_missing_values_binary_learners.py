"""Issue 11 item 2 for the learners on binary features: missing values (NaN, None, pd.NA) through
the Binarizer's missingness features (both missing directions of every condition and "is
missing"), so that the optimal learner is optimal over every tree whose splits use the
Binarizer's thresholds and categories with every missing direction (checked by brute force over
those splits, defined here from the raw values), and min-rank, Top-k, the pruners fit and predict
with missing values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treelearn import (
    Binarizer,
    GreedyTreeClassifier,
    MinRankTreeClassifier,
    OptimalTreeClassifier,
    PrunedTreeClassifier,
    QueryTreeClassifier,
    TopKTreeClassifier,
    TreeLearnValueError,
)
from treelearn.data.binarize import IS_MISSING, MISSING_FALSE, MISSING_NONE, MISSING_TRUE


def _greedy_score(depth, X, y):
    """The greedy tree's training accuracy."""
    return GreedyTreeClassifier(max_depth=depth).fit(X, y).score(X, y)


def _random_frame(rng, n, n_num=2, with_cat=True, p_nan=0.25):
    cols = {}
    for j in range(n_num):
        v = rng.integers(0, 5, size=n).astype(float)
        v[rng.random(n) < p_nan] = np.nan
        cols[f"x{j}"] = v
    if with_cat:
        c = rng.choice(np.array(["a", "b", "c"], dtype=object), size=n)
        c[rng.random(n) < p_nan] = None
        cols["c"] = c
    return pd.DataFrame(cols)


def _raw_splits(df: pd.DataFrame) -> list[np.ndarray]:
    """Every split a Tree node can make with the Binarizer's conditions (every midpoint of the
    present values, every category) and either missing direction, plus "is missing"; as masks of
    the rows going right. Written from the raw values, not from the Binarizer."""
    out = []
    for name in df.columns:
        col = df[name].to_numpy(dtype=object)
        nan = df[name].isna().to_numpy()
        present = sorted({v for v, m in zip(col, nan) if not m})
        if not pd.api.types.is_numeric_dtype(df[name]):
            conds = [np.array([(not m) and v == c for v, m in zip(col, nan)]) for c in present]
        else:
            x = df[name].to_numpy(dtype=float)
            conds = [np.where(nan, False, x >= (a + b) / 2) for a, b in zip(present[:-1], present[1:])]
        if nan.any():
            for c in conds:
                out += [c & ~nan, c | nan]
            out.append(nan)
        else:
            out += conds
    return out


def _brute_force_error(splits, y, w, depth, n_classes):
    memo = {}

    def leaf(rows):
        return float(w[rows].sum() - np.bincount(y[rows], weights=w[rows], minlength=n_classes).max())

    def best(rows, h):
        key = (rows.tobytes(), h)
        if key in memo:
            return memo[key]
        e = leaf(rows)
        if h > 0 and e > 0:
            for s in splits:
                r = rows & s
                l = rows & ~s
                if r.any() and l.any():
                    e = min(e, best(l, h - 1) + best(r, h - 1))
        memo[key] = e
        return e

    return best(np.ones(y.size, dtype=bool), depth)


@pytest.mark.parametrize("seed", range(6))
def test_optimal_equals_brute_force_over_the_stated_space(seed):
    rng = np.random.default_rng(seed)
    n = 16
    df = _random_frame(rng, n, n_num=2, with_cat=seed % 2 == 0)
    y = rng.integers(0, 2 + seed % 2, size=n)
    w = rng.uniform(0.5, 2.0, size=n) if seed >= 3 else np.ones(n)
    splits = _raw_splits(df)
    for depth in (1, 2):
        m = OptimalTreeClassifier(max_depth=depth, solver="binary", max_binary_features=None,
                                  greedy_incumbent=seed % 2 == 1).fit(df, y, sample_weight=w)
        assert m.is_optimal_
        ref = _brute_force_error(splits, y, w, depth, int(y.max()) + 1)
        assert m.training_error_ == pytest.approx(ref, abs=1e-9)
        # the Tree (with its missing directions) reproduces the error on the training rows
        assert np.sum(w * (m.predict(df) != y)) == pytest.approx(ref, abs=1e-9)


def test_binarizer_missing_features_against_naive():
    rng = np.random.default_rng(1)
    df = _random_frame(rng, 40)
    b = Binarizer().fit(df)
    B = b.transform(df)
    Xe = b.schema_.encode(df)
    assert np.isnan(Xe).any()
    for i in range(b.n_binary_features_):
        col = Xe[:, b.feature_[i]]
        nan = np.isnan(col)
        if b.kind_[i] == IS_MISSING:
            ref = nan
        else:
            cond = (col >= b.threshold_[i]) if b.kind_[i] == 0 else (col == b.threshold_[i])
            ref = np.where(nan, b.missing_[i] == MISSING_TRUE, cond)
        np.testing.assert_array_equal(B[:, i].astype(bool), ref, err_msg=b.get_feature_names_out()[i])
    names = list(b.get_feature_names_out())
    assert "x0 is missing" in names and any(n.endswith("or c is missing") for n in names)
    # a column without missing values in training: plain conditions, a later NaN makes them false
    X = np.array([[0.0], [1.0], [2.0]])
    b = Binarizer().fit(X)
    assert np.all(b.missing_ == MISSING_NONE)
    np.testing.assert_array_equal(b.transform(np.array([[np.nan]])), [[0, 0]])
    # every value of a column missing: no feature; only missing or present: "is missing" only
    b = Binarizer().fit(np.array([[np.nan, 1.0], [np.nan, np.nan], [np.nan, 1.0]]))
    assert b.n_binary_features_ == 1 and b.kind_[0] == IS_MISSING and b.feature_[0] == 1
    assert set(np.unique(Binarizer().fit(df).missing_)) <= {MISSING_NONE, MISSING_FALSE, MISSING_TRUE}


def test_predict_nan_in_column_without_training_nan_goes_to_heavier_child():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0.8).astype(int)  # the right side (x0 >= t) is the lighter one
    for m in (TopKTreeClassifier(k=2, max_depth=1), OptimalTreeClassifier(max_depth=1, solver="binary"),
              MinRankTreeClassifier()):
        m.fit(X, y)
        t = m.tree_
        root = 0
        l, r = t.children_left[root], t.children_right[root]
        heavier = l if t.value[l].sum() > t.value[r].sum() else r
        row = np.array([[np.nan, 0.0]]) if t.feature[root] == 0 else np.array([[0.0, np.nan]])
        if isinstance(m, MinRankTreeClassifier):
            row = np.where(np.isnan(row), np.nan, X[:1])
        leaf = m.apply(row)[0]
        node = heavier
        while t.children_left[node] >= 0:  # the heavier child's subtree: row must land inside it
            node = t.children_left[node]
        assert leaf in set(t.subtree_nodes(heavier)), type(m).__name__


def test_topk_with_missing_values_floor_and_consistency():
    rng = np.random.default_rng(5)
    n = 300
    df = _random_frame(rng, n, n_num=4, p_nan=0.2)
    x = df["x0"].fillna(2).to_numpy() + df["x1"].isna() * 3
    y = (x + rng.normal(scale=1.0, size=n) > 3).astype(int)
    for depth in (2, 3):
        g = _greedy_score(depth, df, y)
        for m in (TopKTreeClassifier(k=1, max_depth=depth), TopKTreeClassifier(k=3, max_depth=depth),
                  OptimalTreeClassifier(max_depth=depth, solver="binary", time_limit=20),
                  OptimalTreeClassifier(max_depth=depth, solver="binary", time_limit=1e-6)):
            m.fit(df, y)
            assert m.score(df, y) >= g - 1e-12
            assert m.training_error_ == pytest.approx(np.sum(m.predict(df) != y))
            assert m.tree_.missing_recorded


_QUESTION_MARK_SETS = ["audiology", "breast-cancer", "mushroom", "primary-tumor", "soybean", "vote"]


@pytest.mark.parametrize("name", _QUESTION_MARK_SETS)
def test_question_mark_datasets(name, data_dir):
    # the suite's data directory (conftest: --data-dir, TREELEARN_DATA_DIR or the shared default)
    if not (Path(data_dir) / "topk" / f"{name}.csv").exists():
        pytest.skip(f"the Top-k datasets are not in {data_dir}")
    from treelearn.datasets import load_dataset

    X, y = load_dataset(f"topk/{name}", data_dir)  # '?' -> missing (kept)
    assert X.isna().any().any()
    y = np.asarray(y)
    if len(y) > 2000:
        idx = np.random.default_rng(0).choice(len(y), 2000, replace=False)
        X, y = X.iloc[idx], y[idx]
    g = _greedy_score(3, X, y)
    for m in (TopKTreeClassifier(k=2, max_depth=3, time_limit=10),
              OptimalTreeClassifier(max_depth=2, solver="binary", time_limit=10)):
        m.fit(X, y)
        err = np.sum(m.predict(X) != y)
        assert m.training_error_ == pytest.approx(err)
        if m.max_depth == 3:
            assert m.score(X, y) >= g - 1e-12
        assert any(m.binarizer_.kind_ == IS_MISSING)


def test_min_rank_with_missing_values_consistent_and_equal_to_its_binary_features():
    rng = np.random.default_rng(2)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        df = _random_frame(rng, 30, n_num=2, p_nan=0.3)
        y = (df["x0"].isna().to_numpy() ^ (df["x1"].fillna(0).to_numpy() > 2)).astype(int)
        m = MinRankTreeClassifier().fit(df, y)
        np.testing.assert_array_equal(m.predict(df), y)  # consistent, through the missing directions
        # the same rank as the search on the binary features themselves (a 0/1 matrix)
        B = m.binarizer_.transform(df)
        keep = np.flatnonzero(B.min(axis=0) != B.max(axis=0))
        ref = MinRankTreeClassifier().fit(B[:, keep], y)
        assert m.rank_ == ref.rank_


def test_pruners_with_missing_values():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    for pruning in ("bound", "ccp", "mcart"):
        m = PrunedTreeClassifier(pruning=pruning, max_leaves=20, cv=3, random_state=0).fit(X, y)
        assert m.tree_.n_leaves <= m.unpruned_tree_.n_leaves
        assert m.score(X, y) > 0.6
        assert m.predict(np.full((1, 4), np.nan)).shape == (1,)


def test_query_learner_rejects_missing_values_by_name():
    X = np.array([[0.0, 1.0], [1.0, np.nan], [1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(TreeLearnValueError, match="missing"):
        QueryTreeClassifier().fit(X, [0, 1, 1, 0])
