// Continuous optimal search, part 2 of 6: the specialised depth-2 solver.
//
// For one root threshold ("the first p rows of feature f's order go left"), a single pass over
// every feature computes the optimal depth-1 subtrees of both sides (two count vectors, rows
// routed by a per-row code = side * classes + class). A threshold whose error exceeds the side's
// best by g cannot be beaten before more than g weight has moved across, so those thresholds can
// be skipped (skip_on; off by default: computing every error without branches measured faster
// than deciding what to skip). Variants: two classes with unit weights (branch-free integer
// errors), unit weights with any number of classes, and real weights.
#pragma once

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
struct Depth2 {
    const Columns& D;
    const bool skip_on;
    std::vector<int32_t> code;     // n: per row, side * classes + class
    std::vector<double> tl, cur;   // 2 * C
    std::vector<int> ti, ci;       // 2 * C
    long long evals = 0;

    Depth2(const Columns& cols, bool skip)
        : D(cols), skip_on(skip), code(cols.n), tl(2 * cols.C), cur(2 * cols.C), ti(2 * cols.C), ci(2 * cols.C) {}

    // optimal depth-1 trees of both sides of "the first p rows of feature f's order go left";
    // features scanned in the order `order` (best depth-1 features first); lbs: known lower
    // bounds of both sides (a side reaching its bound is done)
    void eval(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        ++evals;
        const int C = D.C;
        if (!D.weighted) {
            if (C == 2)
                eval_2u(view, m, f, p, sd, order, lbs);
            else if (C == 3)
                eval_u<3>(view, m, f, p, sd, order, lbs);
            else if (C == 4)
                eval_u<4>(view, m, f, p, sd, order, lbs);
            else if (C >= 5 && C <= 8)
                eval_u_upto8(C, view, m, f, p, sd, order, lbs);
            else
                eval_u<0>(view, m, f, p, sd, order, lbs);
        } else if (C == 2) {
            eval_w<2>(view, m, f, p, sd, order, lbs);
        } else {
            eval_w<0>(view, m, f, p, sd, order, lbs);
        }
    }

    // two classes, unit weights: integer counts, and every row's split error computed without
    // branches (cheaper than deciding whether to skip it); only an improvement, or a gap larger
    // than the rows left on that side (the side is done with this feature), branches
    void eval_2u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const Entry* vf = view + (size_t)f * m;
        int32_t* code = this->code.data();
        int T0[2] = {0, 0}, T1[2] = {0, 0};
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : 2) + D.lab[r];
            code[r] = k;
            // a pointer, not (k & 1 ? T1 : T0)[k >> 1]: GCC 12's bounds sanitizer reads an
            // uninitialised index in that form (a false report under make sanitize)
            int* side = k & 1 ? T1 : T0;
            side[k >> 1]++;
        }
        ISide st[2];
        for (int s = 0; s < 2; ++s) {
            st[s].start(T0[s] + T1[s], std::min(T0[s], T1[s]), lbs[s]);
        }
        for (int gi = 0; gi < D.F; ++gi) {
            if (st[0].done && st[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            int c[2][2] = {{0, 0}, {0, 0}}, prev[2] = {-1, -1};
            bool fd[2] = {st[0].done, st[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry e = v[i];
                const int k = code[e.row];
                const int s = k >> 1;
                if (fd[s]) continue;
                const int a0 = c[s][0], a1 = c[s][1];
                const int err = std::min(a0, a1) + std::min(T0[s] - a0, T1[s] - a1);
                const bool bnd = e.rank != prev[s];
                if (bnd && st[s].threshold(err, st[s].T - (a0 + a1), g, prev[s], e.rank, skip_on)) {
                    fd[s] = true;
                    if (fd[0] && fd[1]) break;
                    continue;
                }
                c[s][k & 1]++;
                prev[s] = e.rank;
            }
        }
        store_sides(st, sd);
    }

    void eval_u_upto8(int C, const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        switch (C) {
            case 5: eval_u<5>(view, m, f, p, sd, order, lbs); break;
            case 6: eval_u<6>(view, m, f, p, sd, order, lbs); break;
            case 7: eval_u<7>(view, m, f, p, sd, order, lbs); break;
            default: eval_u<8>(view, m, f, p, sd, order, lbs); break;
        }
    }

    // unit weights, any number of classes: integer counts; a side's error is computed at its
    // boundaries only (O(classes)), with the same "gap larger than the rows left" stop
    template <int CC>
    void eval_u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const int NC = CC > 0 ? CC : D.C;
        const Entry* vf = view + (size_t)f * m;
        int32_t* code = this->code.data();
        // 2 * NC class totals and running counts: on the stack when the classes are known
        int t_loc[CC > 0 ? 2 * CC : 1], c_loc[CC > 0 ? 2 * CC : 1];
        int* Tc = CC > 0 ? t_loc : ti.data();
        int* cc = CC > 0 ? c_loc : ci.data();
        std::fill(Tc, Tc + 2 * NC, 0);
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : NC) + D.lab[r];
            code[r] = k;
            Tc[k]++;
        }
        ISide st[2];
        for (int s = 0; s < 2; ++s) {
            int tot = 0, mx = 0;
            for (int c = 0; c < NC; ++c) {
                tot += Tc[s * NC + c];
                mx = std::max(mx, Tc[s * NC + c]);
            }
            st[s].start(tot, tot - mx, lbs[s]);
        }
        for (int gi = 0; gi < D.F; ++gi) {
            if (st[0].done && st[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            std::fill(cc, cc + 2 * NC, 0);
            int tot[2] = {0, 0}, prev[2] = {-1, -1};
            bool fd[2] = {st[0].done, st[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry e = v[i];
                const int k = code[e.row];
                const int s = k >= NC ? 1 : 0;
                if (fd[s]) continue;
                if (e.rank != prev[s] && tot[s] > 0) {
                    const int* a = &cc[s * NC];
                    const int* t = &Tc[s * NC];
                    int ml = 0, mr = 0;
                    for (int c = 0; c < NC; ++c) {
                        ml = std::max(ml, a[c]);
                        mr = std::max(mr, t[c] - a[c]);
                    }
                    const int err = (tot[s] - ml) + ((st[s].T - tot[s]) - mr);
                    if (st[s].threshold(err, st[s].T - tot[s], g, prev[s], e.rank, skip_on)) {
                        fd[s] = true;
                        if (fd[0] && fd[1]) break;
                        continue;
                    }
                }
                cc[k]++;
                tot[s]++;
                prev[s] = e.rank;
            }
        }
        store_sides(st, sd);
    }

    template <int CC>
    void eval_w(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
        const int NC = CC > 0 ? CC : D.C;
        const Entry* vf = view + (size_t)f * m;
        double* tl = this->tl.data();    // 2 * NC: class totals per side
        double* cur = this->cur.data();  // 2 * NC: running counts per side
        int32_t* code = this->code.data();  // per row: side * NC + class
        std::fill(tl, tl + 2 * NC, 0.0);
        for (int i = 0; i < m; ++i) {
            int r = vf[i].row;
            int k = (i < p ? 0 : NC) + D.lab[r];
            code[r] = k;
            tl[k] += D.wt[r];
        }
        for (int s = 0; s < 2; ++s) {
            Side& S = sd[s];
            S.T = 0.0;
            double mx = 0.0;
            for (int c = 0; c < NC; ++c) {
                S.T += tl[s * NC + c];
                mx = std::max(mx, tl[s * NC + c]);
            }
            S.best = S.T - mx;
            S.bf = -1;
            S.done = S.best <= lbs[s] + D.eps;
        }
        for (int gi = 0; gi < D.F; ++gi) {
            if (sd[0].done && sd[1].done) break;
            const int g = order[gi];
            const Entry* v = view + (size_t)g * m;
            for (int s = 0; s < 2; ++s) {
                sd[s].tot = 0.0;
                sd[s].prev = -1;
                sd[s].skip = -1.0;
            }
            std::fill(cur, cur + 2 * NC, 0.0);
            bool fd[2] = {sd[0].done, sd[1].done};
            for (int i = 0; i < m; ++i) {
                const Entry& e = v[i];
                const int k = code[e.row];
                const int s = k >= NC ? 1 : 0;
                if (fd[s]) continue;
                Side& S = sd[s];
                double* cc = cur + s * NC;
                const double ww = D.wt[e.row];
                if (e.rank != S.prev && S.prev >= 0 && !(skip_on && S.skip >= 0.0)) {
                    const double* tt = tl + s * NC;
                    double ml = 0.0, mr = 0.0;
                    for (int c = 0; c < NC; ++c) {
                        ml = std::max(ml, cc[c]);
                        mr = std::max(mr, tt[c] - cc[c]);
                    }
                    double err = (S.tot - ml) + ((S.T - S.tot) - mr);
                    if (err < S.best - D.eps) {
                        S.best = err;
                        S.bf = g;
                        S.brl = S.prev;
                        S.brr = e.rank;
                        S.skip = -1.0;
                        if (err <= lbs[s] + D.eps) {  // cannot go lower
                            S.done = true;
                            fd[s] = true;
                            if (fd[0] && fd[1]) break;
                            continue;
                        }
                    } else {
                        S.skip = err - S.best;  // no threshold beats best before > this weight moves
                        // the rest of this side cannot move enough weight to beat best
                        if (skip_on && S.skip >= S.T - S.tot) {
                            fd[s] = true;
                            if (fd[0] && fd[1]) break;
                            continue;
                        }
                    }
                }
                S.prev = e.rank;
                cc[k - s * NC] += ww;
                S.tot += ww;
                if (skip_on) S.skip -= ww;
            }
        }
    }

};

}  // namespace detail
}  // namespace tl::cont
