"""Top-k and optimal decision trees (003: Blanc, Lange, Pabbaraju, Sullivan, Tan, Tiwari, NeurIPS 2023).

Top-k (003 Fig. 1) generalises the greedy learners: at a node with depth budget h and sample S it
scores every binary feature that splits S with an impurity-based heuristic H, keeps the k best
(ties by feature index) and recursively builds, for each, the tree rooted at it; it returns the
candidate with the fewest training errors on S (ties by rank). h = 0, a pure S or no splitting
feature give the majority leaf (ties to the first class). k = 1 is ID3/CART (Top-1); k = d (all
binary features) returns an optimal depth-h tree (minimum (weighted) training
misclassifications): :class:`OptimalTreeClassifier`.

Raw columns are binarised by :class:`treelearn.Binarizer` (categorical one-hot ``x == v``; numeric
``x >= t`` thresholds: every one, or about 100 binary features in total as in 003 App. C plus the
greedy tree's, the search's first incumbent; the default chooses, ``learn/topk/space.py``); the returned
:class:`treelearn.Tree` predicts on raw X, each numeric split at CART's node-local midpoint (the
same training partition as its binary feature's threshold). Missing values: see
:class:`treelearn.Binarizer` (both missing directions of every condition, and "is missing").

The search is compiled (``learn/topk/``): exact (cover, depth) cache with lower bounds and a
memory cap, branch-and-bound (Fig. 5) with both children bounded before either is solved, a
specialised depth-2 step (child counts by one AND + popcount pass, siblings by subtraction),
duplicate and complementary splits skipped, rows re-packed per node, an optional depth-1 cache;
for k = all also similarity lower bounds and pair-count matrices (MurTree / STreeD style). None
of these changes the returned training error (tests compare with a plain recursion of Fig. 1, a
brute force over all trees and pystreed). Scores that differ by less than 1e-9 of the node
weight are ties (so that ulp noise never decides a rank).
"""
from __future__ import annotations

import functools
import numbers
import sys
import time

import numpy as np

from treelearn._limits import VERBOSE, DEFAULT_TIME_LIMIT, FitClock, FitTimeout, ProgressReporter
from treelearn._validation import (BOOLEAN, CLASS_WEIGHT, COLUMNS, INT32_MAX, INT64_MAX, RANDOM_STATE, Interval,
                                   Options, TreeLearnValueError)
from treelearn.base import CRITERION, BaseTreeClassifier
from treelearn.data.binarize import Binarizer
from treelearn.data.bitmatrix import BinaryData
from treelearn.learn.anytime import Incumbent, incumbent_bound, incumbent_time_limit, n_threads, set_search_attributes
from treelearn.learn.monotone import (MONOTONIC_CST, binary_constraints, check_monotonic_cst, labelled_errors,
                                      monotone_values, prediction_errors)
from treelearn.learn.topk.kernel import SEARCH_KERNEL, root_search, topk_search  # noqa: F401 (the room's API)
from treelearn.learn.topk.kernel import cpu_has_avx512_popcnt as _cpu_has_avx512_popcnt  # noqa: F401
from treelearn.learn.topk.select import (SELECT_CONSTRAINTS, check_select, fit_front, fit_selected, forget_selection,
                                         shallow_fronts)
from treelearn.learn.topk.space import AUTO, auto_excluded, binary_budget, binary_features, chosen_by
from treelearn.learn.topk.sparse import SPARSE_CONSTRAINTS, check_sparse, is_sparse, search_options
from treelearn.learn.topk.summary import feature_space, optimality_summary
from treelearn.tree.build import binary_tree, node_local_midpoints
from treelearn.tree.tree import Tree, kernel_nodes, training_errors

__all__ = ["TopKTreeClassifier", "OptimalTreeClassifier", "error_size_front", "topk_search"]

_SCORINGS = ("gain", "gain_ratio")
#: times a search holds the packed sample (the caller's columns, read in place, and the row-major copy)
SEARCH_COPIES = 2


class TopKTreeClassifier(BaseTreeClassifier):
    """Top-k decision tree (003 Fig. 1) of depth at most ``max_depth``.

    Parameters
    ----------
    k : int or "all", default=2
        Candidate features per node; ``"all"`` (or any k >= number of binary features) gives the
        optimal tree. With every threshold searched (``max_binary_features=None`` and
        ``max_thresholds=None``, or "auto"'s choice with k = "all") on data that is not all 0/1,
        such a k runs the continuous solver of :class:`OptimalTreeClassifier` (same optimal
        training error, faster; ``solver_`` says which search ran).
    max_depth : int, default=3
    criterion : {"entropy", "gini", "kearns_mansour"} or callable G, default="entropy"
        Impurity function of the score H (the purity gain, 003 Definition 2). A callable G on
        [0, 1] is checked as in :func:`treelearn.criteria.get_criterion`; the compiled search
        then asks it for every ranked node's side impurities in one vectorised call (slower
        than the built-in criteria, which are compiled).
    scoring : {"gain", "gain_ratio"}, default="gain"
        H = purity gain, or C4.5's gain ratio (gain / split information).
    max_binary_features : int, "auto" or None, default="auto"
        An int B: 003 App. C (categorical one-hot, numeric thresholds at quantiles of the distinct
        values, about B binary features in total) plus the greedy tree's thresholds
        (``greedy_incumbent``). None (with ``max_thresholds=None``): every threshold. "auto", for
        the optimal search (k = "all"): every threshold when it is cheap, else B = 100: the
        binary search over every threshold when they are at most 100 binary features, the
        continuous solver when its estimated CPU time (from the rows, the columns' distinct values,
        the depth and the classes) is within 2 s and 5% of ``time_limit``, else 100 binary features;
        always 100 with Top-k's integer k, ``solver="binary"``, ``max_thresholds``, the
        constraints only the binary search has (``ccp_alpha``, ``max_leaves``, ``min_samples_leaf``,
        ``min_weight_fraction_leaf``, ``monotonic_cst``, ``select``) or above 200,000 rows.
        ``feature_space_["chosen_by"]`` and the fitted repr say which and why (``learn/topk/space.py``).
    max_thresholds : int or None, default=None
        Binarizer option: at most this many quantile thresholds per numeric column.
    greedy_incumbent : bool, default=True
        Grow ``GreedyTreeClassifier(max_depth, criterion)`` first, add its thresholds to the
        binary features and start the search from it: its training error is the search's first
        upper bound, and the greedy tree is returned when nothing better is found (also when the
        time limit strikes). So the training accuracy is never below the greedy tree's, timed
        out or not (``incumbent_source_`` says which tree was returned). On 0/1 data with
        ``scoring="gain"`` the greedy tree is Top-1 on the same features, one of the trees
        Top-k searches, so a search that finishes cannot be worse: the greedy tree is grown
        only when the search stops early (time limit), as its fallback. Above 200,000 rows
        (``treelearn.data.sketch.SKETCH_ROWS``) the greedy tree is grown in histogram mode
        (``max_thresholds=255`` from the fixed threshold sample) and the budgeted thresholds are
        chosen from that sample too: the fit a Dask cluster reproduces exactly
        (docs/scaling.md). False: the binary features and the tree of the paper's Top-k exactly
        (003 App. C and Fig. 1).
    time_limit : float or None, default=600
        Seconds for the whole ``fit`` (binarization, search and tree rebuild, from the start of
        ``fit``); when hit, the best tree found so far is returned, ``timed_out_`` is True and a
        :class:`treelearn.SearchLimitWarning` is given (a leaf when the deadline passes before
        the search starts). None: no limit.
    memory_limit_mb : float, default=1024
        Cap of the packed binarized sample (beyond the input's own size) plus the search cache
        (entries are evicted when it is reached, ``cache_evictions_``); a binarized sample that
        cannot fit raises :class:`treelearn.ResourceLimitError` before it is allocated.
    verbose : int, default=0
        > 0: one progress line to stderr at most every 0.5 s while fitting (elapsed, phase,
        and while the search runs its live counters: nodes, cache entries, the incumbent's
        error at the root), and the final counters (error, lower bound) when it ends.
        Ctrl-C stops the search within a second: ``fit`` raises KeyboardInterrupt whose
        ``partial_tree`` is the best tree found so far (see the user guide, "Limits").
    n_jobs : int or None
        Threads over the root candidates (results identical to ``n_jobs=1``); -1: all cores.
    random_state : ignored (the search is deterministic); kept for the common API.
    categorical : column indices or names to treat as categorical, besides those inferred from
        the dtypes (see ColumnSchema).
    class_weight : None, "balanced" or dict {class: weight}, default=None
        Multiplies ``sample_weight`` as in scikit-learn (``"balanced"``: n / (n_classes · count)).
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        scikit-learn's: every leaf holds at least this fraction of the total training weight; a
        split leaving a side lighter is not a split, in the search (whose optimum is then the best
        tree among those) and in the greedy incumbent. Binary search only (``solver="binary"``).
    monotonic_cst : array-like of int (-1, 0, 1) per feature, or None, default=None
        scikit-learn's monotonic constraints (two classes; numeric columns; no missing values),
        for hard-label trees: the search returns the best tree (the optimum for k = all) among
        those satisfying scikit-learn's sufficient condition at every split on a constrained
        feature: with 1 (-1) every leaf left of the split (``x <= t``) predicts a class <= (>=)
        every leaf right of it, i.e. one side predicts one class everywhere. ``predict`` is
        then monotone in the feature (non-decreasing in ``classes_[1]`` for 1); a leaf may predict
        its minority class (a side collapsed to one label). ``predict_proba`` is monotone too:
        each leaf's fraction of ``classes_[1]`` moved into its label's half and clipped to
        bounds passed down as scikit-learn does, with 1/2 as the middle value
        (:mod:`treelearn.learn.monotone`). Monotone trees outside the sufficient condition (a
        majority vote of three constrained columns) are not searched. The greedy incumbent is
        grown with the same constraints. Binary search only (``solver="auto"`` takes it; on
        Dask input the gathered blocks).
    min_samples_leaf : int or float, default=1
        scikit-learn's: every leaf holds at least this many training rows (a float: that fraction
        of the rows, rounded up); the search's optimum is the best tree among those.
    ccp_alpha : float >= 0, default=0.0
        Cost per leaf: the search minimises weighted errors / total weight + ccp_alpha * leaves
        (scikit-learn's unit; GOSDT's λ, STreeD's ``cost_complexity``); a split is kept only if
        it lowers that (ties: the leaf).
    max_leaves : int or None, default=None (alias: scikit-learn's ``max_leaf_nodes``)
        Leaf budget within ``max_depth``: the best tree of at most that many leaves (a dynamic
        program over budgets at each node, MurTree's; one thread). With any of these three the
        search is the binary one and has no greedy incumbent (its thresholds still join the features);
        ``lower_bound_`` under ``ccp_alpha`` bounds the penalised objective in weighted errors.
    select : {None, "bound", "cv"}, default=None
        The depth and the leaf count chosen from the error-size fronts of every depth d =
        1..``max_depth`` (budgets 1..min(``max_leaves``, 2^d)): "bound" by 002's bound (no CV), "cv"
        by 5-fold held-out error (folds seeded by ``random_state``); ties: the fewest leaves, then
        the shallower depth; :mod:`treelearn.learn.topk.select`.

    Attributes
    ----------
    tree_, classes_, n_features_in_, binarizer_, training_error_ (weighted misclassifications),
    timed_out_, is_optimal_, lower_bound_ (of the training misclassifications, for k = all),
    n_nodes_searched_, cache_hits_, cache_evictions_, peak_memory_mb_, fit_time_.
    is_optimal_ : bool
        True when k = all and the search finished: the fewest training errors of all trees of
        depth <= max_depth **over the space searched**, ``feature_space_``: every threshold only
        when its ``thresholds`` is "all", else its N binary features. The fitted repr and the
        ``verbose`` summary say which ("optimal over every threshold" / "over N binary features").
    feature_space_ : dict
        The space searched (read it beside ``is_optimal_``): ``thresholds`` ("all": every
        midpoint between consecutive distinct values; "quantiles" / "distinct_quantiles": a
        budget, see :class:`treelearn.Binarizer`), ``n_binary_features``, ``n_thresholds`` (per
        raw column), ``n_greedy_thresholds`` (greedy thresholds added), ``chosen_by`` (the
        setting that chose the space; under "auto" its reason, with the estimate and budget) and
        ``description`` (in words).
    fronts_, front_, selected_leaves_, selected_depth_, selection_scores_ : with ``select`` (select.py): depth ->
        front (:func:`error_size_front`'s Bunch, ``max_depth`` its depth limit), the front holding the chosen tree
        (``tree_``), that tree's leaves and depth, and depth -> every budget's bound or held-out error rate.
    greedy_error_ : float or None
        Training error of the greedy incumbent (None with ``greedy_incumbent=False``, and on 0/1
        data when the search finished without needing it, see ``greedy_incumbent``).
    incumbent_source_ : {"search", "greedy"} ("top-k" too with the continuous solver)
        "greedy" when no tree better than the greedy one was found (or the time limit struck
        first) and the greedy tree was returned.
    incumbent_history_ : list of (seconds, error, lower_bound)
        Continuous solver only: the best training error over the fit's time, one entry per
        improvement (greedy tree, probe, Top-k rounds, the search's root), the last with the proven
        lower bound (0 before). ``verbose`` prints each entry at the end.
    """

    _parameter_constraints = {
        "k": [Interval(numbers.Integral, 1, INT64_MAX), Options("all")],
        "max_depth": [Interval(numbers.Integral, 0, 64)],
        "criterion": [CRITERION],
        "scoring": [Options(*_SCORINGS)],
        "max_thresholds": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "max_binary_features": [Interval(numbers.Integral, 1, INT32_MAX), Options(AUTO), None],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "memory_limit_mb": [Interval(numbers.Real, 0, None, closed="neither")],
        "verbose": VERBOSE,
        "n_jobs": [Interval(numbers.Integral, 1, INT32_MAX), Interval(numbers.Integral, -INT32_MAX, -1), None],
        "random_state": RANDOM_STATE,
        "categorical": [COLUMNS, None],
        "class_weight": CLASS_WEIGHT,
        "greedy_incumbent": [BOOLEAN],
        "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
        "monotonic_cst": MONOTONIC_CST,
        **SPARSE_CONSTRAINTS,
        **SELECT_CONSTRAINTS,
    }

    @property
    def _merge_same_prediction(self):  # the exact search (k = "all") merges (base.py)
        return self._k_value() == "all"

    def __init__(self, k=2, max_depth=3, criterion="entropy", scoring="gain", max_thresholds=None,
                 max_binary_features=AUTO, time_limit=DEFAULT_TIME_LIMIT, memory_limit_mb=1024, n_jobs=None,
                 random_state=None, categorical=None, class_weight=None, greedy_incumbent=True, verbose=0,
                 min_weight_fraction_leaf=0.0, monotonic_cst=None, min_samples_leaf=1, ccp_alpha=0.0, max_leaves=None,
                 max_leaf_nodes=None, select=None):
        self.select = select
        self.k = k
        self.max_depth = max_depth
        self.criterion = criterion
        self.scoring = scoring
        self.max_thresholds = max_thresholds
        self.max_binary_features = max_binary_features
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.categorical = categorical
        self.class_weight = class_weight
        self.greedy_incumbent = greedy_incumbent
        self.verbose = verbose
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.monotonic_cst = monotonic_cst
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.max_leaves = max_leaves
        self.max_leaf_nodes = max_leaf_nodes

    def _check_params(self) -> None:
        super()._check_params()
        check_sparse(self, getattr(self, "solver", "auto"))
        check_select(self)

    def fit(self, X, y, sample_weight=None):
        """Fit on X (array or DataFrame; or Dask collections) and y; with ``select``, see select.py."""
        forget_selection(self)
        if self.select is None:
            return super().fit(X, y, sample_weight)
        self._validate_params()
        fit_selected(self, X, y, sample_weight)._after_fit()
        return self

    def __repr__(self, N_CHAR_MAX=700):
        said = optimality_summary(self)  # fitted: what the tree may claim (summary.py)
        return super().__repr__(N_CHAR_MAX) + ("" if said is None else f"  # {said}")

    def _after_fit(self) -> None:
        if self.verbose and getattr(self, "_front", None) is None and (said := optimality_summary(self)):
            print(f"[{type(self).__name__}] {said}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ params
    def _k_value(self):
        return self.k

    def _n_threads(self) -> int:
        return n_threads(self.n_jobs)

    def _min_weight(self, data: BinaryData) -> float:
        """``min_weight_fraction_leaf`` as a weight in the search's units (rows when unweighted)."""
        total = float(data.weights.sum()) if data.weights is not None else float(data.y.shape[0])
        return float(self.min_weight_fraction_leaf) * total

    # ------------------------------------------------------------------ fit
    def _wants_continuous(self, sample) -> bool:
        """The continuous solver when it gives the same optimum: k covers every binary feature of
        every threshold (categorical one-hot), and X is not all 0/1 (one threshold per column:
        the binary search is the natural one). ``max_binary_features="auto"``: when the estimated
        cost is within the budget (space.py; the decision kept as ``_space``)."""
        if self.max_binary_features == AUTO:
            self._space = chosen_by(self, sample, auto_excluded(self, sample))
            return self._space["solver"] == "continuous"
        if self.max_binary_features is not None or self.max_thresholds is not None:
            return False
        if self.min_weight_fraction_leaf > 0 or self.monotonic_cst is not None or is_sparse(self):
            return False  # (constraints of the binary search only)
        if sample.is_binary():
            return False
        k = self._k_value()
        if isinstance(k, str):
            return True
        from treelearn.learn.continuous.solver import count_binary_features

        return int(k) >= count_binary_features(sample.encoded, sample.schema)

    def _binary_features(self):
        """The binary search's ``max_binary_features`` ("auto": its decision, ``_space``)."""
        chosen = getattr(self, "_space", None)
        return binary_budget(self.max_binary_features) if chosen is None else chosen["max_binary_features"]

    def _chosen_by(self) -> str:
        """``feature_space_["chosen_by"]``: the setting (or the "auto" decision) that chose the space."""
        chosen = getattr(self, "_space", None)
        if chosen is not None:
            return chosen["chosen_by"]
        solver = getattr(self, "solver", "auto")
        return (f"solver={solver!r}" if solver != "auto" else
                f"max_binary_features={self.max_binary_features!r}, max_thresholds={self.max_thresholds!r}")

    def _fit(self, sample, params) -> Tree:
        self._space = None
        self._mono_cst = check_monotonic_cst(self.monotonic_cst, sample.raw.shape[1], sample.n_classes,
                                             sample.schema.is_categorical,
                                             lambda: bool(np.isnan(sample.encoded).any()))
        if self._wants_continuous(sample):
            if self._mono_cst is not None:
                raise TreeLearnValueError("monotonic_cst needs solver='binary' or 'auto': the continuous solver has "
                                          "no monotonic constraints")
            return self._fit_continuous(sample, params)
        self.solver_ = "binary"
        clock = FitClock(self.time_limit)
        crit = params["criterion"]
        with ProgressReporter(type(self).__name__, self.verbose) as progress:
            greedy, extra = None, None
            binary = sample.is_binary()
            Xe = None if binary else sample.encoded  # (shared by the greedy tree, the Binarizer and the midpoints)
            from treelearn.learn.greedy.estimator import grow_greedy

            grow = not binary  # the greedy learner grows the incumbent (it handles missing values)
            # (sparse objectives: no incumbent, but the greedy thresholds join the plain fit's space)
            incumbent = self.greedy_incumbent and not is_sparse(self)
            if self.greedy_incumbent and grow:
                # (grown whole on small data: a fit is never worse than the greedy tree)
                g_limit = incumbent_time_limit(Xe.size * sample.n_classes, clock.remaining())
                if g_limit is not None and clock.expired():  # the input checks spent the time limit
                    return self._timed_out_leaf(sample, clock)
                progress.phase = "greedy incumbent"
                g_tree = grow_greedy(Xe, sample.y, sample.n_classes,
                                     None if sample.unit_weights else sample.weights, sample.schema, criterion=crit,
                                     max_depth=int(self.max_depth),
                                     max_thresholds=incumbent_thresholds(sample.n_samples),
                                     min_weight_fraction_leaf=float(self.min_weight_fraction_leaf),
                                     monotonic_cst=self._mono_cst,
                                     time_limit=g_limit, max_bytes=float(self.memory_limit_mb) * 2.0**20)
                extra = numeric_thresholds_of(g_tree)
                # (a constrained greedy tree's values are clipped probabilities: its errors by prediction)
                g_err = (g_tree.training_misclassifications() if self._mono_cst is None
                         else prediction_errors(g_tree, Xe, sample.y, sample.weights))
                greedy = Incumbent(g_err, lambda: g_tree) if incumbent else None
            progress.phase = "binarizing"
            cap = float(self.memory_limit_mb) * 2.0**20
            allowance = float(sample.raw.nbytes)  # the input's own size: bits up to it are free
            # the packed bits are held twice: here (the compiled search reads these columns in
            # place, the root included) and as the search's row-major copy; the cache gets what is
            # left of the cap
            copies = SEARCH_COPIES
            try:
                binz, data = sample.binarize(max_thresholds=self.max_thresholds,
                                             max_binary_features=self._binary_features(), extra_thresholds=extra,
                                             clock=clock, max_bytes=cap + allowance, copies=copies)
            except FitTimeout:
                return self._timed_out_leaf(sample, clock, greedy)
            fallback = None
            if incumbent and not grow and self._k_value() != 1:
                def run_top1(time_limit):
                    res1 = topk_search(data, k=1, max_depth=self.max_depth, criterion=crit, time_limit=time_limit,
                                       min_weight=self._min_weight(data), mono=self._binary_mono(binz))
                    return None if res1["timed_out"] else res1

                greedy, fallback = self._top1_incumbent(run_top1, binz, sample.n_classes, sample.schema, clock)
            extra_bytes = max(copies * float(data.columns.nbytes) - allowance, 0.0)
            search_cap_mb = max(cap - extra_bytes, 0.01 * cap) / 2.0**20
            return self._fit_data(data, binz, sample.n_classes, sample.schema, clock.t0, crit, greedy, Xe,
                                  clock=clock, progress=progress, memory_limit_mb=search_cap_mb, fallback=fallback)

    def _top1_incumbent(self, run_top1, binz, n_classes, schema, clock):
        """0/1 data: the greedy tree is Top-1 on these very features (the same tree, tested), grown
        by ``run_top1(time_limit)`` (the search's result, None when it timed out; in memory or on
        Dask). Returns ``(greedy, fallback)``: the incumbent now, or the function that grows it
        after a search that stopped early."""
        def top1(time_limit):
            res1 = run_top1(time_limit)
            if res1 is None:
                return None
            return Incumbent(self._result_error(res1), lambda: self._to_tree(res1, binz, n_classes, schema))

        if self.scoring == "gain":
            # ... and Top-1's trees are among Top-k's (the same ranking, k >= 1), so a search
            # that finishes is never worse than it: grown only if the search stops early
            return None, top1
        return top1(clock.remaining()), None  # the gain ratio ranks otherwise: a real incumbent

    def _timed_out_leaf(self, sample, clock, greedy=None) -> Tree:
        """The anytime answer when the deadline passes before the search starts: the greedy
        incumbent when it was grown, else the majority leaf."""
        if greedy is not None:
            tree, source = greedy.tree(), "greedy"
        else:
            counts = np.bincount(sample.y, weights=None if sample.unit else sample.weights, minlength=sample.n_classes)
            tree = Tree.leaf(counts, np.arange(sample.n_classes), schema=sample.schema)
            tree.n_node_samples[0] = sample.n_samples
            source = "leaf"
        self.binarizer_ = None
        self.n_binary_features_ = 0
        self.feature_space_ = None
        err = tree.training_misclassifications() if greedy is None else greedy.error
        set_search_attributes(self, training_error=err, lower_bound=0.0 if self._k_value() == "all" else None,
                              timed_out=True, is_optimal=False, incumbent_source=source,
                              greedy_error=None if greedy is None else greedy.error, fit_time=clock.elapsed(),
                              limit=f"its time limit of {self.time_limit:g} s (before the search started)")
        return tree

    def _fit_continuous(self, sample, params) -> Tree:
        from treelearn.learn.continuous.solver import continuous_fit, report_search

        clock = FitClock(self.time_limit)
        t0 = clock.t0
        crit = params["criterion"]
        with ProgressReporter(type(self).__name__, self.verbose) as progress:
            progress.phase = "searching (continuous solver)"
            live = progress.live()  # the search's counters, shown while it runs
            tree, info = continuous_fit(sample.encoded, sample.y, sample.n_classes,
                                        None if sample.unit else sample.weights, sample.schema,
                                        max_depth=self.max_depth, criterion=crit, time_limit=clock.remaining(),
                                        memory_limit_mb=self.memory_limit_mb, n_jobs=self._n_threads(),
                                        **({} if live is None else {"progress": live.array}))
            self.incumbent_history_ = report_search(progress, info, self.verbose)
        tree.impurity = crit.impurity(tree.value)
        self.solver_ = "continuous"
        self.binarizer_ = None
        self.n_binary_features_ = int(info["n_search_features"])
        self.feature_space_ = {"thresholds": "all", "n_binary_features": self.n_binary_features_,
                               "n_greedy_thresholds": 0, "chosen_by": self._chosen_by(),
                               "description": "every node-local midpoint threshold of every numeric column "
                                              "(continuous solver); categorical columns one-hot"}
        set_search_attributes(self, training_error=info["error"], lower_bound=info["lower_bound"],
                              timed_out=info["timed_out"], is_optimal=not info["timed_out"],
                              incumbent_source=info["source"], greedy_error=info.get("greedy_error"),
                              stats={**info, "evictions": 0}, fit_time=time.perf_counter() - t0)
        return tree

    def _fit_data(self, data: BinaryData, binz: Binarizer, n_classes, schema, t0, crit, greedy=None,
                  Xe=None, *, clock=None, progress=None, memory_limit_mb=None, fallback=None) -> Tree:
        """The search on ``data`` from the incumbent ``greedy`` (an :class:`Incumbent` or None);
        ``fallback(time_limit)`` grows the incumbent after a search that stopped early, when it was
        not grown before (0/1 data, where a finished search cannot be worse than it)."""
        self.binarizer_ = binz
        k = self._k_value()
        d = data.n_features
        kk = d if (isinstance(k, str) or k >= d) else int(k)
        if clock is None:
            clock = FitClock(self.time_limit, t0)
        g_err, ub = None, None
        total = float(data.weights.sum()) if data.weights is not None else float(data.y.shape[0])
        if greedy is not None:
            g_err = greedy.error
            ub = incumbent_bound(g_err, total)  # trees as good as the greedy one too (ties: the search's)
        live = None
        if progress is not None:
            progress.phase = f"searching ({d} binary features)"
            live = progress.live(incumbent=g_err)  # the search's counters, shown while it runs
        opts = search_options(self, data.y.shape[0], total)
        search = functools.partial(topk_search, data, k=kk, criterion=crit, scoring=self.scoring,
                                   memory_limit_mb=self.memory_limit_mb if memory_limit_mb is None else memory_limit_mb,
                                   n_jobs=self._n_threads(), min_weight=self._min_weight(data),
                                   mono=self._binary_mono(binz))
        try:
            if (getattr(self, "_front", None) or {}).get("depths"):  # (select: the shallower fronts, same features)
                shallow_fronts(self._front, search, opts, clock,
                               lambda r: self._to_tree(r, binz, n_classes, schema, Xe))
            res = search(max_depth=self.max_depth,
                         time_limit=clock.remaining(),  # the greedy tree's and the binarization's time count
                         upper_bound=ub, progress=None if live is None else live.array, **opts,
                         front=getattr(self, "_front", None) is not None)
            if isinstance(res, list):  # the error-size front: the fit's tree is the largest budget's
                self._front.update(total=total, points=[(self._to_tree(r, binz, n_classes, schema, Xe),
                                                         float(r["error"])) for r in res])
                res = res[-1]
        except KeyboardInterrupt as exc:
            # Ctrl-C: the best tree so far as ``exc.partial_tree`` (a Tree on the raw columns); when
            # the search had found nothing better than the greedy incumbent, ``partial_result``
            # holds the greedy tree's node arrays (raw columns) and ``source`` "greedy"
            part = getattr(exc, "partial_result", None)
            if part is not None:
                found = part.get("found", True) and len(part.get("feature", ())) > 0
                best = self._to_tree(kernel_nodes(part), binz, n_classes, schema, Xe) if found else None
                if greedy is not None and (best is None or self._result_error(part, best) > ub):
                    best = greedy.tree()
                    exc.partial_result = {**part, "children_left": best.children_left,
                                          "children_right": best.children_right, "feature": best.feature,
                                          "value": best.value, "n_node_samples": best.n_node_samples,
                                          "source": "greedy", "tree": best}
                exc.partial_tree = best
            raise
        if progress is not None:
            progress.phase = "rebuilding the tree"
            progress.stats = {"nodes": int(res["nodes"]), "cache_hits": int(res["cache_hits"]),
                              "error": float(res["error"]), "lower_bound": float(res["lower_bound"]),
                              "peak_mb": round(float(res["peak_bytes"]) / 2**20, 1)}
        midpoints = None if Xe is None else (lambda tree: node_local_midpoints(tree, Xe))
        tree = self._search_result(res, binz, n_classes, schema, crit, greedy=greedy, ub=ub, total=total, d=d,
                                   clock=clock, midpoints=midpoints, fallback=fallback)
        if progress is not None:  # the final line shows the returned tree's error (maybe the greedy one's)
            progress.stats["error"] = self.training_error_
        return tree

    def _search_result(self, res, binz, n_classes, schema, crit, *, greedy, ub, total, d, clock, midpoints=None,
                       fallback=None) -> Tree:
        """The one step from a binary search's result to the returned Tree and the fitted
        attributes, for the local and the Dask fit: the search's tree (CART's node-local midpoints
        set by ``midpoints(tree)`` on numeric data), or the greedy incumbent when it is better
        (``fallback(time_limit)`` grows it after a search that stopped early, when it was not grown
        before); ``total``: the sample's weight, ``d``: its binary features."""
        k = self._k_value()
        kk = d if (isinstance(k, str) or k >= d) else int(k)
        g_err = None if greedy is None else greedy.error
        self.binarizer_ = binz
        timed_out = bool(res["timed_out"])
        if greedy is None and fallback is not None and timed_out:
            # the slack the time limit allows past the deadline (x 1.1 + 0.5 s), in part
            greedy = fallback(0.05 * float(self.time_limit) + 0.25)
            g_err = None if greedy is None else greedy.error
            if greedy is not None:
                ub = incumbent_bound(g_err, total)
        source, tree = "search", None
        if res.get("found", True):
            tree = self._to_tree(res, binz, n_classes, schema)
            if midpoints is not None:  # CART's node-local midpoints (the training partition is unchanged)
                midpoints(tree)
        err = None if tree is None else self._result_error(res, tree)
        if greedy is not None and (tree is None or err > ub):
            # nothing better than the greedy tree (or a timed-out search's tree is worse)
            tree, source = greedy.tree(), "greedy"
            err = greedy.error
        tree.impurity = crit.impurity(tree.value)
        self.n_binary_features_ = d
        self.feature_space_ = feature_space(binz, self._chosen_by())
        # training_error_: the returned tree's own (weighted) training misclassifications, the
        # search's error when it finished, and the truth for an anytime tree
        limit = None
        if res.get("memory_bound"):  # the frames alone would pass the cap: the incumbent, named
            limit = (f"its memory cap of {self.memory_limit_mb:g} MB (the search's per-level work space needs "
                     f"{float(res['frame_bytes']) / 2**20:.0f} MB: fewer classes, binary features or a smaller "
                     "max_depth need less)")
        set_search_attributes(self, training_error=err, timed_out=timed_out, is_optimal=kk >= d and not timed_out,
                              lower_bound=(float(res["lower_bound"]) if self.ccp_alpha > 0 else
                                           min(float(res["lower_bound"]), err)) if kk >= d else None,
                              incumbent_source=source, greedy_error=g_err, stats=res, fit_time=clock.elapsed(),
                              limit=limit)
        return tree

    # ------------------------------------------------------------------ Dask input
    _dask_plugin = "treelearn.learn.topk.sharded"

    def _fit_sharded(self, plugin, data, params):
        """Dask input. Every threshold (the continuous solver, chosen on the gathered data as in
        memory): the gathered blocks, the search's root features farmed out to tasks
        (``learn/continuous/sharded.py``). A threshold budget (numeric columns, a built-in
        criterion, no ``class_weight``): the binary search's steps on the shards (``sharded.py``),
        the root's candidates farmed out, and the local result step."""
        self._mono_cst = None
        if self.min_weight_fraction_leaf > 0 or self.monotonic_cst is not None or is_sparse(self):
            return None  # (not in the sharded search: the gathered blocks)
        solver = getattr(self, "solver", "auto")
        mbf = self.max_binary_features
        if mbf == AUTO and solver != "continuous":
            self._space = binary_features(data.blocks.n_rows, auto_excluded(self))
            if self._space is None:
                return self._fit_farmed_continuous(data, params)  # (gathered: "auto" decides as in memory)
        mbf = binary_budget(mbf)
        budget = mbf is not None or self.max_thresholds is not None
        if solver == "continuous" or (solver == "auto" and not budget):
            return self._fit_farmed_continuous(data, params)
        crit = params["criterion"]
        if not budget or not plugin.supports(data, crit, class_weight=self.class_weight, categorical=self.categorical):
            return None  # (no budget: n - 1 binary features per column, gathered)
        clock = FitClock(self.time_limit)
        run = plugin.ShardedSearch(data, clock, k=self._k_value(), max_depth=int(self.max_depth), criterion=crit,
                                   scoring=self.scoring, max_thresholds=self.max_thresholds,
                                   max_binary_features=mbf, greedy_incumbent=self.greedy_incumbent,
                                   memory_limit_mb=self.memory_limit_mb, verbose=self.verbose, name=type(self).__name__)
        try:
            if not run.prepare():
                return None  # one class, or missing values above the sample size: the gathered blocks
            self.solver_ = "binary"
            greedy, fallback = None, None
            if run.greedy_tree is not None:
                g_tree = run.greedy_tree
                greedy = Incumbent(g_tree.training_misclassifications(), lambda: g_tree)
            elif run.binary and run.problem is not None and self.greedy_incumbent and self._k_value() != 1:
                greedy, fallback = self._top1_incumbent(run.top1, run.binz, run.classes.size, run.schema, clock)
            ub = None if greedy is None else incumbent_bound(greedy.error, run.total)
            try:
                res = run.search(ub)
                tree = self._search_result(res, run.binz, run.classes.size, run.schema, crit, greedy=greedy, ub=ub,
                                           total=run.total, d=int(run.binz.n_binary_features_), clock=clock,
                                           midpoints=run.midpoints, fallback=fallback)
            except KeyboardInterrupt as exc:
                # Ctrl-C: the searches were asked to stop and their tasks cancelled; the best tree
                # known on the driver is the greedy incumbent (raw columns, the learner's units)
                exc.partial_tree = None if greedy is None else greedy.tree()
                raise
        finally:
            run.release()
        return run.classes, tree, run.scale

    def _fit_farmed_continuous(self, data, params):
        """The gathered blocks fitted as in memory, the continuous search farmed out to the
        executor's workers (when the fit picks the continuous solver)."""
        from treelearn.distributed import report
        from treelearn.learn.continuous.sharded import FarmedSearch
        from treelearn.learn.continuous.solver import search_backend

        report.forget("search")  # (published again only if the fit picks the continuous solver)
        with search_backend(FarmedSearch(data.executor)):
            return self._fit_arrays(*data.gather(), params)

    def _binary_mono(self, binz):
        """The monotonic constraint of each binary feature (None: unconstrained)."""
        cst = getattr(self, "_mono_cst", None)
        return None if cst is None else binary_constraints(cst, binz.feature_, binz.kind_)

    def _result_error(self, res, tree=None) -> float:
        """The training misclassifications of a search result (its leaves' forced classes
        counted when constrained) or of its Tree."""
        if getattr(self, "_mono_cst", None) is not None and "label" in res:
            return labelled_errors(res["children_left"], res["value"], res["label"])
        return tree.training_misclassifications() if tree is not None else training_errors(res["children_left"],
                                                                                           res["value"])

    def _to_tree(self, res, binz, n_classes, schema, Xe=None) -> Tree:
        """The Tree on raw columns of a search result (node-local midpoints from ``Xe``, the
        encoded training rows, when given; monotone values under ``monotonic_cst``)."""
        tree = binary_tree(binz, res["feature"], Xe=Xe, children_left=res["children_left"],
                           children_right=res["children_right"], value=res["value"],
                           n_node_samples=res["n_node_samples"], classes=np.arange(n_classes), schema=schema)
        cst = getattr(self, "_mono_cst", None)
        return tree if cst is None or "label" not in res else monotone_values(tree, cst, res["label"])


#: thresholds per column of the greedy incumbent above ``sketch.SKETCH_ROWS`` rows
INCUMBENT_THRESHOLDS = 255


def incumbent_thresholds(n_rows: int):
    """``max_thresholds`` of the greedy incumbent on numeric data: None (every threshold: the
    exact greedy tree) up to :data:`~treelearn.data.sketch.SKETCH_ROWS` rows; above, the
    histogram mode with :data:`INCUMBENT_THRESHOLDS` thresholds of the fixed threshold sample,
    the greedy tree a fit on Dask row shards grows identically."""
    from treelearn.data import sketch

    return None if n_rows <= sketch.SKETCH_ROWS else INCUMBENT_THRESHOLDS


def numeric_thresholds_of(tree: Tree) -> dict:
    """{raw column: thresholds of the tree's numeric splits on it}."""
    out: dict = {}
    for i in np.flatnonzero((tree.children_left >= 0) & (tree.kind == 0)):
        out.setdefault(int(tree.feature[i]), []).append(float(tree.threshold[i]))
    return out


_SOLVERS = ("auto", "binary", "continuous")


class OptimalTreeClassifier(TopKTreeClassifier):
    """Optimal depth-``max_depth`` tree: minimum (weighted) training misclassifications over all
    trees on the binary features (Top-k with k = all, 003 §1.1.1). ``is_optimal_`` is True when
    the search finished within ``time_limit``: optimal **over the space searched**
    (``feature_space_``; the fitted repr and ``verbose`` summary name it and why): "over every
    threshold" by default when that search is cheap (``max_binary_features="auto"``, see
    :class:`TopKTreeClassifier`), with ``max_binary_features=None`` or on 0/1 data, else "over N
    binary features (M thresholds per column)" (about 100 quantile thresholds plus the greedy
    tree's); ``lower_bound_``
    bounds that optimum from below. With ``greedy_incumbent`` (default) the greedy tree of the same depth and
    criterion is the first incumbent, so the training accuracy is never below
    ``GreedyTreeClassifier(max_depth=max_depth)``'s, timed out or not.

    ``solver`` chooses the search (same objective, same optimal training error):

    * ``"binary"``: the binary search over the Binarizer's features (``max_binary_features``,
      ``max_thresholds``);
    * ``"continuous"``: every node-local midpoint threshold of every numeric column, searched in
      sorted order (:mod:`treelearn.learn.continuous.solver`, after ConTree); categorical columns
      one-hot. The greedy tree of the same depth and criterion is its first incumbent (on tiny
      data: its fallback after a time-out), so a
      timed-out fit is never less accurate on the training data than
      ``GreedyTreeClassifier(max_depth=max_depth)``. ``max_binary_features`` and
      ``max_thresholds`` are ignored; ``n_jobs`` threads share the root's features (the same
      tree as one thread). Among trees of equal training error it returns a fixed one, a
      function of the data alone (:mod:`treelearn.learn.continuous.solver`, "the tie rule"): the leaf
      or the depth-1 tree when no deeper tree is better, else at every node the first optimal
      split in the order features by depth-1 error (ties by column), thresholds ascending;
      exact with unit or integer weights (fractional weights: up to ties within 1e-9 of
      the total weight). On Dask input the root's features are dealt to tasks and the tree is
      the same (:mod:`treelearn.distributed`).
      Attributes as for the binary search (``binarizer_`` is None, ``n_binary_features_`` the
      number of searched columns), plus ``solver_`` and ``incumbent_source_`` ("search";
      "top-k" or "greedy" when the time limit struck before the search found a tree at least as
      good). From depth 4 on, a Top-k search over the columns (each node of depth budget >= 3
      split only on the k columns with the best ``criterion`` split, k = 1, 2, 4, ... within a
      tenth of ``time_limit``) improves the greedy incumbent before the exact search starts
      (:mod:`treelearn.learn.continuous.solver`).
    * ``"auto"`` (default): ``"continuous"`` when every threshold is asked for
      (``max_binary_features=None`` and ``max_thresholds=None``, or "auto" choosing it), X is not
      all 0/1 and none of ``min_weight_fraction_leaf``, ``monotonic_cst``, ``min_samples_leaf``,
      ``ccp_alpha``, ``max_leaves`` is set, else ``"binary"``.

    ``monotonic_cst`` (see :class:`TopKTreeClassifier`): the optimal tree among the hard-label
    trees meeting scikit-learn's sufficient condition at every constrained split, by the binary
    search (``solver="continuous"`` with a constraint is an error).
    """

    _parameter_constraints = {**{k: v for k, v in TopKTreeClassifier._parameter_constraints.items() if k != "k"},
                              "solver": [Options(*_SOLVERS)]}

    def __init__(self, max_depth=3, criterion="entropy", scoring="gain", max_thresholds=None,
                 max_binary_features=AUTO, time_limit=DEFAULT_TIME_LIMIT, memory_limit_mb=1024, n_jobs=None,
                 random_state=None, categorical=None, class_weight=None, solver="auto", greedy_incumbent=True,
                 verbose=0, min_weight_fraction_leaf=0.0, monotonic_cst=None, min_samples_leaf=1, ccp_alpha=0.0,
                 max_leaves=None, max_leaf_nodes=None, select=None):
        self.select = select
        self.max_leaves = max_leaves
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.monotonic_cst = monotonic_cst
        self.solver = solver
        self.greedy_incumbent = greedy_incumbent
        self.verbose = verbose
        self.max_depth = max_depth
        self.criterion = criterion
        self.scoring = scoring
        self.max_thresholds = max_thresholds
        self.max_binary_features = max_binary_features
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.categorical = categorical
        self.class_weight = class_weight

    def _k_value(self):
        return "all"

    def error_size_front(self, X, y, sample_weight=None):
        """The error-size front: for every leaf budget b = 1..``max_leaves`` (default 2^max_depth)
        the best tree of depth <= ``max_depth`` and at most b leaves, by one search whose cache serves
        every budget; fits the estimator (its tree: the largest budget's). Returns the front (also
        ``front_``; :func:`~treelearn.learn.topk.front.front_bunch`: ``errors``, ``trees``, ``ccp_alphas``...)."""
        return fit_front(self, X, y, sample_weight)

    def _check_params(self) -> None:
        super()._check_params()
        if self.solver == "continuous" and self.min_weight_fraction_leaf > 0:
            raise TreeLearnValueError("min_weight_fraction_leaf needs solver='binary' or 'auto': the continuous "
                                      "solver has no minimum leaf weight")

    def _wants_continuous(self, sample) -> bool:
        if self.solver != "auto":
            return self.solver == "continuous"
        return super()._wants_continuous(sample)


def error_size_front(X, y, *, max_depth: int = 3, max_leaves: int | None = None, sample_weight=None, **params):
    """The error-size front of the optimal tree of depth <= ``max_depth``: for every leaf count
    1..``max_leaves`` (default 2^max_depth) the fewest weighted training errors and the tree, by
    one search (:meth:`OptimalTreeClassifier.error_size_front`; ``params``: the estimator's)."""
    est = OptimalTreeClassifier(max_depth=max_depth, max_leaves=max_leaves, **params)
    return est.error_size_front(X, y, sample_weight=sample_weight)
