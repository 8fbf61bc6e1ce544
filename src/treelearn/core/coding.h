// Coding of numeric columns: one column -> integer codes, its distinct values and its thresholds
// (see code_column). The one definition of the numeric thresholds: the greedy learner codes its
// features with it, and treelearn.data.binarize.numeric_thresholds (the Binarizer's thresholds)
// reads them from it (data/_binning.pyx, column_thresholds).
#pragma once
#include <type_traits>
#include <algorithm>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/limits.h"

namespace tl {

// Feature coding: one numeric column -> codes, distinct values and thresholds: exact mode every
// midpoint between consecutive distinct values; with max_thr = m > 0 and more than m midpoints,
// the midpoints just above the data quantiles s[(i*n)//(m+1)], i = 1..m. The code of a value is
// the number of thresholds <= it. One LSD radix sort per column instead of two comparison sorts.
// Missing values (NaN) take no part in the thresholds (quantiles are of the present values) and
// get the code thr.size() + 1, one above every present value's; code_column returns their number.
static inline uint64_t sortable_key(double v) {
    if (v == 0.0) v = 0.0;  // -0.0 and +0.0 are the same value
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return (b & 0x8000000000000000ULL) ? ~b : (b | 0x8000000000000000ULL);
}

struct KeyRow {
    uint64_t key;
    int64_t row;
};

static inline double key_value(uint64_t k) {
    const uint64_t b = (k & 0x8000000000000000ULL) ? (k & 0x7FFFFFFFFFFFFFFFULL) : ~k;
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

// stable sort of src[0..m) by the low `bits` bits of the keys into dst (src is scratch): LSD
// passes of W-bit digits (8 for small ranges: fewer counters), a digit constant over the range
// skipped; insertion sort for a few entries
inline void lsd_keys(KeyRow* src, KeyRow* dst, size_t m, int bits) {
    if (m <= 32) {
        for (size_t i = 0; i < m; ++i) {
            const KeyRow x = src[i];
            size_t k = i;
            for (; k > 0 && dst[k - 1].key > x.key; --k) dst[k] = dst[k - 1];
            dst[k] = x;
        }
        return;
    }
    const int W = m >= 4096 ? 11 : 8, B = 1 << W, P = (bits + W - 1) / W;
    std::vector<size_t> cnt((size_t)B * P, 0);
    for (size_t i = 0; i < m; ++i) {  // all digit histograms in one pass
        const uint64_t k = src[i].key;
        for (int p = 0; p < P; ++p) cnt[(size_t)p * B + ((k >> (p * W)) & (B - 1))]++;
    }
    KeyRow* from = src;
    KeyRow* to = dst;
    for (int p = 0; p < P; ++p) {
        size_t* c = &cnt[(size_t)p * B];
        const int shift = p * W;
        if (c[(from[0].key >> shift) & (B - 1)] == m) continue;  // one digit value: nothing to do
        size_t sum = 0;
        for (int k = 0; k < B; ++k) { size_t t = c[k]; c[k] = sum; sum += t; }
        for (size_t i = 0; i < m; ++i) to[c[(from[i].key >> shift) & (B - 1)]++] = from[i];
        std::swap(from, to);
    }
    if (from != dst) std::memcpy(dst, from, m * sizeof(KeyRow));
}

// stable sort of a by key (tmp: scratch). One pass deals the entries to blocks by the keys' top
// 16 bits (sign, exponent and 4 bits of mantissa of a double: a few hundred blocks of data spread
// over a few binary orders of magnitude), then each block, small enough to stay in cache when the
// values spread, is sorted by its low 48 bits (lsd_keys). Six LSD passes over the whole column
// would each scatter it out of cache. (The stable order by key is unique: the same result.)
inline void radix_sort(std::vector<KeyRow>& a, std::vector<KeyRow>& tmp) {
    const size_t n = a.size();
    tmp.resize(n);
    if (n <= (size_t(1) << 16)) {
        if (n) { lsd_keys(a.data(), tmp.data(), n, 64); a.swap(tmp); }
        return;
    }
    const int TOP = 16;
    std::vector<size_t> start(((size_t)1 << TOP) + 1, 0);
    for (size_t i = 0; i < n; ++i) start[(a[i].key >> (64 - TOP)) + 1]++;
    size_t largest = 0;
    for (size_t b = 0; b < ((size_t)1 << TOP); ++b) { largest = std::max(largest, start[b + 1]); start[b + 1] += start[b]; }
    if (largest > n / 4) {  // clustered keys (few distinct values, integers...): blocks out of cache anyway
        lsd_keys(a.data(), tmp.data(), n, 64);
        a.swap(tmp);
        return;
    }
    {
        std::vector<size_t> pos(start.begin(), start.end() - 1);
        for (size_t i = 0; i < n; ++i) tmp[pos[a[i].key >> (64 - TOP)]++] = a[i];
    }
    for (size_t b = 0; b < ((size_t)1 << TOP); ++b) {
        const size_t s = start[b], m = start[b + 1] - s;
        if (m) lsd_keys(tmp.data() + s, a.data() + s, m, 64 - TOP);
    }
}

// The ranks of the distinct values of the sorted present rows a[0..n) (n = a.size()) into
// codes[row] (the column has n_all rows, X[i * stride]; missing rows, NaN, are not in a); the
// distinct values into *u when given. Returns their number. Writing codes[a[p].row] in sorted
// order is one random store per row, a cache and TLB miss each once the column outgrows the
// caches; instead the (rank, row) pairs are first dealt to tmp by blocks of rows (blocks of at
// most 2^11 rows' codes, a few kB), then every block is written where its codes lie.
inline int64_t scatter_ranks(const std::vector<KeyRow>& a, std::vector<KeyRow>& tmp, const double* X, int64_t n_all,
                             int64_t stride, int32_t* codes, std::vector<double>* u) {
    const int64_t n = (int64_t)a.size();
    int64_t U = 0;
    double prev = 0.0;
    if (n_all <= (int64_t(1) << 16)) {  // the codes fit in the caches: direct stores
        for (int64_t p = 0; p < n; ++p) {
            const double v = key_value(a[p].key);
            if (p == 0 || v != prev) { if (u) u->push_back(v); prev = v; ++U; }
            codes[a[p].row] = (int32_t)(U - 1);
        }
        return U;
    }
    int sh = 0;
    while ((n_all - 1) >> sh >= 2048) ++sh;
    const int64_t nb = ((n_all - 1) >> sh) + 1;
    std::vector<int64_t> pos((size_t)nb + 1, 0);
    for (int64_t i = 0; i < n_all; ++i) pos[(i >> sh) + 1] += X[i * stride] == X[i * stride];  // present rows
    for (int64_t b = 0; b < nb; ++b) pos[b + 1] += pos[b];
    tmp.resize((size_t)n);
    for (int64_t p = 0; p < n; ++p) {
        const double v = key_value(a[p].key);
        if (p == 0 || v != prev) { if (u) u->push_back(v); prev = v; ++U; }
        tmp[pos[a[p].row >> sh]++] = KeyRow{(uint64_t)(U - 1), a[p].row};
    }
    for (int64_t q = 0; q < n; ++q) codes[tmp[q].row] = (int32_t)tmp[q].key;
    return U;
}

// the codes of the missing rows: one above every present value's (thr.size() + 1)
inline void code_missing(const double* X, int64_t n, int64_t stride, int32_t* codes, int64_t n_thr) {
    const int32_t miss = (int32_t)n_thr + 1;
    for (int64_t i = 0; i < n; ++i)
        if (X[i * stride] != X[i * stride]) codes[i] = miss;
}
inline void code_missing(const double* X, int64_t n, int64_t stride, int32_t* codes, const std::vector<double>& thr) {
    code_missing(X, n, stride, codes, (int64_t)thr.size());
}

// values = false (exact mode's ranks, max_thr <= 0): u is left empty, n_distinct gets the number
// of distinct present values (their ranks are the codes) and thr stays empty
inline int64_t code_column(const double* X, int64_t n, int64_t stride, int64_t max_thr, int32_t* codes,
                           std::vector<double>& u, std::vector<double>& thr,
                           std::vector<KeyRow>& a, std::vector<KeyRow>& tmp, bool values, int64_t& n_distinct) {
    u.clear();
    thr.clear();
    n_distinct = 0;
    if (n == 0) return 0;
    int64_t n_missing = 0;
    for (int64_t i = 0; i < n; ++i) n_missing += X[i * stride] != X[i * stride];
    if (n_missing == n) {  // every value missing: no threshold
        code_missing(X, n, stride, codes, thr);
        return n_missing;
    }
    if (n_missing == 0) {   // fast path: at most two distinct values (binary features), no sort needed
        double lo = X[0], hi = X[0];
        bool two = true;
        for (int64_t i = 1; i < n && two; ++i) {
            const double v = X[i * stride];
            if (v == lo || v == hi) continue;
            if (lo == hi) { if (v < lo) lo = v; else hi = v; }
            else two = false;
        }
        if (two) {
            u.push_back(lo == 0.0 ? 0.0 : lo);
            if (hi != lo) {
                u.push_back(hi == 0.0 ? 0.0 : hi);
                double m = (u[0] + u[1]) / 2.0;
                if (m <= u[0]) m = u[1];
                thr.push_back(m);  // one midpoint <= any max_thr >= 1
            }
            for (int64_t i = 0; i < n; ++i) codes[i] = (hi != lo && X[i * stride] == hi) ? 1 : 0;
            n_distinct = (int64_t)u.size();
            if (!values) { u.clear(); thr.clear(); }
            return 0;
        }
    }
    const int64_t n_all = n;
    n -= n_missing;  // the present values: keys, ranks and quantiles are theirs
    a.resize(n);
    for (int64_t i = 0, q = 0; i < n_all; ++i) {
        const double v = X[i * stride];
        if (v == v) a[q++] = KeyRow{sortable_key(v), i};
    }
    radix_sort(a, tmp);
    // the ranks of the distinct values, written to the codes (a re-coding below when quantile
    // thresholds are chosen); without `values` only their number is kept
    const int64_t U = scatter_ranks(a, tmp, X, n_all, stride, codes, values ? &u : nullptr);
    if (!values) {
        n_distinct = U;  // U - 1 midpoints: the missing code is U
        if (n_missing) code_missing(X, n_all, stride, codes, U - 1);
        return n_missing;
    }
    std::vector<double> mids(U > 1 ? U - 1 : 0);
    for (int64_t j = 0; j + 1 < U; ++j) {
        double m = (u[j] + u[j + 1]) / 2.0;
        if (m <= u[j]) m = u[j + 1];
        mids[j] = m;
    }
    if (max_thr <= 0 || (int64_t)mids.size() <= max_thr) {
        thr.swap(mids);
        if (n_missing) code_missing(X, n_all, stride, codes, thr);
        return n_missing;
    }
    std::vector<int32_t> rank_at(n);
    for (int64_t p = 0; p < n; ++p) rank_at[p] = codes[a[p].row];
    // quantile thresholds; code(rank r) = #{selected j : j < r}
    std::vector<uint8_t> sel(U, 0);
    for (int64_t i = 1; i <= max_thr; ++i) {
        int64_t pos = (i * n) / (max_thr + 1);
        if (pos > n - 1) pos = n - 1;
        const int32_t j = rank_at[pos];
        if (j < U - 1) sel[j] = 1;
    }
    std::vector<int32_t> code_of(U);
    int32_t c = 0;
    for (int64_t r = 0; r < U; ++r) {
        code_of[r] = c;
        if (sel[r]) { thr.push_back(mids[r]); ++c; }
    }
    for (int64_t p = 0; p < n; ++p) codes[a[p].row] = code_of[rank_at[p]];
    if (n_missing) code_missing(X, n_all, stride, codes, thr);
    return n_missing;
}

// code_column over the columns cols[0..m) of X (element (r, j) at X[r * rs + j * cs]) on up to T
// threads (one column each at a time; a strided column is first copied to the thread's buffer);
// column cols[i]'s codes into codes + cols[i] * n, its values, thresholds and missing count into out[i]
// (values = false, exact mode: only the codes, the missing and distinct counts; every column in one
// call, so a thread's sort buffers are allocated once: buffers past glibc's mmap threshold would
// be returned to the system and faulted in again, page by page, for every column)
struct ColumnCode {
    std::vector<double> u, thr;
    int64_t n_missing = 0;
    int64_t n_distinct = 0;  // distinct present values (the only output besides the codes without values)
};

// X may hold any numeric type T (the caller's own dtype: integer and float32 input are never
// copied to a float64 matrix); a column that is not already a contiguous double column is
// converted into the thread's one-column buffer (every value of an integer column the schema
// accepted is exact in double)
template <typename T>
inline void code_columns(const T* X, int64_t n, int64_t rs, int64_t cs, const int64_t* cols, int64_t m,
                         int64_t max_thr, int32_t* codes, int T_, std::vector<ColumnCode>& out, bool values = true) {
    out.resize((size_t)m);
    const int nt = (int)std::max<int64_t>(1, std::min<int64_t>(T_, m));
    tl::run_workers(nt, [&](int t) {
        std::vector<double> col;
        std::vector<KeyRow> a, tmp;
        for (int64_t i = t; i < m; i += nt) {
            const T* src = X + cols[i] * cs;
            const double* dst = nullptr;
            if constexpr (std::is_same<T, double>::value) {
                if (rs == 1 || n == 0) dst = src;
            }
            if (dst == nullptr) {
                col.resize((size_t)n);
                for (int64_t r = 0; r < n; ++r) col[r] = (double)src[r * rs];
                dst = col.data();
            }
            out[i].n_missing = code_column(dst, n, 1, max_thr, codes + cols[i] * n, out[i].u, out[i].thr, a, tmp,
                                           values, out[i].n_distinct);
        }
    });
}

// The distinct values u and the thresholds thr of one column x (n values, stride apart; NaN
// ignored) exactly as code_column computes them, without codes: a threshold sample needs no
// ranks written back, so its present values are sorted as bare keys (8 bytes, not a key and a row)
// by LSD passes of 11-bit digits (a digit constant over the column skipped), and the quantile
// positions' ranks are read while the distinct values are walked.
inline void sample_column_thresholds(const double* x, int64_t n, int64_t stride, int64_t max_thr,
                                     std::vector<double>& u, std::vector<double>& thr,
                                     std::vector<uint64_t>& keys, std::vector<uint64_t>& tmp) {
    u.clear();
    thr.clear();
    keys.clear();
    for (int64_t i = 0; i < n; ++i) {
        const double v = x[i * stride];
        if (v == v) keys.push_back(sortable_key(v));
    }
    const int64_t m = (int64_t)keys.size();
    if (m == 0) return;
    if (m <= 64) {
        std::sort(keys.begin(), keys.end());
    } else {
        constexpr int W = 11, B = 1 << W, P = (64 + W - 1) / W;
        std::vector<size_t> cnt((size_t)B * P, 0);
        for (int64_t i = 0; i < m; ++i)
            for (int p = 0; p < P; ++p) cnt[(size_t)p * B + ((keys[i] >> (p * W)) & (B - 1))]++;
        tmp.resize((size_t)m);
        uint64_t* from = keys.data();
        uint64_t* to = tmp.data();
        for (int p = 0; p < P; ++p) {
            size_t* c = &cnt[(size_t)p * B];
            const int shift = p * W;
            if (c[(from[0] >> shift) & (B - 1)] == (size_t)m) continue;
            size_t sum = 0;
            for (int k = 0; k < B; ++k) { const size_t t = c[k]; c[k] = sum; sum += t; }
            for (int64_t i = 0; i < m; ++i) to[c[(from[i] >> shift) & (B - 1)]++] = from[i];
            std::swap(from, to);
        }
        if (from != keys.data()) std::memcpy(keys.data(), from, (size_t)m * sizeof(uint64_t));
    }
    // the distinct values, and the rank of the value at each quantile position (n, the present
    // values' count, as code_column's quantiles)
    std::vector<int64_t> pos_rank;
    const bool quantiles = max_thr > 0;
    int64_t next_i = 1, next_pos = quantiles ? std::min<int64_t>((1 * m) / (max_thr + 1), m - 1) : m;
    for (int64_t p = 0; p < m; ++p) {
        if (p == 0 || keys[p] != keys[p - 1]) u.push_back(key_value(keys[p]));
        while (quantiles && next_i <= max_thr && p == next_pos) {
            pos_rank.push_back((int64_t)u.size() - 1);
            ++next_i;
            if (next_i <= max_thr) next_pos = std::min<int64_t>((next_i * m) / (max_thr + 1), m - 1);
        }
    }
    const int64_t U = (int64_t)u.size();
    std::vector<double> mids(U > 1 ? U - 1 : 0);
    for (int64_t j = 0; j + 1 < U; ++j) {
        double mid = (u[j] + u[j + 1]) / 2.0;
        if (mid <= u[j]) mid = u[j + 1];
        mids[j] = mid;
    }
    if (max_thr <= 0 || (int64_t)mids.size() <= max_thr) {
        thr.swap(mids);
        return;
    }
    std::vector<uint8_t> sel((size_t)U, 0);
    for (const int64_t j : pos_rank)
        if (j < U - 1) sel[(size_t)j] = 1;
    for (int64_t r = 0; r < U; ++r)
        if (sel[(size_t)r]) thr.push_back(mids[(size_t)r]);
}

// sample_column_thresholds of the columns 0..d) of a row-major sample S (n x d), on up to T threads
inline void sample_thresholds(const double* S, int64_t n, int64_t d, int64_t max_thr, int T_,
                              std::vector<ColumnCode>& out) {
    out.resize((size_t)d);
    const int nt = (int)std::max<int64_t>(1, std::min<int64_t>(T_, d));
    tl::run_workers(nt, [&](int t) {
        std::vector<uint64_t> keys, tmp;
        for (int64_t j = t; j < d; j += nt)
            sample_column_thresholds(S + j, n, d, max_thr, out[(size_t)j].u, out[(size_t)j].thr, keys, tmp);
    });
}

// The thresholds of one numeric column x (n values, stride apart; NaN ignored): every midpoint
// between consecutive distinct values, or (max_thr > 0, more midpoints than that) the quantile
// ones of code_column.
inline std::vector<double> column_thresholds(const double* x, int64_t n, int64_t stride, int64_t max_thr) {
    std::vector<int32_t> codes((size_t)n);
    std::vector<double> u, thr;
    std::vector<KeyRow> a, tmp;
    int64_t n_distinct = 0;
    code_column(x, n, stride, max_thr, codes.data(), u, thr, a, tmp, true, n_distinct);
    return thr;
}

}  // namespace tl
