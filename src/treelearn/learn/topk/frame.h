// Top-k / optimal search: the per-level work space of a node and its counting.
//
// The search holds one Level per depth of the current path. A node is solved on its own rows:
// they are re-packed into a local column matrix (build_local: tl::gather_columns), so that
// its counting pass (count_pass: tl::feature_counts) costs O(d * m / 64) for m rows. An
// h >= 3 node of an unweighted Top-k search may instead count in an ancestor's matrix with its
// rows as a mask (a "borrowed frame", lend_frame): a node that counts once does not repay a
// re-pack of its rows. The local matrices of the levels are bounded together (frame_budget):
// past it, nodes that can count in a borrowed frame do (slower, no new memory), so a deep
// search on a large sample never holds one full-size matrix per level.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/count.h"
#include "cache.h"
#include "problem.h"

namespace tl::topk {

template <typename CT>
struct Level {
    std::vector<int32_t> rows;  // the node's rows, ascending
    int m = 0, wl = 0;          // number of rows, words of the local matrix
    std::vector<u64> M, cls, mc, cover, tmpmask, child0, child1;
    std::vector<int32_t> ly;    // weighted: class and weight of each local position
    std::vector<double> lw;
    std::vector<CT> cnt, cntf, cnt0, tot;  // counts of the node, of a child (f = 1, f = 0); totals
    std::vector<int32_t> rc, rcf, rc0;
    std::vector<std::pair<int64_t, int>> keyed, keyed1;
    std::vector<int> cand, cand1, cand0;
    // classes of identical columns on an h = 2 node (feature_classes)
    std::vector<std::pair<u64, int>> hk;
    std::vector<int> cls_of, reps, mult, off, members, leaders;
    u64 hash = 0;
    bool cover_ready = false;  // cover set by the parent (its cover AND the split column)
    // the frame the node counts in: its own local matrix (build_local) or an ancestor's
    const u64* FM = nullptr;      // frame columns (d, FW)
    const u64* FC = nullptr;      // frame class bitsets (C, FW)
    const int32_t* FR = nullptr;  // frame position -> row
    const int32_t* FY = nullptr;  // weighted: frame position -> class, weight
    const double* FWt = nullptr;
    int FW = 0;
    std::vector<u64> fvalid;      // the node's rows in the frame (FW words)
    bool frame_ready = false;     // frame and fvalid set by the parent
};

template <typename CT>
class Frames {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    const Sample& D;
    int d, C, nw;
    std::vector<Level<CT>> lv;
    std::vector<u64> ones;
    double frame_budget = 64.0 * 1024 * 1024;  // bytes of the levels' local matrices together
    double m_bytes = 0.0;                       // held now

    Frames(const Sample& data, int n_levels) : D(data), d(data.d), C(data.C), nw(data.nw) {
        lv.resize(n_levels);
        for (auto& v : lv) {
            // rows (and, weighted, the local classes and weights) grow on demand to the largest
            // node a level meets: levels of a search over 10^8 rows are not all root-sized
            v.cls.resize((size_t)C * nw);
            v.mc.resize((size_t)C * nw);
            v.cover.resize(nw);
            v.fvalid.resize(nw);
            v.child0.resize(nw);
            v.child1.resize(nw);
            v.tmpmask.resize(nw);
            v.cnt.resize((size_t)d * C);
            v.cntf.resize((size_t)d * C);
            v.cnt0.resize((size_t)d * C);
            v.tot.resize(C);
            v.rc.resize(d);
            v.rcf.resize(d);
            v.rc0.resize(d);
            v.keyed.reserve(d);
            v.cand.reserve(d);
        }
        ones.assign(nw, ~0ULL);
    }
    // bytes held for the whole search (the per-level buffers, local matrices at full size)
    double fixed_bytes() const { return bytes_for(D, (int)lv.size()); }
    // ... for `levels` levels of sample D, before any is allocated (the class-count tables grow as
    // features x classes per level: the search's cap must hold them)
    static double bytes_for(const Sample& D, int levels) {
        const double Mw = (double)D.d * D.nw;
        return (double)levels * (8.0 * (Mw + 3.0 * D.C * D.nw + 2 * D.nw) + 4.0 * 2 * D.n + (W ? 8.0 * D.n : 0) +
                                 3.0 * sizeof(CT) * D.d * D.C + 12.0 * D.d + 16.0 * D.d);
    }

    // the whole sample at level 0
    void set_root(int L = 0) {
        Level<CT>& v = lv[L];
        v.m = D.n;
        fit_rows(v, D.n);
        for (int i = 0; i < D.n; ++i) v.rows[i] = i;
    }

    static void fit_rows(Level<CT>& v, int m) {
        if (v.rows.size() < (size_t)m) v.rows.resize((size_t)m);
    }
    static void fit_local(Level<CT>& v, int m) {  // weighted: a position's class and weight
        if (W && v.ly.size() < (size_t)m) {
            v.ly.resize((size_t)m);
            v.lw.resize((size_t)m);
        }
    }

    // class totals of the node (tot) and its weight
    void totals(Level<CT>& v, CT* tot, double& Wsum) const {
        for (int c = 0; c < C; ++c) tot[c] = 0;
        if (!W && v.cover_ready && (long long)C * nw < (long long)v.m) {
            // popcounts of the cover AND each class's rows (fewer words than rows to visit)
            for (int c = 0; c < C; ++c) tot[c] = (CT)tl::and_count(v.cover.data(), &D.clsbits[(size_t)c * nw], nw);
        } else if (W) {
            for (int i = 0; i < v.m; ++i) tot[D.y[v.rows[i]]] += (CT)D.w[v.rows[i]];
        } else {
            for (int i = 0; i < v.m; ++i) tot[D.y[v.rows[i]]] += 1;
        }
        Wsum = 0;
        for (int c = 0; c < C; ++c) Wsum += (double)tot[c];
    }
    int n_present(const CT* tot) const {
        int p = 0;
        for (int c = 0; c < C; ++c) p += tot[c] > 0;
        return p;
    }

    // the node's cover bitset over the sample, and its fingerprint
    void make_cover(Level<CT>& v) const {
        std::fill(v.cover.begin(), v.cover.end(), 0ULL);
        for (int i = 0; i < v.m; ++i) {
            int r = v.rows[i];
            v.cover[r >> 6] |= 1ULL << (r & 63);
        }
        v.hash = cover_hash(v.cover.data(), nw, v.m);
    }

    // the node's own local matrix (its frame)
    void build_local(Level<CT>& v) {
        int m = v.m, wl = (m + 63) / 64;
        v.wl = wl;
        if (m == D.n) {
            // every row, in order (rows are always ascending): the node counts in the sample's own
            // columns, read in place (no copy of a root-sized matrix)
            v.FM = D.colbits;
            v.FC = D.clsbits.data();
            v.FR = v.rows.data();
            v.FW = wl;
            std::fill(v.fvalid.begin(), v.fvalid.begin() + wl, ~0ULL);
            if (m & 63) v.fvalid[wl - 1] = (1ULL << (m & 63)) - 1;
            if (W) {
                fit_local(v, m);
                for (int i = 0; i < m; ++i) {
                    v.ly[i] = D.y[i];
                    v.lw[i] = D.w[i];
                }
            }
            v.FY = v.ly.data();
            v.FWt = v.lw.data();
            return;
        }
        // grown on demand: a level deep in the tree never touches the memory of a root-sized matrix
        if (v.M.size() < (size_t)d * wl) {
            if (m_bytes + 8.0 * ((double)d * wl - (double)v.M.size()) > frame_budget) release_below(v);
            m_bytes += 8.0 * ((double)d * wl - (double)v.M.size());
            std::vector<u64>((size_t)d * wl).swap(v.M);  // exact size (fully rewritten below)
        }
        v.FM = v.M.data();
        v.FC = v.cls.data();
        fit_local(v, m);
        v.FR = v.rows.data();
        v.FY = v.ly.data();
        v.FWt = v.lw.data();
        v.FW = wl;
        std::fill(v.fvalid.begin(), v.fvalid.begin() + wl, ~0ULL);
        if (m & 63) v.fvalid[wl - 1] = (1ULL << (m & 63)) - 1;
        tl::gather_columns(D.rowbits.data(), D.dw, v.rows.data(), m, d, C, v.M.data(), v.cls.data());
        if (W) {
            for (int i = 0; i < m; ++i) {
                int r = v.rows[i];
                v.ly[i] = D.y[r];
                v.lw[i] = D.w[r];
            }
        }
    }

    // counts of feature = 1 per class among the frame's rows in mask (the node's frame); all
    // features, or the selection sel[0..nsel)
    void count_pass(Level<CT>& v, const u64* mask, CT* cnt, int32_t* rc, const int* sel = nullptr, int nsel = -1) {
        if (!W)
            tl::feature_counts(v.FM, d, v.FW, mask, v.FC, C, v.mc.data(), cnt, rc, sel, nsel);
        else
            tl::weighted_feature_counts(v.FM, d, v.FW, mask, v.FY, v.FWt, C, cnt, rc, sel, nsel);
    }

    // the rows of side `side` of feature f into child c, from v's frame column: a bit scan
    void split_rows_local(const Level<CT>& v, int f, int side, Level<CT>& c) const {
        fit_rows(c, v.m);
        const int wl = v.FW;
        const u64* col = v.FM + (size_t)f * wl;
        const u64* valid = v.fvalid.data();
        int mm = 0;
        for (int i = 0; i < wl; ++i) {
            u64 x = (side ? col[i] : ~col[i]) & valid[i];
            while (x) {
                c.rows[mm++] = v.FR[(i << 6) + tl::ctz(x)];
                x &= x - 1;
            }
        }
        c.m = mm;
    }
    // the same from the row bitsets (no frame needed)
    void split_rows(const Level<CT>& v, int f, int side, Level<CT>& c) const {
        fit_rows(c, v.m);
        int mm = 0;
        for (int i = 0; i < v.m; ++i) {
            int r = v.rows[i];
            if ((int)D.bit(r, f) == side) c.rows[mm++] = r;
        }
        c.m = mm;
    }

    // same partition as an earlier candidate (equal or complementary column on the node)? With
    // monotonic constraints (mono, per feature), only under the same constraint (equal column)
    // or the opposite one (complementary column): the same split then
    bool duplicate(const Level<CT>& v, int f, int upto, const int8_t* mono = nullptr) const {
        const int wl = v.FW;
        const u64* cf = v.FM + (size_t)f * wl;
        const u64* valid = v.fvalid.data();
        const int sf = mono ? mono[f] : 0;
        for (int t = 0; t < upto; ++t) {
            int g = v.cand[t];
            const u64* cg = v.FM + (size_t)g * wl;
            const int sg = mono ? mono[g] : 0;
            if (v.rc[g] == v.rc[f] && sg == sf) {
                bool eq = true;
                for (int i = 0; i < wl && eq; ++i) eq = (cf[i] & valid[i]) == (cg[i] & valid[i]);
                if (eq) return true;
            }
            if (v.rc[g] == v.m - v.rc[f] && sg == -sf) {
                bool eq = true;
                for (int i = 0; i < wl && eq; ++i) eq = (cf[i] & valid[i]) == (~cg[i] & valid[i]);
                if (eq) return true;
            }
        }
        return false;
    }

    // the children's covers (v.child1 / v.child0): v's cover AND column f, or its complement
    TL_INLINE void child_covers(Level<CT>& v, int f) const {
        tl::split_cover(v.cover.data(), &D.colbits[(size_t)f * nw], v.child1.data(), v.child0.data(), nw);
    }

    // let child c (side `side` of feature f, depth budget hc) count in v's frame instead of
    // re-packing its rows: for unweighted Top-k nodes with hc >= 3 (they count once; an h = 2
    // node counts 1 + k times and re-packs) while the frame is at most 8x the child's rows; and
    // for any node that can (hc >= 3, >= 4 for the optimum, whose h = 3 nodes build pair
    // matrices on their own matrix) when its own matrix would pass the frames' budget
    void lend_frame(const Level<CT>& v, int f, int side, Level<CT>& c, int hc, bool all_k) const {
        const bool cheap = !W && !all_k && hc >= 3 && (long long)v.FW * 64 <= 8LL * c.m;
        if (!cheap && !(hc >= (all_k ? 4 : 3) && over_budget(c))) return;
        const int wl = v.FW;
        const u64* col = v.FM + (size_t)f * wl;
        for (int i = 0; i < wl; ++i) c.fvalid[i] = (side ? col[i] : ~col[i]) & v.fvalid[i];
        c.FM = v.FM;
        c.FC = v.FC;
        c.FR = v.FR;
        c.FY = v.FY;
        c.FWt = v.FWt;
        c.FW = wl;
        c.frame_ready = true;
    }

  private:
    // c's own matrix would take the levels' matrices past the budget
    bool over_budget(const Level<CT>& c) const {
        const double need = (double)d * ((c.m + 63) / 64);
        return (double)c.M.size() < need && m_bytes + 8.0 * (need - (double)c.M.size()) > frame_budget;
    }
    // free the local matrices of the levels below v (none is in use while v builds its own)
    void release_below(const Level<CT>& v) {
        bool below = false;
        for (auto& q : lv) {
            if (below && !q.M.empty()) {
                m_bytes -= 8.0 * (double)q.M.size();
                std::vector<u64>().swap(q.M);
            }
            if (&q == &v) below = true;
        }
    }
};

}  // namespace tl::topk
