"""The continuous solver's Dask plug-in: the root's features farmed out as tasks.

``OptimalTreeClassifier(solver="continuous")`` (or every threshold asked for, on data that is not
all 0/1) and ``TopKTreeClassifier`` with every threshold search every node-local midpoint of every
row, so the whole sample is needed in one place:

1. the blocks are gathered to the driver (the solver needs every row), which runs the local fit's
   own steps around the search (``OptimalTreeClassifier._fit_sharded`` fits the gathered arrays as
   in memory, and :func:`treelearn.learn.continuous.solver.continuous_fit` makes the searched
   columns, the greedy incumbent and the returned Tree);
2. the search itself is replaced (:func:`~treelearn.learn.continuous.solver.search_backend`) by
   :class:`FarmedSearch`: the searched columns (feature-major float64, class codes, weights,
   missing-value modes) are broadcast once to every worker, and one task per worker thread
   builds the same root (ranked columns, depth-1 pass, feature order) and searches the positions
   ``t, t + T, ...`` of the root's feature order (the compiled ``ContinuousShare``), each below
   its own best and the best error any task has published in a ``distributed.Variable`` (read
   before every root feature; ties with it are still searched);
3. the driver takes the smallest error, ties to the earliest position, over the tasks' bests (the
   root's depth-1 tree when none beats it): the local search's tree, as its tie rule makes the
   tree a function of the data alone (``continuous/search.h``).

The time limit and Ctrl-C are those of every farmed-out search (:mod:`treelearn.distributed.farm`):
the tasks stop at the fit's deadline, the driver sets a stop ``distributed.Event`` after a grace
and takes what came back; Ctrl-C sets it, cancels the tasks and re-raises. A task lost with its
worker runs again elsewhere from the broadcast copy (tasks are deterministic: the bound they read
only prunes).
"""
from __future__ import annotations

import time

import numpy as np

from treelearn.distributed import farm, report


class FarmedSearch:
    """``_continuous.continuous_search`` as tasks on the executor's workers (see the module doc):
    the search of :func:`treelearn.learn.continuous.solver.search_backend`."""

    def __init__(self, ex):
        self.ex = ex
        self.info = {"bytes": {}, "seconds": {}}

    def phase(self, name, t0):
        self.info["seconds"][name] = self.info["seconds"].get(name, 0.0) + time.perf_counter() - t0

    def __call__(self, X_fm, y, n_classes, weights, max_depth, upper_bound=0.0, time_limit=0.0,
                 memory_limit_bytes=1e9, n_threads=1, nan_mode=None, progress=None, **switches):
        ex = self.ex
        deadline = time.time() + time_limit if time_limit > 0 else None
        t0 = time.perf_counter()
        problem = {"X": np.ascontiguousarray(X_fm, dtype=np.float64), "y": np.ascontiguousarray(y, dtype=np.int64),
                   "n_classes": int(n_classes), "w": weights, "nan_mode": nan_mode}
        nbytes = int(sum(v.nbytes for v in problem.values() if isinstance(v, np.ndarray)))
        if ex.client is not None:
            n_workers = ex.n_workers
            problem = ex.scatter(problem, broadcast=True)
            self.info["bytes"]["searched columns broadcast"] = nbytes * n_workers
        self.phase("broadcast", t0)
        t0 = time.perf_counter()
        T = ex.slots
        cfg = {"max_depth": int(max_depth), "upper_bound": float(upper_bound),
               "memory_limit_bytes": float(memory_limit_bytes), "switches": dict(switches)}
        try:
            results, lost = farm.run_tasks(ex, search_share, lambda t, bn, sn: (problem, t, T, cfg, deadline, bn, sn),
                                           T, deadline)
        finally:
            ex.release(problem)
        self.phase("search", t0)
        res = combine(results, lost, int(n_classes))
        res["threads_used"] = T
        self.info["shares"] = T
        self.info["task_seconds"] = [r["seconds"] for r in results]
        report.publish("search", self.info)
        return res


def search_share(problem, t, T, cfg, deadline, bound_name, stop_name):
    """Task: positions ``t, t + T, ...`` of the root's feature order, each below the task's own best
    and the best error published by any task (a ``distributed.Variable``); the result of
    ``ContinuousShare.result()`` plus ``complete`` (every position searched) and timings."""
    from treelearn.learn.continuous._continuous import ContinuousShare

    t0 = time.perf_counter()
    limit = farm.seconds_left(deadline)
    rs = ContinuousShare(problem["X"], problem["y"], problem["n_classes"], problem["w"], cfg["max_depth"],
                         cfg["upper_bound"], 0.0 if limit is None else limit, cfg["memory_limit_bytes"],
                         nan_mode=problem["nan_mode"], **cfg["switches"])
    complete = True
    with farm.TaskLink(bound_name, stop_name, rs) as bound:
        for oi in range(t, rs.n_positions, T):
            if rs.stopped:
                complete = False
                break
            if rs.search(oi, bound.get()):
                bound.offer(rs.result()["best"]["cost"])
        res = rs.result()
    res.update(t=t, complete=complete, seconds=time.perf_counter() - t0)
    return res


_STATS = ("evaluations", "d2_evaluations", "nodes", "cache_hits", "cache_entries", "peak_bytes")


def combine(results, lost, n_classes):
    """The tasks' answers as ``continuous_search``'s result: the smallest error, ties (within the
    search's tolerance) to the earliest position; else the root's own tree. The lower bound and
    ``timed_out`` as the local root computes them (a lost task or a position never searched
    leaves 0 open)."""
    stats = {k: sum(r[k] for r in results) for k in _STATS}
    fixed = max((r["fixed_bytes"] for r in results), default=0.0)
    base = {**stats, "fixed_bytes": fixed, "memory_error": any(r["memory_error"] for r in results),
            "interrupted": False}
    if base["memory_error"]:
        return {**base, **_leaf(), "cost": 0.0, "lower_bound": 0.0, "timed_out": False}
    if not results:  # every task was cancelled after the deadline: nothing came back
        return {**base, **_leaf(), "cost": float("inf"), "lower_bound": 0.0, "timed_out": True}
    r0 = results[0]
    stopped = lost or any(r["stopped"] or not r["complete"] for r in results)
    if r0["settled"]:  # the root needed no feature search: every task has the same answer
        tree = r0["root"]
        return {**base, **_arrays(tree), "cost": tree["cost"], "lower_bound": tree["lower_bound"],
                "timed_out": bool(stopped)}
    eps, UB = r0["eps"], r0["bound"]
    found = [r for r in results if r["position"] >= 0]
    tree = r0["root"]
    if found:
        c = min(r["best"]["cost"] for r in found)
        tree = min((r for r in found if r["best"]["cost"] < c + eps), key=lambda r: r["position"])["best"]
    cost = float(tree["cost"])
    if stopped:
        open_lb = min(0.0 if (lost or not r["complete"]) else r["open_bound"] for r in results)
        lb = max(0.0, min(cost, UB, open_lb))
    else:
        lb = min(cost if cost < UB - eps else UB, cost)
    return {**base, **_arrays(tree), "cost": cost, "lower_bound": lb, "timed_out": bool(stopped)}


def _arrays(tree):
    return {k: tree[k] for k in ("feature", "left", "right", "threshold")}


def _leaf():
    return {"feature": np.array([-1], np.int64), "left": np.array([-1], np.int64),
            "right": np.array([-1], np.int64), "threshold": np.zeros(1)}
