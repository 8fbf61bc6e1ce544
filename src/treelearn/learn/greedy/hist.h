// Greedy growth, histogram mode (few codes): HistFinder. Per node a histogram (feature x code x
// class) built from the node's rows by the kernel of core/histogram.h, the larger child
// by subtraction from the parent; histograms of waiting nodes are kept within a byte budget.
// Also the split search of the fits on Dask row shards (sharded.py). See grow.h for the scoring,
// tie and missing-value rules it shares with SortedFinder.
// One output's three channels (regression) are binned into cells of four lanes (channels and
// row count) by this file's own kernel, count_row_moments. A node's rows are scattered over the
// sample: the histogram build and mark prefetch the codes and channels of the rows PREFETCH
// positions ahead (their reads are what a deep node's pass waits on).
// Threads (n_jobs): a large node's histogram is built by `threads` workers, each over a block of
// features (every cell is summed by one thread, over the node's rows in their order: the same
// bits for any number of threads, hence the same tree); the row coding of the constructor and the
// children's histograms by subtraction are shared the same way. A split's mark runs the sides'
// sums (in the rows' order) on one thread while the others record the rows' sides by row chunks,
// and the partition moves row chunks at offsets counted first (the same order as on one thread).
// A node of fewer than par_min entries (rows x features) stays on one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/criteria.h"
#include "core/histogram.h"
#include "core/limits.h"
#include "ranked.h"
#include "types.h"

namespace tl::greedy {

// the threaded paths kept out of line: the one-thread loops they sit beside stay as compact as
// before (inlined into their callers, their registers free of the thread plumbing)
#if defined(__GNUC__)
#define TL_COLD_PATH __attribute__((noinline))
#else
#define TL_COLD_PATH
#endif

// the two sides' sums of one output's three channels (a split's mark): a row's channels added to
// its side and +0.0 to the other (x + 0.0 == x for sums that start at +0.0 and never become -0.0):
// no branch on the side, the same bits as adding to one side only; a local of this type stays in
// registers
struct SideSums3 {
    double l0, l1, l2, r0, r1, r2;
    SideSums3(const double* cl, const double* cr) : l0(cl[0]), l1(cl[1]), l2(cl[2]), r0(cr[0]), r1(cr[1]), r2(cr[2]) {}
    void add(bool rr, const double* s) {  // (inlined: defined in the class)
        const double s0 = s[0], s1 = s[1], s2 = s[2];
        l0 += rr ? 0.0 : s0;
        l1 += rr ? 0.0 : s1;
        l2 += rr ? 0.0 : s2;
        r0 += rr ? s0 : 0.0;
        r1 += rr ? s1 : 0.0;
        r2 += rr ? s2 : 0.0;
    }
    void store(double* cl, double* cr) const {
        cl[0] = l0; cl[1] = l1; cl[2] = l2;
        cr[0] = r0; cr[1] = r1; cr[2] = r2;
    }
};

template <class Crit>
class HistFinder {
public:
    const Problem& P;
    const Crit& crit;
    int64_t msl;
    double mwl = 0.0;  // min_weight_leaf (set by the grower)
    std::vector<int32_t> rows;     // node row ranges
    std::vector<int32_t> tmp;
    std::vector<uint8_t> right;    // mark: per position of `rows`, whether its row goes right
    std::vector<int64_t> offset;   // per feature: offset of its block in a histogram
    int64_t hsize;                 // doubles per histogram (cells x S)
    int S;                         // doubles per cell: the classes (channels), or 4 (see build)
    int64_t csize;                 // count block size (codes summed over features)
    std::vector<std::vector<double>> pool;  // histograms by slot
    std::vector<std::vector<int64_t>> cpool; // row counts per (feature, code)
    std::vector<int64_t> free_slots;
    // (n, d) row-major codes: one byte each when every feature has at most 256 codes (255
    // thresholds and no missing value), else two
    std::vector<uint8_t> bins8;
    std::vector<uint16_t> bins16;
    bool narrow = false;
    std::vector<double> buf, pre, aux;
    tl::CandidateBatch batch;
    std::vector<Split> pending;
    RankTable rt;                        // a ranked criterion (no histograms): the node's targets ranked
    RankWork rk;
    std::vector<int64_t> ccount;         // a ranked criterion: per code, its rows' start (counting sort)
    std::vector<int32_t> lrows, rrows;   // a ranked criterion: the children's rows (mark)

    double budget = 256.0 * 1024 * 1024;
    int64_t next_id = 0;  // the id the next split's left child gets (its right: + 1), for P.leaf_of
    static constexpr int64_t PREFETCH = 64;  // rows ahead whose codes and channels are prefetched
    // entries (rows x features) of a node worth threads: a threaded node starts six sets of threads
    // (build, subtraction, mark, partition's three passes); from 2^20 entries (a millisecond or more
    // of one thread's work) their start and join are a small part. Measured on 2 cores under a load
    // of 5-6 (2e6 rows, 10 features, depth 14, 2 threads; 1 thread 1.15 s): 2^17 1.90 s, 2^19
    // 1.65 s, 2^21 1.49 s, none threaded 1.22 s: on a busy machine every thread start waits.
    static constexpr int64_t PAR_MIN = 1 << 20;
    int threads = 1;              // n_jobs, at most one per feature
    int64_t par_min = PAR_MIN;    // a node's entries from which its histogram is built on `threads`
    int64_t threaded_builds = 0;  // histograms built on more than one thread (reported, for tests)
    std::vector<uint64_t>* digests = nullptr;  // when given: a digest of every histogram made, in order (tests)

    HistFinder(const Problem& p, const Crit& c, int64_t min_samples_leaf, int n_jobs = 1, int64_t par_min_ = -1)
        : P(p), crit(c), msl(min_samples_leaf) {
        threads = std::max(1, std::min(n_jobs, std::max(1, P.d)));
        if (par_min_ >= 0) par_min = par_min_;
        const int64_t n = P.n;
        rows.resize(n);
        for (int64_t i = 0; i < n; ++i) rows[i] = (int32_t)i;
        tmp.resize(n);
        right.assign(n, 0);
        offset.resize(P.d + 1);
        offset[0] = 0;
        for (int f = 0; f < P.d; ++f) offset[f + 1] = offset[f] + P.n_codes[f];
        csize = offset[P.d];
        S = lanes(P);
        hsize = csize * S;
        int32_t max_codes = 0;
        for (int f = 0; f < P.d; ++f) max_codes = std::max(max_codes, P.n_codes[f]);
        narrow = max_codes <= 256;
        if (narrow)
            fill_bins(bins8);
        else
            fill_bins(bins16);
        if (P.leaf_of) std::fill(P.leaf_of, P.leaf_of + n, (int64_t)0);  // every row in the root
        buf.resize(P.C);
        pre.resize(P.C);
        aux.resize(P.C);
        batch.C = P.C;
    }

    // one output's three channels (regression): cells of four lanes, the fourth the row count
    static int lanes(const Problem& p) {
        if constexpr (Crit::moments && !Crit::ranked) return p.C == 3 && p.stats != nullptr ? 4 : p.C;
        return p.C;
    }

    template <class B>
    void fill_bins(std::vector<B>& bins) {
        const int64_t n = P.n;
        const int d = P.d;
        bins.resize((size_t)n * d);
        // row blocks: each block's codes are written feature by feature while its rows stay in cache;
        // threads take every T-th block (a copy: the same bytes for any number)
        const int T = (int64_t)n * d >= par_min ? threads : 1;
        const int32_t* codes = P.codes;
        B* out = bins.data();
        if (T == 1) return fill_rows(codes, n, d, out, 0, 1);
        tl::run_workers(T, [=](int t) { fill_rows(codes, n, d, out, t, T); });
    }
    // thread t's share of fill_bins (every T-th block of rows); arguments by value: the byte
    // stores cannot alias them
    template <class B>
    static void fill_rows(const int32_t* codes, int64_t n, int d, B* bins, int t, int T) {
        const int64_t block = 4096;
        for (int64_t r0 = (int64_t)t * block; r0 < n; r0 += (int64_t)T * block) {
            const int64_t r1 = std::min(n, r0 + block);
            for (int f = 0; f < d; ++f) {
                const int32_t* cf = codes + (size_t)f * n;
                B* out = bins + f;
                for (int64_t i = r0; i < r1; ++i) out[(size_t)i * d] = (B)cf[i];
            }
        }
    }

    // the threads of a node of m rows: one below par_min entries
    int node_threads(int64_t m) const {
        if (threads <= 1 || m * (int64_t)P.d < par_min) return 1;
        return threads;
    }
    // thread t's block of features [f0, f1) among T (contiguous, sizes differing by at most one)
    void feature_block(int t, int T, int& f0, int& f1) const {
        f0 = (int)((int64_t)P.d * t / T);
        f1 = (int)((int64_t)P.d * (t + 1) / T);
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

    // FNV-1a over the bits of a histogram's cells and counts (the tests' check of every bit)
    void digest(int64_t slot) {
        if (!digests) return;
        uint64_t x = 1469598103934665603ULL;
        const double* h = pool[slot].data();
        const int64_t* hc = cpool[slot].data();
        for (int64_t i = 0; i < hsize; ++i) {
            uint64_t b;
            std::memcpy(&b, h + i, sizeof b);
            x = (x ^ b) * 1099511628211ULL;
        }
        for (int64_t i = 0; i < csize; ++i) x = (x ^ (uint64_t)hc[i]) * 1099511628211ULL;
        digests->push_back(x);
    }

    void build(Node& nd) {
        nd.hist = alloc();
        const int T = node_threads(nd.end - nd.start);
        if (T > 1) build_threaded(nd, T);
        else build_one(nd);
        digest(nd.hist);
    }

    TL_COLD_PATH void build_threaded(const Node& nd, int T) {
        ++threaded_builds;
        tl::run_workers(T, [&](int t) {
            int f0, f1;
            feature_block(t, T, f0, f1);
            build_block(nd, f0, f1);
        });
    }

    void build_one(Node& nd) {
        double* h = pool[nd.hist].data();
        int64_t* hc = cpool[nd.hist].data();
        std::fill(h, h + hsize, 0.0);
        std::fill(hc, hc + csize, 0);
        if constexpr (Crit::moments) {
            if (S == 4) {  // the counts from the fourth lane (whole numbers, exact)
                if (narrow)
                    count_row_moments(rows.data() + nd.start, nd.end - nd.start, bins8.data(), P.d, 0, P.d,
                                      offset.data(), P.stats, h);
                else
                    count_row_moments(rows.data() + nd.start, nd.end - nd.start, bins16.data(), P.d, 0, P.d,
                                      offset.data(), P.stats, h);
                for (int64_t i = 0; i < csize; ++i) hc[i] = (int64_t)h[i * 4 + 3];
            } else if (narrow)
                tl::count_row_stats(rows.data() + nd.start, nd.end - nd.start, bins8.data(), P.d, offset.data(),
                                    P.C, P.stats, h, hc);
            else
                tl::count_row_stats(rows.data() + nd.start, nd.end - nd.start, bins16.data(), P.d, offset.data(),
                                    P.C, P.stats, h, hc);
        } else if (narrow)
            tl::count_rows<tl::Layout::RowMajor, true>(rows.data() + nd.start, nd.end - nd.start,
                                                               bins8.data(), P.n, P.d, offset.data(), P.C, P.y, P.w,
                                                               h, hc);
        else
            tl::count_rows<tl::Layout::RowMajor, true>(rows.data() + nd.start, nd.end - nd.start,
                                                               bins16.data(), P.n, P.d, offset.data(), P.C, P.y,
                                                               P.w, h, hc);
    }

    // build's share of one thread: the cells of features [f0, f1), zeroed then summed over the
    // node's rows in their order (each cell the same additions as on one thread)
    void build_block(const Node& nd, int f0, int f1) {
        double* h = pool[nd.hist].data();
        int64_t* hc = cpool[nd.hist].data();
        const int64_t c0 = offset[f0], c1 = offset[f1];
        std::fill(h + c0 * S, h + c1 * S, 0.0);
        std::fill(hc + c0, hc + c1, 0);
        const int32_t* nr = rows.data() + nd.start;
        const int64_t m = nd.end - nd.start;
        if constexpr (Crit::moments) {
            if (S == 4) {
                if (narrow) count_row_moments(nr, m, bins8.data(), P.d, f0, f1, offset.data(), P.stats, h);
                else count_row_moments(nr, m, bins16.data(), P.d, f0, f1, offset.data(), P.stats, h);
                for (int64_t i = c0; i < c1; ++i) hc[i] = (int64_t)h[i * 4 + 3];
            } else if (narrow) {
                count_block_stats(nr, m, bins8.data(), P.d, f0, f1, offset.data(), P.C, P.stats, h, hc);
            } else {
                count_block_stats(nr, m, bins16.data(), P.d, f0, f1, offset.data(), P.C, P.stats, h, hc);
            }
        } else if (narrow) {
            count_block_classes(nr, m, bins8.data(), P.d, f0, f1, offset.data(), P.C, P.y, P.w, h, hc);
        } else {
            count_block_classes(nr, m, bins16.data(), P.d, f0, f1, offset.data(), P.C, P.y, P.w, h, hc);
        }
    }

    // core/histogram.h's count_rows (RowMajor, classes) over the features [f0, f1) only: each cell
    // gets the same additions in the same order
    template <class Code>
    static void count_block_classes(const int32_t* rows, int64_t nrows, const Code* codes, int d, int f0, int f1,
                                    const int64_t* offset, int C, const int64_t* y, const double* w, double* h,
                                    int64_t* hc) {
        for (int64_t p = 0; p < nrows; ++p) {
            if (p + PREFETCH < nrows) {
                const int64_t q = rows[p + PREFETCH];
                __builtin_prefetch(codes + q * (int64_t)d + f0);
                __builtin_prefetch(y + q);
                __builtin_prefetch(w + q);
            }
            const int64_t r = rows[p];
            const Code* b = codes + r * (int64_t)d;
            const int64_t yc = y[r];
            const double wi = w[r];
            for (int f = f0; f < f1; ++f) {
                const int64_t cell = offset[f] + b[f];
                h[cell * C + yc] += wi;
                hc[cell] += 1;
            }
        }
    }

    // core/histogram.h's count_row_stats (C channels) over the features [f0, f1) only
    template <class Code>
    static void count_block_stats(const int32_t* rows, int64_t nrows, const Code* codes, int d, int f0, int f1,
                                  const int64_t* offset, int C, const double* stats, double* h, int64_t* hc) {
        for (int64_t p = 0; p < nrows; ++p) {
            const int64_t r = rows[p];
            const Code* b = codes + r * (int64_t)d;
            const double* s = stats + r * (int64_t)C;
            for (int f = f0; f < f1; ++f) {
                const int64_t cell = offset[f] + b[f];
                double* hh = h + cell * C;
                for (int c = 0; c < C; ++c) hh[c] += s[c];
                hc[cell] += 1;
            }
        }
    }

    // build's kernel for one output's three channels into cells of four lanes: a row adds
    // (stats[r * 3], stats[r * 3 + 1], stats[r * 3 + 2], 1) to h[cell * 4 .. cell * 4 + 3] (its
    // channels and its count, exact in a double up to 2^53 rows): two vector additions per cell
    // on SSE2 where core/histogram.h's count_row_stats makes three scalar ones and an integer
    // count. Each channel gets the same additions in the same order: the same bits.
    // Features [f0, f1) only (a thread's block; 0, d on one thread).
    template <class Code>
    static void count_row_moments(const int32_t* rows, int64_t nrows, const Code* codes, int d, int f0, int f1,
                                  const int64_t* offset, const double* stats, double* h) {
        for (int64_t p = 0; p < nrows; ++p) {
            if (p + PREFETCH < nrows) {  // a node's rows are scattered: their reads asked for ahead
                const int64_t q = rows[p + PREFETCH];
                __builtin_prefetch(codes + q * (int64_t)d + f0);
                __builtin_prefetch(stats + q * 3);
                __builtin_prefetch(stats + q * 3 + 2);
            }
            const int64_t r = rows[p];
            const Code* b = codes + r * (int64_t)d;
            const double s0 = stats[r * 3], s1 = stats[r * 3 + 1], s2 = stats[r * 3 + 2];
            for (int f = f0; f < f1; ++f) {
                double* hh = h + (offset[f] + b[f]) * 4;
                hh[0] += s0;
                hh[1] += s1;
                hh[2] += s2;
                hh[3] += 1.0;
            }
        }
    }

    void init_root(Node& root) {
        root.start = 0;
        root.end = P.n;
        if constexpr (!Crit::ranked) build(root);
    }

    // a ranked criterion: per feature, the node's rows sorted by code (a counting sort), searched
    // as the sorted finder's ranges are (ranked.h)
    void find_ranked(Node& nd, const double* tot) {
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * crit.tie_unit(tot, P.C, nd.W), &batch, &pending, &P, mwl, nd.lo, nd.hi};
        const int64_t m = nd.end - nd.start;
        const int32_t* nr = rows.data() + nd.start;
        rt.build(P, m, [&](int64_t i) { return nr[i]; });
        rk.ent.resize((size_t)m);
        for (int f = 0; f < P.d; ++f) {
            const int32_t* cf = P.codes + (size_t)f * P.n;
            ccount.assign((size_t)P.n_codes[f] + 1, 0);
            for (int64_t i = 0; i < m; ++i) ccount[(size_t)cf[nr[i]] + 1]++;
            for (int32_t c = 0; c < P.n_codes[f]; ++c) ccount[(size_t)c + 1] += ccount[(size_t)c];
            for (int64_t i = 0; i < m; ++i) {
                const int32_t r = nr[i];
                rk.ent[(size_t)ccount[(size_t)cf[r]]++] = Entry{r, cf[r], 0};
            }
            ranked_feature(P, rt, rk, rk.ent.data(), m, f, nd.W, msl, pk);
        }
        nd.best = best;
    }

    // candidates `code >= k` over the present codes [0, kend) of feature f (block o of the
    // histogram h, hc); `add` (the missing rows' class counts, nadd rows, weight wadd) joins the
    // left side when given. Returns the number of non-empty present codes.
    int32_t scan_numeric(int f, const Node& nd, const double* h, const int64_t* hc, int64_t o, int32_t kend,
                         const double* tot, Picker<Crit>& pk, const double* add = nullptr, int64_t nadd = 0,
                         double wadd = 0.0) {
        const int C = P.C;
        const bool two = !Crit::moments && C == 2;
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
                        if (two) pk.two(aux[0], aux[1], tot[0] - aux[0], tot[1] - aux[1], aw, nd.W - aw, f, k, last, 1);
                        else pk.rest(aux.data(), tot, aw, nd.W - aw, buf.data(), f, k, last, 1);
                    } else if (two) {
                        pk.two(L[0], L[1], tot[0] - L[0], tot[1] - L[1], wl, nd.W - wl, f, k, last);
                    } else {
                        pk.rest(L, tot, wl, nd.W - wl, buf.data(), f, k, last);
                    }
                }
            }
            last = k;
            const double* g = h + (o + k) * S;
            for (int c = 0; c < C; ++c) L[c] += g[c];
            wl += crit.weight(g, C);
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
            const double* g = h + (o + k) * S;
            const double wr = crit.weight(g, C);
            if (radd) {
                for (int c = 0; c < C; ++c) aux[c] = g[c] + radd[c];
                pk.rest(aux.data(), tot, wr + wradd, nd.W - wr - wradd, buf.data(), f, k, 0, ml);
            } else {
                pk.rest(g, tot, wr, nd.W - wr, buf.data(), f, k, 0, ml);
            }
        }
    }

    void find(Node& nd, const double* tot) {
        if constexpr (Crit::ranked) {
            pending.clear();
            find_ranked(nd, tot);
            return;
        }
        Split best;
        Picker<Crit> pk{crit, best, GAIN_TOL * crit.tie_unit(tot, P.C, nd.W), &batch, &pending, &P, mwl, nd.lo, nd.hi};
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
            const double* gm = h + (o + M) * S;
            const double wm = crit.weight(gm, C);
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

    // mark's step for the row at position p: its side (recorded in right[p] and, when asked,
    // as its child's id in P.leaf_of), and whether it misses the split's feature
    TL_INLINE bool side(int64_t p, int32_t r, const int32_t* cf, int32_t M, int32_t k, bool cat, bool mright,
                        bool& miss) {
        const int32_t x = cf[r];
        miss = x == M;
        const bool rr = miss ? mright : (cat ? (x == k) : (x >= k));
        right[p] = rr;
        if (P.leaf_of) P.leaf_of[r] = next_id + rr;
        return rr;
    }

    void mark(const Node& nd, double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        const int f = nd.best.feature;
        const int32_t k = nd.best.code;
        const bool cat = P.is_cat[f];
        const int32_t M = P.miss_code[f];  // -1 (no missing value) equals no code
        const bool mright = !nd.best.mleft;
        const int32_t* cf = P.codes + (size_t)f * P.n;
        nl = nr = nm = 0;
        lrows.clear();
        rrows.clear();
        if constexpr (!Crit::ranked) {
            const int T = node_threads(nd.end - nd.start);
            if (T > 1) return mark_threaded(nd, T, cf, M, k, cat, mright, cl, cr, nl, nr, nm);
        }
        if constexpr (Crit::moments && !Crit::ranked) {
            if (P.C == 3) return mark3(nd, cf, M, k, cat, mright, cl, cr, nl, nr, nm);
        }
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            bool miss;
            const bool rr = side(p, r, cf, M, k, cat, mright, miss);
            nm += miss;
            if constexpr (Crit::ranked) (rr ? rrows : lrows).push_back(r);
            const int32_t cls = Crit::moments ? 0 : (int32_t)P.y[r];
            if (rr) { add_row<Crit>(P, cr, r, cls, P.w[r]); ++nr; }
            else { add_row<Crit>(P, cl, r, cls, P.w[r]); ++nl; }
        }
    }

    // mark for one output's three channels: the sides' sums in registers (SideSums3)
    void mark3(const Node& nd, const int32_t* cf, int32_t M, int32_t k, bool cat, bool mright, double* cl,
               double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        SideSums3 sums(cl, cr);
        int64_t n_right = 0, n_miss = 0;
        const double* st = P.stats;
        for (int64_t p = nd.start; p < nd.end; ++p) {
            if (p + PREFETCH < nd.end) {  // (as in count_row_moments)
                const int64_t q = rows[p + PREFETCH];
                __builtin_prefetch(cf + q);
                __builtin_prefetch(st + q * 3);
                __builtin_prefetch(st + q * 3 + 2);
            }
            const int32_t r = rows[p];
            bool miss;
            const bool rr = side(p, r, cf, M, k, cat, mright, miss);
            n_miss += miss;
            n_right += rr;
            sums.add(rr, st + (size_t)r * 3);
        }
        sums.store(cl, cr);
        nr = n_right;
        nl = (nd.end - nd.start) - n_right;
        nm = n_miss;
    }

    // mark on T threads: thread 0 sums the sides' channels in the rows' order (each row's side
    // read from its code, nothing written: the same additions as mark's), threads 1..T-1 record
    // the sides (right, P.leaf_of) and count them over chunks of the rows
    TL_COLD_PATH void mark_threaded(const Node& nd, int T, const int32_t* cf, int32_t M, int32_t k, bool cat, bool mright,
                       double* cl, double* cr, int64_t& nl, int64_t& nr, int64_t& nm) {
        std::vector<int64_t> n_right((size_t)T, 0), n_miss((size_t)T, 0);
        const int64_t m = nd.end - nd.start;
        tl::run_workers(T, [&](int t) {
            if (t == 0) {
                sum_sides(nd, cf, M, k, cat, mright, cl, cr);
                return;
            }
            const int64_t p0 = nd.start + m * (t - 1) / (T - 1), p1 = nd.start + m * t / (T - 1);
            int64_t a = 0, b = 0;
            for (int64_t p = p0; p < p1; ++p) {
                if (p + PREFETCH < p1) __builtin_prefetch(cf + rows[p + PREFETCH]);
                bool miss;
                a += side(p, rows[p], cf, M, k, cat, mright, miss);
                b += miss;
            }
            n_right[(size_t)t] = a;
            n_miss[(size_t)t] = b;
        });
        for (int t = 1; t < T; ++t) { nr += n_right[(size_t)t]; nm += n_miss[(size_t)t]; }
        nl = m - nr;
    }

    // the sides' sums of mark (mark3's for one output's three channels, add_row's otherwise)
    void sum_sides(const Node& nd, const int32_t* cf, int32_t M, int32_t k, bool cat, bool mright, double* cl,
                   double* cr) {
        if constexpr (Crit::moments) {
            if (P.C == 3) {
                SideSums3 sums(cl, cr);
                const double* st = P.stats;
                for (int64_t p = nd.start; p < nd.end; ++p) {
                    if (p + PREFETCH < nd.end) {
                        const int64_t q = rows[p + PREFETCH];
                        __builtin_prefetch(cf + q);
                        __builtin_prefetch(st + q * 3);
                        __builtin_prefetch(st + q * 3 + 2);
                    }
                    const int32_t r = rows[p];
                    const int32_t x = cf[r];
                    const bool rr = x == M ? mright : (cat ? (x == k) : (x >= k));
                    sums.add(rr, st + (size_t)r * 3);
                }
                sums.store(cl, cr);
                return;
            }
        }
        for (int64_t p = nd.start; p < nd.end; ++p) {
            const int32_t r = rows[p];
            const int32_t x = cf[r];
            const bool rr = x == M ? mright : (cat ? (x == k) : (x >= k));
            const int32_t cls = Crit::moments ? 0 : (int32_t)P.y[r];
            add_row<Crit>(P, rr ? cr : cl, r, cls, P.w[r]);
        }
    }

    // stable partition of the row range; histograms: smaller child built, larger by subtraction
    void partition(Node& nd, int64_t nl, Node& L, Node& R, bool needL, bool needR) {
        const int T = node_threads(nd.end - nd.start);
        if (T > 1) {
            partition_threaded(nd, nl, T);
        } else {
            int64_t li = nd.start, ri = 0;
            for (int64_t p = nd.start; p < nd.end; ++p) {
                const int32_t r = rows[p];
                const uint8_t g = right[p];
                rows[li] = r;
                tmp[ri] = r;
                li += 1 - g;
                ri += g;
            }
            std::memcpy(rows.data() + li, tmp.data(), (size_t)ri * sizeof(int32_t));
        }
        L.start = nd.start; L.end = nd.start + nl;
        R.start = nd.start + nl; R.end = nd.end;
        if (Crit::ranked || (!needL && !needR)) return;  // (a ranked criterion keeps no histogram)
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
            int64_t* ac = cpool[large->hist].data();
            const int64_t* pc = cpool[nd.hist].data();
            const int64_t* sc = cpool[small->hist].data();
            // cell by cell (a difference per cell: any split of the cells gives the same bits)
            const int T = node_threads(small->end - small->start);
            if (T == 1) {
                subtract(a, pp, s, 0, hsize);
                subtract(ac, pc, sc, 0, csize);
            } else {
                subtract_threaded(a, pp, s, ac, pc, sc, T);
            }
            digest(large->hist);
            if (!need_small) release(*small);
        } else {
            if (need_small) build(*small);
            if (need_large) build(*large);
        }
    }

    TL_COLD_PATH void subtract_threaded(double* a, const double* pp, const double* s, int64_t* ac,
                                        const int64_t* pc, const int64_t* sc, int T) {
        tl::run_workers(T, [&](int t) {
            int f0, f1;
            feature_block(t, T, f0, f1);
            subtract(a, pp, s, offset[f0] * S, offset[f1] * S);
            subtract(ac, pc, sc, offset[f0], offset[f1]);
        });
    }

    // a[i] = p[i] - s[i] for i in [i0, i1) (arguments by value: a loop the compiler vectorises)
    template <class V>
    static void subtract(V* a, const V* p, const V* s, int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) a[i] = p[i] - s[i];
    }

    // partition's stable moves on T threads: per chunk of positions, its left rows counted, then
    // each chunk's rows copied to tmp at its offsets (left rows first) and tmp back to the range
    TL_COLD_PATH void partition_threaded(const Node& nd, int64_t nl, int T) {
        const int64_t m = nd.end - nd.start;
        std::vector<int64_t> lefts((size_t)T + 1, 0);
        auto chunk = [&](int t, int64_t& p0, int64_t& p1) {
            p0 = nd.start + m * t / T;
            p1 = nd.start + m * (t + 1) / T;
        };
        tl::run_workers(T, [&](int t) {
            int64_t p0, p1, a = 0;
            chunk(t, p0, p1);
            for (int64_t p = p0; p < p1; ++p) a += 1 - right[p];
            lefts[(size_t)t + 1] = a;
        });
        for (int t = 0; t < T; ++t) lefts[(size_t)t + 1] += lefts[(size_t)t];
        int32_t* out = tmp.data();
        tl::run_workers(T, [&](int t) {
            int64_t p0, p1;
            chunk(t, p0, p1);
            int64_t li = lefts[(size_t)t], ri = nl + (p0 - nd.start) - lefts[(size_t)t];
            for (int64_t p = p0; p < p1; ++p) {
                const int32_t r = rows[p];
                const uint8_t g = right[p];
                out[g ? ri : li] = r;
                li += 1 - g;
                ri += g;
            }
        });
        tl::run_workers(T, [&](int t) {
            const int64_t q0 = m * t / T, q1 = m * (t + 1) / T;
            std::memcpy(rows.data() + nd.start + q0, out + q0, (size_t)(q1 - q0) * sizeof(int32_t));
        });
    }
};

}  // namespace tl::greedy
