// Greedy top-down tree growth (ID3/C4.5/CART depth-first, and BuildTopDownDT best-first).
//
// Input: every feature pre-coded to small integers ("codes", 0..n_codes-1, ascending in the raw
// value; see core/coding.h). A numeric feature's candidate conditions are `code >= k`
// (k = 1..n_codes-1, i.e. x >= threshold[k-1]); a categorical one's are `code == v` (one-vs-rest).
//
// The impurity is a template parameter (a policy of core/criteria.h: entropy, Gini,
// Kearns-Mansour, or a user G called back in batches). Two split finders share one growth loop:
// * SortedFinder (exact mode): per feature, the rows sorted by code; every node owns the same
//   position range [start, end) in every feature's array, kept by a stable partition when the
//   node is split (O(d * n_node) per node, no sorting after the first radix sort); n_jobs
//   threads share a large node's features (the same tree for any number of threads).
// * HistFinder (histogram mode, few codes): per node a histogram (feature x code x class) built
//   from the node's rows by the kernel of core/histogram.h, the larger child by
//   subtraction from the parent.
//
// Both score a candidate by the weighted child impurity W_L*G(L) + W_R*G(R) (lower is better),
// scanning features in index order and codes ascending; scores within a tolerance are ties, won
// by the widest split (the most of its column's thresholds cutting the node's rows the same way:
// the widest gap in the column's training values), then by the lowest feature, then the lowest
// threshold (Picker, types.h).
//
// Missing values (scikit-learn >= 1.3's rule): a feature with missing values has one more code,
// miss_code[f], above every present value's. At a node where the feature has missing rows, every
// threshold is tried with the missing rows sent right, then (a second scan) sent left, then the
// "missing-only" split (present values left, missing right: code >= miss_code); a feature whose
// values are all missing at the node is skipped, as scikit-learn does. The same
// scan order as scikit-learn's. A split whose node had no missing value in
// its feature sends missing values to the child with more training weight (right on a tie).
//
// Files: types.h (the shared types and the selection rule, Picker), sorted.h (SortedFinder),
// hist.h (HistFinder), and this one: the growth loop (GrowerT) and the entry point grow().
// core/coding.h codes the features; core/weakest_link.h prunes the tree (ccp_alpha).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/coding.h"
#include "core/criteria.h"
#include "core/limits.h"
#include "hist.h"
#include "ranked.h"
#include "sorted.h"
#include "types.h"

namespace tl::greedy {

// ----------------------------------------------------------------------------------------------
template <template <class> class FinderT, class Crit>
class GrowerT {
public:
    const Problem& P;
    const Params& prm;
    const Crit& crit;
    FinderT<Crit> finder;
    Result& res;
    double Wtot = 0.0;
    RankTable rank_table;  // a ranked criterion: a new node's medians and deviation (node_ranked)
    RankWork rank_work;

    tl::steady::time_point t0 = tl::steady::now();

    GrowerT(const Problem& p, const Params& pr, const Crit& c, Result& r)
        : P(p), prm(pr), crit(c), finder(make_finder(p, c, pr)), res(r) { finder.mwl = pr.min_weight_leaf; }

    // checked before every split (a node's split is the unit of work: the root's over every row
    // is the largest): Ctrl-C, then the time limit; the nodes not split yet stay leaves
    bool stop_now() {
        if (res.stopped) return true;
        if (tl::interrupted()) res.stopped = 1;
        else if (prm.time_limit > 0.0
                 && std::chrono::duration<double>(tl::steady::now() - t0).count() >= prm.time_limit) res.stopped = 2;
        return res.stopped != 0;
    }

    static FinderT<Crit> make_finder(const Problem& p, const Crit& c, const Params& pr) {
        if constexpr (std::is_same<FinderT<Crit>, HistFinder<Crit>>::value)
            return FinderT<Crit>(p, c, pr.min_samples_leaf, pr.n_jobs, pr.hist_par_min);
        else if constexpr (std::is_constructible<FinderT<Crit>, const Problem&, const Crit&, int64_t, int>::value)
            return FinderT<Crit>(p, c, pr.min_samples_leaf, pr.n_jobs);
        else
            return FinderT<Crit>(p, c, pr.min_samples_leaf);
    }

    int64_t add_node(const double* counts, int64_t n_samples, double W, double wimp,
                     double lo = -std::numeric_limits<double>::infinity(),
                     double hi = std::numeric_limits<double>::infinity()) {
        const int64_t id = res.n_nodes++;
        res.left.push_back(-1);
        res.right.push_back(-1);
        res.feature.push_back(-2);
        res.split_code.push_back(0);
        res.split_low.push_back(0);
        res.missing_left.push_back(0);
        res.n_samples.push_back(n_samples);
        const double p1 = P.C == 2 && W > 0.0 ? counts[1] / W : 0.0;
        if (P.mono && W > 0.0 && (p1 < lo || p1 > hi)) {  // monotonic constraints: the fraction clipped to the bounds
            const double q = std::min(std::max(p1, lo), hi);
            res.value.push_back(W * (1.0 - q));
            res.value.push_back(W * q);
        } else {
            for (int c = 0; c < P.C; ++c) res.value.push_back(counts[c]);
        }
        // scikit-learn's units (entropy in bits, Gini 1 - sum p^2)
        res.impurity.push_back(W > 0.0 ? Crit::sklearn_scale * std::max(0.0, wimp / W) : 0.0);
        return id;
    }

    bool terminal(const double* counts, int64_t n_samples, int64_t depth, double wimp) const {
        if (prm.max_depth >= 0 && depth >= prm.max_depth) return true;
        if (n_samples < 2 || n_samples < 2 * prm.min_samples_leaf || n_samples < prm.min_samples_split) return true;
        const double W = crit.weight(counts, P.C);
        bool pure;
        if constexpr (Crit::ranked) pure = Crit::pure_deviation(wimp, W);
        else pure = crit.pure(counts, P.C, W);
        return pure || W < 2.0 * prm.min_weight_leaf;
    }

    // a ranked criterion: the node of these rows gets its medians in its value channels (c[1 + k]);
    // returns its weighted deviation
    double node_ranked(const std::vector<int32_t>& rows, double* c) {
        const int K = (P.C - 1) / 2;
        std::vector<double> med((size_t)K);
        const double dev = ranked_node(P, rank_table, rank_work, (int64_t)rows.size(),
                                       [&](int64_t i) { return rows[(size_t)i]; }, med.data());
        for (int k = 0; k < K; ++k) c[1 + k] = med[(size_t)k];
        return dev;
    }

    // the node's best split: over every feature, or (max_features, splitter="random") over drawn
    // features and conditions (the sorted finder only)
    void find(Node& nd, const double* tot) {
        if constexpr (std::is_same<FinderT<Crit>, SortedFinder<Crit>>::value) {
            if (prm.max_features > 0 || prm.random_split) {
                const int64_t mtry = prm.max_features > 0 ? prm.max_features : P.d;
                finder.find_drawn(nd, tot, mtry, prm.random_split != 0, prm.seed);
                return;
            }
        }
        finder.find(nd, tot);
    }

    // global purity gain of a node's best split (000 Fig. 1): (W*G(node) - best score) / W_total
    double global_gain(const Node& nd) const { return crit.gain(nd.wimp, nd.best.score, nd.W, Wtot); }

    bool splittable(const Node& nd) const {
        if (nd.best.feature < 0) return false;
        if (prm.min_impurity_decrease > 0.0
            && Crit::sklearn_scale * (global_gain(nd) + GAIN_TOL) < prm.min_impurity_decrease) return false;
        return true;
    }

    // split nd; fills the children (with their best splits when they may be split later)
    void split(Node& nd, Node& L, Node& R, bool& openL, bool& openR) {
        const int C = P.C;
        std::vector<double> cl(C, 0.0), cr(C, 0.0);
        int64_t nl, nr, nm;
        if constexpr (std::is_same<FinderT<Crit>, HistFinder<Crit>>::value) finder.next_id = res.n_nodes;
        finder.mark(nd, cl.data(), cr.data(), nl, nr, nm);
        const double WL = crit.weight(cl.data(), C), WR = crit.weight(cr.data(), C);
        // no missing value of the feature at this node: missing values go to the heavier child
        res.missing_left[nd.id] = nm > 0 ? nd.best.mleft : (uint8_t)(WL > WR);
        if constexpr (Crit::ranked) {
            L.wimp = node_ranked(finder.lrows, cl.data());
            R.wimp = node_ranked(finder.rrows, cr.data());
        } else {
            L.wimp = crit.wimp(cl.data(), WL);
            R.wimp = crit.wimp(cr.data(), WR);
        }
        L.lo = R.lo = nd.lo;
        L.hi = R.hi = nd.hi;
        if (P.mono && P.mono[nd.best.feature] != 0) {  // scikit-learn's bounds: the children's middle value
            const double mid = 0.5 * (cl[1] / WL + cr[1] / WR);
            if (P.mono[nd.best.feature] > 0) { L.hi = mid; R.lo = mid; }
            else { L.lo = mid; R.hi = mid; }
        }
        L.id = add_node(cl.data(), nl, WL, L.wimp, L.lo, L.hi);
        R.id = add_node(cr.data(), nr, WR, R.wimp, R.lo, R.hi);
        res.left[nd.id] = L.id;
        res.right[nd.id] = R.id;
        res.feature[nd.id] = nd.best.feature;
        res.split_code[nd.id] = nd.best.code;
        res.split_low[nd.id] = nd.best.low;
        L.depth = R.depth = nd.depth + 1;
        L.W = WL; R.W = WR;
        L.hist = R.hist = -1;
        openL = !terminal(cl.data(), nl, L.depth, L.wimp);
        openR = !terminal(cr.data(), nr, R.depth, R.wimp);
        if (openL || openR) finder.partition(nd, nl, L, R, openL, openR);
        finder.release(nd);
        if (openL) { find(L, cl.data()); if (!splittable(L)) { openL = false; finder.release(L); } }
        if (openR) { find(R, cr.data()); if (!splittable(R)) { openR = false; finder.release(R); } }
    }

    void grow() {
        const int C = P.C;
        std::vector<double> tot(C, 0.0);
        for (int64_t i = 0; i < P.n; ++i) add_row<Crit>(P, tot.data(), i, Crit::moments ? 0 : (int32_t)P.y[i], P.w[i]);
        Wtot = crit.weight(tot.data(), C);
        Node root;
        root.depth = 0;
        root.W = Wtot;
        if constexpr (Crit::ranked) {
            std::vector<int32_t> all((size_t)P.n);
            for (int64_t i = 0; i < P.n; ++i) all[(size_t)i] = (int32_t)i;
            root.wimp = node_ranked(all, tot.data());
        } else {
            root.wimp = crit.wimp(tot.data(), Wtot);
        }
        root.id = add_node(tot.data(), P.n, Wtot, root.wimp);
        if (terminal(tot.data(), P.n, 0, root.wimp)) return;
        if (stop_now()) return;
        finder.init_root(root);
        find(root, tot.data());
        if (!splittable(root)) { finder.release(root); return; }
        if (prm.max_leaves < 0) {
            std::vector<Node> stack{root};
            while (!stack.empty() && !stop_now()) {
                Node nd = stack.back();
                stack.pop_back();
                Node L, R;
                bool oL, oR;
                split(nd, L, R, oL, oR);
                if (oR) { finder.trim(R); stack.push_back(R); }
                if (oL) stack.push_back(L);
            }
        } else {
            // frontier ordered by (global gain descending, node id ascending); the leaf split is the
            // one created first among those within GAIN_TOL of the largest gain
            std::vector<Node> slots{root};
            std::set<std::tuple<double, int64_t, size_t>> frontier{{-global_gain(root), root.id, 0}};
            int64_t leaves = 1;
            while (leaves < prm.max_leaves && !frontier.empty() && !stop_now()) {
                auto pick = frontier.begin();
                const double top = -std::get<0>(*pick);
                for (auto it = std::next(pick); it != frontier.end() && -std::get<0>(*it) >= top - GAIN_TOL; ++it)
                    if (std::get<1>(*it) < std::get<1>(*pick)) pick = it;
                const size_t si = std::get<2>(*pick);
                frontier.erase(pick);
                Node nd = slots[si];
                Node L, R;
                bool oL, oR;
                split(nd, L, R, oL, oR);
                ++leaves;
                // the split node's slot is reused for its left child
                if (oL) { finder.trim(L); slots[si] = L; frontier.insert({-global_gain(L), L.id, si}); }
                if (oR) { finder.trim(R); slots.push_back(R); frontier.insert({-global_gain(R), R.id, slots.size() - 1}); }
            }
            for (auto& e : frontier) finder.release(slots[std::get<2>(e)]);
        }
    }
};

template <class Crit>
inline void grow_with(const Problem& P, const Params& prm, Crit& crit, Result& res) {
    crit.setup(P.w, P.n, P.C);
    if (prm.hist && prm.max_features <= 0 && !prm.random_split) {
        GrowerT<HistFinder, Crit> g(P, prm, crit, res);
        if (prm.hist_budget >= 0.0) g.finder.budget = prm.hist_budget;
        if (prm.hist_digests) g.finder.digests = &res.hist_digests;
        g.grow();
        res.leaves_known = P.leaf_of != nullptr;
        res.threaded_builds = g.finder.threaded_builds;
    } else {
        GrowerT<SortedFinder, Crit> g(P, prm, crit, res);
        g.grow();
    }
}

inline void grow(const Problem& P, const Params& prm, Result& res) {
    if (prm.criterion < 0) {
        tl::Callback crit;
        crit.fn = prm.cost_cb;
        crit.ctx = prm.cost_ctx;
        grow_with(P, prm, crit, res);
        res.cost_failed = crit.failed;
        return;
    }
    if (P.stats) {
        tl::with_regression(prm.criterion, [&](auto crit) { grow_with(P, prm, crit, res); });
        return;
    }
    tl::with_builtin(prm.criterion, [&](auto crit) { grow_with(P, prm, crit, res); });
}

}  // namespace tl::greedy
