// Top-k / optimal search: the objective, a policy type (template parameter of the search).
//
// The search minimises an additive per-row loss over the leaves; an objective says what a leaf
// costs given its class counts and what the best depth-1 subtrees cost. The search's bounds
// assume what holds for every such loss below: a subtree never costs more than the leaf it
// replaces, a cost is >= 0, and removing a row lowers the optimum by at most that row's weight
// (the similarity bound).
//
// Misclassification<CT>: the (weighted) number of training errors; CT is int32_t for unit
// weights (exact integer counts) and double for sample weights.
// Penalised<CT>: errors plus a penalty lam per leaf (cost-complexity: scikit-learn's ccp_alpha
// times the total weight; GOSDT's lambda, STreeD's cost_complexity). A split may then cost more
// than the leaf it replaces: `sparse` tells the search to keep the leaf as a node's first
// incumbent, so a split is taken only when it lowers the cost (ties: the leaf). The similarity
// bound stays sound: an optimal tree of S costs at most w(S' \ S) more on S' (same leaves).
//
// A policy is an object (the search holds one): its parameters travel with it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tl::topk {

template <typename CT>
struct Misclassification {
    static constexpr bool W = std::is_same<CT, double>::value;
    static constexpr bool sparse = false;  // a split never costs more than its leaf

    explicit Misclassification(double = 0.0) {}

    // error of a leaf with class totals tot (total weight Wsum): all rows but the majority's
    template <typename T>
    static double leaf(const T* tot, int C, double Wsum) {
        double mx = 0;
        for (int c = 0; c < C; ++c) mx = std::max(mx, (double)tot[c]);
        return W ? std::max(0.0, Wsum - mx) : Wsum - mx;
    }

    // error of a split into two leaves: one side's class counts Aj, the node's totals T (m rows,
    // total weight Wn)
    static inline double split(const CT* Aj, const CT* T, int C, double Wn, int m) {
        double mx1 = 0, mx0 = 0, w1 = 0;
        for (int c = 0; c < C; ++c) {
            double a = (double)Aj[c], z = (double)(T[c] - Aj[c]);
            w1 += a;
            if (a > mx1) mx1 = a;
            if (z > mx0) mx0 = z;
        }
        if (!W) return (double)m - mx1 - mx0;
        return std::max(0.0, w1 - mx1) + std::max(0.0, (Wn - w1) - mx0);
    }

    // minimum depth <= 1 error (unit weights, every feature a candidate) of a node whose per-
    // feature one-side counts are P (or P - Q when Q is given); T: its class totals, m its rows.
    // A feature that does not split the node scores exactly the leaf's error, and a split never
    // scores more, so the minimum over every feature (no test, no early exit: the loop
    // vectorises) is the optimal depth <= 1 error.
    static double best_depth1_all(const CT* P, const CT* Q, const CT* T, int m, int d, int C) {
        if (C == 2) {
            const int T0 = (int)T[0], T1 = (int)T[1];
            int bi = m - std::max(T0, T1);
            if (Q) {
                for (int j = 0; j < d; ++j) {
                    const int a0 = (int)(P[2 * j] - Q[2 * j]), a1 = (int)(P[2 * j + 1] - Q[2 * j + 1]);
                    bi = std::min(bi, m - std::max(a0, a1) - std::max(T0 - a0, T1 - a1));
                }
            } else {
                for (int j = 0; j < d; ++j) {
                    const int a0 = (int)P[2 * j], a1 = (int)P[2 * j + 1];
                    bi = std::min(bi, m - std::max(a0, a1) - std::max(T0 - a0, T1 - a1));
                }
            }
            return (double)bi;
        }
        int mx = 0;
        for (int c = 0; c < C; ++c) mx = std::max(mx, (int)T[c]);
        int bi = m - mx;
        for (int j = 0; j < d && bi > 0; ++j) {
            int m1 = 0, m0 = 0;
            for (int c = 0; c < C; ++c) {
                const int a = Q ? (int)(P[(size_t)j * C + c] - Q[(size_t)j * C + c]) : (int)P[(size_t)j * C + c];
                m1 = std::max(m1, a);
                m0 = std::max(m0, (int)T[c] - a);
            }
            bi = std::min(bi, m - m1 - m0);
        }
        return (double)bi;
    }
};

template <typename CT>
struct Penalised {
    using M = Misclassification<CT>;
    static constexpr bool sparse = true;
    double lam;  // cost of one leaf, in (weighted) errors

    explicit Penalised(double leaf_penalty) : lam(leaf_penalty) {}

    template <typename T>
    double leaf(const T* tot, int C, double Wsum) const {
        return M::leaf(tot, C, Wsum) + lam;
    }
    inline double split(const CT* Aj, const CT* T, int C, double Wn, int m) const {
        return M::split(Aj, T, C, Wn, m) + 2.0 * lam;
    }
    // min(leaf, best split): M's minimum b is over the leaf and the splits, so b + 2 lam is the
    // best split's cost whenever that split beats the leaf by more than lam
    double best_depth1_all(const CT* P, const CT* Q, const CT* T, int m, int d, int C) const {
        int mx = 0;
        for (int c = 0; c < C; ++c) mx = std::max(mx, (int)T[c]);
        const double leaf_err = (double)(m - mx);
        return std::min(leaf_err + lam, M::best_depth1_all(P, Q, T, m, d, C) + 2.0 * lam);
    }
};

}  // namespace tl::topk
