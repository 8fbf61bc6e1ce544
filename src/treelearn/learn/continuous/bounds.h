// Continuous optimal search, part 3 of 7: interval bounds over one feature's thresholds, and the
// fixed order in which a feature's thresholds are met.
//
// With L(p), R(p) the optimal errors of the left / right children when the first p rows (in
// feature order) go left, L is non-decreasing in p, R non-increasing, and both change by at most
// the weight that moves. From the evaluated thresholds nearest to an interval (lo below it, hi
// above it), every threshold inside gets a lower bound; whole intervals whose bound reaches the
// incumbent are dropped and interval ends are shrunk in O(1) per threshold. Every bound is also at
// least the node's own lower bound (`floor`): a split cannot be better than the node's optimum.
//
// The order (the tie rule's, search.h): threshold k of K sits in the cell [k/K, (k+1)/K) of the
// unit interval; its level is the smallest l >= 1 such that the cell holds a point j / 2^l
// (0 < j < 2^l), and thresholds are met by level, then by k: the middle first, then the quarters,
// and so on (a bisection whose middles are fixed by K alone). Any run [a, b] of thresholds has a
// single threshold of least level, its first in this order; the open intervals wait in a heap
// keyed by their first threshold, so the search meets the thresholds it does not skip in exactly
// this order, whatever its bounds skipped: the first optimal threshold it meets is the first
// optimal threshold of the order, and no tie needs searching for.
// The ends are virtual: positions -1 (every row right) and K (every row left), never evaluated;
// the side that holds every row is the node itself one level shallower, so its optimum there
// (`end_lb`: exact at a node of budget 2, the depth-1 pass's best) bounds it, and a threshold k
// gets R(k) >= end_lb - (weight left of k), L(k) >= end_lb - (weight right of k) from them.
// With `on` false (ablation) every bound is the floor: every threshold is evaluated.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "data.h"

namespace tl::cont {
namespace detail {

// the position of threshold k in the fixed order: (level << 32) | k; lower comes first
typedef int64_t OrderKey;

// the first threshold of the run [a, b] of K thresholds in the fixed order (a <= b < K), and its key
inline OrderKey first_in_run(int a, int b, int K, int& k) {
    const uint64_t UK = (uint64_t)K;
    for (int l = 1; l < 63; ++l) {
        const uint64_t s = (uint64_t)1 << l;  // (K < 2^31: l <= 32 always finds one, products < 2^63)
        uint64_t j = ((uint64_t)a * s + UK - 1) / UK;  // the least j with j / 2^l >= a / K
        if (j == 0) j = 1;
        if (j * UK < (uint64_t)(b + 1) * s) {  // j / 2^l < (b + 1) / K: inside the run
            k = (int)(j * UK / s);
            return ((OrderKey)l << 32) | (OrderKey)k;
        }
    }
    k = a;
    return ((OrderKey)62 << 32) | (OrderKey)a;
}

inline OrderKey order_key(int k, int K) {
    int kk;
    return first_in_run(k, k, K, kk);
}

struct Interval {
    int a, b;      // thresholds a..b (indices among the feature's boundaries) still open
    int lo, hi;    // the evaluated neighbours (-1 / K: none)
    OrderKey key;  // the key of the run's first threshold (at the time it was queued)
};

struct ThresholdIntervals {
    bool on = true;
    int K = 0;                     // number of thresholds (boundaries between distinct values)
    double floor = 0.0;            // the node's lower bound: no split is better
    double end_lb = 0.0;           // the virtual ends' bound of their full side (0: none)
    double wtot = 0.0;             // the node's weight
    bool unit = true;              // unit weights (wpre unused)
    std::vector<int> pos;          // boundary k: the first pos[k] rows of the feature go left
    std::vector<double> wpre;      // prefix weights along the feature's order
    std::vector<double> lbL, lbR;  // lower bounds of both children at evaluated thresholds
    std::vector<Interval> heap;    // the open runs, least key on top

    void init(const Entry* vf, int m, const Columns& D, double node_lb, double ends_lb = 0.0) {
        pos.clear();
        unit = !D.weighted;
        if (!unit) {
            wpre.resize(m + 1);
            wpre[0] = 0.0;
            for (int i = 0; i < m; ++i) {
                if (i > 0 && vf[i].rank != vf[i - 1].rank) pos.push_back(i);
                wpre[i + 1] = wpre[i] + D.wt[vf[i].row];
            }
        } else {  // (unit weights: the prefix weight of i rows is i)
            for (int i = 1; i < m; ++i)
                if (vf[i].rank != vf[i - 1].rank) pos.push_back(i);
        }
        K = (int)pos.size();
        floor = node_lb;
        end_lb = ends_lb;
        wtot = w_at(m);
        // (only evaluated thresholds' bounds are read: record() writes them first)
        if ((int)lbL.size() < K) {
            lbL.resize(K);
            lbR.resize(K);
        }
        heap.clear();
        kept_at.clear();
        kept[0].clear();
        kept[1].clear();
        if (K > 0) push(Interval{0, K - 1, -1, K, 0});
    }

    bool pending() const { return !heap.empty(); }
    OrderKey top_key() const { return heap.front().key; }
    Interval next() {
        std::pop_heap(heap.begin(), heap.end(), later);
        Interval iv = heap.back();
        heap.pop_back();
        return iv;
    }
    // queue a run (its key computed here); empty runs are dropped
    void push(Interval iv) {
        if (iv.a > iv.b) return;
        int k;
        iv.key = first_in_run(iv.a, iv.b, K, k);
        heap.push_back(iv);
        std::push_heap(heap.begin(), heap.end(), later);
    }
    // the first threshold of a run in the fixed order
    int first(const Interval& iv) const {
        int k;
        first_in_run(iv.a, iv.b, K, k);
        return k;
    }

    // the weight of the first i rows in the feature's order
    double w_at(int i) const { return unit ? (double)i : wpre[i]; }
    // weight between boundaries i and j (i <= j)
    double moved(int i, int j) const { return w_at(pos[j]) - w_at(pos[i]); }

    // lower bounds (bl, br) of both children at threshold k from the neighbours lo and hi
    void bound_at(int k, int lo, int hi, double& bl, double& br) const {
        double l = 0.0, r = 0.0;
        if (on) {
            if (lo >= 0) {
                l = lbL[lo];
                r = std::max(r, lbR[lo] - moved(lo, k));
            } else {
                r = std::max(r, end_lb - w_at(pos[k]));
            }
            if (hi < K) {
                r = std::max(r, lbR[hi]);
                l = std::max(l, lbL[hi] - moved(k, hi));
            } else {
                l = std::max(l, end_lb - (wtot - w_at(pos[k])));
            }
        }
        bl = l;
        br = r;
    }

    // a bound of every threshold of the interval (L non-decreasing, R non-increasing)
    double whole(const Interval& iv) const {
        if (!on) return floor;
        return std::max(floor, (iv.lo >= 0 ? lbL[iv.lo] : 0.0) + (iv.hi < K ? lbR[iv.hi] : 0.0));
    }

    // drop the interval's ends whose bound reaches ub; false when nothing is left
    bool shrink(Interval& iv, double ub, double eps) const {
        if (iv.a > iv.b) return false;
        if (whole(iv) >= ub - eps) return false;
        if (!on) return true;
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

    // the children's trees at evaluated thresholds (warm starts: nodes of depth budget >= 3):
    // kept[s][kept_at[k]] for threshold k (kept_at sized on the first keep; -1: none)
    std::vector<int> kept_at;
    std::vector<Sol> kept[2];
    std::vector<double> scratch;

    void keep(int k, const Res* left, const Res* right) {
        if (kept_at.empty()) kept_at.assign(K, -1);
        kept_at[k] = (int)kept[0].size();
        kept[0].push_back(left ? left->sol : leaf_sol());
        kept[1].push_back(right ? right->sol : leaf_sol());
    }

    // the least error that side s's kept tree at iv's neighbours makes on the view's m rows
    // (infinity: none kept)
    double warm_error(int s, const Interval& iv, const Entry* v, int m, const Columns& D) {
        double best = std::numeric_limits<double>::infinity();
        if (kept_at.empty()) return best;
        for (int k : {iv.lo, iv.hi}) {
            if (k < 0 || k >= K || kept_at[k] < 0) continue;
            const Sol& t = kept[s][kept_at[k]];
            if (t.size() <= 1) continue;
            scratch.resize((size_t)D.C * t.size());
            best = std::min(best, D.tree_error(t, v, m, scratch.data()));
        }
        return best;
    }

    // the runs either side of the evaluated threshold k of iv, queued
    void split(const Interval& iv, int k) {
        push(Interval{iv.a, k - 1, iv.lo, k, 0});
        push(Interval{k + 1, iv.b, k, iv.hi, 0});
    }

    // the least bound over the queued intervals (what a stop leaves open)
    double open_bound() const {
        double lb = std::numeric_limits<double>::infinity();
        for (const Interval& r : heap)
            if (r.a <= r.b) lb = std::min(lb, whole(r));
        return lb;
    }

    // after a stop at threshold k (children bounds cl, cr) of interval iv: its unevaluated parts
    double open_around(const Interval& iv, int k, double cl, double cr) const {
        double lb = std::numeric_limits<double>::infinity();
        if (iv.a < k) lb = std::min(lb, (on && iv.lo >= 0 ? lbL[iv.lo] : 0.0) + cr);
        if (k < iv.b) lb = std::min(lb, cl + (on && iv.hi < K ? lbR[iv.hi] : 0.0));
        return std::max(lb, floor);
    }

  private:
    static bool later(const Interval& x, const Interval& y) { return x.key > y.key; }
};

}  // namespace detail
}  // namespace tl::cont
