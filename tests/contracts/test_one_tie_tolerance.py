"""One tie tolerance for training errors: the anytime module's ``ERROR_TIE`` (Python: the
incumbents, the greedy fallback, the sharded searches) is the compiled learners' (``core/ties.h``),
scaled the same way (by the total weight, at least one unit)."""
from __future__ import annotations

from treelearn.learn import anytime
from treelearn.learn.continuous import _continuous


def test_python_and_compiled_error_tie_are_one_number():
    assert anytime.ERROR_TIE == _continuous.ERROR_TIE
    assert anytime.error_tie(10.0) == 10 * _continuous.ERROR_TIE
    assert anytime.error_tie(0.5) == _continuous.ERROR_TIE  # at least the tie of one unit of weight

