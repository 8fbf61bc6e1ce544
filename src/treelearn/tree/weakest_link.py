"""Weakest-link pruning of a Tree (Breiman et al. 1984, ch. 3): the one routine, compiled in
``core/weakest_link.h``, behind :class:`~treelearn.GreedyTreeClassifier`'s ``ccp_alpha``
(scikit-learn's minimal cost-complexity pruning, :func:`prune_ccp`) and the cost-complexity
paths of :mod:`treelearn.prune` (CART's and M-CART's complexities, :func:`weakest_link_path`).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from treelearn.tree._tree import weakest_link
from treelearn.tree.tree import Tree

__all__ = ["LINK_TIE", "WeakestLinkPath", "weakest_link_path", "prune_ccp", "ccp_path"]

#: link strengths (the α of a step) closer than this, relative to max(1, |α|), are ties in the
#: cost-complexity paths of treelearn.prune, and so are the costs R + α·C of the path's trees
#: when one is chosen (scikit-learn's ccp_alpha takes exact ties only)
LINK_TIE = 1e-12


class WeakestLinkPath(NamedTuple):
    """The steps of a weakest-link pruning: per step the smallest link strength ``g_min`` (the
    α at which it happens; +inf when no collapse lowers the complexity), the tree's ``risk``
    (summed leaf costs) and ``n_leaves`` after it; per node ``collapse_step`` (the step at which
    it became a leaf, -1: never) and ``removed_step`` (the first step at which a proper ancestor
    became a leaf; the number of steps when none did)."""

    g_min: np.ndarray
    risk: np.ndarray
    n_leaves: np.ndarray
    collapse_step: np.ndarray
    removed_step: np.ndarray

    def cut(self, step: int) -> set:
        """The nodes that are leaves standing for a removed subtree after ``step`` (-1: before
        the first step): the roots of the removed subtrees, none inside another."""
        cs = self.collapse_step
        return set(np.flatnonzero((cs >= 0) & (cs <= step) & (self.removed_step > step)).tolist())


def weakest_link_path(tree: Tree, leaf_cost, *, complexity=None, alpha: float = math.inf, all_ties: bool = False,
                      tol: float = 0.0) -> WeakestLinkPath:
    """Weakest-link pruning of ``tree`` with ``leaf_cost[i]`` the cost of node i as a leaf.

    ``complexity``: None (CART: a tree's complexity is its number of leaves) or the complexity
    of a tree by its number of leaves (``complexity[L]``, L = 0..tree.n_leaves). Every step
    collapses the weakest link (``core/weakest_link.h``): the lowest node id among those within
    ``tol`` (relative) of the smallest link strength, or all of them with ``all_ties``; steps stop
    before one whose strength exceeds ``alpha``, or at the root."""
    left = np.ascontiguousarray(tree.children_left, dtype=np.int64)
    right = np.ascontiguousarray(tree.children_right, dtype=np.int64)
    r = np.ascontiguousarray(leaf_cost, dtype=np.float64)
    step, g, risk, leaves = weakest_link(left, right, r, complexity, float(alpha), bool(all_ties), float(tol))
    removed = np.full(left.size, g.size, dtype=np.int64)  # children come after their parents
    for v in np.flatnonzero(left >= 0).tolist():
        below = removed[v] if step[v] < 0 else min(removed[v], int(step[v]))
        removed[left[v]] = removed[right[v]] = below
    return WeakestLinkPath(g, risk, leaves, step, removed)


def _ccp_leaf_costs(tree: Tree) -> np.ndarray:
    """R(t) of scikit-learn's minimal cost-complexity pruning: (weight of t / total) x impurity(t)
    in scikit-learn's units (``tree.impurity``)."""
    W = tree.node_weights()
    return W / W[0] * tree.impurity if W[0] > 0 else np.zeros_like(W)


def ccp_path(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's minimal cost-complexity pruning path of ``tree`` (what its estimators'
    ``cost_complexity_pruning_path`` returns): ``(ccp_alphas, impurities)``, the α of every
    weakest-link step (one node per step, ties: the lowest node id) after 0.0, and the total leaf
    impurity R(T) of the tree before the first step and after each."""
    r = _ccp_leaf_costs(tree)
    path = weakest_link_path(tree, r)
    left, right = tree.children_left, tree.children_right
    R = r.copy()  # the unpruned tree's risk, summed children first as the routine sums it
    for v in range(tree.node_count - 1, -1, -1):
        if left[v] >= 0:
            R[v] = R[left[v]] + R[right[v]]
    return (np.concatenate(([0.0], np.maximum(path.g_min, 0.0))),
            np.concatenate(([float(R[0])], np.asarray(path.risk, dtype=np.float64))))


def prune_ccp(tree: Tree, alpha: float) -> Tree:
    """Minimal cost-complexity pruning as scikit-learn's ``ccp_alpha``: R(t) = (weight of t /
    total) x impurity(t) in scikit-learn's units (``tree.impurity``), the weakest link (ties: the
    lowest node id) collapsed while its strength is <= ``alpha``. Returns the pruned copy (the
    tree itself when nothing is cut)."""
    r = _ccp_leaf_costs(tree)
    path = weakest_link_path(tree, r, alpha=float(alpha))
    cut = path.cut(path.g_min.size - 1)
    return tree.prune(cut) if cut else tree
