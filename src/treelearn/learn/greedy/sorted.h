// Greedy growth, exact mode: SortedFinder. Per feature, the rows sorted by code (one stable
// radix sort); every node owns the same position range [start, end) in every feature's array,
// kept by a stable partition when the node is split (O(d * n_node) per node). See
// grow.h for the scoring, tie and missing-value rules it shares with HistFinder.
//
// Memory is touched in order: an entry carries its row's class (a scan reads no other array
// with unit weights), the side of each row is one bit (the whole set stays in cache), and a
// partition streams through the node's range. With n_jobs > 1 the features of a large node are
// dealt to threads (scans, then partitions); the threads' records are replayed in feature
// order through the selection rule (Recorder, types.h), so the tree is the same for
// any number of threads. A user criterion (a Python callback) always runs on one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/criteria.h"
#include "core/limits.h"
#include "ranked.h"
#include "types.h"

namespace tl::greedy {

// a thread's scratch space for the scans
struct SortedWork {
    std::vector<double> buf, buf2, pre, gpre, mis, aux;
    std::vector<Entry> tmp;  // partition buffer (a node's range)
    std::vector<VEntry> vtmp;  // (the same, of a criterion of sums)
    RankWork rk;             // a ranked criterion's passes
    void init(int C) {
        buf.resize(C); buf2.resize(C); pre.resize(C); gpre.resize(C); mis.resize(C); aux.resize(C);
    }
    template <class T> std::vector<T>& buffer() {
        if constexpr (std::is_same<T, VEntry>::value) return vtmp;
        else return tmp;
    }
};

// stable counting sort of src[0..n) into dst by the digit (code >> shift) & (2^bits - 1)
template <class T>
inline void code_digit_pass(const T* src, T* dst, int64_t n, int shift, int bits, std::vector<int64_t>& cnt) {
    const uint32_t mask = (uint32_t(1) << bits) - 1;
    cnt.assign((size_t)1 << bits, 0);
    for (int64_t i = 0; i < n; ++i) cnt[((uint32_t)src[i].code >> shift) & mask]++;
    int64_t sum = 0;
    for (auto& c : cnt) { const int64_t t = c; c = sum; sum += t; }
    for (int64_t i = 0; i < n; ++i) dst[cnt[((uint32_t)src[i].code >> shift) & mask]++] = src[i];
}

// stable sort of a[0..n) by code (the codes are < n_codes), tmp: n entries. Codes of at most 11
// bits: one counting pass. Longer codes: one pass by their top 11 bits deals the entries to
// 2048 blocks of tmp, then each block (a few thousand entries when the codes spread: in cache)
// is sorted by its low bits back into a with at most two in-cache passes. Two LSD passes over
// the whole array instead would scatter twice to 2048 places out of cache (a TLB miss each).
template <class T>
inline void sort_by_code(T* a, int64_t n, T* tmp, int32_t n_codes) {
    const int BITS = 11;
    int bits = 0;
    while (bits < 31 && (int64_t(1) << bits) < (int64_t)n_codes) ++bits;
    std::vector<int64_t> cnt;
    if (bits <= BITS || n <= (int64_t(1) << 16)) {  // short codes or few entries (in cache): LSD passes
        T* src = a;
        T* dst = tmp;
        for (int shift = 0; shift < bits; shift += BITS) {
            code_digit_pass(src, dst, n, shift, std::min(BITS, bits - shift), cnt);
            std::swap(src, dst);
        }
        if (src != a) std::memcpy(a, src, (size_t)n * sizeof(T));
        return;
    }
    const int TOP = BITS;
    const int low = bits - TOP;  // sorted within a block
    const int64_t B = int64_t(1) << TOP;
    std::vector<int64_t> start(B + 1, 0);
    for (int64_t i = 0; i < n; ++i) start[((uint32_t)a[i].code >> low) + 1]++;
    for (int64_t b = 0; b < B; ++b) start[b + 1] += start[b];
    {
        std::vector<int64_t> pos(start.begin(), start.end() - 1);
        for (int64_t i = 0; i < n; ++i) tmp[pos[(uint32_t)a[i].code >> low]++] = a[i];
    }
    for (int64_t b = 0; b < B; ++b) {
        const int64_t s = start[b], m = start[b + 1] - s;
        if (m == 0) continue;
        if (m <= 16) {  // insertion sort (stable)
            T* d = a + s;
            for (int64_t i = 0; i < m; ++i) {
                const T x = tmp[s + i];
                int64_t k = i;
                for (; k > 0 && d[k - 1].code > x.code; --k) d[k] = d[k - 1];
                d[k] = x;
            }
        } else if (low <= BITS) {
            code_digit_pass(tmp + s, a + s, m, 0, low, cnt);
        } else {
            const int l1 = (low + 1) / 2;
            code_digit_pass(tmp + s, a + s, m, 0, l1, cnt);
            code_digit_pass(a + s, tmp + s, m, l1, low - l1, cnt);
            std::memcpy(a + s, tmp + s, (size_t)m * sizeof(T));
        }
    }
}

template <class Crit>
class SortedFinder {
public:
    // a criterion of sums keeps the row's target channel in the entry (VEntry); classes and the
    // ranked criterion keep the row's class (Entry)
    static constexpr bool streamed = Crit::moments && !Crit::ranked;
    using Ent = std::conditional_t<streamed, VEntry, Entry>;
    const Problem& P;
    const Crit& crit;
    int64_t msl;
    double mwl = 0.0;  // min_weight_leaf (set by the grower)
    std::vector<Ent> E;          // d * n
    std::vector<uint64_t> right;   // bit per row: goes right
    const double* w;
    bool unit = true;              // every weight is 1: counts are row counts
    bool squares = false;          // streamed, unit weights, channels (1, v, v * v): a row's channels are its entry's
    int threads = 1;
    std::vector<SortedWork> work;  // per thread
    std::vector<std::vector<Split>> recs;  // per feature: its thread's records (n_jobs > 1)
    tl::CandidateBatch batch;
    std::vector<Split> pending;
    RankTable rt;                        // a ranked criterion: the node's targets ranked (find)
    std::vector<int32_t> lrows, rrows;   // a ranked criterion: the children's rows (mark)
    static constexpr int64_t PAR_MIN = 1 << 15;  // entries (rows x features) of a node worth threads

    SortedFinder(const Problem& p, const Crit& c, int64_t min_samples_leaf, int n_jobs = 1)
        : P(p), crit(c), msl(min_samples_leaf), w(p.w) {
        const int64_t n = P.n;
        for (int64_t i = 0; i < n && unit; ++i) unit = P.w[i] == 1.0;
        if constexpr (streamed) {
            squares = unit && P.C == 3;
            for (int64_t i = 0; i < n && squares; ++i) {
                const double* c = P.stats + (size_t)i * 3;
                squares = c[0] == 1.0 && c[2] == c[1] * c[1];
            }
        }
        threads = Crit::batched ? 1 : std::max(1, std::min(n_jobs, std::max(1, P.d)));
        work.resize(threads);
        for (auto& wk : work) wk.init(P.C);
        recs.resize(P.d);
        right.assign((size_t)(n + 63) / 64, 0);
        batch.C = P.C;
        E.resize((size_t)P.d * n);
        // per feature, entries in row order, then a stable sort by code (ties in row order)
        tl::run_workers(threads, [&](int t) {
            std::vector<Ent>& tmp = work[t].template buffer<Ent>();
            tmp.resize(n);
            for (int f = t; f < P.d; f += threads) {
                const int32_t* cf = P.codes + (size_t)f * n;
                Ent* a = &E[(size_t)f * n];
                for (int64_t i = 0; i < n; ++i) a[i] = entry(i, cf[i]);
                sort_by_code(a, n, tmp.data(), P.n_codes[f]);
            }
        });
    }

    TL_INLINE Ent entry(int64_t i, int32_t code) const {
        if constexpr (streamed) return VEntry{(int32_t)i, code, P.stats[(size_t)i * P.C + 1]};
        else return Entry{(int32_t)i, code, P.y ? (int32_t)P.y[i] : 0};
    }

    void init_root(Node& root) { root.start = 0; root.end = P.n; }

    TL_INLINE bool goes_right(int32_t row) const { return (right[(uint32_t)row >> 6] >> (row & 63)) & 1; }

    // candidates `code >= k` between the present rows [s, te) of the node; ADD: the missing rows
    // (class counts add, nadd rows, weight wadd) join the left side (only with missing values)
    template <bool BIN, bool UNIT, bool ADD, class PK>
    void scan_numeric(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, int64_t te,
                      const double* add = nullptr, int64_t nadd = 0, double wadd = 0.0) {
        const Ent* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = te, m = nd.end - s;
        if (e[s].code == e[t - 1].code) return;  // constant in this node
        // unit weights: integer counters (no floating-point add latency chain); the counts are the
        // same exact integers as the weighted sums
        double l0 = 0.0, l1 = 0.0, wl = 0.0;
        int64_t c1 = 0;
        double* L = wk.pre.data();
        if (!BIN) std::fill(wk.pre.begin(), wk.pre.end(), 0.0);
        int32_t prev = e[s].code;
        for (int64_t p = s; p < t; ++p) {
            const Ent x = e[p];
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
                        for (int c = 0; c < P.C; ++c) wk.aux[c] = L[c] + add[c];
                        pk.rest(wk.aux.data(), tot, wl + wadd, nd.W - wl - wadd, wk.buf.data(), f, x.code, prev, 1);
                    } else {
                        pk.rest(L, tot, wl, nd.W - wl, wk.buf.data(), f, x.code, prev);
                    }
                }
                prev = x.code;
            }
            if (BIN && UNIT) {
                c1 += x.cls;
            } else {
                const double wi = UNIT ? 1.0 : w[x.row];
                if (BIN) { if (x.cls) l1 += wi; else l0 += wi; }
                else add_row<Crit>(P, L, x.row, x.cls, wi);
                wl += wi;
            }
        }
    }

    // a criterion of sums with one output (channels w, w y, w y^2): the left side's sum of w y
    // streams from the entries, its count (unit weights) or weight beside it. A side's score
    // reads its weight and that sum only; the sums, weights and scores are the generic scan's to
    // the bit (the same additions in the same order).
    template <bool UNIT, bool ADD, class PK>
    void scan_sums(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, int64_t te,
                   const double* add, int64_t nadd, double wadd) {
        const Ent* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = te, m = nd.end - s;
        if (e[s].code == e[t - 1].code) return;  // constant in this node
        double L[3] = {0.0, 0.0, 0.0};
        double wl = 0.0, sl = 0.0;
        int32_t prev = e[s].code;
        for (int64_t p = s; p < t; ++p) {
            const Ent x = e[p];
            if (x.code != prev) {
                const int64_t nl = p - s + (ADD ? nadd : 0), nr = m - nl;
                if (nl >= msl && nr >= msl) {
                    const double wp = UNIT ? (double)(p - s) : wl;
                    if (ADD) {
                        L[0] = wp + wadd;
                        L[1] = sl + add[1];
                        pk.rest(L, tot, wp + wadd, nd.W - wp - wadd, wk.buf.data(), f, x.code, prev, 1);
                    } else {
                        L[0] = wp;
                        L[1] = sl;
                        pk.rest(L, tot, wp, nd.W - wp, wk.buf.data(), f, x.code, prev);
                    }
                }
                prev = x.code;
            }
            sl += x.v;
            if (!UNIT) wl += w[x.row];
        }
    }

    template <bool ADD, class PK>
    void scan_numeric_any(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, int64_t te,
                          const double* add = nullptr, int64_t nadd = 0, double wadd = 0.0) {
        if constexpr (streamed) {
            if (P.C == 3) {
                if (unit) scan_sums<true, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
                else scan_sums<false, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
                return;
            }
        }
        if (!Crit::moments && P.C == 2) {
            if (unit) scan_numeric<true, true, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
            else scan_numeric<true, false, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
        } else if (unit) scan_numeric<false, true, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
        else scan_numeric<false, false, ADD>(f, nd, tot, pk, wk, te, add, nadd, wadd);
    }

    // the node's rows of feature f with a missing value sit at the end of its range (the largest
    // code): te = the end of the present rows; their class counts into wk.mis (weight wm)
    int64_t missing_tail(int f, const Node& nd, SortedWork& wk, int64_t& te, double& wm) {
        const Ent* e = &E[(size_t)f * P.n];
        const int32_t M = P.miss_code[f];
        te = nd.end;
        while (te > nd.start && e[te - 1].code == M) --te;
        std::fill(wk.mis.begin(), wk.mis.end(), 0.0);
        wm = 0.0;
        for (int64_t p = te; p < nd.end; ++p) { add_row<Crit>(P, wk.mis.data(), e[p].row, e[p].cls, w[e[p].row]); wm += w[e[p].row]; }
        return nd.end - te;
    }

    // the missing-only split: present rows left, missing rows right (code >= miss_code)
    template <class PK>
    void missing_only(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, int64_t te, int64_t nmiss,
                      double wm, int32_t low) {
        const int64_t nl = te - nd.start;
        if (nl < msl || nmiss < msl) return;
        for (int c = 0; c < P.C; ++c) wk.aux[c] = tot[c] - wk.mis[c];
        pk.rest(wk.aux.data(), tot, nd.W - wm, wm, wk.buf.data(), f, P.miss_code[f], low, 0);
    }

    // a numeric feature with missing values (scikit-learn's order: missing right, left, alone)
    template <class PK>
    void scan_numeric_missing(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk) {
        const Ent* e = &E[(size_t)f * P.n];
        int64_t te;
        double wm;
        const int64_t nmiss = missing_tail(f, nd, wk, te, wm);
        if (te == nd.start) return;  // every value missing
        // (one present value: no threshold, only the missing-only split)
        scan_numeric_any<false>(f, nd, tot, pk, wk, te);
        if (nmiss == 0) return;
        scan_numeric_any<true>(f, nd, tot, pk, wk, te, wk.mis.data(), nmiss, wm);
        missing_only(f, nd, tot, pk, wk, te, nmiss, wm, e[te - 1].code);
    }

    // one-vs-rest candidates `code == v` over the present rows [s, te); radd (the missing rows'
    // class counts, nradd rows, weight wradd) joins the right side when given; ml: where they go
    template <class PK>
    void scan_categorical(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, int64_t te = -1,
                          const double* radd = nullptr, int64_t nradd = 0, double wradd = 0.0, uint8_t ml = 0) {
        const Ent* e = &E[(size_t)f * P.n];
        const int64_t s = nd.start, t = te < 0 ? nd.end : te, m = nd.end - s;
        if (e[s].code == e[t - 1].code) return;
        const int C = P.C;
        std::fill(wk.pre.begin(), wk.pre.end(), 0.0);
        std::fill(wk.gpre.begin(), wk.gpre.end(), 0.0);
        double* pre = wk.pre.data();
        double* grp = wk.buf2.data();
        double wl = 0.0, gw = 0.0;
        int64_t gs = s;
        int32_t gcode = e[s].code;
        const int32_t only = P.cat_only[f];
        for (int64_t p = s; p <= t; ++p) {
            if (p == t || e[p].code != gcode) {
                const int64_t nr = p - gs + nradd, nl = m - nr;
                if ((only < 0 || gcode == only) && nl >= msl && nr >= msl) {
                    // right: x == gcode (the group); left: the rest
                    for (int c = 0; c < C; ++c) grp[c] = pre[c] - wk.gpre[c];
                    double wr = wl - gw;
                    if (radd) {
                        for (int c = 0; c < C; ++c) grp[c] += radd[c];
                        wr += wradd;
                    }
                    pk.rest(grp, tot, wr, nd.W - wr, wk.buf.data(), f, gcode, 0, ml);
                }
                if (p == t) break;
                gs = p;
                gcode = e[p].code;
                std::copy(wk.pre.begin(), wk.pre.end(), wk.gpre.begin());
                gw = wl;
            }
            const Ent x = e[p];
            add_row<Crit>(P, pre, x.row, x.cls, w[x.row]);
            wl += w[x.row];
        }
    }

    template <class PK>
    void scan_categorical_missing(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk) {
        int64_t te;
        double wm;
        const int64_t nmiss = missing_tail(f, nd, wk, te, wm);
        if (te == nd.start) return;  // every value missing
        if (nmiss == 0) { scan_categorical(f, nd, tot, pk, wk, te); return; }
        scan_categorical(f, nd, tot, pk, wk, te, wk.mis.data(), nmiss, wm, 0);
        scan_categorical(f, nd, tot, pk, wk, te, nullptr, 0, 0.0, 1);
        missing_only(f, nd, tot, pk, wk, te, nmiss, wm, 0);
    }

    template <class PK>
    void scan_feature(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk) {
        if constexpr (Crit::ranked) {
            ranked_feature(P, rt, wk.rk, &E[(size_t)f * P.n + nd.start], nd.end - nd.start, f, nd.W, msl, pk);
            return;
        }
        if (P.miss_code[f] >= 0) {
            if (P.is_cat[f]) scan_categorical_missing(f, nd, tot, pk, wk);
            else scan_numeric_missing(f, nd, tot, pk, wk);
        } else if (P.is_cat[f]) {
            scan_categorical(f, nd, tot, pk, wk);
        } else {
            scan_numeric_any<false>(f, nd, tot, pk, wk, nd.end);
        }
    }

    int node_threads(const Node& nd) const {
        if (threads <= 1 || (nd.end - nd.start) * (int64_t)P.d < PAR_MIN) return 1;
        return threads;
    }

    // a ranked criterion: the node's targets ranked, for every feature's scan
    void rank_node(const Node& nd) {
        if constexpr (Crit::ranked) {
            const Ent* e = &E[nd.start];
            rt.build(P, nd.end - nd.start, [&](int64_t i) { return e[i].row; });
        }
    }

    void find(Node& nd, const double* tot) {
        rank_node(nd);
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * crit.tie_unit(tot, P.C, nd.W), &batch, &pending, &P, mwl, nd.lo, nd.hi};
        const int T = node_threads(nd);
        if (T == 1) {
            for (int f = 0; f < P.d && !pk.failed(); ++f) scan_feature(f, nd, tot, pk, work[0]);
            pk.flush();
        } else {
            if constexpr (!Crit::batched) {
                tl::run_workers(T, [&](int t) {
                    Recorder<Crit> rec{crit, nullptr, GAIN_TOL * crit.tie_unit(tot, P.C, nd.W), mwl, &P, nd.lo, nd.hi};
                    for (int f = t; f < P.d; f += T) {
                        recs[f].clear();
                        rec.out = &recs[f];
                        scan_feature(f, nd, tot, rec, work[t]);
                    }
                });
                for (int f = 0; f < P.d; ++f)
                    for (const Split& s : recs[f]) pk.take(s.score, s.feature, s.code, s.low, s.mleft);
            }
        }
        nd.best = best;
    }

    // --- drawn features (max_features) and random conditions (splitter="random"), on one thread:
    // the draws depend on the node only (NodeRng), so the tree is the same for any n_jobs
    std::vector<int> order;

    // whether feature f has two present values at the node (scikit-learn's non-constant feature)
    bool varies(int f, const Node& nd) const {
        const Ent* e = &E[(size_t)f * P.n];
        const int32_t M = P.miss_code[f];
        int64_t te = nd.end;
        if (M >= 0) while (te > nd.start && e[te - 1].code == M) --te;
        return te > nd.start && e[nd.start].code != e[te - 1].code;
    }

    // one random condition of feature f (varying at the node): numeric `code >= k`, k uniform
    // among the codes above the node's lowest present one up to its highest (the column's
    // candidate thresholds between the node's min and max); categorical `code == v`, v uniform
    // among the node's present categories. Missing rows: both directions are candidates.
    template <class PK>
    void scan_random(int f, const Node& nd, const double* tot, PK& pk, SortedWork& wk, NodeRng& rng) {
        const Ent* e = &E[(size_t)f * P.n];
        int64_t te = nd.end, nmiss = 0;
        double wm = 0.0;
        if (P.miss_code[f] >= 0) nmiss = missing_tail(f, nd, wk, te, wm);
        const int64_t s = nd.start, m = nd.end - s;
        double* G = wk.pre.data();  // numeric: the rows below k; categorical: the rows of category v
        std::fill(wk.pre.begin(), wk.pre.end(), 0.0);
        double wg = 0.0;
        int64_t ng = 0;
        int32_t k = 0, low = 0;
        const bool cat = P.is_cat[f];
        if (cat) {
            k = P.cat_only[f];
            if (k < 0) {
                int64_t groups = 0;
                for (int64_t p = s; p < te; ++p) groups += p == s || e[p].code != e[p - 1].code;
                int64_t g = rng.below(groups);
                for (int64_t p = s; p < te; ++p)
                    if ((p == s || e[p].code != e[p - 1].code) && g-- == 0) { k = e[p].code; break; }
            }
            for (int64_t p = s; p < te; ++p)
                if (e[p].code == k) { add_row<Crit>(P, G, e[p].row, e[p].cls, w[e[p].row]); wg += w[e[p].row]; ++ng; }
            if (ng == 0) return;
        } else {
            const int32_t lo = e[s].code, hi = e[te - 1].code;
            k = lo + 1 + (int32_t)rng.below(hi - lo);
            int64_t p = s;
            for (; p < te && e[p].code < k; ++p) { add_row<Crit>(P, G, e[p].row, e[p].cls, w[e[p].row]); wg += w[e[p].row]; low = e[p].code; }
            ng = p - s;
        }
        // the group's side alone (missing rows with the other side: numeric right, categorical left), then
        // the missing rows joining the group's side
        const uint8_t ml_apart = cat ? 1 : 0;
        if (ng >= msl && m - ng >= msl) pk.rest(G, tot, wg, nd.W - wg, wk.buf.data(), f, k, low, ml_apart);
        if (nmiss > 0 && ng + nmiss >= msl && m - ng - nmiss >= msl) {
            for (int c = 0; c < P.C; ++c) wk.aux[c] = G[c] + wk.mis[c];
            pk.rest(wk.aux.data(), tot, wg + wm, nd.W - wg - wm, wk.buf.data(), f, k, low, (uint8_t)(1 - ml_apart));
        }
    }

    // the split search over features drawn at random until mtry of them varied at the node and a
    // valid split was found (or none is left): scikit-learn's max_features; random conditions
    // with random_split
    void find_drawn(Node& nd, const double* tot, int64_t mtry, bool random_split, uint64_t seed) {
        rank_node(nd);
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * crit.tie_unit(tot, P.C, nd.W), &batch, &pending, &P, mwl, nd.lo, nd.hi};
        NodeRng rng(seed, nd.id);
        order.resize(P.d);
        std::iota(order.begin(), order.end(), 0);
        int64_t visited = 0;
        for (int i = 0; i < P.d && !pk.failed(); ++i) {
            std::swap(order[i], order[i + rng.below(P.d - i)]);
            const int f = order[i];
            if (!varies(f, nd)) continue;
            if (random_split) scan_random(f, nd, tot, pk, work[0], rng);
            else scan_feature(f, nd, tot, pk, work[0]);
            if (++visited >= mtry) {
                pk.flush();
                if (best.feature >= 0) break;
            }
        }
        pk.flush();
        nd.best = best;
    }

    // mark rows going right; children class counts and sizes; nm: the node's rows missing the feature
    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        if constexpr (streamed) {
            if (squares) { mark_sums(nd, cl, cr, nl, nr, nm); return; }
        }
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t M = P.miss_code[f];  // -1 (no missing value) equals no code
        const bool mright = !nd.best.mleft;
        const Ent* e = &E[(size_t)f * P.n];
        uint64_t* rt = right.data();
        nl = nr = nm = 0;
        lrows.clear();
        rrows.clear();
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const Ent x = e[p];
            if constexpr (Crit::ranked) {
                const bool miss = x.code == M;
                ((miss ? mright : (cat ? (x.code == k) : (x.code >= k))) ? rrows : lrows).push_back(x.row);
            }
            const bool miss = x.code == M;
            nm += miss;
            const bool r = miss ? mright : (cat ? (x.code == k) : (x.code >= k));
            const uint64_t bit = uint64_t(1) << (x.row & 63);
            uint64_t& word = rt[(uint32_t)x.row >> 6];
            word = r ? (word | bit) : (word & ~bit);
            const double wi = unit ? 1.0 : w[x.row];
            if (r) { add_row<Crit>(P, cr, x.row, x.cls, wi); ++nr; }
            else { add_row<Crit>(P, cl, x.row, x.cls, wi); ++nl; }
        }
    }

    // mark (squares): the children's channels (1, v, v * v) summed from the entries, the same
    // additions in the same order as add_row's of the rows' channels
    void mark_sums(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t M = P.miss_code[f];
        const bool mright = !nd.best.mleft;
        const Ent* e = &E[(size_t)f * P.n];
        uint64_t* rt = right.data();
        nm = 0;
        int64_t cnt[2] = {0, 0};
        double* acc[2] = {cl, cr};
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const Ent x = e[p];
            const bool miss = x.code == M;
            nm += miss;
            const int r = miss ? mright : (cat ? (x.code == k) : (x.code >= k));
            const uint64_t bit = uint64_t(1) << (x.row & 63);
            uint64_t& word = rt[(uint32_t)x.row >> 6];
            word = r ? (word | bit) : (word & ~bit);
            double* a = acc[r];
            a[0] += 1.0;
            a[1] += x.v;
            a[2] += x.v * x.v;
            ++cnt[r];
        }
        nl = cnt[0];
        nr = cnt[1];
    }

    // stable partition of feature f's range of nd: the left rows first, the right rows after
    void partition_feature(int f, const Node& nd, SortedWork& wk) {
        Ent* e = &E[(size_t)f * P.n];
        if (e[nd.start].code == e[nd.end - 1].code) return;  // constant: any order is sorted
        std::vector<Ent>& buf = wk.template buffer<Ent>();
        if (buf.size() < (size_t)(nd.end - nd.start)) buf.resize(nd.end - nd.start);
        Ent* tp = buf.data();
        int64_t li = nd.start, ri = 0;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const Ent x = e[p];
            const int64_t r = goes_right(x.row);
            e[li] = x;
            tp[ri] = x;
            li += 1 - r;
            ri += r;
        }
        std::memcpy(e + li, tp, (size_t)ri * sizeof(Ent));
    }

    // stable partition of every feature's range; children get [start, start+nl), [start+nl, end)
    void partition(Node& nd, int64_t nl, Node& L, Node& R, bool, bool) {
        L.start = nd.start; L.end = nd.start + nl;
        R.start = nd.start + nl; R.end = nd.end;
        const int T = node_threads(nd);
        if (T == 1) {
            for (int f = 0; f < P.d; ++f) partition_feature(f, nd, work[0]);
            return;
        }
        tl::run_workers(T, [&](int t) {
            for (int f = t; f < P.d; f += T) partition_feature(f, nd, work[t]);
        });
    }
    void release(Node&) {}
    void trim(Node&) {}
};

}  // namespace tl::greedy
