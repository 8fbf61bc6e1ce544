"""Greedy regression trees (CART's, scikit-learn's ``DecisionTreeRegressor``) on the greedy room's
one compiled grower.

Regression is a criterion and sufficient statistics, not a new engine: the grower's counts are
sums over rows, so each row brings the channels ``[w, w y_1..w y_K, w y_1^2..w y_K^2]`` (Poisson:
``w y log y`` in place of ``w y^2``) where a classification row brings its weight to its class;
the criteria (``core/criteria.h``: ``SquaredError``, ``Poisson``) read the
channels of a node or of a split's side. The absolute error is not a sum over rows: its rows
carry their own targets, which the grower ranks per node (a running weighted median over each
feature's sorted scan, ``ranked.h``). Everything else (exact and histogram modes, missing
values tried both ways, depth-first and best-first, threads, ``ccp_alpha``) is the classifier's
growth. The targets of the squared-error criteria are centred on their midrange first (the
second moments then have the scale of the spread, not of the mean's square: fewer rounding
residues); the centre is added back in the Tree's ``value``.

The nodes' weights, means and impurities (trees of up to ``EXACT_NODES_MAX`` nodes) are computed
from exact sums of the rows' channels (:mod:`treelearn._exact`: a fixed-point accumulator per
node, rounded once): they are then a function of the rows alone, not of the order in which they
were added, and a fit on Dask row shards gives the same bits as the fit in memory.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from treelearn._exact import exact_round, exact_sums, merge_up
from treelearn._validation import Options, TreeLearnValueError
from treelearn.base import BaseTreeRegressor
from treelearn.learn.anytime import n_threads
from treelearn.learn.greedy.estimator import GreedyTreeClassifier, GrowParams, grow_checked
from treelearn.tree.build import route
from treelearn.tree.tree import Tree

__all__ = ["GreedyTreeRegressor", "REGRESSION_CRITERIA", "regression_stats", "grow_regression", "node_values",
           "check_poisson_target", "centre", "exact_nodes", "leaf_sums", "set_exact_nodes"]


class RegressionCriterion(NamedTuple):
    """A regression criterion: its scikit-learn name and its code in the compiled grower."""

    name: str
    code: int


#: scikit-learn's regression criteria with a compiled policy (``core/criteria.h``)
REGRESSION_CRITERIA = {
    "squared_error": RegressionCriterion("squared_error", 10),
    # scikit-learn 1.9 maps it to squared_error (Friedman's improvement ranks splits alike)
    "friedman_mse": RegressionCriterion("friedman_mse", 10),
    "absolute_error": RegressionCriterion("absolute_error", 11),
    "poisson": RegressionCriterion("poisson", 12),
}


def check_poisson_target(ymin: float, column_sums) -> None:
    """scikit-learn's conditions on a Poisson target: no negative value, a positive sum per output."""
    if ymin < 0:
        raise TreeLearnValueError("Some value(s) of y are negative which is not allowed for Poisson regression.")
    if np.any(np.asarray(column_sums) <= 0):
        raise TreeLearnValueError("Sum of y is not positive which is necessary for Poisson regression.")


def regression_stats(y: np.ndarray, w: np.ndarray, criterion: str, shift=None) -> tuple[np.ndarray, np.ndarray]:
    """The rows' channels for the grower (n, 1 + 2K) and the shift added back to the means (K,).

    Squared error and Friedman's: ``[w, w (y - m), w (y - m)^2]`` with m the midrange of each
    output (:func:`centre`; or the ``shift`` given: a growth on row shards); Poisson: ``[w, w y, w y log y]`` (y >= 0 and a positive sum per output, as
    scikit-learn requires); absolute error: ``[w, y, w |y|]`` (the rows' own targets, which the
    grower ranks; the nodes' value channels are their weighted medians)."""
    y2 = y.reshape(y.shape[0], -1)
    k = y2.shape[1]
    stats = np.empty((y2.shape[0], 1 + 2 * k))
    stats[:, 0] = w
    if criterion == "poisson":
        if shift is None:  # (the whole target: checked here; a shard's rows: by the caller)
            check_poisson_target(float(y2.min()) if y2.size else 0.0, y2.sum(axis=0))
        shift = np.zeros(k)
        stats[:, 1:1 + k] = w[:, None] * y2
        with np.errstate(divide="ignore", invalid="ignore"):
            stats[:, 1 + k:] = np.where(y2 > 0, w[:, None] * y2 * np.log(np.where(y2 > 0, y2, 1.0)), 0.0)
        return stats, shift
    if criterion == "absolute_error":
        stats[:, 1:1 + k] = y2
        stats[:, 1 + k:] = w[:, None] * np.abs(y2)
        return stats, np.zeros(k)
    shift = centre(y2) if shift is None else np.asarray(shift, dtype=np.float64).reshape(k)
    yc = y2 - shift
    # w (y - m), then (w (y - m)) (y - m): written in place (no n-sized temporaries)
    np.multiply(w[:, None], yc, out=stats[:, 1:1 + k])
    np.multiply(stats[:, 1:1 + k], yc, out=stats[:, 1 + k:])
    return stats, shift


def centre(y2: np.ndarray) -> np.ndarray:
    """What the squared-error channels centre each output of ``y2`` (n, K) on: its midrange, a
    function of the rows' set alone (the fit on row shards knows the range exactly from its first
    pass, where a weighted mean would differ in its last bits), and as good a centre as the mean
    against the rounding of the second moments (|y - c| is at most half the range either way)."""
    return 0.5 * y2.min(axis=0) + 0.5 * y2.max(axis=0)


#: rows routed through a tree at a time (their float64 copy stays small)
ROUTE_BLOCK = 1 << 16
#: the largest tree whose nodes get exact sums (a few MB of digits); a larger one (grown without a
#: depth or leaf budget) keeps the grower's sums, equal to rounding
EXACT_NODES_MAX = 1 << 16


def exact_nodes(tree: Tree, criterion: str) -> bool:
    """Whether the nodes of ``tree`` take their values from exact sums (the one rule of the fit in
    memory and of the fit on row shards): a criterion of sums and at most EXACT_NODES_MAX nodes."""
    return criterion != "absolute_error" and 1 < tree.node_count <= EXACT_NODES_MAX


def leaf_sums(tree: Tree, X: np.ndarray, stats: np.ndarray, leaves=None):
    """``(acc, base)`` of :func:`treelearn._exact.exact_sums`: the exact sums of the rows'
    channels ``stats`` per leaf of ``tree`` that the rows of ``X`` reach (by blocks of rows), or
    that ``leaves`` gives (each row's leaf, known from the growth: the same, without routing)."""
    m = tree.node_count
    if leaves is None and X.shape[0] <= ROUTE_BLOCK:
        leaves = route(tree, X)
    elif leaves is None:
        leaves = np.concatenate([route(tree, X[i:i + ROUTE_BLOCK]) for i in range(0, X.shape[0], ROUTE_BLOCK)])
    return exact_sums(np.ascontiguousarray(stats, dtype=np.float64), np.ascontiguousarray(leaves, dtype=np.int64), m)


def set_exact_nodes(tree: Tree, acc: np.ndarray, base: np.ndarray, criterion: str, shift: np.ndarray) -> Tree:
    """The nodes' weights, values (means + ``shift``) and impurities (scikit-learn's units) of a
    squared-error or Poisson tree from the exact sums of its leaves' channels (``leaf_sums``, or
    their merge over row shards), set in place."""
    left = np.asarray(tree.children_left, dtype=np.int64)
    parent = np.full(left.size, -1, dtype=np.int64)
    internal = np.flatnonzero(left >= 0)
    parent[left[internal]] = internal
    parent[np.asarray(tree.children_right, dtype=np.int64)[internal]] = internal
    acc = np.ascontiguousarray(acc, dtype=np.int64)
    merge_up(acc, parent)
    c = exact_round(acc, np.ascontiguousarray(base, dtype=np.int64))
    k = shift.size
    W, S, Q = c[:, 0], c[:, 1:1 + k], c[:, 1 + k:]
    Wd = np.where(W > 0, W, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if criterion == "poisson":  # half deviance: Q - S log(S / W); a node whose sum is not positive: inf
            part = Q - S * np.log(np.where(S > 0, S, 1.0) / Wd[:, None])
            wimp = np.where((S <= np.finfo(float).eps).any(axis=1), np.inf, part.sum(axis=1) / k)
        else:
            wimp = (Q - S * S / Wd[:, None]).sum(axis=1) / k
        tree.impurity = np.where(W > 0, np.maximum(0.0, wimp / Wd), 0.0)
    tree.weighted_n_node_samples = W.copy()
    tree.value = S / Wd[:, None] + shift
    return tree


def grow_regression(X, y, w, schema, params: GrowParams, criterion: str) -> Tree:
    """A regression tree grown on the checked arguments (``params.criterion``: one of
    :data:`REGRESSION_CRITERIA`, named ``criterion``); its nodes' values from exact sums."""
    stats, shift = regression_stats(y, w, criterion)
    known = []  # each row's leaf, when the growth knows it (histogram mode)
    tree = grow_checked(X, None, 0, w, schema, params, stats=stats, nodes=node_values(criterion, shift),
                        row_leaves=known)
    if exact_nodes(tree, criterion):
        set_exact_nodes(tree, *leaf_sums(tree, X, stats, known[0] if known else None), criterion, shift)
    return tree


def node_values(criterion: str, shift: np.ndarray):
    """The step from a growth's node arrays (summed channels, or medians) to the regression Tree's
    (weights, means or medians) for the channels of :func:`regression_stats` (its ``shift``)."""
    k = shift.size

    def to_means(out: dict) -> dict:  # the grower's summed channels -> the nodes' weights and means
        W = out["value"][:, 0].copy()
        out["weighted_n_node_samples"] = W
        if criterion == "absolute_error":  # the grower's value channels are the nodes' medians
            out["value"] = out["value"][:, 1:1 + k].copy()
        else:
            out["value"] = out["value"][:, 1:1 + k] / np.where(W > 0, W, 1.0)[:, None] + shift
        return out

    return to_means


class GreedyTreeRegressor(BaseTreeRegressor):
    """A greedy regression tree, scikit-learn's ``DecisionTreeRegressor`` on treelearn's grower.

    Parameters
    ----------
    criterion : {"squared_error", "friedman_mse", "absolute_error", "poisson"}, default "squared_error"
        scikit-learn's criteria, with its meaning and units: the node impurity is the weighted
        mean squared error (``friedman_mse`` is the same criterion: Friedman's improvement ranks
        splits as the squared error does, and scikit-learn 1.9 maps the name to ``squared_error``),
        the weighted mean absolute deviation from the node's weighted median (a node predicts
        that median: the smallest target whose cumulative weight exceeds half the node's, or the
        mean of the two middle targets when the lower ones weigh exactly half), or the weighted
        half Poisson deviance (targets >= 0 with a positive sum; a split whose side has no
        positive target is not taken).
    max_depth : int or None
    max_leaves : int or None
        None: depth-first growth; an int: best-first growth to that many leaves (the split of
        largest impurity decrease first). ``max_leaf_nodes`` is scikit-learn's name for it.
    min_samples_leaf, min_samples_split, min_weight_fraction_leaf, min_impurity_decrease, ccp_alpha
        scikit-learn's (``min_impurity_decrease`` in its weighted formula; ``ccp_alpha``:
        minimal cost-complexity pruning by the weakest-link routine of the code base).
    max_thresholds : int or None
        None: every midpoint between a node's distinct values (exact, as scikit-learn); an int:
        at most that many quantile thresholds per column (histogram mode).
    categorical : column indices or names of categorical columns (conditions ``x == v``).
    random_state : None or a seed: the order of features among exactly tied splits (None:
        index order).
    n_jobs : threads over a large node's work, in both modes, the same tree for any number (None: 1,
        -1: every core): exact mode shares a node's features among them (the split search and the
        partition); histogram mode builds a node's histogram by blocks of features (each cell summed
        by one thread in the rows' order) and shares the split's row marking and partition by row
        chunks. ``absolute_error`` (targets ranked per node) uses threads in exact mode only.

    Missing values (NaN) follow scikit-learn's rule: at a split, rows missing the feature are
    tried on both sides and the better direction is kept (``tree_.missing_go_to_left``).
    """

    #: the classifier's growth parameters (those without classes), and the regression criteria
    _parameter_constraints = {
        "criterion": [Options(*REGRESSION_CRITERIA)],
        **{name: forms for name, forms in GreedyTreeClassifier._parameter_constraints.items()
           if name in ("max_depth", "max_leaves", "min_samples_leaf", "min_impurity_decrease", "max_thresholds",
                       "categorical", "random_state", "min_samples_split", "ccp_alpha", "n_jobs", "max_leaf_nodes",
                       "min_weight_fraction_leaf")},
    }

    def __init__(self, criterion="squared_error", max_depth=None, max_leaves=None, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_thresholds=None, categorical=None, random_state=None,
                 min_samples_split=2, ccp_alpha=0.0, n_jobs=None, max_leaf_nodes=None,
                 min_weight_fraction_leaf=0.0):
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_thresholds = max_thresholds
        self.categorical = categorical
        self.random_state = random_state
        self.min_samples_split = min_samples_split
        self.ccp_alpha = ccp_alpha
        self.n_jobs = n_jobs
        self.max_leaf_nodes = max_leaf_nodes
        self.min_weight_fraction_leaf = min_weight_fraction_leaf

    def _fit(self, sample, params) -> Tree:
        return grow_regression(sample.numeric, sample.y, sample.weights, sample.schema,
                               self.grow_params(sample.n_samples), self.criterion)

    def grow_params(self, n_samples: int) -> GrowParams:
        """The grower's parameters for a sample of ``n_samples`` rows (fractions resolved), from
        this estimator's (checked by ``fit``, or by an estimator that grows with them)."""
        msl = self.min_samples_leaf
        if not isinstance(msl, numbers.Integral):
            msl = max(1, int(np.ceil(msl * n_samples)))
        mss = self.min_samples_split
        if not isinstance(mss, numbers.Integral):
            mss = max(2, int(np.ceil(mss * n_samples)))
        mid = float(self.min_impurity_decrease)
        return GrowParams(criterion=REGRESSION_CRITERIA[self.criterion], max_depth=self.max_depth,
                          max_leaves=self._leaf_budget(), min_samples_leaf=int(msl), min_impurity_decrease=mid,
                          max_thresholds=self.max_thresholds, min_samples_split=int(mss),
                          ccp_alpha=float(self.ccp_alpha), random_state=self.random_state,
                          min_weight_fraction_leaf=float(self.min_weight_fraction_leaf),
                          n_jobs=n_threads(self.n_jobs))

    _dask_plugin = "treelearn.learn.greedy.sharded"

    def _fit_sharded(self, plugin, data, params):
        """Dask input: with ``max_thresholds`` (numeric columns, one output, a criterion of sums) the
        histograms of the rows' channels are summed from the row shards and the splits chosen here
        (``sharded.py``); other settings (``absolute_error``, several outputs, categorical
        columns, exact mode, ``min_weight_fraction_leaf``) fit the gathered blocks."""
        if self.min_weight_fraction_leaf > 0 or not plugin.supports_regression(
                data, self.criterion, max_thresholds=self.max_thresholds, categorical=self.categorical):
            return None
        g = plugin.DistributedGreedy(data.executor, data.blocks, criterion_code=REGRESSION_CRITERIA[self.criterion].code,
                                     max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                                     min_samples_split=self.min_samples_split,
                                     min_impurity_decrease=self.min_impurity_decrease,
                                     max_thresholds=self.max_thresholds, random_state=self.random_state,
                                     regression=self.criterion)
        g.prepare()
        if g.one_class:  # a constant target: the one leaf of the local fit
            return None
        shift = np.zeros(1) if g.shift is None else g.shift
        tree = g.grown_tree(self._leaf_budget(), np.zeros(0), data.schema(), float(self.ccp_alpha),
                            nodes=node_values(self.criterion, shift))
        if exact_nodes(tree, self.criterion):  # the local fit's values to the bit: exact sums from the blocks
            set_exact_nodes(tree, *g.exact_leaf_sums(tree, self.criterion, shift), self.criterion, shift)
        return 1, tree, g.scale

    #: scikit-learn's minimal cost-complexity pruning path (the classifier's, on this estimator)
    cost_complexity_pruning_path = GreedyTreeClassifier.cost_complexity_pruning_path
