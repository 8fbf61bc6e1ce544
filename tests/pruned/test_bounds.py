"""Bounds of paper 002 against brute force, the paper's closed forms, and each other."""
import itertools
import math
import pickle
import random

import numpy as np
import pytest

import treelearn
from treelearn.prune.bounds import (
    DEFAULT_R, TreeShape, all_shapes, as_shape, growth_function_upper_bound, log_p_wedderburn,
    partitioning_function_upper_bound, partitioning_functions_upper_bound, shawe_taylor_bound, stirling2,
    stump_vc_dimension, tight_partitioning_sequences, vc_dimension_lower_bound, vc_dimension_upper_bound,
    wedderburn_etherington,
)
from treelearn._validation import TreeLearnValueError

STUMP = ((), ())


# ---------------------------------------------------------------------- shapes
def test_shapes_canonical_and_mirror_equal():
    a = as_shape(((), ((), ())))
    b = as_shape((((), ()), ()))
    assert a == b and hash(a) == hash(b) and a is b
    assert a.n_leaves == 3 and a.n_internal == 2
    assert {a.left, a.right} == {as_shape(()), as_shape(STUMP)}
    assert as_shape(((), ())) != as_shape(((), ((), ())))
    assert pickle.loads(pickle.dumps(a)) is a
    assert as_shape(a.to_tuple()) is a


def test_shape_from_fitted_tree_and_estimator():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = treelearn.PrunedTreeClassifier(pruning=None, max_leaves=6).fit(X, y)
    s = as_shape(clf.tree_)
    assert s.n_leaves == clf.tree_.n_leaves
    assert as_shape(clf) is s


def test_bad_shapes_raise():
    with pytest.raises(TreeLearnValueError, match="exactly 2"):
        as_shape(((), (), ()))
    with pytest.raises(TreeLearnValueError):
        as_shape("stump")
    with pytest.raises(TreeLearnValueError, match="n_features"):
        partitioning_function_upper_bound(STUMP, 2, 5, 0)


def test_wedderburn_etherington_counts_shapes():
    expected = [1, 1, 1, 2, 3, 6, 11, 23, 46, 98, 207, 451]
    assert [wedderburn_etherington(n) for n in range(1, 13)] == expected
    # independent: count the canonical shapes by enumeration
    for n in range(1, 11):
        assert len(all_shapes(n)) == expected[n - 1]


def _set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in _set_partitions(rest):
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1:]
        yield [[first]] + p


def test_stirling_against_enumeration():
    for m in range(1, 8):
        counts = {}
        for p in _set_partitions(list(range(m))):
            counts[len(p)] = counts.get(len(p), 0) + 1
        for c in range(1, m + 1):
            assert stirling2(m, c) == counts.get(c, 0)


# ---------------------------------------------------------------------- partitioning function
def test_stump_reduces_to_theorem_7():
    for l in (1, 2, 3, 7, 50):
        for m in range(2, 40):
            thm7 = sum(min(2 * l, math.comb(m, k)) for k in range(1, m)) // 2
            # Thm 7 as written is (1/2)Σ, an integer by symmetry; compare with the exact half
            assert 2 * thm7 == sum(min(2 * l, math.comb(m, k)) for k in range(1, m))
            assert partitioning_function_upper_bound(STUMP, 2, m, l) == thm7


def test_base_cases():
    s = as_shape((((), ()), ((), ())))  # 4 leaves
    assert partitioning_function_upper_bound(s, 5, 10, 3) == 0  # c > L
    assert partitioning_function_upper_bound(s, 3, 2, 3) == 0  # c > m
    assert partitioning_function_upper_bound(s, 1, 10, 3) == 1
    assert partitioning_function_upper_bound(s, 3, 3, 3) == 1
    assert partitioning_function_upper_bound(s, 2, 4, 3) == stirling2(4, 2)  # m <= L


def _random_shape(rng, L):
    if L == 1:
        return ()
    k = rng.randint(1, L - 1)
    return (_random_shape(rng, k), _random_shape(rng, L - k))


def test_loose_never_below_tight():
    for L in range(2, 7):
        for s in all_shapes(L):
            for l in (1, 2, 4):
                for m in range(1, 16):
                    for c in range(1, L + 1):
                        t = partitioning_function_upper_bound(s, c, m, l)
                        lo = partitioning_function_upper_bound(s, c, m, l, loose=True)
                        assert lo >= t


def test_paper_term_count_m_minus_L_can_undercut_tight():
    """With (m - L) terms (the paper's text) the loose value can fall below the tight one; with
    (m - L + 1) it cannot (previous test). Stump, l = 1, m = 3: tight = 2, paper's form = 1."""
    m, l = 3, 1
    tight = partitioning_function_upper_bound(STUMP, 2, m, l)
    paper = (m - 2) * 2 * l // 2
    assert paper < tight <= partitioning_function_upper_bound(STUMP, 2, m, l, loose=True)


def test_convolution_sequences_match_direct_recursion():
    rng = random.Random(3)
    for _ in range(6):
        s = as_shape(_random_shape(rng, rng.randint(2, 7)))
        for l in (1, 3):
            M = 45
            seqs = tight_partitioning_sequences(s, M, l)
            for m in range(M + 1):
                for c in range(1, s.n_leaves + 1):
                    assert seqs[s][c][m] == partitioning_function_upper_bound(s, c, m, l)


def _brute_partitions(shape_tuple, X):
    """All c-partitions realizable by the tree class on the rows of X (dict c -> set)."""
    m, l = X.shape
    rules = [(j, t) for j in range(l) for t in np.concatenate([[-np.inf], np.unique(X[:, j]) + 0.5])]

    internal = []

    def collect(t):
        if t:
            internal.append(t)
            collect(t[0])
            collect(t[1])

    collect(shape_tuple)
    n_leaves = len(internal) + 1
    found = {}
    for choice in itertools.product(range(len(rules)), repeat=len(internal)):
        rule_of = {id(node): rules[i] for node, i in zip(internal, choice)}
        leaf_sets = {}

        def route(t, rows, path):
            if not t:
                leaf_sets[path] = rows
                return
            j, thr = rule_of[id(t)]
            go = X[rows, j] >= thr
            route(t[0], rows[~go], path + "0")
            route(t[1], rows[go], path + "1")

        route(shape_tuple, np.arange(m), "")
        leaves = [frozenset(v.tolist()) for v in leaf_sets.values()]
        assert len(leaves) == n_leaves
        for grouping in _set_partitions(list(range(n_leaves))):
            parts = frozenset(frozenset().union(*(leaves[i] for i in g)) for g in grouping)
            parts = frozenset(p for p in parts if p)
            if sum(len(p) for p in parts) == m and all(
                    frozenset().union(*(leaves[i] for i in g)) for g in grouping):
                found.setdefault(len(parts), set()).add(parts)
    return found


@pytest.mark.parametrize("shape_tuple", [STUMP, (STUMP, ()), (STUMP, STUMP)])
def test_brute_force_partitions_never_exceed_bound(shape_tuple):
    rng = np.random.default_rng(0)
    for m, l in ((4, 1), (5, 2), (5, 1), (6, 2)):
        if shape_tuple == (STUMP, STUMP) and m * l > 10:
            continue
        X = rng.normal(size=(m, l))
        found = _brute_partitions(shape_tuple, X)
        L = as_shape(shape_tuple).n_leaves
        for c in range(1, L + 1):
            bound = partitioning_function_upper_bound(shape_tuple, c, m, l)
            assert len(found.get(c, ())) <= bound, (shape_tuple, m, l, c)


def _perm_partitions(perm):
    """The 2-partitions {prefix, suffix} of one feature ordering, as a bitmask over normalized masks."""
    m = len(perm)
    full = (1 << m) - 1
    bits = 0
    mask = 0
    for k in range(m - 1):
        mask |= 1 << perm[k]
        norm = mask if mask & 1 else full ^ mask  # the side containing point 0
        bits |= 1 << norm
    return bits


@pytest.mark.parametrize("l", [1, 2, 3])
def test_stump_bound_attained_by_exhaustive_orderings(l):
    """Thm 7 is tight for m <= 7: the best choice of l feature orderings of m points attains it."""
    for m in range(2, 7):
        perms = list(itertools.permutations(range(m)))
        sets = sorted({_perm_partitions(p) for p in perms})
        first = _perm_partitions(tuple(range(m)))  # WLOG the first feature is the identity order
        best = 0
        if l == 1:
            best = bin(first).count("1")
        elif l == 2:
            best = max(bin(first | s).count("1") for s in sets)
        else:
            for s2 in sets:
                u = first | s2
                for s3 in sets:
                    best = max(best, bin(u | s3).count("1"))
        assert best == partitioning_function_upper_bound(STUMP, 2, m, l), (l, m)


def test_growth_bound_at_least_brute_force_labelings():
    rng = np.random.default_rng(1)
    for shape_tuple, m, l, n in ((STUMP, 5, 2, 3), ((STUMP, ()), 5, 2, 3), ((STUMP, ()), 6, 1, 2)):
        X = rng.normal(size=(m, l))
        found = _brute_partitions(shape_tuple, X)
        # every c-partition gives (n)_c labelings; count distinct label vectors directly
        labelings = set()
        for c, parts_set in found.items():
            for parts in parts_set:
                parts = list(parts)
                for labels in itertools.permutations(range(n), c) if c <= n else []:
                    vec = [0] * m
                    for p, lab in zip(parts, labels):
                        for i in p:
                            vec[i] = lab
                    labelings.add(tuple(vec))
        assert len(labelings) <= growth_function_upper_bound(shape_tuple, m, n, l)
        assert growth_function_upper_bound(shape_tuple, m, n, l) <= growth_function_upper_bound(
            shape_tuple, m, n, l, loose=True)


def test_growth_function_formula():
    s = as_shape((STUMP, ()))
    pis = partitioning_functions_upper_bound(s, 30, 4)
    assert growth_function_upper_bound(s, 30, 5, 4) == 5 * pis[0] + 20 * pis[1] + 60 * pis[2]
    # two classes and a stump: tau = 2 + 2 pi^2 (equality case of Eq. 4)
    assert growth_function_upper_bound(STUMP, 9, 2, 3) == 2 + 2 * partitioning_function_upper_bound(STUMP, 2, 9, 3)


# ---------------------------------------------------------------------- VC dimension
def test_stump_vc_routes_agree():
    for l in range(1, 1001):
        closed = stump_vc_dimension(l)
        assert math.comb(closed, closed // 2) <= 2 * l < math.comb(closed + 1, (closed + 1) // 2)
        assert vc_dimension_upper_bound(STUMP, l) == closed, l


def test_stump_vc_yildiz_lower_bound():
    # the binary-feature value floor(log2(l + 1)) + 1 is a lower bound for real features
    for l in range(1, 300):
        assert stump_vc_dimension(l) >= math.floor(math.log2(l + 1)) + 1


def test_vc_lower_below_upper_for_small_shapes():
    for L in range(1, 9):  # up to 7 internal nodes
        for s in all_shapes(L):
            for l in (1, 2, 5):
                lo = vc_dimension_lower_bound(s, l)
                up = vc_dimension_upper_bound(s, l)
                assert lo <= up, (s, l, lo, up)


# ---------------------------------------------------------------------- Shawe-Taylor
def test_shawe_taylor_matches_equation_8():
    s = as_shape((STUMP, STUMP))
    m, k, n, l, delta = 200, 7, 3, 4, 0.05
    tau = growth_function_upper_bound(s, 2 * m, n, l, loose=True)
    r = DEFAULT_R
    q = (1 - r) * r ** k
    p = 6 / (math.pi ** 2 * 4 ** 2) / wedderburn_etherington(4)
    expected = (2 * k + 4 * math.log(4 * tau / (delta * q * p))) / m
    assert shawe_taylor_bound(s, k, m, n, l, delta=delta) == pytest.approx(expected, rel=1e-12)
    assert log_p_wedderburn(s) == pytest.approx(math.log(p))
    tau_t = growth_function_upper_bound(s, 2 * m, n, l)
    exp_t = (2 * k + 4 * math.log(4 * tau_t / (delta * q * p))) / m
    assert shawe_taylor_bound(s, k, m, n, l, delta=delta, loose=False) == pytest.approx(exp_t, rel=1e-12)
    # replaceable priors
    val = shawe_taylor_bound(s, k, m, n, l, log_q_k=lambda k: math.log(0.5) * (k + 1),
                             log_p_d=lambda sh: math.log(0.25))
    exp2 = (2 * k + 4 * math.log(4 * tau / (0.05 * 0.5 ** (k + 1) * 0.25))) / m
    assert val == pytest.approx(exp2, rel=1e-12)


def test_shawe_taylor_large_values_stay_finite():
    rng = random.Random(5)
    s = as_shape(_random_shape(rng, 300))
    v = shawe_taylor_bound(s, 5000, 20000, 2, 20)
    assert math.isfinite(v) and v > 0


def test_top_level_exports():
    for name in ("TreeShape", "partitioning_function_upper_bound", "growth_function_upper_bound",
                 "stump_vc_dimension", "vc_dimension_upper_bound", "vc_dimension_lower_bound",
                 "shawe_taylor_bound", "wedderburn_etherington", "PrunedTreeClassifier",
                 "prune_with_bound", "cost_complexity_pruning_path"):
        assert hasattr(treelearn, name), name
    assert isinstance(treelearn.TreeShape, type) and treelearn.TreeShape is TreeShape


def test_log_wedderburn_float_recurrence_matches_exact(monkeypatch):
    import treelearn.prune.bounds as b

    monkeypatch.setattr(b, "_WE_EXACT_LOG_UPTO", 0)
    monkeypatch.setattr(b, "_WE_SCALED", [0.0, 1.0 / b._WE_BETA])
    for n in (1, 2, 3, 4, 9, 50, 333, 700):
        assert b.log_wedderburn_etherington(n) == pytest.approx(math.log(wedderburn_etherington(n)), rel=1e-12)


def test_tight_evaluator_matches_sequences():
    from treelearn.prune.bounds import TightEvaluator

    rng = random.Random(11)
    ev = TightEvaluator(300, 4, 3)
    for _ in range(8):
        s = as_shape(_random_shape(rng, rng.randint(1, 12)))
        C = min(3, s.n_leaves)
        got = ev.root_values(s)
        ref = tight_partitioning_sequences(s, 300, 4, 3, only_last=True)
        assert got[1:C + 1] == ref[1:C + 1]


def test_colour_space_identity_of_the_merge_coefficients():
    """Σ_c C(a, c-b) C(b, c-a) (a+b-c)! (n)_c = (n)_a (n)_b: the identity behind the C-multiplication
    form of the tight bound (colour both partitions with n colours; equal colours merge)."""
    from treelearn.prune.bounds import falling_factorial, _pair_coefficients

    for n in range(1, 9):
        for a in range(1, 7):
            for b in range(1, 7):
                lhs = sum(coef * falling_factorial(n, c) for c in range(1, a + b + 1)
                          for aa, bb, coef in _pair_coefficients(c) if (aa, bb) == (a, b))
                assert lhs == falling_factorial(n, a) * falling_factorial(n, b)


def test_tight_multiclass_sequences_match_direct_recursion():
    rng = random.Random(7)
    for _ in range(2):
        s = as_shape(_random_shape(rng, 8))
        M, l = 90, 3
        seqs = tight_partitioning_sequences(s, M, l, 5)
        for m in range(0, M + 1, 3):
            for c in range(1, 6):
                assert seqs[s][c][m] == partitioning_function_upper_bound(s, c, m, l) if m <= 64 else True
        from treelearn.prune.bounds import _tight

        assert all(seqs[s][c][M] == _tight(s, c, M, l) for c in range(1, 6))
