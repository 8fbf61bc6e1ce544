"""Issue 24, histogram mode with ``n_jobs`` threads: the same tree for any number of threads.

A large node's histogram is built by threads over blocks of features (each cell summed by one
thread, over the node's rows in their order), a split's mark sums its sides on one thread while
the others record the rows' sides, and the partition moves row chunks at counted offsets: every
node array must equal the ``n_jobs=1`` tree's bit for bit. The threaded path runs only on nodes of
at least ``HistFinder::PAR_MIN`` entries (rows x features); the tests lower that threshold
(``hist_par_min`` of the compiled growth) so that small and large nodes mix on small data, and
check through the growth's ``hist_threaded`` count that threads did build histograms. Beyond the
trees (which the tie tolerance makes robust to a last bit), every histogram made (built or by
subtraction) must have the same bits: the growth's digests of them are compared, and the root's
against numpy's sums in row order.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from treelearn import GreedyTreeClassifier, GreedyTreeRegressor
from treelearn.learn.greedy import _greedy


class _Counts(list):
    def __init__(self):
        super().__init__()
        self.state = {"par_min": -1}
        self.digests = []


@pytest.fixture
def threaded_counts(monkeypatch):
    """The compiled growth with a lowered thread threshold (``par_min``, set by the test); each
    growth's count of histograms built on threads is appended to the returned list."""
    counts = _Counts()
    state = counts.state
    grow = _greedy.grow_coded

    def lowered(*args, **kwargs):
        out = grow(*args, hist_par_min=state["par_min"], hist_digests=True, **kwargs)
        counts.append(out["hist_threaded"])
        counts.digests.append(out["hist_digests"])
        return out

    monkeypatch.setattr(_greedy, "grow_coded", lowered)
    return counts


def _arrays(est):
    t = est.tree_
    out = {"left": t.children_left, "right": t.children_right, "feature": t.feature, "threshold": t.threshold,
           "value": t.value, "n": t.n_node_samples, "impurity": t.impurity}
    for extra in ("missing_go_to_left", "weighted_n_node_samples"):
        if getattr(t, extra, None) is not None:
            out[extra] = getattr(t, extra)
    return out


def _same_for_any_n_jobs(make, fit, counts, par_min):
    counts.state["par_min"] = par_min
    ref = _arrays(fit(make(1)))
    assert counts[-1] == 0  # one thread: no threaded build
    ref_digests = counts.digests[-1]
    assert ref["left"].size > 15  # a real tree
    assert len(ref_digests) > 15
    for n_jobs in (2, 3, -1):
        got = _arrays(fit(make(n_jobs)))
        assert counts[-1] > 0, f"n_jobs={n_jobs}: no histogram was built on threads"
        assert counts.digests[-1] == ref_digests, f"n_jobs={n_jobs}: histograms differ in their bits"
        assert got.keys() == ref.keys()
        for k in ref:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{k}, n_jobs={n_jobs}, par_min={par_min}")


def _regression_data(kind, n=5000, d=9, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = 2.0 * X[:, 0] + np.sin(3.0 * X[:, 1]) + (X[:, 2] > 0.3) + 0.3 * rng.normal(size=n)
    w = None
    if kind == "poisson":
        y = rng.poisson(np.exp(0.5 * X[:, 0] + 0.3 * np.abs(X[:, 1]))).astype(float)
    elif kind == "weights":
        w = rng.uniform(0.1, 3.0, size=n)
    elif kind == "nan":
        X[rng.random(X.shape) < 0.1] = np.nan
    elif kind == "two_outputs":  # C channels per row: the general kernel, not the four-lane one
        y = np.column_stack([y, X[:, 3] - y])
    return X, y, w


@pytest.mark.parametrize("par_min", [0, 4000])
@pytest.mark.parametrize("criterion,kind,params", [
    ("squared_error", "plain", {"max_depth": 8}),
    ("friedman_mse", "plain", {"max_depth": 8}),
    ("poisson", "poisson", {"max_depth": 7}),
    ("squared_error", "weights", {"max_depth": 8, "min_samples_leaf": 5}),
    ("squared_error", "nan", {"max_depth": 8}),
    ("friedman_mse", "nan", {"max_leaf_nodes": 40}),
    ("squared_error", "plain", {"max_leaf_nodes": 60}),
    ("squared_error", "two_outputs", {"max_depth": 6}),
])
def test_hist_threads_give_one_tree_regressor(threaded_counts, par_min, criterion, kind, params):
    X, y, w = _regression_data(kind)

    def make(n_jobs):
        return GreedyTreeRegressor(criterion=criterion, max_thresholds=63, n_jobs=n_jobs, **params)

    _same_for_any_n_jobs(make, lambda est: est.fit(X, y, sample_weight=w), threaded_counts, par_min)


def _classification_data(kind, n=5000, seed=3):
    X, y = make_classification(n_samples=n, n_features=10, n_informative=6, n_classes=3, random_state=seed)
    if kind == "nan":
        X[np.random.default_rng(seed).random(X.shape) < 0.1] = np.nan
    return X, y


@pytest.mark.parametrize("par_min", [0, 4000])
@pytest.mark.parametrize("criterion,kind,params", [
    ("entropy", "plain", {"max_depth": 8}),
    ("gini", "plain", {"max_depth": 8}),
    ("gini", "class_weight", {"max_depth": 8}),
    ("entropy", "nan", {"max_depth": 8}),
    ("gini", "nan", {"max_leaf_nodes": 40}),
])
def test_hist_threads_give_one_tree_classifier(threaded_counts, par_min, criterion, kind, params):
    X, y = _classification_data(kind)
    cw = {0: 1.0, 1: 2.5, 2: 0.7} if kind == "class_weight" else None

    def make(n_jobs):
        return GreedyTreeClassifier(criterion=criterion, max_thresholds=63, class_weight=cw, n_jobs=n_jobs, **params)

    _same_for_any_n_jobs(make, lambda est: est.fit(X, y), threaded_counts, par_min)


def test_hist_threads_give_one_tree_at_the_default_threshold(threaded_counts):
    # 240,000 rows x 9 features: the root and the first two levels are above PAR_MIN (2**20 entries)
    X, y, _ = _regression_data("plain", n=240000)

    def make(n_jobs):
        return GreedyTreeRegressor(max_depth=10, max_thresholds=255, n_jobs=n_jobs)

    _same_for_any_n_jobs(make, lambda est: est.fit(X, y), threaded_counts, -1)


def test_hist_threads_give_one_tree_within_the_memory_budget():
    # no budget for waiting histograms: every child rebuilt from rows (on threads), none by
    # subtraction; the same tree as one thread, and the same as with the default budget
    from treelearn.learn.greedy.estimator import code_features

    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 6)).round(1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, 3000)
    w = rng.random(3000) + 0.5
    cf = code_features(X, None, 16)
    for max_leaves in (-1, 30):
        args = (cf.codes, cf.n_codes, cf.is_cat, cf.cat_only, cf.miss_code, y.astype(np.int64), w, 3, 1, 8,
                max_leaves, 1, 0.0, True)
        ref = _greedy.grow_coded(*args, 0.0)
        for n_jobs in (2, 3):
            got = _greedy.grow_coded(*args, 0.0, n_jobs=n_jobs, hist_par_min=0, hist_digests=True)
            assert got["hist_threaded"] > 0
            assert got["hist_digests"] == _greedy.grow_coded(*args, 0.0, hist_digests=True)["hist_digests"]
            for key in ("children_left", "feature", "split_code", "n_node_samples", "missing_go_to_left", "value",
                        "impurity"):
                np.testing.assert_array_equal(got[key], ref[key], err_msg=f"{key}, n_jobs={n_jobs}")



def _fnv(h, hc):
    """The growth's digest of a histogram: FNV-1a over its cells' bits, then its counts."""
    x, mask = 1469598103934665603, (1 << 64) - 1
    for b in list(np.ascontiguousarray(h, dtype=np.float64).view(np.uint64).ravel()) + list(hc.astype(np.uint64)):
        x = ((x ^ int(b)) * 1099511628211) & mask
    return x


@pytest.mark.parametrize("task", ["regression", "classes"])
@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_hist_threads_give_one_tree_root_histogram_is_the_row_order_sum(task, n_jobs):
    # the root histogram (every row, in row order) against numpy's unbuffered sums in that order
    from treelearn.learn.greedy.estimator import code_features

    rng = np.random.default_rng(11)
    n = 2000
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    cf = code_features(X, None, 15)
    codes = np.asarray(cf.codes)
    offset = np.concatenate([[0], np.cumsum(cf.n_codes)])
    cells = (codes + offset[:-1, None]).T  # (n, d): each row's cell per feature, in row order
    hc = np.bincount(cells.ravel(), minlength=offset[-1]).astype(np.int64)
    w = rng.uniform(0.2, 2.0, size=n)
    if task == "regression":
        y = rng.normal(size=n)
        stats = np.column_stack([w, w * y, w * y * y])
        lanes = np.column_stack([stats, np.ones(n)])  # the fourth lane: the row count
        h = np.zeros((offset[-1], 4))
        np.add.at(h, cells.ravel(), np.repeat(lanes, cells.shape[1], axis=0))
        labels, C, crit, kw = np.zeros(n, np.int64), 3, 10, {"stats": stats}
    else:
        labels, C, crit, kw = rng.integers(0, 3, n).astype(np.int64), 3, 0, {}
        h = np.zeros((offset[-1], C))
        np.add.at(h, (cells.ravel(), np.repeat(labels, cells.shape[1])), np.repeat(w, cells.shape[1]))
    out = _greedy.grow_coded(cf.codes, cf.n_codes, cf.is_cat, cf.cat_only, cf.miss_code, labels, w, C, crit, 3, -1,
                             1, 0.0, True, n_jobs=n_jobs, hist_par_min=0, hist_digests=True, **kw)
    assert (out["hist_threaded"] > 0) == (n_jobs > 1)
    assert out["hist_digests"][0] == _fnv(h, hc)
