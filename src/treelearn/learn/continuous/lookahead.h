// Continuous optimal search, part 6 of 7: the Top-k incumbent of the anytime search.
//
// Before the exact search of a deep tree (continuous.py runs it from depth 4), a restricted
// search gives a far better first incumbent than the greedy tree: the idea of Top-k (paper 003:
// the k best features as candidate splits, from greedy at k = 1 towards optimal) on numeric
// columns. At a node with depth budget >= 3 the candidates are the k columns whose best impurity
// split (the criterion of the greedy tree, each column at its own best threshold) scores lowest;
// both children of every candidate are searched the same way; a node of budget <= 2 is solved
// exactly by the search's own depth-2 solver. Rounds k = 1, 2, 4, ... up to every column run
// while the phase's time budget lasts; the (rows, depth) cache keeps the depth-2 answers of one
// round for the next. Every tree it returns is a real tree with its exact training error, so the
// exact search may start from it (ties included) and a stopped fit may return it; the exact
// search also takes its root split first (Params::root_hint_feature), solving that root's
// subtrees exactly before anything else.
//
// When every column is done and the budget (a time limit) allows, one round with every column
// for each of the other criteria (entropy, Gini, Kearns-Mansour) follows; the best tree is kept.
//
// With k = every column the phase costs about F^(d-2) depth-2 solves (what it gains on the
// benchmarks: docs/guide/topk.rst).
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/criteria.h"
#include "search.h"

namespace tl::cont {

namespace detail {

// one column's best impurity split at a node: its score, the rows going left (p, in the column's
// order) and the ranks either side of the threshold
struct LaCand {
    double score;
    int f, p, rl, rr;
};

template <class Crit>
class Lookahead {
  public:
    Lookahead(Worker& w, const Columns& D, const Crit& crit, int k) : W(w), D(D), crit(crit), k(k) {}

    // the best tree of depth <= d over the view's m rows that the restricted search finds; trees of
    // error >= UB are not searched for (the answer may then be the leaf)
    Res solve(const Entry* view, int m, int d, double UB, int level) {
        if (d <= 2) return W.solve(view, m, d, UB, level);  // exact: the depth-2 solver
        Res best;
        std::vector<LaCand> cands;
        if (open(view, m, best, cands)) return best;
        for (const LaCand& c : cands) {
            if (W.stopped() || best.cost <= D.eps) break;  // (no tree beats zero errors)
            double cost;
            Sol sol;
            if (try_split(view, m, d, c, std::min(UB, best.cost), level, cost, sol) && cost < best.cost - D.eps) {
                best.cost = cost;
                best.sol = std::move(sol);
            }
        }
        return best;
    }

    // the node's leaf (in best) and candidates: true when the leaf is pure (nothing to split)
    bool open(const Entry* view, int m, Res& best, std::vector<LaCand>& cands) {
        std::vector<double> tot(D.C), cnt(D.C), buf(D.C);
        D.totals(view, m, tot.data());
        best.cost = D.leaf_err(tot.data());
        best.sol = leaf_sol();
        if (best.cost <= D.eps) return true;
        candidates(view, m, tot.data(), cnt.data(), buf.data(), cands);
        return false;
    }

    // candidate c of a node of budget d: true, with the tree and its error, when it is below ub
    bool try_split(const Entry* view, int m, int d, const LaCand& c, double ub, int level, double& cost, Sol& sol) {
        Entry* child = W.level_buffer(level);
        D.split_view(view, m, c.f, c.p, child, W.side_scratch());
        const Entry* Lv = child;
        const Entry* Rv = child + (size_t)D.F * c.p;
        Res r1 = solve(Lv, c.p, d - 1, ub, level + 1);
        if (r1.cost >= ub - D.eps || W.stopped()) return false;
        Res r2 = solve(Rv, m - c.p, d - 1, ub - r1.cost, level + 1);
        cost = r1.cost + r2.cost;
        if (cost >= ub - D.eps) return false;
        sol = join(c.f, D.thr_of(c.f, c.rl, c.rr), c.rr, r1.sol, r2.sol);
        return true;
    }

  private:
    Worker& W;
    const Columns& D;
    const Crit& crit;
    int k;

    // the k columns of the lowest best-split score (ties: column order), each at its first best
    // threshold in ascending order
    void candidates(const Entry* view, int m, const double* tot, double* cnt, double* buf,
                    std::vector<LaCand>& out) const {
        double T = 0.0;
        for (int c = 0; c < D.C; ++c) T += tot[c];
        const double tie = tl::GAIN_TIE * std::max(1.0, T);
        out.clear();
        for (int f = 0; f < D.F; ++f) {
            const Entry* v = view + (size_t)f * m;
            std::fill(cnt, cnt + D.C, 0.0);
            double acc = 0.0;
            LaCand b{std::numeric_limits<double>::infinity(), f, -1, 0, 0};
            int prev = v[0].rank;
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                if (e.rank != prev) {
                    double s = crit.score(cnt, tot, acc, T - acc, buf);
                    if (s < b.score - tie) b = LaCand{s, f, i, prev, e.rank};
                    prev = e.rank;
                }
                double ww = D.wof(e.row);
                cnt[D.lab[e.row]] += ww;
                acc += ww;
            }
            if (b.p > 0) out.push_back(b);
        }
        std::stable_sort(out.begin(), out.end(), [](const LaCand& a, const LaCand& b) { return a.score < b.score; });
        if ((int)out.size() > k) out.resize(k);
    }
};

// one round at the root with the root's candidates dealt to the workers (n_jobs): each candidate
// is searched below the best error found so far, up to a tie when it comes before the best
// candidate, so the round's tree (smallest error, then earliest candidate) is that of one thread
template <class Crit>
Res lookahead_round(std::vector<Worker*>& ws, std::atomic<bool>& stop, const Columns& D, const Crit& crit, int k,
                    int d, double UB) {
    const Entry* root = D.root_view.data();
    Lookahead<Crit> head(*ws[0], D, crit, k);
    if (d <= 2 || ws.size() == 1) return head.solve(root, D.n, d, UB, 0);
    Res best;
    std::vector<LaCand> cands;
    if (head.open(root, D.n, best, cands)) return best;
    std::mutex mu;
    std::atomic<int> next{0};
    int best_i = (int)cands.size();
    best.cost = std::min(best.cost, UB);  // (the leaf's tree stays in best.sol until a split beats it)
    const double cap = best.cost;
    tl::run_workers((int)ws.size(), [&](int t) {
        Lookahead<Crit> la(*ws[t], D, crit, k);
        try {
            for (;;) {
                int i = next.fetch_add(1);
                if (i >= (int)cands.size() || ws[t]->stopped()) break;
                double ub;
                {
                    std::lock_guard<std::mutex> lock(mu);
                    if (best.cost <= D.eps && best_i < i) break;  // a zero-error tree before it: nothing to take
                    ub = i < best_i ? std::min(cap, best.cost + 2.0 * D.eps) : best.cost;
                }
                double cost;
                Sol sol;
                if (!la.try_split(root, D.n, d, cands[i], ub, 0, cost, sol)) continue;
                std::lock_guard<std::mutex> lock(mu);
                if (cost < best.cost - D.eps || (i < best_i && cost < best.cost + D.eps)) {
                    best.cost = cost;
                    best.sol = std::move(sol);
                    best_i = i;
                }
            }
        } catch (...) {
            stop.store(true);  // the others stop too; run_workers re-throws in the caller
            throw;
        }
    });
    if (best_i == (int)cands.size()) {  // no split below the leaf and UB: the leaf's error
        std::vector<double> tot(D.C);
        D.totals(root, D.n, tot.data());
        best.cost = D.leaf_err(tot.data());
    }
    return best;
}

}  // namespace detail

struct LookaheadOutput {
    Output tree;      // the best tree found (feature, threshold, left, right) and its cost
    int rounds = 0;   // rounds finished (k = 1, 2, 4, ...)
    int k_done = 0;   // the k of the last round finished
    bool complete = false;  // the round with every column finished
};

// rounds k = 1, 2, 4, ... (k_max <= 0: up to every column) within P.time_limit (the phase's
// budget), the root's candidates dealt to P.n_threads threads (within the memory cap; the same
// tree); crit_code as core/criteria.h (0 entropy, 1 Gini, 2 Kearns-Mansour; others: entropy)
inline void run_lookahead(const Params& P0, int crit_code, int k_max, LookaheadOutput& res) {
    using namespace detail;
    Params P = P0;
    P.use_d2 = 1;
    Output& out = res.tree;
    const int levels = buffer_levels(P);
    double fixed = fixed_bytes(P, levels);
    out.fixed_bytes = fixed;
    if (fixed > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    const double per_worker = worker_bytes(P, levels);
    int T = std::max(1, std::min(P.n_threads, std::max(1, P.F)));
    if (P.max_depth < 3) T = 1;
    while (T > 1 && fixed + (T - 1) * per_worker > P.mem_limit_bytes) --T;  // fewer threads within the cap
    fixed += (T - 1) * per_worker;
    const tl::steady::time_point t0 = tl::steady::now();
    Columns cols;
    if (!cols.build(P, setup_stop(P, t0))) {  // out of time (or Ctrl-C) while ranking: no incumbent
        out.interrupted = tl::interrupted();
        out.timed_out = !out.interrupted;
        out.cost = std::numeric_limits<double>::infinity();
        write_tree(leaf_sol(), out);
        return;
    }
    Shared S(P, cols, fixed);
    S.t0 = t0;
    tl::DeadlineWatch watch(S.t0, P.time_limit, &S.stop, (double)P.F * P.n >= 65536.0);
    std::vector<std::unique_ptr<Worker>> owned;
    for (int t = 0; t < T; ++t) {
        owned.emplace_back(new Worker(S, levels, T == 1));
        S.workers.push_back(owned.back().get());
    }
    // the workers' own solve() runs below the root only: the root's split is this file's
    std::vector<Worker*> ws = S.workers;
    S.workers.resize(1);
    Worker& w = *ws[0];
    tl::Entropy ent;
    tl::Gini gini;
    tl::KearnsMansour km;
    ent.setup(P.w, P.n, P.C);
    gini.setup(P.w, P.n, P.C);
    km.setup(P.w, P.n, P.C);
    Res best;
    std::vector<double> tot(P.C, 0.0);
    cols.totals(cols.root_view.data(), P.n, tot.data());
    best.cost = cols.leaf_err(tot.data());
    best.sol = leaf_sol();
    S.note_incumbent(best.cost);
    const int kmax = k_max > 0 ? std::min(k_max, P.F) : P.F;
    auto round = [&](int code, int k) {
        Res r = code == 1   ? lookahead_round(ws, S.stop, cols, gini, k, P.max_depth, best.cost)
                : code == 2 ? lookahead_round(ws, S.stop, cols, km, k, P.max_depth, best.cost)
                            : lookahead_round(ws, S.stop, cols, ent, k, P.max_depth, best.cost);
        if (r.cost < best.cost - cols.eps) {
            best = std::move(r);
            S.note_incumbent(best.cost);  // the history (stopped rounds too: their trees are real)
            tl::lower_to(P.progress, tl::INCUMBENT, best.cost);  // live counters (verbose)
        }
    };
    const int first = crit_code == 1 || crit_code == 2 ? crit_code : 0;
    for (int k = 1; P.n > 0 && P.F > 0 && P.max_depth >= 1; k = std::min(2 * k, kmax)) {
        round(first, k);
        if (w.stopped()) break;
        ++res.rounds;
        res.k_done = k;
        if (best.cost <= cols.eps) break;  // no later round beats zero errors
        if (k >= kmax || P.max_depth <= 2) {
            res.complete = k >= P.F || P.max_depth <= 2;
            break;
        }
    }
    // every column done and budget left: the other criteria rank the columns differently, and one
    // of their trees is often better
    for (int code = 0; code < 3 && res.complete && P.max_depth >= 3 && P.time_limit > 0.0 && best.cost > cols.eps;
         ++code) {
        if (code == first || w.stopped()) continue;
        round(code, kmax);
        if (!w.stopped()) ++res.rounds;
    }
    const bool stopped = S.stop.load();
    out.interrupted = stopped && (S.cb_interrupted.load() || tl::interrupted());
    out.timed_out = stopped && !out.interrupted;
    out.cost = best.cost;
    out.threads_used = T;
    for (Worker* x : ws) {
        out.nodes += x->nodes;
        out.evaluations += x->evals;
        out.d2_evaluations += x->d2.evals;
        out.cache_hits += x->hits;
    }
    out.cache_entries = S.cache.n_entries();
    out.peak_bytes = S.cache.peak_bytes();
    out.history = S.history;
    write_tree(best.sol, out);
}

}  // namespace tl::cont
