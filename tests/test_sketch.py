"""The fixed threshold sample and the compiled histogram coding (issue 14)."""
from __future__ import annotations

import numpy as np
import pytest

from treelearn import GreedyTreeClassifier
from treelearn.data import _binning, sketch
from treelearn.learn.greedy import code_features


@pytest.mark.parametrize("m", [0, 1, 2, 3, 8, 255, 256, 1000])
def test_codes_are_searchsorted_right(m):
    rng = np.random.default_rng(m)
    thr = np.sort(rng.standard_normal(m))
    x = np.concatenate([rng.standard_normal(2000), thr, [np.nan, -0.0, 0.0, np.inf, -np.inf]])
    X = np.stack([x, -x], axis=1)
    want = np.stack([np.searchsorted(thr, X[:, j], side="right") for j in range(2)], axis=1)
    np.testing.assert_array_equal(_binning.code_rows(X, [thr, thr], np.int32), want)
    codes = np.empty((2, x.size), dtype=np.int32)
    _binning.code_columns_into(np.asfortranarray(X), [thr, thr], codes)
    np.testing.assert_array_equal(codes, want.T)
    if m <= 255:
        np.testing.assert_array_equal(_binning.code_rows(X, [thr, thr], np.uint8), want)


def test_sampled_thresholds_above_the_sample_size(monkeypatch):
    """Above SKETCH_ROWS rows, histogram thresholds are those of the hashed sample; the codes are
    the number of thresholds <= x; columns with few values keep their distinct values."""
    rng = np.random.default_rng(1)
    n = 5000
    X = np.stack([rng.standard_normal(n), rng.integers(0, 5, n).astype(float)], axis=1)
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.5).astype(int)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 1000)
    cf = code_features(X, None, 16)
    mask = sketch.sketch_mask(0, n, n)
    assert 800 < mask.sum() < 1200
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 10**9)
    ref = code_features(X[mask], None, 16)  # all-row coding of the sample itself
    for j in range(2):
        np.testing.assert_array_equal(cf.thresholds[j], ref.thresholds[j])
        np.testing.assert_array_equal(cf.codes[j], np.searchsorted(cf.thresholds[j], X[:, j], side="right"))
    assert cf.values[0] is None and cf.values[1] is not None
    est = GreedyTreeClassifier(max_depth=3, max_thresholds=16).fit(X, y)
    assert est.score(X, y) > 0.8
