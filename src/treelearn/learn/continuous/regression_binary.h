// Optimal regression trees on 0/1 features: the least weighted SSE (summed over the outputs) of
// a tree of depth at most max_depth whose splits are "x_f = 1 or not". On such data every column
// has one threshold, so the sorted-list machinery of the every-threshold search (regression.h)
// is overhead; this solver works on sufficient statistics instead.
//
// Statistics: a set of rows is summed up by the channels (count, sum w, sum w |y|^2, sum w y_k),
// and its leaf costs sum w |y|^2 - |sum w y|^2 / sum w. A node's table holds, for every pair of
// features a <= b, the channels of its rows with x_a = 1 and x_b = 1 (the diagonal: x_a = 1), and
// the node's total: built in one pass over the node's rows (each row adds itself to the pairs of
// its ones), it prices every tree of depth <= 2 of the node by inclusion-exclusion (x_a = 0 and
// x_b = 1: diag(b) - pair(a, b); x_a = 0 and x_b = 0: total - diag(a) - diag(b) + pair(a, b)).
// A child's table is built from its rows only for the smaller child of a split; the larger one's
// is the parent's table less it.
//
// Points: rows with the same features take the same side of every split, so the search works on
// the distinct feature vectors, each with its rows' summed channels. Lower bound of a node (any
// depth): they end in the same leaf of every tree, so no tree costs less than the sum of the
// node's points' own SSEs (a leaf's SSE is at least the sum of its points'); a node whose
// incumbent reaches it is closed.
//
// Search: depth-first dynamic programming over branches. A node of depth budget <= 2 is solved
// exactly from its table; a deeper node starts from its best depth-<=2 tree (the incumbent) and
// tries every feature in the order of that feature's best depth-2 tree, each child with the
// budget the incumbent leaves it (the smaller child first, the other below what the first
// left), pruned when the children's lower bounds reach the incumbent. Subproblems are cached by
// the branch: the sorted set of literals on the path (the same rows in any order of the path),
// with their optimum (exact) or a lower bound (a search that found nothing below its budget).
// The tie rule: a candidate replaces the incumbent only when lower by more than the tie
// tolerance: the leaf, then the first best depth-1 tree (features ascending), then depth-2 trees
// (roots ascending, each side a leaf unless a split is better), then deeper trees.
//
// Limits: the clock and Ctrl-C flag of core/limits.h, read at every node; a stop returns the
// best tree found. Memory: the rows' channels and ones, the row lists and tables of every level,
// counted before the search (memory_error over the cap); the cache stops growing at the cap.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/limits.h"
#include "regression_search.h"

namespace tl::cont {

struct BinRegParams {
    int n = 0, F = 0, K = 1;
    const uint8_t* X = nullptr;  // row-major n x F, every value 0 or 1
    const double* y = nullptr;   // row-major n x K targets (centred by the caller)
    const double* w = nullptr;   // weights, nullptr = all ones
    int max_depth = 2;
    double upper_bound = 0.0;    // only trees of SSE < upper_bound are searched; <= 0: none
    double eps = 0.0;            // tie tolerance of SSE comparisons
    double time_limit = 0.0;     // seconds, <= 0: none
    double mem_limit_bytes = 1e9;
    int use_cache = 1;           // ablation switch (the same SSE)
};

namespace binreg {

using namespace tl::cont::detail;

constexpr double kInf = std::numeric_limits<double>::infinity();

// a node's statistics: the pair table (F x F, channels innermost; the upper triangle and the
// diagonal are used) and the total
struct Table {
    std::vector<double> p;
    std::vector<double> t;
};

struct BRes {
    double lb = 0.0, cost = 0.0;  // a lower bound of the node's optimum; the SSE of sol
    Sol sol;
};

// NC channels known at compile time (> 0), or 0: the runtime count
template <int NC>
class BinSearch {
  public:
    BinSearch(const BinRegParams& P, tl::Clock& clock, RegOutput& out)
        : P_(P), F_(P.F), nc_(NC > 0 ? NC : P.K + 3), clock_(clock), out_(out), eps_(P.eps) {}

    // bytes of the fixed buffers (before they are allocated)
    static double fixed_bytes(const BinRegParams& P) {
        const double D = std::max(1, P.max_depth) + 1.0;
        const double nc = P.K + 3.0;
        return 8.0 * nc * P.n * 2 + 4.0 * ((double)P.n * P.F + 3.0 * P.n + 1) + (double)P.n * P.F
               + 2.0 * D * (4.0 * P.n + 8.0 * nc * P.F * (double)P.F) + 16.0 * P.F;
    }

    BRes run() {
        build_rows();
        const int n = G_;
        const int D = std::max(0, P_.max_depth);
        rows_.resize(D + 1);
        tab_.resize(D + 1);
        for (int d = 0; d <= D; ++d)
            for (int s = 0; s < 2; ++s) {
                rows_[d][s].resize(n);
                tab_[d][s].p.assign((size_t)F_ * F_ * nc(), 0.0);
                tab_[d][s].t.assign(nc(), 0.0);
            }
        for (int i = 0; i < n; ++i) rows_[D][0][i] = i;
        m_.assign(D + 1, {0, 0});
        m_[D][0] = n;
        build_table(rows_[D][0].data(), n, tab_[D][0]);
        std::vector<int> key;
        root_lb_ = group_lb(rows_[D][0].data(), n);
        return solve(D, 0, key, P_.upper_bound > 0.0 ? P_.upper_bound : kInf, root_lb_, true);
    }

    // the grouped-rows bound of the whole sample
    double root_bound() const { return root_lb_; }

    bool stopped() const { return stopped_; }
    double cache_bytes() const { return cache_bytes_; }

  private:
    struct Entry {
        double lb, cost;
        Sol sol;
    };
    struct KeyHash {
        size_t operator()(const std::vector<int>& k) const {
            uint64_t h = 1469598103934665603ull;
            for (int v : k) h = (h ^ (uint64_t)(uint32_t)v) * 1099511628211ull;
            return (size_t)(h ^ (h >> 29));
        }
    };

    const BinRegParams& P_;
    int F_, nc_;
    tl::Clock& clock_;
    RegOutput& out_;
    double eps_;
    int G_ = 0;                      // points (distinct feature vectors)
    std::vector<int> rep_;           // per point: a row of it
    std::vector<double> st_, gsse_;  // per point: its rows' channels, their SSE
    std::vector<int> off_, ones_;    // per point: the features it has at 1 (CSR)
    double root_lb_ = 0.0;
    std::vector<std::array<std::vector<int>, 2>> rows_;  // per level and side: the node's points
    std::vector<std::array<int, 2>> m_;
    std::vector<std::array<Table, 2>> tab_;
    std::unordered_map<std::vector<int>, Entry, KeyHash> cache_;
    double cache_bytes_ = 0.0;
    bool cache_full_ = false;
    bool stopped_ = false;
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();

    TL_INLINE int nc() const { return NC > 0 ? NC : nc_; }

    bool check() {
        if (!stopped_ && clock_.timed_out()) stopped_ = true;
        return stopped_;
    }

    void note_root(double cost, bool root) {
        if (!root) return;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        out_.history.emplace_back(s, cost);
    }

    // the distinct feature vectors ("points"): rows of the same features take the same side of
    // every split, so the search works on the points, each with the summed channels of its rows
    // (the channels are sums), its SSE (the grouped-rows bound's term) and its ones (CSR)
    void build_rows() {
        const int K = P_.K, C = nc();
        std::unordered_map<std::string, int> ids;
        std::vector<int> gid(P_.n);
        rep_.clear();
        for (int i = 0; i < P_.n; ++i) {
            std::string k((const char*)(P_.X + (size_t)i * F_), (size_t)F_);
            auto it = ids.emplace(std::move(k), (int)rep_.size());
            if (it.second) rep_.push_back(i);
            gid[i] = it.first->second;
        }
        G_ = (int)rep_.size();
        st_.assign((size_t)G_ * C, 0.0);
        for (int i = 0; i < P_.n; ++i) {
            const double wi = P_.w ? P_.w[i] : 1.0;
            double* row = st_.data() + (size_t)gid[i] * C;
            double q = 0.0;
            for (int k = 0; k < K; ++k) {
                const double yk = P_.y[(size_t)i * K + k];
                row[3 + k] += wi * yk;
                q += yk * yk;
            }
            row[0] += 1.0;
            row[1] += wi;
            row[2] += wi * q;
        }
        gsse_.resize(G_);
        off_.assign(G_ + 1, 0);
        ones_.clear();
        for (int g = 0; g < G_; ++g) {
            gsse_[g] = sse(st_.data() + (size_t)g * C);
            const uint8_t* x = P_.X + (size_t)rep_[g] * F_;
            for (int f = 0; f < F_; ++f)
                if (x[f]) ones_.push_back(f);
            off_[g + 1] = (int)ones_.size();
        }
    }

    // the grouped-rows lower bound of the points idx[0..m) (less a relative rounding margin)
    double group_lb(const int* idx, int m) const {
        double lb = 0.0;
        for (int i = 0; i < m; ++i) lb += gsse_[idx[i]];
        return lb * (1.0 - 1e-12);
    }

    // the table of points idx[0..m): every point added to the total and to the pairs of its ones
    void build_table(const int* idx, int m, Table& tb) {
        const int C = nc();
        std::fill(tb.p.begin(), tb.p.end(), 0.0);
        std::fill(tb.t.begin(), tb.t.end(), 0.0);
        double* t = tb.t.data();
        for (int i = 0; i < m; ++i) {
            const int r = idx[i];
            const double* s = st_.data() + (size_t)r * C;
            for (int c = 0; c < C; ++c) t[c] += s[c];
            const int* o = ones_.data() + off_[r];
            const int u = off_[r + 1] - off_[r];
            for (int a = 0; a < u; ++a) {
                double* base = tb.p.data() + (size_t)o[a] * F_ * C;
                for (int b = a; b < u; ++b) {
                    double* cell = base + (size_t)o[b] * C;
                    for (int c = 0; c < C; ++c) cell[c] += s[c];
                }
            }
        }
    }

    static void subtract(const Table& a, const Table& b, Table& out) {
        for (size_t i = 0; i < a.p.size(); ++i) out.p[i] = a.p[i] - b.p[i];
        for (size_t i = 0; i < a.t.size(); ++i) out.t[i] = a.t[i] - b.t[i];
    }

    // the SSE of the channels a (0 for an empty set)
    TL_INLINE double sse(const double* a) const {
        if (a[0] < 0.5) return 0.0;
        double ss = 0.0;
        for (int k = 3; k < nc(); ++k) ss += a[k] * a[k];
        return std::max(0.0, a[2] - ss / a[1]);
    }

    // the SSE of the set a less its subset b; cnt: its rows
    TL_INLINE double sse_diff(const double* a, const double* b, double& cnt) const {
        cnt = a[0] - b[0];
        if (cnt < 0.5) return 0.0;
        double ss = 0.0;
        for (int k = 3; k < nc(); ++k) {
            const double d = a[k] - b[k];
            ss += d * d;
        }
        return std::max(0.0, (a[2] - b[2]) - ss / (a[1] - b[1]));
    }

    // the SSE of a - b - c + d (x_i = 0 and x_j = 0); cnt: its rows
    TL_INLINE double sse_both0(const double* a, const double* b, const double* c, const double* d, double& cnt) const {
        cnt = a[0] - b[0] - c[0] + d[0];
        if (cnt < 0.5) return 0.0;
        double ss = 0.0;
        for (int k = 3; k < nc(); ++k) {
            const double v = a[k] - b[k] - c[k] + d[k];
            ss += v * v;
        }
        return std::max(0.0, (a[2] - b[2] - c[2] + d[2]) - ss / (a[1] - b[1] - c[1] + d[1]));
    }

    const double* cell(const Table& tb, int a, int b) const {
        return tb.p.data() + ((size_t)std::min(a, b) * F_ + std::max(a, b)) * nc();
    }

    static Sol stump(int f) { return f < 0 ? leaf_sol() : join(f, 0.5, 1, leaf_sol(), leaf_sol()); }

    // the best split (or leaf) of each side of the root split on feature i: side 0 (x_i = 0) and
    // side 1 (x_i = 1), each a leaf unless a split is better by the tolerance
    void sides(const Table& tb, int i, double best[2], int bj[2]) const {
        const double* T = tb.t.data();
        const double* R = cell(tb, i, i);
        double cnt = 0.0;
        best[1] = sse(R);
        best[0] = sse_diff(T, R, cnt);
        bj[0] = bj[1] = -1;
        const double nR = R[0], nL = T[0] - R[0];
        for (int j = 0; j < F_; ++j) {
            if (j == i) continue;
            const double* Pj = cell(tb, j, j);
            const double* Pij = cell(tb, i, j);
            if (nR >= 2.0 && Pij[0] > 0.5 && Pij[0] < nR - 0.5) {  // x_i = 1: x_j = 1 or 0
                const double c = sse(Pij) + sse_diff(R, Pij, cnt);
                if (c < best[1] - eps_) best[1] = c, bj[1] = j;
            }
            const double n01 = Pj[0] - Pij[0];
            if (nL >= 2.0 && n01 > 0.5 && n01 < nL - 0.5) {  // x_i = 0: x_j = 1 or 0
                const double c = sse_diff(Pj, Pij, cnt) + sse_both0(T, R, Pj, Pij, cnt);
                if (c < best[0] - eps_) best[0] = c, bj[0] = j;
            }
        }
    }

    // the node's best tree of depth <= depth (<= 2) from its table; root_cost[f]: the best
    // depth-2 tree with root f (inf: f constant at the node), when not null
    BRes depth2(const Table& tb, int depth, std::vector<double>* root_cost) {
        ++out_.d2_evaluations;
        const double* T = tb.t.data();
        BRes r;
        r.cost = sse(T);
        r.sol = leaf_sol();
        if (root_cost) root_cost->assign(F_, kInf);
        if (depth == 0 || T[0] < 1.5 || r.cost <= eps_) {
            r.lb = r.cost;
            return r;
        }
        int b1 = -1;
        double cnt = 0.0;
        for (int i = 0; i < F_; ++i) {
            const double* R = cell(tb, i, i);
            if (R[0] < 0.5 || R[0] > T[0] - 0.5) continue;
            const double c = sse(R) + sse_diff(T, R, cnt);
            if (c < r.cost - eps_) r.cost = c, b1 = i;
        }
        if (b1 >= 0) r.sol = stump(b1);
        if (depth >= 2) {
            int bi = -1, bs[2] = {-1, -1};
            for (int i = 0; i < F_; ++i) {
                const double* R = cell(tb, i, i);
                if (R[0] < 0.5 || R[0] > T[0] - 0.5) continue;
                double best[2];
                int bj[2];
                sides(tb, i, best, bj);
                const double c = best[0] + best[1];
                if (root_cost) (*root_cost)[i] = c;
                if (c < r.cost - eps_) r.cost = c, bi = i, bs[0] = bj[0], bs[1] = bj[1];
            }
            if (bi >= 0) r.sol = join(bi, 0.5, 1, stump(bs[0]), stump(bs[1]));
        }
        r.lb = r.cost;
        return r;
    }

    const Entry* lookup(const std::vector<int>& key) const {
        if (!P_.use_cache) return nullptr;
        auto it = cache_.find(key);
        return it == cache_.end() ? nullptr : &it->second;
    }

    void store(const std::vector<int>& key, const BRes& r) {
        if (!P_.use_cache || stopped_) return;  // (a stopped search proves nothing)
        auto it = cache_.find(key);
        if (it != cache_.end()) {
            Entry& e = it->second;
            e.lb = std::max(e.lb, r.lb);
            if (r.cost < e.cost) e.cost = r.cost, e.sol = r.sol;
            return;
        }
        const double bytes = 96.0 + 4.0 * key.size() + sizeof(TNode) * r.sol.size();
        if (cache_full_ || out_.fixed_bytes + cache_bytes_ + bytes > P_.mem_limit_bytes) {
            cache_full_ = true;
            return;
        }
        cache_bytes_ += bytes;
        out_.peak_bytes = std::max(out_.peak_bytes, out_.fixed_bytes + cache_bytes_);
        cache_.emplace(key, Entry{r.lb, r.cost, r.sol});
    }

    // a child whose cached entry answers below the budget needs no search
    bool answered(const Entry* e, double budget) const {
        return e && (e->lb >= e->cost - eps_ || e->lb >= budget - eps_);
    }

    // the node of level depth, side s (its rows and table set), below budget ub; nlb: its
    // grouped-rows bound
    BRes solve(int depth, int s, std::vector<int>& key, double ub, double nlb, bool root = false) {
        ++out_.nodes;
        const Table& tb = tab_[depth][s];
        if (depth <= 2) {
            BRes r = depth2(tb, depth, nullptr);
            note_root(r.cost, root);
            store(key, r);
            return r;
        }
        std::vector<double> rc;
        BRes inc = depth2(tb, depth, &rc);
        note_root(inc.cost, root);
        if (inc.cost <= nlb + eps_ || check()) {  // (closed: no tree is below the bound)
            inc.lb = inc.cost <= nlb + eps_ ? inc.cost : 0.0;
            if (!stopped_) store(key, inc);
            return inc;
        }
        std::vector<int> order;
        for (int f = 0; f < F_; ++f)
            if (rc[f] < kInf) order.push_back(f);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rc[a] < rc[b]; });
        double floor = kInf;
        for (int f : order) {
            if (check()) break;
            floor = std::min(floor, split(depth, s, f, key, ub, inc, root));
        }
        inc.lb = stopped_ ? 0.0 : std::min(inc.cost, floor);
        store(key, inc);
        return inc;
    }

    static void with_literal(const std::vector<int>& key, int lit, std::vector<int>& out) {
        out = key;
        out.insert(std::upper_bound(out.begin(), out.end(), lit), lit);
    }

    // the split on f of the node (depth, s): its children solved within what the incumbent and
    // ub leave; the incumbent replaced when strictly better. Returns a lower bound of the split.
    double split(int depth, int s, int f, const std::vector<int>& key, double ub, BRes& inc, bool root) {
        std::vector<int> kc[2];
        with_literal(key, 2 * f, kc[0]);
        with_literal(key, 2 * f + 1, kc[1]);
        const Entry* e[2] = {lookup(kc[0]), lookup(kc[1])};
        double lb[2] = {e[0] ? e[0]->lb : 0.0, e[1] ? e[1]->lb : 0.0};
        double glb[2] = {0.0, 0.0};
        double T = std::min(inc.cost, ub);
        if (lb[0] + lb[1] >= T - eps_) return lb[0] + lb[1];
        // the children's rows (level depth - 1), their grouped-rows bounds, and their tables
        // unless both are answered
        const int* idx = rows_[depth][s].data();
        const int m = m_[depth][s];
        std::vector<int>& L = rows_[depth - 1][0];
        std::vector<int>& R = rows_[depth - 1][1];
        int nl = 0, nr = 0;
        for (int i = 0; i < m; ++i) {
            const int r = idx[i];
            if (P_.X[(size_t)rep_[r] * F_ + f]) R[nr++] = r;
            else L[nl++] = r;
        }
        m_[depth - 1][0] = nl;
        m_[depth - 1][1] = nr;
        for (int c = 0; c < 2; ++c)
            if (!e[c] || e[c]->lb < e[c]->cost - eps_) {
                glb[c] = group_lb(rows_[depth - 1][c].data(), m_[depth - 1][c]);
                lb[c] = std::max(lb[c], glb[c]);
            }
        if (lb[0] + lb[1] >= T - eps_) return lb[0] + lb[1];
        const int small = nl <= nr ? 0 : 1;
        bool built = false;
        auto child = [&](int c, double budget) {
            if (answered(e[c], budget)) {
                ++out_.evaluations;  // (a cache hit)
                return from_entry(*e[c]);
            }
            if (!built) {  // the smaller child's table from its rows, the other's by difference
                build_table(rows_[depth - 1][small].data(), m_[depth - 1][small], tab_[depth - 1][small]);
                subtract(tab_[depth][s], tab_[depth - 1][small], tab_[depth - 1][1 - small]);
                built = true;
            }
            return solve(depth - 1, c, kc[c], budget, glb[c]);
        };
        BRes res[2];
        // the smaller child first, below T less the other's bound; the other below what it left
        const int a = small, b = 1 - small;
        res[a] = child(a, T - lb[b]);
        lb[a] = std::max(lb[a], res[a].lb);
        if (stopped_ || lb[a] + lb[b] >= T - eps_) return lb[a] + lb[b];
        e[b] = lookup(kc[b]);  // (the first child's search may have filled it)
        res[b] = child(b, T - res[a].cost);
        lb[b] = std::max(lb[b], res[b].lb);
        const double c = res[0].cost + res[1].cost;
        if (c < T - eps_) {
            inc.cost = c;
            inc.sol = join(f, 0.5, 1, res[0].sol, res[1].sol);
            note_root(c, root);
        }
        return lb[0] + lb[1];
    }

    static BRes from_entry(const Entry& e) {
        BRes r;
        r.lb = e.lb;
        r.cost = e.cost;
        r.sol = e.sol;
        return r;
    }
};

template <int NC>
void run_binary_k(const BinRegParams& P, RegOutput& out) {
    std::atomic<bool> stop{false};
    tl::Clock clock(tl::steady::now(), P.time_limit, &stop);
    out.fixed_bytes = BinSearch<NC>::fixed_bytes(P);
    out.peak_bytes = out.fixed_bytes;
    if (out.fixed_bytes > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    BinSearch<NC> search(P, clock, out);
    BRes r = search.run();
    double lb = r.lb;
    if (search.stopped()) {  // the whole sample's grouped-rows or k-means bound (regression.h)
        RegParams RP;
        RP.n = P.n;
        RP.K = P.K;
        RP.y = P.y;
        RP.w = P.w;
        lb = std::max(search.root_bound(), kmeans_bound(RP, P.max_depth) * (1.0 - 1e-9));
    }
    finish_output(r.sol, r.cost, lb, search.stopped(), out);
}

}  // namespace binreg

// the optimal regression tree of 0/1 features (see the header comments)
inline void run_binary_regression(const BinRegParams& P, RegOutput& out) {
    if (P.K == 1)
        binreg::run_binary_k<4>(P, out);
    else
        binreg::run_binary_k<0>(P, out);
}

}  // namespace tl::cont
