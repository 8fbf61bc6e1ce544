"""Fitting on Dask collections (issue 14; ``pip install treelearn[dask]``).

Every estimator's ``fit`` accepts Dask arrays, DataFrames and Series (X, y, sample_weight). The
work runs on the ``distributed.Client`` in scope (``distributed.get_client()``: the client made
last, or the one of a ``with Client(...)`` block), or on the one given by :func:`use_client`
(a client or a scheduler address); without any, in this process.

* :class:`~treelearn.GreedyTreeClassifier` with ``max_thresholds`` (histogram mode), numeric
  columns, a built-in criterion and no ``class_weight`` (depth-first or best-first
  ``max_leaves``), and :class:`~treelearn.PrunedTreeClassifier` with ``max_thresholds``: the
  data stay as row shards on the workers; per level (per split, best-first) the workers return
  per-node histograms, the driver sums them and picks the splits with the local grower's finder
  (:mod:`treelearn.distributed._greedy`); bound pruning runs on the driver on the tree's counts,
  the CV pruners (integer ``cv``) grow their fold trees on the shards
  (:mod:`treelearn.distributed._prune`).
* :class:`~treelearn.TopKTreeClassifier` / :class:`~treelearn.OptimalTreeClassifier` (binary
  search with a threshold budget, numeric columns, built-in criterion, no ``class_weight``):
  shards pack their rows into bit columns, assembled once and replicated; one task per worker
  thread searches a share of the root's candidates below a shared bound
  (:mod:`treelearn.distributed._topk`).
* the continuous optimal solver (``OptimalTreeClassifier(solver="continuous")``, or every
  threshold asked for): the blocks are gathered (the solver needs every row), the searched
  columns broadcast once to the workers, and one task per worker thread searches a share of the
  root's features below a shared bound (:mod:`treelearn.distributed._continuous`).
* :class:`~treelearn.MinRankTreeClassifier` on 0/1 or ±1 data: the blocks' distinct points with
  their multiplicities, searched on the driver (:mod:`treelearn.distributed._rank`).
* every other estimator / setting: the blocks are gathered to the driver and the local learner
  fits them (the same tree as the local fit, by construction); docs/scaling.md says why.

The trees equal the local fit's (bit for bit without weights; float weights: up to ties of 1e-12
and the last bits of the counts).

A worker lost mid-fit: Dask recomputes its shards (and their node ids, level by level) on the
other workers from the task graph, and the fit ends with the same tree; a task that keeps
killing workers fails the fit with Dask's ``KilledWorker`` error.
"""
from __future__ import annotations

import contextlib

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.distributed._shards import is_dask_collection
from treelearn.distributed._topk import last_search_info

__all__ = ["fit_dask", "use_client", "is_dask_collection", "last_fit_log", "last_fit_passes", "last_search_info"]

_client_stack: list = []
_last_log: list = []
_last_passes: dict = {}


@contextlib.contextmanager
def use_client(client_or_address):
    """Fit Dask input on this client (a ``distributed.Client`` or a scheduler address) inside the
    ``with`` block."""
    client = client_or_address
    own = False
    if isinstance(client_or_address, str):
        from distributed import Client

        client, own = Client(client_or_address), True
    _client_stack.append(client)
    try:
        yield client
    finally:
        _client_stack.pop()
        if own:
            client.close()


def _executor():
    from treelearn.distributed._greedy import ClientExecutor, LocalExecutor

    if _client_stack:
        return ClientExecutor(_client_stack[-1])
    try:
        from distributed import get_client

        return ClientExecutor(get_client())
    except (ImportError, ValueError):
        return LocalExecutor()


def last_fit_log() -> list:
    """Per level of the last distributed greedy fit: seconds, nodes counted, bytes of histograms."""
    return list(_last_log)


def last_fit_passes() -> dict:
    """Seconds of each data pass of the last distributed greedy fit (statistics and threshold
    sample, thresholds on the driver, coding)."""
    return dict(_last_passes)


def _require_dask():
    try:
        import dask  # noqa: F401
    except ImportError as e:  # pragma: no cover - dask is an optional extra
        raise TreeLearnValueError("Dask input needs the optional dependency: pip install 'treelearn[dask]'") from e


def _sharded_greedy_ok(est, X) -> bool:
    from treelearn.learn.greedy.estimator import GreedyTreeClassifier
    from treelearn.learn.pruned.estimator import PrunedTreeClassifier

    if type(est) is PrunedTreeClassifier:
        if est.pruning not in ("bound", None):  # the CV pruners grow a tree per fold: gathered
            return False
    elif type(est) is not GreedyTreeClassifier:
        return False
    if est.max_thresholds is None or est.class_weight is not None:
        return False
    if est.categorical is not None or callable(est.criterion) and not isinstance(est.criterion, str):
        return False
    meta = getattr(X, "_meta", None)
    if meta is None:
        return False
    dtypes = [meta.dtype] if isinstance(meta, np.ndarray) else list(getattr(meta, "dtypes", []))
    return bool(dtypes) and all(getattr(t, "kind", "O") in "biuf" for t in dtypes)


def fit_dask(est, X, y, sample_weight=None):
    """``est.fit`` on Dask collections (see the module doc); returns ``est``."""
    _require_dask()
    if _sharded_greedy_ok(est, X):
        return _fit_greedy_sharded(est, X, y, sample_weight)
    from treelearn.distributed import _topk

    if _topk.sharded_topk_ok(est, X):
        return _topk.fit_topk(est, X, y, sample_weight, _executor(), _gather)
    from treelearn.distributed import _continuous, _prune, _rank

    if _continuous.continuous_ok(est):
        return _continuous.fit_continuous(est, X, y, sample_weight, _executor(), _gather)

    if _rank.sharded_rank_ok(est, X):
        return _rank.fit_rank(est, X, y, sample_weight, _executor(), _gather)
    if _prune.sharded_cv_ok(est, X):
        return _prune.fit_pruned_cv(est, X, y, sample_weight, _executor(), _gather)
    return _fit_gathered(est, X, y, sample_weight)


def _gather(obj):
    if obj is None or not is_dask_collection(obj):
        return obj
    ex = _executor()
    if ex.client is not None:
        return ex.client.compute(obj).result()
    return obj.compute(scheduler="sync")


def _fit_gathered(est, X, y, sample_weight):
    """The local fit on the gathered blocks (every learner not yet sharded)."""
    return est.fit(_gather(X), _gather(y), _gather(sample_weight))


def _fit_greedy_sharded(est, X, y, sample_weight):
    from sklearn.utils.validation import validate_data

    from treelearn.criteria import get_criterion
    from treelearn.distributed import _shards
    from treelearn.distributed._greedy import DistributedGreedy, sklearn_scale
    from treelearn.learn.greedy.estimator import CodedFeatures, prune_ccp_tree, tree_from_kernel
    from treelearn.data.schema import ColumnSchema
    from treelearn.tree.tree import Tree

    params = est._validate_params()
    crit = params["criterion"]
    if crit.code < 0:
        return _fit_gathered(est, X, y, sample_weight)
    ex = _executor()
    blocks = _shards.split_blocks(X, y, sample_weight, ex.client)
    validate_data(est, blocks.meta, skip_check_array=True, reset=True)
    names = [str(c) for c in blocks.meta.columns] if hasattr(blocks.meta, "columns") else None
    schema = ColumnSchema(categories=[None] * blocks.n_features, feature_names=names)
    grows = _growth_settings(est)
    g = DistributedGreedy(ex, blocks, criterion_code=crit.code, max_depth=est.max_depth,
                          min_samples_leaf=est.min_samples_leaf, min_samples_split=grows["min_samples_split"],
                          min_impurity_decrease=grows["min_impurity_decrease"], max_thresholds=est.max_thresholds,
                          random_state=grows["random_state"], sklearn_scale=sklearn_scale(crit.code))
    g.prepare()
    _last_passes.clear()
    _last_passes.update(g.pass_seconds)
    classes = g.classes
    est.classes_ = classes
    est.n_classes_ = len(classes)
    # (the pruner's grower keeps class codes in its tree, as grow_greedy)
    tree_classes = classes if grows["pruner"] is None else np.arange(len(classes))
    if len(classes) == 1 or np.count_nonzero(g.totals > 0) <= 1:
        if grows["pruner"] is not None:  # the local one-class fit (every attribute set)
            return _fit_gathered(est, X, y, sample_weight)
        tree = Tree.leaf(g.totals, classes, schema=schema)
        tree.n_node_samples[0] = g.n
    else:
        out = g.grow() if est.max_leaves is None else g.grow_best_first(int(est.max_leaves))
        coded = CodedFeatures(None, g.n_codes, g.is_cat, g.cat_only, g.thresholds, g.values)
        tree = tree_from_kernel(out, coded, tree_classes, schema)
        if grows["ccp_alpha"] > 0.0:
            tree = prune_ccp_tree(tree, out, grows["ccp_alpha"])
    if grows["pruner"] is not None:
        tree = grows["pruner"](tree, len(classes))
    _last_log[:] = g.log
    tree.classes = classes
    est.tree_ = tree
    if g.scale != 1.0:
        est._rescale_counts(g.scale)
    est._after_fit()
    return est


def _growth_settings(est) -> dict:
    """The greedy growth of a sharded estimator: GreedyTreeClassifier's own settings, or
    PrunedTreeClassifier's grower (grow_greedy's defaults for the rest) and its pruning, which
    needs only the grown tree's node counts (bound pruning) or nothing (``pruning=None``)."""
    from treelearn.learn.pruned.estimator import PrunedTreeClassifier
    from treelearn.prune.pruners import prune_with_bound

    if type(est) is not PrunedTreeClassifier:
        return {"min_samples_split": est.min_samples_split, "min_impurity_decrease": est.min_impurity_decrease,
                "random_state": est.random_state, "ccp_alpha": float(est.ccp_alpha), "pruner": None}

    def prune(tree, n_classes):  # PrunedTreeClassifier._fit after its growth
        import time

        est.unpruned_tree_ = tree
        t0 = time.perf_counter()
        est.bound_ = None
        est.ccp_alpha_ = None
        out = tree
        if est.pruning == "bound":
            out, info = prune_with_bound(tree, delta=est.delta, r=est.r, loose=bool(est.loose), n_classes=n_classes,
                                         return_info=True)
            est.bound_ = info.bounds[-1]
            est.bound_history_ = info.bounds
        est.pruning_time_ = time.perf_counter() - t0
        return out

    return {"min_samples_split": 2, "min_impurity_decrease": 0.0, "random_state": None, "ccp_alpha": 0.0,
            "pruner": prune}


# the estimators' fit sends Dask collections here (treelearn.base.DASK_FIT)
def _install():
    from treelearn import base

    base.DASK_FIT = fit_dask


_install()
