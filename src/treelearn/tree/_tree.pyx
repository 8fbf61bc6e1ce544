# distutils: language = c++
"""Compiled evaluation of trees.

* :func:`apply_rows`: routing of encoded rows through a Tree (the only hot loop of prediction);
* :func:`split_extremes`: the same routing, recording per numeric split the largest training value
  going left and the smallest going right (the node-local midpoints of :mod:`treelearn.tree.build`);
* :func:`node_counts`: per node, the weighted class counts and row counts of the rows whose leaf is
  below it (a learner's result recounted on its training rows);
* :func:`weakest_link`: weakest-link (cost-complexity) pruning, ``core/weakest_link.h``;
* :func:`tree_eval`, :func:`tree_eval_flips`, :func:`pm1_index`: a tree over {±1}^n evaluated on a
  batch of ±1 points, and on the batch with one coordinate flipped for each of several candidate
  variables without materialising the flipped copies (the inner loop of every influence
  estimate of the query learner, :mod:`treelearn.learn.queries`); the caller counts the queries.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, isfinite
from libc.stdint cimport int64_t, int8_t, uint8_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cnp.import_array()


cdef extern from "core/weakest_link.h" namespace "tl":
    cdef cppclass WeakestLinkSteps:
        vector[double] g_min, risk
        vector[int64_t] leaves
    void weakest_link_cpp "tl::weakest_link"(int64_t m, const int64_t* left, const int64_t* right, const double* r,
                                              const double* comp, double alpha_stop, cbool all_ties, double tol,
                                              int64_t* collapse_step, WeakestLinkSteps& out) except + nogil


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
    out = np.empty(m, dtype=np.float64)
    cdef double[::1] o = out
    if m == 0:
        return out
    with nogil:
        for r in range(m):
            o[r] = leafval[_pm1_leaf(&X[r, 0], -1, &left[0], &right[0], &feature[0], &threshold[0])]
    return out


def tree_eval_flips(const int8_t[:, ::1] X, const int64_t[::1] cand, const int64_t[::1] left,
                    const int64_t[::1] right, const int64_t[::1] feature, const double[::1] threshold,
                    const double[::1] leafval):
    """out[r, c] = tree value at row r of X with coordinate cand[c] negated."""
    cdef Py_ssize_t m = X.shape[0], k = cand.shape[0], r, c
    out = np.empty((m, k), dtype=np.float64)
    cdef double[:, ::1] o = out
    if m == 0 or k == 0:
        return out
    with nogil:
        for r in range(m):
            for c in range(k):
                o[r, c] = leafval[_pm1_leaf(&X[r, 0], cand[c], &left[0], &right[0], &feature[0], &threshold[0])]
    return out


cdef inline int64_t _pm1_leaf(const int8_t* x, int64_t flip, const int64_t* left, const int64_t* right,
                              const int64_t* feature, const double* threshold) noexcept nogil:
    """The leaf a ±1 point x reaches, with coordinate ``flip`` negated (-1: none): the one descent
    of tree_eval and tree_eval_flips."""
    cdef int64_t node = 0, f
    cdef int8_t v
    while left[node] >= 0:
        f = feature[node]
        v = x[f]
        if f == flip:
            v = -v
        if v >= threshold[node]:
            node = right[node]
        else:
            node = left[node]
    return node


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


def split_extremes(const double[:, ::1] X, const int64_t[::1] left, const int64_t[::1] right,
                   const int64_t[::1] feature, const double[::1] threshold, const int8_t[::1] kind,
                   const uint8_t[::1] missing_left):
    """``(lo, hi)``: per node, over the rows of ``X`` routed as by :func:`apply_rows`, the largest
    value of its split column going left (``lo``, -inf when none) and the smallest going right
    (``hi``, +inf when none), for numeric splits with a finite threshold (the others: -inf,
    +inf); missing values take no part."""
    cdef Py_ssize_t n = X.shape[0], m = left.shape[0], i
    cdef int64_t node
    cdef double v, t
    cdef bint holds
    lo_a = np.full(m, -np.inf)
    hi_a = np.full(m, np.inf)
    cdef double[::1] lo = lo_a, hi = hi_a
    with nogil:
        for i in range(n):
            node = 0
            while left[node] >= 0:
                v = X[i, feature[node]]
                t = threshold[node]
                if kind[node] == 0:
                    holds = v >= t
                    if v == v and isfinite(t):
                        if holds:
                            if v < hi[node]:
                                hi[node] = v
                        elif v > lo[node]:
                            lo[node] = v
                else:
                    holds = v == t
                if holds or (v != v and not missing_left[node]):
                    node = right[node]
                else:
                    node = left[node]
    return lo_a, hi_a


def node_counts(const int64_t[::1] leaves, const int64_t[::1] parent, const int64_t[::1] y, w, int n_classes):
    """``(value, n_node_samples)`` of a tree of ``parent.size`` nodes (``parent[root] = -1``) from
    the leaf of every row: each row adds its weight (``w``; None: 1) to its class at every node
    of its path, rows in order, so that a node's counts are the sum of its rows in row order."""
    cdef Py_ssize_t n = leaves.shape[0], m = parent.shape[0], i
    cdef int64_t node, c
    cdef double wi = 1.0
    cdef const double[::1] wv
    cdef bint weighted = w is not None
    value_a = np.zeros((m, n_classes))
    nsamp_a = np.zeros(m, dtype=np.int64)
    cdef double[:, ::1] value = value_a
    cdef int64_t[::1] nsamp = nsamp_a
    if weighted:
        wv = np.ascontiguousarray(w, dtype=np.float64)
        if wv.shape[0] != n:
            raise ValueError("w must have one weight per row")
    if y.shape[0] != n:
        raise ValueError("y must have one class per row")
    for i in range(n):
        if not (0 <= leaves[i] < m) or not (0 <= y[i] < n_classes):
            raise ValueError("leaves and y must index the tree's nodes and classes")
    with nogil:
        for i in range(n):
            node = leaves[i]
            c = y[i]
            if weighted:
                wi = wv[i]
            while node >= 0:
                value[node, c] += wi
                nsamp[node] += 1
                node = parent[node]
    return value_a, nsamp_a


def weakest_link(const int64_t[::1] left, const int64_t[::1] right, const double[::1] r, comp=None,
                 double alpha_stop=INFINITY, bint all_ties=False, double tol=0.0):
    """Weakest-link pruning of a tree (``core/weakest_link.h``): ``r`` the cost of every node as
    a leaf, ``comp`` None (CART: the complexity is the number of leaves) or the complexity of a
    tree by its number of leaves (``comp[L]``, L = 0..leaves). Returns ``(collapse_step, g_min,
    risk, leaves)``: per node the step at which it became a leaf (-1: never), per step the
    smallest link strength, and the tree's R and leaves after it."""
    cdef Py_ssize_t m = left.shape[0]
    cdef WeakestLinkSteps out
    cdef const double[::1] cv
    cdef const double* cp = NULL
    if right.shape[0] != m or r.shape[0] != m:
        raise ValueError("left, right and r must have one entry per node")
    step_a = np.full(m, -1, dtype=np.int64)
    cdef int64_t[::1] step = step_a
    if comp is not None:
        cv = np.ascontiguousarray(comp, dtype=np.float64)
        if cv.shape[0] < int(np.count_nonzero(np.asarray(left) < 0)) + 1:
            raise ValueError("comp must give the complexity of every number of leaves up to the tree's")
        cp = &cv[0]
    if m:
        with nogil:
            weakest_link_cpp(m, &left[0], &right[0], &r[0], cp, alpha_stop, all_ties, tol, &step[0], out)
    k = out.g_min.size()
    g = np.array([out.g_min[i] for i in range(k)], dtype=np.float64)
    risk = np.array([out.risk[i] for i in range(k)], dtype=np.float64)
    leaves = np.array([out.leaves[i] for i in range(k)], dtype=np.int64)
    return step_a, g, risk, leaves
