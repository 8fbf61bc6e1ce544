# Binding of the continuous-feature optimal search (search.h, lookahead.h, share.h).
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, int8_t
from libcpp.vector cimport vector
from libcpp.utility cimport pair
from libcpp cimport bool as cbool
from cpython.exc cimport PyErr_Clear

from cpython.pycapsule cimport PyCapsule_GetPointer
from treelearn._criteria import SIGINT_SHARED, raise_interrupted

cdef extern from "core/limits.h" namespace "tl":
    void use_shared_sigint(void* p)

use_shared_sigint(PyCapsule_GetPointer(SIGINT_SHARED, b"treelearn.sigint"))  # the process's one Ctrl-C state

cdef extern from "Python.h":
    # declared without Cython's error check: the callback below handles the -1 itself
    int _check_signals "PyErr_CheckSignals"() noexcept

cnp.import_array()

ctypedef int (*interrupt_fn_t)(void*) noexcept nogil

cdef extern from "search.h" namespace "tl::cont":
    cdef cppclass Params:
        int n, F, C
        const double* X
        const int64_t* y
        const double* w
        const int8_t* nan_mode
        int max_depth
        double upper_bound, time_limit, cpu_limit, mem_limit_bytes
        double* progress
        int n_threads
        int use_cache, use_intervals, use_skip, use_d2, start_best, root_lanes, large_first, gini_order, use_caps
        int use_warm, use_simd, ordered_close, end_bounds
        int root_hint_feature
        double root_hint_threshold
        interrupt_fn_t interrupt_cb
        void* interrupt_ctx

    cdef cppclass Output:
        vector[int] feature, left, right
        vector[double] threshold
        double cost, lower_bound
        cbool timed_out, interrupted, memory_error
        long long evaluations, d2_evaluations, nodes, cache_hits, cache_entries
        double peak_bytes, fixed_bytes
        int threads_used
        vector[pair[double, double]] history

    void run_continuous(const Params& P, Output& out) except + nogil

cdef extern from "lookahead.h" namespace "tl::cont":
    cdef cppclass LookaheadOutput:
        Output tree
        int rounds, k_done
        cbool complete

    void run_lookahead(const Params& P, int crit_code, int k_max, LookaheadOutput& res) except + nogil

cdef extern from "share.h" namespace "tl::cont::detail":
    cdef cppclass Sol:
        pass
    cdef cppclass Res:
        double lb, cost
        Sol sol
    void write_tree(const Sol& s, Output& out)

cdef extern from "share.h" namespace "tl::cont":
    cdef cppclass RootShare:
        RootShare(const Params& P) except + nogil
        int n_positions()
        cbool search(int oi, double published) except + nogil
        cbool stopped()
        void request_stop()
        const Res& root()
        int best_position()
        double best_cost()
        const Sol& best_tree()
        double open_bound()
        double bound()
        double eps()
        void stats(Output& out)

cdef extern from "core/ties.h" namespace "tl":
    double TL_ERROR_TIE "tl::ERROR_TIE"

#: the compiled learners' error tie tolerance (core/ties.h), the same as learn/anytime.ERROR_TIE
ERROR_TIE = TL_ERROR_TIE

cdef extern from "core/limits.h" namespace "tl":
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)


cdef int _check_interrupt(void* ctx) noexcept with gil:
    # Ctrl-C: Python's signal handler has set a flag; PyErr_CheckSignals raises it here. The
    # search stops and the caller re-raises KeyboardInterrupt once the GIL-free section is over.
    if _check_signals() != 0:
        PyErr_Clear()
        return 1
    return 0


cdef double _dummy = 0.0


# the switches of the search (Params in data.h; their defaults are Params' own): none changes the tree
SWITCHES = ("use_cache", "use_intervals", "use_skip", "use_d2", "start_best", "root_lanes", "large_first", "use_caps",
            "use_warm", "use_simd", "ordered_close", "end_bounds")


cdef _set_switches(Params& P, dict switches):
    unknown = set(switches) - set(SWITCHES)
    if unknown:
        raise TypeError(f"unknown search switch(es): {', '.join(sorted(unknown))}")
    if "use_cache" in switches:
        P.use_cache = int(switches["use_cache"])
    if "use_intervals" in switches:
        P.use_intervals = int(switches["use_intervals"])
    if "use_skip" in switches:
        P.use_skip = int(switches["use_skip"])
    if "use_d2" in switches:
        P.use_d2 = int(switches["use_d2"])
    if "start_best" in switches:
        P.start_best = int(switches["start_best"])
    if "root_lanes" in switches:
        P.root_lanes = max(1, int(switches["root_lanes"]))
    if "large_first" in switches:
        P.large_first = int(switches["large_first"])
    if "use_caps" in switches:
        P.use_caps = int(switches["use_caps"])
    if "use_warm" in switches:
        P.use_warm = int(switches["use_warm"])
    if "use_simd" in switches:
        P.use_simd = int(switches["use_simd"])
    if "ordered_close" in switches:
        P.ordered_close = int(switches["ordered_close"])
    if "end_bounds" in switches:
        P.end_bounds = int(switches["end_bounds"])


cdef _fill_params(Params& P, const double[:, ::1] X_fm, const int64_t[::1] y, int n_classes, weights, nan_mode,
                  int max_depth, double upper_bound, double time_limit, double memory_limit_bytes, dict switches):
    """The search's parameters (switches: a subset of SWITCHES, the others at Params' defaults);
    returns the arrays P points into (to be kept alive)."""
    cdef const double[::1] wv
    cdef const int8_t[::1] nm
    cdef Py_ssize_t n = y.shape[0]
    if X_fm.shape[1] != n and X_fm.shape[0] > 0:
        raise ValueError("X does not match the number of labels")
    P.n = <int>n
    P.F = <int>X_fm.shape[0]
    P.C = n_classes
    P.X = &X_fm[0, 0] if X_fm.shape[0] > 0 and n > 0 else &_dummy
    P.y = &y[0]
    keep = [X_fm, y]
    if weights is None:
        P.w = NULL
    else:
        wv = np.ascontiguousarray(weights, dtype=np.float64)
        P.w = &wv[0]
        keep.append(wv)
    P.nan_mode = NULL
    if nan_mode is not None:
        nm = np.ascontiguousarray(nan_mode, dtype=np.int8)
        if nm.shape[0] != X_fm.shape[0]:
            raise ValueError("nan_mode needs one entry per column")
        if nm.shape[0] > 0:
            P.nan_mode = &nm[0]
        keep.append(nm)
    P.max_depth = max_depth
    P.upper_bound = upper_bound
    P.time_limit = time_limit
    P.mem_limit_bytes = memory_limit_bytes
    _set_switches(P, switches)
    P.root_hint_feature = -1
    P.root_hint_threshold = 0.0
    P.n_threads = 1
    P.interrupt_cb = NULL
    P.interrupt_ctx = NULL
    P.progress = NULL
    return keep


def continuous_search(const double[:, ::1] X_fm, const int64_t[::1] y, int n_classes, weights, int max_depth,
                      double upper_bound=0.0, double time_limit=0.0, double memory_limit_bytes=1e9,
                      int n_threads=1, nan_mode=None, progress=None, int root_hint_feature=-1,
                      double root_hint_threshold=0.0, double cpu_limit=0.0, **switches):
    """Optimal tree over every threshold of the columns of ``X_fm`` (feature-major, (F, n)).

    Returns the preorder tree (``feature`` -1 at leaves, ``threshold``, ``left``, ``right``) and
    ``cost``, ``lower_bound``, ``timed_out`` and search statistics. Only trees of error below
    ``upper_bound`` (when > 0) are searched: if none exists, the returned tree may be a worse one.
    ``n_threads`` > 1 farms the root's features to threads (same optimal error). ``nan_mode``
    (int8 per column, or None): where the column's missing values (NaN) go, 1 left, 2 right.
    ``progress``: None, or a float64 array (core/progress.h's slots) the search writes its live
    counters to while it runs (the verbose progress reporter reads it). ``root_hint_feature`` (a
    column, -1: none) and ``root_hint_threshold``: the root split searched first (the anytime
    order; the same tree). ``cpu_limit`` (> 0): a stop after that many seconds of the process's CPU
    time (the probe's budget: unlike ``time_limit``, not cut short by a loaded machine).
    ``switches``: the ablation switches of ``SWITCHES`` (the same tree), among
    them ``root_lanes``: features whose threshold scans the root steps in turn, per thread (1: one
    feature after the other)."""
    cdef Params P
    cdef Output out
    cdef double[::1] live
    keep = _fill_params(P, X_fm, y, n_classes, weights, nan_mode, max_depth, upper_bound, time_limit,
                        memory_limit_bytes, switches)
    P.n_threads = max(1, n_threads)
    P.root_hint_feature = root_hint_feature
    P.root_hint_threshold = root_hint_threshold
    P.cpu_limit = cpu_limit
    P.interrupt_cb = _check_interrupt
    P.progress = NULL
    if progress is not None:
        live = progress
        P.progress = &live[0]
    P.interrupt_ctx = NULL
    # Ctrl-C: a C-level SIGINT handler (installed from any thread) sets a flag every worker polls; with one
    # thread the search also polls Python's signal handlers (the callback above: other signals
    # whose Python handler raises)
    cdef SigintScope* scope = NULL
    scope = open_sigint_scope()  # in any thread: Ctrl-C stops every search
    try:
        with nogil:
            run_continuous(P, out)
    finally:
        if scope != NULL:
            close_sigint_scope(scope)
    _raise_if_interrupted(out)
    return dict(_tree_arrays(out), **{
        "cost": out.cost, "lower_bound": out.lower_bound, "timed_out": bool(out.timed_out),
        "memory_error": bool(out.memory_error), "fixed_bytes": out.fixed_bytes,
        "evaluations": out.evaluations, "d2_evaluations": out.d2_evaluations, "nodes": out.nodes,
        "cache_hits": out.cache_hits, "cache_entries": out.cache_entries, "peak_bytes": out.peak_bytes,
        "threads_used": out.threads_used, "history": _history(out)})


cdef _raise_if_interrupted(Output& out):
    # the best tree found so far goes with the exception as ``partial_result`` (the arrays and
    # ``cost`` the search would have returned), as a time limit returns it
    if out.interrupted:
        raise_interrupted(dict(_tree_arrays(out), cost=out.cost, nodes=out.nodes), "the continuous optimal search")


def continuous_lookahead(const double[:, ::1] X_fm, const int64_t[::1] y, int n_classes, weights, int max_depth,
                         int criterion=0, double time_limit=0.0, double memory_limit_bytes=1e9, int k_max=0,
                         int n_threads=1, nan_mode=None, progress=None):
    """The Top-k incumbent (``continuous/lookahead.h``): rounds k = 1, 2, 4, ... (up to ``k_max``,
    <= 0: every column) of a search that splits a node of depth budget >= 3 only on the k columns
    with the best ``criterion`` split (0 entropy, 1 Gini, 2 Kearns-Mansour), each at that
    threshold, and solves nodes of budget <= 2 exactly, then (every column done, ``time_limit``
    given) one round with every column for each other criterion, within ``time_limit`` seconds
    (the phase's budget; a round it cuts short still counts); ``n_threads`` share the root's candidates (the
    same tree). Arguments otherwise as :func:`continuous_search`.
    Returns the best tree found, its ``cost``, ``rounds`` and ``k`` (of the last round finished),
    ``complete`` (the round with every column finished), ``timed_out`` and statistics."""
    cdef Params P
    cdef LookaheadOutput res
    cdef double[::1] live
    keep = _fill_params(P, X_fm, y, n_classes, weights, nan_mode, max_depth, 0.0, time_limit,
                        memory_limit_bytes, {})
    P.interrupt_cb = _check_interrupt
    P.n_threads = max(1, n_threads)
    if progress is not None:
        live = progress
        P.progress = &live[0]
    cdef SigintScope* scope = NULL
    scope = open_sigint_scope()  # in any thread: Ctrl-C stops every search
    try:
        with nogil:
            run_lookahead(P, criterion, k_max, res)
    finally:
        if scope != NULL:
            close_sigint_scope(scope)
    _raise_if_interrupted(res.tree)
    return dict(_tree_arrays(res.tree), **{
        "cost": res.tree.cost, "timed_out": bool(res.tree.timed_out), "memory_error": bool(res.tree.memory_error),
        "fixed_bytes": res.tree.fixed_bytes, "rounds": res.rounds, "k": res.k_done, "complete": bool(res.complete),
        "nodes": res.tree.nodes, "d2_evaluations": res.tree.d2_evaluations, "cache_hits": res.tree.cache_hits,
        "threads_used": res.tree.threads_used, "history": _history(res.tree)})


cdef list _history(Output& out):
    """(seconds since the search started, error) of each better root incumbent."""
    return [(out.history[i].first, out.history[i].second) for i in range(out.history.size())]


cdef dict _tree_arrays(Output& out):
    nn = out.feature.size()
    if nn:
        feature = np.asarray(<int[:nn]> out.feature.data(), dtype=np.int64).copy()
        left = np.asarray(<int[:nn]> out.left.data(), dtype=np.int64).copy()
        right = np.asarray(<int[:nn]> out.right.data(), dtype=np.int64).copy()
        threshold = np.asarray(<double[:nn]> out.threshold.data()).copy()
    else:
        feature = left = right = np.zeros(0, np.int64)
        threshold = np.zeros(0)
    return {"feature": feature, "left": left, "right": right, "threshold": threshold}


cdef dict _sol_arrays(const Sol& s):
    cdef Output out
    write_tree(s, out)
    return _tree_arrays(out)


cdef class ContinuousShare:
    """The root's features one at a time (``continuous/share.h``), for a caller that deals the
    positions of the root's feature order to tasks elsewhere (the Dask fit). Arguments as
    :func:`continuous_search` (one thread, no progress counters). ``search(oi, published)``
    searches the feature at position ``oi`` (increasing positions) below the task's own best and
    ``published`` (the best error other tasks found; ties with it are still searched) and says
    whether it improved the task's best; ``result()`` gives the root's own answer, the task's best
    split tree and its position (-1: none), the bound of what a stop left unsearched and the
    search statistics."""
    cdef RootShare* rs
    cdef object keep

    def __cinit__(self, const double[:, ::1] X_fm, const int64_t[::1] y, int n_classes, weights, int max_depth,
                  double upper_bound=0.0, double time_limit=0.0, double memory_limit_bytes=1e9,
                  nan_mode=None, **switches):
        cdef Params P
        self.rs = NULL
        self.keep = _fill_params(P, X_fm, y, n_classes, weights, nan_mode, max_depth, upper_bound, time_limit,
                                 memory_limit_bytes, switches)
        with nogil:
            self.rs = new RootShare(P)

    def __dealloc__(self):
        if self.rs != NULL:
            del self.rs

    @property
    def n_positions(self):
        return self.rs.n_positions()

    @property
    def stopped(self):
        return bool(self.rs.stopped())

    def request_stop(self):
        self.rs.request_stop()

    def search(self, int oi, double published):
        cdef cbool better
        with nogil:
            better = self.rs.search(oi, published)
        return bool(better)

    def result(self):
        cdef Output out
        self.rs.stats(out)
        root = dict(_sol_arrays(self.rs.root().sol), cost=self.rs.root().cost, lower_bound=self.rs.root().lb)
        pos = self.rs.best_position()
        best = None if pos < 0 else dict(_sol_arrays(self.rs.best_tree()), cost=self.rs.best_cost())
        return {"root": root, "position": pos, "best": best, "settled": self.rs.n_positions() == 0,
                "open_bound": self.rs.open_bound(), "bound": self.rs.bound(), "eps": self.rs.eps(),
                "stopped": bool(self.rs.stopped()), "memory_error": bool(out.memory_error),
                "fixed_bytes": out.fixed_bytes, "evaluations": out.evaluations,
                "d2_evaluations": out.d2_evaluations, "nodes": out.nodes, "cache_hits": out.cache_hits,
                "cache_entries": out.cache_entries, "peak_bytes": out.peak_bytes}
