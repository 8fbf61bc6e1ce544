// Top-k / optimal search: ranking a node's candidate features by an impurity criterion.
//
// A node's candidates are the features that split it, ordered by the key of their split
// (lower = better; ties by feature index) and cut to the k best. The key is the split's
// weighted impurity n_1 G(side 1) + n_0 G(side 0) quantised to 1e-9 of the node's weight (or
// minus the gain ratio), so that equal splits compare equal whatever the rounding.
//
// Criteria: entropy, Gini, Kearns-Mansour (side_cost), or a user G evaluated in Python in one
// batch per node (rank_custom). Unweighted entropy has fast paths over a table of x ln x.
// This header is the seam to the shared impurity definitions: side_cost is the one place that
// computes an impurity, from class counts.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "topk/problem.h"

namespace tltopk {

// x ln x for x = 0..n: a process-wide table grown on demand (a log per row costs a small search
// a fifth of its time), copied out under a lock so that concurrent searches never share it
inline void xlogx_table(int n, std::vector<double>& out) {
    static std::mutex mu;
    static std::vector<double> table(1, 0.0);
    std::lock_guard<std::mutex> lock(mu);
    if ((int)table.size() <= n) {
        int i = (int)table.size();
        table.resize((size_t)n + 1);
        for (; i <= n; ++i) table[i] = (double)i * std::log((double)i);
    }
    out.assign(table.begin(), table.begin() + n + 1);
}

// the criterion of one search, shared by its threads
struct Criterion {
    int code;  // CriterionCode
    bool gr;   // gain ratio
    CostFn cost;
    void* cost_ctx;
    mutable std::atomic<bool> cost_failed{false};  // set by a ranking thread
    std::vector<double> xl;  // x ln x for integers 0..n
    Criterion(const Options& o, int n) : code(o.criterion), gr(o.gain_ratio), cost(o.cost), cost_ctx(o.cost_ctx) {
        xlogx_table(n, xl);
    }
};

template <typename CT>
class Ranker {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    using Keyed = std::vector<std::pair<int64_t, int>>;

    const Criterion& cr;
    int d, C, K;
    bool all_k;
    std::atomic<bool>* stop;

    Ranker(const Criterion& crit, int d_, int C_, int K_, std::atomic<bool>* stopflag)
        : cr(crit), d(d_), C(C_), K(K_), all_k(K_ >= d_), stop(stopflag) {}

    // the unweighted-entropy fast paths apply
    bool fast2() const { return !W && C == 2 && cr.code == ENTROPY && !cr.gr; }
    bool fastC() const { return !W && cr.code == ENTROPY && !cr.gr; }

    inline double flog(double x) const { return x > 0 ? x * std::log(x) : 0.0; }
    // n_s * impurity(side) up to a constant factor; a: the side's class counts, ns its weight,
    // nsr its number of rows
    inline double side_cost(const double* a, double ns, int nsr) const {
        if (cr.code == ENTROPY) {
            double s = W ? flog(ns) : cr.xl[nsr];
            if (W) {
                for (int c = 0; c < C; ++c) s -= flog(a[c]);
            } else {
                for (int c = 0; c < C; ++c) s -= cr.xl[(int)a[c]];
            }
            return s;
        } else if (cr.code == GINI) {
            if (ns <= 0) return 0.0;
            double q = 0;
            for (int c = 0; c < C; ++c) q += a[c] * a[c];
            return ns - q / ns;
        } else {
            double s = 0;
            for (int c = 0; c < C; ++c) {
                double r = a[c] * (ns - a[c]);
                s += r > 0 ? std::sqrt(r) : 0.0;
            }
            return s;
        }
    }
    // the key of a split of cost `cost` (gain ratio: from the parent's cost pcost and the side
    // weights w1, w0)
    inline int64_t key_from_cost(double cost, double w1, double w0, double Wn, double pcost) const {
        if (!cr.gr) {
            if (cost < 0) cost = 0;
            return (int64_t)(cost * (1e9 / Wn) + 0.5);
        }
        double gain = (pcost - cost) / Wn;
        double p = w1 / Wn, q = w0 / Wn;
        double si = 0;
        if (p > 0) si -= p * std::log(p);
        if (q > 0) si -= q * std::log(q);
        double ratio = si > 0 ? gain / si : 0.0;
        if (ratio < 0) ratio = 0;
        return -(int64_t)(ratio * 1e9 + 0.5);
    }
    // key of feature j (lower = better); Aj: its one-side counts, T: node totals
    inline int64_t key_of(const CT* Aj, int n1, const CT* T, double Wn, int m, double pcost) const {
        double a1[64], a0[64];
        double* one = a1;
        double* zero = a0;
        std::vector<double> big1, big0;
        if (C > 64) {
            big1.resize(C);
            big0.resize(C);
            one = big1.data();
            zero = big0.data();
        }
        double w1 = 0;
        for (int c = 0; c < C; ++c) {
            one[c] = (double)Aj[c];
            zero[c] = (double)(T[c] - Aj[c]);
            w1 += one[c];
        }
        double w0 = W ? std::max(0.0, Wn - w1) : (double)(m - n1);
        if (!W) w1 = (double)n1;
        double cost = side_cost(one, w1, n1) + side_cost(zero, w0, m - n1);
        if (cost < 0) cost = 0;
        return key_from_cost(cost, w1, w0, Wn, pcost);
    }
    double parent_cost(const CT* T, double Wn, int m) const {
        double t[64];
        std::vector<double> big;
        double* tt = t;
        if (C > 64) {
            big.resize(C);
            tt = big.data();
        }
        for (int c = 0; c < C; ++c) tt[c] = (double)T[c];
        return side_cost(tt, Wn, m);
    }
    // the entropy cost of a split from the x ln x table (unweighted), two classes / any number
    static inline double ent_cost2(const double* xl, const CT* Aj, int n1, const CT* T, int m) {
        int a0 = (int)Aj[0], a1 = (int)Aj[1];
        return xl[n1] + xl[m - n1] - xl[a0] - xl[a1] - xl[(int)T[0] - a0] - xl[(int)T[1] - a1];
    }
    inline double ent_costC(const double* xl, const CT* Aj, int n1, const CT* T, int m) const {
        double cost = xl[n1] + xl[m - n1];
        for (int c = 0; c < C; ++c) {
            int a = (int)Aj[c];
            cost -= xl[a] + xl[(int)T[c] - a];
        }
        return cost;
    }
    static inline int64_t quantise(double cost, double scale) {
        if (cost < 0) cost = 0;
        return (int64_t)(cost * scale + 0.5);
    }
    // the key of feature j through the fastest applicable path (fast / fastC as fast2() /
    // fastC(), scale = 1e9 / Wn, pc = the parent's cost for the gain ratio)
    inline int64_t key(const CT* A, int j, int n1, const CT* T, double Wn, int m, double pc, bool fast, bool fastc,
                       double scale) const {
        const CT* Aj = A + (size_t)j * C;
        return fast ? quantise(ent_cost2(cr.xl.data(), Aj, n1, T, m), scale)
                    : fastc ? quantise(ent_costC(cr.xl.data(), Aj, n1, T, m), scale) : key_of(Aj, n1, T, Wn, m, pc);
    }

    // candidates of a node (rank order) from its counts A (d * C), row counts R, totals T
    void rank(const CT* A, const int32_t* R, const CT* T, double Wn, int m, std::vector<int>& out, Keyed& keyed) {
        out.clear();
        keyed.clear();
        if (cr.code == USER) {
            rank_custom(A, R, T, Wn, m, out, keyed);
            return;
        }
        const double pc = cr.gr ? parent_cost(T, Wn, m) : 0.0;
        const bool fast = fast2(), fastc = fastC();
        const double scale = 1e9 / Wn;
        if (all_k || K >= d) {
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                keyed.emplace_back(key(A, j, n1, T, Wn, m, pc, fast, fastc, scale), j);
            }
            std::sort(keyed.begin(), keyed.end());
            for (auto& p : keyed) out.push_back(p.second);
            return;
        }
        rank_topk(A, R, T, Wn, m, pc, fast, fastc, scale, out);
    }

  private:
    // the K best (key, j) kept sorted, j ascending so that an equal key never displaces an
    // earlier feature
    struct TopK {
        int K, cnt = 0;
        int64_t kk[1024];
        int jj[1024];
        std::vector<int64_t> bigk;
        std::vector<int> bigj;
        int64_t* ks;
        int* js;
        explicit TopK(int K_) : K(K_), ks(kk), js(jj) {
            if (K > 1024) {
                bigk.resize(K);
                bigj.resize(K);
                ks = bigk.data();
                js = bigj.data();
            }
        }
        // insert (key, j); false when it is not among the K best
        inline bool push(int64_t key, int j) {
            if (cnt == K) {
                if (key >= ks[K - 1]) return false;
                --cnt;
            }
            int p = cnt;
            while (p > 0 && ks[p - 1] > key) {
                ks[p] = ks[p - 1];
                js[p] = js[p - 1];
                --p;
            }
            ks[p] = key;
            js[p] = j;
            ++cnt;
            return true;
        }
    };

    void rank_topk(const CT* A, const int32_t* R, const CT* T, double Wn, int m, double pc, bool fast, bool fastc,
                   double scale, std::vector<int>& out) {
        TopK top(K);
        if (fast || fastc) {
            // unweighted entropy: skip a feature on its raw cost when it is clearly above the
            // K-th best key (two quanta of margin), else quantise as everywhere else
            const double* xl = cr.xl.data();
            double thr = std::numeric_limits<double>::infinity();
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                const CT* Aj = A + (size_t)j * C;
                double cost = fast ? ent_cost2(xl, Aj, n1, T, m) : ent_costC(xl, Aj, n1, T, m);
                if (cost > thr) continue;
                if (top.push(quantise(cost, scale), j) && top.cnt == K) thr = ((double)top.ks[K - 1] + 2.0) / scale;
            }
        } else {
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                top.push(key_of(A + (size_t)j * C, n1, T, Wn, m, pc), j);
            }
        }
        for (int i = 0; i < top.cnt; ++i) out.push_back(top.js[i]);
    }

    // user criterion: one batched call for the two sides of every splitting feature (and the
    // parent for the gain ratio); keys as key_of makes them
    std::vector<double> cb_in, cb_out;
    std::vector<int> cb_j;
    void rank_custom(const CT* A, const int32_t* R, const CT* T, double Wn, int m, std::vector<int>& out,
                     Keyed& keyed) {
        cb_j.clear();
        for (int j = 0; j < d; ++j)
            if (R[j] != 0 && R[j] != m) cb_j.push_back(j);
        const int nf = (int)cb_j.size();
        const int rows = 2 * nf + 1;
        cb_in.assign((size_t)rows * C, 0.0);
        cb_out.assign(rows, 0.0);
        for (int q = 0; q < nf; ++q) {
            const CT* Aj = A + (size_t)cb_j[q] * C;
            for (int c = 0; c < C; ++c) {
                cb_in[(size_t)(2 * q) * C + c] = (double)Aj[c];
                cb_in[(size_t)(2 * q + 1) * C + c] = std::max(0.0, (double)(T[c] - Aj[c]));
            }
        }
        for (int c = 0; c < C; ++c) cb_in[(size_t)(2 * nf) * C + c] = (double)T[c];
        if (cr.cost_failed.load() || cr.cost(cr.cost_ctx, cb_in.data(), rows, C, cb_out.data()) != 0) {
            cr.cost_failed.store(true);
            stop->store(true);
            return;  // no candidates: the node becomes a leaf; the caller raises the error
        }
        const double pcost = cb_out[2 * nf];
        for (int q = 0; q < nf; ++q) {
            const int j = cb_j[q];
            double cost = cb_out[2 * q] + cb_out[2 * q + 1];
            double w1 = 0;
            if (cr.gr)
                for (int c = 0; c < C; ++c) w1 += cb_in[(size_t)(2 * q) * C + c];
            keyed.emplace_back(key_from_cost(cost, w1, std::max(0.0, Wn - w1), Wn, pcost), j);
        }
        std::sort(keyed.begin(), keyed.end());
        const int KK = all_k ? (int)keyed.size() : std::min<int>(K, (int)keyed.size());
        for (int i = 0; i < KK; ++i) out.push_back(keyed[i].second);
    }
};

}  // namespace tltopk
