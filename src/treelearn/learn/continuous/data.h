// Continuous optimal search, part 1 of 7: parameters, results, sorted-column data.
//
// The search's files, by responsibility:
//   data.h       Params/Output, trees (Sol), the ranked columns and views, depth-1 scans
//   depth2.h     the specialised depth-2 solver (both children of one root threshold; its
//                weighted and ablation kernels in depth2_scan.h)
//   bounds.h     interval bounds over the thresholds of one feature, and their fixed order
//   cache.h      the (rows, depth) cache with lower bounds, memory capped, thread safe
//   search.h     branch and bound, the tie rule, limits (core/limits.h) and root-level threads
//   lookahead.h  the Top-k incumbent: a restricted search run before the exact one
//   share.h      the root's features one at a time (the Dask fit's tasks)
//
// Data: every column is ranked once (rank = index of the distinct value); a node's rows are held
// as a "view": per feature, its (row, rank) pairs in ascending order of that feature. Splitting a
// view is a stable partition of every feature's list (O(rows x features)), so children stay
// sorted without sorting again.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/ties.h"

#ifndef TL_INLINE
#define TL_INLINE __attribute__((always_inline)) inline
#endif

namespace tl::cont {

typedef int (*interrupt_fn_t)(void*);

struct Params {
    int n = 0, F = 0, C = 0;
    const double* X = nullptr;   // feature-major: X[f * n + i]
    const int64_t* y = nullptr;  // class codes 0..C-1
    const double* w = nullptr;   // weights, nullptr = all ones
    // per column, where its missing values (NaN) sort: 1 before every value (they go left at
    // every split), 2 after every value (they go right); 0 or nullptr: the column has none. A
    // column with missing values is searched twice, once each way: every threshold of either
    // column is a split "x >= t" with one missing direction, so the search is exact over both.
    const int8_t* nan_mode = nullptr;
    int max_depth = 2;
    double upper_bound = 0.0;    // only trees of error < upper_bound are searched; <= 0: none given
    double time_limit = 0.0;     // seconds, <= 0: none
    // seconds of the process's CPU time (every thread's), <= 0: none: the probe's budget
    // (solver.py), which a loaded machine does not cut short as it does a wall-clock limit
    double cpu_limit = 0.0;
    double* progress = nullptr;  // live counters for verbose (core/progress.h), or none
    double mem_limit_bytes = 1e9;
    int n_threads = 1;           // root-level features farmed to this many threads
    // ablation switches (none changes the result, only the time)
    int use_cache = 1, use_intervals = 1, use_skip = 0, use_d2 = 1, start_best = 0;
    // features whose threshold scans the root steps in turn, per thread (search.h's
    // search_root_lanes; 1: one feature after the other)
    int root_lanes = 64;
    // which child of a split is solved first: the smaller (0), the larger (1), or the larger except
    // at the root of a depth-3 search (2). Measured: inside a deeper search, where bounds are tight,
    // the larger child fails first and spares the smaller (wilt at depth 4: 116k -> 75k depth-2
    // evaluations, breast cancer 99k -> 49k); at a depth-3 root the smaller one costs less (room
    // 1.57 -> 0.94 s, raisin 0.40 -> 0.25 s)
    int large_first = 2;
    // the depth-2 solver told how low each side must go to matter (its cap), so a pass over a
    // feature ends as soon as neither side can get there (1); off: every side solved exactly (0)
    int use_caps = 1;
    // warm starts (1): a child of a split is searched below the error that the same child of the
    // nearest split already searched (same feature) makes on its rows, an upper bound of its optimum
    int use_warm = 1;
    // the depth-2 solver's vector kernel where it applies (depth2_simd.h; 0: the scalar kernels)
    int use_simd = 1;
    // once nothing above the root's bound can be taken (a tree of zero error known: the incumbent,
    // or the caller's bound), its lanes give way to the lane of the least position (1): only the
    // order's first tree of that error is left to find
    int ordered_close = 1;
    // a feature's virtual end positions -1 (every row right) and K (every row left) carry the node's
    // optimum one level shallower as a bound (1; exact at nodes of budget 2: the depth-1 pass's
    // best): a threshold with weight w on its small side costs at least that less w. 0: the ends
    // bound nothing (ablation)
    int end_bounds = 1;
    // the order of a node's features: by their best depth-1 error (0) or best Gini split (1); bit 0
    // at the root, bit 1 at the other nodes of budget >= 3, bit 2 at nodes of budget 2
    int gini_order = 0;
    // the root split searched first (the anytime order: the Top-k incumbent's root, whose subtrees
    // the exact search then solves; -1: none): a column and a threshold of it. The search meets
    // splits in another order only; the tie rule makes the tree the same.
    int root_hint_feature = -1;
    double root_hint_threshold = 0.0;
    interrupt_fn_t interrupt_cb = nullptr;  // polled by the calling thread only (it may run Python)
    void* interrupt_ctx = nullptr;
};

struct Output {
    std::vector<int> feature, left, right;  // preorder tree; leaf: feature -1
    std::vector<double> threshold;
    double cost = 0.0, lower_bound = 0.0;
    bool timed_out = false, interrupted = false, memory_error = false;
    long long evaluations = 0, d2_evaluations = 0, nodes = 0, cache_hits = 0, cache_entries = 0;
    double peak_bytes = 0.0, fixed_bytes = 0.0;
    int threads_used = 1;
    std::vector<std::pair<double, double>> history;  // (seconds, error): each better root incumbent
};

namespace detail {

struct Entry {
    int32_t row;
    int32_t rank;
};

// ------------------------------------------------------------------ trees
struct TNode {
    int feature;  // -1: leaf
    double thr;
    int right;    // index of the right child (left child = next node), preorder
    int rr = 0;   // a row goes right when its rank in the feature is at least rr
};

typedef std::vector<TNode> Sol;

inline Sol leaf_sol() { return Sol(1, TNode{-1, 0.0, -1}); }

inline Sol join(int f, double thr, int rr, const Sol& L, const Sol& R) {
    Sol s;
    s.reserve(1 + L.size() + R.size());
    s.push_back(TNode{f, thr, (int)(1 + L.size()), rr});
    for (const TNode& t : L) s.push_back(TNode{t.feature, t.thr, t.feature >= 0 ? t.right + 1 : -1, t.rr});
    int off = (int)(1 + L.size());
    for (const TNode& t : R) s.push_back(TNode{t.feature, t.thr, t.feature >= 0 ? t.right + off : -1, t.rr});
    return s;
}

struct Res {
    double lb = 0.0;    // lower bound on the optimal error of the subproblem
    double cost = 0.0;  // error of sol (a valid tree, at worst the leaf)
    Sol sol;
};

// the best depth-1 tree of a subset (one side of a depth-2 evaluation, or a node's depth-1 pass)
struct Side {
    double T = 0.0;          // total weight
    double best = 0.0;       // best error so far (starts at the leaf error)
    double lb = 0.0;         // a lower bound on the optimum (the depth-2 solver's caps)
    int bf = -1;             // best feature (-1: leaf)
    int brl = 0, brr = 0;    // ranks either side of the best threshold
    // per-feature scan state
    double tot = 0.0, skip = -1.0;
    int prev = -1;
    bool done = false;
};

// ------------------------------------------------------------------ the ranked columns
// Read-only after build(): shared by every thread of a search.
struct Columns {
    int n = 0, F = 0, C = 0;
    bool weighted = false;
    bool integral = true;  // every error a whole number (unit or integer weights): bounds round up
    double eps = tl::ERROR_TIE;               // tolerance of error comparisons (scaled by total weight)
    std::vector<std::vector<double>> vals;    // per feature: distinct values, ascending
    std::vector<int32_t> lab;
    std::vector<double> wt;
    std::vector<Entry> root_view;             // F * n
    std::vector<int32_t> rank_of;             // F * n: a row's rank per feature (warm starts), or empty

    double wof(int r) const { return weighted ? wt[r] : 1.0; }

    // a lower bound of an error made stronger where errors are whole numbers: no tree has an error
    // below lb - eps, so none below the next whole number
    double round_lb(double lb) const { return integral ? std::max(lb, std::ceil(lb - eps)) : lb; }

    // ranks every column; `stop()` is asked before each (a column of n rows is the unit of the
    // set-up's work): true stops the set-up, and build returns false (the columns are unusable)
    template <class Stop>
    bool build(const Params& P, Stop stop) {
        n = P.n;
        F = P.F;
        C = P.C;
        weighted = P.w != nullptr;
        lab.resize(n);
        for (int i = 0; i < n; ++i) lab[i] = (int32_t)P.y[i];
        double W = n;
        if (weighted) {
            wt.assign(P.w, P.w + n);
            W = 0.0;
            for (int i = 0; i < n; ++i) W += wt[i];
            for (int i = 0; i < n && integral; ++i) integral = wt[i] == std::floor(wt[i]);
        }
        eps = tl::ERROR_TIE * std::max(1.0, W);
        vals.assign(F, std::vector<double>());
        root_view.resize((size_t)F * n);
        std::vector<int32_t> idx(n);
        for (int f = 0; f < F; ++f) {
            if (stop()) return false;
            rank_column(f, P.X + (size_t)f * n, P.nan_mode ? P.nan_mode[f] : 0, idx);
            vals[f].shrink_to_fit();
        }
        if (uses_ranks(P)) build_ranks();
        return true;
    }

    // rank_of from the ranked columns (after build)
    void build_ranks() {
        rank_of.resize((size_t)F * n);
        for (size_t i = 0; i < root_view.size(); ++i) rank_of[(i / n) * n + root_view[i].row] = root_view[i].rank;
    }

    // the leaf of tree s (preorder) that row r reaches, routed by rank (rank_of built)
    int leaf_of(const Sol& s, int r) const {
        int j = 0;
        while (s[j].feature >= 0) j = rank_of[(size_t)s[j].feature * n + r] >= s[j].rr ? s[j].right : j + 1;
        return j;
    }

    // bytes of the distinct values (vals), which the memory cap counts once the columns are ranked
    double value_bytes() const {
        double b = 0.0;
        for (const auto& v : vals) b += 8.0 * (double)v.capacity() + 16.0;
        return b;
    }

    // the warm starts (search.h) route rows through trees by rank
    static bool uses_ranks(const Params& P) { return P.use_warm && P.max_depth >= 3; }

    // the error of the tree s (its leaves labelled by their majority) on the view's m rows; cnt:
    // C * s.size() scratch doubles
    double tree_error(const Sol& s, const Entry* v, int m, double* cnt) const {
        std::fill(cnt, cnt + (size_t)C * s.size(), 0.0);
        for (int i = 0; i < m; ++i) {
            const int r = v[i].row;
            cnt[(size_t)leaf_of(s, r) * C + lab[r]] += wof(r);
        }
        double err = 0.0;
        for (size_t j = 0; j < s.size(); ++j)
            if (s[j].feature < 0) err += leaf_err(cnt + j * C);
        return err;
    }

    // rows in ascending order of x; missing values (NaN, one rank of their own, value NaN in
    // vals) first for nan_mode 1, last otherwise
    void rank_column(int f, const double* x, int nan_mode, std::vector<int32_t>& idx) {
        int nm = 0;
        for (int i = 0; i < n; ++i) nm += std::isnan(x[i]) ? 1 : 0;
        const int start = nan_mode == 1 ? nm : 0;  // where the present values go in idx
        int a = 0, b = 0;
        for (int i = 0; i < n; ++i) {
            if (std::isnan(x[i]))
                idx[(nan_mode == 1 ? 0 : n - nm) + b++] = i;
            else
                idx[start + a++] = i;
        }
        std::stable_sort(idx.begin() + start, idx.begin() + start + (n - nm),
                         [x](int32_t p, int32_t q) { return x[p] < x[q]; });
        int r = -1;
        double prevv = 0.0;
        bool prev_nan = false;
        Entry* v = root_view.data() + (size_t)f * n;
        for (int i = 0; i < n; ++i) {
            double xv = x[idx[i]];
            bool is_nan = std::isnan(xv);
            if (r < 0 || is_nan != prev_nan || (!is_nan && xv != prevv)) {
                ++r;
                vals[f].push_back(xv);
                prevv = xv;
                prev_nan = is_nan;
            }
            v[i] = Entry{idx[i], r};
        }
    }

    // the node-local midpoint between the distinct values of ranks rl < rr; next to the missing
    // values' rank: +inf when they are above (every value goes left, the missing ones right),
    // the lowest value when they are below (every value goes right, the missing ones left)
    double thr_of(int f, int rl, int rr) const {
        double a = vals[f][rl], b = vals[f][rr];
        if (std::isnan(b)) return std::numeric_limits<double>::infinity();
        if (std::isnan(a)) return b;
        double t = a + (b - a) * 0.5;
        if (!(t > a) || t > b) t = b;  // a and b adjacent doubles: b itself still separates them
        return t;
    }

    void totals(const Entry* v, int m, double* cnt) const {
        std::fill(cnt, cnt + C, 0.0);
        for (int i = 0; i < m; ++i) cnt[lab[v[i].row]] += wof(v[i].row);
    }

    double leaf_err(const double* cnt) const {
        double s = 0.0, mx = 0.0;
        for (int c = 0; c < C; ++c) {
            s += cnt[c];
            mx = std::max(mx, cnt[c]);
        }
        return s - mx;
    }

    Sol side_sol(const Side& S) const {
        if (S.bf < 0) return leaf_sol();
        Sol s;
        s.push_back(TNode{S.bf, thr_of(S.bf, S.brl, S.brr), 2, S.brr});
        s.push_back(TNode{-1, 0.0, -1});
        s.push_back(TNode{-1, 0.0, -1});
        return s;
    }

    // split view (m rows) at "first p rows of feature f go left" into out (left block, then
    // right); side: n scratch ints
    void split_view(const Entry* view, int m, int f, int p, Entry* out, int32_t* side) const {
        const Entry* vf = view + (size_t)f * m;
        for (int i = 0; i < m; ++i) side[vf[i].row] = i < p ? 0 : 1;
        int mr = m - p;
        Entry* L = out;
        Entry* R = out + (size_t)F * p;
        for (int g = 0; g < F; ++g) {
            const Entry* v = view + (size_t)g * m;
            Entry* lo = L + (size_t)g * p;
            Entry* ro = R + (size_t)g * mr;
            int a = 0, b = 0;
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                if (side[e.row] == 0)
                    lo[a++] = e;
                else
                    ro[b++] = e;
            }
        }
    }

    // best depth-1 split of every feature: its error (ferr) and the index of its threshold
    // among the feature's boundaries (fbest, -1: constant here); the node's best depth-1 tree
    // in s: the first strict improvement over the leaf in the features' order `order` (nullptr:
    // column order), thresholds ascending. fgini (or nullptr): every feature's least Gini
    // impurity of a split, sum over both sides of W_s - sum_c w_sc^2 / W_s. cnt: C scratch doubles
    void depth1_all(const Entry* view, int m, const double* tot, double* ferr, int* fbest, Side& s,
                    double* cnt, const int* order = nullptr, double* fgini = nullptr) const {
        double T = 0.0;
        for (int c = 0; c < C; ++c) T += tot[c];
        s.T = T;
        s.best = leaf_err(tot);
        s.bf = -1;
        if (C == 2 && !weighted && !fgini) {
            depth1_2u(view, m, (int)tot[0] - (int)tot[1], ferr, fbest, s, order);
            return;
        }
        for (int oi = 0; oi < F; ++oi) {
            const int f = order ? order[oi] : oi;
            const Entry* v = view + (size_t)f * m;
            std::fill(cnt, cnt + C, 0.0);
            double acc = 0.0, fb = std::numeric_limits<double>::infinity(), gb = fb;
            int k = -1, kb = -1, prev = v[0].rank, brl = 0, brr = 0;
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                if (e.rank != prev) {
                    ++k;
                    double ml = 0.0, mr = 0.0, ql = 0.0, qr = 0.0;
                    for (int c = 0; c < C; ++c) {
                        const double a = cnt[c], b = tot[c] - cnt[c];
                        ml = std::max(ml, a);
                        mr = std::max(mr, b);
                        ql += a * a;
                        qr += b * b;
                    }
                    double err = (acc - ml) + ((T - acc) - mr);
                    if (err < fb - eps) {
                        fb = err;
                        kb = k;
                        brl = prev;
                        brr = e.rank;
                    }
                    if (fgini) gb = std::min(gb, (acc - ql / acc) + ((T - acc) - qr / (T - acc)));
                    (void)ql;
                    (void)qr;
                    prev = e.rank;
                }
                double ww = wof(e.row);
                cnt[lab[e.row]] += ww;
                acc += ww;
            }
            ferr[f] = fb;
            fbest[f] = kb;
            if (fgini) fgini[f] = gb;
            if (kb >= 0 && fb < s.best - eps) {
                s.best = fb;
                s.bf = f;
                s.brl = brl;
                s.brr = brr;
            }
        }
    }

    // depth1_all for two classes and unit weights (D: the class balance n0 - n1): a threshold's
    // error is (m - max(|D|, |2d - D|)) / 2 with d the balance of the rows before it (depth2.h), so
    // a feature's best threshold is where d is largest or smallest (the first such, ties to the
    // earlier of the two)
    void depth1_2u(const Entry* view, int m, int D, double* ferr, int* fbest, Side& s, const int* order) const {
        for (int oi = 0; oi < F; ++oi) {
            const int f = order ? order[oi] : oi;
            const Entry* v = view + (size_t)f * m;
            int d = 0, k = -1, hi = std::numeric_limits<int>::min(), lo = std::numeric_limits<int>::max();
            int khi = -1, klo = -1, ihi = 0, ilo = 0;
            for (int i = 0; i < m; ++i) {
                if (i > 0 && v[i].rank != v[i - 1].rank) {
                    ++k;
                    if (d > hi) hi = d, khi = k, ihi = i;
                    if (d < lo) lo = d, klo = k, ilo = i;
                }
                d += lab[v[i].row] == 0 ? 1 : -1;
            }
            if (k < 0) {  // constant here
                ferr[f] = std::numeric_limits<double>::infinity();
                fbest[f] = -1;
                continue;
            }
            const int vhi = std::abs(2 * hi - D), vlo = std::abs(2 * lo - D);
            const bool take_hi = vhi > vlo || (vhi == vlo && khi < klo);
            const int vb = take_hi ? vhi : vlo, i = take_hi ? ihi : ilo;
            const double err = (m - std::max(std::abs(D), vb)) / 2;
            ferr[f] = err;
            fbest[f] = vb <= std::abs(D) ? 0 : take_hi ? khi : klo;  // (no threshold beats the leaf: the first)
            if (err < s.best - eps) {
                s.best = err;
                s.bf = f;
                s.brl = v[i - 1].rank;
                s.brr = v[i].rank;
            }
        }
    }
};

}  // namespace detail
}  // namespace tl::cont
