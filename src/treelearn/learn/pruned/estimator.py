"""The pruned room: a greedy tree pruned by a bound or by cross-validated cost-complexity (002 §6).

:class:`PrunedTreeClassifier` grows the greedy tree (:func:`treelearn.learn.greedy.grow_greedy`,
best-first until pure or ``max_leaves``) and prunes it with one of the Tree -> Tree routines
of :mod:`treelearn.prune.pruners` (Shawe-Taylor bound pruning, CART or M-CART cost-complexity with
α chosen by K-fold CV). Its Dask plug-in (``sharded.py``) grows the tree and the folds' trees on
row shards.
"""
from __future__ import annotations

import numbers
import time

import numpy as np

from treelearn._limits import DEFAULT_TIME_LIMIT, FitClock, warn_limit
from treelearn._validation import (
    BOOLEAN,
    CLASS_WEIGHT,
    COLUMNS,
    INT32_MAX,
    INT64_MAX,
    RANDOM_STATE,
    Check,
    Interval,
    Options,
    TreeLearnValueError,
)
from treelearn.base import CRITERION, BaseTreeClassifier
from treelearn.prune.bounds import DEFAULT_R
from treelearn.prune.pruners import (
    cost_complexity_pruning_path,
    prune_cost_complexity,
    prune_with_bound,
    select_alpha_cv,
)
from treelearn.tree.tree import Tree

__all__ = ["PrunedTreeClassifier"]


def check_cv(cv) -> None:
    """``cv`` beyond an integer: a CV splitter or an iterable of (train, test) splits."""
    if isinstance(cv, numbers.Integral) and not isinstance(cv, (bool, np.bool_)):
        raise TreeLearnValueError(f"cv must be >= 2 (the number of folds), got {cv}")
    if isinstance(cv, (str, bytes, bool, np.bool_)) or not (hasattr(cv, "split") or hasattr(cv, "__iter__")):
        raise TreeLearnValueError(
            f"cv must be an integer >= 2, a CV splitter or an iterable of (train, test) splits, got {cv!r}")


def cv_for_rows(cv, rows, n_rows):
    """The CV splits in the numbering of the rows the learner sees: the base class dropped the
    rows of weight zero (``rows`` are the kept ones), so explicit splits are renumbered."""
    if isinstance(cv, numbers.Integral) or rows is None:
        return cv
    keep = np.zeros(n_rows, dtype=bool)
    keep[rows] = True
    new_index = np.cumsum(keep) - 1
    folds = cv.split(np.zeros((n_rows, 1)), None) if hasattr(cv, "split") else cv
    return [(new_index[np.asarray(tr)[keep[np.asarray(tr)]]], new_index[np.asarray(te)[keep[np.asarray(te)]]])
            for tr, te in folds]


class PrunedTreeClassifier(BaseTreeClassifier):
    """Greedy tree (grown until pure or ``max_leaves``) then pruned (002 §6).

    Parameters
    ----------
    pruning : {"bound", "ccp", "mcart", None}, default="bound"
        "bound": Shawe-Taylor bound pruning (no cross-validation); "ccp": CART cost-complexity
        pruning with α chosen by ``cv``-fold CV; "mcart": the same with M-CART's complexity
        (d/m) ln(m/d), d = L ln(L l); None: the unpruned greedy tree.
    criterion : default="entropy"
        Impurity of the greedy growth (see :class:`~treelearn.GreedyTreeClassifier`). Entropy,
        the default of every treelearn learner (see the guide, "scikit-learn parity"); the paper's
        CART trees (002 §6) are grown with ``criterion="gini"``.
    max_leaves : int or None, default=40
        Best-first growth to at most this many leaves (None: depth-first until pure).
    max_leaf_nodes : int >= 2 or None, default=None
        scikit-learn's name of ``max_leaves``; when set it replaces the default 40 (a
        ``max_leaves`` other than 40 and different from it: an error).
    delta : float, default=0.05
        Confidence of the bound.
    r : float, default=2**-13.7
        Error prior q_k = (1 - r) r^k of the bound.
    loose : bool, default=True
        Loose (§6.2, the paper's experiments) or tight (Eq. 7) partitioning bound.
    cv : int, CV splitter or iterable of (train, test) splits, default=10
        The CV choosing α ("ccp", "mcart"): an int gives shuffled stratified K-fold (seeded by
        ``random_state``).
    max_depth, min_samples_leaf, max_thresholds, categorical : passed to the greedy growth.
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Passed to the greedy growth (scikit-learn's: each side of a split holds at least this
        fraction of the total weight).
    random_state : int or None
        Seed of the CV folds.
    time_limit : float or None, default=600
        Seconds for the whole fit, from the start of ``fit`` (None: no limit): the greedy growth
        (the nodes not split by then are leaves), the CV folds ("ccp", "mcart": the folds grown by
        then choose α; none grown: no pruning) and the bound's pruning (it stops at the best
        pruning so far; with the tight bound, ``loose=False``, a large tree's bound can take
        minutes). When it binds, ``timed_out_`` is True and a :class:`treelearn.SearchLimitWarning`
        says so. On Dask input the shards' growth is not clocked (Ctrl-C stops it).
    class_weight : None, "balanced" or dict {class: weight}
        Multiplies ``sample_weight`` as in scikit-learn (growth, pruning counts and CV errors).

    Attributes
    ----------
    tree_ : the pruned Tree; unpruned_tree_ : the greedy tree; bound_ : the bound ε of tree_
    ("bound"); ccp_alpha_ : the chosen α ("ccp", "mcart"); pruning_time_ : seconds spent pruning
    (including the CV); timed_out_ : whether ``time_limit`` cut the fit short; classes_,
    n_classes_, n_features_in_.
    """

    _parameter_constraints = {
        "pruning": [Options("bound", "ccp", "mcart"), None],
        "criterion": [CRITERION],
        "max_leaves": [Interval(numbers.Integral, 1, INT64_MAX), None],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "r": [Interval(numbers.Real, 0, 1, closed="neither")],
        "loose": [BOOLEAN],
        "cv": [Interval(numbers.Integral, 2, INT32_MAX),
               Check(check_cv, "a CV splitter or an iterable of (train, test) splits")],
        "max_depth": [Interval(numbers.Integral, 0, INT32_MAX), None],
        "min_samples_leaf": [Interval(numbers.Integral, 1, INT64_MAX)],
        "max_thresholds": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "categorical": [COLUMNS, None],
        "random_state": RANDOM_STATE,
        "class_weight": CLASS_WEIGHT,
        "max_leaf_nodes": [Interval(numbers.Integral, 2, INT64_MAX), None],
        "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, pruning="bound", criterion="entropy", max_leaves=40, delta=0.05, r=DEFAULT_R, loose=True,
                 cv=10, max_depth=None, min_samples_leaf=1, max_thresholds=None, categorical=None,
                 random_state=None, class_weight=None, max_leaf_nodes=None, min_weight_fraction_leaf=0.0,
                 time_limit=DEFAULT_TIME_LIMIT):
        self.pruning = pruning
        self.criterion = criterion
        self.max_leaves = max_leaves
        self.delta = delta
        self.r = r
        self.loose = loose
        self.cv = cv
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_thresholds = max_thresholds
        self.categorical = categorical
        self.random_state = random_state
        self.class_weight = class_weight
        self.max_leaf_nodes = max_leaf_nodes
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.time_limit = time_limit

    _max_leaves_default = 40

    def _grower(self, n_classes, schema, criterion, clock=None):
        """``grow(Xe, y, w)``: the greedy tree, within what ``clock`` has left (None: unclocked)."""
        from treelearn.learn.greedy.estimator import grow_greedy

        def grow(Xe, y, w):
            limit = None if clock is None else clock.remaining()
            tree = grow_greedy(Xe, y, n_classes, w, schema, criterion=criterion, max_depth=self.max_depth,
                               max_leaves=self._leaf_budget(), min_samples_leaf=self.min_samples_leaf,
                               max_thresholds=self.max_thresholds,
                               min_weight_fraction_leaf=float(self.min_weight_fraction_leaf), time_limit=limit)
            if limit is not None and clock.expired():  # the growth ended at the deadline
                clock.timed_out = True
            return tree
        return grow

    def _cv_for_rows(self, rows, n_rows):
        return cv_for_rows(self.cv, rows, n_rows)

    def _fit(self, sample, params) -> Tree:
        Xe, y, sample_weight, n_classes = sample.encoded, sample.y, sample.weights, sample.n_classes
        clock = self._clock()
        grow = self._grower(n_classes, sample.schema, params["criterion"], clock)
        tree = grow(Xe, y, sample_weight)

        def cv_alpha(path, complexity):
            return select_alpha_cv(grow, Xe, y, sample_weight, path, complexity=complexity,
                                   n_features=tree.n_features, cv=self._cv_for_rows(sample.rows, sample.n_input_rows),
                                   random_state=self.random_state, clock=clock)

        return self._prune(tree, n_classes, cv_alpha, clock)

    def _clock(self) -> FitClock:
        """The fit's clock (from the start of ``fit``); ``timed_out`` records whether it bound."""
        return FitClock(self.time_limit)

    def _prune(self, tree: Tree, n_classes: int, cv_alpha, clock: FitClock) -> Tree:
        """The one step from the grown tree to the returned one and the pruning attributes, for the
        local and the Dask fit: ``cv_alpha(path, complexity)`` chooses α by cross-validation (the
        folds' trees grown in memory or on the shards); ``clock`` the fit's (its deadline bounds
        the bound's pruning; ``clock.timed_out``: whether a step before stopped at it)."""
        self.unpruned_tree_ = tree
        t0 = time.perf_counter()
        self.bound_ = None
        self.ccp_alpha_ = None
        if self.pruning is None:
            out = tree
        elif self.pruning == "bound":
            out, info = prune_with_bound(tree, delta=self.delta, r=self.r, loose=bool(self.loose),
                                         n_classes=n_classes, return_info=True, time_limit=clock.remaining())
            clock.timed_out |= info.timed_out
            self.bound_ = info.bounds[-1] if info.bounds else None
            self.bound_history_ = info.bounds
        else:
            complexity = "leaves" if self.pruning == "ccp" else "mcart"
            path = cost_complexity_pruning_path(tree, complexity)
            alpha = cv_alpha(path, complexity)
            self.ccp_alpha_ = alpha
            self.ccp_path_ = path
            out = prune_cost_complexity(tree, alpha, complexity, path=path)
        self.pruning_time_ = time.perf_counter() - t0
        self.timed_out_ = bool(clock.timed_out)
        if self.timed_out_:
            warn_limit(type(self).__name__, f"its time limit of {self.time_limit:g} s")
        return out

    _dask_plugin = "treelearn.learn.pruned.sharded"

    def _fit_sharded(self, plugin, data, params):
        """Dask input: with ``max_thresholds`` (numeric columns, a built-in criterion, no
        ``class_weight``) the greedy tree is grown on the row shards, and with an integer ``cv``
        the CV pruners' fold trees too (``sharded.py``); the pruning is the local fit's step."""
        crit = params["criterion"]
        if self.min_weight_fraction_leaf > 0:  # (not in the sharded growth: the gathered blocks)
            return None
        if not plugin.supports(data, crit, pruning=self.pruning, cv=self.cv, max_thresholds=self.max_thresholds,
                               class_weight=self.class_weight, categorical=self.categorical):
            return None
        ex, blocks, schema = data.executor, data.blocks, data.schema()
        growth = dict(max_depth=self.max_depth, max_leaves=self._leaf_budget(), min_samples_leaf=self.min_samples_leaf,
                      max_thresholds=self.max_thresholds)
        g, tree = plugin.grow(ex, blocks, crit, schema=schema, **growth)
        if g.one_class:
            return None  # the local one-class fit (every attribute set) on the gathered blocks

        def cv_alpha(path, complexity):
            return plugin.cv_alpha(ex, blocks, g, path, complexity, cv=self.cv, random_state=self.random_state,
                                   n_features=tree.n_features, criterion=crit, schema=schema, **growth)

        return g.classes, self._prune(tree, g.classes.size, cv_alpha, self._clock()), g.scale

    def _fit_single_class(self, sample, params) -> bool:
        # a single-class sample: grow and prune it like any other (every fitted attribute set);
        # when the grower cannot, the base class's one-leaf tree stands
        if super()._fit_single_class(sample, params):
            return True
        self.unpruned_tree_ = self.tree_
        self.bound_ = None
        self.ccp_alpha_ = None
        self.pruning_time_ = 0.0
        self.timed_out_ = False
