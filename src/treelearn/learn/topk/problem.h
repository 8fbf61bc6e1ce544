// Top-k / optimal search: what goes in and what comes out.
//
// Problem: the packed sample (BinaryData.columns, class codes, optional weights).
// Options: the search's settings as named fields (k, depth, criterion, limits, threads, and the
//          tuning switches that never change the result).
// Output:  the tree in preorder and the search statistics.
// Sample:  the sample in the two layouts the search counts in: packed columns (d, nw) and class
//          bitsets (C, nw), and row bitsets (n, dw) from which a node's rows are re-packed.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "core/count.h"
#include "core/criteria.h"
#include "core/limits.h"

namespace tl::topk {

using u64 = uint64_t;

// criterion -1 (a user G): cost(ctx, counts, rows, C, out) sets out[r] = (weight of row r) *
// impurity of the class counts counts[r * C .. r * C + C - 1] for a batch of rows; nonzero =
// failure (tl::batch_fn, the greedy learner's callback too)
using CostFn = tl::batch_fn;

struct Problem {
    int n = 0, d = 0, C = 2, nw = 0;
    const u64* columns = nullptr;  // (d, nw) packed feature columns (BinaryData.columns)
    const int64_t* y = nullptr;    // class codes
    const uint8_t* y8 = nullptr;   // or class codes as bytes (C <= 255; read instead of y when set):
                                   // a Dask task's packed problem, without an 8-byte-per-row copy
    const double* w = nullptr;     // sample weights or nullptr
};

struct Options {
    int k = 1;                     // candidates per node (>= d: all -> optimal)
    int max_depth = 3;
    int criterion = 0;             // tl's code (0 entropy, 1 Gini, 2 Kearns-Mansour, -1 user G)
    bool gain_ratio = false;       // rank by gain / split information
    CostFn cost = nullptr;         // criterion -1
    void* cost_ctx = nullptr;
    double time_limit = 0.0;       // seconds, <= 0: none
    double memory_limit_bytes = 1e9;  // cache cap (shared by the threads)
    int n_jobs = 1;
    // the incumbent's error (e.g. the greedy tree's): only trees with a smaller error are
    // searched for; when none exists the Output has no nodes (found = false)
    double upper_bound = std::numeric_limits<double>::infinity();
    // scikit-learn's min_weight_fraction_leaf as a weight (in the sample's units): every leaf of
    // a searched tree holds at least this much (0: none)
    double min_weight = 0.0;
    // scikit-learn's min_samples_leaf as rows: every leaf holds at least this many rows (<= 1: none)
    int min_rows = 0;
    // cost of a leaf in (weighted) errors: scikit-learn's ccp_alpha times the total weight (the
    // Penalised objective, objective.h; 0: plain misclassification)
    double leaf_penalty = 0.0;
    // leaf budget (max_leaves; 0 or >= 2^max_depth: none): Searcher::solve_budget
    int max_leaves = 0;
    // monotonic constraints per binary feature (-1, 0, +1; mono.h), two classes; null: none
    const int8_t* mono = nullptr;
    // tuning switches (none changes the result)
    bool cache_depth1 = true;      // also cache depth-1 subproblems
    bool feature_classes = false;  // group the features identical on an h = 2 node
    double* progress = nullptr;    // live counters for verbose (core/progress.h), or none
};

struct Output {
    std::vector<int> feature, left, right;
    std::vector<double> value;  // n_nodes * C
    std::vector<int64_t> nsamp;
    std::vector<int> label;     // per node: a leaf's forced class (a side collapsed under a monotonic
                                // constraint, mono.h), else -1 (the majority)
    double error = 0.0;
    double root_lb = 0.0;
    bool timed_out = false;
    bool cost_failed = false;  // the user criterion raised (the search stopped)
    bool interrupted = false;  // stopped by Ctrl-C (SIGINT)
    bool found = true;         // a tree below Options::upper_bound was found (else no nodes)
    bool memory_bound = false; // the search's frames do not fit its memory cap: not started (the root)
    double frame_bytes = 0.0;  // what one searcher's frames need
    long long nodes = 0, cache_hits = 0, evictions = 0, cache_entries = 0;
    double peak_bytes = 0.0;
};

// the search's internal switches (derived from Options; none changes the result)
struct Switches {
    bool all_k = false;        // k >= d: the optimum
    bool recon = false;        // rebuilding the returned tree (no shortcuts that skip a split)
    bool c1cache = true;       // cache depth-1 subproblems
    bool use_reps = true;      // feature classes on h = 2 nodes
    bool use_sim = true;       // similarity bounds (optimum only)
    bool use_child_lb = true;  // bound both children before solving either
    double mwl = 0.0;          // Options::min_weight (a split leaving a side lighter is no split)
    int mrl = 0;               // Options::min_rows (a split leaving a side with fewer rows is no split)
    double lam = 0.0;          // Options::leaf_penalty (the objective's parameter)
    bool min_leaf() const { return mwl > 0.0 || mrl > 1; }
    const int8_t* mono = nullptr;  // Options::mono (constrained splits cost as mono.h says)
};

struct Sample {
    int n, d, C, nw, dw;
    bool weighted;
    std::vector<u64> rowbits;  // n * dw, row-major: bits 0..d-1 the features, d + c the class c
    const u64* colbits;        // d * nw, column-major: the caller's BinaryData.columns (not copied)
    std::vector<u64> clsbits;  // C * nw, the rows of each class
    std::vector<int32_t> y;
    std::vector<double> w;
    bool complete = true;  // false: the clock stopped the layout (deadline, Ctrl-C); no search then
    // clock: checked between chunks of the copy and of the transpose (with 100,000s of features
    // they take seconds, before the search's first node), or null
    explicit Sample(const Problem& P, tl::Clock* clock = nullptr) {
        n = P.n;
        d = P.d;
        C = P.C;
        nw = P.nw;
        dw = (d + C + 63) / 64;
        weighted = P.w != nullptr;
        y.resize(n);
        if (P.y8 != nullptr)
            for (int i = 0; i < n; ++i) y[i] = (int32_t)P.y8[i];
        else
            for (int i = 0; i < n; ++i) y[i] = (int32_t)P.y[i];
        if (weighted) w.assign(P.w, P.w + n);
        clsbits.assign((size_t)C * nw, 0);
        tl::class_bitsets(y.data(), n, nw, clsbits.data());
        // ---- the layout in chunks, the clock checked between them (time limit)
        auto stopped = [&]() { return clock != nullptr && clock->timed_out() && !(complete = false); };
        colbits = P.columns;  // read in place: the caller holds the array for the search's duration
        if (stopped()) return;
        rowbits.assign((size_t)n * dw, 0);
        for (int b = 0; b < nw; b += 4) {
            if (stopped()) return;
            tl::columns_to_rows(P.columns, d, clsbits.data(), C, n, nw, rowbits.data(), b, b + 4);
        }
    }
    inline bool bit(int row, int f) const { return (rowbits[(size_t)row * dw + (f >> 6)] >> (f & 63)) & 1; }
};

}  // namespace tl::topk
