// Optimal regression trees over every threshold of numeric columns, part 1 of 2: parameters,
// the rows' sufficient statistics, depth-1 scans and the specialised depth-2 evaluation.
// Part 2 (regression_search.h): branch and bound over deeper trees, Top-k, limits.
//
// The objective is the weighted sum of squared errors of the leaves' means, summed over the
// outputs: a leaf of rows S costs SSE(S) = sum w |y|^2 - |sum w y|^2 / sum w, so a set of rows is
// summed up by (count, sum w, sum w y_k, sum w |y|^2), and a split's cost along a sorted column is
// a prefix sum and its complement. The columns are ranked and a node's rows held as per-feature
// sorted lists ("views") by the classifier's data layer (data.h: Columns, split_view), so
// children stay sorted by a stable partition, and missing values sort to one end of a column
// searched twice (nan_mode), as the classifier's search does.
//
// The bound that prunes thresholds (both solvers): the optimal SSE of a tree of depth at most k
// never decreases when rows are added to its set (the superset's tree, restricted to the subset,
// costs no more), so for thresholds between evaluated positions a < b of one feature the left
// child holds at least L_a and the right child at least R_b: cost_k(L_a) + cost_k(R_b) bounds
// every split in between. With min_samples_leaf > 1 a constrained optimum is not monotone
// (a subset may have no admissible split), so the depth-2 bound uses the unconstrained depth-1
// optima of the sides, and the deeper search prunes intervals only when min_samples_leaf is 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "data.h"

namespace tl::cont {

//: the most outputs the compiled search sums (a multi-output target of more is refused)
constexpr int REG_MAX_OUTPUTS = 16;

struct RegParams {
    int n = 0, F = 0, K = 1;
    const double* X = nullptr;        // feature-major: X[f * n + i]
    const double* y = nullptr;        // row-major n x K targets (centred by the caller)
    const double* w = nullptr;        // weights, nullptr = all ones
    const int8_t* nan_mode = nullptr; // per column: data.h's Params::nan_mode
    int max_depth = 2;
    int min_samples_leaf = 1;         // rows (not weight) on either side of a split
    int top_k = 0;                    // > 0: at a node of budget >= 2 only its top_k best splits
    double upper_bound = 0.0;         // only trees of SSE < upper_bound are searched; <= 0: none
    double eps = 0.0;                 // tie tolerance of SSE comparisons (the caller's)
    // a penalty per leaf added to the SSE (ccp_alpha times the total weight): the objective is then
    // SSE + leaf_penalty * leaves, and every cost, budget and bound below is of that objective
    double leaf_penalty = 0.0;
    double time_limit = 0.0;          // seconds, <= 0: none
    double mem_limit_bytes = 1e9;
    int use_intervals = 1, use_d2 = 1;  // ablation switches (the same tree)
    // the k-means bound of a node of budget <= 3 whose budget binds (regression.h; 0: off)
    int use_kmeans = 1;
    int use_fbounds = 1;  // the depth-2 evaluation's feature bounds (Scans::depth2_sides; 0: off)
    int use_warm_children = 1;  // a child's budget capped by a neighbouring split's child tree (0: off)
    int use_ends = 0;  // a feature's thresholds: both ends evaluated first (1), or ends as bisection points (0)
    int large_first = 0;  // which child of a split is solved first: the smaller (0) or the larger (1)
    // the warm start (regression_search.h): first the optimal tree over about warm_cells quantile
    // thresholds per feature at nodes of budget >= 2 (every threshold at budget 1); 0: off
    int warm_cells = 16;
    int warm_rounds = -1;  // rounds of the warm start, each with 4x the cells of the last (-1: by depth)
    int n_threads = 1;  // threads sharing the root's features (the same tree on any number)
};

struct RegOutput {
    std::vector<int> feature, left, right;  // preorder tree; leaf: feature -1
    std::vector<double> threshold;
    double cost = 0.0, lower_bound = 0.0;
    bool timed_out = false, interrupted = false, memory_error = false;
    long long nodes = 0, evaluations = 0, d2_evaluations = 0;
    bool warm_tree = false;
    int threads_used = 1;  // the tree is the warm start's (nothing better found after it)
    double peak_bytes = 0.0, fixed_bytes = 0.0;
    std::vector<std::pair<double, double>> history;  // (seconds, SSE): each better root incumbent
};

namespace detail {

// sums over a set of rows; KK > 0: that many outputs known at compile time, 0: RegRows::K
template <int KK>
struct Acc {
    static constexpr int KM = KK > 0 ? KK : REG_MAX_OUTPUTS;
    int c = 0;        // rows
    double w = 0.0;   // sum w
    double q = 0.0;   // sum w |y|^2
    double s[KM];     // sum w y_k
};

// the rows' statistics, read-only during the search: per row (w, w |y|^2, w y_1..w y_K)
// interleaved, so that a row's sums are one cache line
template <int KK>
struct RegRows {
    int K = 1;
    std::vector<double> st;

    void build(const RegParams& P) {
        K = P.K;
        const int S = K + 2;
        st.resize((size_t)P.n * S);
        for (int i = 0; i < P.n; ++i) {
            const double wi = P.w ? P.w[i] : 1.0;
            double q = 0.0;
            double* row = st.data() + (size_t)i * S;
            for (int k = 0; k < K; ++k) {
                const double yk = P.y[(size_t)i * K + k];
                row[2 + k] = wi * yk;
                q += yk * yk;
            }
            row[0] = wi;
            row[1] = wi * q;
        }
    }

    int nk() const { return KK > 0 ? KK : K; }

    void clear(Acc<KK>& a) const {
        a.c = 0;
        a.w = a.q = 0.0;
        for (int k = 0; k < nk(); ++k) a.s[k] = 0.0;
    }

    TL_INLINE void add(Acc<KK>& a, int r) const {
        const double* row = st.data() + (size_t)r * (nk() + 2);
        a.c += 1;
        a.w += row[0];
        a.q += row[1];
        for (int k = 0; k < nk(); ++k) a.s[k] += row[2 + k];
    }

    TL_INLINE double sse(const Acc<KK>& a) const {
        if (a.w <= 0.0) return 0.0;
        double ss = 0.0;
        for (int k = 0; k < nk(); ++k) ss += a.s[k] * a.s[k];
        return std::max(0.0, a.q - ss / a.w);
    }

    // SSE of the rows of t not in a (a a subset of t)
    TL_INLINE double sse_rest(const Acc<KK>& t, const Acc<KK>& a) const {
        const double w = t.w - a.w;
        if (w <= 0.0) return 0.0;
        double ss = 0.0;
        for (int k = 0; k < nk(); ++k) {
            const double d = t.s[k] - a.s[k];
            ss += d * d;
        }
        return std::max(0.0, (t.q - a.q) - ss / w);
    }

    void totals(const Entry* v, int m, Acc<KK>& t) const {
        clear(t);
        for (int i = 0; i < m; ++i) add(t, v[i].row);
    }
};

// the best depth-1 tree of a set of rows along one feature, or over all of them
struct Split1 {
    double cost = std::numeric_limits<double>::infinity();  // best admissible split (inf: none)
    double free_cost = std::numeric_limits<double>::infinity();  // best split ignoring min_samples_leaf
    int pos = -1;          // rows v[0..pos) go left
    int brl = 0, brr = 0;  // ranks either side of the threshold
};

// A side of a depth-2 split: its optimal tree of depth <= 1 (leaf or one split).
struct Side1 {
    double cost = 0.0;   // optimal SSE (leaf or split)
    double bound = 0.0;  // a lower bound of the same subset's optimum that is monotone in the rows
    int f = -1, brl = 0, brr = 0;  // the split (f -1: leaf)
};

template <int KK>
struct Scans {
    const Columns& cols;
    const RegRows<KK>& rows;
    int msl = 1;
    double eps = 0.0;
    double lam = 0.0;  // the penalty per leaf (RegParams::leaf_penalty): a side's split costs its SSE + 2 lam
    // a restricted threshold set (the warm start): per feature, the number of marked ranks <= r
    // at [r + 1]; a threshold between ranks rl < rr is kept when a marked rank lies in (rl, rr]
    const std::vector<std::vector<int32_t>>* marks = nullptr;

    Scans(const Columns& c, const RegRows<KK>& r, int min_leaf, double e, double leaf_penalty = 0.0)
        : cols(c), rows(r), msl(min_leaf), eps(e), lam(leaf_penalty) {}

    // every threshold of feature list v (m rows, total t): out(SSE of the split, position i (rows
    // v[0..i) go left), rank before, rank after)
    template <class Out>
    void boundaries(const Entry* v, int m, const Acc<KK>& t, Out out) const {
        Acc<KK> a;
        rows.clear(a);
        int prev = m > 0 ? v[0].rank : 0;
        for (int i = 0; i < m; ++i) {
            const Entry& e = v[i];
            if (e.rank != prev) {
                out(rows.sse(a) + rows.sse_rest(t, a), i, prev, e.rank);
                prev = e.rank;
            }
            rows.add(a, e.row);
        }
    }

    bool admissible(int i, int m) const { return i >= msl && m - i >= msl; }

    // the best split of feature list v (m rows, total t): the first strict improvement, thresholds ascending
    Split1 depth1(const Entry* v, int m, const Acc<KK>& t) const {
        Split1 s;
        boundaries(v, m, t, [&](double c, int i, int brl, int brr) {
            if (c < s.free_cost) s.free_cost = c;
            if (admissible(i, m) && c < s.cost - eps) {
                s.cost = c;
                s.pos = i;
                s.brl = brl;
                s.brr = brr;
            }
        });
        return s;
    }

    // every split of feature list v whose both sides hold msl rows: out(cost, position, ranks)
    template <class Out>
    void all_splits(const Entry* v, int m, const Acc<KK>& t, Out out) const {
        boundaries(v, m, t, [&](double c, int i, int brl, int brr) {
            if (admissible(i, m)) out(c, i, brl, brr);
        });
    }

    // the positions of a feature's admissible thresholds (rank changes with msl rows either side)
    void positions(const Entry* v, int m, int f, std::vector<int>& pos) const {
        pos.clear();
        if (marks) {
            const int32_t* c = (*marks)[f].data();
            for (int i = std::max(1, msl); i <= m - msl; ++i)
                if (c[v[i].rank + 1] != c[v[i - 1].rank + 1]) pos.push_back(i);
            return;
        }
        for (int i = std::max(1, msl); i <= m - msl; ++i)
            if (v[i].rank != v[i - 1].rank) pos.push_back(i);
    }

    // One side's scan of one feature list (cnt rows of the side, in the feature's order, total t)
    // for the side's best depth-1 split: best/freeb (the best admissible and unconstrained SSE so
    // far) updated, out's split set on a strict improvement (feature g). The scan stops once the
    // SSE of the rows so far reaches min(cap, best): that of a prefix never decreases, and every
    // later split costs at least it. Without a division per threshold: with A = |sum w y|^2 of
    // the prefix (weight wa) and B that of the rest (wb), sse(prefix) >= X iff (q - X) wa >= A,
    // and the split's SSE is below G iff A wb + B wa > (q_total - G) wa wb. Returns a lower
    // bound of the least unconstrained SSE of a split along this feature (exact when the scan
    // ran to the end): the least SSE met, or the prefix's SSE where the scan stopped. With a
    // penalty per leaf, best, freeb and cap are of the objective (a split's SSE + 2 lam), the
    // returned bound of the split SSE alone.
    double side_scan(const Entry* v, int cnt, const Acc<KK>& t, double cap, int g, double& best, double& freeb,
                     Side1& out) const {
        Acc<KK> a;
        rows.clear(a);
        // the feature's least split SSE so far is q_total - gnum / gden, kept without a division:
        // a split's SSE is q_total - (A / wa + B / wb), so the least is the largest A wb + B wa
        // over wa wb (first the leaf's: no split costs more)
        double gnum = 0.0, gden = t.w > 0.0 ? t.w : 1.0;
        for (int k = 0; k < rows.nk(); ++k) gnum += t.s[k] * t.s[k];
        auto gmin = [&]() { return std::max(0.0, t.q - gnum / gden); };
        // the two tests' levels in SSE units, changed only with best or freeb: a later split
        // matters below stop_at, and its SSE is computed exactly below exact_at
        double stop_at = std::min(cap, best) - eps - 2.0 * lam;
        double exact_at = std::max(freeb, best - eps) - 2.0 * lam;
        int prev = cnt > 0 ? v[0].rank : 0;
        for (int i = 0; i < cnt; ++i) {
            const Entry e = v[i];
            if (e.rank != prev) {
                const double wa = a.w, wb = t.w - wa;
                double A = 0.0, B = 0.0;
                for (int k = 0; k < rows.nk(); ++k) {
                    const double sb = t.s[k] - a.s[k];
                    A += a.s[k] * a.s[k];
                    B += sb * sb;
                }
                if ((a.q - stop_at) * wa >= A) {  // no later split matters
                    const double pre = rows.sse(a);
                    freeb = std::min(freeb, pre + 2.0 * lam);
                    return std::min(gmin(), pre);
                }
                const double num = A * wb + B * wa, den = wa * wb;
                const bool lower = num * gden > gnum * den;
                gnum = lower ? num : gnum;
                gden = lower ? den : gden;
                if (num > (t.q - exact_at) * den) {  // (rare: the exact SSE)
                    const double c = rows.sse(a) + rows.sse_rest(t, a) + 2.0 * lam;
                    if (c < freeb) freeb = c;
                    if (admissible(i, cnt) && c < best - eps) {
                        best = c;
                        out.f = g;
                        out.brl = prev;
                        out.brr = e.rank;
                    }
                    stop_at = std::min(cap, best) - eps - 2.0 * lam;
                    exact_at = std::max(freeb, best - eps) - 2.0 * lam;
                }
                prev = e.rank;
            }
            rows.add(a, e.row);
        }
        return gmin();
    }

    // Depth-2 evaluation of the root split "first p rows of feature list vf go left" of a view
    // (m rows, F features): the optimal depth-<=1 tree of each side, every feature's list
    // partitioned by side (stable, without a branch) and each side scanned (side_scan). side: n
    // scratch bytes; lo, hi: m scratch entries each. cap[s]: side s matters only below it (the
    // node's threshold less a bound of the other side), so a side's cost is exact when below its
    // cap, and its bound is min(best, cap, unconstrained best), monotone in the side's rows.
    // Per feature bounds (the feature bound): the least SSE of a split along one feature never
    // decreases when rows are added either, so glb[s] (nullable: F values for a subset of side s's
    // rows, from an earlier evaluation) skips a feature whose bound reaches min(cap, best) (no
    // strict improvement can come from it: the same split as the full scan), and gout[s] gets
    // this side's bound per feature (the scan's, or the one it skipped by).
    void depth2_sides(const Entry* view, int m, int f, int p, uint8_t* side, Entry* lo, Entry* hi,
                      const double* cap, Side1& L, Side1& R, const double* const* glb = nullptr,
                      double* const* gout = nullptr) const {
        const Entry* vf = view + (size_t)f * m;
        Acc<KK> tot[2];
        rows.clear(tot[0]);
        rows.clear(tot[1]);
        for (int i = 0; i < m; ++i) {
            const int r = vf[i].row;
            const int s = i < p ? 0 : 1;
            side[r] = (uint8_t)s;
            rows.add(tot[s], r);
        }
        Side1* out[2] = {&L, &R};
        double best[2], freeb[2];
        for (int s = 0; s < 2; ++s) {
            best[s] = freeb[s] = rows.sse(tot[s]) + lam;
            out[s]->f = -1;
        }
        Entry* part[2] = {lo, hi};
        for (int g = 0; g < cols.F; ++g) {
            const Entry* v = view + (size_t)g * m;
            bool need[2];
            for (int s = 0; s < 2; ++s) {
                need[s] = tot[s].c >= 2;
                const double* gb = glb ? glb[s] : nullptr;
                if (need[s] && gb && gb[g] + 2.0 * lam >= std::min(cap[s], best[s]) - eps) {
                    need[s] = false;  // (skipped: its bound stands for it)
                    freeb[s] = std::min(freeb[s], gb[g] + 2.0 * lam);
                    if (gout) gout[s][g] = gb[g];
                } else if (!need[s] && gout) {
                    gout[s][g] = 0.0;  // (a side of one row: a leaf of SSE 0)
                }
            }
            if (need[0] && need[1]) {
                int n0 = 0, n1 = 0;
                for (int i = 0; i < m; ++i) {  // both outputs written, one index advanced
                    const Entry e = v[i];
                    const int s = side[e.row];
                    lo[n0] = e;
                    hi[n1] = e;
                    n0 += 1 - s;
                    n1 += s;
                }
                for (int s = 0; s < 2; ++s) {
                    const double gl = side_scan(part[s], s ? n1 : n0, tot[s], cap[s], g, best[s], freeb[s], *out[s]);
                    if (gout) gout[s][g] = gl;
                }
            } else if (need[0] || need[1]) {
                const int s = need[0] ? 0 : 1;
                Entry* o = part[s];
                int n = 0;
                for (int i = 0; i < m; ++i) {  // this side's list only
                    const Entry e = v[i];
                    o[n] = e;
                    n += side[e.row] == s;
                }
                const double gl = side_scan(o, n, tot[s], cap[s], g, best[s], freeb[s], *out[s]);
                if (gout) gout[s][g] = gl;
            }
        }
        for (int s = 0; s < 2; ++s) {
            out[s]->cost = best[s];
            out[s]->bound = std::min(best[s], freeb[s]);
        }
    }
};

// The one-dimensional k-means bound (OSRT's): a tree of depth D has at most 2^D leaves, and its
// SSE on one output is at least the least SSE of any partition of that output's values into at
// most 2^D groups, which in one dimension is a partition of the sorted values into contiguous
// runs. The dynamic program over runs, layer by layer, uses that the best start of the last run
// never decreases with its end (the cost of runs is Monge), so each layer is a divide and conquer
// over ends (an explicit stack: O(n log n) per layer). ys ascending with their weights ws.
inline double kmeans_1d(const std::vector<double>& ys, const std::vector<double>& ws, int k) {
    const int n = (int)ys.size();
    if (n == 0 || k >= n) return 0.0;
    std::vector<double> W(n + 1, 0.0), S(n + 1, 0.0), Q(n + 1, 0.0);
    for (int i = 0; i < n; ++i) {
        W[i + 1] = W[i] + ws[i];
        S[i + 1] = S[i] + ws[i] * ys[i];
        Q[i + 1] = Q[i] + ws[i] * ys[i] * ys[i];
    }
    auto cost = [&](int i, int j) {  // the run [i, j)
        const double w = W[j] - W[i];
        if (w <= 0.0) return 0.0;
        const double s = S[j] - S[i];
        return std::max(0.0, (Q[j] - Q[i]) - s * s / w);
    };
    std::vector<double> prev(n + 1), cur(n + 1);
    for (int j = 0; j <= n; ++j) prev[j] = cost(0, j);
    struct Task {
        int jlo, jhi, ilo, ihi;
    };
    std::vector<Task> stack;
    for (int layer = 2; layer <= k; ++layer) {
        stack.assign(1, Task{0, n, 0, n});
        while (!stack.empty()) {
            const Task t = stack.back();
            stack.pop_back();
            if (t.jlo > t.jhi) continue;
            const int j = t.jlo + (t.jhi - t.jlo) / 2;
            int bi = t.ilo;
            double bv = std::numeric_limits<double>::infinity();
            for (int i = t.ilo; i <= std::min(j, t.ihi); ++i) {
                const double v = prev[i] + cost(i, j);
                if (v < bv) bv = v, bi = i;
            }
            cur[j] = bv;
            stack.push_back(Task{t.jlo, j - 1, t.ilo, bi});
            stack.push_back(Task{j + 1, t.jhi, bi, t.ihi});
        }
        std::swap(prev, cur);
    }
    return prev[n];
}

// the k-means bound of a depth-D tree summed over the outputs (0 when too costly to compute)
inline double kmeans_bound(const RegParams& P, int depth) {
    if (P.n == 0 || depth <= 0) return 0.0;
    const int k = depth >= 20 ? P.n : std::min(P.n, 1 << depth);
    if ((double)k * P.n * std::log2((double)P.n + 2.0) > 2e8) return 0.0;
    double total = 0.0;
    std::vector<int> idx(P.n);
    std::vector<double> ys(P.n), ws(P.n);
    for (int c = 0; c < P.K; ++c) {
        for (int i = 0; i < P.n; ++i) idx[i] = i;
        std::sort(idx.begin(), idx.end(), [&](int a, int b) { return P.y[(size_t)a * P.K + c] < P.y[(size_t)b * P.K + c]; });
        for (int i = 0; i < P.n; ++i) {
            ys[i] = P.y[(size_t)idx[i] * P.K + c];
            ws[i] = P.w ? P.w[idx[i]] : 1.0;
        }
        total += kmeans_1d(ys, ws, k);
    }
    return total;
}

// the k-means bound of a depth-D tree on the rows of a feature list v (m rows), summed over the
// outputs of P; ys, ws: scratch
inline double kmeans_rows(const RegParams& P, const Entry* v, int m, int depth, std::vector<double>& ys,
                          std::vector<double>& ws, std::vector<int>& idx) {
    const int k = std::min(m, 1 << std::min(depth, 20));
    double total = 0.0;
    idx.resize(m);
    ys.resize(m);
    ws.resize(m);
    for (int c = 0; c < P.K; ++c) {
        for (int i = 0; i < m; ++i) idx[i] = v[i].row;
        std::sort(idx.begin(), idx.end(), [&](int a, int b) { return P.y[(size_t)a * P.K + c] < P.y[(size_t)b * P.K + c]; });
        for (int i = 0; i < m; ++i) {
            ys[i] = P.y[(size_t)idx[i] * P.K + c];
            ws[i] = P.w ? P.w[idx[i]] : 1.0;
        }
        total += kmeans_1d(ys, ws, k);
    }
    return total * (1.0 - 1e-9);
}

// a depth-1 tree (or a leaf) of a side as a Sol
inline Sol side1_sol(const Columns& cols, int f, int brl, int brr) {
    if (f < 0) return leaf_sol();
    Sol s;
    s.push_back(TNode{f, cols.thr_of(f, brl, brr), 2, brr});
    s.push_back(TNode{-1, 0.0, -1});
    s.push_back(TNode{-1, 0.0, -1});
    return s;
}

}  // namespace detail
}  // namespace tl::cont
