// The per-level pieces of a greedy fit on Dask row shards (this room's sharded.py), built on the greedy
// learner's own kernels so that the tree is the local one:
// * shard_hist: a shard's per-node (feature x code x class) histograms, by the additive
//   "rows in, counts out" kernel of core/histogram.h (row-major uint8/uint16 codes);
// * apply_splits: move a shard's rows from their nodes to the children (the driver's splits);
// * find_splits: the best split of each node from its summed histogram, by the local grower's
//   own HistFinder::find (same scan order, tolerance and tie-breaking: the same split);
// * node_wimp: W x impurity of class counts, the grower's Crit::wimp.
// Nothing here restructures the greedy core: the finder is used as it is, on a histogram slot
// filled from outside (a Problem with no rows).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "hist.h"

namespace tl::greedy {

// rows of a shard grouped by the slot of their node (slot_of[nid] >= 0), then counted per slot
template <class Code>
inline void shard_hist(const Code* codes, int64_t n, int d, const int64_t* y, const double* w,
                       const int32_t* nid, const int32_t* slot_of, int64_t n_nodes, int64_t n_slots,
                       const int64_t* offset, int C, double* h, int64_t* hc) {
    std::vector<int64_t> start(n_slots + 1, 0);
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid[r];
        if (v >= 0 && v < n_nodes && slot_of[v] >= 0) start[slot_of[v] + 1]++;
    }
    for (int64_t s = 0; s < n_slots; ++s) start[s + 1] += start[s];
    std::vector<int32_t> rows((size_t)start[n_slots]);
    std::vector<int64_t> pos(start.begin(), start.end() - 1);
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid[r];
        if (v >= 0 && v < n_nodes && slot_of[v] >= 0) rows[pos[slot_of[v]]++] = (int32_t)r;
    }
    const int64_t csize = offset[d];
    for (int64_t s = 0; s < n_slots; ++s) {
        tl::count_rows<tl::Layout::RowMajor, true, Code>(rows.data() + start[s], start[s + 1] - start[s],
                                                               codes, n, d, offset, C, y, w, h + s * csize * C,
                                                               hc + s * csize);
    }
}

// regression shards: per-slot (cell x channel) sums of the rows' channels stats (n, C) and the
// cells' row counts, by the local histogram finder's kernel (count_row_stats)
template <class Code>
inline void shard_stat_hist(const Code* codes, int64_t n, int d, const double* stats, const int32_t* nid,
                            const int32_t* slot_of, int64_t n_nodes, int64_t n_slots, const int64_t* offset, int C,
                            double* h, int64_t* hc) {
    std::vector<int64_t> start(n_slots + 1, 0);
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid ? nid[r] : 0;
        if (v >= 0 && v < n_nodes && slot_of[v] >= 0) start[slot_of[v] + 1]++;
    }
    for (int64_t s = 0; s < n_slots; ++s) start[s + 1] += start[s];
    std::vector<int32_t> rows((size_t)start[n_slots]);
    std::vector<int64_t> pos(start.begin(), start.end() - 1);
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid ? nid[r] : 0;
        if (v >= 0 && v < n_nodes && slot_of[v] >= 0) rows[pos[slot_of[v]]++] = (int32_t)r;
    }
    const int64_t csize = offset[d];
    for (int64_t s = 0; s < n_slots; ++s)
        tl::count_row_stats(rows.data() + start[s], start[s + 1] - start[s], codes, d, offset, C, stats,
                            h + s * csize * C, hc + s * csize);
}

// unweighted shards: per-slot (cell x class) row counts only, in one sequential pass over the
// rows (no per-slot row lists; a row adds 1 to its slot's cell of each feature). The row count
// of a cell is the sum over its classes (the driver derives it), so this writes and sends one
// integer per (cell, class) instead of a double per (cell, class) plus an int64 per cell.
template <class Code, class Cnt>
inline void shard_counts(const Code* codes, int64_t n, int d, const uint8_t* y, const int32_t* nid,
                         const int32_t* slot_of, int64_t n_nodes, const int64_t* offset, int C, Cnt* h) {
    const int64_t csize = offset[d] * (int64_t)C;
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid ? nid[r] : 0;
        if (v < 0 || v >= n_nodes) continue;
        const int32_t s = slot_of[v];
        if (s < 0) continue;
        Cnt* hs = h + s * csize + y[r];
        const Code* b = codes + r * (int64_t)d;
        for (int f = 0; f < d; ++f) hs[(offset[f] + b[f]) * C] += 1;
    }
}

// node v's rows go to right[v] when (is_cat ? code == k : code >= k) else left[v]; a node with
// feature -1 sends its rows to -1 (a leaf: no longer counted), feature -2 keeps them (a leaf of
// best-first growth that may still be split)
template <class Code>
inline void apply_splits(const Code* codes, int64_t n, int d, int32_t* nid, int64_t n_nodes,
                         const int32_t* feature, const int32_t* code, const uint8_t* is_cat,
                         const int32_t* left, const int32_t* right) {
    for (int64_t r = 0; r < n; ++r) {
        const int32_t v = nid[r];
        if (v < 0 || v >= n_nodes) continue;
        const int32_t f = feature[v];
        if (f < 0) {
            if (f == -1) nid[r] = -1;
            continue;
        }
        const int32_t x = (int32_t)codes[r * (int64_t)d + f];
        const bool go = is_cat[f] ? (x == code[v]) : (x >= code[v]);
        nid[r] = go ? right[v] : left[v];
    }
}

template <class Crit>
inline void find_with(Crit& crit, int d, int C, const int32_t* n_codes, const uint8_t* is_cat,
                      const int32_t* cat_only, int64_t msl, int64_t k, const double* H, const int64_t* HC,
                      const double* tot, const double* W, const int64_t* m, int32_t* feature, int32_t* code,
                      int32_t* low, double* score) {
    tl::greedy::Problem P;
    P.n = 0;
    P.d = d;
    P.C = C;
    P.codes = nullptr;
    P.n_codes = n_codes;
    P.is_cat = is_cat;
    P.cat_only = cat_only;
    std::vector<int32_t> no_missing(d, -1);  // the sharded path refuses missing values
    P.miss_code = no_missing.data();
    P.y = nullptr;
    P.w = nullptr;
    tl::greedy::HistFinder<Crit> finder(P, crit, msl);
    const int64_t slot = finder.alloc();
    for (int64_t i = 0; i < k; ++i) {
        std::memcpy(finder.pool[slot].data(), H + i * finder.hsize, sizeof(double) * finder.hsize);
        std::memcpy(finder.cpool[slot].data(), HC + i * finder.csize, sizeof(int64_t) * finder.csize);
        tl::greedy::Node nd;
        nd.id = i;
        nd.start = 0;
        nd.end = m[i];
        nd.depth = 0;
        nd.W = W[i];
        nd.wimp = 0.0;
        nd.hist = slot;
        finder.find(nd, tot + i * C);
        feature[i] = nd.best.feature;
        code[i] = nd.best.code;
        low[i] = nd.best.low;
        score[i] = nd.best.score;
    }
}

// the criterion as the local grower sets it up: zeps from the smallest row weight; the entropy's
// integer table is only a faster read of the same x log2 x values, so it stays off here
template <class F>
inline void with_crit(int criterion, int C, double wmin, F&& f) {
    if (criterion >= 10) {  // the regression policies on their channels (no ranked one: it needs rows)
        if (criterion == tl::AbsoluteError::code) throw std::invalid_argument("the absolute error needs the rows");
        tl::with_regression(criterion, [&](auto crit) {
            if constexpr (!decltype(crit)::ranked) {
                crit.setup(nullptr, 0, C);
                f(crit);
            }
        });
        return;
    }
    tl::with_builtin(criterion, [&](auto crit) {
        crit.setup(&wmin, 1, C);
        if constexpr (std::is_same_v<decltype(crit), tl::Entropy>) crit.int_counts = false;
        f(crit);
    });
}

inline void find_splits(int criterion, double wmin, int d, int C, const int32_t* n_codes, const uint8_t* is_cat,
                        const int32_t* cat_only, int64_t msl, int64_t k, const double* H, const int64_t* HC,
                        const double* tot, const double* W, const int64_t* m, int32_t* feature, int32_t* code,
                        int32_t* low, double* score) {
    with_crit(criterion, C, wmin, [&](auto& crit) {
        find_with(crit, d, C, n_codes, is_cat, cat_only, msl, k, H, HC, tot, W, m, feature, code, low, score);
    });
}

inline void node_wimp(int criterion, double wmin, int C, int64_t k, const double* counts, double* out) {
    with_crit(criterion, C, wmin, [&](auto& crit) {
        for (int64_t i = 0; i < k; ++i) {
            const double* c = counts + i * C;
            out[i] = crit.wimp(c, crit.weight(c, C));
        }
    });
}

// whether the node of channels counts (k rows of C) is pure for the criterion (the grower's rule)
inline void node_pure(int criterion, double wmin, int C, int64_t k, const double* counts, uint8_t* out) {
    with_crit(criterion, C, wmin, [&](auto& crit) {
        for (int64_t i = 0; i < k; ++i) {
            const double* c = counts + i * C;
            out[i] = crit.pure(c, C, crit.weight(c, C)) ? 1 : 0;
        }
    });
}

}  // namespace tl::greedy
