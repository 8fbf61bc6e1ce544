# The user-criterion callback shared by the compiled engines (see core/criteria.h,
# tl::batch_fn): cimport batch_cost and CostState to hand a Python cost to C++.
ctypedef int (*batch_fn)(void*, const double*, int, int, double*) noexcept nogil


cdef class CostState:
    cdef public object cost
    cdef public object error


cdef int batch_cost(void* ctx, const double* counts, int rows, int C, double* out) noexcept with gil
