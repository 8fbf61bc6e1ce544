// Minimal cost-complexity pruning with scikit-learn's `ccp_alpha` semantics (Breiman et al.,
// weakest link): R(t) = (W_t / W_root) * impurity(t) in scikit-learn's units; for an internal
// node t of the current tree, with T_t its current subtree, the effective alpha is
// (R(t) - R(T_t)) / (|leaves(T_t)| - 1), R(T_t) the sum over its leaves. While the smallest
// effective alpha (ties: the lowest node id) is <= alpha, that node is collapsed into a leaf.
// Iterative (no recursion): O(nodes) per collapse.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace tl::greedy {

// left/right: children (-1: leaf), every child's id larger than its parent's. cut[i] = 1 for the
// collapsed nodes (roots of removed subtrees, none inside another); returns their number.
inline int64_t ccp_prune(int64_t m, const int64_t* left, const int64_t* right, const double* r, double alpha,
                         uint8_t* cut) {
    std::vector<int64_t> parent(m, -1), leaves(m, 1);
    std::vector<double> rb(r, r + m);          // R of the current subtree
    std::vector<uint8_t> inner(m, 0);          // internal node of the current tree
    for (int64_t i = 0; i < m; ++i) {
        cut[i] = 0;
        if (left[i] >= 0) { parent[left[i]] = i; parent[right[i]] = i; inner[i] = 1; }
    }
    for (int64_t i = m - 1; i >= 0; --i) {
        if (left[i] < 0) continue;
        leaves[i] = leaves[left[i]] + leaves[right[i]];
        rb[i] = rb[left[i]] + rb[right[i]];
    }
    int64_t n_cut = 0;
    std::vector<int64_t> stack;
    while (true) {
        double best = std::numeric_limits<double>::infinity();
        int64_t bi = -1;
        for (int64_t i = 0; i < m; ++i) {
            if (!inner[i]) continue;
            const double a = (r[i] - rb[i]) / (double)(leaves[i] - 1);
            if (a < best) { best = a; bi = i; }
        }
        if (bi < 0 || best > alpha) break;
        // collapse bi: its internal descendants leave the tree (and any earlier cut below it)
        stack.assign(1, bi);
        while (!stack.empty()) {
            const int64_t v = stack.back();
            stack.pop_back();
            if (cut[v]) { cut[v] = 0; --n_cut; }
            if (!inner[v]) continue;
            inner[v] = 0;
            stack.push_back(left[v]);
            stack.push_back(right[v]);
        }
        cut[bi] = 1;
        ++n_cut;
        const int64_t dl = leaves[bi] - 1;
        const double dr = rb[bi] - r[bi];
        leaves[bi] = 1;
        rb[bi] = r[bi];
        for (int64_t a = parent[bi]; a >= 0; a = parent[a]) { leaves[a] -= dl; rb[a] -= dr; }
    }
    return n_cut;
}

}  // namespace tl::greedy
