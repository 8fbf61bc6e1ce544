// Top-k / optimal search: the exact cache of solved subproblems.
//
// Keyed by (cover bitset, remaining depth h): the cover is stored in an arena (nw words per
// entry) and compared in full, so a hash collision never returns a wrong entry. An entry holds
// the solved error and root feature, or a lower bound (a branch-and-bound call that failed), or
// an anytime answer (the search timed out). Memory cap: when storing would pass it, every entry
// is evicted (counted in `evictions`).
#pragma once
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/limits.h"

namespace tl::topk {

enum EntryStatus : uint8_t { LOWER_BOUND = 0, SOLVED = 1, ANYTIME = 2 };

struct Key {
    uint64_t hash;
    size_t off;
    int h;
};
struct Entry {
    double err;  // solved: error; lower-bound entry: the bound
    int f;
    uint8_t status;  // EntryStatus
};

// fingerprint of a cover of m rows over nw words: four independent multiply-xor lanes (no
// serial dependency across all words), mixed
inline uint64_t cover_hash(const uint64_t* cover, int nw, int m) {
    uint64_t a = 0x243F6A8885A308D3ULL ^ (uint64_t)m, b = 0x13198A2E03707344ULL, c = 0xA4093822299F31D0ULL,
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
    uint64_t h = a ^ (b * 0x9E3779B97F4A7C15ULL) ^ (c * 0xc4ceb9fe1a85ec53ULL) ^ (e * 0xff51afd7ed558ccdULL);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

class Cache {
  public:
    struct KeyHash {
        size_t operator()(const Key& k) const { return (size_t)(k.hash ^ ((uint64_t)k.h * 0x9E3779B97F4A7C15ULL)); }
    };
    struct KeyEq {
        const std::vector<uint64_t>* arena;
        int nw;
        bool operator()(const Key& a, const Key& b) const {
            return a.hash == b.hash && a.h == b.h &&
                   std::memcmp(arena->data() + a.off, arena->data() + b.off, sizeof(uint64_t) * nw) == 0;
        }
    };
    using Map = std::unordered_map<Key, Entry, KeyHash, KeyEq>;

    long long hits = 0, evictions = 0;

    Cache(int nw_, tl::MemoryMeter& meter) : nw(nw_), mem(meter), map(16, KeyHash(), KeyEq{&arena, nw_}) {}
    Cache(const Cache&) = delete;  // the map's comparator points at this object's arena
    Cache& operator=(const Cache&) = delete;

    double bytes() const {
        return 8.0 * (double)arena.capacity() + (double)map.size() * (sizeof(Key) + sizeof(Entry) + 24.0) +
               8.0 * (double)map.bucket_count();
    }
    size_t size() const { return map.size(); }

    bool lookup(const uint64_t* cover, uint64_t hash, int h, Entry& out) {
        size_t off = arena.size();
        arena.insert(arena.end(), cover, cover + nw);
        auto it = map.find(Key{hash, off, h});
        arena.resize(off);
        if (it == map.end()) return false;
        out = it->second;
        ++hits;
        return true;
    }
    void store(const uint64_t* cover, uint64_t hash, int h, const Entry& e) {
        double need = bytes() + 8.0 * nw + 64.0;
        if (need > mem.cap && !map.empty()) evict_all();
        size_t off = arena.size();
        arena.insert(arena.end(), cover, cover + nw);
        auto res = map.emplace(Key{hash, off, h}, e);
        if (!res.second) {
            arena.resize(off);
            res.first->second = e;
        }
        mem.note(bytes());
    }

  private:
    int nw;
    tl::MemoryMeter& mem;
    std::vector<uint64_t> arena;
    Map map;

    void evict_all() {
        map.clear();
        arena.clear();
        arena.shrink_to_fit();
        Map fresh(16, KeyHash(), KeyEq{&arena, nw});
        map.swap(fresh);
        ++evictions;
    }
};

}  // namespace tl::topk
