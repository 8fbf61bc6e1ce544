"""Impurity criteria: the papers' normalisation, multiclass forms, κ against a grid computation,
custom G validation, purity gain (000 Def. 3) and C4.5's gain ratio, against formulas written out."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn import TreeLearnValueError, gain_ratio, get_criterion, kappa, purity_gain
from treelearn.criteria import ENTROPY, GINI, KEARNS_MANSOUR, impurity, split_information, strong_concavity

NAMES = ["entropy", "gini", "kearns_mansour"]

# written out independently of treelearn
REF = {
    "entropy": lambda p: 0.0 if p in (0.0, 1.0) else -p * math.log2(p) - (1 - p) * math.log2(1 - p),
    "gini": lambda p: 4 * p * (1 - p),
    "kearns_mansour": lambda p: 2 * math.sqrt(p * (1 - p)),
}
KAPPA = {"entropy": 1 / math.log(2), "gini": 2.0, "kearns_mansour": 1.0}


@pytest.mark.parametrize("name", NAMES)
def test_normalised_symmetric_concave(name):
    G = get_criterion(name)
    assert G(0.0) == pytest.approx(0) and G(1.0) == pytest.approx(0) and G(0.5) == pytest.approx(1)
    p = np.linspace(0, 1, 1001)
    np.testing.assert_allclose(G(p), [REF[name](float(x)) for x in p], atol=1e-12)
    np.testing.assert_allclose(G(p), G(1 - p), atol=1e-12)
    assert np.all(G(p) <= 1 + 1e-12) and np.all(G(p) >= 0)
    assert np.all(np.diff(G(p), 2) <= 1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_kappa_against_grid(name):
    G = get_criterion(name)
    assert kappa(name) == pytest.approx(KAPPA[name])
    # independent grid computation of the largest κ with (G(a)+G(b))/2 <= G((a+b)/2) - κ/2 (b-a)^2
    grid = np.linspace(0, 1, 401)
    best = np.inf
    for a in grid[:-1]:
        b = grid[grid > a]
        gap = G((a + b) / 2) - (G(np.full_like(b, a)) + G(b)) / 2
        best = min(best, float(np.min(2 * gap / (b - a) ** 2)))
    # the definition holds with the paper's κ, and κ is (nearly) the best constant
    assert best >= KAPPA[name] - 1e-9
    assert best <= KAPPA[name] * 1.01
    assert strong_concavity(G) == pytest.approx(best, rel=0.02)


@pytest.mark.parametrize("name", NAMES)
def test_multiclass_form_equals_binary_at_two_classes(name):
    crit = get_criterion(name)
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, size=(200, 2)).astype(float)
    counts[0] = [0, 0]
    counts[1] = [7, 0]
    tot = counts.sum(axis=1)
    p = np.divide(counts[:, 1], tot, out=np.zeros_like(tot), where=tot > 0)
    expect = np.where(tot > 0, crit(p), 0.0)
    np.testing.assert_allclose(crit.impurity(counts), expect, atol=1e-12)
    np.testing.assert_allclose(impurity(counts, name), expect, atol=1e-12)


def test_multiclass_forms_written_out():
    c = np.array([3.0, 5.0, 2.0])
    p = c / c.sum()
    assert ENTROPY.impurity(c) == pytest.approx(-sum(x * math.log2(x) for x in p))
    assert GINI.impurity(c) == pytest.approx(2 * (1 - sum(x * x for x in p)))
    assert KEARNS_MANSOUR.impurity(c) == pytest.approx(sum(math.sqrt(x * (1 - x)) for x in p))
    # pure nodes have impurity 0, whatever the number of classes
    for crit in (ENTROPY, GINI, KEARNS_MANSOUR):
        assert crit.impurity([0.0, 4.0, 0.0]) == pytest.approx(0.0)
        assert crit.impurity([0.0, 0.0, 0.0]) == 0.0


def test_custom_G_accepted_and_used():
    def sinG(p):
        return np.sin(np.pi * np.asarray(p))

    crit = get_criterion(sinG)
    assert crit.code == -1 and crit.name == "sinG"
    # κ of sin(πp): G'' = -π² sin(πp) >= ... min |G''| = 0 at the ends, so the grid κ is small but >= 0
    assert 0 <= crit.kappa <= math.pi ** 2 / 4 + 1e-9
    # two-class impurity of counts = G(p); multiclass = ½ Σ G(p_c)
    assert crit.impurity([1.0, 3.0]) == pytest.approx(math.sin(math.pi * 0.75))
    assert crit.impurity([1.0, 1.0, 2.0]) == pytest.approx(
        0.5 * (2 * math.sin(math.pi * 0.25) + math.sin(math.pi * 0.5)))
    # a scalar (non-vectorised) callable is wrapped
    crit2 = get_criterion(lambda p: 4 * p * (1 - p) if isinstance(p, float) else float("nan"))
    assert crit2(np.array([0.5]))[0] == pytest.approx(1.0)
    # a Gini written by hand gives Gini's κ on the grid
    assert get_criterion(lambda p: 4 * p * (1 - p)).kappa == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("G, match", [
    (lambda p: 2 * p * (1 - p), "not normalised"),                        # G(1/2) = 1/2
    (lambda p: 4 * p * (1 - p) + 0.1, "not normalised"),                  # G(0) != 0
    (lambda p: np.where(np.asarray(p) <= 0.5, 2 * np.asarray(p), 2 - 2 * np.asarray(p)) ** 2, "not concave"),
    (lambda p: 8 * np.asarray(p) * (1 - np.asarray(p)) ** 2, "symmetric"),  # normalised, skewed
    (lambda p: np.full_like(np.asarray(p, dtype=float), np.nan), "not finite"),
    (lambda p: 1 / 0, "failed"),
])
def test_custom_G_rejected(G, match):
    with pytest.raises(TreeLearnValueError, match=match):
        get_criterion(G)


def test_unknown_names_and_types():
    with pytest.raises(TreeLearnValueError, match="unknown criterion"):
        get_criterion("nope")
    with pytest.raises(TreeLearnValueError, match="name or a callable"):
        get_criterion(3)
    assert get_criterion("Kearns-Mansour") is KEARNS_MANSOUR
    assert get_criterion("log_loss") is ENTROPY and get_criterion("cart") is GINI


def _def3_gain(G, parent, left, reach=1.0):
    """000 Def. 3 written out: G-impurity of the partial tree before minus after splitting one leaf,
    with the leaf holding all of the sample, Pr[reach leaf] = reach, on two classes."""
    parent = np.asarray(parent, float)
    left = np.asarray(left, float)
    right = parent - left
    n = parent.sum()

    def Gp(c):
        return G(c[1] / c.sum()) if c.sum() > 0 else 0.0

    before = reach * Gp(parent)
    after = reach * (left.sum() / n) * Gp(left) + reach * (right.sum() / n) * Gp(right)
    return before - after


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30),
       st.sampled_from(NAMES), st.floats(0.01, 1.0))
@settings(max_examples=150, deadline=None, derandomize=True)
def test_purity_gain_is_000_definition_3(a0, a1, b0, b1, name, reach):
    parent = [a0 + b0, a1 + b1]
    if sum(parent) == 0:
        assert purity_gain(parent, [a0, a1], criterion=name) == 0.0
        return
    got = purity_gain(parent, [a0, a1], criterion=name, reach=reach)
    assert got == pytest.approx(_def3_gain(REF[name], parent, [a0, a1], reach), abs=1e-12)
    assert got >= -1e-12  # concavity: splitting never increases impurity
    assert purity_gain(parent, [a0, a1], [b0, b1], criterion=name) == pytest.approx(
        purity_gain(parent, [a0, a1], criterion=name))


def test_gain_ratio_is_gain_over_split_information():
    parent, left = [10.0, 6.0], [8.0, 1.0]
    right = [2.0, 5.0]
    si = -(9 / 16) * math.log2(9 / 16) - (7 / 16) * math.log2(7 / 16)
    assert split_information(9, 7) == pytest.approx(si)
    assert gain_ratio(parent, left) == pytest.approx(purity_gain(parent, left, right) / si)
    assert gain_ratio(parent, left, criterion="gini") == pytest.approx(
        purity_gain(parent, left, criterion="gini") / si)
    # an empty side: no split information, ratio 0
    assert gain_ratio(parent, [0.0, 0.0]) == 0.0
    assert split_information(0, 0) == 0.0


@given(st.integers(1, 60), st.integers(0, 2**32 - 1), st.sampled_from(NAMES))
@settings(max_examples=80, deadline=None, derandomize=True)
def test_purity_gain_is_003_definition_2_on_a_sample(n, seed, name):
    """003 Def. 2: H(S, i) = G(E[y]) - Pr[x_i = 0] G(E[y | x_i = 0]) - Pr[x_i = 1] G(E[y | x_i = 1]),
    computed from the sample's rows; purity_gain gets only the class counts."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n)
    y = (rng.random(n) < rng.random()).astype(int)
    G = REF[name]

    def cond(mask):
        return G(float(y[mask].mean())) if mask.any() else 0.0

    H = G(float(y.mean())) - np.mean(x == 0) * cond(x == 0) - np.mean(x == 1) * cond(x == 1)
    parent = np.bincount(y, minlength=2)
    left = np.bincount(y[x == 0], minlength=2)
    assert purity_gain(parent, left, criterion=name) == pytest.approx(H, abs=1e-12)
    # C4.5: information gain never exceeds the split information, so the gain ratio is in [0, 1]
    if name == "entropy":
        assert -1e-12 <= gain_ratio(parent, left) <= 1 + 1e-12
