# distutils: language = c++
"""The compiled impurity definitions (``core/criteria.h``) for :mod:`treelearn.criteria`,
and the callback through which the compiled engines evaluate a user G (``batch_cost``)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t

from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_New

cnp.import_array()


cdef extern from "core/limits.h" namespace "tl":
    cdef cppclass SigintScope:
        pass
    SigintScope* open_sigint_scope() except +
    void close_sigint_scope(SigintScope* s)
    void* own_shared_sigint()
    bint interrupted()

#: the process's one Ctrl-C state (core/limits.h): every compiled room takes it at import
SIGINT_SHARED = PyCapsule_New(own_shared_sigint(), b"treelearn.sigint", NULL)


cdef class SigintHold:
    """``with SigintHold():`` Ctrl-C sets the flag every compiled search polls for as long as
    the block runs, in any thread (a fit holds one from start to end)."""
    cdef SigintScope* scope

    def __enter__(self):
        if self.scope == NULL:
            self.scope = open_sigint_scope()
        return self

    def __exit__(self, *exc):
        if self.scope != NULL:
            close_sigint_scope(self.scope)
            self.scope = NULL
        return False


def raise_interrupted(partial_result, str what):
    """Raise KeyboardInterrupt for a compiled search or growth that Ctrl-C stopped, carrying its
    best tree so far as ``partial_result`` (what it would have returned): Python's own
    KeyboardInterrupt when its handler ran too (in the main thread: raised now, once, not again
    later), else a new one saying ``what`` was interrupted. The one rule of every room."""
    try:
        PyErr_CheckSignals()
    except KeyboardInterrupt as exc:
        exc.partial_result = partial_result
        raise
    exc = KeyboardInterrupt(f"{what} was interrupted")
    exc.partial_result = partial_result
    raise exc


def process_interrupted():
    """Whether Ctrl-C came since the first of the open :class:`SigintHold` scopes opened."""
    return bool(interrupted())


cdef extern from "core/criteria.h" namespace "tl":
    void impurity_rows(int code, const double* counts, int64_t rows, int C, double* out) except + nogil
    void binary_values(int code, const double* p, int64_t n, double* out) except + nogil
    double kappa_of(int code) except +
    double sklearn_scale_of(int code) except +


def impurity(counts, int code):
    """Normalised multiclass impurity of class-count vectors (last axis = classes) for a built-in
    criterion code; 0 for empty vectors."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0:
        c = c.reshape(1)
    nd = c.ndim
    shape = tuple(c.shape[i] for i in range(nd - 1))
    cdef const double[:, ::1] m = np.ascontiguousarray(c.reshape(-1, c.shape[nd - 1]))
    out = np.empty(m.shape[0], dtype=np.float64)
    cdef double[::1] o = out
    if m.shape[0] and m.shape[1]:
        with nogil:
            impurity_rows(code, &m[0, 0], m.shape[0], <int>m.shape[1], &o[0])
    elif m.shape[0]:
        out[:] = 0.0
    return out.reshape(shape)


def binary(p, int code):
    """The binary G of a built-in criterion code at the points p (any shape)."""
    a = np.asarray(p, dtype=np.float64)
    cdef const double[::1] v = np.ascontiguousarray(a.ravel())
    out = np.empty(v.shape[0], dtype=np.float64)
    cdef double[::1] o = out
    if v.shape[0]:
        with nogil:
            binary_values(code, &v[0], v.shape[0], &o[0])
    return out.reshape(a.shape)


def kappa(int code):
    """Strong-concavity constant of a built-in criterion code."""
    return kappa_of(code)


def sklearn_scale(int code):
    """Factor from the normalised impurity to scikit-learn's units (entropy in bits, Gini
    1 - sum p^2); 1 for Kearns-Mansour and user criteria (code -1), which have no counterpart."""
    return sklearn_scale_of(code)


cdef class CostState:
    """A user criterion for a compiled engine: ``cost(counts)`` maps an (rows, C) array of class
    counts to the rows' weight x impurity; the first exception it raises is kept for the caller."""

    def __init__(self, cost):
        self.cost = cost
        self.error = None

    def raise_error(self):
        err = self.error if self.error is not None else RuntimeError("the criterion failed")
        raise err


cdef int batch_cost(void* ctx, const double* counts, int rows, int C, double* out) noexcept with gil:
    cdef CostState st = <CostState>ctx
    cdef Py_ssize_t r
    cdef const double[::1] res
    try:
        arr = np.asarray(<double[:rows * C]> <double*> counts).reshape(rows, C).copy()
        res = np.ascontiguousarray(st.cost(arr), dtype=np.float64).ravel()
        if res.shape[0] != rows:
            raise ValueError(f"criterion cost returned {res.shape[0]} values for {rows} rows")
        for r in range(rows):
            out[r] = res[r]
        return 0
    except BaseException as exc:  # noqa: B902 - handed back to the engine's caller
        if st.error is None:
            st.error = exc
        return 1
