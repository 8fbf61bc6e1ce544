"""Top-k and optimal trees (the binary search) on Dask row shards (issue 14).

The fit is the local fit's, step for step (docs/scaling.md):

1. **pass 1** (one read of each block): labels, kept rows, weight range, missing values, whether
   every value is 0 or 1 (then each column's count of ones) and, without weights, the block's rows
   of the fixed threshold sample (:mod:`treelearn.data.sketch`).
2. **Small samples** (at most ``SKETCH_ROWS`` kept rows: the threshold sample is every row): the
   blocks are gathered (that is the sample) and the local code does what it does before the
   search (greedy incumbent, Binarizer, packing); the packed bits are broadcast to the workers.
   **Larger samples**: the greedy incumbent is the sharded histogram greedy
   (:mod:`treelearn.distributed._greedy`, ``INCUMBENT_THRESHOLDS`` thresholds of the same sample,
   the tree the local fit grows at that size); the Binarizer is fitted on the driver from the
   threshold sample plus the incumbent's thresholds (:meth:`~treelearn.Binarizer.fit_summary`),
   exactly as the local fit chooses its thresholds above that size; every block packs its own
   rows into bit columns (a second read), one task ORs them into the sample's columns and the
   result is replicated to every worker (0/1 data: the columns' ones counts give the features, and
   the Top-1 incumbent is one task on the packed bits).
3. **search**: one task per worker thread takes a share of the root's candidates (round-robin, as
   the local ``n_jobs`` threads do) and publishes its best error in a ``distributed.Variable`` that
   the others read before each candidate; the driver takes the lowest rank among the smallest
   errors and the winner's tree from the share that found it (depth <= 2: one task runs the whole
   search).
4. **midpoints** (numeric data): every block returns, per node of the tree, the largest value
   going left and the smallest going right (a third read); the driver sets CART's node-local
   midpoints from their max / min.

Fitted attributes are the local fit's, except the search statistics (``n_nodes_searched_``,
``cache_hits_``, ``cache_evictions_``, ``peak_memory_mb_``: sums over the tasks, as for local
``n_jobs`` threads) and ``fit_time_``.
"""
from __future__ import annotations

import time
import uuid

import numpy as np

from treelearn._limits import FitClock, ResourceLimitError, warn_limit
from treelearn._validation import TreeLearnValueError
from treelearn.data import sketch
from treelearn.distributed import _bits as B
from treelearn.distributed import _shards as S
from treelearn.learn.topk.estimator import SEARCH_COPIES

_last_info: dict = {}


def last_search_info() -> dict:
    """Phases of the last Top-k / optimal fit on Dask: seconds and bytes moved."""
    return dict(_last_info)


def sharded_topk_ok(est, X) -> bool:
    """The estimator's settings have a sharded path: the binary search with a threshold budget,
    a built-in criterion, no ``class_weight``, numeric columns."""
    from treelearn.learn.topk.estimator import TopKTreeClassifier

    if not isinstance(est, TopKTreeClassifier) or getattr(est, "solver", "auto") == "continuous":
        return False
    if est.max_binary_features is None and est.max_thresholds is None:
        return False  # every threshold: the continuous solver or n - 1 features per column (gathered)
    if est.class_weight is not None or est.categorical is not None:
        return False
    if callable(est.criterion) and not isinstance(est.criterion, str):
        return False
    meta = getattr(X, "_meta", None)
    if meta is None:
        return False
    dtypes = [meta.dtype] if isinstance(meta, np.ndarray) else list(getattr(meta, "dtypes", []))
    return bool(dtypes) and all(getattr(t, "kind", "O") in "biuf" for t in dtypes)


def _after_submit(futures) -> None:
    """Called with the search tasks' futures once they are submitted (a hook for the fault test)."""


class _Fit:
    """One fit: the estimator, its checked parameters, the executor, the blocks and the clock."""

    def __init__(self, est, params, ex, blocks, schema):
        self.est, self.params, self.ex, self.blocks, self.schema = est, params, ex, blocks, schema
        self.crit = params["criterion"]
        self.clock = FitClock(est.time_limit)
        self.info = {"bytes": {}, "seconds": {}}
        # 0/1 data with the gain scoring: the greedy (Top-1) tree is one of the searched trees, so,
        # as in the local fit, it is grown only after a search that stopped early
        self.fallback = None

    def lazy_top1(self) -> bool:
        """Whether the 0/1 sample's Top-1 incumbent waits for a search that stops early (the local
        rule of :meth:`treelearn.TopKTreeClassifier._fit`)."""
        return self.est.scoring == "gain"

    def slack_deadline(self):
        """The fallback's deadline: part of the slack the time limit allows past it."""
        return time.time() + 0.05 * float(self.est.time_limit) + 0.25

    def phase(self, name, t0):
        took = time.perf_counter() - t0
        self.info["seconds"][name] = self.info["seconds"].get(name, 0.0) + took
        if getattr(self.est, "verbose", 0):  # one line per phase (the search's live counters stay local)
            import sys

            print(f"[{type(self.est).__name__} on Dask] {self.clock.elapsed():7.1f} s  {name}: {took:.2f} s",
                  file=sys.stderr, flush=True)

    # ------------------------------------------------------------ pass 1
    def first_pass(self):
        from treelearn._validation import check_target
        from treelearn.distributed._greedy import first_pass

        t0 = time.perf_counter()
        self.stats = first_pass(self.ex, self.blocks, sketch.SKETCH_ROWS, facts=True)
        labels = np.unique(np.concatenate([s["labels"] for s in self.stats]))
        self.classes, _ = check_target(labels, labels.shape[0])
        self.n_kept = np.array([s["n_kept"] for s in self.stats], dtype=np.int64)
        self.n = int(self.n_kept.sum())
        if self.n == 0:
            raise TreeLearnValueError("sample_weight gives every sample weight zero")
        wmin, wmax = min(s["wmin"] for s in self.stats), max(s["wmax"] for s in self.stats)
        if wmax == wmin:
            self.scale = wmax
        else:
            _, e = np.frexp(wmax)
            self.scale = float(np.ldexp(1.0, int(e) - 1))
        self.weighted = wmax != wmin
        self.folded = all(w is None for w in self.blocks.w)  # pass 1 brought the threshold sample
        self.present = np.unique(np.concatenate([s["kept_labels"] for s in self.stats]))
        self.binary = all(s["binary"] for s in self.stats)
        self.has_nan = any(s["has_nan"] for s in self.stats)
        self.info["bytes"]["pass 1 (labels, facts, threshold sample)"] = int(sum(
            s.get("sample", np.zeros(0)).nbytes for s in self.stats))
        self.phase("pass 1", t0)

    # ------------------------------------------------------------ preparation of the search
    def prepare_large(self):
        """Incumbent, Binarizer and packed bits on the workers, from the shards."""
        from treelearn.data.binarize import Binarizer
        from treelearn.learn.topk.estimator import Incumbent, numeric_thresholds_of

        est, d = self.est, self.blocks.n_features
        binz = Binarizer(max_thresholds=est.max_thresholds, max_binary_features=est.max_binary_features)
        self.greedy = None
        if self.binary:
            ones = np.sum([s["ones"] for s in self.stats], axis=0)
            binz.fit_binary_columns(self.schema, np.flatnonzero((ones > 0) & (ones < self.n)), 0.5)
        else:
            extra = None
            if est.greedy_incumbent:
                t0 = time.perf_counter()
                g_tree, sample = self.sharded_greedy()
                extra = numeric_thresholds_of(g_tree)
                from treelearn.learn.topk.estimator import tree_error

                self.greedy = Incumbent(tree_error(g_tree), lambda: g_tree)
                self.phase("greedy incumbent (sharded histograms)", t0)
            else:
                sample = np.concatenate([s["sample"] for s in self.stats], axis=0) if self.folded \
                    else self.weighted_sample()
            t0 = time.perf_counter()
            binz.fit_summary(self.schema, sample, np.zeros(d, bool), np.ones(d, bool), {}, extra)
            self.phase("binarizer", t0)
        self.check_memory(binz, refuse=not self.binary)
        self.binz = binz
        self.problem = None
        if self.greedy is not None and self.clock.expired():
            self.total = float(self.n)  # (only the greedy tree's bound needs it)
            return  # the time limit struck before the bits were packed: the greedy tree (see fit_topk)
        self.problem = self.pack_on_shards(binz)
        if self.binary and est.greedy_incumbent and est._k_value() != 1:
            if self.lazy_top1():
                self.fallback = lambda: self.top1_incumbent(self.slack_deadline())
            else:
                self.top1_incumbent(self.deadline())

    def sharded_greedy(self):
        """The incumbent: the sharded histogram greedy tree (the local one at this size) and the
        threshold sample it gathered."""
        from treelearn.distributed._greedy import DistributedGreedy, sklearn_scale
        from treelearn.learn.topk.estimator import incumbent_thresholds

        g = DistributedGreedy(self.ex, self.blocks, criterion_code=self.crit.code, max_depth=self.est.max_depth,
                              min_samples_leaf=1, min_samples_split=2, min_impurity_decrease=0.0,
                              max_thresholds=incumbent_thresholds(self.n), random_state=None,
                              sklearn_scale=sklearn_scale(self.crit.code))
        g.prepare(stats=self.stats if self.folded else None)
        tree = g.grown_tree(None, np.arange(self.classes.size), self.schema)
        self.info["bytes"]["greedy histograms"] = int(sum(r["hist_bytes"] for r in g.log))
        return tree, g.sample

    def weighted_sample(self):
        import dask

        b = self.blocks
        starts = np.concatenate([[0], np.cumsum(self.n_kept)[:-1]])
        parts = self.ex.gather(self.ex.compute([dask.delayed(S.block_sample)(x, y, w, int(s0), self.n,
                                                                             sketch.SKETCH_ROWS)
                                                for x, y, w, s0 in zip(b.x, b.y, b.w, starts)]))
        return np.concatenate(parts, axis=0)

    def check_memory(self, binz, refuse=True):
        """The local fit's cap on the packed sample (the ``SEARCH_COPIES`` the search holds;
        ``refuse``: a binarized, not 0/1, sample over it is refused) and the search's share of the cap."""
        from treelearn.data import _bitset

        cap = float(self.est.memory_limit_mb) * 2.0**20
        itemsize = np.result_type(*([self.blocks.meta.dtype] if isinstance(self.blocks.meta, np.ndarray)
                                    else list(self.blocks.meta.dtypes))).itemsize
        allowance = float(self.n * self.blocks.n_features * itemsize)
        d_bin, n_words = int(binz.n_binary_features_), int(_bitset.n_words_for(self.n))
        if refuse and SEARCH_COPIES * 8.0 * d_bin * n_words > cap + allowance:
            raise ResourceLimitError(
                f"the binarized sample ({self.n} rows x {d_bin} binary features) needs "
                f"{8.0 * d_bin * n_words / 2**20:.0f} MiB x {SEARCH_COPIES} copies the search holds, over the memory "
                f"cap of {(cap + allowance) / 2**20:.0f} MiB (memory_limit_mb plus the input's own size); lower "
                "max_binary_features / max_thresholds or raise memory_limit_mb")
        held = SEARCH_COPIES * 8.0 * d_bin * n_words
        self.search_cap_mb = max(cap - max(held - allowance, 0.0), 0.01 * cap) / 2.0**20

    def pack_on_shards(self, binz):
        """Every block packs its kept rows; one task assembles the columns; replicated to every
        worker (a future), or the dict itself without a client."""
        import dask

        t0 = time.perf_counter()
        b, ex = self.blocks, self.ex
        starts = np.concatenate([[0], np.cumsum(self.n_kept)[:-1]]).astype(np.int64)
        parts = ex.compute([dask.delayed(B.pack_block)(x, y, w, binz, int(s0), self.classes, self.scale,
                                                       self.weighted)
                            for x, y, w, s0 in zip(b.x, b.y, b.w, starts)])
        d_bin = int(binz.n_binary_features_)
        problem = ex.submit(B.assemble, self.n, d_bin, self.classes.size, *parts)
        nbytes = ex.gather(ex.submit(B.problem_nbytes, problem))
        self.total = ex.gather(ex.submit(B.weight_total, problem))
        self.info["bytes"]["packed blocks to the assembling worker"] = nbytes
        if ex.client is not None:
            n_workers = len(ex.client.scheduler_info()["workers"])
            ex.client.replicate([problem])
            self.info["bytes"]["packed sample replicated"] = nbytes * max(0, n_workers - 1)
        ex.release(parts)
        self.phase("packing", t0)
        return problem

    def top1_incumbent(self, deadline):
        from treelearn.learn.topk.estimator import Incumbent, leaf_error

        t0 = time.perf_counter()
        res1 = self.ex.gather(self.ex.submit(B.top1_search, self.problem, self.cfg(), deadline))
        from treelearn.tree.tree import kernel_nodes

        if res1.get("timed_out"):
            return  # no greedy tree in time (as the local fallback)
        res1 = kernel_nodes(res1)
        C, binz, schema = self.classes.size, self.binz, self.schema
        self.greedy = Incumbent(leaf_error(res1["children_left"], res1["value"]),
                                lambda: _binary_tree(res1, binz, C, schema))
        self.phase("Top-1 incumbent", t0)

    def cfg(self) -> dict:
        est = self.est
        mem = getattr(self, "search_cap_mb", None)
        return {"k": est._k_value(), "max_depth": int(est.max_depth), "criterion": self.crit.name,
                "scoring": est.scoring, "memory_limit_mb": est.memory_limit_mb if mem is None else mem}

    def deadline(self):
        rem = self.clock.remaining()
        return None if rem is None else time.time() + rem

    # ------------------------------------------------------------ small samples: the local steps
    def prepare_small(self, X, y, w):
        """At most ``SKETCH_ROWS`` kept rows: the blocks are the threshold sample; gathered, they
        go through the local fit's own steps up to the search, and the packed bits are broadcast."""
        from treelearn.base import TrainingSample
        from treelearn.learn.greedy.estimator import grow_greedy
        from treelearn.learn.topk.estimator import Incumbent, incumbent_thresholds, leaf_error, numeric_thresholds_of, \
            topk_search, tree_error

        from treelearn._validation import check_sample_weight, check_target

        t0 = time.perf_counter()
        est, schema = self.est, self.schema
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
        hi = float(wk.max())
        self.scale = hi if hi == float(wk.min()) else float(np.ldexp(1.0, int(np.frexp(hi)[1]) - 1))
        sample = TrainingSample(raw, schema, np.searchsorted(self.classes, yk), self.classes.size,
                                np.ascontiguousarray(wk / self.scale))
        self.sample = sample
        if np.unique(sample.y).size <= 1:
            return False  # one class: the local one-class fit
        self.binary = sample.is_binary()
        self.greedy, extra = None, None
        crit, h = self.crit, int(est.max_depth)
        if est.greedy_incumbent and not self.binary:
            g_tree = grow_greedy(sample.encoded, sample.y, sample.n_classes,
                                 None if sample.unit_weights else sample.weights, schema, criterion=crit,
                                 max_depth=h, max_thresholds=incumbent_thresholds(self.n))
            extra = numeric_thresholds_of(g_tree)
            self.greedy = Incumbent(tree_error(g_tree), lambda: g_tree)
        cap = float(est.memory_limit_mb) * 2.0**20
        allowance = float(sample.raw.nbytes)
        binz, data = sample.binarize(max_thresholds=est.max_thresholds, max_binary_features=est.max_binary_features,
                                     extra_thresholds=extra, clock=None, max_bytes=cap + allowance, copies=SEARCH_COPIES)
        self.binz = binz
        if est.greedy_incumbent and self.binary and est._k_value() != 1:
            def top1(time_limit):
                res1 = topk_search(data, k=1, max_depth=h, criterion=crit, time_limit=time_limit)
                if res1["timed_out"]:
                    return
                C = self.classes.size
                self.greedy = Incumbent(leaf_error(res1["children_left"], res1["value"]),
                                        lambda: _binary_tree(res1, binz, C, schema))

            if self.lazy_top1():
                self.fallback = lambda: top1(0.05 * float(est.time_limit) + 0.25)
            else:
                top1(self.clock.remaining())
        extra_bytes = max(SEARCH_COPIES * float(data.columns.nbytes) - allowance, 0.0)
        self.search_cap_mb = max(cap - extra_bytes, 0.01 * cap) / 2.0**20
        problem = {"columns": data.columns, "y": data.y.astype(np.uint8 if data.n_classes <= 255 else np.int32),
                   "w": data.weights, "n_classes": int(data.n_classes)}
        self.total = float(data.weights.sum()) if data.weights is not None else float(self.n)
        self.phase("local steps on the threshold sample", t0)
        t0 = time.perf_counter()
        if self.ex.client is not None:
            n_workers = len(self.ex.client.scheduler_info()["workers"])
            nbytes = B.problem_nbytes(problem)
            problem = self.ex.client.scatter([problem], broadcast=True)[0]
            self.info["bytes"]["packed sample broadcast"] = nbytes * n_workers
        self.problem = problem
        self.phase("broadcast", t0)
        return True


def _binary_tree(res, binz, n_classes, schema):
    """A search's node arrays (kernel_nodes names) as a Tree on the raw columns."""
    from treelearn.base import binary_tree

    return binary_tree(binz, res["feature"], children_left=res["children_left"],
                       children_right=res["children_right"], value=res["value"],
                       n_node_samples=res["n_node_samples"], classes=np.arange(n_classes), schema=schema)


# ---------------------------------------------------------------- the search
GRACE_SECONDS = 5.0  # past the deadline, how long the driver waits for tasks to stop


def _slots(ex) -> int:
    """Tasks that can run at once: the workers' threads (1 without a client)."""
    if ex.client is None:
        return 1
    return max(1, sum(int(w.get("nthreads", 1)) for w in ex.client.scheduler_info()["workers"].values()))


def _wait(fit, futures, stop_event):
    """The tasks' results: waits until the fit's deadline (plus a grace); past it the stop event
    asks the searches to return what they have. A task's error (e.g. Dask's ``KilledWorker``) is
    raised; Ctrl-C stops and cancels the tasks and is re-raised."""
    client = fit.ex.client
    deadline = fit.deadline()
    end = None if deadline is None else deadline + GRACE_SECONDS
    try:
        _after_submit(futures)
        for f in futures:
            try:
                f.result(timeout=None if end is None else max(end - time.time(), 0.01))
            except TimeoutError:
                stop_event.set()
                end = time.time() + GRACE_SECONDS
                for g in futures:
                    try:
                        g.result(timeout=max(end - time.time(), 0.01))
                    except TimeoutError:
                        pass
                break
    except KeyboardInterrupt:
        stop_event.set()
        client.cancel(futures)
        raise
    done = [f for f in futures if f.status == "finished"]
    client.cancel([f for f in futures if f.status != "finished"])
    return [f.result() for f in done], len(done) < len(futures)


def _run(fit, fn, args_of, T):
    """T tasks ``fn(*args_of(t, bound_name, stop_name))``: results and whether some never returned."""
    ex = fit.ex
    if ex.client is None:
        return [fn(*args_of(t, None, None)) for t in range(T)], False
    from distributed import Event, Variable

    key = uuid.uuid4().hex
    bname, sname = f"treelearn-topk-bound-{key}", f"treelearn-topk-stop-{key}"
    var = Variable(bname, client=ex.client)
    var.set(float("inf"))
    ev = Event(sname, client=ex.client)
    futures = [ex.client.submit(fn, *args_of(t, bname, sname), pure=False) for t in range(T)]
    try:
        return _wait(fit, futures, ev)
    finally:
        var.delete()
        if not ev.is_set():  # (a set event stays: tasks still running must see it)
            ev.clear()  # no waiter: the scheduler forgets it


def search(fit, ub):
    """The search result (topk_search's dictionary) of the farmed-out root candidates."""
    from treelearn.tree.tree import kernel_nodes

    t0 = time.perf_counter()
    cfg, problem, deadline = fit.cfg(), fit.problem, fit.deadline()
    ub0 = float("inf") if ub is None else float(ub)
    single = int(fit.est.max_depth) <= 2
    if not single:
        k = cfg["k"]
        # at most k candidates at the root (fewer after duplicates): no idle task builds a searcher
        T = _slots(fit.ex) if isinstance(k, str) else min(_slots(fit.ex), int(k))
        tie = 1e-9 * max(1.0, fit.total)
        results, lost = _run(fit, B.search_share,
                             lambda t, bn, sn: (problem, t, T, cfg, ub0, tie, deadline, bn, sn), T)
        cand = results[0]["candidates"] if results else np.zeros(0, np.int64)
        if any(not np.array_equal(r["candidates"], cand) for r in results):
            raise RuntimeError("the search tasks disagree on the root's candidates")
        single = len(cand) == 0 and not lost  # no candidate: the root is a leaf (one task says so)
    if single:
        results, lost = _run(fit, B.full_search, lambda t, bn, sn: (problem, cfg, ub, deadline), 1)
        if not results:
            res = _no_tree(ub0, fit.classes.size, timed_out=True)
        else:
            res = dict(kernel_nodes(results[0]), shares=1)
    else:
        res = _combine(results, ub0, fit.classes.size, lost)
        res["shares"] = T
    fit.phase("search", t0)
    return res


def _no_tree(ub, n_classes, timed_out):
    return {"feature": np.zeros(0, np.int64), "children_left": np.zeros(0, np.int64),
            "children_right": np.zeros(0, np.int64), "value": np.zeros((0, n_classes)),
            "n_node_samples": np.zeros(0, np.int64), "found": False, "error": ub,
            "lower_bound": 0.0 if timed_out else ub, "timed_out": timed_out,
            "nodes": 0, "cache_hits": 0, "evictions": 0, "peak_bytes": 0.0}


def _combine(results, ub, n_classes, lost):
    """The shares' answers as one search result: the lowest rank among the smallest errors (every
    share's best is its last improvement, so the winner is some share's best)."""
    from treelearn.tree.tree import kernel_nodes

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


# ---------------------------------------------------------------- the fitted estimator
def _midpoints(fit, tree):
    """CART's node-local midpoints of the returned tree (numeric data): from the gathered sample,
    or from every block's extremes merged by max / min."""
    from treelearn.base import apply_node_midpoints, node_local_midpoints

    if tree.node_count == 1:
        return
    if getattr(fit, "sample", None) is not None:
        node_local_midpoints(tree, fit.sample.encoded)
        return
    import dask

    t0 = time.perf_counter()
    b = fit.blocks
    parts = fit.ex.gather(fit.ex.compute([dask.delayed(B.block_extremes)(x, y, w, tree)
                                          for x, y, w in zip(b.x, b.y, b.w)]))
    lo = np.max([p[0] for p in parts], axis=0)
    hi = np.min([p[1] for p in parts], axis=0)
    apply_node_midpoints(tree, lo, hi)
    fit.info["bytes"]["midpoint extremes"] = int(sum(p[0].nbytes + p[1].nbytes for p in parts))
    fit.phase("midpoints", t0)


def finish(fit, res, ub):
    """The fitted attributes and the returned tree from the search result, as the local fit's
    ``_fit_data`` sets them."""
    from treelearn.learn.topk.estimator import feature_space, tree_error

    est, binz, greedy, crit = fit.est, fit.binz, fit.greedy, fit.crit
    k = est._k_value()
    d = int(binz.n_binary_features_)
    kk = d if (isinstance(k, str) or k >= d) else int(k)
    est.solver_ = "binary"
    est.binarizer_ = binz
    est.timed_out_ = bool(res["timed_out"])
    est.incumbent_source_ = "search"
    tree = None
    if res.get("found", True):
        tree = _binary_tree(res, binz, fit.classes.size, fit.schema)
        if not fit.binary:
            _midpoints(fit, tree)
    err = None if tree is None else tree_error(tree)
    if greedy is not None and (tree is None or err > ub):
        tree = greedy.tree()
        err = tree_error(tree)
        est.incumbent_source_ = "greedy"
    tree.impurity = crit.impurity(tree.value)
    est.training_error_ = err
    est.greedy_error_ = None if greedy is None else greedy.error
    est.is_optimal_ = bool(kk >= d and not est.timed_out_)
    est.lower_bound_ = min(float(res["lower_bound"]), err) if kk >= d else None
    est.n_nodes_searched_ = int(res["nodes"])
    est.cache_hits_ = int(res["cache_hits"])
    est.cache_evictions_ = int(res["evictions"])
    est.peak_memory_mb_ = float(res["peak_bytes"]) / 2.0**20
    est.n_binary_features_ = d
    est.feature_space_ = feature_space(binz)
    est.fit_time_ = fit.clock.elapsed()
    if est.timed_out_:
        warn_limit(type(est).__name__, f"its time limit of {est.time_limit:g} s")
    return tree


def fit_topk(est, X, y, sample_weight, ex, gather):
    """``est.fit`` (Top-k / optimal, binary search) on Dask collections; ``gather(obj)`` computes a
    collection to the driver. Returns ``est``."""
    from sklearn.utils.validation import validate_data

    from treelearn.data.schema import ColumnSchema

    params = est._validate_params()
    blocks = S.split_blocks(X, y, sample_weight, ex.client)
    validate_data(est, blocks.meta, skip_check_array=True, reset=True)
    names = [str(c) for c in blocks.meta.columns] if hasattr(blocks.meta, "columns") else None
    schema = ColumnSchema(categories=[None] * blocks.n_features, feature_names=names)
    fit = _Fit(est, params, ex, blocks, schema)
    small = blocks.n_rows <= sketch.SKETCH_ROWS
    if not small:
        fit.first_pass()
        if len(fit.present) <= 1 or (fit.has_nan and fit.n > sketch.SKETCH_ROWS):
            # one class (the local one-class fit), or missing values above the sample size (the
            # sharded greedy incumbent needs finite values): the local fit on the gathered blocks
            return est.fit(gather(X), gather(y), gather(sample_weight))
        small = fit.n <= sketch.SKETCH_ROWS
    if small:
        Xg, yg, wg = gather(X), gather(y), gather(sample_weight)
        if not fit.prepare_small(Xg, yg, wg):
            return est.fit(Xg, yg, wg)
    else:
        fit.prepare_large()
    ub = None
    if fit.greedy is not None:
        ub = fit.greedy.error + 1e-9 * max(1.0, fit.total)  # trees as good as the greedy one too
    try:
        if fit.problem is None:  # out of time before the search: the greedy incumbent
            res = _no_tree(ub, fit.classes.size, timed_out=True)
        else:
            res = search(fit, ub)
        if fit.greedy is None and fit.fallback is not None and res["timed_out"]:
            fit.fallback()  # the 0/1 sample's greedy tree, after a search that stopped early
            if fit.greedy is not None:
                ub = fit.greedy.error + 1e-9 * max(1.0, fit.total)
        tree = finish(fit, res, ub)
    except KeyboardInterrupt as exc:
        # Ctrl-C: the searches were asked to stop and their tasks cancelled; the best tree known
        # on the driver is the greedy incumbent (raw columns, the learner's units), as locally
        exc.partial_tree = None if fit.greedy is None else fit.greedy.tree()
        raise
    finally:
        if fit.problem is not None:
            ex.release(fit.problem)  # the packed sample leaves the workers
    est.classes_ = fit.classes
    est.n_classes_ = len(fit.classes)
    tree.classes = fit.classes
    est.tree_ = tree
    if fit.scale != 1.0:
        est._rescale_counts(fit.scale)
    est._after_fit()
    fit.info["shares"] = res.get("shares")
    fit.info["task_seconds"] = res.get("task_seconds")
    _last_info.clear()
    _last_info.update(fit.info)
    return est
