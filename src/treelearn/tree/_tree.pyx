# distutils: language = c++
"""Compiled routing of rows through a Tree (the only hot loop of prediction)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, int8_t

cnp.import_array()


def apply_rows(const double[:, ::1] X, const int64_t[::1] left, const int64_t[::1] right,
               const int64_t[::1] feature, const double[::1] threshold, const int8_t[::1] kind):
    """Leaf index reached by each row of the encoded matrix ``X``.

    A node's condition is ``X[:, feature] >= threshold`` (kind 0) or ``X[:, feature] == threshold``
    (kind 1, a category code); the row goes right when the condition holds, left otherwise.
    """
    cdef Py_ssize_t n = X.shape[0], i
    cdef int64_t node
    cdef double v
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for i in range(n):
            node = 0
            while left[node] >= 0:
                v = X[i, feature[node]]
                if kind[node] == 0:
                    node = right[node] if v >= threshold[node] else left[node]
                else:
                    node = right[node] if v == threshold[node] else left[node]
            o[i] = node
    return out
