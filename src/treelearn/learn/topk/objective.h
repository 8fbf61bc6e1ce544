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
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tl::topk {

template <typename CT>
struct Misclassification {
    static constexpr bool W = std::is_same<CT, double>::value;

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

}  // namespace tl::topk
