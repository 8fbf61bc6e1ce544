# Binding of the optimal regression search on 0/1 features (regression_binary.h).
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t
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

cdef extern from "regression_binary.h" namespace "tl::cont":
    int REG_MAX_OUTPUTS

    cdef cppclass BinRegParams:
        int n, F, K
        const uint8_t* X
        const double* y
        const double* w
        int max_depth
        double upper_bound, eps, time_limit, mem_limit_bytes
        int use_cache

    cdef cppclass RegOutput:
        vector[int] feature, left, right
        vector[double] threshold
        double cost, lower_bound
        cbool timed_out, interrupted, memory_error
        long long nodes, evaluations, d2_evaluations
        double peak_bytes, fixed_bytes
        vector[pair[double, double]] history

    void run_binary_regression(const BinRegParams& P, RegOutput& out) except + nogil

cdef double _dummy = 0.0
cdef uint8_t _dummy8 = 0


def binary_regression_search(const uint8_t[:, ::1] X, const double[:, ::1] Y, const double[::1] weights,
                             int max_depth, double upper_bound=0.0, double eps=0.0, double time_limit=0.0,
                             double memory_limit_bytes=1e9, int use_cache=1):
    """The tree of least weighted SSE (summed over the columns of ``Y``, (n, K), centred) over
    the 0/1 columns of ``X`` (row-major uint8, (n, F), every value 0 or 1), depth <= ``max_depth``;
    a split of column f sends its 1-rows right. ``weights``: float64 per row, or None (ones). Only
    trees of SSE below ``upper_bound`` (> 0) are searched; ``eps``: the tie tolerance. Returns
    the preorder tree (``feature`` -1 at leaves, ``threshold`` 0.5, ``left``, ``right``), ``cost``,
    ``lower_bound``, ``timed_out``, ``memory_error`` and statistics, as
    ``_regression.regression_search``. Ctrl-C raises KeyboardInterrupt with the best tree so far."""
    cdef BinRegParams P
    cdef RegOutput out
    cdef Py_ssize_t n = Y.shape[0]
    if X.shape[0] != n or (weights is not None and weights.shape[0] != n):
        raise ValueError("X, Y and the weights do not have the same rows")
    if Y.shape[1] < 1 or Y.shape[1] > REG_MAX_OUTPUTS:
        raise ValueError(f"the search sums 1 to {REG_MAX_OUTPUTS} outputs, got {Y.shape[1]}")
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
    if not out.interrupted:
        return _result(out)
    try:
        res = _result(out)
    except KeyboardInterrupt as exc:  # Python's handler ran inside the conversion: the tree goes with it
        exc.partial_result = _result(out)
        raise
    raise_interrupted(res, "the optimal regression search on 0/1 features")


cdef dict _result(RegOutput& out):
    res = {"feature": np.asarray(out.feature, dtype=np.int64), "left": np.asarray(out.left, dtype=np.int64),
           "right": np.asarray(out.right, dtype=np.int64), "threshold": np.asarray(out.threshold, dtype=np.float64)}
    res.update(cost=out.cost, lower_bound=out.lower_bound, timed_out=bool(out.timed_out),
               memory_error=bool(out.memory_error), nodes=out.nodes, cache_hits=out.evaluations,
               d2_evaluations=out.d2_evaluations, peak_bytes=out.peak_bytes, fixed_bytes=out.fixed_bytes,
               history=[(out.history[i].first, out.history[i].second) for i in range(out.history.size())])
    return res
