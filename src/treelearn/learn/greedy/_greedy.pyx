# distutils: language = c++
"""Compiled greedy growth (see ``greedy/grow.h``): the whole fit runs in C++ without the GIL."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp.vector cimport vector
from libcpp cimport bool as cbool

from cpython.pycapsule cimport PyCapsule_GetPointer
from treelearn._criteria import SIGINT_SHARED, raise_interrupted

cdef extern from "core/limits.h" namespace "tl":
    void use_shared_sigint(void* p)

use_shared_sigint(PyCapsule_GetPointer(SIGINT_SHARED, b"treelearn.sigint"))  # the process's one Ctrl-C state

from treelearn._criteria cimport CostState, batch_cost, batch_fn

cnp.import_array()


cdef extern from "grow.h" namespace "tl::greedy":
    cdef struct Params:
        int n_classes
        int criterion
        int64_t max_depth
        int64_t max_leaves
        int64_t min_samples_leaf
        int64_t min_samples_split
        double min_impurity_decrease
        int hist
        double hist_budget
        int n_jobs
        int64_t hist_par_min
        int hist_digests
        double min_weight_leaf
        int64_t max_features
        int random_split
        uint64_t seed
        double time_limit
        batch_fn cost_cb
        void* cost_ctx

    cdef struct Problem:
        int64_t n
        int d
        int C
        const int32_t* codes
        const int32_t* n_codes
        const uint8_t* is_cat
        const int32_t* cat_only
        const int32_t* miss_code
        const int64_t* y
        const double* w
        const int8_t* mono
        const double* stats
        int64_t* leaf_of

    cdef cppclass Result:
        vector[int64_t] left, right, feature, split_code, split_low, n_samples
        vector[uint8_t] missing_left
        vector[double] value, impurity
        int64_t n_nodes
        cbool cost_failed
        int stopped
        cbool leaves_known
        int64_t threaded_builds
        vector[uint64_t] hist_digests

    void grow(const Problem& P, const Params& prm, Result& res) except + nogil

cdef extern from "core/limits.h" namespace "tl":
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)


cdef extern from "core/coding.h" namespace "tl":
    cdef cppclass ColumnCode:
        vector[double] u, thr
        int64_t n_missing
        int64_t n_distinct
    void code_columns[T](const T* X, int64_t n, int64_t rs, int64_t cs, const int64_t* cols, int64_t m,
                         int64_t max_thr, int32_t* codes, int T_, vector[ColumnCode]& out, cbool values) except + nogil


ctypedef fused _num:
    double
    float
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t

# the numeric dtypes coded in place (any other numeric matrix is converted to float64 first)
CODED_DTYPES = frozenset(np.dtype(t) for t in (np.float64, np.float32, np.int8, np.uint8, np.int16, np.uint16,
                                               np.int32, np.uint32, np.int64, np.uint64))


def code_numeric(X, const int64_t[::1] columns, int64_t max_thresholds, int32_t[:, ::1] codes,
                 bint keep_thresholds=True, int n_jobs=1):
    """Code the numeric ``columns`` of the matrix ``X`` (n, d; any strides; float64, float32 or
    an integer dtype, read in place: never copied to a float64 matrix) into rows of ``codes``
    (same index), as ``numeric_thresholds`` (``max_thresholds`` <= 0: exact), on ``n_jobs``
    threads (a column each). Returns (thresholds, values, n_missing): per column its thresholds
    (None when ``keep_thresholds`` is false: exact mode derives them from the values), its
    distinct present values and its number of missing values (NaN, coded ``thresholds.size +
    1``). A column that is strided or not float64 is converted to a one-column float64 buffer
    first (never the whole matrix); the columns are coded in batches of ``n_jobs``, whose results
    become arrays before the next."""
    X = np.asarray(X)
    if X.dtype == np.bool_:
        X = X.view(np.uint8)
    elif X.dtype not in CODED_DTYPES:
        X = X.astype(np.float64)
    return _code_numeric_typed(X, columns, max_thresholds, codes, keep_thresholds, n_jobs)


def code_numeric_ranks(X, const int64_t[::1] columns, int32_t[:, ::1] codes, int n_jobs=1):
    """Exact coding without the distinct values: every column's codes are the ranks of its
    distinct present values. Returns (n_distinct, n_missing) per column; the values themselves
    are read back from X where needed (a row of rank r holds the r-th value), so a fit holds no
    n-sized float array per column."""
    X = np.asarray(X)
    if X.dtype == np.bool_:
        X = X.view(np.uint8)
    elif X.dtype not in CODED_DTYPES:
        X = X.astype(np.float64)
    return _code_ranks_typed(X, columns, codes, n_jobs)


def rows_of_codes(const int32_t[::1] codes, wanted, int64_t n_codes):
    """For each code in ``wanted`` (ints in 0..n_codes-1), the first row whose code it is (-1:
    none); one pass over ``codes`` that stops once every wanted code is found. The wanted codes
    are marked in a bitset (n_codes bits: cache-resident where an index per code would not be)."""
    w_a = np.ascontiguousarray(wanted, dtype=np.int64)
    if w_a.size and (w_a.min() < 0 or w_a.max() >= n_codes):
        raise ValueError("wanted codes must lie in 0..n_codes-1")
    uniq_a = np.unique(w_a)
    cdef const int64_t[::1] uniq = uniq_a
    cdef Py_ssize_t i, lo, hi, mid, row, m = uniq.shape[0], n = codes.shape[0], left = m
    cdef int32_t c
    bits_a = np.zeros((n_codes + 64) // 64, dtype=np.uint64)
    first_a = np.full(m, -1, dtype=np.int64)
    cdef uint64_t[::1] bits = bits_a
    cdef int64_t[::1] first = first_a
    for i in range(m):
        bits[uniq[i] >> 6] |= (<uint64_t>1) << (uniq[i] & 63)
    with nogil:
        for row in range(n):
            if left == 0:
                break
            c = codes[row]
            if c < 0 or c >= n_codes or not ((bits[c >> 6] >> (c & 63)) & 1):
                continue
            lo = 0
            hi = m - 1
            while lo < hi:  # the wanted code's index among the sorted unique ones
                mid = (lo + hi) // 2
                if uniq[mid] < c:
                    lo = mid + 1
                else:
                    hi = mid
            first[lo] = row
            bits[c >> 6] &= ~((<uint64_t>1) << (c & 63))  # found: later rows of this code are skipped
            left -= 1
    return first_a[np.searchsorted(uniq_a, w_a)] if m else np.zeros(0, dtype=np.int64)


def _code_ranks_typed(const _num[:, :] X, const int64_t[::1] columns, int32_t[:, ::1] codes, int n_jobs):
    cdef vector[ColumnCode] out
    cdef Py_ssize_t i, n = X.shape[0], m = columns.shape[0]
    cdef int64_t rs = X.strides[0] // <Py_ssize_t>sizeof(_num), cs = X.strides[1] // <Py_ssize_t>sizeof(_num)
    cdef int T = max(1, n_jobs)
    cdef const _num* base = &X[0, 0] if (n and X.shape[1]) else NULL
    n_distinct = np.zeros(m, dtype=np.int64)
    n_missing = np.zeros(m, dtype=np.int64)
    if n == 0 or m == 0:
        return n_distinct, n_missing
    # every column in one call (no values are kept: nothing to convert between batches), so each
    # thread allocates its sort buffers once
    with nogil:
        code_columns(base, n, rs, cs, &columns[0], m, 0, &codes[0, 0], T, out, False)
    for i in range(m):
        n_missing[i] = out[i].n_missing
        n_distinct[i] = out[i].n_distinct
    return n_distinct, n_missing


def _code_numeric_typed(const _num[:, :] X, const int64_t[::1] columns, int64_t max_thresholds,
                        int32_t[:, ::1] codes, bint keep_thresholds, int n_jobs):
    # one specialisation per dtype of _num, chosen by Cython from X's dtype
    cdef vector[ColumnCode] out
    cdef Py_ssize_t i, k, b, n = X.shape[0], m = columns.shape[0]
    cdef int64_t rs = X.strides[0] // <Py_ssize_t>sizeof(_num), cs = X.strides[1] // <Py_ssize_t>sizeof(_num)
    cdef int T = max(1, n_jobs)
    cdef const _num* base = &X[0, 0] if (n and X.shape[1]) else NULL
    n_missing = np.zeros(m, dtype=np.int64)
    thresholds, values = [], []
    if n == 0:
        return [np.zeros(0) if keep_thresholds else None] * m, [np.zeros(0)] * m, n_missing
    for b in range(0, m, T):
        k = min(T, m - b)
        with nogil:
            code_columns(base, n, rs, cs, &columns[b], k, max_thresholds, &codes[0, 0], T, out, True)
        for i in range(k):
            n_missing[b + i] = out[i].n_missing
            thresholds.append((np.asarray(<double[:out[i].thr.size()]> out[i].thr.data()).copy()
                               if out[i].thr.size() else np.zeros(0)) if keep_thresholds else None)
            values.append(np.asarray(<double[:out[i].u.size()]> out[i].u.data()).copy()
                          if out[i].u.size() else np.zeros(0))
    return thresholds, values, n_missing


def grow_coded(const int32_t[:, ::1] codes, const int32_t[::1] n_codes, const uint8_t[::1] is_cat,
               const int32_t[::1] cat_only, const int32_t[::1] miss_code, const int64_t[::1] y, const double[::1] w, int n_classes,
               int criterion, int64_t max_depth, int64_t max_leaves, int64_t min_samples_leaf,
               double min_impurity_decrease, bint hist, double hist_budget=-1.0, cost=None,
               int64_t min_samples_split=2, int n_jobs=1, double min_weight_leaf=0.0,
               int64_t max_features=0, bint random_split=False, uint64_t seed=0, monotonic_cst=None,
               double time_limit=0.0, stats=None, int64_t[::1] leaf_of=None, int64_t hist_par_min=-1, bint hist_digests=False):
    """Grow a tree on coded features ``codes`` (d, n); returns a dict of node arrays.

    ``criterion``: 0 entropy, 1 Gini, 2 Kearns-Mansour, -1 a user G given as ``cost``, a callable
    (rows, C) class counts -> rows' weight x impurity, called once per node with the two sides of
    every candidate split (in batches of at most 65,536 candidates).

    ``min_weight_leaf``: each side of a split needs at least this weight (scikit-learn's), and a
    node of less than twice it is a leaf.

    ``max_features`` > 0: per node, features drawn at random (from ``seed`` and the node's id)
    until that many varied at the node and a valid split was found; ``random_split``: one random
    condition per drawn feature (splitter="random"). Either runs on the sorted finder, one thread.

    ``monotonic_cst``: None or (d,) int8 in {-1, 0, 1}, two classes (scikit-learn's monotonic
    constraints on the fraction of class 1: inadmissible splits skipped, node values clipped to
    the bounds the constrained splits set).

    ``n_jobs``: threads of a large node in either finder, the same tree for any number. For tests
    (hist.h): ``hist_par_min`` (< 0: the default), ``hist_digests``; see :func:`_node_arrays`.

    ``time_limit`` (seconds, <= 0: none) and Ctrl-C (in any thread) are checked before every
    split: past the limit the growth stops and the nodes not split yet are leaves (``stopped``:
    2); Ctrl-C raises KeyboardInterrupt with that tree as ``partial_result``.

    ``stats`` (regression, ``criterion`` 10 squared error, 12 Poisson): (n, C) rows' channels
    (``regressor.regression_stats``) in place of ``y``; ``value``: the nodes' summed channels.

    ``leaf_of``: None or an (n,) int64 array the histogram finder fills with each row's leaf (node
    id); ``leaves_known`` in the result says whether it did (the sorted finder does not).

    ``hist_budget``: bytes of histograms kept for nodes waiting to be split (< 0: the default,
    256 MB); past it a node's children are built from its rows instead of by subtraction.
    ``split_code`` is k for a numeric node (``code >= k`` goes right; ``split_low`` is the largest
    code present on the left) and v for a categorical one (``code == v`` goes right);
    ``miss_code[f]`` is the code of feature f's missing values (-1: none), ``split_code ==
    miss_code`` the missing-only split, and ``missing_go_to_left`` where a node sends them.
    """
    cdef Problem P
    cdef Params prm
    cdef Result res
    cdef CostState state = None
    P.n = codes.shape[1]
    P.d = codes.shape[0]
    P.C = n_classes
    P.codes = &codes[0, 0]
    P.n_codes = &n_codes[0]
    P.is_cat = &is_cat[0]
    P.cat_only = &cat_only[0]
    P.miss_code = &miss_code[0]
    P.w = &w[0]
    P.stats = NULL
    P.leaf_of = NULL
    if leaf_of is not None:
        if leaf_of.shape[0] != P.n:
            raise ValueError("leaf_of needs one entry per sample")
        P.leaf_of = &leaf_of[0] if P.n else NULL
    cdef const double[:, ::1] st
    if stats is not None:
        st = stats
        if st.shape[0] != P.n or st.shape[1] < 3 or criterion < 10:
            raise ValueError("stats needs one row per sample, at least 3 channels and a regression criterion")
        P.stats = &st[0, 0]
        P.C = n_classes = st.shape[1]
        P.y = NULL
    else:
        if criterion >= 10:
            raise ValueError("a regression criterion needs stats")
        P.y = &y[0]
    cdef const int8_t[::1] mono
    P.mono = NULL
    if monotonic_cst is not None:
        mono = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
        if mono.shape[0] != P.d or n_classes != 2:
            raise ValueError("monotonic_cst needs one entry per feature and two classes")
        P.mono = &mono[0]
    prm.n_classes = n_classes
    prm.criterion = criterion
    prm.max_depth = max_depth
    prm.max_leaves = max_leaves
    prm.min_samples_leaf = min_samples_leaf
    prm.min_samples_split = min_samples_split
    prm.min_impurity_decrease = min_impurity_decrease
    prm.hist = 1 if hist else 0
    prm.hist_budget = hist_budget
    prm.n_jobs = n_jobs if n_jobs > 0 else 1
    prm.hist_par_min = hist_par_min
    prm.hist_digests = 1 if hist_digests else 0
    prm.min_weight_leaf = min_weight_leaf
    prm.max_features = max_features
    prm.random_split = 1 if random_split else 0
    prm.seed = seed
    prm.cost_cb = NULL
    prm.cost_ctx = NULL
    if criterion < 0:
        if cost is None:
            raise ValueError("criterion -1 needs a cost callable")
        state = CostState(cost)
        prm.cost_cb = batch_cost
        prm.cost_ctx = <void*>state
    prm.time_limit = time_limit
    cdef SigintScope* scope = open_sigint_scope()
    try:
        with nogil:
            grow(P, prm, res)
    finally:
        close_sigint_scope(scope)
    if res.cost_failed:
        state.raise_error()
    out = _node_arrays(res, n_classes)
    out["leaves_known"] = bool(res.leaves_known and leaf_of is not None)
    if res.stopped == 1:
        _raise_interrupt(out)
    return out


cdef dict _node_arrays(Result& res, int n_classes):
    """The growth's node arrays (copies) and its stop flag; for tests, ``hist_threaded``: how many
    histograms were built on threads (nodes of ``hist_par_min`` entries, rows x features, or more),
    ``hist_digests``: when asked, the FNV-1a digest of every histogram made, in order (hist.h)."""
    cdef Py_ssize_t m = res.n_nodes
    out = {}
    out["children_left"] = np.asarray(<int64_t[:m]> res.left.data()).copy() if m else np.zeros(0, np.int64)
    out["children_right"] = np.asarray(<int64_t[:m]> res.right.data()).copy()
    out["feature"] = np.asarray(<int64_t[:m]> res.feature.data()).copy()
    out["split_code"] = np.asarray(<int64_t[:m]> res.split_code.data()).copy()
    out["split_low"] = np.asarray(<int64_t[:m]> res.split_low.data()).copy()
    out["missing_go_to_left"] = np.asarray(<uint8_t[:m]> res.missing_left.data()).copy()
    out["n_node_samples"] = np.asarray(<int64_t[:m]> res.n_samples.data()).copy()
    out["impurity"] = np.asarray(<double[:m]> res.impurity.data()).copy()
    out["value"] = np.asarray(<double[:m * n_classes]> res.value.data()).copy().reshape(m, n_classes)
    out["stopped"] = res.stopped
    out["hist_threaded"] = res.threaded_builds
    out["hist_digests"] = [d for d in res.hist_digests] if res.hist_digests.size() else None
    return out


def _raise_interrupt(result):
    """KeyboardInterrupt for a growth stopped by Ctrl-C, the tree so far as ``partial_result``."""
    raise_interrupted(result, "the greedy growth")

