"""Pruning a fitted Tree: by the Shawe-Taylor bound (002 §6.1), CART cost-complexity, M-CART (§6.2).

* :func:`prune_with_bound` — repeatedly replace by a leaf (labelled by the majority of its
  training examples, which ``Tree.value`` holds) the internal node whose removal gives the
  smallest bound ε of Eq. (8), as long as that bound is <= the current one. The default runs a
  compiled log-space implementation of the loose bound that evaluates every candidate with a
  cheap *lower* bound (the siblings' values at the current tree's sample excess, valid because the
  loose recursion is nondecreasing in it) and the exact value only for the few candidates whose
  lower bound can still beat the best; ``method="exact"`` is the plain algorithm on exact integers.
* :func:`cost_complexity_pruning_path` / :func:`prune_cost_complexity` — the weakest-link sequence
  of CART (Breiman et al. 1984, ch. 3) with misclassification cost R(T) and complexity L (CART) or
  (d/m) ln(m/d), d = L ln(L l) (M-CART); :func:`select_alpha_cv` picks α by K-fold CV.

The estimator that grows a greedy tree and prunes it with one of these is
:class:`treelearn.learn.pruned.estimator.PrunedTreeClassifier` (the pruned room).
"""
from __future__ import annotations

import math
import numbers
import time

import numpy as np
from sklearn.utils import Bunch

from treelearn._limits import FitClock, FitTimeout
from treelearn._validation import TreeLearnValueError, check_float_param, check_int_param
from treelearn.prune.bounds import (
    DEFAULT_R, LEAF, TightEvaluator, TreeShape, falling_factorial, as_shape, log_growth_function_upper_bound,
    log_p_wedderburn, log_q_geometric, stirling2,
)
from treelearn.tree.tree import Tree, leaf_errors
from treelearn.tree.weakest_link import LINK_TIE, weakest_link_path

#: held-out error totals of the CV closer than this tie (the larger α wins)
CV_ERROR_TIE = 1e-12

__all__ = [
    "tree_bound", "prune_with_bound", "cost_complexity_pruning_path", "prune_cost_complexity",
    "select_alpha_cv", "cv_int_folds", "alpha_grid", "select_from_path", "cv_choice",
]


# ====================================================================== helpers
def _tree_stats(tree: Tree):
    """(m, per-node errors-as-leaf scaled to example counts)."""
    m = int(tree.n_node_samples[0])
    total_w = float(tree.value[0].sum())
    scale = m / total_w if total_w > 0 else 1.0
    leaf_err = leaf_errors(tree.value) * scale
    return m, leaf_err


def _subtree_error(tree: Tree, leaf_err: np.ndarray, cut: set) -> float:
    err, stack = 0.0, [0]
    left, right = tree.children_left, tree.children_right
    while stack:
        v = stack.pop()
        if left[v] < 0 or v in cut:
            err += leaf_err[v]
        else:
            stack.append(int(left[v]))
            stack.append(int(right[v]))
    return err


def _shape_with_cuts(tree: Tree, cut: set) -> TreeShape:
    left, right = tree.children_left, tree.children_right
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        if left[v] >= 0 and v not in cut:
            stack.append(int(left[v]))
            stack.append(int(right[v]))
    shapes = {}
    for v in reversed(order):
        shapes[v] = LEAF if (left[v] < 0 or v in cut) else TreeShape.node(shapes[int(left[v])], shapes[int(right[v])])
    return shapes[0]


def tree_bound(tree: Tree, *, delta: float = 0.05, r: float = DEFAULT_R, loose: bool = True,
               n_features: int | None = None, n_classes: int | None = None, log_q_k=None, log_p_d=None) -> float:
    """The Shawe-Taylor bound ε (Eq. 8) of a fitted Tree on its own training sample.

    m = training examples at the root, k = training misclassifications (weighted counts rescaled
    to m), l = the tree's number of features, n = its number of classes.
    """
    from treelearn.prune.bounds import shawe_taylor_bound

    m, leaf_err = _tree_stats(tree)
    k = float(leaf_err[tree.children_left < 0].sum())
    l = tree.n_features if n_features is None else n_features
    n = tree.n_classes if n_classes is None else n_classes
    return shawe_taylor_bound(as_shape(tree), k, m, n, l, delta=delta, r=r, loose=loose,
                              log_q_k=log_q_k, log_p_d=log_p_d)


# ====================================================================== bound pruning
def _prune_with_bound_exact(tree: Tree, m, leaf_err, l, n, delta, lq, lp, loose, max_steps=None, clock=None):
    """The plain algorithm of §6.1 on exact integers (reference; also the tight-bound path).
    ``clock`` (a :class:`FitClock`): past its deadline the pruning stops at the best tree so far
    (``clock.timed_out`` is set; with no bound computed yet, the unpruned tree and no history)."""
    try:
        return _prune_exact_steps(tree, m, leaf_err, l, n, delta, lq, lp, loose, max_steps, clock)
    except FitTimeout as stop:
        clock.timed_out = True
        return stop.args[0] if stop.args else (set(), [])


def _prune_exact_steps(tree, m, leaf_err, l, n, delta, lq, lp, loose, max_steps, clock):
    left = tree.children_left
    cut: set[int] = set()
    const = math.log(4.0) - math.log(delta)
    growth_memo: dict[TreeShape, float] = {}
    check = None if clock is None or clock.time_limit is None else clock.check
    evaluator = None if loose else TightEvaluator(2 * m, l, max(1, min(n, tree.n_leaves)), check=check)

    def bound_of(cuts):
        shape = _shape_with_cuts(tree, cuts)
        g = growth_memo.get(shape)
        if g is None:
            if loose:
                g = log_growth_function_upper_bound(shape, 2 * m, n, l, loose=True)
            else:
                g = evaluator.log_growth(shape, n)
            growth_memo[shape] = g
        k = float(_subtree_error(tree, leaf_err, cuts))
        return (2.0 * k + 4.0 * (const + g - lq(k) - lp(shape))) / m

    current = bound_of(cut)
    history = [current]
    steps = 0
    while True:
        alive, stack = [], [0]
        while stack:
            v = stack.pop()
            if left[v] >= 0 and v not in cut:
                alive.append(v)
                stack.append(int(tree.children_left[v]))
                stack.append(int(tree.children_right[v]))
        if not alive:
            break
        best, best_v = math.inf, -1
        for v in sorted(alive):
            if check is not None:
                try:
                    check()
                except FitTimeout:
                    raise FitTimeout((cut, [float(b) for b in history])) from None
            try:
                b = bound_of(cut | {v})
            except FitTimeout:  # (inside the evaluation): the pruning so far
                raise FitTimeout((cut, [float(b) for b in history])) from None
            if b < best:
                best, best_v = b, v
        if best <= current:
            # drop the cut nodes below the new one (they are inside the removed subtree)
            sub = set(tree.subtree_nodes(best_v))
            cut = {u for u in cut if u not in sub} | {best_v}
            current = best
            history.append(current)
            steps += 1
            if max_steps is not None and steps >= max_steps:
                break
        else:
            break
    return cut, [float(b) for b in history]


def _log_stirling_table(M: int, C: int, m_min: int = 0) -> np.ndarray:
    """log S(m, c) for m = m_min..M, c = 0..C (-inf where S = 0 and in the rows below m_min), float64.

    Exact integers up to m = 300; beyond, c^m/c! times the (tiny) inclusion-exclusion correction."""
    tab = np.full((M + 1, C + 1), -np.inf)
    exact_upto = min(M, 300)
    lo = max(m_min, exact_upto + 1)
    for c in range(1, C + 1):
        for mm in range(max(c, m_min), exact_upto + 1):
            tab[mm, c] = math.log(stirling2(mm, c))
        if M >= lo:
            ms = np.arange(lo, M + 1, dtype=np.float64)
            if c == 1:
                tab[lo:, c] = 0.0
                continue
            # S(m, c) = c^m / c! * (1 + Σ_{j>=1} (-1)^j C(c, j) ((c-j)/c)^m); the tail is tiny here
            corr = np.zeros_like(ms)
            for j in range(1, c):
                corr += (-1) ** j * math.comb(c, j) * np.exp(ms * math.log((c - j) / c))
            tab[lo:, c] = ms * math.log(c) - math.lgamma(c + 1) + np.log1p(corr)
    return tab


def _prune_with_bound_fast(tree: Tree, m, leaf_err, l, n, delta, r):
    from treelearn.prune import _bound_prune

    L0 = tree.n_leaves
    C = max(1, min(n, L0))
    M = 2 * m
    # the loose recursion evaluates a node with L leaves at m = L + (M - L_root) > M - L0 only
    log_s = _log_stirling_table(M, C, m_min=M - L0 + 1)
    log_fall = np.array([-np.inf] + [math.log(falling_factorial(n, a)) for a in range(1, C + 1)])
    log_p = np.array([0.0] + [_log_p_leaves(L) for L in range(1, L0 + 1)])
    cut, history = _bound_prune.prune_loose(
        np.ascontiguousarray(tree.children_left, dtype=np.int64),
        np.ascontiguousarray(tree.children_right, dtype=np.int64),
        np.ascontiguousarray(leaf_err, dtype=np.float64),
        int(m), int(l), int(C), float(delta), float(math.log(r)), float(math.log1p(-r)),
        np.ascontiguousarray(log_s.ravel()), log_fall, log_p)
    return set(int(v) for v in cut), list(history)


def _log_p_leaves(L: int) -> float:
    from treelearn.prune.bounds import log_wedderburn_etherington

    return math.log(6.0) - 2.0 * math.log(math.pi) - 2.0 * math.log(L) - log_wedderburn_etherington(L)


def prune_with_bound(tree: Tree, *, delta: float = 0.05, r: float = DEFAULT_R, loose: bool = True,
                     n_features: int | None = None, n_classes: int | None = None, log_q_k=None, log_p_d=None,
                     method: str = "auto", return_info: bool = False, time_limit: float | None = None):
    """Prune a fitted Tree by minimising the Shawe-Taylor bound (002 §6.1, Algorithm 3).

    At each step every internal node's subtree is tried as a leaf (labelled by the majority of its
    training examples); the tree of smallest bound is kept if its bound is <= the current one
    (ties between candidates go to the smallest node id); repeat until no prune lowers the bound.

    Parameters
    ----------
    tree : a fitted Tree (its ``value`` and ``n_node_samples`` are the training statistics).
    delta, r : confidence and the error prior q_k = (1 - r) r^k (the paper: 0.05 and 2^-13.7).
    loose : the §6.2 loose partitioning bound (the paper's choice) or the tight Eq. (7).
    n_features, n_classes : l and n (default: the tree's).
    log_q_k, log_p_d : replace the priors (callables returning natural logs; see shawe_taylor_bound).
    method : "auto" (compiled log-space search for the loose bound with the default priors, exact
        integers otherwise), "fast" or "exact".
    return_info : also return a Bunch(bounds=[...], pruned_nodes=set, time=seconds, method=...,
        timed_out=bool).
    time_limit : None, or seconds after which the exact pruning (the tight bound, or priors of
        one's own) stops at the best pruning found so far (the unpruned tree, with no bound, when
        not even its bound was computed); the compiled loose search is polynomial and not clocked.

    Returns
    -------
    The pruned Tree (a pruning of ``tree``: the same nodes above its new leaves), and the info.
    """
    if not isinstance(tree, Tree):
        raise TreeLearnValueError(f"prune_with_bound needs a fitted Tree, got {type(tree).__name__}")
    delta = check_float_param("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    r = check_float_param("r", r, low=0.0, high=1.0, low_open=True, high_open=True)
    if method not in ("auto", "fast", "exact"):
        raise TreeLearnValueError(f"method must be 'auto', 'fast' or 'exact', got {method!r}")
    t0 = time.perf_counter()
    clock = FitClock(None if time_limit is None else check_float_param("time_limit", time_limit, low=0.0), t0)
    m, leaf_err = _tree_stats(tree)
    l = tree.n_features if n_features is None else check_int_param("n_features", n_features, low=1)
    n = tree.n_classes if n_classes is None else check_int_param("n_classes", n_classes, low=1)
    can_fast = loose and log_q_k is None and log_p_d is None and m >= 1
    if method == "fast" and not can_fast:
        raise TreeLearnValueError("method='fast' needs loose=True and the default priors")
    use_fast = can_fast and method != "exact"
    if tree.n_leaves == 1:
        cut, history = set(), [tree_bound(tree, delta=delta, r=r, loose=loose, n_features=l, n_classes=n,
                                          log_q_k=log_q_k, log_p_d=log_p_d)]
    elif use_fast:
        cut, history = _prune_with_bound_fast(tree, m, leaf_err, l, n, delta, r)
    else:
        lq = log_q_geometric(r) if log_q_k is None else log_q_k
        lp = log_p_wedderburn if log_p_d is None else log_p_d
        cut, history = _prune_with_bound_exact(tree, m, leaf_err, l, n, delta, lq, lp, loose, clock=clock)
    pruned = tree.prune(cut) if cut else tree.copy()
    if return_info:
        return pruned, Bunch(bounds=history, pruned_nodes=cut, time=time.perf_counter() - t0,
                             method="fast" if use_fast else "exact", timed_out=clock.timed_out)
    return pruned


# ====================================================================== cost-complexity pruning
def _complexity_fn(kind: str, m: int, l: int):
    if kind == "leaves":
        return lambda L: float(L)
    if kind == "mcart":
        def f(L):
            d = L * math.log(L * l) if L * l > 1 else 0.0
            if d <= 0:
                return 0.0
            return (d / m) * math.log(m / d)
        return f
    raise TreeLearnValueError(f"complexity must be 'leaves' (CART) or 'mcart', got {kind!r}")


def cost_complexity_pruning_path(tree: Tree, complexity: str = "leaves", n_features: int | None = None) -> Bunch:
    """The weakest-link pruning sequence of a fitted Tree (Breiman et al. 1984, ch. 3).

    R(T) is the (weighted) training misclassification rate. With ``complexity="leaves"`` (CART),
    each step collapses every internal node t minimising g(t) = (R(t) − R(T_t)) / (|T_t| − 1), the
    α at which that happens; with ``complexity="mcart"`` the complexity of a tree is
    (d/m) ln(m/d), d = L ln(L l) (002 §6.2), not additive over leaves, so g(t) = ΔR / ΔC for the
    whole tree (candidates whose removal does not lower C get g = +inf, and when all do, the one
    of smallest ΔR is collapsed at α = +inf so that the sequence reaches the root).

    Returns a Bunch like scikit-learn's: ``ccp_alphas`` (increasing), ``impurities`` (R of each
    tree), ``complexities``, ``n_leaves``, ``pruned_nodes`` (the set of collapsed nodes of each tree).
    """
    if not isinstance(tree, Tree):
        raise TreeLearnValueError(f"cost_complexity_pruning_path needs a fitted Tree, got {type(tree).__name__}")
    left, right = tree.children_left, tree.children_right
    total = float(tree.value[0].sum())
    if total <= 0:
        total = 1.0
    leaf_r = leaf_errors(tree.value) / total
    m = int(tree.n_node_samples[0])
    l = tree.n_features if n_features is None else n_features
    cfun = _complexity_fn(complexity, m, l)
    L0 = tree.n_leaves
    # CART's complexity (the leaves) is additive: every tie of the weakest link is collapsed at
    # once; M-CART's is not: one node per step (the lowest id among the ties)
    comp = None if complexity == "leaves" else np.array([0.0] + [cfun(L) for L in range(1, L0 + 1)])
    path = weakest_link_path(tree, leaf_r, complexity=comp, all_ties=complexity == "leaves", tol=LINK_TIE)
    R = leaf_r.copy()  # the unpruned tree's risk, summed as the routine sums it (children first)
    for v in range(tree.node_count - 1, -1, -1):
        if left[v] >= 0:
            R[v] = R[left[v]] + R[right[v]]
    alphas = [0.0] + np.maximum.accumulate(np.maximum(path.g_min, 0.0)).tolist()
    leaves = [L0] + path.n_leaves.tolist()
    return Bunch(ccp_alphas=np.array(alphas), impurities=np.array([float(R[0])] + path.risk.tolist()),
                 complexities=np.array([cfun(int(L)) for L in leaves]), n_leaves=np.array(leaves),
                 pruned_nodes=[path.cut(s) for s in range(-1, path.g_min.size)], complexity=complexity)


def select_from_path(path: Bunch, alpha: float) -> int:
    """Index of the tree of the sequence minimising R + α C (ties: the smaller tree)."""
    if not np.isfinite(alpha):  # only the complexity counts
        obj = np.asarray(path.complexities, dtype=float)
    else:
        obj = path.impurities + alpha * path.complexities
    best = np.min(obj)
    idx = np.nonzero(obj <= best + LINK_TIE * max(1.0, abs(best)))[0]
    return int(idx[-1])


def prune_cost_complexity(tree: Tree, alpha: float, complexity: str = "leaves", n_features: int | None = None,
                          path: Bunch | None = None) -> Tree:
    """The subtree of the weakest-link sequence minimising R(T) + α·C(T)."""
    if path is None:
        path = cost_complexity_pruning_path(tree, complexity, n_features)
    i = select_from_path(path, alpha)
    cut = path.pruned_nodes[i]
    return tree.prune(cut) if cut else tree.copy()


def alpha_grid(alphas: np.ndarray) -> np.ndarray:
    """Breiman's representatives: geometric means of consecutive α of the sequence."""
    a = np.asarray(alphas, dtype=float)
    out = []
    for i in range(len(a)):
        if i + 1 < len(a) and np.isfinite(a[i + 1]):
            out.append(math.sqrt(max(a[i], 0.0) * a[i + 1]) if a[i] > 0 else a[i])
        else:
            out.append(a[i])
    return np.unique(np.array(out))


def select_alpha_cv(grow, Xe, y, w, path: Bunch, *, complexity="leaves", n_features=None, cv=10,
                    random_state=None, clock=None) -> float:
    """α of the weakest-link sequence chosen by K-fold CV on the training sample.

    ``grow(Xe, y, w) -> Tree`` grows the tree of a fold. For every representative α of the full
    tree's sequence, each fold's tree is pruned at α and scored on its held-out part; the α of
    smallest total (weighted) held-out error wins (ties: the larger α, the smaller tree).
    ``clock`` (a :class:`FitClock`): past its deadline no further fold is grown and the folds
    scored so far choose (none: the smallest α), with ``clock.timed_out`` set.
    """
    grid = alpha_grid(path.ccp_alphas)
    if isinstance(cv, numbers.Integral):
        folds = cv_int_folds(y, cv, random_state)
        if folds is None:
            return float(grid[0])
    elif hasattr(cv, "split"):  # a scikit-learn splitter
        folds = cv.split(Xe, y)
    else:  # an iterable of (train, test) index arrays
        folds = list(cv)
    errs = np.zeros(len(grid))
    for tr, te in folds:
        if clock is not None and clock.expired():
            clock.timed_out = True
            break
        t = grow(Xe[tr], y[tr], w[tr])
        p = cost_complexity_pruning_path(t, complexity, n_features)
        leaves_te = None
        for gi, a in enumerate(grid):
            i = select_from_path(p, a)
            cut = p.pruned_nodes[i]
            pt = t.prune(cut) if cut else t
            leaves_te = pt.apply_encoded(Xe[te])
            pred = pt.leaf_class_index()[leaves_te]
            errs[gi] += float(np.sum(w[te] * (pred != y[te])))
    return cv_choice(grid, errs)


def cv_choice(grid: np.ndarray, errs: np.ndarray) -> float:
    """The α of ``grid`` of smallest total held-out error ``errs`` (ties within 1e-12: the larger
    α, the smaller tree)."""
    best = errs.min()
    idx = np.nonzero(errs <= best + CV_ERROR_TIE)[0]
    return float(grid[idx[-1]])


def cv_int_folds(y, cv: int, random_state=None):
    """The (train, test) splits of an integer ``cv`` on class codes ``y``: shuffled stratified
    K-fold (seeded by ``random_state``), plain shuffled K-fold when a class has fewer than K rows;
    None when there are fewer than 2 rows (no CV)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    n = len(y)
    counts = np.bincount(y)
    k = min(int(cv), n)
    if k < 2:
        return None
    if counts[counts > 0].min() >= k:
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    else:
        splitter = KFold(n_splits=k, shuffle=True, random_state=random_state)
    return splitter.split(np.zeros((n, 1)), y)
