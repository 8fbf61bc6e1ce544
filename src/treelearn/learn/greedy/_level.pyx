# distutils: language = c++
"""Compiled per-level kernels of the greedy fit on Dask row shards (``sharded.py``; see ``level.h``)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, int32_t, uint8_t, uint16_t

cnp.import_array()

ctypedef fused code_t:
    uint8_t
    uint16_t


cdef extern from "level.h" namespace "tl::greedy":
    void shard_hist[Code](const Code* codes, int64_t n, int d, const int64_t* y, const double* w,
                          const int32_t* nid, const int32_t* slot_of, int64_t n_nodes, int64_t n_slots,
                          const int64_t* offset, int C, double* h, int64_t* hc) except + nogil
    void shard_stat_hist[Code](const Code* codes, int64_t n, int d, const double* stats, const int32_t* nid,
                               const int32_t* slot_of, int64_t n_nodes, int64_t n_slots, const int64_t* offset,
                               int C, double* h, int64_t* hc) except + nogil
    void shard_counts[Code, Cnt](const Code* codes, int64_t n, int d, const uint8_t* y, const int32_t* nid,
                                 const int32_t* slot_of, int64_t n_nodes, const int64_t* offset, int C,
                                 Cnt* h) except + nogil
    void apply_splits[Code](const Code* codes, int64_t n, int d, int32_t* nid, int64_t n_nodes,
                            const int32_t* feature, const int32_t* code, const uint8_t* is_cat,
                            const int32_t* left, const int32_t* right) except + nogil
    void find_splits(int criterion, double wmin, int d, int C, const int32_t* n_codes, const uint8_t* is_cat,
                     const int32_t* cat_only, int64_t msl, int64_t k, const double* H, const int64_t* HC,
                     const double* tot, const double* W, const int64_t* m, int32_t* feature, int32_t* code,
                     int32_t* low, double* score) except + nogil
    void node_wimp(int criterion, double wmin, int C, int64_t k, const double* counts, double* out) except + nogil
    void node_pure(int criterion, double wmin, int C, int64_t k, const double* counts, uint8_t* out) except + nogil


def histograms(const code_t[:, ::1] codes, const int64_t[::1] y, const double[::1] w, const int32_t[::1] nid,
               const int32_t[::1] slot_of, int64_t n_slots, const int64_t[::1] offset, int C):
    """Per-slot histograms of a shard's rows: ``(h, hc)`` of shapes (n_slots, cells * C) and
    (n_slots, cells); a row of node v counts into slot ``slot_of[v]`` (skipped when < 0)."""
    cdef int64_t n = codes.shape[0], cells = offset[offset.shape[0] - 1]
    cdef int d = codes.shape[1]
    h = np.zeros((n_slots, cells * C), dtype=np.float64)
    hc = np.zeros((n_slots, cells), dtype=np.int64)
    cdef double[:, ::1] hv = h
    cdef int64_t[:, ::1] hcv = hc
    if n_slots == 0 or n == 0 or cells == 0:
        return h, hc
    with nogil:
        shard_hist(&codes[0, 0], n, d, &y[0], &w[0], &nid[0], &slot_of[0], slot_of.shape[0], n_slots,
                   &offset[0], C, &hv[0, 0], &hcv[0, 0])
    return h, hc


def counts(const code_t[:, ::1] codes, const uint8_t[::1] y, nid, const int32_t[::1] slot_of, int64_t n_slots,
           const int64_t[::1] offset, int C, bint wide):
    """Unweighted shards: per-slot (cell x class) row counts, shape (n_slots, cells * C), int32
    (int64 when ``wide``: sums over more than 2**31 - 1 rows); ``nid`` None: every row in node 0."""
    cdef int64_t n = codes.shape[0], cells = offset[offset.shape[0] - 1]
    cdef int d = codes.shape[1]
    if n >= 2**31 - 1:
        raise ValueError("a shard of 2**31 rows or more")
    h = np.zeros((n_slots, cells * C), dtype=np.int32)
    cdef int32_t[:, ::1] hv = h
    cdef const int32_t[::1] nv
    cdef const int32_t* np_ = NULL
    if nid is not None:
        nv = nid
        np_ = &nv[0] if nv.shape[0] else NULL
    if n_slots == 0 or n == 0 or cells == 0:
        return h.astype(np.int64) if wide else h
    with nogil:
        shard_counts(&codes[0, 0], n, d, &y[0], np_, &slot_of[0], slot_of.shape[0], &offset[0], C, &hv[0, 0])
    return h.astype(np.int64) if wide else h


def split_rows(const code_t[:, ::1] codes, int32_t[::1] nid, const int32_t[::1] feature, const int32_t[::1] code,
               const uint8_t[::1] is_cat, const int32_t[::1] left, const int32_t[::1] right):
    """Move each row of node v (in place in ``nid``) to its child (``feature[v]`` -1: to -1, -2:
    the rows stay)."""
    cdef int64_t n = codes.shape[0]
    if n == 0 or feature.shape[0] == 0:
        return
    with nogil:
        apply_splits(&codes[0, 0], n, codes.shape[1], &nid[0], feature.shape[0], &feature[0], &code[0],
                     &is_cat[0], &left[0], &right[0])


def best_splits(int criterion, double wmin, const int32_t[::1] n_codes, const uint8_t[::1] is_cat,
                const int32_t[::1] cat_only, int64_t min_samples_leaf, const double[:, ::1] H,
                const int64_t[:, ::1] HC, const double[:, ::1] tot, const double[::1] W, const int64_t[::1] m):
    """The local grower's best split of each node from its (summed) histogram: arrays
    (feature, code, low, score); feature -1 when the node has no valid split."""
    cdef int64_t k = H.shape[0]
    cdef int d = n_codes.shape[0], C = tot.shape[1]
    feature = np.full(k, -1, dtype=np.int32)
    code = np.zeros(k, dtype=np.int32)
    low = np.zeros(k, dtype=np.int32)
    score = np.full(k, np.inf)
    cdef int32_t[::1] fv = feature, cv = code, lv = low
    cdef double[::1] sv = score
    if k == 0:
        return feature, code, low, score
    with nogil:
        find_splits(criterion, wmin, d, C, &n_codes[0], &is_cat[0], &cat_only[0], min_samples_leaf, k,
                    &H[0, 0], &HC[0, 0], &tot[0, 0], &W[0], &m[0], &fv[0], &cv[0], &lv[0], &sv[0])
    return feature, code, low, score


def wimp(int criterion, double wmin, const double[:, ::1] counts):
    """W x impurity (the grower's normalised units) of each row of class counts."""
    cdef int64_t k = counts.shape[0]
    out = np.zeros(k)
    cdef double[::1] o = out
    if k:
        with nogil:
            node_wimp(criterion, wmin, counts.shape[1], k, &counts[0, 0], &o[0])
    return out


def stat_histograms(const code_t[:, ::1] codes, const double[:, ::1] stats, nid, const int32_t[::1] slot_of,
                    int64_t n_slots, const int64_t[::1] offset):
    """Regression shards: per-slot sums of the rows' channels ``stats`` (n, C) per cell and the cells'
    row counts, ``(h, hc)`` as :func:`histograms`; ``nid`` None: every row in node 0."""
    cdef int64_t n = codes.shape[0], cells = offset[offset.shape[0] - 1]
    cdef int d = codes.shape[1], C = stats.shape[1]
    h = np.zeros((n_slots, cells * C), dtype=np.float64)
    hc = np.zeros((n_slots, cells), dtype=np.int64)
    cdef double[:, ::1] hv = h
    cdef int64_t[:, ::1] hcv = hc
    cdef const int32_t[::1] nv
    cdef const int32_t* np_ = NULL
    if nid is not None:
        nv = nid
        np_ = &nv[0] if nv.shape[0] else NULL
    if n_slots == 0 or n == 0 or cells == 0:
        return h, hc
    with nogil:
        shard_stat_hist(&codes[0, 0], n, d, &stats[0, 0], np_, &slot_of[0], slot_of.shape[0], n_slots, &offset[0],
                        C, &hv[0, 0], &hcv[0, 0])
    return h, hc


def pure(int criterion, double wmin, const double[:, ::1] counts):
    """Whether each row of channels is a pure node for the criterion (the local grower's rule)."""
    cdef int64_t k = counts.shape[0]
    out = np.zeros(k, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    if k:
        with nogil:
            node_pure(criterion, wmin, counts.shape[1], k, &counts[0, 0], &o[0])
    return out.astype(bool)
