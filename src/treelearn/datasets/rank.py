"""Random targets of bounded rank (001): decision trees of rank r over n Boolean variables.

* :func:`random_rank_tree` — a random *reduced* tree of rank exactly r over x_0..x_{n-1}
  (0/1 variables, conditions ``x_j >= 0.5``), a target in F_n^r;
* :func:`sample_uniform` — examples from the uniform distribution on {0,1}^n labelled by a tree;
* :func:`make_rank_tree_sample` — both at once: ``(X, y, target)``;
* :func:`uniform_error` — the exact error of a hypothesis tree against a target tree under the
  uniform distribution (sum over pairs of compatible leaves with different labels of
  2^-(number of variables fixed)), no sampling, any n.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError, check_int_param
from treelearn.tree.tree import LEAF, UNDEFINED, Tree

__all__ = ["random_rank_tree", "sample_uniform", "make_rank_tree_sample", "uniform_error"]


def random_rank_tree(n_variables, rank, random_state=None, *, p_unbalanced=0.3) -> Tree:
    """A random reduced decision tree of rank exactly ``rank`` over ``n_variables`` 0/1 variables.

    Built top-down from the definition of rank: a node of rank r > 0 gets, with probability
    ``1 - p_unbalanced``, two subtrees of rank r - 1; otherwise one subtree of rank r and one of a
    uniformly drawn rank below r (sides at random), when enough unused variables remain. Each
    node's variable is drawn uniformly among those not used on its path (reduced tree). Leaf
    labels are uniform, except that two sibling leaves always get different labels (no node is
    redundant). Requires ``n_variables >= rank`` (a rank-r tree has depth >= r).
    """
    n = check_int_param("n_variables", n_variables, low=1)
    r = check_int_param("rank", rank, low=0)
    if r > n:
        raise TreeLearnValueError(f"a reduced tree of rank {r} needs at least {r} variables, got {n}")
    if not 0.0 <= p_unbalanced < 1.0:
        raise TreeLearnValueError(f"p_unbalanced must be in [0, 1), got {p_unbalanced}")
    rng = np.random.default_rng(random_state)
    left, right, feat, label = [], [], [], []

    def new_node():
        left.append(LEAF)
        right.append(LEAF)
        feat.append(UNDEFINED)
        label.append(-1)
        return len(left) - 1

    # explicit stack: (node id, rank to build, available variables)
    root = new_node()
    stack = [(root, r, list(range(n)))]
    while stack:
        node, rk, avail = stack.pop()
        if rk == 0:
            label[node] = int(rng.integers(2))
            continue
        v = avail[int(rng.integers(len(avail)))]
        rest = [u for u in avail if u != v]
        if len(rest) >= rk and rng.random() < p_unbalanced:
            low = int(rng.integers(rk))
            ranks = (rk, low) if rng.random() < 0.5 else (low, rk)
        else:
            ranks = (rk - 1, rk - 1)
        feat[node] = v
        a = new_node()
        b = new_node()
        left[node], right[node] = a, b
        stack.append((b, ranks[1], rest))
        stack.append((a, ranks[0], rest))
    # sibling leaves with equal labels would make their parent redundant: flip one
    for node in range(len(left)):
        a, b = left[node], right[node]
        if a >= 0 and left[a] < 0 and left[b] < 0 and label[a] == label[b]:
            label[b] = 1 - label[a]
    return _to_tree(left, right, feat, label, n)


def _to_tree(left, right, feat, label, n) -> Tree:
    # renumber in preorder so children follow parents (they already do: ids grow downwards)
    m = len(left)
    value = np.zeros((m, 2))
    for node in range(m - 1, -1, -1):
        if left[node] < 0:
            value[node, label[node]] = 1.0
        else:
            value[node] = value[left[node]] + value[right[node]]
    internal = np.asarray(left) >= 0
    return Tree(children_left=left, children_right=right, feature=feat,
                threshold=np.where(internal, 0.5, UNDEFINED), kind=np.where(internal, 0, -1),
                value=value, classes=np.array([0, 1]), n_features=n)


def sample_uniform(tree: Tree, n_samples, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` points of {0,1}^n (uniform, independent) and their labels under ``tree``."""
    m = check_int_param("n_samples", n_samples, low=1)
    rng = np.random.default_rng(random_state)
    X = rng.integers(0, 2, size=(m, tree.n_features), dtype=np.uint8)
    return X, tree.predict(X)


def make_rank_tree_sample(n_variables, rank, n_samples, random_state=None, *, p_unbalanced=0.3):
    """``(X, y, target)``: a random rank-``rank`` target tree and a uniform sample labelled by it."""
    rng = np.random.default_rng(random_state)
    target = random_rank_tree(n_variables, rank, rng, p_unbalanced=p_unbalanced)
    X, y = sample_uniform(target, n_samples, rng)
    return X, y, target


def _regions(tree: Tree, fixed: dict, prob: float):
    """Leaves of a tree over 0/1 variables reachable under the partial assignment ``fixed``:
    yields (leaf, assignment extended along the path, probability under the uniform distribution
    given ``fixed``)."""
    stack = [(0, fixed, prob)]
    while stack:
        node, fx, p = stack.pop()
        if tree.children_left[node] < 0:
            yield node, fx, p
            continue
        v = int(tree.feature[node])
        t = float(tree.threshold[node])
        if tree.kind[node] != 0:
            raise TreeLearnValueError("uniform_error needs trees with numeric conditions on 0/1 variables")
        if v in fx:
            goes_right = fx[v] >= t
            stack.append((int(tree.children_right[node] if goes_right else tree.children_left[node]), fx, p))
        else:
            lo, hi = (0, 1) if t > 0 else (-1, 1)  # 0/1 data uses 0.5, ±1 data uses 0
            stack.append((int(tree.children_left[node]), {**fx, v: lo}, p / 2))
            stack.append((int(tree.children_right[node]), {**fx, v: hi}, p / 2))


def uniform_error(hypothesis: Tree, target: Tree) -> float:
    """Exact Pr_x[h(x) != f(x)] for x uniform on {0,1}^n (or {±1}^n), h and f decision trees
    whose conditions are ``x_j >= t`` on binary variables."""
    lab_h = hypothesis.classes[hypothesis.leaf_class_index()]
    lab_f = target.classes[target.leaf_class_index()]
    err = 0.0
    for leaf_h, fixed, p in _regions(hypothesis, {}, 1.0):
        for leaf_f, _, q in _regions(target, fixed, p):
            if lab_h[leaf_h] != lab_f[leaf_f]:
                err += q
    return float(err)
