// Greedy top-down tree growth (ID3/C4.5/CART depth-first, and BuildTopDownDT best-first).
//
// Input: every feature pre-coded to small integers ("codes", 0..n_codes-1, ascending in the raw
// value; see _greedy_coding.h). A numeric feature's candidate conditions are `code >= k`
// (k = 1..n_codes-1, i.e. x >= threshold[k-1]); a categorical one's are `code == v` (one-vs-rest).
//
// The impurity is a template parameter (a policy of _include/tl_criteria.h: entropy, Gini,
// Kearns-Mansour, or a user G called back in batches). Two split finders share one growth loop:
// * SortedFinder (exact mode): per feature, the rows sorted by code; every node owns the same
//   position range [start, end) in every feature's array, kept by a stable partition when the
//   node is split (O(d * n_node) per node, no sorting after the first counting sort).
// * HistFinder (histogram mode, few codes): per node a histogram (feature x code x class) built
//   from the node's rows by the kernel of _include/tl_histogram.h, the larger child by
//   subtraction from the parent.
//
// Both score a candidate by the weighted child impurity W_L*G(L) + W_R*G(R) (lower is better) and
// replace the best only when strictly better by more than a tolerance, scanning features in
// index order and codes ascending: ties go to the lowest feature, then the lowest threshold.
//
// Missing values (scikit-learn >= 1.3's rule): a feature with missing values has one more code,
// miss_code[f], above every present value's. At a node where the feature has missing rows, every
// threshold is tried with the missing rows sent right, then (a second scan) sent left, then the
// "missing-only" split (present values left, missing right: code >= miss_code); a feature whose
// values are all missing at the node is skipped, as scikit-learn does. The same
// scan order as scikit-learn's, so ties resolve alike. A split whose node had no missing value in
// its feature sends missing values to the child with more training weight (right on a tie).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tl_criteria.h"
#include "tl_histogram.h"
#include "_greedy_coding.h"
#include "_greedy_prune.h"

namespace tlgreedy {

#if defined(__GNUC__)
#define TL_INLINE inline __attribute__((always_inline))
#else
#define TL_INLINE inline
#endif

static const double GAIN_TOL = 1e-12;  // gains closer than this (normalised units) are ties

struct Entry {
    int32_t row;
    int32_t code;
};

struct Params {
    int n_classes;
    int criterion;          // 0 entropy, 1 gini, 2 kearns-mansour, -1 user G (cost_cb)
    int64_t max_depth;      // < 0: unlimited
    int64_t max_leaves;     // < 0: depth-first (no leaf budget)
    int64_t min_samples_leaf;
    int64_t min_samples_split;  // a node with fewer rows is a leaf
    double min_impurity_decrease;  // scikit-learn's units (Crit::sklearn_scale x normalised gain)
    int hist;               // 1: histogram finder
    double hist_budget;     // bytes of histograms kept for waiting nodes (then rebuilt from rows)
    tlcrit::batch_fn cost_cb = nullptr;  // criterion -1: W * G of rows of class counts
    void* cost_ctx = nullptr;
};

struct Result {
    std::vector<int64_t> left, right, feature, split_code, split_low, n_samples;
    std::vector<uint8_t> missing_left;  // 1: a missing value goes left
    std::vector<double> value, impurity;
    int64_t n_nodes = 0;
    bool cost_failed = false;  // the user criterion failed: the growth stopped early
};

struct Split {
    int32_t feature = -1;
    int32_t code = 0;
    int32_t low = 0;   // numeric: the largest code present on the left side (code < `code`)
    uint8_t mleft = 0; // missing rows go left (when the node has some in this feature)
    double score = std::numeric_limits<double>::infinity();
};

struct Node {
    int64_t id;
    int64_t start, end;  // sorted finder: position range; hist finder: range in the row array
    int64_t depth;
    double W;            // weighted mass
    double wimp;         // W * impurity
    Split best;
    int64_t hist = -1;   // hist finder: slot of the node's histogram (-1: none)
};

// ----------------------------------------------------------------------------------------------
// Shared data and bookkeeping
struct Problem {
    int64_t n;
    int d;
    int C;
    const int32_t* codes;      // (d, n): codes[f * n + row]
    const int32_t* n_codes;    // (d,)
    const uint8_t* is_cat;     // (d,)
    const int32_t* cat_only;   // (d,): categorical feature with two values: the only candidate code, else -1
    const int32_t* miss_code;  // (d,): the code of the missing rows (the largest), -1: no missing value
    const int64_t* y;          // (n,)
    const double* w;           // (n,)
};

// The selection rule of a node's split search: a candidate replaces the best only when strictly
// better by more than tol, in scan order. A batched criterion's candidates are kept (sides'
// counts and the split) and replayed through the same rule once scored, in flushes of bounded
// size: the result is the one the rule gives over the whole scan.
template <class Crit>
struct Picker {
    const Crit& crit;
    Split& best;
    double tol;
    tlcrit::CandidateBatch* batch;
    std::vector<Split>* pending;
    static constexpr size_t FLUSH = 1 << 16;

    TL_INLINE void take(double sc, int32_t f, int32_t code, int32_t low, uint8_t ml) {
        if (sc < best.score - tol) { best.score = sc; best.feature = f; best.code = code; best.low = low; best.mleft = ml; }
    }
    TL_INLINE void keep(int32_t f, int32_t code, int32_t low, uint8_t ml) {
        Split s;
        s.feature = f; s.code = code; s.low = low; s.mleft = ml;
        pending->push_back(s);
        if (pending->size() >= FLUSH) flush();
    }
    // two classes, both sides' counts given
    TL_INLINE void two(double l0, double l1, double r0, double r1, double WL, double WR,
                       int32_t f, int32_t code, int32_t low, uint8_t ml = 0) {
        if constexpr (Crit::batched) {
            const double l[2] = {l0, l1}, r[2] = {r0, r1};
            batch->push(crit, l, r);
            keep(f, code, low, ml);
        } else {
            take(crit.score2(l0, l1, r0, r1, WL, WR), f, code, low, ml);
        }
    }
    // one side's counts L (sum WL), the other tot - L (sum WR)
    TL_INLINE void rest(const double* L, const double* tot, double WL, double WR, double* buf,
                        int32_t f, int32_t code, int32_t low, uint8_t ml = 0) {
        if constexpr (Crit::batched) {
            batch->push_rest(crit, L, tot);
            keep(f, code, low, ml);
        } else {
            take(crit.score(L, tot, WL, WR, buf), f, code, low, ml);
        }
    }
    void flush() {
        if constexpr (Crit::batched) {
            if (!pending->empty()) {
                if (batch->evaluate(crit)) {
                    for (size_t i = 0; i < pending->size(); ++i) {
                        const Split& s = (*pending)[i];
                        take(batch->score(i), s.feature, s.code, s.low, s.mleft);
                    }
                } else {
                    best = Split();  // the criterion failed: no split
                }
            }
            pending->clear();
            batch->clear();
        }
    }
    bool failed() const {
        if constexpr (Crit::batched) return crit.failed;
        return false;
    }
};

// ----------------------------------------------------------------------------------------------
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

// ----------------------------------------------------------------------------------------------
template <class Crit>
class HistFinder {
public:
    const Problem& P;
    const Crit& crit;
    int64_t msl;
    std::vector<int32_t> rows;     // node row ranges
    std::vector<int32_t> tmp;
    std::vector<uint8_t> right;
    std::vector<int64_t> offset;   // per feature: offset of its block in a histogram
    int64_t hsize;                 // doubles per histogram (classes x codes x features) + row counts
    int64_t csize;                 // count block size (codes summed over features)
    std::vector<std::vector<double>> pool;  // histograms by slot
    std::vector<std::vector<int64_t>> cpool; // row counts per (feature, code)
    std::vector<int64_t> free_slots;
    std::vector<uint16_t> bins;    // (n, d) row-major codes
    std::vector<double> buf, pre, aux;
    tlcrit::CandidateBatch batch;
    std::vector<Split> pending;

    double budget = 256.0 * 1024 * 1024;

    HistFinder(const Problem& p, const Crit& c, int64_t min_samples_leaf)
        : P(p), crit(c), msl(min_samples_leaf) {
        const int64_t n = P.n;
        rows.resize(n);
        for (int64_t i = 0; i < n; ++i) rows[i] = (int32_t)i;
        tmp.resize(n);
        right.assign(n, 0);
        offset.resize(P.d + 1);
        offset[0] = 0;
        for (int f = 0; f < P.d; ++f) offset[f + 1] = offset[f] + P.n_codes[f];
        csize = offset[P.d];
        hsize = csize * P.C;
        bins.resize((size_t)n * P.d);
        for (int f = 0; f < P.d; ++f) {
            const int32_t* cf = P.codes + (size_t)f * n;
            for (int64_t i = 0; i < n; ++i) bins[(size_t)i * P.d + f] = (uint16_t)cf[i];
        }
        buf.resize(P.C);
        pre.resize(P.C);
        aux.resize(P.C);
        batch.C = P.C;
    }

    int64_t alloc() {
        if (!free_slots.empty()) {
            int64_t s = free_slots.back();
            free_slots.pop_back();
            return s;
        }
        pool.emplace_back((size_t)hsize);
        cpool.emplace_back((size_t)csize);
        return (int64_t)pool.size() - 1;
    }
    void release(Node& nd) {
        if (nd.hist >= 0) { free_slots.push_back(nd.hist); nd.hist = -1; }
    }
    // best-first frontiers can be wide: past a memory budget, drop a waiting node's histogram
    // (its children are then built from rows instead of by subtraction)
    void trim(Node& nd) {
        const double bytes = (double)(pool.size() - free_slots.size()) * (double)(hsize + csize) * 8.0;
        if (bytes > budget) release(nd);
    }

    void build(Node& nd) {
        nd.hist = alloc();
        double* h = pool[nd.hist].data();
        int64_t* hc = cpool[nd.hist].data();
        std::fill(h, h + hsize, 0.0);
        std::fill(hc, hc + csize, 0);
        tlhist::count_rows<tlhist::Layout::RowMajor, true>(rows.data() + nd.start, nd.end - nd.start, bins.data(),
                                                           P.n, P.d, offset.data(), P.C, P.y, P.w, h, hc);
    }

    void init_root(Node& root) { root.start = 0; root.end = P.n; build(root); }

    // candidates `code >= k` over the present codes [0, kend) of feature f (block o of the
    // histogram h, hc); `add` (the missing rows' class counts, nadd rows, weight wadd) joins the
    // left side when given. Returns the number of non-empty present codes.
    int32_t scan_numeric(int f, const Node& nd, const double* h, const int64_t* hc, int64_t o, int32_t kend,
                         const double* tot, Picker<Crit>& pk, const double* add = nullptr, int64_t nadd = 0,
                         double wadd = 0.0) {
        const int C = P.C;
        const int64_t m = nd.end - nd.start;
        double* L = pre.data();
        std::fill(pre.begin(), pre.end(), 0.0);
        double wl = 0.0;
        int64_t nl = 0;
        int32_t present = 0;
        // find first non-empty code; a candidate k sits before each later non-empty code
        int32_t k = 0;
        while (k < kend && hc[o + k] == 0) ++k;
        int32_t last = k;
        for (; k < kend; ++k) {
            const int64_t cnt = hc[o + k];
            if (cnt == 0) continue;
            ++present;
            if (nl > 0) {
                const int64_t nlx = nl + nadd, nr = m - nlx;
                if (nr == 0) break;
                if (nlx >= msl && nr >= msl) {
                    if (add) {
                        for (int c = 0; c < C; ++c) aux[c] = L[c] + add[c];
                        const double aw = wl + wadd;
                        if (C == 2) pk.two(aux[0], aux[1], tot[0] - aux[0], tot[1] - aux[1], aw, nd.W - aw, f, k, last, 1);
                        else pk.rest(aux.data(), tot, aw, nd.W - aw, buf.data(), f, k, last, 1);
                    } else if (C == 2) {
                        pk.two(L[0], L[1], tot[0] - L[0], tot[1] - L[1], wl, nd.W - wl, f, k, last);
                    } else {
                        pk.rest(L, tot, wl, nd.W - wl, buf.data(), f, k, last);
                    }
                }
            }
            last = k;
            const double* g = h + (o + k) * C;
            for (int c = 0; c < C; ++c) { L[c] += g[c]; wl += g[c]; }
            nl += cnt;
        }
        return present;
    }

    // one-vs-rest candidates `code == k` over the present codes [0, kend); radd (the missing
    // rows' counts, nradd rows, weight wradd) joins the right side when given; ml: where they go
    void scan_categorical(int f, const Node& nd, const double* h, const int64_t* hc, int64_t o, int32_t kend,
                          const double* tot, Picker<Crit>& pk, const double* radd = nullptr, int64_t nradd = 0,
                          double wradd = 0.0, uint8_t ml = 0) {
        const int C = P.C;
        const int64_t m = nd.end - nd.start;
        const int32_t only = P.cat_only[f];
        for (int32_t k = 0; k < kend; ++k) {
            const int64_t ng = hc[o + k], nr = ng + nradd, nl = m - nr;
            if (ng == 0 || (only >= 0 && k != only) || nl < msl || nr < msl) continue;
            const double* g = h + (o + k) * C;
            double wr = 0.0;
            for (int c = 0; c < C; ++c) wr += g[c];
            if (radd) {
                for (int c = 0; c < C; ++c) aux[c] = g[c] + radd[c];
                pk.rest(aux.data(), tot, wr + wradd, nd.W - wr - wradd, buf.data(), f, k, 0, ml);
            } else {
                pk.rest(g, tot, wr, nd.W - wr, buf.data(), f, k, 0, ml);
            }
        }
    }

    void find(Node& nd, const double* tot) {
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * nd.W, &batch, &pending};
        const int C = P.C;
        const double* h = pool[nd.hist].data();
        const int64_t* hc = cpool[nd.hist].data();
        const int64_t m = nd.end - nd.start;
        for (int f = 0; f < P.d && !pk.failed(); ++f) {
            const int64_t o = offset[f];
            const int32_t nc = P.n_codes[f];
            const int32_t M = P.miss_code[f];
            if (M < 0) {
                if (P.is_cat[f]) scan_categorical(f, nd, h, hc, o, nc, tot, pk);
                else scan_numeric(f, nd, h, hc, o, nc, tot, pk);
                continue;
            }
            // scikit-learn's order: missing rows right, then left, then alone (present left);
            // a feature whose values are all missing at the node is skipped, one with a single
            // present value has only the missing-only split
            const int64_t nmiss = hc[o + M];
            const double* gm = h + (o + M) * C;
            double wm = 0.0;
            for (int c = 0; c < C; ++c) wm += gm[c];
            int32_t present = 0;
            for (int32_t k = 0; k < M && present < 2; ++k) present += hc[o + k] > 0;
            if (present == 0) continue;
            if (present == 2) {
                if (P.is_cat[f]) {
                    scan_categorical(f, nd, h, hc, o, M, tot, pk, nmiss ? gm : nullptr, nmiss, wm, 0);
                    if (nmiss) scan_categorical(f, nd, h, hc, o, M, tot, pk, nullptr, 0, 0.0, 1);
                } else {
                    scan_numeric(f, nd, h, hc, o, M, tot, pk);
                    if (nmiss) scan_numeric(f, nd, h, hc, o, M, tot, pk, gm, nmiss, wm);
                }
            }
            if (nmiss && m - nmiss >= msl && nmiss >= msl) {  // the missing-only split
                for (int c = 0; c < C; ++c) aux[c] = tot[c] - gm[c];
                pk.rest(aux.data(), tot, nd.W - wm, wm, buf.data(), f, M, 0, 0);
            }
        }
        pk.flush();
        nd.best = best;
    }

    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t M = P.miss_code[f];  // -1 (no missing value) equals no code
        const bool mright = !nd.best.mleft;
        const int32_t* cf = P.codes + (size_t)f * P.n;
        nl = nr = nm = 0;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            const int32_t x = cf[r];
            const bool miss = x == M;
            nm += miss;
            const bool rr = miss ? mright : (cat ? (x == k) : (x >= k));
            right[r] = rr;
            if (rr) { cr[P.y[r]] += P.w[r]; ++nr; }
            else { cl[P.y[r]] += P.w[r]; ++nl; }
        }
    }

    // stable partition of the row range; histograms: smaller child built, larger by subtraction
    void partition(Node& nd, int64_t nl, Node& L, Node& R, bool needL, bool needR) {
        int64_t li = nd.start, ri = 0;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            const uint8_t g = right[r];
            rows[li] = r;
            tmp[ri] = r;
            li += 1 - g;
            ri += g;
        }
        std::memcpy(rows.data() + li, tmp.data(), (size_t)ri * sizeof(int32_t));
        L.start = nd.start; L.end = nd.start + nl;
        R.start = nd.start + nl; R.end = nd.end;
        if (!needL && !needR) return;
        Node* small = (L.end - L.start <= R.end - R.start) ? &L : &R;
        Node* large = small == &L ? &R : &L;
        const bool need_large = small == &L ? needR : needL;
        const bool need_small = small == &L ? needL : needR;
        if (nd.hist >= 0 && need_large) {
            build(*small);
            large->hist = alloc();
            double* a = pool[large->hist].data();
            const double* pp = pool[nd.hist].data();
            const double* s = pool[small->hist].data();
            for (int64_t i = 0; i < hsize; ++i) a[i] = pp[i] - s[i];
            int64_t* ac = cpool[large->hist].data();
            const int64_t* pc = cpool[nd.hist].data();
            const int64_t* sc = cpool[small->hist].data();
            for (int64_t i = 0; i < csize; ++i) ac[i] = pc[i] - sc[i];
            if (!need_small) release(*small);
        } else {
            if (need_small) build(*small);
            if (need_large) build(*large);
        }
    }
};

// ----------------------------------------------------------------------------------------------
template <template <class> class FinderT, class Crit>
class GrowerT {
public:
    const Problem& P;
    const Params& prm;
    const Crit& crit;
    FinderT<Crit> finder;
    Result& res;
    double Wtot = 0.0;

    GrowerT(const Problem& p, const Params& pr, const Crit& c, Result& r)
        : P(p), prm(pr), crit(c), finder(p, c, pr.min_samples_leaf), res(r) {}

    int64_t add_node(const double* counts, int64_t n_samples, double W, double wimp) {
        const int64_t id = res.n_nodes++;
        res.left.push_back(-1);
        res.right.push_back(-1);
        res.feature.push_back(-2);
        res.split_code.push_back(0);
        res.split_low.push_back(0);
        res.missing_left.push_back(0);
        res.n_samples.push_back(n_samples);
        for (int c = 0; c < P.C; ++c) res.value.push_back(counts[c]);
        // scikit-learn's units (entropy in bits, Gini 1 - sum p^2)
        res.impurity.push_back(W > 0.0 ? Crit::sklearn_scale * std::max(0.0, wimp / W) : 0.0);
        return id;
    }

    bool terminal(const double* counts, int64_t n_samples, int64_t depth) const {
        if (prm.max_depth >= 0 && depth >= prm.max_depth) return true;
        if (n_samples < 2 || n_samples < 2 * prm.min_samples_leaf || n_samples < prm.min_samples_split) return true;
        int pos = 0;
        for (int c = 0; c < P.C; ++c) pos += counts[c] > 0.0;
        return pos <= 1;
    }

    // global purity gain of a node's best split (000 Fig. 1): (W*G(node) - best score) / W_total
    double global_gain(const Node& nd) const { return (nd.wimp - nd.best.score) / Wtot; }

    bool splittable(const Node& nd) const {
        if (nd.best.feature < 0) return false;
        if (prm.min_impurity_decrease > 0.0
            && Crit::sklearn_scale * (global_gain(nd) + GAIN_TOL) < prm.min_impurity_decrease) return false;
        return true;
    }

    // split nd; fills the children (with their best splits when they may be split later)
    void split(Node& nd, Node& L, Node& R, bool& openL, bool& openR) {
        const int C = P.C;
        std::vector<double> cl(C, 0.0), cr(C, 0.0);
        int64_t nl, nr, nm;
        finder.mark(nd, cl.data(), cr.data(), nl, nr, nm);
        double WL = 0.0, WR = 0.0;
        for (int c = 0; c < C; ++c) { WL += cl[c]; WR += cr[c]; }
        // no missing value of the feature at this node: missing values go to the heavier child
        res.missing_left[nd.id] = nm > 0 ? nd.best.mleft : (uint8_t)(WL > WR);
        L.wimp = crit.wimp(cl.data(), WL);
        R.wimp = crit.wimp(cr.data(), WR);
        L.id = add_node(cl.data(), nl, WL, L.wimp);
        R.id = add_node(cr.data(), nr, WR, R.wimp);
        res.left[nd.id] = L.id;
        res.right[nd.id] = R.id;
        res.feature[nd.id] = nd.best.feature;
        res.split_code[nd.id] = nd.best.code;
        res.split_low[nd.id] = nd.best.low;
        L.depth = R.depth = nd.depth + 1;
        L.W = WL; R.W = WR;
        L.hist = R.hist = -1;
        openL = !terminal(cl.data(), nl, L.depth);
        openR = !terminal(cr.data(), nr, R.depth);
        if (openL || openR) finder.partition(nd, nl, L, R, openL, openR);
        finder.release(nd);
        if (openL) { finder.find(L, cl.data()); if (!splittable(L)) { openL = false; finder.release(L); } }
        if (openR) { finder.find(R, cr.data()); if (!splittable(R)) { openR = false; finder.release(R); } }
    }

    void grow() {
        const int C = P.C;
        std::vector<double> tot(C, 0.0);
        for (int64_t i = 0; i < P.n; ++i) tot[P.y[i]] += P.w[i];
        for (int c = 0; c < C; ++c) Wtot += tot[c];
        Node root;
        root.depth = 0;
        root.W = Wtot;
        root.wimp = crit.wimp(tot.data(), Wtot);
        root.id = add_node(tot.data(), P.n, Wtot, root.wimp);
        if (terminal(tot.data(), P.n, 0)) return;
        finder.init_root(root);
        finder.find(root, tot.data());
        if (!splittable(root)) { finder.release(root); return; }
        if (prm.max_leaves < 0) {
            std::vector<Node> stack{root};
            while (!stack.empty()) {
                Node nd = stack.back();
                stack.pop_back();
                Node L, R;
                bool oL, oR;
                split(nd, L, R, oL, oR);
                if (oR) { finder.trim(R); stack.push_back(R); }
                if (oL) stack.push_back(L);
            }
        } else {
            // frontier ordered by (global gain descending, node id ascending); the leaf split is the
            // one created first among those within GAIN_TOL of the largest gain
            std::vector<Node> slots{root};
            std::set<std::tuple<double, int64_t, size_t>> frontier{{-global_gain(root), root.id, 0}};
            int64_t leaves = 1;
            while (leaves < prm.max_leaves && !frontier.empty()) {
                auto pick = frontier.begin();
                const double top = -std::get<0>(*pick);
                for (auto it = std::next(pick); it != frontier.end() && -std::get<0>(*it) >= top - GAIN_TOL; ++it)
                    if (std::get<1>(*it) < std::get<1>(*pick)) pick = it;
                const size_t si = std::get<2>(*pick);
                frontier.erase(pick);
                Node nd = slots[si];
                Node L, R;
                bool oL, oR;
                split(nd, L, R, oL, oR);
                ++leaves;
                // the split node's slot is reused for its left child
                if (oL) { finder.trim(L); slots[si] = L; frontier.insert({-global_gain(L), L.id, si}); }
                if (oR) { finder.trim(R); slots.push_back(R); frontier.insert({-global_gain(R), R.id, slots.size() - 1}); }
            }
            for (auto& e : frontier) finder.release(slots[std::get<2>(e)]);
        }
    }
};

template <class Crit>
inline void grow_with(const Problem& P, const Params& prm, Crit& crit, Result& res) {
    crit.setup(P.w, P.n, P.C);
    if (prm.hist) {
        GrowerT<HistFinder, Crit> g(P, prm, crit, res);
        if (prm.hist_budget >= 0.0) g.finder.budget = prm.hist_budget;
        g.grow();
    } else {
        GrowerT<SortedFinder, Crit> g(P, prm, crit, res);
        g.grow();
    }
}

inline void grow(const Problem& P, const Params& prm, Result& res) {
    if (prm.criterion < 0) {
        tlcrit::Callback crit;
        crit.fn = prm.cost_cb;
        crit.ctx = prm.cost_ctx;
        grow_with(P, prm, crit, res);
        res.cost_failed = crit.failed;
        return;
    }
    tlcrit::with_builtin(prm.criterion, [&](auto crit) { grow_with(P, prm, crit, res); });
}

}  // namespace tlgreedy
