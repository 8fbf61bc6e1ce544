"""The tree's size and depth chosen from the error-size fronts: by paper 002's bound (no
cross-validation) or by K-fold cross-validation over the fronts.

``select="bound"`` (:class:`~treelearn.TopKTreeClassifier`, :class:`~treelearn.OptimalTreeClassifier`)
searches one front per depth d = 1..``max_depth`` (every leaf budget 1..min(B, 2^d), B =
``max_leaves`` or 2^max_depth; all on the binary features of the one binarization of the fit) and
keeps the tree whose Shawe-Taylor bound (002 Eq. 8, the loose partitioning bound of its structure,
δ = 0.05: :func:`treelearn.prune.pruners.tree_bound`, the bound :class:`~treelearn.PrunedTreeClassifier`
prunes by) is smallest; ties go to the fewest leaves, then the shallower front.

Why every depth and not only the deepest front: the bound of a tree depends on its own structure
(002 §§3-4: the partitioning function of the tree's shape, its prior p_d, and its training errors),
not on the depth limit it was searched under. The front at depth h keeps, per leaf count, only the
tree of fewest training errors among depth <= h; a shallower tree of the same leaf count has
another shape (a balanced 4-leaf tree is not a 3-deep chain of 4 leaves) whose partitioning bound
may be smaller, and it can win with a few more errors. So the deepest front's trees do not cover
the (depth, leaves) choice; the shallower fronts are searched too. Their cost is small beside the
deepest one's (a budget b under depth d is the subproblem of depth min(d, b - 1), and a front's
cost grows fast with the depth).

``select="cv"`` searches the same fronts in every fold (:data:`CV_FOLDS` stratified shuffled folds
seeded by ``random_state``), scores every (depth, budget) tree on the held-out rows and keeps the
full sample's tree of the (depth, budget) of smallest held-out (weighted) error (ties: the smaller
budget, then the shallower depth): the same choice as fitting every (max_depth, max_leaves)
separately in every fold, at the cost of one set of fronts per fold (each with the estimator's
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


def fit_front(est, X, y, sample_weight=None, *, all_depths=False):
    """Fit ``est`` once with the search's front on (its tree: the largest budget's) and return the
    :func:`~treelearn.learn.topk.front.front_bunch` of every budget 1..B (also ``est.front_``).
    ``all_depths``: also the fronts of the depths 1..max_depth - 1 on the same binary features, as
    ``est.fronts_`` (depth -> front, the deepest included)."""
    from treelearn.base import BaseTreeClassifier

    if est.ccp_alpha > 0:
        raise TreeLearnValueError("the error-size front takes no ccp_alpha: its ccp_alphas are the front's "
                                  "breakpoints")
    forget_selection(est)  # (an earlier select fit's: this fit's tree is the largest budget's)
    budget, collected = est.max_leaves, {}
    depth = int(est.max_depth)
    est._front = collected  # (filled by the search: its points and the sample's weight)
    if all_depths:
        collected["depths"] = list(range(1, depth))
    try:
        if budget is None and est.max_leaf_nodes is None:
            est.max_leaves = default_budget(est.max_depth)
        BaseTreeClassifier.fit(est, X, y, sample_weight)  # (not est.fit: that would select again)
        fronts = {depth: _front_of(est, collected.get("points"), collected, depth)}
        for d, points in collected.get("by_depth", {}).items():
            fronts[d] = _front_of(est, points, collected, d)
        if collected.get("timed_out"):  # (a shallower front stopped at the time limit)
            est.timed_out_, est.is_optimal_ = True, False
        est.front_ = fronts[depth]
        if all_depths:
            est.fronts_ = dict(sorted(fronts.items()))
    finally:
        est.max_leaves, est._front = budget, None
    return est.front_


def shallow_fronts(front: dict, search, opts: dict, clock, to_tree) -> None:
    """``select``'s fronts at the shallower depths ``front["depths"]``, searched inside the fit
    (``TopKTreeClassifier._fit_data``) on its binary features (the greedy thresholds of the
    deepest greedy tree, whose top is every shallower greedy tree): ``search(max_depth=...)`` runs
    :func:`~treelearn.learn.topk.kernel.topk_search` on them (``opts``: the sparse options,
    :func:`~treelearn.learn.topk.sparse.search_options`); ``front["by_depth"][d]`` = the (tree,
    error) of budgets 1..min(B, 2^d) (``to_tree``: a result's Tree), ``front["timed_out"]`` when
    one of them stopped at the time limit."""
    by_depth = front.setdefault("by_depth", {})
    for depth in front["depths"]:
        res = search(max_depth=depth, time_limit=clock.remaining(),
                     **{**opts, "max_leaves": min(opts["max_leaves"], 2 ** depth)}, front=True)
        res = res if isinstance(res, list) else [res]
        front["timed_out"] = front.get("timed_out", False) or any(bool(r["timed_out"]) for r in res)
        by_depth[depth] = [(to_tree(r), float(r["error"])) for r in res]


def _front_of(est, points, collected, depth: int):
    """The front Bunch of the search's ``points`` at ``depth`` ((tree, error) per budget; None: no
    search ran, one class or out of time: the fit's tree alone), its depth limit as ``max_depth``."""
    if not points:
        front = front_bunch([est.tree_], [est.training_error_])
    else:
        scale = float(est.tree_.value[0].sum()) / collected["total"]  # (the fit's weight scale)
        trees, errors = [t.simplify() for t, _ in points], [e * scale for _, e in points]
        for t in trees:
            t.value, t.classes = t.value[:, :len(est.classes_)] * scale, est.classes_  # (one class: 1)
        front = front_bunch(trees, errors)
    front.max_depth = depth
    return front


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


def bound_scores(fronts, n_classes: int) -> dict:
    """002's bound (:func:`~treelearn.prune.pruners.tree_bound`, PrunedTreeClassifier's settings)
    of every budget's tree of every front (depth -> array over budgets)."""
    from treelearn.prune.pruners import tree_bound

    return {d: np.array([tree_bound(t, n_classes=n_classes) for t in f.trees]) for d, f in fronts.items()}


def cv_scores(est, X, y, sample_weight, budgets: dict) -> dict:
    """Held-out weighted error rate of every (depth, budget): ``budgets`` maps each depth to its
    front's number of budgets; one set of fronts per fold (depth -> array over budgets)."""
    from sklearn.base import clone
    from sklearn.utils import _safe_indexing

    from treelearn.prune.pruners import cv_int_folds

    y = np.asarray(y)
    codes = np.unique(y, return_inverse=True)[1].ravel()
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    errs = {d: np.zeros(n) for d, n in budgets.items()}
    folds = cv_int_folds(codes, CV_FOLDS, est.random_state)
    for tr, te in folds or ():
        fold = clone(est).set_params(select=None, max_leaves=max(budgets.values()), max_leaf_nodes=None, verbose=0)
        fit_front(fold, _safe_indexing(X, tr), y[tr], None if sample_weight is None else w[tr], all_depths=True)
        Xte = _safe_indexing(X, te)
        for d, err in errs.items():
            trees = fold.fronts_[d].trees
            for b in range(len(err)):  # (a fold's front may end early: one class, out of time)
                err[b] += float(np.sum(w[te] * (trees[min(b, len(trees) - 1)].predict(Xte) != y[te])))
    return {d: e / max(float(w.sum()), 1e-300) for d, e in errs.items()}


def choose(fronts: dict, scores: dict):
    """The (depth, budget index) of least score (relative tolerance 1e-12); ties: the fewest
    leaves, then the shallower depth, then the smaller budget."""
    low = min(float(np.min(s)) for s in scores.values())
    tol = 1e-12 * max(1.0, abs(low))
    return min(((int(fronts[d].n_leaves[b]), d, b) for d, s in scores.items() for b in np.flatnonzero(s <= low + tol)))[1:]


def fit_selected(est, X, y, sample_weight=None):
    """``est.fit`` with ``select`` set (its parameters checked): the fronts of every depth, the
    chosen tree as ``tree_`` (its training error as ``training_error_``), ``fronts_`` (depth ->
    front), ``front_`` (the front of the chosen depth limit, ``front_.max_depth``: the chosen tree
    is one of its points), ``selected_leaves_``, ``selected_depth_`` (the chosen tree's own depth,
    <= ``front_.max_depth``) and ``selection_scores_`` (depth -> every budget's score)."""
    from treelearn.base import is_dask_collection

    if is_dask_collection(X) or is_dask_collection(y):
        raise TreeLearnValueError(f"select={est.select!r} takes in-memory X and y (compute() the Dask collections)")
    fit_front(est, X, y, sample_weight, all_depths=True)
    fronts = est.fronts_
    if est.select == "bound":
        scores = bound_scores(fronts, len(est.classes_))
    else:
        scores = cv_scores(est, X, y, sample_weight, {d: len(f.trees) for d, f in fronts.items()})
    d, b = choose(fronts, scores)
    est.front_ = fronts[d]  # (the front the chosen tree is a point of)
    est.tree_, est.training_error_ = fronts[d].trees[b], float(fronts[d].errors[b])
    est.selected_leaves_, est.selected_depth_ = int(fronts[d].n_leaves[b]), int(est.tree_.depth)
    est.selection_scores_ = scores
    return est


def forget_selection(est) -> None:
    """Drop the attributes of an earlier ``select`` fit."""
    for name in ("front_", "fronts_", "selected_leaves_", "selected_depth_", "selection_scores_"):
        est.__dict__.pop(name, None)
