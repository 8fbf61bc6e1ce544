"""Minimum-rank consistent decision trees: FIND and FINDMIN of Ehrenfeucht & Haussler (001).

The *rank* of a tree: a leaf has rank 0; a node whose subtrees have ranks r0 and r1 has rank
``max(r0, r1)`` if they differ and ``r0 + 1`` otherwise. The rank ``r(S)`` of a sample is the
least rank of a tree consistent with it. ``FIND(S, r)`` (001, "Procedure FIND") returns a tree of
rank at most r consistent with S, or "none" when r < r(S) (Lemma 2); ``FINDMIN(S)`` calls
FIND(S, 0), FIND(S, 1), ... and returns the first tree, of rank exactly r(S) (Theorem 1), in time
O(|S| (n+1)^(2 r(S))) (Lemma 3).

Variables are binary features: 0/1 or ±1 columns pass through unchanged (thresholds 0.5 and
0 in the Tree); any other data goes through :class:`treelearn.Binarizer` with its exact encoding
(every midpoint ``x_j >= t``, one-hot ``x_j == v`` for categorical columns), each binary feature
being one of the paper's variables. The search runs in compiled code (``_rank.pyx`` and
``learn/minrank/search.h``) over covers (sets of rows, held as sparse row bitsets) with
memoisation of (cover, r) results keyed by a 128-bit fingerprint of the cover: a success is
stored for its exact r (so the tree returned is the procedure's), a failure of FIND(S', r) for
every r' <= r (it proves r(S') > r, Lemma 2). The search runs on the distinct rows of the sample
(FIND's answer depends only on the set of points). A time limit and a memory cap stop it with
:class:`RankSearchLimitError`, which says which bound was hit and the best lower bound on r(S)
proven so far.

Multiclass labels use the natural extension: a tree is consistent when every leaf is pure, and
step 1 of FIND returns a leaf when all examples share one class.

The sample-size bounds of the paper are here too: :func:`rank_class_size_bound` (Lemma 1 ii),
:func:`rank_tree_node_bounds` (Lemma 1 i), :func:`eh_sample_size` (Theorem 2),
:func:`eh_sample_size_for_size` (Theorem 3) and :func:`rank_upper_bound_for_size` (Lemma 5).
"""
from __future__ import annotations

import math
import numbers
import time

import numpy as np
import pandas as pd

from treelearn._limits import DEFAULT_TIME_LIMIT, VERBOSE, FitClock, FitTimeout, LimitError, ProgressReporter
from treelearn._validation import (
    CLASS_WEIGHT,
    COLUMNS,
    INT32_MAX,
    Interval,
    TreeLearnValueError,
    as_2d_raw,
    check_float_param,
    check_int_param,
    check_target,
)
from treelearn.base import BaseTreeClassifier
from treelearn.criteria import gini_index
from treelearn.data.binarize import Binarizer, binarize_sample
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.schema import ColumnSchema
from treelearn.learn.minrank._rank import RankSearch
from treelearn.tree._tree import tree_eval
from treelearn.tree.build import binary_tree, recount
from treelearn.tree.tree import LEAF, Tree

__all__ = [
    "InconsistentSampleError",
    "RankSearchLimitError",
    "MinRankSearch",
    "MinRankTreeClassifier",
    "find",
    "find_min",
    "rank_class_size_bound",
    "rank_tree_node_bounds",
    "eh_sample_size",
    "eh_sample_size_for_size",
    "rank_upper_bound_for_size",
]

DEFAULT_MEMORY_LIMIT_MB = 2048.0


class InconsistentSampleError(TreeLearnValueError):
    """The sample has identical (binarized) rows with different labels: no tree is consistent.

    ``groups``: list of arrays of row indices, each a set of identical rows with more than one
    label.
    """

    def __init__(self, message, groups):
        super().__init__(message)
        self.groups = groups


class RankSearchLimitError(TreeLearnValueError, LimitError):
    """The search hit its time limit or memory cap.

    ``bound``: ``"time"`` or ``"memory"``; ``rank_lower_bound``: the best rank proven so far,
    i.e. the largest r for which FIND(S, r) was shown to fail, plus one (so r(S) >= it);
    ``stats``: search counters.
    """

    def __init__(self, message, bound, rank_lower_bound, stats=None):
        super().__init__(message)
        self.bound = bound
        self.rank_lower_bound = rank_lower_bound
        self.stats = stats or {}


# ---------------------------------------------------------------------------------- the search
def row_keys(B: np.ndarray) -> np.ndarray:
    """One sortable key per row of a 0/1 matrix (its packed bits): a uint64 for up to 64 columns
    (a fast numeric sort), a byte string above; the local fit and the Dask plug-in order the
    distinct rows by it."""
    keys = np.packbits(B, axis=1) if B.shape[1] else np.zeros((B.shape[0], 1), np.uint8)
    if keys.shape[1] <= 8:
        # C order before the view: B may come Fortran-ordered (a column selection), and so
        # would its packed bits and their padding
        padded = np.ascontiguousarray(np.pad(keys, ((0, 0), (0, 8 - keys.shape[1]))))
        return padded.view(np.uint64).ravel()
    return np.ascontiguousarray(keys).view(np.dtype((np.void, keys.shape[1]))).ravel()


def group_rows(keys: np.ndarray, check=None) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of ``np.unique(keys, return_index=True, return_inverse=True)``: the
    distinct keys in sorted order by the index of their first row, and each row's group. Numeric
    keys are grouped by hashing (pandas' factorize: O(n), where NumPy's unique sorts every row:
    5 s at 10^7 rows), ``check()`` called between the two passes."""
    if keys.dtype.kind != "u":
        _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        return first, inv.ravel()
    n = keys.size
    hi = int(keys.max()) if n else 0
    if hi <= 4 * n + 1024:  # few columns: keys below a small bound, grouped by counting
        k = keys.astype(np.intp)
        present = np.flatnonzero(np.bincount(k, minlength=hi + 1))
        lookup = np.empty(hi + 1, dtype=np.int64)
        lookup[present] = np.arange(present.size)
        inv = lookup[k]
        first = np.empty(present.size, dtype=np.int64)
        first[inv[::-1]] = np.arange(n - 1, -1, -1)  # (assigned in order: the last write, each group's first row)
        return first, inv
    inv, uniq = pd.factorize(keys, sort=True)
    if check is not None:
        check()
    firsts = pd.Series(inv).drop_duplicates()  # each group's first row, in row order
    first = np.empty(uniq.size, dtype=np.int64)
    first[firsts.to_numpy()] = firsts.index.to_numpy()
    return first, np.asarray(inv, dtype=np.int64)


def _unpack_rows(data: BinaryData, check=None) -> np.ndarray:
    """The (n_rows, n_features) uint8 0/1 matrix of a BinaryData (the search reads rows), made in
    blocks of rows (a cache-friendly transpose, ``check()`` called between blocks)."""
    n, d = data.n_rows, data.n_features
    out = np.empty((n, d), dtype=np.uint8)
    if d == 0:
        return out
    cols = np.ascontiguousarray(data.columns)
    words = max(1, (4 * 2**20) // (64 * d))  # about 4 MiB of bytes per block
    for w0 in range(0, data.n_words, words):
        if check is not None:
            check()
        w1 = min(data.n_words, w0 + words)
        r0, r1 = 64 * w0, min(n, 64 * w1)
        bits = np.unpackbits(np.ascontiguousarray(cols[:, w0:w1]).view(np.uint8), axis=1, count=r1 - r0,
                             bitorder="little")
        out[r0:r1] = bits.T
    return out


class MinRankSearch:
    """FIND / FINDMIN on one sample, sharing one memo of (cover, r) results.

    Parameters
    ----------
    X : array-like or DataFrame (n_samples, n_features)
        Binary data (0/1 or ±1) or any data (binarized with the exact :class:`Binarizer` encoding,
        :func:`treelearn.data.binarize.binarize_sample`). :meth:`from_binary` starts from an
        already binarized sample instead.
    y : array-like (n_samples,)
        Labels (any number of classes).
    time_limit : float or None
        Seconds for each public call (``find`` or ``find_min``); None: no limit.
    memory_limit_mb : float or None
        Cap on the memo's size in MiB (default 2048); None: no cap.
    memoize : bool
        Memoise (cover, r) results (True). False gives the plain recursive procedure (compiled).
    categorical : see :class:`treelearn.Binarizer`.

    Attributes
    ----------
    binarizer_ : the fitted Binarizer (its binary features are the paper's variables)
    n_variables_ : number of variables (binary features)
    classes_ : labels
    stats_ : search counters of the last call (calls, memo hits, memo entries, memory, seconds)
    """

    def __init__(self, X, y, *, time_limit=None, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, memoize=True,
                 categorical=None):
        schema = ColumnSchema.infer(X, categorical)
        raw = as_2d_raw(X)
        classes, codes = check_target(y, raw.shape[0])
        binarizer, data = binarize_sample(raw, schema, codes, len(classes), signed=True)
        # a matrix binarized through thresholds: its values place each tree's node-local midpoints
        Xe = schema.encode(raw) if binarizer.binary_values_ is None else None
        self._setup(binarizer, data, classes, time_limit, memory_limit_mb, memoize, Xe=Xe)

    @classmethod
    def from_binary(cls, binarizer: Binarizer, data: BinaryData, classes, *, time_limit=None,
                    memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, memoize=True, clock=None,
                    allowance_bytes=0.0, Xe=None) -> "MinRankSearch":
        """The search on a binarized sample: ``binarizer`` (fitted; its features are the
        variables) and ``data`` (its BinaryData, class codes into ``classes``). ``clock``: a
        :class:`treelearn._limits.FitClock` whose start also starts the first call's time limit
        (the estimator's whole-fit clock); ``allowance_bytes``: memory the caller's input already
        accounts for (the unpacked rows up to it are not charged to the memory cap); ``Xe``: the
        encoded training rows, whose values place the numeric thresholds of the trees at their
        node-local midpoints (:mod:`treelearn.tree.build`; None: the binarizer's thresholds, or on
        0/1 and ±1 data the midpoint of the two values)."""
        self = cls.__new__(cls)
        self._setup(binarizer, data, np.asarray(classes), time_limit, memory_limit_mb, memoize, clock,
                    allowance_bytes, Xe)
        return self

    def _setup(self, binarizer, data, classes, time_limit, memory_limit_mb, memoize, clock=None, allowance_bytes=0.0,
               Xe=None):
        self.time_limit = check_float_param("time_limit", time_limit, low=0, low_open=True, allow_none=True)
        self.memory_limit_mb = check_float_param("memory_limit_mb", memory_limit_mb, low=0, low_open=True,
                                                 allow_none=True)
        self._clock = clock
        self._Xe = Xe
        # the search reads rows as bytes (n x d) plus their packed keys: refused before they are
        # made when that is over the cap (an n-row single float column has ~n thresholds: n^2 bytes)
        need = float(data.n_rows) * max(data.n_features, 1) * (1.0 + 1.0 / 8.0) * 2.0
        if self.memory_limit_mb is not None and need - allowance_bytes > self.memory_limit_mb * 2.0**20:
            raise RankSearchLimitError(
                f"minimum-rank search refused: its {data.n_rows} rows x {data.n_features} variables need about "
                f"{need / 2**20:.0f} MiB, over the memory cap of {self.memory_limit_mb:g} MiB (raise "
                "memory_limit_mb, or binarize with fewer thresholds)", "memory", 0)
        self._check_clock(0)
        self.schema_ = binarizer.schema_
        self.classes_ = classes
        self.y_ = np.asarray(data.y, dtype=np.int64)
        self.binarizer_ = binarizer
        self.B_ = _unpack_rows(data, lambda: self._check_clock(0))
        self.n_variables_ = self.B_.shape[1]
        # identical rows: one key per row (its packed bits), grouped once for the consistency
        # check and the dedup. FIND's answer depends only on the set of distinct points (a
        # consistent sample has one label per point), so the search runs on the distinct rows.
        keys = row_keys(self.B_)
        self._check_clock(0)
        first, inv = group_rows(keys, lambda: self._check_clock(0))
        self._check_clock(0)
        self._check_consistent(first, inv)
        uniq = self.B_[first]
        self._search = RankSearch(np.ascontiguousarray(uniq, dtype=np.uint8),
                                  np.ascontiguousarray(self.y_[first]), len(classes), memoize=bool(memoize))
        self.n_distinct_ = uniq.shape[0]
        self.fail_upto_ = -1  # largest r for which FIND(S, r) failed
        self.stats_ = {}

    def _check_clock(self, r):
        if self._clock is not None and self.time_limit is not None and self._clock.elapsed() >= self.time_limit:
            raise RankSearchLimitError(
                f"minimum-rank search stopped: the time limit of {self.time_limit:g} s was hit while preparing "
                f"the sample (before FIND(S, {r}))", "time", 0)

    def _start(self):
        """(t0, deadline) of a public call: the fit's clock for the first call of an estimator."""
        clock, self._clock = getattr(self, "_clock", None), None
        t0 = time.perf_counter() if clock is None else clock.t0
        return t0, (None if self.time_limit is None else t0 + self.time_limit)

    def _check_consistent(self, first, inv):
        y = self.y_
        bad_rows = np.nonzero(y != y[first][inv])[0]
        if bad_rows.size == 0:
            return
        bad = np.unique(inv[bad_rows])
        groups = [np.nonzero(inv == g)[0] for g in bad]
        shown = []
        for g in groups[:5]:
            rows = ", ".join(f"{i} ({self.classes_[y[i]]!s})" for i in g[:8])
            shown.append("[" + rows + (", ..." if g.size > 8 else "") + "]")
        more = f" and {len(groups) - 5} more groups" if len(groups) > 5 else ""
        raise InconsistentSampleError(
            f"inconsistent sample: {len(groups)} group(s) of identical rows (after binarization) carry "
            f"different labels, so no decision tree is consistent with it; rows (label): {'; '.join(shown)}{more}",
            groups,
        )

    def _run(self, r, deadline):
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        mem = None if self.memory_limit_mb is None else self.memory_limit_mb * 2.0**20
        res = self._search.find(int(r), time_limit=remaining, memory_limit=mem)
        if res == -2:
            bound = self._search.abort_reason
            lb = self.fail_upto_ + 1
            if np.unique(self.y_).size > 1:  # FIND(S, 0) fails on a sample with two classes
                lb = max(lb, 1)
            limit = (f"time limit of {self.time_limit:g} s" if bound == "time"
                     else f"memory cap of {self.memory_limit_mb:g} MiB")
            raise RankSearchLimitError(
                f"minimum-rank search stopped: the {limit} was hit while running FIND(S, {r}); "
                f"best rank proven so far: r(S) >= {lb}", bound, lb, self._search.stats)
        if res == -1:
            self.fail_upto_ = max(self.fail_upto_, int(r))
            return None
        return res

    def find(self, r) -> Tree | None:
        """FIND(S, r): a consistent tree of rank <= r, or None when r < r(S)."""
        r = check_int_param("r", r, low=0)
        t0, deadline = self._start()
        root = self._run(r, deadline) if r > self.fail_upto_ else None
        self._record(t0)
        self.root_ = root
        return None if root is None else self._to_tree(root)

    def find_min(self, max_rank=None) -> Tree | None:
        """FINDMIN(S): FIND(S, 0), FIND(S, 1), ... up to ``max_rank`` (None: no bound); the first
        tree found (rank r(S)), or None when r(S) > max_rank."""
        max_rank = check_int_param("max_rank", max_rank, low=0, allow_none=True)
        t0, deadline = self._start()
        r = 0
        # r(S) <= number of variables (a complete reduced tree over them); no infinite loop
        limit = self.n_variables_ if max_rank is None else max_rank
        root = None
        while r <= limit:
            root = self._run(r, deadline)
            if root is not None:
                break
            r += 1
        self._record(t0)
        self.root_ = root
        return None if root is None else self._to_tree(root)

    @property
    def rank_lower_bound_(self) -> int:
        return self.fail_upto_ + 1

    def _record(self, t0):
        self.stats_ = dict(self._search.stats, seconds=time.perf_counter() - t0)

    def tree(self, sample_weight=None) -> Tree | None:
        """The tree of the last ``find``/``find_min`` (None if it found none), its node counts
        weighted by ``sample_weight`` (one weight per row of the sample; None: ones)."""
        return None if self.root_ is None else self._to_tree(self.root_, sample_weight)

    def _to_tree(self, root, sample_weight=None) -> Tree:
        """Expand the result DAG from ``root`` into a Tree on raw columns (preorder)."""
        nodes = self._search.nodes()
        bz = self.binarizer_
        C = len(self.classes_)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        left, right, variables = [], [], []
        stack = [(int(root), -1, 0)]  # (dag node, parent, side)
        while stack:
            d, parent, side = stack.pop()
            me = len(left)
            if parent >= 0:
                (right if side else left)[parent] = me
            var = int(nodes[d, 0])
            variables.append(var)
            left.append(LEAF)
            right.append(LEAF)
            if var < 0:
                continue
            stack.append((int(nodes[d, 2]), me, 1))
            stack.append((int(nodes[d, 1]), me, 0))
        # node counts: the leaf of every training row, routed on its binary variables by the
        # compiled evaluator of trees over binary points
        value, nsamp = recount(left, right, _route_rows(self.B_, variables, left, right), self.y_, w, C)
        return binary_tree(bz, np.asarray(variables, dtype=np.int64), Xe=self._Xe, children_left=left,
                           children_right=right, value=value, n_node_samples=nsamp, impurity=gini_index(value),
                           classes=self.classes_, schema=self.schema_)


def _route_rows(B: np.ndarray, var: list, left: list, right: list) -> np.ndarray:
    """Leaf (preorder node index) of every row of the 0/1 matrix ``B`` in a tree whose node i
    tests variable ``var[i]`` (-1 at a leaf; a row with the variable 1 goes right): the compiled
    evaluator of trees over binary points, with each leaf's value its own index."""
    n_nodes = len(var)
    feature = np.maximum(np.asarray(var, dtype=np.int64), 0)
    leaves = tree_eval(np.ascontiguousarray(B).view(np.int8), np.asarray(left, dtype=np.int64),
                       np.asarray(right, dtype=np.int64), feature, np.full(n_nodes, 0.5),
                       np.arange(n_nodes, dtype=np.float64))
    return leaves.astype(np.int64)


def find(X, y, r, *, time_limit=None, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, categorical=None) -> Tree | None:
    """FIND(S, r) of 001: a tree of rank at most ``r`` consistent with (X, y), or None.

    None exactly when r < r(S) (Lemma 2). Raises :class:`InconsistentSampleError` when identical
    rows carry different labels and :class:`RankSearchLimitError` when a bound is hit.
    """
    return MinRankSearch(X, y, time_limit=time_limit, memory_limit_mb=memory_limit_mb,
                         categorical=categorical).find(r)


def find_min(X, y, *, max_rank=None, time_limit=None, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB,
             categorical=None) -> Tree | None:
    """FINDMIN(S) of 001 (Theorem 1): the consistent tree of minimum rank r(S).

    Returns None only when ``max_rank`` is given and r(S) > max_rank. ``tree.rank == r(S)``.
    """
    return MinRankSearch(X, y, time_limit=time_limit, memory_limit_mb=memory_limit_mb,
                         categorical=categorical).find_min(max_rank)


# ---------------------------------------------------------------------------------- estimator
class MinRankTreeClassifier(BaseTreeClassifier):
    """The consistent decision tree of minimum rank (Ehrenfeucht & Haussler's FINDMIN, 001).

    Parameters
    ----------
    max_rank : int or None
        Search ranks 0..max_rank only; if the sample's rank is larger, ``fit`` raises a
        TreeLearnValueError (FIND(S, max_rank) is "none"). None: no bound.
    time_limit : float or None, default=600
        Seconds for the whole ``fit`` (binarization, search and tree rebuild); when hit, ``fit``
        raises :class:`RankSearchLimitError` (``bound="time"``, with the best rank lower bound
        proven). None: no limit.
    memory_limit_mb : float or None
        Cap on the memo and the unpacked sample beyond the input's own size (MiB); when hit (or
        when the sample cannot fit at all), ``fit`` raises :class:`RankSearchLimitError`.
    verbose : int, default=0
        > 0: progress lines to stderr at most every 0.5 s: elapsed, phase, and while FIND runs
        its live counters (calls so far as ``nodes``, memo entries as ``cache``) and the rank
        lower bound proven so far.
    categorical : columns to treat as categorical, besides those inferred (see ColumnSchema).
    class_weight : None, "balanced" or dict {class: weight}
        Multiplies ``sample_weight`` as in scikit-learn; weights only change the node counts of
        the consistent tree (a zero weight drops the row from the sample).

    Attributes
    ----------
    tree_ : Tree (``tree_.rank`` is the rank found, r(S))
    rank_ : int, r(S)
    binarizer_ : the Binarizer whose features are the variables searched
    search_stats_ : counters of the search (calls, memo hits and entries, memory, seconds)
    """

    _parameter_constraints = {
        "max_rank": [Interval(numbers.Integral, 0, INT32_MAX), None],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "memory_limit_mb": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "categorical": [COLUMNS, None],
        "class_weight": CLASS_WEIGHT,
        "verbose": VERBOSE,
    }

    def __init__(self, max_rank=None, time_limit=DEFAULT_TIME_LIMIT, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB,
                 categorical=None, class_weight=None, verbose=0):
        self.max_rank = max_rank
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.categorical = categorical
        self.class_weight = class_weight
        self.verbose = verbose

    def _fit(self, sample, params):
        clock = FitClock(self.time_limit)
        cap = None if self.memory_limit_mb is None else self.memory_limit_mb * 2.0**20
        allowance = float(sample.raw.nbytes)
        with ProgressReporter(type(self).__name__, self.verbose) as progress:
            progress.phase = "binarizing"
            try:
                binarizer, data = sample.binarize(signed=True, clock=clock,
                                                  max_bytes=None if cap is None else cap + allowance,
                                                  copies=18)  # the rows as bytes (8x), twice, and keys
            except FitTimeout:
                raise RankSearchLimitError(
                    f"minimum-rank search stopped: the time limit of {self.time_limit:g} s was hit while binarizing "
                    "the sample", "time", 0) from None
            except MemoryError as exc:  # ResourceLimitError: the packed sample alone is over the cap
                raise RankSearchLimitError(str(exc), "memory", 0) from None
            progress.phase = "searching"
            search = MinRankSearch.from_binary(binarizer, data, np.arange(sample.n_classes),
                                               time_limit=self.time_limit, memory_limit_mb=self.memory_limit_mb,
                                               clock=clock, allowance_bytes=allowance,
                                               Xe=None if binarizer.binary_values_ is not None else sample.encoded)
            live = progress.live()  # FIND calls and memo entries, written by the search while it runs
            if live is not None:
                search._search.set_progress(live.array)
                progress.stats = lambda: {**live.stats(), "rank_lower_bound": search.rank_lower_bound_}
            try:
                root_tree = search.find_min(self.max_rank)
            finally:
                search._search.set_progress(None)
        self._search_result(search, root_tree)
        return root_tree if sample.unit_weights else search.tree(sample.weights)  # counts with the weights

    def _search_result(self, search, root_tree) -> None:
        """The one step after FINDMIN, for the local and the Dask fit: the search's attributes, and
        a clear error when no tree of rank <= ``max_rank`` exists."""
        self.binarizer_ = search.binarizer_
        self.search_stats_ = search.stats_
        if root_tree is None:
            raise TreeLearnValueError(
                f"no decision tree of rank <= max_rank={self.max_rank} is consistent with the training sample "
                f"(FIND(S, {self.max_rank}) returned none, so r(S) > {self.max_rank}); raise max_rank or use None")

    _dask_plugin = "treelearn.learn.minrank.sharded"

    def _fit_sharded(self, plugin, data, params):
        """Dask input on 0/1 or ±1 data: FINDMIN on the blocks' distinct points (``sharded.py``),
        the node counts from their multiplicities; anything else is gathered."""
        clock = FitClock(self.time_limit)
        if not plugin.supports(data, class_weight=self.class_weight, categorical=self.categorical):
            return None
        pts = plugin.distinct_points(data)
        if pts is None:
            return None
        classes = pts["classes"]
        search = MinRankSearch.from_binary(pts["binz"], BinaryData(pts["B"], pts["y"], classes.size),
                                           np.arange(classes.size), time_limit=self.time_limit,
                                           memory_limit_mb=self.memory_limit_mb, clock=clock)
        tree = search.find_min(self.max_rank)
        self._search_result(search, tree)
        plugin.node_counts(tree, pts)
        return classes, tree, pts["scale"]

    def _after_fit(self):
        self.rank_ = self.tree_.rank

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


# ---------------------------------------------------------------------------------- bounds
def _check_n_r(n, r, *, need_n_ge_r=True):
    n = check_int_param("n", n, low=1)
    r = check_int_param("r", r, low=1)
    if need_n_ge_r and n < r:
        raise TreeLearnValueError(f"the bound needs n >= r >= 1, got n={n}, r={r}")
    return n, r


def rank_class_size_bound(n, r) -> float:
    """Natural log of the bound on |F_n^r|, the number of Boolean functions on n variables
    computed by trees of rank at most r (001, Lemma 1 (ii)):

    * r = 0: |F_n^0| = 2 (the constants);
    * n <= r: |F_n^r| = 2^(2^n) (every function);
    * n > r >= 1: |F_n^r| <= (8n)^((en/r)^r).

    Returned as ``ln`` of the value (the value itself overflows quickly): ``ln 2``,
    ``2^n ln 2`` or ``(en/r)^r ln(8n)``.
    """
    n = check_int_param("n", n, low=1)
    r = check_int_param("r", r, low=0)
    if r == 0:
        return math.log(2.0)
    if n <= r:
        return (2.0**n) * math.log(2.0)
    return (math.e * n / r) ** r * math.log(8.0 * n)


def rank_tree_node_bounds(n, r) -> tuple[int, int, float]:
    """Bounds on the number k of nodes of a reduced tree of rank r over n variables
    (001, Lemma 1 (i), for n >= r >= 1):

    ``2^(r+1) - 1 <= k <= 2 * sum_{i=0..r} C(n, i) - 1 < 2 (en/r)^r``.

    Returns ``(lower, upper, upper_simple)``: the three sides of the chain. The middle one is
    tight: 2 L(n, r) - 1 where L(n, r) = sum_{i<=r} C(n, i) is the most leaves such a tree has.
    """
    n, r = _check_n_r(n, r)
    lower = 2 ** (r + 1) - 1
    upper = 2 * sum(math.comb(n, i) for i in range(r + 1)) - 1
    return lower, upper, 2.0 * (math.e * n / r) ** r


def eh_sample_size(n, r, eps, delta) -> int:
    """Sample size of 001, Theorem 2: with at least

    ``m = (1/eps) * ((en/r)^r ln(8n) + ln(1/delta))``

    random examples of a target in F_n^r (any distribution), with probability at least
    1 - delta FIND(S, r) and FINDMIN(S) return a hypothesis of error at most eps. Needs
    n >= r >= 1 and 0 < eps, delta < 1. Returns ``ceil(m)``.
    """
    n, r = _check_n_r(n, r)
    eps = check_float_param("eps", eps, low=0, high=1, low_open=True, high_open=True)
    delta = check_float_param("delta", delta, low=0, high=1, low_open=True, high_open=True)
    # in logs: (en/r)^r and the division by a tiny eps overflow floats long before m stops mattering
    a = r * math.log(math.e * n / r) + math.log(math.log(8.0 * n))  # log of the first term
    b = math.log(math.log(1.0 / delta))  # log of the second
    log_m = max(a, b) + math.log1p(math.exp(-abs(a - b))) - math.log(eps)
    if log_m > 700.0:
        raise TreeLearnValueError(
            f"the sample size of 001 Theorem 2 for n={n}, r={r}, eps={eps:g} is about e^{log_m:.0f}, beyond any sample")
    return int(math.ceil(((math.e * n / r) ** r * math.log(8.0 * n) + math.log(1.0 / delta)) / eps))


def rank_upper_bound_for_size(s) -> int:
    """001, Lemma 5: a tree with s nodes has rank at most ``floor(log2 s)`` (the smallest tree of
    rank r has 2^(r+1) - 1 nodes, so rank <= log2(s + 1) - 1 <= floor(log2 s)); hence
    F_n^(s) is contained in F_n^floor(log2 s)."""
    s = check_int_param("s", s, low=1)
    return s.bit_length() - 1


def eh_sample_size_for_size(n, s, eps, delta) -> int:
    """Sample size of 001, Theorem 3: for targets computed by trees with at most s nodes, with
    r = floor(log2 s) (Lemma 5) and n >= r >= 1,

    ``m = (1/eps) * ((en/r)^r ln(8n) + ln(1/delta))``

    examples make FINDMIN's hypothesis eps-accurate with probability at least 1 - delta.
    (The notes print ``log(8n)``; it is Theorem 2's ``ln(8n)`` with r = floor(log s).)
    """
    r = rank_upper_bound_for_size(s)
    if r < 1:
        raise TreeLearnValueError(f"Theorem 3 needs floor(log2 s) >= 1, i.e. s >= 2, got s={s}")
    n = check_int_param("n", n, low=1)
    if n < r:
        raise TreeLearnValueError(f"Theorem 3 needs n >= floor(log2 s) = {r}, got n={n}")
    return eh_sample_size(n, r, eps, delta)
