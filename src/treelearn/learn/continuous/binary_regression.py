"""The optimal regression search on 0/1 features (``regression_binary.h``), the path
:func:`~treelearn.learn.continuous.regressor.regression_fit` takes when every column is 0/1.

On such data every column has one threshold, so the every-threshold search's sorted lists are
overhead; the binary solver prices every tree of depth <= 2 of a node from a table of pair
statistics (rows with ``x_a = 1`` and ``x_b = 1``) and caches subproblems by their branch (the
set of literals on the path), as STreeD does. Same objective (weighted SSE summed over the
outputs, weights and up to 16 outputs), same tie tolerance, anytime incumbent, time limit,
memory cap and Ctrl-C; the splits are written ``x >= 0.5`` (1-rows right), as the continuous
search writes them. Not taken (the every-threshold search runs): Top-k, ``min_samples_leaf`` > 1,
a categorical column, a missing value, a value other than 0 and 1, or a pair table too large for
the memory cap."""
from __future__ import annotations

import numpy as np

__all__ = ["binary_columns"]


def binary_columns(Xe, schema, *, top_k: int, min_samples_leaf: int, memory_bytes: float, n_outputs: int,
                   max_depth: int = 2, zero_one: bool | None = None):
    """The 0/1 searched columns of ``Xe`` as ``(X01, keep)`` (row-major uint8 of the columns that
    vary, their raw indices), or None when the binary search does not apply (see the module doc).
    ``zero_one``: whether every value is 0 or 1, when the caller knows (the sample's
    ``is_binary()``); None: checked here."""
    n, d = Xe.shape
    if top_k != 0 or min_samples_leaf != 1 or n == 0 or d == 0:
        return None
    if schema is not None and any(schema.is_categorical(j) for j in range(d)):
        return None
    Xe = np.asarray(Xe)
    if not (zero_one if zero_one is not None else ((Xe == 0) | (Xe == 1)).all()):  # (NaN fails too)
        return None
    keep = np.flatnonzero(Xe.min(axis=0) < Xe.max(axis=0))
    # the pair tables of the levels (two per level: regression_binary.h's fixed_bytes)
    if 2.0 * (max(1, max_depth) + 1) * keep.size ** 2 * (n_outputs + 3) * 8.0 > memory_bytes:
        return None
    return np.ascontiguousarray(Xe[:, keep], dtype=np.uint8), keep.astype(np.int64)
