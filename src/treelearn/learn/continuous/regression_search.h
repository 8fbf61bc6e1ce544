// Optimal regression trees over every threshold, part 2 of 2: depth-first branch and bound.
// Part 1 (regression.h): parameters, statistics, depth-1 scans, the depth-2 evaluation.
//
// solve(view, depth, ub) returns a tree of the node's rows, its SSE and a lower bound of the
// node's optimum; when the optimum is below ub (less the tie tolerance), the tree is optimal.
// At a node: the leaf, then the best depth-1 tree (one pass over every feature), then, per
// feature in the order of its depth-1 SSE, its thresholds in bisection order (the middle of every
// open interval, the ends taken as bisection points too) with the interval bound of regression.h: an interval
// whose bound reaches the incumbent is skipped. Nodes of budget 2 use the depth-2 evaluation
// (both children's best depth-1 trees in one pass, no view split); deeper nodes split the view
// (the smaller child first) and solve the children with budgets: the first child below the
// incumbent less the other's bound, the second below what the first left. Recursion depth is
// the tree depth. The tie rule: a candidate replaces the incumbent only when strictly better
// (by the tie tolerance): the leaf before any split, a depth-1 tree before deeper ones.
//
// Top-k (top_k > 0): at a node of budget >= 2 only its top_k best splits by one-split SSE
// (ties: feature order, then threshold) are candidates, each with its children solved the same
// way; top_k 1 is the greedy tree.
//
// Limits: the clock and Ctrl-C flag of core/limits.h, read at every evaluation (adaptive
// stride); a stop returns the best tree found, with the bound proven so far (0 below a node
// left unfinished). Memory: the ranked columns, one view buffer per depth level and per-level
// scratch, all counted before the search starts (memory_error when over the cap).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "core/limits.h"
#include "regression.h"

namespace tl::cont {
namespace detail {

struct RegRes {
    double lb = 0.0, cost = 0.0;
    Sol sol;
};

// What the threads of one search share at the root: each takes the next feature of the root's
// order and searches its thresholds alone, against the best SSE any thread has found. A tree at
// position k must beat the trees of earlier positions, and may tie those of later ones (their
// SSE plus twice the tie tolerance is its bound), so the features' results, combined in order
// with the one-thread tie rule, give the tree one thread finds.
struct RegShare {
    std::mutex mu;
    std::vector<double> best;  // per position of the root's order: the least SSE found there
    std::atomic<int> next{0};
    double eps = 0.0;

    double bound(int k) {
        std::lock_guard<std::mutex> g(mu);
        double b = std::numeric_limits<double>::infinity();
        for (int j = 0; j < (int)best.size(); ++j) b = std::min(b, j < k ? best[j] : best[j] + 2.0 * eps);
        return b;
    }
    void publish(int k, double c) {
        std::lock_guard<std::mutex> g(mu);
        if (k >= 0 && k < (int)best.size()) best[k] = std::min(best[k], c);
    }
};

// one thread's part of a shared root: the root's leaf and depth-1 tree (pre), and per position
// of its feature order that the thread searched, the best tree and the least interval bound
struct RootPart {
    RegRes pre;
    std::vector<int> order;
    std::vector<RegRes> res;
    std::vector<double> floor;
    std::vector<char> done;
    bool settled = false;  // the root is a leaf or its depth-1 tree (nothing to search)
};

template <int KK>
class RegSearch {
  public:
    RegSearch(const RegParams& P, const Columns& cols, const RegRows<KK>& rows, tl::Clock& clock, RegOutput& out)
        : P_(P), cols_(cols), rows_(rows), scans_(cols, rows, std::max(1, P.min_samples_leaf), P.eps, P.leaf_penalty), clock_(clock),
          out_(out), eps_(P.eps), lam_(P.leaf_penalty) {
        const int D = std::max(0, P.max_depth);
        buf_.resize(D + 1);
        for (int d = first_split_level(); d <= D; ++d) buf_[d].resize((size_t)cols.F * cols.n);
        side_.assign(cols.n, 0);
        side32_.assign(cols.n, 0);
        lo_.resize(cols.n);
        hi_.resize(cols.n);
        lvl_.resize(D + 1);
        t0_ = std::chrono::steady_clock::now();
    }

    // the levels whose nodes split their view: budget >= 3 (>= 2 without the depth-2 evaluation)
    int first_split_level() const { return P_.use_d2 ? 3 : 2; }

    // bytes of the search's own buffers for these parameters (before they are allocated)
    static double buffer_bytes(const RegParams& P, int n, int F) {
        const int D = std::max(0, P.max_depth);
        const int first = P.use_d2 ? 3 : 2;
        const int levels = std::max(0, D - first + 1);
        const double fbounds = P.use_d2 && D >= 2 ? 16.0 * F * (double)n : 0.0;  // (Level::gl, gr)
        return 8.0 * F * (double)n * levels + 21.0 * n + (16.0 * n + 24.0 * F) * (D + 1) + fbounds;
    }

    RegRes run(double ub) {
        return solve(cols_.root_view.data(), cols_.n, P_.max_depth, ub > 0.0 ? ub : kInf, true);
    }

    bool stopped() const { return stopped_; }

    // this thread's part of the root's features (RegShare): the positions it takes, in turn
    void run_shared(double ub, RegShare& S, RootPart& part) {
        const Entry* view = cols_.root_view.data();
        const int m = cols_.n, depth = P_.max_depth;
        ub = ub > 0.0 ? ub : kInf;
        Level& L = lvl_[depth];
        Acc<KK> tot;
        part.pre = leaf_and_depth1(view, m, depth, L.d1, tot);
        if (depth <= 1 || m < 2 * scans_.msl || settled(part.pre) || check()) {
            part.settled = true;
            part.pre.lb = stopped_ ? 0.0 : part.pre.cost;
            return;
        }
        L.order.clear();
        for (int f = 0; f < cols_.F; ++f)
            if (L.d1[f].pos >= 0) L.order.push_back(f);
        std::stable_sort(L.order.begin(), L.order.end(), [&](int a, int b) { return L.d1[a].cost < L.d1[b].cost; });
        const int K = (int)L.order.size();
        part.order = L.order;
        part.res.assign(K, RegRes());
        part.floor.assign(K, kInf);
        part.done.assign(K, 0);
        share_ = &S;
        for (int k = S.next++; k < K && !stopped_; k = S.next++) {
            share_pos_ = k;
            RegRes inc = part.pre;
            L.floor = kInf;
            search_feature(view, m, depth, L.order[k], ub, inc, true);
            part.res[k] = inc;
            part.floor[k] = L.floor;
            part.done[k] = 1;  // (a feature stopped early: its best tree so far; no bound is claimed)
        }
        share_ = nullptr;
    }

    // search only the marked thresholds at nodes of budget >= 2 (Scans::marks; the warm start)
    void restrict_to(const std::vector<std::vector<int32_t>>* marks) { scans_.marks = marks; }

  private:
    struct Level {  // per-level scratch of one node
        std::vector<int> pos;
        std::vector<double> lbl, lbr;
        std::vector<std::pair<int, int>> stack;
        std::vector<int> order;
        std::vector<Split1> d1;
        // the depth-2 evaluation's feature bounds per evaluated position j (F values each): of
        // its left side at gl[j F..], of its right side at gr[j F..] (Scans::depth2_sides)
        std::vector<double> gl, gr;
        // the children's trees at evaluated positions (levels that split their view): those of
        // position j at kept[s][kept_at[j]] (-1: none); a neighbour's tree bounds a child's SSE
        std::vector<int> kept_at;
        std::vector<Sol> kept[2];
        double floor = 0.0;  // the least bound of a split evaluated or skipped at the node
    };

    const RegParams& P_;
    const Columns& cols_;
    const RegRows<KK>& rows_;
    Scans<KK> scans_;
    tl::Clock& clock_;
    RegOutput& out_;
    double eps_;
    double lam_;  // the penalty per leaf (RegParams::leaf_penalty)
    std::vector<std::vector<Entry>> buf_;
    std::vector<uint8_t> side_;
    std::vector<int32_t> side32_;
    std::vector<Entry> lo_, hi_;  // the depth-2 evaluation's lists of one feature by side
    std::vector<double> kys_, kws_;  // the k-means bound's scratch
    std::vector<int> kidx_;
    std::vector<Acc<KK>> wacc_;  // (warm_sse's leaf sums)
    long long km_tries_ = 0, km_hits_ = 0;
    std::vector<Level> lvl_;
    RegShare* share_ = nullptr;  // the root's threads (run_shared), or none
    int share_pos_ = -1;         // the root feature's position this thread searches
    bool stopped_ = false;
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    static constexpr double kSecondSlack = 1.5;  // (evaluate: the second child's budget factor)
    std::chrono::steady_clock::time_point t0_;

    bool check() {
        if (!stopped_ && clock_.timed_out()) stopped_ = true;
        return stopped_;
    }

    void note_root(double cost, bool root) {
        if (!root) return;
        if (share_) share_->publish(share_pos_, cost);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        out_.history.emplace_back(s, cost);
    }

    // a leaf or depth-1 incumbent of no SSE (within the tie tolerance): no deeper tree is better
    // (it has more leaves: with a penalty per leaf it costs more)
    bool settled(const RegRes& r) const { return r.cost - lam_ * (r.sol.size() <= 1 ? 1 : 2) <= eps_; }

    // the node's leaf and best depth-1 tree (the incumbent), and every feature's best split in d1
    // (d1's costs are SSE; the incumbent's the objective, with the penalty per leaf)
    RegRes leaf_and_depth1(const Entry* view, int m, int depth, std::vector<Split1>& d1, Acc<KK>& tot) {
        rows_.totals(view, m, tot);
        RegRes r;
        const double leaf = rows_.sse(tot);
        r.cost = leaf + lam_;
        r.sol = leaf_sol();
        d1.assign(cols_.F, Split1());
        if (depth == 0 || m < 2 * scans_.msl || leaf <= eps_) return r;
        int bf = -1;
        for (int f = 0; f < cols_.F; ++f) {
            d1[f] = scans_.depth1(view + (size_t)f * m, m, tot);
            if (d1[f].pos >= 0 && d1[f].cost + 2.0 * lam_ < r.cost - eps_) {
                r.cost = d1[f].cost + 2.0 * lam_;
                bf = f;
            }
        }
        if (bf >= 0) r.sol = side1_sol(cols_, bf, d1[bf].brl, d1[bf].brr);
        return r;
    }

    RegRes solve(const Entry* view, int m, int depth, double ub, bool root = false) {
        ++out_.nodes;
        Level& L = lvl_[depth];
        Acc<KK> tot;
        RegRes inc = leaf_and_depth1(view, m, depth, L.d1, tot);
        note_root(inc.cost, root);
        if (depth <= 1 || m < 2 * scans_.msl || settled(inc) || check()) {
            inc.lb = (depth <= 1 || m < 2 * scans_.msl || settled(inc)) ? inc.cost : 0.0;
            return inc;
        }
        // a node whose budget binds: no tree below it when the k-means bound reaches it (tried
        // while it prunes at least one node in 8, after 64 tries: it costs a sort of the node)
        if (P_.use_kmeans && P_.top_k == 0 && !root && depth <= 3 && ub < inc.cost - eps_ &&
            (km_tries_ < 64 || 8 * km_hits_ >= km_tries_)) {
            ++km_tries_;
            const double kb = kmeans_rows(P_, view, m, depth, kys_, kws_, kidx_) + lam_;  // (and a leaf at least)
            if (kb >= ub - eps_) {
                ++km_hits_;
                inc.lb = std::min(kb, inc.cost);
                return inc;
            }
        }
        // the features in the order of their best depth-1 SSE (ties: column order)
        L.order.clear();
        for (int f = 0; f < cols_.F; ++f)
            if (L.d1[f].pos >= 0) L.order.push_back(f);
        std::stable_sort(L.order.begin(), L.order.end(), [&](int a, int b) { return L.d1[a].cost < L.d1[b].cost; });
        if (P_.top_k > 0) return topk(view, m, depth, ub, inc, root, tot);
        L.floor = kInf;
        for (int f : L.order) {
            search_feature(view, m, depth, f, ub, inc, root);
            if (stopped_) break;
        }
        // every split left out had a bound at or above min(incumbent, ub), and every split a bound
        // of at least the floor (the least bound of an evaluated split or a skipped interval): a
        // child's bound above its budget widens its parent's skipped intervals
        inc.lb = stopped_ ? 0.0 : std::max(0.0, std::min(inc.cost, std::max(ub, L.floor)));
        return inc;
    }

    // what a candidate must beat (less the tie tolerance): the incumbent and the node's budget ub
    double threshold(const RegRes& inc, double ub) const { return std::min(inc.cost, ub); }

    // a root's budget with what the other threads found (RegShare::bound)
    double root_ub(double ub, bool root) const { return root && share_ ? std::min(ub, share_->bound(share_pos_)) : ub; }

    // one feature's thresholds in bisection order with the interval bound
    void search_feature(const Entry* view, int m, int depth, int f, double ub, RegRes& inc, bool root) {
        Level& L = lvl_[depth];
        const Entry* vf = view + (size_t)f * m;
        scans_.positions(vf, m, f, L.pos);
        const int K = (int)L.pos.size();
        if (K == 0) return;
        L.lbl.assign(K, 0.0);
        L.lbr.assign(K, 0.0);
        const bool intervals = P_.use_intervals && (scans_.msl == 1 || (depth == 2 && P_.use_d2));
        if (depth == 2 && P_.use_d2 && intervals) {  // (read only at evaluated positions: no fill)
            L.gl.resize((size_t)K * cols_.F);
            L.gr.resize((size_t)K * cols_.F);
        }
        const std::vector<int>& pos = L.pos;  // (a child's solve uses the levels below only)
        // ja, jb: the evaluated positions either side of j (-1: none), whose bounds hold for j's sides
        if (depth >= first_split_level() && !cols_.rank_of.empty()) {
            L.kept_at.assign(K, -1);
            L.kept[0].clear();
            L.kept[1].clear();
        }
        auto eval = [&](int j, double lbl_hint, double lbr_hint, int ja, int jb) {
            evaluate(view, m, depth, f, pos[j], j, lbl_hint, lbr_hint, ub, inc, root, ja, jb, intervals);
            L.floor = std::min(L.floor, L.lbl[j] + L.lbr[j]);
        };
        L.stack.clear();
        if (P_.use_ends) {  // (both ends evaluated first)
            ub = root_ub(ub, root);
            eval(0, 0.0, 0.0, -1, -1);
            ub = root_ub(ub, root);
            if (K > 1 && !stopped_) eval(K - 1, intervals ? L.lbl[0] : 0.0, 0.0, 0, -1);
            if (K > 2) L.stack.emplace_back(0, K - 1);
        } else {
            // the ends are virtual: positions -1 (an empty left side) and K (an empty right side),
            // whose bound is 0; an end's own evaluation bounds nothing the interval does not (one
            // side of it holds min_samples_leaf rows), so it waits for its interval like any other
            L.stack.emplace_back(-1, K);
        }
        auto lbl = [&](int a) { return intervals && a >= 0 ? L.lbl[a] : 0.0; };
        auto lbr = [&](int b) { return intervals && b < K ? L.lbr[b] : 0.0; };
        while (!L.stack.empty() && !stopped_) {
            auto [a, b] = L.stack.back();
            L.stack.pop_back();
            ub = root_ub(ub, root);
            const double bound = lbl(a) + lbr(b);
            if (bound >= threshold(inc, ub) - eps_) {
                L.floor = std::min(L.floor, bound);
                continue;
            }
            const int mid = a + (b - a) / 2;
            eval(mid, lbl(a), lbr(b), a, b < K ? b : -1);
            if (b - mid > 1) L.stack.emplace_back(mid, b);
            if (mid - a > 1) L.stack.emplace_back(a, mid);
        }
    }

    // the split "first p rows of feature f go left" (position j of the feature's list): its
    // children's bounds into the level's lbl/lbr[j], the incumbent replaced when strictly better
    // (ja, jb: the evaluated positions either side, -1: none: their children's trees bound this
    // split's children, and with intervals their feature bounds hold for its left and right side)
    void evaluate(const Entry* view, int m, int depth, int f, int p, int j, double lbl_hint, double lbr_hint,
                  double ub, RegRes& inc, bool root, int ja = -1, int jb = -1, bool intervals = false) {
        if (check()) return;
        ++out_.evaluations;
        Level& L = lvl_[depth];
        const Entry* vf = view + (size_t)f * m;
        const int brl = vf[p - 1].rank, brr = vf[p].rank;
        if (depth == 2 && P_.use_d2) {
            ++out_.d2_evaluations;
            Side1 a, b;
            const double T0 = threshold(inc, ub);
            const double cap[2] = {T0 - lbr_hint, T0 - lbl_hint};
            const bool fb = intervals && L.gl.size() >= (size_t)(j + 1) * cols_.F && P_.use_fbounds;
            const size_t F = (size_t)cols_.F;
            const double* glb[2] = {fb && ja >= 0 ? L.gl.data() + ja * F : nullptr,
                                    fb && jb >= 0 ? L.gr.data() + jb * F : nullptr};
            double* gout[2] = {fb ? L.gl.data() + j * F : nullptr, fb ? L.gr.data() + j * F : nullptr};
            scans_.depth2_sides(view, m, f, p, side_.data(), lo_.data(), hi_.data(), cap, a, b, fb ? glb : nullptr,
                                fb ? gout : nullptr);
            L.lbl[j] = a.bound;
            L.lbr[j] = b.bound;
            const double c = a.cost + b.cost;
            if (c < threshold(inc, ub) - eps_) {
                inc.cost = c;
                inc.sol = join(f, cols_.thr_of(f, brl, brr), brr, side1_sol(cols_, a.f, a.brl, a.brr),
                               side1_sol(cols_, b.f, b.brl, b.brr));
                note_root(c, root);
            }
            return;
        }
        Entry* out = buf_[depth].data();
        cols_.split_view(view, m, f, p, out, side32_.data());
        const Entry* lv = out;
        const Entry* rv = out + (size_t)cols_.F * p;
        const int mr = m - p;
        const double T = threshold(inc, ub);
        const bool left_first = P_.large_first ? p >= mr : p <= mr;
        // the first child below T less the other's bound, the second below what the first left
        const double hint_other = left_first ? lbr_hint : lbl_hint;
        // a child's budget is at most (ties included) the SSE of a neighbouring split's same child
        // tree on its rows: its optimum is then found exactly, with what it prunes by
        auto budget = [&](int s, const Entry* v, int rows, double b) {
            return std::min(b, warm_sse(L, s, ja, jb, v, rows) + 2.0 * eps_);
        };
        RegRes first = left_first ? solve(lv, p, depth - 1, budget(0, lv, p, T - hint_other))
                                  : solve(rv, mr, depth - 1, budget(1, rv, mr, T - hint_other));
        double lb_first = first.lb, lb_second = hint_other;
        RegRes second;
        bool done = false;
        if (!stopped_ && first.lb + hint_other < T - eps_) {
            // the second child gets half again what the first leaves it: the bound it returns is
            // what prunes the intervals next to this threshold (lbl[a] + lbr[j]: a bound just at
            // its budget prunes none of them, and depth 3 then evaluated nearly every threshold)
            const double left = T - first.cost;
            const double B2 = left > 0.0 ? kSecondSlack * left : left;
            second = left_first ? solve(rv, mr, depth - 1, budget(1, rv, mr, B2)) : solve(lv, p, depth - 1, budget(0, lv, p, B2));
            lb_second = std::max(second.lb, hint_other);
            done = true;
        }
        if (!L.kept_at.empty() && j < (int)L.kept_at.size()) {
            L.kept_at[j] = (int)L.kept[0].size();
            const Sol* ls = left_first ? &first.sol : done ? &second.sol : nullptr;
            const Sol* rs = left_first ? (done ? &second.sol : nullptr) : &first.sol;
            L.kept[0].push_back(ls ? *ls : leaf_sol());
            L.kept[1].push_back(rs ? *rs : leaf_sol());
        }
        L.lbl[j] = left_first ? lb_first : lb_second;
        L.lbr[j] = left_first ? lb_second : lb_first;
        if (!done) return;
        const double c = first.cost + second.cost;
        if (c < threshold(inc, ub) - eps_) {
            inc.cost = c;
            inc.sol = left_first ? join(f, cols_.thr_of(f, brl, brr), brr, first.sol, second.sol)
                                 : join(f, cols_.thr_of(f, brl, brr), brr, second.sol, first.sol);
            note_root(c, root);
        }
    }

    // the least SSE (leaf means refitted) that side s's kept tree at position ja or jb of level L
    // makes on the view's m rows (infinity: none kept). With min_samples_leaf > 1 only the tree
    // of the neighbour whose side is a subset of these rows (ja's left side, jb's right side): its
    // leaves then keep at least their rows; a superset's tree may leave fewer than
    // min_samples_leaf rows in a leaf here, so its SSE bounds nothing
    double warm_sse(Level& L, int s, int ja, int jb, const Entry* v, int m) {
        double best = kInf;
        if (L.kept_at.empty() || !P_.use_warm_children) return best;
        for (int k : {ja, jb}) {
            if (k < 0 || k >= (int)L.kept_at.size() || L.kept_at[k] < 0) continue;
            if (scans_.msl > 1 && k != (s == 0 ? ja : jb)) continue;
            const Sol& t = L.kept[s][L.kept_at[k]];
            if (t.size() <= 1) continue;
            wacc_.resize(t.size());
            for (Acc<KK>& a : wacc_) rows_.clear(a);
            for (int i = 0; i < m; ++i) rows_.add(wacc_[cols_.leaf_of(t, v[i].row)], v[i].row);
            double c = 0.0;
            for (size_t q = 0; q < t.size(); ++q)
                if (t[q].feature < 0) c += rows_.sse(wacc_[q]) + lam_;
            best = std::min(best, c);
        }
        return best;
    }

    // Top-k: the node's top_k best splits by one-split SSE, each with its children's subtrees
    RegRes topk(const Entry* view, int m, int depth, double ub, RegRes inc, bool root, const Acc<KK>& tot) {
        struct Cand {
            double cost;
            int f, pos;
        };
        std::vector<Cand> cands;
        for (int f = 0; f < cols_.F; ++f)
            scans_.all_splits(view + (size_t)f * m, m, tot,
                              [&](double c, int pos, int, int) { cands.push_back(Cand{c, f, pos}); });
        auto better = [](const Cand& a, const Cand& b) {
            if (a.cost != b.cost) return a.cost < b.cost;
            return a.f != b.f ? a.f < b.f : a.pos < b.pos;
        };
        const size_t k = std::min(cands.size(), (size_t)P_.top_k);
        std::partial_sort(cands.begin(), cands.begin() + k, cands.end(), better);
        Level& L = lvl_[depth];
        L.lbl.assign(1, 0.0);
        L.lbr.assign(1, 0.0);
        for (size_t i = 0; i < k && !stopped_; ++i)
            evaluate(view, m, depth, cands[i].f, cands[i].pos, 0, 0.0, 0.0, ub, inc, root);
        inc.lb = 0.0;  // (a restricted search proves nothing)
        return inc;
    }
};

// The warm start's thresholds: per feature, the first rank change at or after each of the
// positions j n / cells (j = 1 .. cells - 1) of the sorted column, and the boundary next to the
// missing values' rank; as prefix counts (Scans::marks). False when no feature has more than
// 2 cells distinct values (the restricted search would be the full one).
inline bool quantile_marks(const Columns& cols, int cells, std::vector<std::vector<int32_t>>& marks) {
    const int n = cols.n;
    bool useful = false;
    for (int f = 0; f < cols.F; ++f) useful = useful || (int)cols.vals[f].size() > 2 * cells;
    if (!useful) return false;
    marks.assign(cols.F, std::vector<int32_t>());
    for (int f = 0; f < cols.F; ++f) {
        const int nr = (int)cols.vals[f].size();
        std::vector<int32_t>& c = marks[f];
        c.assign(nr + 1, 0);
        const Entry* v = cols.root_view.data() + (size_t)f * n;
        int i = 1;
        for (int j = 1; j < cells; ++j) {
            i = std::max(i, (int)(((long long)j * n + cells - 1) / cells));
            while (i < n && v[i].rank == v[i - 1].rank) ++i;
            if (i >= n) break;
            c[v[i].rank + 1] = 1;
        }
        if (nr >= 2 && std::isnan(cols.vals[f][0])) c[1 + 1] = 1;
        if (nr >= 2 && std::isnan(cols.vals[f][nr - 1])) c[nr - 1 + 1] = 1;
        for (int r = 1; r <= nr; ++r) c[r] += c[r - 1];
    }
    return true;
}

inline void write_reg_tree(const Sol& s, RegOutput& out) {
    const int nn = (int)s.size();
    out.feature.assign(nn, -1);
    out.left.assign(nn, -1);
    out.right.assign(nn, -1);
    out.threshold.assign(nn, 0.0);
    for (int i = 0; i < nn; ++i) {
        if (s[i].feature < 0) continue;
        out.feature[i] = s[i].feature;
        out.threshold[i] = s[i].thr;
        out.left[i] = i + 1;
        out.right[i] = s[i].right;
    }
}

using Marks = std::vector<std::vector<int32_t>>;

// the search of the whole space (marks null) or of the marked thresholds, on T threads that
// share the root's features (RegShare); the same tree on any number of threads
template <int KK>
RegRes search_root(const RegParams& P, const Columns& cols, const RegRows<KK>& rows, tl::Clock& clock,
                   std::atomic<bool>& stop, RegOutput& out, double ub, const Marks* marks, int T, bool& stopped) {
    if (T <= 1 || P.max_depth < 2 || P.top_k > 0) {
        RegSearch<KK> s(P, cols, rows, clock, out);
        s.restrict_to(marks);
        RegRes r = s.run(ub);
        stopped = s.stopped();
        return r;
    }
    RegShare S;
    S.eps = P.eps;
    S.best.assign(cols.F, std::numeric_limits<double>::infinity());
    std::vector<RootPart> parts(T);
    std::vector<RegOutput> outs(T);
    std::vector<char> stops(T, 0);
    tl::run_workers(T, [&](int t) {
        tl::Clock ck(clock.t0, P.time_limit, &stop);
        RegSearch<KK> s(P, cols, rows, ck, outs[t]);
        s.restrict_to(marks);
        s.run_shared(ub, S, parts[t]);
        stops[t] = s.stopped() ? 1 : 0;
    });
    stopped = stop.load();
    out.nodes += 1;
    for (int t = 0; t < T; ++t) {
        stopped = stopped || stops[t];
        out.nodes += outs[t].nodes;
        out.evaluations += outs[t].evaluations;
        out.d2_evaluations += outs[t].d2_evaluations;
        out.history.insert(out.history.end(), outs[t].history.begin(), outs[t].history.end());
    }
    // the positions' results in order, with the one-thread tie rule
    RegRes fin = parts[0].pre;
    if (parts[0].settled) return fin;
    double floor = std::numeric_limits<double>::infinity();
    const int K = (int)parts[0].order.size();
    for (int k = 0; k < K; ++k)
        for (int t = 0; t < T; ++t) {
            const RootPart& q = parts[t];
            if ((int)q.done.size() <= k || !q.done[k]) continue;
            if (q.res[k].cost < fin.cost - P.eps) fin = q.res[k];
            floor = std::min(floor, q.floor[k]);
        }
    const double u = ub > 0.0 ? ub : std::numeric_limits<double>::infinity();
    fin.lb = stopped ? 0.0 : std::max(0.0, std::min(fin.cost, std::max(u, floor)));
    return fin;
}

// the output of a finished or stopped search (this one's and regression_binary.h's): its tree,
// SSE, bound (at most the SSE) and stop
inline void finish_output(const Sol& sol, double cost, double lb, bool stopped, RegOutput& out) {
    write_reg_tree(sol, out);
    out.cost = cost;
    out.timed_out = stopped;
    out.lower_bound = std::min(lb, cost);
    out.interrupted = stopped && tl::interrupted();
}

template <int KK>
void run_regression_k(const RegParams& P, RegOutput& out) {
    std::atomic<bool> stop{false};
    tl::Clock clock(tl::steady::now(), P.time_limit, &stop);
    // the classifier's ranked columns (labels unused: one class)
    std::vector<int64_t> zeros(P.n, 0);
    Params CP;
    CP.n = P.n;
    CP.F = P.F;
    CP.C = 1;
    CP.X = P.X;
    CP.y = zeros.data();
    CP.w = nullptr;
    CP.nan_mode = P.nan_mode;
    CP.use_warm = 0;
    CP.max_depth = P.max_depth;
    const double mark_bytes = P.top_k == 0 && P.warm_cells > 0 ? 4.0 * P.F * (P.n + 1.0) : 0.0;
    const double rank_bytes = P.use_warm_children && P.max_depth >= 3 && P.top_k == 0 ? 4.0 * P.F * (double)P.n : 0.0;
    const double base = 8.0 * P.F * (double)P.n + 8.0 * P.n + 24.0 * P.n + 8.0 * P.n * P.K + mark_bytes + rank_bytes;
    const double per_thread = RegSearch<KK>::buffer_bytes(P, P.n, P.F);
    int T = std::max(1, std::min(P.n_threads, std::max(1, P.F)));
    while (T > 1 && base + T * per_thread > P.mem_limit_bytes) --T;  // fewer threads within the cap
    const double fixed = base + T * per_thread;
    out.fixed_bytes = fixed;
    out.threads_used = T;
    if (fixed > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    Columns cols;
    if (!cols.build(CP, [&]() { return clock.timed_out(); })) {
        out.timed_out = true;
        out.interrupted = tl::interrupted();
        write_reg_tree(leaf_sol(), out);
        return;
    }
    out.fixed_bytes = fixed + cols.value_bytes();
    out.peak_bytes = out.fixed_bytes;
    if (P.use_warm_children && P.max_depth >= 3 && P.top_k == 0) cols.build_ranks();  // (warm_sse routes by rank)
    RegRows<KK> rows;
    rows.build(P);
    // the warm start: the optimal tree over quantile thresholds, whose SSE bounds the search
    double ub = P.upper_bound;
    RegRes warm;
    bool have_warm = false, stopped = false;
    std::vector<std::vector<int32_t>> marks;
    // (two rounds, the second with 4x more cells, while a feature has more than twice as many
    // distinct values)
    // (rounds < 0: one round up to depth 3, where the full search is expected to finish and a
    // second round cost more than it saved; two deeper, where the anytime tree matters most)
    const int rounds = P.warm_rounds >= 0 ? P.warm_rounds : P.max_depth <= 3 ? 1 : 2;
    for (int cells = P.warm_cells; P.top_k == 0 && cells > 0 && cells < P.warm_cells << (2 * rounds) && P.max_depth >= 2 && !stopped;
         cells *= 4) {
        if (!quantile_marks(cols, cells, marks)) break;
        RegRes r0 = search_root<KK>(P, cols, rows, clock, stop, out, ub, &marks, T, stopped);
        if (ub <= 0.0 || r0.cost < ub - P.eps || (stopped && !have_warm)) {
            warm = r0;
            have_warm = true;
            ub = r0.cost + P.eps;  // (a tie with it is then the warm tree)
        }
    }
    RegRes r;
    if (!stopped) r = search_root<KK>(P, cols, rows, clock, stop, out, ub, nullptr, T, stopped);
    if (have_warm && (r.sol.empty() || !(r.cost < warm.cost))) {
        r.sol = warm.sol;
        r.cost = warm.cost;
        r.lb = stopped ? 0.0 : std::min(r.lb, warm.cost);
        out.warm_tree = true;
    }
    // a search stopped early proves no bound of its own: the one-dimensional k-means bound
    // (regression.h) holds for every tree of the depth (less a relative rounding margin)
    const double lb = stopped && P.top_k == 0 ? kmeans_bound(P, P.max_depth) * (1.0 - 1e-9) + P.leaf_penalty : r.lb;
    finish_output(r.sol, r.cost, lb, stopped, out);
}

}  // namespace detail

// the optimal (or Top-k) regression tree of the parameters (see the header comments)
inline void run_regression(const RegParams& P, RegOutput& out) {
    if (P.K == 1)
        detail::run_regression_k<1>(P, out);
    else
        detail::run_regression_k<0>(P, out);
}

}  // namespace tl::cont
