# distutils: language = c++
"""Bitset kernels: packed binary features and per-class row bitsets.

Layout: a bitset over rows is a uint64 array of ``n_words = ceil(n_rows / 64)`` words; bit
``r % 64`` of word ``r // 64`` stands for row ``r``. A packed matrix has one bitset per binary
feature (shape ``(n_features, n_words)``), the class bitsets one per class.

The counting kernel's contract is "rows in, per-feature per-class counts out": for a cover
(the bitset of rows reaching a node) it returns ``counts[j, c]`` = (weighted) number of rows in
the cover with feature j = 1 and class c. Sums of such counts over row blocks compose, so the
same learners can later sum partial counts computed elsewhere. The counting itself is the
shared header ``core/count.h`` (the compiled searches count through the same functions).
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint64_t, int64_t, uint8_t, int8_t, int16_t, int32_t, uint16_t, uint32_t

cnp.import_array()

cdef extern from "core/count.h" namespace "tl":
    long long tl_count "tl::count"(const uint64_t* a, long long nw) nogil
    int tl_and_count "tl::and_count"(const uint64_t* a, const uint64_t* b, int nw) nogil
    double tl_weighted_and_sum "tl::weighted_and_sum"(const uint64_t* a, const uint64_t* b, int nw,
                                                           const double* w) nogil
    void tl_split_cover "tl::split_cover"(const uint64_t* cover, const uint64_t* col, uint64_t* one,
                                               uint64_t* zero, int nw) nogil
    void tl_class_bitsets "tl::class_bitsets"[Y](const Y* y, long long n, long long nw, uint64_t* out) nogil
    void tl_feature_counts "tl::feature_counts"[CT](const uint64_t* M, int d, int wl, const uint64_t* mask,
                                                         const uint64_t* cls, int C, uint64_t* mc, CT* cnt,
                                                         int32_t* rc) nogil
    void tl_weighted_feature_counts "tl::weighted_feature_counts"[CT, Y](
        const uint64_t* M, int d, int wl, const uint64_t* mask, const Y* y, const double* w, int C, CT* cnt,
        int32_t* rc) nogil


cdef extern from "core/bitpack.h" namespace "tl":
    bint tl_pack_binary "tl::pack_binary"[T](const T* X, long long n, int d, long long stride,
                                                 uint64_t* out, long long* counts) nogil
    bint tl_pack_binary_colmajor "tl::pack_binary_colmajor"[T](const T* X, long long n, int d,
                                                                   long long stride, uint64_t* out,
                                                                   long long* counts) nogil


ctypedef fused _elem:
    uint8_t
    int16_t
    uint16_t
    int32_t
    uint32_t
    int64_t
    uint64_t
    float
    double


def _pack_typed(const _elem[:, ::1] X, uint64_t[:, ::1] o, long long[::1] cnt, bint colmajor):
    # one specialisation per dtype of _elem, chosen by Cython from X's dtype;
    # colmajor: X is the transpose (d, n) of the matrix, i.e. the matrix in Fortran order
    cdef long long n = X.shape[1] if colmajor else X.shape[0]
    cdef int d = <int>(X.shape[0] if colmajor else X.shape[1])
    cdef bint ok
    with nogil:
        if colmajor:
            ok = tl_pack_binary_colmajor(&X[0, 0], n, d, n, &o[0, 0], &cnt[0])
        else:
            ok = tl_pack_binary(&X[0, 0], n, d, d, &o[0, 0], &cnt[0])
    return ok


def pack_binary(X):
    """A 2-D numeric array whose every value is 0 or 1 -> ``(columns, counts)``: the packed
    columns ``(n_features, n_words)`` (the :func:`pack_columns` layout) and the number of ones
    per column; ``None`` when some value is not 0 or 1 (NaN included). One compiled pass in the
    array's own dtype (no float copy): rows become bitsets, 64x64 blocks are transposed."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0 or X.dtype.kind not in "biuf":
        return None
    if X.dtype == np.bool_ or X.dtype == np.int8:
        X = X.view(np.uint8)  # int8: a negative value reads as >= 128, i.e. not 0/1
    elif X.dtype == np.float16 or X.dtype.itemsize > 8:
        X = X.astype(np.float64)
    n, d = X.shape
    colmajor = not X.flags.c_contiguous and X.flags.f_contiguous
    X = X.T if colmajor else np.ascontiguousarray(X)  # Fortran order: pack its columns directly
    out = np.empty((d, (n + 63) // 64), dtype=np.uint64)
    counts = np.empty(d, dtype=np.int64)
    cdef long long[::1] cnt = counts
    cdef uint64_t[:, ::1] o = out
    ok = _pack_typed(X, o, cnt, colmajor)
    return (out, counts) if ok else None


def n_words_for(Py_ssize_t n_rows):
    return (n_rows + 63) // 64


def pack_columns(const uint8_t[:, :] B):
    """(n_rows, n_features) 0/1 matrix -> (n_features, n_words) packed columns."""
    cdef Py_ssize_t n = B.shape[0], d = B.shape[1], i, j
    cdef Py_ssize_t nw = (n + 63) // 64
    out = np.zeros((d, nw), dtype=np.uint64)
    cdef uint64_t[:, ::1] o = out
    with nogil:
        for i in range(n):
            for j in range(d):
                if B[i, j]:
                    o[j, i >> 6] |= (<uint64_t>1) << (i & 63)
    return out


def class_bitsets(const int64_t[::1] y, Py_ssize_t n_classes):
    """Class codes 0..n_classes-1 -> ``(n_classes, n_words)`` row bitsets, one pass."""
    cdef Py_ssize_t n = y.shape[0], i
    out = np.zeros((n_classes, (n + 63) // 64), dtype=np.uint64)
    cdef uint64_t[:, ::1] o = out
    cdef int64_t c
    for i in range(n):
        c = y[i]
        if c < 0 or c >= n_classes:
            raise ValueError(f"class code {c} at row {i} is outside 0..{n_classes - 1}")
    if n and n_classes:
        with nogil:
            tl_class_bitsets(&y[0], n, (n + 63) // 64, &o[0, 0])
    return out


def pack_mask(const uint8_t[:] mask):
    """Boolean row mask (as uint8) -> bitset."""
    cdef Py_ssize_t n = mask.shape[0], i
    out = np.zeros((n + 63) // 64, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    with nogil:
        for i in range(n):
            if mask[i]:
                o[i >> 6] |= (<uint64_t>1) << (i & 63)
    return out


def unpack(const uint64_t[::1] bits, Py_ssize_t n_rows):
    """Bitset -> boolean mask of length n_rows."""
    out = np.zeros(n_rows, dtype=bool)
    cdef uint8_t[::1] o = out.view(np.uint8)
    cdef Py_ssize_t i
    with nogil:
        for i in range(n_rows):
            o[i] = (bits[i >> 6] >> (i & 63)) & 1
    return out


def popcount(const uint64_t[::1] bits):
    cdef long long s = 0
    if bits.shape[0]:
        with nogil:
            s = tl_count(&bits[0], bits.shape[0])
    return s


def class_counts(const uint64_t[:, ::1] class_bits, const uint64_t[::1] cover):
    """Per-class number of rows in the cover."""
    cdef Py_ssize_t C = class_bits.shape[0], nw = cover.shape[0], c
    out = np.zeros(C, dtype=np.int64)
    cdef int64_t[::1] o = out
    if nw:
        with nogil:
            for c in range(C):
                o[c] = tl_and_count(&class_bits[c, 0], &cover[0], <int>nw)
    return out


def class_counts_weighted(const uint64_t[:, ::1] class_bits, const uint64_t[::1] cover,
                          const double[::1] weights):
    cdef Py_ssize_t C = class_bits.shape[0], nw = cover.shape[0], c
    out = np.zeros(C, dtype=np.float64)
    cdef double[::1] o = out
    if nw:
        with nogil:
            for c in range(C):
                o[c] = tl_weighted_and_sum(&class_bits[c, 0], &cover[0], <int>nw, &weights[0])
    return out


def count_features(const uint64_t[:, ::1] columns, const uint64_t[:, ::1] class_bits,
                   const uint64_t[::1] cover):
    """counts[j, c] = #rows r in cover with feature j = 1 and class c (AND + popcount)."""
    cdef Py_ssize_t d = columns.shape[0], C = class_bits.shape[0], nw = cover.shape[0]
    out = np.zeros((d, C), dtype=np.int64)
    cdef int64_t[:, ::1] o = out
    masked = np.empty((C, nw), dtype=np.uint64)  # scratch: the class bitsets AND the cover
    cdef uint64_t[:, ::1] m = masked
    rows = np.empty(d, dtype=np.int32)
    cdef int32_t[::1] rc = rows
    if d and C and nw:
        with nogil:
            tl_feature_counts[int64_t](&columns[0, 0], <int>d, <int>nw, &cover[0], &class_bits[0, 0], <int>C,
                                       &m[0, 0], &o[0, 0], &rc[0])
    return out


def count_features_weighted(const uint64_t[:, ::1] columns, const int64_t[::1] y, Py_ssize_t n_classes,
                            const uint64_t[::1] cover, const double[::1] weights):
    """Weighted form of count_features: sums of sample weights instead of row counts (class of
    row r: ``y[r]``)."""
    cdef Py_ssize_t d = columns.shape[0], C = n_classes, nw = cover.shape[0]
    if y.shape[0] > nw * 64 or weights.shape[0] != y.shape[0]:
        raise ValueError("y and weights must have one value per row of the cover")
    out = np.zeros((d, C), dtype=np.float64)
    cdef double[:, ::1] o = out
    rows = np.empty(d, dtype=np.int32)
    cdef int32_t[::1] rc = rows
    if d and C and nw and y.shape[0]:
        with nogil:
            tl_weighted_feature_counts[double, int64_t](&columns[0, 0], <int>d, <int>nw, &cover[0], &y[0],
                                                        &weights[0], <int>C, &o[0, 0], &rc[0])
    return out


def split_cover(const uint64_t[::1] cover, const uint64_t[::1] column):
    """(rows of cover with feature = 0, rows with feature = 1)."""
    cdef Py_ssize_t nw = cover.shape[0]
    zero = np.empty(nw, dtype=np.uint64)
    one = np.empty(nw, dtype=np.uint64)
    cdef uint64_t[::1] z = zero, o = one
    if nw:
        with nogil:
            tl_split_cover(&cover[0], &column[0], &o[0], &z[0], <int>nw)
    return zero, one
