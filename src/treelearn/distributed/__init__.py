"""Fitting on Dask collections (``pip install treelearn[dask]``): the learner-free plumbing.

Every estimator's ``fit`` accepts Dask arrays, DataFrames and Series (X, y, sample_weight). The
work runs on the ``distributed.Client`` in scope (``distributed.get_client()``: the client made
last, or the one of a ``with Client(...)`` block), or on the one given by :func:`use_client`
(a client or a scheduler address); without any, in this process.

The estimator is the only orchestrator of a fit (``BaseTreeClassifier.fit``): it turns Dask input
into a :class:`~treelearn.distributed.blocks.ShardedInput` and hands it, with the learner's Dask
plug-in (the ``sharded.py`` of its room, named by the estimator's ``_dask_plugin``), to its
``_fit_sharded`` hook; a learner without a plug-in, or settings its plug-in does not shard, fit
the gathered blocks locally (the same tree as the local fit, by construction). This package knows
no learner; it holds what every plug-in shares:

* :mod:`~treelearn.distributed.client`: the client in scope and the executor tasks go through;
* :mod:`~treelearn.distributed.blocks`: Dask input as aligned row blocks, pass 1 over them and the
  fixed threshold sample (:mod:`treelearn.data.sketch`), the gathered arrays;
* :mod:`~treelearn.distributed.farm`: searches farmed out to tasks that share a bound and a stop
  request (time limit, Ctrl-C), and the driver's wait;
* :mod:`~treelearn.distributed.report`: what the last fit measured (:func:`last_fit_log`,
  :func:`last_fit_passes`, :func:`last_search_info`).

The plug-ins (docs/scaling.md): ``learn/greedy/sharded.py`` (histograms counted on the shards),
``learn/pruned/sharded.py`` (that growth, and the CV pruners' fold trees), ``learn/topk/sharded.py``
(bits packed on the shards, the root's candidates farmed out), ``learn/continuous/sharded.py``
(the root's features farmed out) and ``learn/minrank/sharded.py`` (the blocks' distinct points).
The trees equal the local fit's (bit for bit without weights; float weights: up to ties of 1e-12
and the last bits of the counts).

A worker lost mid-fit: Dask recomputes its shards (and their node ids, level by level) on the
other workers from the task graph, and the fit ends with the same tree; a task that keeps
killing workers fails the fit with Dask's ``KilledWorker`` error. A connection that closes while
data is scattered to the workers is retried (``client.SCATTER_ATTEMPTS``), then named
(:class:`~treelearn.distributed.client.WorkerLostError`).
"""
from treelearn.distributed.blocks import ShardedInput, is_dask_collection
from treelearn.distributed.client import WorkerLostError, use_client
from treelearn.distributed.report import last_fit_log, last_fit_passes, last_search_info

__all__ = ["use_client", "WorkerLostError", "is_dask_collection", "ShardedInput", "last_fit_log", "last_fit_passes",
           "last_search_info"]
