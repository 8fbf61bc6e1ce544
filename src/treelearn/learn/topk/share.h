// Top-k / optimal search driven one root candidate at a time (the Dask fit).
//
// run.h's parallel mode deals the root's candidates round-robin to threads that each prune with
// their own best only; the same tree comes out because the returned tree is a function of the
// data alone (the candidate of fewest errors, ties by rank, at every node) and a candidate's
// error is exact whenever it is below the bound it was searched with. RootShare exposes those
// steps to a caller that runs the threads elsewhere (a Dask task per share of the candidates):
//
//   candidates()       the root's candidates in rank order, duplicates removed (as parallel());
//   search(f, ub, e)   the error e of the best tree whose root splits on candidate f, if e < ub
//                      (the caller passes its own best, or a bound shared with other shares);
//   build(f, out)      that tree, rebuilt from this searcher's warm cache (sw.recon), preorder;
//   finish(out)        statistics and the stop flags.
//
// One RootShare is one searcher (its own cache) over its own copy of the sample; the caller
// keeps the Problem's arrays alive while it lives. request_stop() may be called from another
// thread (the search polls the flag).
#pragma once
#include <memory>
#include <vector>

#include "run.h"

namespace tl::topk {

class RootShare {
  public:
    virtual ~RootShare() {}
    virtual bool complete() const = 0;
    virtual std::vector<int> candidates() = 0;
    virtual bool search(int f, double ub, double& err) = 0;
    virtual void build(int f, Output& out) = 0;
    virtual void finish(Output& out) = 0;
    virtual void request_stop() = 0;
    virtual bool stopped() const = 0;
};

template <typename CT, typename Obj>
class RootShareOf : public RootShare {
  public:
    RootShareOf(const Problem& p, const Options& o) : P(p), O(o), run(P, O) {
        if (run.D.complete) {
            s = run.searcher();
            s->fr.set_root();
        }
    }
    bool complete() const override { return s != nullptr; }
    std::vector<int> candidates() override {
        if (!s) return {};
        double Wn;
        return run.root_candidates(*s, Wn);
    }
    // the body of Run::search_share for one candidate
    bool search(int f, double ub, double& err) override {
        if (!s || s->timed_out()) return false;
        return s->split_by_rows(0, O.max_depth, f, ub, err);
    }
    // the tail of Run::parallel for the winner f: the root's counts, then both subtrees
    void build(int f, Output& out) override {
        if (!s) return;
        const int h = O.max_depth;
        auto& v0 = s->fr.lv[0];
        double Wn;
        s->fr.totals(v0, v0.tot.data(), Wn);
        s->sw.recon = true;
        run.push_root(f, v0.tot.data(), out);
        s->build_children(0, h, f, 0, out);
        s->sw.recon = false;
    }
    void finish(Output& out) override {
        if (s) Run<CT, Obj>::add_stats(*s, out);
        const bool stop = run.stop.load();
        out.cost_failed = run.crit.failed();
        out.interrupted = stop && tl::interrupted();
        out.timed_out = stop && !out.cost_failed && !out.interrupted;
    }
    void request_stop() override { run.stop.store(true); }
    bool stopped() const override { return run.stop.load(); }

  private:
    Problem P;  // (copies: Run keeps references to both)
    Options O;
    Run<CT, Obj> run;
    std::unique_ptr<typename Run<CT, Obj>::S> s;
};

// a RootShare over the problem (integer counts without weights, as run_search)
inline RootShare* make_root_share(const Problem& P, const Options& O) {
    if (P.w != nullptr) return new RootShareOf<double, Misclassification<double>>(P, O);
    return new RootShareOf<int32_t, Misclassification<int32_t>>(P, O);
}

}  // namespace tl::topk
