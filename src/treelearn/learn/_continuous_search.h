// Optimal classification trees over every threshold of numeric columns (issue 13), part 5 of 5:
// branch and bound, limits and threads. The other parts: _continuous_data.h (the file map is in
// its header comment), _continuous_depth2.h, _continuous_bounds.h, _continuous_cache.h.
//
// The same objective as the binary search (topk/): minimum weighted training misclassifications
// over all trees of depth <= max_depth whose splits are "x_f >= t", here with t ranging over
// every node-local midpoint between adjacent distinct values of x_f (categorical columns arrive
// one-hot as 0/1 columns). The search follows the ideas of ConTree (Brita, van der Linden,
// Demirovic: dynamic programming with branch and bound over sorted feature data); the code is
// written for treelearn.
//
// * A node: its leaf error, the cache, a depth-1 pass over every feature (incumbent, and the
//   order in which features are searched: best depth-1 error first); then, per feature, the
//   interval search of _continuous_bounds.h over its thresholds.
// * A threshold: at depth 2 the specialised solver of _continuous_depth2.h; deeper, the view is
//   split and both children solved recursively with upper bounds (the smaller child first, the
//   other with the remaining budget).
// * Anytime: an initial upper bound (the greedy tree's error) prunes from the start; on the time
//   limit, Ctrl-C or an interrupt callback the best tree found is returned with a valid lower
//   bound.
// * Threads (n_threads > 1): the root's features are farmed to workers (tllimits::run_workers:
//   no exception escapes a thread), each with its own buffers, sharing the incumbent (an atomic
//   upper bound, the tree under a mutex), the cache and the stop flag. Same optimal error.
// No recursion whose depth grows with the number of rows (recursion depth = tree depth).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "_continuous_bounds.h"
#include "_continuous_cache.h"
#include "_continuous_data.h"
#include "_continuous_depth2.h"
#include "tl_limits.h"
#include "tl_progress.h"

namespace tlcont {

namespace detail {

class Worker;

// what the threads of one search share
struct Shared {
    const Params& P;
    const Columns& D;
    Cache cache;
    std::atomic<bool> stop{false};
    std::atomic<bool> cb_interrupted{false};
    tllimits::steady::time_point t0;
    std::vector<Worker*> workers;  // workers[0] runs on the calling thread when alone
    Shared(const Params& p, const Columns& d, double fixed)
        : P(p), D(d), cache(p.mem_limit_bytes, fixed), t0(tllimits::steady::now()) {}
};

// the incumbent of one node: an atomic bound that threads read without a lock, and the tree
struct Incumbent {
    std::atomic<double> ub;
    std::mutex mu;
    double cost;
    Sol sol;
    Incumbent(double ub0, double cost0, const Sol& s) : ub(ub0), cost(cost0), sol(s) {}
    double bound() const { return ub.load(std::memory_order_relaxed); }
    // a tree of error total (built by make() only when it improves the bound)
    template <typename Make>
    void offer(double total, double eps, Make make) {
        std::lock_guard<std::mutex> lock(mu);
        if (total < ub.load() - eps) {
            ub.store(total);
            cost = total;
            sol = make();
        }
    }
};

// one node's data for the search of its features' thresholds
struct NodeCtx {
    const Entry* view;
    int m, d, level;
    const int* order;  // features, best depth-1 error first
    const int* fbest;  // per feature: index of its best depth-1 threshold (-1: constant here)
};

class Worker {
  public:
    long long evals = 0, nodes = 0, hits = 0;
    Depth2 d2;

    Worker(Shared& s, int levels, bool on_caller)
        : d2(s.D, s.P.use_skip != 0), S(s), P(s.P), D(s.D), side(s.D.n), buf(levels + 1),
          clock(s.t0, s.P.time_limit, &s.stop), caller(on_caller) {
        for (int l = 0; l < levels; ++l) buf[l].resize((size_t)D.F * D.n);
        feed.p = s.P.progress;
    }

    Res solve(const Entry* view, int m, int d, double UB, int level);

    // the interval search over the thresholds of feature f of a node
    void search_feature(const NodeCtx& nc, int f, Incumbent& inc, ThresholdIntervals& ti, double& lb_open);

  private:
    Shared& S;
    const Params& P;
    const Columns& D;
    std::vector<int32_t> side;
    std::vector<std::vector<Entry>> buf;  // per level: F * n, the children's views
    tllimits::Clock clock;
    bool caller;  // runs on the calling thread: may poll the interrupt callback (it may run Python)
    double last_cb = 0.0;
    tlprogress::Feed feed;  // live counters (verbose): written where the clock is read

    bool stopped() const { return S.stop.load(std::memory_order_relaxed); }
    bool check_stop() {
        if (feed.due(clock)) publish();
        if (clock.timed_out()) return true;
        if (caller) return poll_callback();
        return false;
    }
    bool poll_callback();
    void publish() {  // live counters (verbose); the shared cache's size from a lone worker only (no lock)
        feed.counts((double)nodes, 0.0);
        if (caller) tlprogress::store(feed.p, tlprogress::CACHE, (double)S.cache.n_entries());
    }
    bool cached(const Entry* view, int m, int d, double UB, uint64_t& h, Res& res);
    void eval_threshold(const NodeCtx& nc, int f, int k, const Interval& iv, const ThresholdIntervals& ti,
                        Incumbent& inc, double bl, double br, double& cl, double& cr, double& lb_open);
    void search_root_parallel(const NodeCtx& nc, Incumbent& inc, double& lb_open);
};


inline bool Worker::poll_callback() {
    if (!P.interrupt_cb) return false;
    double el = clock.elapsed();
    if (el - last_cb < 0.2) return false;
    last_cb = el;
    if (P.interrupt_cb(P.interrupt_ctx)) {
        S.cb_interrupted.store(true);
        S.stop.store(true);
        return true;
    }
    return false;
}

// the cache's answer for these rows and depth, if it settles the node (res filled in)
inline bool Worker::cached(const Entry* view, int m, int d, double UB, uint64_t& h, Res& res) {
    h = Cache::hash_rows(view, m, d);
    CacheHit e;
    S.cache.lookup(h, view, m, d, e);
    if (!e.found) return false;
    if (e.exact) {
        ++hits;
        res.lb = e.lb;
        res.cost = e.cost;
        res.sol = std::move(e.sol);
        return true;
    }
    if (e.lb >= UB - D.eps) {
        ++hits;
        res.lb = e.lb;
        return true;
    }
    return false;
}

// the optimal tree of depth <= d over the view's m rows, searched among trees of error < UB;
// res.cost/res.sol: the best tree found (at worst the leaf), res.lb a lower bound
inline Res Worker::solve(const Entry* view, int m, int d, double UB, int level) {
    const double eps = D.eps;
    ++nodes;
    Res res;
    std::vector<double> tot(D.C), cnt(D.C);
    D.totals(view, m, tot.data());
    double leaf = D.leaf_err(tot.data());
    res.sol = leaf_sol();
    res.cost = leaf;
    res.lb = leaf;
    if (d == 0 || leaf <= eps) return res;
    res.lb = 0.0;
    if (UB <= eps) return res;  // nothing can be below the bound; 0 is a valid lower bound

    // a set below a single split is a prefix or suffix of one column: only sets two or more splits
    // down can be reached along different paths
    const bool cacheable = P.use_cache && level >= 2 && d >= 2;
    uint64_t h = 0;
    if (cacheable && cached(view, m, d, UB, h, res)) return res;

    // depth-1 pass: incumbent, feature order, first threshold per feature
    std::vector<double> ferr(D.F);
    std::vector<int> fbest(D.F);
    Side s1;
    D.depth1_all(view, m, tot.data(), ferr.data(), fbest.data(), s1, cnt.data());
    if (s1.bf >= 0 && s1.best < res.cost - eps) {
        res.cost = s1.best;
        res.sol = D.side_sol(s1);
    }
    if (d == 1 || res.cost <= eps) {  // depth 1 is exact; a zero error cannot be beaten
        res.lb = res.cost;
        return res;
    }
    std::vector<int> order(D.F);
    for (int f = 0; f < D.F; ++f) order[f] = f;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ferr[a] < ferr[b]; });

    Incumbent inc(std::min(UB, res.cost), res.cost, res.sol);  // improvements must be < ub - eps
    if (level == 0) feed.incumbent(inc.bound());  // live counters (verbose): the root's first incumbent
    double lb_open = std::numeric_limits<double>::infinity();  // bounds of what a stop left unsearched
    NodeCtx nc{view, m, d, level, order.data(), fbest.data()};
    if (level == 0 && S.workers.size() > 1) {
        search_root_parallel(nc, inc, lb_open);
    } else {
        ThresholdIntervals ti;
        ti.on = P.use_intervals != 0;
        for (int oi = 0; oi < D.F; ++oi) {
            int f = order[oi];
            if (stopped()) {
                lb_open = 0.0;
                break;
            }
            if (fbest[f] < 0) continue;  // constant on this node
            search_feature(nc, f, inc, ti, lb_open);
            if (inc.cost <= eps) break;
        }
    }
    res.cost = inc.cost;
    res.sol = std::move(inc.sol);
    if (stopped()) {
        res.lb = std::max(0.0, std::min({res.cost, UB, lb_open}));
        return res;
    }
    bool exact = res.cost < UB - eps;
    res.lb = exact ? res.cost : UB;
    if (res.lb > res.cost) res.lb = res.cost;
    if (cacheable) S.cache.store(h, view, m, d, res.lb, exact, res.cost, res.sol);
    return res;
}

// the root's features farmed to every worker; each keeps its own intervals and buffers
inline void Worker::search_root_parallel(const NodeCtx& nc, Incumbent& inc, double& lb_open) {
    std::atomic<int> next{0};
    std::mutex mu;
    const int T = (int)S.workers.size();
    tllimits::run_workers(T, [&](int t) {
        Worker& w = *S.workers[t];
        ThresholdIntervals ti;
        ti.on = P.use_intervals != 0;
        double lbo = std::numeric_limits<double>::infinity();
        try {
            for (;;) {
                int oi = next.fetch_add(1);
                if (oi >= D.F) break;
                if (w.stopped()) {
                    lbo = 0.0;
                    break;
                }
                int f = nc.order[oi];
                if (nc.fbest[f] < 0) continue;
                w.search_feature(nc, f, inc, ti, lbo);
                if (inc.bound() <= D.eps) break;
            }
        } catch (...) {
            S.stop.store(true);  // the others stop too; run_workers re-throws in the caller
            throw;
        }
        std::lock_guard<std::mutex> lock(mu);
        lb_open = std::min(lb_open, lbo);
    });
}

inline void Worker::search_feature(const NodeCtx& nc, int f, Incumbent& inc, ThresholdIntervals& ti,
                                   double& lb_open) {
    const double eps = D.eps;
    ti.init(nc.view + (size_t)f * nc.m, nc.m, D);
    const int fb = nc.fbest[f];
    bool first = true;
    while (ti.pending()) {
        Interval iv = ti.next();
        if (stopped()) {
            lb_open = std::min(lb_open, ti.open_bound(ti.head - 1));  // what is left of this feature
            return;
        }
        if (!ti.shrink(iv, inc.bound(), eps)) continue;
        int k = (iv.a + iv.b) / 2;  // bisection (start_best: first the best depth-1 threshold)
        if (first && P.start_best && fb >= iv.a && fb <= iv.b) k = fb;
        first = false;
        double bl, br, cl, cr;
        ti.bound_at(k, iv.lo, iv.hi, bl, br);
        eval_threshold(nc, f, k, iv, ti, inc, bl, br, cl, cr, lb_open);
        if (nc.level == 0) feed.incumbent(inc.bound());  // live counters (verbose): the root's best
        cl = std::max(cl, bl);
        cr = std::max(cr, br);
        ti.record(k, cl, cr);
        if (inc.bound() <= eps) return;
        if (check_stop()) lb_open = std::min(lb_open, ti.open_around(iv, k, cl, cr));
        ti.split(iv, k);
    }
}

// threshold k of feature f: the best trees of both children (bounds cl, cr), offered to inc
inline void Worker::eval_threshold(const NodeCtx& nc, int f, int k, const Interval& iv,
                                   const ThresholdIntervals& ti, Incumbent& inc, double bl, double br,
                                   double& cl, double& cr, double& lb_open) {
    const double eps = D.eps;
    const Entry* vf = nc.view + (size_t)f * nc.m;
    const int p = ti.pos[k], m = nc.m, d = nc.d;
    ++evals;
    auto thr = [&]() { return D.thr_of(f, vf[p - 1].rank, vf[p].rank); };
    if (d == 2 && P.use_d2) {
        Side sd[2];
        double lbs[2] = {bl, br};
        d2.eval(nc.view, m, f, p, sd, nc.order, lbs);
        cl = sd[0].best;
        cr = sd[1].best;
        if (cl + cr < inc.bound() - eps)
            inc.offer(cl + cr, eps, [&]() { return join(f, thr(), D.side_sol(sd[0]), D.side_sol(sd[1])); });
        return;
    }
    Entry* child = buf[nc.level].data();
    D.split_view(nc.view, m, f, p, child, side.data());
    const Entry* Lv = child;
    const Entry* Rv = child + (size_t)D.F * p;
    const int mr = m - p;
    const bool left_first = p < mr;
    const double slack = ti.slack(iv, k);
    double ub = inc.bound();
    Res r1 = left_first ? solve(Lv, p, d - 1, ub - br, nc.level + 1) : solve(Rv, mr, d - 1, ub - bl, nc.level + 1);
    const double other_b = left_first ? br : bl;
    Res r2;
    bool have2 = false;
    ub = inc.bound();
    if (!stopped() && r1.lb + other_b < ub - eps) {
        double base = (r1.cost <= r1.lb + eps) ? r1.cost : r1.lb;
        // the first child's search used the next level's buffer: this level's views are intact
        r2 = left_first ? solve(Rv, mr, d - 1, ub - base + slack, nc.level + 1)
                        : solve(Lv, p, d - 1, ub - base + slack, nc.level + 1);
        have2 = true;
    }
    double l1 = r1.lb, l2 = have2 ? r2.lb : other_b;
    cl = left_first ? l1 : l2;
    cr = left_first ? l2 : l1;
    if (have2 && r1.cost + r2.cost < inc.bound() - eps) {
        inc.offer(r1.cost + r2.cost, eps, [&]() {
            return left_first ? join(f, thr(), r1.sol, r2.sol) : join(f, thr(), r2.sol, r1.sol);
        });
    }
    if (stopped()) lb_open = std::min(lb_open, cl + cr);
}

}  // namespace detail

// the whole search: columns ranked once, workers set up within the memory cap, the root solved
inline void run_continuous(const Params& P, Output& out) {
    using namespace detail;
    const int n = P.n, F = P.F, D_ = P.max_depth;
    // buffers for the children of nodes with depth budget >= 3 (>= 2 without the depth-2 solver)
    const int levels = std::max(0, D_ - (P.use_d2 ? 2 : 1));
    const double per_worker = 8.0 * (double)F * n * levels + 8.0 * n + 64.0 * P.C;
    double fixed = 8.0 * (double)F * n + per_worker + 4.0 * n + 13.0 * n;
    out.fixed_bytes = fixed;
    if (fixed > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    int T = std::max(1, std::min(P.n_threads, std::max(1, F)));
    if (D_ < 2 || n == 0) T = 1;
    while (T > 1 && fixed + (T - 1) * per_worker > P.mem_limit_bytes) --T;  // fewer threads within the cap
    fixed += (T - 1) * per_worker;
    Columns cols;
    cols.build(P);
    Shared S(P, cols, fixed);
    tllimits::DeadlineWatch watch(S.t0, P.time_limit, &S.stop, (double)P.F * n >= 65536.0);  // slow nodes: stop on time
    std::vector<std::unique_ptr<Worker>> ws;
    for (int t = 0; t < T; ++t) {
        ws.emplace_back(new Worker(S, levels, T == 1));
        S.workers.push_back(ws.back().get());
    }
    double UB = P.upper_bound > 0 ? P.upper_bound : std::numeric_limits<double>::infinity();
    Res r = (n > 0 && F > 0) ? ws[0]->solve(cols.root_view.data(), n, D_, UB, 0) : Res();
    if (n > 0 && F == 0) {
        std::vector<double> tot(P.C, 0.0);
        for (int i = 0; i < n; ++i) tot[cols.lab[i]] += cols.wof(i);
        r.cost = r.lb = cols.leaf_err(tot.data());
        r.sol = leaf_sol();
    }
    const bool stopped = S.stop.load();
    out.interrupted = stopped && (S.cb_interrupted.load() || tllimits::interrupted());
    out.timed_out = stopped && !out.interrupted;
    out.cost = r.cost;
    out.lower_bound = r.lb;
    out.threads_used = T;
    for (auto& w : ws) {
        out.evaluations += w->evals;
        out.d2_evaluations += w->d2.evals;
        out.nodes += w->nodes;
        out.cache_hits += w->hits;
    }
    out.cache_entries = S.cache.n_entries();
    out.peak_bytes = S.cache.peak_bytes();
    const Sol& s = r.sol;  // preorder arrays with explicit children
    const int N = (int)s.size();
    out.feature.resize(N);
    out.threshold.resize(N);
    out.left.resize(N);
    out.right.resize(N);
    for (int i = 0; i < N; ++i) {
        out.feature[i] = s[i].feature;
        out.threshold[i] = s[i].thr;
        out.left[i] = s[i].feature >= 0 ? i + 1 : -1;
        out.right[i] = s[i].feature >= 0 ? s[i].right : -1;
    }
}

}  // namespace tlcont
