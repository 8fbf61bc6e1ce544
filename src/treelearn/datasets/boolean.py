"""Boolean functions over {±1}^n for the membership-query learners.

Every generator returns a :class:`treelearn.Oracle` (or a ±1 :class:`treelearn.Tree`): random
size-s decision trees, Majority, Tribes (003 Def. 6–7, 000 §4), the lower-bound function
f_{ℓ,k} of 000 §4 (Tribes' / Rest / Majority), and monotone functions with label noise.
Truth ±1: +1 plays "true"/1 of the papers' {0, 1} notation, a variable is "true" when x_i = +1.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.learn.queries.oracle import MAX_EXACT_N, Oracle, TreeBuilder, all_points, as_oracle, rng_seed
from treelearn.tree.tree import Tree

__all__ = [
    "random_tree",
    "majority",
    "tribes",
    "tribes_width",
    "tribes_tree",
    "lower_bound_function",
    "random_monotone",
    "flip_labels",
]


def _check_n(n, what="n_features", low=1):
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < low:
        raise TreeLearnValueError(f"{what} must be an int >= {low}, got {n!r}")
    return int(n)


def random_tree(n_features: int, size: int, random_state=None, *, max_depth: int | None = None) -> Tree:
    """A random size-``size`` decision tree over {±1}^n: grown from one leaf by splitting a
    uniformly random leaf (of depth < ``max_depth``) on a uniformly random variable not yet on its
    path; leaf labels ±1 uniform, then each pair of sibling leaves made to disagree (so no split
    is redundant). Returns a Tree (feature i, threshold 0, classes [-1, 1])."""
    n = _check_n(n_features)
    s = _check_n(size, "size")
    max_depth = n if max_depth is None else min(int(max_depth), n)
    if s > 2**max_depth:
        raise TreeLearnValueError(f"a tree of depth <= {max_depth} has at most {2**max_depth} leaves, asked for {s}")
    rng = np.random.default_rng(rng_seed(random_state))
    # nodes: var (or -1), children, path vars
    var, kids, path = [-1], [None], [frozenset()]
    leaves = [0]
    while len(leaves) < s:
        cand = [v for v in leaves if len(path[v]) < max_depth]
        v = cand[int(rng.integers(len(cand)))]
        free = [j for j in range(n) if j not in path[v]]
        j = free[int(rng.integers(len(free)))]
        var[v] = j
        a, b = len(var), len(var) + 1
        var += [-1, -1]
        kids += [None, None]
        path += [path[v] | {j}, path[v] | {j}]
        kids[v] = (a, b)
        leaves.remove(v)
        leaves += [a, b]
    label = {v: int(rng.choice([-1, 1])) for v in leaves}
    for v in range(len(var)):
        if kids[v] is not None:
            a, b = kids[v]
            if var[a] < 0 and var[b] < 0 and label[a] == label[b]:
                label[b] = -label[a]
    bld = TreeBuilder()

    def emit(v, mass):
        if kids[v] is None:
            return bld.leaf(label[v], mass)
        node = bld.internal(var[v])
        l = emit(kids[v][0], mass / 2)
        r = emit(kids[v][1], mass / 2)
        bld.set_children(node, l, r)
        return node

    emit(0, 1.0)
    return bld.tree(n)


def majority(n_features: int, variables=None) -> Oracle:
    """MAJ(x) = +1 iff Σ_{i ∈ variables} x_i >= 0 (ties to +1; all variables by default)."""
    n = _check_n(n_features)
    idx = np.arange(n) if variables is None else np.asarray(variables, dtype=np.int64)

    def fn(X):
        return np.where(X[:, idx].sum(axis=1, dtype=np.int64) >= 0, 1.0, -1.0)

    return Oracle.from_function(fn, n, name="Majority")


def tribes_width(n_vars: int, target: float = 0.5) -> int:
    """The width w making Tribes (⌊ℓ/w⌋ disjoint AND terms of width w) accept with probability
    closest to ``target``."""
    best, bw = None, 1
    for w in range(1, n_vars + 1):
        m = n_vars // w
        p = 1 - (1 - 2.0**-w) ** m
        if best is None or abs(p - target) < best:
            best, bw = abs(p - target), w
    return bw


def _tribes_eval(X, offset, w, m):
    if m == 0:
        return np.zeros(X.shape[0], dtype=bool)
    blk = X[:, offset:offset + w * m].reshape(X.shape[0], m, w)
    return np.any(np.all(blk > 0, axis=2), axis=1)


def tribes(n_features: int, width: int | None = None, n_terms: int | None = None) -> Oracle:
    """TRIBES: OR of ``n_terms`` ANDs of ``width`` disjoint variables (x_i = +1 true; defaults:
    the width of :func:`tribes_width`, ⌊n/w⌋ terms). Output +1 when some term holds."""
    n = _check_n(n_features)
    w = tribes_width(n) if width is None else _check_n(width, "width")
    m = n // w if n_terms is None else int(n_terms)
    if w * m > n:
        raise TreeLearnValueError(f"{m} terms of width {w} need {w * m} variables, have {n}")

    def fn(X):
        return np.where(_tribes_eval(X, 0, w, m), 1.0, -1.0)

    o = Oracle.from_function(fn, n, name="Tribes")
    o.tribes = {"width": w, "n_terms": m, "p_accept": 1 - (1 - 2.0**-w) ** m}
    return o


def lower_bound_function(l: int, k: int, *, p_tribes_prime: float = 0.499, p_rest: float | None = None) -> Oracle:
    """f_{ℓ,k}(x, y) of 000 §4 on n = ℓ + k variables (x = the first ℓ, y = the last k):
    +1 if TRIBES'_ℓ(x), MAJ_k(y) if REST_ℓ(x) = TRIBES_ℓ(x) ∧ ¬TRIBES'_ℓ(x), else −1.

    TRIBES_ℓ has m width-w terms with acceptance closest to 1/2 (w = :func:`tribes_width`).
    ``p_rest=None`` (the paper's construction): TRIBES'_ℓ keeps the first m' < m terms, m' giving
    acceptance closest to ``p_tribes_prime``; at small ℓ the granularity makes Pr[REST] far from
    the paper's 0.001 (e.g. 0.07 at ℓ = 16). ``p_rest=p``: TRIBES' = T_1 ∨ … ∨ T_{m−1} ∨
    (T_m ∧ ¬E) with E an AND of r spare x-variables, (m, r) chosen so that Pr[TRIBES] stays near
    1/2 and Pr[REST] = 2^{−w−r}(1 − 2^{−w})^{m−1} is near p. The attribute ``info`` gives the
    parameters, the acceptance probabilities and ``dist_to_tribes`` = Pr[REST]·Pr[MAJ_k = −1]
    (the error of the size-<= 2^{wm} tree :func:`tribes_tree` computing TRIBES_ℓ)."""
    l = _check_n(l, "l", 2)
    k = _check_n(k, "k")
    w = tribes_width(l)
    q = 2.0**-w
    if p_rest is None:
        m = l // w
        mp = min(range(0, m), key=lambda t: abs((1 - (1 - q) ** t) - p_tribes_prime))
        r = -1
        p_t, p_tp = 1 - (1 - q) ** m, 1 - (1 - q) ** mp
    else:
        if not 0 < p_rest < 0.5:
            raise TreeLearnValueError("p_rest must lie in (0, 0.5)")
        best = None
        for m_ in range(1, l // w + 1):
            for r_ in range(0, l - w * m_ + 1):
                pt = 1 - (1 - q) ** m_
                pr = q * 2.0**-r_ * (1 - q) ** (m_ - 1)
                score = abs(pt - 0.5) + 0.05 * abs(math.log2(pr / p_rest))
                if best is None or score < best[0]:
                    best = (score, m_, r_)
        _, m, r = best
        mp = m - 1
        p_t = 1 - (1 - q) ** m
        p_tp = p_t - q * 2.0**-r * (1 - q) ** (m - 1)
    E = np.arange(w * m, w * m + max(r, 0))

    def fn(X):
        tr = _tribes_eval(X, 0, w, m)
        trp = _tribes_eval(X, 0, w, mp)
        if r >= 0:  # refined: the last term counts for TRIBES' unless E holds
            last = np.all(X[:, w * (m - 1):w * m] > 0, axis=1)
            e = np.all(X[:, E] > 0, axis=1) if r > 0 else np.ones(X.shape[0], dtype=bool)
            trp = trp | (last & ~e)
        maj = X[:, l:].sum(axis=1, dtype=np.int64) >= 0
        return np.where(trp, 1.0, np.where(tr, np.where(maj, 1.0, -1.0), -1.0))

    o = Oracle.from_function(fn, l + k, name=f"f_{{{l},{k}}}")
    p_maj_neg = _p_majority_negative(k)
    o.info = {"l": l, "k": k, "width": w, "n_terms": m, "n_terms_prime": mp, "extra_literals": max(r, 0),
              "construction": "terms" if r < 0 else "refined", "p_tribes": p_t, "p_tribes_prime": p_tp,
              "p_rest": p_t - p_tp, "dist_to_tribes": (p_t - p_tp) * p_maj_neg}
    return o


def _p_majority_negative(k):
    # Pr[Σ y_i < 0] for k uniform ±1 (ties count as +1)
    return sum(math.comb(k, j) for j in range(k + 1) if 2 * j - k < 0) / 2.0**k


def tribes_tree(n_features: int, width: int, n_terms: int, offset: int = 0) -> Tree:
    """The decision tree computing TRIBES on variables offset.. (read-once DNF: test the terms in
    order, each variable at most once on a path); size <= 2^(w·m)."""
    bld = TreeBuilder()

    def term(t, j, mass):
        if t == n_terms:
            return bld.leaf(-1, mass)
        if j == width:
            return bld.leaf(1, mass)
        node = bld.internal(offset + t * width + j)
        a = term(t + 1, 0, mass / 2)  # x = −1: this term fails, go to the next
        b = term(t, j + 1, mass / 2)
        bld.set_children(node, a, b)
        return node

    term(0, 0, 1.0)
    return bld.tree(n_features)


def random_monotone(n_features: int, n_relevant: int | None = None, random_state=None, *, kind: str = "threshold",
                    noise: float = 0.0) -> Oracle:
    """A random monotone function with label noise.

    ``kind="threshold"``: +1 iff Σ_{i∈R} w_i x_i >= θ for a random subset R of ``n_relevant``
    variables, positive weights and a threshold near the median; ``"dnf"``: a random monotone DNF
    (terms of 2–3 positive variables over R). ``noise``: each point's label is flipped with this
    probability, by a fixed hash of the point (a fixed function, so repeated queries agree; for
    n <= 20 exactly round(noise·2^n) points are flipped).
    """
    n = _check_n(n_features)
    r = min(n, 8) if n_relevant is None else _check_n(n_relevant, "n_relevant")
    if r > n:
        raise TreeLearnValueError("n_relevant > n_features")
    if not 0 <= noise < 0.5:
        raise TreeLearnValueError("noise must lie in [0, 0.5)")
    rng = np.random.default_rng(rng_seed(random_state))
    R = np.sort(rng.choice(n, size=r, replace=False))
    if kind == "threshold":
        wts = rng.uniform(0.5, 1.5, size=r)
        theta = float(rng.uniform(-0.3, 0.3)) * wts.sum() / 3

        def base(X):
            return np.where(X[:, R].astype(np.float64) @ wts >= theta, 1.0, -1.0)
    elif kind == "dnf":
        terms = [R[rng.choice(r, size=min(r, int(rng.integers(2, 4))), replace=False)] for _ in range(max(1, r // 2))]

        def base(X):
            acc = np.zeros(X.shape[0], dtype=bool)
            for t in terms:
                acc |= np.all(X[:, t] > 0, axis=1)
            return np.where(acc, 1.0, -1.0)
    else:
        raise TreeLearnValueError("kind must be 'threshold' or 'dnf'")
    if noise == 0:
        return Oracle.from_function(base, n, name=f"monotone-{kind}")
    if n <= MAX_EXACT_N:
        table = base(all_points(n))
        flip = rng.choice(2**n, size=int(round(noise * 2**n)), replace=False)
        table[flip] *= -1
        return Oracle.from_truth_table(table, name=f"monotone-{kind}+noise")
    salt = rng.integers(1, 2**62, size=n, dtype=np.int64)
    cut = int(noise * 2**31)

    def fn(X):
        h = ((X > 0).astype(np.int64) * salt).sum(axis=1) ^ 0x5DEECE66D
        h = (h * 0x9E3779B97F4A7C15) & 0x7FFFFFFFFFFFFFFF
        return base(X) * np.where(((h >> 20) & 0x7FFFFFFF) < cut, -1.0, 1.0)

    return Oracle.from_function(fn, n, name=f"monotone-{kind}+noise")


def flip_labels(f, fraction: float, random_state=None) -> Oracle:
    """The truth table of f (n <= 20) with exactly round(fraction·2^n) uniformly chosen entries
    negated (the agnostic setting's corrupted target)."""
    o = as_oracle(f)
    if not 0 <= fraction <= 1:
        raise TreeLearnValueError("fraction must lie in [0, 1]")
    t = o.truth_table().copy()
    rng = np.random.default_rng(rng_seed(random_state))
    idx = rng.choice(t.size, size=int(round(fraction * t.size)), replace=False)
    t[idx] *= -1
    return Oracle.from_truth_table(t, name=f"{o.name}+flips")
