// Continuous optimal search, part 7 of 7: the root's features one at a time, for a caller that
// deals them to tasks elsewhere (the Dask fit: this room's plug-in, learn/continuous/sharded.py).
//
// Every task builds the same root (ranked columns, leaf, depth-1 pass, feature order) and then
// searches the features at the positions it is given, in increasing position, each below the
// smaller of its own bound (the tie rule of search.h: its own best comes from an
// earlier position, so strictly below it) and the best error any task has published so far plus
// the tie allowance (a split of equal error at an earlier position than the publisher's must
// still be found). A task's best is then the tie rule's winner among its positions whenever that
// winner beats what the others published; the caller takes the smallest error, ties to the
// earliest position, over the tasks' bests, which is the local search's tree.
#pragma once

#include <memory>

#include "search.h"

namespace tl::cont {

class RootShare {
  public:
    explicit RootShare(const Params& p) : P(p) {
        using namespace detail;
        const int levels = buffer_levels(P);
        out_fixed = fixed_bytes(P, levels);
        if (out_fixed > P.mem_limit_bytes) {
            memory_error = true;
            settled = true;
            return;
        }
        cols.build(P, [] { return false; });  // a farmed share: the driver stops it
        S.reset(new Shared(P, cols, out_fixed));
        watch.reset(new tl::DeadlineWatch(S->t0, P.time_limit, &S->stop, (double)P.F * P.n >= 65536.0));
        worker.reset(new Worker(*S, levels, false));
        S->workers.push_back(worker.get());
        UB = P.upper_bound > 0 ? P.upper_bound : std::numeric_limits<double>::infinity();
        if (P.n == 0 || P.F == 0) {
            settled = true;
            std::vector<double> tot(P.C, 0.0);
            for (int i = 0; i < P.n; ++i) tot[cols.lab[i]] += cols.wof(i);
            nd.res.cost = nd.res.lb = cols.leaf_err(tot.data());
            nd.res.sol = leaf_sol();
        } else {
            ++worker->nodes;
            settled = worker->open_node(nd, cols.root_view.data(), P.n, P.max_depth, UB, 0, nullptr);
            if (!settled && P.max_depth == 2 && P.use_d2) worker->d2.begin_node(cols.root_view.data(), P.n);
        }
        base = nd.res;
        ti.on = P.use_intervals != 0;
    }

    // positions of the root's feature order to deal out (0: the root is settled without them)
    int n_positions() const { return settled ? 0 : P.F; }

    // the feature at position oi (positions in increasing order), below the task's own best and
    // `published`; true when it gave the task a new best
    bool search(int oi, double published) {
        if (settled || oi < 0 || oi >= P.F || stopped()) return false;
        nd.inc.ext = published;
        if (nd.fbest[nd.order[oi]] < 0 || nd.inc.bound_at(oi, -1) <= nd.nc.lb + cols.eps) return false;
        worker->search_feature(nd.nc, oi, nd.inc, ti, nd.lb_open);
        return nd.inc.pos == oi;
    }

    bool stopped() const { return S && S->stop.load(); }
    void request_stop() {
        if (S) S->stop.store(true);
    }

    // the root's own answer (the leaf or its depth-1 tree; when settled, the search's answer)
    const detail::Res& root() const { return base; }
    // the task's best split tree (found: its position >= 0)
    int best_position() const { return settled ? -1 : nd.inc.pos; }
    double best_cost() const { return nd.inc.cost; }
    const detail::Sol& best_tree() const { return nd.inc.sol; }
    double open_bound() const { return nd.lb_open; }  // bounds of what a stop left unsearched
    double bound() const { return UB; }
    double eps() const { return cols.eps; }

    void stats(Output& out) const {
        out.memory_error = memory_error;
        out.fixed_bytes = out_fixed;
        if (!worker) return;
        out.evaluations = worker->evals;
        out.d2_evaluations = worker->d2.evals;
        out.nodes = worker->nodes;
        out.cache_hits = worker->hits;
        out.cache_entries = S->cache.n_entries();
        out.peak_bytes = S->cache.peak_bytes();
    }

  private:
    Params P;
    detail::Columns cols;
    std::unique_ptr<detail::Shared> S;
    std::unique_ptr<tl::DeadlineWatch> watch;
    std::unique_ptr<detail::Worker> worker;
    detail::Node nd;
    detail::Res base;
    detail::ThresholdIntervals ti;
    double UB = 0.0, out_fixed = 0.0;
    bool settled = false, memory_error = false;
};

}  // namespace tl::cont
