// Ehrenfeucht–Haussler FIND(S, r) over covers, with memoisation of (cover, r) results.
//
// A cover is a set of sample rows (a sub-sample S' of S). It is held as its sorted row ids,
// the sparse form of the row bitset: deep in the search a cover holds few rows, and splitting,
// the purity test and the informative-variable test then cost O(|S'|) instead of O(|S| / 64)
// per variable. Rows carry their variables packed as uint64 words (row-major). The memo is
// keyed by a 128-bit fingerprint of the cover (see Key), computed during the split itself.
//
// The search is the procedure of 001 exactly (steps 1, 2, 3.1, 3.2, 3.3 with the failing side
// re-executed with bound r, 4), variables tried in increasing index order, informative ones
// only. Memoisation never changes an answer:
//  * success of FIND(S', r) is stored per exact r, so the stored tree is the one the procedure
//    returns for that r;
//  * failure of FIND(S', r) proves r(S') > r (Lemma 2), so FIND(S', r') fails for every r' <= r:
//    one number per cover, the largest r known to fail.
// FIND(S', 1) has a dedicated kernel: per class c, OR of the rows' bits (P_c) and of their
// complements (N_c); side x_v = 1 of S' is pure iff exactly one P_c has bit v, side 0 iff
// exactly one N_c has it, which is what FIND(S'_v, 0) tests, for all v at once.
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

// Memo key of a cover: two independent 64-bit Zobrist fingerprints (XOR of per-row random words,
// updated while a split is written) and the cover's size. Two different covers share a key with
// probability about 2^-128 per pair, so no cover needs to be stored or re-hashed.
struct Key {
    uint64_t h1, h2;
    uint32_t size;
    bool operator==(const Key& o) const { return h1 == o.h1 && h2 == o.h2 && size == o.size; }
};

struct KeyHash {
    size_t operator()(const Key& k) const noexcept { return (size_t)(k.h1 ^ (k.h2 >> 7) ^ k.size); }
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

struct Cover {
    const uint32_t* rows;
    uint32_t size;
    uint64_t h1, h2;
};

class Solver {
  public:
    int n_rows = 0, n_vars = 0, nw = 0, n_classes = 0;
    std::vector<uint64_t> bits;  // n_rows * nw, row-major
    std::vector<int32_t> y;
    std::vector<uint64_t> z;  // Zobrist words per row, interleaved: z[2i], z[2i+1]
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
    uint64_t rows_find1 = 0, rows_split = 0, n_find1 = 0, n_split = 0;  // work counters
    std::chrono::steady_clock::time_point start;

    void init(const uint8_t* B, const int64_t* labels, int rows, int vars, int classes) {
        n_rows = rows;
        n_vars = vars;
        n_classes = classes;
        nw = (vars + 63) / 64;
        if (nw == 0) nw = 1;
        bits.assign((size_t)rows * nw, 0ULL);
        y.resize(rows);
        z.resize(2 * (size_t)rows);
        uint64_t seed = 0x5EED5EED12345678ULL;
        for (int i = 0; i < rows; ++i) {
            y[i] = (int32_t)labels[i];
            z[2 * (size_t)i] = splitmix64(seed);
            z[2 * (size_t)i + 1] = splitmix64(seed);
            for (int v = 0; v < vars; ++v)
                if (B[(size_t)i * vars + v]) bits[(size_t)i * nw + (v >> 6)] |= 1ULL << (v & 63);
        }
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

    bool has_bit(uint32_t row, int v) const { return (bits[(size_t)row * nw + (v >> 6)] >> (v & 63)) & 1ULL; }

    int32_t make_node(int v, int32_t q0, int32_t q1) {
        nodes.push_back(Node{v, q0, q1, -1});
        mem_used += sizeof(Node);
        return (int32_t)nodes.size() - 1;
    }

    // FIND on the whole sample
    int32_t find_all(int r) {
        std::vector<uint32_t> all(n_rows);
        uint64_t h1 = 0, h2 = 0;
        for (int i = 0; i < n_rows; ++i) { all[i] = (uint32_t)i; h1 ^= z[2 * (size_t)i]; h2 ^= z[2 * (size_t)i + 1]; }
        return find(Cover{all.data(), (uint32_t)n_rows, h1, h2}, r);
    }

    // Split a cover on variable v into the buffers b0, b1 (each at least S.size long).
    void split(const Cover& S, int v, uint32_t* b0, uint32_t* b1, Cover& c0, Cover& c1) {
        rows_split += S.size;
        ++n_split;
        uint32_t* out[2] = {b0, b1};
        uint32_t cnt[2] = {0, 0};
        uint64_t ha[2] = {0, 0}, hb[2] = {0, 0};
        const int w = v >> 6, sh = v & 63;
        for (uint32_t k = 0; k < S.size; ++k) {
            const uint32_t i = S.rows[k];
            const int b = (int)((bits[(size_t)i * nw + w] >> sh) & 1ULL);
            out[b][cnt[b]++] = i;
            ha[b] ^= z[2 * (size_t)i];
            hb[b] ^= z[2 * (size_t)i + 1];
        }
        c0 = Cover{b0, cnt[0], ha[0], hb[0]};
        c1 = Cover{b1, cnt[1], ha[1], hb[1]};
    }

    // FIND(S', r) on a nonempty cover.
    int32_t find(const Cover& S, int r) {
        ++n_calls;
        if ((n_calls & 255) == 0 && time_limit >= 0 && elapsed() > time_limit) {
            abort_reason = 1;
            return ABORT;
        }
        // step 1: all examples of one class -> a leaf
        const int32_t c0 = y[S.rows[0]];
        bool pure = true;
        for (uint32_t k = 1; k < S.size; ++k)
            if (y[S.rows[k]] != c0) { pure = false; break; }
        if (pure) return leaf_of_class[c0];
        // step 2
        if (r == 0) return NONE;
        const bool memo_here = use_memo && r >= memo_min_rank;
        const Key key{S.h1, S.h2, S.size};
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

    // step 3 for r >= 2 (S' impure)
    int32_t find_r(const Cover& S, int r) {
        std::vector<uint64_t> orv(nw, 0ULL), andv(nw, ~0ULL);
        for (uint32_t k = 0; k < S.size; ++k) {
            const uint64_t* b = &bits[(size_t)S.rows[k] * nw];
            for (int w = 0; w < nw; ++w) { orv[w] |= b[w]; andv[w] &= b[w]; }
        }
        std::vector<uint32_t> buf(2 * (size_t)S.size);  // the two sides of the current split
        const double transient = 8.0 * S.size;
        mem_used += transient;
        int32_t result = NONE;
        bool done = false;
        for (int w = 0; w < nw && !done; ++w) {
            uint64_t inf = orv[w] & ~andv[w];
            while (inf) {
                const int v = (w << 6) + __builtin_ctzll(inf);
                inf &= inf - 1;
                Cover s0, s1;
                split(S, v, buf.data(), buf.data() + S.size, s0, s1);
                int32_t q0 = find(s0, r - 1);
                if (q0 == ABORT) { result = ABORT; done = true; break; }
                int32_t q1 = find(s1, r - 1);
                if (q1 == ABORT) { result = ABORT; done = true; break; }
                if (q0 >= 0 && q1 >= 0) { result = make_node(v, q0, q1); done = true; break; }
                if (q0 >= 0 || q1 >= 0) {  // step 3.3: re-execute the failing side with bound r
                    if (q0 < 0) q0 = find(s0, r); else q1 = find(s1, r);
                    if (q0 == ABORT || q1 == ABORT) result = ABORT;
                    else result = (q0 >= 0 && q1 >= 0) ? make_node(v, q0, q1) : NONE;
                    done = true;
                    break;
                }
            }
        }
        mem_used -= transient;
        return result;  // step 4 when NONE
    }

    // step 3 for r == 1 (S' impure): FIND(S'_v, 0) succeeds iff side v of S' is pure.
    int32_t find1(const Cover& S) {
        rows_find1 += S.size;
        ++n_find1;
        std::vector<uint64_t> P((size_t)n_classes * nw, 0ULL), N((size_t)n_classes * nw, 0ULL);
        if (nw == 1 && n_classes == 2) {  // the common case, in registers
            uint64_t p0 = 0, p1 = 0, q0 = 0, q1 = 0;
            for (uint32_t k = 0; k < S.size; ++k) {
                const uint32_t i = S.rows[k];
                const uint64_t b = bits[i], m = 0ULL - (uint64_t)y[i];  // m: all ones for class 1
                p1 |= b & m;
                q1 |= ~b & m;
                p0 |= b & ~m;
                q0 |= ~b & ~m;
            }
            P[0] = p0; P[1] = p1; N[0] = q0; N[1] = q1;
        } else for (uint32_t k = 0; k < S.size; ++k) {
            const uint32_t i = S.rows[k];
            const uint64_t* b = &bits[(size_t)i * nw];
            uint64_t* p = &P[(size_t)y[i] * nw];
            uint64_t* q = &N[(size_t)y[i] * nw];
            for (int w = 0; w < nw; ++w) { p[w] |= b[w]; q[w] |= ~b[w]; }
        }
        for (int w = 0; w < nw; ++w) {
            // bits beyond n_vars are 0 in every row: they must not count as side-0 values
            uint64_t valid = ~0ULL;
            if (w == nw - 1 && (n_vars & 63)) valid = (1ULL << (n_vars & 63)) - 1ULL;
            if (n_vars == 0) valid = 0ULL;
            uint64_t any1 = 0, many1 = 0, any0 = 0, many0 = 0;
            for (int c = 0; c < n_classes; ++c) {
                uint64_t p = P[(size_t)c * nw + w], q = N[(size_t)c * nw + w] & valid;
                many1 |= any1 & p; any1 |= p;
                many0 |= any0 & q; any0 |= q;
            }
            uint64_t inf = any1 & any0;  // informative: both sides nonempty
            while (inf) {
                const int bit = __builtin_ctzll(inf);
                inf &= inf - 1;
                const int v = (w << 6) + bit;
                const bool pure1 = !((many1 >> bit) & 1ULL), pure0 = !((many0 >> bit) & 1ULL);
                if (!pure0 && !pure1) continue;
                std::vector<uint32_t> buf(2 * (size_t)S.size);
                Cover s0, s1;
                split(S, v, buf.data(), buf.data() + S.size, s0, s1);
                int32_t q0 = leaf_of_class[y[s0.rows[0]]], q1 = leaf_of_class[y[s1.rows[0]]];
                if (pure0 && pure1) return make_node(v, q0, q1);
                // step 3.3 with r = 1: re-run the impure side with bound 1
                if (pure1) q0 = find(s0, 1); else q1 = find(s1, 1);
                if (q0 == ABORT || q1 == ABORT) return ABORT;
                return (q0 >= 0 && q1 >= 0) ? make_node(v, q0, q1) : NONE;
            }
        }
        return NONE;
    }
};

}  // namespace tl_minrank
