"""The packed counting kernel against plain NumPy on random matrices (row counts that are not
multiples of 64 included), weighted and unweighted."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn import BinaryData, TreeLearnValueError
from treelearn.data import _bitset

ROWS = [1, 2, 63, 64, 65, 127, 128, 129, 200]


def _random(n, d, C, rng, density=0.5):
    B = (rng.random((n, d)) < density).astype(np.uint8)
    y = rng.integers(0, C, n)
    return B, y


def _naive_counts(B, y, C, mask, w=None):
    w = np.ones(len(y)) if w is None else w
    out = np.zeros((B.shape[1], C))
    for c in range(C):
        sel = mask & (y == c)
        out[:, c] = (B[sel].astype(float) * w[sel, None]).sum(axis=0)
    return out


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("weighted", [False, True])
def test_count_class_counts_split_against_numpy(n, weighted):
    rng = np.random.default_rng(n + 1000 * weighted)
    d, C = int(rng.integers(1, 9)), int(rng.integers(1, 5))
    B, y = _random(n, d, C, rng)
    w = rng.random(n) * 3 if weighted else None
    data = BinaryData(B, y, n_classes=C, sample_weight=w)
    assert data.n_words == (n + 63) // 64 and data.columns.shape == (d, data.n_words)
    assert data.weighted == weighted
    for trial in range(4):
        mask = rng.random(n) < (0.5 if trial else 1.1)  # the first cover is every row
        cover = data.cover_from_mask(mask) if trial else data.full_cover()
        counts = data.count(cover)
        expect = _naive_counts(B, y, C, mask, w)
        if weighted:
            assert counts.dtype == np.float64
            np.testing.assert_allclose(counts, expect, rtol=1e-12, atol=1e-12)
        else:
            assert counts.dtype == np.int64
            np.testing.assert_array_equal(counts, expect.astype(np.int64))
        cc = data.class_counts(cover)
        ww = np.ones(n) if w is None else w
        np.testing.assert_allclose(cc, [ww[mask & (y == c)].sum() for c in range(C)], rtol=1e-12)
        assert data.support(cover) == mask.sum()
        np.testing.assert_array_equal(data.rows(cover), np.nonzero(mask)[0])
        for j in range(d):
            zero, one = data.split(cover, j)
            np.testing.assert_array_equal(data.rows(one), np.nonzero(mask & (B[:, j] == 1))[0])
            np.testing.assert_array_equal(data.rows(zero), np.nonzero(mask & (B[:, j] == 0))[0])
            # the padding bits past the last row stay zero
            assert _bitset.popcount(zero) + _bitset.popcount(one) == mask.sum()


@given(st.integers(1, 150), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1), st.booleans())
@settings(max_examples=40, deadline=None, derandomize=True)
def test_count_property(n, d, C, seed, weighted):
    rng = np.random.default_rng(seed)
    B, y = _random(n, d, C, rng, density=rng.random())
    w = rng.integers(0, 4, n).astype(float) if weighted else None
    if w is not None and w.sum() == 0:
        w[0] = 1.0
    data = BinaryData(B, y, n_classes=C, sample_weight=w)
    mask = rng.random(n) < rng.random()
    counts = data.count(data.cover_from_mask(mask))
    np.testing.assert_allclose(counts, _naive_counts(B, y, C, mask, w), atol=1e-9)
    # counts compose over disjoint covers (the kernel's contract)
    other = ~mask
    total = counts + data.count(data.cover_from_mask(other))
    np.testing.assert_allclose(total, data.count(data.full_cover()), atol=1e-9)


def test_pack_unpack_roundtrip_and_full_cover():
    rng = np.random.default_rng(0)
    for n in ROWS:
        m = rng.random(n) < 0.5
        bits = _bitset.pack_mask(m.astype(np.uint8))
        assert bits.dtype == np.uint64 and bits.shape == ((n + 63) // 64,)
        np.testing.assert_array_equal(_bitset.unpack(bits, n), m)
        data = BinaryData(np.zeros((n, 1), dtype=np.uint8), np.zeros(n, dtype=int))
        full = data.full_cover()
        assert _bitset.popcount(full) == n
        np.testing.assert_array_equal(_bitset.unpack(full, n), np.ones(n, bool))
        # bit r of word r // 64 is row r
        for r in (0, n - 1, n // 2):
            e = np.zeros(n, np.uint8)
            e[r] = 1
            b = _bitset.pack_mask(e)
            assert b[r // 64] == np.uint64(1) << np.uint64(r % 64)


def test_all_ones_weights_give_exact_integer_counts():
    rng = np.random.default_rng(3)
    B, y = _random(100, 5, 3, rng)
    a = BinaryData(B, y, 3)
    b = BinaryData(B, y, 3, sample_weight=np.ones(100))
    assert b.weights is None
    np.testing.assert_array_equal(a.count(a.full_cover()), b.count(b.full_cover()))
    assert b.count(b.full_cover()).dtype == np.int64


def test_labels_and_class_bits():
    rng = np.random.default_rng(5)
    B, y = _random(70, 3, 4, rng)
    data = BinaryData(B, y)  # n_classes inferred
    assert data.n_classes == y.max() + 1
    for c in range(data.n_classes):
        np.testing.assert_array_equal(_bitset.unpack(data.class_bits[c], 70), y == c)
    # the class bitsets partition the rows
    assert sum(_bitset.popcount(data.class_bits[c]) for c in range(data.n_classes)) == 70


def test_errors():
    with pytest.raises(TreeLearnValueError, match="not 0 or 1"):
        BinaryData(np.array([[0, 2]]), [0])
    with pytest.raises(TreeLearnValueError, match="2-D"):
        BinaryData(np.array([0, 1]), [0, 1])
    with pytest.raises(TreeLearnValueError, match="rows but y has"):
        BinaryData(np.zeros((3, 2)), [0, 1])
    with pytest.raises(TreeLearnValueError, match="negative"):
        BinaryData(np.zeros((2, 2)), [0, 1], sample_weight=[1, -1])
    with pytest.raises(TreeLearnValueError, match="binary features required"):
        BinaryData(np.array([[0.5]]), [0])


@pytest.mark.parametrize("dtype", [np.uint8, bool, np.int8, np.int16, np.uint32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (63, 17), (64, 64), (65, 130), (300, 9)])
def test_pack_binary_equals_pack_columns(dtype, shape):
    """The one-pass packer (rows -> bitsets -> 64x64 transposes; Fortran columns directly)
    equals the plain per-bit packing, counts the ones, and rejects any value not 0 or 1."""
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    B = rng.integers(0, 2, size=shape)
    ref = _bitset.pack_columns(B.astype(np.uint8))
    for X in (B.astype(dtype), np.asfortranarray(B.astype(dtype)), np.repeat(B, 2, axis=1).astype(dtype)[:, ::2]):
        cols, ones = _bitset.pack_binary(X)
        assert np.array_equal(cols, ref)
        assert np.array_equal(ones, B.sum(axis=0))
    if dtype is not bool:
        bad = B.astype(dtype)
        bad[rng.integers(shape[0]), rng.integers(shape[1])] = 2
        assert _bitset.pack_binary(bad) is None
        assert _bitset.pack_binary(np.asfortranarray(bad)) is None
    if np.dtype(dtype).kind in "if":
        neg = B.astype(dtype)
        neg[0, 0] = -1
        assert _bitset.pack_binary(neg) is None
