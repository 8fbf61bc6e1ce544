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
// The bitset operations (class bitsets, sparse splits, purity and informativeness tests) are
// the shared counting layer's (core/count.h).
// FIND(S', 1) has a dedicated kernel: per variable one scan that decides informativeness and
// the purity of both sides (FIND(S'_v, 0) of step 3.1) without building the split.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/count.h"
#include "core/limits.h"
#include "core/progress.h"

namespace tl::minrank {

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
    int abort_reason = 0;       // 0 none, 1 time, 2 memory, 3 interrupted (Ctrl-C)
    uint64_t n_calls = 0, n_memo_hits = 0, n_memo_entries = 0;
    uint64_t words_split = 0, n_split = 0, words_find1 = 0, n_find1 = 0;  // work counters
    double* progress = nullptr;  // live counters for verbose (core/progress.h), or none
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
        for (int i = 0; i < rows; ++i) y[i] = (int32_t)labels[i];
        tl::class_bitsets(y.data(), rows, W, cls.data());
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
        uint32_t n0, n1, cnt0, cnt1;
        uint64_t a1 = 0, a2 = 0, b1 = 0, b2 = 0;
        tl::split_sparse(
            S.idx, S.val, S.n, &col[(size_t)v * W], i0, v0, n0, cnt0, i1, v1, n1, cnt1,
            [&](uint32_t i, uint64_t x) { a1 ^= hw1(i, x); a2 ^= hw2(i, x); },
            [&](uint32_t i, uint64_t x) { b1 ^= hw1(i, x); b2 ^= hw2(i, x); });
        c0 = Cover{i0, v0, n0, cnt0, a1, a2};
        c1 = Cover{i1, v1, n1, cnt1, b1, b2};
    }

    inline int32_t class_of_first(uint32_t i, uint64_t x) const { return y[(i << 6) + __builtin_ctzll(x)]; }

    // FIND(S', r) on a nonempty cover. The procedure is recursive (a FIND calls FIND on the
    // sides of a split, and step 3.3 calls it again with the same bound, so the depth grows with
    // the number of rows a chain of splits peels off); it runs here on an explicit stack of
    // frames, each a suspended call, in exactly the order of the recursion.
    int32_t find(const Cover& S0, int r0) {
        const size_t base = depth;
        push(S0, r0);
        int32_t ret = NONE;
        while (depth > base) {
            const size_t fi = depth - 1;
            Frame& F = stack[fi];
            switch (F.stage) {
                case ENTER:
                    if (enter(F, ret)) {
                        --depth;
                    } else if (F.r == 1) {
                        start_find1(fi, ret);
                    } else {
                        F.transient = 24.0 * F.S.n;
                        mem_used += F.transient;
                        size_buffers(F);
                        F.v = 0;
                        F.stage = R_NEXT;
                    }
                    break;
                case R_NEXT:  // step 3: the next informative variable, FIND(S'_0, r - 1)
                    while (F.v < n_vars && !informative(F.S, F.v)) ++F.v;
                    if (F.v >= n_vars) {
                        ret = complete(F, NONE);  // step 4
                        --depth;
                        break;
                    }
                    split(F.S, F.v, F.ibuf.data(), F.vbuf.data(), F.ibuf.data() + F.S.n, F.vbuf.data() + F.S.n, F.s0,
                          F.s1);
                    F.stage = R_Q0;
                    push(F.s0, F.r - 1);
                    break;
                case R_Q0:  // FIND(S'_1, r - 1)
                    F.q0 = ret;
                    if (ret == ABORT) {
                        ret = complete(F, ABORT);
                        --depth;
                        break;
                    }
                    F.stage = R_Q1;
                    push(F.s1, F.r - 1);
                    break;
                case R_Q1:
                    F.q1 = ret;
                    if (ret == ABORT) {
                        ret = complete(F, ABORT);
                        --depth;
                    } else if (F.q0 >= 0 && F.q1 >= 0) {
                        ret = complete(F, make_node(F.v, F.q0, F.q1));
                        --depth;
                    } else if (F.q0 >= 0 || F.q1 >= 0) {  // step 3.3: re-execute the failing side with bound r
                        F.stage = TAIL;
                        push(F.q0 < 0 ? F.s0 : F.s1, F.r);
                    } else {
                        ++F.v;
                        F.stage = R_NEXT;
                    }
                    break;
                case TAIL:  // the re-executed side's answer
                    if (F.q0 < 0)
                        F.q0 = ret;
                    else
                        F.q1 = ret;
                    if (F.q0 == ABORT || F.q1 == ABORT)
                        ret = complete(F, ABORT);
                    else
                        ret = complete(F, (F.q0 >= 0 && F.q1 >= 0) ? make_node(F.v, F.q0, F.q1) : NONE);
                    --depth;
                    break;
            }
        }
        return ret;
    }

    bool informative(const Cover& S, int v) const { return tl::sparse_splits(S.idx, S.val, S.n, &col[(size_t)v * W]); }

  private:
    enum Stage { ENTER, R_NEXT, R_Q0, R_Q1, TAIL };
    // one suspended call FIND(S, r); its buffers hold the covers of its split's sides (frames
    // are reused, so the buffers are allocated once per depth)
    struct Frame {
        Cover S;
        int r = 0;
        Stage stage = ENTER;
        int v = 0;
        Cover s0, s1;
        int32_t q0 = NONE, q1 = NONE;
        bool memo_here = false;
        Key key;
        double transient = 0.0;
        std::vector<uint32_t> ibuf;
        std::vector<uint64_t> vbuf;
    };
    std::vector<Frame> stack;
    size_t depth = 0;

    void push(Cover S, int r) {  // (by value: emplace_back may move the frame S lives in)
        if (depth == stack.size()) stack.emplace_back();
        Frame& F = stack[depth++];
        F.S = S;
        F.r = r;
        F.stage = ENTER;
        F.transient = 0.0;
        F.q0 = F.q1 = NONE;
    }
    void size_buffers(Frame& F) {
        if (F.ibuf.size() < 2 * (size_t)F.S.n) {
            F.ibuf.resize(2 * (size_t)F.S.n);
            F.vbuf.resize(2 * (size_t)F.S.n);
        }
    }

    // steps 1 and 2 and the memo: true when they answer the call (answer in out)
    bool enter(Frame& F, int32_t& out) {
        const Cover& S = F.S;
        ++n_calls;
        if ((n_calls & 255) == 0 && progress)  // live counters (verbose): FIND calls, memo entries
            tl::store(progress, tl::NODES, (double)n_calls), tl::store(progress, tl::CACHE, (double)n_memo_entries);
        if ((n_calls & 255) == 0 && ((time_limit >= 0 && elapsed() > time_limit) || tl::interrupted())) {
            abort_reason = tl::interrupted() ? 3 : 1;
            out = ABORT;
            return true;
        }
        // step 1: all examples of one class -> a leaf
        const int32_t c0 = class_of_first(S.idx[0], S.val[0]);
        if (tl::sparse_subset(S.idx, S.val, S.n, &cls[(size_t)c0 * W])) {
            out = leaf_of_class[c0];
            return true;
        }
        // step 2
        if (F.r == 0) {
            out = NONE;
            return true;
        }
        F.memo_here = use_memo && F.r >= memo_min_rank;
        F.key = Key{S.h1, S.h2, S.count};
        if (F.memo_here) {
            auto it = memo.find(F.key);
            if (it != memo.end()) {
                const Entry& e = it->second;
                if (e.fail_upto >= F.r) {
                    ++n_memo_hits;
                    out = NONE;
                    return true;
                }
                for (auto& p : e.success)
                    if (p.first == F.r) {
                        ++n_memo_hits;
                        out = p.second;
                        return true;
                    }
            }
        }
        return false;
    }

    // the call's result res: its transient memory released, stored in the memo; the answer
    // (ABORT when the memory cap is passed)
    int32_t complete(Frame& F, int32_t res) {
        mem_used -= F.transient;
        F.transient = 0.0;
        if (res == ABORT) return ABORT;
        if (F.memo_here) {
            auto ins = memo.emplace(F.key, Entry());
            Entry& e = ins.first->second;
            if (ins.second) {
                ++n_memo_entries;
                mem_used += 96.0;
            }
            if (res == NONE) {
                if (F.r > e.fail_upto) e.fail_upto = F.r;
            } else {
                e.success.emplace_back(F.r, res);
                mem_used += 16.0;
            }
            if (memory_limit >= 0 && mem_used > memory_limit) {
                abort_reason = 2;
                return ABORT;
            }
        }
        return res;
    }

    // step 3 for r == 1 (S' impure) on frame fi: answered at once (ret set, frame popped), or
    // the impure side of the settling variable re-run with bound 1 (frame suspended at TAIL)
    void start_find1(size_t fi, int32_t& ret) {
        Frame& F = stack[fi];
        int v = 0;
        int32_t leaf0 = NONE, leaf1 = NONE;
        const int32_t res = find1_scan(F.S, v, leaf0, leaf1);
        if (res != RERUN) {
            ret = complete(F, res);
            --depth;
            return;
        }
        size_buffers(F);
        split(F.S, v, F.ibuf.data(), F.vbuf.data(), F.ibuf.data() + F.S.n, F.vbuf.data() + F.S.n, F.s0, F.s1);
        F.v = v;
        F.q0 = leaf0;  // the pure side's leaf, NONE on the side re-run
        F.q1 = leaf1;
        F.stage = TAIL;
        push(leaf0 < 0 ? F.s0 : F.s1, 1);
    }

    static const int32_t RERUN = -3;
    // FIND(S', 1) for impure S': FIND(S'_v, 0) succeeds iff side v of S' is pure. One scan per
    // variable decides informativeness and the purity of both sides, stopping as soon as both
    // sides are known to be impure. Returns the node (both sides pure), NONE, or RERUN: variable
    // v has one pure side (its leaf in leaf0 / leaf1, NONE for the other side), and step 3.3
    // re-runs the impure side with bound 1.
    int32_t find1_scan(const Cover& S, int& v_out, int32_t& leaf0, int32_t& leaf1) {
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
            v_out = v;
            leaf0 = imp0 ? NONE : leaf_of_class[c0];
            leaf1 = imp1 ? NONE : leaf_of_class[c1];
            return RERUN;
        }
        return NONE;
    }
};

}  // namespace tl::minrank
