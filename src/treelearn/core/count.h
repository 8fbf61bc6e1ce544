// The counting layer of the binary learners: bitset primitives over sample rows.
//
// Every learner on binary features (BinaryData.count in data/_bitset.pyx, the Top-k / optimal
// search, the min-rank search) counts through these functions and nothing else. Layout: a
// bitset over rows is an array of 64-row words (bit r % 64 of word r / 64 is row r); a column
// matrix holds one bitset per feature, (d, nw) row-major; class bitsets one per class, (C, nw).
//
// The contract is "rows in, per-feature per-class counts out": for a cover (the rows reaching a
// node, as a bitset or a mask over a frame of rows) the kernels return counts[j * C + c] = the
// (weighted) number of rows in the cover with feature j = 1 and class c, and rc[j] = the number
// of rows with feature j = 1. Counts compose: a sibling's are the parent's minus the child's
// (subtract), so a split costs one counting pass for two children.
//
// Primitives, from the smallest:
//   count / and_count / andnot_count      popcounts of a bitset, of a AND b, of a AND NOT b
//   split_cover                            the children's covers: cover AND column, AND NOT column
//   weighted_and_sum / weighted_andnot_sum the total weight of the rows in a AND b / a AND NOT b
//   mask_classes                           class bitsets AND a mask (done once per counting pass)
//   class_counts / weighted_class_counts   one column's per-class counts (AND + popcount; class 0
//                                          by subtraction) / per-class weights (bit scan)
//   feature_counts / weighted_feature_counts  every column (or a selection) at once
//   subtract                               sibling counts by subtraction
//   class_bitsets / columns_to_rows / gather_columns  row (re-)packing: labels -> class bitsets,
//                                          columns -> row bitsets, a subset of rows -> its own
//                                          local column matrix (gather + 64x64 transposes)
//   sparse_* / split_sparse                the same on a sparse cover (its nonzero words only)
//
// Everything is forced inline: these are the innermost loops of exponential searches, and an
// outlined call in them costs measurable time (see the search headers).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/bitpack.h"

#ifndef TL_INLINE
#define TL_INLINE __attribute__((always_inline)) inline
#endif

namespace tl {

using u64 = uint64_t;

TL_INLINE int popc(u64 x) { return __builtin_popcountll(x); }
TL_INLINE int ctz(u64 x) { return __builtin_ctzll(x); }

// ------------------------------------------------------------------ popcounts of bitsets
TL_INLINE long long count(const u64* a, long long nw) {
    long long t = 0;
    for (long long i = 0; i < nw; ++i) t += popc(a[i]);
    return t;
}
TL_INLINE int and_count(const u64* a, const u64* b, int nw) {
    int t = 0;
    for (int i = 0; i < nw; ++i) t += popc(a[i] & b[i]);
    return t;
}
TL_INLINE int andnot_count(const u64* a, const u64* b, int nw) {
    int t = 0;
    for (int i = 0; i < nw; ++i) t += popc(a[i] & ~b[i]);
    return t;
}

// the children's covers of a split: one = cover AND column, zero = cover AND NOT column
TL_INLINE void split_cover(const u64* __restrict cover, const u64* __restrict col, u64* __restrict one,
                           u64* __restrict zero, int nw) {
    for (int i = 0; i < nw; ++i) {
        one[i] = cover[i] & col[i];
        zero[i] = cover[i] & ~col[i];
    }
}

// ------------------------------------------------------------------ weights
// total weight of the rows set in word x (word index i); w indexed by row (or frame position)
TL_INLINE double weighted_word(u64 x, int i, const double* w) {
    double s = 0;
    while (x) {
        s += w[(i << 6) + ctz(x)];
        x &= x - 1;
    }
    return s;
}
// total weight of the rows in a AND b, one running sum over the rows in ascending order (the
// order of weighted_class_counts)
TL_INLINE double weighted_and_sum(const u64* a, const u64* b, int nw, const double* w) {
    double s = 0;
    for (int i = 0; i < nw; ++i) {
        u64 x = a[i] & b[i];
        while (x) {
            s += w[(i << 6) + ctz(x)];
            x &= x - 1;
        }
    }
    return s;
}
// total weight of the rows in a AND NOT b, summed per word first (the similarity bound's sum)
TL_INLINE double weighted_andnot_sum(const u64* a, const u64* b, int nw, const double* w) {
    double s = 0;
    for (int i = 0; i < nw; ++i) s += weighted_word(a[i] & ~b[i], i, w);
    return s;
}

// ------------------------------------------------------------------ per-class counts of one column
// mc := class bitsets AND mask, (C, wl)
TL_INLINE void mask_classes(const u64* cls, const u64* mask, int C, int wl, u64* mc) {
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < wl; ++i) mc[(size_t)c * wl + i] = cls[(size_t)c * wl + i] & mask[i];
}

// per-class counts of the rows in (col AND mask), from the class bitsets already ANDed with the
// mask (mc, (C, wl)); class 0 by subtraction; returns the number of rows
template <typename CT>
TL_INLINE int class_counts(const u64* col, const u64* mask, const u64* mc, int C, int wl, CT* o) {
    if (C == 2) {
        // two classes (the common case): one pass over the column, two independent sums (the
        // search's pair matrices spend most of their time here)
        const u64* m1 = mc + wl;
        int t = 0, a = 0;
        for (int i = 0; i < wl; ++i) {
            const u64 x = col[i];
            t += popc(x & mask[i]);
            a += popc(x & m1[i]);
        }
        o[1] = (CT)a;
        o[0] = (CT)(t - a);
        return t;
    }
    const int t = and_count(col, mask, wl);
    int s = 0;
    for (int c = 1; c < C; ++c) {
        const int a = and_count(col, mc + (size_t)c * wl, wl);
        o[c] = (CT)a;
        s += a;
    }
    o[0] = (CT)(t - s);
    return t;
}

// per-class weights of the rows in (a AND b): o[y[r]] += w[r] for the rows r in ascending order
// (the order every weighted count uses, so that sums agree to the last bit); returns the number
// of rows
template <typename CT, typename Y>
TL_INLINE int weighted_class_counts(const u64* a, const u64* b, int wl, const Y* y, const double* w, int C, CT* o) {
    for (int c = 0; c < C; ++c) o[c] = 0;
    int t = 0;
    for (int i = 0; i < wl; ++i) {
        u64 x = a[i] & b[i];
        t += popc(x);
        while (x) {
            const int r = (i << 6) + ctz(x);
            o[y[r]] += (CT)w[r];
            x &= x - 1;
        }
    }
    return t;
}

// ------------------------------------------------------------------ every column at once
// two classes, WL words fixed at compile time (the common case deep in a search): m1 = the rows
// of class 1 in the mask
template <int WL, typename CT>
TL_INLINE void counts2_fixed(const u64* M, int d, const u64* mask, const u64* m1, CT* cnt, int32_t* rc) {
    u64 mk[WL], c1[WL];
    for (int i = 0; i < WL; ++i) {
        mk[i] = mask[i];
        c1[i] = m1[i];
    }
    for (int j = 0; j < d; ++j) {
        const u64* col = M + (size_t)j * WL;
        int t = 0, a = 0;
        for (int i = 0; i < WL; ++i) {
            t += popc(col[i] & mk[i]);
            a += popc(col[i] & c1[i]);
        }
        rc[j] = t;
        cnt[2 * j + 1] = (CT)a;
        cnt[2 * j] = (CT)(t - a);
    }
}

// C classes, WL words fixed at compile time; mc = class bitsets AND mask, (C, WL)
template <int WL, typename CT>
TL_INLINE void countsC_fixed(const u64* M, int d, const u64* mask, const u64* mc, int C, CT* cnt, int32_t* rc) {
    u64 mk[WL];
    for (int i = 0; i < WL; ++i) mk[i] = mask[i];
    for (int j = 0; j < d; ++j) {
        const u64* col = M + (size_t)j * WL;
        u64 cw[WL];
        int t = 0;
        for (int i = 0; i < WL; ++i) {
            cw[i] = col[i];
            t += popc(cw[i] & mk[i]);
        }
        rc[j] = t;
        int sacc = 0;
        for (int c = 1; c < C; ++c) {
            int a = 0;
            for (int i = 0; i < WL; ++i) a += popc(cw[i] & mc[(size_t)c * WL + i]);
            cnt[(size_t)j * C + c] = (CT)a;
            sacc += a;
        }
        cnt[(size_t)j * C] = (CT)(t - sacc);
    }
}

// unweighted counts of the rows in mask for every column j of M (d, wl) (or the columns sel[0..
// nsel) when sel is given): cnt[j * C + c], rc[j]. cls: the class bitsets (C, wl); mc: scratch
// of C * wl words (left holding cls AND mask)
template <typename CT>
TL_INLINE void feature_counts(const u64* M, int d, int wl, const u64* mask, const u64* cls, int C, u64* mc, CT* cnt,
                              int32_t* rc, const int* sel = nullptr, int nsel = -1) {
    const int nj = sel ? nsel : d;
    mask_classes(cls, mask, C, wl, mc);
    if (C == 2 && !sel && wl <= 4) {
        const u64* m1 = mc + wl;
        switch (wl) {
            case 1: counts2_fixed<1>(M, d, mask, m1, cnt, rc); break;
            case 2: counts2_fixed<2>(M, d, mask, m1, cnt, rc); break;
            case 3: counts2_fixed<3>(M, d, mask, m1, cnt, rc); break;
            default: counts2_fixed<4>(M, d, mask, m1, cnt, rc); break;
        }
    } else if (C > 2 && !sel && wl <= 4) {
        switch (wl) {
            case 1: countsC_fixed<1>(M, d, mask, mc, C, cnt, rc); break;
            case 2: countsC_fixed<2>(M, d, mask, mc, C, cnt, rc); break;
            case 3: countsC_fixed<3>(M, d, mask, mc, C, cnt, rc); break;
            default: countsC_fixed<4>(M, d, mask, mc, C, cnt, rc); break;
        }
    } else if (C == 2) {
        const u64* m1 = mc + wl;
        for (int q = 0; q < nj; ++q) {
            const int j = sel ? sel[q] : q;
            const u64* col = M + (size_t)j * wl;
            int t = 0, a = 0;
            for (int i = 0; i < wl; ++i) {
                t += popc(col[i] & mask[i]);
                a += popc(col[i] & m1[i]);
            }
            rc[j] = t;
            cnt[2 * j + 1] = (CT)a;
            cnt[2 * j] = (CT)(t - a);
        }
    } else {
        for (int q = 0; q < nj; ++q) {
            const int j = sel ? sel[q] : q;
            rc[j] = class_counts(M + (size_t)j * wl, mask, mc, C, wl, &cnt[(size_t)j * C]);
        }
    }
}

// weighted counts of the rows in mask for every column (or the selection): class of row r y[r],
// weight w[r] (indexed as the matrix's rows)
template <typename CT, typename Y>
TL_INLINE void weighted_feature_counts(const u64* M, int d, int wl, const u64* mask, const Y* y, const double* w,
                                       int C, CT* cnt, int32_t* rc, const int* sel = nullptr, int nsel = -1) {
    const int nj = sel ? nsel : d;
    for (int q = 0; q < nj; ++q) {
        const int j = sel ? sel[q] : q;
        rc[j] = weighted_class_counts(M + (size_t)j * wl, mask, wl, y, w, C, &cnt[(size_t)j * C]);
    }
}

// sibling counts by subtraction: out = parent - child, n values
template <typename T>
TL_INLINE void subtract(const T* parent, const T* child, size_t n, T* out) {
    for (size_t q = 0; q < n; ++q) out[q] = parent[q] - child[q];
}

// ------------------------------------------------------------------ row (re-)packing
// class codes 0..C-1 of n rows -> class bitsets out (C, nw), which must be zero on entry
template <typename Y>
inline void class_bitsets(const Y* y, long long n, long long nw, u64* out) {
    for (long long i = 0; i < n; ++i) out[(size_t)y[i] * nw + (i >> 6)] |= 1ULL << (i & 63);
}

// packed columns (d, nw) and class bitsets (C, nw) -> row bitsets rowbits (n, dw) with
// dw = ceil((d + C) / 64): bits 0..d-1 of a row its features, bit d + c its class c. Only the
// 64-row blocks b0 <= b < b1 (b1 < 0: to the last), so that a caller can go in chunks.
inline void columns_to_rows(const u64* cols, int d, const u64* cls, int C, int n, int nw, u64* rowbits, int b0 = 0,
                            int b1 = -1) {
    const int dw = (d + C + 63) / 64;
    u64 blk[64];
    for (int b = b0; b < (b1 < 0 ? nw : std::min(b1, nw)); ++b) {
        const int rn = std::min(64, n - b * 64);
        for (int fb = 0; fb < dw; ++fb) {
            for (int t = 0; t < 64; ++t) {
                const int j = fb * 64 + t;
                blk[t] = j < d ? cols[(size_t)j * nw + b] : j < d + C ? cls[(size_t)(j - d) * nw + b] : 0;
            }
            tl::transpose64(blk);  // now blk[i] bit t = feature fb*64+t of row b*64+i
            for (int i = 0; i < rn; ++i) rowbits[(size_t)(b * 64 + i) * dw + fb] = blk[i];
        }
    }
}

// the rows rows[0..m) (ascending) of row bitsets rb (n, dw) -> their own local column matrix
// M (d, wl) and class bitsets cls (C, wl), wl = ceil(m / 64), bit i of local word i / 64 = row
// rows[i]: a gather of row words and 64x64 bit transposes, so that a node of m rows then counts
// in O(d * m / 64)
inline void gather_columns(const u64* rb, int dw, const int32_t* rows, int m, int d, int C, u64* M, u64* cls) {
    const int wl = (m + 63) / 64;
    u64 blk[64];
    for (int b = 0; b < wl; ++b) {
        const int r0 = b * 64, rn = std::min(64, m - r0);
        // the next block's rows are scattered over the sample: fetch them while this one is packed
        const int pn = std::min(64, m - r0 - 64);
        for (int i = 0; i < pn; ++i) __builtin_prefetch(rb + (size_t)rows[r0 + 64 + i] * dw);
        for (int fb = 0; fb < dw; ++fb) {
            for (int i = 0; i < rn; ++i) blk[i] = rb[(size_t)rows[r0 + i] * dw + fb];
            for (int i = rn; i < 64; ++i) blk[i] = 0;
            tl::transpose64(blk);
            // columns fb*64 .. : features, then (bits d .. d+C-1 of a row) the class bitsets
            const int j0 = fb * 64;
            const int jf = std::max(0, std::min(64, d - j0));
            const int jc = std::min(64, d + C - j0);
            for (int t = 0; t < jf; ++t) M[(size_t)(j0 + t) * wl + b] = blk[t];
            for (int t = jf; t < jc; ++t) cls[(size_t)(j0 + t - d) * wl + b] = blk[t];
        }
    }
}

// ------------------------------------------------------------------ sparse covers
// A sparse cover holds only its nonzero words: val[e] at word index idx[e] (increasing), n of
// them (the min-rank search's covers: a small cover costs at most one word per row).

// true when the cover has rows on both sides of column col (cover AND col, cover AND NOT col)
TL_INLINE bool sparse_splits(const uint32_t* idx, const u64* val, uint32_t n, const u64* col) {
    bool one = false, zero = false;
    for (uint32_t e = 0; e < n; ++e) {
        const u64 x = val[e], c = col[idx[e]];
        one |= (x & c) != 0;
        zero |= (x & ~c) != 0;
        if (one && zero) return true;
    }
    return false;
}

// true when every row of the cover is in bitset b (cover AND NOT b is empty)
TL_INLINE bool sparse_subset(const uint32_t* idx, const u64* val, uint32_t n, const u64* b) {
    for (uint32_t e = 0; e < n; ++e)
        if (val[e] & ~b[idx[e]]) return false;
    return true;
}

// split a sparse cover on column col: side 0 (AND NOT col) into (i0, v0), side 1 (AND col) into
// (i1, v1), nonzero words only; n0 / n1 their numbers of words, cnt0 / cnt1 of rows; on0(i, x)
// / on1(i, x) see every kept word (e.g. to fingerprint the side while it is built)
template <typename F0, typename F1>
TL_INLINE void split_sparse(const uint32_t* idx, const u64* val, uint32_t n, const u64* col, uint32_t* i0, u64* v0,
                            uint32_t& n0, uint32_t& cnt0, uint32_t* i1, u64* v1, uint32_t& n1, uint32_t& cnt1,
                            F0&& on0, F1&& on1) {
    n0 = n1 = cnt0 = cnt1 = 0;
    for (uint32_t e = 0; e < n; ++e) {
        const uint32_t i = idx[e];
        const u64 x = val[e], x1 = x & col[i], x0 = x & ~col[i];
        if (x0) {
            i0[n0] = i;
            v0[n0++] = x0;
            cnt0 += popc(x0);
            on0(i, x0);
        }
        if (x1) {
            i1[n1] = i;
            v1[n1++] = x1;
            cnt1 += popc(x1);
            on1(i, x1);
        }
    }
}

}  // namespace tl
