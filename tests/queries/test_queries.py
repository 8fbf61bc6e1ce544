"""Membership-query learning (issue 6): oracles, influence, smoothing, PRUNE, BuildDT, top-down.

References are independent of the implementation: brute-force enumeration of {±1}^n and of
trees, the definitions of 004 written out naively, and the theorems' inequalities.
"""
import itertools

import numpy as np
import pytest

import treelearn
from treelearn import Oracle, TreeLearnValueError
from treelearn.datasets import flip_labels, lower_bound_function, majority, random_monotone, random_tree, tribes, tribes_tree
from treelearn.learn.queries import (
    SearchLimitError,
    all_points,
    build_dt,
    default_parameters,
    dist,
    influences,
    is_everywhere_influential,
    noisy_influences,
    influential_pruning,
    smooth,
    top_down_influence,
    tree_from_nested,
)


# ----------------------------------------------------------------------------- naive references
def naive_points(n):
    return np.array(list(itertools.product([-1, 1], repeat=n)), dtype=np.int8)


def naive_influence(fvals_fn, n, i, metric="hamming"):
    """Def. 1 literally: E_x E_{b uniform} ρ(f(x), f(x with x_i := b))."""
    X = naive_points(n)
    f0 = fvals_fn(X)
    tot = 0.0
    for b in (-1, 1):
        Y = X.copy()
        Y[:, i] = b
        f1 = fvals_fn(Y)
        tot += np.mean(f0 != f1) if metric == "hamming" else np.mean(np.abs(f0 - f1))
    return tot / 2


def naive_smooth(fvals_fn, n, delta):
    """f_δ(x) = Σ_z Pr[z] f(x ⊙ z), each coordinate negated with probability δ/2."""
    X = naive_points(n)
    out = np.zeros(len(X))
    q = delta / 2
    for z in itertools.product([0, 1], repeat=n):
        z = np.array(z)
        p = np.prod(np.where(z == 1, q, 1 - q))
        out += p * fvals_fn(np.where(z == 1, -X, X).astype(np.int8))
    return X, out


def tree_eval_py(nested, x):
    while isinstance(nested, tuple):
        i, l, r = nested
        nested = r if x[i] > 0 else l
    return nested


def random_nested(rng, n, size, labels=True):
    """A random nested tree of exactly `size` leaves (variables may repeat off-path only)."""
    def grow(s, used):
        if s == 1:
            return int(rng.choice([-1, 1]))
        free = [j for j in range(n) if j not in used]
        if not free:
            return int(rng.choice([-1, 1]))
        i = int(rng.choice(free))
        k = int(rng.integers(1, s))
        return (i, grow(k, used | {i}), grow(s - k, used | {i}))
    return grow(size, frozenset())


def random_table_oracle(rng, n, p=0.5):
    return Oracle.from_truth_table(np.where(rng.random(2**n) < p, 1.0, -1.0))


# ----------------------------------------------------------------------------- oracles
def test_oracle_constructors_agree_and_count():
    T = random_tree(7, 6, random_state=3)
    o_tree = Oracle.from_tree(T)
    X = all_points(7)
    table = T.predict(X).astype(float)
    o_tab = Oracle.from_truth_table(table)
    o_fn = Oracle.from_function(lambda Z: T.predict(Z).astype(float), 7)
    rng = np.random.default_rng(0)
    Q = (rng.integers(0, 2, size=(50, 7)) * 2 - 1).astype(np.int8)
    a, b, c = o_tree(Q), o_tab(Q), o_fn(Q)
    assert np.array_equal(a, b) and np.array_equal(b, c)
    assert o_tree.n_queries == 50 and o_tab.n_queries == 50
    # the table index convention: bit j of the index is x_j = +1
    for r in rng.integers(0, 128, size=10):
        x = np.array([1 if (r >> j) & 1 else -1 for j in range(7)], dtype=np.int8)
        assert o_tab(x[None])[0] == table[r]
    # truth_table round trip
    assert np.array_equal(o_tree.truth_table(), table)


def test_oracle_input_errors():
    o = majority(5)
    with pytest.raises(TreeLearnValueError, match="columns"):
        o(np.ones((3, 4)))
    with pytest.raises(TreeLearnValueError, match="-1 and \\+1"):
        o(np.zeros((3, 5)))
    with pytest.raises(TreeLearnValueError, match="2-d"):
        o(np.ones((2, 2, 5)))
    with pytest.raises(TreeLearnValueError, match="length 2\\^n"):
        Oracle.from_truth_table(np.ones(6))
    bad = Oracle.from_function(lambda X: np.zeros(len(X)), 3)
    with pytest.raises(TreeLearnValueError, match="-1 or \\+1"):
        bad(np.ones((2, 3)))
    with pytest.raises(TreeLearnValueError, match="restriction"):
        o.restrict({1: 0})
    with pytest.raises(TreeLearnValueError, match="out of range"):
        o.restrict({9: 1})


def test_restriction_matches_naive():
    o = tribes(6, width=2)
    r = o.restrict({0: 1, 3: -1})
    X = naive_points(6)
    Y = X.copy()
    Y[:, 0], Y[:, 3] = 1, -1
    assert np.array_equal(r(X), o(Y))
    P = all_points(6)
    P[:, 0], P[:, 3] = 1, -1
    assert np.array_equal(r.truth_table(), o(P))


# ----------------------------------------------------------------------------- influence
@pytest.mark.parametrize("seed", range(3))
def test_exact_influence_equals_definition(seed):
    rng = np.random.default_rng(seed)
    n = 6
    o = random_table_oracle(rng, n, p=0.3)
    got = influences(o, method="exact")
    for i in range(n):
        assert got[i] == pytest.approx(naive_influence(o._raw, n, i))
    # factor 2 against the flipped-coordinate influence of 000
    X = naive_points(n)
    for i in range(n):
        Y = X.copy()
        Y[:, i] *= -1
        assert 2 * got[i] == pytest.approx(np.mean(o._raw(X) != o._raw(Y)))
    # restricted influence = influence of the restricted function, fixed variables 0
    pi = {1: -1, 4: 1}
    got_r = influences(o, restriction=pi, method="exact")
    r = o.restrict(pi)
    for i in range(n):
        want = 0.0 if i in pi else naive_influence(r._raw, n, i)
        assert got_r[i] == pytest.approx(want)


def test_sampled_influence_within_tau_over_two():
    T = random_tree(30, 10, random_state=1)
    o = Oracle.from_tree(T)
    exact = influences(Oracle.from_truth_table(o.truth_table()) if False else o, method="sampled", n_samples=200_000,
                       random_state=0)
    tau = 0.04
    est = influences(o, method="sampled", tau=tau, delta=0.01, random_state=5)
    assert np.max(np.abs(est - exact)) <= tau / 2
    # irrelevant variables have influence exactly 0
    used = set(T.feature[T.feature >= 0].tolist())
    assert all(est[j] == 0 for j in range(30) if j not in used)


def test_smoothing_exact_and_monte_carlo():
    rng = np.random.default_rng(2)
    n, delta = 5, 0.3
    o = random_table_oracle(rng, n)
    X, want = naive_smooth(o._raw, n, delta)
    got = smooth(o, delta, exact=True)(X)
    assert np.allclose(got, want)
    mc = smooth(Oracle.from_function(o._raw, n), delta, exact=False, n_noise=4000, random_state=1)(X)
    assert np.max(np.abs(mc - want)) < 0.1
    # noisy influence (|·| metric) exact equals the definition on f_δ
    ni = noisy_influences(o, delta, method="exact")
    fd = smooth(o, delta, exact=True)
    for i in range(n):
        assert ni[i] == pytest.approx(naive_influence(fd._raw, n, i, metric="abs"))


@pytest.mark.parametrize("seed", range(6))
def test_fact_7_1_noise_sensitivity_of_trees(seed):
    rng = np.random.default_rng(seed)
    n = 8
    T = random_tree(n, int(rng.integers(2, 12)), random_state=seed)
    for delta in (0.05, 0.2, 0.6):
        Td = smooth(Oracle.from_tree(T), delta, exact=True)
        d = dist(Td, Oracle.from_tree(T), metric="abs")
        assert d <= T.average_depth() * delta + 1e-12


def test_average_depth_definition():
    T = tree_from_nested((0, (1, -1, 1), 1), 3)
    assert treelearn.learn.queries.average_depth(T) == pytest.approx(2 * 0.25 * 2 + 1 * 0.5)


# ----------------------------------------------------------------------------- PRUNE, OSSS
@pytest.mark.parametrize("seed", range(8))
def test_prune_theorem_5(seed):
    rng = np.random.default_rng(seed)
    n = 7
    # f: a random function (or a noisy tree), T: an unrelated random tree (Thm 5 needs neither close)
    f = random_table_oracle(rng, n, p=float(rng.uniform(0.2, 0.8))) if seed % 2 else flip_labels(
        random_tree(n, 8, random_state=seed), 0.1, random_state=seed)
    T = random_tree(n, int(rng.integers(3, 16)), random_state=100 + seed)
    dT = dist(T, f)
    for tau in (0.01, 0.05, 0.15, 0.3):
        P = influential_pruning(f, T, tau)
        assert P.n_leaves <= T.n_leaves and P.depth <= T.depth
        assert is_everywhere_influential(f, P, tau, strict=True)
        assert dist(P, f) <= dT + T.average_depth() * tau + 1e-12
        assert is_pruning(P, 0, T, 0)


def is_pruning(P, p, T, v):
    """P (from node p) is obtained from T (from node v) by replacing internal nodes by one of
    their subtrees (004 §2.1.1)."""
    lab = lambda tr, u: tr.classes[tr.leaf_class_index()[u]]  # noqa: E731
    if T.children_left[v] < 0:
        return P.children_left[p] < 0 and lab(P, p) == lab(T, v)
    if P.children_left[p] >= 0 and P.feature[p] == T.feature[v] and \
            is_pruning(P, P.children_left[p], T, T.children_left[v]) and \
            is_pruning(P, P.children_right[p], T, T.children_right[v]):
        return True
    return is_pruning(P, p, T, T.children_left[v]) or is_pruning(P, p, T, T.children_right[v])


@pytest.mark.parametrize("seed", range(10))
def test_robust_osss_theorem_6(seed):
    rng = np.random.default_rng(seed)
    n = 8
    f = random_table_oracle(rng, n, p=float(rng.uniform(0.05, 0.95)))
    tab = f.truth_table()
    bias = min(np.mean(tab != 1), np.mean(tab != -1))
    mx = influences(f, method="exact").max()
    for s in (2, 4, 9, 20):
        T = random_tree(n, s, random_state=seed * 10 + s)
        assert mx >= (bias - dist(T, f)) / T.average_depth() - 1e-12
    # with T = the truth-table tree of a size-s function (f itself)
    g = random_tree(n, 6, random_state=seed)
    go = Oracle.from_tree(g)
    tg = go.truth_table()
    bg = min(np.mean(tg != 1), np.mean(tg != -1))
    assert influences(go, method="exact").max() >= bg / g.average_depth() - 1e-12


# ----------------------------------------------------------------------------- BuildDT vs brute force
def enumerate_trees(n, size, depth, used=frozenset()):
    """Every tree with <= size leaves, depth <= depth, no variable repeated on a path."""
    out = [-1, 1]
    if size >= 2 and depth >= 1:
        for i in range(n):
            if i in used:
                continue
            for k in range(1, size):
                lefts = enumerate_trees(n, k, depth - 1, used | {i})
                rights = enumerate_trees(n, size - k, depth - 1, used | {i})
                out.extend((i, a, b) for a in lefts for b in rights)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_build_dt_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, size, depth = 4, 4, 3
    f = random_table_oracle(rng, n, p=float(rng.uniform(0.3, 0.7))) if seed % 2 == 0 else flip_labels(
        random_tree(n, 5, random_state=seed), 0.15, random_state=seed)
    X = naive_points(n)
    fv = f(X)
    inf_cache = {}

    def inf(pi, i):  # Def. 1 on the restriction, naive
        key = (tuple(sorted(pi.items())), i)
        if key not in inf_cache:
            def g(Z, pi=pi):
                Z = Z.copy()
                for j, b in pi.items():
                    Z[:, j] = b
                return f._raw(Z)
            inf_cache[key] = naive_influence(g, n, i)
        return inf_cache[key]

    def conditions(nested, pi):
        if not isinstance(nested, tuple):
            return []
        i, l, r = nested
        return [(pi, i)] + conditions(l, {**pi, i: -1}) + conditions(r, {**pi, i: 1})

    cands = []
    for t in set(map(repr, enumerate_trees(n, size, depth))):
        nested = eval(t)
        err = np.mean(np.array([tree_eval_py(nested, x) for x in X]) != fv)
        cands.append((err, [inf(pi, i) for pi, i in conditions(nested, {})]))
    for tau in (0.02, 0.1, 0.2):
        best = min(err for err, infs in cands if all(v >= tau for v in infs))
        got = build_dt(f, size, depth=depth, tau=tau, influence="exact")
        assert got.n_leaves <= size and got.depth <= depth
        assert is_everywhere_influential(f, got, tau)
        assert dist(got, f) == pytest.approx(best)


def test_build_dt_memo_and_adaptivity_do_not_change_the_exact_answer():
    f = flip_labels(random_tree(6, 6, random_state=4), 0.1, random_state=4)
    a = build_dt(f, 5, depth=4, tau=0.03, influence="exact")
    b = build_dt(f, 5, depth=4, tau=0.03, influence="exact", memo=False)
    assert dist(a, f) == pytest.approx(dist(b, f))


# ----------------------------------------------------------------------------- learning guarantees
def test_realizable_random_targets_n16():
    eps = 0.1
    ok = 0
    for seed in range(40):
        s = 2 + seed % 7  # sizes 2..8
        T = random_tree(16, s, random_state=seed)
        o = Oracle.from_tree(T)
        h = treelearn.learn_from_queries(o, s, eps, mode="realizable", random_state=seed, influence="sampled")
        err = dist(h, Oracle.from_truth_table(o.truth_table()))
        ok += (err <= eps) and h.n_leaves <= s
        # the tree predicts ±1 arrays to ±1 labels
        assert set(np.unique(h.predict(all_points(16)[:64]))) <= {-1, 1}
    assert ok >= 38


@pytest.mark.parametrize("seed", range(3))
def test_agnostic_flipped_truth_table(seed):
    n, s, eps = 10, 4, 0.05
    T = random_tree(n, s, random_state=seed)
    f = flip_labels(T, 0.05, random_state=seed)
    opt_upper = dist(T, f)  # opt_s <= dist(T, f) = 0.05
    assert opt_upper == pytest.approx(0.05, abs=1e-3)
    h = treelearn.learn_from_queries(f, s, eps, mode="agnostic", random_state=seed)
    assert h.n_leaves <= s
    assert dist(h, f) <= opt_upper + 4 * eps
    # here the learner recovers a tree as good as the planted one
    assert dist(h, f) <= opt_upper + 0.01


def test_agnostic_sampled_queries_small():
    n, s, eps = 8, 3, 0.1
    T = random_tree(n, s, random_state=11)
    f = flip_labels(T, 0.05, random_state=11)
    fq = Oracle.from_function(f._raw, n)
    h, info = treelearn.learn_from_queries(fq, s, eps, mode="agnostic", random_state=0, influence="sampled",
                                           n_noise=16, return_info=True)
    assert dist(h, f) <= dist(T, f) + 4 * eps
    assert info["queries"] > 0 and info["smoothing"] == pytest.approx(default_parameters(s, eps)["delta"])


def test_monotone_random_examples():
    n = 12
    f = majority(n, variables=[0, 3, 5])  # a monotone size-4... majority of 3 (size 6 tree)
    h, info = treelearn.learn_from_queries(f, 6, 0.1, mode="monotone", random_state=0, n_samples=20000,
                                           return_info=True)
    assert info["queries"] == 20000  # random examples only
    assert dist(h, f) <= 0.1 + 1e-9
    # the estimator on a {0,1} sample
    rng = np.random.default_rng(1)
    X01 = rng.integers(0, 2, size=(20000, n))
    y = f((2 * X01 - 1).astype(np.int8))
    clf = treelearn.QueryTreeClassifier(size=6, epsilon=0.1).fit(X01, y)
    Xt = rng.integers(0, 2, size=(5000, n))
    assert np.mean(clf.predict(Xt) != f((2 * Xt - 1).astype(np.int8))) <= 0.1
    assert clf.get_n_leaves() <= 6


def test_classifier_fit_oracle_and_params():
    T = random_tree(20, 5, random_state=2)
    clf = treelearn.QueryTreeClassifier(size=5, epsilon=0.1, mode="realizable", random_state=0)
    clf.fit_oracle(Oracle.from_tree(T))
    X = (np.random.default_rng(0).integers(0, 2, size=(2000, 20)) * 2 - 1)
    assert np.mean(clf.predict(X) != T.predict(X)) <= 0.1
    assert clf.info_["queries"] > 0
    with pytest.raises(TreeLearnValueError, match="epsilon"):
        treelearn.QueryTreeClassifier(epsilon=2).fit_oracle(Oracle.from_tree(T))
    with pytest.raises(TreeLearnValueError, match="mode"):
        treelearn.QueryTreeClassifier(mode="x").fit_oracle(Oracle.from_tree(T))
    with pytest.raises(TreeLearnValueError, match="0, 1"):
        treelearn.QueryTreeClassifier().fit(np.array([[0.5, 1], [1, 0]]), [0, 1])


def test_time_limit_is_reported():
    T = random_tree(60, 16, random_state=0)
    f = flip_labels(random_tree(14, 16, random_state=0), 0.2, random_state=0)
    with pytest.raises(SearchLimitError, match="time limit"):
        build_dt(f, 16, depth=8, tau=0.005, influence="exact", time_limit=0.05)
    with pytest.raises(SearchLimitError, match="memory cap"):
        build_dt(f, 16, depth=8, tau=0.005, influence="exact", max_memory_mb=0.001)
    del T


# ----------------------------------------------------------------------------- top-down (000 Fig. 2)
@pytest.mark.parametrize("seed", range(3))
def test_top_down_influence(seed):
    n = 8
    f = random_monotone(n, 6, random_state=seed, kind="dnf")
    snaps = top_down_influence(f, 12, return_sizes=range(1, 13))
    errs = [dist(snaps[s], f) for s in sorted(snaps)]
    assert all(b <= a + 1e-12 for a, b in zip(errs, errs[1:]))  # splitting never hurts the f-completion
    T = snaps[12]
    # every split is on a most influential variable of its leaf's subfunction
    X = all_points(n)
    stack = [(0, {})]
    while stack:
        v, pi = stack.pop()
        if T.children_left[v] < 0:
            continue
        inf = influences(f, restriction=pi, method="exact")
        assert inf[T.feature[v]] == pytest.approx(inf.max())
        stack.append((T.children_left[v], {**pi, int(T.feature[v]): -1}))
        stack.append((T.children_right[v], {**pi, int(T.feature[v]): 1}))
    del X


# ----------------------------------------------------------------------------- generators
def test_generators():
    T = random_tree(10, 7, random_state=0)
    assert T.n_leaves == 7
    X = all_points(10)
    # no redundant split: both children of each internal node of depth-1 leaves differ
    o = tribes(12)
    p = np.mean(o(X[:, :0].repeat(0, 0)) if False else o(all_points(12)) == 1)
    assert p == pytest.approx(o.tribes["p_accept"])
    tt = tribes_tree(12, o.tribes["width"], o.tribes["n_terms"])
    assert np.array_equal(Oracle.from_tree(tt).truth_table(), o.truth_table())
    f = lower_bound_function(8, 5)
    info = f.info
    ft = tribes_tree(13, info["width"], info["n_terms"])
    assert dist(ft, f) == pytest.approx(info["dist_to_tribes"])
    assert ft.n_leaves <= 2**8
    m = majority(5)
    assert np.array_equal(m(all_points(5)), np.where(all_points(5).sum(1) >= 0, 1.0, -1.0))
    g = random_monotone(10, 5, random_state=0)
    tab = g.truth_table()
    P = all_points(10)
    for j in range(10):  # monotone: raising x_j never lowers f
        up = P.copy()
        up[:, j] = 1
        assert np.all(g(up) >= tab)
    gn = random_monotone(10, 5, random_state=0, noise=0.1)
    assert np.mean(gn.truth_table() != tab) == pytest.approx(0.1, abs=1e-3)


# ----------------------------------------------------------------------------- experiments (smoke, tiny grids)
def test_experiments_run_small(tmp_path):
    from treelearn.experiments import queries_agnostic, queries_scaling, queries_separation

    assert queries_scaling.main(["--n", "20", "--sizes", "4", "--agnostic-sizes", "2", "--seeds", "1",
                                 "--out-dir", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "summary.csv").exists() and (tmp_path / "a" / "queries_scaling.png").exists()
    assert queries_separation.main(["--sampled", "--ls", "6", "--sizes", "1", "4", "16", "--train", "5000", "--test", "5000",
                                    "--influence-samples", "200", "--out-dir", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "curves.csv").exists()
    assert queries_agnostic.main(["--quick", "--sizes", "1", "2", "4", "--opt-sizes", "1", "2",
                                  "--out-dir", str(tmp_path / "c")]) == 0
    rows = (tmp_path / "c" / "opt.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2


def test_lower_bound_function_refined_matches_definition():
    f = lower_bound_function(10, 5, p_rest=0.01)
    i = f.info
    X = all_points(15)
    x, y = X[:, :10], X[:, 10:]
    w, m = i["width"], i["n_terms"]
    terms = [np.all(x[:, w * t:w * (t + 1)] > 0, axis=1) for t in range(m)]
    E = np.all(x[:, w * m:w * m + i["extra_literals"]] > 0, axis=1)
    tribes_ = np.any(terms, axis=0)
    tribes_p = np.any(terms[:-1], axis=0) | (terms[-1] & ~E)
    rest = tribes_ & ~tribes_p
    want = np.where(tribes_p, 1, np.where(rest, np.where(y.sum(1) >= 0, 1, -1), -1))
    assert np.array_equal(f(X), want)
    assert np.mean(rest) == pytest.approx(i["p_rest"])


@pytest.mark.parametrize("eps", [5e-324, 2.2250738585072014e-308, 1e-300])
def test_tiny_epsilon_fits(eps):
    # long-form fuzz find: d = ceil(log2(size / epsilon)) overflowed to an OverflowError; the depth
    # is ceil(log2 size - log2 epsilon), capped by the variables as before
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(24, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    m = treelearn.QueryTreeClassifier(size=4, epsilon=eps, random_state=0, time_limit=5.0).fit(X, y)
    assert (m.predict(X) == y).all()
