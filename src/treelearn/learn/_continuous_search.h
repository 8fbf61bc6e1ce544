// Optimal classification trees over every threshold of numeric columns (issue 13).
//
// The same objective as the binary search (_topk_search.h): minimum weighted training
// misclassifications over all trees of depth <= max_depth whose splits are "x_f >= t", here with
// t ranging over every node-local midpoint between adjacent distinct values of x_f (categorical
// columns arrive one-hot as 0/1 columns). The search follows the ideas of ConTree (Brita, van der
// Linden, Demirovic: dynamic programming with branch and bound over sorted feature data); the code
// is written for treelearn.
//
// * Data: every column is ranked once (rank = index of the distinct value); a node's rows are held
//   as a "view": per feature, its (row, rank) pairs in ascending order of that feature. Splitting a
//   view is a stable partition of every feature's list (O(rows x features)), so children stay
//   sorted without sorting again. One buffer of features x rows per depth level, reused.
// * Depth 1: one scan per feature in sorted order with class counts updated incrementally.
// * Depth 2 (specialised): for one root threshold, a single pass over every feature computes the
//   optimal depth-1 subtrees of both sides (two count vectors, rows routed by a side flag). A
//   threshold whose error exceeds the side's best by g cannot be beaten before more than g weight
//   has moved across, so those thresholds can be skipped (use_skip; off by default: computing
//   every error without branches measured faster than deciding what to skip).
// * Intervals of root thresholds: with L(p), R(p) the optimal errors of the left / right children
//   when the first p rows (in feature order) go left, L is non-decreasing in p, R non-increasing,
//   and both change by at most the weight that moves. From the evaluated thresholds nearest to an
//   interval, every threshold inside gets a lower bound; whole intervals whose bound reaches the
//   incumbent are dropped and interval ends are shrunk in O(1) per threshold. The interval is then
//   bisected (start_best: start at the feature's best depth-1 threshold instead of the middle;
//   off by default, it measured slower).
// * Depth >= 3: children solved recursively with upper bounds (the larger child first, the other
//   with the remaining budget), exact (rows, depth) cache with lower bounds, memory capped.
// * Anytime: an initial upper bound (the greedy tree's error) prunes from the start; on the time
//   limit the best tree found is returned with a valid lower bound.
// No recursion whose depth grows with the number of rows (recursion depth = tree depth).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#ifndef TL_INLINE
#define TL_INLINE __attribute__((always_inline)) inline
#endif

namespace tlcont {

typedef int (*interrupt_fn_t)(void*);

struct Params {
    int n = 0, F = 0, C = 0;
    const double* X = nullptr;   // feature-major: X[f * n + i]
    const int64_t* y = nullptr;  // class codes 0..C-1
    const double* w = nullptr;   // weights, nullptr = all ones
    int max_depth = 2;
    double upper_bound = 0.0;    // only trees of error < upper_bound are searched; <= 0: none given
    double time_limit = 0.0;     // seconds, <= 0: none
    double mem_limit_bytes = 1e9;
    // ablation switches (none changes the result, only the time)
    int use_cache = 1, use_intervals = 1, use_skip = 0, use_d2 = 1, start_best = 0;
    interrupt_fn_t interrupt_cb = nullptr;
    void* interrupt_ctx = nullptr;
};

struct Output {
    std::vector<int> feature, left, right;  // preorder tree; leaf: feature -1
    std::vector<double> threshold;
    double cost = 0.0, lower_bound = 0.0;
    bool timed_out = false, interrupted = false, memory_error = false;
    long long evaluations = 0, d2_evaluations = 0, nodes = 0, cache_hits = 0, cache_entries = 0;
    double peak_bytes = 0.0, fixed_bytes = 0.0;
};

namespace detail {

struct Entry {
    int32_t row;
    int32_t rank;
};

struct TNode {
    int feature;  // -1: leaf
    double thr;
    int right;    // index of the right child (left child = next node), preorder
};

typedef std::vector<TNode> Sol;

inline Sol leaf_sol() { return Sol(1, TNode{-1, 0.0, -1}); }

inline Sol join(int f, double thr, const Sol& L, const Sol& R) {
    Sol s;
    s.reserve(1 + L.size() + R.size());
    s.push_back(TNode{f, thr, (int)(1 + L.size())});
    for (const TNode& t : L) s.push_back(TNode{t.feature, t.thr, t.feature >= 0 ? t.right + 1 : -1});
    int off = (int)(1 + L.size());
    for (const TNode& t : R) s.push_back(TNode{t.feature, t.thr, t.feature >= 0 ? t.right + off : -1});
    return s;
}

struct Res {
    double lb = 0.0;    // lower bound on the optimal error of the subproblem
    double cost = 0.0;  // error of sol (a valid tree, at worst the leaf)
    Sol sol;
};

struct CacheEntry {
    std::vector<int32_t> rows;
    int depth;
    double lb;
    bool exact;
    double cost;
    Sol sol;
};

// one side of a depth-2 evaluation: the best depth-1 tree of a subset, found in a feature scan
struct Side {
    double T = 0.0;          // total weight
    double best = 0.0;       // best error so far (starts at the leaf error)
    int bf = -1;             // best feature (-1: leaf)
    int brl = 0, brr = 0;    // ranks either side of the best threshold
    // per-feature scan state
    double tot = 0.0, skip = -1.0;
    int prev = -1;
    bool done = false;
};

// one side of a depth-2 evaluation with unit weights (integer counts): Side's search state
struct ISide {
    int T = 0;             // number of rows
    int best = 0;          // best error so far (starts at the leaf error)
    int bg = -1;           // best feature (-1: leaf)
    int brl = 0, brr = 0;  // ranks either side of the best threshold
    int lbi = 0;           // lower bound on the error (rounded up): reaching it ends the scan
    bool done = false;

    // n rows, leaf error leaf, lower bound lb (rounded up, with the search's 1e-9 tolerance)
    void start(int n, int leaf, double lb) {
        T = n;
        best = leaf;
        lbi = (int)std::ceil(lb - 1e-9);
        done = best <= lbi;
    }

    // at a threshold of feature g (between ranks prev and rank) with error err and `left` rows
    // of this side still to pass: keep it if it beats best. True when this side needs no more of
    // feature g: the bound is reached (done, for every feature), or (with skip) no later threshold
    // can beat best, as each further row changes the error by at most one
    TL_INLINE bool threshold(int err, int left, int g, int prev, int rank, bool skip) {
        if (err < best) {
            best = err;
            bg = g;
            brl = prev;
            brr = rank;
            if (err <= lbi) {
                done = true;
                return true;
            }
            return false;
        }
        return skip && err - best >= left;
    }
};

// the results of both sides of an integer scan into sd
inline void store_sides(const ISide* st, Side* sd) {
    for (int s = 0; s < 2; ++s) {
        sd[s].T = st[s].T;
        sd[s].best = st[s].best;
        sd[s].bf = st[s].bg;
        sd[s].brl = st[s].brl;
        sd[s].brr = st[s].brr;
    }
}

class Solver {
  public:
    explicit Solver(const Params& P) : P(P), n(P.n), F(P.F), C(P.C) {}

    void run(Output& out);

  private:
    const Params& P;
    int n, F, C;
    bool weighted = false;
    double eps = 1e-9;
    std::vector<std::vector<double>> vals;    // per feature: distinct values, ascending
    std::vector<int32_t> lab;
    std::vector<double> wt;
    std::vector<Entry> root_view;             // F * n
    std::vector<std::vector<Entry>> buf;      // per level: F * n
    std::vector<int32_t> side;                // n scratch
    std::vector<double> scratch_counts, d2_tl, d2_cur;
    std::vector<int> d2_ti, d2_ci;
    // limits
    std::chrono::steady_clock::time_point t0;
    double last_cb = 0.0;
    bool stop = false, timed_out = false, interrupted = false;
    // cache
    std::unordered_map<uint64_t, std::vector<CacheEntry>> cache;
    double cache_bytes = 0.0, fixed_bytes = 0.0, peak = 0.0;
    bool cache_full = false;
    long long evals = 0, d2evals = 0, nodes = 0, hits = 0, entries = 0;

    double wof(int r) const { return weighted ? wt[r] : 1.0; }

    bool check_stop() {
        if (stop) return true;
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (P.time_limit > 0 && el >= P.time_limit) {
            stop = timed_out = true;
            return true;
        }
        if (P.interrupt_cb && el - last_cb >= 0.2) {
            last_cb = el;
            if (P.interrupt_cb(P.interrupt_ctx)) {
                stop = interrupted = true;
                return true;
            }
        }
        return false;
    }

    double thr_of(int f, int rl, int rr) const {
        double a = vals[f][rl], b = vals[f][rr];
        double t = a + (b - a) * 0.5;
        if (!(t > a) || t > b) t = b;  // a and b adjacent doubles: b itself still separates them
        return t;
    }

    // ---------------------------------------------------------------- helpers on views
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

    uint64_t hash_rows(const Entry* v, int m, int depth) const {
        uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)m << 8) ^ (uint64_t)depth;
        for (int i = 0; i < m; ++i) {
            h ^= (uint64_t)(uint32_t)v[i].row + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        }
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDULL;
        h ^= h >> 33;
        return h;
    }
    CacheEntry* lookup(uint64_t h, const Entry* v, int m, int depth) {
        auto it = cache.find(h);
        if (it == cache.end()) return nullptr;
        for (CacheEntry& e : it->second) {
            if (e.depth != depth || (int)e.rows.size() != m) continue;
            bool same = true;
            for (int i = 0; i < m && same; ++i) same = e.rows[i] == v[i].row;
            if (same) return &e;
        }
        return nullptr;
    }
    void store(uint64_t h, const Entry* v, int m, int depth, double lb, bool exact, double cost, const Sol& sol) {
        CacheEntry* e = lookup(h, v, m, depth);
        if (e) {
            if (exact || lb > e->lb) {
                e->lb = std::max(e->lb, lb);
                if (exact) {
                    e->exact = true;
                    e->cost = cost;
                    e->sol = sol;
                }
            }
            return;
        }
        double bytes = 4.0 * m + sizeof(CacheEntry) + 32.0 + sizeof(TNode) * sol.size();
        if (cache_full || fixed_bytes + cache_bytes + bytes > P.mem_limit_bytes) {
            cache_full = true;
            return;
        }
        CacheEntry ne;
        ne.rows.resize(m);
        for (int i = 0; i < m; ++i) ne.rows[i] = v[i].row;
        ne.depth = depth;
        ne.lb = lb;
        ne.exact = exact;
        ne.cost = cost;
        if (exact) ne.sol = sol;
        cache[h].push_back(std::move(ne));
        cache_bytes += bytes;
        ++entries;
        peak = std::max(peak, fixed_bytes + cache_bytes);
    }

    // best depth-1 split of every feature: error and index of its threshold among the feature's
    // boundaries; returns the node's best depth-1 tree in (bf, brl, brr, best)
    void depth1_all(const Entry* view, int m, const double* tot, std::vector<double>& ferr,
                    std::vector<int>& fbest, Side& s) {
        std::vector<double>& cnt = scratch_counts;
        cnt.assign(C, 0.0);
        double T = 0.0;
        for (int c = 0; c < C; ++c) T += tot[c];
        s.T = T;
        s.best = leaf_err(tot);
        s.bf = -1;
        for (int f = 0; f < F; ++f) {
            const Entry* v = view + (size_t)f * m;
            std::fill(cnt.begin(), cnt.end(), 0.0);
            double acc = 0.0, fb = std::numeric_limits<double>::infinity();
            int k = -1, kb = -1, prev = v[0].rank, brl = 0, brr = 0;
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                if (e.rank != prev) {
                    ++k;
                    double ml = 0.0, mr = 0.0;
                    for (int c = 0; c < C; ++c) {
                        ml = std::max(ml, cnt[c]);
                        mr = std::max(mr, tot[c] - cnt[c]);
                    }
                    double err = (acc - ml) + ((T - acc) - mr);
                    if (err < fb - eps) {
                        fb = err;
                        kb = k;
                        brl = prev;
                        brr = e.rank;
                    }
                    prev = e.rank;
                }
                double ww = wof(e.row);
                cnt[lab[e.row]] += ww;
                acc += ww;
            }
            ferr[f] = fb;
            fbest[f] = kb;
            if (kb >= 0 && fb < s.best - eps) {
                s.best = fb;
                s.bf = f;
                s.brl = brl;
                s.brr = brr;
            }
        }
    }

    // ---------------------------------------------------------------- depth-2 evaluation
    // optimal depth-1 trees of both sides of "the first p rows of feature f's order go left";
    // features scanned in the order `order` (best depth-1 features first: the skips grow);
    // lbs: known lower bounds of both sides (a side reaching its bound is done)
    void d2_eval(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        ++d2evals;
        if (C == 2 && !weighted) {
            d2_eval_2u(view, m, f, p, sd, order, lbs);
        } else if (!weighted) {
            if (C == 3)
                d2_eval_u<3>(view, m, f, p, sd, order, lbs);
            else if (C == 4)
                d2_eval_u<4>(view, m, f, p, sd, order, lbs);
            else
                d2_eval_u<0>(view, m, f, p, sd, order, lbs);
        } else if (C == 2) {
            if (weighted)
                d2_eval_t<2, true>(view, m, f, p, sd, order, lbs);
            else
                d2_eval_t<2, false>(view, m, f, p, sd, order, lbs);
        } else {
            if (weighted)
                d2_eval_t<0, true>(view, m, f, p, sd, order, lbs);
            else
                d2_eval_t<0, false>(view, m, f, p, sd, order, lbs);
        }
    }

    // two classes, unit weights: integer counts, and every row's split error computed without
    // branches (cheaper than deciding whether to skip it); only an improvement, or a gap larger
    // than the rows left on that side (the side is done with this feature), branches
    void d2_eval_2u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const Entry* vf = view + (size_t)f * m;
        int32_t* code = side.data();
        int T0[2] = {0, 0}, T1[2] = {0, 0};
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : 2) + lab[r];
            code[r] = k;
            (k & 1 ? T1 : T0)[k >> 1]++;
        }
        ISide st[2];
        const bool skip_on = P.use_skip != 0;
        for (int s = 0; s < 2; ++s) {
            st[s].start(T0[s] + T1[s], std::min(T0[s], T1[s]), lbs[s]);
        }
        for (int gi = 0; gi < F; ++gi) {
            if (st[0].done && st[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            int c[2][2] = {{0, 0}, {0, 0}}, prev[2] = {-1, -1};
            bool fd[2] = {st[0].done, st[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry e = v[i];
                const int k = code[e.row];
                const int s = k >> 1;
                if (fd[s]) continue;
                const int a0 = c[s][0], a1 = c[s][1];
                const int err = std::min(a0, a1) + std::min(T0[s] - a0, T1[s] - a1);
                const bool bnd = e.rank != prev[s];
                if (bnd && st[s].threshold(err, st[s].T - (a0 + a1), g, prev[s], e.rank, skip_on)) {
                    fd[s] = true;
                    if (fd[0] && fd[1]) break;
                    continue;
                }
                c[s][k & 1]++;
                prev[s] = e.rank;
            }
        }
        store_sides(st, sd);
    }

    // unit weights, any number of classes: integer counts; a side's error is computed at its
    // boundaries only (O(classes)), with the same "gap larger than the rows left" stop
    template <int CC>
    void d2_eval_u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const int NC = CC > 0 ? CC : C;
        const Entry* vf = view + (size_t)f * m;
        int32_t* code = side.data();
        std::vector<int>& Tc = d2_ti;   // 2 * NC
        std::vector<int>& cc = d2_ci;   // 2 * NC
        std::fill(Tc.begin(), Tc.end(), 0);
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : NC) + lab[r];
            code[r] = k;
            Tc[k]++;
        }
        ISide st[2];
        const bool skip_on = P.use_skip != 0;
        for (int s = 0; s < 2; ++s) {
            int tot = 0, mx = 0;
            for (int c = 0; c < NC; ++c) {
                tot += Tc[s * NC + c];
                mx = std::max(mx, Tc[s * NC + c]);
            }
            st[s].start(tot, tot - mx, lbs[s]);
        }
        for (int gi = 0; gi < F; ++gi) {
            if (st[0].done && st[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            std::fill(cc.begin(), cc.end(), 0);
            int tot[2] = {0, 0}, prev[2] = {-1, -1};
            bool fd[2] = {st[0].done, st[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry e = v[i];
                const int k = code[e.row];
                const int s = k >= NC ? 1 : 0;
                if (fd[s]) continue;
                if (e.rank != prev[s] && tot[s] > 0) {
                    const int* a = &cc[s * NC];
                    const int* t = &Tc[s * NC];
                    int ml = 0, mr = 0;
                    for (int c = 0; c < NC; ++c) {
                        ml = std::max(ml, a[c]);
                        mr = std::max(mr, t[c] - a[c]);
                    }
                    const int err = (tot[s] - ml) + ((st[s].T - tot[s]) - mr);
                    if (st[s].threshold(err, st[s].T - tot[s], g, prev[s], e.rank, skip_on)) {
                        fd[s] = true;
                        if (fd[0] && fd[1]) break;
                        continue;
                    }
                }
                cc[k]++;
                tot[s]++;
                prev[s] = e.rank;
            }
        }
        store_sides(st, sd);
    }

    template <int CC, bool WEIGHTED>
    void d2_eval_t(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const int NC = CC > 0 ? CC : C;
        const Entry* vf = view + (size_t)f * m;
        double* tl = d2_tl.data();    // 2 * NC: class totals per side
        double* cur = d2_cur.data();  // 2 * NC: running counts per side
        int32_t* code = side.data();  // per row: side * NC + class
        std::fill(tl, tl + 2 * NC, 0.0);
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : NC) + lab[r];
            code[r] = k;
            tl[k] += WEIGHTED ? wt[r] : 1.0;
        }
        for (int s = 0; s < 2; ++s) {
            Side& S = sd[s];
            S.T = 0.0;
            double mx = 0.0;
            for (int c = 0; c < NC; ++c) {
                S.T += tl[s * NC + c];
                mx = std::max(mx, tl[s * NC + c]);
            }
            S.best = S.T - mx;
            S.bf = -1;
            S.done = S.best <= lbs[s] + eps;
        }
        const bool skip_on = P.use_skip != 0;
        for (int gi = 0; gi < F; ++gi) {
            if (sd[0].done && sd[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            for (int s = 0; s < 2; ++s) {
                sd[s].tot = 0.0;
                sd[s].prev = -1;
                sd[s].skip = -1.0;
            }
            std::fill(cur, cur + 2 * NC, 0.0);
            bool fd[2] = {sd[0].done, sd[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                const int k = code[e.row];
                const int s = k >= NC ? 1 : 0;
                if (fd[s]) continue;
                Side& S = sd[s];
                double* cc = cur + s * NC;
                const double ww = WEIGHTED ? wt[e.row] : 1.0;
                if (e.rank != S.prev && S.prev >= 0 && !(skip_on && S.skip >= 0.0)) {
                    const double* tt = tl + s * NC;
                    double ml = 0.0, mr = 0.0;
                    for (int c = 0; c < NC; ++c) {
                        ml = std::max(ml, cc[c]);
                        mr = std::max(mr, tt[c] - cc[c]);
                    }
                    double err = (S.tot - ml) + ((S.T - S.tot) - mr);
                    if (err < S.best - eps) {
                        S.best = err;
                        S.bf = g;
                        S.brl = S.prev;
                        S.brr = e.rank;
                        S.skip = -1.0;
                        if (err <= lbs[s] + eps) {  // cannot go lower
                            S.done = true;
                            fd[s] = true;
                            if (fd[0] && fd[1]) break;
                            continue;
                        }
                    } else {
                        S.skip = err - S.best;  // no threshold beats best before > this weight moves
                        // the rest of this side cannot move enough weight to beat best
                        if (skip_on && S.skip >= S.T - S.tot) {
                            fd[s] = true;
                            if (fd[0] && fd[1]) break;
                            continue;
                        }
                    }
                }
                S.prev = e.rank;
                cc[k - s * NC] += ww;
                S.tot += ww;
                if (skip_on) S.skip -= ww;
            }
        }
    }

    Sol side_sol(const Side& S) const {
        if (S.bf < 0) return leaf_sol();
        Sol s;
        s.push_back(TNode{S.bf, thr_of(S.bf, S.brl, S.brr), 2});
        s.push_back(TNode{-1, 0.0, -1});
        s.push_back(TNode{-1, 0.0, -1});
        return s;
    }

    // split view (m rows) at "first p rows of feature f go left" into out (left block, then right)
    void split_view(const Entry* view, int m, int f, int p, Entry* out) {
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

    Res solve(const Entry* view, int m, int d, double UB, int level);
};

inline Res Solver::solve(const Entry* view, int m, int d, double UB, int level) {
    ++nodes;
    Res res;
    std::vector<double> tot(C);
    totals(view, m, tot.data());
    double leaf = leaf_err(tot.data());
    res.sol = leaf_sol();
    res.cost = leaf;
    res.lb = leaf;
    if (d == 0 || leaf <= eps) return res;
    res.lb = 0.0;
    if (UB <= eps) return res;  // nothing can be below the bound; 0 is a valid lower bound

    // a set below a single split is a prefix or suffix of one column: only sets two or more splits
    // down can be reached along different paths
    const bool cacheable = P.use_cache && level >= 2 && d >= 2;
    uint64_t h = 0;
    if (cacheable) {
        h = hash_rows(view, m, d);
        CacheEntry* e = lookup(h, view, m, d);
        if (e) {
            if (e->exact) {
                ++hits;
                res.lb = e->lb;
                res.cost = e->cost;
                res.sol = e->sol;
                return res;
            }
            if (e->lb >= UB - eps) {
                ++hits;
                res.lb = e->lb;
                return res;
            }
        }
    }

    // depth-1 pass: incumbent, feature order, first threshold per feature
    std::vector<double> ferr(F);
    std::vector<int> fbest(F);
    Side s1;
    depth1_all(view, m, tot.data(), ferr, fbest, s1);
    if (s1.bf >= 0 && s1.best < res.cost - eps) {
        res.cost = s1.best;
        res.sol = side_sol(s1);
    }
    if (d == 1 || res.cost <= eps) {  // depth 1 is exact; a zero error cannot be beaten
        res.lb = res.cost;
        return res;
    }
    double ub = std::min(UB, res.cost);  // improvements must be < ub - eps
    double lb_open = std::numeric_limits<double>::infinity();  // bounds of what a stop left unsearched

    std::vector<int> order(F);
    for (int f = 0; f < F; ++f) order[f] = f;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ferr[a] < ferr[b]; });

    std::vector<int> pos;
    std::vector<double> wpre;
    std::vector<double> lbL, lbR;
    struct Iv {
        int a, b, lo, hi;
    };
    std::vector<Iv> queue;
    Side sd[2];
    Entry* child = (d >= 3 || !P.use_d2) ? buf[level].data() : nullptr;

    for (int oi = 0; oi < F; ++oi) {
        int f = order[oi];
        if (stop) {
            lb_open = 0.0;
            break;
        }
        if (fbest[f] < 0) continue;  // constant on this node
        const Entry* vf = view + (size_t)f * m;
        pos.clear();
        wpre.assign(m + 1, 0.0);
        for (int i = 0; i < m; ++i) {
            if (i > 0 && vf[i].rank != vf[i - 1].rank) pos.push_back(i);
            wpre[i + 1] = wpre[i] + wof(vf[i].row);
        }
        const int K = (int)pos.size();
        lbL.assign(K, 0.0);
        lbR.assign(K, 0.0);
        queue.clear();
        queue.push_back(Iv{0, K - 1, -1, K});
        size_t head = 0;
        bool first = true;
        auto bound_at = [&](int k, int lo, int hi, double& bl, double& br) {
            double l = 0.0, r = 0.0;
            if (P.use_intervals) {
                if (lo >= 0) {
                    l = lbL[lo];
                    r = std::max(r, lbR[lo] - (wpre[pos[k]] - wpre[pos[lo]]));
                }
                if (hi < K) {
                    r = std::max(r, lbR[hi]);
                    l = std::max(l, lbL[hi] - (wpre[pos[hi]] - wpre[pos[k]]));
                }
            }
            bl = l;
            br = r;
        };
        while (head < queue.size()) {
            Iv iv = queue[head++];
            if (stop) {
                // what is left of this feature: the interval bounds
                for (size_t q = head - 1; q < queue.size(); ++q) {
                    const Iv& r = queue[q];
                    if (r.a > r.b) continue;
                    double bl = 0.0, br = 0.0;
                    if (P.use_intervals) {
                        bl = r.lo >= 0 ? lbL[r.lo] : 0.0;
                        br = r.hi < K ? lbR[r.hi] : 0.0;
                    }
                    lb_open = std::min(lb_open, bl + br);
                }
                break;
            }
            if (iv.a > iv.b) continue;
            if (P.use_intervals) {
                double whole = (iv.lo >= 0 ? lbL[iv.lo] : 0.0) + (iv.hi < K ? lbR[iv.hi] : 0.0);
                if (whole >= ub - eps) continue;
                double bl, br;
                while (iv.a <= iv.b) {
                    bound_at(iv.a, iv.lo, iv.hi, bl, br);
                    if (bl + br < ub - eps) break;
                    ++iv.a;
                }
                while (iv.b >= iv.a) {
                    bound_at(iv.b, iv.lo, iv.hi, bl, br);
                    if (bl + br < ub - eps) break;
                    --iv.b;
                }
                if (iv.a > iv.b) continue;
            }
            int k = (iv.a + iv.b) / 2;
            if (first && P.start_best && fbest[f] >= iv.a && fbest[f] <= iv.b) k = fbest[f];
            first = false;
            double bl, br;
            bound_at(k, iv.lo, iv.hi, bl, br);
            int p = pos[k];
            ++evals;
            double cl, cr;  // lower bounds (exact values when solved) of both children
            if (d == 2 && P.use_d2) {
                double lbs[2] = {bl, br};
                d2_eval(view, m, f, p, sd, order.data(), lbs);
                cl = sd[0].best;
                cr = sd[1].best;
                if (cl + cr < ub - eps) {
                    ub = cl + cr;
                    res.cost = ub;
                    res.sol = join(f, thr_of(f, vf[p - 1].rank, vf[p].rank), side_sol(sd[0]), side_sol(sd[1]));
                }
            } else {
                split_view(view, m, f, p, child);
                const Entry* Lv = child;
                const Entry* Rv = child + (size_t)F * p;
                int mr = m - p;
                bool left_first = p < mr;
                double slack = std::max(wpre[pos[k]] - wpre[pos[iv.a]], wpre[pos[iv.b]] - wpre[pos[k]]);
                if (!P.use_intervals) slack = 0.0;
                Res r1 = left_first ? solve(Lv, p, d - 1, ub - br, level + 1) : solve(Rv, mr, d - 1, ub - bl, level + 1);
                double other_b = left_first ? br : bl;
                Res r2;
                bool have2 = false;
                if (!stop && r1.lb + other_b < ub - eps) {
                    double base = (r1.cost <= r1.lb + eps) ? r1.cost : r1.lb;
                    if (left_first) {
                        // the left child is done and left the view in buf: the right one is still intact
                        r2 = solve(Rv, mr, d - 1, ub - base + slack, level + 1);
                    } else {
                        r2 = solve(Lv, p, d - 1, ub - base + slack, level + 1);
                    }
                    have2 = true;
                }
                double l1 = r1.lb, l2 = have2 ? r2.lb : other_b;
                cl = left_first ? l1 : l2;
                cr = left_first ? l2 : l1;
                if (have2) {
                    double total = r1.cost + r2.cost;
                    if (total < ub - eps) {
                        ub = total;
                        res.cost = total;
                        double t = thr_of(f, vf[p - 1].rank, vf[p].rank);
                        res.sol = left_first ? join(f, t, r1.sol, r2.sol) : join(f, t, r2.sol, r1.sol);
                    }
                }
                if (stop) {
                    lb_open = std::min(lb_open, cl + cr);
                }
            }
            cl = std::max(cl, bl);
            cr = std::max(cr, br);
            lbL[k] = cl;
            lbR[k] = cr;
            if (res.cost <= eps) break;
            if (check_stop()) {
                // the rest of this interval and the queue stay open
                if (iv.a < k) lb_open = std::min(lb_open, (iv.lo >= 0 ? lbL[iv.lo] : 0.0) + cr);
                if (k < iv.b) lb_open = std::min(lb_open, cl + (iv.hi < K ? lbR[iv.hi] : 0.0));
            }
            if (iv.a < k) queue.push_back(Iv{iv.a, k - 1, iv.lo, k});
            if (k < iv.b) queue.push_back(Iv{k + 1, iv.b, k, iv.hi});
        }
        if (res.cost <= eps) break;
    }
    if (stop) {
        res.lb = std::max(0.0, std::min({res.cost, UB, lb_open}));
        return res;
    }
    bool exact = res.cost < UB - eps;
    res.lb = exact ? res.cost : UB;
    if (res.lb > res.cost) res.lb = res.cost;
    if (cacheable) store(h, view, m, d, res.lb, exact, res.cost, res.sol);
    return res;
}

inline void Solver::run(Output& out) {
    t0 = std::chrono::steady_clock::now();
    weighted = P.w != nullptr;
    lab.resize(n);
    for (int i = 0; i < n; ++i) lab[i] = (int32_t)P.y[i];
    double W = 0.0;
    if (weighted) {
        wt.assign(P.w, P.w + n);
        for (int i = 0; i < n; ++i) W += wt[i];
    } else {
        W = n;
    }
    eps = 1e-9 * std::max(1.0, W);
    int D = P.max_depth;
    // buffers for the children of nodes with depth budget >= 3 (>= 2 without the depth-2 solver)
    int levels = std::max(0, D - (P.use_d2 ? 2 : 1));
    fixed_bytes = 8.0 * (double)F * n * (1 + levels) + 4.0 * n + 13.0 * n + 8.0 * n;
    out.fixed_bytes = fixed_bytes;
    if (fixed_bytes > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    // rank every column once
    vals.assign(F, std::vector<double>());
    root_view.resize((size_t)F * n);
    std::vector<int32_t> idx(n);
    for (int f = 0; f < F; ++f) {
        const double* x = P.X + (size_t)f * n;
        for (int i = 0; i < n; ++i) idx[i] = i;
        std::stable_sort(idx.begin(), idx.end(), [x](int32_t a, int32_t b) { return x[a] < x[b]; });
        int r = -1;
        double prevv = 0.0;
        Entry* v = root_view.data() + (size_t)f * n;
        for (int i = 0; i < n; ++i) {
            double xv = x[idx[i]];
            if (r < 0 || xv != prevv) {
                ++r;
                vals[f].push_back(xv);
                prevv = xv;
            }
            v[i] = Entry{idx[i], r};
        }
    }
    buf.assign(levels + 1, std::vector<Entry>());
    for (int l = 0; l < levels; ++l) buf[l].resize((size_t)F * n);
    side.assign(n, 0);
    scratch_counts.assign(C, 0.0);
    d2_tl.assign(2 * C, 0.0);
    d2_cur.assign(2 * C, 0.0);
    d2_ti.assign(2 * C, 0);
    d2_ci.assign(2 * C, 0);
    peak = fixed_bytes;
    double UB = P.upper_bound > 0 ? P.upper_bound : std::numeric_limits<double>::infinity();
    Res r = (n > 0 && F > 0) ? solve(root_view.data(), n, D, UB, 0) : Res();
    if (n > 0 && F == 0) {
        std::vector<double> tot(C, 0.0);
        for (int i = 0; i < n; ++i) tot[lab[i]] += wof(i);
        r.cost = r.lb = leaf_err(tot.data());
        r.sol = leaf_sol();
    }
    out.cost = r.cost;
    out.lower_bound = r.lb;
    out.timed_out = timed_out;
    out.interrupted = interrupted;
    out.evaluations = evals;
    out.d2_evaluations = d2evals;
    out.nodes = nodes;
    out.cache_hits = hits;
    out.cache_entries = entries;
    out.peak_bytes = peak;
    // preorder arrays with explicit children
    const Sol& s = r.sol;
    int N = (int)s.size();
    out.feature.resize(N);
    out.threshold.resize(N);
    out.left.resize(N);
    out.right.resize(N);
    for (int i = 0; i < N; ++i) {
        out.feature[i] = s[i].feature;
        out.threshold[i] = s[i].thr;
        out.left[i] = s[i].feature >= 0 ? i + 1 : -1;
        out.right[i] = s[i].feature >= 0 ? s[i].right : -1;
    }
}

}  // namespace detail

inline void run_continuous(const Params& P, Output& out) {
    detail::Solver s(P);
    s.run(out);
}

}  // namespace tlcont
