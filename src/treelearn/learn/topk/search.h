// Top-k / optimal decision-tree search (003 Fig. 1, optimised as in Fig. 5 and beyond).
//
// Semantics (exactly Fig. 1): at a node with depth budget h and sample S, if h = 0, S is pure or
// no feature splits S, return the best constant (majority, ties to the lowest class code).
// Otherwise score every feature that splits S (both sides non-empty; a feature queried higher
// on the path never splits S) with H, take the k best (ties by feature index), build T_i for
// each and return the one with the fewest (weighted) training errors on S (ties by rank).
//
// Accelerations, none of which changes the returned error:
// * nodes are solved on their own rows, re-packed into a local column matrix (frame.h);
// * an exact cache keyed by (cover bitset, remaining depth) holding the solved error and split
//   or a lower bound (a failed branch-and-bound call), with a memory cap (cache.h);
// * branch-and-bound: an upper bound passed down (a child must beat best - sibling's bound),
//   loops stop on a zero-error (or lower-bound-reaching) candidate;
// * a specialised depth-2 step (depth2.h);
// * a candidate whose partition equals (or complements) an earlier candidate's is skipped
//   (identical subproblems, and ties go to the earlier rank);
// * optimum only (k = all): similarity lower bounds (bounds.h);
// * both children are bounded (cache entries, similarity) before either is solved;
// * anytime: on time_limit the best tree found so far is returned (timed_out flag).
//
// A leaf budget (max_leaves, solve_budget): MurTree's DP over budgets. A node with budget b below
// 2^h tries every candidate f and every split b1 + b2 = b of the budget between f's children
// (each child's best cost for every budget < b, cached under (cover, h, b)); b >= 2^h is no budget
// (solve), and b leaves under depth h are b leaves under depth min(h, b - 1) (one subproblem for
// every deeper h; b = 2 is depth 1, b = 3 the depth-2 step for three leaves). Branch-and-bound as
// above: a budgeted node solves below an upper bound (the caller's, and the cost of budget b - 1
// plus a tie margin), its children bounded below by their unbudgeted optima (solved when the
// budget is at least half of 2^h, else read from the cache) and by each other's costs.
//
// The Searcher is one thread's search: it owns its cache, frames and bounds; run.h runs one or
// several of them. Obj is the objective policy (objective.h).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/limits.h"
#include "core/progress.h"
#include "bounds.h"
#include "cache.h"
#include "depth2.h"
#include "frame.h"
#include "mono.h"
#include "objective.h"
#include "problem.h"
#include "ranking.h"

namespace tl::topk {

struct Res {
    double err;  // ok: the subtree's error (< ub); !ok: a lower bound (>= ub)
    int f;       // root feature of the subtree, -1 for a leaf
    bool ok;
};

template <typename CT, typename Obj = Misclassification<CT>>
class Searcher {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    static constexpr double INF = std::numeric_limits<double>::infinity();
    using Lvl = Level<CT>;

    const Sample& D;
    Switches sw;
    const Obj obj;  // the objective (objective.h)
    int d, C, nw;
    tl::Clock clock;
    tl::MemoryMeter mem;
    Frames<CT> fr;
    Cache cache;
    SimilarityBounds sim;
    std::vector<SimilarityBounds> simb;  // budgeted subproblems: simb[b] for leaf budget b
    Ranker<CT> rk;
    Depth2<CT, Obj> d2;
    long long nodes = 0;
    tl::Feed feed;  // live counters (verbose): written where the clock is read

    Searcher(const Sample& data, const Criterion& crit, const Options& opt, double mem_cap_bytes,
             tl::steady::time_point start, std::atomic<bool>* stopflag)
        : D(data), sw(make_switches(opt, data.d)), obj(opt.leaf_penalty), d(data.d), C(data.C), nw(data.nw),
          clock(start, opt.time_limit, stopflag), mem(mem_cap_bytes), fr(data, n_levels(opt, data)), cache(data.nw, mem),
          sim(n_levels(opt, data), data.nw, data.weighted ? data.w.data() : nullptr),
          rk(crit, data.d, data.C, opt.k, stopflag), d2(fr, cache, rk, sw, opt.max_depth, mem_cap_bytes) {
        rk.mwl = sw.mwl;
        rk.mrl = sw.mrl;
        // one similarity memory per leaf budget below 2^max_depth (a budget's subproblems meet
        // their like at a level between the other budgets' calls)
        const int nb = opt.max_leaves > 0 && opt.max_depth < 30 ? std::min(opt.max_leaves, 1 << opt.max_depth) : 0;
        for (int b = 0; b < nb; ++b)
            simb.emplace_back(n_levels(opt, data), data.nw, data.weighted ? data.w.data() : nullptr);
        mem.fixed = fr.fixed_bytes() + 16.0 * (double)nb * n_levels(opt, data) * data.nw;
        mem.peak = mem.fixed;
        feed.p = opt.progress;
        // the levels' local matrices: within the cap, at least 16 MB, at most 64 MB per thread
        fr.frame_budget = std::max(16.0 * 1024 * 1024, std::min(mem_cap_bytes, 64.0 * 1024 * 1024));
    }

    // work space for every depth a path can reach: at most max_depth splits, and at most d (a
    // feature used on the path no longer splits its rows)
    static int n_levels(const Options& opt, const Sample& data) { return std::min(opt.max_depth, data.d) + 2; }

    static Switches make_switches(const Options& opt, int d) {
        Switches s;
        s.all_k = opt.k >= d;
        s.c1cache = opt.cache_depth1;
        s.use_reps = opt.feature_classes && opt.criterion != tl::Callback::code;
        s.mwl = opt.min_weight;
        s.mrl = opt.min_rows;
        s.lam = opt.leaf_penalty;
        s.mono = opt.mono;
        if (s.mono != nullptr) s.use_reps = false;  // (the feature classes ignore the constraints)
        if (s.min_leaf()) {
            // the depth-2 shortcuts over feature classes assume every separating split is one, and
            // the similarity bound an optimal tree of one sample valid on another (a lighter leaf
            // makes it infeasible): both off
            s.use_reps = false;
            s.use_sim = false;
        }
        return s;
    }

    bool timed_out() { return clock.timed_out(); }

    // the best subtree of depth <= h on the rows of level L, if its error is below ub
    Res solve(int L, int h, double ub) {
        Lvl& v = fr.lv[L];
        ++nodes;
        double Wn;
        fr.totals(v, v.tot.data(), Wn);
        const bool preset = v.cover_ready;
        v.cover_ready = false;
        const bool borrowed = v.frame_ready;  // (cleared on entry: early returns leave nothing stale)
        v.frame_ready = false;
        const double leaf = obj.leaf(v.tot.data(), C, Wn);
        if (h == 0 || fr.n_present(v.tot.data()) <= 1) return Res{leaf, -1, leaf < ub};
        double node_lb = 0.0;
        Res known;
        if (h >= 2 && bounded(v, L, h, ub, preset, node_lb, known)) return known;
        if (feed.due(clock)) feed.counts((double)nodes, (double)cache.size());  // live counters (verbose)
        if (time_checked(h) && clock.timed_out()) {
            if (h >= 2) store(v, h, Entry{leaf, -1, ANYTIME});
            return Res{leaf, -1, leaf < ub};
        }
        if (d2.counts_from_pairs(h)) {
            d2.diagonal_counts(v);  // (no local matrix: the depth-2 steps read the pair matrix only)
        } else {
            if (!borrowed) fr.build_local(v);
            fr.count_pass(v, v.fvalid.data(), v.cnt.data(), v.rc.data());
        }
        if (h == 1) {
            int f;
            double e = d2.depth1(v.cnt.data(), v.rc.data(), v.tot.data(), Wn, v.m, f, v.cand, v.keyed);
            return Res{e, f, e < ub};
        }
        rk.rank(v.cnt.data(), v.rc.data(), v.tot.data(), Wn, v.m, v.cand, v.keyed);
        const bool sub_here = h == 3 && d2.use_sub && !sw.recon;
        d2.begin_node(v, h, sub_here);
        if (v.cand.empty()) {
            store(v, h, Entry{leaf, -1, SOLVED});
            return Res{leaf, -1, leaf < ub};
        }
        double best = Obj::sparse ? leaf : INF;  // (sparse: a split must beat the leaf, ties to it)
        int bestf = -1;
        const bool incomplete = search_candidates(L, h, ub, node_lb, sub_here, best, bestf);
        return finish(v, L, h, ub, leaf, node_lb, best, bestf, incomplete);
    }

    // the node of level L as a leaf appended to out (preorder); its index
    int push_node(int L, Output& out, int label) {
        Lvl& v = fr.lv[L];
        int idx = (int)out.feature.size();
        out.feature.push_back(-1);
        out.left.push_back(-1);
        out.right.push_back(-1);
        out.label.push_back(label);
        double Wn;
        fr.totals(v, v.tot.data(), Wn);
        for (int c = 0; c < C; ++c) out.value.push_back((double)v.tot[c]);
        out.nsamp.push_back(v.m);
        return idx;
    }

    // rebuild the tree of a solved node (rows in level L) into out, preorder; label >= 0: the
    // node is a leaf of that forced class (a side collapsed under a monotonic constraint)
    int build(int L, int h, Output& out, int label = -1) {
        int idx = push_node(L, out, label);
        if (label >= 0) return idx;
        Res r = solve(L, h, INF);
        if (r.f < 0) return idx;
        out.feature[idx] = r.f;
        build_children(L, h, r.f, idx, out);
        return idx;
    }

    // the children of node idx (split f, rows at level L, depth budget h) into out; under a
    // monotonic constraint on f the side the optimum collapses is a leaf of its forced class
    void build_children(int L, int h, int f, int idx, Output& out) {
        Lvl& v = fr.lv[L];
        int collapse = -1, label = -1;
        if (constrained(f)) {
            MonoSides ms;
            double o[2];
            sides(L, h, f, ms, o);
            collapse = mono_collapse(ms, o[0], o[1]);
            label = collapse == 0 ? ms.la : ms.lb;
        }
        fr.split_rows(v, f, 0, fr.lv[L + 1]);
        int l = build(L + 1, h - 1, out, collapse == 0 ? label : -1);
        out.left[idx] = l;
        fr.split_rows(v, f, 1, fr.lv[L + 1]);
        int rr = build(L + 1, h - 1, out, collapse == 1 ? label : -1);
        out.right[idx] = rr;
    }

    // candidate f of the node at level L (rows only, no frame: the root of a parallel or a
    // Dask search), its error when below ub
    bool split_by_rows(int L, int h, int f, double ub, double& err) {
        Lvl& v = fr.lv[L];
        if (constrained(f)) {
            CT t[2][2];
            double W;
            for (int side = 0; side < 2; ++side) {
                fr.split_rows(v, f, side, fr.lv[L + 1]);
                fr.totals(fr.lv[L + 1], t[side], W);
            }
            return mono_split(mono_sides(sw.mono[f], t[0], t[1]), 0.0, 0.0, ub, err, [&](int side, double b) {
                fr.split_rows(v, f, side, fr.lv[L + 1]);
                return solve(L + 1, h - 1, b);
            });
        }
        fr.split_rows(v, f, 0, fr.lv[L + 1]);
        Res a = solve(L + 1, h - 1, ub);
        if (!a.ok) return false;
        fr.split_rows(v, f, 1, fr.lv[L + 1]);
        Res b = solve(L + 1, h - 1, ub - a.err);
        if (!b.ok) return false;
        err = a.err + b.err;
        return true;
    }

    // ------------------------------------------------------------------ leaf budget
    static bool unbudgeted(int h, int b) { return h < 30 && b >= (1 << h); }
    // a tree of b leaves is at most b - 1 deep: budget b under depth h is budget b under depth
    // min(h, b - 1) (one subproblem, one cache entry, for every deeper h; b = 2: depth 1)
    static int budget_depth(int h, int b) { return b >= 2 ? std::min(h, b - 1) : h; }
    // the cache key of (depth h, budget b >= 2): apart from every plain depth (h <= 64)
    static int budget_key(int h, int b) { return h + 64 * b; }

    // the best subtree of depth <= h and at most b leaves on the rows of level L, if its error is
    // below ub (as solve: !ok returns a lower bound >= ub); the anytime answer after the deadline
    Res solve_budget(int L, int h, int b, double ub = INF) {
        h = budget_depth(h, b);
        if (unbudgeted(h, b)) return solve(L, h, ub);
        Lvl& v = fr.lv[L];
        ++nodes;
        double Wn;
        fr.totals(v, v.tot.data(), Wn);
        v.cover_ready = false;
        v.frame_ready = false;
        const double leaf = obj.leaf(v.tot.data(), C, Wn);
        if (b <= 1 || fr.n_present(v.tot.data()) <= 1) return Res{leaf, -1, leaf < ub};
        fr.make_cover(v);
        Entry e;
        double node_lb = 0.0;
        if (cache.lookup(v.cover.data(), v.hash, budget_key(h, b), e)) {
            if (e.status != LOWER_BOUND) return Res{e.err, e.f, e.err < ub};
            if (e.err >= ub) return Res{e.err, -1, false};
            node_lb = e.err;
        }
        // the similarity bound holds under a leaf budget too: the optimal tree of S, applied to
        // S', errs on at most the rows S' has more (no leaf-size floor here: use_sim is off then)
        if (budget_sim(b)) node_lb = std::max(node_lb, simb[b].lb(L, v.cover.data(), h));
        if (node_lb >= ub) return budget_lower(L, v, h, b, node_lb);
        if (clock.timed_out()) return Res{leaf, -1, leaf < ub};
        // the unbudgeted optimum bounds every budget from below: when it does not beat ub neither
        // does a budget, and a candidate reaching it ends the loop (no later one is strictly better)
        const Low u = unbudgeted_low(L, h, b, ub);
        const double lb = std::max(node_lb, u.lb);
        fr.make_cover(v);
        if (lb >= ub) return budget_lower(L, v, h, b, lb);
        fr.build_local(v);
        fr.count_pass(v, v.fvalid.data(), v.cnt.data(), v.rc.data());
        rk.rank(v.cnt.data(), v.rc.data(), v.tot.data(), Wn, v.m, v.cand, v.keyed);
        double best = Obj::sparse ? leaf : INF;  // (as solve: sparse objectives keep the leaf on ties)
        int bestf = -1, b1;
        bool stopped = false;
        const bool three = h == 2 && b == 3;  // (the depth-2 step: one count pass per candidate)
        if (three) d2.begin_node(v, h, false);
        // a tree of b - 1 leaves is one of b: the smaller budget's solved cost caps this one's, so
        // only candidates that reach it (ties included: the margin) are searched
        const double cap = std::min(ub, smaller_budget_cap(v, h, b, leaf));
        for (size_t ci = 0; ci < v.cand.size(); ++ci) {
            const int f = v.cand[ci];
            if ((stopped = clock.timed_out())) break;
            if (ci > 0 && fr.duplicate(v, f, (int)ci, sw.mono)) continue;
            // branch and bound: only a total below both the cap and the best so far matters
            const double bound = std::min(cap, best);
            double cost = INF;
            if (three && !constrained(f)) {
                if (!d2.step3(v, f, bound, cost, b1)) cost = INF;
            } else {
                cost = budget_split(L, h, b, f, b1, bound);
            }
            if (cost < best && cost < ub) {
                best = cost;
                bestf = f;
            }
            if (best <= lb) break;
        }
        fr.make_cover(v);  // (the rows of level L are unchanged; its cover is restored for the key)
        if (stopped) {
            if (bestf < 0 || leaf < best) {
                best = leaf;
                bestf = -1;
            }
            cache.store(v.cover.data(), v.hash, budget_key(h, b), Entry{best, bestf, ANYTIME});
            return Res{best, bestf, best < ub};
        }
        if (v.cand.empty()) {
            best = leaf;
        } else if (bestf < 0 && !(Obj::sparse && leaf < ub)) {
            // (a cap below ub is always reached: the smaller budget's tree is a candidate's)
            // no candidate below ub (nor, sparse, the leaf): the node costs >= ub
            return budget_lower(L, v, h, b, std::max(lb, ub));
        }
        cache.store(v.cover.data(), v.hash, budget_key(h, b), Entry{best, bestf, SOLVED});
        if (budget_sim(b)) simb[b].remember(L, v.cover.data(), h, best);
        return Res{best, bestf, best < ub};
    }
    // a lower bound of the unbudgeted optimum of the node at level L (depth h) under a budget b;
    // exact: the optimum itself. Solved (below ub) when the budget is large enough for the optimum
    // to be near the budgeted cost; under a small budget a budgeted search is far cheaper than the
    // unbudgeted one, so only the cache's answer is read.
    struct Low {
        double lb;
        bool exact;
    };
    Low unbudgeted_low(int L, int h, int b, double ub) {
        if (h <= 1 || 2 * b > (1 << h)) {  // (a budget of at least half of 2^h: measured best)
            const Res u = solve(L, h, ub);
            return Low{u.err, u.ok};
        }
        Lvl& v = fr.lv[L];
        fr.make_cover(v);
        Entry e;
        if (cache.lookup(v.cover.data(), v.hash, h, e) && e.status != ANYTIME) return Low{e.err, e.status == SOLVED};
        return Low{0.0, false};
    }
    // an upper bound just above the best cost under budget b - 1 (its solved cache entry; b = 2:
    // the leaf, which no split costs more than without a leaf penalty), INF when unknown. The
    // margin lets a tie through: 1/2 for integer errors, else a relative 1e-9.
    double smaller_budget_cap(const Lvl& v, int h, int b, double leaf) {
        double prev = INF;
        Entry e;
        const int hp = budget_depth(h, b - 1);
        if (b == 2) {
            if (!Obj::sparse) prev = leaf;
        } else if (!unbudgeted(hp, b - 1) && cache.lookup(v.cover.data(), v.hash, budget_key(hp, b - 1), e) &&
                   e.status == SOLVED) {
            prev = e.err;
        }
        if (prev == INF) return INF;
        return prev + ((W || Obj::sparse) ? 1e-9 * (1.0 + std::abs(prev)) : 0.5);
    }
    // a budgeted node whose cost is at least lb (>= the caller's ub): stored as a lower bound
    Res budget_lower(int L, const Lvl& v, int h, int b, double lb) {
        cache.store(v.cover.data(), v.hash, budget_key(h, b), Entry{lb, -1, LOWER_BOUND});
        if (budget_sim(b)) simb[b].remember(L, v.cover.data(), h, lb);
        return Res{lb, -1, false};
    }
    bool budget_sim(int b) const { return sw.all_k && sw.use_sim && b < (int)simb.size(); }

    // candidate f of a budgeted node (level L, depth h, budget b): the smallest total
    // c0(k) + c1(b - k) of its children's best costs with k leaves on the left, if below bound
    // (else INF); b1 the first k reaching it (the same k as without the bound). Each child's cost
    // is at least its unbudgeted optimum u, never rises with its budget and equals u from the
    // first budget that reaches it: the optima bound the budgeted calls, which are bounded too.
    double budget_split(int L, int h, int b, int f, int& b1, double bound = INF) {
        Lvl& v = fr.lv[L];
        Lvl& c = fr.lv[L + 1];
        fr.split_rows(v, f, 0, c);
        const Low u0 = unbudgeted_low(L + 1, h - 1, b - 1, bound);
        if (u0.lb >= bound) return INF;
        fr.split_rows(v, f, 1, c);
        const Low u1 = unbudgeted_low(L + 1, h - 1, b - 1, bound - u0.lb);
        if (u0.lb + u1.lb >= bound) return INF;
        // the left child's costs for k = 1..b-1 that can still beat the bound (known[k])
        std::vector<double> c0(b, INF);
        std::vector<char> known(b, 0);
        fr.split_rows(v, f, 0, c);
        for (int k = 1; k < b; ++k) {
            if (k > 1 && known[k - 1] && ((u0.exact && c0[k - 1] <= u0.lb) || unbudgeted(h - 1, k - 1))) {
                c0[k] = c0[k - 1];
                known[k] = 1;
                continue;
            }
            const Res r = solve_budget(L + 1, h - 1, k, bound - u1.lb);
            c0[k] = r.err;
            known[k] = r.ok;
        }
        fr.split_rows(v, f, 1, c);
        double best = bound;
        b1 = 1;
        for (int k = 1; k < b; ++k) {  // (k ascending and strict: the first k on ties)
            if (!known[k] || c0[k] + u1.lb >= best) continue;
            const Res r = solve_budget(L + 1, h - 1, b - k, best - c0[k]);
            if (!r.ok) continue;
            const double c1 = r.err;
            if (c0[k] + c1 < best) {
                best = c0[k] + c1;
                b1 = k;
            }
        }
        return best < bound ? best : INF;
    }

    // rebuild the tree of a budgeted node into out (as build)
    int build_budget(int L, int h, int b, Output& out) {
        h = budget_depth(h, b);
        if (unbudgeted(h, b)) return build(L, h, out);
        int idx = push_node(L, out, -1);
        Res r = solve_budget(L, h, b);
        if (r.f < 0) return idx;
        out.feature[idx] = r.f;
        int b1;
        budget_split(L, h, b, r.f, b1);
        Lvl& v = fr.lv[L];
        fr.split_rows(v, r.f, 0, fr.lv[L + 1]);
        const int l = build_budget(L + 1, h - 1, b1, out);
        out.left[idx] = l;
        fr.split_rows(v, r.f, 1, fr.lv[L + 1]);
        const int rr = build_budget(L + 1, h - 1, b - b1, out);
        out.right[idx] = rr;
        return idx;
    }

  private:
    // the deadline (and Ctrl-C) is checked at every node of the search, and while the returned
    // tree is rebuilt (recon) at the nodes that may cost a search of their own (h >= 3, evicted
    // from the cache): after the deadline they become leaves, so the rebuild is bounded too.
    // Nodes of depth <= 2 are always rebuilt exactly (one depth-2 step at most).
    bool time_checked(int h) const { return !sw.recon || h >= 3; }

    bool constrained(int f) const { return sw.mono != nullptr && sw.mono[f] != 0; }

    // a constrained split (mono.h): min(a + OPT(1), OPT(0) + b) below bound, the sides bounded
    // below by lb0 / lb1; solve_side(side, ub) solves a side. Side 0 collapsed first (ties).
    template <typename SolveSide>
    static bool mono_split(const MonoSides& ms, double lb0, double lb1, double bound, double& err,
                           SolveSide solve_side) {
        double best = bound;
        bool found = false;
        if (ms.a + lb1 < best) {
            Res r1 = solve_side(1, best - ms.a);
            if (r1.ok && ms.a + r1.err < best) {
                best = ms.a + r1.err;
                found = true;
            }
        }
        if (lb0 + ms.b < best) {
            Res r0 = solve_side(0, best - ms.b);
            if (r0.ok && r0.err + ms.b < best) {
                best = r0.err + ms.b;
                found = true;
            }
        }
        err = best;
        return found;
    }

    // the forced-leaf costs (ms) and the optima (o) of both sides of split f at level L (rebuild)
    void sides(int L, int h, int f, MonoSides& ms, double* o) {
        Lvl& v = fr.lv[L];
        CT t[2][2];
        for (int side = 0; side < 2; ++side) {
            fr.split_rows(v, f, side, fr.lv[L + 1]);
            double W;
            fr.totals(fr.lv[L + 1], t[side], W);
            o[side] = solve(L + 1, h - 1, INF).err;
        }
        ms = mono_sides(sw.mono[f], t[0], t[1]);
    }

    void store(const Lvl& v, int h, const Entry& e) { cache.store(v.cover.data(), v.hash, h, e); }
    void remember(int L, const Lvl& v, int h, double val) {
        if (sw.all_k && sw.use_sim) sim.remember(L, v.cover.data(), h, val);
    }

    // an h >= 2 node: its cover and fingerprint, then its cache entry and similarity bound;
    // true (answer in out) when they settle the node; node_lb: the bound otherwise
    bool bounded(Lvl& v, int L, int h, double ub, bool preset, double& node_lb, Res& out) {
        if (preset)
            v.hash = cover_hash(v.cover.data(), nw, v.m);
        else
            fr.make_cover(v);
        Entry e;
        if (cache.lookup(v.cover.data(), v.hash, h, e)) {
            if (e.status != LOWER_BOUND) {
                out = Res{e.err, e.f, e.err < ub};
                return true;
            }
            if (e.err >= ub) {
                out = Res{e.err, -1, false};
                return true;
            }
            node_lb = e.err;
        }
        if (sw.all_k && sw.use_sim) {
            // similarity lower bound (optimal search only): opt_h(S) >= opt_h(S') - w(S' \ S)
            // for the last subproblems S' of the same depth solved at this level
            node_lb = std::max(node_lb, sim.lb(L, v.cover.data(), h));
            if (node_lb >= ub) {
                store(v, h, Entry{node_lb, -1, LOWER_BOUND});
                remember(L, v, h, node_lb);
                out = Res{node_lb, -1, false};
                return true;
            }
        }
        return false;
    }

    // every candidate of the (ranked) node at level L in rank order; best / bestf the best
    // found; true when the time ran out before every candidate was tried
    bool search_candidates(int L, int h, double ub, double node_lb, bool sub_here, double& best, int& bestf) {
        Lvl& v = fr.lv[L];
        const bool paired = d2.counts_from_pairs(h);  // (the node has no local matrix)
        for (size_t ci = 0; ci < v.cand.size(); ++ci) {
            const int f = v.cand[ci];
            if (time_checked(h) && clock.timed_out()) return true;
            if (ci > 0 && (paired ? d2.duplicate_by_pairs(v, f, (int)ci) : fr.duplicate(v, f, (int)ci, sw.mono)))
                continue;
            const double bound = std::min(ub, best);
            double err;
            bool better;
            if (h == 2 && d2.use_pairs && !W && !sw.recon)
                better = d2.step_pairs(v, f, bound, err);
            else if (h == 2)
                better = d2.step(v, f, bound, err);
            else
                better = split(L, h, f, bound, sub_here, err) && err < best;
            if (!better) continue;
            best = err;
            bestf = f;
            if (L == 0) feed.incumbent(best);  // live counters (verbose): the root's best so far
            if (best <= node_lb) break;
        }
        return false;
    }

    // candidate f of an h >= 3 node: both children bounded, then solved (f = 0 side first);
    // true with their total error when both beat the bound
    TL_INLINE bool split(int L, int h, int f, double bound, bool sub_here, double& err) {
        Lvl& v = fr.lv[L];
        Lvl& c = fr.lv[L + 1];
        // lower bounds of both children (cache entries; similarity for the optimum)
        double lb0 = 0.0, lb1 = 0.0;
        fr.child_covers(v, f);
        const u64* c1c = v.child1.data();
        const u64* c0c = v.child0.data();
        if (sw.use_child_lb) {
            int m1 = v.rc[f], m0 = v.m - m1;
            lb1 = child_lb(L + 1, c1c, m1, h - 1);
            lb0 = child_lb(L + 1, c0c, m0, h - 1);
            if (lb0 + lb1 >= bound) return false;
        }
        if (constrained(f)) {  // (no pair matrices: sub_here is off)
            const CT t1[2] = {v.cnt[(size_t)f * C], v.cnt[(size_t)f * C + 1]};
            const CT t0[2] = {(CT)(v.tot[0] - t1[0]), (CT)(v.tot[1] - t1[1])};
            return mono_split(mono_sides(sw.mono[f], t0, t1), lb0, lb1, bound, err, [&](int side, double b) {
                return solve_child(L, f, side, side ? c1c : c0c, h, false, b);
            });
        }
        int small = 0;
        if (sub_here) {
            // pair matrix of the smaller child, on its own rows
            small = (2 * v.rc[f] <= v.m) ? 1 : 0;
            fr.split_rows_local(v, f, small, c);
            fr.build_local(c);
            fr.count_pass(c, fr.ones.data(), c.cnt.data(), c.rc.data());
            d2.full_pairs(c, d2.PT.data(), d2.PRT.data());
            d2.set_child_pairs(small == 0);
        }
        Res r0 = solve_child(L, f, 0, c0c, h, sub_here, bound - lb1);
        if (!r0.ok) return false;
        if (sub_here) d2.set_child_pairs(small == 1);
        Res r1 = solve_child(L, f, 1, c1c, h, sub_here, bound - r0.err);
        if (!r1.ok) return false;
        err = r0.err + r1.err;
        return true;
    }
    // side `side` of feature f of the node at level L (cover `cover`) as level L + 1, solved
    TL_INLINE Res solve_child(int L, int f, int side, const u64* cover, int h, bool sub_here, double ub) {
        Lvl& v = fr.lv[L];
        Lvl& c = fr.lv[L + 1];
        fr.split_rows_local(v, f, side, c);
        std::copy(cover, cover + nw, c.cover.begin());
        c.cover_ready = true;
        fr.lend_frame(v, f, side, c, h - 1, sw.all_k);
        d2.pairs_ready = sub_here;
        Res r = solve(L + 1, h - 1, ub);
        d2.pairs_ready = false;
        return r;
    }

    // the node's answer once its candidates are done (or the time ran out): stored in the cache
    Res finish(Lvl& v, int L, int h, double ub, double leaf, double node_lb, double best, int bestf, bool incomplete) {
        if (incomplete || (time_checked(h) && clock.stopped())) {
            if (bestf < 0 || leaf < best) {
                // nothing better found in time: the best tree found is the constant
                best = leaf;
                bestf = -1;
            }
            store(v, h, Entry{best, bestf, ANYTIME});
            return Res{best, bestf, best < ub};
        }
        if (bestf >= 0 || best < ub) {  // a split, or (sparse) the leaf no split beat
            store(v, h, Entry{best, bestf, SOLVED});
            remember(L, v, h, best);
            return Res{best, bestf, true};
        }
        double lb = std::max(node_lb, ub);
        store(v, h, Entry{lb, -1, LOWER_BOUND});
        remember(L, v, h, lb);
        return Res{lb, -1, false};
    }

    // a lower bound on the error of the subproblem (cover, h) at level Lc: its cache entry (exact
    // error or lower bound) and, for the optimum, the similarity bound from Lc's recent nodes
    double child_lb(int Lc, const u64* cover, int m, int h) {
        if (m == 0) return 0.0;
        double lb = 0.0;
        if (h >= 2) {
            Entry e;
            if (cache.lookup(cover, cover_hash(cover, nw, m), h, e)) {
                if (e.status == SOLVED || e.status == LOWER_BOUND) lb = e.err;
                if (e.status == SOLVED) return lb;
            }
        }
        if (sw.all_k && sw.use_sim && h >= 2) lb = std::max(lb, sim.lb(Lc, cover, h));
        return lb;
    }
};

}  // namespace tl::topk
