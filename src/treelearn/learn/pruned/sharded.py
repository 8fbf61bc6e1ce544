"""The pruned room's Dask plug-in: the greedy tree and the CV pruners' fold trees on row shards.

``PrunedTreeClassifier._fit_sharded`` grows its tree with the greedy room's sharded growth
(:func:`grow`) and prunes it by the same step as the local fit; bound pruning needs only the
grown tree's node counts (the driver). The CV pruners (``"ccp"``, ``"mcart"``, an integer ``cv``:
:func:`cv_alpha`) choose α as the local ``prune.pruners.select_alpha_cv`` does:

1. the folds: the kept rows' class codes are gathered (one byte per row) and the driver draws the
   local folds from them (``pruners.cv_int_folds``: an integer ``cv`` only; splitters and explicit
   splits are gathered); each block gets its rows' fold numbers (4 bytes per row, once);
2. a fold's tree is the sharded greedy tree of the same blocks with the held-out rows' weights at
   zero (the local fit grows it on the training rows: zero-weight rows are dropped the same way,
   the threshold sample is taken among the remaining rows, and the weights are divided by the full
   sample's scale, as the local fold sees them);
3. one pass scores every fold's pruned trees on its held-out rows per block (a K x G table of
   weighted errors per block, summed on the driver); the driver picks α by the local rule.

Without weights every error is an integer count, so the α and the tree are the local ones bit for
bit; with float weights the per-block sums are added in another order (ties within 1e-12).
"""
from __future__ import annotations

import numbers

import numpy as np

from treelearn.distributed.blocks import kept_rows
from treelearn.learn.greedy import sharded as greedy_sharded
from treelearn.prune.pruners import alpha_grid, cost_complexity_pruning_path, cv_choice, cv_int_folds, select_from_path


def supports(data, criterion, *, pruning, cv, max_thresholds, class_weight, categorical) -> bool:
    """The greedy growth is sharded (see the greedy room's ``supports``), and the pruning needs no
    row in memory: bound pruning or none, or a CV pruner with an integer ``cv``."""
    if pruning in ("ccp", "mcart") and (not isinstance(cv, numbers.Integral) or isinstance(cv, bool)):
        return False
    return greedy_sharded.supports(data, criterion, max_thresholds=max_thresholds, class_weight=class_weight,
                                   categorical=categorical)


def grow(ex, blocks, criterion, *, max_depth, max_leaves, min_samples_leaf, max_thresholds, schema, scale=None):
    """The pruner's greedy tree on the shards (class codes in its nodes, as ``grow_greedy``'s):
    ``(grower, tree)``; ``grower.one_class`` when at most one class has weight (a leaf)."""
    g = greedy_sharded.DistributedGreedy(ex, blocks, criterion_code=criterion.code, max_depth=max_depth,
                                         min_samples_leaf=min_samples_leaf, min_samples_split=2,
                                         min_impurity_decrease=0.0, max_thresholds=max_thresholds,
                                         random_state=None, scale=scale)
    g.prepare()
    return g, g.grown_tree(max_leaves, np.arange(g.classes.size), schema)


# ---------------------------------------------------------------- tasks on the workers
def kept_codes(y, w, classes):
    """The class codes of a block's kept rows (uint8 up to 255 classes)."""
    _, yk, _ = kept_rows(None, y, w)
    return np.searchsorted(classes, yk).astype(np.uint8 if classes.size <= 255 else np.int32)


def fold_weights(w, n_rows, folds, f):
    """The block's weights with the rows held out by fold ``f`` at zero (``folds``: the fold
    number of each kept row)."""
    wt = np.ones(n_rows) if w is None else np.asarray(w, dtype=np.float64).ravel().copy()
    kept = np.flatnonzero(wt > 0)
    wt[kept[folds == f]] = 0.0
    return wt


def fold_errors(x, y, w, folds, classes, scale, fold_trees):
    """(K, G): per fold, per α, the weighted errors of the fold's pruned tree on the block's rows
    held out by that fold (weights divided by ``scale``, as the local fit's)."""
    xk, yk, wk = kept_rows(x, y, w)
    codes = np.searchsorted(classes, yk)
    wk = wk / scale
    out = np.zeros((len(fold_trees), len(fold_trees[0]) if fold_trees else 0))
    for f, trees in enumerate(fold_trees):
        rows = np.flatnonzero(folds == f)
        if rows.size == 0:
            continue
        xe, yf, wf = xk[rows], codes[rows], wk[rows]
        for gi, t in enumerate(trees):
            pred = t.leaf_class_index()[t.apply_encoded(xe)]
            out[f, gi] = float(np.sum(wf * (pred != yf)))
    return out


# ---------------------------------------------------------------- the driver
def cv_alpha(ex, blocks, grower, path, complexity, *, cv, random_state, n_features, criterion, schema,
             **growth) -> float:
    """``pruners.select_alpha_cv`` with an integer cv, its folds' trees grown on the shards by
    :func:`grow` with the settings ``growth`` (and the full sample's weight scale)."""
    import dask

    grid = alpha_grid(path.ccp_alphas)
    b, classes = blocks, grower.classes
    parts = ex.gather(ex.compute([dask.delayed(kept_codes)(yb, wb, classes) for yb, wb in zip(b.y, b.w)]))
    folds = cv_int_folds(np.concatenate(parts).astype(np.int64), cv, random_state)
    if folds is None:
        return float(grid[0])
    folds = list(folds)
    fold_of = np.empty(sum(p.size for p in parts), dtype=np.int32)
    for f, (_, te) in enumerate(folds):
        fold_of[te] = f
    ends = np.cumsum([p.size for p in parts])
    fold_blocks = [ex.scatter(fold_of[e - p.size:e]) for p, e in zip(parts, ends)]
    fold_trees = []
    for f in range(len(folds)):
        wf = [dask.delayed(fold_weights)(wb, n, fb, f) for wb, n, fb in zip(b.w, b.lengths, fold_blocks)]
        _, t = grow(ex, b.with_weights(wf), criterion, schema=schema, scale=grower.scale, **growth)
        p = cost_complexity_pruning_path(t, complexity, n_features)
        pruned = []
        for a in grid:
            cut = p.pruned_nodes[select_from_path(p, a)]
            pruned.append(t.prune(cut) if cut else t)
        fold_trees.append(pruned)
    trees = ex.scatter(fold_trees)
    tables = ex.gather(ex.compute([dask.delayed(fold_errors)(x, yb, wb, fb, classes, grower.scale, trees)
                                   for x, yb, wb, fb in zip(b.x, b.y, b.w, fold_blocks)]))
    errs = np.zeros(len(grid))
    for f in range(len(folds)):  # fold by fold, as the local sum
        fold_sum = np.zeros(len(grid))
        for tab in tables:
            fold_sum += tab[f]
        errs += fold_sum
    return cv_choice(grid, errs)
