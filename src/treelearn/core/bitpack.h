// Bit packing shared by the data layer and the compiled searches.
//
// * tl::transpose64: 64x64 bit-matrix transpose (bit j of A[i] <-> bit i of A[j]) in six
//   swap stages with constant bounds, so that the compiler unrolls and vectorises them;
// * tl::pack_binary<T>: a row-major (n, d) matrix whose values are all 0 or 1 -> packed
//   feature columns (d, ceil(n / 64)) in the BinaryData layout (bit r % 64 of word r / 64 is row
//   r), in one pass: each row becomes a row bitset (eight 0/1 bytes -> eight bits by one
//   multiply), then every 64x64 block is transposed. Returns false (output unspecified) as soon
//   as a value is not 0 or 1 (NaN included).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tl {

using u64 = uint64_t;

template <int J>
static inline void transpose_stage(u64* A, u64 m) {
    for (int k = 0; k < 64; k += 2 * J)
        for (int l = 0; l < J; ++l) {
            u64 t = ((A[k + l] >> J) ^ A[k + l + J]) & m;
            A[k + l] ^= (t << J);
            A[k + l + J] ^= t;
        }
}

// In: bit j of A[i] is element (i, j). Out: bit i of A[j] is element (i, j).
static inline void transpose64(u64* A) {
    transpose_stage<32>(A, 0x00000000FFFFFFFFULL);
    transpose_stage<16>(A, 0x0000FFFF0000FFFFULL);
    transpose_stage<8>(A, 0x00FF00FF00FF00FFULL);
    transpose_stage<4>(A, 0x0F0F0F0F0F0F0F0FULL);
    transpose_stage<2>(A, 0x3333333333333333ULL);
    transpose_stage<1>(A, 0x5555555555555555ULL);
}

// eight bytes, each 0 or 1, little-endian in v -> bit b = byte b
static inline unsigned bytes_to_bits(u64 v) { return (unsigned)((v * 0x0102040810204080ULL) >> 56); }

// up to 64 bytes x[0..len), each 0 or 1 -> one word (bit t = byte t); every byte is ORed into
// `bad`, so that (bad & 0xFE..FE) != 0 afterwards flags a byte that was not 0 or 1
static inline u64 pack_word(const uint8_t* x, int len, u64& bad) {
    u64 word = 0;
    int t = 0;
    for (; t + 8 <= len; t += 8) {
        u64 v;
        std::memcpy(&v, x + t, 8);
        bad |= v;
        word |= (u64)bytes_to_bits(v) << t;
    }
    for (; t < len; ++t) {
        bad |= x[t];
        word |= (u64)(x[t] & 1) << t;
    }
    return word;
}
static inline bool bytes_ok(u64 bad) { return (bad & 0xFEFEFEFEFEFEFEFEULL) == 0; }

// len values of type T -> 0/1 bytes: the values themselves for uint8 (checked by pack_word),
// else a converted copy in tmp; nullptr when a value is not 0 or 1 (NaN included)
template <typename T>
static inline const uint8_t* as_bytes(const T* x, long long len, std::vector<uint8_t>& tmp) {
    if (std::is_same<T, uint8_t>::value) return reinterpret_cast<const uint8_t*>(x);
    bool ok = true;
    for (long long i = 0; i < len; ++i) {
        const T v = x[i];
        ok &= (v == (T)0) | (v == (T)1);
        tmp[i] = (uint8_t)(v == (T)1);
    }
    return ok ? tmp.data() : nullptr;
}

// row-major values of type T (n, d) with row stride `stride` elements -> packed columns
// out[(j * nw) + w]; counts[j] = number of ones of column j. false: a value is not 0 or 1.
// Each row becomes a row bitset, then every 64x64 block is transposed.
template <typename T>
static bool pack_binary(const T* X, long long n, int d, long long stride, u64* out, long long* counts) {
    const long long nw = (n + 63) / 64;
    const int dw = (d + 63) / 64;
    std::vector<u64> rows((size_t)64 * dw);
    std::vector<uint8_t> tmp(std::is_same<T, uint8_t>::value ? 0 : (size_t)d);
    u64 blk[64];
    u64 bad = 0;
    for (int j = 0; j < d; ++j) counts[j] = 0;
    for (long long b = 0; b < nw; ++b) {
        const long long r0 = b * 64;
        const int rn = (n - r0 < 64) ? (int)(n - r0) : 64;
        for (int i = 0; i < 64; ++i) {
            u64* rb = &rows[(size_t)i * dw];
            if (i >= rn) {
                for (int fb = 0; fb < dw; ++fb) rb[fb] = 0;
                continue;
            }
            const uint8_t* bytes = as_bytes(X + (r0 + i) * stride, d, tmp);
            if (!bytes) return false;
            for (int fb = 0; fb < dw; ++fb) rb[fb] = pack_word(bytes + fb * 64, std::min(64, d - fb * 64), bad);
        }
        if (!bytes_ok(bad)) return false;
        for (int fb = 0; fb < dw; ++fb) {
            for (int i = 0; i < 64; ++i) blk[i] = rows[(size_t)i * dw + fb];
            transpose64(blk);  // blk[t] bit i = feature fb*64+t of row r0+i
            const int jn = std::min(64, d - fb * 64);
            for (int t = 0; t < jn; ++t) {
                out[(size_t)(fb * 64 + t) * nw + b] = blk[t];
                counts[fb * 64 + t] += __builtin_popcountll(blk[t]);
            }
        }
    }
    return true;
}

// column-major values (column j at X + j * stride, n rows each) -> packed columns, as
// pack_binary, without transposes: 64 values of a column make one word
template <typename T>
static bool pack_binary_colmajor(const T* X, long long n, int d, long long stride, u64* out, long long* counts) {
    const long long nw = (n + 63) / 64;
    std::vector<uint8_t> tmp(std::is_same<T, uint8_t>::value ? 0 : (size_t)n);
    for (int j = 0; j < d; ++j) {
        const uint8_t* bytes = as_bytes(X + (long long)j * stride, n, tmp);
        if (!bytes) return false;
        u64 bad = 0;
        long long ones = 0;
        u64* o = out + (size_t)j * nw;
        for (long long w = 0; w < nw; ++w) {
            o[w] = pack_word(bytes + w * 64, (int)std::min<long long>(64, n - w * 64), bad);
            ones += __builtin_popcountll(o[w]);
        }
        if (!bytes_ok(bad)) return false;
        counts[j] = ones;
    }
    return true;
}

}  // namespace tl
