"""QueryTreeClassifier: the scikit-learn face of BuildDT (004)."""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from treelearn._limits import DEFAULT_TIME_LIMIT, VERBOSE, FitClock, ProgressReporter
from treelearn.base import BaseTreeClassifier
from treelearn._validation import CLASS_WEIGHT, INT32_MAX, RANDOM_STATE, Interval, Options, TreeLearnValueError
from treelearn.learn.queries.builddt import build_monotone, default_parameters, learn_from_queries
from treelearn.learn.queries.oracle import PM1_CLASSES, as_oracle
from treelearn.tree.build import split_threshold

# the thresholds of a tree fitted on 0/1 or ±1 examples: between the two values, where a value
# equal to their midpoint goes left (scikit-learn's x <= 0.5, x <= 0; treelearn.tree.build)
_SPLIT_01 = split_threshold(0.0, 1.0)
_SPLIT_PM1 = split_threshold(-1.0, 1.0)

# ----------------------------------------------------------------------------- estimator
class QueryTreeClassifier(BaseTreeClassifier):
    """Size-s decision trees by BuildDT (004).

    ``fit(X, y)``: the monotone random-example mode (§6) on a sample of {0,1}^n or {±1}^n (two
    classes; the larger label plays +1). ``fit_oracle(oracle)``: membership queries in ``mode``
    (``"realizable"``, ``"agnostic"`` or ``"monotone"``). Parameters: ``size`` s, ``epsilon`` ε,
    optional ``depth``/``tau``/``delta`` (defaults from 004 Thm 1), ``influence`` (exact or sampled
    statistics in ``fit_oracle``), ``time_limit`` (s) and ``max_memory_mb`` for the DP,
    ``random_state``; ``class_weight`` is accepted for the common API (like ``sample_weight``, it
    has no effect on uniform random examples: a warning says so).

    Limits: ``time_limit`` (default 600 s) runs from the start of ``fit`` (the conversion of X
    included) and ``max_memory_mb`` caps the DP's memo; the sample is read as one ±1 int8 copy
    (transposed) and float work space of a few MiB, so the whole fit stays within the memo cap,
    the input's own size and 64 MiB. A limit raises :class:`treelearn.SearchLimitError`.
    ``verbose > 0`` prints the elapsed time and the number of restrictions explored to stderr at
    most every 0.5 s.
    """

    _supports_categorical = False
    #: BuildDT learns Boolean functions of {0,1}^n / {±1}^n examples: NaN is rejected with a named
    #: error in fit and predict (treelearn._validation.reject_missing)
    _supports_missing = False

    _parameter_constraints = {
        "size": [Interval(numbers.Integral, 1, INT32_MAX)],
        "epsilon": [Interval(numbers.Real, 0, 1, closed="neither")],
        "mode": [Options("realizable", "agnostic", "monotone")],
        "depth": [Interval(numbers.Integral, 0, INT32_MAX), None],
        "tau": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "delta": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "influence": [Options("auto", "exact", "sampled")],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_memory_mb": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "random_state": RANDOM_STATE,
        "class_weight": CLASS_WEIGHT,
        "verbose": VERBOSE,
    }

    def __init__(self, size=8, epsilon=0.1, mode="monotone", *, depth=None, tau=None, delta=None,
                 influence="auto", time_limit=DEFAULT_TIME_LIMIT, max_memory_mb=2048.0, random_state=None,
                 class_weight=None, verbose=0):
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
        self.class_weight = class_weight
        self.verbose = verbose

    def _params(self):
        p = default_parameters(self.size, self.epsilon)
        return (p["depth"] if self.depth is None else self.depth, p["tau"] if self.tau is None else self.tau)

    def _fit(self, sample, params):
        raw = sample.raw
        if sample.schema.all_numeric and raw.dtype.kind in "biuf" and raw.ndim == 2:
            # numbers: read X itself (no float64 copy of the whole sample)
            clock = FitClock(self.time_limit)
            XT = self._pm1_transposed(raw)
            if XT is not None:
                return self._fit_pm1(XT, sample.y, sample.n_classes, sample.weights, sample.schema, clock)
        return super()._fit(sample, params)  # other values: the encoded path names the problem

    @staticmethod
    def _pm1_transposed(raw):
        """The (n_features, n_samples) ±1 int8 matrix of a 0/1 or ±1 numeric X (in blocks of
        rows; None when X has another value)."""
        n, d = raw.shape
        out = np.empty((d, n), dtype=np.int8)
        step = max(1, (4 * 2**20) // max(d, 1))
        kind = None
        for a in range(0, n, step):
            blk = raw[a:a + step]
            if kind is None:
                kind = "01" if bool(((blk == 0) | (blk == 1)).all()) else (
                    "pm" if bool(((blk == -1) | (blk == 1)).all()) else "bad")
                if kind == "bad":
                    return None
            if kind == "01":
                if not bool(((blk == 0) | (blk == 1)).all()):
                    return None
                out[:, a:a + step] = (2 * blk.astype(np.int8) - 1).T
            else:
                if not bool(((blk == -1) | (blk == 1)).all()):
                    return None
                out[:, a:a + step] = blk.astype(np.int8).T
        return out, _SPLIT_01 if kind == "01" else _SPLIT_PM1

    def _fit_pm1(self, XT_thr, y, n_classes, sample_weight, schema, clock):
        XT, xthr = XT_thr
        if n_classes != 2:
            raise TreeLearnValueError(f"QueryTreeClassifier learns Boolean functions: 2 classes, got {n_classes}")
        if self.mode != "monotone":
            raise TreeLearnValueError("fit(X, y) uses random examples only: mode='monotone' (use fit_oracle for queries)")
        if not np.all(sample_weight == 1):
            warnings.warn("QueryTreeClassifier ignores sample_weight and class_weight (uniform random examples)",
                          stacklevel=4)
        depth, tau = self._params()
        yy = np.where(y == 1, 1.0, -1.0)
        with ProgressReporter(type(self).__name__, self.verbose) as progress:
            progress.phase = "BuildDT"
            tree, info = build_monotone(XT.T, yy, self.size, depth, tau, time_limit=self.time_limit,
                                         max_memory_mb=self.max_memory_mb, schema=schema, x_threshold=xthr, t0=clock.t0,
                                         progress=progress)
        self.info_ = info
        return tree

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema):
        if n_classes != 2:
            raise TreeLearnValueError(f"QueryTreeClassifier learns Boolean functions: 2 classes, got {n_classes}")
        if self.mode != "monotone":
            raise TreeLearnValueError("fit(X, y) uses random examples only: mode='monotone' (use fit_oracle for queries)")
        vals = np.unique(Xe)
        if np.all(np.isin(vals, (0.0, 1.0))):
            Xpm, xthr = (2 * Xe - 1).astype(np.int8), _SPLIT_01
        elif np.all(np.isin(vals, (-1.0, 1.0))):
            Xpm, xthr = Xe.astype(np.int8), _SPLIT_PM1
        else:
            raise TreeLearnValueError("QueryTreeClassifier.fit needs X in {0, 1} or {-1, +1}")
        if not np.all(sample_weight == 1):
            warnings.warn("QueryTreeClassifier ignores sample_weight and class_weight (uniform random examples)",
                          stacklevel=3)
        depth, tau = self._params()
        yy = np.where(y == 1, 1.0, -1.0)
        tree, info = build_monotone(np.ascontiguousarray(Xpm), yy, self.size, depth, tau, time_limit=self.time_limit,
                                     max_memory_mb=self.max_memory_mb, schema=schema, x_threshold=xthr)
        self.info_ = info
        # class codes: tree classes are [-1, +1] = codes [0, 1]
        return tree

    def fit_oracle(self, oracle):
        """Learn from membership queries to ``oracle`` (an Oracle, a ±1 Tree or a truth table)."""
        self._validate_params()
        o = as_oracle(oracle)
        q0 = o.n_queries
        tree, info = learn_from_queries(o, self.size, self.epsilon, self.mode, self.random_state, depth=self.depth,
                                        tau=self.tau, delta=self.delta, influence=self.influence,
                                        time_limit=self.time_limit, max_memory_mb=self.max_memory_mb,
                                        return_info=True)
        info["queries"] = o.n_queries - q0
        self.info_ = info
        self.tree_ = tree
        self.classes_ = PM1_CLASSES.copy()
        self.n_classes_ = 2
        self.n_features_in_ = o.n_features
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self
