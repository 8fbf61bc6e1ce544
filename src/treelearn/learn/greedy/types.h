// Greedy growth: the types shared by the split finders and the growth loop, and the selection
// rule of a node's split search (Picker). See grow.h for the whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/criteria.h"
#include "core/ties.h"

namespace tl::greedy {

#if defined(__GNUC__)
#define TL_INLINE inline __attribute__((always_inline))
#else
#define TL_INLINE inline
#endif

static const double GAIN_TOL = tl::GAIN_TIE;  // gains closer than this (normalised units) are ties

// the sorted finder's entry: a row, its code in the feature and its class (kept inside the entry so
// that a scan reads memory sequentially)
struct Entry {
    int32_t row;
    int32_t code;
    int32_t cls;
};

// the entry of a criterion of sums (regression): the row's first target channel (w (y - m), the
// only channel a one-output scan adds up) in place of a class, so the scan streams through the
// sorted array instead of reading the rows' channels by random access
struct VEntry {
    int32_t row;
    int32_t code;
    double v;
    static constexpr int32_t cls = 0;
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
    int n_jobs = 1;         // threads of either finder over a large node's features (the same tree for any number)
    int64_t hist_par_min = -1;  // histogram finder: a node's entries (rows x features) worth threads (< 0: its default)
    int hist_digests = 0;       // histogram finder: 1, a digest of every histogram made (Result::hist_digests)
    double min_weight_leaf = 0.0;  // a split's sides need at least this weight (scikit-learn's)
    int64_t max_features = 0;      // > 0: features drawn per node until this many varied (scikit-learn's)
    int random_split = 0;          // 1: one random threshold (category) per drawn feature (splitter="random")
    uint64_t seed = 0;             // of the per-node draws (a node's draws: its id and this seed)
    double time_limit = 0.0;  // seconds from the start of the growth, <= 0: none (checked per split)
    tl::batch_fn cost_cb = nullptr;  // criterion -1: W * G of rows of class counts
    void* cost_ctx = nullptr;
};

struct Result {
    std::vector<int64_t> left, right, feature, split_code, split_low, n_samples;
    std::vector<uint8_t> missing_left;  // 1: a missing value goes left
    std::vector<double> value, impurity;
    int64_t n_nodes = 0;
    bool cost_failed = false;  // the user criterion failed: the growth stopped early
    int stopped = 0;           // the growth stopped early: 1 Ctrl-C, 2 the time limit (open nodes are leaves)
    bool leaves_known = false; // P.leaf_of holds each row's leaf (the histogram finder filled it)
    int64_t threaded_builds = 0;  // histogram finder: node histograms built on more than one thread
    std::vector<uint64_t> hist_digests;  // histogram finder, when asked: FNV-1a of each histogram's bits, in order
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
    double lo = -std::numeric_limits<double>::infinity();  // monotonic constraints: the bounds of the
    double hi = std::numeric_limits<double>::infinity();   // positive class's fraction in this node
    Split best;
    int64_t hist = -1;   // hist finder: slot of the node's histogram (-1: none)
};

// The random draws of one node (max_features, splitter="random"): a generator seeded by the
// growth's seed and the node's id (ids are given in creation order, the same for any number of
// threads), so a node's draws do not depend on how many nodes were searched before it.
struct NodeRng {
    uint64_t s;
    NodeRng(uint64_t seed, int64_t id) : s(seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(id + 1))) { next(); }
    uint64_t next() {  // splitmix64
        uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // uniform in [0, n) (n >= 1; the modulo bias is below 2^-32 for n < 2^32)
    int64_t below(int64_t n) { return (int64_t)(next() % (uint64_t)n); }
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
    const int8_t* mono = nullptr;  // (d,) or none: monotonic constraints (+1, -1, 0) of two classes
    const double* stats = nullptr; // (n, C) or none: regression, each row's channels (weights applied); y unused
    int64_t* leaf_of = nullptr;    // (n,) or none: out, each row's leaf (filled by the histogram finder)
};

// A row's share of a node's channels: its weight in its class's channel (class counts), or its
// own statistics in every channel (a regression criterion, Crit::moments)
template <class Crit>
TL_INLINE void add_row(const Problem& P, double* acc, int64_t row, int32_t cls, double wi) {
    if constexpr (Crit::moments) {
        const double* s = P.stats + (size_t)row * P.C;
        for (int c = 0; c < P.C; ++c) acc[c] += s[c];
    } else {
        acc[cls] += wi;
    }
}

// Monotonic constraints (scikit-learn's, two classes): a split on a constrained feature is
// admissible when both sides' fractions of class 1 lie in the node's bounds [lo, hi] and the
// right side's (x >= t) is at least (+1) / at most (-1) the left side's; a split on a free
// feature always is (its children's values are clipped to the bounds). l1, r1: the class-1
// weights of the left and right sides.
TL_INLINE bool admissible(const Problem& P, int32_t f, double l1, double WL, double r1, double WR,
                          double lo, double hi) {
    if (P.mono[f] == 0) return true;
    const double pl = l1 / WL, pr = r1 / WR;
    if (pl < lo || pl > hi || pr < lo || pr > hi) return false;
    return (pl - pr) * (double)P.mono[f] <= 0.0;
}

// The width of a candidate split: how many of its column's candidate conditions cut the node's
// rows the same way. A numeric split `code >= k` whose largest code on the left is `low`: k - low
// (exact mode: the column's distinct training values in the gap between the node's largest value
// going left and its smallest going right, counted as the midpoints between them; histogram mode:
// the quantile thresholds in that gap). A categorical condition and the missing-only split: 1.
TL_INLINE int32_t split_width(const Problem& P, int32_t f, int32_t code, int32_t low) {
    return (P.is_cat[f] || code == P.miss_code[f]) ? 1 : code - low;
}

// The selection rule of a node's split search. Scores within tol of each other are ties; among
// tied candidates the widest (split_width) wins, then the first in scan order (features in
// index order, codes ascending). Precisely, in scan order, with m the lowest score seen so far
// (this one included): a candidate replaces the best when its score is below best - tol, or when
// it is at most m + tol and strictly wider than the best. The best's score stays within tol of m,
// so only candidates at most m + tol can change anything (what Recorder relies on).
// A batched criterion's candidates are kept (sides' counts and the split) and replayed through
// the same rule once scored, in flushes of bounded size: the result is the one the rule gives
// over the whole scan.
template <class Crit>
struct Picker {
    const Crit& crit;
    Split& best;
    double tol;
    tl::CandidateBatch* batch;
    std::vector<Split>* pending;
    const Problem* prob;
    double mwl = 0.0;  // min_weight_leaf: a side of less weight makes the candidate invalid
    double mlo = -std::numeric_limits<double>::infinity();  // the node's bounds (monotonic constraints)
    double mhi = std::numeric_limits<double>::infinity();
    double low = std::numeric_limits<double>::infinity();    // m: the lowest score so far
    double limit = std::numeric_limits<double>::infinity();  // m + tol
    int32_t best_width = 0;
    static constexpr size_t FLUSH = 1 << 16;

    TL_INLINE void take(double sc, int32_t f, int32_t code, int32_t lo, uint8_t ml) {
        if (!(sc <= limit)) return;  // worse than every earlier candidate by more than tol
        if constexpr (Crit::moments) if (sc == std::numeric_limits<double>::infinity()) return;  // inadmissible
        if (sc < low) { low = sc; limit = sc + tol; }
        const int32_t wd = split_width(*prob, f, code, lo);
        if (sc < best.score - tol || wd > best_width) {
            best.score = sc; best.feature = f; best.code = code; best.low = lo; best.mleft = ml;
            best_width = wd;
        }
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
        if (WL < mwl || WR < mwl) return;
        if (prob->mono && !admissible(*prob, f, l1, WL, r1, WR, mlo, mhi)) return;
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
        if (WL < mwl || WR < mwl) return;
        if (prob->mono && !admissible(*prob, f, L[1], WL, tot[1] - L[1], WR, mlo, mhi)) return;
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

// The split search of one thread's share of a node's features (built-in criteria only): keeps
// the candidates at most tol above the lowest score it saw before them (included), in scan order.
// Replaying every thread's records through Picker::take in feature order gives the Picker's
// result over the whole scan: a candidate left out is above its thread's lowest earlier score +
// tol, so above the whole scan's lowest earlier score m + tol, and Picker::take ignores it
// (it changes neither m nor the best, whose score is at most m + tol).
template <class Crit>
struct Recorder {
    const Crit& crit;
    std::vector<Split>* out;
    double tol;
    double mwl = 0.0;  // min_weight_leaf, as Picker's
    const Problem* prob = nullptr;
    double mlo = -std::numeric_limits<double>::infinity();  // the node's bounds, as Picker's
    double mhi = std::numeric_limits<double>::infinity();
    double low = std::numeric_limits<double>::infinity();

    TL_INLINE void take(double sc, int32_t f, int32_t code, int32_t lo, uint8_t ml) {
        if constexpr (Crit::moments) if (sc == std::numeric_limits<double>::infinity()) return;  // inadmissible
        if (sc <= low + tol) {
            if (sc < low) low = sc;
            Split s;
            s.feature = f; s.code = code; s.low = lo; s.mleft = ml; s.score = sc;
            out->push_back(s);
        }
    }
    TL_INLINE void two(double l0, double l1, double r0, double r1, double WL, double WR,
                       int32_t f, int32_t code, int32_t lo, uint8_t ml = 0) {
        if (WL < mwl || WR < mwl) return;
        if (prob->mono && !admissible(*prob, f, l1, WL, r1, WR, mlo, mhi)) return;
        take(crit.score2(l0, l1, r0, r1, WL, WR), f, code, lo, ml);
    }
    TL_INLINE void rest(const double* L, const double* tot, double WL, double WR, double* buf,
                        int32_t f, int32_t code, int32_t lo, uint8_t ml = 0) {
        if (WL < mwl || WR < mwl) return;
        if (prob->mono && !admissible(*prob, f, L[1], WL, tot[1] - L[1], WR, mlo, mhi)) return;
        take(crit.score(L, tot, WL, WR, buf), f, code, lo, ml);
    }
    bool failed() const { return false; }
};

}  // namespace tl::greedy
