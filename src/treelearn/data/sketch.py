"""The fixed row sample that histogram thresholds are computed from.

Above :data:`SKETCH_ROWS` rows, the greedy learner's quantile thresholds (``max_thresholds``) are
the thresholds of a sample of about that many rows instead of all rows, as LightGBM bins from a
sample of 200,000 rows. Row ``i`` (its index among the fitted rows, 0-based) is in the sample when
a 64-bit hash of ``i`` falls below ``2**64 * SKETCH_ROWS / n``: the sample depends only on the row
indices and ``n``, so a shard holding rows ``[start, stop)`` picks its part of the sample from its
offset alone, and the local fit and a fit on any row sharding of the same data get the same
thresholds (hence the same codes and the same tree). At or below ``SKETCH_ROWS`` rows every row is
used (the thresholds of :func:`treelearn.data.binarize.numeric_thresholds`).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from treelearn.data._binning import hash_below

__all__ = ["SKETCH_ROWS", "sample_rows", "sketch_mask"]

#: rows of the threshold sample (LightGBM's ``bin_construct_sample_cnt``)
SKETCH_ROWS = 200_000

_M64 = (1 << 64) - 1


def sketch_mask(start: int, stop: int, n_total: int, sample_rows: int | None = None) -> np.ndarray:
    """Boolean mask of rows ``start..stop-1`` (of ``n_total`` fitted rows) in the threshold sample
    of ``sample_rows`` rows (default :data:`SKETCH_ROWS`, read at the call)."""
    start, stop, n_total = int(start), int(stop), int(n_total)
    sample_rows = SKETCH_ROWS if sample_rows is None else int(sample_rows)
    if n_total <= sample_rows:
        return np.ones(stop - start, dtype=bool)
    cutoff = min(_M64, (sample_rows << 64) // n_total)
    return hash_below(start, stop, cutoff)  # compiled: SplitMix64(arange(start, stop)) < cutoff


def sample_rows(n_total: int) -> np.ndarray:
    """The row indices of the threshold sample of ``n_total`` fitted rows (read-only; kept for the
    last few sizes: every column block of a fit, and the next fit on as many rows, reuse them)."""
    return _sample_rows(int(n_total), SKETCH_ROWS)


@lru_cache(maxsize=4)
def _sample_rows(n_total: int, sample_rows: int) -> np.ndarray:
    rows = np.flatnonzero(sketch_mask(0, n_total, n_total, sample_rows))
    rows.flags.writeable = False
    return rows
