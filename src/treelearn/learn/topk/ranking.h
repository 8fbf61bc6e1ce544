// Top-k / optimal search: ranking a node's candidate features by an impurity criterion.
//
// A node's candidates are the features that split it, ordered by the key of their split
// (lower = better; ties by feature index) and cut to the k best. The key is the split's score
// (weighted impurity of the two sides, n_1 G(side 1) + n_0 G(side 0)) from the criterion's
// policy type of core/criteria.h -- the definitions the greedy learner and treelearn.criteria use
// -- quantised to 1e-9 of the node's weight in the policy's `rank_unit` (or minus the gain
// ratio), so that equal splits compare equal whatever the rounding.
//
// A user G (tl::Callback) is scored as the greedy learner scores it: a node's candidates go
// into one CandidateBatch, evaluated by one call back into Python, and are then keyed as the
// built-in criteria's are. Unweighted entropy reads its table of x log2 x (score_unit).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/criteria.h"
#include "problem.h"

namespace tl::topk {

// the criterion of one search, shared by its threads: the policy its code names, set up once on
// the sample's weights (read-only afterwards but for the user criterion's sticky failure flag)
struct Criterion {
    int code;  // tl's: 0 entropy, 1 Gini, 2 Kearns-Mansour, -1 a user G
    bool gr;   // gain ratio
    tl::Entropy entropy;
    tl::Gini gini;
    tl::KearnsMansour km;
    tl::Callback user;

    Criterion(const Options& o, const Problem& P) : code(o.criterion), gr(o.gain_ratio) {
        switch (code) {
            case tl::Entropy::code: entropy.setup(P.w, P.n, P.C); break;
            case tl::Gini::code: gini.setup(P.w, P.n, P.C); break;
            case tl::KearnsMansour::code: km.setup(P.w, P.n, P.C); break;
            case tl::Callback::code:
                if (o.cost == nullptr) throw std::invalid_argument("a user criterion needs its callback");
                user.fn = o.cost;
                user.ctx = o.cost_ctx;
                user.setup(P.w, P.n, P.C);
                break;
            default: throw std::invalid_argument("unknown criterion code");
        }
    }
    bool failed() const { return code == tl::Callback::code && user.failed.load(); }
    // f(policy) with the policy of this search
    template <class F>
    void visit(F&& f) const {
        switch (code) {
            case tl::Entropy::code: f(entropy); return;
            case tl::Gini::code: f(gini); return;
            case tl::KearnsMansour::code: f(km); return;
            default: f(user); return;
        }
    }
};

// whether feature j splits the node: both sides non-empty and, with a minimum leaf weight mwl
// (scikit-learn's min_weight_fraction_leaf), each side at least that heavy, and with a minimum
// leaf size mrl (min_samples_leaf) each side has at least mrl rows. A: the node's
// one-side counts (d * C), R: their row counts, Wn / m: the node's weight and rows.
template <typename CT>
inline bool splits_node(const CT* A, const int32_t* R, int j, int C, double Wn, int m, double mwl, int mrl) {
    const int n1 = R[j];
    if (n1 == 0 || n1 == m) return false;
    if (n1 < mrl || m - n1 < mrl) return false;
    if (mwl <= 0.0) return true;
    double w1 = 0.0;
    for (int c = 0; c < C; ++c) w1 += (double)A[(size_t)j * C + c];
    return w1 >= mwl && Wn - w1 >= mwl;
}

template <typename CT>
class Ranker {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    static constexpr double NO_BOUND = std::numeric_limits<double>::infinity();
    using Keyed = std::vector<std::pair<int64_t, int>>;

    const Criterion& cr;
    int d, C, K;
    bool all_k;
    std::atomic<bool>* stop;
    double mwl = 0.0;  // minimum leaf weight (splits_node)
    int mrl = 0;       // minimum leaf rows (splits_node)

    Ranker(const Criterion& crit, int d_, int C_, int K_, std::atomic<bool>* stopflag)
        : cr(crit), d(d_), C(C_), K(K_), all_k(K_ >= d_), stop(stopflag), totd(C_), one(C_), buf(C_) {
        batch.C = C_;
    }

    // emit(key, j) for each feature j of js[0..nj) (js = nullptr: 0..d-1) that splits the node,
    // in that order. A: the node's one-side counts (d * C), R: their row counts, T: its totals
    // (weight Wn, m rows). A failing user criterion emits nothing and stops the search.
    // emit returns the largest key it could still accept (NO_BOUND: any); the unit-weight
    // entropy loops then skip, before quantising, a feature whose score is two quanta above it
    // (a ranking over thousands of features spends most of its time on such features).
    template <class Emit>
    void keys(const CT* A, const int32_t* R, const CT* T, double Wn, int m, const int* js, int nj, Emit&& emit) {
        for (int c = 0; c < C; ++c) totd[c] = (double)T[c];
        cr.visit([&](const auto& g) { keys_with(g, A, R, T, Wn, m, js, nj, emit); });
    }

    // candidates of a node (rank order) from its counts A (d * C), row counts R, totals T
    void rank(const CT* A, const int32_t* R, const CT* T, double Wn, int m, std::vector<int>& out, Keyed& keyed) {
        out.clear();
        keyed.clear();
        if (all_k || K >= d) {
            keys(A, R, T, Wn, m, nullptr, d, [&](int64_t key, int j) {
                keyed.emplace_back(key, j);
                return NO_BOUND;
            });
            std::sort(keyed.begin(), keyed.end());
            for (auto& p : keyed) out.push_back(p.second);
            return;
        }
        TopK top(K);
        keys(A, R, T, Wn, m, nullptr, d, [&](int64_t key, int j) {
            top.push(key, j);
            return top.cnt == K ? (double)top.ks[K - 1] : NO_BOUND;
        });
        for (int i = 0; i < top.cnt; ++i) out.push_back(top.js[i]);
    }

  private:
    std::vector<double> totd, one, buf;  // the node's totals, one side's counts, scratch (C each)
    tl::CandidateBatch batch;        // a user criterion's candidates
    std::vector<int> batch_j;

    static inline int64_t quantise(double cost, double scale) {
        if (cost < 0) cost = 0;
        return (int64_t)(cost * scale + 0.5);
    }
    // minus the gain ratio, quantised: the split's score `cost` and the parent's `pcost` in the
    // policy's units (times `unit` to the rank unit), side weights w1, w0; split information in
    // nats
    static inline int64_t ratio_key(double cost, double pcost, double unit, double w1, double Wn) {
        const double gain = (pcost - cost) * unit / Wn;
        const double si = tl::Entropy::G(w1 / Wn) * tl::Entropy::rank_unit;
        double ratio = si > 0 ? gain / si : 0.0;
        if (ratio < 0) ratio = 0;
        return -(int64_t)(ratio * 1e9 + 0.5);
    }

    template <class G, class Emit>
    void keys_with(const G& g, const CT* A, const int32_t* R, const CT* T, double Wn, int m, const int* js, int nj,
                   Emit& emit) {
        using P = typename std::decay<G>::type;
        if constexpr (P::batched) {
            keys_batched(g, A, R, Wn, m, js, nj, emit);
        } else {
            const double scale = P::rank_unit * (1e9 / Wn);
            if constexpr (!W && std::is_same<P, tl::Entropy>::value) {
                if (!cr.gr) {  // unit weights: table reads alone
                    double skip = NO_BOUND;  // scores above it cannot be accepted (two quanta of margin)
                    auto offer = [&](double s, int j) {
                        if (s > skip) return;
                        const double bound = emit(quantise(s, scale), j);
                        if (bound < NO_BOUND) skip = (bound + 2.0) / scale;
                    };
                    if (C == 2) {
                        for (int i = 0; i < nj; ++i) {
                            const int j = js ? js[i] : i, n1 = R[j];
                            if (!splits_node(A, R, j, C, Wn, m, mwl, mrl)) continue;
                            offer(g.score_unit2(A + (size_t)j * C, T, n1, m), j);
                        }
                    } else {
                        for (int i = 0; i < nj; ++i) {
                            const int j = js ? js[i] : i, n1 = R[j];
                            if (!splits_node(A, R, j, C, Wn, m, mwl, mrl)) continue;
                            offer(g.score_unit(A + (size_t)j * C, T, n1, m), j);
                        }
                    }
                    return;
                }
            }
            const double pc = cr.gr ? g.wimp(totd.data(), Wn) : 0.0;
            for (int i = 0; i < nj; ++i) {
                const int j = js ? js[i] : i, n1 = R[j];
                if (!splits_node(A, R, j, C, Wn, m, mwl, mrl)) continue;
                const CT* Aj = A + (size_t)j * C;
                double w1 = 0;
                for (int c = 0; c < C; ++c) {
                    one[c] = (double)Aj[c];
                    w1 += one[c];
                }
                const double w0 = W ? std::max(0.0, Wn - w1) : (double)(m - n1);
                if (!W) w1 = (double)n1;
                const double cost = std::max(0.0, g.score(one.data(), totd.data(), w1, w0, buf.data()));
                emit(cr.gr ? ratio_key(cost, pc, P::rank_unit, w1, Wn) : quantise(cost, scale), j);
            }
        }
    }

    // a user G: the two sides of every splitting candidate (and the node, for the gain ratio) in
    // one batch, one call; then keys as the built-in criteria's
    template <class Emit>
    void keys_batched(const tl::Callback& g, const CT* A, const int32_t* R, double Wn, int m, const int* js,
                      int nj, Emit& emit) {
        batch.clear();
        batch_j.clear();
        for (int i = 0; i < nj; ++i) {
            const int j = js ? js[i] : i;
            if (!splits_node(A, R, j, C, Wn, m, mwl, mrl)) continue;
            const CT* Aj = A + (size_t)j * C;
            for (int c = 0; c < C; ++c) one[c] = (double)Aj[c];
            batch.push_rest(g, one.data(), totd.data());
            batch_j.push_back(j);
        }
        const size_t nf = batch_j.size();
        if (cr.gr) {
            std::fill(buf.begin(), buf.end(), 0.0);
            batch.push(g, totd.data(), buf.data());  // the node itself (and an empty side)
        }
        if (!batch.evaluate(g)) {
            stop->store(true);
            return;  // no candidates: the node becomes a leaf; the caller raises the error
        }
        const double pc = cr.gr ? batch.score(nf) : 0.0;
        const double scale = 1e9 / Wn;
        for (size_t q = 0; q < nf; ++q) {
            const double cost = std::max(0.0, batch.score(q));
            if (!cr.gr) {
                emit(quantise(cost, scale), batch_j[q]);
                continue;
            }
            const CT* Aj = A + (size_t)batch_j[q] * C;
            double w1 = 0;
            for (int c = 0; c < C; ++c) w1 += (double)Aj[c];
            emit(ratio_key(cost, pc, tl::Callback::rank_unit, w1, Wn), batch_j[q]);
        }
    }

    // the K best (key, j) kept sorted, j ascending so that an equal key never displaces an
    // earlier feature
    struct TopK {
        int K, cnt = 0;
        int64_t kk[1024];
        int jj[1024];
        std::vector<int64_t> bigk;
        std::vector<int> bigj;
        int64_t* ks;
        int* js;
        explicit TopK(int K_) : K(K_), ks(kk), js(jj) {
            if (K > 1024) {
                bigk.resize(K);
                bigj.resize(K);
                ks = bigk.data();
                js = bigj.data();
            }
        }
        // insert (key, j); false when it is not among the K best
        inline bool push(int64_t key, int j) {
            if (cnt == K) {
                if (key >= ks[K - 1]) return false;
                --cnt;
            }
            int p = cnt;
            while (p > 0 && ks[p - 1] > key) {
                ks[p] = ks[p - 1];
                js[p] = js[p - 1];
                --p;
            }
            ks[p] = key;
            js[p] = j;
            ++cnt;
            return true;
        }
    };
};

}  // namespace tl::topk
