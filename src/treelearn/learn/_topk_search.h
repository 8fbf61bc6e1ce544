// Top-k / optimal decision-tree search (003 Fig. 1, optimised as in Fig. 5 and beyond).
//
// Semantics (exactly Fig. 1): at a node with depth budget h and sample S, if h = 0, S is pure or
// no feature splits S, return the best constant (majority, ties to the lowest class code).
// Otherwise score every feature that splits S (both sides non-empty; a feature queried higher
// on the path never splits S) with H, take the k best (ties by feature index), build T_i for
// each and return the one with the fewest (weighted) training errors on S (ties by rank).
//
// Accelerations, none of which changes the returned error:
// * nodes are solved on their own rows: the rows reaching a node are re-packed into a local
//   column bitset matrix (gather of row-major bits + 64x64 bit transposes), so counting costs
//   O(d * m / 64) for a node of m rows (the BinaryData contract: rows in, per-feature per-class
//   counts out, by AND + popcount);
// * an exact cache keyed by (cover bitset, remaining depth) holding the solved error and split
//   or a lower bound (a failed branch-and-bound call), with a memory cap (evict all, count it);
// * branch-and-bound: an upper bound passed down (a child must beat best - sibling's bound),
//   loops stop on a zero-error (or lower-bound-reaching) candidate;
// * a specialised depth-2 step: for each root candidate one counting pass over the node's
//   local matrix gives the f = 1 child's counts, the f = 0 child's by subtraction, and every
//   depth-1 subtree is read off those counts;
// * a candidate whose partition equals (or complements) an earlier candidate's is skipped
//   (identical subproblems, and ties go to the earlier rank);
// * optimum only (k = all): similarity lower bounds (opt(S) >= opt(S') - |S' \ S|), a symmetric
//   pair-count matrix per depth-2 node, and at depth-3 nodes the children's matrices as the
//   smaller child's plus the node's minus it (MurTree / STreeD's depth-2 solver ideas);
// * both children are bounded (cache entries, similarity) before either is solved;
// * anytime: on time_limit the best tree found so far is returned (timed_out flag).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "tl_bitpack.h"

namespace tltopk {

using u64 = uint64_t;
static const double INF = std::numeric_limits<double>::infinity();

static inline int popc(u64 x) { return __builtin_popcountll(x); }
static inline int ctz(u64 x) { return __builtin_ctzll(x); }

using tlbits::transpose64;  // 64x64 bit transpose (tl_bitpack.h)

struct Params {
    int n = 0, d = 0, C = 2, nw = 0;
    const u64* columns = nullptr;  // (d, nw) packed feature columns (BinaryData.columns)
    const int64_t* y = nullptr;    // class codes
    const double* w = nullptr;     // sample weights or nullptr
    int k = 1;                     // candidates per node (>= d: all -> optimal)
    int max_depth = 3;
    int crit = 0;                  // 0 entropy, 1 gini, 2 kearns-mansour, 3 user G (cost_cb)
    int gain_ratio = 0;
    // crit = 3: cost_cb(ctx, counts, rows, C, out) sets out[r] = (weight of row r) * impurity of
    // the class counts counts[r * C .. r * C + C - 1], for a batch of rows; nonzero = failure
    int (*cost_cb)(void*, const double*, int, int, double*) = nullptr;
    void* cost_ctx = nullptr;
    double time_limit = 0.0;       // seconds, <= 0: none
    double mem_limit_bytes = 1e9;  // cache cap
    int n_jobs = 1;
    int cache_depth1 = 1;  // also cache depth-1 subproblems
};

struct Output {
    std::vector<int> feature, left, right;
    std::vector<double> value;  // n_nodes * C
    std::vector<int64_t> nsamp;
    double error = 0.0;
    double root_lb = 0.0;
    bool timed_out = false;
    bool cost_failed = false;  // the user criterion raised (the search stopped)
    long long nodes = 0, cache_hits = 0, evictions = 0, cache_entries = 0;
    double peak_bytes = 0.0;
};

// x ln x for x = 0..n: a process-wide table grown on demand (a log per row costs a small search
// a fifth of its time), copied out under a lock so that concurrent searches never share it
inline void xlogx_table(int n, std::vector<double>& out) {
    static std::mutex mu;
    static std::vector<double> table(1, 0.0);
    std::lock_guard<std::mutex> lock(mu);
    if ((int)table.size() <= n) {
        int i = (int)table.size();
        table.resize((size_t)n + 1);
        for (; i <= n; ++i) table[i] = (double)i * std::log((double)i);
    }
    out.assign(table.begin(), table.begin() + n + 1);
}

struct Data {
    int n, d, C, nw, dw, k, crit;
    bool weighted, gr;
    int (*cost_cb)(void*, const double*, int, int, double*) = nullptr;
    void* cost_ctx = nullptr;
    mutable std::atomic<bool> cost_failed{false};
    std::vector<u64> rowbits;  // n * dw, row-major: bits 0..d-1 the features, d + c the class c
    std::vector<u64> colbits;  // d * nw, column-major (BinaryData.columns)
    std::vector<u64> clsbits;  // C * nw, the rows of each class
    std::vector<int32_t> y;
    std::vector<double> w;
    std::vector<double> xl;    // x ln x for integers 0..n
    explicit Data(const Params& P) {
        n = P.n; d = P.d; C = P.C; nw = P.nw; dw = (d + C + 63) / 64; k = P.k; crit = P.crit;
        cost_cb = P.cost_cb;
        cost_ctx = P.cost_ctx;
        gr = P.gain_ratio != 0;
        weighted = P.w != nullptr;
        y.resize(n);
        for (int i = 0; i < n; ++i) y[i] = (int32_t)P.y[i];
        if (weighted) w.assign(P.w, P.w + n);
        rowbits.assign((size_t)n * dw, 0);
        colbits.assign(P.columns, P.columns + (size_t)d * nw);
        clsbits.assign((size_t)C * nw, 0);
        for (int i = 0; i < n; ++i) clsbits[(size_t)y[i] * nw + (i >> 6)] |= 1ULL << (i & 63);
        u64 blk[64];
        for (int b = 0; b < nw; ++b) {
            int rn = std::min(64, n - b * 64);
            for (int fb = 0; fb < dw; ++fb) {
                for (int t = 0; t < 64; ++t) {
                    const int j = fb * 64 + t;
                    blk[t] = j < d ? P.columns[(size_t)j * nw + b] : j < d + C ? clsbits[(size_t)(j - d) * nw + b] : 0;
                }
                transpose64(blk);  // now blk[i] bit t = feature fb*64+t of row b*64+i
                for (int i = 0; i < rn; ++i) rowbits[(size_t)(b * 64 + i) * dw + fb] = blk[i];
            }
        }
        xlogx_table(n, xl);
    }
    inline bool bit(int row, int f) const { return (rowbits[(size_t)row * dw + (f >> 6)] >> (f & 63)) & 1; }
};

struct Res {
    double err;  // ok: the subtree's error (< ub); !ok: a lower bound (>= ub)
    int f;       // root feature of the subtree, -1 for a leaf
    bool ok;
};

struct Key {
    u64 hash;
    size_t off;
    int h;
};
struct Entry {
    double err;  // solved: error; lower-bound entry: the bound
    int f;
    uint8_t status;  // 0: lower bound only, 1: solved, 2: anytime (search timed out)
};

template <typename CT>
class Searcher {
  public:
    static constexpr bool W = std::is_same<CT, double>::value;
    struct KeyHash {
        size_t operator()(const Key& k) const { return (size_t)(k.hash ^ ((u64)k.h * 0x9E3779B97F4A7C15ULL)); }
    };
    struct KeyEq {
        const std::vector<u64>* arena;
        int nw;
        bool operator()(const Key& a, const Key& b) const {
            return a.hash == b.hash && a.h == b.h &&
                   std::memcmp(arena->data() + a.off, arena->data() + b.off, sizeof(u64) * nw) == 0;
        }
    };
    struct Level {
        std::vector<int32_t> rows;
        int m = 0, wl = 0;
        std::vector<u64> M, cls, mc, cover, tmpmask, child0, child1;
        std::vector<int32_t> ly;
        std::vector<double> lw;
        std::vector<CT> cnt, cntf, cnt0, tot;
        std::vector<int32_t> rc, rcf, rc0;
        std::vector<std::pair<int64_t, int>> keyed;
        std::vector<int> cand, cand1, cand0;
        std::vector<std::pair<int64_t, int>> keyed1;
        std::vector<std::pair<u64, int>> hk;
        std::vector<int> cls_of, reps, mult, off, members, leaders;
        u64 hash = 0;
        bool cover_ready = false;  // cover set by the parent (its cover AND the split column)
        // the frame the node counts in: its own local matrix (build_local), or, for an h >= 3
        // node of an unweighted Top-k search, an ancestor's with the node's rows as a mask
        // (a node that counts once does not repay a re-pack of its rows)
        const u64* FM = nullptr;      // frame columns (d, FW)
        const u64* FC = nullptr;      // frame class bitsets (C, FW)
        const int32_t* FR = nullptr;  // frame position -> row
        int FW = 0;
        std::vector<u64> fvalid;      // the node's rows in the frame (FW words)
        bool frame_ready = false;     // frame and fvalid set by the parent
        std::vector<u64> sim_cover;
        double sim_val[2] = {0, 0};
        int sim_h[2] = {-1, -1};
        bool sim_valid[2] = {false, false};
        int sim_next = 0;
    };

    const Data& D;
    int d, C, nw, K;
    bool all_k;
    std::vector<Level> lv;
    std::vector<u64> arena;
    std::unordered_map<Key, Entry, KeyHash, KeyEq> cache;
    double mem_cap;
    double peak = 0.0, fixed_bytes = 0.0;
    long long nodes = 0, hits = 0, evictions = 0;
    bool recon = false;
    bool c1cache = true;
    bool use_sim = true;
    bool use_reps = true;
    bool use_child_lb = true;
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
    // time limit
    std::chrono::steady_clock::time_point t0;
    double time_limit;
    std::atomic<bool>* stop;
    unsigned tick = 0;
    std::vector<u64> ones;

    Searcher(const Data& data, int max_depth, double mem_cap_bytes, double tl, std::atomic<bool>* stopflag,
             std::chrono::steady_clock::time_point start)
        : D(data), d(data.d), C(data.C), nw(data.nw), K(data.k),
          cache(16, KeyHash(), KeyEq{&arena, data.nw}), mem_cap(mem_cap_bytes), t0(start), time_limit(tl),
          stop(stopflag) {
        all_k = K >= d;
        lv.resize(max_depth + 2);
        size_t Mw = (size_t)d * nw;
        for (auto& v : lv) {
            v.rows.resize(D.n);
            v.cls.resize((size_t)C * nw);
            v.mc.resize((size_t)C * nw);
            v.cover.resize(nw);
            v.fvalid.resize(nw);
            v.child0.resize(nw);
            v.child1.resize(nw);
            v.sim_cover.resize(2 * (size_t)nw);
            v.tmpmask.resize(nw);
            v.ly.resize(D.n);
            if (W) v.lw.resize(D.n);
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
        use_pairs = all_k && (double)sizeof(CT) * d * d * C + 4.0 * d * d <= std::min(512.0 * 1024 * 1024, mem_cap);
        use_sub = use_pairs && !W && max_depth >= 3 &&
                  3.0 * ((double)sizeof(CT) * d * d * C + 4.0 * d * d) <= std::min(512.0 * 1024 * 1024, mem_cap);
        if (use_sub) {
            PS.resize((size_t)d * d * C);
            PT.resize((size_t)d * d * C);
            PRS.resize((size_t)d * d);
            PRT.resize((size_t)d * d);
            sdone.assign(d, 0);
            fixed_bytes += 2.0 * ((double)sizeof(CT) * d * d * C + 4.0 * d * d);
        }
        if (use_pairs) {
            PM.resize((size_t)d * d * C);
            PR.resize((size_t)d * d);
            pdone.assign(d, 0);
            mcf.resize((size_t)C * nw);
            fixed_bytes += (double)sizeof(CT) * d * d * C + 4.0 * d * d;
        }
        fixed_bytes = (double)lv.size() * (8.0 * (Mw + 3.0 * C * nw + 2 * nw) + 4.0 * 2 * D.n + (W ? 8.0 * D.n : 0) +
                                          3.0 * sizeof(CT) * d * C + 12.0 * d + 16.0 * d);
        peak = fixed_bytes;
    }

    bool timed_out() {
        if (stop->load(std::memory_order_relaxed)) return true;
        if (time_limit > 0 && ((++tick) & 63) == 0) {
            double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (el >= time_limit) {
                stop->store(true);
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ cache
    double cache_bytes() const {
        return 8.0 * (double)arena.capacity() + (double)cache.size() * (sizeof(Key) + sizeof(Entry) + 24.0) +
               8.0 * (double)cache.bucket_count();
    }
    u64 hash_words(const u64* cover, int m) const {
        // four independent multiply-xor lanes (no serial dependency across all words), mixed
        u64 a = 0x243F6A8885A308D3ULL ^ (u64)m, b = 0x13198A2E03707344ULL, c = 0xA4093822299F31D0ULL,
            e = 0x082EFA98EC4E6C89ULL;
        int i = 0;
        for (; i + 4 <= nw; i += 4) {
            a = (a ^ cover[i]) * 0xff51afd7ed558ccdULL;
            b = (b ^ cover[i + 1]) * 0xc4ceb9fe1a85ec53ULL;
            c = (c ^ cover[i + 2]) * 0x9E3779B97F4A7C15ULL;
            e = (e ^ cover[i + 3]) * 0xD6E8FEB86659FD93ULL;
            a ^= a >> 29;
            b ^= b >> 31;
            c ^= c >> 27;
            e ^= e >> 33;
        }
        for (; i < nw; ++i) {
            a = (a ^ cover[i]) * 0xff51afd7ed558ccdULL;
            a ^= a >> 29;
        }
        u64 h = a ^ (b * 0x9E3779B97F4A7C15ULL) ^ (c * 0xc4ceb9fe1a85ec53ULL) ^ (e * 0xff51afd7ed558ccdULL);
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        return h;
    }
    void make_cover(Level& v) {
        std::fill(v.cover.begin(), v.cover.end(), 0ULL);
        for (int i = 0; i < v.m; ++i) {
            int r = v.rows[i];
            v.cover[r >> 6] |= 1ULL << (r & 63);
        }
        v.hash = hash_words(v.cover.data(), v.m);
    }
    bool lookup_c(const u64* cover, u64 hash, int h, Entry& out) {
        size_t off = arena.size();
        arena.insert(arena.end(), cover, cover + nw);
        auto it = cache.find(Key{hash, off, h});
        arena.resize(off);
        if (it == cache.end()) return false;
        out = it->second;
        ++hits;
        return true;
    }
    void store_c(const u64* cover, u64 hash, int h, const Entry& e) {
        double bytes = cache_bytes() + 8.0 * nw + 64.0;
        if (bytes > mem_cap && !cache.empty()) {
            cache.clear();
            arena.clear();
            arena.shrink_to_fit();
            std::unordered_map<Key, Entry, KeyHash, KeyEq> fresh(16, KeyHash(), KeyEq{&arena, nw});
            cache.swap(fresh);
            ++evictions;
        }
        size_t off = arena.size();
        arena.insert(arena.end(), cover, cover + nw);
        auto res = cache.emplace(Key{hash, off, h}, e);
        if (!res.second) {
            arena.resize(off);
            res.first->second = e;
        }
        double now = fixed_bytes + cache_bytes();
        if (now > peak) peak = now;
    }
    bool lookup(const Level& v, int h, Entry& out) { return lookup_c(v.cover.data(), v.hash, h, out); }
    void store(const Level& v, int h, const Entry& e) { store_c(v.cover.data(), v.hash, h, e); }

    // ------------------------------------------------------------------ node data
    void totals(Level& v, CT* tot, double& Wsum) {
        for (int c = 0; c < C; ++c) tot[c] = 0;
        if (!W && v.cover_ready && (long long)C * nw < (long long)v.m) {
            // popcounts of the cover AND each class's rows (fewer words than rows to visit)
            for (int c = 0; c < C; ++c) {
                const u64* cb = &D.clsbits[(size_t)c * nw];
                int t = 0;
                for (int i = 0; i < nw; ++i) t += popc(v.cover[i] & cb[i]);
                tot[c] = (CT)t;
            }
        } else if (W) {
            for (int i = 0; i < v.m; ++i) tot[D.y[v.rows[i]]] += (CT)D.w[v.rows[i]];
        } else {
            for (int i = 0; i < v.m; ++i) tot[D.y[v.rows[i]]] += 1;
        }
        Wsum = 0;
        for (int c = 0; c < C; ++c) Wsum += (double)tot[c];
    }
    static double leaf_error(const CT* tot, int C_, double Wsum) {
        double mx = 0;
        for (int c = 0; c < C_; ++c) mx = std::max(mx, (double)tot[c]);
        return W ? std::max(0.0, Wsum - mx) : Wsum - mx;
    }
    int n_present(const CT* tot) const {
        int p = 0;
        for (int c = 0; c < C; ++c) p += tot[c] > 0;
        return p;
    }

    void build_local(Level& v) {
        int m = v.m, wl = (m + 63) / 64;
        v.wl = wl;
        // grown on demand: a level deep in the tree never touches the memory of a root-sized matrix
        if (v.M.size() < (size_t)d * wl) v.M.resize((size_t)d * wl);
        v.FM = v.M.data();
        v.FC = v.cls.data();
        v.FR = v.rows.data();
        v.FW = wl;
        std::fill(v.fvalid.begin(), v.fvalid.begin() + wl, ~0ULL);
        if (m & 63) v.fvalid[wl - 1] = (1ULL << (m & 63)) - 1;
        if (m == D.n) {
            // every row, in order (rows are always ascending): the local matrix is the sample's own
            std::copy(D.colbits.begin(), D.colbits.end(), v.M.begin());
            std::copy(D.clsbits.begin(), D.clsbits.end(), v.cls.begin());
            if (W)
                for (int i = 0; i < m; ++i) {
                    v.ly[i] = D.y[i];
                    v.lw[i] = D.w[i];
                }
            return;
        }
        u64 blk[64];
        const int dw = D.dw;
        const u64* rb = D.rowbits.data();
        const int32_t* rows = v.rows.data();
        for (int b = 0; b < wl; ++b) {
            int r0 = b * 64, rn = std::min(64, m - r0);
            // the next block's rows are scattered over the sample: fetch them while this one is packed
            const int pn = std::min(64, m - r0 - 64);
            for (int i = 0; i < pn; ++i) __builtin_prefetch(rb + (size_t)rows[r0 + 64 + i] * dw);
            for (int fb = 0; fb < dw; ++fb) {
                for (int i = 0; i < rn; ++i) blk[i] = rb[(size_t)rows[r0 + i] * dw + fb];
                for (int i = rn; i < 64; ++i) blk[i] = 0;
                transpose64(blk);
                // columns fb*64 .. : features, then (bits d .. d+C-1 of a row) the class bitsets
                const int j0 = fb * 64;
                const int jf = std::max(0, std::min(64, d - j0));
                const int jc = std::min(64, d + C - j0);
                for (int t = 0; t < jf; ++t) v.M[(size_t)(j0 + t) * wl + b] = blk[t];
                for (int t = jf; t < jc; ++t) v.cls[(size_t)(j0 + t - d) * wl + b] = blk[t];
            }
        }
        if (W) {
            for (int i = 0; i < m; ++i) {
                int r = v.rows[i];
                v.ly[i] = D.y[r];
                v.lw[i] = D.w[r];
            }
        }
    }

    template <int WL>
    void count2_fixed(const u64* M, const u64* mask, const u64* m1, CT* cnt, int32_t* rc) const {
        u64 mk[WL], c1[WL];
        for (int i = 0; i < WL; ++i) {
            mk[i] = mask[i];
            c1[i] = m1[i];
        }
        for (int j = 0; j < d; ++j) {
            const u64* col = M + (size_t)j * WL;
            int t = 0, a = 0;
            for (int i = 0; i < WL; ++i) {
                t += popc(col[i] & mk[i]);
                a += popc(col[i] & c1[i]);
            }
            rc[j] = t;
            cnt[2 * j + 1] = (CT)a;
            cnt[2 * j] = (CT)(t - a);
        }
    }

    template <int WL>
    void countC_fixed(Level& v, const u64* mask, CT* cnt, int32_t* rc) const {
        u64 mk[WL];
        for (int i = 0; i < WL; ++i) mk[i] = mask[i];
        const u64* mc = v.mc.data();  // class bitsets AND mask, (C, WL)
        for (int j = 0; j < d; ++j) {
            const u64* col = v.FM + (size_t)j * WL;
            u64 cw[WL];
            int t = 0;
            for (int i = 0; i < WL; ++i) {
                cw[i] = col[i];
                t += popc(cw[i] & mk[i]);
            }
            rc[j] = t;
            int sacc = 0;
            for (int c = 1; c < C; ++c) {
                int a = 0;
                for (int i = 0; i < WL; ++i) a += popc(cw[i] & mc[(size_t)c * WL + i]);
                cnt[(size_t)j * C + c] = (CT)a;
                sacc += a;
            }
            cnt[(size_t)j * C] = (CT)(t - sacc);
        }
    }

    // total weight of the rows set in word x (word index i) for weights indexed by position
    static inline double weighted_count(u64 x, int i, const double* w) {
        double s = 0;
        while (x) {
            s += w[(i << 6) + ctz(x)];
            x &= x - 1;
        }
        return s;
    }
    // per-class weights of the rows in (a AND b) over wl words, local positions -> o (C values);
    // returns the number of rows
    int weighted_class_counts(const Level& v, const u64* a, const u64* b, int wl, CT* o) const {
        for (int c = 0; c < C; ++c) o[c] = 0;
        int t = 0;
        for (int i = 0; i < wl; ++i) {
            u64 x = a[i] & b[i];
            t += popc(x);
            while (x) {
                int r = (i << 6) + ctz(x);
                o[v.ly[r]] += (CT)v.lw[r];
                x &= x - 1;
            }
        }
        return t;
    }
    // per-class counts of the rows in (col AND mask) from the class bitsets already ANDed with
    // the mask (mc, (C, wl)); class 0 by subtraction; returns the number of rows
    int class_counts(const u64* col, const u64* mask, const u64* mc, int wl, CT* o) const {
        int t = 0;
        for (int i = 0; i < wl; ++i) t += popc(col[i] & mask[i]);
        int s = 0;
        for (int c = 1; c < C; ++c) {
            const u64* mcc = mc + (size_t)c * wl;
            int a = 0;
            for (int i = 0; i < wl; ++i) a += popc(col[i] & mcc[i]);
            o[c] = (CT)a;
            s += a;
        }
        o[0] = (CT)(t - s);
        return t;
    }

    // counts of feature = 1 per class among the frame's rows in mask (the node's frame)
    void count_pass(Level& v, const u64* mask, CT* cnt, int32_t* rc, const int* sel = nullptr, int nsel = -1) {
        const int wl = v.FW;
        const u64* FM = v.FM;
        const int nj = sel ? nsel : d;
        if (!W) {
            for (int c = 0; c < C; ++c)
                for (int i = 0; i < wl; ++i) v.mc[(size_t)c * wl + i] = v.FC[(size_t)c * wl + i] & mask[i];
            if (C == 2 && !sel && wl <= 4) {
                // small nodes: fixed-length inner loops (the common case deep in the search)
                const u64* m1 = &v.mc[wl];
                switch (wl) {
                    case 1: count2_fixed<1>(FM, mask, m1, cnt, rc); break;
                    case 2: count2_fixed<2>(FM, mask, m1, cnt, rc); break;
                    case 3: count2_fixed<3>(FM, mask, m1, cnt, rc); break;
                    default: count2_fixed<4>(FM, mask, m1, cnt, rc); break;
                }
            } else if (C > 2 && !sel && wl <= 4) {
                switch (wl) {
                    case 1: countC_fixed<1>(v, mask, cnt, rc); break;
                    case 2: countC_fixed<2>(v, mask, cnt, rc); break;
                    case 3: countC_fixed<3>(v, mask, cnt, rc); break;
                    default: countC_fixed<4>(v, mask, cnt, rc); break;
                }
            } else if (C == 2) {
                const u64* m1 = &v.mc[wl];
                for (int q = 0; q < nj; ++q) {
                    const int j = sel ? sel[q] : q;
                    const u64* col = FM + (size_t)j * wl;
                    int t = 0, a = 0;
                    for (int i = 0; i < wl; ++i) {
                        u64 x = col[i] & mask[i];
                        t += popc(x);
                        a += popc(col[i] & m1[i]);
                    }
                    rc[j] = t;
                    cnt[2 * j + 1] = (CT)a;
                    cnt[2 * j] = (CT)(t - a);
                }
            } else {
                for (int q = 0; q < nj; ++q) {
                    const int j = sel ? sel[q] : q;
                    rc[j] = class_counts(FM + (size_t)j * wl, mask, v.mc.data(), wl, &cnt[(size_t)j * C]);
                }
            }
        } else {
            for (int q = 0; q < nj; ++q) {
                const int j = sel ? sel[q] : q;
                rc[j] = weighted_class_counts(v, FM + (size_t)j * wl, mask, wl, &cnt[(size_t)j * C]);
            }
        }
    }

    // counts of (f AND j) per class for every j on an h = 2 node, reusing (j AND f) of rows
    // already computed on this node; copied into cntf / rcf
    void pair_row(Level& v, int f, CT* cntf, int32_t* rcf) {
        pair_fill(v, f, PM.data(), PR.data(), pdone.data());
        std::copy(&PM[(size_t)f * d * C], &PM[(size_t)f * d * C] + (size_t)d * C, cntf);
        std::copy(&PR[(size_t)f * d], &PR[(size_t)f * d] + d, rcf);
    }
    // fill row f of the pair matrix P (counts of f AND j per class) on node v's rows, reusing
    // rows already done
    void pair_fill(Level& v, int f, CT* P, int32_t* Pr, char* done) {
        const int wl = v.wl;
        CT* row = &P[(size_t)f * d * C];
        int32_t* prow = &Pr[(size_t)f * d];
        if (!done[f]) {
            const u64* cf = &v.M[(size_t)f * wl];
            if (!W)
                for (int c = 0; c < C; ++c)
                    for (int i = 0; i < wl; ++i) mcf[(size_t)c * wl + i] = cf[i] & v.cls[(size_t)c * wl + i];
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
                    const u64* cj = &v.M[(size_t)j * wl];
                    prow[j] = W ? weighted_class_counts(v, cj, cf, wl, o) : class_counts(cj, cf, mcf.data(), wl, o);
                }
            }
            done[f] = 1;
        }
    }
    // minimum depth-1 error (k = all, unweighted) of a child whose per-feature one-side counts
    // are P (or P - Q when Q is given); T: the child's class totals, m its rows. A feature that
    // does not split the child scores exactly the leaf's error, and a split never scores more,
    // so the minimum over every feature (no test, no early exit: the loop vectorises) is the
    // optimal depth <= 1 error.
    double d1_all(const CT* P, const CT* Q, const CT* T, int m) const {
        if (C == 2) {
            const int T0 = (int)T[0], T1 = (int)T[1];
            int bi = m - std::max(T0, T1);
            if (Q) {
                for (int j = 0; j < d; ++j) {
                    const int a0 = (int)(P[2 * j] - Q[2 * j]), a1 = (int)(P[2 * j + 1] - Q[2 * j + 1]);
                    bi = std::min(bi, m - std::max(a0, a1) - std::max(T0 - a0, T1 - a1));
                }
            } else {
                for (int j = 0; j < d; ++j) {
                    const int a0 = (int)P[2 * j], a1 = (int)P[2 * j + 1];
                    bi = std::min(bi, m - std::max(a0, a1) - std::max(T0 - a0, T1 - a1));
                }
            }
            return (double)bi;
        }
        int mx = 0;
        for (int c = 0; c < C; ++c) mx = std::max(mx, (int)T[c]);
        int bi = m - mx;
        for (int j = 0; j < d && bi > 0; ++j) {
            int m1 = 0, m0 = 0;
            for (int c = 0; c < C; ++c) {
                const int a = Q ? (int)(P[(size_t)j * C + c] - Q[(size_t)j * C + c]) : (int)P[(size_t)j * C + c];
                m1 = std::max(m1, a);
                m0 = std::max(m0, (int)T[c] - a);
            }
            bi = std::min(bi, m - m1 - m0);
        }
        return (double)bi;
    }

    // PM := the child's pair matrix: PT (the smaller child) or PS - PT (the other one)
    void set_child_pairs(bool is_small) {
        const size_t nP = (size_t)d * d * C, nR = (size_t)d * d;
        if (is_small) {
            std::copy(PT.begin(), PT.end(), PM.begin());
            std::copy(PRT.begin(), PRT.end(), PR.begin());
        } else {
            for (size_t q = 0; q < nP; ++q) PM[q] = PS[q] - PT[q];
            for (size_t q = 0; q < nR; ++q) PR[q] = PRS[q] - PRT[q];
        }
    }
    // the whole pair matrix of node v (needs v.cnt / v.rc of v itself)
    void full_pairs(Level& v, CT* P, int32_t* Pr) {
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

    // ------------------------------------------------------------------ scoring
    inline double flog(double x) const { return x > 0 ? x * std::log(x) : 0.0; }
    inline double side_cost(const double* a, double ns, int nsr) const {
        // n_s * impurity(side) up to a constant factor
        if (D.crit == 0) {
            double s = W ? flog(ns) : D.xl[nsr];
            if (W) {
                for (int c = 0; c < C; ++c) s -= flog(a[c]);
            } else {
                for (int c = 0; c < C; ++c) s -= D.xl[(int)a[c]];
            }
            return s;
        } else if (D.crit == 1) {
            if (ns <= 0) return 0.0;
            double q = 0;
            for (int c = 0; c < C; ++c) q += a[c] * a[c];
            return ns - q / ns;
        } else {
            double s = 0;
            for (int c = 0; c < C; ++c) {
                double r = a[c] * (ns - a[c]);
                s += r > 0 ? std::sqrt(r) : 0.0;
            }
            return s;
        }
    }
    // key of feature j (lower = better); A: one-side counts (d*C), T: node totals
    inline int64_t key_of(const CT* Aj, int n1, const CT* T, double Wn, int m, double pcost) const {
        double a1[64], a0[64];
        double* one = a1;
        double* zero = a0;
        std::vector<double> big1, big0;
        if (C > 64) {
            big1.resize(C);
            big0.resize(C);
            one = big1.data();
            zero = big0.data();
        }
        double w1 = 0;
        for (int c = 0; c < C; ++c) {
            one[c] = (double)Aj[c];
            zero[c] = (double)(T[c] - Aj[c]);
            w1 += one[c];
        }
        double w0 = W ? std::max(0.0, Wn - w1) : (double)(m - n1);
        if (!W) w1 = (double)n1;
        double cost = side_cost(one, w1, n1) + side_cost(zero, w0, m - n1);
        if (cost < 0) cost = 0;
        if (!D.gr) return (int64_t)(cost * (1e9 / Wn) + 0.5);
        double gain = (pcost - cost) / Wn;
        double p = w1 / Wn, q = w0 / Wn;
        double si = 0;
        if (p > 0) si -= p * std::log(p);
        if (q > 0) si -= q * std::log(q);
        double ratio = si > 0 ? gain / si : 0.0;
        if (ratio < 0) ratio = 0;
        return -(int64_t)(ratio * 1e9 + 0.5);
    }
    double parent_cost(const CT* T, double Wn, int m) const {
        double t[64];
        std::vector<double> big;
        double* tt = t;
        if (C > 64) {
            big.resize(C);
            tt = big.data();
        }
        for (int c = 0; c < C; ++c) tt[c] = (double)T[c];
        return side_cost(tt, Wn, m);
    }
    // fast specialised key for unweighted binary entropy (the hot loop of Top-k)
    inline int64_t key_fast_ent2(const CT* Aj, int n1, const CT* T, int m, double scale) const {
        const double* xl = D.xl.data();
        int a0 = (int)Aj[0], a1 = (int)Aj[1];
        double cost = xl[n1] + xl[m - n1] - xl[a0] - xl[a1] - xl[(int)T[0] - a0] - xl[(int)T[1] - a1];
        if (cost < 0) cost = 0;
        return (int64_t)(cost * scale + 0.5);
    }

    inline int64_t key_fast_entC(const CT* Aj, int n1, const CT* T, int m, double scale) const {
        const double* xl = D.xl.data();
        double cost = xl[n1] + xl[m - n1];
        for (int c = 0; c < C; ++c) {
            int a = (int)Aj[c];
            cost -= xl[a] + xl[(int)T[c] - a];
        }
        if (cost < 0) cost = 0;
        return (int64_t)(cost * scale + 0.5);
    }

    // candidates of a node (rank order) from its counts
    // user criterion: one batched call for the two sides of every splitting feature (and the
    // parent for the gain ratio); keys as key_of makes them
    std::vector<double> cb_in, cb_out;
    std::vector<int> cb_j;
    void rank_custom(const CT* A, const int32_t* R, const CT* T, double Wn, int m, std::vector<int>& out,
                     std::vector<std::pair<int64_t, int>>& keyed) {
        cb_j.clear();
        for (int j = 0; j < d; ++j)
            if (R[j] != 0 && R[j] != m) cb_j.push_back(j);
        const int nf = (int)cb_j.size();
        const int rows = 2 * nf + 1;
        cb_in.assign((size_t)rows * C, 0.0);
        cb_out.assign(rows, 0.0);
        for (int q = 0; q < nf; ++q) {
            const CT* Aj = A + (size_t)cb_j[q] * C;
            for (int c = 0; c < C; ++c) {
                cb_in[(size_t)(2 * q) * C + c] = (double)Aj[c];
                cb_in[(size_t)(2 * q + 1) * C + c] = std::max(0.0, (double)(T[c] - Aj[c]));
            }
        }
        for (int c = 0; c < C; ++c) cb_in[(size_t)(2 * nf) * C + c] = (double)T[c];
        if (D.cost_failed.load() || D.cost_cb(D.cost_ctx, cb_in.data(), rows, C, cb_out.data()) != 0) {
            D.cost_failed.store(true);
            stop->store(true);
            return;  // no candidates: the node becomes a leaf; the caller raises the error
        }
        const double pcost = cb_out[2 * nf];
        for (int q = 0; q < nf; ++q) {
            const int j = cb_j[q];
            double cost = cb_out[2 * q] + cb_out[2 * q + 1];
            int64_t key;
            if (!D.gr) {
                if (cost < 0) cost = 0;
                key = (int64_t)(cost * (1e9 / Wn) + 0.5);
            } else {
                double w1 = 0;
                for (int c = 0; c < C; ++c) w1 += cb_in[(size_t)(2 * q) * C + c];
                double w0 = std::max(0.0, Wn - w1);
                double gain = (pcost - cost) / Wn, p = w1 / Wn, qq = w0 / Wn, si = 0;
                if (p > 0) si -= p * std::log(p);
                if (qq > 0) si -= qq * std::log(qq);
                double ratio = si > 0 ? gain / si : 0.0;
                if (ratio < 0) ratio = 0;
                key = -(int64_t)(ratio * 1e9 + 0.5);
            }
            keyed.emplace_back(key, j);
        }
        std::sort(keyed.begin(), keyed.end());
        const int KK = all_k ? (int)keyed.size() : std::min<int>(K, (int)keyed.size());
        for (int i = 0; i < KK; ++i) out.push_back(keyed[i].second);
    }

    void rank(const CT* A, const int32_t* R, const CT* T, double Wn, int m, std::vector<int>& out,
              std::vector<std::pair<int64_t, int>>& keyed) {
        out.clear();
        keyed.clear();
        if (D.crit == 3) {
            rank_custom(A, R, T, Wn, m, out, keyed);
            return;
        }
        double pc = D.gr ? parent_cost(T, Wn, m) : 0.0;
        const bool fast = !W && C == 2 && D.crit == 0 && !D.gr;
        const bool fastC = !W && D.crit == 0 && !D.gr;
        const double scale = 1e9 / Wn;
        if (all_k || K >= d) {
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                int64_t key = fast ? key_fast_ent2(A + (size_t)j * C, n1, T, m, scale)
                                   : fastC ? key_fast_entC(A + (size_t)j * C, n1, T, m, scale)
                                           : key_of(A + (size_t)j * C, n1, T, Wn, m, pc);
                keyed.emplace_back(key, j);
            }
            std::sort(keyed.begin(), keyed.end());
            for (auto& p : keyed) out.push_back(p.second);
            return;
        }
        // top-K selection, keyed kept sorted by (key, j); j ascending so equal keys lose
        int64_t kk[1024];
        int jj[1024];
        std::vector<int64_t> bigk;
        std::vector<int> bigj;
        int64_t* ks = kk;
        int* js = jj;
        if (K > 1024) {
            bigk.resize(K);
            bigj.resize(K);
            ks = bigk.data();
            js = bigj.data();
        }
        int cntk = 0;
        // insert (key, j) into the sorted K best (j ascending, so an equal key never displaces
        // an earlier feature); false when it is not among them
        auto push_topk = [&](int64_t key, int j) -> bool {
            if (cntk == K) {
                if (key >= ks[K - 1]) return false;
                --cntk;
            }
            int p = cntk;
            while (p > 0 && ks[p - 1] > key) {
                ks[p] = ks[p - 1];
                js[p] = js[p - 1];
                --p;
            }
            ks[p] = key;
            js[p] = j;
            ++cntk;
            return true;
        };
        if (fast || fastC) {
            // unweighted entropy: skip a feature on its raw cost when it is clearly above the
            // K-th best key (two quanta of margin), else quantise as everywhere else
            const double* xl = D.xl.data();
            const int T0 = (int)T[0], T1 = C > 1 ? (int)T[1] : 0;
            double thr = INF;
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                double cost;
                if (fast) {
                    int a0 = (int)A[2 * j], a1 = (int)A[2 * j + 1];
                    cost = xl[n1] + xl[m - n1] - xl[a0] - xl[a1] - xl[T0 - a0] - xl[T1 - a1];
                } else {
                    const CT* Aj = A + (size_t)j * C;
                    cost = xl[n1] + xl[m - n1];
                    for (int c = 0; c < C; ++c) {
                        int a = (int)Aj[c];
                        cost -= xl[a] + xl[(int)T[c] - a];
                    }
                }
                if (cost > thr) continue;
                if (cost < 0) cost = 0;
                if (push_topk((int64_t)(cost * scale + 0.5), j) && cntk == K)
                    thr = ((double)ks[K - 1] + 2.0) / scale;
            }
            for (int i = 0; i < cntk; ++i) out.push_back(js[i]);
            return;
        }
        for (int j = 0; j < d; ++j) {
            int n1 = R[j];
            if (n1 == 0 || n1 == m) continue;
            int64_t key = fast ? key_fast_ent2(A + (size_t)j * C, n1, T, m, scale)
                               : fastC ? key_fast_entC(A + (size_t)j * C, n1, T, m, scale)
                                       : key_of(A + (size_t)j * C, n1, T, Wn, m, pc);
            push_topk(key, j);
        }
        for (int i = 0; i < cntk; ++i) out.push_back(js[i]);
    }

    inline double split_error(const CT* Aj, int n1, const CT* T, double Wn, int m) const {
        double mx1 = 0, mx0 = 0, w1 = 0;
        for (int c = 0; c < C; ++c) {
            double a = (double)Aj[c], z = (double)(T[c] - Aj[c]);
            w1 += a;
            if (a > mx1) mx1 = a;
            if (z > mx0) mx0 = z;
        }
        if (!W) return (double)m - mx1 - mx0;
        (void)n1;
        return std::max(0.0, w1 - mx1) + std::max(0.0, (Wn - w1) - mx0);
    }

    // best depth-1 subtree of a node given its counts; returns error, sets f (-1: leaf)
    double depth1(const CT* A, const int32_t* R, const CT* T, double Wn, int m, int& fout,
                  std::vector<int>& cand, std::vector<std::pair<int64_t, int>>& keyed) {
        fout = -1;
        double leaf = leaf_error(T, C, Wn);
        if (n_present(T) <= 1) return leaf;
        if (all_k && !recon) {
            double best = INF;
            for (int j = 0; j < d; ++j) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                double e = split_error(A + (size_t)j * C, n1, T, Wn, m);
                if (e < best) {
                    best = e;
                    fout = j;
                    if (best <= 0) break;
                }
            }
            return fout < 0 ? leaf : best;
        }
        rank(A, R, T, Wn, m, cand, keyed);
        double best = INF;
        for (int j : cand) {
            double e = split_error(A + (size_t)j * C, R[j], T, Wn, m);
            if (e < best) {
                best = e;
                fout = j;
            }
        }
        return fout < 0 ? leaf : best;
    }

    // split using the node's local column (valid after build_local): sequential bit scan
    void split_rows_local(const Level& v, int f, int side, Level& c) {
        const int wl = v.FW;
        const u64* col = v.FM + (size_t)f * wl;
        const u64* valid = v.fvalid.data();
        int mm = 0;
        for (int i = 0; i < wl; ++i) {
            u64 x = (side ? col[i] : ~col[i]) & valid[i];
            while (x) {
                c.rows[mm++] = v.FR[(i << 6) + ctz(x)];
                x &= x - 1;
            }
        }
        c.m = mm;
    }
    // classes of identical local columns among the features that split the node (an h = 2
    // node): every subset of its rows sees them identical too. reps ascending by first index.
    void prepare_reps(Level& v) {
        const int wl = v.wl;
        v.hk.clear();
        for (int j = 0; j < d; ++j) {
            if (v.rc[j] == 0 || v.rc[j] == v.m) continue;
            const u64* col = &v.M[(size_t)j * wl];
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
                const u64* cj = &v.M[(size_t)j * wl];
                int found = -1;
                for (int l : leaders) {
                    if (std::memcmp(cj, &v.M[(size_t)l * wl], sizeof(u64) * wl) == 0) {
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
    double depth1_reps(Level& v, const CT* A, const int32_t* R, const CT* T, double Wn, int m, int& fout) {
        fout = -1;
        double leaf = leaf_error(T, C, Wn);
        if (n_present(T) <= 1) return leaf;
        const std::vector<int>& reps = v.reps;
        if (all_k && !recon) {
            double best = INF;
            for (int j : reps) {
                int n1 = R[j];
                if (n1 == 0 || n1 == m) continue;
                double e = split_error(A + (size_t)j * C, n1, T, Wn, m);
                if (e < best) {
                    best = e;
                    fout = j;
                    if (best <= 0) break;
                }
            }
            return fout < 0 ? leaf : best;
        }
        const bool fast = !W && C == 2 && D.crit == 0 && !D.gr;
        const bool fastC = !W && D.crit == 0 && !D.gr;
        const double scale = 1e9 / Wn;
        double pc = D.gr ? parent_cost(T, Wn, m) : 0.0;
        auto& sel = v.keyed1;  // (key, rep) of the K smallest reps by (key, first index)
        sel.clear();
        const int KK = all_k ? (int)reps.size() : K;
        for (int j : reps) {
            int n1 = R[j];
            if (n1 == 0 || n1 == m) continue;
            int64_t key = fast ? key_fast_ent2(A + (size_t)j * C, n1, T, m, scale)
                               : fastC ? key_fast_entC(A + (size_t)j * C, n1, T, m, scale)
                                       : key_of(A + (size_t)j * C, n1, T, Wn, m, pc);
            if ((int)sel.size() == KK) {
                if (key >= sel.back().first) continue;
                sel.pop_back();
            }
            auto it = std::upper_bound(sel.begin(), sel.end(), std::make_pair(key, j));
            sel.insert(it, std::make_pair(key, j));
        }
        // a class is a candidate iff its first copy is among the K smallest (key, index) pairs
        double best = INF;
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
            double e = split_error(A + (size_t)jc * C, R[jc], T, Wn, m);
            if (e < best) {
                best = e;
                fout = jc;
            }
        }
        return fout < 0 ? leaf : best;
    }

    void split_rows(const Level& v, int f, int side, Level& c) {
        int mm = 0;
        for (int i = 0; i < v.m; ++i) {
            int r = v.rows[i];
            if ((int)D.bit(r, f) == side) c.rows[mm++] = r;
        }
        c.m = mm;
    }

    // same partition as an earlier candidate (equal or complementary column on the node)?
    bool duplicate(const Level& v, int f, int upto) {
        const int wl = v.FW;
        const u64* cf = v.FM + (size_t)f * wl;
        const u64* valid = v.fvalid.data();
        for (int t = 0; t < upto; ++t) {
            int g = v.cand[t];
            const u64* cg = v.FM + (size_t)g * wl;
            if (v.rc[g] == v.rc[f]) {
                bool eq = true;
                for (int i = 0; i < wl && eq; ++i) eq = (cf[i] & valid[i]) == (cg[i] & valid[i]);
                if (eq) return true;
            }
            if (v.rc[g] == v.m - v.rc[f]) {
                bool eq = true;
                for (int i = 0; i < wl && eq; ++i) eq = (cf[i] & valid[i]) == (~cg[i] & valid[i]);
                if (eq) return true;
            }
        }
        return false;
    }

    // the children's covers (v.child1 / v.child0): v's cover AND column f, or its complement
    // (forced inline: as a call from the large solve() it cost fico-binary h4 k4 6% of its time)
    __attribute__((always_inline)) inline void child_covers(Level& v, int f) {
        const u64* __restrict gcol = &D.colbits[(size_t)f * nw];
        const u64* __restrict cov = v.cover.data();
        u64* __restrict c1 = v.child1.data();
        u64* __restrict c0 = v.child0.data();
        for (int i = 0; i < nw; ++i) {
            c1[i] = cov[i] & gcol[i];
            c0[i] = cov[i] & ~gcol[i];
        }
    }

    // ------------------------------------------------------------------ search
    Res solve(int L, int h, double ub) {
        Level& v = lv[L];
        ++nodes;
        double Wn;
        totals(v, v.tot.data(), Wn);
        const bool preset = v.cover_ready;
        v.cover_ready = false;
        const bool borrowed = v.frame_ready;  // (cleared on entry: early returns leave nothing stale)
        v.frame_ready = false;
        double leaf = leaf_error(v.tot.data(), C, Wn);
        if (h == 0 || n_present(v.tot.data()) <= 1) return Res{leaf, -1, leaf < ub};
        double node_lb = 0.0;
        if (h >= 2) {
            if (preset)
                v.hash = hash_words(v.cover.data(), v.m);
            else
                make_cover(v);
            Entry e;
            if (lookup(v, h, e)) {
                if (e.status != 0) return Res{e.err, e.f, e.err < ub};
                if (e.err >= ub) return Res{e.err, -1, false};
                node_lb = e.err;
            }
            if (all_k && use_sim) {
                // similarity lower bound (optimal search only): opt_h(S) >= opt_h(S') - w(S' \ S)
                // for the last subproblem S' of the same depth solved at this level
                node_lb = std::max(node_lb, similarity_lb(v, v.cover.data(), h));
                if (node_lb >= ub) {
                    store(v, h, Entry{node_lb, -1, 0});
                    remember(v, h, node_lb);
                    return Res{node_lb, -1, false};
                }
            }
        }
        if (!recon && timed_out()) {
            if (h >= 2) store(v, h, Entry{leaf, -1, 2});
            return Res{leaf, -1, leaf < ub};
        }
        if (!borrowed) build_local(v);
        count_pass(v, v.fvalid.data(), v.cnt.data(), v.rc.data());
        if (h == 1) {
            int f;
            double e = depth1(v.cnt.data(), v.rc.data(), v.tot.data(), Wn, v.m, f, v.cand, v.keyed);
            return Res{e, f, e < ub};
        }
        rank(v.cnt.data(), v.rc.data(), v.tot.data(), Wn, v.m, v.cand, v.keyed);
        if (h == 2 && use_reps && !v.cand.empty()) prepare_reps(v);
        if (h == 2 && use_pairs) std::fill(pdone.begin(), pdone.end(), pairs_ready ? 1 : 0);
        bool sub_here = h == 3 && use_sub && !recon;
        if (sub_here && !v.cand.empty()) full_pairs(v, PS.data(), PRS.data());
        if (v.cand.empty()) {
            store(v, h, Entry{leaf, -1, 1});
            return Res{leaf, -1, leaf < ub};
        }
        double best = INF;
        int bestf = -1;
        bool incomplete = false;
        const int wl = v.wl;
        const size_t dC = (size_t)d * C;
        std::vector<int>& c1 = v.cand1;
        std::vector<int>& c0 = v.cand0;
        std::vector<std::pair<int64_t, int>>& k1 = v.keyed1;
        for (size_t ci = 0; ci < v.cand.size(); ++ci) {
            int f = v.cand[ci];
            if (!recon && timed_out()) {
                incomplete = true;
                break;
            }
            if (ci > 0 && duplicate(v, f, (int)ci)) continue;
            double bound = std::min(ub, best);
            if (h == 2 && use_pairs && !W && !recon) {
                // the optimum's depth-2 step: pair row of f in place, depth-1 errors read off it
                // (f = 1 side) and off the node's counts minus it (f = 0 side)
                pair_fill(v, f, PM.data(), PR.data(), pdone.data());
                const CT* A1 = &PM[(size_t)f * d * C];
                CT T1[256], T0[256];
                std::vector<CT> bt;
                CT* t1 = T1;
                CT* t0 = T0;
                if (C > 256) {
                    bt.resize(2 * (size_t)C);
                    t1 = bt.data();
                    t0 = bt.data() + C;
                }
                for (int c = 0; c < C; ++c) {
                    t1[c] = v.cnt[(size_t)f * C + c];
                    t0[c] = v.tot[c] - t1[c];
                }
                int m1 = v.rc[f], m0 = v.m - m1;
                double e1 = d1_all(A1, nullptr, t1, m1);
                if (e1 >= bound) continue;
                double e0 = d1_all(v.cnt.data(), A1, t0, m0);
                if (e0 + e1 >= bound) continue;
                best = e0 + e1;
                bestf = f;
            } else if (h == 2) {
                const u64* mf = &v.M[(size_t)f * wl];
                CT t1[256], t0[256];
                std::vector<CT> bt1, bt0;
                CT* T1 = t1;
                CT* T0 = t0;
                if (C > 256) {
                    bt1.resize(C);
                    bt0.resize(C);
                    T1 = bt1.data();
                    T0 = bt0.data();
                }
                double W1 = 0, W0 = 0;
                int m1 = v.rc[f], m0 = v.m - m1;
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
                    W0 = (double)m0;
                    W1 = (double)m1;
                }
                int f1, f0;
                double e1 = 0.0, e0 = 0.0;
                child_covers(v, f);
                const u64* c1c = v.child1.data();
                const u64* c0c = v.child0.data();
                u64 h1 = hash_words(c1c, m1), h0 = hash_words(c0c, m0);
                Entry ce1{}, ce0{};
                bool hit1 = c1cache && lookup_c(c1c, h1, 1, ce1);
                bool hit0 = c1cache && lookup_c(c0c, h0, 1, ce0);
                bool counted = false;
                if (hit1) {
                    e1 = ce1.err;
                } else {
                    if (use_reps) {
                        count_pass(v, mf, v.cntf.data(), v.rcf.data(), v.reps.data(), (int)v.reps.size());
                        e1 = depth1_reps(v, v.cntf.data(), v.rcf.data(), T1, W1, m1, f1);
                    } else {
                        if (use_pairs)
                            pair_row(v, f, v.cntf.data(), v.rcf.data());
                        else
                            count_pass(v, mf, v.cntf.data(), v.rcf.data());
                        e1 = depth1(v.cntf.data(), v.rcf.data(), T1, W1, m1, f1, c1, k1);
                    }
                    counted = true;
                    if (c1cache) store_c(c1c, h1, 1, Entry{e1, f1, 1});
                }
                if (e1 >= bound) continue;
                if (hit0) {
                    e0 = ce0.err;
                } else {
                    if (W) {
                        for (int i = 0; i < wl; ++i) {
                            u64 valid = (i == wl - 1 && (v.m & 63)) ? ((1ULL << (v.m & 63)) - 1) : ~0ULL;
                            v.tmpmask[i] = ~mf[i] & valid;
                        }
                        if (use_reps)
                            count_pass(v, v.tmpmask.data(), v.cnt0.data(), v.rc0.data(), v.reps.data(),
                                       (int)v.reps.size());
                        else
                            count_pass(v, v.tmpmask.data(), v.cnt0.data(), v.rc0.data());
                    } else if (use_reps) {
                        if (!counted)
                            count_pass(v, mf, v.cntf.data(), v.rcf.data(), v.reps.data(), (int)v.reps.size());
                        for (int j : v.reps) {
                            for (int c = 0; c < C; ++c) v.cnt0[(size_t)j * C + c] = v.cnt[(size_t)j * C + c] - v.cntf[(size_t)j * C + c];
                            v.rc0[j] = v.rc[j] - v.rcf[j];
                        }
                    } else {
                        if (!counted) {
                            if (use_pairs)
                                pair_row(v, f, v.cntf.data(), v.rcf.data());
                            else
                                count_pass(v, mf, v.cntf.data(), v.rcf.data());
                        }
                        for (size_t q = 0; q < dC; ++q) v.cnt0[q] = v.cnt[q] - v.cntf[q];
                        for (int j = 0; j < d; ++j) v.rc0[j] = v.rc[j] - v.rcf[j];
                    }
                    e0 = use_reps ? depth1_reps(v, v.cnt0.data(), v.rc0.data(), T0, W0, m0, f0)
                                  : depth1(v.cnt0.data(), v.rc0.data(), T0, W0, m0, f0, c0, k1);
                    if (c1cache) store_c(c0c, h0, 1, Entry{e0, f0, 1});
                }
                if (e0 + e1 >= bound) continue;
                best = e0 + e1;
                bestf = f;
            } else {
                Level& c = lv[L + 1];
                // lower bounds of both children (cache entries; similarity for the optimum)
                double lb0 = 0.0, lb1 = 0.0;
                child_covers(v, f);
                const u64* c1c = v.child1.data();
                const u64* c0c = v.child0.data();
                if (use_child_lb) {
                    int m1 = v.rc[f], m0 = v.m - m1;
                    lb1 = child_lb(c, c1c, m1, h - 1);
                    lb0 = child_lb(c, c0c, m0, h - 1);
                    if (lb0 + lb1 >= bound) continue;
                }
                int small = 0;
                if (sub_here) {
                    // pair matrix of the smaller child, on its own rows
                    small = (2 * v.rc[f] <= v.m) ? 1 : 0;
                    split_rows_local(v, f, small, c);
                    build_local(c);
                    count_pass(c, ones.data(), c.cnt.data(), c.rc.data());
                    full_pairs(c, PT.data(), PRT.data());
                    set_child_pairs(small == 0);
                }
                split_rows_local(v, f, 0, c);
                std::copy(c0c, c0c + nw, c.cover.begin());
                c.cover_ready = true;
                lend_frame(v, f, 0, c, h - 1);
                pairs_ready = sub_here;
                Res r0 = solve(L + 1, h - 1, bound - lb1);
                pairs_ready = false;
                if (!r0.ok) continue;
                if (sub_here) set_child_pairs(small == 1);
                split_rows_local(v, f, 1, c);
                std::copy(c1c, c1c + nw, c.cover.begin());
                c.cover_ready = true;
                lend_frame(v, f, 1, c, h - 1);
                pairs_ready = sub_here;
                Res r1 = solve(L + 1, h - 1, bound - r0.err);
                pairs_ready = false;
                if (!r1.ok) continue;
                if (r0.err + r1.err < best) {
                    best = r0.err + r1.err;
                    bestf = f;
                }
            }
            if (best <= node_lb) break;
        }
        if (incomplete || (!recon && stop->load(std::memory_order_relaxed))) {
            if (bestf < 0 || leaf < best) {
                // nothing better found in time: the best tree found is the constant
                best = leaf;
                bestf = -1;
            }
            store(v, h, Entry{best, bestf, 2});
            return Res{best, bestf, best < ub};
        }
        if (bestf >= 0) {
            store(v, h, Entry{best, bestf, 1});
            remember(v, h, best);
            return Res{best, bestf, true};
        }
        double lb = std::max(node_lb, ub);
        store(v, h, Entry{lb, -1, 0});
        remember(v, h, lb);
        return Res{lb, -1, false};
    }

    // let child c (side `side` of feature f, depth budget hc) count in v's frame instead of
    // re-packing its rows: for unweighted Top-k nodes with hc >= 3 (they count once; an h = 2
    // node counts 1 + k times and re-packs) while the frame is at most 8x the child's rows
    void lend_frame(const Level& v, int f, int side, Level& c, int hc) {
        if (W || all_k || hc < 3 || (long long)v.FW * 64 > 8LL * c.m) return;
        const int wl = v.FW;
        const u64* col = v.FM + (size_t)f * wl;
        for (int i = 0; i < wl; ++i) c.fvalid[i] = (side ? col[i] : ~col[i]) & v.fvalid[i];
        c.FM = v.FM;
        c.FC = v.FC;
        c.FR = v.FR;
        c.FW = wl;
        c.frame_ready = true;
    }

    // a lower bound on the error of the subproblem (cover, h) at level c: its cache entry (exact
    // error or lower bound) and, for the optimum, the similarity bound from c's recent nodes
    double child_lb(const Level& c, const u64* cover, int m, int h) {
        if (m == 0) return 0.0;
        double lb = 0.0;
        if (h >= 2) {
            Entry e;
            if (lookup_c(cover, hash_words(cover, m), h, e)) {
                if (e.status == 1 || e.status == 0) lb = e.err;
                if (e.status == 1) return lb;
            }
        }
        if (all_k && use_sim && h >= 2) lb = std::max(lb, similarity_lb(c, cover, h));
        return lb;
    }

    // opt_h(S) >= opt_h(S') - w(S' \ S) for the (at most two) subproblems S' of depth h last
    // solved at level c (optimal search only); 0 when there is none
    double similarity_lb(const Level& c, const u64* cover, int h) const {
        double lb = 0.0;
        for (int sl = 0; sl < 2; ++sl) {
            if (!c.sim_valid[sl] || c.sim_h[sl] != h) continue;
            const u64* sc = &c.sim_cover[(size_t)sl * nw];
            double diff = 0;
            if (W) {
                for (int i = 0; i < nw; ++i) diff += weighted_count(sc[i] & ~cover[i], i, D.w.data());
            } else {
                int dd = 0;
                for (int i = 0; i < nw; ++i) dd += popc(sc[i] & ~cover[i]);
                diff = dd;
            }
            lb = std::max(lb, c.sim_val[sl] - diff);
        }
        return lb;
    }

    // keep a node's cover and (lower bound on its) optimal error for the similarity bound;
    // two slots per level: the most recent and the one before
    void remember(Level& v, int h, double val) {
        if (!all_k || !use_sim) return;
        int sl = v.sim_next;
        v.sim_next ^= 1;
        std::copy(v.cover.begin(), v.cover.end(), v.sim_cover.begin() + (size_t)sl * nw);
        v.sim_val[sl] = val;
        v.sim_h[sl] = h;
        v.sim_valid[sl] = true;
    }

    // rebuild the tree of a solved node (rows in lv[L]) into out, preorder
    int build(int L, int h, Output& out) {
        Level& v = lv[L];
        int idx = (int)out.feature.size();
        out.feature.push_back(-1);
        out.left.push_back(-1);
        out.right.push_back(-1);
        double Wn;
        totals(v, v.tot.data(), Wn);
        for (int c = 0; c < C; ++c) out.value.push_back((double)v.tot[c]);
        out.nsamp.push_back(v.m);
        Res r = solve(L, h, INF);
        if (r.f < 0) return idx;
        int f = r.f;
        out.feature[idx] = f;
        split_rows(v, f, 0, lv[L + 1]);
        int l = build(L + 1, h - 1, out);
        out.left[idx] = l;
        split_rows(v, f, 1, lv[L + 1]);
        int rr = build(L + 1, h - 1, out);
        out.right[idx] = rr;
        return idx;
    }
};

template <typename CT>
void run_typed(const Params& P, Output& out) {
    Data D(P);
    auto t0 = std::chrono::steady_clock::now();
    std::atomic<bool> stop(false);
    int h = P.max_depth;
    int n_jobs = std::max(1, P.n_jobs);
    Searcher<CT> main(D, h, P.mem_limit_bytes / n_jobs, P.time_limit, &stop, t0);
    main.c1cache = (P.cache_depth1 & 1) != 0;
    main.use_reps = (P.cache_depth1 & 2) == 0 && P.crit != 3;
    auto& v0 = main.lv[0];
    v0.m = P.n;
    for (int i = 0; i < P.n; ++i) v0.rows[i] = i;
    double root_err;
    if (n_jobs > 1 && h >= 3) {
        // parallel over root candidates: thread t takes candidates t, t + T, ...; each prunes
        // with its own best only (earlier ranks), so the winner is the same as with one job
        double Wn;
        main.totals(v0, v0.tot.data(), Wn);
        std::vector<int> cand;
        if (main.n_present(v0.tot.data()) > 1) {
            main.build_local(v0);
            main.count_pass(v0, main.ones.data(), v0.cnt.data(), v0.rc.data());
            main.rank(v0.cnt.data(), v0.rc.data(), v0.tot.data(), Wn, v0.m, v0.cand, v0.keyed);
            for (size_t ci = 0; ci < v0.cand.size(); ++ci)
                if (ci == 0 || !main.duplicate(v0, v0.cand[ci], (int)ci)) cand.push_back(v0.cand[ci]);
        }
        int T = std::min<int>(n_jobs, std::max<size_t>(1, cand.size()));
        std::vector<double> errs(cand.size(), INF);
        std::vector<Searcher<CT>*> ss(T, nullptr);
        std::vector<std::thread> th;
        for (int t = 0; t < T; ++t) {
            th.emplace_back([&, t]() {
                Searcher<CT>* s = (t == 0) ? &main : new Searcher<CT>(D, h, P.mem_limit_bytes / n_jobs, P.time_limit, &stop, t0);
                s->c1cache = (P.cache_depth1 & 1) != 0;
                s->use_reps = (P.cache_depth1 & 2) == 0 && P.crit != 3;
                ss[t] = s;
                auto& r0 = s->lv[0];
                r0.m = P.n;
                for (int i = 0; i < P.n; ++i) r0.rows[i] = i;
                double best = INF;
                for (size_t ci = t; ci < cand.size(); ci += T) {
                    int f = cand[ci];
                    if (s->timed_out()) break;
                    s->split_rows(r0, f, 0, s->lv[1]);
                    Res a = s->solve(1, h - 1, best);
                    if (!a.ok) continue;
                    s->split_rows(r0, f, 1, s->lv[1]);
                    Res b = s->solve(1, h - 1, best - a.err);
                    if (!b.ok) continue;
                    errs[ci] = a.err + b.err;
                    best = a.err + b.err;
                    if (best <= 0) break;
                }
            });
        }
        for (auto& x : th) x.join();
        int win = -1;
        double be = INF;
        for (size_t ci = 0; ci < cand.size(); ++ci)
            if (errs[ci] < be) {
                be = errs[ci];
                win = (int)ci;
            }
        main.totals(v0, v0.tot.data(), Wn);
        double leaf = main.leaf_error(v0.tot.data(), main.C, Wn);
        out.nodes = 0;
        for (int t = 0; t < T; ++t) {
            out.nodes += ss[t]->nodes;
            out.cache_hits += ss[t]->hits;
            out.evictions += ss[t]->evictions;
            out.peak_bytes += ss[t]->peak;
            out.cache_entries += (long long)ss[t]->cache.size();
        }
        if (win < 0 || leaf < be) {
            out.feature.push_back(-1);
            out.left.push_back(-1);
            out.right.push_back(-1);
            for (int c = 0; c < main.C; ++c) out.value.push_back((double)v0.tot[c]);
            out.nsamp.push_back(P.n);
            root_err = leaf;
        } else {
            // the winner's subtrees come from the thread that searched it (warm cache)
            int f = cand[win];
            Searcher<CT>* s = ss[win % T];
            s->recon = true;
            out.feature.push_back(f);
            out.left.push_back(-1);
            out.right.push_back(-1);
            for (int c = 0; c < main.C; ++c) out.value.push_back((double)v0.tot[c]);
            out.nsamp.push_back(P.n);
            auto& r0 = s->lv[0];
            s->split_rows(r0, f, 0, s->lv[1]);
            out.left[0] = s->build(1, h - 1, out);
            s->split_rows(r0, f, 1, s->lv[1]);
            out.right[0] = s->build(1, h - 1, out);
            root_err = be;
        }
        for (int t = 1; t < T; ++t) delete ss[t];
        out.root_lb = stop.load() ? 0.0 : root_err;
    } else {
        Res r = main.solve(0, h, INF);
        root_err = r.err;
        main.recon = true;
        main.build(0, h, out);
        out.nodes = main.nodes;
        out.cache_hits = main.hits;
        out.evictions = main.evictions;
        out.peak_bytes = main.peak;
        out.cache_entries = (long long)main.cache.size();
        out.root_lb = stop.load() ? 0.0 : root_err;
    }
    out.error = root_err;
    out.cost_failed = D.cost_failed.load();
    out.timed_out = stop.load() && !out.cost_failed;
}

inline void run_search(const Params& P, Output& out) {
    if (P.w != nullptr)
        run_typed<double>(P, out);
    else
        run_typed<int32_t>(P, out);
}

}  // namespace tltopk
