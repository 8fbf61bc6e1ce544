# The body of the compiled Top-k search binding, included by _topk.pyx (portable x86-64-v2
# build) and _topk_avx512.pyx (AVX-512 build with VPOPCNTDQ, chosen at import when the CPU has it).

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, uint64_t, int64_t
from libcpp.vector cimport vector
from libcpp cimport bool as cbool

from cpython.pycapsule cimport PyCapsule_GetPointer
from treelearn._criteria import SIGINT_SHARED, raise_interrupted

cdef extern from "core/limits.h" namespace "tl":
    void use_shared_sigint(void* p)

use_shared_sigint(PyCapsule_GetPointer(SIGINT_SHARED, b"treelearn.sigint"))  # the process's one Ctrl-C state

cnp.import_array()

from treelearn._criteria cimport CostState, batch_cost, batch_fn

cdef extern from "core/limits.h" namespace "tl":
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)


cdef extern from "run.h" namespace "tl::topk":
    cdef cppclass Problem:
        int n, d, C, nw
        const uint64_t* columns
        const int64_t* y
        const uint8_t* y8
        const double* w

    cdef cppclass Options:
        int k, max_depth, criterion
        cbool gain_ratio
        batch_fn cost
        void* cost_ctx
        double time_limit, memory_limit_bytes
        int n_jobs
        double upper_bound
        double min_weight
        int min_rows
        double leaf_penalty
        int max_leaves
        const int8_t* mono
        cbool cache_depth1, feature_classes
        double* progress

    cdef cppclass Output:
        vector[int] feature, left, right
        vector[double] value
        vector[int64_t] nsamp
        vector[int] label
        double error, root_lb
        cbool timed_out, cost_failed, interrupted, found
        long long nodes, cache_hits, evictions, cache_entries
        double peak_bytes
        cbool memory_bound
        double frame_bytes

    void run_search(const Problem& P, const Options& O, Output& out) except + nogil
    void run_front(const Problem& P, const Options& O, vector[Output]& outs) except + nogil


def search(const uint64_t[:, ::1] columns, const int64_t[::1] y, int n_classes, weights, int k,
           int max_depth, int criterion_code, bint gain_ratio, double time_limit,
           double memory_limit_bytes, int n_jobs, bint cache_depth1=True, bint feature_classes=True,
           cost=None, upper_bound=None, progress=None, double min_weight=0.0, mono=None, int min_rows=0,
           double leaf_penalty=0.0, int max_leaves=0, bint front=False):
    """``criterion_code``: 0 entropy, 1 Gini, 2 Kearns-Mansour, -1 a user impurity given as
    ``cost``, a callable (rows, C) class counts -> rows' weight x impurity, called once per ranked
    node with every candidate's two sides (the greedy learner's callback, ``_criteria.batch_cost``).
    ``upper_bound``: the incumbent's error; only a tree with a smaller error is returned, else
    ``found`` is False and the tree is empty (``error``/``lower_bound``: a lower bound >= it).
    ``progress``: None, or a float64 array of ``core/progress.h``'s N_SLOTS entries the search
    writes its live counters to while it runs (read by the verbose progress reporter).
    ``min_weight``: every leaf holds at least this weight (scikit-learn's
    ``min_weight_fraction_leaf`` times the total weight; 0: none); ``min_rows``: every leaf holds
    at least this many rows (``min_samples_leaf``). ``leaf_penalty``: each leaf costs this much
    on top of its errors (``ccp_alpha`` times the total weight; ``error``, ``lower_bound`` and
    ``upper_bound`` are then of that cost). ``max_leaves``: at most this many leaves (0: no
    budget; a budget runs one thread and ignores ``upper_bound``). ``front``: a list of results, the
    best tree of at most b leaves for every b = 1..``max_leaves`` (one search, its cache shared;
    ``leaf_penalty`` is not used).
    ``mono``: None, or an int8 array of -1, 0, +1 per binary feature (two classes): the monotonic
    constraints of ``topk/mono.h``; the result's ``label`` is then each node's forced class (-1:
    the majority of its counts)."""
    cdef Problem P
    cdef Options O
    cdef CostState state = None
    cdef Output out
    cdef const double[::1] wv
    cdef const int8_t[::1] mv
    cdef double[::1] live
    cdef Py_ssize_t n = y.shape[0]
    cdef uint64_t dummy = 0
    P.n = <int>n
    P.d = <int>columns.shape[0]
    P.C = n_classes
    P.nw = <int>((n + 63) // 64)
    if columns.shape[0] > 0 and columns.shape[1] != P.nw:
        raise ValueError("columns do not match the number of rows")
    P.columns = &columns[0, 0] if columns.shape[0] > 0 else &dummy
    P.y = &y[0]
    if weights is None:
        P.w = NULL
    else:
        wv = np.ascontiguousarray(weights, dtype=np.float64)
        P.w = &wv[0]
    O.k = k
    O.max_depth = max_depth
    O.criterion = criterion_code
    O.gain_ratio = gain_ratio
    O.time_limit = time_limit
    O.memory_limit_bytes = memory_limit_bytes
    O.n_jobs = n_jobs
    O.cache_depth1 = cache_depth1
    O.feature_classes = feature_classes
    if upper_bound is not None:
        O.upper_bound = float(upper_bound)
    O.min_weight = min_weight
    O.min_rows = min_rows
    O.leaf_penalty = leaf_penalty
    O.max_leaves = max_leaves
    O.mono = NULL
    if mono is not None:
        mv = np.ascontiguousarray(mono, dtype=np.int8)
        if mv.shape[0] != P.d or n_classes != 2:
            raise ValueError("mono needs one entry per binary feature and two classes")
        if P.d > 0:
            O.mono = &mv[0]
    O.cost = NULL
    O.cost_ctx = NULL
    O.progress = NULL
    if progress is not None:
        live = progress
        O.progress = &live[0]
    if criterion_code == -1:
        if cost is None:
            raise ValueError("criterion -1 needs a cost callable")
        state = CostState(cost)
        O.cost = batch_cost
        O.cost_ctx = <void*>state
    # Ctrl-C during the search: a C-level handler (installed from any thread) sets a flag the search
    # polls; it stops, and KeyboardInterrupt is raised here with the best tree found so far
    cdef SigintScope* scope = NULL
    cdef vector[Output] outs
    scope = open_sigint_scope()  # in any thread: Ctrl-C stops every search
    try:
        with nogil:
            if front:
                run_front(P, O, outs)
            else:
                run_search(P, O, out)
    finally:
        if scope != NULL:
            close_sigint_scope(scope)
    if front:
        results = [_result(outs[i], n_classes) for i in range(outs.size())]
        if any(r["interrupted"] for r in results):
            _raise_interrupt(results[len(results) - 1])  # (wraparound is off)
        return results
    if out.cost_failed:
        err = state.error if state is not None else None
        if err is None:
            err = RuntimeError("the criterion failed during the search")
        raise err
    result = _result(out, n_classes)
    if out.interrupted:
        _raise_interrupt(result)
    return result


cdef dict _result(Output& out, int n_classes):
    """A search's Output as the dictionary ``search`` returns."""
    nn = out.feature.size()
    if nn:
        feature = np.asarray(<int[:nn]> out.feature.data(), dtype=np.int64).copy()
        left = np.asarray(<int[:nn]> out.left.data(), dtype=np.int64).copy()
        right = np.asarray(<int[:nn]> out.right.data(), dtype=np.int64).copy()
        value = np.asarray(<double[:nn * n_classes]> out.value.data()).copy().reshape(nn, n_classes)
        nsamp = np.asarray(<int64_t[:nn]> out.nsamp.data()).copy()
        label = np.asarray(<int[:nn]> out.label.data(), dtype=np.int64).copy()
    else:  # no tree below upper_bound
        feature, left, right = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        label = np.zeros(0, np.int64)
        value, nsamp = np.zeros((0, n_classes)), np.zeros(0, np.int64)
    result = {
        "feature": feature, "left": left, "right": right, "value": value, "n_node_samples": nsamp, "label": label,
        "error": out.error, "lower_bound": out.root_lb, "timed_out": bool(out.timed_out),
        "nodes": out.nodes, "cache_hits": out.cache_hits, "evictions": out.evictions,
        "cache_entries": out.cache_entries, "peak_bytes": out.peak_bytes,
        "interrupted": bool(out.interrupted), "found": bool(out.found),
        "memory_bound": bool(out.memory_bound), "frame_bytes": out.frame_bytes,
    }
    return result


def _raise_interrupt(result):
    """KeyboardInterrupt for a search stopped by Ctrl-C, carrying the best tree found so far
    (``partial_result``, the dictionary ``search`` would have returned)."""
    raise_interrupted(result, "the search")



# ---------------------------------------------------------------- one root candidate at a time
# (the Dask tasks of this room's plug-in, sharded.py, run shares of the root's candidates)
cdef extern from "share.h" namespace "tl::topk":
    cdef cppclass RootShare:
        cbool complete()
        vector[int] candidates() except + nogil
        cbool search(int f, double ub, double& err) except + nogil
        void build(int f, Output& out) except + nogil
        void finish(Output& out)
        void request_stop()
        cbool stopped()
    RootShare* make_root_share(const Problem& P, const Options& O) except + nogil


cdef class RootSearch:
    """A search of the root's candidates one at a time (``topk/share.h``): ``candidates()`` (rank
    order, duplicates removed), ``search(f, ub)`` (the error of the best tree whose root splits on
    f, or None when it is not below ``ub``), ``build(f)`` (that tree, as ``search`` returns trees)
    and ``stats()``. Built-in criteria only; ``request_stop()`` may be called from another thread.
    The arguments are those of :func:`search` (``time_limit`` counts from the construction)."""
    cdef RootShare* share
    cdef object arrays
    cdef int n_classes

    def __cinit__(self, columns, y, int n_classes, weights, int k, int max_depth, int criterion_code,
                  bint gain_ratio, double time_limit, double memory_limit_bytes, bint cache_depth1=True,
                  bint feature_classes=False):
        cdef const uint64_t[:, ::1] cols = np.ascontiguousarray(columns, dtype=np.uint64)
        cdef const uint8_t[::1] y8v
        cdef const int64_t[::1] yv
        cdef const double[::1] wv
        cdef Problem P
        cdef Options O
        cdef uint64_t dummy = 0
        # class codes as bytes are read in place (a Dask task's problem: no 8-byte copy per row)
        cdef bint small = isinstance(y, np.ndarray) and y.dtype == np.uint8 and n_classes <= 255
        if small:
            y8v = np.ascontiguousarray(y)
        else:
            yv = np.ascontiguousarray(y, dtype=np.int64)
        if criterion_code < 0:
            raise ValueError("RootSearch takes a built-in criterion (code 0, 1 or 2)")
        self.share = NULL
        self.n_classes = n_classes
        P.n = <int>(y8v.shape[0] if small else yv.shape[0])
        P.d = <int>cols.shape[0]
        P.C = n_classes
        P.nw = <int>((P.n + 63) // 64)
        if cols.shape[0] > 0 and cols.shape[1] != P.nw:
            raise ValueError("columns do not match the number of rows")
        P.columns = &cols[0, 0] if cols.shape[0] > 0 else &dummy
        P.y = NULL
        P.y8 = NULL
        if P.n > 0:
            if small:
                P.y8 = &y8v[0]
            else:
                P.y = &yv[0]
        P.w = NULL
        if weights is not None:
            wv = np.ascontiguousarray(weights, dtype=np.float64)
            P.w = &wv[0]
        if small:
            self.arrays = (cols, y8v, None if weights is None else wv)
        else:
            self.arrays = (cols, yv, None if weights is None else wv)
        O.k = k
        O.max_depth = max_depth
        O.criterion = criterion_code
        O.gain_ratio = gain_ratio
        O.time_limit = time_limit
        O.memory_limit_bytes = memory_limit_bytes
        O.n_jobs = 1
        O.cache_depth1 = cache_depth1
        O.feature_classes = feature_classes
        O.cost = NULL
        O.cost_ctx = NULL
        O.progress = NULL
        with nogil:
            self.share = make_root_share(P, O)

    def __dealloc__(self):
        if self.share != NULL:
            del self.share

    def candidates(self):
        cdef vector[int] c
        with nogil:
            c = self.share.candidates()
        return np.asarray([c[i] for i in range(c.size())], dtype=np.int64)

    def search(self, int f, double ub):
        cdef double err = 0.0
        cdef cbool ok
        with nogil:
            ok = self.share.search(f, ub, err)
        return float(err) if ok else None

    def build(self, int f):
        cdef Output out
        with nogil:
            self.share.build(f, out)
        return _tree_arrays(out, self.n_classes)

    def stats(self):
        cdef Output out
        self.share.finish(out)
        return {"nodes": out.nodes, "cache_hits": out.cache_hits, "evictions": out.evictions,
                "cache_entries": out.cache_entries, "peak_bytes": out.peak_bytes,
                "timed_out": bool(out.timed_out), "interrupted": bool(out.interrupted),
                "complete": bool(self.share.complete())}

    def request_stop(self):
        self.share.request_stop()

    @property
    def stopped(self):
        return bool(self.share.stopped())


cdef dict _tree_arrays(Output& out, int n_classes):
    """The preorder tree of an Output as ``search`` returns it (node arrays)."""
    nn = out.feature.size()
    if nn == 0:
        return {"feature": np.zeros(0, np.int64), "left": np.zeros(0, np.int64), "right": np.zeros(0, np.int64),
                "value": np.zeros((0, n_classes)), "n_node_samples": np.zeros(0, np.int64)}
    return {"feature": np.asarray(<int[:nn]> out.feature.data(), dtype=np.int64).copy(),
            "left": np.asarray(<int[:nn]> out.left.data(), dtype=np.int64).copy(),
            "right": np.asarray(<int[:nn]> out.right.data(), dtype=np.int64).copy(),
            "value": np.asarray(<double[:nn * n_classes]> out.value.data()).copy().reshape(nn, n_classes),
            "n_node_samples": np.asarray(<int64_t[:nn]> out.nsamp.data()).copy()}
