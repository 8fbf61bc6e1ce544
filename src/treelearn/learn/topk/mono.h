// Top-k / optimal search: monotonic constraints (scikit-learn's monotonic_cst, two classes).
//
// scikit-learn's sufficient condition, on hard labels: at a split on a feature constrained +1
// (bit 1 = the larger values), every leaf of the bit-0 side predicts a label <= every leaf of
// the bit-1 side (>= for -1). With labels {0, 1}: the bit-0 side predicts 0 everywhere or the
// bit-1 side predicts 1 everywhere. A side that predicts one label costs what one leaf of that
// label costs (the weight of the other class there), so the constrained optimum of a node has
// the unconstrained state space: a split on a constrained feature costs
//     min(a + OPT(side 1), OPT(side 0) + b)
// with a (b) the cost of side 0 (side 1) as one leaf of its forced label, OPT the constrained
// optimum of the side one level down; a >= OPT(side 0), b >= OPT(side 1), so the split never
// costs less than OPT(0) + OPT(1) (every unconstrained lower bound stays sound) nor more than a
// leaf. Ties: side 0 collapsed (the search and the rebuild use the same rule).
#pragma once
#include <algorithm>
#include <cstdint>

namespace tl::topk {

struct MonoSides {
    double a, b;  // side 0 / side 1 as one leaf of its forced label
    int la, lb;   // the forced labels (class codes)
};

// s: the split feature's constraint (+1 / -1); t0, t1: the sides' class totals (C = 2)
template <typename T>
inline MonoSides mono_sides(int s, const T* t0, const T* t1) {
    const int la = s > 0 ? 0 : 1, lb = 1 - la;
    return MonoSides{std::max(0.0, (double)t0[1 - la]), std::max(0.0, (double)t1[1 - lb]), la, lb};
}
// the constrained split's cost from the sides' optima
inline double mono_cost(const MonoSides& m, double o0, double o1) { return std::min(m.a + o1, o0 + m.b); }
// the side the optimum collapses to a leaf (0 on ties)
inline int mono_collapse(const MonoSides& m, double o0, double o1) { return m.a + o1 <= o0 + m.b ? 0 : 1; }

// a depth-1 split on a feature constrained s: both sides leaves; a1: the bit-1 side's class
// totals, T the node's
template <typename CT>
inline double mono_depth1(int s, const CT* a1, const CT* T) {
    const CT t0[2] = {(CT)(T[0] - a1[0]), (CT)(T[1] - a1[1])};
    const double o0 = std::max(0.0, (double)std::min(t0[0], t0[1]));
    const double o1 = std::max(0.0, (double)std::min(a1[0], a1[1]));
    return mono_cost(mono_sides(s, t0, a1), o0, o1);
}

}  // namespace tl::topk
