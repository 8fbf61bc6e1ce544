"""The continuous solver's tie rule, recomputed from its definition (learn/continuous/solver.py):
which optimal tree is returned, independently of the search's bounds, threads, root hint and
switches.

The reference below enumerates every tree in the rule's fixed order (the leaf, the depth-1 tree,
then the root splits by the position of their feature in the node's order and by the fixed
bisection order of their threshold) and keeps the first strict improvement, which is the first
tree of the smallest error; the compiled search must return that very tree."""
from functools import lru_cache

import numpy as np
import pytest

from treelearn.learn.continuous.solver import continuous_fit, expand_columns


def order_key(k, K):
    """Threshold k of K in the fixed bisection order (bounds.h): the level of the first dyadic
    point j / 2^l (0 < j < 2^l) in the cell [k/K, (k+1)/K), then k."""
    level = 1
    while True:
        s = 1 << level
        j = max(1, -(-k * s // K))  # the least j with j / 2^l >= k / K
        if j * K < (k + 1) * s:
            return level, k
        level += 1


def test_order_key_is_a_bisection():
    """Every run of thresholds has a single first threshold in the order (the search pops runs by
    it), and the first threshold of all K is the middle one."""
    for K in (1, 2, 3, 5, 8, 13, 64, 100):
        keys = [order_key(k, K) for k in range(K)]
        assert min(keys)[1] in ((K - 1) // 2, K // 2)
        for a in range(K):
            for b in range(a, K):
                levels = [keys[k][0] for k in range(a, b + 1)]
                assert levels.count(min(levels)) == 1, (K, a, b)


def _midpoints(x):
    v = np.unique(x)
    return [a + (b - a) * 0.5 for a, b in zip(v[:-1], v[1:])]


def rule_tree(X, y, w, C, depth):
    """(error, preorder [(feature, threshold)] with feature -1 at leaves) of the tie rule's tree."""
    W = float(w.sum())
    eps = 1e-9 * max(1.0, W)

    def leaf(r):
        c = np.bincount(y[r], weights=w[r], minlength=C)
        return c.sum() - c.max()

    def depth1(r, order):
        best, tree, ferr = leaf(r), [(-1, 0.0)], {}
        for f in order:
            fb = np.inf
            for t in _midpoints(X[r, f]):
                go = X[r, f] >= t
                e = leaf(r[~go]) + leaf(r[go])
                fb = min(fb, e) if e < fb - eps else fb
                if e < best - eps:
                    best, tree = e, [(f, t), (-1, 0.0), (-1, 0.0)]
            ferr[f] = fb
        return best, tree, ferr

    @lru_cache(maxsize=None)
    def solve(rows, h, porder):
        r = np.asarray(rows, dtype=np.int64)
        best, tree = leaf(r), [(-1, 0.0)]
        if h == 0 or best <= eps:
            return best, tree
        e1, t1, ferr = depth1(r, porder if h == 1 else range(X.shape[1]))
        if e1 < best - eps:
            best, tree = e1, t1
        if h == 1 or best <= eps:
            return best, tree
        order = tuple(sorted(range(X.shape[1]), key=lambda f: ferr[f]))  # stable: ties by column
        splits = []
        for pos, f in enumerate(order):
            ts = _midpoints(X[r, f])
            splits += [((pos, order_key(k, len(ts))), f, t) for k, t in enumerate(ts)]
        for _, f, t in sorted(splits):
            go = X[r, f] >= t
            el, tl = solve(tuple(r[~go]), h - 1, order if h == 2 else None)
            if el >= best - eps:
                continue
            er, tr = solve(tuple(r[go]), h - 1, order if h == 2 else None)
            if el + er < best - eps:
                best, tree = el + er, [(f, t)] + tl + tr
        return best, tree

    return solve(tuple(range(len(y))), depth, None)


def _case(seed):
    rng = np.random.default_rng(7000 + seed)
    n, d, C = int(rng.integers(8, 16)), int(rng.integers(1, 4)), 2 + seed % 2
    X = rng.integers(0, int(rng.integers(2, 6)), size=(n, d)).astype(float)  # many equal trees
    if seed % 4 == 1:
        X[:, -1] = X[:, 0]  # a duplicated column
    y = rng.integers(0, C, size=n)
    y[:C] = np.arange(C)
    w = rng.integers(1, 4, size=n).astype(float) if seed % 3 == 2 else np.ones(n)
    return X, y.astype(np.int64), w, C


SWITCHES = ({}, {"use_intervals": False}, {"use_skip": True}, {"use_d2": False}, {"use_cache": False},
            {"start_best": True}, {"large_first": 0}, {"large_first": 1}, {"use_caps": False}, {"use_warm": False},
            {"use_simd": False}, {"ordered_close": False}, {"end_bounds": False})


@pytest.mark.parametrize("seed", range(30))
def test_search_returns_the_rule_tree(seed):
    """The search (no incumbent, any switch, threads, any root hint) returns the reference's tree:
    every tie broken as the rule says, not merely an optimal tree."""
    from treelearn.learn.continuous import _continuous

    X, y, w, C = _case(seed)
    X_fm = expand_columns(X, None)[0]
    raw = expand_columns(X, None)[1]
    weights = None if np.all(w == 1) else w
    for h in (2, 3):
        err, pre = rule_tree(X_fm.T, y, w, C, h)
        want = [(int(raw[f]) if f >= 0 else -1, t) for f, t in pre]
        runs = [dict(sw) for sw in SWITCHES] + [{"n_threads": 2}, {"n_threads": 3}]
        runs += [{"root_hint_feature": f, "root_hint_threshold": t} for f in range(X_fm.shape[0])
                 for t in _midpoints(X_fm[f])[:3]]
        for kw in runs:
            res = _continuous.continuous_search(X_fm, y, C, weights, h, **kw)
            got = [(int(raw[f]) if f >= 0 else -1, t if f >= 0 else 0.0)
                   for f, t in zip(res["feature"], res["threshold"])]
            assert res["cost"] == pytest.approx(err, abs=1e-9), (seed, h, kw)
            assert [g[0] for g in got] == [p[0] for p in want], (seed, h, kw, got, want)
            np.testing.assert_allclose([g[1] for g in got], [p[1] for p in want], err_msg=f"{seed} {h} {kw}")


@pytest.mark.parametrize("seed", range(6))
def test_deep_fit_with_incumbents_returns_the_rule_tree(seed):
    """continuous_fit at depth 4 with its incumbents (greedy bound, Top-k bound and root hint):
    the rule's tree, as without them."""
    X, y, w, C = _case(seed + 100)
    ref, _ = continuous_fit(X, y, C, w, None, max_depth=4, incumbent=False)
    for kw in ({"incumbent": True}, {"incumbent": True, "n_jobs": 2}, {"incumbent": "auto", "time_limit": 60.0}):
        tree, info = continuous_fit(X, y, C, w, None, max_depth=4, **kw)
        assert not info["timed_out"]
        assert tree.feature.tolist() == ref.feature.tolist(), kw
        np.testing.assert_array_equal(tree.threshold, ref.threshold)


@pytest.mark.parametrize("n,distinct,h", [(16, 3, 2), (40, 5, 3), (300, 20, 3), (2000, 1000, 2), (40000, 30000, 2)])
def test_vector_kernel_equals_scalar(n, distinct, h):
    """The depth-2 solver's vector kernel (two classes, unit weights, nodes of 16 to 2^15 - 1 rows)
    against the scalar one: the same tree, bound and evaluations, with ties in the values, a
    duplicated column and a node too large for it (40,000 rows: the scalar kernel at the root)."""
    from treelearn.learn.continuous import _continuous

    rng = np.random.default_rng(n)
    X = rng.integers(0, distinct, size=(n, 4)).astype(float)
    X[:, 3] = X[:, 1]
    y = ((X[:, 0] > distinct / 2) ^ (X[:, 2] % 3 == 0)).astype(np.int64)
    y[rng.random(n) < 0.2] ^= 1
    X_fm = np.ascontiguousarray(X.T)
    a = _continuous.continuous_search(X_fm, y, 2, None, h)
    b = _continuous.continuous_search(X_fm, y, 2, None, h, use_simd=False)
    for key in ("feature", "threshold", "left", "right", "cost", "lower_bound", "d2_evaluations"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def _separable_case(seed):
    """Labels of a random depth-2 tree over few distinct values: many trees of zero error (ties),
    so the root's search knows the optimum (0) early and only looks for the rule's tree."""
    rng = np.random.default_rng(9100 + seed)
    n, d = int(rng.integers(10, 24)), int(rng.integers(2, 5))
    X = rng.integers(0, int(rng.integers(3, 7)), size=(n, d)).astype(float)
    if seed % 3 == 1:
        X[:, -1] = X[:, 0]  # a duplicated column
    f, g, h = rng.integers(0, d, size=3)
    y = np.where(X[:, f] >= 2, X[:, g] >= 1, X[:, h] >= 3).astype(np.int64)
    y[:2] = (0, 1) if y.min() == y.max() else y[:2]  # both classes (the first rows may then be noise)
    if seed % 2:
        y[-1] ^= 1  # noise: depth 2 may now err where depth 3 does not
    w = rng.integers(1, 4, size=n).astype(float) if seed % 4 == 3 else np.ones(n)
    return X, y, w


@pytest.mark.parametrize("seed", range(16))
def test_zero_error_search_returns_the_rule_tree(seed):
    """Data with trees of zero error: the root's lanes give way to the least position once the
    optimum (0) is known (ordered_close), from the search's own incumbent or from the caller's
    bound; with it on or off, one lane or many, threads and root hints, the rule's tree."""
    from treelearn.learn.continuous import _continuous

    X, y, w = _separable_case(seed)
    C = int(y.max()) + 1
    X_fm, raw = expand_columns(X, None)[:2]
    weights = None if np.all(w == 1) else w
    for h in (2, 3):
        err, pre = rule_tree(X_fm.T, y, w, C, h)
        want = [(int(raw[f]) if f >= 0 else -1, t) for f, t in pre]
        zero = 2e-9 * max(1.0, float(w.sum()))  # the caller's bound of a zero-error incumbent (ties kept)
        runs = [{}, {"ordered_close": False}, {"root_lanes": 1}, {"root_lanes": 2}, {"n_threads": 2},
                {"upper_bound": zero} if err == 0 else {}, {"upper_bound": zero, "n_threads": 2} if err == 0 else {}]
        runs += [{"root_hint_feature": f, "root_hint_threshold": t} for f in range(X_fm.shape[0])
                 for t in _midpoints(X_fm[f])[:2]]
        for kw in runs:
            kw = dict(kw)
            ub = kw.pop("upper_bound", 0.0)
            res = _continuous.continuous_search(X_fm, y, C, weights, h, ub, **kw)
            got = [(int(raw[f]) if f >= 0 else -1, t if f >= 0 else 0.0)
                   for f, t in zip(res["feature"], res["threshold"])]
            assert res["cost"] == pytest.approx(err, abs=1e-9), (seed, h, kw)
            assert [g[0] for g in got] == [p[0] for p in want], (seed, h, kw, got, want)
            np.testing.assert_allclose([g[1] for g in got], [p[1] for p in want], err_msg=f"{seed} {h} {kw}")
