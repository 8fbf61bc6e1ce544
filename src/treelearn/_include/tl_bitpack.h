// Bit packing shared by the data layer and the compiled searches.
//
// * tlbits::transpose64: 64x64 bit-matrix transpose (bit j of A[i] <-> bit i of A[j]) in six
//   swap stages with constant bounds, so that the compiler unrolls and vectorises them;
// * tlbits::pack_binary<T>: a row-major (n, d) matrix whose values are all 0 or 1 -> packed
//   feature columns (d, ceil(n / 64)) in the BinaryData layout (bit r % 64 of word r / 64 is row
//   r), in one pass: each row becomes a row bitset (eight 0/1 bytes -> eight bits by one
//   multiply), then every 64x64 block is transposed. Returns false (output unspecified) as soon
//   as a value is not 0 or 1 (NaN included).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tlbits {

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

// one row of 0/1 bytes (length d) -> row bitset rb (ceil(d / 64) words); false if a byte > 1
static inline bool pack_row_bytes(const uint8_t* x, int d, u64* rb) {
    const int dw = (d + 63) / 64;
    u64 bad = 0;
    for (int fb = 0; fb < dw; ++fb) {
        const int j0 = fb * 64, jn = (d - j0 < 64) ? d - j0 : 64;
        u64 word = 0;
        int t = 0;
        for (; t + 8 <= jn; t += 8) {
            u64 v;
            std::memcpy(&v, x + j0 + t, 8);
            bad |= v;
            word |= (u64)bytes_to_bits(v) << t;
        }
        for (; t < jn; ++t) {
            bad |= x[j0 + t];
            word |= (u64)(x[j0 + t] & 1) << t;
        }
        rb[fb] = word;
    }
    return (bad & 0xFEFEFEFEFEFEFEFEULL) == 0;
}

// row-major values of type T (n, d) with row stride `stride` elements -> packed columns
// out[(j * nw) + w]; counts[j] = number of ones of column j. false: a value is not 0 or 1.
template <typename T>
static bool pack_binary(const T* X, long long n, int d, long long stride, u64* out, long long* counts) {
    const long long nw = (n + 63) / 64;
    const int dw = (d + 63) / 64;
    std::vector<u64> rows((size_t)64 * dw);
    std::vector<uint8_t> tmp(std::is_same<T, uint8_t>::value ? 0 : (size_t)d);
    u64 blk[64];
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
            const T* x = X + (r0 + i) * stride;
            const uint8_t* bytes;
            if (std::is_same<T, uint8_t>::value) {
                bytes = reinterpret_cast<const uint8_t*>(x);
            } else {
                bool ok = true;
                for (int j = 0; j < d; ++j) {
                    const T v = x[j];
                    ok &= (v == (T)0) | (v == (T)1);
                    tmp[j] = (uint8_t)(v == (T)1);
                }
                if (!ok) return false;
                bytes = tmp.data();
            }
            if (!pack_row_bytes(bytes, d, rb)) return false;
        }
        for (int fb = 0; fb < dw; ++fb) {
            for (int i = 0; i < 64; ++i) blk[i] = rows[(size_t)i * dw + fb];
            transpose64(blk);  // blk[t] bit i = feature fb*64+t of row r0+i
            const int jn = (d - fb * 64 < 64) ? d - fb * 64 : 64;
            for (int t = 0; t < jn; ++t) {
                out[(size_t)(fb * 64 + t) * nw + b] = blk[t];
                counts[fb * 64 + t] += __builtin_popcountll(blk[t]);
            }
        }
    }
    return true;
}

// column-major values (column j at X + j * stride, n rows each) -> packed columns, as
// pack_binary: eight 0/1 values -> eight bits of the column's word by one multiply
template <typename T>
static bool pack_binary_colmajor(const T* X, long long n, int d, long long stride, u64* out, long long* counts) {
    const long long nw = (n + 63) / 64;
    std::vector<uint8_t> tmp(std::is_same<T, uint8_t>::value ? 0 : (size_t)n);
    for (int j = 0; j < d; ++j) {
        const T* col = X + (long long)j * stride;
        const uint8_t* bytes;
        if (std::is_same<T, uint8_t>::value) {
            bytes = reinterpret_cast<const uint8_t*>(col);
        } else {
            bool ok = true;
            for (long long i = 0; i < n; ++i) {
                const T v = col[i];
                ok &= (v == (T)0) | (v == (T)1);
                tmp[i] = (uint8_t)(v == (T)1);
            }
            if (!ok) return false;
            bytes = tmp.data();
        }
        u64 bad = 0;
        long long ones = 0;
        u64* o = out + (size_t)j * nw;
        for (long long w = 0; w < nw; ++w) {
            const long long r0 = w * 64, rn = (n - r0 < 64) ? n - r0 : 64;
            u64 word = 0;
            long long t = 0;
            for (; t + 8 <= rn; t += 8) {
                u64 v;
                std::memcpy(&v, bytes + r0 + t, 8);
                bad |= v;
                word |= (u64)bytes_to_bits(v) << t;
            }
            for (; t < rn; ++t) {
                bad |= bytes[r0 + t];
                word |= (u64)(bytes[r0 + t] & 1) << t;
            }
            o[w] = word;
            ones += __builtin_popcountll(word);
        }
        if (bad & 0xFEFEFEFEFEFEFEFEULL) return false;
        counts[j] = ones;
    }
    return true;
}

}  // namespace tlbits
