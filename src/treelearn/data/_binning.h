// Histogram codes of numeric values: the code of x is the number of (ascending) thresholds <= x,
// by a branchless binary search (the comparison picks the half with a conditional move, no
// mispredicted branch per level: ~3x std::upper_bound on random data). NaN gets the largest code
// (as numpy.searchsorted sorts NaN last).
#pragma once

#include <cstdint>

namespace tlbin {

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

}  // namespace tlbin
