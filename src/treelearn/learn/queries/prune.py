"""PRUNE of 004 Fig. 1: the everywhere τ-influential pruning of a tree w.r.t. a function.

Not the bound- or cost-complexity pruning of :mod:`treelearn.prune` (those prune a fitted tree
on a sample); this one keeps a node only where its variable is τ-influential for the function
restricted to the node (004 Def. 4), hence its name :func:`influential_pruning`.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.learn.queries.influence import resolve_metric
from treelearn.learn.queries.oracle import (
    MAX_EXACT_N,
    TreeBuilder,
    all_points,
    as_oracle,
    exact_table,
    keyed_rng,
    random_pm1,
    rng_seed,
    sub_table,
    table_to_nd,
)
from treelearn.tree._tree import pm1_index
from treelearn.tree.tree import Tree


def _tree_leaf_labels(tree: Tree) -> np.ndarray:
    return np.asarray(tree.classes)[tree.leaf_class_index()].astype(np.float64)


def influential_pruning(f, tree: Tree, tau: float, *, metric: str = "auto", method: str = "auto", n_samples: int = 20000,
          random_state=None) -> Tree:
    """PRUNE(f, T, τ) (004 Fig. 1): an everywhere τ-influential pruning of T w.r.t. f.

    Keeps T's nodes (each node is kept or replaced by one of its subtrees); a kept node's
    variable has Inf_i(f_v) > τ. Exact influences and distances for n <= 20 (``method="auto"``),
    else estimates from ``n_samples`` uniform points per restriction. Guarantees (Thm 5): size
    and depth do not grow, everywhere τ-influential, dist(T*, f) <= dist(T, f) + Δ(T)·τ.
    """
    o = as_oracle(f)
    n = o.n_features
    if tree.n_features != n:
        raise TreeLearnValueError(f"the tree reads {tree.n_features} variables, f has {n}")
    if not tau > 0:
        raise TreeLearnValueError("tau must be > 0")
    metric = resolve_metric(metric, o)
    if method == "auto":
        method = "exact" if n <= MAX_EXACT_N else "sampled"
    labels = _tree_leaf_labels(tree)
    L, R, F = tree.children_left, tree.children_right, tree.feature
    seed = rng_seed(random_state)

    if method == "exact":
        tab = exact_table(o)
        nd = table_to_nd(tab, n)

        def inf_of(pi, i):
            sub, free = sub_table(nd, pi)
            a = int(np.searchsorted(free, i))
            a0, a1 = np.take(sub, 0, axis=a), np.take(sub, 1, axis=a)
            return 0.5 * float(np.mean(a0 != a1) if metric == "hamming" else np.mean(np.abs(a0 - a1)))

        pts = all_points(n)

        def dist_of(pi, sub_nodes_eval):
            X = pts[np.all((pts == pi) | (pi == 0), axis=1)]
            fv = tab[pm1_index(X)]
            tv = sub_nodes_eval(X)
            return float(np.mean(fv != tv) if metric == "hamming" else np.mean(np.abs(fv - tv)))
    else:
        def inf_of(pi, i):
            rng = keyed_rng(seed, pi.tobytes() + bytes([1]))
            X = random_pm1(rng, n_samples, pi)
            f0 = o.evaluate(X)
            f1 = o.evaluate_flips(X, np.array([i], dtype=np.int64))[:, 0]
            return 0.5 * float(np.mean(f0 != f1) if metric == "hamming" else np.mean(np.abs(f0 - f1)))

        def dist_of(pi, sub_nodes_eval):
            rng = keyed_rng(seed, pi.tobytes() + bytes([2]))
            X = random_pm1(rng, n_samples, pi)
            fv, tv = o.evaluate(X), sub_nodes_eval(X)
            return float(np.mean(fv != tv) if metric == "hamming" else np.mean(np.abs(fv - tv)))

    # a pruned tree is represented as nested (node-of-T, left, right) / ("leaf", node-of-T)
    def evaluator(nested):
        def ev(X):
            out = np.empty(X.shape[0])
            stack = [(nested, np.arange(X.shape[0]))]
            while stack:
                t, rows = stack.pop()
                if t[0] == "leaf":
                    out[rows] = labels[t[1]]
                else:
                    v = t[1]
                    go = X[rows, F[v]] >= 0
                    stack.append((t[2], rows[~go]))
                    stack.append((t[3], rows[go]))
            return out
        return ev

    def rec(pi, v):
        if L[v] < 0:
            return ("leaf", v)
        i = int(F[v])
        if pi[i] == 0 and inf_of(pi, i) > tau:
            pl, pr = pi.copy(), pi.copy()
            pl[i], pr[i] = -1, 1
            return ("node", v, rec(pl, L[v]), rec(pr, R[v]))
        a, b = rec(pi, L[v]), rec(pi, R[v])
        da, db = dist_of(pi, evaluator(a)), dist_of(pi, evaluator(b))
        return a if da <= db else b

    nested = rec(np.zeros(n, dtype=np.int8), 0)
    bld = TreeBuilder()

    def emit(t, mass):
        if t[0] == "leaf":
            return bld.leaf(int(labels[t[1]]), mass)
        node = bld.internal(int(F[t[1]]))
        bld.set_children(node, emit(t[2], mass / 2), emit(t[3], mass / 2))
        return node

    emit(nested, 1.0)
    return bld.tree(n, schema=tree.schema)


def is_everywhere_influential(f, tree: Tree, tau: float, *, strict: bool = False, metric: str = "auto") -> bool:
    """Exact check (n <= 20) of 004 Def. 4: every internal node's variable has Inf(f_v) >= τ
    (> τ when ``strict``)."""
    o = as_oracle(f)
    n = o.n_features
    metric = resolve_metric(metric, o)
    nd = table_to_nd(exact_table(o), n)
    L, R, F = tree.children_left, tree.children_right, tree.feature
    stack = [(0, np.zeros(n, dtype=np.int8))]
    while stack:
        v, pi = stack.pop()
        if L[v] < 0:
            continue
        i = int(F[v])
        if pi[i] != 0:
            return False
        sub, free = sub_table(nd, pi)
        a = int(np.searchsorted(free, i))
        a0, a1 = np.take(sub, 0, axis=a), np.take(sub, 1, axis=a)
        inf = 0.5 * float(np.mean(a0 != a1) if metric == "hamming" else np.mean(np.abs(a0 - a1)))
        if inf < tau - 1e-12 or (strict and inf <= tau):
            return False
        pl, pr = pi.copy(), pi.copy()
        pl[i], pr[i] = -1, 1
        stack.append((L[v], pl))
        stack.append((R[v], pr))
    return True
