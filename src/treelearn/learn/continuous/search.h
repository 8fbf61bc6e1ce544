// Optimal classification trees over every threshold of numeric columns, part 5 of 7: branch and
// bound, limits and threads. The other parts: data.h (the file map is in its header comment),
// depth2.h, bounds.h, cache.h, lookahead.h, share.h.
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
//   interval search of bounds.h over its thresholds.
// * A threshold: at depth 2 the specialised solver of depth2.h; deeper, the view is
//   split and both children solved recursively with upper bounds (the smaller child first, the
//   other with the remaining budget).
// * Anytime: an initial upper bound (the greedy tree's error) prunes from the start; on the time
//   limit, Ctrl-C or an interrupt callback the best tree found is returned with a valid lower
//   bound.
// * The root steps the threshold scans of up to Params::root_lanes features in turn, one threshold each
//   (Worker::search_root_lanes): the feature that leads to a good tree at once need not wait for
//   the scan of a feature before it in the order to finish, so one thread finds what several
//   threads find early (under a time limit the answer no longer hinges on n_jobs).
// * Threads (n_threads > 1): the root's features are farmed to workers (tl::run_workers:
//   no exception escapes a thread), each with its own buffers and lanes, sharing the root's
//   incumbent (under a mutex), the cache and the stop flag. The same tree as one thread (the tie rule).
// * The tie rule (the returned tree is a function of the data alone): at every node, the leaf if
//   no tree of the depth budget is better; else the node's best depth-1 tree (the pass's first
//   strict improvement: features in column order at a node with budget >= 2, in the parent's
//   order at a depth-1 child) if no deeper tree is better; else, among the root splits of the
//   smallest error, the first in a fixed order: features by their position in the node's order
//   (best depth-1 error first, ties by column), then the feature's thresholds in the fixed
//   bisection order of bounds.h (the middle, then the quarters, ...); the children are their own
//   canonical subtrees. One thread meets the splits it does not skip in exactly this order, so
//   the first tree of the smallest error it meets is the rule's tree: a split is taken only when
//   strictly better than the incumbent, and a node whose incumbent reaches the node's lower bound
//   (0, the bound its parent's intervals give it, the cache's) is closed at once. Where the order
//   is left (root features dealt to threads or Dask shares, share.h, or stepped in
//   turn by the root's lanes; the root hint's split searched first), the incumbent carries its (position, order key) and a split that comes
//   before it is searched for ties too (Incumbent::bound_at); whatever was met first, the result
//   is the same tree. Errors are compared with the search's tolerance eps (1e-9 of the total
//   weight): exact with unit or integer weights; with fractional weights two trees closer than
//   eps may be taken in either order.
// No recursion whose depth grows with the number of rows (recursion depth = tree depth).
#pragma once

#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>

#include "bounds.h"
#include "cache.h"
#include "data.h"
#include "depth2.h"
#include "core/limits.h"
#include "core/progress.h"

namespace tl::cont {

namespace detail {

class Worker;

// what the threads of one search share
struct Shared {
    const Params& P;
    const Columns& D;
    Cache cache;
    std::atomic<bool> stop{false};
    std::atomic<bool> cb_interrupted{false};
    std::mutex root_mu;  // guards the root's incumbent while threads share it
    tl::steady::time_point t0;
    std::clock_t cpu0 = std::clock();  // the process's CPU time at the start (Params::cpu_limit)
    std::vector<Worker*> workers;  // workers[0] runs on the calling thread when alone
    int root_lanes = 1;            // features each worker's root scans in turn (search_root_lanes)
    std::mutex history_mu;
    std::vector<std::pair<double, double>> history;  // (seconds, error) of each better root incumbent
    Shared(const Params& p, const Columns& d, double fixed)
        : P(p), D(d), cache(p.mem_limit_bytes, fixed), t0(tl::steady::now()) {}

    // the root's incumbent is now `cost`: recorded when it is better than the last one
    void note_incumbent(double cost) {
        std::lock_guard<std::mutex> lock(history_mu);
        if (!history.empty() && !(cost < history.back().second - D.eps)) return;
        history.emplace_back(std::chrono::duration<double>(tl::steady::now() - t0).count(), cost);
    }
};

// the incumbent of one node and the tie rule's bounds. (pos, key): the position (in the node's
// feature order) of the root feature of sol and the order key (bounds.h) of its threshold; pos -1
// for the leaf or the depth-1 tree (they come first). A split (p, key) is taken when its error is
// below bound_at(p, key) - eps: below the incumbent's error, or up to a tie when (p, key) comes
// before (pos, key); never at or above the caller's bound UB0; and up to a tie with `ext`, the
// best error other shares found (Dask). bound_at(p, key) holds for every split at position p whose
// key is at least `key` (the bound only shrinks as keys grow). mu: set while threads share the
// incumbent (the root), then every read and write holds it.
struct Incumbent {
    double UB0 = 0.0, eps = 0.0, cost = 0.0;
    double ext = std::numeric_limits<double>::infinity();
    int pos = -1;
    OrderKey key = -1;
    Sol sol;
    std::mutex* mu = nullptr;

    void init(double UB, double cost0, const Sol& s, double e) {
        UB0 = UB;
        cost = cost0;
        sol = s;
        eps = e;
    }
    double bound_at(int p, OrderKey k) const {
        if (!mu) return raw_bound(p, k);
        std::lock_guard<std::mutex> lock(*mu);
        return raw_bound(p, k);
    }
    double best() const {
        if (!mu) return cost;
        std::lock_guard<std::mutex> lock(*mu);
        return cost;
    }
    // nothing above lb can be taken any more (the incumbent, the caller's bound or another share's
    // best is at lb): what is left is the order's first tree of that error
    bool at_bound(double lb) const {
        std::unique_lock<std::mutex> lock;
        if (mu) lock = std::unique_lock<std::mutex>(*mu);
        return std::min({cost, UB0 - 2.0 * eps, ext}) <= lb + eps;
    }
    // split (p, k) whose tree has error total (built by make() only when it is taken)
    template <typename Make>
    void offer(int p, OrderKey k, double total, Make make) {
        std::unique_lock<std::mutex> lock;
        if (mu) lock = std::unique_lock<std::mutex>(*mu);
        if (total < raw_bound(p, k) - eps) {
            cost = total;
            pos = p;
            key = k;
            sol = make();
        }
    }

  private:
    double raw_bound(int p, OrderKey k) const {
        const bool first = p < pos || (p == pos && k < key);  // comes before the incumbent: ties too
        double b = std::min(UB0, first ? cost + 2.0 * eps : cost);
        return std::min(b, ext + 2.0 * eps);
    }
};

// the depth-2 solver's caps when they are off (ablation)
const double no_caps[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};

// one node's data for the search of its features' thresholds
struct NodeCtx {
    const Entry* view;
    int m, d, level;
    double lb;         // a lower bound on the node's optimum: an incumbent there closes the node
    double end_lb;     // a lower bound on its optimum one level shallower (bounds.h's virtual ends)
    const int* order;  // features, best depth-1 error first
    const int* fbest;  // per feature: index of its best depth-1 threshold (-1: constant here)
};

// the interval search over one feature's thresholds, one threshold at a time (Worker::begin_feature,
// step_feature): the root interleaves the scans of several features (Worker::search_root_lanes)
struct FeatureScan {
    ThresholdIntervals* ti = nullptr;  // the scan's intervals and buffers
    int oi = -1;                       // the feature's position in the node's order (-1: no feature)
    int fb = -1;                       // the first threshold searched, if any
};

// bytes one lane's scan takes per row of the root (ThresholdIntervals: wpre, pos, lbL, lbR)
constexpr double LANE_BYTES_PER_ROW = 28.0;

// one node between its depth-1 pass and its result (Worker::open_node, close_node)
struct Node {
    std::vector<double> tot, cnt, ferr, fgini;
    std::vector<int> fbest, order;
    Res res;  // the answer when open_node settles the node, else the leaf or depth-1 tree
    uint64_t h = 0;
    bool cacheable = false;
    double lb_open = std::numeric_limits<double>::infinity();  // bounds of what a stop left unsearched
    Incumbent inc;
    NodeCtx nc{};
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
        d2.simd_on = s.P.use_simd != 0;
    }

    // the optimal tree of depth <= d over the view's m rows (porder: the parent's feature order,
    // used by a depth-1 node's pass; LB: a lower bound on its optimum, from the parent)
    Res solve(const Entry* view, int m, int d, double UB, int level, const int* porder = nullptr, double LB = 0.0);

    // the node's leaf, cache and depth-1 pass: true when they settle it (nd.res is the answer);
    // else nd is ready for the search of its features
    bool open_node(Node& nd, const Entry* view, int m, int d, double UB, int level, const int* porder,
                   double LB = 0.0);

    // the interval search over the thresholds of the feature at position oi of the node's order
    // (the root hint's threshold first when oi is its feature at the root)
    void search_feature(const NodeCtx& nc, int oi, Incumbent& inc, ThresholdIntervals& ti, double& lb_open);
    // the same in steps: begin, then one threshold per step until it returns false
    void begin_feature(const NodeCtx& nc, int oi, FeatureScan& fs);
    bool step_feature(const NodeCtx& nc, FeatureScan& fs, Incumbent& inc, double& lb_open);

    // the positions of the node's order in the order the root searches them: the root hint's
    // feature first, then the node's order
    std::vector<int> root_visit_order(const Node& nd) const;

    bool stopped() const { return S.stop.load(std::memory_order_relaxed); }

    // the children's views of a node at this level, and n scratch ints (the Top-k incumbent,
    // lookahead.h, splits its nodes with them)
    Entry* level_buffer(int level) { return buf[level].data(); }
    int32_t* side_scratch() { return side.data(); }

  private:
    Shared& S;
    const Params& P;
    const Columns& D;
    std::vector<int32_t> side;
    std::vector<std::vector<Entry>> buf;  // per level: F * n, the children's views
    tl::Clock clock;
    bool caller;  // runs on the calling thread: may poll the interrupt callback (it may run Python)
    double last_cb = 0.0;
    unsigned cpu_reads = 0;  // clock.reads at the last read of the CPU time
    tl::Feed feed;  // live counters (verbose): written where the clock is read

    bool check_stop() {
        if (feed.due(clock)) publish();
        if (clock.timed_out()) return true;
        if (P.cpu_limit > 0.0 && clock.reads != cpu_reads) {  // (read as often as the clock)
            cpu_reads = clock.reads;
            if ((double)(std::clock() - S.cpu0) / CLOCKS_PER_SEC >= P.cpu_limit) {
                S.stop.store(true);
                return true;
            }
        }
        if (caller) return poll_callback();
        return false;
    }
    bool poll_callback();
    void publish() {  // live counters (verbose); the shared cache's size from a lone worker only (no lock)
        feed.counts((double)nodes, 0.0);
        if (caller) tl::store(feed.p, tl::CACHE, (double)S.cache.n_entries());
    }
    bool cached(const Entry* view, int m, int d, double UB, uint64_t& h, Res& res);
    bool pick(ThresholdIntervals& ti, Interval& iv, int& k, OrderKey& key, double ub) const;
    void eval_threshold(const NodeCtx& nc, int oi, int k, OrderKey key, const Interval& iv,
                        ThresholdIntervals& ti, Incumbent& inc, double bl, double br, double& cl, double& cr,
                        double& lb_open);
    void search_root_parallel(Node& nd);
    template <typename Next>
    void search_root_lanes(Node& nd, Next next_position, double& lb_open);
    Res close_node(Node& nd, double UB);
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

// the cache's answer for these rows and depth, if it settles the node (res filled in); else
// res.lb is the bound it holds (0: none)
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
    res.lb = e.lb;
    if (e.lb >= UB - D.eps) {
        ++hits;
        return true;
    }
    return false;
}

// the optimal tree of depth <= d over the view's m rows, searched among trees of error < UB;
// res.cost/res.sol: the best tree found (at worst the leaf), res.lb a lower bound. When the
// optimum is below UB - eps the tree is the tie rule's (see the header), whatever the cache holds
inline Res Worker::solve(const Entry* view, int m, int d, double UB, int level, const int* porder, double LB) {
    ++nodes;
    Node nd;
    if (open_node(nd, view, m, d, UB, level, porder, LB)) return std::move(nd.res);
    // the vector kernel's node (depth-2 nodes do not nest; not at a depth-2 root, whose lanes
    // interleave its features: the kernel re-sorts per feature)
    if (d == 2 && P.use_d2 && level > 0) d2.begin_node(view, m);
    if (level == 0 && S.workers.size() > 1) {
        search_root_parallel(nd);
    } else if (level == 0) {
        const std::vector<int> visit = root_visit_order(nd);
        int i = 0;
        search_root_lanes(nd, [&]() { return i < D.F ? visit[i++] : -1; }, nd.lb_open);
    } else {
        ThresholdIntervals ti;
        ti.on = P.use_intervals != 0;
        for (int oi = 0; oi < D.F; ++oi) {
            if (stopped()) {
                nd.lb_open = std::max(nd.nc.lb, 0.0);
                break;
            }
            if (nd.fbest[nd.order[oi]] >= 0) search_feature(nd.nc, oi, nd.inc, ti, nd.lb_open);
            // positions still to visit come in increasing order: the next one's bound is the largest
            if (oi + 1 < D.F && nd.inc.bound_at(oi + 1, -1) <= nd.nc.lb + D.eps) break;
        }
    }
    d2.end_node();
    return close_node(nd, UB);
}

inline bool Worker::open_node(Node& nd, const Entry* view, int m, int d, double UB, int level, const int* porder,
                              double LB) {
    const double eps = D.eps;
    Res& res = nd.res;
    nd.tot.resize(D.C);
    nd.cnt.resize(D.C);
    D.totals(view, m, nd.tot.data());
    double leaf = D.leaf_err(nd.tot.data());
    res.sol = leaf_sol();
    res.cost = leaf;
    res.lb = leaf;
    if (d == 0 || leaf <= std::max(LB, 0.0) + eps) return true;
    res.lb = 0.0;
    if (UB <= eps) return true;  // nothing can be below the bound; 0 is a valid lower bound

    // a set below a single split is a prefix or suffix of one column: only sets two or more splits
    // down can be reached along different paths
    nd.cacheable = P.use_cache && level >= 2 && d >= 2;
    if (nd.cacheable && cached(view, m, d, UB, nd.h, res)) return true;
    LB = D.round_lb(std::max({LB, res.lb, 0.0}));

    // depth-1 pass: incumbent, feature order, first threshold per feature
    nd.ferr.resize(D.F);
    nd.fbest.resize(D.F);
    Side s1;
    const bool gini = d >= 2 && (P.gini_order >> (level == 0 ? 0 : d >= 3 ? 1 : 2) & 1);
    if (gini) nd.fgini.resize(D.F);
    D.depth1_all(view, m, nd.tot.data(), nd.ferr.data(), nd.fbest.data(), s1, nd.cnt.data(), d == 1 ? porder : nullptr,
                 gini ? nd.fgini.data() : nullptr);
    if (s1.bf >= 0 && s1.best < res.cost - eps) {
        res.cost = s1.best;
        res.sol = D.side_sol(s1);
    }
    if (d == 1 || res.cost <= LB + eps) {  // depth 1 is exact; nothing is below the node's bound
        res.lb = d == 1 ? res.cost : LB;
        return true;
    }
    res.lb = LB;
    nd.order.resize(D.F);
    for (int f = 0; f < D.F; ++f) nd.order[f] = f;
    const std::vector<double>& key = gini ? nd.fgini : nd.ferr;
    std::stable_sort(nd.order.begin(), nd.order.end(), [&](int a, int b) { return key[a] < key[b]; });
    nd.inc.init(UB, res.cost, res.sol, eps);
    if (level == 0) {  // live counters (verbose) and the history: the root's first incumbent
        feed.incumbent(std::min(UB, res.cost));
        S.note_incumbent(res.cost);
    }
    // the node one level shallower: at budget 2 the depth-1 optimum (the pass's best, less the
    // tolerance of its first-improvement rule), deeper no better bound than the node's own
    const double end_lb = !P.end_bounds ? 0.0 : d == 2 ? std::max(0.0, std::min(res.cost, s1.best) - eps) : LB;
    nd.nc = NodeCtx{view, m, d, level, LB, end_lb, nd.order.data(), nd.fbest.data()};
    return false;
}

inline Res Worker::close_node(Node& nd, double UB) {
    const double eps = D.eps;
    Res res;
    res.cost = nd.inc.cost;
    res.sol = std::move(nd.inc.sol);
    if (stopped()) {
        res.lb = std::max(0.0, std::min({res.cost, UB, D.round_lb(std::max(nd.lb_open, nd.nc.lb))}));
        return res;
    }
    bool exact = res.cost < UB - eps;
    res.lb = exact ? res.cost : D.round_lb(std::max(UB, nd.nc.lb));
    if (res.lb > res.cost) res.lb = res.cost;
    if (nd.cacheable) S.cache.store(nd.h, nd.nc.view, nd.nc.m, nd.nc.d, res.lb, exact, res.cost, res.sol);
    return res;
}

inline std::vector<int> Worker::root_visit_order(const Node& nd) const {
    std::vector<int> visit;
    visit.reserve(D.F);
    for (int oi = 0; oi < D.F; ++oi)
        if (nd.order[oi] == P.root_hint_feature) visit.push_back(oi);
    for (int oi = 0; oi < D.F; ++oi)
        if (nd.order[oi] != P.root_hint_feature) visit.push_back(oi);
    return visit;
}

// the root's features farmed to every worker; each keeps its own intervals and buffers
inline void Worker::search_root_parallel(Node& nd) {
    std::atomic<int> next{0};
    std::mutex mu;
    const int T = (int)S.workers.size();
    const std::vector<int> visit = root_visit_order(nd);
    nd.inc.mu = &S.root_mu;
    tl::run_workers(T, [&](int t) {
        Worker& w = *S.workers[t];
        double lbo = std::numeric_limits<double>::infinity();
        try {
            w.search_root_lanes(nd, [&]() {
                const int i = next.fetch_add(1);
                return i < D.F ? visit[i] : -1;
            }, lbo);
        } catch (...) {
            S.stop.store(true);  // the others stop too; run_workers re-throws in the caller
            throw;
        }
        std::lock_guard<std::mutex> lock(mu);
        nd.lb_open = std::min(nd.lb_open, lbo);
    });
    nd.inc.mu = nullptr;
}

// the next threshold of the feature in the fixed order among those its bounds leave (k, key;
// iv: its run, shrunk); false when the popped run has nothing left or was queued again
inline bool Worker::pick(ThresholdIntervals& ti, Interval& iv, int& k, OrderKey& key, double ub) const {
    if (!ti.shrink(iv, ub, D.eps)) return false;
    key = first_in_run(iv.a, iv.b, ti.K, k);
    if (ti.pending() && key > ti.top_key()) {  // its ends went: another run comes first now
        ti.push(iv);
        return false;
    }
    return true;
}

inline void Worker::search_feature(const NodeCtx& nc, int oi, Incumbent& inc, ThresholdIntervals& ti,
                                   double& lb_open) {
    FeatureScan fs;
    fs.ti = &ti;
    begin_feature(nc, oi, fs);
    while (step_feature(nc, fs, inc, lb_open)) {
    }
}

inline void Worker::begin_feature(const NodeCtx& nc, int oi, FeatureScan& fs) {
    ThresholdIntervals& ti = *fs.ti;
    const int f = nc.order[oi];
    fs.oi = oi;
    ti.init(nc.view + (size_t)f * nc.m, nc.m, D, nc.lb, nc.end_lb);
    fs.fb = P.start_best ? nc.fbest[f] : -1;
    if (nc.level == 0 && f == P.root_hint_feature) {  // the boundary the hint's threshold falls on
        const Entry* vf = nc.view + (size_t)f * nc.m;
        const std::vector<double>& vals = D.vals[f];
        const double t = P.root_hint_threshold;
        auto below = [&](int k) { return vals[vf[ti.pos[k]].rank] < t; };  // k's right value < t
        int lo = 0, hi = ti.K;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (below(mid)) lo = mid + 1; else hi = mid;
        }
        if (lo < ti.K && !(vals[vf[ti.pos[lo] - 1].rank] >= t)) fs.fb = lo;  // x >= t splits there
    }
}

// one threshold of the scan in the fixed order (the runs the bounds skip on the way cost no step);
// false when the feature is done, reaches the node's bound, or the search stopped
inline bool Worker::step_feature(const NodeCtx& nc, FeatureScan& fs, Incumbent& inc, double& lb_open) {
    const double eps = D.eps;
    ThresholdIntervals& ti = *fs.ti;
    const int oi = fs.oi;
    while (ti.pending()) {
        Interval iv = ti.next();
        if (stopped()) {
            lb_open = std::min({lb_open, ti.whole(iv), ti.open_bound()});  // what is left of this feature
            return false;
        }
        int k;
        OrderKey key;
        if (fs.fb >= 0) {  // the first threshold out of the order (the root hint, or start_best)
            k = fs.fb;
            key = order_key(k, ti.K);
            fs.fb = -1;
        } else if (!pick(ti, iv, k, key, inc.bound_at(oi, iv.key))) {
            continue;
        }
        double bl, br, cl, cr;
        ti.bound_at(k, iv.lo, iv.hi, bl, br);
        eval_threshold(nc, oi, k, key, iv, ti, inc, bl, br, cl, cr, lb_open);
        if (nc.level == 0) {  // live counters (verbose) and the history: the root's best
            const double best = inc.best();
            feed.incumbent(best);
            S.note_incumbent(best);
        }
        cl = std::max(cl, bl);
        cr = std::max(cr, br);
        ti.record(k, cl, cr);
        if (check_stop()) lb_open = std::min(lb_open, ti.open_around(iv, k, cl, cr));
        ti.split(iv, k);
        // nothing left can be taken: the least key's bound (the largest) is at the node's bound
        return ti.pending() && inc.bound_at(oi, ti.top_key()) > nc.lb + eps;
    }
    return false;
}

// the root's features, taken from next_position() (-1: none left), searched root_lanes at a time
// in turn, one threshold each (Shared::root_lanes of them: fewer when the memory cap binds)
template <typename Next>
inline void Worker::search_root_lanes(Node& nd, Next next_position, double& lb_open) {
    const NodeCtx& nc = nd.nc;
    // threads share the features: each takes its part of them into its lanes, not all of them
    const int W = std::max(1, (int)S.workers.size());
    const int lanes = std::max(1, std::min(S.root_lanes, (D.F + W - 1) / W));
    std::vector<ThresholdIntervals> tis(lanes);
    std::vector<FeatureScan> scans(lanes);
    // the next searchable feature into lane l (false: none left)
    auto refill = [&](int l) {
        for (int oi = next_position(); oi >= 0; oi = next_position()) {
            if (nd.fbest[nd.order[oi]] < 0 || nd.inc.bound_at(oi, -1) <= nc.lb + D.eps) continue;  // constant; or lost
            begin_feature(nc, oi, scans[l]);
            return true;
        }
        scans[l].oi = -1;
        return false;
    };
    int active = 0;
    for (int l = 0; l < lanes; ++l) {
        tis[l].on = P.use_intervals != 0;
        scans[l].ti = &tis[l];
        active += refill(l) ? 1 : 0;
    }
    while (active > 0) {
        // nothing above the node's bound can be taken (a tree of zero error known): what is left is
        // the order's first tree of that error, so the lane of the least position runs alone
        int first = -1;
        if (P.ordered_close && nd.inc.at_bound(nc.lb))
            for (int l = 0; l < lanes; ++l)
                if (scans[l].oi >= 0 && (first < 0 || scans[l].oi < scans[first].oi)) first = l;
        for (int l = 0; l < lanes; ++l) {
            if (scans[l].oi < 0 || (first >= 0 && l != first)) continue;
            if (step_feature(nc, scans[l], nd.inc, lb_open)) continue;
            if (stopped()) {  // every lane records what it leaves; features not begun bound nothing
                for (int o = 0; o < lanes; ++o)
                    if (scans[o].oi >= 0 && o != l) step_feature(nc, scans[o], nd.inc, lb_open);
                if (next_position() >= 0) lb_open = 0.0;
                return;
            }
            if (!refill(l)) --active;
        }
    }
}

// threshold k (order key `key`) of the feature at position oi: the best trees of both children
// (bounds cl, cr), offered to inc
inline void Worker::eval_threshold(const NodeCtx& nc, int oi, int k, OrderKey key, const Interval& iv,
                                   ThresholdIntervals& ti, Incumbent& inc, double bl, double br,
                                   double& cl, double& cr, double& lb_open) {
    const double eps = D.eps;
    const int f = nc.order[oi];
    const Entry* vf = nc.view + (size_t)f * nc.m;
    const int p = ti.pos[k], m = nc.m, d = nc.d;
    ++evals;
    auto thr = [&]() { return D.thr_of(f, vf[p - 1].rank, vf[p].rank); };
    if (d == 2 && P.use_d2) {
        Side sd[2];
        const double bound = inc.bound_at(oi, key) - eps;  // a side matters only below its cap
        // (plus the interval's slack: a side that finds nothing below its cap then bounds the
        // whole interval, as the second child of a deeper split does)
        const double slack = ti.slack(iv, k);
        const double lbs[2] = {bl, br}, caps[2] = {bound - br + slack, bound - bl + slack};
        d2.eval(nc.view, m, f, p, sd, nc.order, lbs, P.use_caps ? caps : no_caps);
        cl = sd[0].lb;
        cr = sd[1].lb;
        inc.offer(oi, key, sd[0].best + sd[1].best,
                  [&]() { return join(f, thr(), vf[p].rank, D.side_sol(sd[0]), D.side_sol(sd[1])); });
        return;
    }
    Entry* child = buf[nc.level].data();
    D.split_view(nc.view, m, f, p, child, side.data());
    const Entry* Lv = child;
    const Entry* Rv = child + (size_t)D.F * p;
    const int mr = m - p;
    const bool larger = P.large_first == 1 || (P.large_first == 2 && (d >= 4 || nc.level > 0));
    const bool left_first = larger ? p >= mr : p < mr;
    const double slack = ti.slack(iv, k);
    const int* porder = d - 1 == 1 ? nc.order : nullptr;  // a depth-1 child's pass: this node's order
    // a child's bound: the split's, less the other child's bound, and at most (ties included) the
    // error the same child of a neighbouring split's tree makes here (warm start)
    auto bound_for = [&](int s, const Entry* v, int rows, double b) {
        return std::min(b, D.rank_of.empty() ? b : ti.warm_error(s, iv, v, rows, D) + 2.0 * eps);
    };
    double ub = inc.bound_at(oi, key);
    Res r1 = left_first ? solve(Lv, p, d - 1, bound_for(0, Lv, p, ub - br), nc.level + 1, porder, bl)
                        : solve(Rv, mr, d - 1, bound_for(1, Rv, mr, ub - bl), nc.level + 1, porder, br);
    const double other_b = left_first ? br : bl;
    Res r2;
    bool have2 = false;
    ub = inc.bound_at(oi, key);
    if (!stopped() && r1.lb + other_b < ub - eps) {
        double base = (r1.cost <= r1.lb + eps) ? r1.cost : r1.lb;
        // the first child's search used the next level's buffer: this level's views are intact
        r2 = left_first ? solve(Rv, mr, d - 1, bound_for(1, Rv, mr, ub - base + slack), nc.level + 1, porder, br)
                        : solve(Lv, p, d - 1, bound_for(0, Lv, p, ub - base + slack), nc.level + 1, porder, bl);
        have2 = true;
    }
    double l1 = r1.lb, l2 = have2 ? r2.lb : other_b;
    cl = left_first ? l1 : l2;
    cr = left_first ? l2 : l1;
    if (!D.rank_of.empty()) ti.keep(k, left_first ? &r1 : have2 ? &r2 : nullptr, left_first ? (have2 ? &r2 : nullptr) : &r1);
    if (have2) {
        const int rr = vf[p].rank;
        inc.offer(oi, key, r1.cost + r2.cost, [&]() {
            return left_first ? join(f, thr(), rr, r1.sol, r2.sol) : join(f, thr(), rr, r2.sol, r1.sol);
        });
    }
    if (stopped()) lb_open = std::min(lb_open, cl + cr);
}

// a tree as preorder arrays with explicit children
inline void write_tree(const Sol& s, Output& out) {
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

// memory the search needs before any cache: the ranked columns, and per worker its buffers
inline double worker_bytes(const Params& P, int levels) {
    const double simd = P.C == 2 && !P.w ? 6.0 * (double)P.F * std::min(P.n, 1 << 15) : 0.0;  // depth2_simd.h
    return 8.0 * (double)P.F * P.n * levels + 16.0 * P.n + 64.0 * P.C + simd;
}
inline double fixed_bytes(const Params& P, int levels) {
    return 8.0 * (double)P.F * P.n + worker_bytes(P, levels) + 4.0 * P.n + 13.0 * P.n +
           (Columns::uses_ranks(P) ? 4.0 * (double)P.F * P.n : 0.0);
}
// buffers for the children of nodes with depth budget >= 3 (>= 2 without the depth-2 solver)
inline int buffer_levels(const Params& P) { return std::max(0, P.max_depth - (P.use_d2 ? 2 : 1)); }

}  // namespace detail

// the stop test of a set-up started at t0: Ctrl-C, or the time limit (> 0) passed
inline auto setup_stop(const Params& P, tl::steady::time_point t0) {
    return [&P, t0]() {
        return tl::interrupted()
               || (P.time_limit > 0.0 && std::chrono::duration<double>(tl::steady::now() - t0).count() >= P.time_limit);
    };
}

// the whole search: columns ranked once, workers set up within the memory cap, the root solved
inline void run_continuous(const Params& P, Output& out) {
    using namespace detail;
    const int n = P.n, F = P.F, D_ = P.max_depth;
    const int levels = buffer_levels(P);
    const double per_worker = worker_bytes(P, levels);
    double fixed = fixed_bytes(P, levels);
    out.fixed_bytes = fixed;
    if (fixed > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    // the set-up (ranking the columns) counts against the time limit and stops on it and on
    // Ctrl-C: the result is then the root as a leaf (the caller keeps its incumbent)
    const tl::steady::time_point t0 = tl::steady::now();
    const std::clock_t cpu0 = std::clock();
    Columns cols;
    if (!cols.build(P, setup_stop(P, t0))) {
        out.interrupted = tl::interrupted();
        out.timed_out = !out.interrupted;
        out.cost = out.lower_bound = std::numeric_limits<double>::infinity();
        write_tree(leaf_sol(), out);
        return;
    }
    // the distinct values of the columns, known once ranked (up to 8 bytes x rows x columns)
    fixed += cols.value_bytes();
    out.fixed_bytes = fixed;
    if (fixed > P.mem_limit_bytes) {
        out.memory_error = true;
        return;
    }
    int T = std::max(1, std::min(P.n_threads, std::max(1, F)));
    if (D_ < 2 || n == 0) T = 1;
    while (T > 1 && fixed + (T - 1) * per_worker > P.mem_limit_bytes) --T;  // fewer threads within the cap
    fixed += (T - 1) * per_worker;
    // the root's lanes (Worker::search_root_lanes), per thread, as many as the cap leaves room for
    // (the scan of one feature can take long before it finds the tree another feature leads to at
    // once: the root steps several features' scans in turn, one threshold each, as threads do)
    int lanes = std::max(1, P.root_lanes);
    const double lane = LANE_BYTES_PER_ROW * (double)n;
    while (lanes > 1 && fixed + (double)T * (lanes - 1) * lane > P.mem_limit_bytes) --lanes;
    fixed += (double)T * (lanes - 1) * lane;
    Shared S(P, cols, fixed);
    S.t0 = t0;
    S.cpu0 = cpu0;
    S.root_lanes = lanes;
    tl::DeadlineWatch watch(S.t0, P.time_limit, &S.stop, (double)P.F * n >= 65536.0);  // slow nodes: stop on time
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
    out.interrupted = stopped && (S.cb_interrupted.load() || tl::interrupted());
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
    out.history = S.history;
    write_tree(r.sol, out);
}

}  // namespace tl::cont
