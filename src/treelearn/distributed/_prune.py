"""PrunedTreeClassifier with a CV pruner (``"ccp"``, ``"mcart"``) on Dask row shards (issue 14).

The local fit (``prune/pruners.py``): the greedy tree, its weakest-link sequence, then K-fold CV:
each fold's tree, grown on the fold's training rows, is pruned at every representative α and
scored on the held-out rows; the α of smallest total held-out error prunes the full tree. Here:

1. the full tree is the sharded greedy tree (:mod:`treelearn.distributed._greedy`);
2. the folds: the kept rows' class codes are gathered (one byte per row) and the driver draws the
   local folds from them (``pruners.cv_int_folds``: an integer ``cv`` only; splitters and explicit
   splits are gathered); each block gets its rows' fold numbers (4 bytes per row, once);
3. a fold's tree is the sharded greedy tree of the same blocks with the held-out rows' weights at
   zero (the local fit grows it on the training rows: zero-weight rows are dropped the same way,
   the threshold sample is taken among the remaining rows, and the weights are divided by the full
   sample's scale, as the local fold sees them);
4. one pass scores every fold's pruned trees on its held-out rows per block (a K x G table of
   weighted errors per block, summed on the driver); the driver picks α by the local rule.

Without weights every error is an integer count, so the α and the tree are the local ones bit for
bit; with float weights the per-block sums are added in another order (ties within 1e-12).
"""
from __future__ import annotations

import time

import numpy as np

from treelearn.distributed import _shards as S


def sharded_cv_ok(est, X) -> bool:
    import numbers

    from treelearn.learn.pruned.estimator import PrunedTreeClassifier

    if type(est) is not PrunedTreeClassifier or est.pruning not in ("ccp", "mcart"):
        return False
    if not isinstance(est.cv, numbers.Integral) or isinstance(est.cv, bool):
        return False
    if est.max_thresholds is None or est.class_weight is not None or est.categorical is not None:
        return False
    if callable(est.criterion) and not isinstance(est.criterion, str):
        return False
    meta = getattr(X, "_meta", None)
    if meta is None:
        return False
    dtypes = [meta.dtype] if isinstance(meta, np.ndarray) else list(getattr(meta, "dtypes", []))
    return bool(dtypes) and all(getattr(t, "kind", "O") in "biuf" for t in dtypes)


# ---------------------------------------------------------------- tasks on the workers
def _kept(x, y, w):
    y = np.asarray(y).ravel()
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64).ravel()
    keep = w > 0
    return keep, y[keep], w[keep]


def kept_codes(y, w, classes):
    """The class codes of a block's kept rows (uint8 up to 255 classes)."""
    _, yk, _ = _kept(np.zeros(0), y, w)
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
    keep, yk, wk = _kept(x, y, w)
    xk = np.asarray(x, dtype=np.float64)
    if not keep.all():
        xk = xk[keep]
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
def _share(ex, obj):
    """A future of ``obj`` held by the cluster (passed to many tasks once), or ``obj`` itself."""
    return obj if ex.client is None else ex.client.scatter([obj])[0]


def _greedy(ex, blocks, est, crit, scale=None):
    from treelearn.distributed._greedy import DistributedGreedy, sklearn_scale

    return DistributedGreedy(ex, blocks, criterion_code=crit.code, max_depth=est.max_depth,
                             min_samples_leaf=est.min_samples_leaf, min_samples_split=2, min_impurity_decrease=0.0,
                             max_thresholds=est.max_thresholds, random_state=None,
                             sklearn_scale=sklearn_scale(crit.code), scale=scale)


def fit_pruned_cv(est, X, y, sample_weight, ex, gather):
    """``est.fit`` (PrunedTreeClassifier, pruning "ccp" / "mcart", integer cv) on Dask collections."""
    from sklearn.utils.validation import validate_data

    from treelearn.data.schema import ColumnSchema
    from treelearn.prune.pruners import cost_complexity_pruning_path, prune_cost_complexity

    params = est._validate_params()
    crit = params["criterion"]
    blocks = S.split_blocks(X, y, sample_weight, ex.client)
    validate_data(est, blocks.meta, skip_check_array=True, reset=True)
    names = [str(c) for c in blocks.meta.columns] if hasattr(blocks.meta, "columns") else None
    schema = ColumnSchema(categories=[None] * blocks.n_features, feature_names=names)
    g = _greedy(ex, blocks, est, crit)
    g.prepare()
    classes = g.classes
    if len(classes) == 1 or np.count_nonzero(g.totals > 0) <= 1:
        return est.fit(gather(X), gather(y), gather(sample_weight))  # the local one-class fit
    tree = g.grown_tree(est.max_leaves, np.arange(len(classes)), schema)
    est.unpruned_tree_ = tree
    t0 = time.perf_counter()
    est.bound_ = None
    est.ccp_alpha_ = None
    complexity = "leaves" if est.pruning == "ccp" else "mcart"
    path = cost_complexity_pruning_path(tree, complexity)
    alpha = _cv_alpha(est, ex, blocks, g, crit, path, complexity, tree.n_features, schema)
    est.ccp_alpha_ = alpha
    est.ccp_path_ = path
    out = prune_cost_complexity(tree, alpha, complexity, path=path)
    est.pruning_time_ = time.perf_counter() - t0
    est.classes_ = classes
    est.n_classes_ = len(classes)
    out.classes = classes
    est.tree_ = out
    if g.scale != 1.0:
        est._rescale_counts(g.scale)
    est._after_fit()
    return est


def _cv_alpha(est, ex, blocks, g, crit, path, complexity, n_features, schema) -> float:
    """``pruners.select_alpha_cv`` with an integer cv, its folds' trees grown on the shards."""
    import dask

    from treelearn.prune.pruners import alpha_grid, cost_complexity_pruning_path, cv_int_folds, select_from_path

    grid = alpha_grid(path.ccp_alphas)
    b = blocks
    parts = ex.gather(ex.compute([dask.delayed(kept_codes)(yb, wb, g.classes) for yb, wb in zip(b.y, b.w)]))
    folds = cv_int_folds(np.concatenate(parts).astype(np.int64), est.cv, est.random_state)
    if folds is None:
        return float(grid[0])
    folds = list(folds)
    fold_of = np.empty(sum(p.size for p in parts), dtype=np.int32)
    for f, (_, te) in enumerate(folds):
        fold_of[te] = f
    ends = np.cumsum([p.size for p in parts])
    fold_blocks = [_share(ex, fold_of[e - p.size:e]) for p, e in zip(parts, ends)]
    fold_trees = []
    for f in range(len(folds)):
        wf = [dask.delayed(fold_weights)(wb, n, fb, f) for wb, n, fb in zip(b.w, b.lengths, fold_blocks)]
        gf = _greedy(ex, S.Blocks(b.x, b.y, wf, b.lengths, b.meta, b.n_features), est, crit, scale=g.scale)
        gf.prepare()
        t = gf.grown_tree(est.max_leaves, np.arange(g.classes.size), schema)
        p = cost_complexity_pruning_path(t, complexity, n_features)
        pruned = []
        for a in grid:
            cut = p.pruned_nodes[select_from_path(p, a)]
            pruned.append(t.prune(cut) if cut else t)
        fold_trees.append(pruned)
    trees = _share(ex, fold_trees)
    tables = ex.gather(ex.compute([dask.delayed(fold_errors)(x, yb, wb, fb, g.classes, g.scale, trees)
                                   for x, yb, wb, fb in zip(b.x, b.y, b.w, fold_blocks)]))
    errs = np.zeros(len(grid))
    for f in range(len(folds)):  # fold by fold, as the local sum
        fold_sum = np.zeros(len(grid))
        for tab in tables:
            fold_sum += tab[f]
        errs += fold_sum
    best = errs.min()
    idx = np.nonzero(errs <= best + 1e-12)[0]
    return float(grid[idx[-1]])
