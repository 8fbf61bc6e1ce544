"""A greedy regression tree pruned by cross-validated cost-complexity (CART's, Breiman et al. 1984).

:class:`PrunedTreeRegressor` grows :class:`~treelearn.GreedyTreeRegressor`'s tree, computes its
weakest-link sequence (scikit-learn's minimal cost-complexity pruning, the one routine of
:mod:`treelearn.tree.weakest_link`), and keeps the α of least held-out squared error over K folds.
"""
from __future__ import annotations

import numbers

import numpy as np

from treelearn._validation import COLUMNS, INT32_MAX, INT64_MAX, RANDOM_STATE, Check, Interval, Options
from treelearn.base import BaseTreeRegressor
from treelearn.learn.pruned.estimator import check_cv, cv_for_rows
from treelearn.learn.greedy.regressor import REGRESSION_CRITERIA, GreedyTreeRegressor, grow_regression
from treelearn.prune.pruners import alpha_grid, cv_choice
from treelearn.tree.tree import Tree
from treelearn.tree.weakest_link import ccp_path, prune_ccp

__all__ = ["PrunedTreeRegressor"]


class PrunedTreeRegressor(BaseTreeRegressor):
    """A greedy regression tree pruned by cost-complexity, α chosen by K-fold cross-validation.

    The tree is :class:`~treelearn.GreedyTreeRegressor`'s with these parameters; its
    cost-complexity path (the α of every weakest-link step, scikit-learn's ``ccp_alpha``) gives
    Breiman's representatives (geometric means of consecutive α); each of ``cv`` folds grows its
    tree, prunes it at every representative and sums its held-out weighted squared error; the α
    of least total error wins (ties: the larger α, the smaller tree), and the full tree is pruned
    at it.

    Why only cost-complexity (``pruning="ccp"``): the bound pruning of paper 002, which
    :class:`~treelearn.PrunedTreeClassifier` offers, bounds the 0-1 loss of a classifier through
    the partitioning functions of tree classes (the number of ways a tree shape can label a
    sample); a squared error is not a 0-1 loss, so that bound says nothing about a regression tree.

    Parameters
    ----------
    pruning : {"ccp"}
    criterion, max_depth, max_leaves, min_samples_leaf, max_thresholds, categorical, n_jobs
        the grown tree's, as :class:`~treelearn.GreedyTreeRegressor`'s.
    cv : int >= 2, a CV splitter or an iterable of (train, test) splits, default 5
        an int: that many shuffled folds (``random_state``; at most one per row).
    random_state : None or a seed of the folds.

    Attributes
    ----------
    tree_ : the pruned Tree; unpruned_tree_ ; ccp_alpha_ : the chosen α; ccp_alphas_ : the path.
    """

    _parameter_constraints = {
        "pruning": [Options("ccp")],
        "criterion": [Options(*REGRESSION_CRITERIA)],
        "max_depth": [Interval(numbers.Integral, 0, INT32_MAX), None],
        "max_leaves": [Interval(numbers.Integral, 1, INT64_MAX), None],
        "min_samples_leaf": [Interval(numbers.Integral, 1, INT64_MAX)],
        "max_thresholds": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "cv": [Interval(numbers.Integral, 2, INT32_MAX),
               Check(check_cv, "a CV splitter or an iterable of (train, test) splits")],
        "random_state": RANDOM_STATE,
        "categorical": [COLUMNS, None],
        "n_jobs": [Interval(numbers.Integral, 1, INT32_MAX), Interval(numbers.Integral, -INT32_MAX, -1), None],
    }

    def __init__(self, pruning="ccp", criterion="squared_error", max_depth=None, max_leaves=None, min_samples_leaf=1,
                 max_thresholds=None, cv=5, random_state=None, categorical=None, n_jobs=None):
        self.pruning = pruning
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.max_thresholds = max_thresholds
        self.cv = cv
        self.random_state = random_state
        self.categorical = categorical
        self.n_jobs = n_jobs

    def _grower(self) -> GreedyTreeRegressor:
        return GreedyTreeRegressor(criterion=self.criterion, max_depth=self.max_depth, max_leaves=self.max_leaves,
                                   min_samples_leaf=self.min_samples_leaf, max_thresholds=self.max_thresholds,
                                   categorical=self.categorical, n_jobs=self.n_jobs)

    def _fit(self, sample, params) -> Tree:
        Xe, y, w = sample.encoded, sample.y, sample.weights
        params = self._grower().grow_params(sample.n_samples)
        tree = grow_regression(Xe, y, w, sample.schema, params, self.criterion)
        self.unpruned_tree_ = tree
        alphas, _ = ccp_path(tree)
        self.ccp_alphas_ = alphas
        grid = alpha_grid(alphas)
        cv = cv_for_rows(self.cv, sample.rows, sample.n_input_rows)
        if isinstance(cv, numbers.Integral):
            from sklearn.model_selection import KFold

            k = min(int(cv), len(y))
            cv = None if k < 2 else KFold(n_splits=k, shuffle=True, random_state=self.random_state)
        if hasattr(cv, "split"):
            cv = cv.split(np.zeros((len(y), 1)), y)
        self.ccp_alpha_ = float(grid[0]) if cv is None else self._cv_alpha(Xe, y, w, sample.schema, params, grid, cv)
        return prune_ccp(tree, self.ccp_alpha_)

    def _cv_alpha(self, Xe, y, w, schema, params, grid, folds) -> float:
        """The α of ``grid`` of least total held-out weighted squared error over the folds."""
        errs = np.zeros(len(grid))
        for tr, te in folds:
            tr, te = np.asarray(tr), np.asarray(te)
            grown = grow_regression(Xe[tr], y[tr], w[tr], schema, params, self.criterion)
            for i, a in enumerate(grid):
                t = prune_ccp(grown, float(a))
                err = (t.value[t.apply_encoded(Xe[te])] - y[te].reshape(len(te), -1)) ** 2
                errs[i] += float(np.sum(w[te] * err.mean(axis=1)))
        return cv_choice(grid, errs)
