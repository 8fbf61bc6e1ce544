// Ehrenfeucht–Haussler FIND(S, r) over covers, with memoisation of (cover, r) results.
//
// A cover is a set of sample rows (a sub-sample S' of S), held as a sparse row bitset: the
// list of its nonzero 64-row words. Variables and classes are column bitsets over the rows.
// Splitting a cover on x_v is one AND / AND-NOT per stored word; the purity and informativeness
// tests stop at the first word that decides them (usually the first few), so a dense cover costs
// at most |S| / 64 words and a small one at most one word per row. The memo is keyed by a
// 128-bit fingerprint of the cover (see Key), computed during the split itself.
//
// The search is the procedure of 001 exactly (steps 1, 2, 3.1, 3.2, 3.3 with the failing side
// re-executed with bound r, 4), variables tried in increasing index order, informative ones
// only. Memoisation never changes an answer:
//  * success of FIND(S', r) is stored per exact r, so the stored tree is the one the procedure
//    returns for that r;
//  * failure of FIND(S', r) proves r(S') > r (Lemma 2), so FIND(S', r') fails for every r' <= r:
//    one number per cover, the largest r known to fail.
// FIND(S', 1) has a dedicated kernel: per variable one scan that decides informativeness and
// the purity of both sides (FIND(S'_v, 0) of step 3.1) without building the split.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tl_minrank {

static const int32_t NONE = -1;
static const int32_t ABORT = -2;

struct Node {
    int32_t var;    // -1 for a leaf
    int32_t left;   // 0-subtree
    int32_t right;  // 1-subtree
    int32_t cls;    // class of a leaf (-1 for internal nodes)
};

// Memo key of a cover: two 64-bit fingerprints (XOR over the cover's nonzero words of a strong
// mix of (word, word index) under two independent keys), and the number of rows. Two different
// covers share a key with probability about 2^-128 per pair, so covers need not be stored.
struct Key {
    uint64_t h1, h2;
    uint32_t count;
    bool operator==(const Key& o) const { return h1 == o.h1 && h2 == o.h2 && count == o.count; }
};

struct KeyHash {
    size_t operator()(const Key& k) const noexcept { return (size_t)(k.h1 ^ (k.h2 >> 7) ^ k.count); }
};

struct Entry {
    int32_t fail_upto = -1;                            // FIND(cover, r) fails for all r <= fail_upto
    std::vector<std::pair<int32_t, int32_t>> success;  // (r, node) of FIND(cover, r) successes
};

static inline uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// A cover as a sparse row bitset: its nonzero 64-row words val[e] at word indices idx[e]
// (increasing). A dense cover costs at most n_rows / 64 words; a small one at most one word per
// row.
struct Cover {
    const uint32_t* idx;
    const uint64_t* val;
    uint32_t n;      // number of nonzero words
    uint32_t count;  // number of rows
    uint64_t h1, h2;
};

class Solver {
  public:
    int n_rows = 0, n_vars = 0, W = 0, n_classes = 0;
    std::vector<uint64_t> col;  // n_vars * W: column bitsets (rows with x_v = 1)
    std::vector<uint64_t> cls;  // n_classes * W: class bitsets
    std::vector<int32_t> y;
    std::vector<uint64_t> k1, k2;  // per word index hash keys
    std::vector<Node> nodes;
    std::vector<int32_t> leaf_of_class;
    std::unordered_map<Key, Entry, KeyHash> memo;
    bool use_memo = true;
    int memo_min_rank = 1;
    double time_limit = -1.0;   // seconds, < 0: none
    double memory_limit = -1.0; // bytes, < 0: none
    double mem_used = 0.0;
    int abort_reason = 0;       // 0 none, 1 time, 2 memory
    uint64_t n_calls = 0, n_memo_hits = 0, n_memo_entries = 0;
    uint64_t words_split = 0, n_split = 0, words_find1 = 0, n_find1 = 0;  // work counters
    std::chrono::steady_clock::time_point start;

    // cols: n_vars * W packed column words (bit i % 64 of word i / 64 is row i)
    void init(const uint64_t* cols, const int64_t* labels, int rows, int vars, int classes) {
        n_rows = rows;
        n_vars = vars;
        n_classes = classes;
        W = (rows + 63) / 64;
        col.assign(cols, cols + (size_t)vars * W);
        cls.assign((size_t)classes * W, 0ULL);
        y.resize(rows);
        for (int i = 0; i < rows; ++i) {
            y[i] = (int32_t)labels[i];
            cls[(size_t)y[i] * W + (i >> 6)] |= 1ULL << (i & 63);
        }
        k1.resize(W);
        k2.resize(W);
        uint64_t seed = 0x5EED5EED12345678ULL;
        for (int w = 0; w < W; ++w) { k1[w] = splitmix64(seed); k2[w] = splitmix64(seed); }
        nodes.clear();
        leaf_of_class.assign(classes, -1);
        for (int c = 0; c < classes; ++c) {
            leaf_of_class[c] = (int32_t)nodes.size();
            nodes.push_back(Node{-1, -1, -1, c});
        }
    }

    void start_clock() {
        start = std::chrono::steady_clock::now();
        abort_reason = 0;
    }

    double elapsed() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    int32_t make_node(int v, int32_t q0, int32_t q1) {
        nodes.push_back(Node{v, q0, q1, -1});
        mem_used += sizeof(Node);
        return (int32_t)nodes.size() - 1;
    }

    inline uint64_t hw1(uint32_t i, uint64_t x) const { return mix64(x ^ k1[i]); }
    inline uint64_t hw2(uint32_t i, uint64_t x) const { return mix64((x + k2[i]) * 0x9E3779B97F4A7C15ULL); }

    // FIND on the whole sample
    int32_t find_all(int r) {
        std::vector<uint32_t> idx;
        std::vector<uint64_t> val;
        uint64_t h1 = 0, h2 = 0;
        for (int w = 0; w < W; ++w) {
            uint64_t x = ~0ULL;
            if (w == W - 1 && (n_rows & 63)) x = (1ULL << (n_rows & 63)) - 1ULL;
            idx.push_back((uint32_t)w);
            val.push_back(x);
            h1 ^= hw1(w, x);
            h2 ^= hw2(w, x);
        }
        return find(Cover{idx.data(), val.data(), (uint32_t)W, (uint32_t)n_rows, h1, h2}, r);
    }

    // Split a cover on variable v into buffers (each at least S.n long): side 0, side 1.
    void split(const Cover& S, int v, uint32_t* i0, uint64_t* v0, uint32_t* i1, uint64_t* v1,
               Cover& c0, Cover& c1) {
        words_split += S.n;
        ++n_split;
        const uint64_t* cv = &col[(size_t)v * W];
        uint32_t n0 = 0, n1 = 0, cnt0 = 0, cnt1 = 0;
        uint64_t a1 = 0, a2 = 0, b1 = 0, b2 = 0;
        for (uint32_t e = 0; e < S.n; ++e) {
            const uint32_t i = S.idx[e];
            const uint64_t x = S.val[e], x1 = x & cv[i], x0 = x & ~cv[i];
            if (x0) { i0[n0] = i; v0[n0++] = x0; cnt0 += __builtin_popcountll(x0); a1 ^= hw1(i, x0); a2 ^= hw2(i, x0); }
            if (x1) { i1[n1] = i; v1[n1++] = x1; cnt1 += __builtin_popcountll(x1); b1 ^= hw1(i, x1); b2 ^= hw2(i, x1); }
        }
        c0 = Cover{i0, v0, n0, cnt0, a1, a2};
        c1 = Cover{i1, v1, n1, cnt1, b1, b2};
    }

    inline int32_t class_of_first(uint32_t i, uint64_t x) const { return y[(i << 6) + __builtin_ctzll(x)]; }

    // FIND(S', r) on a nonempty cover.
    int32_t find(const Cover& S, int r) {
        ++n_calls;
        if ((n_calls & 255) == 0 && time_limit >= 0 && elapsed() > time_limit) {
            abort_reason = 1;
            return ABORT;
        }
        // step 1: all examples of one class -> a leaf
        const int32_t c0 = class_of_first(S.idx[0], S.val[0]);
        const uint64_t* cc = &cls[(size_t)c0 * W];
        bool pure = true;
        for (uint32_t e = 0; e < S.n; ++e)
            if (S.val[e] & ~cc[S.idx[e]]) { pure = false; break; }
        if (pure) return leaf_of_class[c0];
        // step 2
        if (r == 0) return NONE;
        const bool memo_here = use_memo && r >= memo_min_rank;
        const Key key{S.h1, S.h2, S.count};
        if (memo_here) {
            auto it = memo.find(key);
            if (it != memo.end()) {
                const Entry& e = it->second;
                if (e.fail_upto >= r) { ++n_memo_hits; return NONE; }
                for (auto& p : e.success)
                    if (p.first == r) { ++n_memo_hits; return p.second; }
            }
        }
        int32_t res = (r == 1) ? find1(S) : find_r(S, r);
        if (res == ABORT) return ABORT;
        if (memo_here) {
            auto ins = memo.emplace(key, Entry());
            Entry& e = ins.first->second;
            if (ins.second) {
                ++n_memo_entries;
                mem_used += 96.0;
            }
            if (res == NONE) {
                if (r > e.fail_upto) e.fail_upto = r;
            } else {
                e.success.emplace_back(r, res);
                mem_used += 16.0;
            }
            if (memory_limit >= 0 && mem_used > memory_limit) {
                abort_reason = 2;
                return ABORT;
            }
        }
        return res;
    }

    bool informative(const Cover& S, int v) const {
        const uint64_t* cv = &col[(size_t)v * W];
        bool one = false, zero = false;
        for (uint32_t e = 0; e < S.n; ++e) {
            const uint64_t x = S.val[e], c = cv[S.idx[e]];
            one |= (x & c) != 0;
            zero |= (x & ~c) != 0;
            if (one && zero) return true;
        }
        return false;
    }

    // step 3 for r >= 2 (S' impure)
    int32_t find_r(const Cover& S, int r) {
        std::vector<uint32_t> ibuf(2 * (size_t)S.n);
        std::vector<uint64_t> vbuf(2 * (size_t)S.n);
        const double transient = 24.0 * S.n;
        mem_used += transient;
        int32_t result = NONE;
        for (int v = 0; v < n_vars; ++v) {
            if (!informative(S, v)) continue;
            Cover s0, s1;
            split(S, v, ibuf.data(), vbuf.data(), ibuf.data() + S.n, vbuf.data() + S.n, s0, s1);
            int32_t q0 = find(s0, r - 1);
            if (q0 == ABORT) { result = ABORT; break; }
            int32_t q1 = find(s1, r - 1);
            if (q1 == ABORT) { result = ABORT; break; }
            if (q0 >= 0 && q1 >= 0) { result = make_node(v, q0, q1); break; }
            if (q0 >= 0 || q1 >= 0) {  // step 3.3: re-execute the failing side with bound r
                if (q0 < 0) q0 = find(s0, r); else q1 = find(s1, r);
                if (q0 == ABORT || q1 == ABORT) result = ABORT;
                else result = (q0 >= 0 && q1 >= 0) ? make_node(v, q0, q1) : NONE;
                break;
            }
        }
        mem_used -= transient;
        return result;  // step 4 when NONE
    }

    // step 3 for r == 1 (S' impure): FIND(S'_v, 0) succeeds iff side v of S' is pure. One scan
    // per variable decides informativeness and the purity of both sides, stopping as soon as
    // both sides are known to be impure.
    int32_t find1(const Cover& S) {
        ++n_find1;
        for (int v = 0; v < n_vars; ++v) {
            const uint64_t* cv = &col[(size_t)v * W];
            int32_t c1 = -1, c0 = -1;
            bool imp1 = false, imp0 = false;
            uint32_t e = 0;
            if (n_classes == 2) {  // two classes: which classes each side holds, four ORs a word
                const uint64_t* k1w = &cls[W];  // rows of class 1
                uint64_t s11 = 0, s10 = 0, s01 = 0, s00 = 0;
                for (; e < S.n; ++e) {
                    const uint32_t i = S.idx[e];
                    const uint64_t x = S.val[e], a = x & cv[i], b = x & ~cv[i], k = k1w[i];
                    s11 |= a & k; s10 |= a & ~k; s01 |= b & k; s00 |= b & ~k;
                    if ((s11 != 0) & (s10 != 0) & (s01 != 0) & (s00 != 0)) break;
                }
                imp1 = s11 && s10;
                imp0 = s01 && s00;
                c1 = s11 ? 1 : (s10 ? 0 : -1);
                c0 = s01 ? 1 : (s00 ? 0 : -1);
                e = e < S.n ? e + 1 : e;
            } else for (; e < S.n; ++e) {
                const uint32_t i = S.idx[e];
                const uint64_t x = S.val[e], x1 = x & cv[i], x0 = x & ~cv[i];
                if (x1 && !imp1) {
                    if (c1 < 0) c1 = class_of_first(i, x1);
                    imp1 = (x1 & ~cls[(size_t)c1 * W + i]) != 0;
                }
                if (x0 && !imp0) {
                    if (c0 < 0) c0 = class_of_first(i, x0);
                    imp0 = (x0 & ~cls[(size_t)c0 * W + i]) != 0;
                }
                if (imp1 && imp0) break;
            }
            words_find1 += e;
            if (imp1 && imp0) continue;         // both sides impure: FIND(S'_v, 0) fails twice
            if (c1 < 0 || c0 < 0) continue;     // not informative
            if (!imp0 && !imp1) return make_node(v, leaf_of_class[c0], leaf_of_class[c1]);
            // step 3.3 with r = 1: re-run the impure side with bound 1
            std::vector<uint32_t> ibuf(2 * (size_t)S.n);
            std::vector<uint64_t> vbuf(2 * (size_t)S.n);
            Cover s0, s1;
            split(S, v, ibuf.data(), vbuf.data(), ibuf.data() + S.n, vbuf.data() + S.n, s0, s1);
            int32_t q0, q1;
            if (!imp1) { q1 = leaf_of_class[c1]; q0 = find(s0, 1); }
            else { q0 = leaf_of_class[c0]; q1 = find(s1, 1); }
            if (q0 == ABORT || q1 == ABORT) return ABORT;
            return (q0 >= 0 && q1 >= 0) ? make_node(v, q0, q1) : NONE;
        }
        return NONE;
    }
};

}  // namespace tl_minrank
