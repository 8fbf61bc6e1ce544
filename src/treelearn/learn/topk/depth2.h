// Top-k / optimal search: the depth-2 solver.
//
// A node with depth budget 2 is solved without recursion: for each root candidate f one
// counting pass over the node's local matrix gives the f = 1 child's per-feature counts, the
// f = 0 child's follow by subtraction (tl::subtract), and every depth-1 subtree is read off
// those counts (depth1). Depth-1 answers are cached by cover when that pays (Switches::c1cache).
//
// For the optimum (k = all, unweighted) the f = 1 counts are the row f of a symmetric pair-count
// matrix (counts of f AND j per class), filled once per h = 2 node and reused across candidates
// (step_pairs); at h = 3 nodes the children's matrices are the smaller child's plus the node's
// minus it (MurTree / STreeD's depth-2 solver ideas), and such a child takes its counts (the
// matrix's diagonal) and its duplicate test from its pair matrix, so it needs no local matrix of
// its own (counts_from_pairs). Optionally (feature_classes) the features
// identical on the node are grouped and each group counted once (depth1_reps).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/count.h"
#include "cache.h"
#include "frame.h"
#include "mono.h"
#include "objective.h"
#include "ranking.h"

namespace tl::topk {

template <typename CT, typename Obj>
class Depth2 {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    using Lvl = Level<CT>;
    using Keyed = std::vector<std::pair<int64_t, int>>;
    static constexpr double INF = std::numeric_limits<double>::infinity();

    Frames<CT>& F;
    Cache& cache;
    Ranker<CT>& rk;
    const Switches& sw;
    const Obj obj;  // the objective (its parameter: Switches::lam)
    int d, C, K;
    // optimal search: symmetric pair counts of an h = 2 node (row f: counts of f AND j per class)
    std::vector<CT> PM;
    std::vector<int32_t> PR;
    std::vector<char> pdone;
    bool use_pairs = false;  // the pair matrix fits in min(512 MB, the cache cap)
    // h = 3 nodes of the optimum: the node's pair matrix PS; a child's is computed on the smaller
    // child (PT) and the other one is PS - PT (exact integer counts, unweighted only)
    bool use_sub = false, pairs_ready = false;
    std::vector<CT> PS, PT;
    std::vector<int32_t> PRS, PRT;
    std::vector<char> sdone;
    std::vector<u64> mcf;
    std::vector<CT> tbuf;  // the children's class totals (2 * C)

    Depth2(Frames<CT>& frames, Cache& c, Ranker<CT>& ranker, const Switches& s, int max_depth, double mem_cap)
        : F(frames), cache(c), rk(ranker), sw(s), obj(s.lam), d(frames.d), C(frames.C), K(ranker.K) {
        tbuf.resize(2 * (size_t)C);
        const double pair_bytes = (double)sizeof(CT) * d * d * C + 4.0 * d * d;
        const double room = std::min(512.0 * 1024 * 1024, mem_cap);
        // (pairs: every split of a child, unconstrained)
        use_pairs = sw.all_k && pair_bytes <= room && !sw.min_leaf() && sw.mono == nullptr;
        use_sub = use_pairs && !W && max_depth >= 3 && 3.0 * pair_bytes <= room;
        if (use_sub) {
            PS.resize((size_t)d * d * C);
            PT.resize((size_t)d * d * C);
            PRS.resize((size_t)d * d);
            PRT.resize((size_t)d * d);
            sdone.assign(d, 0);
        }
        if (use_pairs) {
            PM.resize((size_t)d * d * C);
            PR.resize((size_t)d * d);
            pdone.assign(d, 0);
            mcf.resize((size_t)C * F.nw);
        }
    }

    // ------------------------------------------------------------------ depth-1 subtrees
    // one step of the all-k scan of depth1() / depth1_reps(): the split on j, if it separates the
    // node and beats best, becomes (best, fout); true once best is perfect (the scan may stop)
    TL_INLINE bool scan_split(int j, const CT* A, const int32_t* R, const CT* T, double Wn, int m, double& best,
                              int& fout) const {
        if (!splits_node(A, R, j, C, Wn, m, sw.mwl, sw.mrl)) return false;
        const double e = split_cost(j, A, T, Wn, m);
        if (e < best) {
            best = e;
            fout = j;
            return best <= 0;
        }
        return false;
    }

    // the depth-1 split on j (its side counts A + j * C), under j's monotonic constraint if any
    TL_INLINE double split_cost(int j, const CT* A, const CT* T, double Wn, int m) const {
        if (sw.mono != nullptr && sw.mono[j] != 0) return mono_depth1(sw.mono[j], A + (size_t)j * C, T);
        return obj.split(A + (size_t)j * C, T, C, Wn, m);
    }

    // best depth-1 subtree of a node given its counts; returns error, sets f (-1: leaf)
    double depth1(const CT* A, const int32_t* R, const CT* T, double Wn, int m, int& fout, std::vector<int>& cand,
                  Keyed& keyed) {
        fout = -1;
        double leaf = obj.leaf(T, C, Wn);
        if (F.n_present(T) <= 1) return leaf;
        double best = Obj::sparse ? leaf : INF;  // (sparse: a split must beat the leaf)
        if (sw.all_k && !sw.recon) {
            for (int j = 0; j < d; ++j)
                if (scan_split(j, A, R, T, Wn, m, best, fout)) break;
            return fout < 0 ? leaf : best;
        }
        rk.rank(A, R, T, Wn, m, cand, keyed);
        for (int j : cand) {
            double e = split_cost(j, A, T, Wn, m);
            if (e < best) {
                best = e;
                fout = j;
            }
        }
        return fout < 0 ? leaf : best;
    }

    // classes of identical local columns among the features that split the node (an h = 2
    // node): every subset of its rows sees them identical too. reps ascending by first index.
    void prepare_reps(Lvl& v) {
        const int wl = v.wl;
        v.hk.clear();
        for (int j = 0; j < d; ++j) {
            if (v.rc[j] == 0 || v.rc[j] == v.m) continue;
            const u64* col = &v.FM[(size_t)j * wl];
            u64 h = 0x9E3779B97F4A7C15ULL * (u64)(v.rc[j] + 1);
            for (int i = 0; i < wl; ++i) {
                h ^= col[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
                h *= 0xff51afd7ed558ccdULL;
            }
            v.hk.emplace_back(h, j);
        }
        std::sort(v.hk.begin(), v.hk.end());
        // group: within a run of equal hashes, compare columns with the run's leaders
        v.cls_of.assign(d, -1);
        v.reps.clear();
        std::vector<int>& leaders = v.leaders;
        size_t a = 0;
        while (a < v.hk.size()) {
            size_t b = a;
            while (b < v.hk.size() && v.hk[b].first == v.hk[a].first) ++b;
            leaders.clear();
            for (size_t q = a; q < b; ++q) {
                int j = v.hk[q].second;
                const u64* cj = &v.FM[(size_t)j * wl];
                int found = -1;
                for (int l : leaders) {
                    if (std::memcmp(cj, &v.FM[(size_t)l * wl], sizeof(u64) * wl) == 0) {
                        found = l;
                        break;
                    }
                }
                if (found < 0) {
                    leaders.push_back(j);
                    v.cls_of[j] = j;
                } else {
                    v.cls_of[j] = found;
                }
            }
            a = b;
        }
        // reps in ascending index; member lists (ascending) in CSR form
        v.mult.assign(d, 0);
        for (int j = 0; j < d; ++j)
            if (v.cls_of[j] >= 0) ++v.mult[v.cls_of[j]];
        v.off.assign(d + 1, 0);
        for (int j = 0; j < d; ++j)
            if (v.cls_of[j] == j) v.reps.push_back(j);
        int pos = 0;
        for (int r : v.reps) {
            v.off[r] = pos;
            pos += v.mult[r];
        }
        v.members.resize(pos);
        std::vector<int>& fill = v.leaders;
        fill.assign(d, 0);
        for (int j = 0; j < d; ++j) {
            int r = v.cls_of[j];
            if (r >= 0) v.members[v.off[r] + fill[r]++] = j;
        }
    }

    // depth-1 subtree of a child of an h = 2 node from the counts of the node's classes:
    // exactly depth1() over all features (copies of a class share key and error)
    double depth1_reps(Lvl& v, const CT* A, const int32_t* R, const CT* T, double Wn, int m, int& fout) {
        fout = -1;
        double leaf = obj.leaf(T, C, Wn);
        if (F.n_present(T) <= 1) return leaf;
        double best = Obj::sparse ? leaf : INF;  // (sparse: a split must beat the leaf)
        if (sw.all_k && !sw.recon) {
            for (int j : v.reps)
                if (scan_split(j, A, R, T, Wn, m, best, fout)) break;
            return fout < 0 ? leaf : best;
        }
        select_reps(v, A, R, T, Wn, m);
        // a class is a candidate iff its first copy is among the K smallest (key, index) pairs
        const Keyed& sel = v.keyed1;
        for (size_t q = 0; q < sel.size(); ++q) {
            int64_t kc = sel[q].first;
            int jc = sel[q].second;
            long long rank_ = 0;
            for (size_t p = 0; p < q; ++p) {
                int jd = sel[p].second;
                if (sel[p].first < kc) {
                    rank_ += v.mult[jd];
                } else {
                    const int* b = &v.members[v.off[jd]];
                    rank_ += std::lower_bound(b, b + v.mult[jd], jc) - b;
                }
            }
            if (rank_ >= K) break;
            double e = obj.split(A + (size_t)jc * C, T, C, Wn, m);
            if (e < best) {
                best = e;
                fout = jc;
            }
        }
        return fout < 0 ? leaf : best;
    }

    // v.keyed1 := (key, rep) of the K smallest reps by (key, first index)
    void select_reps(Lvl& v, const CT* A, const int32_t* R, const CT* T, double Wn, int m) {
        Keyed& sel = v.keyed1;
        sel.clear();
        const int KK = sw.all_k ? (int)v.reps.size() : K;
        rk.keys(A, R, T, Wn, m, v.reps.data(), (int)v.reps.size(), [&](int64_t key, int j) {
            if ((int)sel.size() == KK) {
                if (key >= sel.back().first) return (double)sel.back().first;
                sel.pop_back();
            }
            auto it = std::upper_bound(sel.begin(), sel.end(), std::make_pair(key, j));
            sel.insert(it, std::make_pair(key, j));
            return (int)sel.size() == KK ? (double)sel.back().first : Ranker<CT>::NO_BOUND;
        });
    }

    // ------------------------------------------------------------------ pair matrices
    // fill row f of the pair matrix P (counts of f AND j per class) on node v's rows, reusing
    // rows already done
    void pair_fill(Lvl& v, int f, CT* P, int32_t* Pr, char* done) {
        if (done[f]) return;
        const int wl = v.wl;
        CT* row = &P[(size_t)f * d * C];
        int32_t* prow = &Pr[(size_t)f * d];
        const u64* cf = &v.FM[(size_t)f * wl];
        if (!W) tl::mask_classes(v.FC, cf, C, wl, mcf.data());
        for (int j = 0; j < d; ++j) {
            CT* o = row + (size_t)j * C;
            if (done[j]) {
                const CT* src = &P[((size_t)j * d + f) * C];
                for (int c = 0; c < C; ++c) o[c] = src[c];
                prow[j] = Pr[(size_t)j * d + f];
            } else if (v.rc[j] == 0) {
                for (int c = 0; c < C; ++c) o[c] = 0;
                prow[j] = 0;
            } else if (v.rc[j] == v.m) {
                for (int c = 0; c < C; ++c) o[c] = v.cnt[(size_t)f * C + c];
                prow[j] = v.rc[f];
            } else {
                const u64* cj = &v.FM[(size_t)j * wl];
                prow[j] = W ? tl::weighted_class_counts(cj, cf, wl, v.ly.data(), v.lw.data(), C, o)
                            : tl::class_counts(cj, cf, mcf.data(), C, wl, o);
            }
        }
        done[f] = 1;
    }
    // counts of (f AND j) per class for every j on an h = 2 node, copied into cntf / rcf
    void pair_row(Lvl& v, int f, CT* cntf, int32_t* rcf) {
        pair_fill(v, f, PM.data(), PR.data(), pdone.data());
        std::copy(&PM[(size_t)f * d * C], &PM[(size_t)f * d * C] + (size_t)d * C, cntf);
        std::copy(&PR[(size_t)f * d], &PR[(size_t)f * d] + d, rcf);
    }
    // PM := the child's pair matrix: PT (the smaller child) or PS - PT (the other one)
    void set_child_pairs(bool is_small) {
        if (is_small) {
            std::copy(PT.begin(), PT.end(), PM.begin());
            std::copy(PRT.begin(), PRT.end(), PR.begin());
        } else {
            tl::subtract(PS.data(), PT.data(), PS.size(), PM.data());
            tl::subtract(PRS.data(), PRT.data(), PRS.size(), PR.data());
        }
    }
    // an h = 2 child of an h = 3 node whose pair matrix PM is set (pairs_ready, no feature
    // classes): its counts are PM's diagonal (f AND f = f), so it needs neither its own matrix
    // nor a counting pass
    bool counts_from_pairs(int h) const { return h == 2 && pairs_ready && !sw.use_reps; }
    void diagonal_counts(Lvl& v) const {
        for (int j = 0; j < d; ++j) {
            const CT* pj = &PM[((size_t)j * d + j) * C];
            for (int c = 0; c < C; ++c) v.cnt[(size_t)j * C + c] = pj[c];
            v.rc[j] = PR[(size_t)j * d + j];
        }
    }
    // Frames::duplicate by counts: f equals an earlier candidate g on the node's rows iff
    // |f AND g| = |f| = |g|, and is its complement iff |f AND g| = 0 and |f| + |g| = m
    bool duplicate_by_pairs(const Lvl& v, int f, int upto) const {
        const int32_t* pf = &PR[(size_t)f * d];
        const int rf = v.rc[f];
        for (int t = 0; t < upto; ++t) {
            const int g = v.cand[t];
            if (v.rc[g] == rf && pf[g] == rf) return true;
            if (v.rc[g] == v.m - rf && pf[g] == 0) return true;
        }
        return false;
    }

    // the whole pair matrix of node v (needs v.cnt / v.rc of v itself)
    void full_pairs(Lvl& v, CT* P, int32_t* Pr) {
        std::fill(sdone.begin(), sdone.end(), 0);
        for (int f = 0; f < d; ++f) {
            CT* row = &P[(size_t)f * d * C];
            int32_t* prow = &Pr[(size_t)f * d];
            if (v.rc[f] == 0) {
                std::fill(row, row + (size_t)d * C, (CT)0);
                std::fill(prow, prow + d, 0);
                sdone[f] = 1;
            } else if (v.rc[f] == v.m) {
                std::copy(v.cnt.begin(), v.cnt.begin() + (size_t)d * C, row);
                std::copy(v.rc.begin(), v.rc.begin() + d, prow);
                sdone[f] = 1;
            } else {
                pair_fill(v, f, P, Pr, sdone.data());
            }
        }
    }

    // ------------------------------------------------------------------ one candidate of an h = 2 node
    // set up an h = 2 (feature classes, pair rows) or h = 3 (the node's pair matrix) node whose
    // candidates are ranked
    void begin_node(Lvl& v, int h, bool sub_here) {
        if (h == 2 && sw.use_reps && !v.cand.empty()) prepare_reps(v);
        if (h == 2 && use_pairs) std::fill(pdone.begin(), pdone.end(), pairs_ready ? 1 : 0);
        if (sub_here && !v.cand.empty()) full_pairs(v, PS.data(), PRS.data());
    }

    // the optimum's depth-2 step: pair row of f in place, depth-1 errors read off it (f = 1
    // side) and off the node's counts minus it (f = 0 side); true when it improves on bound
    TL_INLINE bool step_pairs(Lvl& v, int f, double bound, double& err) {
        pair_fill(v, f, PM.data(), PR.data(), pdone.data());
        const CT* A1 = &PM[(size_t)f * d * C];
        CT* t1 = tbuf.data();
        CT* t0 = tbuf.data() + C;
        for (int c = 0; c < C; ++c) {
            t1[c] = v.cnt[(size_t)f * C + c];
            t0[c] = v.tot[c] - t1[c];
        }
        const int m1 = v.rc[f], m0 = v.m - m1;
        const double e1 = obj.best_depth1_all(A1, nullptr, t1, m1, d, C);
        if (e1 >= bound) return false;
        const double e0 = obj.best_depth1_all(v.cnt.data(), A1, t0, m0, d, C);
        if (e0 + e1 >= bound) return false;
        err = e0 + e1;
        return true;
    }

    // the depth-2 step by counting: the f = 1 child counted on the node's matrix, the f = 0
    // child by subtraction (or counted, weighted); depth-1 answers cached by cover
    TL_INLINE bool step(Lvl& v, int f, double bound, double& err) {
        const Children k = children(v, f);
        const u64* mf = k.mf;
        CT *T1 = k.T1, *T0 = k.T0;
        const double W1 = k.W1, W0 = k.W0;
        const int m1 = k.m1, m0 = k.m0;
        u64 h1 = 0, h0 = 0;
        Entry ce1{}, ce0{};
        bool hit1 = false, hit0 = false;
        if (sw.c1cache) {
            F.child_covers(v, f);
            h1 = cover_hash(v.child1.data(), F.nw, m1);
            h0 = cover_hash(v.child0.data(), F.nw, m0);
            hit1 = cache.lookup(v.child1.data(), h1, 1, ce1);
            hit0 = cache.lookup(v.child0.data(), h0, 1, ce0);
        }
        bool counted = false;
        double e1, e0;
        if (hit1) {
            e1 = ce1.err;
        } else {
            int f1;
            e1 = side1(v, f, mf, T1, W1, m1, f1);
            counted = true;
            if (sw.c1cache) cache.store(v.child1.data(), h1, 1, Entry{e1, f1, SOLVED});
        }
        if (e1 >= bound) return false;
        if (hit0) {
            e0 = ce0.err;
        } else {
            int f0;
            e0 = side0(v, f, mf, T0, W0, m0, counted, f0);
            if (sw.c1cache) cache.store(v.child0.data(), h0, 1, Entry{e0, f0, SOLVED});
        }
        if (e0 + e1 >= bound) return false;
        err = e0 + e1;
        if (sw.mono != nullptr && sw.mono[f] != 0) {  // (>= e0 + e1: the exits above stay sound)
            err = mono_cost(mono_sides(sw.mono[f], T0, T1), e0, e1);
            if (err >= bound) return false;
        }
        return true;
    }

    // the depth-2 step under a budget of 3 leaves: one child split once, the other a leaf. Its
    // cost is min(leaf0 + e1, e0 + leaf1) over the children's leaves and best depth-1 subtrees,
    // the left child's share b1 the first on ties (1: the left child is the leaf); true when the
    // cost is below bound. (Unconstrained splits: the caller sends monotonic ones the long way.)
    TL_INLINE bool step3(Lvl& v, int f, double bound, double& err, int& b1) {
        const Children k = children(v, f);
        const double leaf1 = obj.leaf(k.T1, C, k.W1), leaf0 = obj.leaf(k.T0, C, k.W0);
        int f1, f0;
        const double e1 = side1(v, f, k.mf, k.T1, k.W1, k.m1, f1);
        if (leaf0 + e1 >= bound && leaf1 >= bound) return false;  // (e0 >= 0)
        const double e0 = side0(v, f, k.mf, k.T0, k.W0, k.m0, true, f0);
        const double a = leaf0 + e1, b = e0 + leaf1;
        err = a <= b ? a : b;
        b1 = a <= b ? 1 : 2;
        return err < bound;
    }

  private:
    // split f's local column and its children's class totals (in tbuf), weights and rows
    struct Children {
        const u64* mf;
        CT *T1, *T0;
        double W1, W0;
        int m1, m0;
    };
    TL_INLINE Children children(Lvl& v, int f) {
        Children k{&v.FM[(size_t)f * v.wl], tbuf.data(), tbuf.data() + C, 0.0, 0.0, v.rc[f], v.m - v.rc[f]};
        child_totals(v, k.mf, f, k.T1, k.T0, k.W1, k.W0);
        return k;
    }

    // class totals and weights of the two children of split f (mf: f's local column)
    TL_INLINE void child_totals(const Lvl& v, const u64* mf, int f, CT* T1, CT* T0, double& W1, double& W0) const {
        W1 = W0 = 0;
        if (W) {
            for (int c = 0; c < C; ++c) T0[c] = T1[c] = 0;
            for (int i = 0; i < v.m; ++i) {
                if ((mf[i >> 6] >> (i & 63)) & 1)
                    T1[v.ly[i]] += (CT)v.lw[i];
                else
                    T0[v.ly[i]] += (CT)v.lw[i];
            }
            for (int c = 0; c < C; ++c) {
                W1 += (double)T1[c];
                W0 += (double)T0[c];
            }
        } else {
            for (int c = 0; c < C; ++c) {
                T1[c] = v.cnt[(size_t)f * C + c];
                T0[c] = v.tot[c] - T1[c];
            }
            W0 = (double)(v.m - v.rc[f]);
            W1 = (double)v.rc[f];
        }
    }

    // the f = 1 child's best depth-1 error, its counts left in v.cntf / v.rcf
    TL_INLINE double side1(Lvl& v, int f, const u64* mf, const CT* T1, double W1, int m1, int& f1) {
        if (sw.use_reps) {
            F.count_pass(v, mf, v.cntf.data(), v.rcf.data(), v.reps.data(), (int)v.reps.size());
            return depth1_reps(v, v.cntf.data(), v.rcf.data(), T1, W1, m1, f1);
        }
        count_side1(v, f, mf);
        return depth1(v.cntf.data(), v.rcf.data(), T1, W1, m1, f1, v.cand1, v.keyed1);
    }
    TL_INLINE void count_side1(Lvl& v, int f, const u64* mf) {
        if (use_pairs)
            pair_row(v, f, v.cntf.data(), v.rcf.data());
        else
            F.count_pass(v, mf, v.cntf.data(), v.rcf.data());
    }

    // the f = 0 child's best depth-1 error: its counts are the node's minus the f = 1 child's
    // (counted now unless `counted`), or counted directly when weighted
    TL_INLINE double side0(Lvl& v, int f, const u64* mf, const CT* T0, double W0, int m0, bool counted, int& f0) {
        const int wl = v.wl;
        if (W) {
            for (int i = 0; i < wl; ++i) {
                u64 valid = (i == wl - 1 && (v.m & 63)) ? ((1ULL << (v.m & 63)) - 1) : ~0ULL;
                v.tmpmask[i] = ~mf[i] & valid;
            }
            if (sw.use_reps)
                F.count_pass(v, v.tmpmask.data(), v.cnt0.data(), v.rc0.data(), v.reps.data(), (int)v.reps.size());
            else
                F.count_pass(v, v.tmpmask.data(), v.cnt0.data(), v.rc0.data());
        } else if (sw.use_reps) {
            if (!counted) F.count_pass(v, mf, v.cntf.data(), v.rcf.data(), v.reps.data(), (int)v.reps.size());
            for (int j : v.reps) {
                tl::subtract(&v.cnt[(size_t)j * C], &v.cntf[(size_t)j * C], (size_t)C, &v.cnt0[(size_t)j * C]);
                v.rc0[j] = v.rc[j] - v.rcf[j];
            }
        } else {
            if (!counted) count_side1(v, f, mf);
            tl::subtract(v.cnt.data(), v.cntf.data(), (size_t)d * C, v.cnt0.data());
            tl::subtract(v.rc.data(), v.rcf.data(), (size_t)d, v.rc0.data());
        }
        return sw.use_reps ? depth1_reps(v, v.cnt0.data(), v.rc0.data(), T0, W0, m0, f0)
                           : depth1(v.cnt0.data(), v.rc0.data(), T0, W0, m0, f0, v.cand0, v.keyed1);
    }
};

}  // namespace tl::topk
