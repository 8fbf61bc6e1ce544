"""BinaryData: binary features packed as uint64 bit columns, plus per-class row bitsets.

:meth:`BinaryData.count` returns, for a cover (a row bitset), the per-feature per-class counts.
It is the Python face of the one counting layer of the binary learners, the header
``core/count.h``: the compiled Top-k / optimal and min-rank searches count through the
same functions on their own covers.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError, check_sample_weight
from treelearn.data import _bitset


def n_words_for(n_rows: int) -> int:
    """The 64-row words of a bitset over ``n_rows`` rows."""
    return int(_bitset.n_words_for(int(n_rows)))


def pack_columns(B) -> np.ndarray:
    """A ``(n_rows, n_features)`` 0/1 uint8 matrix as packed bit columns ``(n_features, n_words)``
    (row r at bit ``r % 64`` of word ``r // 64``), the layout of :attr:`BinaryData.columns`."""
    return _bitset.pack_columns(np.ascontiguousarray(B, dtype=np.uint8))


class BinaryData:
    """Packed binary sample.

    Attributes: ``n_rows``, ``n_features``, ``n_classes``, ``n_words``; ``columns`` (uint64,
    ``(n_features, n_words)``); ``class_bits`` (uint64, ``(n_classes, n_words)``); ``y`` (int64
    class codes); ``weights`` (float64 or ``None`` when every weight is 1, so that counts are
    exact integers).
    """

    def __init__(self, B, y_codes, n_classes: int | None = None, sample_weight=None):
        B = np.asarray(B)
        if B.ndim != 2:
            raise TreeLearnValueError(f"binary matrix must be 2-D, got shape {B.shape}")
        if B.size and not ((B == 0) | (B == 1)).all():  # (np.isin is ~20x slower here)
            bad = np.argwhere(~np.isin(B, (0, 1)))[0]
            raise TreeLearnValueError(
                f"binary features required: value {B[tuple(bad)]!r} at row {bad[0]}, column {bad[1]} is not 0 or 1 "
                "(use treelearn.Binarizer for numeric or categorical data)"
            )
        y = np.asarray(y_codes, dtype=np.int64).ravel()
        if y.shape[0] != B.shape[0]:
            raise TreeLearnValueError(f"binary matrix has {B.shape[0]} rows but y has {y.shape[0]}")
        self.n_rows, self.n_features = B.shape
        self.n_classes = int(n_classes if n_classes is not None else (y.max() + 1 if y.size else 1))
        self.n_words = int(_bitset.n_words_for(self.n_rows))
        self.columns = _bitset.pack_columns(np.ascontiguousarray(B, dtype=np.uint8))
        self._set_labels(y, sample_weight)

    @classmethod
    def from_packed(cls, columns, y_codes, n_classes: int, sample_weight=None) -> "BinaryData":
        """A BinaryData from columns already packed as :func:`treelearn.data._bitset.pack_columns`
        lays them out (``(n_features, n_words)`` uint64), without unpacking them."""
        y = np.ascontiguousarray(y_codes, dtype=np.int64).ravel()
        self = cls.__new__(cls)
        self.n_rows = int(y.shape[0])
        self.n_words = int(_bitset.n_words_for(self.n_rows))
        columns = np.ascontiguousarray(columns, dtype=np.uint64)
        if columns.ndim != 2 or columns.shape[1] != self.n_words:
            raise TreeLearnValueError(
                f"packed columns must have shape (n_features, {self.n_words}) for {self.n_rows} rows, "
                f"got {columns.shape}")
        self.n_features = int(columns.shape[0])
        self.n_classes = int(n_classes)
        self.columns = columns
        self._set_labels(y, sample_weight)
        return self

    def _set_labels(self, y: np.ndarray, sample_weight) -> None:
        """Check the class codes ``y`` (int64, one per row) against ``n_classes`` and store them,
        their per-class row bitsets and the sample weights (``None`` when all are 1)."""
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):
            raise TreeLearnValueError(f"class codes must lie in 0..{self.n_classes - 1}")
        self.class_bits = _bitset.class_bitsets(y, self.n_classes)
        self.y = y
        if sample_weight is None:
            self.weights = None
        else:
            w = check_sample_weight(sample_weight, self.n_rows)
            self.weights = None if np.all(w == 1.0) else w

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def full_cover(self) -> np.ndarray:
        cover = np.full(self.n_words, np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
        rem = self.n_rows % 64
        if rem:
            cover[-1] = np.uint64((1 << rem) - 1)
        if self.n_rows == 0:
            cover[:] = 0
        return cover

    def cover_from_mask(self, mask) -> np.ndarray:
        return _bitset.pack_mask(np.ascontiguousarray(mask, dtype=np.uint8))

    def rows(self, cover) -> np.ndarray:
        """Row indices of a cover."""
        return np.nonzero(_bitset.unpack(cover, self.n_rows))[0]

    def count(self, cover):
        """counts[j, c]: (weighted) number of rows in ``cover`` with feature j = 1 and class c."""
        if self.weights is None:
            return _bitset.count_features(self.columns, self.class_bits, cover)
        return _bitset.count_features_weighted(self.columns, self.y, self.n_classes, cover, self.weights)

    def class_counts(self, cover):
        """Per-class (weighted) number of rows in ``cover``."""
        if self.weights is None:
            return _bitset.class_counts(self.class_bits, cover)
        return _bitset.class_counts_weighted(self.class_bits, cover, self.weights)

    def split(self, cover, feature: int):
        """(cover ∧ x_feature = 0, cover ∧ x_feature = 1)."""
        return _bitset.split_cover(cover, self.columns[feature])

    def support(self, cover) -> int:
        return int(_bitset.popcount(cover))
