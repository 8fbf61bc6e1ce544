"""Exact, analytic simulation of the top-down heuristics on f_{ℓ,k} (000 §4) at the paper's scale.

f_{ℓ,k}(x, y) = TRIBES'_ℓ(x) ∨ (REST_ℓ(x) ∧ MAJ_k(y)) is read-once. In the layout of
:func:`treelearn.datasets.lower_bound_function` (x = variables 0..ℓ−1, y = ℓ..ℓ+k−1; term t of
width w on x_{tw}..x_{tw+w−1}) it is, for both constructions,

    f = A ∨ (B ∧ (¬E ∨ MAJ_k)),

A = OR of the m' TRIBES' terms (terms 0..m'−1), B = OR of the REST terms (terms m'..m−1), E = AND
of r spare x-variables (x_{wm}..x_{wm+r−1}). The paper's ("terms") construction has r = 0, i.e.
E ≡ 1 and f = A ∨ (B ∧ MAJ); the "refined" one has m' = m − 1 and r >= 0 extra literals
(TRIBES' = A ∨ (T_m ∧ ¬E), REST = ¬A ∧ T_m ∧ E). MAJ_k(y) = 1 iff Σ_i (±1 y_i) >= 0, i.e. at
least c = ⌈k/2⌉ ones.

**State.** Under a restriction π (a root-to-leaf path, uniform distribution on the free
variables) f_π is again of this form, and is described by: for A and for B, how many alive terms
have r unfixed variables (r = 1..w; a term with a variable fixed to 0 is dead, a term with all
variables fixed to 1 is satisfied and makes A resp. B ≡ 1); E's number of unfixed literals (or
dead: a literal fixed to 0, then ¬E ≡ 1); and the number u of free y's and o of y's fixed to 1.
:class:`LeafState` keeps a little more — which terms have been touched, in index order — so that
the *lowest variable index* of every symmetry class is known; the real learners break ties by
the lowest index, so within a class they always query the lowest free variable, the touched
terms of A (of B) are always a prefix of A's (B's) terms and within a term the fixed variables a
prefix of its variables. This makes the simulated tree variable-for-variable the learners' tree.

**Closed forms** (Z_A = Π_r (1 − 2^{−r})^{a_r} = Pr[A = 0], likewise Z_B; P_E = Pr[E = 1];
P_M = Pr[MAJ = 1 | π] = Pr[Bin(u, ½) >= c − o]; P_G = 1 − P_E(1 − P_M) = Pr[¬E ∨ MAJ]):

* E[f_π] = (1 − Z_A) + Z_A·(1 − Z_B)·P_G;
* f is unate in every variable (monotone in all but E's, antitone in E's), so the flipped
  influence Pr[f(x) ≠ f(x^{⊕i})] (000) equals |μ_1 − μ_0|, μ_b = E[f_{π, x_i = b}], and
  δ_i := μ_1 − μ_0 is, for x_i in an alive A-term with r free variables,
  2^{1−r}·Z_A/(1 − 2^{−r})·(1 − (1 − Z_B)P_G); in an alive B-term,
  2^{1−r}·Z_B/(1 − 2^{−r})·Z_A·P_G; for a free E-literal (e free), −2^{1−e}·Z_A(1 − Z_B)(1 − P_M);
  for a free y, Z_A(1 − Z_B)P_E·Pr[Bin(u − 1, ½) = c − 1 − o] (the pivot). Everything is a
  product: no cancellation even when ℓ ~ 10^8 and δ ~ 10^{−7}.
* the children are μ ∓ δ/2 and the purity gain G(μ) − ½G(μ_0) − ½G(μ_1) of
  :mod:`treelearn.criteria` (same normalisation: entropy in bits, Gini 4p(1 − p),
  Kearns–Mansour 2√(p(1 − p))) is evaluated in forms without cancellation (:func:`purity_gain`);
  it increases with |δ|, so every impurity and the influence rule pick the same variable at a
  leaf (000 Prop. 2.2) and differ only in the order in which leaves are split;
* Inf_i for BuildTopDownDT_Inf is 004's re-randomised influence, ½|δ_i|, exactly what
  :func:`treelearn.learn.queries.top_down_influence` uses (the factor ½ changes no choice).

**Growth** (:func:`simulate_topdown`), exactly as the learners: best-first on
score = 2^{−depth}·(best local purity gain) (:class:`treelearn.GreedyTreeClassifier` with
``max_leaves``, 000 Fig. 1) or 2^{−depth}·max_i Inf_i (000 Fig. 2); within a leaf ties go to the
lowest variable index, between leaves to the leaf created first (children: x_i = 0 then
x_i = 1); an impure leaf is split even when its best gain is 0 (GreedyTreeClassifier's rule), a
leaf whose influences are all 0 is not (top_down_influence's); pure leaves never. Leaves are
labelled by the majority of f_π, so the error of the tree is Σ_leaves 2^{−depth}·min(μ, 1 − μ).
The learners compute on integer counts, so their ties are exact; here mathematically equal
values reached through different products are made equal again: variables whose |δ| lie within
a relative 1e−9 of the best tie (then the lowest index wins; in practice only variables of one
class ever tie), and leaf scores are rounded to a relative 2^{−36} ≈ 1.5e−11 before the heap
compares them (then the oldest leaf wins; Gini's gain 4a² and the influence do not depend on μ,
so leaves of different states tie often). GreedyTreeClassifier's absolute tolerance of 1e−12 on
global gains is *not* imitated: at the paper's scale the global gains drop below 1e−12 within
a few levels (ℓ ≈ 7·10^5: ≈ 2e−10 at the root), where it would make the real learner split the
oldest leaf, i.e. grow breadth-first.

The TRIBES_ℓ tree (:func:`treelearn.datasets.tribes_tree`) computes TRIBES_ℓ = A ∨ B ∨ (T_m with
E in the refined case: TRIBES = T_1 ∨ … ∨ T_m), has (w^{m+1} − 1)/(w − 1) <= 2^ℓ leaves and error
Pr[f ≠ TRIBES_ℓ] = Pr[REST]·Pr[MAJ_k = 0] (000 Prop. 4.1).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import lru_cache

from treelearn.criteria import ENTROPY

__all__ = ["Structure", "LeafState", "simulate_topdown", "purity_gain", "HEURISTICS", "balanced_l",
           "fast_tribes_width", "leaf_stats", "root_scores"]

HEURISTICS = ("entropy", "gini", "kearns_mansour", "influence")
_LN2 = math.log(2.0)
TIE_RTOL = 1e-9


# ----------------------------------------------------------------------------- the function
def fast_tribes_width(n_vars: int, target: float = 0.5) -> int:
    """:func:`treelearn.datasets.tribes_width` without its O(ℓ) loop: widths w > 64 accept with
    probability ≈ ℓ·2^{−w}/w ≈ 0 for every ℓ < 2^60, never closer to ``target`` than w = 1, so the
    first minimiser lies in 1..min(ℓ, 64) (same formula and strict-< rule, same answer)."""
    best, bw = None, 1
    for w in range(1, min(n_vars, 64) + 1):
        m = n_vars // w
        p = 1 - (1 - 2.0**-w) ** m
        if best is None or abs(p - target) < best:
            best, bw = abs(p - target), w
    return bw


def balanced_l(w: int) -> int:
    """ℓ = w·m with m the number of width-w terms making Pr[TRIBES] closest to 1/2 (the paper's
    "assume Pr[TRIBES_ℓ = 1] = 1/2 exactly", footnote 5). At powers of two the paper's
    m = ⌊ℓ/w⌋ can be far from that (Pr[TRIBES_{2^20}] = 0.375), and then no m' gives
    Pr[REST] ≈ 0.001; at ℓ = balanced_l(w), Pr[REST] = 0.001 ± 2^{−w−1}."""
    q = 2.0**-w
    m0 = max(1, int(round(math.log(2.0) / -math.log1p(-q))))
    m = min(range(max(1, m0 - 2), m0 + 3), key=lambda t: abs((1 - (1 - q) ** t) - 0.5))
    return w * m


@dataclass(frozen=True)
class Structure:
    """The parameters of f_{ℓ,k}: ``m`` width-``w`` terms, the first ``mp`` of them TRIBES' (A),
    the others REST (B), ``r`` extra literals E (``r = 0``: E ≡ 1), MAJ over ``k`` y's."""

    l: int
    k: int
    w: int
    m: int
    mp: int
    r: int
    construction: str

    @classmethod
    def from_info(cls, info: dict) -> "Structure":
        """From ``lower_bound_function(l, k, ...).info``."""
        return cls(int(info["l"]), int(info["k"]), int(info["width"]), int(info["n_terms"]),
                   int(info["n_terms_prime"]), int(info["extra_literals"]), str(info["construction"]))

    @classmethod
    def paper(cls, l: int, k: int, construction: str = "terms", *, p_tribes_prime: float = 0.499,
              p_rest: float = 0.001) -> "Structure":
        """The parameters :func:`treelearn.datasets.lower_bound_function` chooses (``"terms"``:
        ``p_rest=None``; ``"refined"``: ``p_rest=p_rest``), computed in O(m) instead of O(ℓ²)."""
        w = fast_tribes_width(l)
        q = 2.0**-w
        if construction == "terms":
            m = l // w
            mp = min(range(0, m), key=lambda t: abs((1 - (1 - q) ** t) - p_tribes_prime))
            return cls(l, k, w, m, mp, 0, "terms")
        if construction != "refined":
            raise ValueError("construction must be 'terms' or 'refined'")

        def best_r(m_):
            # |log2(pr/p_rest)| is V-shaped in r_: the minimiser is the floor or ceiling of the real root
            hi = l - w * m_
            x = math.log2(q * (1 - q) ** (m_ - 1) / p_rest)
            cands = sorted({min(max(c, 0), hi) for c in (math.floor(x), math.ceil(x))})
            best = None
            for r_ in cands:
                pt = 1 - (1 - q) ** m_
                pr = q * 2.0**-r_ * (1 - q) ** (m_ - 1)
                score = abs(pt - 0.5) + 0.05 * abs(math.log2(pr / p_rest))
                if best is None or score < best[0]:
                    best = (score, m_, r_)
            return best

        M = l // w
        m0 = min(range(1, M + 1), key=lambda t: abs((1 - (1 - q) ** t) - 0.5)) if M < 4096 else \
            max(1, min(M, int(round(math.log(2.0) / -math.log1p(-q)))))
        bound = best_r(m0)[0]
        lo = m0
        while lo > 1 and abs((1 - (1 - q) ** (lo - 1)) - 0.5) <= bound:
            lo -= 1
        hi = m0
        while hi < M and abs((1 - (1 - q) ** (hi + 1)) - 0.5) <= bound:
            hi += 1
        best = None
        for m_ in range(lo, hi + 1):
            b = best_r(m_)
            if best is None or b[0] < best[0]:
                best = b
        _, m, r = best
        return cls(l, k, w, m, m - 1, r, "refined")

    # probabilities of the whole function
    @property
    def p_tribes(self) -> float:
        return 1 - (1 - 2.0**-self.w) ** self.m

    @property
    def p_rest(self) -> float:
        """Pr[REST_ℓ] = Pr[A = 0]·Pr[B = 1]·Pr[E = 1]."""
        q = 2.0**-self.w
        return (1 - q) ** self.mp * (1 - (1 - q) ** (self.m - self.mp)) * 2.0**-self.r

    @property
    def p_maj_negative(self) -> float:
        return 1.0 - _p_maj(self.k, self.k, 0)

    @property
    def tribes_tree_error(self) -> float:
        """Pr[f ≠ TRIBES_ℓ] = Pr[REST]·Pr[MAJ = 0] (000 Prop. 4.1): the error of the TRIBES_ℓ tree."""
        return self.p_rest * self.p_maj_negative

    @property
    def log2_tribes_tree_leaves(self) -> float:
        """log2 of the TRIBES_ℓ tree's leaf count (w^{m+1} − 1)/(w − 1) (<= ℓ: size <= 2^ℓ)."""
        w, m = self.w, self.m
        if w == 1:
            return math.log2(m + 1)
        return (m + 1) * math.log2(w) + math.log2(1 - float(w) ** -(m + 1)) - math.log2(w - 1)

    def root(self) -> "LeafState":
        return LeafState((), (), 0, 0, 0)


@lru_cache(maxsize=None)
def _p_maj(k: int, u: int, o: int) -> float:
    """Pr[MAJ_k = 1] with u free y's and o fixed ones: Pr[Bin(u, ½) >= ⌈k/2⌉ − o]."""
    need = (k + 1) // 2 - o
    if need <= 0:
        return 1.0
    if need > u:
        return 0.0
    from scipy.stats import binom

    return float(binom.sf(need - 1, u, 0.5))


@lru_cache(maxsize=None)
def _pivot(k: int, u: int, o: int) -> float:
    """Pr[one free y decides MAJ]: Pr[Bin(u − 1, ½) = ⌈k/2⌉ − 1 − o]."""
    j = (k + 1) // 2 - 1 - o
    n = u - 1
    if n < 0 or j < 0 or j > n:
        return 0.0
    if n == 0:
        return 1.0
    from scipy.stats import binom

    return float(binom.pmf(j, n, 0.5))


# ----------------------------------------------------------------------------- a leaf
@dataclass(frozen=True)
class LeafState:
    """f restricted to a path. ``ta``/``tb``: for the touched A/B terms in index order, how many of
    their variables (a prefix) are fixed to 1, or −1 if the term is dead; ``e``: E-literals fixed
    to 1 (a prefix), −1 once one is fixed to 0; ``yn``/``yo``: y's fixed (a prefix) and how many to 1."""

    ta: tuple
    tb: tuple
    e: int
    yn: int
    yo: int

    def profile(self, s: Structure) -> tuple:
        """The canonical state (what E[f_π] and all influences depend on): per family the sorted
        (free, count) pairs of alive terms and whether one is satisfied; E's free literals (−1
        dead); free y's u; fixed ones o."""
        return (_family(self.ta, s.mp, s.w), _family(self.tb, s.m - s.mp, s.w),
                -1 if self.e < 0 else s.r - self.e, s.k - self.yn, self.yo)

    def lowest_var(self, s: Structure, cls: tuple) -> int:
        """Lowest variable index of a symmetry class ('A', r), ('B', r), ('E',), ('y',)."""
        kind = cls[0]
        if kind == "y":
            return s.l + self.yn
        if kind == "E":
            return s.w * s.m + self.e
        t, base = (self.ta, 0) if kind == "A" else (self.tb, s.mp)
        fixed = s.w - cls[1]
        if fixed > 0:
            for i, c in enumerate(t):
                if c == fixed:
                    return (base + i) * s.w + c
        return (base + len(t)) * s.w  # an untouched term (the lowest one)

    def child(self, s: Structure, cls: tuple, bit: int) -> "LeafState":
        kind = cls[0]
        if kind == "y":
            return LeafState(self.ta, self.tb, self.e, self.yn + 1, self.yo + bit)
        if kind == "E":
            return LeafState(self.ta, self.tb, self.e + 1 if bit else -1, self.yn, self.yo)
        t = self.ta if kind == "A" else self.tb
        fixed = s.w - cls[1]
        i = len(t)
        if fixed > 0:
            i = next(j for j, c in enumerate(t) if c == fixed)
        new = (fixed + 1) if bit else -1
        t2 = t[:i] + (new,) + t[i + 1:] if i < len(t) else t + (new,)
        if kind == "A":
            return LeafState(t2, self.tb, self.e, self.yn, self.yo)
        return LeafState(self.ta, t2, self.e, self.yn, self.yo)


def _family(touched: tuple, n_terms: int, w: int) -> tuple:
    counts = {}
    sat = False
    for c in touched:
        if c < 0:
            continue
        if c == w:
            sat = True
        else:
            counts[w - c] = counts.get(w - c, 0) + 1
    untouched = n_terms - len(touched)
    if untouched:
        counts[w] = counts.get(w, 0) + untouched
    return (tuple(sorted(counts.items())), sat)


def _zero_prob(fam) -> float:
    """Pr[OR of the family's alive terms = 0] (0 if one is satisfied)."""
    pairs, sat = fam
    if sat:
        return 0.0
    return math.exp(sum(c * math.log1p(-(2.0**-r)) for r, c in pairs))


@lru_cache(maxsize=1 << 20)
def _profile_stats(profile: tuple, k: int):
    """(μ, constant?, candidates) of a canonical state; candidates = [(class, δ)] with
    δ = μ_1 − μ_0 of one free variable of the class (see the module docstring)."""
    fa, fb, e_free, u, o = profile
    za, zb = _zero_prob(fa), _zero_prob(fb)
    pm = _p_maj(k, u, o)
    pe = 0.0 if e_free < 0 else 2.0**-e_free
    pg = 1.0 - pe * (1.0 - pm)
    pb = 1.0 - zb
    mu = (1.0 - za) + za * pb * pg
    # constant? (decided logically, not from the float μ)
    a_sat, b_sat = fa[1], fb[1]
    a_alive, b_alive = bool(fa[0]), bool(fb[0])
    maj_one = (k + 1) // 2 - o <= 0
    maj_zero = (k + 1) // 2 - o > u
    g_one = e_free < 0 or maj_one
    g_zero = e_free == 0 and maj_zero
    f_one = a_sat or (b_sat and g_one)
    f_zero = not a_sat and not a_alive and ((not b_alive and not b_sat) or g_zero)
    const = f_one or f_zero
    if const:
        mu = 1.0 if f_one else 0.0
    cands = []
    if not const:
        for r, c in fa[0]:
            cands.append((("A", r), 2.0 ** (1 - r) * za / (1 - 2.0**-r) * (1.0 - pb * pg)))
        for r, c in fb[0]:
            cands.append((("B", r), 2.0 ** (1 - r) * zb / (1 - 2.0**-r) * za * pg))
        if e_free > 0:
            cands.append((("E",), -(2.0 ** (1 - e_free)) * za * pb * (1.0 - pm)))
        if u > 0:
            cands.append((("y",), za * pb * pe * _pivot(k, u, o)))
    best = max((abs(d) for _, d in cands), default=0.0)
    tied = tuple((c, d) for c, d in cands if abs(d) >= best * (1 - TIE_RTOL)) if best > 0 else ()
    gains = {h: (purity_gain(h, mu, best / 2.0) if h != "influence" else best / 2.0) for h in HEURISTICS}
    return mu, const, tied, cands, gains


def leaf_stats(s: Structure, leaf: LeafState) -> dict:
    """E[f_π], whether f_π is constant, and δ_i = μ_1 − μ_0 for the lowest free variable of every
    class (a dict var -> δ; every other free variable of a class has the same δ, fixed and unused
    variables have δ = 0)."""
    mu, const, _, cands, _ = _profile_stats(leaf.profile(s), s.k)
    return {"mu": mu, "constant": const,
            "delta": {leaf.lowest_var(s, c): d for c, d in cands},
            "classes": {leaf.lowest_var(s, c): c for c, _ in cands}}


# ----------------------------------------------------------------------------- impurities
def purity_gain(criterion: str, mu: float, a: float) -> float:
    """G(μ) − ½G(μ − a) − ½G(μ + a) for the normalised impurities of :mod:`treelearn.criteria`,
    without cancellation when a is tiny (gains ~ a² of 1e−16 and below are exact to ~1e−14)."""
    if a <= 0.0:
        return 0.0
    q = 1.0 - mu
    if criterion == "gini":
        return 4.0 * a * a
    if criterion == "entropy":
        t, v = a / mu, a / q
        if max(t, v) < 0.5:
            # JS form ½D(μ−a‖μ) + ½D(μ+a‖μ), each side μ·ln(1 − t²) + 2a·atanh(t): both terms ~a²/μ
            nats = 0.5 * (mu * math.log1p(-t * t) + 2 * a * math.atanh(t)) \
                + 0.5 * (q * math.log1p(-v * v) + 2 * a * math.atanh(v))
            return nats / _LN2
        return _h(mu) - 0.5 * _h(mu - a) - 0.5 * _h(mu + a)
    if criterion == "kearns_mansour":
        s_, b = mu * q, q - mu
        S = math.sqrt(s_)
        r0 = math.sqrt(max(s_ - a * b - a * a, 0.0))
        r1 = math.sqrt(max(s_ + a * b - a * a, 0.0))
        g = a * a * (1.0 / (S + r0) + 1.0 / (S + r1))
        if r0 + r1 > 0:
            g += 2 * a * a * b * b / ((S + r0) * (S + r1) * (r0 + r1))
        return g
    raise ValueError(f"unknown criterion {criterion!r}")


def _h(p):
    """The binary entropy in bits: treelearn's one definition (``core/criteria.h``)."""
    return float(ENTROPY(p))


# ----------------------------------------------------------------------------- growth
def simulate_topdown(s: Structure, heuristic: str, sizes, *, record_splits: bool = False) -> list[dict]:
    """Grow BuildTopDownDT (``heuristic`` in entropy / gini / kearns_mansour) or BuildTopDownDT_Inf
    (``"influence"``) on f_{ℓ,k} exactly, to the largest of ``sizes`` leaves; one row per size t:
    ``leaves`` (< t when growth stopped: every leaf pure / of zero influence), ``error`` =
    Σ_leaves 2^{−depth}·min(μ, 1 − μ) (exact error of the f-completion), ``mass_no_x`` (probability
    of reaching a leaf whose path queries no x-variable), ``x_splits``/``y_splits`` (internal
    nodes on x / y), ``max_depth``. With ``record_splits``, each row also gets ``splits``: the
    split nodes so far, as (path, variable) with path a tuple of (variable, bit), in split order.
    """
    if heuristic not in HEURISTICS:
        raise ValueError(f"heuristic must be one of {HEURISTICS}")
    sizes = sorted(set(int(t) for t in sizes))
    greedy = heuristic != "influence"
    # current leaves: id -> (state, depth, mass·min(μ, 1 − μ), mass if no x on the path else 0, has_x, path)
    leaves = {}
    heap = []
    counter = [0]

    def add(state, depth, has_x, path):
        idx = counter[0]
        counter[0] += 1
        mu, const, tied, _, gains = _profile_stats(state.profile(s), s.k)
        mass = 2.0**-depth
        leaves[idx] = (state, depth, mass * min(mu, 1.0 - mu), 0.0 if has_x else mass, has_x, path)
        if const:
            return
        if not tied and not greedy:
            return  # top_down_influence: no variable of positive influence
        if tied:
            cls = min(tied, key=lambda cd: state.lowest_var(s, cd[0]))[0]
        else:  # impure with zero gain (cannot happen for this unate f; GreedyTreeClassifier's rule)
            cls = None
        heapq.heappush(heap, (-_quantize(mass * gains[heuristic]), idx, cls))

    add(s.root(), 0, False, () if record_splits else None)
    rows, splits = [], []
    n_leaves, xs, ys, maxd = 1, 0, 0, 0
    pending = list(sizes)
    while True:
        while pending and pending[0] <= n_leaves:
            t = pending.pop(0)
            rows.append(_row(t, n_leaves, leaves, xs, ys, maxd, splits if record_splits else None))
        if not pending or not heap:
            break
        _, idx, cls = heapq.heappop(heap)
        state, depth, _, _, has_x, path = leaves.pop(idx)
        if cls is None:
            raise RuntimeError("impure leaf without an informative variable")  # unreachable (f is unate)
        var = state.lowest_var(s, cls)
        is_x = cls[0] != "y"
        xs += is_x
        ys += not is_x
        maxd = max(maxd, depth + 1)
        if record_splits:
            splits.append((path, var))
        for bit in (0, 1):
            add(state.child(s, cls, bit), depth + 1, has_x or is_x,
                path + ((var, bit),) if record_splits else None)
        n_leaves += 1
    for t in pending:  # growth stopped: the final tree for the larger sizes
        rows.append(_row(t, n_leaves, leaves, xs, ys, maxd, splits if record_splits else None))
    return rows


def _quantize(x: float) -> float:
    """x rounded to a relative 2^-36 ≈ 1.5e-11: scores that are mathematically equal but reached
    through different products become bitwise equal (then the older leaf wins, as in the learners)."""
    if x <= 0.0:
        return 0.0
    m, e = math.frexp(x)
    return math.ldexp(round(m * 2.0**36), e - 36)


def _row(t, n_leaves, leaves, xs, ys, maxd, splits):
    row = {"size": t, "leaves": n_leaves, "error": math.fsum(v[2] for v in leaves.values()),
           "mass_no_x": math.fsum(v[3] for v in leaves.values()), "x_splits": xs, "y_splits": ys,
           "max_depth": maxd}
    if splits is not None:
        row["splits"] = list(splits)
    return row


def root_scores(s: Structure) -> dict:
    """At the root: δ of the best x-variable and of a y, their ratio, and every heuristic's score of
    both (Claim 4.3's mechanism: the y's are queried first iff the ratio exceeds 1)."""
    mu, _, _, cands, _ = _profile_stats(s.root().profile(s), s.k)
    dx = max((abs(d) for c, d in cands if c[0] != "y"), default=0.0)
    dy = max((abs(d) for c, d in cands if c[0] == "y"), default=0.0)
    out = {"mu": mu, "delta_x": dx, "delta_y": dy, "ratio_y_x": dy / dx if dx > 0 else math.inf}
    for h in HEURISTICS:
        g = (lambda d: d / 2) if h == "influence" else (lambda d, h=h: purity_gain(h, mu, d / 2))
        out[f"{h}_x"], out[f"{h}_y"] = g(dx), g(dy)
    return out
