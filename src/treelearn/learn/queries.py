"""Learning decision trees from membership queries (issue 6).

Implements Blanc, Lange, Qiao, Tan, *Properly learning decision trees in almost polynomial time*
(paper 004: influence, smoothing, PRUNE of Fig. 1, BuildDT of Fig. 2, the monotone
random-example variant of §6) and BuildTopDownDT_Inf of Blanc, Lange, Tan (paper 000, Fig. 2).

Conventions
-----------
* Functions are ``f: {±1}^n -> {±1}`` (Boolean) or ``-> [-1, 1]`` (real valued, e.g. the smoothed
  ``f_δ``), given as an :class:`Oracle` that answers batches of queries (an ``(N, n)`` int8 array
  of ±1) and counts them.
* Trees over {±1}^n are :class:`treelearn.Tree` objects with ``feature = i``, ``kind = 0``,
  ``threshold = 0.0`` (``x_i = +1`` goes right), ``classes = [-1, 1]``.
* Truth tables are indexed by ``sum_j [x_j = +1] 2^j`` (``x_0`` is the least significant bit).
* **Influence** (004 Def. 1) uses a *re-randomised* coordinate: ``Inf_i(f) = E[ρ(f(x), f(x^~i))]``
  where ``x^~i`` has coordinate i redrawn uniformly. Since the redraw keeps ``x_i`` half the
  time, ``Inf_i(f) = ½·E[ρ(f(x), f(x^{⊕i}))]``: **half** of the flipped-coordinate influence
  ``Pr[f(x) ≠ f(x^{⊕i})]`` of paper 000 (and of O'Donnell's book). The metric ρ is ``1[a ≠ b]``
  for Boolean functions and ``|a − b|`` for real-valued ones (004 Remark 1); for ±1-valued
  functions the second is twice the first.
* **dist** (004 Def. 2) is ``E[ρ(f(x), g(x))]`` under the uniform distribution with the same metric
  (``metric="auto"`` picks ``hamming`` when both functions are Boolean, else ``abs``).
"""
from __future__ import annotations

import hashlib
import heapq
import math
import numbers
import time
import warnings

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.base import BaseTreeClassifier
from treelearn.data.schema import ColumnSchema
from treelearn.learn._queries import pm1_index, tree_eval, tree_eval_flips
from treelearn.tree.tree import Tree

__all__ = [
    "Oracle",
    "SearchLimitError",
    "influence",
    "influences",
    "noisy_influences",
    "smooth",
    "dist",
    "average_depth",
    "prune",
    "build_dt",
    "top_down_influence",
    "learn_from_queries",
    "default_parameters",
    "hoeffding_sample_size",
    "QueryTreeClassifier",
    "tree_from_nested",
]

MAX_EXACT_N = 20  # exact enumeration (truth tables) up to 2^20 points
_CLASSES = np.array([-1, 1])


class SearchLimitError(RuntimeError):
    """BuildDT (or another query search) hit its time limit, memory cap or query budget."""


# ----------------------------------------------------------------------------- helpers
def _check_pm1(X, n_features: int, what: str = "queries") -> np.ndarray:
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


def _check_restriction(restriction, n: int) -> np.ndarray:
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


def _rng_seed(random_state) -> int:
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if random_state is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    if isinstance(random_state, numbers.Integral) and random_state >= 0:
        return int(random_state)
    raise TreeLearnValueError(f"random_state must be None, a non-negative int or a numpy Generator, got {random_state!r}")


def _key_seed(base: int, key: bytes) -> np.random.Generator:
    h = hashlib.blake2b(key, digest_size=8).digest()
    return np.random.default_rng([base & (2**63 - 1), int.from_bytes(h, "little")])


def _random_pm1(rng: np.random.Generator, m: int, pi: np.ndarray) -> np.ndarray:
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


def _table_to_nd(table: np.ndarray, n: int) -> np.ndarray:
    """Flat truth table -> n-d array whose axis j is x_j (index 0: x_j = −1, 1: x_j = +1)."""
    return table.reshape((2,) * n).transpose(tuple(range(n - 1, -1, -1))) if n else table.reshape(())


def _sub_table(nd: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truth table of f_π over its free variables (returned in increasing order)."""
    idx = tuple(slice(None) if b == 0 else (1 if b > 0 else 0) for b in pi)
    return nd[idx], np.nonzero(pi == 0)[0]


def _exact_influences_nd(sub: np.ndarray, metric: str) -> np.ndarray:
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

    # -- answering
    def __call__(self, X) -> np.ndarray:
        return self.query(X)

    def query(self, X) -> np.ndarray:
        """Answer a batch of queries (validated: shape (N, n), entries ±1)."""
        Xi = _check_pm1(X, self.n_features)
        return self._eval(Xi)

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

    def _eval(self, X: np.ndarray) -> np.ndarray:
        """Unvalidated batch evaluation (X int8 C-contiguous ±1), counted."""
        self._counter[0] += X.shape[0]
        return self._raw(X)

    def _eval_flips(self, X: np.ndarray, cand: np.ndarray) -> np.ndarray:
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
        pi = _check_restriction(restriction, self.n_features)
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
            nd = _table_to_nd(self._table, self.n_features)
            sub, _ = _sub_table(nd, pi)
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
        return self._eval(all_points(n))

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


def _as_oracle(f, n_features=None) -> Oracle:
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


def _exact_table(f) -> np.ndarray:
    o = _as_oracle(f)
    if o.n_features > MAX_EXACT_N:
        raise TreeLearnValueError(f"exact computation needs n <= {MAX_EXACT_N}, got n = {o.n_features}")
    return o.truth_table()


# ----------------------------------------------------------------------------- smoothing
def _smooth_table(table: np.ndarray, n: int, delta: float) -> np.ndarray:
    nd = np.array(_table_to_nd(np.asarray(table, dtype=np.float64), n))  # copy
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
    o = _as_oracle(f)
    n = o.n_features
    if exact is None:
        exact = o._table is not None or n <= 16
    if exact:
        t = _smooth_table(o.truth_table(), n, delta)
        s = Oracle.from_truth_table(t, name=f"{o.name}_delta")
        s.real_valued = True
        return s
    if not isinstance(n_noise, numbers.Integral) or n_noise < 1:
        raise TreeLearnValueError("n_noise must be a positive int")
    rng = np.random.default_rng(_rng_seed(random_state))
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
    s._smoothing = (o, delta, n_noise)
    return s


# ----------------------------------------------------------------------------- influence
def _resolve_metric(metric: str, *oracles) -> str:
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
    o = _as_oracle(f)
    n = o.n_features
    pi = _check_restriction(restriction, n)
    metric = _resolve_metric(metric, o)
    if method == "auto":
        method = "exact" if (o._table is not None or n <= 16) else "sampled"
    out = np.zeros(n)
    free = np.nonzero(pi == 0)[0]
    if method == "exact":
        nd = _table_to_nd(_exact_table(o), n)
        sub, free = _sub_table(nd, pi)
        out[free] = _exact_influences_nd(sub, metric)
        return out
    if method != "sampled":
        raise TreeLearnValueError("method must be 'auto', 'exact' or 'sampled'")
    if n_samples is None:
        # value 0.5·ρ(f(x), f(x^i)) lies in [0, 1/2] (hamming) or [0, 1] (abs)
        width = 0.5 if metric == "hamming" else 1.0
        n_samples = hoeffding_sample_size(tau / 2.0, delta / max(n, 1), width)
    rng = np.random.default_rng(_rng_seed(random_state))
    X = _random_pm1(rng, int(n_samples), pi)
    f0 = o._eval(X)
    F = o._eval_flips(X, free)
    if metric == "hamming":
        out[free] = 0.5 * np.mean(F != f0[:, None], axis=0)
    else:
        out[free] = 0.5 * np.mean(np.abs(F - f0[:, None]), axis=0)
    return out


def influence(f, i: int, **kw) -> float:
    """Inf_i(f_π) (see :func:`influences`)."""
    o = _as_oracle(f)
    if not isinstance(i, numbers.Integral) or not 0 <= i < o.n_features:
        raise TreeLearnValueError(f"variable index {i!r} out of range for {o.n_features} variables")
    return float(influences(o, **kw)[int(i)])


def noisy_influences(f, delta: float, *, restriction=None, n_samples: int | None = None, n_noise: int = 64,
                     tau: float = 0.05, conf_delta: float = 0.01, random_state=None, method: str = "auto") -> np.ndarray:
    """Noisy influence Inf_i((f_δ)_π) in the |·| metric, by sampling (with coupled noise: the
    same noisy copies serve x and x^{⊕i}) or exactly for small n."""
    o = _as_oracle(f)
    n = o.n_features
    if method == "auto":
        method = "exact" if (o._table is not None or n <= 16) else "sampled"
    if method == "exact":
        return influences(smooth(o, delta, exact=True), restriction=restriction, method="exact", metric="abs")
    pi = _check_restriction(restriction, n)
    free = np.nonzero(pi == 0)[0]
    if n_samples is None:
        n_samples = hoeffding_sample_size(tau / 2.0, conf_delta / max(n, 1), 1.0)
    rng = np.random.default_rng(_rng_seed(random_state))
    X = _random_pm1(rng, int(n_samples), pi)
    f0, F = _smoothed_batch(o, X, free, delta, n_noise, rng, pi)
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


def _smoothed_batch(o: Oracle, X, cand, delta, n_noise, rng, pi):
    """Monte Carlo (f_δ)_π at X and at X with each candidate flipped, coupled noise: the same
    ``n_noise`` noise patterns z serve x and x^{⊕i} (f((x ⊕ z)^{⊕i})). A pattern that flips
    nothing reuses the answers at x itself, so only noised points are queried (with the small δ
    of Lemma 7.3 most patterns are empty)."""
    q = delta / 2.0
    base0 = o._eval(X)
    baseF = o._eval_flips(X, cand)
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
        f0[rows] += o._eval(Y) - base0[rows]
        F[rows] += o._eval_flips(Y, cand) - baseF[rows]
    return f0 / n_noise, F / n_noise


# ----------------------------------------------------------------------------- distances
def average_depth(tree: Tree) -> float:
    """Δ(T) = Σ_leaves |ℓ|·2^{−|ℓ|} under the uniform distribution (004 §3)."""
    return tree.average_depth()


def dist(f, g, *, metric: str = "auto", method: str = "auto", n_samples: int = 100_000, random_state=None) -> float:
    """dist(f, g) = E_x[ρ(f(x), g(x))] under the uniform distribution (004 Def. 2).

    f, g: Oracles, Trees over {±1}^n or truth tables. Exact for n <= 20 (``method="auto"``),
    otherwise a sample of ``n_samples`` uniform points."""
    fo, go = _as_oracle(f), _as_oracle(g)
    if fo.n_features != go.n_features:
        raise TreeLearnValueError(f"dist of functions on {fo.n_features} and {go.n_features} variables")
    metric = _resolve_metric(metric, fo, go)
    n = fo.n_features
    if method == "auto":
        method = "exact" if n <= MAX_EXACT_N else "sampled"
    if method == "exact":
        a, b = _exact_table(fo), _exact_table(go)
    else:
        X = _random_pm1(np.random.default_rng(_rng_seed(random_state)), int(n_samples), np.zeros(n, np.int8))
        a, b = fo._eval(X), go._eval(X)
    return float(np.mean(a != b) if metric == "hamming" else np.mean(np.abs(a - b)))


# ----------------------------------------------------------------------------- tree building
class _Builder:
    """Preorder node arrays for a tree over {±1}^n."""

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
            classes=_CLASSES.copy(),
            schema=schema if schema is not None else ColumnSchema(categories=[None] * n),
        )


def tree_from_nested(nested, n_features: int) -> Tree:
    """Tree over {±1}^n from a nested spec: a leaf is ``-1`` or ``+1``; an internal node is
    ``(i, left, right)`` (left: x_i = −1, right: x_i = +1)."""
    b = _Builder()

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


def _tree_leaf_labels(tree: Tree) -> np.ndarray:
    return np.asarray(tree.classes)[tree.leaf_class_index()].astype(np.float64)


# ----------------------------------------------------------------------------- PRUNE
def prune(f, tree: Tree, tau: float, *, metric: str = "auto", method: str = "auto", n_samples: int = 20000,
          random_state=None) -> Tree:
    """PRUNE(f, T, τ) (004 Fig. 1): an everywhere τ-influential pruning of T w.r.t. f.

    Keeps T's nodes (each node is kept or replaced by one of its subtrees); a kept node's
    variable has Inf_i(f_v) > τ. Exact influences and distances for n <= 20 (``method="auto"``),
    else estimates from ``n_samples`` uniform points per restriction. Guarantees (Thm 5): size
    and depth do not grow, everywhere τ-influential, dist(T*, f) <= dist(T, f) + Δ(T)·τ.
    """
    o = _as_oracle(f)
    n = o.n_features
    if tree.n_features != n:
        raise TreeLearnValueError(f"the tree reads {tree.n_features} variables, f has {n}")
    if not tau > 0:
        raise TreeLearnValueError("tau must be > 0")
    metric = _resolve_metric(metric, o)
    if method == "auto":
        method = "exact" if n <= MAX_EXACT_N else "sampled"
    labels = _tree_leaf_labels(tree)
    L, R, F = tree.children_left, tree.children_right, tree.feature
    seed = _rng_seed(random_state)

    if method == "exact":
        tab = _exact_table(o)
        nd = _table_to_nd(tab, n)

        def inf_of(pi, i):
            sub, free = _sub_table(nd, pi)
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
            rng = _key_seed(seed, pi.tobytes() + bytes([1]))
            X = _random_pm1(rng, n_samples, pi)
            f0 = o._eval(X)
            f1 = o._eval_flips(X, np.array([i], dtype=np.int64))[:, 0]
            return 0.5 * float(np.mean(f0 != f1) if metric == "hamming" else np.mean(np.abs(f0 - f1)))

        def dist_of(pi, sub_nodes_eval):
            rng = _key_seed(seed, pi.tobytes() + bytes([2]))
            X = _random_pm1(rng, n_samples, pi)
            fv, tv = o._eval(X), sub_nodes_eval(X)
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
    bld = _Builder()

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
    o = _as_oracle(f)
    n = o.n_features
    metric = _resolve_metric(metric, o)
    nd = _table_to_nd(_exact_table(o), n)
    L, R, F = tree.children_left, tree.children_right, tree.feature
    stack = [(0, np.zeros(n, dtype=np.int8))]
    while stack:
        v, pi = stack.pop()
        if L[v] < 0:
            continue
        i = int(F[v])
        if pi[i] != 0:
            return False
        sub, free = _sub_table(nd, pi)
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


# ----------------------------------------------------------------------------- statistics providers
class _Stat:
    __slots__ = ("mean", "S", "survivors", "m", "n_rel", "lbs")

    def __init__(self, mean, S, survivors, m, n_rel=0, lbs=()):
        self.mean, self.S, self.survivors, self.m = mean, S, survivors, m
        self.n_rel = n_rel  # variables seen to change f_π (a tree computing f_π queries them all)
        # influences in decreasing order, in error units: a tree with t leaves ignores one of the
        # t most influential variables j, and a tree ignoring x_j errs on >= Inf_j(f_π) (it
        # agrees on x and x^⊕j, f_π differs there), so its error is >= lbs[t-1]
        self.lbs = lbs


def _kl_bern(p, q):
    p = np.clip(p, 0.0, 1.0)
    q = min(max(q, 1e-15), 1 - 1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1) / (1 - q)), 0.0)
    return a + b


class _ExactProvider:
    """Exact E[f_π] and influences from the truth table (n <= 20)."""

    def __init__(self, table, n, metric, tau):
        self.nd = _table_to_nd(np.asarray(table, dtype=np.float64), n)
        self.metric, self.tau = metric, tau
        self.n_queries = 0

    def stats(self, pi, key, want_S, cand):
        sub, free = _sub_table(self.nd, pi)
        mean = float(np.mean(sub))
        if not want_S:
            return _Stat(mean, (), None, 0)
        infl = _exact_influences_nd(sub, self.metric)
        sel = np.nonzero(infl >= self.tau - 1e-12)[0]
        sel = sel[np.argsort(-infl[sel], kind="stable")]
        S = tuple(int(free[a]) for a in sel)
        pos = np.sort(infl[infl > 0])[::-1] * (1.0 if self.metric == "hamming" else 0.5)
        return _Stat(mean, S, None, 0, int(pos.size), tuple(pos.tolist()))


class _SampledProvider:
    """Estimated E[f_π] and influential set S from membership queries.

    One shared batch per restriction (seeded by the restriction, never stored), every
    candidate bit flipped. First look: m0 = ⌈ln(1/δ')/lo⌉ points; candidates that never change
    f are dropped here and, by default, for the restriction's descendants (an irrelevant variable
    stays irrelevant under every further restriction). Adaptive: the batch doubles until a
    Chernoff (KL) bound certifies each remaining candidate clearly above ``lo`` (include:
    Inf >= τ/2) or clearly below ``hi`` (exclude: Inf < τ), up to the Hoeffding size for
    accuracy ±τ/4, where it is included iff its estimate is >= 3τ/4. Without adaptivity every
    candidate gets the full Hoeffding size. Real-valued functions (the smoothed f_δ) use the
    statistic ½|f(x) − f(x^⊕i)| in [0, 1] (Inf in the |·| metric); Boolean ones 1[f(x) ≠ f(x^⊕i)]
    (Inf = half of it).
    """

    def __init__(self, oracle, n, tau, delta_test, seed, *, adaptive=True, inherit=True, mean_tol=0.1,
                 smoothing=None, n_noise=32, max_queries=None, shared_batch=True):
        self.o, self.n, self.tau = oracle, n, tau
        self.seed = seed
        self.adaptive, self.inherit = adaptive, inherit
        self.smoothing, self.n_noise = smoothing, n_noise
        self.shared = shared_batch
        boolean = smoothing is None and not oracle.real_valued
        self.boolean = boolean
        # thresholds on q = E[statistic]; Inf = scale·q
        scale = 0.5 if boolean else 1.0
        self.lo = (tau / 2.0) / scale
        self.hi = tau / scale
        self.log1d = math.log(1.0 / delta_test)
        self.m0 = int(math.ceil(self.log1d / self.lo))
        self.m_max = max(self.m0, int(math.ceil(math.log(2.0 / delta_test) / (2.0 * (self.lo / 2.0) ** 2))))
        self.m_mean = max(self.m0, hoeffding_sample_size(mean_tol, delta_test, 2.0))
        self.q_ref = 0
        self.max_queries = max_queries
        self.n_queries = 0

    def _batch(self, rng, m, pi, cand, want_flips=True):
        X = _random_pm1(rng, m, pi)
        before = self.o.n_queries
        if self.smoothing is None and want_flips and not self.shared:
            # ablation: a fresh batch per candidate, so f(x) is queried again for each of them
            f0 = self.o._eval(X)
            F = np.empty((m, cand.shape[0]))
            base = np.empty((m, cand.shape[0]))
            for c in range(cand.shape[0]):
                Xc = _random_pm1(rng, m, pi)
                base[:, c] = self.o._eval(Xc)
                F[:, c] = self.o._eval_flips(Xc, cand[c:c + 1])[:, 0]
            self.n_queries += self.o.n_queries - before
            return f0, (F != base) if self.boolean else 0.5 * np.abs(F - base)
        if self.smoothing is None:
            f0 = self.o._eval(X)
            F = self.o._eval_flips(X, cand) if want_flips else None
        else:
            if want_flips:
                f0, F = _smoothed_batch(self.o, X, cand, self.smoothing, self.n_noise, rng, pi)
            else:
                f0, F = _smoothed_batch(self.o, X, cand[:0], self.smoothing, self.n_noise, rng, pi)
                F = None
        self.n_queries += self.o.n_queries - before
        if self.max_queries is not None and self.n_queries > self.max_queries:
            raise SearchLimitError(f"BuildDT hit its query budget of {self.max_queries} queries")
        if F is None:
            return f0, None
        if self.boolean:
            Z = (F != f0[:, None])
        else:
            Z = 0.5 * np.abs(F - f0[:, None])
        return f0, Z

    def stats(self, pi, key, want_S, cand):
        rng = _key_seed(self.seed, key)
        if not want_S:
            f0, _ = self._batch(rng, self.m0, pi, np.empty(0, np.int64), want_flips=False)
            m = self.m0
            s, cnt = float(f0.sum()), m
            if np.any(f0 != f0[0]) and self.m_mean > m:
                f1, _ = self._batch(rng, self.m_mean - m, pi, np.empty(0, np.int64), want_flips=False)
                s += float(f1.sum())
                cnt = self.m_mean
            return _Stat(s / cnt, (), None, cnt)
        if cand is None:
            cand = np.nonzero(pi == 0)[0]
        else:
            cand = cand[pi[cand] == 0]
        cand = np.asarray(cand, dtype=np.int64)
        if not self.adaptive:
            f0, Z = self._batch(rng, self.m_max, pi, cand)
            q = Z.mean(axis=0) if cand.size else np.zeros(0)
            sel = np.nonzero(q >= 1.5 * self.lo)[0]
            sel = sel[np.argsort(-q[sel], kind="stable")]
            S = tuple(int(j) for j in cand[sel])
            alive = Z.any(axis=0)
            surv = cand[alive] if self.inherit else None
            return _Stat(float(f0.mean()), S, surv, self.m_max, int(alive.sum()))
        m = self.m0
        f0, Z = self._batch(rng, m, pi, cand)
        fsum, fcnt = float(f0.sum()), m
        sums = Z.sum(axis=0).astype(np.float64)
        alive = sums > 0  # zero-flip candidates are dropped at the first look
        surv = cand[alive] if self.inherit else None
        included = []
        und = np.nonzero(alive)[0]
        qfin = np.zeros(cand.shape[0])
        while und.size:
            qhat = sums[und] / m
            qfin[und] = qhat
            inc = (qhat > self.lo) & (m * _kl_bern(qhat, self.lo) >= self.log1d)
            exc = (qhat < self.hi) & (m * _kl_bern(qhat, self.hi) >= self.log1d)
            if m >= self.m_max:
                inc = qhat >= 1.5 * self.lo
                exc = ~inc
            included.extend((-float(qhat[a]), int(cand[j])) for a, j in zip(np.nonzero(inc)[0], und[inc]))
            und = und[~(inc | exc)]
            if not und.size:
                break
            m_new = min(2 * m, self.m_max)
            f1, Z1 = self._batch(rng, m_new - m, pi, cand[und])
            fsum += float(f1.sum())
            fcnt += m_new - m
            sums[und] += Z1.sum(axis=0)
            m = m_new
        if fcnt < self.m_mean and not (np.all(f0 == f0[0]) and not included):
            extra = self.m_mean - fcnt
            f1, _ = self._batch(rng, extra, pi, np.empty(0, np.int64), want_flips=False)
            fsum += float(f1.sum())
            fcnt += extra
        included.sort()
        lbs = tuple(np.sort(qfin[alive])[::-1] * 0.5)  # Inf in error units = q/2 (both statistics)
        return _Stat(fsum / fcnt, tuple(j for _, j in included), surv, fcnt, int(alive.sum()), lbs)


class _MonotoneProvider:
    """Random labelled examples only (004 §6): Inf_i(f_π) = ½·|E[f(x)·x_i | x consistent with π]|
    (Fact 6.2; the absolute value lets each coordinate be monotone in either direction)."""

    def __init__(self, X, y, tau, threshold):
        self.XT = np.ascontiguousarray(X.T)  # (n, N) int8
        self.y = y.astype(np.float64)
        self.tau = tau
        self.thr = threshold
        self.n_queries = 0

    def stats(self, pi, key, want_S, cand):
        fixed = np.nonzero(pi)[0]
        if fixed.size:
            mask = np.all(self.XT[fixed] == pi[fixed][:, None], axis=0)
            yy = self.y[mask]
        else:
            mask = None
            yy = self.y
        cnt = yy.shape[0]
        if cnt == 0:
            return _Stat(0.0, (), None, 0)
        mean = float(yy.mean())
        if not want_S:
            return _Stat(mean, (), None, cnt)
        Xs = self.XT if mask is None else self.XT[:, mask]
        infl = 0.5 * np.abs(Xs.astype(np.float64) @ yy) / cnt
        infl[fixed] = 0.0
        sel = np.nonzero(infl >= self.thr)[0]
        sel = sel[np.argsort(-infl[sel], kind="stable")]
        return _Stat(mean, tuple(int(j) for j in sel), None, cnt)


# ----------------------------------------------------------------------------- BuildDT
_PERFECT = 2.0**-50  # bounds below this ask for a tree of estimated cost 0


class _BuildDT:
    """BuildDT_M (004 Fig. 2) as a DP over restrictions: for each restriction π the vector of
    best distances for every size budget 1..need (a tree of size <= k), so M[π, s] for all s
    comes from one pass over (i ∈ S, split k)."""

    def __init__(self, provider, n, size, depth, *, memo=True, time_limit=None, max_memory_mb=None,
                 rounds=(0.0, 1 / 256, 1 / 32, math.inf)):
        self.p, self.n, self.size, self.depth = provider, n, size, depth
        self.use_memo = memo
        self.memo = {}
        self.stats = {}
        self.t0 = time.perf_counter()
        self.time_limit = time_limit
        self.max_memory = None if max_memory_mb is None else max_memory_mb * 2**20
        self.mem = 0
        self.n_restrictions = 0
        self.n_stat_calls = 0
        self.rounds = rounds
        self.n_rounds = 1

    def _check_limits(self):
        if self.time_limit is not None and time.perf_counter() - self.t0 > self.time_limit:
            raise SearchLimitError(
                f"BuildDT hit its time limit of {self.time_limit:g} s after {self.n_restrictions} restrictions "
                f"(raise time_limit, or lower size / epsilon)"
            )
        if self.max_memory is not None and self.mem > self.max_memory:
            raise SearchLimitError(
                f"BuildDT hit its memory cap of {self.max_memory / 2**20:g} MB of memo after "
                f"{self.n_restrictions} restrictions"
            )

    def _stat(self, pi, key, depth, want_S, cand):
        st = self.stats.get(key)
        if st is not None and (not want_S or key in self._full):
            return st
        self._check_limits()
        old = st
        st = self.p.stats(pi, key, want_S, cand)
        if old is not None:  # keep E[f_π] fixed once used, so memo entries stay consistent
            st.mean = old.mean
        self.n_stat_calls += 1
        if key not in self.stats:
            self.n_restrictions += 1
        self.stats[key] = st
        if want_S:
            self._full.add(key)
        self.mem += 200 + len(key) + 8 * (len(st.S) + (0 if st.survivors is None else st.survivors.size))
        return st

    def run(self):
        self._full = set()
        root = np.zeros(self.n, dtype=np.int8)
        # Iterative bounding: first ask for a tree of (estimated) cost below a tiny bound (a tree
        # consistent with every estimate, the realizable case), then relax the bound; the memo
        # (exact values and lower bounds) carries over, and the last round is exact.
        for u in self.rounds:
            u = u if u > 0 else 2.0 ** -(2 * self.depth + 60)
            ub = [0.0] * (self.size - 1) + [u]  # only M[∅, s] is wanted
            ent = self._solve(root, root.tobytes(), 0, self.size, None, ub)
            if ent[1][min(self.size, len(ent[0])) - 1]:
                break
            self.n_rounds += 1
        b = _Builder()
        self._emit(b, root, root.tobytes(), 0, self.size, 1.0)
        return b, float(ent[0][min(self.size, len(ent[0])) - 1])

    def _solve(self, pi, key, depth, need, cand, ub):
        """Costs v[t-1] of the best tree of size <= t, t = 1..need' (need' = need capped by the
        depth budget; larger budgets equal the last entry). Branch and bound: v[t-1] is exact
        whenever the optimum is < ub[t-1]; otherwise it is a lower bound >= ub[t-1]."""
        cap = min(need, 2 ** (self.depth - depth)) if self.depth - depth < 62 else need
        if cap < need:  # fold the wanted bounds of budgets beyond the depth cap into its last entry
            ub = ub[:cap - 1] + [max(ub[cap - 1:])]
        need = cap
        ent = self.memo.get(key)
        if ent is not None and len(ent[0]) >= need:
            v, ex = ent[0], ent[1]
            if all(ex[t] or v[t] >= ub[t] for t in range(need)):
                return ent
            old = ent[5]
            ub = list(ub) + [0.0] * (len(old) - len(ub))
            ub = [max(ub[t], old[t]) for t in range(len(old))]
            need = len(ub)
        elif ent is not None:
            old = ent[5]
            ub = [max(ub[t], old[t]) if t < len(old) else ub[t] for t in range(need)]
        if max(ub) <= 0.0:  # nothing wanted: the trivial lower bound 0 is enough
            return ([0.0] * need, [False] * need, [-1] * need, [0] * need, 0.0, list(ub))
        want_S = need > 1 and depth < self.depth
        st = self._stat(pi, key, depth, want_S, cand)
        leaf = 0.5 * (1.0 - abs(st.mean))
        best = [leaf] * need
        ci = [-1] * need
        ck = [0] * need
        if leaf > 0 and max(ub) < _PERFECT and st.n_rel:
            # only a tree of cost 0 is wanted: it must query every variable seen to change f_π,
            # so budgets below n_rel + 1 leaves have a positive cost (>= ub, a valid bound)
            for t in range(min(need, st.n_rel)):
                best[t] = max(best[t], ub[t])
        perfect = max(ub) < _PERFECT
        lbv = [0.0] * need
        if leaf > 0.0 and st.lbs:
            nl = len(st.lbs)
            lbv = [st.lbs[t] if t < nl else 0.0 for t in range(need)]
        if want_S and leaf > 0.0 and st.S:
            ccand = st.survivors
            for i in st.S:
                bnd = [min(ub[t], best[t]) for t in range(need)]
                # sizes t >= 2 that can still improve
                live = [t for t in range(1, need) if bnd[t] > lbv[t] and bnd[t] > 0.0]
                if not live:
                    break
                tmax = live[-1] + 1  # largest useful size
                cn = tmax - 1
                pl = pi.copy()
                pl[i] = -1
                kl = self._child_key(key, pl, i, -1)
                pr = pi.copy()
                pr[i] = 1
                kr = self._child_key(key, pr, i, 1)
                cw = cn > 1 and depth + 1 < self.depth
                sl = self._stat(pl, kl, depth + 1, cw, ccand)
                sr = self._stat(pr, kr, depth + 1, cw, ccand)
                if perfect:
                    # both children must be computed exactly: each needs >= n_rel + 1 leaves
                    lbl = 1 if sl.mean in (-1.0, 1.0) else sl.n_rel + 1
                    lbr = 1 if sr.mean in (-1.0, 1.0) else sr.n_rel + 1
                    if lbl + lbr > tmax:
                        continue
                LBl = sl.lbs if sl.mean not in (-1.0, 1.0) else ()
                LBr = sr.lbs if sr.mean not in (-1.0, 1.0) else ()
                nbl, nbr = len(LBl), len(LBr)
                # left child of size k is useful only if L[k] < 2·bnd[t] − LB_right(t+1−k) for some t
                ubl = [0.0] * cn
                for t in live:
                    b2 = 2 * bnd[t]
                    for k in range(1, t + 1):
                        j = t + 1 - k
                        r = b2 - (LBr[j - 1] if j - 1 < nbr else 0.0)
                        if k - 1 < cn and r > ubl[k - 1] and r > (LBl[k - 1] if k - 1 < nbl else 0.0):
                            ubl[k - 1] = r
                if max(ubl) <= 0.0:
                    continue
                Le = self._solve(pl, kl, depth + 1, cn, ccand, ubl)
                L, exL = Le[0], Le[1]
                ubr = [0.0] * cn
                nL = len(L)
                for t in live:
                    for k in range(1, t + 1):
                        j = t + 1 - k  # right size
                        if j - 1 < cn:
                            r = 2 * bnd[t] - L[min(k, nL) - 1]
                            if r > ubr[j - 1]:
                                ubr[j - 1] = r
                if max(ubr) <= 0.0:
                    continue
                Re = self._solve(pr, kr, depth + 1, cn, ccand, ubr)
                R, exR = Re[0], Re[1]
                nR = len(R)
                for t in live:
                    bt, bk = bnd[t], -1
                    for k in range(1, t + 1):
                        a, b = min(k, nL) - 1, min(t + 1 - k, nR) - 1
                        c = 0.5 * (L[a] + R[b])
                        # (with exact values c < bt implies both parts exact; estimated lower bounds
                        # need not be consistent with estimated costs, so check)
                        if c < bt and bt - c > 1e-12 * bt and exL[a] and exR[b]:
                            bt, bk = c, k
                    if bk > 0:
                        best[t], ci[t], ck[t] = bt, i, bk
                        # a budget t' > t can use this tree too (size <= t)
                        for t2 in range(t + 1, need):
                            if bt < best[t2] and best[t2] - bt > 1e-12 * best[t2]:
                                best[t2], ci[t2], ck[t2] = bt, i, bk
        ex = [best[t] < ub[t] for t in range(need)]
        v = [best[t] if ex[t] else max(ub[t], lbv[t]) for t in range(need)]
        ent = (v, ex, ci, ck, st.mean, list(ub))
        self.memo[key] = ent
        self.mem += 64 + 40 * need
        return ent

    def _child_key(self, key, pchild, i, b):
        if self.use_memo:
            return pchild.tobytes()
        # without the memo on restrictions, the key is the path (order of the fixes matters)
        return key + int(i).to_bytes(4, "little") + (b"+" if b > 0 else b"-")

    def _emit(self, bld, pi, key, depth, t, mass):
        cost, ex, ci, ck, mean, _ = self.memo[key]
        t = min(t, len(cost))
        assert ex[t - 1], "BuildDT internal error: emitting an inexact entry"
        i = ci[t - 1]
        if i < 0:
            return bld.leaf(1 if mean >= 0 else -1, mass, 0)
        k = ck[t - 1]
        node = bld.internal(i)
        pl = pi.copy()
        pl[i] = -1
        pr = pi.copy()
        pr[i] = 1
        a = self._emit(bld, pl, self._child_key(key, pl, i, -1), depth + 1, k, mass / 2)
        c = self._emit(bld, pr, self._child_key(key, pr, i, 1), depth + 1, t - k, mass / 2)
        bld.set_children(node, a, c)
        return node


def default_parameters(size: int, epsilon: float) -> dict:
    """The parameters of 004 Thm 1 / Lemma 7.3: d = ⌈log2(s/ε)⌉, τ = ε/log2(s) (ε for s <= 2),
    and the agnostic smoothing δ = τ/(4d)."""
    _check_size_eps(size, epsilon)
    d = int(math.ceil(math.log2(size / epsilon)))
    tau = epsilon / math.log2(size) if size > 2 else epsilon
    return {"depth": d, "tau": tau, "delta": tau / (4 * d)}


def _check_size_eps(size, epsilon):
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise TreeLearnValueError(f"size must be a positive int, got {size!r}")
    if not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1:
        raise TreeLearnValueError(f"epsilon must lie in (0, 1), got {epsilon!r}")


def build_dt(f, size: int, *, depth: int, tau: float, influence: str = "auto", smoothing: float | None = None,
             random_state=None, conf_delta: float = 1e-8, adaptive: bool = True, memo: bool = True,
             inherit_candidates: bool = True, mean_tol: float = 0.1, n_noise: int = 32,
             time_limit: float | None = 600.0, max_memory_mb: float | None = 2048.0,
             max_queries: int | None = None, shared_batch: bool = True, return_info: bool = False):
    """BuildDT_M(f, ∅, s, d, τ) of 004 Fig. 2: the size <= s, depth <= d, everywhere τ-influential
    tree closest to f (to f_δ when ``smoothing=δ``), by dynamic programming over restrictions.

    ``influence``: ``"exact"`` (truth table, n <= 20), ``"sampled"`` (membership queries,
    adaptive, see :class:`_SampledProvider`), or ``"auto"`` (exact for table oracles). The tree's
    distance is computed from leaf means: dist(f_π, T) = ½(dist of left + dist of right), a leaf b
    costs Pr[f_π ≠ b] = (1 − |E f_π|)/2 for its best b. ``conf_delta``: failure probability of
    each sequential test. Returns the Tree (and an info dict with ``return_info``: queries,
    distinct restrictions, estimated error, seconds, memo size estimate).

    How the search is organised (none of it changes the answer of the exact DP):

    * one memo entry per restriction π (keyed by π as a set, so a restriction reached through its
      fixes in any order is solved once; ``memo=False`` keys by the path instead, the ablation),
      holding E[f_π], the influential set S, and for every size budget the best distance, its
      root split and whether it is exact: the seed of π's sample is derived from π, sample points
      are never stored;
    * branch and bound: a child is asked only for budgets that can still beat the best tree found,
      and a tree with t leaves ignores one of the t most influential variables of f_π, so its
      error is at least the t-th largest Inf_j(f_π) (lower bounds prune budgets and splits);
    * iterative bounding rounds: first a tree of estimated error 0 (the realizable case; every
      variable that changes f_π must then be queried, so a budget below their number + 1 leaves is
      infeasible), then error < 1/256, < 1/32, and finally unrestricted (exact);
    * sampled statistics (``influence="sampled"``): see :class:`_SampledProvider`
      (``adaptive=False`` and ``shared_batch=False`` are the ablations of the benchmark;
      ``inherit_candidates=False`` re-examines every free variable at each restriction).

    Limits: ``time_limit`` seconds, ``max_memory_mb`` of memo (estimated) and ``max_queries``
    raise :class:`SearchLimitError` with a message saying which limit was hit.
    """
    o = _as_oracle(f)
    n = o.n_features
    if not isinstance(depth, numbers.Integral) or depth < 0:
        raise TreeLearnValueError(f"depth must be a non-negative int, got {depth!r}")
    if not isinstance(size, numbers.Integral) or size < 1:
        raise TreeLearnValueError(f"size must be a positive int, got {size!r}")
    if not tau > 0:
        raise TreeLearnValueError(f"tau must be > 0, got {tau!r}")
    if influence == "auto":
        influence = "exact" if o._table is not None else "sampled"
    seed = _rng_seed(random_state)
    q0 = o.n_queries
    if influence == "exact":
        fo = o if smoothing is None else smooth(o, smoothing, exact=True)
        metric = "hamming" if (smoothing is None and not o.real_valued) else "abs"
        table = _exact_table(fo)
        # the DP works in error units ((1 − |mean|)/2); the |·| metric doubles distances and
        # influences, so compare the exact |·|-influence with τ as is
        provider = _ExactProvider(table, n, metric, tau)
    elif influence == "sampled":
        provider = _SampledProvider(o, n, tau, conf_delta, seed, adaptive=adaptive, inherit=inherit_candidates,
                                    mean_tol=mean_tol, smoothing=smoothing, n_noise=n_noise, max_queries=max_queries,
                                    shared_batch=shared_batch)
    else:
        raise TreeLearnValueError("influence must be 'auto', 'exact' or 'sampled'")
    dp = _BuildDT(provider, n, int(size), int(depth), memo=memo, time_limit=time_limit, max_memory_mb=max_memory_mb)
    t0 = time.perf_counter()
    bld, cost = dp.run()
    tree = bld.tree(n)
    if not return_info:
        return tree
    info = {
        "queries": o.n_queries - q0,
        "restrictions": dp.n_restrictions,
        "stat_calls": dp.n_stat_calls,
        "estimated_error": cost,
        "time": time.perf_counter() - t0,
        "depth": depth,
        "tau": tau,
        "smoothing": smoothing,
        "memo_bytes_estimate": dp.mem,
    }
    return tree, info


def _monotone_sample(o: Oracle, n_samples: int, seed: int):
    rng = np.random.default_rng(seed)
    X = _random_pm1(rng, n_samples, np.zeros(o.n_features, np.int8))
    return X, o._eval(X)


def monotone_sample_size(size: int, epsilon: float, n_features: int, conf_delta: float = 0.01, cap: int = 400_000) -> int:
    """Random examples for the monotone mode: every Inf_i(f_π) for |π| <= d' to ±τ/2 (Hoeffding on
    x_i·f ∈ [−1, 1] among the ≈ N·2^{−d'} consistent examples, union bound over n·2^{d'} pairs),
    with d' = ⌈log2 s⌉ (the depth the restrictions of a size-s tree typically reach; the theory
    of §6 uses d' = d, i.e. poly(s/ε)·log n examples), capped at ``cap``."""
    p = default_parameters(size, epsilon)
    dd = max(1, int(math.ceil(math.log2(max(size, 2)))))
    m = hoeffding_sample_size(p["tau"], conf_delta / (n_features * 2**dd), 2.0) * 2**dd
    return int(min(m, cap))


def learn_from_queries(oracle, size: int, epsilon: float, mode: str = "realizable", random_state=None, *,
                       depth: int | None = None, tau: float | None = None, delta: float | None = None,
                       influence: str = "auto", n_samples: int | None = None, return_info: bool = False, **kw):
    """Learn a size <= ``size`` tree within error ε (realizable) / opt_s + O(ε) (agnostic,
    monotone) of the oracle's function, under the uniform distribution on {±1}^n (004 Thm 1, 2).

    Modes: ``"realizable"`` queries f; ``"agnostic"`` runs BuildDT on the smoothed f_δ (Lemma 7.3);
    ``"monotone"`` uses only uniform random labelled examples (x, f(x)) and Inf_i(f_π) =
    ½·E[f(x)·x_i | π] (§6). Defaults from the theorems: d = ⌈log2(s/ε)⌉, τ = ε/log2 s,
    δ = τ/(4d). The returned Tree predicts ±1 arrays to ±1 labels. Further keyword arguments go
    to :func:`build_dt` (time_limit, max_memory_mb, conf_delta, adaptive, memo, ...).
    """
    _check_size_eps(size, epsilon)
    o = _as_oracle(oracle)
    p = default_parameters(size, epsilon)
    depth = p["depth"] if depth is None else depth
    tau = p["tau"] if tau is None else tau
    if mode == "realizable":
        return build_dt(o, size, depth=depth, tau=tau, influence=influence, random_state=random_state,
                        return_info=return_info, **kw)
    if mode == "agnostic":
        delta = tau / (4 * depth) if delta is None else delta
        return build_dt(o, size, depth=depth, tau=tau, influence=influence, smoothing=delta,
                        random_state=random_state, return_info=return_info, **kw)
    if mode == "monotone":
        if n_samples is None:
            n_samples = monotone_sample_size(size, epsilon, o.n_features)
        q0 = o.n_queries
        X, y = _monotone_sample(o, int(n_samples), _rng_seed(random_state))
        y = np.where(y >= 0, 1.0, -1.0)
        tree, info = _build_monotone(X, y, size, depth, tau, **kw)
        info["queries"] = o.n_queries - q0
        return (tree, info) if return_info else tree
    raise TreeLearnValueError(f"mode must be 'realizable', 'agnostic' or 'monotone', got {mode!r}")


def _build_monotone(X, y, size, depth, tau, *, threshold=None, time_limit=600.0, max_memory_mb=2048.0, memo=True,
                    schema=None, x_threshold=0.0):
    thr = tau / 2.0 if threshold is None else threshold
    provider = _MonotoneProvider(X, y, tau, thr)
    dp = _BuildDT(provider, X.shape[1], int(size), int(depth), memo=memo, time_limit=time_limit,
                  max_memory_mb=max_memory_mb)
    t0 = time.perf_counter()
    bld, cost = dp.run()
    tree = bld.tree(X.shape[1], threshold=x_threshold, schema=schema)
    return tree, {"restrictions": dp.n_restrictions, "estimated_error": cost, "time": time.perf_counter() - t0,
                  "n_samples": X.shape[0], "depth": depth, "tau": tau}


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
    o = _as_oracle(f)
    n = o.n_features
    if not isinstance(t, numbers.Integral) or t < 1:
        raise TreeLearnValueError(f"the size budget t must be a positive int, got {t!r}")
    if influence == "auto":
        influence = "exact" if (o._table is not None or n <= 16) else "sampled"
    seed = _rng_seed(random_state)
    if influence == "exact":
        nd = _table_to_nd(_exact_table(o), n)
        metric = "hamming" if not o.real_valued else "abs"

        def leaf_stats(pi):
            sub, free = _sub_table(nd, pi)
            infl = np.zeros(n)
            infl[free] = _exact_influences_nd(sub, metric)
            return float(np.mean(sub)), infl
    else:
        m = n_samples or hoeffding_sample_size(tau / 2.0, conf_delta / n, 0.5)

        def leaf_stats(pi):
            rng = _key_seed(seed, pi.tobytes())
            X = _random_pm1(rng, m, pi)
            f0 = o._eval(X)
            free = np.nonzero(pi == 0)[0]
            F = o._eval_flips(X, free)
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
        bld = _Builder()

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


# ----------------------------------------------------------------------------- estimator
class QueryTreeClassifier(BaseTreeClassifier):
    """Size-s decision trees by BuildDT (004).

    ``fit(X, y)``: the monotone random-example mode (§6) on a sample of {0,1}^n or {±1}^n (two
    classes; the larger label plays +1). ``fit_oracle(oracle)``: membership queries in ``mode``
    (``"realizable"``, ``"agnostic"`` or ``"monotone"``). Parameters: ``size`` s, ``epsilon`` ε,
    optional ``depth``/``tau``/``delta`` (defaults from 004 Thm 1), ``time_limit`` (s) and
    ``max_memory_mb`` for the DP, ``random_state``.
    """

    _supports_categorical = False

    def __init__(self, size=8, epsilon=0.1, mode="monotone", *, depth=None, tau=None, delta=None,
                 influence="auto", time_limit=600.0, max_memory_mb=2048.0, random_state=None):
        self.size = size
        self.epsilon = epsilon
        self.mode = mode
        self.depth = depth
        self.tau = tau
        self.delta = delta
        self.influence = influence
        self.time_limit = time_limit
        self.max_memory_mb = max_memory_mb
        self.random_state = random_state

    def _check_params(self):
        _check_size_eps(self.size, self.epsilon)
        if self.mode not in ("realizable", "agnostic", "monotone"):
            raise TreeLearnValueError(f"mode must be 'realizable', 'agnostic' or 'monotone', got {self.mode!r}")
        if self.depth is not None and (not isinstance(self.depth, numbers.Integral) or self.depth < 0):
            raise TreeLearnValueError(f"depth must be None or a non-negative int, got {self.depth!r}")
        if self.tau is not None and not (isinstance(self.tau, numbers.Real) and self.tau > 0):
            raise TreeLearnValueError(f"tau must be None or > 0, got {self.tau!r}")
        if self.delta is not None and not (isinstance(self.delta, numbers.Real) and 0 < self.delta <= 1):
            raise TreeLearnValueError(f"delta must be None or in (0, 1], got {self.delta!r}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise TreeLearnValueError("time_limit must be None or > 0")

    def _params(self):
        p = default_parameters(self.size, self.epsilon)
        return (p["depth"] if self.depth is None else self.depth, p["tau"] if self.tau is None else self.tau)

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema):
        if n_classes != 2:
            raise TreeLearnValueError(f"QueryTreeClassifier learns Boolean functions: 2 classes, got {n_classes}")
        if self.mode != "monotone":
            raise TreeLearnValueError("fit(X, y) uses random examples only: mode='monotone' (use fit_oracle for queries)")
        vals = np.unique(Xe)
        if np.all(np.isin(vals, (0.0, 1.0))):
            Xpm, xthr = (2 * Xe - 1).astype(np.int8), 0.5
        elif np.all(np.isin(vals, (-1.0, 1.0))):
            Xpm, xthr = Xe.astype(np.int8), 0.0
        else:
            raise TreeLearnValueError("QueryTreeClassifier.fit needs X in {0, 1} or {-1, +1}")
        if not np.all(sample_weight == 1):
            warnings.warn("QueryTreeClassifier ignores sample_weight (uniform random examples)", stacklevel=3)
        depth, tau = self._params()
        yy = np.where(y == 1, 1.0, -1.0)
        tree, info = _build_monotone(np.ascontiguousarray(Xpm), yy, self.size, depth, tau, time_limit=self.time_limit,
                                     max_memory_mb=self.max_memory_mb, schema=schema, x_threshold=xthr)
        self.info_ = info
        # class codes: tree classes are [-1, +1] = codes [0, 1]
        return tree

    def fit_oracle(self, oracle):
        """Learn from membership queries to ``oracle`` (an Oracle, a ±1 Tree or a truth table)."""
        self._check_params()
        o = _as_oracle(oracle)
        q0 = o.n_queries
        tree, info = learn_from_queries(o, self.size, self.epsilon, self.mode, self.random_state, depth=self.depth,
                                        tau=self.tau, delta=self.delta, influence=self.influence,
                                        time_limit=self.time_limit, max_memory_mb=self.max_memory_mb,
                                        return_info=True)
        info["queries"] = o.n_queries - q0
        self.info_ = info
        self.tree_ = tree
        self.classes_ = _CLASSES.copy()
        self.n_classes_ = 2
        self.n_features_in_ = o.n_features
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self
