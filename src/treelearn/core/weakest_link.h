// Weakest-link pruning (Breiman et al. 1984, ch. 3), the one routine behind the greedy learner's
// `ccp_alpha` (scikit-learn's minimal cost-complexity pruning) and treelearn.prune's
// cost-complexity path (CART and M-CART complexities).
//
// A tree of m nodes (left/right children, -1 at a leaf, every child's id above its parent's) and
// r[i], the cost of node i as a leaf (scikit-learn: weight fraction x impurity; CART: the
// misclassified weight over the total). For an internal node t of the current tree, with T_t its
// current subtree and L its number of leaves, the link strength is
//     g(t) = (r[t] - R(T_t)) / (L(T_t) - 1)                   (CART, comp == nullptr)
//     g(t) = (r[t] - R(T_t)) / (comp[L] - comp[L - L(T_t) + 1]) (comp: the complexity of a tree
//                                                                 by its number of leaves L)
// (with comp, a t whose collapse does not lower the complexity has g = +inf). Every step
// collapses the weakest link, the node of smallest g, into a leaf: the lowest id among those
// within tol * max(1, |g_min|) of the minimum, or all of them (all_ties); when every g is +inf,
// the lowest id among the smallest r[t] - R(T_t) (within tol, absolute). The steps stop before
// one whose g_min exceeds alpha_stop, or when the tree is a leaf. R(T_t) is summed afresh over
// the current leaves at every step, children before parents (O(m) per step, no recursion).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tl {

struct WeakestLinkSteps {
    std::vector<double> g_min;    // per step: the smallest link strength (+inf: none finite)
    std::vector<double> risk;     // per step: R of the whole tree after it
    std::vector<int64_t> leaves;  // per step: leaves of the tree after it
};

// collapse_step[i]: the step at which node i became a leaf (-1: never); see the header comment.
inline void weakest_link(int64_t m, const int64_t* left, const int64_t* right, const double* r, const double* comp,
                         double alpha_stop, bool all_ties, double tol, int64_t* collapse_step, WeakestLinkSteps& out) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<uint8_t> inner(m, 0);  // internal node of the current tree
    std::vector<double> R(m);
    std::vector<int64_t> L(m);
    std::vector<double> g(m), dR(m);
    std::vector<int64_t> stack;
    for (int64_t i = 0; i < m; ++i) {
        collapse_step[i] = -1;
        inner[i] = left[i] >= 0;
    }
    auto sums = [&]() {  // R and leaves of every current subtree (children after parents)
        for (int64_t v = m - 1; v >= 0; --v) {
            if (!inner[v]) {
                R[v] = r[v];
                L[v] = 1;
            } else {
                R[v] = R[left[v]] + R[right[v]];
                L[v] = L[left[v]] + L[right[v]];
            }
        }
    };
    auto collapse = [&](int64_t v, int64_t step) {
        stack.assign(1, v);
        while (!stack.empty()) {
            const int64_t u = stack.back();
            stack.pop_back();
            if (!inner[u]) continue;
            inner[u] = 0;
            stack.push_back(left[u]);
            stack.push_back(right[u]);
        }
        collapse_step[v] = step;
    };
    if (m == 0) return;
    sums();
    for (int64_t step = 0;; ++step) {
        const int64_t LT = L[0];
        double best = inf;
        bool any = false;
        for (int64_t v = 0; v < m; ++v) {
            if (!inner[v]) continue;
            any = true;
            dR[v] = r[v] - R[v];
            if (comp == nullptr) {
                g[v] = dR[v] / (double)(L[v] - 1);
            } else {
                const double dC = comp[LT] - comp[LT - L[v] + 1];
                g[v] = dC > 0 ? dR[v] / dC : inf;
            }
            if (g[v] < best) best = g[v];
        }
        if (!any || best > alpha_stop) break;
        if (std::isinf(best)) {  // no collapse lowers the complexity: the smallest loss of risk
            double bd = inf;
            for (int64_t v = 0; v < m; ++v)
                if (inner[v] && dR[v] < bd) bd = dR[v];
            for (int64_t v = 0; v < m; ++v)
                if (inner[v] && dR[v] <= bd + tol) { collapse(v, step); break; }
        } else {
            const double cut = best + tol * std::max(1.0, std::fabs(best));
            for (int64_t v = 0; v < m; ++v) {  // ascending ids: an ancestor comes before its subtree
                if (!inner[v] || g[v] > cut) continue;
                collapse(v, step);
                if (!all_ties) break;
            }
        }
        sums();
        out.g_min.push_back(best);
        out.risk.push_back(R[0]);
        out.leaves.push_back(L[0]);
    }
}

}  // namespace tl
