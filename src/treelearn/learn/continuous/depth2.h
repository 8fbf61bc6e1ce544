// Continuous optimal search, part 2 of 7: the specialised depth-2 solver.
//
// For one root threshold ("the first p rows of feature f's order go left"), a single pass over
// every feature computes the optimal depth-1 subtrees of both sides. Unit weights (the kernels
// here): a row's side and class are looked up once per evaluation, every feature is one pass of
// additions, and a threshold's error is compared with the side's best only through a window of
// running counts (two classes: the class balance alone decides, eval_2u; more classes: the largest
// class counts either side, eval_mc). The caller gives each side a cap (its error only matters
// below it: the split must beat the incumbent) and a lower bound (reached: the side is done); a
// side whose remaining rows in a feature cannot take it below its best is done with that feature,
// and the pass over a feature ends when both sides are. With a cap, a side that finds nothing
// below it reports the cap as its lower bound (its leaf as its tree). Sample weights, and the gap
// skips of the ablation (use_skip), are in depth2_scan.h.
#pragma once

#include <utility>

#include "data.h"

namespace tl::cont {
namespace detail {

// one side of a depth-2 evaluation with unit weights (integer counts): Side's search state
struct ISide {
    int T = 0;             // number of rows
    int best = 0;          // best error so far (starts at the leaf error)
    int bg = -1;           // best feature (-1: leaf)
    int brl = 0, brr = 0;  // ranks either side of the best threshold
    int lbi = 0;           // lower bound on the error (rounded up): reaching it ends the scan
    bool done = false;

    // n rows, leaf error leaf, lower bound lb (rounded up, with the search's tl::ERROR_TIE tolerance)
    void start(int n, int leaf, double lb) {
        T = n;
        best = leaf;
        lbi = (int)std::ceil(lb - tl::ERROR_TIE);
        done = best <= lbi;
    }

    // at a threshold of feature g (between ranks prev and rank) with error err and `left` rows
    // of this side still to pass: keep it if it beats best. True when this side needs no more of
    // feature g: the bound is reached (done, for every feature), or (with skip) no later threshold
    // can beat best, as each further row changes the error by at most one
    TL_INLINE bool threshold(int err, int left, int g, int prev, int rank, bool skip) {
        if (err < best) {
            best = err;
            bg = g;
            brl = prev;
            brr = rank;
            if (err <= lbi) {
                done = true;
                return true;
            }
            return false;
        }
        return skip && err - best >= left;
    }
};

// the results of both sides of an integer scan into sd
inline void store_sides(const ISide* st, Side* sd) {
    for (int s = 0; s < 2; ++s) {
        sd[s].T = st[s].T;
        sd[s].best = st[s].best;
        sd[s].bf = st[s].bg;
        sd[s].brl = st[s].brl;
        sd[s].brr = st[s].brr;
    }
}

// the depth-2 solver's scratch (one per thread) over shared columns
// a side's scan state (either kernel's: n, best, found, capi, lbi, bg, brl, brr) into its Side: its
// best error, and as bound the best when found or below the cap, else what the scan proved
template <class State>
inline void store_side(const State& st, Side& S) {
    S.T = st.n;
    S.best = st.best;
    S.lb = st.found || st.best < st.capi ? st.best : std::max(st.capi, st.lbi);
    S.bf = st.bg;
    S.brl = st.brl;
    S.brr = st.brr;
}

struct Depth2 {
    const Columns& D;
    const bool skip_on;
    std::vector<int32_t> code;     // n: per row, side * classes + class
    std::vector<int64_t> code64;   // n: per row, its step of the packed running counts (eval_2u)
    std::vector<double> tl, cur;   // 2 * C
    std::vector<int> ti, ci;       // 2 * C
    long long evals = 0;
    // the vector kernel's node (depth2_simd.h): per feature, its rows' classes (+1/-1), where a new
    // value starts (-1) and their positions in the order of the root feature node_f
    bool simd_on = true, node_on = false;
    const Entry* node_view = nullptr;
    int node_m = 0, node_f = -1;
    std::vector<int16_t> cls16, bnd16, pos16;
    std::vector<int> ones;  // rows of class 1 among the first i of node_f's order

    Depth2(const Columns& cols, bool skip)
        : D(cols), skip_on(skip), code(cols.n), code64(cols.C == 2 && !cols.weighted ? cols.n : 0),
          tl(2 * cols.C), cur(2 * cols.C), ti(2 * cols.C), ci(2 * cols.C) {}

    // optimal depth-1 trees of both sides of "the first p rows of feature f's order go left";
    // features scanned in the order `order` (best depth-1 features first); lbs: known lower
    // bounds of both sides (a side reaching its bound is done); caps: a side's error matters
    // only below its cap (infinity: always). sd[s].best is the error of the side's tree, sd[s].lb
    // a lower bound on its optimum (equal unless nothing was found below the cap)
    void eval(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs,
              const double* caps) {
        ++evals;
        const int C = D.C;
        if (node_on && view == node_view && m == node_m) {
            eval_2u_simd(f, p, sd, order, lbs, caps);  // (node_on: two classes, unit weights, no skips)
        } else if (!D.weighted) {
            if (C == 2 && skip_on)
                eval_2u_skip(view, m, f, p, sd, order, lbs);
            else if (C == 2 && m < (1 << 20))
                eval_2u<PackedCounts>(view, m, f, p, sd, order, lbs, caps);
            else if (C == 2)
                eval_2u<PackedBalances>(view, m, f, p, sd, order, lbs, caps);
            else if (skip_on)
                eval_u_skip(C, view, m, f, p, sd, order, lbs);
            else if (C == 3)
                eval_mc<3>(view, m, f, p, sd, order, lbs, caps);
            else if (C == 4)
                eval_mc<4>(view, m, f, p, sd, order, lbs, caps);
            else if (C <= 8)
                eval_mc<8>(view, m, f, p, sd, order, lbs, caps);
            else
                eval_mc<0>(view, m, f, p, sd, order, lbs, caps);
        } else if (C == 2) {
            eval_w<2>(view, m, f, p, sd, order, lbs);
        } else {
            eval_w<0>(view, m, f, p, sd, order, lbs);
        }
        if (D.weighted || skip_on)
            for (int s = 0; s < 2; ++s) sd[s].lb = sd[s].best;
    }

    // ---------------------------------------------------------------- two classes, unit weights
    // A side of n rows with class balance D = n0 - n1 has, at a threshold where the rows passed so
    // far have balance d, the error (n - |d| - |D - d|) / 2 = (n - max(|D|, |2d - D|)) / 2: it
    // depends on d alone, and a threshold beats an error e exactly when d leaves the window of
    // balances with |2d - D| <= n - 2e. The running balances of both sides (and the rows side 0
    // has passed) sit in one 64-bit word, so a row is one addition of its code; at the first row
    // of a new value both windows are checked (a side without rows of that value meets a
    // threshold it met before: its balance has not moved, and it does not leave its window twice).
    // The ranks either side of an improving threshold are found afterwards, by a short scan.

    // the packed word for samples of < 2^20 rows: side 0's balance + B (bits 0-20), the rows of
    // side 0 passed (21-41), side 1's balance + B (42-62); every field stays in range
    struct PackedCounts {
        static constexpr bool counts = true;
        static constexpr int64_t B = (int64_t)1 << 20, M = ((int64_t)1 << 21) - 1;
        static constexpr int64_t start = B | (B << 42);
        static int64_t step(int side, int c) {
            return side == 0 ? ((int64_t)1 << 21) + (c == 0 ? 1 : -1) : (c == 0 ? 1 : -1) * ((int64_t)1 << 42);
        }
        static uint32_t f0(int64_t a) { return (uint32_t)(a & M); }  // side 0's balance + B
        static uint32_t f1(int64_t a) { return (uint32_t)(a >> 42); }
        static int passed0(int64_t a) { return (int)((a >> 21) & M); }
    };
    // larger samples: side 0's balance + B in the low half, side 1's in the high half
    struct PackedBalances {
        static constexpr bool counts = false;
        static constexpr int64_t B = (int64_t)1 << 30;
        static constexpr int64_t start = B;
        static int64_t step(int side, int c) { return (c == 0 ? 1 : -1) * (side == 0 ? (int64_t)1 : ((int64_t)1 << 32)); }
        static uint32_t f0(int64_t a) { return (uint32_t)(a & 0xffffffff); }
        static uint32_t f1(int64_t a) { return (uint32_t)((uint32_t)(a >> 32) + (uint32_t)B); }
        static int passed0(int64_t) { return 0; }
    };

    // one side's state in eval_2u: rows n, balance D, the error of its tree, its window
    // [lo, lo + w] (balances that do not beat the current best, or the cap), bound and cap
    struct Bal {
        int n = 0, D = 0, best = 0, lbi = 0, capi = 0, V = 0, lo = 0;
        uint32_t w = 0;
        int bg = -1, brl = 0, brr = 0;
        bool done = false, found = false;
        void start(int rows, int bal, double lb, double cap) {
            n = rows;
            D = bal;
            lbi = (int)std::ceil(lb - 1e-9);
            capi = cap < 1e18 ? std::max(0, (int)std::ceil(cap - 1e-10)) : std::numeric_limits<int>::max() / 4;
            best = (n - std::abs(D)) / 2;  // the leaf
            window(std::min(best, capi));
        }
        // improvements: errors below e; done when e is at the side's bound
        void window(int e) {
            if (e <= lbi || e <= 0) {
                done = true;
                lo = std::numeric_limits<int>::min() / 2;
                w = std::numeric_limits<uint32_t>::max();
                return;
            }
            V = n - 2 * e;  // |2d - D| > V improves
            const int hi = floor_half(V + D);
            lo = -floor_half(V - D);
            w = (uint32_t)(hi - lo);
        }
        bool hopeless(int d, int rows_left) const { return done || V - std::abs(2 * d - D) >= 2 * rows_left; }
        void improve(int d, int g, std::pair<int, int> ranks) {
            best = (n - std::abs(2 * d - D)) / 2;
            found = true;
            bg = g;
            brl = ranks.first;
            brr = ranks.second;
            window(best);
        }
        void store(Side& S) const { store_side(*this, S); }
        static int floor_half(int x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }
    };

    template <class L>
    void eval_2u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs,
                 const double* caps) {
        const Entry* vf = view + (size_t)f * m;
        int64_t* code = this->code64.data();
        int T0[2] = {0, 0}, T1[2] = {0, 0};
        for (int i = 0; i < m; ++i) {
            const int r = vf[i].row;
            const int side = i < p ? 0 : 1, c = D.lab[r];
            code[r] = L::step(side, c);
            // a pointer, not (c ? T1 : T0)[side]: GCC 12's bounds sanitizer reads an
            // uninitialised index in that form (a false report under make sanitize)
            int* t = c ? T1 : T0;
            t[side]++;
        }
        Bal st[2];
        for (int s = 0; s < 2; ++s) st[s].start(T0[s] + T1[s], T0[s] - T1[s], lbs[s], caps[s]);
        for (int gi = 0; gi < D.F && !(st[0].done && st[1].done); ++gi) {
            const Entry* v = view + (size_t)order[gi] * m;
            if (scan_2u<L>(v, m, order[gi], st)) break;
        }
        for (int s = 0; s < 2; ++s) st[s].store(sd[s]);
    }

    // one feature's pass of eval_2u; true when both sides are done (for every feature)
    template <class L>
    bool scan_2u(const Entry* v, int m, int g, Bal* st) const {
        const int64_t* code = this->code64.data();
        const uint32_t B = (uint32_t)L::B;
        // the windows as unsigned offsets: a balance field minus (B + lo) above w left the window
        uint32_t lo0 = B + (uint32_t)st[0].lo, lo1 = B + (uint32_t)st[1].lo, w0 = st[0].w, w1 = st[1].w;
        int64_t acc = L::start;
        for (int i = 0; i < m; ++i) {
            if (L::counts && (i & 63) == 0 && i > 0) {  // both sides unable to leave their windows: next feature
                const int p0 = L::passed0(acc);
                if (st[0].hopeless((int)L::f0(acc) - (int)B, st[0].n - p0) &&
                    st[1].hopeless((int)L::f1(acc) - (int)B, st[1].n - (i - p0)))
                    return false;
            }
            const Entry e = v[i];
            const bool out0 = L::f0(acc) - lo0 > w0, out1 = L::f1(acc) - lo1 > w1;
            if (__builtin_expect(out0 | out1, 0) && i > 0 && e.rank != v[i - 1].rank) {
                if (out0) st[0].improve((int)L::f0(acc) - (int)B, g, find_ranks(v, m, i, 0));
                if (out1) st[1].improve((int)L::f1(acc) - (int)B, g, find_ranks(v, m, i, 1));
                if (st[0].done && st[1].done) return true;
                lo0 = B + (uint32_t)st[0].lo, lo1 = B + (uint32_t)st[1].lo, w0 = st[0].w, w1 = st[1].w;
            }
            acc += code[e.row];
        }
        return false;
    }

    // the ranks either side of the threshold before row i of a feature's order v, for side s: the
    // last row of the side before i and the first at or after i (eval_2u's codes)
    std::pair<int, int> find_ranks(const Entry* v, int m, int i, int s) const {
        int a = i - 1, b = i;
        while (a >= 0 && side_of(v[a].row) != s) --a;
        while (b < m && side_of(v[b].row) != s) ++b;
        return {v[a].rank, v[b].rank};
    }
    int side_of(int row) const {
        const int64_t c = code64[row] < 0 ? -code64[row] : code64[row];
        return c >= ((int64_t)1 << 32) ? 1 : 0;
    }

    // ---------------------------------------------------------------- three or more classes
    // A side's error at a threshold is n - maxL - maxR, with maxL the largest class count of the
    // rows passed (it only grows: kept exact per row) and maxR that of the rows still to come (it
    // only shrinks: an upper bound kept, recomputed over the classes only when the bound would let
    // the threshold beat the side's best). Both sides are checked at the first row of every new
    // value (as eval_2u). CC: the classes at compile time (up to CC; 0: any number)
    struct MSide {
        int n = 0, maxT = 0, best = 0, lbi = 0, capi = 0, V = 0;
        int bg = -1, brl = 0, brr = 0;
        bool found = false;
        static constexpr int NONE = std::numeric_limits<int>::max();
        void start(int rows, int mx, double lb, double cap) {
            n = rows;
            maxT = mx;
            best = n - mx;
            lbi = (int)std::ceil(lb - 1e-9);
            capi = cap < 1e18 ? std::max(0, (int)std::ceil(cap - 1e-10)) : std::numeric_limits<int>::max() / 4;
            window(std::min(best, capi));
        }
        void window(int e) { V = e <= lbi || e <= 0 ? NONE : n - e; }  // improve: maxL + maxR > V
        bool done() const { return V == NONE; }
        void store(Side& S) const { store_side(*this, S); }
    };

    template <int CC>
    void eval_mc(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs,
                 const double* caps) {
        const int NC = CC > 0 && CC <= 4 ? CC : D.C;
        const Entry* vf = view + (size_t)f * m;
        int t_loc[CC > 0 ? 2 * CC : 1];
        int* Tc = CC > 0 ? t_loc : ti.data();
        std::fill(Tc, Tc + 2 * NC, 0);
        for (int i = 0; i < m; ++i) {
            const int r = vf[i].row;
            const int k = (i < p ? 0 : NC) + D.lab[r];
            code[r] = k;
            Tc[k]++;
        }
        MSide st[2];
        for (int s = 0; s < 2; ++s) {
            int n = 0, mx = 0;
            for (int c = 0; c < NC; ++c) {
                n += Tc[s * NC + c];
                mx = std::max(mx, Tc[s * NC + c]);
            }
            st[s].start(n, mx, lbs[s], caps[s]);
        }
        for (int gi = 0; gi < D.F && !(st[0].done() && st[1].done()); ++gi)
            if (scan_mc<CC>(view + (size_t)order[gi] * m, m, order[gi], NC, Tc, st)) break;
        for (int s = 0; s < 2; ++s) st[s].store(sd[s]);
    }

    // one feature's pass of eval_mc; true when both sides are done (for every feature)
    template <int CC>
    bool scan_mc(const Entry* v, int m, int g, int NC, const int* Tc, MSide* st) {
        int c_loc[CC > 0 ? 2 * CC : 1];
        int* cc = CC > 0 ? c_loc : ci.data();
        std::fill(cc, cc + 2 * NC, 0);
        // h[s] = V - maxR - maxL: a threshold may beat the side's best only when h[s] < 0
        int maxL[2] = {0, 0}, maxR[2] = {st[0].maxT, st[1].maxT}, h[2], passed0 = 0;
        for (int s = 0; s < 2; ++s) h[s] = st[s].done() ? MSide::NONE / 2 : st[s].V - st[s].maxT;
        int prev = v[0].rank;
        for (int i = 0; i < m; ++i) {
            if ((i & 63) == 0 && i > 0 && h[0] >= st[0].n - passed0 && h[1] >= st[1].n - (i - passed0))
                return false;  // maxL grows by at most one a row: neither side can improve in this feature
            const Entry e = v[i];
            if (e.rank != prev) {
                prev = e.rank;
                if (__builtin_expect((h[0] | h[1]) < 0, 0)) {
                    for (int s = 0; s < 2; ++s) {
                        if (h[s] >= 0) continue;
                        int mr = 0;  // the exact maxR
                        for (int c = 0; c < NC; ++c) mr = std::max(mr, Tc[s * NC + c] - cc[s * NC + c]);
                        h[s] += maxR[s] - mr;
                        maxR[s] = mr;
                        if (h[s] >= 0) continue;
                        MSide& b = st[s];
                        b.best = b.n - maxL[s] - mr;
                        b.found = true;
                        b.bg = g;
                        const std::pair<int, int> rk = find_ranks_mc(v, m, i, s, NC);
                        b.brl = rk.first;
                        b.brr = rk.second;
                        b.window(b.best);
                        h[s] = b.done() ? MSide::NONE / 2 : b.V - maxR[s] - maxL[s];
                    }
                    if (st[0].done() && st[1].done()) return true;
                }
            }
            const int k = code[e.row];
            const int s = k >= NC ? 1 : 0;
            const int up = ++cc[k] > maxL[s] ? 1 : 0;
            maxL[s] += up;
            h[s] -= up;
            passed0 += 1 - s;
        }
        return false;
    }

    // find_ranks for eval_mc's codes (side * NC + class)
    std::pair<int, int> find_ranks_mc(const Entry* v, int m, int i, int s, int NC) const {
        int a = i - 1, b = i;
        while (a >= 0 && (code[v[a].row] >= NC) != (s == 1)) --a;
        while (b < m && (code[v[b].row] >= NC) != (s == 1)) ++b;
        return {v[a].rank, v[b].rank};
    }

    // ---------------------------------------------------------------- depth2_simd.h
    // a depth-2 node opens (view, m rows): the vector kernel's per-node data, when it applies
    void begin_node(const Entry* view, int m);
    void end_node() { node_on = false; }
    void take_feature(int f);
    void eval_2u_simd(int f, int p, Side* sd, const int* order, const double* lbs, const double* caps);
    bool scan_simd(int g, int p, Bal* st) const;
    bool replay(int g, int p, int i, int e, int* d, Bal* st) const;
    std::pair<int, int> ranks_simd(int g, int p, int i, int s) const;

    // ---------------------------------------------------------------- depth2_scan.h
    void eval_2u_skip(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs);
    void eval_u_skip(int C, const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs);
    template <int CC>
    void eval_u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs);
    template <int CC>
    void eval_w(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs);
};

}  // namespace detail
}  // namespace tl::cont

#include "depth2_scan.h"
#include "depth2_simd.h"
