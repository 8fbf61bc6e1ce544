"""Influence, noisy influence, distance (004 Def. 1-2) and BuildTopDownDT_Inf (000 Fig. 2).

``Inf_i(f) = E[ρ(f(x), f(x^~i))]`` with coordinate i *re-randomised*: half of the flipped-coordinate
influence of paper 000 (see :mod:`treelearn.learn.queries`). Exact on truth tables (n <= 20) or
estimated from one shared batch of random points with every candidate bit flipped.
"""
from __future__ import annotations

import heapq
import math
import numbers

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.learn.queries.oracle import (
    MAX_EXACT_N,
    Oracle,
    TreeBuilder,
    as_oracle,
    check_restriction,
    exact_influences_nd,
    exact_table,
    hoeffding_sample_size,
    keyed_rng,
    random_pm1,
    rng_seed,
    smooth,
    sub_table,
    table_to_nd,
)
from treelearn.tree.tree import Tree

# ----------------------------------------------------------------------------- influence
def resolve_metric(metric: str, *oracles) -> str:
    if metric == "auto":
        return "hamming" if all(not o.real_valued for o in oracles) else "abs"
    if metric not in ("hamming", "abs"):
        raise TreeLearnValueError("metric must be 'auto', 'hamming' (1[a != b]) or 'abs' (|a - b|)")
    return metric


def influences(f, *, restriction=None, method: str = "auto", n_samples: int | None = None, tau: float = 0.05,
               delta: float = 0.01, metric: str = "auto", random_state=None) -> np.ndarray:
    """Inf_i(f_π) for every variable i (004 Def. 1, re-randomised coordinate; fixed variables 0).

    This is **half** of 000's flipped-coordinate influence Pr[f(x) ≠ f(x^{⊕i})].

    ``method="exact"`` enumerates {±1}^n (n <= 20). ``"sampled"`` draws one batch of
    ``n_samples`` points (default: the Hoeffding size for accuracy ±τ/2 at confidence 1 − δ for
    every i at once, union bound over the n variables) and queries each point and its n flips:
    one shared batch for all i. ``"auto"``: exact for table oracles or n <= 16.
    """
    o = as_oracle(f)
    n = o.n_features
    pi = check_restriction(restriction, n)
    metric = resolve_metric(metric, o)
    if method == "auto":
        method = "exact" if (o.has_table or n <= 16) else "sampled"
    out = np.zeros(n)
    free = np.nonzero(pi == 0)[0]
    if method == "exact":
        nd = table_to_nd(exact_table(o), n)
        sub, free = sub_table(nd, pi)
        out[free] = exact_influences_nd(sub, metric)
        return out
    if method != "sampled":
        raise TreeLearnValueError("method must be 'auto', 'exact' or 'sampled'")
    if n_samples is None:
        # value 0.5·ρ(f(x), f(x^i)) lies in [0, 1/2] (hamming) or [0, 1] (abs)
        width = 0.5 if metric == "hamming" else 1.0
        n_samples = hoeffding_sample_size(tau / 2.0, delta / max(n, 1), width)
    rng = np.random.default_rng(rng_seed(random_state))
    X = random_pm1(rng, int(n_samples), pi)
    f0 = o.evaluate(X)
    F = o.evaluate_flips(X, free)
    if metric == "hamming":
        out[free] = 0.5 * np.mean(F != f0[:, None], axis=0)
    else:
        out[free] = 0.5 * np.mean(np.abs(F - f0[:, None]), axis=0)
    return out


def influence(f, i: int, **kw) -> float:
    """Inf_i(f_π) (see :func:`influences`)."""
    o = as_oracle(f)
    if not isinstance(i, numbers.Integral) or not 0 <= i < o.n_features:
        raise TreeLearnValueError(f"variable index {i!r} out of range for {o.n_features} variables")
    return float(influences(o, **kw)[int(i)])


def noisy_influences(f, delta: float, *, restriction=None, n_samples: int | None = None, n_noise: int = 64,
                     tau: float = 0.05, conf_delta: float = 0.01, random_state=None, method: str = "auto") -> np.ndarray:
    """Noisy influence Inf_i((f_δ)_π) in the |·| metric, by sampling (with coupled noise: the
    same noisy copies serve x and x^{⊕i}) or exactly for small n."""
    o = as_oracle(f)
    n = o.n_features
    if method == "auto":
        method = "exact" if (o.has_table or n <= 16) else "sampled"
    if method == "exact":
        return influences(smooth(o, delta, exact=True), restriction=restriction, method="exact", metric="abs")
    pi = check_restriction(restriction, n)
    free = np.nonzero(pi == 0)[0]
    if n_samples is None:
        n_samples = hoeffding_sample_size(tau / 2.0, conf_delta / max(n, 1), 1.0)
    rng = np.random.default_rng(rng_seed(random_state))
    X = random_pm1(rng, int(n_samples), pi)
    f0, F = smoothed_batch(o, X, free, delta, n_noise, rng, pi)
    out = np.zeros(n)
    out[free] = 0.5 * np.mean(np.abs(F - f0[:, None]), axis=0)
    return out


def _bernoulli_positions(rng, total: int, q: float) -> np.ndarray:
    """Indices < total of independent Bernoulli(q) successes (geometric gaps: O(total·q))."""
    if q <= 0:
        return np.empty(0, dtype=np.int64)
    if q >= 0.05:
        return np.nonzero(rng.random(total) < q)[0]
    out = []
    start = -1
    while True:
        k = int(total * q + 6 * math.sqrt(total * q) + 16)
        pos = start + np.cumsum(rng.geometric(q, size=k))
        out.append(pos[pos < total])
        if pos[-1] >= total:
            break
        start = int(pos[-1])
    return np.concatenate(out).astype(np.int64)


def smoothed_batch(o: Oracle, X, cand, delta, n_noise, rng, pi):
    """Monte Carlo (f_δ)_π at X and at X with each candidate flipped, coupled noise: the same
    ``n_noise`` noise patterns z serve x and x^{⊕i} (f((x ⊕ z)^{⊕i})). A pattern that flips
    nothing reuses the answers at x itself, so only noised points are queried (with the small δ
    of Lemma 7.3 most patterns are empty)."""
    q = delta / 2.0
    base0 = o.evaluate(X)
    baseF = o.evaluate_flips(X, cand)
    f0 = base0 * n_noise
    F = baseF * n_noise
    # (f_δ)_π: the restriction is applied first, the noise on every coordinate afterwards
    m, n = X.shape
    total = m * n
    for _ in range(n_noise):
        pos = _bernoulli_positions(rng, total, q)
        if pos.size == 0:
            continue
        rows, inv = np.unique(pos // n, return_inverse=True)
        Y = X[rows].copy()
        Y[inv, pos % n] *= -1
        f0[rows] += o.evaluate(Y) - base0[rows]
        F[rows] += o.evaluate_flips(Y, cand) - baseF[rows]
    return f0 / n_noise, F / n_noise


# ----------------------------------------------------------------------------- distances
def average_depth(tree: Tree) -> float:
    """Δ(T) = Σ_leaves |ℓ|·2^{−|ℓ|} under the uniform distribution (004 §3)."""
    return tree.average_depth()


def dist(f, g, *, metric: str = "auto", method: str = "auto", n_samples: int = 100_000, random_state=None) -> float:
    """dist(f, g) = E_x[ρ(f(x), g(x))] under the uniform distribution (004 Def. 2).

    f, g: Oracles, Trees over {±1}^n or truth tables. Exact for n <= 20 (``method="auto"``),
    otherwise a sample of ``n_samples`` uniform points."""
    fo, go = as_oracle(f), as_oracle(g)
    if fo.n_features != go.n_features:
        raise TreeLearnValueError(f"dist of functions on {fo.n_features} and {go.n_features} variables")
    metric = resolve_metric(metric, fo, go)
    n = fo.n_features
    if method == "auto":
        method = "exact" if n <= MAX_EXACT_N else "sampled"
    if method == "exact":
        a, b = exact_table(fo), exact_table(go)
    else:
        X = random_pm1(np.random.default_rng(rng_seed(random_state)), int(n_samples), np.zeros(n, np.int8))
        a, b = fo.evaluate(X), go.evaluate(X)
    return float(np.mean(a != b) if metric == "hamming" else np.mean(np.abs(a - b)))



# ----------------------------------------------------------------------------- BuildTopDownDT_Inf
def top_down_influence(f, t: int, *, influence: str = "auto", n_samples: int | None = None, tau: float = 0.05,
                       conf_delta: float = 0.01, random_state=None, return_sizes=None):
    """BuildTopDownDT_Inf(f, t) (000 Fig. 2, after [BLT20]): best-first growth, splitting the leaf
    of highest score 2^{−|ℓ|}·max_i Inf_i(f_ℓ) on its most influential variable, until size t;
    then the f-completion (each leaf labelled with the majority of f_ℓ).

    Influences exact (n <= 20, ``influence="auto"`` for table oracles or n <= 16) or estimated
    from ``n_samples`` points per leaf (default: Hoeffding for ±τ/2 at confidence 1 − δ).
    ``return_sizes``: optional list of sizes; returns {size: tree} snapshots instead of one tree.
    Growth stops early when no leaf has a variable of positive influence.
    """
    o = as_oracle(f)
    n = o.n_features
    if not isinstance(t, numbers.Integral) or t < 1:
        raise TreeLearnValueError(f"the size budget t must be a positive int, got {t!r}")
    if influence == "auto":
        influence = "exact" if (o.has_table or n <= 16) else "sampled"
    seed = rng_seed(random_state)
    if influence == "exact":
        nd = table_to_nd(exact_table(o), n)
        metric = "hamming" if not o.real_valued else "abs"

        def leaf_stats(pi):
            sub, free = sub_table(nd, pi)
            infl = np.zeros(n)
            infl[free] = exact_influences_nd(sub, metric)
            return float(np.mean(sub)), infl
    else:
        m = n_samples or hoeffding_sample_size(tau / 2.0, conf_delta / n, 0.5)

        def leaf_stats(pi):
            rng = keyed_rng(seed, pi.tobytes())
            X = random_pm1(rng, m, pi)
            f0 = o.evaluate(X)
            free = np.nonzero(pi == 0)[0]
            F = o.evaluate_flips(X, free)
            infl = np.zeros(n)
            if o.real_valued:
                infl[free] = 0.5 * np.mean(np.abs(F - f0[:, None]), axis=0)
            else:
                infl[free] = 0.5 * np.mean(F != f0[:, None], axis=0)
            return float(f0.mean()), infl

    # tree as dict: node -> (pi, depth, var or None, children)
    nodes = []  # [pi, depth, mean, best_var, best_inf, left, right]
    heap = []

    def add_leaf(pi, d):
        mean, infl = leaf_stats(pi)
        j = int(np.argmax(infl))
        idx = len(nodes)
        nodes.append([pi, d, mean, j, float(infl[j]), -1, -1])
        if infl[j] > 0:
            heapq.heappush(heap, (-(2.0**-d) * infl[j], idx))
        return idx

    add_leaf(np.zeros(n, np.int8), 0)
    size = 1
    wanted = sorted(set(int(s) for s in return_sizes)) if return_sizes is not None else None
    snaps = {}

    def snapshot():
        bld = TreeBuilder()

        def emit(v, mass):
            pi, d, mean, j, _, l, r = nodes[v]
            if l < 0:
                return bld.leaf(1 if mean >= 0 else -1, mass)
            node = bld.internal(j)
            bld.set_children(node, emit(l, mass / 2), emit(r, mass / 2))
            return node

        emit(0, 1.0)
        return bld.tree(n)

    while size < t and heap:
        if wanted is not None and size in wanted:
            snaps[size] = snapshot()
        _, v = heapq.heappop(heap)
        pi, d, mean, j = nodes[v][:4]
        pl, pr = pi.copy(), pi.copy()
        pl[j], pr[j] = -1, 1
        a = add_leaf(pl, d + 1)
        b = add_leaf(pr, d + 1)
        nodes[v][5], nodes[v][6] = a, b
        size += 1
    final = snapshot()
    if wanted is None:
        return final
    for s in wanted:
        if s not in snaps:
            snaps[s] = final if s >= size else snaps.get(s, final)
    return snaps
