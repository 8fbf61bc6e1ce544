"""Functions on {±1}^n and query access to them (004 §2; the membership-query learner's base).

* :class:`Oracle`: query access to ``f: {±1}^n -> {±1}`` (or ``[-1, 1]``), answering batches and
  counting queries; from a function, a truth table or a Tree over {±1}^n (evaluated by the
  compiled flip-aware evaluator of :mod:`treelearn.tree._tree`);
* points and restrictions: :func:`all_points`, :func:`random_pm1`, :func:`check_restriction`;
  truth tables indexed by ``sum_j [x_j = +1] 2^j``;
* smoothing ``f_δ`` (004 Def. 3): :func:`smooth`;
* :class:`TreeBuilder`: preorder node arrays of a tree over {±1}^n (used by every learner of this
  package and by :mod:`treelearn.datasets.boolean`), :func:`tree_from_nested`;
* :func:`rng_seed`: a ``random_state`` as an integer seed (the package's one reading of it).
"""
from __future__ import annotations

import hashlib
import math
import numbers

import numpy as np

from treelearn._limits import LimitError
from treelearn._validation import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree._tree import pm1_index, tree_eval, tree_eval_flips
from treelearn.tree.tree import Tree

MAX_EXACT_N = 20  # exact enumeration (truth tables) up to 2^20 points
PM1_CLASSES = np.array([-1, 1])


class SearchLimitError(RuntimeError, LimitError):
    """BuildDT (or another query search) hit its time limit, memory cap or query budget."""


# ----------------------------------------------------------------------------- helpers
def check_pm1(X, n_features: int, what: str = "queries") -> np.ndarray:
    X = np.asarray(X)
    if X.ndim == 1 and n_features is not None and X.shape[0] == n_features:
        X = X.reshape(1, -1)
    if X.ndim != 2:
        raise TreeLearnValueError(f"{what} must be a 2-d (N, n) array of ±1, got an array of shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise TreeLearnValueError(f"{what} must have {n_features} columns (one per variable), got {X.shape[1]}")
    if X.dtype == np.int8:
        Xi = X
    else:
        if X.dtype.kind not in "biuf":
            raise TreeLearnValueError(f"{what} must be numeric ±1, got dtype {X.dtype}")
        Xi = X.astype(np.int8) if X.dtype.kind != "b" else np.where(X, 1, -1).astype(np.int8)
        if X.dtype.kind == "f" and not np.array_equal(Xi, X):
            raise TreeLearnValueError(f"{what} must contain only -1 and +1")
    if Xi.size and not np.all((Xi == 1) | (Xi == -1)):
        bad = np.unique(Xi[(Xi != 1) & (Xi != -1)])[:5]
        raise TreeLearnValueError(f"{what} must contain only -1 and +1 (found {bad.tolist()})")
    return np.ascontiguousarray(Xi)


def check_restriction(restriction, n: int) -> np.ndarray:
    """Restriction π -> int8 array of length n: 0 free, ±1 fixed."""
    pi = np.zeros(n, dtype=np.int8)
    if restriction is None:
        return pi
    if isinstance(restriction, dict):
        items = restriction.items()
    else:
        arr = np.asarray(restriction)
        if arr.ndim == 1 and arr.shape[0] == n and arr.dtype.kind in "iuf":
            if not np.all(np.isin(arr, (-1, 0, 1))):
                raise TreeLearnValueError("a restriction array holds 0 (free), -1 or +1 per variable")
            return arr.astype(np.int8)
        items = [tuple(p) for p in restriction]
    for i, b in items:
        if not isinstance(i, numbers.Integral) or not 0 <= int(i) < n:
            raise TreeLearnValueError(f"restriction variable {i!r} out of range for {n} variables")
        if b not in (-1, 1):
            raise TreeLearnValueError(f"restriction value for x_{i} must be -1 or +1, got {b!r}")
        pi[int(i)] = b
    return pi


def rng_seed(random_state) -> int:
    """``random_state`` (None, a non-negative int, a numpy Generator or RandomState) -> an int seed."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if random_state is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    if isinstance(random_state, numbers.Integral) and random_state >= 0:
        return int(random_state)
    raise TreeLearnValueError(f"random_state must be None, a non-negative int or a numpy Generator, got {random_state!r}")


def keyed_rng(base: int, key: bytes) -> np.random.Generator:
    """A generator determined by ``base`` and ``key`` (e.g. a restriction's bytes): samples are
    reproducible per restriction without being stored."""
    h = hashlib.blake2b(key, digest_size=8).digest()
    return np.random.default_rng([base & (2**63 - 1), int.from_bytes(h, "little")])


def random_pm1(rng: np.random.Generator, m: int, pi: np.ndarray) -> np.ndarray:
    """``m`` uniform points of {±1}^n (int8 rows) consistent with the restriction ``pi`` (0 free)."""
    n = pi.shape[0]
    nb = (n + 7) // 8
    bits = np.unpackbits(np.frombuffer(rng.bytes(m * nb), dtype=np.uint8).reshape(m, nb), axis=1, count=n)
    X = bits.view(np.int8)
    X *= 2
    X -= 1
    fixed = np.nonzero(pi)[0]
    if fixed.size:
        X[:, fixed] = pi[fixed]
    return X


def table_to_nd(table: np.ndarray, n: int) -> np.ndarray:
    """Flat truth table -> n-d array whose axis j is x_j (index 0: x_j = −1, 1: x_j = +1)."""
    return table.reshape((2,) * n).transpose(tuple(range(n - 1, -1, -1))) if n else table.reshape(())


def sub_table(nd: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truth table of f_π over its free variables (returned in increasing order)."""
    idx = tuple(slice(None) if b == 0 else (1 if b > 0 else 0) for b in pi)
    return nd[idx], np.nonzero(pi == 0)[0]


def exact_influences_nd(sub: np.ndarray, metric: str) -> np.ndarray:
    out = np.empty(sub.ndim)
    for a in range(sub.ndim):
        a0 = np.take(sub, 0, axis=a)
        a1 = np.take(sub, 1, axis=a)
        if metric == "hamming":
            out[a] = 0.5 * np.mean(a0 != a1)
        else:
            out[a] = 0.5 * np.mean(np.abs(a0 - a1))
    return out


def hoeffding_sample_size(accuracy: float, delta: float, value_range: float = 1.0) -> int:
    """Samples m so that a mean of iid values in a range of width ``value_range`` is within
    ±accuracy of its expectation with probability ≥ 1 − delta (Hoeffding):
    m = ⌈range² · ln(2/δ) / (2·accuracy²)⌉."""
    if not accuracy > 0 or not 0 < delta < 1:
        raise TreeLearnValueError("hoeffding_sample_size needs accuracy > 0 and 0 < delta < 1")
    return int(math.ceil(value_range**2 * math.log(2.0 / delta) / (2.0 * accuracy**2)))


# ----------------------------------------------------------------------------- oracles
class Oracle:
    """Query access to f: {±1}^n -> {±1} (or [−1, 1]), counting queries.

    Build one with :meth:`from_function`, :meth:`from_tree` or :meth:`from_truth_table`.
    ``oracle(X)`` answers a batch: X is an (N, n) array of ±1 (int8 preferred), the result N
    float64 values. Every answered point adds one to ``n_queries`` (shared by restrictions and
    smoothings derived from this oracle).
    """

    def __init__(self, fn=None, n_features: int | None = None, *, real_valued: bool = False, name: str = "f"):
        if fn is not None and not callable(fn):
            raise TreeLearnValueError("Oracle needs a callable taking an (N, n) ±1 array")
        if not isinstance(n_features, numbers.Integral) or n_features < 1:
            raise TreeLearnValueError(f"n_features must be a positive int, got {n_features!r}")
        self._fn = fn
        self.n_features = int(n_features)
        self.real_valued = bool(real_valued)
        self.name = name
        self._counter = [0]  # shared with derived oracles
        self._table = None  # flat truth table (float64) when known
        self._tree = None  # compiled tree arrays when the oracle is a ±1 tree
        self._root = self

    # -- constructors
    @classmethod
    def from_function(cls, fn, n_features: int, *, real_valued: bool = False, name: str = "f") -> "Oracle":
        """``fn`` takes an (N, n) int8 ±1 array and returns N values (±1, or in [−1, 1] when
        ``real_valued``)."""
        return cls(fn, n_features, real_valued=real_valued, name=name)

    @classmethod
    def from_truth_table(cls, values, *, name: str = "f") -> "Oracle":
        """Truth table of length 2^n indexed by Σ_j [x_j = +1]·2^j. Values ±1 (Boolean) or in
        [−1, 1] (real valued)."""
        v = np.asarray(values, dtype=np.float64).ravel()
        n = int(round(math.log2(v.size))) if v.size else -1
        if v.size < 2 or 2**n != v.size:
            raise TreeLearnValueError(f"a truth table has length 2^n with n >= 1, got length {v.size}")
        if not np.all(np.isfinite(v)) or np.any(np.abs(v) > 1):
            raise TreeLearnValueError("truth table values must lie in [-1, 1]")
        real = not np.all(np.abs(v) == 1)
        o = cls(None, n, real_valued=real, name=name)
        o._table = np.ascontiguousarray(v)
        return o

    @classmethod
    def from_tree(cls, tree: Tree, *, name: str = "T") -> "Oracle":
        """The function computed by a Tree over {±1}^n (conditions ``x_i >= threshold``; leaf value
        ±1 = its predicted class, which must be −1 or +1)."""
        if not isinstance(tree, Tree):
            raise TreeLearnValueError("Oracle.from_tree needs a treelearn.Tree")
        internal = tree.children_left >= 0
        if np.any(tree.kind[internal] != 0):
            raise TreeLearnValueError("a tree over {±1}^n uses only x_i >= threshold conditions (kind 0)")
        labels = np.asarray(tree.classes)[tree.leaf_class_index()]
        try:
            lv = labels.astype(np.float64)
        except (TypeError, ValueError):
            raise TreeLearnValueError("Oracle.from_tree needs a tree with classes -1 and +1") from None
        leaves = ~internal
        if not np.all(np.isin(lv[leaves], (-1.0, 1.0))):
            raise TreeLearnValueError("Oracle.from_tree needs leaves labelled -1 or +1 (classes [-1, 1])")
        o = cls(None, tree.n_features, real_valued=False, name=name)
        o._tree = (
            np.ascontiguousarray(tree.children_left),
            np.ascontiguousarray(tree.children_right),
            np.ascontiguousarray(np.where(internal, tree.feature, 0)),
            np.ascontiguousarray(tree.threshold),
            np.ascontiguousarray(lv),
        )
        return o

    # -- counting
    @property
    def n_queries(self) -> int:
        return self._counter[0]

    def reset_queries(self) -> None:
        self._counter[0] = 0

    @property
    def is_boolean(self) -> bool:
        return not self.real_valued

    @property
    def has_table(self) -> bool:
        """The oracle is backed by its full truth table (exact computations cost no queries)."""
        return self._table is not None

    # -- answering
    def __call__(self, X) -> np.ndarray:
        return self.query(X)

    def query(self, X) -> np.ndarray:
        """Answer a batch of queries (validated: shape (N, n), entries ±1)."""
        Xi = check_pm1(X, self.n_features)
        return self.evaluate(Xi)

    def _raw(self, X: np.ndarray) -> np.ndarray:
        if self._table is not None:
            return self._table[pm1_index(X)]
        if self._tree is not None:
            l, r, f, t, lv = self._tree
            return tree_eval(X, l, r, f, t, lv)
        out = np.asarray(self._fn(X), dtype=np.float64).ravel()
        if out.shape[0] != X.shape[0]:
            raise TreeLearnValueError(
                f"the oracle's function returned {out.shape[0]} values for {X.shape[0]} queries"
            )
        if self.real_valued:
            if not np.all(np.isfinite(out)) or np.any(np.abs(out) > 1 + 1e-12):
                raise TreeLearnValueError("a real-valued oracle must return values in [-1, 1]")
        elif not np.all((out == 1) | (out == -1)):
            raise TreeLearnValueError(
                "a Boolean oracle's function must return -1 or +1 (use real_valued=True for [-1, 1])"
            )
        return out

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        """Unvalidated batch evaluation (X int8 C-contiguous ±1), counted."""
        self._counter[0] += X.shape[0]
        return self._raw(X)

    def evaluate_flips(self, X: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """out[r, c] = f(X[r] with coordinate cand[c] negated); counted (N·k queries)."""
        m, k = X.shape[0], cand.shape[0]
        self._counter[0] += m * k
        if k == 0:
            return np.empty((m, 0))
        if self._table is not None:
            idx = pm1_index(X)
            return self._table[idx[:, None] ^ (np.int64(1) << cand.astype(np.int64))[None, :]]
        if self._tree is not None:
            l, r, f, t, lv = self._tree
            return tree_eval_flips(X, np.ascontiguousarray(cand, dtype=np.int64), l, r, f, t, lv)
        out = np.empty((m, k))
        Y = X.copy()
        for c, j in enumerate(cand):
            Y[:, j] = -X[:, j]
            out[:, c] = self._raw(Y)
            Y[:, j] = X[:, j]
        return out

    # -- derived functions
    def restrict(self, restriction) -> "Oracle":
        """f_π: the same n variables, those fixed by π ignored (queries count on this oracle)."""
        pi = check_restriction(restriction, self.n_features)
        fixed = np.nonzero(pi)[0]
        vals = pi[fixed]
        parent = self

        def fn(X):
            Y = X.copy()
            Y[:, fixed] = vals
            return parent._raw(Y)

        o = Oracle(fn, self.n_features, real_valued=self.real_valued, name=f"{self.name}_pi")
        o._counter = self._counter
        o._root = self._root
        if self._table is not None:
            nd = table_to_nd(self._table, self.n_features)
            sub, _ = sub_table(nd, pi)
            full = np.broadcast_to(
                sub.reshape(tuple(1 if b != 0 else 2 for b in pi)), (2,) * self.n_features
            )
            o._table = np.ascontiguousarray(full.transpose(tuple(range(self.n_features - 1, -1, -1))).ravel())
        return o

    def truth_table(self) -> np.ndarray:
        """The full table (n <= 20; costs 2^n queries unless the oracle is a table)."""
        n = self.n_features
        if self._table is not None:
            return self._table.copy()
        if n > MAX_EXACT_N:
            raise TreeLearnValueError(f"a truth table needs n <= {MAX_EXACT_N} variables, this oracle has {n}")
        return self.evaluate(all_points(n))

    def smoothed(self, delta: float, *, n_noise: int = 64, random_state=None, exact: bool | None = None) -> "Oracle":
        """f_δ (004 Def. 3): f_δ(x) = E[f(x̃)], each bit of x flipped independently with
        probability δ/2. Exact (from the truth table, n <= 20) or Monte Carlo with ``n_noise``
        noisy copies per query point; see :func:`smooth`."""
        return smooth(self, delta, n_noise=n_noise, random_state=random_state, exact=exact)


def all_points(n: int) -> np.ndarray:
    """All 2^n points of {±1}^n as int8 rows, row r having x_j = +1 iff bit j of r is set."""
    if n > MAX_EXACT_N:
        raise TreeLearnValueError(f"enumeration needs n <= {MAX_EXACT_N}")
    r = np.arange(2**n, dtype=np.int64)
    return np.ascontiguousarray((((r[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(np.int8))


def as_oracle(f, n_features=None) -> Oracle:
    """An Oracle as it is, a Tree over {±1}^n, a truth table, or a function (with ``n_features``)."""
    if isinstance(f, Oracle):
        return f
    if isinstance(f, Tree):
        return Oracle.from_tree(f)
    if callable(f):
        if n_features is None:
            raise TreeLearnValueError("a plain function needs n_features; wrap it with Oracle.from_function")
        return Oracle.from_function(f, n_features)
    arr = np.asarray(f)
    if arr.ndim == 1:
        return Oracle.from_truth_table(arr)
    raise TreeLearnValueError("expected an Oracle, a Tree over {±1}^n, or a truth table")


def exact_table(f) -> np.ndarray:
    o = as_oracle(f)
    if o.n_features > MAX_EXACT_N:
        raise TreeLearnValueError(f"exact computation needs n <= {MAX_EXACT_N}, got n = {o.n_features}")
    return o.truth_table()


# ----------------------------------------------------------------------------- smoothing
def _smooth_table(table: np.ndarray, n: int, delta: float) -> np.ndarray:
    nd = np.array(table_to_nd(np.asarray(table, dtype=np.float64), n))  # copy
    q = delta / 2.0
    for a in range(n):
        nd = (1 - q) * nd + q * np.flip(nd, axis=a)
    return np.ascontiguousarray(nd.transpose(tuple(range(n - 1, -1, -1))).ravel())


def smooth(f, delta: float, *, n_noise: int = 64, random_state=None, exact: bool | None = None) -> Oracle:
    """The δ-smoothed f_δ = T_{1−δ} f (004 Def. 3) as a real-valued oracle.

    ``exact=None``: exact when f is table-backed or n <= 16 (computed by the noise operator
    coordinate by coordinate on the truth table, O(n·2^n)); otherwise every query to f_δ is a
    Monte Carlo average of ``n_noise`` queries to f at independently noised copies of the point.
    """
    if not 0 <= delta <= 1:
        raise TreeLearnValueError(f"the smoothing rate delta must lie in [0, 1], got {delta!r}")
    o = as_oracle(f)
    n = o.n_features
    if exact is None:
        exact = o.has_table or n <= 16
    if exact:
        t = _smooth_table(o.truth_table(), n, delta)
        s = Oracle.from_truth_table(t, name=f"{o.name}_delta")
        s.real_valued = True
        return s
    if not isinstance(n_noise, numbers.Integral) or n_noise < 1:
        raise TreeLearnValueError("n_noise must be a positive int")
    rng = np.random.default_rng(rng_seed(random_state))
    q = delta / 2.0

    def fn(X):
        acc = np.zeros(X.shape[0])
        for _ in range(n_noise):
            flip = rng.random(X.shape) < q
            acc += o._raw(np.where(flip, -X, X).astype(np.int8))
        o._counter[0] += X.shape[0] * n_noise
        return acc / n_noise

    s = Oracle(fn, n, real_valued=True, name=f"{o.name}_delta")
    # s counts queries to f_δ; the n_noise queries to f behind each are counted on f's oracle
    return s



# ----------------------------------------------------------------------------- trees over {±1}^n
class TreeBuilder:
    """Preorder node arrays for a tree over {±1}^n: ``leaf``/``internal`` add nodes,
    ``set_children`` links them (summing the children's values), ``tree`` returns the Tree."""

    def __init__(self):
        self.left, self.right, self.feature, self.value, self.nsamp = [], [], [], [], []

    def leaf(self, label: int, mass: float = 1.0, nsamp: int = 0) -> int:
        node = len(self.left)
        self.left.append(-1)
        self.right.append(-1)
        self.feature.append(-2)
        # value = probability mass of each class at the node (uniform distribution), biased so
        # that the majority is the label even for a balanced leaf
        self.value.append([mass, 0.0] if label < 0 else [0.0, mass])
        self.nsamp.append(nsamp)
        return node

    def internal(self, i: int) -> int:
        node = len(self.left)
        self.left.append(-1)
        self.right.append(-1)
        self.feature.append(int(i))
        self.value.append([0.0, 0.0])
        self.nsamp.append(0)
        return node

    def set_children(self, node: int, l: int, r: int) -> None:
        self.left[node], self.right[node] = l, r
        self.value[node] = [self.value[l][0] + self.value[r][0], self.value[l][1] + self.value[r][1]]
        self.nsamp[node] = self.nsamp[l] + self.nsamp[r]

    def tree(self, n: int, threshold: float = 0.0, schema: ColumnSchema | None = None) -> Tree:
        feat = np.asarray(self.feature, dtype=np.int64)
        internal = feat >= 0
        return Tree(
            children_left=self.left,
            children_right=self.right,
            feature=feat,
            threshold=np.where(internal, threshold, -2.0),
            kind=np.where(internal, 0, -1),
            value=np.asarray(self.value, dtype=np.float64),
            n_node_samples=np.asarray(self.nsamp, dtype=np.int64),
            classes=PM1_CLASSES.copy(),
            schema=schema if schema is not None else ColumnSchema(categories=[None] * n),
        )


def tree_from_nested(nested, n_features: int) -> Tree:
    """Tree over {±1}^n from a nested spec: a leaf is ``-1`` or ``+1``; an internal node is
    ``(i, left, right)`` (left: x_i = −1, right: x_i = +1)."""
    b = TreeBuilder()

    def rec(t, mass):
        if isinstance(t, tuple):
            i, l, r = t
            if not 0 <= i < n_features:
                raise TreeLearnValueError(f"variable {i} out of range")
            node = b.internal(i)
            a = rec(l, mass / 2)
            c = rec(r, mass / 2)
            b.set_children(node, a, c)
            return node
        if t not in (-1, 1):
            raise TreeLearnValueError("a leaf of a nested tree is -1 or +1")
        return b.leaf(int(t), mass)

    rec(nested, 1.0)
    return b.tree(n_features)
