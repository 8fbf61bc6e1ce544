// Continuous optimal search: the depth-2 solver's vector kernel (two classes, unit weights, nodes
// of fewer than 2^15 rows, x86 with SSE4.1; depth2.h falls back to eval_2u elsewhere).
//
// The same computation as eval_2u, eight rows at a time in 16-bit lanes. When a depth-2 node
// opens (begin_node), every feature's rows in that feature's order get their class as +1/-1 and a
// mask of where a new value starts; when the node's search takes a root feature f (the first
// evaluation of f there), every feature's rows get their position in f's order. A threshold's
// evaluation ("the first p rows of f go left") is then, per feature: a compare with p gives each
// row's side, the two sides' class balances are prefix sums of the masked +1/-1 lanes, and both
// windows (depth2.h) are checked at once at the rows where a new value starts. A block where some
// balance leaves its window (rare) is replayed row by row, in order, so that the improvements, the
// sides' ends (bound reached) and the trees are exactly eval_2u's.
#pragma once

#include "depth2.h"

#if defined(__SSE4_1__)
#include <smmintrin.h>
#include <tmmintrin.h>
#define TL_CONT_SIMD 1
#else
#define TL_CONT_SIMD 0
#endif

namespace tl::cont {
namespace detail {

#if TL_CONT_SIMD

inline void Depth2::begin_node(const Entry* view, int m) {
    node_on = simd_on && m >= 16 && m < (1 << 15) && D.C == 2 && !D.weighted && !skip_on;
    node_f = -1;
    if (!node_on) return;
    node_view = view;
    node_m = m;
    const size_t fm = (size_t)D.F * m;
    if (cls16.size() < fm) {
        cls16.resize(fm);
        bnd16.resize(fm);
        pos16.resize(fm);
    }
    for (int g = 0; g < D.F; ++g) {
        const Entry* v = view + (size_t)g * m;
        int16_t* c = cls16.data() + (size_t)g * m;
        int16_t* b = bnd16.data() + (size_t)g * m;
        for (int i = 0; i < m; ++i) {
            c[i] = D.lab[v[i].row] == 0 ? 1 : -1;
            b[i] = i > 0 && v[i].rank != v[i - 1].rank ? -1 : 0;
        }
    }
}

// every feature's rows get their position in feature f's order (p of them go left at threshold p)
inline void Depth2::take_feature(int f) {
    const int m = node_m;
    const Entry* vf = node_view + (size_t)f * m;
    ones.resize(m + 1);  // rows of class 1 among the first i of f's order
    ones[0] = 0;
    for (int i = 0; i < m; ++i) {
        code[vf[i].row] = i;
        ones[i + 1] = ones[i] + D.lab[vf[i].row];
    }
    for (int g = 0; g < D.F; ++g) {
        const Entry* v = node_view + (size_t)g * m;
        int16_t* a = pos16.data() + (size_t)g * m;
        for (int i = 0; i < m; ++i) a[i] = (int16_t)code[v[i].row];
    }
    node_f = f;
}

inline void Depth2::eval_2u_simd(int f, int p, Side* sd, const int* order, const double* lbs, const double* caps) {
    if (node_f != f) take_feature(f);
    const int m = node_m;
    const int T1[2] = {ones[p], ones[m] - ones[p]}, T0[2] = {p - T1[0], m - p - T1[1]};
    Bal st[2];
    for (int s = 0; s < 2; ++s) st[s].start(T0[s] + T1[s], T0[s] - T1[s], lbs[s], caps[s]);
    for (int gi = 0; gi < D.F && !(st[0].done && st[1].done); ++gi)
        if (scan_simd(order[gi], p, st)) break;
    for (int s = 0; s < 2; ++s) st[s].store(sd[s]);
}

// rows [i, e) of feature g's pass, one at a time (eval_2u's logic; d: both sides' balances);
// true when both sides are done
inline bool Depth2::replay(int g, int p, int i, int e, int* d, Bal* st) const {
    const int m = node_m;
    const int16_t* a = pos16.data() + (size_t)g * m;
    const int16_t* c = cls16.data() + (size_t)g * m;
    const int16_t* b = bnd16.data() + (size_t)g * m;
    for (; i < e; ++i) {
        if (b[i]) {
            for (int s = 0; s < 2; ++s)
                if ((uint32_t)(d[s] - st[s].lo) > st[s].w) st[s].improve(d[s], g, ranks_simd(g, p, i, s));
            if (st[0].done && st[1].done) return true;
        }
        d[a[i] < p ? 0 : 1] += c[i];
    }
    return false;
}

// the ranks either side of the threshold before row i of feature g's order, for side s
inline std::pair<int, int> Depth2::ranks_simd(int g, int p, int i, int s) const {
    const int m = node_m;
    const int16_t* a = pos16.data() + (size_t)g * m;
    const Entry* v = node_view + (size_t)g * m;
    int lo = i - 1, hi = i;
    while (lo >= 0 && (a[lo] < p ? 0 : 1) != s) --lo;
    while (hi < m && (a[hi] < p ? 0 : 1) != s) ++hi;
    return {v[lo].rank, v[hi].rank};
}

// one feature's pass; true when both sides are done (for every feature)
inline bool Depth2::scan_simd(int g, int p, Bal* st) const {
    const int m = node_m;
    const int16_t* a = pos16.data() + (size_t)g * m;
    const int16_t* c = cls16.data() + (size_t)g * m;
    const int16_t* b = bnd16.data() + (size_t)g * m;
    auto lanes = [](const Bal& s, __m128i& lo, __m128i& hi) {  // the window in 16-bit lanes
        const int l = std::max(s.lo, -32768), h = (int)std::min<int64_t>((int64_t)s.lo + s.w, 32767);
        lo = _mm_set1_epi16((int16_t)l);
        hi = _mm_set1_epi16((int16_t)h);
    };
    __m128i lo0, hi0, lo1, hi1;
    lanes(st[0], lo0, hi0);
    lanes(st[1], lo1, hi1);
    const __m128i vp = _mm_set1_epi16((int16_t)p);
    const __m128i last = _mm_set1_epi16(0x0F0E);  // every lane takes lane 7 (pshufb)
    // both sides' balances before the block, in every lane; rows of side 0 passed, per lane
    __m128i c0 = _mm_setzero_si128(), c1 = _mm_setzero_si128(), nleft = _mm_setzero_si128();
    const int m8 = m & ~7;
    for (int i = 0; i < m8; i += 8) {
        if ((i & 63) == 0 && i > 0) {  // neither side able to leave its window in this feature: next one
            __m128i t = _mm_add_epi16(nleft, _mm_srli_si128(nleft, 8));
            t = _mm_add_epi16(t, _mm_srli_si128(t, 4));
            t = _mm_add_epi16(t, _mm_srli_si128(t, 2));
            const int passed0 = (int16_t)_mm_extract_epi16(t, 0);
            if (st[0].hopeless((int16_t)_mm_extract_epi16(c0, 0), st[0].n - passed0) &&
                st[1].hopeless((int16_t)_mm_extract_epi16(c1, 0), st[1].n - (i - passed0)))
                return false;
        }
        const __m128i left = _mm_cmplt_epi16(_mm_loadu_si128((const __m128i*)(a + i)), vp);
        const __m128i cv = _mm_loadu_si128((const __m128i*)(c + i));
        const __m128i x0 = _mm_and_si128(left, cv), x1 = _mm_andnot_si128(left, cv);
        __m128i s0 = _mm_add_epi16(x0, _mm_slli_si128(x0, 2)), s1 = _mm_add_epi16(x1, _mm_slli_si128(x1, 2));
        s0 = _mm_add_epi16(s0, _mm_slli_si128(s0, 4));
        s1 = _mm_add_epi16(s1, _mm_slli_si128(s1, 4));
        s0 = _mm_add_epi16(_mm_add_epi16(s0, _mm_slli_si128(s0, 8)), c0);  // inclusive balances
        s1 = _mm_add_epi16(_mm_add_epi16(s1, _mm_slli_si128(s1, 8)), c1);
        const __m128i e0 = _mm_sub_epi16(s0, x0), e1 = _mm_sub_epi16(s1, x1);  // before each row
        const __m128i out = _mm_and_si128(
            _mm_or_si128(_mm_or_si128(_mm_cmplt_epi16(e0, lo0), _mm_cmpgt_epi16(e0, hi0)),
                         _mm_or_si128(_mm_cmplt_epi16(e1, lo1), _mm_cmpgt_epi16(e1, hi1))),
            _mm_loadu_si128((const __m128i*)(b + i)));
        if (__builtin_expect(!_mm_testz_si128(out, out), 0)) {  // an improvement in this block
            int d[2] = {(int16_t)_mm_extract_epi16(c0, 0), (int16_t)_mm_extract_epi16(c1, 0)};
            if (replay(g, p, i, i + 8, d, st)) return true;
            lanes(st[0], lo0, hi0);
            lanes(st[1], lo1, hi1);
        }
        c0 = _mm_shuffle_epi8(s0, last);
        c1 = _mm_shuffle_epi8(s1, last);
        nleft = _mm_sub_epi16(nleft, left);
    }
    int d[2] = {(int16_t)_mm_extract_epi16(c0, 0), (int16_t)_mm_extract_epi16(c1, 0)};
    return replay(g, p, m8, m, d, st);
}

#else  // no vector kernel: eval() never calls it

inline void Depth2::begin_node(const Entry*, int) { node_on = false; }
inline void Depth2::take_feature(int) {}
inline void Depth2::eval_2u_simd(int, int, Side*, const int*, const double*, const double*) {}

#endif

}  // namespace detail
}  // namespace tl::cont
