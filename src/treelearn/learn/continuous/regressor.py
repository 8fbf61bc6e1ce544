"""Optimal and Top-k regression trees over every threshold of numeric columns.

:class:`OptimalTreeRegressor` minimises the weighted sum of squared errors of the leaves' means
(SSE, summed over the outputs) over all trees of depth at most ``max_depth`` whose numeric
splits ``x_j >= t`` may use every node-local midpoint ``t`` between adjacent distinct values of
``x_j`` at that node; categorical columns enter one-hot and a column with missing values is
searched twice (missing rows left, then right), as in the classifier's continuous solver
(:mod:`treelearn.learn.continuous.solver`, whose column expansion and tree conversion it uses).
:class:`TopKTreeRegressor` restricts every node of depth budget >= 2 to its ``k`` best splits by
their one-split SSE (paper 003's Top-k, ranked by the impurity decrease); ``k=1`` is the greedy
tree, ``k="all"`` the optimal tree.

The compiled search (``continuous/regression.h``, ``regression_search.h``) is a depth-first
branch and bound on the classifier's sorted-column data layer: at a node the leaf, the best
depth-1 tree (prefix sums along every sorted column), then per feature its thresholds in bisection
order, pruned by the monotone bound (the optimal SSE of a depth-k tree never decreases when rows
are added, so ``cost_k(L_a) + cost_k(R_b)`` bounds every threshold between two evaluated ones
``a < b``) and by the budget handed to the children (the smaller child first); nodes of depth
budget 2 use a specialised evaluation that finds both children's best depth-1 trees in one pass
over the columns (a feature skipped on a side whose least split SSE on a subset of that side, from
a neighbouring threshold, reaches what the side may cost); a child's budget is capped by the SSE
of the same child's tree at a neighbouring threshold on its rows; a node of depth budget <= 3 whose budget binds is closed when the
one-dimensional k-means bound (OSRT's: at most 2^depth leaves, so no less SSE than the best
partition of the node's sorted targets into that many runs) reaches it. Anytime: the greedy regression tree of the same depth
(:class:`~treelearn.GreedyTreeRegressor`) is the first incumbent, so a fit stopped by
``time_limit`` (or Ctrl-C: the best tree so far as the exception's ``partial_tree``) returns a
tree at least as good on the training data, with the k-means bound of the whole sample as its
lower bound. Before the search over every threshold, the optimal trees over about 16 (from depth
4 then 64) quantile thresholds per feature (every threshold at the nodes above the leaves) are found the
same way; the better one's SSE bounds the search, so a good tree comes early. ``n_jobs``
threads share the root's features, each against the best SSE any has found; the tree is the
one a single thread finds. On Dask input the gathered blocks are fitted. When every column is
0/1 the search of :mod:`~treelearn.learn.continuous.binary_regression` runs instead (one
thread; the same optimum; the greedy tree is grown only if it stops on its time limit, and
after Ctrl-C ``partial_tree`` is that search's best tree).

Which optimal tree (the tie rule): a candidate replaces the incumbent only when its SSE is lower
by more than the tie tolerance (``ERROR_TIE`` of the root's SSE): the leaf before any split, the
first best depth-1 tree (features in column order, thresholds ascending) before deeper trees,
then at every node the first best split met in the order features by depth-1 SSE, thresholds in
bisection order (the middle threshold first, then the middles of the two halves, depth first, the
lower half first).
"""
from __future__ import annotations

import dataclasses
import numbers
import time

import numpy as np

from treelearn._limits import DEFAULT_TIME_LIMIT, SPENT, VERBOSE, ProgressReporter, ResourceLimitError
from treelearn._validation import BOOLEAN, COLUMNS, INT32_MAX, Interval, Options, TreeLearnValueError
from treelearn.base import BaseTreeRegressor
from treelearn.learn.anytime import ERROR_TIE, incumbent_time_limit, n_threads, set_search_attributes
from treelearn.learn.continuous.binary_regression import binary_columns
from treelearn.learn.continuous.solver import expand_columns, raw_splits
from treelearn.learn.greedy.regressor import GreedyTreeRegressor, grow_regression, leaf_sums, set_exact_nodes
from treelearn.tree.build import node_local_midpoints, recount, route
from treelearn.tree.tree import Tree

__all__ = ["OptimalTreeRegressor", "TopKTreeRegressor", "regression_fit", "tree_sse"]


def tree_sse(tree: Tree, Xe, Y, w) -> float:
    """The weighted SSE of ``tree``'s leaf means on the training rows (summed over outputs)."""
    Y = np.asarray(Y, dtype=np.float64).reshape(Y.shape[0], -1)
    leaves = route(tree, Xe)
    nn = tree.node_count
    W = np.bincount(leaves, weights=w, minlength=nn)
    S = np.stack([np.bincount(leaves, weights=w * Y[:, k], minlength=nn) for k in range(Y.shape[1])], axis=1)
    Q = np.bincount(leaves, weights=w * (Y * Y).sum(axis=1), minlength=nn)
    keep = W > 0
    return float(max(0.0, np.sum(Q[keep] - (S[keep] ** 2).sum(axis=1) / W[keep])))


def _node_stats(tree: Tree, Xe, Y, w, shift):
    """``tree``'s node statistics from the training rows (``Y`` centred on ``shift``): the rows
    per node (the compiled router and counter), and the weights, means and impurities from exact
    sums of the rows' channels, as the greedy regressor's nodes (``greedy.regressor.set_exact_nodes``)."""
    K = Y.shape[1]
    stats = np.empty((Y.shape[0], 1 + 2 * K))
    stats[:, 0] = w
    stats[:, 1:1 + K] = w[:, None] * Y
    stats[:, 1 + K:] = w[:, None] * Y * Y
    set_exact_nodes(tree, *leaf_sums(tree, Xe, stats), "squared_error", np.asarray(shift, dtype=np.float64).reshape(K))
    _, cnt = recount(tree.children_left, tree.children_right, route(tree, Xe), np.zeros(Y.shape[0], dtype=np.int64),
                     None, 1)
    return cnt


def _to_tree(res, Xe, Y, w, shift, schema, columns) -> Tree:
    """The search's preorder tree as a regression Tree over the raw columns (thresholds at the
    node-local midpoints, missing directions recorded, node statistics of the training rows)."""
    left, right = res["left"], res["right"]
    feature, threshold, kind, mode = raw_splits(res, *columns)
    internal = feature >= 0
    miss_left = (mode == 1).astype(np.uint8)
    routed = Tree(children_left=left, children_right=right, feature=feature, threshold=threshold, kind=kind,
                  value=np.zeros((left.size, 1)), classes=np.arange(1), schema=schema, missing_go_to_left=miss_left,
                  validate=False)
    node_local_midpoints(routed, Xe)
    cnt = _node_stats(routed, Xe, Y, w, shift)
    fields = dict(children_left=left, children_right=right, feature=feature, threshold=routed.threshold, kind=kind,
                  value=routed.value, n_node_samples=cnt, impurity=routed.impurity, classes=None, schema=schema,
                  task="regression", weighted_n_node_samples=routed.weighted_n_node_samples)
    tree = Tree(**fields)
    if not (mode > 0).any():
        return tree  # no missing value in training: the Tree's default directions
    # splits of columns without missing values in training keep the default (the heavier child)
    miss = np.where(mode > 0, miss_left, tree.missing_go_to_left).astype(np.uint8)
    miss[~internal] = 0
    return Tree(**fields, missing_go_to_left=miss)


def regression_fit(Xe, y, w, schema, *, max_depth, min_samples_leaf=1, top_k=0, time_limit=None,
                   memory_limit_mb=1024.0, greedy_incumbent=True, n_threads=1, zero_one=None, ccp_alpha=0.0,
                   **switches):
    """Fit the optimal (``top_k`` 0) or Top-k regression tree. Returns ``(tree, info)``; ``info``
    has ``sse``, ``lower_bound`` (0 for Top-k: it proves nothing about the optimum), ``timed_out``,
    ``source`` ("search", "quantiles": the warm start's tree, or "greedy"), ``greedy_sse``, ``history`` and the search statistics.
    ``switches`` (ablation, same SSE): ``use_intervals``, ``use_d2``, ``use_fbounds`` (the depth-2
    evaluation's feature bounds), ``use_warm_children`` (neighbouring child trees cap a child's budget),
    ``use_ends`` (a feature's two end thresholds evaluated first: the tree may then differ where
    optima tie), ``warm_rounds`` (-1: 1 up to depth 3, else 2), ``warm_cells`` (0: no
    quantile warm start; the tree may then differ where optima tie); ``use_binary`` False: the
    every-threshold search on 0/1 data too (``binary_regression``; ``info["solver"]`` says which ran).
    ``zero_one``: whether every value of ``Xe`` is 0 or 1, when the caller knows (None: checked).
    ``ccp_alpha`` > 0: the objective is scikit-learn's cost complexity SSE / W + ccp_alpha * leaves
    (W the total weight), searched as SSE + ccp_alpha W per leaf; ``info["objective"]`` and
    ``info["lower_bound"]`` are then of SSE + ccp_alpha W leaves (``sse`` stays the tree's SSE)."""
    from treelearn.learn.continuous import _regression

    t0 = time.perf_counter()
    Y = np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)
    if Y.shape[1] > _regression.MAX_OUTPUTS:
        raise TreeLearnValueError(f"the optimal regression search sums at most {_regression.MAX_OUTPUTS} outputs, "
                                  f"got {Y.shape[1]}")
    w = np.ones(Y.shape[0]) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    shift = (w @ Y) / w.sum()
    Yc = np.ascontiguousarray(Y - shift)  # centred: sums of squares at the scale of the variance
    root_sse = float(np.sum(w[:, None] * Yc * Yc))
    eps = ERROR_TIE * max(root_sse, 1e-300)
    lam = float(ccp_alpha) * float(w.sum())  # (the penalty per leaf, in SSE units)
    n, d = Xe.shape
    cap = float(memory_limit_mb) * 2.0 ** 20
    binary = None if not switches.pop("use_binary", True) else binary_columns(
        Xe, schema, top_k=top_k, min_samples_leaf=min_samples_leaf, memory_bytes=cap, n_outputs=Y.shape[1],
        max_depth=int(max_depth), zero_one=zero_one) if lam == 0.0 else None  # (the 0/1 search has no penalty)
    need = 8.0 * n * d * (2 + max(0, int(max_depth) - 2)) + 8.0 * n * (Y.shape[1] + 8)
    if binary is None and need > cap:  # refused before the columns are copied and ranked
        raise _too_small(memory_limit_mb, need)

    def remaining():
        return None if time_limit is None else max(float(time_limit) - (time.perf_counter() - t0), SPENT)

    def grow_greedy(limit):
        params = dataclasses.replace(GreedyTreeRegressor(max_depth=int(max_depth), min_samples_leaf=min_samples_leaf)
                                     .grow_params(n), time_limit=limit)
        tree = grow_regression(Xe, Y if y.ndim > 1 else Y[:, 0], w, schema, params, "squared_error")
        return tree, objective(tree)

    def objective(tree):
        return tree_sse(tree, Xe, Y, w) + lam * tree.n_leaves

    # the 0/1 search finds its first trees at once: the greedy tree is grown only if it stops
    greedy, greedy_obj = grow_greedy(remaining()) if greedy_incumbent and binary is None else (None, None)
    late_greedy = greedy_incumbent and binary is not None
    if binary is None:
        X_fm, *columns = expand_columns(Xe, schema)
    else:
        X_fm, keep = binary
        columns = [keep, np.zeros(keep.size, np.int8), np.zeros(keep.size, np.int64), np.zeros(keep.size, np.int8)]
    nan_mode = columns[3]
    ub = 0.0 if greedy_obj is None else greedy_obj + eps  # ties with the greedy tree are searched too
    limit = 0.0 if time_limit is None else remaining()
    memory = cap - float(X_fm.nbytes + Yc.nbytes)
    start = time.perf_counter()
    try:
        if binary is not None:
            res = _regression.binary_regression_search(X_fm, Yc, w, int(max_depth), ub, eps, limit, memory)
        else:
            res = _regression.regression_search(X_fm, Yc, w, int(max_depth), int(min_samples_leaf), int(top_k), ub,
                                                eps, limit, memory, np.ascontiguousarray(nan_mode, dtype=np.int8)
                                                if nan_mode.any() else None, n_threads=max(1, int(n_threads)),
                                                leaf_penalty=lam, **switches)
    except KeyboardInterrupt as exc:
        part = getattr(exc, "partial_result", None)
        best = greedy  # (on 0/1 data none yet: growing it now would meet the same Ctrl-C)
        if part is not None and len(part["feature"]):
            tree = _to_tree(part, Xe, Yc, w, shift, schema, columns)
            if greedy is None or objective(tree) < greedy_obj:
                best = tree
        exc.partial_tree = best
        raise
    if res["memory_error"]:
        raise _too_small(memory_limit_mb, res["fixed_bytes"])
    if late_greedy and res["timed_out"]:  # (the anytime guarantee: never worse than the greedy tree)
        # whole below CLOCKED_GREEDY_WORK (a fraction of a second), else under what the clock leaves
        greedy, greedy_obj = grow_greedy(incumbent_time_limit(n * d * Y.shape[1], remaining()))
    tree = _to_tree(res, Xe, Yc, w, shift, schema, columns)
    obj, source = objective(tree), "quantiles" if res.get("warm_tree") else "search"
    if greedy is not None and obj > greedy_obj + eps:  # nothing as good found (stopped, or greedy optimal)
        tree, obj, source = greedy, greedy_obj, "greedy"
    history = [(start - t0 + s, c) for s, c in res["history"]]
    if greedy_obj is not None and not late_greedy:
        history.insert(0, (start - t0, greedy_obj))
    bound = 0.0 if top_k else min(float(res["lower_bound"]), obj)
    info = dict(res, sse=obj if lam == 0.0 else tree_sse(tree, Xe, Y, w), objective=obj, lower_bound=bound,
                source=source, greedy_sse=None if greedy is None else greedy_obj if lam == 0.0 else tree_sse(
                    greedy, Xe, Y, w),
                history=_improvements(history), fit_time=time.perf_counter() - t0,
                n_search_features=int(keep.size if binary is not None else X_fm.shape[0]),
                solver="continuous" if binary is None else "binary")
    return tree, info


def _improvements(history):
    """The strictly improving points of (seconds, SSE) in time order."""
    out = []
    for s, c in sorted(history):
        if not out or c < out[-1][1]:
            out.append((float(s), float(c)))
    return out


def _too_small(memory_limit_mb, needed: float) -> ResourceLimitError:
    return ResourceLimitError(
        f"memory_limit_mb={memory_limit_mb} is too small for the sorted columns of the optimal regression "
        f"search ({needed / 2 ** 20:.1f} MB needed)")


class TopKTreeRegressor(BaseTreeRegressor):
    """Top-k regression tree over every threshold: at every node of depth budget >= 2 only its
    ``k`` best splits (column and threshold) by one-split SSE are candidates, each with its
    subtrees chosen the same way, and the tree of least training SSE among them is returned
    (nodes of budget 1 take their best split). ``k=1`` is the greedy tree of depth
    ``max_depth``; ``k="all"`` is :class:`OptimalTreeRegressor`.

    Parameters
    ----------
    k : int >= 1 or "all", default 2
    max_depth : int, default 3
    min_samples_leaf : int >= 1, default 1
        The fewest training rows on either side of a split (rows, not weight, as scikit-learn).
    ccp_alpha : float >= 0, default 0.0
        scikit-learn's complexity parameter, in its units: the search minimises the cost
        complexity ``SSE / W + ccp_alpha * leaves`` (W the total sample weight; scikit-learn's
        R_alpha for ``squared_error``) over the trees of depth <= ``max_depth`` itself, where
        scikit-learn prunes one grown tree afterwards; so a split is kept only when it lowers the
        SSE by more than ``ccp_alpha * W``. ``objective_`` is ``SSE + ccp_alpha * W * leaves``
        (the SSE's units) and ``lower_bound_`` bounds it; 0/1 data then takes the every-threshold
        search too.
    time_limit : float > 0 or None, default 600
        Seconds for the whole fit; at the limit the best tree found (never worse on the training
        data than the greedy tree, ``greedy_incumbent``) with ``timed_out_`` True and a
        :class:`~treelearn.SearchLimitWarning`.
    memory_limit_mb : float > 0, default 1024
        The cap of the search's sorted columns and buffers; a problem that cannot fit is refused
        with :class:`~treelearn.ResourceLimitError` before anything is allocated.
    n_jobs : int or None, default None
        Threads sharing the root's features (scikit-learn's convention: None 1, -1 every core);
        the same tree on any number of threads.
    verbose : int, default 0
        Progress lines on stderr while the fit runs, and the incumbent history at the end.
    categorical : column indices or names of categorical columns (one-hot conditions ``x == v``).
    greedy_incumbent : bool, default True
        Start from the greedy tree of the same depth (the anytime guarantee).

    Attributes
    ----------
    tree_, n_outputs_, feature_importances_ : as every regressor
    train_sse_ : the weighted training SSE of the tree (summed over outputs; weights in the
        caller's units); ``training_error_`` is the same number
    lower_bound_ : a lower bound of the optimal training SSE (the optimal regressor; Top-k: None);
        with ``ccp_alpha``, of the optimal ``objective_``
    objective_ : what the search minimised: ``train_sse_ + ccp_alpha * W * n_leaves`` (W the
        total sample weight; ``train_sse_`` without ``ccp_alpha``)
    is_optimal_ : whether the search finished (optimal over the searched space: every threshold
        for ``k="all"``; the Top-k space otherwise)
    timed_out_, incumbent_source_ ("search", "quantiles" or "greedy"), greedy_error_ (the greedy
        tree's SSE; on 0/1 data, where the greedy tree is grown only when the search stops, None
        if it finished),
    n_nodes_searched_, incumbent_history_ ((seconds, SSE) of each better tree), fit_time_
    """

    _parameter_constraints = {
        "k": [Interval(numbers.Integral, 1, INT32_MAX), Options("all")],
        "max_depth": [Interval(numbers.Integral, 0, 64)],
        "min_samples_leaf": [Interval(numbers.Integral, 1, INT32_MAX)],
        "ccp_alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "memory_limit_mb": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_jobs": [Interval(numbers.Integral, 1, INT32_MAX), Interval(numbers.Integral, -INT32_MAX, -1), None],
        "verbose": VERBOSE,
        "categorical": [COLUMNS, None],
        "greedy_incumbent": [BOOLEAN],
    }

    def __init__(self, k=2, max_depth=3, min_samples_leaf=1, time_limit=DEFAULT_TIME_LIMIT, memory_limit_mb=1024,
                 n_jobs=None, verbose=0, categorical=None, greedy_incumbent=True, ccp_alpha=0.0):
        self.k = k
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.categorical = categorical
        self.greedy_incumbent = greedy_incumbent

    def _k_value(self):
        return self.k

    def _fit(self, sample, params) -> Tree:
        k = self._k_value()
        top_k = 0 if k == "all" else int(k)
        with ProgressReporter(type(self).__name__, self.verbose) as progress:
            progress.phase = "searching (optimal regression)" if top_k == 0 else f"searching (Top-{top_k} regression)"
            tree, info = regression_fit(sample.encoded, sample.y, sample.weights, sample.schema,
                                        max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                                        top_k=top_k, time_limit=self.time_limit, memory_limit_mb=self.memory_limit_mb,
                                        greedy_incumbent=self.greedy_incumbent, n_threads=n_threads(self.n_jobs),
                                        zero_one=sample.is_binary(), ccp_alpha=self.ccp_alpha)
            for sec, sse in info["history"] if self.verbose else ():
                progress.emit(f"incumbent SSE {sse:g} at {sec:.3f} s")
        self._search_info = info
        return tree

    def _set_fitted(self, y_ndim, tree: Tree, scale: float) -> None:
        super()._set_fitted(y_ndim, tree, scale)
        info = getattr(self, "_search_info", None)
        if info is None:  # a constant target: one leaf, optimal
            set_search_attributes(self, training_error=0.0, lower_bound=0.0, timed_out=False, is_optimal=True,
                                  incumbent_source="search", greedy_error=0.0, fit_time=0.0)
            self.train_sse_, self.incumbent_history_ = 0.0, []
            self.objective_ = self.ccp_alpha * float(self.tree_.weighted_n_node_samples[0])
            return
        del self._search_info
        self._solver = info["solver"]  # which search ran: "binary" (0/1 data) or "continuous"
        optimal = self._k_value() == "all"
        greedy = info["greedy_sse"]
        set_search_attributes(self, training_error=info["sse"] * scale,
                              lower_bound=info["lower_bound"] * scale if optimal else None,
                              timed_out=info["timed_out"], is_optimal=not info["timed_out"],
                              incumbent_source=info["source"], greedy_error=None if greedy is None else greedy * scale,
                              stats=info, fit_time=info["fit_time"])
        self.train_sse_ = self.training_error_
        self.objective_ = info["objective"] * scale
        self.incumbent_history_ = [(s, c * scale) for s, c in info["history"]]


class OptimalTreeRegressor(TopKTreeRegressor):
    """Optimal regression tree over every threshold: the least weighted training SSE (summed over
    outputs) over all trees of depth at most ``max_depth`` whose numeric splits use every
    node-local midpoint (categorical columns one-hot, missing values tried on both sides), by
    the compiled branch and bound of :mod:`treelearn.learn.continuous.regressor`. ``is_optimal_``
    is True when the search finished within ``time_limit``; ``lower_bound_`` bounds the optimal
    SSE from below (in the caller's weight units); a stopped fit returns its best tree, never
    worse on the training data than :class:`~treelearn.GreedyTreeRegressor` of the same depth.
    Parameters and attributes as :class:`TopKTreeRegressor` without ``k``."""

    _parameter_constraints = {k: v for k, v in TopKTreeRegressor._parameter_constraints.items() if k != "k"}

    def __init__(self, max_depth=3, min_samples_leaf=1, time_limit=DEFAULT_TIME_LIMIT, memory_limit_mb=1024,
                 n_jobs=None, verbose=0, categorical=None, greedy_incumbent=True, ccp_alpha=0.0):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.categorical = categorical
        self.greedy_incumbent = greedy_incumbent

    def _k_value(self):
        return "all"
