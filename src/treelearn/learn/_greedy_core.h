// Greedy top-down tree growth (ID3/C4.5/CART depth-first, and BuildTopDownDT best-first).
//
// Input: every feature pre-coded to small integers ("codes", 0..n_codes-1, ascending in the raw
// value). A numeric feature's candidate conditions are `code >= k` (k = 1..n_codes-1, i.e.
// x >= threshold[k-1]); a categorical one's are `code == v` (one-vs-rest).
//
// Two split finders share one growth loop:
// * SortedFinder (exact mode): per feature, the rows sorted by code; every node owns the same
//   position range [start, end) in every feature's array, kept by a stable partition when the
//   node is split (O(d * n_node) per node, no sorting after the first counting sort).
// * HistFinder (histogram mode, few codes): per node a histogram (feature x code x class) built
//   from the node's rows, the larger child by subtraction from the parent.
//
// Both score a candidate by the weighted child impurity W_L*G(L) + W_R*G(R) (lower is better) and
// replace the best only when strictly better by more than a tolerance, scanning features in
// index order and codes ascending: ties go to the lowest feature, then the lowest threshold.
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
    int criterion;          // 0 entropy, 1 gini, 2 kearns-mansour
    int64_t max_depth;      // < 0: unlimited
    int64_t max_leaves;     // < 0: depth-first (no leaf budget)
    int64_t min_samples_leaf;
    double min_impurity_decrease;
    int hist;               // 1: histogram finder
    double hist_budget;     // bytes of histograms kept for waiting nodes (then rebuilt from rows)
};

struct Result {
    std::vector<int64_t> left, right, feature, split_code, split_low, n_samples;
    std::vector<double> value, impurity;
    int64_t n_nodes = 0;
};

static inline double xlog2x(double x) { return x > 0.0 ? x * std::log2(x) : 0.0; }

// W * impurity(counts), counts summing to W (multiclass forms of criteria.py)
struct Crit {
    int kind;
    int C;
    const double* tab = nullptr;  // xlog2x of integers (entropy, integer counts), or null
    int64_t tab_size = 0;
    // Counts below zeps (half the smallest row weight) are exact zeros that came out of a
    // subtraction (tot - prefix, parent - sibling) as rounding residues; Kearns-Mansour's sqrt
    // would turn a 1e-17 residue into a 1e-9 gain difference, so they are snapped to 0.
    double zeps = 0.0;

    bool int_counts = false;  // every count is an integer in [0, tab_size): xl is a table read

    TL_INLINE double z(double x) const { return x < zeps ? 0.0 : x; }

    TL_INLINE double xl(double x) const {
        if (int_counts) return tab[(int64_t)x];
        if (tab) {
            int64_t i = (int64_t)x;
            if ((double)i == x && i >= 0 && i < tab_size) return tab[i];
        }
        return xlog2x(x);
    }
    TL_INLINE double wimp(const double* c, double W) const {
        if (W <= 0.0) return 0.0;
        if (kind == 0) {
            double s = xl(W);
            for (int i = 0; i < C; ++i) s -= xl(z(c[i]));
            return s;
        } else if (kind == 1) {
            double q = 0.0;
            for (int i = 0; i < C; ++i) { const double ci = z(c[i]); q += ci * ci; }
            return 2.0 * (W - q / W);
        } else {
            double s = 0.0;
            for (int i = 0; i < C; ++i) {
                const double t = z(c[i]) * z(W - c[i]);
                s += t > 0.0 ? std::sqrt(t) : 0.0;
            }
            return s;
        }
    }
    // both sides at once: left counts l (sum WL), right = tot - l (sum WR)
    TL_INLINE double score(const double* l, const double* tot, double WL, double WR, double* buf) const {
        for (int i = 0; i < C; ++i) buf[i] = tot[i] - l[i];
        return wimp(l, WL) + wimp(buf, WR);
    }
    TL_INLINE double score2(double l0, double l1, double r0, double r1, double WL, double WR) const {
        l0 = z(l0); l1 = z(l1); r0 = z(r0); r1 = z(r1);
        if (kind == 0) {
            double s = 0.0;
            if (WL > 0.0) s += xl(WL) - xl(l0) - xl(l1);
            if (WR > 0.0) s += xl(WR) - xl(r0) - xl(r1);
            return s;
        } else if (kind == 1) {
            double s = 0.0;
            if (WL > 0.0) s += 2.0 * (WL - (l0 * l0 + l1 * l1) / WL);
            if (WR > 0.0) s += 2.0 * (WR - (r0 * r0 + r1 * r1) / WR);
            return s;
        } else {
            double a = l0 * l1, b = r0 * r1;  // sqrt(c(W-c)) is the same for both classes
            return 2.0 * ((a > 0.0 ? std::sqrt(a) : 0.0) + (b > 0.0 ? std::sqrt(b) : 0.0));
        }
    }
};

struct Split {
    int32_t feature = -1;
    int32_t code = 0;
    int32_t low = 0;   // numeric: the largest code present on the left side (code < `code`)
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
    const int64_t* y;          // (n,)
    const double* w;           // (n,)
};

class Grower;

// ----------------------------------------------------------------------------------------------
class SortedFinder {
public:
    const Problem& P;
    const Crit& crit;
    int64_t msl;
    std::vector<Entry> E;    // d * n
    std::vector<Entry> tmp;  // n
    std::vector<uint8_t> right;
    std::vector<double> buf, buf2, pre, gpre;
    std::vector<uint32_t> ycls;  // class codes, compact, for the scans
    bool unit = true;            // every weight is 1: counts are row counts

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
        std::vector<int64_t> cnt;
        for (int f = 0; f < P.d; ++f) {  // counting sort of rows by code (stable in row order)
            const int32_t* cf = P.codes + (size_t)f * n;
            cnt.assign((size_t)P.n_codes[f] + 1, 0);
            for (int64_t i = 0; i < n; ++i) cnt[cf[i] + 1]++;
            for (int32_t k = 0; k < P.n_codes[f]; ++k) cnt[k + 1] += cnt[k];
            Entry* ef = &E[(size_t)f * n];
            for (int64_t i = 0; i < n; ++i) {
                int32_t c = cf[i];
                ef[cnt[c]++] = Entry{(int32_t)i, c};
            }
        }
    }

    void init_root(Node& root) { root.start = 0; root.end = P.n; }

    template <bool BIN, bool UNIT>
    void scan_numeric(int f, const Node& nd, const double* tot, Split& best) {
        const Entry* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = nd.end, m = t - s;
        if (e[s].code == e[t - 1].code) return;  // constant in this node
        const double tol = GAIN_TOL * nd.W;
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
                    double sc;
                    if (BIN) {
                        if (UNIT) { wl = (double)nl; l1 = (double)c1; l0 = (double)(nl - c1); }
                        sc = crit.score2(l0, l1, tot[0] - l0, tot[1] - l1, wl, nd.W - wl);
                    } else {
                        sc = crit.score(L, tot, wl, nd.W - wl, buf.data());
                    }
                    if (sc < best.score - tol) { best.score = sc; best.feature = f; best.code = x.code; best.low = prev; }
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

    void scan_categorical(int f, const Node& nd, const double* tot, Split& best) {
        const Entry* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = nd.end, m = t - s;
        if (e[s].code == e[t - 1].code) return;
        const double tol = GAIN_TOL * nd.W;
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
                const int64_t nr = p - gs, nl = m - nr;
                if ((only < 0 || gcode == only) && nl >= msl && nr >= msl) {
                    // right: x == gcode (the group); left: the rest
                    for (int c = 0; c < C; ++c) grp[c] = pre[c] - gpre[c];
                    const double wr = wl - gw;
                    double sc = crit.score(grp, tot, wr, nd.W - wr, buf.data());
                    if (sc < best.score - tol) { best.score = sc; best.feature = f; best.code = gcode; }
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

    void find(Node& nd, const double* tot) {
        Split best;
        for (int f = 0; f < P.d; ++f) {
            if (P.is_cat[f]) scan_categorical(f, nd, tot, best);
            else if (P.C == 2) {
                if (unit) scan_numeric<true, true>(f, nd, tot, best);
                else scan_numeric<true, false>(f, nd, tot, best);
            } else if (unit) scan_numeric<false, true>(f, nd, tot, best);
            else scan_numeric<false, false>(f, nd, tot, best);
        }
        nd.best = best;
    }

    // mark rows going right; children class counts and sizes
    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const Entry* e = &E[(size_t)f * P.n];
        nl = nr = 0;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const Entry x = e[p];
            const bool r = cat ? (x.code == k) : (x.code >= k);
            right[x.row] = r;
            if (r) { cr[P.y[x.row]] += P.w[x.row]; ++nr; }
            else { cl[P.y[x.row]] += P.w[x.row]; ++nl; }
        }
    }

    // stable partition of every feature's range; children get [start, start+nl), [start+nl, end)
    void partition(const Node& nd, int64_t nl, Node& L, Node& R) {
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
    std::vector<double> buf, pre;

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
        const int d = P.d, C = P.C;
        const int64_t* off = offset.data();
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            const uint16_t* b = &bins[(size_t)r * d];
            const int64_t yc = P.y[r];
            const double wi = P.w[r];
            for (int f = 0; f < d; ++f) {
                const int64_t cell = off[f] + b[f];
                h[cell * C + yc] += wi;
                hc[cell] += 1;
            }
        }
    }

    void init_root(Node& root) { root.start = 0; root.end = P.n; build(root); }

    void find(Node& nd, const double* tot) {
        Split best;
        const int C = P.C;
        const double* h = pool[nd.hist].data();
        const int64_t* hc = cpool[nd.hist].data();
        const double tol = GAIN_TOL * nd.W;
        const int64_t m = nd.end - nd.start;
        for (int f = 0; f < P.d; ++f) {
            const int64_t o = offset[f];
            const int32_t nc = P.n_codes[f];
            if (P.is_cat[f]) {
                const int32_t only = P.cat_only[f];
                for (int32_t k = 0; k < nc; ++k) {
                    const int64_t nr = hc[o + k], nl = m - nr;
                    if (nr == 0 || (only >= 0 && k != only) || nl < msl || nr < msl) continue;
                    const double* g = h + (o + k) * C;
                    double wr = 0.0;
                    for (int c = 0; c < C; ++c) wr += g[c];
                    double sc = crit.score(g, tot, wr, nd.W - wr, buf.data());
                    if (sc < best.score - tol) { best.score = sc; best.feature = f; best.code = k; }
                }
                continue;
            }
            double* L = pre.data();
            std::fill(pre.begin(), pre.end(), 0.0);
            double wl = 0.0;
            int64_t nl = 0;
            // find first non-empty code; a candidate k sits before each later non-empty code
            int32_t k = 0;
            while (k < nc && hc[o + k] == 0) ++k;
            int32_t last = k;
            for (; k < nc; ++k) {
                const int64_t cnt = hc[o + k];
                if (cnt == 0) continue;
                if (nl > 0) {
                    const int64_t nr = m - nl;
                    if (nr == 0) break;
                    if (nl >= msl && nr >= msl) {
                        double sc;
                        if (C == 2) sc = crit.score2(L[0], L[1], tot[0] - L[0], tot[1] - L[1], wl, nd.W - wl);
                        else sc = crit.score(L, tot, wl, nd.W - wl, buf.data());
                        if (sc < best.score - tol) { best.score = sc; best.feature = f; best.code = k; best.low = last; }
                    }
                }
                last = k;
                const double* g = h + (o + k) * C;
                for (int c = 0; c < C; ++c) { L[c] += g[c]; wl += g[c]; }
                nl += cnt;
            }
        }
        nd.best = best;
    }

    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t* cf = P.codes + (size_t)f * P.n;
        nl = nr = 0;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            const int32_t x = cf[r];
            const bool rr = cat ? (x == k) : (x >= k);
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
template <class Finder>
class GrowerT {
public:
    const Problem& P;
    const Params& prm;
    const Crit& crit;
    Finder finder;
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
        res.n_samples.push_back(n_samples);
        for (int c = 0; c < P.C; ++c) res.value.push_back(counts[c]);
        res.impurity.push_back(W > 0.0 ? std::max(0.0, wimp / W) : 0.0);
        return id;
    }

    bool terminal(const double* counts, int64_t n_samples, int64_t depth) const {
        if (prm.max_depth >= 0 && depth >= prm.max_depth) return true;
        if (n_samples < 2 || n_samples < 2 * prm.min_samples_leaf) return true;
        int pos = 0;
        for (int c = 0; c < P.C; ++c) pos += counts[c] > 0.0;
        return pos <= 1;
    }

    // global purity gain of a node's best split (000 Fig. 1): (W*G(node) - best score) / W_total
    double global_gain(const Node& nd) const { return (nd.wimp - nd.best.score) / Wtot; }

    bool splittable(const Node& nd) const {
        if (nd.best.feature < 0) return false;
        if (prm.min_impurity_decrease > 0.0 && global_gain(nd) + GAIN_TOL < prm.min_impurity_decrease) return false;
        return true;
    }

    // split nd; fills the children (with their best splits when they may be split later)
    void split(Node& nd, Node& L, Node& R, bool& openL, bool& openR) {
        const int C = P.C;
        std::vector<double> cl(C, 0.0), cr(C, 0.0);
        int64_t nl, nr;
        finder.mark(nd, cl.data(), cr.data(), nl, nr);
        double WL = 0.0, WR = 0.0;
        for (int c = 0; c < C; ++c) { WL += cl[c]; WR += cr[c]; }
        L.id = add_node(cl.data(), nl, WL, crit.wimp(cl.data(), WL));
        R.id = add_node(cr.data(), nr, WR, crit.wimp(cr.data(), WR));
        res.left[nd.id] = L.id;
        res.right[nd.id] = R.id;
        res.feature[nd.id] = nd.best.feature;
        res.split_code[nd.id] = nd.best.code;
        res.split_low[nd.id] = nd.best.low;
        L.depth = R.depth = nd.depth + 1;
        L.W = WL; R.W = WR;
        L.wimp = crit.wimp(cl.data(), WL);
        R.wimp = crit.wimp(cr.data(), WR);
        L.hist = R.hist = -1;
        openL = !terminal(cl.data(), nl, L.depth);
        openR = !terminal(cr.data(), nr, R.depth);
        if (openL || openR) {
            if constexpr (std::is_same<Finder, HistFinder>::value) finder.partition(nd, nl, L, R, openL, openR);
            else finder.partition(nd, nl, L, R);
        }
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

inline void grow(const Problem& P, const Params& prm, Result& res) {
    Crit crit;
    crit.kind = prm.criterion;
    crit.C = P.C;
    double wmin = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < P.n; ++i) wmin = std::min(wmin, P.w[i]);
    crit.zeps = P.n > 0 ? 0.5 * wmin : 0.0;
    std::vector<double> tab;
    if (prm.criterion == 0) {
        // memo of x*log2(x) for integer x (exact same values as the direct formula)
        bool integral = true;
        double W = 0.0;
        for (int64_t i = 0; i < P.n && integral; ++i) {
            integral = P.w[i] == std::floor(P.w[i]);
            W += P.w[i];
        }
        if (integral && W <= 4.0 * (double)P.n + 16.0) {
            const int64_t sz = (int64_t)W + 1;
            tab.resize(sz);
            for (int64_t i = 0; i < sz; ++i) tab[i] = xlog2x((double)i);
            crit.tab = tab.data();
            crit.tab_size = sz;
            // integer weights: every count (a sum of weights, or its difference from a total) is
            // an exact integer in [0, W]
            crit.int_counts = true;
        }
    }
    if (prm.hist) {
        GrowerT<HistFinder> g(P, prm, crit, res);
        if (prm.hist_budget >= 0.0) g.finder.budget = prm.hist_budget;
        g.grow();
    } else {
        GrowerT<SortedFinder> g(P, prm, crit, res);
        g.grow();
    }
}

// ----------------------------------------------------------------------------------------------
// Feature coding: one numeric column -> codes, distinct values and thresholds, reproducing
// treelearn.data.binarize.numeric_thresholds exactly (a test checks it): exact mode every
// midpoint between consecutive distinct values; with max_thr = m > 0 and more than m midpoints,
// the midpoints just above the data quantiles s[(i*n)//(m+1)], i = 1..m. The code of a value is
// the number of thresholds <= it. One LSD radix sort per column instead of two comparison sorts.
static inline uint64_t sortable_key(double v) {
    if (v == 0.0) v = 0.0;  // -0.0 and +0.0 are the same value
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return (b & 0x8000000000000000ULL) ? ~b : (b | 0x8000000000000000ULL);
}

struct KeyRow {
    uint64_t key;
    int64_t row;
};

static inline double key_value(uint64_t k) {
    const uint64_t b = (k & 0x8000000000000000ULL) ? (k & 0x7FFFFFFFFFFFFFFFULL) : ~k;
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

inline void radix_sort(std::vector<KeyRow>& a, std::vector<KeyRow>& tmp) {
    const size_t n = a.size();
    tmp.resize(n);
    const int BITS = 11, B = 1 << BITS, PASSES = 6;
    std::vector<size_t> cnt((size_t)B * PASSES, 0);
    for (size_t i = 0; i < n; ++i) {  // all digit histograms in one pass
        const uint64_t k = a[i].key;
        for (int p = 0; p < PASSES; ++p) cnt[(size_t)p * B + ((k >> (p * BITS)) & (B - 1))]++;
    }
    for (int p = 0; p < PASSES; ++p) {
        size_t* c = &cnt[(size_t)p * B];
        const int shift = p * BITS;
        if (n == 0 || c[(a[0].key >> shift) & (B - 1)] == n) continue;  // one digit value: nothing to do
        size_t sum = 0;
        for (int k = 0; k < B; ++k) { size_t t = c[k]; c[k] = sum; sum += t; }
        for (size_t i = 0; i < n; ++i) tmp[c[(a[i].key >> shift) & (B - 1)]++] = a[i];
        a.swap(tmp);
    }
}

inline void code_column(const double* X, int64_t n, int64_t stride, int64_t max_thr, int32_t* codes,
                        std::vector<double>& u, std::vector<double>& thr,
                        std::vector<KeyRow>& a, std::vector<KeyRow>& tmp) {
    u.clear();
    thr.clear();
    if (n == 0) return;
    {   // fast path: at most two distinct values (binary features), no sort needed
        double lo = X[0], hi = X[0];
        bool two = true;
        for (int64_t i = 1; i < n && two; ++i) {
            const double v = X[i * stride];
            if (v == lo || v == hi) continue;
            if (lo == hi) { if (v < lo) lo = v; else hi = v; }
            else two = false;
        }
        if (two) {
            u.push_back(lo == 0.0 ? 0.0 : lo);
            if (hi != lo) {
                u.push_back(hi == 0.0 ? 0.0 : hi);
                double m = (u[0] + u[1]) / 2.0;
                if (m <= u[0]) m = u[1];
                thr.push_back(m);  // one midpoint <= any max_thr >= 1
            }
            for (int64_t i = 0; i < n; ++i) codes[i] = (hi != lo && X[i * stride] == hi) ? 1 : 0;
            return;
        }
    }
    a.resize(n);
    for (int64_t i = 0; i < n; ++i) a[i] = KeyRow{sortable_key(X[i * stride]), i};
    radix_sort(a, tmp);
    std::vector<int32_t> rank_at(n);
    double prev = 0.0;
    for (int64_t p = 0; p < n; ++p) {
        const double v = key_value(a[p].key);
        if (p == 0 || v != prev) { u.push_back(v); prev = v; }
        rank_at[p] = (int32_t)u.size() - 1;
    }
    const int64_t U = (int64_t)u.size();
    std::vector<double> mids(U > 1 ? U - 1 : 0);
    for (int64_t j = 0; j + 1 < U; ++j) {
        double m = (u[j] + u[j + 1]) / 2.0;
        if (m <= u[j]) m = u[j + 1];
        mids[j] = m;
    }
    if (max_thr <= 0 || (int64_t)mids.size() <= max_thr) {
        thr = mids;
        for (int64_t p = 0; p < n; ++p) codes[a[p].row] = rank_at[p];
        return;
    }
    // quantile thresholds; code(rank r) = #{selected j : j < r}
    std::vector<uint8_t> sel(U, 0);
    for (int64_t i = 1; i <= max_thr; ++i) {
        int64_t pos = (i * n) / (max_thr + 1);
        if (pos > n - 1) pos = n - 1;
        const int32_t j = rank_at[pos];
        if (j < U - 1) sel[j] = 1;
    }
    std::vector<int32_t> code_of(U);
    int32_t c = 0;
    for (int64_t r = 0; r < U; ++r) {
        code_of[r] = c;
        if (sel[r]) { thr.push_back(mids[r]); ++c; }
    }
    for (int64_t p = 0; p < n; ++p) codes[a[p].row] = code_of[rank_at[p]];
}

}  // namespace tlgreedy
