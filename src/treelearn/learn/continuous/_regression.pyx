# Binding of the optimal (and Top-k) regression search over every threshold (regression_search.h)
# and of the search on 0/1 features (regression_binary.h).
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t
from libcpp.vector cimport vector
from libcpp.utility cimport pair
from libcpp cimport bool as cbool

from cpython.pycapsule cimport PyCapsule_GetPointer
from treelearn._criteria import SIGINT_SHARED, raise_interrupted

cdef extern from "core/limits.h" namespace "tl":
    void use_shared_sigint(void* p)
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)

use_shared_sigint(PyCapsule_GetPointer(SIGINT_SHARED, b"treelearn.sigint"))  # the process's one Ctrl-C state

cnp.import_array()

cdef extern from "regression_search.h" namespace "tl::cont":
    int REG_MAX_OUTPUTS

    cdef cppclass RegParams:
        int n, F, K
        const double* X
        const double* y
        const double* w
        const int8_t* nan_mode
        int max_depth, min_samples_leaf, top_k
        double upper_bound, eps, time_limit, mem_limit_bytes, leaf_penalty
        int use_intervals, use_d2, large_first, use_kmeans, use_fbounds, use_warm_children, use_ends, warm_cells, warm_rounds, n_threads

    cdef cppclass RegOutput:
        vector[int] feature, left, right
        vector[double] threshold
        double cost, lower_bound
        cbool timed_out, interrupted, memory_error
        long long nodes, evaluations, d2_evaluations
        cbool warm_tree
        int threads_used
        double peak_bytes, fixed_bytes
        vector[pair[double, double]] history

    void run_regression(const RegParams& P, RegOutput& out) except + nogil

cdef extern from "regression_binary.h" namespace "tl::cont":
    cdef cppclass BinRegParams:
        int n, F, K
        const uint8_t* X
        const double* y
        const double* w
        int max_depth
        double upper_bound, eps, time_limit, mem_limit_bytes
        int use_cache

    void run_binary_regression(const BinRegParams& P, RegOutput& out) except + nogil

cdef extern from "regression.h" namespace "tl::cont::detail":
    double kmeans_1d(const vector[double]& ys, const vector[double]& ws, int k) except +

#: the most outputs the compiled search sums
MAX_OUTPUTS = REG_MAX_OUTPUTS

cdef double _dummy = 0.0
cdef uint8_t _dummy8 = 0


def regression_search(const double[:, ::1] X_fm, const double[:, ::1] Y, const double[::1] weights, int max_depth,
                      int min_samples_leaf=1, int top_k=0, double upper_bound=0.0, double eps=0.0,
                      double time_limit=0.0, double memory_limit_bytes=1e9, const int8_t[::1] nan_mode=None,
                      int use_intervals=1, int use_d2=1, int large_first=0, int use_kmeans=1, int use_fbounds=1,
                      int use_warm_children=1, int use_ends=0, int warm_cells=16, int warm_rounds=-1,
                      int n_threads=1, double leaf_penalty=0.0):
    """The tree of least weighted SSE (summed over the columns of ``Y``, (n, K), centred) over
    every threshold of the columns of ``X_fm`` (feature-major, (F, n)), depth <= ``max_depth``;
    ``top_k`` > 0: Top-k (only a node's top_k best splits). ``weights``: float64 per row, or None
    (ones). Only trees of SSE below ``upper_bound`` (> 0) are searched; ``eps``: the tie
    tolerance. ``nan_mode`` (int8 per column, or None) as ``_continuous.continuous_search``.
    ``leaf_penalty`` > 0: the objective is SSE + leaf_penalty * leaves (``cost``, ``lower_bound``
    and ``upper_bound`` of it). Returns the preorder tree (``feature`` -1 at leaves, ``threshold``, ``left``, ``right``),
    ``cost``, ``lower_bound``, ``timed_out``, ``memory_error``, ``warm_tree`` (the tree is the warm
    start's: the optimum over about ``warm_cells`` quantile thresholds per feature, searched first;
    0: no warm start) and statistics. Ctrl-C raises
    KeyboardInterrupt with the best tree so far."""
    cdef RegParams P
    cdef RegOutput out
    cdef Py_ssize_t n = Y.shape[0]
    _check_rows(X_fm.shape[1] if X_fm.shape[0] > 0 else n, n, weights, Y.shape[1])
    if nan_mode is not None and nan_mode.shape[0] != X_fm.shape[0]:
        raise ValueError("nan_mode needs one entry per column")
    P.n = <int>n
    P.F = <int>X_fm.shape[0]
    P.K = <int>Y.shape[1]
    P.X = &X_fm[0, 0] if X_fm.shape[0] > 0 and n > 0 else &_dummy
    P.y = &Y[0, 0] if n > 0 else &_dummy
    P.w = &weights[0] if weights is not None and n > 0 else NULL
    P.nan_mode = &nan_mode[0] if nan_mode is not None and nan_mode.shape[0] > 0 else NULL
    P.max_depth = max_depth
    P.min_samples_leaf = max(1, min_samples_leaf)
    P.top_k = max(0, top_k)
    P.upper_bound = upper_bound
    P.eps = eps
    P.time_limit = time_limit
    P.mem_limit_bytes = memory_limit_bytes
    P.use_intervals = use_intervals
    P.use_d2 = use_d2
    P.large_first = large_first
    P.use_kmeans = use_kmeans
    P.use_fbounds = use_fbounds
    P.use_warm_children = use_warm_children
    P.use_ends = use_ends
    P.leaf_penalty = max(0.0, leaf_penalty)
    P.warm_cells = max(0, warm_cells)
    P.warm_rounds = warm_rounds
    P.n_threads = max(1, n_threads)
    cdef SigintScope* scope = open_sigint_scope()  # Ctrl-C stops the search (core/limits.h)
    try:
        with nogil:
            run_regression(P, out)
    finally:
        close_sigint_scope(scope)
    return _finish(out, "the optimal regression search")


def binary_regression_search(const uint8_t[:, ::1] X, const double[:, ::1] Y, const double[::1] weights,
                             int max_depth, double upper_bound=0.0, double eps=0.0, double time_limit=0.0,
                             double memory_limit_bytes=1e9, int use_cache=1):
    """The tree of least weighted SSE (summed over the columns of ``Y``, (n, K), centred) over
    the 0/1 columns of ``X`` (row-major uint8, (n, F), every value 0 or 1), depth <= ``max_depth``;
    a split of column f sends its 1-rows right. ``weights``, ``upper_bound``, ``eps``, the limits
    and the result as :func:`regression_search` (``cache_hits``: subproblems answered by the
    cache). Ctrl-C raises KeyboardInterrupt with the best tree so far."""
    cdef BinRegParams P
    cdef RegOutput out
    cdef Py_ssize_t n = Y.shape[0]
    _check_rows(X.shape[0], n, weights, Y.shape[1])
    if n > 0 and X.shape[1] > 0 and np.asarray(X).max() > 1:
        raise ValueError("X must hold 0/1 values only")
    P.n = <int>n
    P.F = <int>X.shape[1]
    P.K = <int>Y.shape[1]
    P.X = &X[0, 0] if X.shape[1] > 0 and n > 0 else &_dummy8
    P.y = &Y[0, 0] if n > 0 else &_dummy
    P.w = &weights[0] if weights is not None and n > 0 else NULL
    P.max_depth = max_depth
    P.upper_bound = upper_bound
    P.eps = eps
    P.time_limit = time_limit
    P.mem_limit_bytes = memory_limit_bytes
    P.use_cache = use_cache
    cdef SigintScope* scope = open_sigint_scope()  # Ctrl-C stops the search (core/limits.h)
    try:
        with nogil:
            run_binary_regression(P, out)
    finally:
        close_sigint_scope(scope)
    res = _finish(out, "the optimal regression search on 0/1 features")
    res["cache_hits"] = res.pop("evaluations")
    return res


cdef _check_rows(Py_ssize_t x_rows, Py_ssize_t n, const double[::1] weights, Py_ssize_t n_outputs):
    """Both searches' shape checks: as many rows in X, Y and the weights, 1..MAX_OUTPUTS outputs."""
    if x_rows != n or (weights is not None and weights.shape[0] != n):
        raise ValueError("X, Y and the weights do not have the same rows")
    if n_outputs < 1 or n_outputs > REG_MAX_OUTPUTS:
        raise ValueError(f"the search sums 1 to {REG_MAX_OUTPUTS} outputs, got {n_outputs}")


cdef dict _finish(RegOutput& out, str what):
    """The search's result as a dict; Ctrl-C: KeyboardInterrupt carrying it (``partial_result``)."""
    if not out.interrupted:
        return _result(out)
    try:
        res = _result(out)
    except KeyboardInterrupt as exc:  # Python's handler ran inside the conversion: the tree goes with it
        exc.partial_result = _result(out)
        raise
    raise_interrupted(res, what)


cdef dict _result(RegOutput& out):
    # (the tree's few nodes: Cython's vector -> list conversion)
    res = {"feature": np.asarray(out.feature, dtype=np.int64), "left": np.asarray(out.left, dtype=np.int64),
           "right": np.asarray(out.right, dtype=np.int64), "threshold": np.asarray(out.threshold, dtype=np.float64)}
    res.update(cost=out.cost, lower_bound=out.lower_bound, timed_out=bool(out.timed_out),
               memory_error=bool(out.memory_error), nodes=out.nodes, evaluations=out.evaluations,
               d2_evaluations=out.d2_evaluations, warm_tree=bool(out.warm_tree), threads_used=out.threads_used,
               peak_bytes=out.peak_bytes, fixed_bytes=out.fixed_bytes,
               history=[(out.history[i].first, out.history[i].second) for i in range(out.history.size())])
    return res


def kmeans_1d_bound(ys, ws, int k):
    """The least weighted SSE of a partition of the values ``ys`` (ascending, weights ``ws``) into at
    most ``k`` groups: the one-dimensional k-means bound of a tree of at most ``k`` leaves."""
    cdef vector[double] y = [float(v) for v in ys]
    cdef vector[double] w = [float(v) for v in ws]
    return kmeans_1d(y, w, k)
