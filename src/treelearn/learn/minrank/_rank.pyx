# distutils: language = c++
"""Compiled FIND(S, r) of Ehrenfeucht & Haussler (001) with (cover, r) memoisation.

The search itself lives in ``tl::minrank.h`` (see its header comment); this module wraps it:
``RankSearch(B, y, n_classes, ...)`` holds one sample and its memo, ``find(r)`` runs FIND(S, r)
on the whole sample (the memo persists, so FINDMIN's successive calls share it), ``nodes()``
exports the result DAG.
"""

import numpy as np
cimport numpy as cnp
from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport uint8_t, int64_t, int32_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

from cpython.pycapsule cimport PyCapsule_GetPointer
from treelearn._criteria import SIGINT_SHARED

cdef extern from "core/limits.h" namespace "tl":
    void use_shared_sigint(void* p)

use_shared_sigint(PyCapsule_GetPointer(SIGINT_SHARED, b"treelearn.sigint"))  # the process's one Ctrl-C state

cnp.import_array()

cdef extern from "core/bitpack.h" namespace "tl":
    bint tl_pack_binary "tl::pack_binary"[T](const T* X, long long n, int d, long long stride,
                                                 uint64_t* out, long long* counts) nogil


cdef extern from "core/limits.h" namespace "tl":
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)


cdef extern from "search.h" namespace "tl::minrank":
    cdef struct Node:
        int32_t var
        int32_t left
        int32_t right
        int32_t cls

    cdef cppclass Solver:
        int n_rows, n_vars, W, n_classes
        vector[Node] nodes
        cbool use_memo
        int memo_min_rank
        double time_limit
        double memory_limit
        double mem_used
        int abort_reason
        uint64_t n_calls, n_memo_hits, n_memo_entries
        uint64_t words_find1, words_split, n_find1, n_split
        double* progress
        void init(const uint64_t* cols, const int64_t* labels, int rows, int vars, int classes) except +
        void start_clock()
        double elapsed()
        int32_t find_all(int r) except + nogil

NONE = -1
ABORT = -2
ABORT_REASONS = {1: "time", 2: "memory", 3: "interrupted"}


cdef class RankSearch:
    """FIND(S, r) on one sample (binary matrix ``B`` (n, d) of 0/1, class codes ``y``)."""
    cdef Solver* s
    cdef object _live  # the live-counters array the search writes (kept alive while it may)

    def __cinit__(self, const uint8_t[:, ::1] B, const int64_t[::1] y, int n_classes, *,
                  bint memoize=True, int memo_min_rank=1):
        if B.shape[0] == 0:
            raise ValueError("FIND needs a nonempty sample")
        if B.shape[0] != y.shape[0]:
            raise ValueError("B and y have different numbers of rows")
        cdef Py_ssize_t n = B.shape[0], d = B.shape[1], W = (B.shape[0] + 63) // 64
        # the columns packed as bitsets (core/bitpack.h: row bitsets, then 64x64 transposes)
        packed = np.zeros((max(d, 1), W), dtype=np.uint64)
        ones = np.empty(max(d, 1), dtype=np.int64)
        cdef uint64_t[:, ::1] pk = packed
        cdef long long[::1] on = ones
        cdef bint ok = True
        if d:
            with nogil:
                ok = tl_pack_binary[uint8_t](&B[0, 0], n, <int>d, d, &pk[0, 0], &on[0])
            if not ok:  # values other than 0/1: nonzero is 1
                packed[:] = 0
                bytes_ = np.packbits(np.asarray(B).T != 0, axis=1, bitorder="little")
                packed.view(np.uint8)[:, :bytes_.shape[1]] = bytes_
        cdef const uint64_t[:, ::1] cols = packed
        self.s = new Solver()
        self.s.init(&cols[0, 0], &y[0], <int>n, <int>d, n_classes)
        self.s.use_memo = memoize
        self.s.memo_min_rank = memo_min_rank

    def __dealloc__(self):
        del self.s

    def set_progress(self, progress):
        """Live counters for verbose: None, or a float64 array of core/progress.h's slots that
        ``find`` writes (FIND calls so far, memo entries) while it runs."""
        cdef double[::1] live
        if progress is None:
            self.s.progress = NULL
            self._live = None
            return
        live = progress
        self._live = progress
        self.s.progress = &live[0]

    def find(self, int r, time_limit=None, memory_limit=None):
        """Root node id of FIND(S, r)'s tree, -1 for "none", -2 when a bound was hit
        (``abort_reason`` says which). ``time_limit`` in seconds (counted from this call),
        ``memory_limit`` in bytes (total memo size)."""
        self.s.time_limit = -1.0 if time_limit is None else float(time_limit)
        self.s.memory_limit = -1.0 if memory_limit is None else float(memory_limit)
        self.s.start_clock()
        cdef int32_t res
        cdef SigintScope* scope = NULL
        scope = open_sigint_scope()  # Ctrl-C in any thread stops the search (abort reason 3)
        try:
            with nogil:
                res = self.s.find_all(r)
        finally:
            if scope != NULL:
                close_sigint_scope(scope)
        if res == ABORT and self.s.abort_reason == 3:
            PyErr_CheckSignals()  # Python's own handler ran too: its KeyboardInterrupt
            raise KeyboardInterrupt("FIND interrupted")
        return int(res)

    @property
    def abort_reason(self):
        return ABORT_REASONS.get(self.s.abort_reason)

    @property
    def stats(self):
        return {"calls": int(self.s.n_calls), "memo_hits": int(self.s.n_memo_hits),
                "memo_entries": int(self.s.n_memo_entries), "memory_bytes": float(self.s.mem_used),
                "nodes": int(self.s.nodes.size()), "splits": int(self.s.n_split),
                "words_split": int(self.s.words_split), "find1_calls": int(self.s.n_find1),
                "words_find1": int(self.s.words_find1)}

    def nodes(self):
        """(var, left, right, cls) int32 arrays over every node created (leaves: var = -1)."""
        cdef Py_ssize_t n = self.s.nodes.size(), i
        out = np.empty((n, 4), dtype=np.int32)
        cdef int32_t[:, ::1] o = out
        for i in range(n):
            o[i, 0] = self.s.nodes[i].var
            o[i, 1] = self.s.nodes[i].left
            o[i, 2] = self.s.nodes[i].right
            o[i, 3] = self.s.nodes[i].cls
        return out
