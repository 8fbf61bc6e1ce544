"""The error-size front of the optimal search and its cost-complexity path.

:meth:`~treelearn.OptimalTreeClassifier.error_size_front` (and :func:`treelearn.error_size_front`,
in :mod:`treelearn.learn.topk.estimator`) runs the binary
search once with a leaf budget B and rebuilds, for every budget b = 1..B, the best tree of at most
b leaves (the search's dynamic program over budgets, ``learn/topk/search.h``: a subproblem
(cover, depth, budget) is solved once for every budget that needs it). Its lower convex hull is
the optimal analogue of scikit-learn's ``cost_complexity_pruning_path``: ``ccp_alphas[i]`` is the
smallest ``ccp_alpha`` at which the optimal tree (of depth <= max_depth, at most B leaves) is
``trees[hull[i]]``.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch


def front_bunch(trees: list, errors: list) -> Bunch:
    """The front of the trees of budgets 1..B (``errors``: their weighted training errors):
    ``max_leaves`` (the budgets), ``n_leaves``, ``errors``, ``error_rates`` (errors / total
    weight), ``trees``, and the path: ``hull`` (indices of the hull's points, leaves decreasing)
    and ``ccp_alphas`` (increasing, from 0)."""
    trees, errors = list(trees), [float(e) for e in errors]
    for b in range(1, len(trees)):  # a larger budget that does not lower the error keeps the smaller tree
        if errors[b] >= errors[b - 1] - 1e-12 * max(1.0, abs(errors[b - 1])):
            trees[b], errors[b] = trees[b - 1], errors[b - 1]
    n_leaves = np.array([t.n_leaves for t in trees], dtype=np.int64)
    errors = np.asarray(errors, dtype=float)
    total = float(trees[0].value[0].sum())
    rates = errors / total if total > 0 else errors
    hull, alphas = cost_complexity_path(n_leaves, rates)
    return Bunch(max_leaves=np.arange(1, len(trees) + 1), n_leaves=n_leaves, errors=errors, error_rates=rates,
                 trees=trees, hull=np.array(hull, dtype=np.int64), ccp_alphas=np.array(alphas))


def cost_complexity_path(n_leaves, rates):
    """The lower convex hull of the points (leaves, error rate): from the fewest errors (ties:
    fewest leaves) at alpha = 0, the point of fewer leaves minimising rate + alpha * leaves once
    alpha passes the breakpoint (E_j - E_i) / (L_i - L_j) (ties: fewest leaves), down to one leaf.
    Returns (indices, alphas)."""
    order = np.lexsort((n_leaves, rates))
    i = int(order[0])
    hull, alphas = [i], [0.0]
    while True:
        fewer = [j for j in range(len(rates)) if n_leaves[j] < n_leaves[i]]
        if not fewer:
            return hull, alphas
        slopes = [(rates[j] - rates[i]) / (n_leaves[i] - n_leaves[j]) for j in fewer]
        best = min(slopes)
        i = min((j for j, s in zip(fewer, slopes) if s <= best + 1e-15), key=lambda j: (n_leaves[j], j))
        hull.append(i)
        alphas.append(max(float(best), 0.0))

