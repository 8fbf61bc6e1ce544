"""The fixed threshold sample and the compiled histogram coding (issue 14)."""
from __future__ import annotations

import numpy as np
import pytest

from treelearn import GreedyTreeClassifier
from treelearn.data import _binning, sketch
from treelearn.learn.greedy.estimator import code_features


@pytest.mark.parametrize("m", [0, 1, 2, 3, 8, 255, 256, 1000])
def test_codes_are_searchsorted_right(m):
    rng = np.random.default_rng(m)
    thr = np.sort(rng.standard_normal(m))
    x = np.concatenate([rng.standard_normal(2000), thr, [np.nan, -0.0, 0.0, np.inf, -np.inf]])
    X = np.stack([x, -x], axis=1)
    want = np.stack([np.searchsorted(thr, X[:, j], side="right") for j in range(2)], axis=1)
    np.testing.assert_array_equal(_binning.code_rows(X, [thr, thr], np.int32), want)
    codes = np.empty((2, x.size), dtype=np.int32)
    _binning.code_columns_into(np.asfortranarray(X), [thr, thr], codes)
    np.testing.assert_array_equal(codes, want.T)
    if m <= 255:
        np.testing.assert_array_equal(_binning.code_rows(X, [thr, thr], np.uint8), want)


def _reference_thresholds(x, m):
    """The quantile-threshold rule in NumPy: the present values' midpoints, or (more than m) the
    ones just above the sorted values at positions (i * n) // (m + 1), i = 1..m."""
    s = np.sort(x[~np.isnan(x)]) + 0.0  # (-0.0 is 0.0)
    u = np.unique(s)
    with np.errstate(over="ignore"):
        mids = (u[:-1] + u[1:]) / 2.0
    mids = np.where(mids <= u[:-1], u[1:], mids)
    if m <= 0 or mids.size <= m:
        return mids, u
    ranks = np.searchsorted(u, s[np.minimum((np.arange(1, m + 1) * s.size) // (m + 1), s.size - 1)])
    return mids[np.unique(ranks[ranks < u.size - 1])], u


@pytest.mark.parametrize("seed", range(8))
def test_sample_thresholds_follow_the_quantile_rule(seed):
    """The threshold sample's thresholds and distinct values per column (sorted as bare keys, no
    codes) are the rule's, and those of the one-column coding (column_thresholds)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000))
    S = np.column_stack([rng.standard_normal(n), np.round(rng.standard_normal(n), 1),
                         rng.integers(0, 2, n).astype(float), np.full(n, 3.0), rng.standard_normal(n) * 1e300])
    S[rng.random(S.shape) < 0.1 * (seed % 3)] = np.nan
    S[0, 2] = -0.0
    for m in (1, 2, 7, 255, 0):
        thr, vals = _binning.sample_thresholds(S, m, n_jobs=1 + seed % 2)
        for j in range(S.shape[1]):
            want_thr, want_u = _reference_thresholds(S[:, j], m)
            np.testing.assert_array_equal(thr[j], want_thr)
            np.testing.assert_array_equal(vals[j], want_u)
            np.testing.assert_array_equal(thr[j], _binning.column_thresholds(S[:, j], m))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1001])
def test_column_coding_with_missing_values_in_lanes(n):
    """code_column_missing (eight rows searched at a time, the tail alone): searchsorted's codes,
    NaN above every bin, and whether every value is one of the given distinct values."""
    rng = np.random.default_rng(n)
    u = np.array([-1.0, 0.0, 0.5, 2.0])
    thr = (u[:-1] + u[1:]) / 2.0
    x = rng.choice(u, size=n)
    out = np.empty(n, dtype=np.int32)
    assert _binning.code_column_missing(x, thr, u, out) == (0, True)
    np.testing.assert_array_equal(out, np.searchsorted(thr, x, side="right"))
    if n:
        x[n // 2] = np.nan
        x[-1] = 0.25  # not a distinct value of u
        miss, every = _binning.code_column_missing(x[::-1].copy()[::-1], thr, u, out)
        assert miss == (1 if n // 2 != n - 1 else 0) and not every
        want = np.searchsorted(thr, x, side="right")
        want[np.isnan(x)] = thr.size + 1
        np.testing.assert_array_equal(out, want)


def test_sampled_thresholds_above_the_sample_size(monkeypatch):
    """Above SKETCH_ROWS rows, histogram thresholds are those of the hashed sample; the codes are
    the number of thresholds <= x; columns with few values keep their distinct values."""
    rng = np.random.default_rng(1)
    n = 5000
    X = np.stack([rng.standard_normal(n), rng.integers(0, 5, n).astype(float)], axis=1)
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.5).astype(int)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 1000)
    cf = code_features(X, None, 16)
    mask = sketch.sketch_mask(0, n, n)
    assert 800 < mask.sum() < 1200
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 10**9)
    ref = code_features(X[mask], None, 16)  # all-row coding of the sample itself
    for j in range(2):
        np.testing.assert_array_equal(cf.thresholds[j], ref.thresholds[j])
        np.testing.assert_array_equal(cf.codes[j], np.searchsorted(cf.thresholds[j], X[:, j], side="right"))
    assert cf.values[0] is None and cf.values[1] is not None
    est = GreedyTreeClassifier(max_depth=3, max_thresholds=16).fit(X, y)
    assert est.score(X, y) > 0.8


def test_sampled_coding_of_missing_values_and_unsampled_values(monkeypatch):
    """Above SKETCH_ROWS rows: NaN gets the code above every bin (and the feature a missing code);
    a column keeps its distinct values only when the sample has every one of them."""
    rng = np.random.default_rng(2)
    n = 6000
    a = rng.standard_normal(n)
    a[rng.random(n) < 0.1] = np.nan
    b = rng.integers(0, 4, n).astype(float)
    c = rng.integers(0, 4, n).astype(float)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 1000)
    mask = sketch.sketch_mask(0, n, n)
    c[np.flatnonzero(~mask)[0]] = 7.0  # one value the sample does not have
    X = np.stack([a, b, c], axis=1)
    cf = code_features(X, None, 16)
    t0 = cf.thresholds[0]
    nan = np.isnan(a)
    np.testing.assert_array_equal(cf.codes[0][nan], t0.size + 1)
    np.testing.assert_array_equal(cf.codes[0][~nan], np.searchsorted(t0, a[~nan], side="right"))
    assert cf.miss_code[0] == t0.size + 1 and cf.miss_code[1] == -1 and cf.miss_code[2] == -1
    np.testing.assert_array_equal(cf.values[1], [0.0, 1.0, 2.0, 3.0])
    assert cf.values[0] is None and cf.values[2] is None
    # the integer matrix in its own dtype codes the same
    Xi = np.stack([b, c], axis=1).astype(np.uint8)
    ci = code_features(Xi, None, 16)
    np.testing.assert_array_equal(ci.codes, cf.codes[1:])


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser in NumPy (the reference the compiled hash is checked against)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def test_compiled_sample_mask_equals_the_hash_in_numpy():
    """The fit's compiled mask is SplitMix64 of the row index below the cutoff, as written in
    NumPy (``_splitmix64`` here) and checked against the published SplitMix64 finaliser value
    of 0 (``0xe220a8397b1dcdaf``), for any start, stop and sample size."""
    assert int(_splitmix64(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(1, 50_000))
        rows = int(rng.integers(1, n + 1))
        start = int(rng.integers(0, n))
        stop = int(rng.integers(start, n + 1))
        cutoff = np.uint64(min(2**64 - 1, (rows << 64) // n))
        expected = _splitmix64(np.arange(start, stop, dtype=np.uint64)) < cutoff
        np.testing.assert_array_equal(sketch.sketch_mask(start, stop, n, rows), expected if rows < n else True)


@pytest.mark.parametrize("n", [0, 5, 4096, 4097, 9001])
def test_columns_coded_by_row_blocks_match_searchsorted(n):
    """code_columns_missing (a block of rows for every column at a time, across block edges):
    searchsorted's codes, NaN above every bin, the missing counts, and per column whether every
    value is one of its distinct values (columns without values given: False)."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.choice([0.0, 1.0, 3.0], size=n)
    X[:, 3] = X[:, 1]
    if n:
        X[rng.random(n) < 0.1, 2] = np.nan
        X[-1, 3] = 2.0  # not one of column 3's distinct values
    cols = np.array([3, 2, 1])
    u = np.array([0.0, 1.0, 3.0])
    thr = [np.array([0.5, 2.0]), np.array([-1.0, 0.0, 0.7]), np.array([0.5, 2.0])]
    vals = [u, None, u]
    codes = np.full((4, n), -7, dtype=np.int32)
    miss, every = _binning.code_columns_missing(X, cols, thr, vals, codes)
    for i, j in enumerate(cols):
        want = np.searchsorted(thr[i], X[:, j], side="right")
        want[np.isnan(X[:, j])] = thr[i].size + 1
        np.testing.assert_array_equal(codes[j], want)
        assert miss[i] == np.isnan(X[:, j]).sum()
    assert every == [n == 0, False, True]
    np.testing.assert_array_equal(codes[0], -7)  # a column not asked for is left alone
