// Continuous optimal search, part 4 of 7: the (rows, depth) cache.
//
// Key: the exact set of rows of a node (its first feature's row order, which is canonical: every
// view of the same rows lists them in the same order) and the depth budget. Value: a lower bound
// on the optimal error and, once solved exactly, the optimal subtree. A set below a single split
// is a prefix or suffix of one column, so only sets two or more splits down are cached (the
// caller decides). New entries stop when the memory cap would be passed (cache_full); entries
// are never evicted. One mutex guards the map: lookups copy the entry out, so a thread never
// holds a pointer into a map another thread may grow.
#pragma once

#include <mutex>
#include <unordered_map>
#include <vector>

#include "data.h"

namespace tl::cont {
namespace detail {

struct CacheEntry {
    std::vector<int32_t> rows;
    int depth;
    double lb;
    bool exact;
    double cost;
    Sol sol;
};

struct CacheHit {
    bool found = false, exact = false;
    double lb = 0.0, cost = 0.0;
    Sol sol;
};

class Cache {
  public:
    Cache(double cap_bytes, double fixed) : cap(cap_bytes), fixed_bytes(fixed), peak(fixed) {}

    static uint64_t hash_rows(const Entry* v, int m, int depth) {
        uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)m << 8) ^ (uint64_t)depth;
        for (int i = 0; i < m; ++i) {
            h ^= (uint64_t)(uint32_t)v[i].row + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        }
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDULL;
        h ^= h >> 33;
        return h;
    }

    // the entry of these rows and depth, copied into hit (the subtree only when exact)
    void lookup(uint64_t h, const Entry* v, int m, int depth, CacheHit& hit) {
        std::lock_guard<std::mutex> lock(mu);
        hit.found = false;
        const CacheEntry* e = find(h, v, m, depth);
        if (!e) return;
        hit.found = true;
        hit.exact = e->exact;
        hit.lb = e->lb;
        hit.cost = e->cost;
        if (e->exact) hit.sol = e->sol;
    }

    void store(uint64_t h, const Entry* v, int m, int depth, double lb, bool exact, double cost, const Sol& sol) {
        std::lock_guard<std::mutex> lock(mu);
        CacheEntry* e = find(h, v, m, depth);
        if (e) {
            if (exact || lb > e->lb) {
                e->lb = std::max(e->lb, lb);
                if (exact) {
                    // a bound solved later: its subtree is new memory, counted like an entry's
                    double grow = sol_bytes(sol.size()) - (e->exact ? sol_bytes(e->sol.size()) : 0.0);
                    if (grow > 0.0 && (full || fixed_bytes + used + grow > cap)) {
                        full = true;  // keep what costs nothing: the optimum is a bound
                        e->lb = std::max(e->lb, cost);
                        return;
                    }
                    e->exact = true;
                    e->cost = cost;
                    e->sol = sol;
                    used += std::max(grow, 0.0);  // a smaller subtree reuses the block
                    peak = std::max(peak, fixed_bytes + used);
                }
            }
            return;
        }
        double bytes = ENTRY_BYTES + 4.0 * m + (exact ? sol_bytes(sol.size()) : 0.0);
        if (full || fixed_bytes + used + bytes > cap) {
            full = true;
            return;
        }
        CacheEntry ne;
        ne.rows.resize(m);
        for (int i = 0; i < m; ++i) ne.rows[i] = v[i].row;
        ne.depth = depth;
        ne.lb = lb;
        ne.exact = exact;
        ne.cost = cost;
        if (exact) ne.sol = sol;
        map[h].push_back(std::move(ne));
        used += bytes;
        ++entries;
        peak = std::max(peak, fixed_bytes + used);
    }

    long long n_entries() const { return entries; }
    double peak_bytes() const { return peak; }

  private:
    // what one entry takes besides its rows and subtree: the entry, its share of the map (a node
    // of key and bucket vector, a bucket pointer) and the allocator's header of each of the
    // three blocks (rows, subtree, bucket vector), measured against the process's growth
    static constexpr double ENTRY_BYTES = sizeof(CacheEntry) + 64.0 + 3 * 16.0;
    static double sol_bytes(size_t nodes) { return nodes ? sizeof(TNode) * (double)nodes + 16.0 : 0.0; }

    std::mutex mu;
    std::unordered_map<uint64_t, std::vector<CacheEntry>> map;
    double cap, fixed_bytes, peak, used = 0.0;
    bool full = false;
    long long entries = 0;

    CacheEntry* find(uint64_t h, const Entry* v, int m, int depth) {
        auto it = map.find(h);
        if (it == map.end()) return nullptr;
        for (CacheEntry& e : it->second) {
            if (e.depth != depth || (int)e.rows.size() != m) continue;
            bool same = true;
            for (int i = 0; i < m && same; ++i) same = e.rows[i] == v[i].row;
            if (same) return &e;
        }
        return nullptr;
    }
};

}  // namespace detail
}  // namespace tl::cont
