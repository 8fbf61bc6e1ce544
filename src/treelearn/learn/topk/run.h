// Top-k / optimal search: one search from a Problem and Options to an Output.
//
// One thread: solve the root, then rebuild the returned tree from the cache (build). Several
// (n_jobs > 1, depth >= 3): the root's candidates are dealt round-robin to the threads (thread
// t takes candidates t, t + T, ...); each prunes with its own best only (earlier ranks), so the
// winner is the same as with one job; the winner's subtrees are rebuilt by the thread that
// searched it (warm cache). Threads, the deadline and the stop flag: core/limits.h.
#pragma once
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "core/limits.h"
#include "problem.h"
#include "ranking.h"
#include "search.h"

namespace tl::topk {

// what the frames may take past the memory cap (the cap's documented slack)
constexpr double FRAME_SLACK = 64.0 * 1024 * 1024;

template <typename CT, typename Obj>
struct Run {
    using S = Searcher<CT, Obj>;
    static constexpr double INF = std::numeric_limits<double>::infinity();

    const Problem& P;
    const Options& O;
    // the clock starts before the sample is laid out (that takes seconds on 100,000s of
    // features): the deadline counts it, and the layout stops at it (Sample::complete)
    tl::steady::time_point t0;
    std::atomic<bool> stop{false};
    tl::DeadlineWatch watch;  // big samples (slow single nodes): the stop flag raised on time
    tl::Clock setup_clock;
    Sample D;
    Criterion crit;
    double thread_cap;

    Run(const Problem& p, const Options& o)
        : P(p), O(o), t0(tl::steady::now()), watch(t0, o.time_limit, &stop, (double)p.d * p.nw >= 65536.0),
          setup_clock(t0, o.time_limit, &stop), D(p, &setup_clock),
          crit(o, p), thread_cap(o.memory_limit_bytes / std::max(1, o.n_jobs)) {}

    std::unique_ptr<S> searcher() { return std::unique_ptr<S>(new S(D, crit, O, thread_cap, t0, &stop)); }

    static void add_stats(const S& s, Output& out) {
        out.nodes += s.nodes;
        out.cache_hits += s.cache.hits;
        out.evictions += s.cache.evictions;
        out.peak_bytes += s.mem.peak;
        out.cache_entries += (long long)s.cache.size();
    }
    void push_root(int f, const CT* tot, Output& out) const {
        out.feature.push_back(f);
        out.left.push_back(-1);
        out.right.push_back(-1);
        out.label.push_back(-1);
        for (int c = 0; c < D.C; ++c) out.value.push_back((double)tot[c]);
        out.nsamp.push_back(P.n);
    }

    bool budgeted() const { return O.max_leaves > 0 && !S::unbudgeted(O.max_depth, O.max_leaves); }

    double one_thread(Output& out) {
        auto s = searcher();
        s->fr.set_root();
        if (budgeted()) {  // (a leaf budget: exact, no incumbent; Searcher::solve_budget)
            Res r = s->solve_budget(0, O.max_depth, O.max_leaves);
            s->sw.recon = true;
            s->build_budget(0, O.max_depth, O.max_leaves, out);
            add_stats(*s, out);
            return r.err;
        }
        Res r = s->solve(0, O.max_depth, O.upper_bound);
        if (!r.ok) {  // nothing below the incumbent's error: r.err is a lower bound (>= it)
            out.found = false;
            add_stats(*s, out);
            return r.err;
        }
        s->sw.recon = true;
        s->build(0, O.max_depth, out);
        add_stats(*s, out);
        return r.err;
    }

    // the root's candidates (rank order, duplicates removed) on searcher s
    std::vector<int> root_candidates(S& s, double& Wn) {
        auto& v0 = s.fr.lv[0];
        s.fr.totals(v0, v0.tot.data(), Wn);
        std::vector<int> cand;
        if (s.fr.n_present(v0.tot.data()) > 1) {
            s.fr.build_local(v0);
            s.fr.count_pass(v0, s.fr.ones.data(), v0.cnt.data(), v0.rc.data());
            s.rk.rank(v0.cnt.data(), v0.rc.data(), v0.tot.data(), Wn, v0.m, v0.cand, v0.keyed);
            for (size_t ci = 0; ci < v0.cand.size(); ++ci)
                if (ci == 0 || !s.fr.duplicate(v0, v0.cand[ci], (int)ci, s.sw.mono)) cand.push_back(v0.cand[ci]);
        }
        return cand;
    }

    // thread t's share of the root candidates: errs[ci] of each it completes
    static void search_share(S& s, const std::vector<int>& cand, int t, int T, int h, double ub,
                             std::vector<double>& errs) {
        double best = ub;
        for (size_t ci = t; ci < cand.size(); ci += T) {
            int f = cand[ci];
            if (s.timed_out()) break;
            double e;
            if (!s.split_by_rows(0, h, f, best, e)) continue;
            errs[ci] = e;
            best = e;
            s.feed.incumbent(best);  // live counters (verbose)
            if (best <= 0) break;
        }
    }

    double parallel(Output& out) {
        const int h = O.max_depth;
        auto main = searcher();
        main->fr.set_root();
        double Wn;
        std::vector<int> cand = root_candidates(*main, Wn);
        const int T = std::min<int>(O.n_jobs, std::max<size_t>(1, cand.size()));
        std::vector<double> errs(cand.size(), INF);
        std::vector<std::unique_ptr<S>> ss(T);
        ss[0] = std::move(main);
        tl::run_workers(T, [&](int t) {
            if (t > 0) {
                ss[t] = searcher();
                ss[t]->fr.set_root();
            }
            search_share(*ss[t], cand, t, T, h, O.upper_bound, errs);
        });
        int win = -1;
        double be = INF;
        for (size_t ci = 0; ci < cand.size(); ++ci)
            if (errs[ci] < be) {
                be = errs[ci];
                win = (int)ci;
            }
        S& m0 = *ss[0];
        auto& v0 = m0.fr.lv[0];
        m0.fr.totals(v0, v0.tot.data(), Wn);
        const double leaf = s0obj(v0.tot.data(), Wn);
        const bool leaf_wins = win < 0 || (Obj::sparse ? leaf <= be : leaf < be);  // (sparse: ties to the leaf)
        for (int t = 0; t < T; ++t) add_stats(*ss[t], out);
        if (leaf_wins && !(leaf < O.upper_bound)) {
            out.found = false;  // nothing below the incumbent's error (every candidate >= it)
            return O.upper_bound;
        }
        if (leaf_wins) {
            push_root(-1, v0.tot.data(), out);
            return leaf;
        }
        const int f = cand[win];
        S& s = *ss[win % T];
        s.sw.recon = true;
        push_root(f, v0.tot.data(), out);
        s.build_children(0, h, f, 0, out);
        return be;
    }

    // the leaf cost of the root (class totals tot, weight Wn) under the objective
    double s0obj(const CT* tot, double Wn) const { return Obj(O.leaf_penalty).leaf(tot, D.C, Wn); }

    // the objective of the returned tree (the sum of its leaves' costs)
    double tree_error(const Output& out) const {
        const Obj obj(O.leaf_penalty);
        double e = 0.0;
        for (size_t i = 0; i < out.feature.size(); ++i) {
            if (out.feature[i] >= 0) continue;
            const double* t = &out.value[i * (size_t)D.C];
            double Wsum = 0.0;
            for (int c = 0; c < D.C; ++c) Wsum += t[c];
            const int lab = out.label[i];  // a forced class (mono.h): every other row is an error
            e += lab >= 0 ? std::max(0.0, Wsum - t[lab]) : obj.leaf(t, D.C, Wsum);
        }
        return e;
    }

    // stopped before the search began (Sample::complete false): the root as a leaf
    double root_leaf(Output& out) const {
        std::vector<CT> tot(D.C, CT(0));
        double Wn = 0.0;
        for (int i = 0; i < D.n; ++i) {
            const double wi = D.weighted ? D.w[i] : 1.0;
            tot[D.y[i]] += (CT)wi;
            Wn += wi;
        }
        push_root(-1, tot.data(), out);
        return s0obj(tot.data(), Wn);
    }

    // the best tree for every budget 1..O.max_leaves in turn on one searcher: a budget's
    // subproblems (cover, depth, budget) and the unbudgeted ones are solved once for all budgets
    void front(std::vector<Output>& outs) {
        out_of_time_front(outs);
        if (!outs.empty()) return;
        auto s = searcher();
        s->fr.set_root();
        for (int b = 1; b <= std::max(1, O.max_leaves); ++b) {
            outs.emplace_back();
            Output& out = outs.back();
            s->sw.recon = false;
            Res r = s->solve_budget(0, O.max_depth, b);
            s->sw.recon = true;
            s->build_budget(0, O.max_depth, b, out);
            out.error = stop.load() ? tree_error(out) : r.err;
            out.root_lb = stop.load() ? 0.0 : r.err;
            out.interrupted = stop.load() && tl::interrupted();
            out.timed_out = stop.load() && !out.interrupted;
        }
        add_stats(*s, outs.back());
    }
    // the front stopped before its search (the sample's layout hit the deadline): one leaf
    void out_of_time_front(std::vector<Output>& outs) {
        if (D.complete) return;
        outs.emplace_back();
        outs.back().error = root_leaf(outs.back());
        outs.back().interrupted = stop.load() && tl::interrupted();
        outs.back().timed_out = !outs.back().interrupted;
    }

    void run(Output& out) {
        const int n_jobs = std::max(1, O.n_jobs);
        // a searcher's per-level frames (class-count tables: features x classes per level) are
        // allocated before it searches, outside the cache's cap: when the searchers' frames pass
        // the cap by more than the documented slack (peak <= cap + X + 64 MiB), no search (the
        // caller keeps its incumbent, with the limit named)
        out.frame_bytes = Frames<CT>::bytes_for(D, S::n_levels(O, D));
        const bool threads = n_jobs > 1 && O.max_depth >= 3 && !budgeted();
        const int searchers = threads ? n_jobs : 1;
        out.memory_bound = D.complete && out.frame_bytes * searchers > O.memory_limit_bytes + FRAME_SLACK;
        double root_err = (!D.complete || out.memory_bound) ? root_leaf(out)
                          : threads ? parallel(out) : one_thread(out);
        // stopped (deadline, Ctrl-C): nodes rebuilt after the stop are leaves, so the error is
        // the returned tree's own
        if (stop.load() && out.found) root_err = tree_error(out);
        out.root_lb = stop.load() ? 0.0 : root_err;
        out.error = root_err;
        out.cost_failed = crit.failed();
        out.interrupted = stop.load() && tl::interrupted();
        out.timed_out = (stop.load() && !out.cost_failed && !out.interrupted) || out.memory_bound;
        if (out.memory_bound) out.root_lb = 0.0;
    }
};

// the error-size front: for every leaf budget b = 1..O.max_leaves the best tree of at most b
// leaves (Run::front: one searcher, its cache shared by every budget)
inline void run_front(const Problem& P, const Options& O, std::vector<Output>& outs) {
    if (P.w != nullptr)
        Run<double, Misclassification<double>>(P, O).front(outs);
    else
        Run<int32_t, Misclassification<int32_t>>(P, O).front(outs);
}

inline void run_search(const Problem& P, const Options& O, Output& out) {
    if (O.leaf_penalty > 0.0) {  // cost-complexity (objective.h: Penalised)
        if (P.w != nullptr)
            Run<double, Penalised<double>>(P, O).run(out);
        else
            Run<int32_t, Penalised<int32_t>>(P, O).run(out);
        return;
    }
    if (P.w != nullptr)
        Run<double, Misclassification<double>>(P, O).run(out);
    else
        Run<int32_t, Misclassification<int32_t>>(P, O).run(out);
}

}  // namespace tl::topk
