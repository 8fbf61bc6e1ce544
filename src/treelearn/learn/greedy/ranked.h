// Greedy growth with a criterion on order statistics (Crit::ranked: scikit-learn's absolute
// error, core/criteria.h). The absolute deviation of a side is not a sum over its rows, so the
// split search of a node works on its rows in code order (SortedFinder: a feature's sorted range;
// HistFinder: the node's rows sorted by code per feature) with the node's targets ranked once
// per output (RankTable), and a MedianTree fed the rows one by one:
// * numeric features: the deviations of every prefix and every suffix of the rows in code order
//   (a forward and a backward pass, O(m log m)); with missing rows, passes that start with them
//   give the sides they join; candidates in the sorted finders' order (missing rows right, then
//   left, then the missing-only split);
// * categorical features (one-vs-rest): per category, its rows taken out of a tree of the whole
//   node (the rest) and put into an empty one (the category), O(m log m) over the categories.
// A candidate's score is the sides' summed deviations over the outputs, divided by their number
// (scikit-learn's proxy improvement), handed to the selection rule (Picker / Recorder::take).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/criteria.h"
#include "types.h"

namespace tl::greedy {

// output k of a row's targets (the ranked criterion's channel 1 + k)
TL_INLINE double row_target(const Problem& P, int64_t row, int k) { return P.stats[(size_t)row * P.C + 1 + k]; }

// The node's targets ranked per output, read by every thread of the node's search:
// rank[k * n + row] the rank of a node row's target k among the node's, y[k * m + r] the target of rank r
struct RankTable {
    int K = 1;
    int64_t n = 0, m = 0;
    std::vector<int32_t> rank;
    std::vector<double> y;
    std::vector<std::pair<double, int32_t>> tmp;

    template <class RowAt>
    void build(const Problem& P, int64_t size, RowAt row_at) {
        K = (P.C - 1) / 2;
        n = P.n;
        m = size;
        if ((int64_t)rank.size() < K * n) rank.resize((size_t)(K * n));
        y.resize((size_t)(K * m));
        tmp.resize((size_t)m);
        for (int k = 0; k < K; ++k) {
            for (int64_t i = 0; i < m; ++i) {
                const int32_t r = row_at(i);
                tmp[(size_t)i] = {row_target(P, r, k), r};
            }
            std::sort(tmp.begin(), tmp.end());
            for (int64_t i = 0; i < m; ++i) {
                y[(size_t)(k * m + i)] = tmp[(size_t)i].first;
                rank[(size_t)(k * n + tmp[(size_t)i].second)] = (int32_t)i;
            }
        }
    }
    TL_INLINE const double* values(int k) const { return y.data() + (size_t)k * m; }
    TL_INLINE int32_t of(int k, int32_t row) const { return rank[(size_t)(k * n + row)]; }
};

// a thread's scratch space
struct RankWork {
    tl::MedianTree mt, mt2;
    std::vector<double> A, B, Am, Bm, gl, gr;
    std::vector<Entry> ent;  // the hist finder's node rows sorted by code
};

// The medians (out[k]) and the weighted deviation (mean over the outputs) of the rows row_at(i), i < m
template <class RowAt>
inline double ranked_node(const Problem& P, RankTable& rt, RankWork& wk, int64_t m, RowAt row_at, double* med) {
    rt.build(P, m, row_at);
    double dev = 0.0;
    for (int k = 0; k < rt.K; ++k) {
        wk.mt.reset(m);
        for (int64_t i = 0; i < m; ++i) {
            const int32_t r = row_at(i);
            const int32_t q = rt.of(k, r);
            wk.mt.add(q, rt.values(k)[q], P.w[r]);
        }
        dev += wk.mt.deviation(rt.values(k), med + k);
    }
    return dev / rt.K;
}

// Numeric feature f at a node of m rows e[0..m) in code order, the first np present, the others
// missing (the feature's miss_code); W the node's weight; pk: Picker or Recorder.
template <class PK>
void ranked_numeric(const Problem& P, const RankTable& rt, RankWork& wk, const Entry* e, int64_t m, int64_t np,
                    int f, double W, int64_t msl, PK& pk) {
    const int64_t nm = m - np;
    if (np == 0) return;
    const int K = rt.K;
    wk.A.assign((size_t)np, 0.0);
    wk.B.assign((size_t)np, 0.0);
    if (nm) { wk.Am.assign((size_t)np, 0.0); wk.Bm.assign((size_t)np, 0.0); }
    double miss = 0.0;  // the deviation of the missing rows alone
    tl::MedianTree& mt = wk.mt;
    for (int k = 0; k < K; ++k) {
        const double* yk = rt.values(k);
        auto put = [&](const Entry& x) { const int32_t q = rt.of(k, x.row); mt.add(q, yk[q], P.w[x.row]); };
        mt.reset(m);
        for (int64_t i = 0; i < np; ++i) { put(e[i]); wk.A[(size_t)i] += mt.deviation(yk); }
        mt.reset(m);
        for (int64_t i = np - 1; i >= 0; --i) { put(e[i]); wk.B[(size_t)i] += mt.deviation(yk); }
        if (!nm) continue;
        mt.reset(m);
        for (int64_t j = np; j < m; ++j) put(e[j]);
        miss += mt.deviation(yk);
        for (int64_t i = 0; i < np; ++i) { put(e[i]); wk.Am[(size_t)i] += mt.deviation(yk); }
        mt.reset(m);
        for (int64_t j = np; j < m; ++j) put(e[j]);
        for (int64_t i = np - 1; i >= 0; --i) { put(e[i]); wk.Bm[(size_t)i] += mt.deviation(yk); }
    }
    double wm = 0.0;
    for (int64_t j = np; j < m; ++j) wm += P.w[e[j].row];
    // missing rows right (or none), then left
    for (int pass = 0; pass < (nm ? 2 : 1); ++pass) {
        const double* left = pass ? wk.Am.data() : wk.A.data();
        const double* right = pass ? wk.B.data() : (nm ? wk.Bm.data() : wk.B.data());
        double wl = pass ? wm : 0.0;
        for (int64_t i = 1; i < np; ++i) {
            wl += P.w[e[i - 1].row];
            if (e[i].code == e[i - 1].code) continue;
            const int64_t nl = i + (pass ? nm : 0), nr = m - nl;
            if (nl < msl || nr < msl || wl < pk.mwl || W - wl < pk.mwl) continue;
            pk.take((left[i - 1] + right[i]) / K, f, e[i].code, e[i - 1].code, (uint8_t)pass);
        }
    }
    // the missing-only split: present rows left, missing right
    if (nm && np >= msl && nm >= msl && W - wm >= pk.mwl && wm >= pk.mwl)
        pk.take((wk.A[(size_t)np - 1] + miss) / K, f, P.miss_code[f], e[np - 1].code, 0);
}

// Categorical feature f (one-vs-rest `code == v`), the rows as for ranked_numeric: with missing
// rows, they join the category's side, then the rest's, then the missing-only split.
template <class PK>
void ranked_categorical(const Problem& P, const RankTable& rt, RankWork& wk, const Entry* e, int64_t m, int64_t np,
                        int f, double W, int64_t msl, PK& pk) {
    const int64_t nm = m - np;
    if (np == 0) return;
    const int K = rt.K;
    std::vector<int64_t> gs;  // group starts, then np
    for (int64_t i = 0; i < np; ++i)
        if (i == 0 || e[i].code != e[i - 1].code) gs.push_back(i);
    const size_t G = gs.size();
    gs.push_back(np);
    double wm = 0.0;
    for (int64_t j = np; j < m; ++j) wm += P.w[e[j].row];
    const int32_t only = P.cat_only[f];
    if (G >= 2) {
        for (int pass = 0; pass < (nm ? 2 : 1); ++pass) {  // pass 0: missing rows with the category
            const bool with = nm && pass == 0;
            wk.gl.assign(G, 0.0);
            wk.gr.assign(G, 0.0);
            for (int k = 0; k < K; ++k) {
                const double* yk = rt.values(k);
                auto put = [&](tl::MedianTree& t, const Entry& x, double s) {
                    const int32_t q = rt.of(k, x.row);
                    t.add(q, yk[q], s * P.w[x.row]);
                };
                wk.mt.reset(m);
                wk.mt2.reset(m);
                for (int64_t j = 0; j < m; ++j) put(wk.mt, e[j], 1.0);
                if (with) for (int64_t j = np; j < m; ++j) { put(wk.mt, e[j], -1.0); put(wk.mt2, e[j], 1.0); }
                for (size_t g = 0; g < G; ++g) {
                    for (int64_t i = gs[g]; i < gs[g + 1]; ++i) { put(wk.mt, e[i], -1.0); put(wk.mt2, e[i], 1.0); }
                    wk.gl[g] += wk.mt.deviation(yk);
                    wk.gr[g] += wk.mt2.deviation(yk);
                    for (int64_t i = gs[g]; i < gs[g + 1]; ++i) { put(wk.mt, e[i], 1.0); put(wk.mt2, e[i], -1.0); }
                }
            }
            for (size_t g = 0; g < G; ++g) {
                const int32_t code = e[gs[g]].code;
                double wr = with ? wm : 0.0;
                for (int64_t i = gs[g]; i < gs[g + 1]; ++i) wr += P.w[e[i].row];
                const int64_t nr = gs[g + 1] - gs[g] + (with ? nm : 0), nl = m - nr;
                if ((only >= 0 && code != only) || nl < msl || nr < msl || wr < pk.mwl || W - wr < pk.mwl) continue;
                pk.take((wk.gl[g] + wk.gr[g]) / K, f, code, 0, (uint8_t)(nm && pass == 1));
            }
        }
    }
    if (nm && np >= msl && nm >= msl && W - wm >= pk.mwl && wm >= pk.mwl) {  // the missing-only split
        double d = 0.0;
        for (int k = 0; k < K; ++k) {
            const double* yk = rt.values(k);
            for (int side = 0; side < 2; ++side) {
                wk.mt.reset(m);
                for (int64_t j = side ? np : 0; j < (side ? m : np); ++j) {
                    const int32_t q = rt.of(k, e[j].row);
                    wk.mt.add(q, yk[q], P.w[e[j].row]);
                }
                d += wk.mt.deviation(yk);
            }
        }
        pk.take(d / K, f, P.miss_code[f], 0, 0);
    }
}

// feature f's candidates at a node whose rows e[0..m) are in code order (missing rows last)
template <class PK>
void ranked_feature(const Problem& P, const RankTable& rt, RankWork& wk, const Entry* e, int64_t m, int f, double W,
                    int64_t msl, PK& pk) {
    const int32_t M = P.miss_code[f];
    int64_t np = m;
    if (M >= 0) while (np > 0 && e[np - 1].code == M) --np;
    if (P.is_cat[f]) ranked_categorical(P, rt, wk, e, m, np, f, W, msl, pk);
    else ranked_numeric(P, rt, wk, e, m, np, f, W, msl, pk);
}

}  // namespace tl::greedy
