"""The tree's size chosen from the error-size front: by paper 002's bound (no cross-validation) or
by K-fold cross-validation over the front.

``select="bound"`` (:class:`~treelearn.TopKTreeClassifier`, :class:`~treelearn.OptimalTreeClassifier`)
searches the front once (every leaf budget 1..B, B = ``max_leaves`` or 2^max_depth) and keeps the
tree whose Shawe-Taylor bound (002 Eq. 8, the loose partitioning bound of its structure, δ = 0.05:
:func:`treelearn.prune.pruners.tree_bound`, the bound :class:`~treelearn.PrunedTreeClassifier`
prunes by) is smallest; ties go to the fewest leaves. ``select="cv"`` searches one front per fold
(:data:`CV_FOLDS` stratified shuffled folds seeded by ``random_state``), scores every budget's tree
on the held-out rows and keeps the full sample's tree of the budget of smallest held-out (weighted)
error (ties: the smaller budget): the same choice as fitting every budget separately with
``max_leaves`` in every fold, at the cost of one front per fold (each with the estimator's
``time_limit``).
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import Options, TreeLearnValueError
from treelearn.learn.topk.front import front_bunch

#: the ``select`` parameter's constraint
SELECT_CONSTRAINTS = {"select": [Options("bound", "cv"), None]}
#: folds of ``select="cv"``
CV_FOLDS = 5


def default_budget(max_depth) -> int:
    """The front's largest leaf budget when none is given: every tree of the depth (2^max_depth,
    at most 1024)."""
    return 2 ** min(int(max_depth), 10)


def fit_front(est, X, y, sample_weight=None):
    """Fit ``est`` once with the search's front on (its tree: the largest budget's) and return the
    :func:`~treelearn.learn.topk.front.front_bunch` of every budget 1..B (also ``est.front_``)."""
    from treelearn.base import BaseTreeClassifier

    if est.ccp_alpha > 0:
        raise TreeLearnValueError("the error-size front takes no ccp_alpha: its ccp_alphas are the front's "
                                  "breakpoints")
    forget_selection(est)  # (an earlier select fit's: this fit's tree is the largest budget's)
    budget, collected = est.max_leaves, {}
    est._front = collected  # (filled by the search: its points and the sample's weight)
    try:
        if budget is None and est.max_leaf_nodes is None:
            est.max_leaves = default_budget(est.max_depth)
        BaseTreeClassifier.fit(est, X, y, sample_weight)  # (not est.fit: that would select again)
        trees, errors = [est.tree_], [est.training_error_]  # (no search: one class, or out of time)
        if collected:
            scale = float(est.tree_.value[0].sum()) / collected["total"]  # (the fit's weight scale)
            points = collected["points"]
            trees, errors = [t.simplify() for t, _ in points], [e * scale for _, e in points]
            for t in trees:
                t.value, t.classes = t.value[:, :len(est.classes_)] * scale, est.classes_  # (one class: 1)
        est.front_ = front_bunch(trees, errors)
    finally:
        est.max_leaves, est._front = budget, None
    return est.front_


def check_select(est) -> None:
    """The settings ``select`` cannot go with, named."""
    if est.select is None:
        return
    if est.ccp_alpha > 0:
        raise TreeLearnValueError(f"select={est.select!r} with ccp_alpha > 0: select chooses the size, ccp_alpha "
                                  "fixes its price; set one of them")
    if getattr(est, "solver", "auto") == "continuous":
        raise TreeLearnValueError(f"select={est.select!r} needs solver='binary' or 'auto': the front is searched by "
                                  "the binary search")
    if est.monotonic_cst is not None:
        raise TreeLearnValueError(f"select={est.select!r} with monotonic_cst is not supported: set one of them")


def bound_scores(front, n_classes: int) -> np.ndarray:
    """002's bound (:func:`~treelearn.prune.pruners.tree_bound`, PrunedTreeClassifier's settings)
    of every budget's tree."""
    from treelearn.prune.pruners import tree_bound

    return np.array([tree_bound(t, n_classes=n_classes) for t in front.trees])


def cv_scores(est, X, y, sample_weight, budgets: int) -> np.ndarray:
    """Held-out weighted error rate of every budget 1..``budgets``, one front per fold."""
    from sklearn.base import clone
    from sklearn.utils import _safe_indexing

    from treelearn.prune.pruners import cv_int_folds

    y = np.asarray(y)
    codes = np.unique(y, return_inverse=True)[1].ravel()
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    errs = np.zeros(budgets)
    folds = cv_int_folds(codes, CV_FOLDS, est.random_state)
    for tr, te in folds or ():
        fold = clone(est).set_params(select=None, max_leaves=budgets, max_leaf_nodes=None, verbose=0)
        front = fit_front(fold, _safe_indexing(X, tr), y[tr], None if sample_weight is None else w[tr])
        Xte = _safe_indexing(X, te)
        for b, tree in enumerate(front.trees):
            errs[b] += float(np.sum(w[te] * (tree.predict(Xte) != y[te])))
    return errs / max(float(w.sum()), 1e-300)


def fit_selected(est, X, y, sample_weight=None):
    """``est.fit`` with ``select`` set (its parameters checked): the front, the chosen tree as ``tree_`` (its training error as
    ``training_error_``), ``front_``, ``selected_leaves_`` and ``selection_scores_``."""
    from treelearn.base import is_dask_collection

    if is_dask_collection(X) or is_dask_collection(y):
        raise TreeLearnValueError(f"select={est.select!r} takes in-memory X and y (compute() the Dask collections)")
    front = fit_front(est, X, y, sample_weight)
    if est.select == "bound":
        scores = bound_scores(front, len(est.classes_))
    else:
        scores = cv_scores(est, X, y, sample_weight, len(front.trees))
    i = int(np.flatnonzero(scores <= scores.min() + 1e-12 * max(1.0, abs(scores.min())))[0])
    est.tree_, est.training_error_ = front.trees[i], float(front.errors[i])
    est.selected_leaves_, est.selection_scores_ = int(front.n_leaves[i]), scores
    return est


def forget_selection(est) -> None:
    """Drop the attributes of an earlier ``select`` fit."""
    for name in ("front_", "selected_leaves_", "selection_scores_"):
        est.__dict__.pop(name, None)

