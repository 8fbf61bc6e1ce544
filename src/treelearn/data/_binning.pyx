# distutils: language = c++
"""Compiled histogram coding of numeric columns (see ``_binning.h``): code = #thresholds <= x; and
the numeric thresholds of a column (``core/coding.h``, the one definition the greedy learner codes
its features with)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, int32_t, uint8_t, uint16_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cnp.import_array()

ctypedef fused code_t:
    uint8_t
    uint16_t
    int32_t


cdef extern from "_binning.h" namespace "tl::bin":
    void code_column[Code](const double* x, int64_t n, int64_t stride, const double* thr, int64_t m, Code* out,
                           int64_t out_stride) nogil
    int64_t code_column_nan[Code](const double* x, int64_t n, int64_t stride, const double* thr, int64_t m,
                                  Code* out, const double* u, cbool& all_in_u) nogil
    void code_columns_nan[Code](const double* const* x, int64_t n, int64_t stride, const double* const* thr,
                                const int64_t* m, Code* const* out, const double* const* u, int k, int64_t* miss,
                                uint8_t* all_in_u) nogil


cdef extern from "core/coding.h" namespace "tl":
    vector[double] column_thresholds_cpp "tl::column_thresholds"(const double* x, int64_t n, int64_t stride,
                                                                   int64_t max_thr) except + nogil
    cdef cppclass ColumnCode:
        vector[double] u, thr
    void sample_thresholds_cpp "tl::sample_thresholds"(const double* S, int64_t n, int64_t d, int64_t max_thr,
                                                        int T, vector[ColumnCode]& out) except + nogil


def sample_thresholds(S, int64_t max_thresholds, int n_jobs=1):
    """The thresholds and distinct values of every column of the row sample ``S`` (rows x
    columns), as ``column_thresholds`` computes them (``core/coding.h``), columns on up to
    ``n_jobs`` threads. Returns (thresholds, values): a list of arrays each."""
    cdef const double[:, ::1] sv = np.ascontiguousarray(S, dtype=np.float64)
    cdef int64_t n = sv.shape[0], d = sv.shape[1], j
    cdef vector[ColumnCode] out
    if n == 0 or d == 0:
        return [np.zeros(0) for _ in range(d)], [np.zeros(0) for _ in range(d)]
    with nogil:
        sample_thresholds_cpp(&sv[0, 0], n, d, max_thresholds, max(1, n_jobs), out)
    thr, vals = [], []
    for j in range(d):
        thr.append(np.asarray(<double[:out[j].thr.size()]> out[j].thr.data()).copy() if out[j].thr.size()
                   else np.zeros(0))
        vals.append(np.asarray(<double[:out[j].u.size()]> out[j].u.data()).copy() if out[j].u.size()
                    else np.zeros(0))
    return thr, vals


def column_thresholds(x, int64_t max_thresholds):
    """The thresholds (ascending) of one numeric column ``x`` (NaN ignored): every midpoint between
    consecutive distinct values (``max_thresholds`` <= 0, or no more midpoints than it), else the
    midpoints just above the data quantiles ``s[(i * n) // (m + 1)]``, i = 1..m, of the sorted
    present values ``s`` (``core/coding.h``)."""
    cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64).ravel()
    cdef vector[double] thr
    cdef int64_t n = xv.shape[0]
    if n == 0:
        return np.zeros(0)
    with nogil:
        thr = column_thresholds_cpp(&xv[0], n, 1, max_thresholds)
    if thr.size() == 0:
        return np.zeros(0)
    return np.asarray(<double[:thr.size()]> thr.data()).copy()


cdef _code_into(const double[:, :] X, list thresholds, code_t[:, :] out, bint by_row):
    cdef int64_t n = X.shape[0], d = X.shape[1], j, m
    cdef int64_t xs = X.strides[0] // sizeof(double), xc = X.strides[1] // sizeof(double)
    cdef int64_t os0 = out.strides[0] // sizeof(code_t), os1 = out.strides[1] // sizeof(code_t)
    cdef const double[::1] t
    cdef double dummy = 0.0
    cdef const double* tp
    cdef code_t* dst
    if n == 0 or d == 0:
        return
    for j in range(d):
        t = np.ascontiguousarray(thresholds[j], dtype=np.float64)
        m = t.shape[0]
        tp = &t[0] if m else &dummy
        dst = &out[0, j] if by_row else &out[j, 0]
        with nogil:
            code_column(&X[0, 0] + j * xc, n, xs, tp, m, dst, os0 if by_row else os1)


def code_rows(X, list thresholds, dtype):
    """Codes of X (n, d) as a row-major (n, d) array of ``dtype`` (uint8 / uint16 / int32)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty(X.shape, dtype=dtype)
    if out.dtype == np.uint8:
        _code_into[uint8_t](X, thresholds, out, True)
    elif out.dtype == np.uint16:
        _code_into[uint16_t](X, thresholds, out, True)
    else:
        _code_into[int32_t](X, thresholds, out, True)
    return out


def code_columns_into(X, list thresholds, int32_t[:, :] codes):
    """Codes of X's columns (n, d) into the rows of ``codes`` (d, n) int32."""
    _code_into[int32_t](np.asarray(X, dtype=np.float64), thresholds, codes, False)


def code_column_missing(x, thresholds, values, int32_t[::1] out):
    """One column ``x`` (n values, any numeric dtype) coded into ``out`` as the number of
    ``thresholds`` <= x, NaN as ``thresholds.size + 1``, in one compiled pass. ``values`` (the
    column's distinct values with ``thresholds.size + 1`` entries, or None) is checked in the same
    pass. Returns ``(n_missing, every value is one of values and none is missing)``."""
    cdef const double[:] xv = np.asarray(x, dtype=np.float64)
    cdef const double[::1] t = np.ascontiguousarray(thresholds, dtype=np.float64)
    cdef const double[::1] u
    cdef int64_t n = xv.shape[0], m = t.shape[0], miss
    cdef double dummy = 0.0
    cdef const double* up = NULL
    cdef cbool in_u = False
    if out.shape[0] != n:
        raise ValueError("out must have one code per value")
    if values is not None:
        u = np.ascontiguousarray(values, dtype=np.float64)
        if u.shape[0] != m + 1:
            raise ValueError("values must have thresholds.size + 1 entries")
        up = &u[0]
    if n == 0:
        return 0, values is not None
    with nogil:
        miss = code_column_nan[int32_t](&xv[0], n, xv.strides[0] // sizeof(double), &t[0] if m else &dummy, m,
                                        &out[0], up, in_u)
    return int(miss), bool(in_u)


def code_columns_missing(X, cols, list thresholds, list values, int32_t[:, ::1] codes):
    """:func:`code_column_missing` of the columns ``cols`` of the 2-D ``X`` (their thresholds and
    values, or None, in that order) into the rows ``codes[cols[i]]``, by blocks of rows (``X``
    read once whatever its layout). Returns ``(n_missing per column, every value in values and
    none missing per column)``."""
    cdef const double[:, :] xv = np.asarray(X, dtype=np.float64)
    cdef const int64_t[::1] cv = np.ascontiguousarray(cols, dtype=np.int64)
    cdef int k = cv.shape[0], j
    cdef int64_t n = xv.shape[0]
    if codes.shape[1] != n or len(thresholds) != k or len(values) != k:
        raise ValueError("one row of codes per column of X; thresholds and values per coded column")
    keep = []  # the contiguous float64 arrays the pointers below point into
    cdef vector[const double*] xp, tp, up
    cdef vector[int32_t*] op
    cdef vector[int64_t] m
    cdef const double[::1] a
    cdef double dummy = 0.0
    for j in range(k):
        if not 0 <= cv[j] < codes.shape[0] or cv[j] >= xv.shape[1]:
            raise ValueError("column index out of range")
        xp.push_back(&xv[0, cv[j]] if n else &dummy)
        a = np.ascontiguousarray(thresholds[j], dtype=np.float64)
        keep.append(a)
        m.push_back(a.shape[0])
        tp.push_back(&a[0] if a.shape[0] else &dummy)
        if values[j] is None:
            up.push_back(NULL)
        else:
            a = np.ascontiguousarray(values[j], dtype=np.float64)
            if a.shape[0] != m[j] + 1:
                raise ValueError("values must have thresholds.size + 1 entries")
            keep.append(a)
            up.push_back(&a[0])
        op.push_back(&codes[cv[j], 0] if n else NULL)
    miss = np.zeros(k, dtype=np.int64)
    if n == 0 or k == 0:
        return miss, [values[j] is not None for j in range(k)]
    cdef int64_t[::1] mv = miss
    cdef vector[uint8_t] ev = vector[uint8_t](k)
    with nogil:
        code_columns_nan[int32_t](xp.data(), n, xv.strides[0] // sizeof(double), tp.data(), m.data(), op.data(),
                                  up.data(), k, &mv[0], ev.data())
    return miss, [bool(ev[j]) for j in range(k)]


cdef inline uint64_t _splitmix64(uint64_t x) noexcept nogil:
    cdef uint64_t z = x + 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


def hash_below(uint64_t start, uint64_t stop, uint64_t cutoff):
    """Boolean mask of the indices ``start..stop-1`` whose SplitMix64 hash is below ``cutoff``
    (the threshold sample of ``sketch.py``), in one pass without temporaries."""
    out = np.empty(stop - start if stop > start else 0, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef uint64_t i
    with nogil:
        for i in range(start, stop):
            o[i - start] = _splitmix64(i) < cutoff
    return out.view(bool)
