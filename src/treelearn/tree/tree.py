"""The one Tree model every treelearn learner returns.

Array-based, like scikit-learn's ``Tree``: node ``i`` has

* ``children_left[i]``, ``children_right[i]``: child ids, ``-1`` for a leaf;
* ``feature[i]``: the raw column its condition reads (``-2`` for a leaf, as in sklearn);
* ``kind[i]``: ``0`` for the numeric condition ``x_feature >= threshold``, ``1`` for the
  categorical condition ``x_feature == category`` where ``threshold`` is the category's code
  in ``schema.categories[feature]`` (``-1`` for a leaf);
* ``threshold[i]``: the threshold or category code;
* ``value[i]``: per-class (weighted) counts of the training samples reaching the node; for a
  regression tree (``task == "regression"``) the (weighted) mean of each output there, as in
  scikit-learn's regressors, with ``weighted_n_node_samples[i]`` the weight reaching it and
  ``classes`` None;
* ``n_node_samples[i]``: the number of training samples reaching it; ``impurity[i]``;
* ``missing_go_to_left[i]``: 1 when a missing value (NaN) at node ``i`` goes to the left child, 0
  when it goes right (0 and meaningless at a leaf). A learner that does not record directions
  leaves it to the default: the child with more training weight (the right one on a tie, as
  scikit-learn does); ``missing_recorded`` says which. A numeric node may have the threshold
  ``+inf``: every value goes left and only missing values (sent right) leave it, scikit-learn's
  "missing-only" split.

A row goes to the **right** child when the node's condition holds and to the left otherwise.
(scikit-learn sends ``x <= t`` left; our left side is ``x < t``.) Every learner stores a numeric
split between the training values ``a < b`` as ``t = nextafter((a + b) / 2, +inf)``, so that a
value equal to the midpoint goes left as in scikit-learn (:mod:`treelearn.tree.build`, the one
path from a learner's result to a Tree). A missing value goes where ``missing_go_to_left`` says,
in both.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree import formats
from treelearn.tree._tree import apply_rows
from treelearn.tree._nodes import CATEGORICAL, LEAF, NUMERIC, UNDEFINED  # noqa: F401 - re-exported

#: The one dictionary shape from a kernel to a Tree: every compiled learner's result is read
#: through :func:`kernel_nodes`, which gives its node arrays these names (the Tree's own).
KERNEL_NODE_KEYS = ("children_left", "children_right", "feature", "value", "n_node_samples")
# names some kernels use for the same arrays (renamed here, at the one seam)
_KERNEL_ALIASES = {"left": "children_left", "right": "children_right", "nsamp": "n_node_samples"}


def leaf_errors(value) -> np.ndarray:
    """Per row of class counts (a node's ``value``): the weight outside its majority class, the
    node's training misclassifications were it a leaf."""
    v = np.asarray(value)
    return v.sum(axis=1) - v.max(axis=1)


def training_errors(children_left, value) -> float:
    """Weighted training misclassifications of a tree given by its arrays: the sum over its
    leaves of :func:`leaf_errors` (the one definition: a Tree's
    :meth:`Tree.training_misclassifications`, the estimators' ``training_error_``, the incumbents
    of the exact searches, the pruners' risks)."""
    return float(np.sum(leaf_errors(np.asarray(value)[np.asarray(children_left) < 0])))


def kernel_nodes(out: dict) -> dict:
    """A kernel's result dict with its node arrays under :data:`KERNEL_NODE_KEYS` (preorder or
    creation order, ``children_left < 0`` at a leaf; ``feature`` as the kernel numbers features);
    any other entries (statistics, learner-specific arrays) are kept as they are."""
    res = {_KERNEL_ALIASES.get(k, k): v for k, v in out.items()}
    missing = [k for k in KERNEL_NODE_KEYS if k not in res]
    if missing:
        raise KeyError(f"kernel result lacks the node arrays {missing}")
    return res


class Tree:
    """A fitted decision tree (see the module docstring for the arrays)."""

    def __init__(self, *, children_left, children_right, feature, threshold, kind, value,
                 n_node_samples=None, impurity=None, classes, schema: ColumnSchema | None = None,
                 n_features: int | None = None, missing_go_to_left=None, validate: bool = True,
                 task: str = "classification", weighted_n_node_samples=None):
        if task not in ("classification", "regression"):
            raise TreeLearnValueError(f"tree task must be 'classification' or 'regression', got {task!r}")
        self.task = task
        self.children_left = np.ascontiguousarray(children_left, dtype=np.int64)
        self.children_right = np.ascontiguousarray(children_right, dtype=np.int64)
        self.feature = np.ascontiguousarray(feature, dtype=np.int64)
        self.threshold = np.ascontiguousarray(threshold, dtype=np.float64)
        self.kind = np.ascontiguousarray(kind, dtype=np.int8)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        if self.value.ndim == 1:
            self.value = self.value.reshape(-1, 1)
        n = self.children_left.shape[0]
        self.n_node_samples = (
            np.ascontiguousarray(n_node_samples, dtype=np.int64)
            if n_node_samples is not None
            else np.rint(np.nan_to_num(self.value.sum(axis=1), nan=0.0, posinf=0.0, neginf=0.0)).astype(np.int64)
        )
        self.impurity = (
            np.ascontiguousarray(impurity, dtype=np.float64) if impurity is not None else np.zeros(n)
        )
        self.classes = np.asarray(classes) if task == "classification" else None
        #: regression: the training weight reaching each node (classification: None, the sum of ``value``)
        self.weighted_n_node_samples = None
        if task == "regression":
            wn = self.n_node_samples if weighted_n_node_samples is None else weighted_n_node_samples
            self.weighted_n_node_samples = np.ascontiguousarray(wn, dtype=np.float64)
        if schema is None:
            if n_features is None:
                n_features = int(self.feature.max()) + 1 if n and self.feature.max() >= 0 else 1
            schema = ColumnSchema(categories=[None] * int(n_features))
        self.schema = schema
        #: whether a learner recorded the missing-value directions (False: the heavier-child default)
        self.missing_recorded = missing_go_to_left is not None
        if missing_go_to_left is None:
            self.missing_go_to_left = self.heavier_child_left()
        else:
            m = np.asarray(missing_go_to_left)
            if m.dtype.kind not in "biu" or (m.size and (m.min() < 0 or m.max() > 1)):
                raise TreeLearnValueError("tree array missing_go_to_left must hold 0 (right) or 1 (left) per node")
            self.missing_go_to_left = np.array(m, dtype=np.uint8, order="C")
            if self.missing_go_to_left.shape == self.children_left.shape:
                self.missing_go_to_left[self.children_left < 0] = 0  # meaningless at a leaf
        if validate:
            self._check()

    @property
    def is_regression(self) -> bool:
        return self.task == "regression"

    @property
    def n_outputs(self) -> int:
        """Regression: the number of outputs (columns of ``value``); classification: 1."""
        return int(self.value.shape[1]) if self.task == "regression" else 1

    def node_weights(self) -> np.ndarray:
        """The training weight reaching each node: ``weighted_n_node_samples`` (regression) or
        the sum of the node's class counts."""
        if self.weighted_n_node_samples is not None:
            return self.weighted_n_node_samples
        return self.value.sum(axis=1)

    def heavier_child_left(self) -> np.ndarray:
        """Per node, 1 when its left child has more training weight than its right one, else 0
        (ties and leaves: 0): where a missing value goes at a split whose feature had no missing
        value in training. A child's weight is its row of ``value`` (summed over its leaves when a
        learner left an internal row at zero)."""
        n = self.children_left.shape[0]
        out = np.zeros(n, dtype=np.uint8)
        left, right = self.children_left, self.children_right
        if self.value.shape[0] != n or right.shape != (n,) or (n and max(left.max(), right.max()) >= n):
            return out  # malformed arrays: _check names the problem
        internal = np.flatnonzero(left >= 0)
        if not internal.size:
            return out
        w = self.node_weights()
        if np.isnan(w).any():
            w = np.nan_to_num(w, nan=0.0)
        if np.any(w[internal] <= 0):
            w = w.copy()  # internal counts not filled in: sum the leaves (children after parents)
            for node in internal[::-1].tolist():
                if left[node] > node and right[node] > node:
                    w[node] = w[left[node]] + w[right[node]]
        out[internal] = w[left[internal]] > w[right[internal]]
        return out

    # ------------------------------------------------------------------ construction
    def _check(self) -> None:
        n = self.children_left.shape[0]
        if n == 0:
            raise TreeLearnValueError("a tree needs at least one node")
        for name in ("children_right", "feature", "threshold", "kind", "n_node_samples", "impurity",
                     "missing_go_to_left"):
            if getattr(self, name).shape != (n,):
                raise TreeLearnValueError(f"tree array {name} has shape {getattr(self, name).shape}, expected ({n},)")
        if self.task == "regression":
            if self.value.shape[0] != n or self.value.shape[1] < 1 or self.weighted_n_node_samples.shape != (n,):
                raise TreeLearnValueError(
                    f"regression tree arrays value {self.value.shape} and weighted_n_node_samples "
                    f"{self.weighted_n_node_samples.shape} need one row per node ({n})")
            if not np.all(np.isfinite(self.weighted_n_node_samples)) or np.any(self.weighted_n_node_samples < 0):
                raise TreeLearnValueError("tree array weighted_n_node_samples must be finite and >= 0")
        elif self.value.shape != (n, len(self.classes)):
            raise TreeLearnValueError(
                f"tree array value has shape {self.value.shape}, expected ({n}, {len(self.classes)})"
            )
        left, right = self.children_left, self.children_right
        is_leaf = left < 0
        # +inf is a numeric split's threshold only: the missing-only split (see the module doc)
        inf_ok = ~is_leaf & (self.kind == NUMERIC) & (self.threshold == np.inf)
        if not np.all(np.isfinite(self.value)) or not np.all(np.isfinite(self.threshold) | inf_ok):
            raise TreeLearnValueError("tree arrays contain NaN or infinite values")
        if np.any((right < 0) != is_leaf):
            raise TreeLearnValueError("every node must have either two children or none")
        internal = ~is_leaf
        kids = np.concatenate([left[internal], right[internal]])
        if kids.size and (kids.min() < 1 or kids.max() >= n):
            raise TreeLearnValueError("tree child index out of range")
        # every non-root node is the child of exactly one node and children come after parents
        # (a count, not np.unique: that imports numpy.ma, a cost on every model load of the CLI)
        if kids.size != n - 1 or np.bincount(kids, minlength=n).max(initial=0) > 1:
            raise TreeLearnValueError("tree arrays do not describe a tree (a node has two parents or is unreachable)")
        parents = np.nonzero(internal)[0]
        if np.any(left[internal] <= parents) or np.any(right[internal] <= parents):
            raise TreeLearnValueError("tree arrays must list every child after its parent")
        f = self.feature[internal]
        if f.size and (f.min() < 0 or f.max() >= self.schema.n_features):
            raise TreeLearnValueError(
                f"tree feature index out of range for {self.schema.n_features} features"
            )
        k = self.kind[internal]
        if np.any((k != NUMERIC) & (k != CATEGORICAL)):
            raise TreeLearnValueError("tree node kind must be 0 (x >= t) or 1 (x == category)")
        for node in parents[k == CATEGORICAL]:
            cats = self.schema.categories[self.feature[node]]
            code = self.threshold[node]
            if cats is None or code != int(code) or not (0 <= code < len(cats)):
                raise TreeLearnValueError(f"node {node}: categorical condition on a column without that category")

    @classmethod
    def leaf(cls, class_counts, classes, *, schema=None, n_features=None) -> "Tree":
        """A one-leaf tree predicting the majority of ``class_counts``."""
        counts = np.asarray(class_counts, dtype=np.float64).reshape(1, -1)
        return cls(children_left=[LEAF], children_right=[LEAF], feature=[UNDEFINED], threshold=[UNDEFINED],
                   kind=[-1], value=counts, classes=classes, schema=schema, n_features=n_features)

    # ------------------------------------------------------------------ prediction
    def encode(self, X) -> np.ndarray:
        """Raw X (array or DataFrame) -> the encoded float64 matrix the arrays refer to."""
        return self.schema.encode(X)

    def apply(self, X) -> np.ndarray:
        """Index of the leaf each row of raw X reaches."""
        return self.apply_encoded(self.encode(X))

    def apply_encoded(self, Xe: np.ndarray) -> np.ndarray:
        """Leaf index of each row of an encoded matrix (``schema.encode(X)``)."""
        return apply_rows(np.ascontiguousarray(Xe, dtype=np.float64), self.children_left, self.children_right,
                          self.feature, self.threshold, self.kind, self.missing_go_to_left)

    _apply_encoded = apply_encoded  # the old private name, for code written against it

    def predict_proba(self, X) -> np.ndarray:
        leaves = self.apply(X)
        v = self.value[leaves]
        tot = v.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tot > 0, v / np.where(tot > 0, tot, 1), 1.0 / v.shape[1])
        return p

    def predict(self, X) -> np.ndarray:
        """Classes (classification), or the leaves' means (regression: (n,) for one output,
        else (n, n_outputs))."""
        if self.task == "regression":
            v = self.value[self.apply(X)]
            return v[:, 0].copy() if v.shape[1] == 1 else v
        return self.classes[self.leaf_class_index()[self.apply(X)]]

    def leaf_class_index(self) -> np.ndarray:
        """Per node, the index of its majority class (ties to the first class in order)."""
        return np.argmax(self.value, axis=1)

    def decision_path(self, X):
        """CSR indicator matrix (n_samples, node_count): the nodes each row passes through."""
        from scipy.sparse import csr_matrix

        Xe = self.encode(X)
        n = Xe.shape[0]
        leaves = self.apply_encoded(Xe)
        parent = self.parents()
        paths = []
        lengths = np.empty(n, dtype=np.int64)
        cache: dict[int, np.ndarray] = {}
        for i, leaf in enumerate(leaves.tolist()):
            p = cache.get(leaf)
            if p is None:
                nodes = []
                node = leaf
                while node >= 0:
                    nodes.append(node)
                    node = parent[node]
                p = cache[leaf] = np.array(nodes[::-1], dtype=np.int64)
            paths.append(p)
            lengths[i] = p.size
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        indices = np.concatenate(paths) if paths else np.zeros(0, dtype=np.int64)
        return csr_matrix((np.ones(indices.size, dtype=np.int64), indices, indptr), shape=(n, self.node_count))

    # ------------------------------------------------------------------ structure
    @property
    def node_count(self) -> int:
        return int(self.children_left.shape[0])

    @property
    def n_leaves(self) -> int:
        """Number of leaves: the papers' *size* of a tree."""
        return int(np.count_nonzero(self.children_left < 0))

    @property
    def n_classes(self) -> int:
        return 0 if self.classes is None else len(self.classes)

    @property
    def n_features(self) -> int:
        return self.schema.n_features

    @property
    def feature_names(self):
        return self.schema.feature_names

    def is_leaf(self, node: int) -> bool:
        return bool(self.children_left[node] < 0)

    def parents(self) -> np.ndarray:
        parent = np.full(self.node_count, -1, dtype=np.int64)
        internal = np.nonzero(self.children_left >= 0)[0]
        parent[self.children_left[internal]] = internal
        parent[self.children_right[internal]] = internal
        return parent

    def node_depths(self) -> np.ndarray:
        """Depth of every node (root 0). Children come after parents, so one pass suffices."""
        d = np.zeros(self.node_count, dtype=np.int64)
        for node in range(self.node_count):
            l = self.children_left[node]
            if l >= 0:
                d[l] = d[node] + 1
                d[self.children_right[node]] = d[node] + 1
        return d

    @property
    def depth(self) -> int:
        return int(self.node_depths().max())

    @property
    def max_depth(self) -> int:  # sklearn's name
        return self.depth

    @property
    def rank(self) -> int:
        """Ehrenfeucht–Haussler rank: a leaf has rank 0; a node whose children have ranks r0, r1
        has rank max(r0, r1) if r0 != r1, else r0 + 1 (001, Definition of rank)."""
        r = np.zeros(self.node_count, dtype=np.int64)
        for node in range(self.node_count - 1, -1, -1):
            l = self.children_left[node]
            if l >= 0:
                a, b = r[l], r[self.children_right[node]]
                r[node] = a + 1 if a == b else max(a, b)
        return int(r[0])

    def average_depth(self, X=None) -> float:
        """Δ(T) of 004: the expected depth of the leaf a random input reaches.

        Without X, under the uniform distribution on {±1}^n, where each branch is taken with
        probability 1/2: Σ_leaves depth(ℓ)·2^(−depth(ℓ)). With X, the empirical distribution:
        the mean depth of the leaves the rows of X reach.
        """
        d = self.node_depths()
        if X is None:
            leaves = self.children_left < 0
            return float(np.sum(d[leaves] * np.power(0.5, d[leaves])))
        return float(d[self.apply(X)].mean())

    def training_misclassifications(self) -> float:
        """Weighted training misclassifications of the tree (from the leaf counts): the unit of
        the estimators' ``training_error_``."""
        return training_errors(self.children_left, self.value)

    def training_error_rate(self) -> float:
        """Weighted misclassification rate of the tree on its training sample (from the leaf counts):
        :meth:`training_misclassifications` over the total weight."""
        total = float(self.value[self.children_left < 0].sum())
        if total <= 0:
            return 0.0
        return self.training_misclassifications() / total

    def training_error(self) -> float:
        """Deprecated name of :meth:`training_error_rate` (a rate, where the estimators'
        ``training_error_`` is a count: :meth:`training_misclassifications`)."""
        import warnings

        warnings.warn("Tree.training_error() is a rate, unlike the estimators' training_error_ (a count); "
                      "call Tree.training_error_rate() for the rate or Tree.training_misclassifications() "
                      "for the count", FutureWarning, stacklevel=2)
        return self.training_error_rate()

    def error(self, X, y, sample_weight=None) -> float:
        """Weighted misclassification rate on (X, y)."""
        pred = self.predict(X)
        y = np.asarray(y)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return float(np.sum(w * (pred != y)) / np.sum(w))

    # ------------------------------------------------------------------ transformations
    def subtree_nodes(self, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            v = stack.pop()
            out.append(v)
            if self.children_left[v] >= 0:
                stack.append(self.children_right[v])
                stack.append(self.children_left[v])
        return out

    def _kept_preorder(self, keep_as_leaf) -> list[int]:
        """Old ids of the nodes kept when ``keep_as_leaf`` become leaves, in the new (pre)order."""
        order = []
        stack = [0]
        while stack:
            v = stack.pop()
            order.append(v)
            if self.children_left[v] >= 0 and v not in keep_as_leaf:
                stack.append(self.children_right[v])
                stack.append(self.children_left[v])
        return order

    def _rebuild(self, keep_as_leaf) -> "Tree":
        """Copy of the tree in which the nodes of ``keep_as_leaf`` (a set) become leaves."""
        order = self._kept_preorder(keep_as_leaf)
        new_id = {v: i for i, v in enumerate(order)}
        old = np.array(order, dtype=np.int64)
        left = np.full(old.size, LEAF, dtype=np.int64)
        right = np.full(old.size, LEAF, dtype=np.int64)
        feature = self.feature[old].copy()
        threshold = self.threshold[old].copy()
        kind = self.kind[old].copy()
        missing = self.missing_go_to_left[old].copy()
        for i, v in enumerate(order):
            if self.children_left[v] >= 0 and v not in keep_as_leaf:
                left[i] = new_id[self.children_left[v]]
                right[i] = new_id[self.children_right[v]]
            else:
                feature[i], threshold[i], kind[i], missing[i] = UNDEFINED, UNDEFINED, -1, 0
        return Tree(children_left=left, children_right=right, feature=feature, threshold=threshold, kind=kind,
                    value=self.value[old], n_node_samples=self.n_node_samples[old], impurity=self.impurity[old],
                    classes=self.classes, schema=self.schema,
                    missing_go_to_left=missing if self.missing_recorded else None, task=self.task,
                    weighted_n_node_samples=None if self.weighted_n_node_samples is None
                    else self.weighted_n_node_samples[old],
                    validate=False)  # trusted: a valid tree's nodes with some subtrees cut off

    def prune(self, nodes) -> "Tree":
        """A copy in which every node of ``nodes`` is replaced by a leaf (labelled by its majority)."""
        return self._rebuild(set(int(v) for v in nodes))

    def simplify(self) -> "Tree":
        """Merge sibling leaves that predict the same class, repeatedly, bottom-up.

        The predictions of the tree do not change; its size can only shrink.
        """
        pred = self.leaf_class_index()
        collapsed = np.zeros(self.node_count, dtype=bool)  # node acts as a leaf predicting label[node]
        label = pred.copy()
        leaf_sum = self.value.copy()  # per collapsed node: the summed counts of the leaves it merges
        for node in range(self.node_count - 1, -1, -1):
            l, r = self.children_left[node], self.children_right[node]
            if l < 0:
                collapsed[node] = True
                continue
            if collapsed[l] and collapsed[r] and label[l] == label[r]:
                collapsed[node] = True
                label[node] = label[l]
                leaf_sum[node] = leaf_sum[l] + leaf_sum[r]
        to_leaf = {v for v in range(self.node_count) if collapsed[v] and self.children_left[v] >= 0}
        if not to_leaf:
            return self.copy()
        t = self._rebuild(to_leaf)
        # A merged leaf must predict the common label of the leaves it replaces. Its own counts
        # normally are their sum (whose majority is that label); when a learner stored other counts
        # at the internal node (their majority differs), use the sum of the merged leaves' counts.
        for new, old in enumerate(self._kept_preorder(to_leaf)):
            if old in to_leaf and int(np.argmax(t.value[new])) != int(label[old]):
                t.value[new] = leaf_sum[old]
        return t

    def copy(self) -> "Tree":
        return Tree(children_left=self.children_left.copy(), children_right=self.children_right.copy(),
                    feature=self.feature.copy(), threshold=self.threshold.copy(), kind=self.kind.copy(),
                    value=self.value.copy(), n_node_samples=self.n_node_samples.copy(),
                    impurity=self.impurity.copy(), schema=self.schema,
                    classes=None if self.classes is None else self.classes.copy(),
                    missing_go_to_left=self.missing_go_to_left.copy() if self.missing_recorded else None,
                    task=self.task, weighted_n_node_samples=None if self.weighted_n_node_samples is None
                    else self.weighted_n_node_samples.copy())

    # ------------------------------------------------------------------ description
    def condition_name(self, node: int, *, negate: bool = False, precision: int = 4) -> str:
        """Readable condition of an internal node, e.g. ``petal width >= 0.8`` or ``color == red``."""
        f = int(self.feature[node])
        name = self.schema.column_name(f)
        if self.kind[node] == CATEGORICAL:
            value = self.schema.categories[f][int(self.threshold[node])]
            return f"{name} {'!=' if negate else '=='} {value}"
        t = self.threshold[node]
        return f"{name} {'<' if negate else '>='} {t:.{precision}g}"

    def __repr__(self) -> str:
        return (f"Tree(n_leaves={self.n_leaves}, depth={self.depth}, node_count={self.node_count}, "
                f"n_features={self.n_features}, n_classes={self.n_classes})")

    def __eq__(self, other) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        arrays = ("children_left", "children_right", "feature", "threshold", "kind", "value", "n_node_samples",
                  "missing_go_to_left")
        return (all(np.array_equal(getattr(self, a), getattr(other, a)) for a in arrays)
                and self.task == other.task
                and (self.classes is None) == (other.classes is None)
                and (self.classes is None or np.array_equal(self.classes, other.classes))
                and (self.weighted_n_node_samples is None
                     or np.array_equal(self.weighted_n_node_samples, other.weighted_n_node_samples))
                and _categories_equal(self.schema, other.schema))

    __hash__ = None

    # ------------------------------------------------------------------ formats (see formats.py)
    def export_text(self, **kw) -> str:
        return formats.export_text(self, **kw)

    def export_graphviz(self, **kw) -> str:
        return formats.export_graphviz(self, **kw)

    def to_json(self, **kw) -> str:
        return formats.tree_to_json(self, **kw)

    @classmethod
    def from_json(cls, text, *, return_metadata: bool = False, max_size: int = formats.MAX_JSON_SIZE):
        """The tree of a JSON document of :meth:`to_json` (``(tree, metadata)`` with
        ``return_metadata``); see :func:`treelearn.tree.formats.read_json` for the checks. The one
        way a JSON model becomes a Tree (:meth:`load`, ``tree_from_json``, ``load_tree_json`` and
        the command line come here)."""
        fields, metadata = formats.read_json(text, max_size=max_size)
        try:
            tree = cls(**fields)
        except TreeLearnValueError as exc:
            raise TreeLearnValueError(f"JSON model: {exc}") from None
        return (tree, metadata) if return_metadata else tree

    @classmethod
    def load(cls, path, *, max_bytes: int | None = None, return_metadata: bool = False):
        """A tree from a JSON model file, its size checked before it is read: a file over
        ``max_bytes`` (default ``treelearn.tree.formats.MAX_JSON_SIZE``, 256 MiB) raises
        :class:`TreeLearnValueError` (see :func:`treelearn.tree.formats.read_model_file`)."""
        max_bytes = formats.MAX_JSON_SIZE if max_bytes is None else max_bytes
        data = formats.read_model_file(path, max_bytes=max_bytes)
        return cls.from_json(data, return_metadata=return_metadata, max_size=max_bytes)


def _categories_equal(a: ColumnSchema, b: ColumnSchema) -> bool:
    if a.n_features != b.n_features:
        return False
    for ca, cb in zip(a.categories, b.categories):
        if (ca is None) != (cb is None):
            return False
        if ca is not None and list(ca) != list(cb):
            return False
    return True
