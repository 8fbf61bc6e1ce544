"""The shared scikit-learn layer: every treelearn classifier subclasses BaseTreeClassifier.

A subclass declares its parameters in ``__init__`` (stored as given, never validated there),
implements ``_check_params(self)`` (raise TreeLearnValueError on a bad value) and
``_fit_encoded(self, Xe, y, n_classes, sample_weight, schema) -> Tree``, where ``Xe`` is the
encoded float64 matrix (see ``treelearn.data.schema``), ``y`` int64 class codes 0..C-1 and
``sample_weight`` a float64 array (all ones when none was given), divided by a power of two
(or by their common value) so that its largest entry is in [1, 2); the base class multiplies the
fitted counts back (``_weight_scaled_attributes``). The base class does the validation, the
single-class case (the learner still runs, on the pure sample, so that its fitted attributes
exist), zero-weight rows, classes, feature names and prediction.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from treelearn._validation import TreeLearnValueError, _as_2d_raw, check_sample_weight, check_target
from treelearn.data import _bitset
from treelearn.data.schema import ColumnSchema
from treelearn.tree.tree import Tree


def _weight_scale(w: np.ndarray) -> float:
    """What the weights are divided by: their common value when all are equal (the learners see
    ones: the unweighted tree), else the power of two ``2**e`` with ``max(w) / 2**e`` in [1, 2)."""
    hi = float(w.max())
    if hi == float(w.min()):
        return hi
    _, e = np.frexp(hi)
    return float(np.ldexp(1.0, int(e) - 1))


class BaseTreeClassifier(ClassifierMixin, BaseEstimator):
    """Base of treelearn's classifiers (not for direct use)."""

    #: accept pandas category/object columns (one-hot conditions x_j == v)
    _supports_categorical = True
    #: the learner works on binary features and implements ``_fit_packed``: a numeric X whose
    #: values are all 0 or 1 is packed straight into bit columns, without the float64 copy
    _packed_input = False

    def _check_params(self) -> None:  # pragma: no cover - subclasses override
        pass

    def _fit_encoded(self, Xe, y, n_classes, sample_weight, schema) -> Tree:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ fit
    def _validate_fit_input(self, X, y, sample_weight=None):
        """``(raw, Xe, packed, classes, codes, w, schema)``: ``packed`` is the 0/1 matrix's packed
        columns and ones per column (:func:`treelearn.data._bitset.pack_binary`) when the learner
        takes them (``_packed_input``) and X is numeric with every value 0 or 1, and then ``Xe``
        is None (no float copy); otherwise ``Xe`` is the encoded matrix."""
        raw = _as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        categorical = getattr(self, "categorical", None)
        schema = ColumnSchema.infer(X, categorical)
        if not self._supports_categorical and not schema.all_numeric:
            raise TreeLearnValueError(f"{type(self).__name__} needs numeric input")
        packed = None
        if self._packed_input and schema.all_numeric and raw.dtype.kind in "biuf":
            packed = _bitset.pack_binary(raw)
        Xe = schema.encode(raw) if packed is None else None
        classes, codes = check_target(y, raw.shape[0])
        w = check_sample_weight(sample_weight, raw.shape[0])
        return raw, Xe, packed, classes, codes, w, schema

    #: fitted attributes in the units of the sample weights (rescaled with the tree's counts)
    _weight_scaled_attributes = ("training_error_", "lower_bound_")

    def fit(self, X, y, sample_weight=None):
        """Fit on X (array or DataFrame, numeric and categorical columns) and labels y."""
        self._check_params()
        raw, Xe, packed, classes, codes, w, schema = self._validate_fit_input(X, y, sample_weight)
        self.classes_ = classes
        self.n_classes_ = len(classes)
        keep = w > 0
        if not keep.all():  # zero-weight rows carry no mass: they must not change the tree
            if Xe is None:
                Xe, packed = schema.encode(raw), None
            Xe, codes, w = Xe[keep], codes[keep], w[keep]
        # The learners see the weights divided by a power of two that brings the largest into
        # [1, 2): exact, so multiplying every weight by 2**k gives the same tree bit for bit (and
        # weights of 2**600 or 2**-600 neither overflow nor underflow inside the criteria); the
        # counts are reported in the caller's units again below. Equal weights become ones (the
        # unweighted tree).
        scale = _weight_scale(w)
        if scale != 1.0:
            w = w / scale
        if self.n_classes_ == 1 or codes.min() == codes.max():
            self.tree_ = self._fit_one_class(Xe, packed, codes, w, schema)
        else:
            if packed is not None:
                self.tree_ = self._fit_packed(packed[0], packed[1], codes, self.n_classes_, w, schema)
            else:
                self.tree_ = self._fit_encoded(np.ascontiguousarray(Xe), codes, self.n_classes_, w, schema)
        self.tree_.classes = classes
        if scale != 1.0:
            self._rescale_counts(scale)
        self._after_fit()
        return self

    def _fit_one_class(self, Xe, packed, codes, w, schema) -> Tree:
        """Every row with weight has one class: the tree is one leaf. Learners whose fitted
        attributes come from their search (``_search_one_class``) still run it, on a pure
        sample, so that a one-class fit sets every attribute an ordinary fit sets."""
        if self._search_one_class:
            # a single label is run as class 0 of two (learners of Boolean functions need two)
            k = max(self.n_classes_, 2)
            try:
                if packed is not None:
                    tree = self._fit_packed(packed[0], packed[1], codes, k, w, schema)
                else:
                    tree = self._fit_encoded(np.ascontiguousarray(Xe), codes, k, w, schema)
            except TreeLearnValueError:
                tree = None  # a learner that cannot run on one class: the attributes stay unset
            if tree is not None and tree.n_leaves == 1:
                if k != self.n_classes_:
                    tree.value = np.ascontiguousarray(tree.value[:, : self.n_classes_])
                return tree
        counts = np.bincount(codes, weights=w, minlength=self.n_classes_)
        tree = Tree.leaf(counts, self.classes_, schema=schema)
        tree.n_node_samples[0] = codes.size
        return tree

    #: run the learner itself on a one-class sample (see ``_fit_one_class``)
    _search_one_class = True

    def _rescale_counts(self, scale: float) -> None:
        """Multiply the fitted counts (trees' ``value``, weighted misclassifications) by ``scale``."""
        seen = set()
        for name, v in list(vars(self).items()):
            if isinstance(v, Tree) and id(v) not in seen:
                seen.add(id(v))
                v.value = v.value * scale
        for name in self._weight_scaled_attributes:
            v = getattr(self, name, None)
            if isinstance(v, float):
                setattr(self, name, v * scale)

    def _fit_packed(self, columns, ones, y, n_classes, sample_weight, schema) -> Tree:  # pragma: no cover
        """For learners with ``_packed_input``: fit on a 0/1 matrix given as packed columns
        ``(n_features, n_words)`` and the number of ones per column."""
        raise NotImplementedError

    def _after_fit(self) -> None:
        """Hook for subclasses (e.g. to record search statistics)."""

    # ------------------------------------------------------------------ predict
    def _encode(self, X):
        check_is_fitted(self, "tree_")
        _as_2d_raw(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.tree_.encode(X)

    def apply(self, X):
        """Index of the leaf each sample reaches."""
        Xe = self._encode(X)  # checks that the estimator is fitted first
        return self.tree_._apply_encoded(Xe)

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

        Uses the tree's ``impurity`` array; a learner that leaves it at zero (it has no impurity
        criterion, e.g. consistent or optimal trees) gets the Gini decrease of the node counts.
        """
        check_is_fitted(self, "tree_")
        t = self.tree_
        imp = np.zeros(t.n_features)
        w = t.value.sum(axis=1)
        node_imp = t.impurity
        if t.node_count > 1 and not np.any(node_imp):
            from treelearn.criteria import GINI

            node_imp = GINI.impurity(t.value)
        for node in np.nonzero(t.children_left >= 0)[0]:
            l, r = t.children_left[node], t.children_right[node]
            imp[t.feature[node]] += w[node] * node_imp[node] - w[l] * node_imp[l] - w[r] * node_imp[r]
        s = imp.sum()
        return imp / s if s > 0 else imp

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
