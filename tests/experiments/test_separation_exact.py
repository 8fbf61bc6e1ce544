"""The exact simulation of the top-down heuristics on f_{ℓ,k} (000 §4, issue 6 experiment b).

(a) At small ℓ, k (full truth tables) the simulated trees are the real learners' trees: same
error at every size, same variable at every node. Ties are not avoided but reproduced: inside a
leaf the lowest variable index wins, between leaves the leaf created first (scores are compared
after rounding to a relative 1.5e-11, so mathematically equal scores reached through different
products tie, as the learners' integer-count scores do). The functions below include many such
ties (Gini's gain 4a² and the influence ignore μ, so leaves of different states tie often).
(b) The closed forms (E[f_π], μ_1 − μ_0, influences) equal brute force on random restrictions.
(c) At the paper's scale, with Eq. (2) at equality and c1 = 0.001, a y is queried first
(Claim 4.3's mechanism), and with a larger c1 an x is.
"""
import math

import numpy as np
import pytest

from treelearn import GreedyTreeClassifier
from treelearn.criteria import get_criterion
from treelearn.datasets import lower_bound_function, tribes_width
from treelearn.experiments.queries_separation import k_for
from treelearn.experiments.separation_exact import (
    HEURISTICS,
    Structure,
    balanced_l,
    fast_tribes_width,
    leaf_stats,
    purity_gain,
    root_scores,
    simulate_topdown,
)
from treelearn.learn.queries import all_points, influences, top_down_influence

# (l, k, p_rest): None = the paper's "terms" construction, a float = "refined" (extra literals E)
FUNCS = [(10, 5, None), (9, 6, None), (8, 7, 0.2), (11, 5, 0.02), (9, 5, 0.01), (13, 3, 0.02), (12, 6, None),
         (11, 7, 0.05)]
SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def _setup(l, k, p_rest):
    f = lower_bound_function(l, k, p_rest=p_rest)
    return f, Structure.from_info(f.info), all_points(l + k), f.truth_table()


def _tree_splits(tree):
    """{path: feature} of a ±1 tree, path = ((var, bit), ...) with bit 0 for x = −1 (left)."""
    out = {}

    def walk(node, path):
        if tree.children_left[node] < 0:
            return
        j = int(tree.feature[node])
        # the midpoint 0 (the greedy learner: CART's x <= 0 goes left, stored as x >= nextafter(0))
        assert tree.threshold[node] in (0.0, np.nextafter(0.0, np.inf))
        out[path] = j
        walk(tree.children_left[node], path + ((j, 0),))
        walk(tree.children_right[node], path + ((j, 1),))

    walk(0, ())
    return out


def test_structure_matches_lower_bound_function():
    for l, k, p in FUNCS + [(16, 4, None), (16, 4, 0.001), (20, 3, 0.01), (6, 1, None)]:
        f = lower_bound_function(l, k, p_rest=p)
        s = Structure.from_info(f.info)
        assert s == Structure.paper(l, k, "terms" if p is None else "refined", p_rest=p or 0.001)
        assert s.p_rest == pytest.approx(f.info["p_rest"], abs=1e-15)
        assert s.tribes_tree_error == pytest.approx(f.info["dist_to_tribes"], abs=1e-15)
        assert 2.0**s.log2_tribes_tree_leaves <= 2.0**l
    for n in list(range(1, 300)) + [1000, 5000]:
        assert fast_tribes_width(n) == tribes_width(n)
    for w in (8, 12, 16):  # the balanced ℓ: Pr[REST] ≈ 0.001 in the paper's construction
        s = Structure.paper(balanced_l(w), 1, "terms")
        assert s.w == w and abs(s.p_tribes - 0.5) < 2.0**-w and abs(s.p_rest - 0.001) <= 2.0**-w


@pytest.mark.parametrize("l,k,p_rest", FUNCS)
def test_closed_forms_equal_brute_force(l, k, p_rest):
    f, s, X, y = _setup(l, k, p_rest)
    n = l + k
    ones = y > 0
    rng = np.random.default_rng([l, k])
    seen_kinds = set()
    for _ in range(12):  # random root-to-leaf walks through the symmetry classes
        leaf, pi = s.root(), np.zeros(n, dtype=np.int8)
        for _ in range(int(rng.integers(0, 9))):
            st = leaf_stats(s, leaf)
            rows = np.all((X == pi) | (pi == 0), axis=1)
            assert st["mu"] == pytest.approx(ones[rows].mean(), abs=1e-12)
            assert st["constant"] == (ones[rows].min() == ones[rows].max())
            inf_brute = influences(f, restriction=pi, method="exact")  # 004's: ½ Pr[flip changes f]
            free = np.nonzero(pi == 0)[0]
            delta = np.zeros(n)
            for v, d in st["delta"].items():
                mu1 = ones[rows & (X[:, v] > 0)].mean()
                mu0 = ones[rows & (X[:, v] < 0)].mean()
                assert d == pytest.approx(mu1 - mu0, abs=1e-12)
                delta[v] = d
            # every free variable: ½|δ| of its class's lowest member (same class, same influence)
            assert inf_brute.max() == pytest.approx(0.5 * np.abs(delta).max(), abs=1e-12)
            assert set(np.nonzero(inf_brute > 1e-15)[0]) <= set(free)
            if st["constant"] or not st["delta"]:
                break
            v = int(rng.choice(sorted(st["delta"])))
            cls = st["classes"][v]
            seen_kinds.add(cls[0])
            bit = int(rng.integers(2))
            leaf = leaf.child(s, cls, bit)
            pi[v] = 1 if bit else -1
    assert {"A", "y"} <= seen_kinds and ("E" in seen_kinds or s.r == 0)


@pytest.mark.parametrize("l,k,p_rest", FUNCS)
@pytest.mark.parametrize("criterion", ["entropy", "gini", "kearns_mansour"])
def test_simulation_is_the_greedy_learner(l, k, p_rest, criterion):
    f, s, X, y = _setup(l, k, p_rest)
    rows = simulate_topdown(s, criterion, SIZES, record_splits=True)
    for r in rows:
        clf = GreedyTreeClassifier(criterion=criterion, max_leaves=r["size"]).fit(X, y)
        assert clf.get_n_leaves() == r["leaves"]
        assert abs(np.mean(clf.predict(X) != y) - r["error"]) < 1e-12
        assert _tree_splits(clf.tree_) == dict(r["splits"])
    assert rows[-1]["y_splits"] > 0


@pytest.mark.parametrize("l,k,p_rest", FUNCS)
def test_simulation_is_top_down_influence(l, k, p_rest):
    f, s, X, y = _setup(l, k, p_rest)
    rows = simulate_topdown(s, "influence", SIZES, record_splits=True)
    snaps = top_down_influence(f, max(SIZES), return_sizes=SIZES, influence="exact")
    for r in rows:
        tree = snaps[r["size"]]
        assert tree.n_leaves == r["leaves"]
        assert abs(np.mean(tree.predict(X) != y) - r["error"]) < 1e-12
        assert _tree_splits(tree) == dict(r["splits"])


def test_mass_no_x_and_split_counts():
    f, s, X, y = _setup(8, 7, 0.2)
    for r in simulate_topdown(s, "gini", SIZES, record_splits=True):
        sp = r["splits"]
        assert r["x_splits"] + r["y_splits"] == len(sp) == r["leaves"] - 1
        assert r["y_splits"] == sum(v >= s.l for _, v in sp)
        # leaves whose path has no x: children of y-only paths that were not split further
        split_paths = {p for p, _ in sp}
        no_x = 0.0
        for p, v in sp:
            if v >= s.l and all(u >= s.l for u, _ in p):
                no_x += sum(2.0 ** -(len(p) + 1) for b in (0, 1) if p + ((v, b),) not in split_paths)
        if not sp:
            no_x = 1.0
        assert r["mass_no_x"] == pytest.approx(no_x, abs=1e-15)


@pytest.mark.parametrize("name", ["entropy", "gini", "kearns_mansour"])
def test_purity_gain_matches_criteria(name):
    G = get_criterion(name)
    rng = np.random.default_rng(1)
    for _ in range(200):
        mu = float(rng.uniform(0.01, 0.99))
        a = float(rng.uniform(0, min(mu, 1 - mu)))
        direct = float(G(mu) - 0.5 * G(mu - a) - 0.5 * G(mu + a))
        assert purity_gain(name, mu, a) == pytest.approx(direct, rel=1e-9, abs=1e-15)
    # tiny a: the direct formula cancels, the gain is −G''(μ)a²/2 to relative O(a²)
    for mu in (0.5, 0.3, 1e-3):
        a, q = 1e-9 * mu, 1 - mu
        second = {"entropy": 1 / (math.log(2) * mu * q), "gini": 8.0, "kearns_mansour": 0.5 / (mu * q) ** 1.5}[name]
        assert purity_gain(name, mu, a) == pytest.approx(second * a * a / 2, rel=1e-9)


def test_claim_4_3_y_first_at_the_paper_scale():
    for w in (14, 16, 20):
        l = balanced_l(w)
        k = k_for(l, 0.001)
        s = Structure.paper(l, k, "terms")
        # Eq. (2) at equality (k rounded up): c1/√k ≈ log ℓ/ℓ
        assert 0.001 / math.sqrt(k) == pytest.approx(math.log2(l) / l, rel=0.02)
        rs = root_scores(s)
        assert rs["ratio_y_x"] > 1.2
        for h in HEURISTICS:
            assert rs[f"{h}_y"] > rs[f"{h}_x"] > 0
        st = leaf_stats(s, s.root())
        best = max(st["delta"], key=lambda v: (abs(st["delta"][v]), -v))
        assert best == l  # y_1: the first y
        rows = simulate_topdown(s, "entropy", [256])
        assert rows[0]["y_splits"] == 255 and rows[0]["mass_no_x"] == 1.0
        assert rows[0]["error"] > 0.49 and s.tribes_tree_error < 0.01
    # ten times larger c1 (Eq. 2 fails by a factor 10): an x is queried first
    s = Structure.paper(balanced_l(16), k_for(balanced_l(16), 0.01), "terms")
    rs = root_scores(s)
    assert rs["ratio_y_x"] < 1
    assert simulate_topdown(s, "gini", [2])[0]["mass_no_x"] == 0.0


def test_experiment_quick_exact(tmp_path):
    import csv

    from treelearn.experiments import queries_separation

    assert queries_separation.main(["--quick", "--out-dir", str(tmp_path)]) == 0
    curves = list(csv.DictReader(open(tmp_path / "curves.csv")))
    funcs = list(csv.DictReader(open(tmp_path / "functions.csv")))
    assert (tmp_path / "queries_separation.png").exists()
    assert len(funcs) == 3 and {r["method"] for r in curves} == {*HEURISTICS, queries_separation.CONTROL}
    big = funcs[-1]
    assert big["root_first"] == "y" and float(big["tribes_tree_error"]) < 0.01
    last = [r for r in curves if r["l"] == big["l"] and r["size"] == "1024" and r["method"] in HEURISTICS]
    assert len(last) == 4 and all(float(r["error"]) > 0.49 and float(r["mass_no_x"]) == 1.0 for r in last)
