"""The continuous-feature optimal search (issue 13): OptimalTreeClassifier(solver="continuous").

References: a brute force over every tree of every node-local threshold (small random data), the
binary optimal search with every threshold, and pycontree (ConTree) on the bundled datasets."""
from functools import lru_cache

import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TopKTreeClassifier
from treelearn._validation import TreeLearnValueError
from treelearn.learn.continuous.solver import continuous_fit
from treelearn.learn.greedy.estimator import GreedyTreeClassifier


def brute_force(X, y, w, n_classes, depth):
    """Minimum weighted misclassifications over all trees of depth <= depth with splits x_f >= t
    for every threshold separating two distinct values of x_f among the node's rows."""
    n, d = X.shape

    @lru_cache(maxsize=None)
    def opt(rows, h):
        r = np.asarray(rows)
        cnt = np.bincount(y[r], weights=w[r], minlength=n_classes)
        best = cnt.sum() - cnt.max()
        if h == 0 or best == 0:
            return best
        for f in range(d):
            vals = np.unique(X[r, f])
            for a, b in zip(vals[:-1], vals[1:]):
                t = (a + b) / 2
                go = X[r, f] >= t
                left, right = tuple(r[~go]), tuple(r[go])
                lo = opt(left, h - 1)
                if lo >= best:
                    continue
                best = min(best, lo + opt(right, h - 1))
        return best

    return opt(tuple(range(n)), depth)


def _true_error(model, X, y, w):
    return float(np.sum(w * (model.predict(X) != y)))


def _random_case(rng):
    n = int(rng.integers(5, 14))
    d = int(rng.integers(1, 4))
    C = int(rng.integers(2, 4))
    X = rng.integers(0, int(rng.integers(2, 6)), size=(n, d)).astype(float)  # ties and duplicates
    if rng.random() < 0.3:
        X[:, rng.integers(0, d)] = 1.5  # a constant column
    if rng.random() < 0.3:
        X = X + rng.normal(scale=0.01, size=X.shape) * (rng.random(X.shape) < 0.5)
    y = rng.integers(0, C, size=n)
    if np.unique(y).size < 2:
        y[0], y[-1] = 0, 1
    w = np.ones(n)
    if rng.random() < 0.5:
        w = rng.choice([0.5, 1.0, 2.0, 3.25], size=n)
    return X, y, w, C


@pytest.mark.parametrize("seed", range(40))
def test_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y, w, C = _random_case(rng)
    for h in (1, 2, 3):
        ref = brute_force(X, y, w, C, h)
        m = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(X, y, sample_weight=w)
        assert m.is_optimal_ and m.solver_ == "continuous"
        assert m.training_error_ == pytest.approx(ref, abs=1e-9), (seed, h)
        assert _true_error(m, X, y, w) == pytest.approx(ref, abs=1e-9)
        assert m.lower_bound_ == pytest.approx(ref, abs=1e-9)
        assert m.get_depth() <= h
        # the search alone (no greedy incumbent) and every ablation switch: the same optimum
        for sw in ({}, {"use_intervals": False}, {"use_skip": True}, {"use_d2": False},
                   {"use_cache": False, "start_best": True}):
            _, info = continuous_fit(X, y.astype(np.int64), C, w, None, max_depth=h, incumbent=False, **sw)
            assert info["error"] == pytest.approx(ref, abs=1e-9), (seed, h, sw)


def test_thresholds_are_node_local_midpoints():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4)).round(2)
    y = ((X[:, 0] > 0.1) ^ (X[:, 1] + X[:, 2] > 0.3)).astype(int)
    y[rng.random(300) < 0.1] ^= 1
    m = OptimalTreeClassifier(max_depth=3, solver="continuous").fit(X, y)
    t = m.tree_
    path = t.decision_path(X).toarray().astype(bool)
    for node in np.flatnonzero(t.children_left >= 0):
        rows = path[:, node]
        x = X[rows, t.feature[node]]
        left, right = x[x < t.threshold[node]], x[x >= t.threshold[node]]
        assert left.size and right.size
        assert t.threshold[node] == pytest.approx((left.max() + right.min()) / 2)


@pytest.mark.parametrize("name,h", [("iris", 2), ("iris", 3), ("wine", 2), ("wine", 3)])
def test_equals_binary_search_every_threshold(name, h):
    from treelearn.datasets import load_dataset

    X, y = load_dataset(f"sklearn/{name}")
    X = np.asarray(X, dtype=np.float64)
    cont = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(X, y)
    binary = OptimalTreeClassifier(max_depth=h, solver="binary", max_binary_features=None).fit(X, y)
    assert cont.is_optimal_ and binary.is_optimal_
    assert cont.training_error_ == binary.training_error_
    # the default (auto) uses the continuous search for every threshold
    auto = OptimalTreeClassifier(max_depth=h, max_binary_features=None).fit(X, y)
    assert auto.solver_ == "continuous" and auto.training_error_ == cont.training_error_


def test_categorical_one_hot_and_weights_match_binary():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 120
    df = pd.DataFrame({"a": rng.normal(size=n).round(1), "b": rng.choice(["x", "y", "z", "u"], size=n),
                       "c": rng.integers(0, 5, size=n)})
    y = ((df.a > 0) & (df.b != "y") | (df.c == 3)).astype(int).to_numpy().copy()
    y[rng.random(n) < 0.15] ^= 1
    w = rng.choice([1.0, 2.5], size=n)
    for h in (2, 3):
        c = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(df, y, sample_weight=w)
        b = OptimalTreeClassifier(max_depth=h, solver="binary", max_binary_features=None).fit(df, y, sample_weight=w)
        assert c.training_error_ == pytest.approx(b.training_error_)
        assert _true_error(c, df, y, w) == pytest.approx(c.training_error_)
        assert set(c.tree_.kind[c.tree_.children_left >= 0]) <= {0, 1}


def test_multiclass_against_binary():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 3)).round(1)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.3, 1.0])
    y[rng.random(200) < 0.1] = 0
    for h in (1, 2, 3):
        c = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(X, y)
        b = OptimalTreeClassifier(max_depth=h, solver="binary", max_binary_features=None).fit(X, y)
        assert c.training_error_ == b.training_error_


def test_time_limit_returns_at_least_greedy():
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 8))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > X[:, 3])).astype(int)
    y[rng.random(n) < 0.2] ^= 1
    m = OptimalTreeClassifier(max_depth=4, solver="continuous", time_limit=0.3).fit(X, y)
    g = GreedyTreeClassifier(max_depth=4).fit(X, y)
    assert m.timed_out_ and not m.is_optimal_
    assert m.training_error_ <= g.tree_.training_misclassifications() + 1e-9
    assert _true_error(m, X, y, np.ones(n)) == pytest.approx(m.training_error_)
    assert 0 <= m.lower_bound_ <= m.training_error_
    assert m.get_depth() <= 4


def test_bad_parameters():
    X = np.arange(20.0).reshape(10, 2)
    y = np.array([0, 1] * 5)
    with pytest.raises(TreeLearnValueError, match="solver"):
        OptimalTreeClassifier(solver="fast").fit(X, y)
    with pytest.raises(TreeLearnValueError, match="memory_limit_mb"):
        OptimalTreeClassifier(solver="continuous", memory_limit_mb=1e-5).fit(X, y)


def test_binary_input_auto_keeps_binary_search():
    rng = np.random.default_rng(2)
    B = rng.integers(0, 2, size=(200, 10)).astype(np.uint8)
    y = (B[:, 0] ^ B[:, 1]).astype(int)
    a = OptimalTreeClassifier(max_depth=2, max_binary_features=None).fit(B, y)
    c = OptimalTreeClassifier(max_depth=2, solver="continuous").fit(B, y)
    assert a.solver_ == "binary" and c.solver_ == "continuous"
    assert a.training_error_ == c.training_error_ == 0


PYCONTREE_MSG = "pycontree (the test extra) is not installed: pip install pycontree"


def _pycontree():
    try:
        from pycontree import ConTree
    except ImportError:
        pytest.skip(PYCONTREE_MSG)
    return ConTree


def _check_against_pycontree(X, y, h):
    ConTree = _pycontree()
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    keep = ~np.isnan(X).any(axis=1)
    X, y = X[keep], y[keep]
    n_max = 1500 if h <= 2 else 300  # a fixed sample keeps the test short
    if X.shape[0] > n_max:
        idx = np.random.default_rng(0).choice(X.shape[0], n_max, replace=False)
        X, y = X[idx], y[idx]
    _, yc = np.unique(y, return_inverse=True)
    peer = ConTree(max_depth=h, time_limit=60)
    peer.fit(X, yc)
    peer_err = int((peer.predict(X) != yc).sum())
    m = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(X, yc)
    assert m.is_optimal_
    assert m.training_error_ == peer_err


# breast cancer at depth 3 (about 2-20 s each) is in benchmarks/bench_continuous.py
@pytest.mark.parametrize("name,h", [("iris", 2), ("iris", 3), ("wine", 2), ("wine", 3), ("breast_cancer", 2)])
def test_equals_pycontree(name, h):
    from treelearn.datasets import load_dataset

    _check_against_pycontree(*load_dataset(f"sklearn/{name}"), h)


@pytest.mark.parametrize("name,h", [("telescope", 2), ("spambase", 2), ("avila-train", 2), ("dry-bean", 2),
                                    ("electrical-grid-stability", 2), ("occupancy-estimation", 2),
                                    ("credit-card", 2), ("avila-train", 3), ("telescope", 3)])
def test_equals_pycontree_shared(name, h, data_dir):
    from treelearn.datasets import load_dataset

    _check_against_pycontree(*load_dataset(f"topk/{name}", data_dir), h)


def test_ctrl_c_stops_the_search():
    import signal

    if not hasattr(signal, "setitimer"):
        pytest.skip("no interval timer on this platform")
    rng = np.random.default_rng(4)
    n = 3000
    X = rng.normal(size=(n, 10))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > X[:, 3])).astype(int)
    y[rng.random(n) < 0.25] ^= 1

    assert _interrupted_after(0.5, lambda: OptimalTreeClassifier(max_depth=5, solver="continuous").fit(X, y)) < 30


def _interrupted_after(seconds, run):
    """Run ``run()`` with a KeyboardInterrupt raised by a SIGALRM handler after ``seconds`` (as
    Ctrl-C would); asserts that it stops with KeyboardInterrupt and returns the time it took."""
    import signal
    import time

    def handler(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, handler)
    t0 = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return time.perf_counter() - t0


@pytest.mark.parametrize("seed", range(6))
def test_threads_give_the_same_optimum(seed):
    rng = np.random.default_rng(100 + seed)
    X, y, w, C = _random_case(rng)
    X = np.vstack([X] * 3) + rng.normal(scale=0.2, size=(3 * X.shape[0], X.shape[1]))
    y = np.concatenate([y] * 3)
    w = np.concatenate([w] * 3)
    h = 2 + seed % 2
    one = OptimalTreeClassifier(max_depth=h, solver="continuous", n_jobs=1).fit(X, y, sample_weight=w)
    two = OptimalTreeClassifier(max_depth=h, solver="continuous", n_jobs=3).fit(X, y, sample_weight=w)
    assert two.is_optimal_ and one.is_optimal_
    assert two.training_error_ == pytest.approx(one.training_error_)
    assert _true_error(two, X, y, w) == pytest.approx(two.training_error_)
    if X.shape[0] <= 40 and h == 2:
        assert two.training_error_ == pytest.approx(brute_force(X, y, w, C, h))


def test_threads_time_limit_and_memory_cap():
    rng = np.random.default_rng(7)
    n = 3000
    X = rng.normal(size=(n, 8))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > X[:, 3])).astype(int)
    y[rng.random(n) < 0.2] ^= 1
    m = OptimalTreeClassifier(max_depth=4, solver="continuous", time_limit=0.5, n_jobs=4).fit(X, y)
    g = GreedyTreeClassifier(max_depth=4).fit(X, y)
    assert m.timed_out_ and not m.is_optimal_
    assert m.training_error_ <= g.tree_.training_misclassifications() + 1e-9
    assert 0 <= m.lower_bound_ <= m.training_error_
    # a cap that holds the sorted columns once but not once per thread: fewer threads, same search
    _, info = continuous_fit(X, y, 2, None, None, max_depth=4, time_limit=0.3, memory_limit_mb=1.75, n_jobs=8)
    assert info["threads_used"] < 8


@pytest.mark.parametrize("C,weighted,depth", [(2, False, 2), (2, False, 4), (2, True, 3), (3, False, 3), (3, True, 2)])
def test_memory_pre_check_is_a_lower_bound_of_what_the_search_counts(C, weighted, depth):
    """The Python pre-check refuses a cap before the columns are copied and sorted: it must never
    count more than the compiled search does once it has ranked them (else it would refuse caps the
    search fits in), and a cap between the two is refused by the search with the same error."""
    from treelearn._limits import ResourceLimitError
    from treelearn.learn.continuous.solver import sorted_columns_bytes

    rng = np.random.default_rng(C + depth)
    n, d = 900, 5
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1])  # few distinct values
    y = rng.integers(0, C, size=n)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    _, info = continuous_fit(X, y, C, w, None, max_depth=depth, time_limit=0.2)
    least = sorted_columns_bytes(n, d, depth, C, weighted)
    # all it cannot know is the columns' distinct values (8 bytes each, counted after ranking)
    values = 8.0 * sum(np.unique(X[:, j]).size for j in range(d)) + 16.0 * d
    assert least <= info["fixed_bytes"] <= least + values
    held = 8.0 * n * (d + 2)  # the fit's own copies, which the pre-check adds
    cap_mb = (least + held + 0.5 * (info["fixed_bytes"] - least)) / 2 ** 20 + 1e-9
    with pytest.raises(ResourceLimitError, match="too small for the sorted columns"):
        continuous_fit(X, y, C, w, None, max_depth=depth, memory_limit_mb=cap_mb, time_limit=0.2)


def test_topk_all_thresholds_uses_the_continuous_solver():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    opt = OptimalTreeClassifier(max_depth=2, max_binary_features=None).fit(X, y)
    for k in ("all", 10 ** 6):
        t = TopKTreeClassifier(k=k, max_depth=2, max_binary_features=None).fit(X, y)
        assert t.solver_ == "continuous" and t.is_optimal_
        assert t.training_error_ == opt.training_error_
    small_k = TopKTreeClassifier(k=3, max_depth=2, max_binary_features=None).fit(X, y)
    assert small_k.solver_ == "binary"
    quantiles = TopKTreeClassifier(k="all", max_depth=2, max_binary_features=100).fit(X, y)
    assert quantiles.solver_ == "binary"
    default = TopKTreeClassifier(k="all", max_depth=2).fit(X, y)  # ("auto": every threshold is cheap here)
    assert default.solver_ == "continuous" and default.training_error_ == opt.training_error_
    # the binary search over every threshold reaches the same optimum
    binary = OptimalTreeClassifier(max_depth=2, max_binary_features=None, solver="binary").fit(X, y)
    assert binary.training_error_ == opt.training_error_


def test_ctrl_c_stops_a_threaded_search():
    import os
    import signal
    import threading
    import time

    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(n, 10))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > X[:, 3])).astype(int)
    y[rng.random(n) < 0.25] ^= 1
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    # SIGINT may be ignored when the test runner is a background job: Python's handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            OptimalTreeClassifier(max_depth=5, solver="continuous", n_jobs=2).fit(X, y)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - t0 < 30


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_small_data_time_out_falls_back_to_greedy(n_jobs):
    # fewer cells than GREEDY_FIRST_CELLS: the greedy tree is grown after the time-out
    from treelearn.learn.continuous.solver import GREEDY_FIRST_CELLS

    rng = np.random.default_rng(11)
    n, d = 1500, 8
    assert n * d < GREEDY_FIRST_CELLS
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (X[:, 2] > X[:, 3])).astype(int)
    y[rng.random(n) < 0.2] ^= 1
    m = OptimalTreeClassifier(max_depth=4, solver="continuous", time_limit=0.05, n_jobs=n_jobs).fit(X, y)
    g = GreedyTreeClassifier(max_depth=4).fit(X, y)
    assert m.timed_out_ and not m.is_optimal_
    assert m.training_error_ <= g.tree_.training_misclassifications() + 1e-9
    assert _true_error(m, X, y, np.ones(n)) == pytest.approx(m.training_error_)
    assert 0 <= m.lower_bound_ <= m.training_error_


def test_depth2_grows_the_greedy_tree_only_after_a_time_out():
    """At depth 2 the search alone is about as fast as the greedy tree: below
    GREEDY_FIRST_CELLS_DEPTH2 cells a finished search grows none (no greedy error), at depth 3 the
    same data (over GREEDY_FIRST_CELLS) grows it first; the tree is the optimum either way."""
    from treelearn.learn.continuous.solver import GREEDY_FIRST_CELLS, GREEDY_FIRST_CELLS_DEPTH2, continuous_fit

    rng = np.random.default_rng(5)
    n, d = 4000, 8
    assert GREEDY_FIRST_CELLS <= n * d < GREEDY_FIRST_CELLS_DEPTH2
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] > 0.2) ^ (X[:, 1] < -0.3)).astype(np.int64)
    y[rng.random(n) < 0.1] ^= 1
    tree2, info2 = continuous_fit(X, y, 2, None, None, max_depth=2)
    assert not info2["timed_out"] and info2["greedy_error"] is None
    always = continuous_fit(X, y, 2, None, None, max_depth=2, incumbent=True)[1]
    assert info2["error"] == always["error"] and always["greedy_error"] is not None
    info3 = continuous_fit(X, y, 2, None, None, max_depth=3)[1]
    assert info3["greedy_error"] is not None


def brute_force_missing(X, y, w, n_classes, depth):
    """brute_force with missing values: every split x_f >= t (t between adjacent distinct present
    values at the node) with its missing rows sent left or right, and the split "missing or not"."""
    n, d = X.shape

    @lru_cache(maxsize=None)
    def opt(rows, h):
        r = np.asarray(rows, dtype=np.int64)
        cnt = np.bincount(y[r], weights=w[r], minlength=n_classes)
        best = cnt.sum() - cnt.max()
        if h == 0 or best == 0:
            return best
        for f in range(d):
            x = X[r, f]
            nan = np.isnan(x)
            vals = np.unique(x[~nan])
            splits = [((~nan) & (x >= (a + b) / 2)) | (nan & right) for a, b in zip(vals[:-1], vals[1:])
                      for right in (False, True)]
            if nan.any() and (~nan).any():
                splits.append(nan)
            for go in splits:
                left, right = tuple(r[~go]), tuple(r[go])
                lo = opt(left, h - 1)
                if lo >= best:
                    continue
                best = min(best, lo + opt(right, h - 1))
        return best

    return opt(tuple(range(n)), depth)


@pytest.mark.parametrize("seed", range(12))
def test_missing_values_equal_brute_force(seed):
    rng = np.random.default_rng(300 + seed)
    X, y, w, C = _random_case(rng)
    X[rng.random(X.shape) < rng.choice([0.1, 0.3])] = np.nan
    if seed % 4 == 0:
        X[:, 0] = np.where(rng.random(X.shape[0]) < 0.5, np.nan, 2.0)  # values constant: only "missing or not"
    h = 1 + seed % 3
    m = OptimalTreeClassifier(max_depth=h, solver="continuous").fit(X, y, sample_weight=w)
    assert m.is_optimal_
    assert m.training_error_ == pytest.approx(brute_force_missing(X, y, w, C, h))
    # the Tree routes the missing values as the search did
    assert _true_error(m, X, y, w) == pytest.approx(m.training_error_)
    t = m.tree_
    split_cols = t.feature[t.children_left >= 0]
    assert t.missing_recorded == bool(np.isnan(X[:, split_cols]).any())
    two = OptimalTreeClassifier(max_depth=h, solver="continuous", n_jobs=2).fit(X, y, sample_weight=w)
    assert two.training_error_ == pytest.approx(m.training_error_)


def test_missing_values_categorical_and_predict():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    n = 60
    color = rng.choice(["red", "green", "blue", None], size=n)
    x = rng.normal(size=n)
    x[rng.random(n) < 0.2] = np.nan
    y = ((color == "red") | pd.isna(color) & (np.nan_to_num(x) > 0)).astype(int)
    df = pd.DataFrame({"color": color, "x": x})
    m = OptimalTreeClassifier(max_depth=2, solver="continuous").fit(df, y)
    assert m.is_optimal_
    assert float(np.sum(m.predict(df) != y)) == pytest.approx(m.training_error_)
    # a missing value in a column that had none in training goes somewhere (the heavier child)
    Xn = np.column_stack([rng.normal(size=40), rng.normal(size=40)])
    yn = (Xn[:, 0] > 0).astype(int)
    mn = OptimalTreeClassifier(max_depth=1, solver="continuous").fit(Xn, yn)
    assert mn.predict(np.array([[np.nan, 0.0]])).shape == (1,)


# ---------------------------------------------------------------- the tie rule (issues 13/14)
def _tie_case(seed):
    """Data with many equal-error trees: few integer values, a duplicated and a constant column,
    integer weights with zeros (odd seeds), missing values (every third seed)."""
    rng = np.random.default_rng(500 + seed)
    n, d, C = int(rng.integers(60, 160)), int(rng.integers(3, 7)), 2 + seed % 3
    X = rng.integers(0, int(rng.integers(3, 8)), size=(n, d)).astype(float)
    X[:, -1] = X[:, 0]  # a duplicated column
    X[:, 1] = 2.0  # a constant column
    if seed % 3 == 2:
        X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, C, size=n)
    w = rng.integers(0, 4, size=n).astype(float) if seed % 2 else None
    if w is not None:
        w[:C] = 1.0
        y[:C] = np.arange(C)
    return X, y, w


def _tree_arrays(tree):
    return (tree.feature.tolist(), tree.threshold.tolist(), tree.children_left.tolist(),
            tree.children_right.tolist(), tree.missing_go_to_left.tolist(), tree.value.tolist())


@pytest.mark.parametrize("seed", range(12))
def test_threads_give_identical_trees_on_ties(seed):
    """The tie rule makes the tree a function of the data: n_jobs 1, 2 and 3 (the root's features
    taken by threads in any order) return the very same tree, and so does every ablation switch
    (they change what is skipped and the order thresholds are met in, never the tree)."""
    X, y, w = _tie_case(seed)
    for h in (2, 3, 4):
        fits = [OptimalTreeClassifier(max_depth=h, solver="continuous", n_jobs=j).fit(X, y, sample_weight=w)
                for j in (1, 2, 3)]
        assert all(m.is_optimal_ for m in fits)
        ref = _tree_arrays(fits[0].tree_)
        for m in fits[1:]:
            assert _tree_arrays(m.tree_) == ref, (seed, h)
        keep = np.ones(len(y), bool) if w is None else w > 0
        yk = np.searchsorted(np.unique(y[keep]), y[keep]).astype(np.int64)
        wk = None if w is None else w[keep]
        trees = [continuous_fit(X[keep], yk, int(yk.max()) + 1, wk, None, max_depth=h, incumbent=False, **sw)[0]
                 for sw in ({}, {"use_intervals": False}, {"use_skip": True}, {"use_d2": False},
                            {"use_cache": False}, {"start_best": True}, {"large_first": 1}, {"use_caps": False},
                            {"use_warm": False}, {"use_simd": False}, {"end_bounds": False})]
        for t in trees[1:]:
            assert _tree_arrays(t)[:5] == _tree_arrays(trees[0])[:5], (seed, h)


@pytest.mark.parametrize("seed", range(8))
def test_root_shares_give_the_local_tree(seed):
    """The Dask tasks' protocol without Dask: the root's positions dealt to T shares (round-robin
    or at random), the shares run one after the other in any order, each reading the best error
    published so far; the driver's pick (learn.continuous.sharded.combine) is the local tree."""
    from treelearn.learn.continuous.sharded import combine
    from treelearn.learn.continuous import _continuous
    from treelearn.learn.continuous.solver import expand_columns

    X, y, w = _tie_case(seed)
    keep = np.ones(len(y), bool) if w is None else w > 0
    yk = np.searchsorted(np.unique(y[keep]), y[keep]).astype(np.int64)
    wk = None if w is None else w[keep]
    X_fm, _, _, _, nan_mode = expand_columns(X[keep], None)
    C = int(yk.max()) + 1
    nm = nan_mode if nan_mode.any() else None
    rng = np.random.default_rng(seed)
    for h in (2, 3, 4):
        local = _continuous.continuous_search(X_fm, yk, C, wk, h, nan_mode=nm)
        F = X_fm.shape[0]
        for T in (1, 2, 3, 5):
            deal = [list(range(t, F, T)) for t in range(T)] if T != 3 else \
                [sorted(p.tolist()) for p in np.array_split(rng.permutation(F), T)]
            published, results = float("inf"), []
            for t in rng.permutation(T):
                rs = _continuous.ContinuousShare(X_fm, yk, C, wk, h, nan_mode=nm)
                positions = deal[t] if rs.n_positions else []
                for oi in positions:
                    if rs.search(int(oi), published):
                        published = min(published, rs.result()["best"]["cost"])
                results.append(dict(rs.result(), complete=True))
            res = combine(results, False, C)
            for key in ("feature", "threshold", "left", "right"):
                np.testing.assert_array_equal(res[key], local[key], err_msg=f"{key} h={h} T={T}")
            assert res["cost"] == local["cost"] and res["lower_bound"] == local["lower_bound"]
            assert not res["timed_out"]


# ------------------------------------------------------------------ the Top-k incumbent (depth >= 4)

def _xlog2x(x):
    return x * np.log2(x) if x > 0 else 0.0


def _entropy_score(counts_left, counts_right):
    """W_L H(left) + W_R H(right) in bits (tl_criteria.h's entropy score of a split)."""
    s = 0.0
    for c in (counts_left, counts_right):
        s += _xlog2x(c.sum()) - sum(_xlog2x(v) for v in c)
    return s


def topk_reference(X, y, w, n_classes, depth, k):
    """The restricted search of _continuous_lookahead.h, written from its description: at a node
    of depth budget >= 3 the k columns whose best entropy split scores lowest (ties: column order;
    each column at its first best midpoint, ascending, within 1e-12 of the node's weight), both
    children searched the same way; a node of budget <= 2 solved by brute force."""
    def rec(r, h):
        cnt = np.bincount(y[r], weights=w[r], minlength=n_classes)
        leaf = cnt.sum() - cnt.max()
        if h <= 2:
            return brute_force(X[r], y[r], w[r], n_classes, h)
        if leaf == 0:
            return 0.0
        tie = 1e-12 * max(1.0, cnt.sum())
        cands = []
        for f in range(X.shape[1]):
            vals = np.unique(X[r, f])
            best = (np.inf, None)
            for a, b in zip(vals[:-1], vals[1:]):
                go = X[r, f] >= (a + b) / 2
                s = _entropy_score(np.bincount(y[r][~go], weights=w[r][~go], minlength=n_classes),
                                   np.bincount(y[r][go], weights=w[r][go], minlength=n_classes))
                if s < best[0] - tie:
                    best = (s, (a + b) / 2)
            if best[1] is not None:
                cands.append((best[0], f, best[1]))
        cands.sort(key=lambda c: c[0])
        out = leaf
        for _, f, t in cands[:k]:
            go = X[r, f] >= t
            out = min(out, rec(r[~go], h - 1) + rec(r[go], h - 1))
        return out

    return rec(np.arange(len(y)), depth)


def _topk_case(seed):
    rng = np.random.default_rng(900 + seed)
    n, d, C = int(rng.integers(25, 45)), int(rng.integers(2, 5)), 2 + seed % 2
    X = rng.integers(0, int(rng.integers(3, 7)), size=(n, d)).astype(float)  # ties in values and scores
    if seed % 3 == 1:
        X[:, 0] = 4.0  # a constant column
    y = rng.integers(0, C, size=n)
    w = rng.choice([1.0, 2.0, 0.5], size=n) if seed % 4 == 3 else np.ones(n)
    return X, y, w, C


@pytest.mark.parametrize("seed", range(16))
def test_topk_incumbent_equals_reference(seed):
    """Every round's tree is real (its reported error is the error its predictions make), the last
    round's error is the restricted search's, recomputed by topk_reference, and threads give the
    same tree."""
    from treelearn.data.schema import ColumnSchema
    from treelearn.learn.continuous import _continuous
    from treelearn.learn.continuous.solver import _to_tree, expand_columns

    X, y, w, C = _topk_case(seed)
    cols = expand_columns(X, None)
    X_fm, F = cols[0], cols[0].shape[0]
    for h in (3, 4):
        for k in sorted({1, 2, F}):
            res = _continuous.continuous_lookahead(X_fm, y.astype(np.int64), C, w, h, 0, k_max=k)
            assert not res["timed_out"] and res["k"] == min(k, F)
            assert res["complete"] == (k >= F)
            assert res["cost"] == pytest.approx(topk_reference(X, y, w, C, h, k), abs=1e-9), (seed, h, k)
            tree = _to_tree(res, X, y, w, C, ColumnSchema(categories=[None] * X.shape[1]), *cols[1:])
            assert tree.depth <= h
            assert float(np.sum(w * (tree.predict(X) != y))) == pytest.approx(res["cost"], abs=1e-9)
            for threads in (2, 3):  # the root's candidates dealt to threads: the same tree
                other = _continuous.continuous_lookahead(X_fm, y.astype(np.int64), C, w, h, 0, k_max=k,
                                                         n_threads=threads)
                for key in ("feature", "threshold", "left", "right", "cost"):
                    np.testing.assert_array_equal(other[key], res[key], err_msg=f"{seed} {h} {k} {threads}")
    # never below the optimum
    res = _continuous.continuous_lookahead(X_fm, y.astype(np.int64), C, w, 3, 0)
    assert res["cost"] >= brute_force(X, y, w, C, 3) - 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_topk_incumbent_keeps_the_tie_rule(seed):
    """The Top-k tree is the search's first incumbent, ties included: a search that finishes
    returns the very tree of a search without incumbents (the tie rule), whatever it started from."""
    from treelearn.learn.continuous import _continuous
    from treelearn.learn.continuous.solver import expand_columns

    X, y, w = _tie_case(seed)
    keep = np.ones(len(y), bool) if w is None else w > 0
    yk = np.searchsorted(np.unique(y[keep]), y[keep]).astype(np.int64)
    wk = None if w is None else w[keep]
    X_fm, _, _, _, nan_mode = expand_columns(X[keep], None)
    for h in (4, 5):
        # the Top-k tree itself: the same with the root's candidates (a duplicated column among
        # them) dealt to any number of threads
        la = [_continuous.continuous_lookahead(X_fm, yk, int(yk.max()) + 1, wk, h, 0, n_threads=t,
                                               nan_mode=nan_mode if nan_mode.any() else None)
              for t in (1, 2, 3, 2, 3)]
        for other in la[1:]:
            for key in ("feature", "threshold", "left", "right", "cost"):
                np.testing.assert_array_equal(other[key], la[0][key], err_msg=f"{seed} {h} {key}")
        ref, _ = continuous_fit(X[keep], yk, int(yk.max()) + 1, wk, None, max_depth=h, incumbent=False)
        for crit in ("entropy", "gini"):
            tree, info = continuous_fit(X[keep], yk, int(yk.max()) + 1, wk, None, max_depth=h, incumbent=True,
                                        criterion=crit)
            assert info["topk_error"] is not None and info["topk_error"] >= info["error"] - 1e-9
            assert info["source"] == "search" and not info["timed_out"]
            assert _tree_arrays(tree)[:5] == _tree_arrays(ref)[:5], (seed, h, crit)


def test_topk_incumbent_anytime():
    """Depth 4 on data the exact search cannot finish in a second: the fit keeps its time limit and
    returns the best of the search's, the Top-k and the greedy tree, each error real."""
    import time

    from treelearn.data.schema import ColumnSchema

    rng = np.random.default_rng(11)
    n = 2000  # small enough that the Top-k round (10% of the limit) finishes even on a loaded machine
    X = rng.normal(size=(n, 8)).round(3)
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] * X[:, 2] > 0) ^ (X[:, 3] + X[:, 4] > 0.5)).astype(np.int64)
    y[rng.random(n) < 0.15] ^= 1
    t0 = time.perf_counter()
    tree, info = continuous_fit(X, y, 2, None, ColumnSchema(categories=[None] * 8), max_depth=4, time_limit=2.0)
    assert time.perf_counter() - t0 < 2.0 + 1.0
    assert info["timed_out"] and info["topk_k"] >= 1
    assert info["error"] <= min(info["topk_error"], info["greedy_error"]) + 1e-9
    assert info["source"] in ("search", "top-k", "greedy")
    assert float(np.sum(tree.predict(X) != y)) == info["error"]
    assert 0 <= info["lower_bound"] <= info["error"]
    _, off = continuous_fit(X, y, 2, None, None, max_depth=4, time_limit=0.5, topk_incumbent=False)  # ablation
    assert off["topk_error"] is None and off["source"] in ("search", "greedy")
    m = OptimalTreeClassifier(max_depth=4, solver="continuous", time_limit=2.0).fit(X, y)
    assert m.incumbent_source_ in ("search", "top-k", "greedy") and m.timed_out_
    assert m.training_error_ <= GreedyTreeClassifier(max_depth=4).fit(X, y).tree_.training_misclassifications()


def test_topk_incumbent_limits():
    """The phase alone: its time budget holds (a cut round still returns a real tree), the memory
    cap is checked before anything is allocated, and Ctrl-C stops it."""
    import signal
    import time

    from treelearn.learn.continuous import _continuous

    rng = np.random.default_rng(12)
    n = 20000
    X_fm = np.ascontiguousarray(rng.normal(size=(10, n)).round(3))
    y = ((X_fm[0] > 0) ^ (X_fm[1] * X_fm[2] > 0.1)).astype(np.int64)
    y[rng.random(n) < 0.2] ^= 1
    t0 = time.perf_counter()
    res = _continuous.continuous_lookahead(X_fm, y, 2, None, 6, 0, time_limit=0.5)
    assert time.perf_counter() - t0 < 0.5 + 1.0
    assert res["timed_out"] and not res["complete"]
    assert 0 < res["cost"] <= min(np.bincount(y))
    assert _continuous.continuous_lookahead(X_fm, y, 2, None, 4, 0, memory_limit_bytes=1e3)["memory_error"]
    if hasattr(signal, "setitimer"):
        assert _interrupted_after(0.3, lambda: _continuous.continuous_lookahead(X_fm, y, 2, None, 6, 0)) < 10


@pytest.mark.parametrize("seed", range(6))
def test_root_hint_changes_the_order_only(seed):
    """The root split searched first (the Top-k tree's root, or any other: a column and any
    threshold, inside its range or not) changes what the search meets first, never the tree."""
    from treelearn.learn.continuous import _continuous
    from treelearn.learn.continuous.solver import expand_columns

    X, y, w = _tie_case(seed)
    keep = np.ones(len(y), bool) if w is None else w > 0
    yk = np.searchsorted(np.unique(y[keep]), y[keep]).astype(np.int64)
    wk = None if w is None else w[keep]
    X_fm, _, _, _, nan_mode = expand_columns(X[keep], None)
    nm = nan_mode if nan_mode.any() else None
    C = int(yk.max()) + 1
    rng = np.random.default_rng(seed)
    for h in (3, 4):
        ref = _continuous.continuous_search(X_fm, yk, C, wk, h, nan_mode=nm)
        for f in range(X_fm.shape[0]):
            col = X_fm[f][~np.isnan(X_fm[f])]
            for t in (float(rng.choice(col)) + 0.5, float(col.min()) - 1.0, np.inf):
                for threads in (1, 2):
                    res = _continuous.continuous_search(X_fm, yk, C, wk, h, nan_mode=nm, n_threads=threads,
                                                        root_hint_feature=f, root_hint_threshold=t)
                    for key in ("feature", "threshold", "left", "right", "cost"):
                        np.testing.assert_array_equal(res[key], ref[key], err_msg=f"{seed} {h} {f} {t} {key}")


def test_ctrl_c_hands_back_the_best_tree_so_far():
    """Ctrl-C in the continuous solver: KeyboardInterrupt carries the best tree found so far (the
    search's, the Top-k incumbent's or the greedy tree) on the raw columns with the real labels,
    as a time limit returns it."""
    rng = np.random.default_rng(0)
    X = rng.random((20000, 10))
    y = np.where(rng.integers(0, 2, 20000) == 1, "yes", "no")
    box = {}

    def run():
        try:
            OptimalTreeClassifier(max_depth=5, solver="continuous", time_limit=None).fit(X, y)
        except KeyboardInterrupt as exc:
            box["tree"] = getattr(exc, "partial_tree", None)
            raise

    assert _interrupted_after(2.5, run) < 30
    tree = box["tree"]
    assert tree is not None and tree.n_leaves > 1
    assert set(tree.predict(X).tolist()) <= {"yes", "no"}


def test_verbose_last_line_and_bound_after_a_time_out(monkeypatch, capsys):
    """The final verbose line counts every node the live lines counted (the Top-k incumbent's
    too), and after a time-out the lower bound is the best one known: at least the sample's floor
    (rows equal on every column with different labels), not 0."""
    import re
    import warnings

    from treelearn._limits import ProgressReporter
    from treelearn.learn.continuous.solver import sample_floor

    arrays = []
    real_live = ProgressReporter.live

    def live(self, incumbent=None):
        counters = real_live(self, incumbent)
        arrays.append(counters)
        return counters

    monkeypatch.setattr(ProgressReporter, "live", live)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(20000, 6)).astype(float)
    y = ((X[:, 0] + X[:, 1] > 4) ^ (rng.random(20000) < 0.2)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OptimalTreeClassifier(max_depth=5, solver="continuous", time_limit=1.0, verbose=1).fit(X, y)
    lines = capsys.readouterr().err.strip().splitlines()
    # the last line says what the tree may claim; the one before it is the search's final counters
    assert lines[-1].startswith("[OptimalTreeClassifier] not proven optimal: a limit stopped the search")
    last = [ln for ln in lines if "nodes=" in ln][-1]
    nodes = int(re.search(r"nodes=(\d+)", last).group(1))
    assert nodes >= arrays[-1].array[0] > 0  # every node published while it ran
    assert est.timed_out_
    floor = sample_floor(np.ascontiguousarray(X.T), y.astype(np.int64), np.ones(len(y)), 2)
    assert floor > 0 and est.lower_bound_ >= floor
    assert float(re.search(r"lower_bound=([0-9.]+)", last).group(1)) == est.lower_bound_
