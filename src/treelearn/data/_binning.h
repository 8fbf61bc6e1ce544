// Histogram codes of numeric values: the code of x is the number of (ascending) thresholds <= x,
// by a branchless binary search (the comparison picks the half with a conditional move, no
// mispredicted branch per level: ~3x std::upper_bound on random data). NaN gets the largest code
// (as numpy.searchsorted sorts NaN last).
#pragma once

#include <cstdint>

namespace tl::bin {

static inline int64_t code_of(const double* thr, int64_t m, double v) {
    if (m == 0) return 0;
    if (v != v) return m;
    const double* base = thr;
    int64_t n = m;
    while (n > 1) {
        const int64_t half = n >> 1;
        base = (base[half] <= v) ? base + half : base;
        n -= half;
    }
    return (base - thr) + (*base <= v);
}

// column x (n values, stride apart) -> out[r * out_stride] as Code
template <class Code>
inline void code_column(const double* x, int64_t n, int64_t stride, const double* thr, int64_t m, Code* out,
                        int64_t out_stride) {
    for (int64_t r = 0; r < n; ++r) out[r * out_stride] = (Code)code_of(thr, m, x[r * stride]);
}

// column x -> out[r] (contiguous) with NaN coded m + 1 (one above every bin); returns the number
// of NaN. u (m + 1 values, or nullptr): whether every value is one of u, u[code] == x
// (``all_in_u``), checked in the same pass
template <class Code>
inline int64_t code_column_nan(const double* x, int64_t n, int64_t stride, const double* thr, int64_t m, Code* out,
                               const double* u, bool& all_in_u) {
    int64_t miss = 0;
    bool in = u != nullptr;
    for (int64_t r = 0; r < n; ++r) {
        const double v = x[r * stride];
        if (v != v) {
            out[r] = (Code)(m + 1);
            ++miss;
            continue;
        }
        const int64_t c = code_of(thr, m, v);
        out[r] = (Code)c;
        in = in && u[c] == v;
    }
    all_in_u = in && miss == 0;
    return miss;
}

}  // namespace tl::bin
