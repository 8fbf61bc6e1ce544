"""Issue 14, exact mode at scale: ``n_jobs`` threads give the identical tree, and a fit's peak memory.

Threads share a large node's features (nodes of at least 2**15 rows x features); their records are
replayed in feature order through the one-thread selection rule, so every node array must equal
the ``n_jobs=1`` tree's bit for bit, including on exact ties between features (duplicated columns),
weights, missing values, many classes and best-first growth.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import make_classification

from treelearn import GreedyTreeClassifier
from treelearn._validation import TreeLearnValueError


def _arrays(est):
    t = est.tree_
    out = {"left": t.children_left, "right": t.children_right, "feature": t.feature, "threshold": t.threshold,
           "value": t.value, "n": t.n_node_samples, "impurity": t.impurity}
    if getattr(t, "missing_go_to_left", None) is not None:
        out["mleft"] = t.missing_go_to_left
    return out


def _data(kind):
    rng = np.random.default_rng(7)
    X, y = make_classification(n_samples=6000, n_features=12, n_informative=6, n_classes=3 if kind == "multi" else 2,
                               random_state=3)
    w = None
    if kind == "weights":
        w = rng.integers(1, 4, size=y.size).astype(float)
    elif kind == "float_weights":
        w = rng.uniform(0.1, 2.0, size=y.size)
    elif kind == "nan":
        X[rng.random(X.shape) < 0.1] = np.nan
    elif kind == "ties":  # exact ties between features: copies of the columns, rounded (few values)
        X = np.round(X, 1)
        X = np.hstack([X, X[:, ::-1]])
    elif kind == "integers":
        X = np.round(X * 3).astype(np.int64)
    return X, y, w


@pytest.mark.parametrize("kind", ["plain", "multi", "weights", "float_weights", "nan", "ties", "integers"])
@pytest.mark.parametrize("params", [{"max_depth": 6}, {"max_leaves": 20, "criterion": "gini"},
                                    {"min_samples_leaf": 30, "criterion": "kearns_mansour"}])
def test_identical_trees_for_any_n_jobs(kind, params):
    X, y, w = _data(kind)
    ref = _arrays(GreedyTreeClassifier(**params).fit(X, y, sample_weight=w))
    assert ref["left"].size > 3  # a real tree
    for n_jobs in (2, 3, -1):
        got = _arrays(GreedyTreeClassifier(n_jobs=n_jobs, **params).fit(X, y, sample_weight=w))
        assert got.keys() == ref.keys()
        for k in ref:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{k}, n_jobs={n_jobs}")


def test_ties_go_to_the_lowest_feature_with_threads():
    # column j + 6 duplicates column j: every split of the tree uses a column < 6 whatever the threads
    X, y, _ = _data("plain")
    X = np.hstack([X[:, :6], X[:, :6]])
    for n_jobs in (1, 2, 4):
        f = GreedyTreeClassifier(max_depth=5, n_jobs=n_jobs).fit(X, y).tree_.feature
        assert f.max() < 6


def test_user_criterion_with_threads_is_the_one_thread_tree():
    X, y, _ = _data("plain")

    def G(p):
        return 4.0 * p * (1.0 - p)
    a = GreedyTreeClassifier(criterion=G, max_depth=3).fit(X, y)
    b = GreedyTreeClassifier(criterion=G, max_depth=3, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)


@pytest.mark.parametrize("bad", [0, 1.5, "two"])
def test_bad_n_jobs_is_a_clear_error(bad):
    X, y, _ = _data("plain")
    with pytest.raises((TreeLearnValueError, ValueError, TypeError), match="n_jobs"):
        GreedyTreeClassifier(n_jobs=bad).fit(X[:100], y[:100])


def test_exact_thresholds_are_every_midpoint_of_the_values():
    from treelearn.data.binarize import numeric_thresholds
    from treelearn.learn.greedy.estimator import code_features

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=500), rng.integers(0, 5, 500), np.full(500, 2.0),
                         np.where(rng.random(500) < 0.2, np.nan, rng.normal(size=500))])
    cf = code_features(X)
    assert len(cf.thresholds) == 4
    for j in range(4):
        np.testing.assert_array_equal(cf.thresholds[j], numeric_thresholds(X[:, j][~np.isnan(X[:, j])], None))
        np.testing.assert_array_equal(cf.codes[j][~np.isnan(X[:, j])],
                                      np.searchsorted(cf.thresholds[j], X[:, j][~np.isnan(X[:, j])], side="right"))
    assert [t.size for t in cf.thresholds] == [t.size for t in cf.thresholds[:]]


_CHILD = """
import json, numpy as np
from treelearn import GreedyTreeClassifier

def rss_mb():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096 / 2**20

def hwm_mb():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM'):
                return int(line.split()[1]) / 1024

n, d = {n}, {d}
rng = np.random.default_rng(0)
X = rng.normal(size=(n, d))
y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 0).astype(np.int64)
GreedyTreeClassifier(max_depth=2).fit(X[:2000], y[:2000])  # imports and first-call costs
open('/proc/self/clear_refs', 'w').write('5')
base = rss_mb()
GreedyTreeClassifier(max_depth=6, n_jobs={n_jobs}).fit(X, y)
print('RESULT ' + json.dumps({{'grow_mb': hwm_mb() - base, 'input_mb': X.nbytes / 2**20}}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc peak RSS")
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_exact_fit_peak_memory(n_jobs):
    """Peak RSS growth of an exact fit on float64 input (every value distinct: the worst case of
    the exact mode): at most the input (no transposed or float64 copy of it) plus the int32 codes
    plus the sorted entries (12 bytes per cell) plus the distinct values kept for the midpoints
    (8 bytes per cell), + 48 MiB for the interpreter's and the threads' scratch."""
    n, d = 300_000, 10
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_CHILD.format(n=n, d=d, n_jobs=n_jobs))],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.split("RESULT ")[1])
    cells_mb = n * d / 2**20
    bound = cells_mb * (4 + 12 + 8) + 48 + (n_jobs - 1) * 12 * n / 2**20
    assert res["grow_mb"] <= bound, res
