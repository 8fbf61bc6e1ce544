"""Binary tree *structures* of paper 002 (Leboeuf, LeBlanc, Marchand 2020): the objects the
bounds of :mod:`treelearn.prune.bounds` are stated on.

* :class:`TreeShape` — a hashable, canonical shape (mirror-symmetric shapes are the *same*
  object), and :func:`as_shape`, which accepts a shape, a fitted :class:`~treelearn.Tree` (or an
  estimator holding one in ``tree_``) or nested tuples (a leaf is ``()``, a node ``(left, right)``);
* :func:`all_shapes` — every unordered shape with a given number of leaves.

Everything here is re-exported by :mod:`treelearn.prune.bounds`.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError

__all__ = ["TreeShape", "LEAF", "as_shape", "leaf_shape", "stump_shape", "all_shapes", "node_shapes"]


def check_pos_int(v, name, minimum=1) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TreeLearnValueError(f"{name} must be an integer, got {v!r}")
    v = int(v)
    if v < minimum:
        raise TreeLearnValueError(f"{name} must be >= {minimum}, got {v}")
    return v


# ====================================================================== shapes
class TreeShape:
    """Canonical shape of a binary tree: a leaf, or an unordered pair of sub-shapes.

    Shapes are interned: building the same unordered structure twice returns the *same* object,
    so ``==`` is identity, hashing is O(1) and mirror images compare equal. Use
    :func:`as_shape` or :meth:`node` / :data:`LEAF` to build them.
    """

    __slots__ = ("left", "right", "n_leaves", "uid", "depth", "__weakref__")
    _intern: dict = {}
    _next_uid = 1

    def __init__(self, left, right, n_leaves, uid, depth):
        self.left = left
        self.right = right
        self.n_leaves = n_leaves
        self.uid = uid
        self.depth = depth

    @classmethod
    def node(cls, a: "TreeShape", b: "TreeShape") -> "TreeShape":
        """The shape of a node whose subtrees have shapes ``a`` and ``b`` (order irrelevant)."""
        if (a.n_leaves, a.uid) > (b.n_leaves, b.uid):
            a, b = b, a
        key = (a.uid, b.uid)
        s = cls._intern.get(key)
        if s is None:
            s = cls(a, b, a.n_leaves + b.n_leaves, cls._next_uid, 1 + max(a.depth, b.depth))
            cls._next_uid += 1
            cls._intern[key] = s
        return s

    # ------------------------------------------------------------------ properties
    @property
    def is_leaf(self) -> bool:
        return self.left is None

    @property
    def n_internal(self) -> int:
        return self.n_leaves - 1

    @property
    def is_stump(self) -> bool:
        return self.n_leaves == 2

    def to_tuple(self):
        """Nested tuples: ``()`` for a leaf, ``(left, right)`` for a node (canonical child order)."""
        memo = {}
        for s in postorder(self):
            memo[s] = () if s.is_leaf else (memo[s.left], memo[s.right])
        return memo[self]

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return self.uid

    def __lt__(self, other):
        return (self.n_leaves, self.uid) < (other.n_leaves, other.uid)

    def __reduce__(self):
        return (as_shape, (self.to_tuple(),))

    def __repr__(self):
        if self.n_leaves <= 16:
            return f"TreeShape({self.to_tuple()!r})"
        return f"TreeShape(n_leaves={self.n_leaves}, depth={self.depth})"


LEAF = TreeShape(None, None, 1, 0, 0)


def leaf_shape() -> TreeShape:
    return LEAF


def stump_shape() -> TreeShape:
    return TreeShape.node(LEAF, LEAF)


def postorder(shape: TreeShape):
    """Distinct sub-shapes of ``shape``, children before parents (iterative: deep trees are fine)."""
    seen, out, stack = set(), [], [(shape, False)]
    while stack:
        s, done = stack.pop()
        if s in seen:
            continue
        if done or s.is_leaf:
            seen.add(s)
            out.append(s)
            continue
        stack.append((s, True))
        stack.append((s.right, False))
        stack.append((s.left, False))
    return out


def shape_from_arrays(left, right, root: int = 0) -> TreeShape:
    left = np.asarray(left)
    right = np.asarray(right)
    # iterative postorder over the reachable nodes
    order, stack = [], [root]
    while stack:
        v = stack.pop()
        order.append(v)
        if left[v] >= 0:
            stack.append(int(left[v]))
            stack.append(int(right[v]))
    shapes = {}
    for v in reversed(order):
        shapes[v] = LEAF if left[v] < 0 else TreeShape.node(shapes[int(left[v])], shapes[int(right[v])])
    return shapes[root]


def node_shapes(tree) -> list[TreeShape]:
    """The shape of the subtree rooted at every node of a fitted Tree (children come after parents)."""
    left, right = tree.children_left, tree.children_right
    out = [None] * tree.node_count
    for v in range(tree.node_count - 1, -1, -1):
        out[v] = LEAF if left[v] < 0 else TreeShape.node(out[left[v]], out[right[v]])
    return out


def as_shape(obj) -> TreeShape:
    """A :class:`TreeShape` from a shape, a fitted Tree / estimator, or nested tuples."""
    if isinstance(obj, TreeShape):
        return obj
    if hasattr(obj, "children_left") and hasattr(obj, "children_right"):
        return shape_from_arrays(obj.children_left, obj.children_right)
    if hasattr(obj, "tree_") and hasattr(obj.tree_, "children_left"):
        return shape_from_arrays(obj.tree_.children_left, obj.tree_.children_right)
    if isinstance(obj, (tuple, list)):
        # iterative conversion of nested tuples
        memo: dict[int, TreeShape] = {}
        stack = [(obj, False)]
        while stack:
            t, done = stack.pop()
            if not isinstance(t, (tuple, list)):
                raise TreeLearnValueError(
                    f"a tree shape is nested tuples: () for a leaf, (left, right) for a node; got {t!r}")
            if len(t) == 0:
                memo[id(t)] = LEAF
                continue
            if len(t) != 2:
                raise TreeLearnValueError(
                    f"a node of a tree shape must have exactly 2 subtrees, got {len(t)}: {t!r}")
            if done:
                memo[id(t)] = TreeShape.node(memo[id(t[0])], memo[id(t[1])])
            else:
                stack.append((t, True))
                stack.append((t[1], False))
                stack.append((t[0], False))
        return memo[id(obj)]
    raise TreeLearnValueError(
        f"cannot read a tree shape from {type(obj).__name__}: pass a TreeShape, a fitted Tree or "
        "nested tuples (() for a leaf, (left, right) for a node)")


def all_shapes(n_leaves: int) -> list[TreeShape]:
    """Every distinct (unordered) shape with exactly ``n_leaves`` leaves."""
    n_leaves = check_pos_int(n_leaves, "n_leaves")
    table: list[list[TreeShape]] = [[], [LEAF]]
    for n in range(2, n_leaves + 1):
        found = {}
        for i in range(1, n // 2 + 1):
            for a in table[i]:
                for b in table[n - i]:
                    s = TreeShape.node(a, b)
                    found[s] = None
        table.append(list(found))
    return table[n_leaves]
