// Continuous optimal search, part 3 of 6: interval bounds over one feature's thresholds.
//
// With L(p), R(p) the optimal errors of the left / right children when the first p rows (in
// feature order) go left, L is non-decreasing in p, R non-increasing, and both change by at most
// the weight that moves. From the evaluated thresholds nearest to an interval (lo below it, hi
// above it), every threshold inside gets a lower bound; whole intervals whose bound reaches the
// incumbent are dropped and interval ends are shrunk in O(1) per threshold. The search then
// evaluates the interval's middle threshold and queues both halves (breadth first).
// With `on` false (ablation) every bound is 0: every threshold is evaluated.
#pragma once

#include <vector>

#include "data.h"

namespace tl::cont {
namespace detail {

struct Interval {
    int a, b;    // thresholds a..b (indices among the feature's boundaries) still open
    int lo, hi;  // the evaluated neighbours (-1 / K: none)
};

struct ThresholdIntervals {
    bool on = true;
    int K = 0;                     // number of thresholds (boundaries between distinct values)
    std::vector<int> pos;          // boundary k: the first pos[k] rows of the feature go left
    std::vector<double> wpre;      // prefix weights along the feature's order
    std::vector<double> lbL, lbR;  // lower bounds of both children at evaluated thresholds
    std::vector<Interval> queue;
    size_t head = 0;

    void init(const Entry* vf, int m, const Columns& D) {
        pos.clear();
        wpre.assign(m + 1, 0.0);
        for (int i = 0; i < m; ++i) {
            if (i > 0 && vf[i].rank != vf[i - 1].rank) pos.push_back(i);
            wpre[i + 1] = wpre[i] + D.wof(vf[i].row);
        }
        K = (int)pos.size();
        lbL.assign(K, 0.0);
        lbR.assign(K, 0.0);
        queue.clear();
        queue.push_back(Interval{0, K - 1, -1, K});
        head = 0;
    }

    bool pending() const { return head < queue.size(); }
    Interval next() { return queue[head++]; }

    // weight between boundaries i and j (i <= j)
    double moved(int i, int j) const { return wpre[pos[j]] - wpre[pos[i]]; }

    // lower bounds (bl, br) of both children at threshold k from the neighbours lo and hi
    void bound_at(int k, int lo, int hi, double& bl, double& br) const {
        double l = 0.0, r = 0.0;
        if (on) {
            if (lo >= 0) {
                l = lbL[lo];
                r = std::max(r, lbR[lo] - moved(lo, k));
            }
            if (hi < K) {
                r = std::max(r, lbR[hi]);
                l = std::max(l, lbL[hi] - moved(k, hi));
            }
        }
        bl = l;
        br = r;
    }

    // a bound of every threshold of the interval (L non-decreasing, R non-increasing)
    double whole(const Interval& iv) const {
        if (!on) return 0.0;
        return (iv.lo >= 0 ? lbL[iv.lo] : 0.0) + (iv.hi < K ? lbR[iv.hi] : 0.0);
    }

    // drop the interval's ends whose bound reaches ub; false when nothing is left
    bool shrink(Interval& iv, double ub, double eps) const {
        if (iv.a > iv.b) return false;
        if (!on) return true;
        if (whole(iv) >= ub - eps) return false;
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
        return iv.a <= iv.b;
    }

    // how much the children's bounds may be loosened for threshold k of the interval (the
    // weight that moves between k and the interval's farther end)
    double slack(const Interval& iv, int k) const {
        if (!on) return 0.0;
        return std::max(moved(iv.a, k), moved(k, iv.b));
    }

    void record(int k, double cl, double cr) {
        lbL[k] = cl;
        lbR[k] = cr;
    }

    void split(const Interval& iv, int k) {
        if (iv.a < k) queue.push_back(Interval{iv.a, k - 1, iv.lo, k});
        if (k < iv.b) queue.push_back(Interval{k + 1, iv.b, k, iv.hi});
    }

    // the least bound over the queued intervals from index `from` on (what a stop leaves open)
    double open_bound(size_t from) const {
        double lb = std::numeric_limits<double>::infinity();
        for (size_t q = from; q < queue.size(); ++q) {
            const Interval& r = queue[q];
            if (r.a <= r.b) lb = std::min(lb, whole(r));
        }
        return lb;
    }

    // after a stop at threshold k (children bounds cl, cr) of interval iv: its unevaluated parts
    double open_around(const Interval& iv, int k, double cl, double cr) const {
        double lb = std::numeric_limits<double>::infinity();
        if (iv.a < k) lb = std::min(lb, (on && iv.lo >= 0 ? lbL[iv.lo] : 0.0) + cr);
        if (k < iv.b) lb = std::min(lb, cl + (on && iv.hi < K ? lbR[iv.hi] : 0.0));
        return lb;
    }
};

}  // namespace detail
}  // namespace tl::cont
