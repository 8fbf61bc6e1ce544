"""The shared scikit-learn layer: every treelearn classifier subclasses BaseTreeClassifier.

The seam between estimators and learners, in the order ``fit`` runs it:

1. **parameters**: a subclass declares every ``__init__`` parameter once in
   ``_parameter_constraints`` (see :func:`treelearn._validation.validate_parameters`); ``fit``
   checks them once, then calls the optional ``_check_params`` hook (checks that involve several
   parameters). ``__init__`` only stores the values.
2. **input**: X (array or DataFrame) gets its :class:`~treelearn.data.schema.ColumnSchema`, y its
   classes and int64 codes, ``sample_weight`` is checked and multiplied by ``class_weight``
   (exactly as scikit-learn does). Rows of weight zero carry no mass and are dropped here, and only
   here: a learner never sees them (``TrainingSample.rows`` maps back to the caller's rows).
   The weights are then divided by a power of two that brings the largest into [1, 2) (by their
   common value when all are equal: the learner sees ones, the unweighted tree); this is exact,
   so multiplying every weight by ``2**k`` gives the same tree bit for bit, and weights of
   ``2**600`` or ``2**-600`` neither overflow nor underflow in the criteria. After the fit the
   counts are multiplied back into the caller's units: ``value`` of every Tree attribute and the
   attributes named in ``_weight_scaled_attributes`` (``training_error_``, ``lower_bound_``).
3. **one class**: a sample with one class gets a one-leaf ``tree_``, then the
   ``_fit_single_class(sample, params)`` hook runs. The default hook runs the learner itself on
   the pure sample (a single label as class 0 of two: learners of Boolean functions need two),
   so that a one-class fit sets every fitted attribute an ordinary fit sets, and keeps its tree
   when it is one leaf; a learner that raises TreeLearnValueError on one class keeps the plain
   leaf (``_search_one_class = False`` skips the learner). A subclass may override the hook to
   set its own attributes.
4. **learner**: ``_fit(sample, params) -> Tree`` with a :class:`TrainingSample` and the checked
   parameters (a criterion name already resolved to its Criterion). Learners on binary
   features call ``sample.binarize(...)``, the one path from input to a
   :class:`~treelearn.data.bitmatrix.BinaryData` (0/1 and ±1 matrices are packed directly,
   without the float copy); learners on numbers call ``sample.encoded``. The default ``_fit``
   calls ``_fit_encoded(Xe, y, n_classes, sample_weight, schema)``, so a learner may implement that
   instead.
5. **Dask input** (any of X, y, sample_weight a Dask collection): after step 1 the input becomes a
   :class:`treelearn.distributed.blocks.ShardedInput` (the client in scope, row blocks, no learner
   knowledge), and the learner's plug-in, the module named by ``_dask_plugin`` (its room's
   ``sharded.py``, imported only then, so that ``import treelearn`` imports no Dask), is handed
   to the ``_fit_sharded(plugin, data, params)`` hook: the estimator fits with the plug-in's shard
   counting or farmed-out search and its own result -> Tree step, and returns
   ``(classes, tree, weight scale)``; or None, and the blocks are gathered and fitted as in memory
   (so is every learner without a plug-in). Either way ``fit`` ends as for in-memory input:
   classes, counts back in the caller's units, ``_after_fit``.

The base class also does classes, feature names, prediction and inspection.
"""
from __future__ import annotations

import importlib

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from treelearn._validation import (
    TreeLearnValueError,
    as_2d_raw,
    check_finite,
    native_float_flags,
    check_sample_weight,
    reject_missing,
    check_target,
    check_regression_target,
    warn_if_continuous,
    resolve_alias,
    Check,
    validate_parameters,
    weight_scale,
)
from treelearn._criteria import SigintHold, process_interrupted
from treelearn._limits import LimitError, ResourceLimitError, fit_started, set_interrupt_probe
from treelearn.criteria import get_criterion
from treelearn.data.binarize import Binarizer, binarize_sample
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.schema import ColumnSchema
from treelearn.distributed.blocks import is_dask_collection
from treelearn.tree.tree import Tree

set_interrupt_probe(process_interrupted)  # FitClock.check sees Ctrl-C in any thread


def _record_features(est, X) -> None:
    """scikit-learn's bookkeeping of a fit's input (``n_features_in_``, ``feature_names_in_``);
    a plain numpy matrix (no names to read) skips scikit-learn's dataframe detection."""
    if type(X) is np.ndarray and X.ndim == 2:
        est.n_features_in_ = X.shape[1]
        est.__dict__.pop("feature_names_in_", None)
    else:
        validate_data(est, X, skip_check_array=True, reset=True)


#: ``criterion``: a name, a :class:`~treelearn.criteria.Criterion` or a callable G (checked for
#: normalisation, symmetry and concavity); resolved once, to the Criterion the learner uses
CRITERION = Check(get_criterion, "'entropy', 'gini', 'kearns_mansour' or a callable G")


class TrainingSample:
    """What a learner fits on: the raw rows (zero-weight rows already dropped), their schema,
    class codes ``y`` (int64, 0..n_classes-1), ``weights`` (float64, positive), ``rows`` (the
    indices of these rows in the caller's X, None when every row was kept) and ``n_input_rows``
    (the number of rows of the caller's X)."""

    def __init__(self, raw: np.ndarray, schema: ColumnSchema, y: np.ndarray, n_classes: int,
                 weights: np.ndarray, rows: np.ndarray | None = None, n_input_rows: int | None = None):
        self.raw, self.schema, self.y, self.n_classes = raw, schema, y, n_classes
        self.rows = rows
        #: True when the caller gave no weights (every weight 1 without looking); None: look
        self.unit = None
        self._weights = weights
        if weights is None:  # unit weights, made on first use (a learner stopped by its clock never pays)
            self.unit = True
        self.n_input_rows = int(y.shape[0]) if n_input_rows is None else int(n_input_rows)
        self._encoded = None
        #: whether the values are known to be free of infinities (the fit's input check made)
        self.finite_checked = False

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def encoded(self) -> np.ndarray:
        """The encoded float64 matrix (C order), made on first use."""
        if self._encoded is None:
            self._encoded = np.ascontiguousarray(self.schema.encode(self.raw, checked=self.finite_checked))
        return self._encoded

    @property
    def numeric(self) -> np.ndarray:
        """The rows as a numeric matrix for learners that code columns themselves: the raw matrix
        in its own dtype when every column is numeric (an integer, bool or float32 X is never
        copied to float64; infinities are refused as by the encoding), else :attr:`encoded`."""
        raw = self.raw
        if self._encoded is None and self.schema.all_numeric and raw.dtype.kind in "biuf" \
                and raw.dtype.isnative and 1 <= raw.dtype.itemsize <= 8 and raw.dtype != np.float16:
            if not self.finite_checked:
                check_finite(raw)
            return raw
        return self.encoded

    @property
    def weights(self) -> np.ndarray:
        """The sample weights (float64, positive); all ones when the caller gave none."""
        if self._weights is None:
            self._weights = np.ones(self.y.shape[0])
        return self._weights

    @weights.setter
    def weights(self, value) -> None:
        self._weights, self.unit = value, None

    @property
    def unit_weights(self) -> bool:
        if self.unit is None:
            self.unit = bool(np.all(self.weights == 1.0))
        return self.unit

    def binarize(self, *, max_thresholds=None, max_binary_features=None, signed=False,
                 extra_thresholds=None, clock=None, max_bytes=None, copies=1) -> tuple[Binarizer, BinaryData]:
        """The fitted Binarizer and the packed BinaryData of this sample (see
        :func:`treelearn.data.binarize.binarize_sample`; ``signed``: a ±1 matrix is binary too;
        ``extra_thresholds``: {column: thresholds} added to the numeric columns' own; ``clock``,
        ``max_bytes``, ``copies``: the fit's limits)."""
        return binarize_sample(self.raw, self.schema, self.y, self.n_classes, None if self.unit else self.weights,
                               Xe=self._encoded,
                               max_thresholds=max_thresholds, max_binary_features=max_binary_features, signed=signed,
                               extra_thresholds=extra_thresholds, clock=clock, max_bytes=max_bytes, copies=copies)

    def is_binary(self) -> bool:
        """Every column numeric with values in {0, 1}: the sample is its own binary features
        (computed once per sample: a learner may ask more than once)."""
        known = self.__dict__.get("_is_binary")
        if known is None:
            known = self._is_binary = self._all_zero_one()
        return known

    def _all_zero_one(self) -> bool:
        raw = self.raw
        if not (self.schema.all_numeric and raw.dtype.kind in "biuf"):
            return False
        if raw.dtype.kind == "b":
            return True
        # blocks of rows, the first small: most inputs are not 0/1 and answer at their first block
        start, step = 0, 1024
        while start < raw.shape[0]:
            block = raw[start:start + step]
            if not (block <= 1).all() if raw.dtype.kind == "u" else not ((block == 0) | (block == 1)).all():
                return False
            start, step = start + step, min(step * 4, 1 << 16)
        return True


def _class_weight_factors(class_weight, classes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """scikit-learn's ``compute_sample_weight(class_weight, y)``, on the class codes."""
    from sklearn.utils.class_weight import compute_sample_weight

    if isinstance(class_weight, str):  # "balanced": n_samples / (n_classes * count of the class)
        return compute_sample_weight("balanced", codes)
    labels = classes.tolist()
    missing = [c for c in labels if c not in class_weight]
    unknown = [k for k in class_weight if k not in set(labels)]
    if missing and unknown:  # scikit-learn's rule: a partial dict must name classes only
        raise TreeLearnValueError(
            f"class_weight names {unknown!r}, which are not classes of y, and leaves the classes {missing!r} "
            "without a weight")
    return compute_sample_weight({i: class_weight[c] for i, c in enumerate(labels) if c in class_weight}, codes)


class BaseTreeEstimator(BaseEstimator):
    """What every treelearn estimator shares, classifier or regressor (not for direct use): the
    parameters' checks, the orchestration of ``fit`` (Ctrl-C, memory errors, Dask input and its
    hook), and prediction's plumbing (input checks, ``apply``, ``decision_path``, inspection)."""

    #: every ``__init__`` parameter -> its allowed forms (None: the subclass checks in ``_check_params``)
    _parameter_constraints: dict | None = None
    #: accept pandas category/object columns (one-hot conditions x_j == v)
    _supports_categorical = True
    #: the learner handles missing values (NaN, None, pd.NA in X): every learner does (greedy:
    #: scikit-learn's rule per split; Top-k, optimal and min-rank: the Binarizer's missingness
    #: features; the continuous solver: both directions at every split) except the query learner,
    #: which sets False: its ``fit`` and ``predict`` then reject them with a named error
    #: (:func:`treelearn._validation.reject_missing`), as scikit-learn's ``allow_nan`` tag says.
    #: (The Tree itself routes them: ``missing_go_to_left``.)
    _supports_missing = True

    def _check_params(self) -> None:
        """Hook for checks that involve several parameters (after the declared constraints); by
        default, that ``max_leaves`` and scikit-learn's name of it agree (learners taking both)."""
        if "max_leaf_nodes" in (self._parameter_constraints or {}):
            self._leaf_budget()

    #: ``max_leaves``' default, for a learner that takes it under scikit-learn's name too
    _max_leaves_default = None

    def _leaf_budget(self):
        """The leaf budget: ``max_leaves``, or scikit-learn's name of it, ``max_leaf_nodes`` (set,
        it replaces the default; both set to different values: a named error)."""
        return resolve_alias(type(self).__name__, "max_leaves", self.max_leaves, "max_leaf_nodes",
                             self.max_leaf_nodes, default=self._max_leaves_default)

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (read from ``__init__``'s signature), once per class:
        ``get_params``, ``clone`` and every ``fit`` ask for them."""
        names = cls.__dict__.get("_param_names_of_class")
        if names is None:
            names = super()._get_param_names()
            cls._param_names_of_class = names
        return names

    def _validate_params(self) -> dict:
        """The parameters, checked once (names resolved, e.g. ``criterion`` to its Criterion)."""
        params = self.get_params(deep=False)
        if self._parameter_constraints is not None:
            params = validate_parameters(type(self).__name__, self._parameter_constraints, params)
        self._check_params()
        return params

    def _after_fit(self) -> None:
        """Hook for subclasses (e.g. to record search statistics)."""

    #: the learner's Dask plug-in: a module of its room (``"treelearn.learn.<room>.sharded"``),
    #: imported only for Dask input and handed to :meth:`_fit_sharded`; None: Dask input is
    #: gathered and fitted as in memory
    _dask_plugin: str | None = None

    def _fit_sharded(self, plugin, data, params: dict):
        """Hook: the fit on Dask input ``data`` (a :class:`~treelearn.distributed.blocks.ShardedInput`)
        with the learner's ``plugin`` module and the checked parameters. Returns ``(classes, tree,
        weight scale)`` (the tree's counts in units of the weights divided by the scale, as
        :meth:`_fit` returns them), or None: the blocks are gathered and fitted as in memory.
        The default gathers."""
        return None

    def fit(self, X, y, sample_weight=None):
        """Fit on X (array or DataFrame, numeric and categorical columns; or Dask collections) and
        the target y."""
        try:
            # Ctrl-C from start to end, in any thread: every compiled search of this fit sees it
            # and one clock: a time limit counts from here (input checks and encodings included)
            with SigintHold(), fit_started():
                params = self._validate_params()
                target, tree, scale = self._fit_any(X, y, sample_weight, params)
        except MemoryError as exc:
            if isinstance(exc, LimitError):
                raise
            raise self._out_of_memory(exc) from exc
        self._set_fitted(target, tree, scale)
        self._after_fit()
        return self

    def _set_fitted(self, target, tree: Tree, scale: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_any(self, X, y, sample_weight, params):
        if is_dask_collection(X) or is_dask_collection(y) or is_dask_collection(sample_weight):
            return self._fit_dask(X, y, sample_weight, params)
        return self._fit_arrays(X, y, sample_weight, params)

    def _out_of_memory(self, exc: MemoryError) -> ResourceLimitError:
        """A bare MemoryError (``std::bad_alloc`` from compiled code, numpy's) as an error naming
        the fit and the settings that decide its memory."""
        said = " ".join(str(exc).split())[:120]
        knobs = [f"{k}={getattr(self, k)!r}" for k in ("n_jobs", "memory_limit_mb", "max_depth")
                 if hasattr(self, k)]
        return ResourceLimitError(
            f"{type(self).__name__}.fit ran out of memory ({type(exc).__name__}{': ' + said if said else ''}) "
            f"with {', '.join(knobs) or 'these settings'}; fewer threads (n_jobs), a lower memory_limit_mb, a "
            "smaller depth or fewer rows need less")

    def _fit_dask(self, X, y, sample_weight, params):
        """Dask input (see the module doc, step 5): the learner's plug-in, or the gathered blocks."""
        from treelearn.distributed.blocks import ShardedInput

        data = ShardedInput(X, y, sample_weight)
        fitted = None
        if self._dask_plugin is not None:
            fitted = self._fit_sharded(importlib.import_module(self._dask_plugin), data, params)
        if fitted is None:
            return self._fit_arrays(*data.gather(), params)
        _record_features(self, data.meta)
        return fitted

    # ------------------------------------------------------------------ predict
    def _encode(self, X):
        check_is_fitted(self, "tree_")
        as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        Xe = self.tree_.encode(X)
        if not self._supports_missing:
            reject_missing(Xe, type(self).__name__)
        return Xe

    def apply(self, X):
        """Index of the leaf each sample reaches."""
        Xe = self._encode(X)  # checks that the estimator is fitted first
        return self.tree_.apply_encoded(Xe)

    def decision_path(self, X):
        self._encode(X)  # checks fitted, the number of features and the feature names
        return self.tree_.decision_path(X)

    # ------------------------------------------------------------------ inspection
    def get_depth(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.depth

    def get_n_leaves(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Normalised total impurity decrease per raw feature (zeros for a one-leaf tree).

        Uses the tree's ``impurity`` array (a regressor's: in its criterion's units, as
        scikit-learn's); a learner that leaves it at zero (it has no impurity
        criterion, e.g. consistent or optimal trees) gets the Gini decrease of the node counts.
        """
        check_is_fitted(self, "tree_")
        t = self.tree_
        imp = np.zeros(t.n_features)
        w = t.node_weights()
        node_imp = t.impurity
        if t.node_count > 1 and not np.any(node_imp) and not t.is_regression:
            from treelearn.criteria import GINI

            node_imp = GINI.impurity(t.value)
        for node in np.nonzero(t.children_left >= 0)[0]:
            l, r = t.children_left[node], t.children_right[node]
            imp[t.feature[node]] += w[node] * node_imp[node] - w[l] * node_imp[l] - w[r] * node_imp[r]
        s = imp.sum()
        return imp / s if s > 0 else imp

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = bool(self._supports_missing)
        return tags


class BaseTreeClassifier(ClassifierMixin, BaseTreeEstimator):
    """Base of treelearn's classifiers (not for direct use)."""

    def _fit(self, sample: TrainingSample, params: dict) -> Tree:
        """Fit on the sample with the checked parameters (default: :meth:`_fit_encoded`)."""
        return self._fit_encoded(sample.encoded, sample.y, sample.n_classes, sample.weights, sample.schema)

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema) -> Tree:  # pragma: no cover
        raise NotImplementedError

    #: fitted attributes in the units of the sample weights (rescaled with the tree's counts)
    _weight_scaled_attributes = ("training_error_", "lower_bound_")
    #: the default ``_fit_single_class`` runs the learner itself on a one-class sample
    _search_one_class = True

    def _fit_single_class(self, sample: TrainingSample, params: dict) -> bool:
        """Hook: the sample had one class and ``tree_`` is its one leaf; set the fitted attributes.

        The default runs the learner on the pure sample (as class 0 of two when there is a single
        label), so that every attribute an ordinary fit sets is set, and takes its tree when it
        is one leaf. Returns whether the learner ran: a learner that raises TreeLearnValueError
        on one class (or ``_search_one_class = False``) keeps the plain leaf and returns False.
        """
        if not self._search_one_class:
            return False
        k = max(sample.n_classes, 2)
        run = sample
        if k != sample.n_classes:
            run = TrainingSample(sample.raw, sample.schema, sample.y, k, sample.weights, sample.rows,
                                 sample.n_input_rows)
            run._encoded = sample._encoded
        try:
            tree = self._fit(run, params)
        except TreeLearnValueError:
            return False  # a learner that cannot run on one class: its attributes stay unset
        if tree.n_leaves != 1:  # pragma: no cover - a pure sample needs no split
            return False
        if k != sample.n_classes:
            tree.value = np.ascontiguousarray(tree.value[:, : sample.n_classes])
        self.tree_ = tree
        return True

    def _rescale_counts(self, scale: float) -> None:
        """Multiply the fitted counts (trees' ``value``, weighted misclassifications) by ``scale``."""
        seen = set()
        for v in list(vars(self).values()):
            if isinstance(v, Tree) and id(v) not in seen:
                seen.add(id(v))
                v.value = v.value * scale
        for name in self._weight_scaled_attributes:
            v = getattr(self, name, None)
            if isinstance(v, float):
                setattr(self, name, v * scale)

    # ------------------------------------------------------------------ fit
    def _training_sample(self, X, y, sample_weight=None):
        """``(classes, sample)``: checked input with zero-weight rows dropped (see the module doc)."""
        raw = as_2d_raw(X)
        _record_features(self, X)
        # a float matrix: its missing values and infinities in one compiled pass (infinities refused)
        flags = native_float_flags(raw) if isinstance(X, np.ndarray) else None
        if flags is not None and flags[1].any():
            check_finite(raw)  # names the first infinite cell
        schema = ColumnSchema.infer(X, getattr(self, "categorical", None),
                                    missing=None if flags is None else flags[0].tolist())
        if not self._supports_categorical and not schema.all_numeric:
            raise TreeLearnValueError(f"{type(self).__name__} needs numeric input")
        classes, codes = check_target(y, raw.shape[0])
        warn_if_continuous(classes, raw.shape[0], type(self).__name__)
        class_weight = getattr(self, "class_weight", None)
        unit = sample_weight is None and class_weight is None  # every weight 1: nothing to look at
        w = None if unit else check_sample_weight(sample_weight, raw.shape[0])
        if class_weight is not None:
            w = w * _class_weight_factors(class_weight, classes, codes)
            if not w.sum() > 0:
                raise TreeLearnValueError("class_weight gives every sample weight zero; some class needs a weight > 0")
        rows, n_input_rows = None, raw.shape[0]
        keep = None if unit else w > 0
        if keep is not None and not keep.all():  # zero-weight rows carry no mass: they must not change the tree
            rows = np.flatnonzero(keep)
            raw, codes, w = raw[rows], codes[rows], w[rows]
        sample = TrainingSample(raw, schema, codes, len(classes), None if unit else np.ascontiguousarray(w), rows,
                                n_input_rows)
        sample.finite_checked = flags is not None or raw.dtype.kind in "biu"
        return classes, sample

    #: merge sibling leaves that predict the same class in the returned tree (``Tree.simplify``,
    #: repeatedly, bottom-up), so that ``n_leaves`` counts the tree's real size: for the exact
    #: searches, whose leaves hold the class counts of their rows; the merged leaf's counts are
    #: the sum, so ``predict`` is unchanged and ``predict_proba`` reports the merged rows'
    #: distribution, as a search that had not split there would. Grown trees (greedy, CART's
    #: convention) are kept as grown.
    _merge_same_prediction = False

    def _set_fitted(self, classes, tree: Tree, scale: float) -> None:
        self.classes_ = classes
        self.n_classes_ = len(classes)
        # (monotone trees' values are clipped probabilities, not counts: kept)
        if self._merge_same_prediction and getattr(self, "_mono_cst", None) is None and tree.node_count > 1:
            tree = tree.simplify()
        tree.classes = classes
        self.tree_ = tree
        if scale != 1.0:
            self._rescale_counts(scale)

    def _fit_arrays(self, X, y, sample_weight, params):
        """In-memory input: ``(classes, tree, weight scale)``, the tree's counts in the learner's
        units (steps 2-4 of the module doc)."""
        classes, sample = self._training_sample(X, y, sample_weight)
        if not self._supports_missing:  # (numeric input is checked as it is: no float copy)
            reject_missing(sample.raw if sample.raw.dtype.kind in "biuf" else sample.encoded, type(self).__name__)
        self.classes_ = classes
        self.n_classes_ = len(classes)
        # the learners see the weights in [1, 2) (see the module doc); counts are scaled back by fit
        scale = 1.0 if sample.unit else weight_scale(float(sample.weights.min()), float(sample.weights.max()))
        if scale != 1.0:
            sample.weights = sample.weights / scale
        # (every class of ``classes`` occurs in y unless zero-weight rows were dropped)
        if self.n_classes_ == 1 or (sample.rows is not None and sample.y.min() == sample.y.max()):
            counts = np.bincount(sample.y, weights=None if sample.unit else sample.weights, minlength=self.n_classes_)
            self.tree_ = Tree.leaf(counts, classes, schema=sample.schema)
            self.tree_.n_node_samples[0] = sample.n_samples
            if sample.schema.all_numeric and sample.raw.dtype.kind in "biuf":
                if not sample.finite_checked:
                    check_finite(sample.raw)  # the input checks a learner's encoding would make
            else:
                sample.encoded  # noqa: B018 - encoding checks the values
            self._fit_single_class(sample, params)
            return classes, self.tree_, scale
        try:
            return classes, self._fit(sample, params), scale
        except KeyboardInterrupt as exc:  # Ctrl-C: the search's best tree so far, labelled as tree_ is
            partial = getattr(exc, "partial_tree", None)
            if isinstance(partial, Tree):
                partial.classes = classes
                partial.value = partial.value * scale
            raise

    def predict(self, X):
        leaves = self.apply(X)
        return self.classes_[self.tree_.leaf_class_index()[leaves]]

    def predict_proba(self, X):
        leaves = self.apply(X)
        v = self.tree_.value[leaves]
        tot = v.sum(axis=1, keepdims=True)
        return np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), 1.0 / v.shape[1])

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class BaseTreeRegressor(RegressorMixin, BaseTreeEstimator):
    """Base of treelearn's regressors (not for direct use). Everything that is not about classes
    is :class:`BaseTreeEstimator`'s; here: the target (float64, (n,) or (n, k) for k outputs,
    checked by :func:`treelearn._validation.check_regression_target`), a constant target's one
    leaf, and prediction (the leaves' means; ``score`` is R^2, scikit-learn's ``RegressorMixin``).
    The learner's ``_fit(sample, params) -> Tree`` gets a :class:`TrainingSample` whose ``y`` is
    that target (``n_classes`` 0), weights scaled as the classifiers' are, and returns a regression
    Tree (``task="regression"``) whose ``weighted_n_node_samples`` is in the scaled units."""

    def _fit(self, sample: TrainingSample, params: dict) -> Tree:  # pragma: no cover - abstract
        raise NotImplementedError

    def _training_sample(self, X, y, sample_weight=None) -> TrainingSample:
        raw = as_2d_raw(X)
        _record_features(self, X)
        schema = ColumnSchema.infer(X, getattr(self, "categorical", None))
        if not self._supports_categorical and not schema.all_numeric:
            raise TreeLearnValueError(f"{type(self).__name__} needs numeric input")
        target = check_regression_target(y, raw.shape[0])
        w = check_sample_weight(sample_weight, raw.shape[0])
        keep = w > 0
        rows, n_input_rows = None, raw.shape[0]
        if not keep.all():  # zero-weight rows carry no mass: they must not change the tree
            rows = np.flatnonzero(keep)
            raw, target, w = raw[rows], target[rows], w[rows]
        return TrainingSample(raw, schema, target, 0, np.ascontiguousarray(w), rows, n_input_rows)

    def _fit_arrays(self, X, y, sample_weight, params):
        """In-memory input: ``(target shape, tree, weight scale)``."""
        sample = self._training_sample(X, y, sample_weight)
        scale = weight_scale(float(sample.weights.min()), float(sample.weights.max()))
        if scale != 1.0:
            sample.weights = sample.weights / scale
        y2 = sample.y.reshape(sample.n_samples, -1)
        if np.all(y2 == y2[:1]):  # a constant target: one leaf
            if sample.schema.all_numeric and sample.raw.dtype.kind in "biuf":
                check_finite(sample.raw)
            else:
                sample.encoded  # noqa: B018 - encoding checks the values
            W = float(sample.weights.sum())
            tree = Tree(children_left=[-1], children_right=[-1], feature=[-2], threshold=[-2.0], kind=[-1],
                        value=y2[:1], n_node_samples=[sample.n_samples], impurity=[0.0], classes=None,
                        schema=sample.schema, task="regression", weighted_n_node_samples=[W])
            return sample.y.ndim, tree, scale
        return sample.y.ndim, self._fit(sample, params), scale

    def _set_fitted(self, y_ndim, tree: Tree, scale: float) -> None:
        self.n_outputs_ = tree.n_outputs
        self._y_ndim = int(y_ndim)
        if scale != 1.0:
            tree.weighted_n_node_samples = tree.weighted_n_node_samples * scale
        self.tree_ = tree

    def predict(self, X):
        """The mean of the training targets at the leaf each row reaches ((n,) for a 1-D target,
        else (n, n_outputs))."""
        leaves = self.apply(X)  # checks that the estimator is fitted first
        v = self.tree_.value[leaves]
        return v[:, 0].copy() if getattr(self, "_y_ndim", 1) == 1 and v.shape[1] == 1 else v

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # y of shape (n, k): k outputs
        return tags
