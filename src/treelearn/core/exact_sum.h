// Exact sums of doubles, whatever their order: a fixed-point accumulator over the whole range of
// float64 (a "long accumulator"), so that a sum split over row shards, threads or blocks in any
// way and merged gives the same bits as one pass in row order.
//
// A finite double is m * 2^(s - 1074) with m a 53-bit integer and s = max(E - 1, 0) for its
// biased exponent E: the bits [s, s + 53) of a 2,098-bit fixed-point number, whose 32-bit digit
// q weighs 2^(32 q - 1074). An accumulator holds the digits q0 .. q0 + W - 1 of that number (a
// window chosen from the values' exponents: `first_digit`, `window`) as signed 64-bit integers:
// a value adds its (at most three) 32-bit chunks to three digits, without carrying. A digit then
// stays below n * 2^32 in magnitude after n additions, so up to MAX_TERMS values (and any number
// of merges of accumulators whose terms total less than that) are exact. Merging is digit-wise
// addition (of windows aligned on the same q0). `round` carries the digits into a sign and a
// magnitude and rounds that exact sum to the nearest double (ties to even; beyond the double
// range, +-inf): a function of the exact sum alone, whatever the order of the terms.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tl {

struct ExactSum {
    static constexpr int64_t MAX_TERMS = int64_t(1) << 30;
    static constexpr int CARRY_DIGITS = 2;  // above the largest term's: sums of up to 2^30 terms

    // the lowest digit x (finite, non-zero) touches
    static inline int first_digit(double x) {
        uint64_t u;
        std::memcpy(&u, &x, sizeof u);
        const int E = (int)((u >> 52) & 0x7ff);
        return (E ? E - 1 : 0) >> 5;
    }
    // the digits a window needs from q_lo to hold sums of values whose first digits are in
    // [q_lo, q_hi]: a value's three digits, and the carries of the sum
    static inline int window(int q_lo, int q_hi) { return q_hi - q_lo + 3 + CARRY_DIGITS; }

    // adds x (finite, its first digit >= q0, inside the window) to the digits acc[0..) of q0..
    static inline void add(int64_t* acc, int q0, double x) {
        uint64_t u;
        std::memcpy(&u, &x, sizeof u);
        const int E = (int)((u >> 52) & 0x7ff);
        uint64_t m = u & ((uint64_t(1) << 52) - 1);
        if (E) m |= uint64_t(1) << 52;
        if (!m) return;
        const int s = E ? E - 1 : 0;
        const int q = (s >> 5) - q0, r = s & 31;
        const unsigned __int128 v = (unsigned __int128)m << r;  // at most 85 bits
        const int64_t c0 = (int64_t)(uint32_t)v, c1 = (int64_t)(uint32_t)(v >> 32), c2 = (int64_t)(uint64_t)(v >> 64);
        if (u >> 63) {
            acc[q] -= c0;
            acc[q + 1] -= c1;
            acc[q + 2] -= c2;
        } else {
            acc[q] += c0;
            acc[q + 1] += c1;
            acc[q + 2] += c2;
        }
    }

    // the exact sum of the W digits acc[0..W) of q0.., rounded to the nearest double; d: W scratch
    static double round(const int64_t* acc, int W, int q0, int64_t* d) {
        std::memcpy(d, acc, sizeof(int64_t) * (size_t)W);
        int64_t carry = 0;
        for (int i = 0; i < W; ++i) {  // digits in [0, 2^32), the sign in the last carry
            const int64_t t = d[i] + carry;
            carry = t >> 32;  // (arithmetic shift: floor division)
            d[i] = t - (carry << 32);
        }
        bool neg = carry < 0;
        if (neg) {  // the magnitude: two's complement over the digits
            int64_t c = 1;
            for (int i = 0; i < W; ++i) {
                const int64_t t = (0xffffffffLL - d[i]) + c;
                d[i] = t & 0xffffffffLL;
                c = t >> 32;
            }
        }
        int top = W - 1;
        while (top >= 0 && d[top] == 0) --top;
        if (top < 0) return 0.0;
        // the leading 96 bits (digits top, top-1, top-2) and whether any bit below them is set
        unsigned __int128 M = 0;
        for (int k = 0; k < 3; ++k) {
            const int i = top - k;
            M = (M << 32) | (unsigned __int128)(i >= 0 ? (uint64_t)d[i] : 0);
        }
        bool sticky = false;
        for (int i = top - 3; i >= 0 && !sticky; --i) sticky = d[i] != 0;
        int lead = 95;
        while (!((M >> lead) & 1)) --lead;
        // the value is M * 2^(32 (q0 + top - 2) - 1074); keep 53 bits from `lead`
        const int64_t e2 = 32LL * (q0 + top - 2) - 1074;  // weight of bit 0 of M
        int drop = lead - 52;
        // subnormal results keep fewer bits: the kept bits' lowest weight is at least 2^-1074
        if (e2 + drop < -1074) drop = (int)(-1074 - e2);
        uint64_t mant;
        if (drop > 0) {
            mant = (uint64_t)(M >> drop);
            const unsigned __int128 rest = M & ((((unsigned __int128)1) << drop) - 1);
            const unsigned __int128 half = ((unsigned __int128)1) << (drop - 1);
            if (rest > half || (rest == half && (sticky || (mant & 1)))) ++mant;
        } else {
            mant = (uint64_t)(M << -drop);  // (exact: lead < 52, no bit below is set)
        }
        const double r = std::ldexp((double)mant, (int)(e2 + drop));
        return neg ? -r : r;
    }
};

}  // namespace tl
