"""OptimalTreeRegressor on 0/1 features (the binary search of ``continuous/regression_binary.h``)
against independent references: a brute force over every tree written here, pystreed's optimal
regression, and the every-threshold search on the same data; the router (which search a fit
takes); the limits (time, memory, Ctrl-C in a child process)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn import GreedyTreeRegressor, OptimalTreeRegressor, SearchLimitWarning, TopKTreeRegressor
from treelearn._limits import ResourceLimitError
from treelearn.learn.continuous.regressor import regression_fit


def _sse(Y, w):
    if w.sum() <= 0:
        return 0.0
    m = (w[:, None] * Y).sum(axis=0) / w.sum()
    return float((w[:, None] * (Y - m) ** 2).sum())


def _brute(X, Y, w, depth):
    """The least SSE of a tree of depth <= ``depth`` over the splits ``x_j == 1`` (each side non-empty)."""
    best = _sse(Y, w)
    if depth == 0:
        return best
    for j in range(X.shape[1]):
        right = X[:, j] == 1
        if right.all() or not right.any():
            continue
        c = _brute(X[~right], Y[~right], w[~right], depth - 1)
        if c < best:
            best = min(best, c + _brute(X[right], Y[right], w[right], depth - 1))
    return best


def _binary_case(seed, weighted=False, k=1, n=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(6, 26))
    d = int(rng.integers(2, 5))
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    Y = rng.integers(0, 4, size=(n, k)).astype(float)  # ties in y
    w = rng.integers(1, 4, size=n).astype(float) if weighted else np.ones(n)
    return X, (Y[:, 0] if k == 1 else Y), w


def _train_sse(est, X, y, w):
    p = est.predict(X).reshape(len(X), -1)
    return float((w[:, None] * (y.reshape(len(X), -1) - p) ** 2).sum())


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("opts", [dict(), dict(weighted=True), dict(k=3), dict(weighted=True, k=2)])
def test_binary_search_equals_brute_force(depth, opts):
    for seed in range(6 if depth < 3 else 3):
        X, y, w = _binary_case(1000 * depth + seed, **opts)
        est = OptimalTreeRegressor(max_depth=depth).fit(X, y, sample_weight=w)
        assert est._solver == "binary"
        ref = _brute(X, y.reshape(len(y), -1), w, depth)
        assert est.is_optimal_ and not est.timed_out_
        assert est.train_sse_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert _train_sse(est, X, y, w) == pytest.approx(ref, rel=1e-9, abs=1e-9)  # the Tree predicts so
        assert est.lower_bound_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert est.incumbent_history_[-1][1] == pytest.approx(est.train_sse_)


def test_splits_are_written_as_the_continuous_search_writes_them():
    X, y, w = _binary_case(3, n=40)
    est = OptimalTreeRegressor(max_depth=3).fit(X, y)
    cont = regression_fit(X, y, None, None, max_depth=3, use_binary=False)[0]
    internal = est.tree_.children_left >= 0
    assert internal.any()
    # the node-local midpoint of 0 and 1 (tree/build.py's convention), as on the continuous path
    assert set(est.tree_.threshold[internal]) == set(cont.threshold[cont.children_left >= 0])
    assert np.all((est.tree_.threshold[internal] > 0) & (est.tree_.threshold[internal] <= 1))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), depth=st.integers(1, 4), weighted=st.booleans())
def test_binary_and_continuous_searches_agree(seed, depth, weighted):
    X, y, w = _binary_case(seed, weighted=weighted, n=60)
    b = regression_fit(X, y, w, None, max_depth=depth)[1]
    c = regression_fit(X, y, w, None, max_depth=depth, use_binary=False)[1]
    assert b["solver"] == "binary" and c["solver"] == "continuous"
    assert b["sse"] == pytest.approx(c["sse"], rel=1e-9, abs=1e-9)


def test_the_cache_keeps_the_optimum():
    from treelearn.learn.continuous.binary_regression import binary_columns
    from treelearn.learn.continuous._regression import binary_regression_search

    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(400, 10)).astype(float)
    y = X[:, 0] * X[:, 1] + 2 * X[:, 2] * (1 - X[:, 3]) + rng.normal(scale=0.3, size=400)
    X01, _ = binary_columns(X, None, top_k=0, min_samples_leaf=1, memory_bytes=1e9, n_outputs=1)
    Yc = np.ascontiguousarray((y - y.mean())[:, None])
    on = binary_regression_search(X01, Yc, None, 4)
    off = binary_regression_search(X01, Yc, None, 4, use_cache=0)
    assert on["cache_hits"] > 0 and off["cache_hits"] == 0
    assert on["cost"] == pytest.approx(off["cost"], rel=1e-9)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_equals_pystreed_on_random_binary_sets(depth):
    pystreed = pytest.importorskip("pystreed")
    for seed in range(3):
        rng = np.random.default_rng(50 * depth + seed)
        X = rng.integers(0, 2, size=(250, 9))
        y = X[:, 0] * 2 + X[:, 1] * X[:, 2] - X[:, 3] + rng.normal(scale=0.5, size=250)
        st_ = pystreed.STreeDRegressor(max_depth=depth, cost_complexity=0.0, time_limit=60).fit(X, y)
        ref = float(((y - st_.predict(X)) ** 2).sum())
        ours = OptimalTreeRegressor(max_depth=depth).fit(X.astype(float), y)
        assert ours._solver == "binary" and ours.is_optimal_
        assert ours.train_sse_ == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_equals_pystreed_on_an_osrt_binarized_set(depth, data_dir):
    pystreed = pytest.importorskip("pystreed")
    pd = pytest.importorskip("pandas")
    path = data_dir / "regression" / "osrt-binarized" / "servo.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    df = pd.read_csv(path)
    X, y = df.iloc[:, :-1].to_numpy(int), df.iloc[:, -1].to_numpy(float)
    st_ = pystreed.STreeDRegressor(max_depth=depth, cost_complexity=0.0, time_limit=60).fit(X, y)
    ref = float(((y - st_.predict(X)) ** 2).sum())
    ours = OptimalTreeRegressor(max_depth=depth).fit(X, y)
    assert ours._solver == "binary" and ours.is_optimal_
    assert ours.train_sse_ == pytest.approx(ref, rel=1e-7)


def test_the_router_falls_back_to_the_every_threshold_search():
    X, y, w = _binary_case(9, n=30)
    assert OptimalTreeRegressor(max_depth=2).fit(X, y)._solver == "binary"
    assert TopKTreeRegressor(k="all", max_depth=2).fit(X, y)._solver == "binary"
    other = X.copy()
    other[0, 0] = 2.0  # a value other than 0/1
    nan = X.copy()
    nan[1, 1] = np.nan
    for est, data in [(OptimalTreeRegressor(max_depth=2), other), (OptimalTreeRegressor(max_depth=2), nan),
                      (OptimalTreeRegressor(max_depth=2, min_samples_leaf=2), X),
                      (OptimalTreeRegressor(max_depth=2, categorical=[0]), X), (TopKTreeRegressor(k=2, max_depth=2), X)]:
        assert est.fit(data, y)._solver == "continuous", est


def _hard_binary(n=20000, d=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = X[:, :8] @ rng.normal(size=8) + rng.normal(size=n)
    return X, y


def test_time_limit_returns_a_tree_no_worse_than_greedy():
    X, y = _hard_binary()
    with pytest.warns(SearchLimitWarning):
        est = OptimalTreeRegressor(max_depth=5, time_limit=0.3).fit(X, y)
    assert est._solver == "binary"
    assert est.timed_out_ and not est.is_optimal_
    greedy = GreedyTreeRegressor(max_depth=5).fit(X, y)
    g = _train_sse(greedy, X, y, np.ones(len(y)))
    assert est.greedy_error_ == pytest.approx(g)
    assert est.train_sse_ <= g + 1e-9
    assert 0 < est.lower_bound_ <= est.train_sse_


def test_memory_limit_refuses_with_the_named_error():
    from treelearn.learn.continuous._regression import binary_regression_search

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(200000, 6)).astype(np.uint8)
    Yc = np.ascontiguousarray(rng.normal(size=(200000, 1)))
    assert binary_regression_search(X, Yc, None, 3, memory_limit_bytes=2 ** 20)["memory_error"]
    with pytest.raises(ResourceLimitError, match="memory_limit_mb"):
        OptimalTreeRegressor(max_depth=3, memory_limit_mb=1).fit(X.astype(float), Yc[:, 0])


def test_ctrl_c_stops_the_binary_search(sigint_after_ready):
    code = """
import signal, sys, time
import numpy as np
from treelearn import OptimalTreeRegressor
rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(20000, 80)).astype(float)
y = X[:, :8] @ rng.normal(size=8) + rng.normal(size=20000)
m = OptimalTreeRegressor(max_depth=6, time_limit=None)
print("ready", flush=True)
try:
    m.fit(X, y)
    print("finished", flush=True)
except KeyboardInterrupt as exc:
    t = getattr(exc, "partial_tree", None)
    print("interrupted", t is not None and t.is_regression, flush=True)
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
"""
    line, elapsed, err, rc = sigint_after_ready(code, wait=2.0)
    assert line == "interrupted True", (line, err)
    assert rc == 0, err
    assert elapsed < 3.0
