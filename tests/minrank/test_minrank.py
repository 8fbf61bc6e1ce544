"""Minimum-rank trees (001): FIND / FINDMIN against references written here.

References: a plain recursive FIND written from the paper's text (same outputs expected, tree
for tree), a brute-force minimum rank over all reduced trees, truth tables of functions whose
rank is known (parity, decision lists), and counts of Boolean functions by rank (Lemma 1).
"""
from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest

from treelearn import TreeLearnValueError
from treelearn.learn.minrank.estimator import (
    InconsistentSampleError,
    MinRankSearch,
    MinRankTreeClassifier,
    RankSearchLimitError,
    eh_sample_size,
    eh_sample_size_for_size,
    find,
    find_min,
    rank_class_size_bound,
    rank_tree_node_bounds,
    rank_upper_bound_for_size,
)
from treelearn.tree.tree import Tree


# ----------------------------------------------------------------------------- references
def ref_find(B, y, rows, r):
    """FIND(S, r) exactly as printed in 001; trees as nested tuples (var, t0, t1) or ('leaf', c)."""
    labels = {int(y[i]) for i in rows}
    if len(labels) == 1:  # step 1
        return ("leaf", labels.pop())
    if r == 0:  # step 2
        return None
    for v in range(B.shape[1]):  # step 3
        s1 = tuple(i for i in rows if B[i, v])
        s0 = tuple(i for i in rows if not B[i, v])
        if not s0 or not s1:  # not informative
            continue
        q0, q1 = ref_find(B, y, s0, r - 1), ref_find(B, y, s1, r - 1)  # 3.1
        if q0 is not None and q1 is not None:  # 3.2
            return (v, q0, q1)
        if q0 is not None or q1 is not None:  # 3.3
            if q0 is None:
                q0 = ref_find(B, y, s0, r)
            else:
                q1 = ref_find(B, y, s1, r)
            return (v, q0, q1) if q0 is not None and q1 is not None else None
    return None  # step 4


def brute_min_rank(B, y):
    """Least rank over ALL reduced trees consistent with (B, y): every variable not yet used on
    the path may label a node (informative or not; an empty side is a leaf of rank 0)."""
    n = B.shape[1]

    @lru_cache(maxsize=None)
    def best(rows, used):
        if len({int(y[i]) for i in rows}) <= 1:
            return 0
        out = math.inf
        for v in range(n):
            if used >> v & 1:
                continue
            s1 = tuple(i for i in rows if B[i, v])
            s0 = tuple(i for i in rows if not B[i, v])
            a, b = best(s0, used | 1 << v), best(s1, used | 1 << v)
            out = min(out, a + 1 if a == b else max(a, b))
        return out

    return best(tuple(range(B.shape[0])), 0)


def tree_to_tuple(t: Tree, node=0):
    if t.children_left[node] < 0:
        return ("leaf", int(np.argmax(t.value[node])))
    return (int(t.feature[node]), tree_to_tuple(t, t.children_left[node]), tree_to_tuple(t, t.children_right[node]))


def tuple_rank(q):
    if q[0] == "leaf":
        return 0
    a, b = tuple_rank(q[1]), tuple_rank(q[2])
    return a + 1 if a == b else max(a, b)


def is_reduced(t: Tree) -> bool:
    def walk(node, seen):
        if t.children_left[node] < 0:
            return True
        key = (int(t.feature[node]), int(t.kind[node]), float(t.threshold[node]))
        if key in seen:
            return False
        return walk(t.children_left[node], seen | {key}) and walk(t.children_right[node], seen | {key})

    return walk(0, frozenset())


def random_sample(rng, n, m, n_classes=2, noise_free_fn=None):
    """m distinct rows of {0,1}^n with labels from a random function (consistent by design)."""
    m = min(m, 2**n)
    codes = rng.choice(2**n, size=m, replace=False)
    B = ((codes[:, None] >> np.arange(n)) & 1).astype(np.uint8)
    y = rng.integers(0, n_classes, size=m) if noise_free_fn is None else noise_free_fn(B)
    return B, y


# ----------------------------------------------------------------------------- FIND / FINDMIN
@pytest.mark.parametrize("seed", range(30))
def test_find_min_rank_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    m = int(rng.integers(2, 28))
    n_classes = 2 if seed % 3 else 3
    B, y = random_sample(rng, n, m, n_classes)
    expected = brute_min_rank(B, y)
    t = find_min(B, y)
    assert t.rank == expected
    assert np.array_equal(t.predict(B), y)
    assert is_reduced(t)
    # FIND(S, r) is none exactly when r < r(S), and otherwise a consistent reduced tree of rank <= r
    search = MinRankSearch(B, y)
    for r in range(expected + 3):
        tr = search.find(r)
        if r < expected:
            assert tr is None
        else:
            assert tr is not None and tr.rank <= r
            assert np.array_equal(tr.predict(B), y)
            assert is_reduced(tr)


@pytest.mark.parametrize("seed", range(25))
def test_find_is_the_papers_procedure_tree_for_tree(seed):
    """Same tree as the plain recursive FIND of the paper (step 3.3 with bound r, not r-1),
    with and without memoisation, for every r."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 9))
    m = int(rng.integers(5, 60))
    B, y = random_sample(rng, n, m, 2 if seed % 4 else 3)
    # (a constant column has no binary feature; trees are compared on raw columns, and a
    # constant column is never informative, so the variable order is the same)
    rows = tuple(range(len(y)))
    memo_search = MinRankSearch(B, y)
    plain_search = MinRankSearch(B, y, memoize=False)
    for r in range(0, 5):
        expected = ref_find(B, y, rows, r)
        for search in (memo_search, plain_search):
            got = search.find(r)
            assert (got is None) == (expected is None)
            if got is not None:
                assert tree_to_tuple(got) == expected
                assert got.rank == tuple_rank(expected)


def test_step_3_3_reexecutes_with_bound_r():
    """A decision list x0 -> 1, else x1 -> 1, else x2 -> ...: rank 1, found only because step
    3.3 re-runs the failing side with bound r (with r - 1 FIND(S, 1) would fail)."""
    n = 6
    X = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.uint8)
    # decision list: first i with x_i = 1 decides, label i % 2; all zeros -> 1
    y = np.array([next((i % 2 for i in range(n) if row[i]), 1) for row in X])
    t = find_min(X, y)
    assert t.rank == 1
    assert np.array_equal(t.predict(X), y)
    assert ref_find(X, y, tuple(range(len(y))), 1) is not None


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_parity_truth_table_has_rank_d(d):
    """Parity of d variables (plus 2 irrelevant ones) needs the complete depth-d tree: rank d."""
    X = np.array(list(itertools.product([0, 1], repeat=d + 2)), dtype=np.uint8)
    y = X[:, :d].sum(axis=1) % 2
    t = find_min(X, y)
    assert t.rank == d
    assert t.depth == d and t.n_leaves == 2**d
    assert find(X, y, d - 1) is None


def test_rank_of_known_trees():
    # complete tree of depth d: rank d (Tree.rank, 001's definition)
    for d in range(0, 6):
        n_nodes = 2 ** (d + 1) - 1
        left = [2 * i + 1 if 2 * i + 1 < n_nodes else -1 for i in range(n_nodes)]
        right = [2 * i + 2 if 2 * i + 2 < n_nodes else -1 for i in range(n_nodes)]
        depth = np.floor(np.log2(np.arange(n_nodes) + 1)).astype(int)
        feat = [int(depth[i]) if left[i] >= 0 else -2 for i in range(n_nodes)]
        t = Tree(children_left=left, children_right=right, feature=feat,
                 threshold=[0.5 if l >= 0 else -2 for l in left], kind=[0 if l >= 0 else -1 for l in left],
                 value=np.ones((n_nodes, 2)), classes=[0, 1], n_features=max(d, 1))
        assert t.rank == d
    # a decision list of any length: rank 1
    for k in range(1, 8):
        left, right, feat = [], [], []
        for i in range(k):  # node 2i tests x_i; right child is a leaf, left continues
            left.append(2 * i + 2)
            right.append(2 * i + 1)
            feat.append(i)
            left.append(-1)
            right.append(-1)
            feat.append(-2)
        left.append(-1)
        right.append(-1)
        feat.append(-2)
        nn = len(left)
        t = Tree(children_left=left, children_right=right, feature=feat,
                 threshold=[0.5 if f >= 0 else -2 for f in feat], kind=[0 if f >= 0 else -1 for f in feat],
                 value=np.ones((nn, 2)), classes=[0, 1], n_features=k)
        assert t.rank == 1


def test_plus_minus_one_input_and_binarizer_input():
    rng = np.random.default_rng(7)
    B, y = random_sample(rng, 6, 40)
    t01 = find_min(B, y)
    tpm = find_min(2 * B.astype(int) - 1, y)
    assert t01.rank == tpm.rank
    internal = t01.children_left >= 0
    # the midpoints of the two values, a value equal to one going left (scikit-learn's x <= 0.5, x <= 0)
    assert np.all(t01.threshold[internal] == np.nextafter(0.5, np.inf))
    assert np.all(tpm.threshold[internal] == np.nextafter(0.0, np.inf))
    assert tree_to_tuple(t01) == tree_to_tuple(tpm)
    # real-valued data through the exact Binarizer: consistent on the training set
    Xr = rng.normal(size=(60, 3))
    yr = (Xr[:, 0] > 0.3) ^ (Xr[:, 1] * Xr[:, 2] > 0)
    tr = find_min(Xr, yr)
    assert np.array_equal(tr.predict(Xr), yr)
    assert tr.rank == brute_min_rank_on_binarized(Xr, yr)


def brute_min_rank_on_binarized(X, y):
    from treelearn import Binarizer

    B = Binarizer().fit(X).transform(X)
    if B.shape[1] > 12:  # keep the brute force small: check on a subsample is done elsewhere
        return find_min(X, y).rank
    return brute_min_rank(B, y)


def test_inconsistent_sample_reported_with_rows():
    X = np.array([[0, 1], [1, 1], [0, 1], [1, 0], [1, 1]])
    y = np.array([0, 1, 1, 0, 1])
    with pytest.raises(InconsistentSampleError) as exc:
        find_min(X, y)
    assert "[0 (0), 2 (1)]" in str(exc.value)
    assert [list(g) for g in exc.value.groups] == [[0, 2]]
    assert isinstance(exc.value, TreeLearnValueError)
    with pytest.raises(InconsistentSampleError):
        MinRankTreeClassifier().fit(X, y)


def _hard_sample(n=40, m=3000, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(m, n)).astype(np.uint8)
    y = rng.integers(0, 2, size=m)  # random labels: high rank, a long search
    return B, y


def test_time_limit_raises_with_rank_lower_bound():
    B, y = _hard_sample()
    with pytest.raises(RankSearchLimitError) as exc:
        find_min(B, y, time_limit=0.3)
    e = exc.value
    assert e.bound == "time" and "time limit" in str(e)
    assert e.rank_lower_bound >= 1 and f"r(S) >= {e.rank_lower_bound}" in str(e)
    # the bound is a true lower bound: FIND(S, lb - 1) fails
    assert MinRankSearch(B, y).find(e.rank_lower_bound - 1) is None


def test_memory_cap_raises():
    B, y = _hard_sample(seed=1)
    with pytest.raises(RankSearchLimitError) as exc:
        find_min(B, y, memory_limit_mb=0.5)
    assert exc.value.bound == "memory" and "memory cap" in str(exc.value)


# ----------------------------------------------------------------------------- estimator
def test_estimator_api():
    rng = np.random.default_rng(3)
    B, y = random_sample(rng, 7, 50, n_classes=3)
    labels = np.array(["a", "b", "c"])[y]
    clf = MinRankTreeClassifier().fit(B, labels)
    assert clf.rank_ == clf.tree_.rank == brute_min_rank(B, y)
    assert np.array_equal(clf.predict(B), labels)
    assert clf.get_n_leaves() == clf.tree_.n_leaves
    assert clf.predict_proba(B).shape == (50, 3)
    # sample weights change node counts, not the tree
    w = rng.uniform(0.5, 2.0, size=50)
    clfw = MinRankTreeClassifier().fit(B, labels, sample_weight=w)
    assert tree_to_tuple(clfw.tree_) == tree_to_tuple(clf.tree_)
    assert np.isclose(clfw.tree_.value[0].sum(), w.sum())
    # max_rank below r(S): a clear error
    if clf.rank_ >= 1:
        with pytest.raises(TreeLearnValueError, match="max_rank"):
            MinRankTreeClassifier(max_rank=clf.rank_ - 1).fit(B, labels)
    assert MinRankTreeClassifier(max_rank=clf.rank_).fit(B, labels).rank_ == clf.rank_
    with pytest.raises(TreeLearnValueError, match="max_rank"):
        MinRankTreeClassifier(max_rank=-1).fit(B, labels)
    with pytest.raises(TreeLearnValueError, match="time_limit"):
        MinRankTreeClassifier(time_limit=0).fit(B, labels)


def test_estimator_dataframe_with_categorical_column():
    df = pd.DataFrame({"color": pd.Categorical(["red", "green", "blue", "red", "green", "blue"] * 3),
                       "size": [1.0, 2.0, 3.0] * 6})
    y = ((df["color"] == "red") ^ (df["size"] >= 2.5)).to_numpy()
    clf = MinRankTreeClassifier().fit(df, y)
    assert np.array_equal(clf.predict(df), y)
    assert clf.rank_ == 1


def test_sklearn_clone_and_params():
    from sklearn.base import clone

    clf = MinRankTreeClassifier(max_rank=3, time_limit=5.0)
    c2 = clone(clf)
    assert c2.get_params()["max_rank"] == 3 and c2.get_params()["time_limit"] == 5.0


# ----------------------------------------------------------------------------- bounds (Lemma 1, Thms 2-3, Lemma 5)
def test_lemma1_i_node_bounds_against_enumeration():
    """Min and max number of nodes of reduced trees of rank r over n variables, by enumeration."""
    for n in range(1, 5):
        # best[r] = (min nodes, max nodes) over reduced trees of rank exactly r, by DP over
        # the set of usable variables (only its size matters)
        @lru_cache(maxsize=None)
        def shapes(k):  # reduced trees using at most k variables on each path: {rank: (min, max)}
            out = {0: (1, 1)}
            if k == 0:
                return out
            sub = shapes(k - 1)
            for (r0, (a0, b0)), (r1, (a1, b1)) in itertools.product(sub.items(), sub.items()):
                r = r0 + 1 if r0 == r1 else max(r0, r1)
                lo, hi = 1 + a0 + a1, 1 + b0 + b1
                if r in out:
                    lo, hi = min(lo, out[r][0]), max(hi, out[r][1])
                out[r] = (lo, hi)
            return out

        for r, (lo, hi) in shapes(n).items():
            if r == 0:
                continue
            lower, upper, upper_simple = rank_tree_node_bounds(n, r)
            assert lo == lower
            assert hi == upper
            assert upper < upper_simple


def _truth_table_rank(n, f_bits):
    X = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.uint8)
    y = np.array([(f_bits >> i) & 1 for i in range(2**n)])
    return brute_min_rank(X, y)


def test_lemma1_ii_class_size_against_counts():
    for n in (1, 2, 3):
        ranks = [_truth_table_rank(n, f) for f in range(2 ** 2**n)]
        for r in range(0, n + 2):
            count = sum(1 for q in ranks if q <= r)
            log_bound = rank_class_size_bound(n, r)
            if r == 0 or n <= r:
                assert math.isclose(math.log(count), log_bound)
            else:
                assert math.log(count) <= log_bound


def test_sample_size_functions():
    for n, r in [(5, 1), (10, 2), (20, 3), (50, 3)]:
        for eps, delta in [(0.1, 0.05), (0.01, 0.5)]:
            m = eh_sample_size(n, r, eps, delta)
            # Lemma 4 with |F| <= (8n)^((en/r)^r): m >= (1/eps) ln(|F| / delta), and minimal
            need = (rank_class_size_bound(n, r) + math.log(1 / delta)) / eps
            assert need <= m < need + 1
            assert eh_sample_size(n, r, eps / 2, delta) > m
    # Theorem 3 = Theorem 2 at r = floor(log2 s)  (Lemma 5)
    for s in (2, 3, 7, 8, 15, 16, 100):
        r = rank_upper_bound_for_size(s)
        assert 2 ** r <= s < 2 ** (r + 1)
        assert eh_sample_size_for_size(30, s, 0.1, 0.1) == eh_sample_size(30, r, 0.1, 0.1)
    with pytest.raises(TreeLearnValueError):
        eh_sample_size(2, 3, 0.1, 0.1)
    with pytest.raises(TreeLearnValueError):
        eh_sample_size(5, 2, 1.5, 0.1)
    with pytest.raises(TreeLearnValueError):
        eh_sample_size_for_size(5, 1, 0.1, 0.1)


def test_lemma5_rank_of_small_trees():
    """Every tree with s nodes has rank <= floor(log2 s): check on all tree shapes up to 15 nodes."""
    @lru_cache(maxsize=None)
    def ranks_with_nodes(s):  # set of ranks of binary trees with s nodes (s odd)
        if s == 1:
            return frozenset({0})
        out = set()
        for a in range(1, s - 1, 2):
            for r0 in ranks_with_nodes(a):
                for r1 in ranks_with_nodes(s - 1 - a):
                    out.add(r0 + 1 if r0 == r1 else max(r0, r1))
        return frozenset(out)

    for s in range(1, 16, 2):
        assert max(ranks_with_nodes(s)) <= rank_upper_bound_for_size(s)
    assert max(ranks_with_nodes(15)) == rank_upper_bound_for_size(15) == 3


# ----------------------------------------------------------------------------- generator (treelearn.datasets)
def test_random_rank_tree_generator():
    from treelearn.datasets import random_rank_tree, sample_uniform, uniform_error

    for seed in range(12):
        n, r = 6, seed % 4
        t = random_rank_tree(n, r, random_state=seed)
        assert t.rank == r and is_reduced(t)
        assert random_rank_tree(n, r, random_state=seed) == t  # reproducible
        X = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.uint8)
        y = t.predict(X)
        # the target's function has rank <= r (it is in F_n^r), computed by brute force
        assert brute_min_rank(X, y) <= r
        # exact uniform error against a learned tree = the fraction of the 2^n points it gets wrong
        Xs, ys = sample_uniform(t, 30, random_state=seed)
        h = find_min(Xs, ys)
        assert np.isclose(uniform_error(h, t), np.mean(h.predict(X) != y))
        assert uniform_error(t, t) == 0.0
    with pytest.raises(TreeLearnValueError):
        random_rank_tree(2, 3)


def ref_find_min(B, y):
    rows = tuple(range(len(y)))
    r = 0
    while True:
        q = ref_find(B, y, rows, r)
        if q is not None:
            return q
        r += 1


@pytest.mark.parametrize("seed", range(6))
def test_find_min_tree_for_tree_on_multiword_samples(seed):
    """Samples of hundreds of rows (covers span several 64-row words) from random rank-r targets
    and with some label noise-free multiclass structure: the same tree as the paper's procedure."""
    from treelearn.datasets import make_rank_tree_sample

    rng = np.random.default_rng(seed)
    n, r = 9, 1 + seed % 3
    X, y, _ = make_rank_tree_sample(n, r, int(rng.integers(150, 400)), random_state=seed)
    if seed % 2:  # a third class carved out of the 1-region by a conjunction
        y = np.where((y == 1) & (X[:, 0] == 1) & (X[:, 1] == 0), 2, y)
    uniq, first = np.unique(X, axis=0, return_index=True)
    expected = ref_find_min(uniq, y[first])
    got = find_min(X, y)
    assert tree_to_tuple(got) == expected
    assert np.array_equal(got.predict(X), y)
    assert MinRankSearch(X, y, memoize=False).find_min().rank == got.rank


def test_min_rank_experiment_smoke(tmp_path):
    """The experiment's CSVs agree with an independent recomputation of one run."""
    import csv

    from treelearn.datasets import uniform_error
    from treelearn.experiments.min_rank import main

    code = main(["--n", "5", "--ranks", "1", "2", "--eps", "0.3", "--seeds", "3", "--fractions", "1", "0.05",
                 "--out-dir", str(tmp_path)])
    assert (tmp_path / "min_rank.png").stat().st_size > 0
    runs = list(csv.DictReader(open(tmp_path / "runs.csv")))
    summary = list(csv.DictReader(open(tmp_path / "summary.csv")))
    assert len(runs) == 2 * 2 * 3 and len(summary) == 4
    for row in runs:
        assert int(row["m"]) == max(1, round(float(row["fraction"]) * eh_sample_size(5, int(row["r"]), 0.3, 0.1)))
        assert int(row["rank"]) <= int(row["r"])  # the target is consistent and has rank r
        assert (float(row["error"]) <= 0.3) == (row["success"] == "True")
    full = [s for s in summary if float(s["fraction"]) == 1.0]
    assert code == (0 if all(s["holds"] == "True" for s in full) else 1)
    for s in full:
        fr = np.mean([r["success"] == "True" for r in runs if r["r"] == s["r"] and float(r["fraction"]) == 1.0])
        assert np.isclose(float(s["success_fraction"]), fr)
    # uniform_error is exact: check it against enumeration of all 2^n points on a learned tree
    from treelearn.datasets import make_rank_tree_sample

    X, y, target = make_rank_tree_sample(7, 2, 40, random_state=1)
    h = find_min(X, y)
    allx = np.array(list(itertools.product([0, 1], repeat=7)), dtype=np.uint8)
    assert np.isclose(uniform_error(h, target), np.mean(h.predict(allx) != target.predict(allx)))


def test_eh_sample_size_beyond_floats_is_a_named_error():
    # (en/r)^r and the division by a tiny eps overflow floats (an OverflowError before); the same
    # value as the formula wherever it is finite
    import math

    assert eh_sample_size(10, 2, 0.1, 0.05) == math.ceil(((math.e * 5) ** 2 * math.log(80) + math.log(20)) / 0.1)
    for n, r, eps in [(1000, 100, 1e-300), (10**6, 1000, 0.1), (10, 2, 5e-324)]:
        with pytest.raises(TreeLearnValueError, match="beyond any sample"):
            eh_sample_size(n, r, eps, 0.5)


@pytest.mark.parametrize("n,hi", [(0, 1), (1, 5), (1000, 50), (1000, 2**40), (20000, 2**16), (5000, 10**9)])
def test_group_rows_is_numpys_unique(n, hi):
    # the counting and hashing groupings give np.unique's first rows and inverse exactly
    from treelearn.learn.minrank.estimator import group_rows

    keys = np.random.default_rng(n).integers(0, hi, size=n).astype(np.uint64)
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    got_first, got_inv = group_rows(keys)
    np.testing.assert_array_equal(got_first, first)
    np.testing.assert_array_equal(got_inv, inv.ravel())
