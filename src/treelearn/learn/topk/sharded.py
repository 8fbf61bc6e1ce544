"""The Top-k room's Dask plug-in: Top-k and optimal trees (the binary search) on row shards.

``TopKTreeClassifier._fit_sharded`` runs the local fit's steps with :class:`ShardedSearch` in place
of the in-memory ones, and the same result step (docs/scaling.md):

1. **pass 1** (one read of each block): labels, kept rows, weight range, missing values, whether
   every value is 0 or 1 (then each column's count of ones) and, without weights, the block's rows
   of the fixed threshold sample (:mod:`treelearn.data.sketch`).
2. **Small samples** (at most ``SKETCH_ROWS`` kept rows: the threshold sample is every row): the
   blocks are gathered (that is the sample) and the local code does what it does before the
   search (greedy incumbent, Binarizer, packing); the packed bits are broadcast to the workers.
   **Larger samples**: the greedy incumbent is the sharded histogram greedy (the greedy room's
   plug-in, ``INCUMBENT_THRESHOLDS`` thresholds of the same sample, the tree the local fit grows
   at that size); the Binarizer is fitted on the driver from the threshold sample plus the
   incumbent's thresholds (:meth:`~treelearn.Binarizer.fit_summary`), exactly as the local fit
   chooses its thresholds above that size; every block packs its own rows into bit columns (a
   second read), one task ORs them into the sample's columns and the result is replicated to
   every worker (0/1 data: the columns' ones counts give the features, and the Top-1 incumbent is
   one task on the packed bits).
3. **search**: one task per worker thread takes a share of the root's candidates (round-robin, as
   the local ``n_jobs`` threads do) and publishes its best error in the shared bound of
   :mod:`treelearn.distributed.farm` that the others read before each candidate; the driver takes
   the lowest rank among the smallest errors and the winner's tree from the share that found it
   (depth <= 2: one task runs the whole search).
4. **midpoints** (numeric data): every block returns, per node of the tree, the largest value
   going left and the smallest going right (a third read); the driver sets CART's node-local
   midpoints from their max / min.

Fitted attributes are the local fit's, except the search statistics (``n_nodes_searched_``,
``cache_hits_``, ``cache_evictions_``, ``peak_memory_mb_``: sums over the tasks, as for local
``n_jobs`` threads) and ``fit_time_``.
"""
from __future__ import annotations

import time

import numpy as np

from treelearn._limits import ResourceLimitError
from treelearn._validation import TreeLearnValueError, check_sample_weight, check_target, weight_scale
from treelearn.base import TrainingSample
from treelearn.data import sketch
from treelearn.data.binarize import Binarizer
from treelearn.data.bitmatrix import n_words_for
from treelearn.distributed import farm, report
from treelearn.distributed.blocks import FirstPass
from treelearn.learn.anytime import error_tie
from treelearn.learn.greedy import sharded as greedy_sharded
from treelearn.learn.greedy.estimator import grow_greedy
from treelearn.learn.topk import sharded_tasks as tasks
from treelearn.learn.topk.estimator import SEARCH_COPIES, incumbent_thresholds, numeric_thresholds_of, topk_search
from treelearn.tree.build import apply_node_midpoints, node_local_midpoints
from treelearn.tree.tree import kernel_nodes


def supports(data, criterion, *, class_weight, categorical) -> bool:
    """The binary search with a threshold budget (the caller's check) has a sharded path: a
    built-in criterion, no ``class_weight``, numeric columns (else the blocks are gathered)."""
    return class_weight is None and categorical is None and criterion.code >= 0 and data.is_numeric()


class ShardedSearch:
    """One Top-k / optimal fit's steps on Dask input ``data`` (a ``ShardedInput``): after
    :meth:`prepare`, ``classes``, ``scale`` (the weights' divisor), ``schema``, ``binz`` (the
    Binarizer), ``binary`` (0/1 data), ``total`` (the kept weight), ``greedy_tree`` (the greedy
    incumbent, class codes in its nodes, or None); then :meth:`top1`, :meth:`search`,
    :meth:`midpoints` and :meth:`release`. ``settings``: the estimator's ``k``, ``max_depth``,
    ``criterion`` (a Criterion), ``scoring``, ``max_thresholds``, ``max_binary_features``,
    ``greedy_incumbent``, ``memory_limit_mb``, ``verbose`` and ``name``."""

    def __init__(self, data, clock, **settings):
        self.data, self.ex, self.blocks, self.clock = data, data.executor, data.blocks, clock
        self.schema = data.schema()
        self.s = settings
        self.info = {"bytes": {}, "seconds": {}}
        self.problem = self.sample = self.greedy_tree = self.local_data = None
        self.search_cap_mb = None

    def phase(self, name, t0):
        took = time.perf_counter() - t0
        self.info["seconds"][name] = self.info["seconds"].get(name, 0.0) + took
        if self.s["verbose"]:  # one line per phase (the search's live counters stay local)
            import sys

            print(f"[{self.s['name']} on Dask] {self.clock.elapsed():7.1f} s  {name}: {took:.2f} s",
                  file=sys.stderr, flush=True)

    def deadline(self):
        rem = self.clock.remaining()
        return None if rem is None else time.time() + rem

    # ------------------------------------------------------------ preparation of the search
    def prepare(self) -> bool:
        """Pass 1, the incumbent, the Binarizer and the packed bits on the workers. False: the
        fit is the local one on the gathered blocks (one class; missing values above the sample
        size, where the sharded greedy incumbent would need finite values)."""
        small = self.blocks.n_rows <= sketch.SKETCH_ROWS
        if not small:
            t0 = time.perf_counter()
            self.first = FirstPass(self.ex, self.blocks, sketch.SKETCH_ROWS, facts=True)
            self.info["bytes"]["pass 1 (labels, facts, threshold sample)"] = int(sum(
                s.get("sample", np.zeros(0)).nbytes for s in self.first.stats))
            self.phase("pass 1", t0)
            if len(self.first.present) <= 1 or (self.first.has_nan and self.first.n > sketch.SKETCH_ROWS):
                return False
            small = self.first.n <= sketch.SKETCH_ROWS
        if small:
            return self._prepare_small(*self.data.gather())
        self._prepare_large()
        return True

    def _prepare_large(self):
        """Incumbent, Binarizer and packed bits on the workers, from the shards."""
        first, d, s = self.first, self.blocks.n_features, self.s
        self.classes, self.n, self.scale, self.binary = first.classes, first.n, first.scale, first.binary
        binz = Binarizer(max_thresholds=s["max_thresholds"], max_binary_features=s["max_binary_features"])
        if self.binary:
            ones = first.ones()
            binz.fit_binary_columns(self.schema, np.flatnonzero((ones > 0) & (ones < self.n)), 0.5)
        else:
            extra = None
            if s["greedy_incumbent"]:
                t0 = time.perf_counter()
                self.greedy_tree, sample = self._sharded_greedy()
                extra = numeric_thresholds_of(self.greedy_tree)
                self.phase("greedy incumbent (sharded histograms)", t0)
            else:
                sample = first.threshold_sample(self.ex, self.blocks)
            t0 = time.perf_counter()
            binz.fit_summary(self.schema, sample, np.zeros(d, bool), np.ones(d, bool), {}, extra)
            self.phase("binarizer", t0)
        self._check_memory(binz, refuse=not self.binary)
        self.binz = binz
        if self.greedy_tree is not None and self.clock.expired():
            self.total = float(self.n)  # (only the greedy tree's bound needs it)
            return  # the time limit struck before the bits were packed: the greedy tree (see search)
        self.problem = self._pack_on_shards(binz)

    def _sharded_greedy(self):
        """The incumbent: the sharded histogram greedy tree (the local one at this size) and the
        threshold sample it gathered."""
        g = greedy_sharded.DistributedGreedy(self.ex, self.blocks, criterion_code=self.s["criterion"].code,
                                             max_depth=self.s["max_depth"], min_samples_leaf=1, min_samples_split=2,
                                             min_impurity_decrease=0.0, max_thresholds=incumbent_thresholds(self.n),
                                             random_state=None)
        g.prepare(self.first if self.first.folded else None)
        tree = g.grown_tree(None, np.arange(self.classes.size), self.schema)
        self.info["bytes"]["greedy histograms"] = int(sum(r["hist_bytes"] for r in g.log))
        return tree, g.sample

    def _check_memory(self, binz, refuse=True):
        """The local fit's cap on the packed sample (the ``SEARCH_COPIES`` the search holds;
        ``refuse``: a binarized, not 0/1, sample over it is refused) and the search's share of the cap."""
        cap = float(self.s["memory_limit_mb"]) * 2.0**20
        meta = self.blocks.meta
        itemsize = np.result_type(*([meta.dtype] if isinstance(meta, np.ndarray) else list(meta.dtypes))).itemsize
        allowance = float(self.n * self.blocks.n_features * itemsize)
        d_bin, n_words = int(binz.n_binary_features_), n_words_for(self.n)
        if refuse and SEARCH_COPIES * 8.0 * d_bin * n_words > cap + allowance:
            raise ResourceLimitError(
                f"the binarized sample ({self.n} rows x {d_bin} binary features) needs "
                f"{8.0 * d_bin * n_words / 2**20:.0f} MiB x {SEARCH_COPIES} copies the search holds, over the memory "
                f"cap of {(cap + allowance) / 2**20:.0f} MiB (memory_limit_mb plus the input's own size); lower "
                "max_binary_features / max_thresholds or raise memory_limit_mb")
        held = SEARCH_COPIES * 8.0 * d_bin * n_words
        self.search_cap_mb = max(cap - max(held - allowance, 0.0), 0.01 * cap) / 2.0**20

    def _pack_on_shards(self, binz):
        """Every block packs its kept rows; one task assembles the columns; replicated to every
        worker (a future), or the dict itself without a client."""
        import dask

        t0 = time.perf_counter()
        b, ex, first = self.blocks, self.ex, self.first
        starts = np.concatenate([[0], np.cumsum(first.n_kept)[:-1]]).astype(np.int64)
        parts = ex.compute([dask.delayed(tasks.pack_block)(x, y, w, binz, int(s0), self.classes, self.scale,
                                                           first.weighted)
                            for x, y, w, s0 in zip(b.x, b.y, b.w, starts)])
        d_bin = int(binz.n_binary_features_)
        problem = ex.submit(tasks.assemble, self.n, d_bin, self.classes.size, *parts)
        nbytes = ex.gather(ex.submit(tasks.problem_nbytes, problem))
        self.total = ex.gather(ex.submit(tasks.weight_total, problem))
        self.info["bytes"]["packed blocks to the assembling worker"] = nbytes
        if ex.client is not None:
            n_workers = ex.n_workers
            ex.client.replicate([problem])
            self.info["bytes"]["packed sample replicated"] = nbytes * max(0, n_workers - 1)
        ex.release(parts)
        self.phase("packing", t0)
        return problem

    def _prepare_small(self, X, y, w) -> bool:
        """At most ``SKETCH_ROWS`` kept rows: the blocks are the threshold sample; gathered, they
        go through the local fit's own steps up to the search, and the packed bits are broadcast.
        False: one class (the local one-class fit)."""
        t0 = time.perf_counter()
        s, schema = self.s, self.schema
        raw = np.asarray(X)
        yk = np.asarray(y).ravel()
        self.classes, _ = check_target(yk, yk.shape[0])
        wk = check_sample_weight(w, yk.shape[0])
        keep = wk > 0
        if not keep.all():
            raw, yk, wk = raw[keep], yk[keep], wk[keep]
        self.n = int(yk.shape[0])
        if self.n == 0:
            raise TreeLearnValueError("sample_weight gives every sample weight zero")
        self.scale = weight_scale(float(wk.min()), float(wk.max()))
        sample = TrainingSample(raw, schema, np.searchsorted(self.classes, yk), self.classes.size,
                                np.ascontiguousarray(wk / self.scale))
        self.sample = sample
        if np.unique(sample.y).size <= 1:
            return False
        self.binary = sample.is_binary()
        extra = None
        if s["greedy_incumbent"] and not self.binary:
            self.greedy_tree = grow_greedy(sample.encoded, sample.y, sample.n_classes,
                                           None if sample.unit_weights else sample.weights, schema,
                                           criterion=s["criterion"], max_depth=s["max_depth"],
                                           max_thresholds=incumbent_thresholds(self.n),
                                           max_bytes=float(s["memory_limit_mb"]) * 2.0**20)
            extra = numeric_thresholds_of(self.greedy_tree)
        cap = float(s["memory_limit_mb"]) * 2.0**20
        allowance = float(sample.raw.nbytes)
        binz, data = sample.binarize(max_thresholds=s["max_thresholds"], max_binary_features=s["max_binary_features"],
                                     extra_thresholds=extra, clock=None, max_bytes=cap + allowance, copies=SEARCH_COPIES)
        self.binz, self.local_data = binz, data
        extra_bytes = max(SEARCH_COPIES * float(data.columns.nbytes) - allowance, 0.0)
        self.search_cap_mb = max(cap - extra_bytes, 0.01 * cap) / 2.0**20
        problem = {"columns": data.columns, "y": data.y.astype(np.uint8 if data.n_classes <= 255 else np.int32),
                   "w": data.weights, "n_classes": int(data.n_classes)}
        self.total = float(data.weights.sum()) if data.weights is not None else float(self.n)
        self.phase("local steps on the threshold sample", t0)
        t0 = time.perf_counter()
        if self.ex.client is not None:
            nbytes = tasks.problem_nbytes(problem)
            self.info["bytes"]["packed sample broadcast"] = nbytes * self.ex.n_workers
            problem = self.ex.scatter(problem, broadcast=True)
        self.problem = problem
        self.phase("broadcast", t0)
        return True

    # ------------------------------------------------------------ the searches
    def cfg(self) -> dict:
        s = self.s
        return {"k": s["k"], "max_depth": int(s["max_depth"]), "criterion": s["criterion"].name,
                "scoring": s["scoring"],
                "memory_limit_mb": s["memory_limit_mb"] if self.search_cap_mb is None else self.search_cap_mb}

    def top1(self, time_limit):
        """The Top-1 tree of 0/1 data (the greedy incumbent there, as the local fit grows it):
        the search's result within ``time_limit`` seconds, or None when it timed out."""
        t0 = time.perf_counter()
        if self.local_data is not None:  # (the gathered sample: searched here, as locally)
            res1 = topk_search(self.local_data, k=1, max_depth=self.s["max_depth"], criterion=self.s["criterion"],
                               time_limit=time_limit)
        else:
            deadline = None if time_limit is None else time.time() + time_limit
            res1 = self.ex.gather(self.ex.submit(tasks.top1_search, self.problem, self.cfg(), deadline))
        self.phase("Top-1 incumbent", t0)
        return None if res1.get("timed_out") else kernel_nodes(res1)

    def search(self, ub):
        """The search result (topk_search's dictionary) of the farmed-out root candidates; a
        timed-out empty result when the time limit struck before the bits were packed."""
        if self.problem is None:
            return _no_tree(ub, self.classes.size, timed_out=True)
        t0 = time.perf_counter()
        cfg, problem, deadline = self.cfg(), self.problem, self.deadline()
        ub0 = float("inf") if ub is None else float(ub)
        single = int(self.s["max_depth"]) <= 2
        if not single:
            k = cfg["k"]
            # at most k candidates at the root (fewer after duplicates): no idle task builds a searcher
            T = self.ex.slots if isinstance(k, str) else min(self.ex.slots, int(k))
            tie = error_tie(self.total)
            results, lost = farm.run_tasks(self.ex, tasks.search_share,
                                           lambda t, bn, sn: (problem, t, T, cfg, ub0, tie, deadline, bn, sn), T,
                                           deadline)
            cand = results[0]["candidates"] if results else np.zeros(0, np.int64)
            if any(not np.array_equal(r["candidates"], cand) for r in results):
                raise RuntimeError("the search tasks disagree on the root's candidates")
            single = len(cand) == 0 and not lost  # no candidate: the root is a leaf (one task says so)
        if single:
            results, lost = farm.run_tasks(self.ex, tasks.full_search, lambda t, bn, sn: (problem, cfg, ub, deadline),
                                           1, deadline)
            if not results:
                res = _no_tree(ub0, self.classes.size, timed_out=True)
            else:
                res = dict(kernel_nodes(results[0]), shares=1)
        else:
            res = _combine(results, ub0, self.classes.size, lost)
            res["shares"] = T
        self.phase("search", t0)
        self.info["shares"] = res.get("shares")
        self.info["task_seconds"] = res.get("task_seconds")
        return res

    def midpoints(self, tree) -> None:
        """CART's node-local midpoints of the returned tree (numeric data), in place: from the
        gathered sample, or from every block's extremes merged by max / min."""
        if self.binary or tree.node_count == 1:
            return
        if self.sample is not None:
            node_local_midpoints(tree, self.sample.encoded)
            return
        import dask

        t0 = time.perf_counter()
        b = self.blocks
        parts = self.ex.gather(self.ex.compute([dask.delayed(tasks.block_extremes)(x, y, w, tree)
                                                for x, y, w in zip(b.x, b.y, b.w)]))
        lo = np.max([p[0] for p in parts], axis=0)
        hi = np.min([p[1] for p in parts], axis=0)
        apply_node_midpoints(tree, lo, hi)
        self.info["bytes"]["midpoint extremes"] = int(sum(p[0].nbytes + p[1].nbytes for p in parts))
        self.phase("midpoints", t0)

    def release(self) -> None:
        """The packed sample leaves the workers; the phases are published
        (:func:`treelearn.distributed.last_search_info`)."""
        if self.problem is not None:
            self.ex.release(self.problem)
        report.publish("search", self.info)


def _no_tree(ub, n_classes, timed_out):
    return {"feature": np.zeros(0, np.int64), "children_left": np.zeros(0, np.int64),
            "children_right": np.zeros(0, np.int64), "value": np.zeros((0, n_classes)),
            "n_node_samples": np.zeros(0, np.int64), "found": False, "error": ub,
            "lower_bound": 0.0 if timed_out else ub, "timed_out": timed_out,
            "nodes": 0, "cache_hits": 0, "evictions": 0, "peak_bytes": 0.0}


def _combine(results, ub, n_classes, lost):
    """The shares' answers as one search result: the lowest rank among the smallest errors (every
    share's best is its last improvement, so the winner is some share's best)."""
    stopped = lost or any(r["stats"]["timed_out"] or not r["stats"]["complete"] for r in results)
    bests = {r["best"]: r for r in results if r["best"] >= 0}
    if not bests:
        res = _no_tree(ub, n_classes, stopped)
    else:
        win = min(bests, key=lambda ci: (bests[ci]["errs"][ci], ci))
        err = bests[win]["errs"][win]
        res = dict(kernel_nodes(bests[win]["tree"]), found=True, error=err, lower_bound=0.0 if stopped else err,
                   timed_out=stopped)
    for key in ("nodes", "cache_hits", "evictions", "peak_bytes"):
        res[key] = sum(r["stats"][key] for r in results)
    res["task_seconds"] = [(r["seconds"], r["setup_seconds"], r["build_seconds"]) for r in results]
    return res
