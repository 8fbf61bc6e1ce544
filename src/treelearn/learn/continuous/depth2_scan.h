// Continuous optimal search: the depth-2 solver's other kernels (depth2.h holds the unit-weight
// ones): sample weights (eval_w), and the gap skips of the ablation switch use_skip (eval_2u_skip,
// eval_u): a threshold whose error exceeds the side's best by g cannot be beaten before more than
// g weight has moved across, so a side is done with a feature when its remaining rows cannot close
// the gap. The same trees as the unit-weight kernels: the first strict improvement of each side,
// features in the given order, thresholds ascending.
#pragma once

#include "depth2.h"

namespace tl::cont {
namespace detail {

// eval_2u with gap skips (use_skip): a side is done with a feature when its rows left cannot
// move its balance out of the window
inline void Depth2::eval_2u_skip(const Entry* view, int m, int f, int p, Side* sd, const int* order,
                                 const double* lbs) {
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
    Bal st[2];
    for (int s = 0; s < 2; ++s) st[s].start(T0[s] + T1[s], T0[s] - T1[s], lbs[s], std::numeric_limits<double>::infinity());
    for (int gi = 0; gi < D.F && !(st[0].done && st[1].done); ++gi) {
        const int g = order[gi];
        const Entry* v = view + (size_t)g * m;
        int d[2] = {0, 0}, prev[2] = {-1, -1}, left[2] = {st[0].n, st[1].n};
        bool fd[2] = {st[0].done, st[1].done};
        for (int i = 0; i < m; ++i) {
            const Entry e = v[i];
            const int k = code[e.row];
            const int s = k >> 1;
            if (fd[s]) continue;
            const int ds = d[s];
            if (e.rank != prev[s]) {
                Bal& b = st[s];
                if ((uint32_t)(ds - b.lo) > b.w) {  // out of its window: an improvement
                    b.improve(ds, g, {prev[s], e.rank});
                    if (b.done) {
                        fd[s] = true;
                        if (fd[1 - s]) break;
                        continue;
                    }
                } else if (b.hopeless(ds, left[s])) {
                    fd[s] = true;  // the rows left cannot move the balance out of the window
                    if (fd[1 - s]) break;
                    continue;
                }
            }
            d[s] = ds + 1 - 2 * (k & 1);
            prev[s] = e.rank;
            --left[s];
        }
    }
    for (int s = 0; s < 2; ++s) st[s].store(sd[s]);
}


inline void Depth2::eval_u_skip(int C, const Entry* view, int m, int f, int p, Side* sd, const int* order,
                                const double* lbs) {
    switch (C) {
        case 3: eval_u<3>(view, m, f, p, sd, order, lbs); break;
        case 4: eval_u<4>(view, m, f, p, sd, order, lbs); break;
        default: eval_u<0>(view, m, f, p, sd, order, lbs); break;
    }
}

// unit weights, any number of classes: integer counts; a side's error is computed at its
// boundaries only (O(classes)), with the same "gap larger than the rows left" stop
template <int CC>
void Depth2::eval_u(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
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
void Depth2::eval_w(const Entry* view, int m, int f, int p, Side* sd, const int* order, const double* lbs) {
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


}  // namespace detail
}  // namespace tl::cont
