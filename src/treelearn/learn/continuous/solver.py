"""Optimal trees over every threshold of numeric columns.

:class:`~treelearn.OptimalTreeClassifier` with ``solver="continuous"`` (or ``solver="auto"``
with all thresholds: ``max_binary_features=None`` and ``max_thresholds=None``) minimises the
same (weighted) training misclassifications as the binary search, over all trees of depth at
most ``max_depth`` whose numeric splits ``x_j >= t`` may use *every* node-local midpoint ``t``
between adjacent distinct values of ``x_j`` at that node; categorical columns enter one-hot
(``x_j == v``), as in the binary search. Instead of one binary feature per threshold, the
compiled search (``continuous/search.h``) keeps every column sorted and scans thresholds in
their order (ConTree's idea: Briţa, van der Linden, Demirović, optimal classification trees for
continuous feature data by dynamic programming with branch and bound):

* counts updated incrementally along each sorted column; a specialised depth-2 step computes,
  for one root threshold, the optimal depth-1 subtrees of both sides in one pass over the columns;
* intervals of thresholds skipped from the bounds of their evaluated neighbours (the left
  child's optimal error never decreases as rows move left, the right child's never increases,
  and both change by at most the weight that moves);
* a (rows, depth) cache with lower bounds, branch and bound with the remaining budget.

**Which optimal tree (the tie rule).** Many trees often share the optimal error; the returned one
is a function of the data alone, not of the order in which threads, Dask tasks, bounds or the root
hint met them. At every node of depth budget ``h``: the leaf, if no tree of depth ``h`` has a
smaller error; else the node's best depth-1 tree, if no deeper tree has a smaller error (the first
strict improvement over the leaf with the features in column order, thresholds ascending; a
depth-1 subtree below a split takes the features in its parent's order); else, among the root
splits whose subtrees reach the smallest error, the first in a fixed order — features by their
position in the node's order (smallest depth-1 error first, ties by column), then the feature's
thresholds in a fixed bisection order (the middle threshold first, then those nearest the
quarters, the eighths, ...: ``continuous/bounds.h``) — with each child the same rule's subtree.
This is the order in which one thread's search meets the splits it does not prune (it keeps its
open threshold intervals in a heap by that order), so the first tree of the smallest error it
meets is the rule's tree: a split replaces the incumbent only when strictly better, and a node
whose incumbent reaches the node's lower bound (0, the bound its parent's intervals give it, the
cache's) is closed at once, with nothing left to confirm. Where the order is left — root features
dealt to threads or Dask tasks or stepped in turn by the root's lanes, the root hint's split
searched first — a split that comes before the incumbent is searched for ties too. Errors are
compared with a tolerance of 1e-9 of the total weight: exact for unit and integer weights; with
fractional weights, trees closer than that may be taken in either order. ``n_jobs`` and the ablation switches give the same tree.

Anytime: the greedy tree of the same depth and criterion
(:class:`~treelearn.GreedyTreeClassifier`) is the first incumbent (on data of fewer than
``GREEDY_FIRST_CELLS`` rows x columns, where the search takes milliseconds, and at depth 2 of fewer
than ``GREEDY_FIRST_CELLS_DEPTH2``, it is grown only if the search times out), so a fit stopped by ``time_limit`` returns a tree at least as accurate on
the training data, with ``lower_bound_``. From depth ``LOOKAHEAD_MIN_DEPTH`` on, where the exact
search rarely finishes within minutes on large data but in milliseconds on small data, the exact
search first runs alone for ``PROBE_SHARE`` of the time limit (at most ``PROBE_MAX`` seconds, of
CPU time per thread: a loaded machine does not cut it short): a problem it solves is done, with no incumbent grown. Otherwise the greedy tree and a Top-k search
(paper 003's idea on numeric columns, ``continuous/lookahead.h``) give the incumbents: at every node
of depth budget >= 3 it tries only the k columns with the best impurity split (the greedy
criterion; a callable criterion ranks by entropy), each at that threshold, and solves nodes of
budget <= 2 exactly; rounds k = 1, 2, 4, ... up to every column, then one round with every column
for each other criterion (they rank columns differently), run within ``LOOKAHEAD_SHARE`` of the
time limit (without a time limit, while k^(depth - 2) <= ``LOOKAHEAD_NODES``). The exact search
then looks only for trees at least as good as the best of them (ties included, so a finished search
returns the tie rule's tree), starting with the Top-k tree's root split (its subtrees then solved
exactly; the order changes, the tree does not), and a search stopped early returns the best of its
own tree, the probe's, the Top-k tree and the greedy tree (``source``: "search", "top-k" or
"greedy"). ``info["history"]`` (``incumbent_history_`` on the estimator) records every better tree
with the time it was found: the searches record their root's incumbents, the Top-k search its
rounds. Measured numbers are in ``docs/guide/topk.rst`` and ``benchmarks/bench_continuous.py``.
"""
from __future__ import annotations

import contextlib
import contextvars
import time

import numpy as np

from treelearn._limits import SPENT, FitClock, FitTimeout, ResourceLimitError
from treelearn._scan import float_flags
from treelearn.learn.anytime import Incumbent, error_tie, incumbent_bound, incumbent_time_limit
from treelearn.tree.build import node_local_midpoints, recount, route
from treelearn.tree.tree import Tree, training_errors

__all__ = ["expand_columns", "count_binary_features", "continuous_fit", "search_backend", "raw_splits"]

# the compiled search, or a replacement with its arguments and result (the Dask fit farms the
# root's features out to tasks: this room's sharded.py); see search_backend
_backend: contextvars.ContextVar = contextvars.ContextVar("treelearn_continuous_search", default=None)


@contextlib.contextmanager
def search_backend(search):
    """Inside the ``with`` block, :func:`continuous_fit` runs its search with ``search`` (the
    arguments and result of ``_continuous.continuous_search``) instead of the compiled search in
    this process; everything around it (columns, greedy incumbent, the returned Tree) stays local."""
    token = _backend.set(search)
    try:
        yield
    finally:
        _backend.reset(token)


#: rows per block of the feature-major copy (a block's transpose stays in cache: 3x faster than
#: NumPy's strided copy of the whole transposed matrix)
_TRANSPOSE_ROWS = 8192


def _feature_major(Xe: np.ndarray, check=None) -> np.ndarray:
    """``Xe.T`` as a C-ordered float64 matrix, copied by blocks of rows (``check()`` before each)."""
    n, d = Xe.shape
    out = np.empty((d, n), dtype=np.float64)
    for i in range(0, n, _TRANSPOSE_ROWS):
        if check is not None:
            check()
        out[:, i:i + _TRANSPOSE_ROWS] = Xe[i:i + _TRANSPOSE_ROWS].T
    return out


def expand_columns(Xe, schema, check=None):
    """Feature-major float64 matrix of the searched columns and their meaning: every non-constant
    numeric column as is; each categorical column one-hot (``x_j == v`` as a 0/1 column, a single
    column for a two-category column, none for a constant one). A column with missing values
    (NaN) is searched twice, its missing rows sorted before every value (``nan_mode`` 1: they go
    left) and after (2: they go right); when its values are constant, only the second (the split
    "missing or not").

    Returns ``(X_fm, raw_feature, kind, code, nan_mode)`` (kind 0 numeric, 1 categorical with
    category code; nan_mode int8, 0 for a column without missing values). ``check()``: called
    between blocks of the work (a fit's clock: it raises to stop)."""
    n, d = Xe.shape
    Xe = np.asarray(Xe, dtype=np.float64)
    # the schema knows whether training had missing values (a pass over X otherwise)
    known = schema is not None and schema.missing is not None and not any(schema.missing)
    if (schema is None or not any(schema.is_categorical(j) for j in range(d))) and n \
            and (known or not float_flags(Xe)[0].any()):
        # all numeric, nothing missing: one feature-major copy by blocks (a per-column loop costs
        # more than a small search), the constant columns dropped from it
        X_fm = _feature_major(Xe, check)
        keep = np.flatnonzero(X_fm.min(axis=1) < X_fm.max(axis=1))
        k = keep.size
        if k < d:
            X_fm = np.ascontiguousarray(X_fm[keep])
        return X_fm, keep.astype(np.int64), np.zeros(k, np.int8), np.zeros(k, np.int64), np.zeros(k, np.int8)
    cols, raw, kind, code, modes = [], [], [], [], []

    def add(col, j, k, c):
        nan = np.isnan(col)
        present = col[~nan]
        varies = present.size > 0 and present.min() < present.max()
        if not nan.any():
            if varies:
                cols.append(col), raw.append(j), kind.append(k), code.append(c), modes.append(0)
            return
        if present.size == 0:
            return
        for mode in ((1, 2) if varies else (2,)):
            cols.append(col), raw.append(j), kind.append(k), code.append(c), modes.append(mode)

    for j in range(d):
        x = Xe[:, j]
        if schema is None or not schema.is_categorical(j):
            if n:
                add(x, j, 0, 0)
            continue
        nan = np.isnan(x)
        present = np.unique(x[~nan])
        present = present[present >= 0]
        if present.size == 0 or (present.size == 1 and not nan.any()):
            continue
        values = present[1:] if present.size == 2 else present
        for v in values:
            col = (x == v).astype(np.float64)
            col[nan] = np.nan
            add(col, j, 1, int(v))
    X_fm = np.ascontiguousarray(np.vstack(cols)) if cols else np.zeros((0, n))
    return (X_fm, np.asarray(raw, np.int64), np.asarray(kind, np.int8), np.asarray(code, np.int64),
            np.asarray(modes, np.int8))


def count_binary_features(Xe, schema) -> int:
    """How many binary features every threshold gives (a numeric column with u distinct values:
    u - 1; a categorical column: its one-hot columns, as :func:`expand_columns`). Top-k with k at
    least this is the optimal search, so it may use the continuous solver."""
    n, d = Xe.shape
    total = 0
    for j in range(d):
        present = np.unique(Xe[:, j])
        present = present[~np.isnan(present)]
        if schema is not None and schema.is_categorical(j):
            present = present[present >= 0]
            total += 0 if present.size <= 1 else (1 if present.size == 2 else int(present.size))
        else:
            total += max(0, int(present.size) - 1)
    return total


def raw_splits(res, raw, kind, code, nan_mode):
    """A search's splits over searched columns (``res``: preorder ``feature``, -1 at leaves, and
    ``threshold``) as splits over the raw columns: ``(feature, threshold, kind, nan_mode)`` per
    node (leaves: -2, -2.0, -1, 0). A split "missing or not" of a one-hot column (a threshold next
    to the missing rank) becomes the numeric split ``x >= inf`` (missing right) or ``x >= 0``
    (every category code right, missing left)."""
    f = res["feature"]
    internal = f >= 0
    fi = np.where(internal, f, 0)
    feature = np.where(internal, raw[fi] if raw.size else 0, -2)
    tkind = np.where(internal, kind[fi] if kind.size else 0, -1).astype(np.int8)
    mode = np.where(internal, nan_mode[fi] if nan_mode.size else 0, 0)
    thr = res["threshold"]
    threshold = np.where(internal, np.where(tkind == 1, code[fi] if code.size else 0, thr), -2.0)
    miss_only = internal & (tkind == 1) & (thr != 0.5)
    tkind[miss_only] = 0
    threshold[miss_only] = np.where(mode[miss_only] == 2, np.inf, 0.0)
    return feature, threshold, tkind, mode


def _to_tree(res, Xe, y, w, n_classes, schema, raw, kind, code, nan_mode) -> Tree:
    """The search's preorder tree over searched columns as a Tree over the raw columns. A split of
    a column with missing values records their direction (its nan_mode); on a one-hot column, the
    split "missing or not" (a threshold next to the missing rank) becomes the numeric split
    ``x >= inf`` (missing right) or ``x >= 0`` (every category code right, missing left). The node
    counts are the training rows' (routed by the compiled router), and each numeric threshold
    the node-local midpoint of :mod:`treelearn.tree.build` (the search's own splits the rows the
    same way)."""
    left, right = res["left"], res["right"]
    feature, threshold, tkind, mode = raw_splits(res, raw, kind, code, nan_mode)
    internal = feature >= 0
    miss_left = (mode == 1).astype(np.uint8)
    routed = Tree(children_left=left, children_right=right, feature=feature, threshold=threshold, kind=tkind,
                  value=np.zeros((left.size, n_classes)), classes=np.arange(n_classes), schema=schema,
                  missing_go_to_left=miss_left, validate=False)
    value, nsamp = recount(left, right, route(routed, Xe), y, w, n_classes)
    node_local_midpoints(routed, Xe)
    fields = dict(children_left=left, children_right=right, feature=feature, threshold=routed.threshold,
                  kind=tkind, value=value, n_node_samples=nsamp, classes=np.arange(n_classes), schema=schema)
    if not (mode > 0).any():
        return Tree(**fields)  # no missing value in training: the Tree's default directions
    tree = Tree(**fields)
    # splits of columns without missing values in training keep the default (the heavier child)
    miss_left = np.where(mode > 0, miss_left, tree.missing_go_to_left).astype(np.uint8)
    miss_left[~internal] = 0
    return Tree(**fields, missing_go_to_left=miss_left)


def root_leaf(y, w, n_classes, schema) -> Tree:
    """The root alone (the greedy room's :func:`~treelearn.learn.greedy.estimator.root_leaf`)."""
    from treelearn.learn.greedy.estimator import root_leaf as leaf

    return leaf(y, w, n_classes, schema)


def _grow_greedy(Xe, y, n_classes, w, schema, criterion, max_depth, time_limit=None, max_bytes=None) -> Tree:
    """The greedy tree of the same depth and criterion (the first incumbent), grown within
    ``time_limit`` seconds (None: no limit): the nodes not split by then are leaves; its class
    histograms within ``max_bytes`` (the fit's memory cap)."""
    from treelearn.learn.greedy.estimator import grow_greedy

    return grow_greedy(Xe, y, n_classes, w, schema, criterion=criterion, max_depth=max_depth, time_limit=time_limit,
                       max_bytes=max_bytes)


# below this many (rows x searched columns) the greedy tree is grown only if the search times out:
# a search this small finishes in milliseconds, and the greedy tree would be most of the fit's time;
# at depth 2 up to GREEDY_FIRST_CELLS_DEPTH2, where the search takes about as long as the greedy
# tree and gains nothing from its bound (wilt, 4,339 x 5: 6 ms alone, 10.6 ms after the greedy
# tree's 4.5 ms; bidding 11 vs 16 ms; room, 8,103 x 16: 52 vs 57 ms)
GREEDY_FIRST_CELLS = 20_000
GREEDY_FIRST_CELLS_DEPTH2 = 250_000
# the Top-k incumbent (module doc): from this depth on, within this share of the time limit;
# without a time limit, rounds while k^(depth-2) <= LOOKAHEAD_NODES
LOOKAHEAD_MIN_DEPTH = 4
LOOKAHEAD_SHARE = 0.1
LOOKAHEAD_NODES = 64
# the probe (module doc): from LOOKAHEAD_MIN_DEPTH on, the exact search alone runs first for this
# share of the time limit, at most PROBE_MAX seconds (PROBE_MAX without a time limit; seconds of
# CPU time per thread, so that a loaded machine gives it the same work): what it
# solves (iris, wine, bank, sonar at depth 4) needs neither incumbent, whose rounds would cost more
# (sonar: 0.08 s alone, 5 s of Top-k rounds after a probe of 0.1 s stopped on a loaded machine); a
# problem it does not solve loses at most PROBE_MAX (1 s cost breast cancer at depth 4 a fifth)
PROBE_SHARE = 0.01
PROBE_MAX = 0.2


def _lookahead(X_fm, y, n_classes, w, max_depth, criterion, time_limit, memory_bytes, nan_mode, progress, n_jobs):
    """The Top-k incumbent (module doc): the search's raw result dict, or None when the sorted
    columns do not fit ``memory_bytes`` (the search then says so)."""
    from treelearn.criteria import get_criterion
    from treelearn.learn.continuous import _continuous

    code = get_criterion(criterion).code
    if time_limit is not None:
        budget, k_max = max(LOOKAHEAD_SHARE * float(time_limit), 1e-3), 0
    else:
        budget, k_max = 0.0, max(1, int(LOOKAHEAD_NODES ** (1.0 / (max_depth - 2)) + 1e-9))
    res = _continuous.continuous_lookahead(X_fm, y, int(n_classes), w, int(max_depth), code if code >= 0 else 0,
                                           budget, memory_bytes, k_max=k_max, n_threads=n_jobs, nan_mode=nan_mode,
                                           progress=progress)
    return None if res["memory_error"] else res


class _History:
    """The fit's incumbent over time: (seconds since the fit started, error, lower bound), one point
    per strictly better tree (greedy, probe, Top-k rounds, the search's root), the last one the
    returned tree's with the proven bound (0 before: the search proves its bound at the end)."""

    def __init__(self, t0, eps):
        self.t0, self.eps, self.points = t0, eps, []

    def add(self, seconds, error):
        if not self.points or error < self.points[-1][1] - self.eps:
            self.points.append((float(seconds), float(error), 0.0))

    def add_run(self, start, res):
        """A compiled run's own history (seconds since it started at ``start``)."""
        for sec, err in res.get("history", ()):
            self.add(start - self.t0 + sec, err)

    def close(self, error, bound):
        """The returned tree's point, with the proven bound: a tree found earlier keeps the time it
        was found at (the anytime curve), and the bound is stamped at the close in a point of its own."""
        now = time.perf_counter() - self.t0
        n = len(self.points)
        self.add(now, error)
        if len(self.points) > n:
            self.points[-1] = (now, float(error), float(bound))
        else:
            self.points.append((now, float(error), float(bound)))
        return list(self.points)


def continuous_fit(Xe, y, n_classes, sample_weight, schema, *, max_depth, criterion="entropy", time_limit=None,
                   memory_limit_mb=1024, incumbent="auto", n_jobs=1, topk_incumbent=True, probe=True, **switches):
    """Fit the optimal tree over every threshold. Returns ``(tree, info)``; ``info`` has
    ``timed_out``, ``lower_bound``, ``error``, ``greedy_error``, ``source`` ("search", "top-k" or
    "greedy"), ``history`` (the incumbent over time, :class:`_History`) and the search statistics.
    ``n_jobs``: threads over the root's features (the same tree: the tie rule of the module doc).
    ``incumbent``: True grows the greedy tree first and searches only for trees at least as good;
    "auto" does so from :data:`GREEDY_FIRST_CELLS` cells on (depth 2: :data:`GREEDY_FIRST_CELLS_DEPTH2`), and on smaller data grows it only when
    the search times out (either way a timed-out fit is never worse than the greedy tree); False
    never. ``topk_incumbent`` False (ablation of the anytime answer) skips the Top-k incumbent,
    ``probe`` False (ablation) the probe. ``switches`` (ablation, same result): the search's
    switches (``_continuous.SWITCHES``: ``use_cache``, ``use_intervals``, ``use_skip``,
    ``use_d2``, ``start_best``, ``root_lanes``, ``large_first``, ``use_caps``, ``use_warm``,
    ``use_simd``, ``ordered_close``, ``end_bounds``)."""
    from treelearn.learn.continuous import _continuous

    t0 = time.perf_counter()
    y = np.ascontiguousarray(y, dtype=np.int64)
    # (unit weights are made only once the search goes ahead)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    weighted = w is not None and not np.all(w == 1.0)
    if time_limit is not None and float(time_limit) <= SPENT:  # the fit's clock is spent: the root alone
        return _out_of_time(root_leaf(y, w, n_classes, schema), t0)
    numeric = sum(1 for j in range(Xe.shape[1]) if schema is None or not schema.is_categorical(j))
    # the cap holds the search's own copies too: the feature-major matrix, the labels and weights
    held = 8.0 * Xe.shape[0] * (numeric + 2)
    least = sorted_columns_bytes(Xe.shape[0], numeric, int(max_depth), n_classes, weighted) + held
    if least > float(memory_limit_mb) * 2.0**20:  # refused before the columns are copied and sorted
        raise _too_small(memory_limit_mb, least)
    try:  # the feature-major copy under the fit's clock
        X_fm, raw, kind, code, nan_mode = expand_columns(Xe, schema, None if time_limit is None else
                                                         FitClock(float(time_limit), t0).check)
    except FitTimeout:
        return _out_of_time(root_leaf(y, w, n_classes, schema), t0)
    if w is None:
        w = np.ones(y.shape[0])
    W = float(w.sum())

    def remaining():  # what the fit has left of its time limit (None: no limit)
        return None if time_limit is None else max(float(time_limit) - (time.perf_counter() - t0), SPENT)

    # the greedy incumbent: under the fit's clock on large data (anytime.incumbent_time_limit)
    greedy = Incumbent(None, lambda: _grow_greedy(Xe, y, n_classes, w if weighted else None, schema, criterion,
                                                  int(max_depth), incumbent_time_limit(Xe.size * n_classes, remaining()),
                                                  float(memory_limit_mb) * 2.0**20))
    ub = 0.0
    # the search keeps trees of error below ub - tie: trees no worse than an incumbent, ties included
    tie = error_tie(W)
    history = _History(t0, tie)
    probe_nodes = 0
    nan_arg = nan_mode if nan_mode.any() else None
    # what the search and the Top-k incumbent may allocate: the cap less the copies held for them
    memory_bytes = float(memory_limit_mb) * 1024.0 * 1024.0 - float(X_fm.nbytes + y.nbytes + w.nbytes)
    columns = (raw, kind, code, nan_mode)
    tree_args = (Xe, y, w, n_classes, schema, *columns)  # a search's result to a Tree (_to_tree)
    backend = _backend.get()
    search = backend or _continuous.continuous_search
    deep = incumbent is not False and topk_incumbent and max_depth >= LOOKAHEAD_MIN_DEPTH and X_fm.shape[0] > 0
    # the probe (module doc): done when it finishes; not on Dask (the tasks' set-up is most of it)
    if deep and probe and incumbent == "auto" and backend is None:
        limit = PROBE_MAX if time_limit is None else min(PROBE_MAX, PROBE_SHARE * remaining())
        start = time.perf_counter()
        # CPU seconds per thread (a loaded machine does not cut the probe short), within the fit's limit
        res = _search(search, (X_fm, y, n_classes, w if weighted else None, max_depth, 0.0,
                               0.0 if time_limit is None else remaining(), memory_bytes),
                      memory_limit_mb, greedy, None, tree_args, n_threads=int(n_jobs or 1), nan_mode=nan_arg,
                      cpu_limit=limit * max(1, int(n_jobs or 1)), **switches)
        if not res["timed_out"]:
            history.add_run(start, res)
            return _result(res, None, greedy, X_fm, tree_args, t0, history, incumbent)
        probe_nodes = int(res["nodes"])  # (its tree is dropped: the incumbents and the search do better)
    cells = GREEDY_FIRST_CELLS_DEPTH2 if max_depth <= 2 else GREEDY_FIRST_CELLS
    first = incumbent is True or (incumbent == "auto" and X_fm.size >= cells)
    if first:
        # (the search's tree has node-local midpoint thresholds, the greedy tree its own)
        ub = incumbent_bound(greedy.error, W) + tie
        history.add(time.perf_counter() - t0, greedy.error)
    la = None
    out_of_time = time_limit is not None and remaining() <= SPENT  # the incumbents spent the limit
    if deep and not out_of_time:
        start = time.perf_counter()
        try:
            la = _lookahead(X_fm, y, n_classes, w if weighted else None, max_depth, criterion,
                            remaining(), memory_bytes, nan_arg,
                            switches.get("progress"), int(n_jobs or 1))
        except KeyboardInterrupt as exc:
            _attach_partial(exc, [getattr(exc, "partial_result", None)], greedy, tree_args)
            raise
        if la is not None:  # (ub 0: none yet)
            history.add_run(start, la)
            la_ub = incumbent_bound(float(la["cost"]), W) + tie
            ub = la_ub if ub == 0.0 else min(ub, la_ub)
    limit = 0.0
    if time_limit is not None:  # the incumbents' time counts
        limit = max(float(time_limit) - (time.perf_counter() - t0), SPENT)
        if limit <= SPENT and incumbent is not False:  # no time left for the search: the best incumbent
            best = greedy.tree() if la is None or greedy.error <= float(la["cost"]) else _to_tree(
                la, Xe, y, w, n_classes, schema, *columns)
            return _out_of_time(best, t0, n_search_features=int(X_fm.shape[0]))
    if la is not None and backend is None and la["feature"].size and la["feature"][0] >= 0 and la["cost"] > 0:
        # the anytime order: the Top-k tree's root split first, its subtrees solved exactly (a
        # zero-error Top-k tree is optimal: the search in its own order meets the rule's tree at once)
        switches = dict(switches, root_hint_feature=int(la["feature"][0]),
                        root_hint_threshold=float(la["threshold"][0]))
    start = time.perf_counter()
    res = _search(search, (X_fm, y, n_classes, w if weighted else None, max_depth, ub, limit, memory_bytes),
                  memory_limit_mb, greedy, la, tree_args, n_threads=int(n_jobs or 1), nan_mode=nan_arg, **switches)
    history.add_run(start, res)
    tree, info = _result(res, la, greedy, X_fm, tree_args, t0, history, incumbent)
    info["probe_nodes"] = probe_nodes
    return tree, info


def _search(search, args, memory_limit_mb, greedy, la, tree_args, **kwargs):
    """One exact search (``args``: the search's positional arguments); Ctrl-C attaches the best tree
    so far, a cap too small for the columns is an error."""
    X_fm, y, n_classes, w, max_depth, ub, limit, memory_bytes = args
    try:
        res = search(X_fm, y, int(n_classes), w, int(max_depth), float(ub), float(limit), memory_bytes, **kwargs)
    except KeyboardInterrupt as exc:
        _attach_partial(exc, [getattr(exc, "partial_result", None), la], greedy, tree_args)
        raise
    if res["memory_error"]:
        raise _too_small(memory_limit_mb, res["fixed_bytes"])
    return res


def _result(res, la, greedy, X_fm, tree_args, t0, history, incumbent):
    """``(tree, info)`` of the fit: the search's tree, or the Top-k or greedy incumbent when the
    search (stopped early) found nothing as good."""
    _, y, w, n_classes = tree_args[:4]
    W = float(w.sum())
    tree = _to_tree(res, *tree_args)
    err = training_errors(tree.children_left, tree.value)
    source = "search"
    # a search that stopped early (or found nothing below the bound) may be beaten by an incumbent
    if la is not None and err > incumbent_bound(float(la["cost"]), W):
        tree = _to_tree(la, *tree_args)
        err, source = training_errors(tree.children_left, tree.value), "top-k"
    if (res["timed_out"] and incumbent is not False) or greedy.grown:
        if err > incumbent_bound(greedy.error, W):
            tree, err, source = greedy.tree(), greedy.error, "greedy"  # nothing as good found (time limit)
    info = dict(res)
    # after a stop, the search's own bound may be 0 (root features left unsearched): the sample's
    # floor (rows equal on every searched column with different labels) is a bound too
    bound = float(res["lower_bound"])
    if res["timed_out"] and X_fm.size <= SAMPLE_FLOOR_CELLS:  # past the limit: only where it is quick
        bound = max(bound, sample_floor(X_fm, y, w, n_classes))
    info.update(error=err, greedy_error=greedy.error if greedy.grown else None, source=source,
                lower_bound=min(bound, err),
                n_search_features=int(X_fm.shape[0]), fit_time=time.perf_counter() - t0,
                topk_error=None if la is None else float(la["cost"]), topk_k=None if la is None else int(la["k"]),
                topk_nodes=0 if la is None else int(la["nodes"]))
    info["history"] = history.close(err, info["lower_bound"])
    return tree, info


def report_search(progress, info: dict, verbose) -> list:
    """The end of a continuous fit on its ProgressReporter: the final counters (every node the live
    lines counted: the probe's, the Top-k incumbent's and the search's) and, with ``verbose``, each
    entry of the incumbent history. Returns the history, (seconds, error, lower bound) tuples."""
    progress.stats = {"nodes": int(info["nodes"]) + int(info.get("topk_nodes") or 0)
                      + int(info.get("probe_nodes") or 0),
                      "cache_hits": int(info["cache_hits"]),
                      "error": float(info["error"]), "lower_bound": float(info["lower_bound"])}
    history = list(info.get("history") or [])
    for sec, err, bound in history if verbose else ():
        progress.emit(f"incumbent {err:g} at {sec:.3f} s" + (f" (lower bound {bound:g})" if bound else ""))
    return history


def sorted_columns_bytes(n: int, n_columns: int, max_depth: int, n_classes: int, weighted: bool = False) -> float:
    """The least the continuous search holds before any cache (``fixed_bytes`` of search.h: the
    ranked columns and one worker's buffers) for ``n`` rows and ``n_columns`` searched columns: a
    lower bound, so that a cap it exceeds is refused before the columns are copied and sorted. The
    compiled search counts the rest once it knows it (the columns' distinct values, up to 8 bytes a
    row, after ranking; the one-hot and missing-value columns) and stops there with the same error."""
    levels = max(0, max_depth - 2)
    ranks = 4.0 * n_columns * n if max_depth >= 3 else 0.0  # the warm starts' ranks by row
    # the vector depth-2 kernel's arrays (depth2_simd.h: two classes, unit weights)
    simd = 6.0 * n_columns * min(n, 1 << 15) if n_classes == 2 and not weighted else 0.0
    values = 24.0 * n_columns  # at least one distinct value per column
    return 8.0 * n_columns * n * (1 + levels) + 16.0 * n + 64.0 * n_classes + 17.0 * n + ranks + simd + values


def _too_small(memory_limit_mb, needed: float) -> ResourceLimitError:
    return ResourceLimitError(
        f"memory_limit_mb={memory_limit_mb} is too small for the sorted columns of the continuous search "
        f"({needed / 2 ** 20:.1f} MB needed before any cache)")


def _out_of_time(tree: Tree, t0: float, n_search_features: int = 0):
    """``(tree, info)`` of a fit whose clock ran out before its search started: an incumbent (the
    greedy tree as far as it grew: the root alone when even that had no time)."""
    err = training_errors(tree.children_left, tree.value)
    stats = dict.fromkeys(("nodes", "cache_hits", "cache_entries", "evaluations", "d2_evaluations", "peak_bytes",
                           "fixed_bytes", "threads_used"), 0)
    return tree, dict(stats, timed_out=True, memory_error=False, cost=err, lower_bound=0.0, error=err,
                      greedy_error=err, source="greedy", n_search_features=n_search_features,
                      fit_time=time.perf_counter() - t0, topk_error=None, topk_k=None, topk_nodes=0,
                      history=[(time.perf_counter() - t0, err, 0.0)])


#: the most (rows x searched columns) on which a timed-out fit computes :func:`sample_floor` (a
#: sort of the rows: seconds on millions of rows, after the time limit has passed)
SAMPLE_FLOOR_CELLS = 1_000_000


def sample_floor(X_fm, y, w, n_classes) -> float:
    """A lower bound on the training error of every tree over the searched columns: rows equal on
    every column (NaN equal to NaN) must share a leaf, so all but one class of each such group
    of rows is misclassified (the weight of the group minus that of its heaviest class)."""
    n = int(y.shape[0])
    if n == 0:
        return 0.0
    rows = np.ascontiguousarray(np.nan_to_num(np.asarray(X_fm, dtype=np.float64).T, nan=np.inf))
    _, group = np.unique(rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))), return_inverse=True)
    counts = np.zeros((int(group.max()) + 1, int(n_classes)))
    np.add.at(counts, (group.ravel(), y), w)
    return float(np.sum(counts.sum(axis=1) - counts.max(axis=1)))


def _attach_partial(exc, results, greedy, tree_args) -> None:
    """Ctrl-C: the best tree found so far (the search's, the Top-k incumbent's or the greedy
    tree, when grown) as ``exc.partial_tree`` on the raw columns, as a time limit returns it."""
    best, best_err = None, np.inf
    for res in results:
        if res is not None and len(res.get("feature", ())) > 0:
            tree = _to_tree(res, *tree_args)
            err = training_errors(tree.children_left, tree.value)
            if err < best_err:
                best, best_err = tree, err
    if greedy.grown and greedy.error < best_err:
        best = greedy.tree()
    exc.partial_tree = best
