"""Every error a limit raises has one base, ``treelearn.LimitError``, and keeps its own bases."""
from __future__ import annotations

import numpy as np
import pytest

import treelearn as tl


def test_the_limit_errors_share_one_base_and_keep_theirs():
    assert issubclass(tl.ResourceLimitError, tl.LimitError)
    assert issubclass(tl.ResourceLimitError, tl.TreeLearnValueError) and issubclass(tl.ResourceLimitError, MemoryError)
    assert issubclass(tl.RankSearchLimitError, tl.LimitError) and issubclass(tl.RankSearchLimitError, ValueError)
    assert issubclass(tl.SearchLimitError, tl.LimitError) and issubclass(tl.SearchLimitError, RuntimeError)
    assert not issubclass(tl.LimitError, ValueError)  # a plain base: catching it catches limits only


def test_one_except_clause_catches_a_refused_fit():
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(tl.LimitError):
        tl.OptimalTreeClassifier(max_depth=3, solver="binary", max_binary_features=None,
                                 memory_limit_mb=0.5).fit(X, y)
    with pytest.raises(tl.LimitError):
        tl.MinRankTreeClassifier(memory_limit_mb=0.001).fit(X, y)
