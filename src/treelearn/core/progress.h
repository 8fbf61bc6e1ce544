// Live counters of a running search, for `verbose`.
//
// The caller owns a small array of doubles (a NumPy array of N_SLOTS entries, NaN where a value
// is not known yet) and passes its address to the search; the search writes its counters there
// while it runs with the GIL released, and the caller's progress reporter (a Python thread)
// reads them. Writes are relaxed atomics, made only where the search reads its clock anyway
// (about once per millisecond per thread, see tl::Clock::reads): no lock, nothing in the
// hot loops. A null array (verbose off) makes every call a no-op.
//
// Slots: NODES (nodes searched, summed over threads), CACHE (cache / memo entries), INCUMBENT
// (error of the best complete tree found so far), LOWER_BOUND (a proven lower bound on the
// optimum, where the search maintains one during the search).
#pragma once

namespace tl {

enum Slot : int { NODES = 0, CACHE = 1, INCUMBENT = 2, LOWER_BOUND = 3, N_SLOTS = 4 };

inline void store(double* p, int slot, double v) {
    if (p) __atomic_store(&p[slot], &v, __ATOMIC_RELAXED);
}

inline double load(const double* p, int slot) {
    double v;
    __atomic_load(&p[slot], &v, __ATOMIC_RELAXED);
    return v;
}

// p[slot] += v (several threads may add)
inline void add(double* p, int slot, double v) {
    if (!p) return;
    double cur = load(p, slot), next;
    do {
        next = (cur == cur ? cur : 0.0) + v;  // NaN (not known yet) counts as 0
    } while (!__atomic_compare_exchange(&p[slot], &cur, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

// p[slot] = min(p[slot], v) (NaN: not known yet, replaced)
inline void lower_to(double* p, int slot, double v) {
    if (!p) return;
    double cur = load(p, slot);
    while (!(cur <= v)) {
        if (__atomic_compare_exchange(&p[slot], &cur, &v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}

// One thread's publisher: it adds to the summed slots what it counted since its last
// publication, and only when its clock has been read since (due()).
struct Feed {
    double* p = nullptr;
    unsigned seen = 0;
    double sent_nodes = 0.0, sent_cache = 0.0;

    template <typename Clock>
    bool due(const Clock& c) {
        if (!p || c.reads == seen) return false;
        seen = c.reads;
        return true;
    }
    // this thread's running totals of nodes and cache entries
    void counts(double nodes, double cache) {
        if (!p) return;
        if (nodes != sent_nodes) add(p, NODES, nodes - sent_nodes);
        if (cache != sent_cache) add(p, CACHE, cache - sent_cache);
        sent_nodes = nodes;
        sent_cache = cache;
    }
    void incumbent(double e) { lower_to(p, INCUMBENT, e); }
    void lower_bound(double b) { store(p, LOWER_BOUND, b); }
};

}  // namespace tl
