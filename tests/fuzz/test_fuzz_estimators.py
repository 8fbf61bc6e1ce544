"""Fuzzing every estimator over shapes, dtypes, values, labels, weights and parameters.

Property: a fit either raises a named error (see ``fuzz_harness``) or gives a fitted model whose
predictions have the right shape and labels and whose probabilities are probabilities; nothing
crashes or hangs (fits run in the worker process under a wall-clock and memory limit). Where an
independent reference exists it is checked too: the optimal tree's weighted training error is at
most scikit-learn's CART tree's of the same depth, the min-rank tree is consistent and its rank at
most that of a fully grown CART tree, and every learner gives the same tree when all weights are
multiplied by 2**k.
"""
from __future__ import annotations

import json

import fuzz_harness as fh
import numpy as np
import pytest
from hypothesis import strategies as st
from strategies import ESTIMATORS, LIMITS, dataset, hostile_params, valid_params

pytestmark = pytest.mark.fuzz


def _labels_equal(a, b) -> bool:
    return len(a) == len(b) and all((x == y) is True or bool(x == y) for x, y in zip(a.tolist(), b.tolist()))


def _check_fitted(area, res, X, y, case) -> None:
    pred, proba, classes = res["pred"], res["proba"], res["classes"]
    n = X.shape[0]
    problems = []
    if pred.shape != (n,):
        problems.append(f"predict has shape {pred.shape}, expected ({n},)")
    if proba.shape != (n, len(classes)):
        problems.append(f"predict_proba has shape {proba.shape}, expected ({n}, {len(classes)})")
    elif not (np.all(np.isfinite(proba)) and np.all(proba >= 0) and np.allclose(proba.sum(axis=1), 1.0)):
        problems.append(f"predict_proba rows are not probabilities: {proba[:3].tolist()}")
    cls_list = classes.tolist()
    if any(p not in cls_list for p in pred.tolist()):
        problems.append(f"a prediction is not one of classes_ {cls_list[:5]}")
    distinct = []
    for v in np.asarray(y).tolist():
        if v not in distinct:
            distinct.append(v)
    if len(cls_list) != len(distinct) or any(v not in cls_list for v in distinct):
        problems.append(f"classes_ {cls_list[:6]} are not the labels of y {distinct[:6]}")
    fh.record(area, "wrong" if problems else "ok", case, "; ".join(problems))


def _fit(area, name, params, X, y, w):
    case = fh.case_repr(estimator=name, params=params, X=X, y=y, sample_weight=w)
    res = fh.call("fit", name, params, X, y, w, X)
    if fh.expect_clean(area, res, case):
        _check_fitted(area, res, X, y, case)
        return res, case
    return None, case


# ---------------------------------------------------------------------------------- every estimator
@pytest.mark.parametrize("name", ESTIMATORS)
def test_fuzz_fit_any_data(name):
    """Any data (numeric of every dtype, object columns, hostile labels and weights), valid params."""
    binary = name == "QueryTreeClassifier"
    strategy = st.tuples(dataset(binary=binary), valid_params(name))

    def check(case):
        (X, y, w), params = case
        _fit(f"fit {name}", name, params, X, y, w)

    fh.run(strategy, check, examples=8 if name in ("PrunedTreeClassifier",) else 12)


# ---------------------------------------------------------------------------------- references
def _clean_numeric():
    @st.composite
    def data(draw):
        n = draw(st.integers(2, 24))
        d = draw(st.integers(1, 3))
        X = np.array(draw(st.lists(st.integers(0, 4), min_size=n * d, max_size=n * d)), dtype=float).reshape(n, d)
        y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
        w = draw(st.one_of(st.none(), st.lists(st.integers(1, 5), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=float))))
        return X, y, w
    return data()


def test_fuzz_optimal_against_cart():
    """The optimal tree's weighted training error is at most CART's at the same depth."""
    area = "reference OptimalTreeClassifier vs CART"

    def check(case):
        (X, y, w), depth = case
        params = dict(max_depth=depth, max_binary_features=None, max_thresholds=None, **LIMITS["OptimalTreeClassifier"])
        res, text = _fit(area, "OptimalTreeClassifier", params, X, y, w)
        if res is None or not res["values"].get("is_optimal_"):
            return
        ref = fh.call("reference", X, y, w, depth)
        if not fh.expect_clean(area + " (sklearn)", ref, text):
            return
        tree = json.loads(res["tree_json"])
        leaves = [row for row, left in zip(tree["nodes"]["value"], tree["nodes"]["children_left"]) if left < 0]
        err = sum(sum(r) - max(r) for r in leaves)
        total = float(np.sum(w)) if w is not None else float(len(y))
        ok = err <= ref["error"] + 1e-9 * total and abs(res["values"]["training_error_"] - err) <= 1e-9 * total
        fh.record(area, "ok" if ok else "wrong", text,
                  f"optimal error {err} (training_error_ {res['values']['training_error_']}) > CART's {ref['error']}")

    fh.run(st.tuples(_clean_numeric(), st.integers(1, 3)), check, examples=10)


def test_fuzz_min_rank_against_cart():
    """The min-rank tree is consistent with a consistent sample and its rank is at most that of
    a fully grown CART tree (another consistent tree)."""
    area = "reference MinRankTreeClassifier vs CART"

    def check(case):
        X, y, w = case
        _, first = np.unique(X, axis=0, return_inverse=True)
        first = first.ravel()
        # make the sample consistent: equal rows get the label of the first of them
        y = y.copy()
        for g in np.unique(first):
            y[first == g] = y[np.flatnonzero(first == g)[0]]
        res, text = _fit(area, "MinRankTreeClassifier", dict(LIMITS["MinRankTreeClassifier"]), X, y, None)
        if res is None:
            return
        ref = fh.call("reference", X, y, None, None)
        if not fh.expect_clean(area + " (sklearn)", ref, text):
            return
        ok = _labels_equal(res["pred"], y) and res["rank"] <= ref["rank"]
        fh.record(area, "ok" if ok else "wrong", text,
                  f"rank {res['rank']} vs CART's {ref['rank']}, consistent={_labels_equal(res['pred'], y)}")

    fh.run(_clean_numeric(), check, examples=10)


@pytest.mark.parametrize("name", ESTIMATORS[:5])
def test_fuzz_weight_scaling_invariance(name):
    """Multiplying every weight by 2**k (k up to +-600) gives the same tree, counts times 2**k."""
    area = f"weights x 2**k {name}"

    def check(case):
        (X, y, w), k = case
        params = {"GreedyTreeClassifier": dict(max_leaves=4, criterion="kearns_mansour"),
                  "PrunedTreeClassifier": dict(pruning="bound")}.get(name, dict(LIMITS.get(name, {})))
        if w is None:
            w = np.ones(len(y))
        base, text = _fit(area, name, params, X, y, w)
        scaled, text2 = _fit(area, name, params, X, y, w * 2.0**k)
        if base is None or scaled is None:
            return
        a, b = json.loads(base["tree_json"])["nodes"], json.loads(scaled["tree_json"])["nodes"]
        same = all(a[key] == b[key] for key in ("children_left", "children_right", "feature", "threshold", "kind"))
        va, vb = np.array(a["value"]), np.array(b["value"])
        counts = np.allclose(va * 2.0**k, vb, rtol=1e-12, atol=0)
        fh.record(area, "ok" if same and counts else "wrong", text2,
                  f"the tree changed when the weights were multiplied by 2**{k}" if not same else
                  "the counts are not multiplied by the weight factor")

    fh.run(st.tuples(_clean_numeric(), st.sampled_from([-600, -300, -40, 1, 40, 300, 600])), check, examples=6)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_fuzz_one_class_sets_every_attribute(name):
    """A fit on one (weighted) class sets every fitted attribute an ordinary fit sets."""
    area = f"one class {name}"

    def check(case):
        X, y, w = case
        X = (X > 1).astype(float)
        params = dict(LIMITS.get(name, {}))
        y = np.where(np.arange(len(y)) % 2 == 0, 0, 1)
        ref, _ = _fit(area, name, params, X, y, None)
        if ref is None:
            return
        w1 = (y == 1).astype(float)  # every weighted row has class 1
        one, text = _fit(area, name, params, X, y, w1)
        if one is None:
            return
        missing = sorted(set(ref["attrs"]) - set(one["attrs"]))
        fh.record(area, "wrong" if missing or one["n_leaves"] != 1 else "ok", text,
                  f"one-class fit lacks {missing}" if missing else f"{one['n_leaves']} leaves")

    fh.run(_clean_numeric().filter(lambda c: len(c[1]) >= 2), check, examples=3)


# ---------------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("name", ESTIMATORS)
def test_fuzz_hostile_parameters(name):
    """One parameter hostile (None, huge, negative, NaN, strings, objects ...), the data valid."""
    area = f"params {name}"
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(24, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)

    def check(params):
        _fit(area, name, params, X, y, None)

    fh.run(hostile_params(name), check, examples=15)


# ---------------------------------------------------------------------------------- larger inputs
def test_fuzz_min_rank_on_long_threshold_concepts():
    """Long form only: one float column of thousands of rows, a one-threshold concept with
    alternating labels near the threshold (the issue's segfault), within time and memory limits
    (the sample preparation, n^2 bytes, is inside the clock and refused over the cap: a
    RankSearchLimitError, never a hang past the harness's call limit)."""
    if not fh.Config.long:
        pytest.skip("long fuzz form only (--fuzz-long)")
    area = "large MinRankTreeClassifier"

    def check(n):
        x = np.arange(n, dtype=float).reshape(-1, 1)
        y = np.arange(n) % 2
        _fit(area, "MinRankTreeClassifier", dict(time_limit=20.0, memory_limit_mb=256), x, y, None)

    fh.run(st.integers(1000, 30000), check, examples=3)
