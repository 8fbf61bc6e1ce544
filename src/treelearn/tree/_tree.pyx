# distutils: language = c++
"""Compiled evaluation of trees.

* :func:`apply_rows`: routing of encoded rows through a Tree (the only hot loop of prediction);
* :func:`tree_eval`, :func:`tree_eval_flips`, :func:`pm1_index`: a tree over {±1}^n evaluated on a
  batch of ±1 points, and on the batch with one coordinate flipped for each of several candidate
  variables without materialising the flipped copies (the inner loop of every influence
  estimate of the query learner, :mod:`treelearn.learn.queries`); the caller counts the queries.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, int8_t, uint8_t

cnp.import_array()


def apply_rows(const double[:, ::1] X, const int64_t[::1] left, const int64_t[::1] right,
               const int64_t[::1] feature, const double[::1] threshold, const int8_t[::1] kind,
               const uint8_t[::1] missing_left):
    """Leaf index reached by each row of the encoded matrix ``X``.

    A node's condition is ``X[:, feature] >= threshold`` (kind 0) or ``X[:, feature] == threshold``
    (kind 1, a category code); the row goes right when the condition holds, left otherwise. A
    missing value (NaN) goes left when ``missing_left[node]`` is 1 and right when it is 0.
    """
    cdef Py_ssize_t n = X.shape[0], i
    cdef int64_t node
    cdef double v
    cdef bint holds
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for i in range(n):
            node = 0
            while left[node] >= 0:
                v = X[i, feature[node]]
                if kind[node] == 0:
                    holds = v >= threshold[node]
                else:
                    holds = v == threshold[node]
                # a NaN fails both comparisons: it goes where the node sends missing values
                if holds or (v != v and not missing_left[node]):
                    node = right[node]
                else:
                    node = left[node]
            o[i] = node
    return out


def tree_eval(const int8_t[:, ::1] X, const int64_t[::1] left, const int64_t[::1] right,
              const int64_t[::1] feature, const double[::1] threshold, const double[::1] leafval):
    """Value of the tree at each row of the ±1 matrix X (x_f >= threshold goes right)."""
    cdef Py_ssize_t m = X.shape[0], r
    cdef int64_t node
    out = np.empty(m, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for r in range(m):
            node = 0
            while left[node] >= 0:
                if X[r, feature[node]] >= threshold[node]:
                    node = right[node]
                else:
                    node = left[node]
            o[r] = leafval[node]
    return out


def tree_eval_flips(const int8_t[:, ::1] X, const int64_t[::1] cand, const int64_t[::1] left,
                    const int64_t[::1] right, const int64_t[::1] feature, const double[::1] threshold,
                    const double[::1] leafval):
    """out[r, c] = tree value at row r of X with coordinate cand[c] negated."""
    cdef Py_ssize_t m = X.shape[0], k = cand.shape[0], r, c
    cdef int64_t node, j, f
    cdef int8_t v
    out = np.empty((m, k), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        for r in range(m):
            for c in range(k):
                j = cand[c]
                node = 0
                while left[node] >= 0:
                    f = feature[node]
                    v = X[r, f]
                    if f == j:
                        v = -v
                    if v >= threshold[node]:
                        node = right[node]
                    else:
                        node = left[node]
                o[r, c] = leafval[node]
    return out


def pm1_index(const int8_t[:, ::1] X):
    """Truth-table index of each ±1 row: sum_j [x_j = +1] 2^j (n <= 62)."""
    cdef Py_ssize_t m = X.shape[0], n = X.shape[1], r, j
    cdef int64_t idx
    out = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for r in range(m):
            idx = 0
            for j in range(n):
                if X[r, j] > 0:
                    idx |= (<int64_t>1) << j
            o[r] = idx
    return out
