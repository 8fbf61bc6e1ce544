# distutils: language = c++
# cython: boundscheck=False, wraparound=False, cdivision=True
"""Exact sums of float64 values by group, whatever the order of the rows (``core/exact_sum.h``).

A fit on row shards adds its rows in another order than a fit in memory; floating-point sums then
differ in their last bits. Sums kept exactly (a fixed-point accumulator per group and channel,
``int64`` digits of 32 bits) merge by integer addition and round once, so a regression tree's
node values are the same bits however the rows were split.

``exact_sums(values, group, n_groups)`` -> ``(acc, base)``: ``acc`` (n_groups, channels, W) int64
digits and ``base`` (channels,) the index of each channel's lowest digit (its window); rows of
group -1 are skipped. ``align(acc, base, new_base, W)`` moves digits into a wider window (to merge
accumulators of several blocks: :func:`merge`). ``merge_up(acc, parent)`` adds every node's digits to
its ancestors' (children after parents). ``exact_round(acc, base)`` -> the rounded sums
(n_groups, channels)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

cnp.import_array()

cdef extern from "core/exact_sum.h" namespace "tl":
    cdef cppclass ExactSum:
        @staticmethod
        int first_digit(double x) nogil
        @staticmethod
        int window(int q_lo, int q_hi) nogil
        @staticmethod
        void add(int64_t* acc, int q0, double x) nogil
        @staticmethod
        double round(const int64_t* acc, int W, int q0, int64_t* d) nogil

#: the most terms one accumulator (and every merge of accumulators) sums exactly
MAX_TERMS = 1 << 30


def exact_sums(const double[:, ::1] values, const int64_t[::1] group, int64_t n_groups):
    cdef Py_ssize_t n = values.shape[0], C = values.shape[1], i, c
    cdef int64_t g
    cdef double x
    if group.shape[0] != n:
        raise ValueError("group must have one entry per row")
    if n > MAX_TERMS:
        raise ValueError(f"exact sums hold at most {MAX_TERMS} rows")
    if n and (np.asarray(group).min() < -1 or np.asarray(group).max() >= n_groups):
        raise ValueError("group must hold -1 or indices below n_groups")
    if not np.isfinite(np.asarray(values)).all():
        raise ValueError("exact sums need finite values")
    # each channel's window: from the lowest first digit of its non-zero values to the highest
    lo = np.full(C, 1 << 20, dtype=np.int64)
    hi = np.full(C, -1, dtype=np.int64)
    cdef int64_t[::1] lo_v = lo, hi_v = hi
    cdef int q
    with nogil:
        for i in range(n):
            if group[i] < 0:
                continue
            for c in range(C):
                x = values[i, c]
                if x != 0.0:
                    q = ExactSum.first_digit(x)
                    if q < lo_v[c]:
                        lo_v[c] = q
                    if q > hi_v[c]:
                        hi_v[c] = q
    base = np.where(hi >= 0, lo, 0).astype(np.int64)
    cdef int W = max([ExactSum.window(int(base[c]), int(max(hi[c], base[c]))) for c in range(C)] + [1])
    acc = np.zeros((n_groups, C, W), dtype=np.int64)
    cdef int64_t[:, :, ::1] a = acc
    cdef int64_t[::1] b = base
    with nogil:
        for i in range(n):
            g = group[i]
            if g < 0:
                continue
            for c in range(C):
                ExactSum.add(&a[g, c, 0], <int>b[c], values[i, c])
    return acc, base


def align(acc, base, new_base, int W):
    """``acc`` (groups, channels, w) of window ``base`` as digits of ``new_base`` (<= base), W wide."""
    acc = np.asarray(acc, dtype=np.int64)
    out = np.zeros(acc.shape[:2] + (W,), dtype=np.int64)
    for c in range(acc.shape[1]):
        off = int(base[c]) - int(new_base[c])
        if off < 0 or off + acc.shape[2] > W:
            raise ValueError("the new window must hold the old one")
        out[:, c, off:off + acc.shape[2]] = acc[:, c, :]
    return out


def merge(parts):
    """The digit-wise sum of several ``(acc, base)`` of the same groups and channels."""
    parts = list(parts)
    base = np.min([b for _, b in parts], axis=0).astype(np.int64)
    W = max(int(a.shape[2]) + int(np.max(b - base)) for a, b in parts)
    total = np.zeros(parts[0][0].shape[:2] + (W,), dtype=np.int64)
    for a, b in parts:
        total += align(a, b, base, W)
    return total, base


def merge_up(int64_t[:, :, ::1] acc, const int64_t[::1] parent):
    """Adds every node's digits to its parent's, children before parents (node ids after their
    parent's): a node then holds the digits of every group below it."""
    cdef Py_ssize_t m = acc.shape[0], C = acc.shape[1], W = acc.shape[2], i, c, k
    cdef int64_t p
    if parent.shape[0] != m:
        raise ValueError("parent must have one entry per node")
    for i in range(m):
        if parent[i] >= i:
            raise ValueError("a node's parent must come before it")
    with nogil:
        for i in range(m - 1, 0, -1):
            p = parent[i]
            if p < 0:
                continue
            for c in range(C):
                for k in range(W):
                    acc[p, c, k] += acc[i, c, k]


def exact_round(const int64_t[:, :, ::1] acc, const int64_t[::1] base):
    """The exact sums of ``acc`` rounded to the nearest doubles: (groups, channels)."""
    cdef Py_ssize_t m = acc.shape[0], C = acc.shape[1], W = acc.shape[2], i, c
    out = np.zeros((m, C))
    cdef double[:, ::1] o = out
    cdef vector[int64_t] scratch = vector[int64_t](max(W, 1))
    if base.shape[0] != C:
        raise ValueError("base must have one entry per channel")
    with nogil:
        for i in range(m):
            for c in range(C):
                o[i, c] = ExactSum.round(&acc[i, c, 0], <int>W, <int>base[c], scratch.data())
    return out
