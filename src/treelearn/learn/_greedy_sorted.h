// Greedy growth, exact mode: SortedFinder. Per feature, the rows sorted by code (one counting
// sort); every node owns the same position range [start, end) in every feature's array, kept by
// a stable partition when the node is split (O(d * n_node) per node). See _greedy_core.h for the
// scoring, tie and missing-value rules it shares with HistFinder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tl_criteria.h"
#include "tl_histogram.h"
#include "_greedy_types.h"

namespace tlgreedy {

template <class Crit>
class SortedFinder {
public:
    const Problem& P;
    const Crit& crit;
    int64_t msl;
    std::vector<Entry> E;    // d * n
    std::vector<Entry> tmp;  // n
    std::vector<uint8_t> right;
    std::vector<double> buf, buf2, pre, gpre, mis, aux;
    std::vector<uint32_t> ycls;  // class codes, compact, for the scans
    bool unit = true;            // every weight is 1: counts are row counts
    tlcrit::CandidateBatch batch;
    std::vector<Split> pending;

    SortedFinder(const Problem& p, const Crit& c, int64_t min_samples_leaf)
        : P(p), crit(c), msl(min_samples_leaf) {
        const int64_t n = P.n;
        ycls.resize(n);
        for (int64_t i = 0; i < n; ++i) { ycls[i] = (uint32_t)P.y[i]; unit = unit && P.w[i] == 1.0; }
        E.resize((size_t)P.d * n);
        tmp.resize(n);
        right.assign(n, 0);
        buf.resize(P.C);
        buf2.resize(P.C);
        pre.resize(P.C);
        gpre.resize(P.C);
        mis.resize(P.C);
        aux.resize(P.C);
        batch.C = P.C;
        std::vector<int64_t> cnt;
        const int64_t off0 = 0;
        for (int f = 0; f < P.d; ++f) {  // counting sort of rows by code (stable in row order)
            const int32_t* cf = P.codes + (size_t)f * n;
            cnt.assign((size_t)P.n_codes[f], 0);
            tlhist::count_rows<tlhist::Layout::ColMajor, false>(nullptr, n, cf, n, 1, &off0, P.C, P.y, P.w,
                                                                 nullptr, cnt.data());
            int64_t pos = 0;  // counts -> first position of each code
            for (int32_t k = 0; k < P.n_codes[f]; ++k) { const int64_t t = cnt[k]; cnt[k] = pos; pos += t; }
            Entry* ef = &E[(size_t)f * n];
            for (int64_t i = 0; i < n; ++i) {
                int32_t c = cf[i];
                ef[cnt[c]++] = Entry{(int32_t)i, c};
            }
        }
    }

    void init_root(Node& root) { root.start = 0; root.end = P.n; }

    template <bool BIN, bool UNIT>
    void scan_numeric(int f, const Node& nd, const double* tot, Picker<Crit>& pk) {
        const Entry* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = nd.end, m = t - s;
        if (e[s].code == e[t - 1].code) return;  // constant in this node
        // unit weights: integer counters (no floating-point add latency chain); the counts are the
        // same exact integers as the weighted sums
        double l0 = 0.0, l1 = 0.0, wl = 0.0;
        int64_t c1 = 0;
        double* L = pre.data();
        if (!BIN) std::fill(pre.begin(), pre.end(), 0.0);
        int32_t prev = e[s].code;
        const uint32_t* y = ycls.data();
        const double* w = P.w;
        for (int64_t p = s; p < t; ++p) {
            const Entry x = e[p];
            if (x.code != prev) {
                const int64_t nl = p - s, nr = m - nl;
                if (nl >= msl && nr >= msl) {
                    if (BIN) {
                        if (UNIT) { wl = (double)nl; l1 = (double)c1; l0 = (double)(nl - c1); }
                        pk.two(l0, l1, tot[0] - l0, tot[1] - l1, wl, nd.W - wl, f, x.code, prev);
                    } else {
                        pk.rest(L, tot, wl, nd.W - wl, buf.data(), f, x.code, prev);
                    }
                }
                prev = x.code;
            }
            if (BIN && UNIT) {
                c1 += y[x.row];
            } else {
                const double wi = UNIT ? 1.0 : w[x.row];
                if (BIN) { if (y[x.row]) l1 += wi; else l0 += wi; }
                else L[y[x.row]] += wi;
                wl += wi;
            }
        }
    }

    // scan_numeric for a feature with missing values: candidates `code >= k` between the present
    // rows [s, te) of the node; ADD: the missing rows (class counts add, nadd rows, weight wadd)
    // join the left side, else the right side (a separate copy: the scan of features without
    // missing values stays as it was)
    template <bool BIN, bool UNIT, bool ADD>
    void scan_numeric_m(int f, const Node& nd, const double* tot, Picker<Crit>& pk, int64_t te,
                        const double* add, int64_t nadd, double wadd) {
        const Entry* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = te, m = nd.end - s;
        if (e[s].code == e[t - 1].code) return;  // constant in this node
        // unit weights: integer counters (no floating-point add latency chain); the counts are the
        // same exact integers as the weighted sums
        double l0 = 0.0, l1 = 0.0, wl = 0.0;
        int64_t c1 = 0;
        double* L = pre.data();
        if (!BIN) std::fill(pre.begin(), pre.end(), 0.0);
        int32_t prev = e[s].code;
        const uint32_t* y = ycls.data();
        const double* w = P.w;
        for (int64_t p = s; p < t; ++p) {
            const Entry x = e[p];
            if (x.code != prev) {
                const int64_t nl = p - s + (ADD ? nadd : 0), nr = m - nl;
                if (nl >= msl && nr >= msl) {
                    if (BIN) {
                        if (UNIT) { wl = (double)(p - s); l1 = (double)c1; l0 = (double)(p - s - c1); }
                        if (ADD) {
                            const double a0 = l0 + add[0], a1 = l1 + add[1], aw = wl + wadd;
                            pk.two(a0, a1, tot[0] - a0, tot[1] - a1, aw, nd.W - aw, f, x.code, prev, 1);
                        } else {
                            pk.two(l0, l1, tot[0] - l0, tot[1] - l1, wl, nd.W - wl, f, x.code, prev);
                        }
                    } else if (ADD) {
                        for (int c = 0; c < P.C; ++c) aux[c] = L[c] + add[c];
                        pk.rest(aux.data(), tot, wl + wadd, nd.W - wl - wadd, buf.data(), f, x.code, prev, 1);
                    } else {
                        pk.rest(L, tot, wl, nd.W - wl, buf.data(), f, x.code, prev);
                    }
                }
                prev = x.code;
            }
            if (BIN && UNIT) {
                c1 += y[x.row];
            } else {
                const double wi = UNIT ? 1.0 : w[x.row];
                if (BIN) { if (y[x.row]) l1 += wi; else l0 += wi; }
                else L[y[x.row]] += wi;
                wl += wi;
            }
        }
    }

    template <bool ADD>
    void scan_numeric_any(int f, const Node& nd, const double* tot, Picker<Crit>& pk, int64_t te,
                          const double* add = nullptr, int64_t nadd = 0, double wadd = 0.0) {
        if (P.C == 2) {
            if (unit) scan_numeric_m<true, true, ADD>(f, nd, tot, pk, te, add, nadd, wadd);
            else scan_numeric_m<true, false, ADD>(f, nd, tot, pk, te, add, nadd, wadd);
        } else if (unit) scan_numeric_m<false, true, ADD>(f, nd, tot, pk, te, add, nadd, wadd);
        else scan_numeric_m<false, false, ADD>(f, nd, tot, pk, te, add, nadd, wadd);
    }

    // the node's rows of feature f with a missing value sit at the end of its range (the largest
    // code): te = the end of the present rows; their class counts into mis (weight wm)
    int64_t missing_tail(int f, const Node& nd, int64_t& te, double& wm) {
        const Entry* e = &E[(size_t)f * P.n];
        const int32_t M = P.miss_code[f];
        te = nd.end;
        while (te > nd.start && e[te - 1].code == M) --te;
        std::fill(mis.begin(), mis.end(), 0.0);
        wm = 0.0;
        for (int64_t p = te; p < nd.end; ++p) { mis[P.y[e[p].row]] += P.w[e[p].row]; wm += P.w[e[p].row]; }
        return nd.end - te;
    }

    // the missing-only split: present rows left, missing rows right (code >= miss_code)
    void missing_only(int f, const Node& nd, const double* tot, Picker<Crit>& pk, int64_t te, int64_t nmiss,
                      double wm, int32_t low) {
        const int64_t nl = te - nd.start;
        if (nl < msl || nmiss < msl) return;
        for (int c = 0; c < P.C; ++c) aux[c] = tot[c] - mis[c];
        pk.rest(aux.data(), tot, nd.W - wm, wm, buf.data(), f, P.miss_code[f], low, 0);
    }

    // a numeric feature with missing values (scikit-learn's order: missing right, left, alone)
    void scan_numeric_missing(int f, const Node& nd, const double* tot, Picker<Crit>& pk) {
        const Entry* e = &E[(size_t)f * P.n];
        int64_t te;
        double wm;
        const int64_t nmiss = missing_tail(f, nd, te, wm);
        if (te == nd.start) return;  // every value missing
        // (one present value: no threshold, only the missing-only split)
        scan_numeric_any<false>(f, nd, tot, pk, te);
        if (nmiss == 0) return;
        scan_numeric_any<true>(f, nd, tot, pk, te, mis.data(), nmiss, wm);
        missing_only(f, nd, tot, pk, te, nmiss, wm, e[te - 1].code);
    }

    // one-vs-rest candidates `code == v` over the present rows [s, te); radd (the missing rows'
    // class counts, nradd rows, weight wradd) joins the right side when given; ml: where they go
    void scan_categorical(int f, const Node& nd, const double* tot, Picker<Crit>& pk, int64_t te = -1,
                          const double* radd = nullptr, int64_t nradd = 0, double wradd = 0.0, uint8_t ml = 0) {
        const Entry* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = te < 0 ? nd.end : te, m = nd.end - s;
        if (e[s].code == e[t - 1].code) return;
        const int C = P.C;
        std::fill(pre.begin(), pre.end(), 0.0);
        std::fill(gpre.begin(), gpre.end(), 0.0);
        double* grp = buf2.data();
        double wl = 0.0, gw = 0.0;
        int64_t gs = s;
        int32_t gcode = e[s].code;
        const int32_t only = P.cat_only[f];
        for (int64_t p = s; p <= t; ++p) {
            if (p == t || e[p].code != gcode) {
                const int64_t nr = p - gs + nradd, nl = m - nr;
                if ((only < 0 || gcode == only) && nl >= msl && nr >= msl) {
                    // right: x == gcode (the group); left: the rest
                    for (int c = 0; c < C; ++c) grp[c] = pre[c] - gpre[c];
                    double wr = wl - gw;
                    if (radd) {
                        for (int c = 0; c < C; ++c) grp[c] += radd[c];
                        wr += wradd;
                    }
                    pk.rest(grp, tot, wr, nd.W - wr, buf.data(), f, gcode, 0, ml);
                }
                if (p == t) break;
                gs = p;
                gcode = e[p].code;
                std::copy(pre.begin(), pre.end(), gpre.begin());
                gw = wl;
            }
            const Entry x = e[p];
            pre[P.y[x.row]] += P.w[x.row];
            wl += P.w[x.row];
        }
    }

    void scan_categorical_missing(int f, const Node& nd, const double* tot, Picker<Crit>& pk) {
        const Entry* e = &E[(size_t)f * P.n];
        int64_t te;
        double wm;
        const int64_t nmiss = missing_tail(f, nd, te, wm);
        if (te == nd.start) return;  // every value missing
        if (nmiss == 0) { scan_categorical(f, nd, tot, pk, te); return; }
        scan_categorical(f, nd, tot, pk, te, mis.data(), nmiss, wm, 0);
        scan_categorical(f, nd, tot, pk, te, nullptr, 0, 0.0, 1);
        missing_only(f, nd, tot, pk, te, nmiss, wm, 0);
    }

    void find(Node& nd, const double* tot) {
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * nd.W, &batch, &pending};
        for (int f = 0; f < P.d && !pk.failed(); ++f) {
            if (P.miss_code[f] >= 0) {
                if (P.is_cat[f]) scan_categorical_missing(f, nd, tot, pk);
                else scan_numeric_missing(f, nd, tot, pk);
            } else if (P.is_cat[f]) scan_categorical(f, nd, tot, pk);
            else if (P.C == 2) {
                if (unit) scan_numeric<true, true>(f, nd, tot, pk);
                else scan_numeric<true, false>(f, nd, tot, pk);
            } else if (unit) scan_numeric<false, true>(f, nd, tot, pk);
            else scan_numeric<false, false>(f, nd, tot, pk);
        }
        pk.flush();
        nd.best = best;
    }

    // mark rows going right; children class counts and sizes; nm: the node's rows missing the feature
    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t M = P.miss_code[f];  // -1 (no missing value) equals no code
        const bool mright = !nd.best.mleft;
        const Entry* e = &E[(size_t)f * P.n];
        nl = nr = nm = 0;
        if (M < 0) {  // no missing value in this feature
            for (int64_t p = nd.start; p < nd.end; ++p) {
                const Entry x = e[p];
                const bool r = cat ? (x.code == k) : (x.code >= k);
                right[x.row] = r;
                if (r) { cr[P.y[x.row]] += P.w[x.row]; ++nr; }
                else { cl[P.y[x.row]] += P.w[x.row]; ++nl; }
            }
            return;
        }
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const Entry x = e[p];
            const bool miss = x.code == M;
            nm += miss;
            const bool r = miss ? mright : (cat ? (x.code == k) : (x.code >= k));
            right[x.row] = r;
            if (r) { cr[P.y[x.row]] += P.w[x.row]; ++nr; }
            else { cl[P.y[x.row]] += P.w[x.row]; ++nl; }
        }
    }

    // stable partition of every feature's range; children get [start, start+nl), [start+nl, end)
    void partition(Node& nd, int64_t nl, Node& L, Node& R, bool, bool) {
        L.start = nd.start; L.end = nd.start + nl;
        R.start = nd.start + nl; R.end = nd.end;
        const uint8_t* rt = right.data();
        for (int f = 0; f < P.d; ++f) {
            Entry* e = &E[(size_t)f * P.n];
            if (e[nd.start].code == e[nd.end - 1].code) continue;  // constant: any order is sorted
            int64_t li = nd.start, ri = 0;
            Entry* tp = tmp.data();
            for (int64_t p = nd.start; p < nd.end; ++p) {
                const Entry x = e[p];
                const uint8_t r = rt[x.row];
                e[li] = x;
                tp[ri] = x;
                li += 1 - r;
                ri += r;
            }
            std::memcpy(e + li, tp, (size_t)ri * sizeof(Entry));
        }
    }
    void release(Node&) {}
    void trim(Node&) {}
};

}  // namespace tlgreedy
