// The histogram kernel of the greedy learner: rows in, per-feature per-class counts out.
//
// Features are small integer codes. A histogram over d features has one cell per (feature,
// code): feature f's cells start at offset[f] (offset[d] cells in all). Cell k of feature f holds
// the weighted class counts h[(offset[f] + k) * C + c] and the number of rows hc[offset[f] + k].
//
// count_rows ADDS the counts of a set of rows to (h, hc). Counts are additive: the histogram of
// a union of disjoint row sets is the sum of theirs, so threads or row shards can each count
// into their own buffer and sum them, and a child node's histogram is its parent's minus its
// sibling's. Both layouts of the codes are read:
//   RowMajor: codes[r * d + f] (a node's rows are read once, every feature at a time);
//   ColMajor: codes[f * n + r] (one feature at a time, for whole-sample passes).
// WITH_CLASSES = false counts rows only (h may be null).
#pragma once

#include <cstdint>

namespace tl {

enum class Layout { RowMajor, ColMajor };

template <Layout L, bool WITH_CLASSES, class Code>
inline void count_rows(const int32_t* rows, int64_t nrows,  // rows == nullptr: rows 0..nrows-1
                       const Code* codes, int64_t n, int d, const int64_t* offset, int C,
                       const int64_t* y, const double* w, double* h, int64_t* hc) {
    if constexpr (L == Layout::RowMajor) {
        for (int64_t p = 0; p < nrows; ++p) {
            const int64_t r = rows ? rows[p] : p;
            const Code* b = codes + r * (int64_t)d;
            if constexpr (WITH_CLASSES) {
                const int64_t yc = y[r];
                const double wi = w[r];
                for (int f = 0; f < d; ++f) {
                    const int64_t cell = offset[f] + b[f];
                    h[cell * C + yc] += wi;
                    hc[cell] += 1;
                }
            } else {
                for (int f = 0; f < d; ++f) hc[offset[f] + b[f]] += 1;
            }
        }
    } else {
        for (int f = 0; f < d; ++f) {
            const Code* cf = codes + (int64_t)f * n;
            int64_t* cc = hc + offset[f];
            double* hh = WITH_CLASSES ? h + offset[f] * C : nullptr;
            for (int64_t p = 0; p < nrows; ++p) {
                const int64_t r = rows ? rows[p] : p;
                const int64_t k = cf[r];
                cc[k] += 1;
                if constexpr (WITH_CLASSES) hh[k * C + y[r]] += w[r];
            }
        }
    }
}

// count_rows for sufficient statistics (regression): a row adds its C channels stats[r * C + c]
// (weights applied) to each of its cells, RowMajor codes
template <class Code>
inline void count_row_stats(const int32_t* rows, int64_t nrows, const Code* codes, int d, const int64_t* offset,
                            int C, const double* stats, double* h, int64_t* hc) {
    if (C == 3) {  // one output: the row's three channels in registers (the same additions)
        for (int64_t p = 0; p < nrows; ++p) {
            const int64_t r = rows ? rows[p] : p;
            const Code* b = codes + r * (int64_t)d;
            const double s0 = stats[r * 3], s1 = stats[r * 3 + 1], s2 = stats[r * 3 + 2];
            for (int f = 0; f < d; ++f) {
                const int64_t cell = offset[f] + b[f];
                double* hh = h + cell * 3;
                hh[0] += s0;
                hh[1] += s1;
                hh[2] += s2;
                hc[cell] += 1;
            }
        }
        return;
    }
    for (int64_t p = 0; p < nrows; ++p) {
        const int64_t r = rows ? rows[p] : p;
        const Code* b = codes + r * (int64_t)d;
        const double* s = stats + r * (int64_t)C;
        for (int f = 0; f < d; ++f) {
            const int64_t cell = offset[f] + b[f];
            double* hh = h + cell * C;
            for (int c = 0; c < C; ++c) hh[c] += s[c];
            hc[cell] += 1;
        }
    }
}

}  // namespace tl
