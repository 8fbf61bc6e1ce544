// Top-k / optimal search: similarity lower bounds (optimal search only).
//
// opt_h(S) >= opt_h(S') - w(S' \ S): removing a row lowers the optimal error by at most its
// weight. Each level keeps the covers and (lower bounds on the) optimal errors of the last two
// subproblems solved there; a new subproblem of the same depth is bounded by them before it is
// searched (MurTree / STreeD's similarity bound).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/count.h"

namespace tl::topk {

class SimilarityBounds {
  public:
    SimilarityBounds(int n_levels, int nw_, const double* weights) : nw(nw_), w(weights), slots(n_levels) {
        for (auto& s : slots) s.cover.resize(2 * (size_t)nw);
    }

    // the bound on the subproblem (cover, h) from level L's recent subproblems; 0 when none
    double lb(int L, const uint64_t* cover, int h) const {
        const Slots& c = slots[L];
        double best = 0.0;
        for (int sl = 0; sl < 2; ++sl) {
            if (!c.valid[sl] || c.h[sl] != h) continue;
            const uint64_t* sc = &c.cover[(size_t)sl * nw];
            const double diff = w ? tl::weighted_andnot_sum(sc, cover, nw, w)
                                  : (double)tl::andnot_count(sc, cover, nw);
            best = std::max(best, c.val[sl] - diff);
        }
        return best;
    }

    // keep a subproblem's cover and (lower bound on its) optimal error; two slots per level: the
    // most recent and the one before
    void remember(int L, const uint64_t* cover, int h, double val) {
        Slots& c = slots[L];
        const int sl = c.next;
        c.next ^= 1;
        std::copy(cover, cover + nw, c.cover.begin() + (size_t)sl * nw);
        c.val[sl] = val;
        c.h[sl] = h;
        c.valid[sl] = true;
    }

  private:
    struct Slots {
        std::vector<uint64_t> cover;  // 2 * nw
        double val[2] = {0, 0};
        int h[2] = {-1, -1};
        bool valid[2] = {false, false};
        int next = 0;
    };
    int nw;
    const double* w;  // sample weights or nullptr
    std::vector<Slots> slots;
};

}  // namespace tl::topk
