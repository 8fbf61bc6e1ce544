"""Exact sums (treelearn._exact, core/exact_sum.h): every group's sum is the exact sum of its
values rounded once to the nearest double, which ``math.fsum`` (an independent, correctly
rounded summation) gives too; and it is the same bits however the rows are split into blocks and
merged, and whatever their order."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn._exact import align, exact_round, exact_sums, merge, merge_up


def _fsum_groups(v, g, n_groups):
    return np.array([[math.fsum(v[g == k, c]) for c in range(v.shape[1])] for k in range(n_groups)])


def _values(rng, n, kind):
    if kind == "normal":
        return rng.normal(size=(n, 3))
    if kind == "wide":  # exponents over hundreds of binary orders
        return rng.normal(size=(n, 3)) * np.exp(rng.normal(scale=60.0, size=(n, 3)))
    if kind == "extremes":  # near the largest doubles, and subnormals
        return np.column_stack([rng.normal(size=n) * 1e300, rng.normal(size=n) * 1e-300,
                                rng.integers(-1000, 1000, size=n) * 5e-324])
    if kind == "cancel":  # sums that cancel to (almost) nothing
        x = rng.normal(size=n)
        return np.column_stack([x, -x, np.concatenate([x[: n // 2], -x[: n // 2], x[n // 2 * 2:]])])
    return np.column_stack([np.full(n, 0.1), rng.integers(-5, 5, size=n) * 1.0, rng.normal(size=n) * 1e16])


@pytest.mark.parametrize("kind", ["normal", "wide", "extremes", "cancel", "decimal"])
@pytest.mark.parametrize("seed", range(6))
def test_group_sums_are_correctly_rounded_and_order_free(kind, seed):
    rng = np.random.default_rng(seed)
    n, G = int(rng.integers(1, 600)), 4
    v = np.ascontiguousarray(_values(rng, n, kind))
    g = rng.integers(-1, G, size=n).astype(np.int64)  # -1: rows left out
    got = exact_round(*exact_sums(v, g, G))
    np.testing.assert_array_equal(got, _fsum_groups(v, g, G))
    # any split into blocks, any order of the rows
    cuts = np.sort(rng.integers(0, n + 1, size=3))
    perm = rng.permutation(n)
    vp, gp = np.ascontiguousarray(v[perm]), g[perm]
    parts = [exact_sums(np.ascontiguousarray(vp[a:b]), gp[a:b], G) for a, b in zip([0, *cuts], [*cuts, n])]
    np.testing.assert_array_equal(exact_round(*merge(parts)), got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=0, max_size=60))
def test_any_doubles(xs):
    """Against exact rational arithmetic: the sum rounded to the nearest double (ties to even),
    or an infinity of its sign beyond the double range."""
    exact = sum((Fraction(x) for x in xs), Fraction(0))
    try:
        ref = float(exact)
    except OverflowError:
        ref = math.inf if exact > 0 else -math.inf
    v = np.array(xs, dtype=np.float64).reshape(-1, 1)
    got = exact_round(*exact_sums(v, np.zeros(len(xs), dtype=np.int64), 1))[0, 0]
    assert got == ref


def test_merge_up_gives_every_node_the_sum_of_its_subtree():
    rng = np.random.default_rng(3)
    # a tree: 0 -> (1, 2), 1 -> (3, 4); rows on the leaves 2, 3 and 4
    parent = np.array([-1, 0, 0, 1, 1], dtype=np.int64)
    v = np.ascontiguousarray(rng.normal(size=(500, 2)) * 10.0 ** rng.integers(-8, 8, size=(500, 1)))
    leaf = rng.choice([2, 3, 4], size=500).astype(np.int64)
    acc, base = exact_sums(v, leaf, 5)
    merge_up(acc, parent)
    got = exact_round(acc, base)
    below = {0: [2, 3, 4], 1: [3, 4], 2: [2], 3: [3], 4: [4]}
    for node, leaves in below.items():
        rows = np.isin(leaf, leaves)
        np.testing.assert_array_equal(got[node], [math.fsum(v[rows, c]) for c in range(2)])


def test_bad_arguments_are_refused():
    v = np.zeros((3, 1))
    with pytest.raises(ValueError, match="finite"):
        exact_sums(np.array([[1.0], [np.nan]]), np.zeros(2, dtype=np.int64), 1)
    with pytest.raises(ValueError, match="group"):
        exact_sums(v, np.array([0, 1, 2], dtype=np.int64), 2)
    with pytest.raises(ValueError, match="parent"):
        merge_up(np.zeros((2, 1, 3), dtype=np.int64), np.array([-1, 1], dtype=np.int64))
    acc, base = exact_sums(v, np.zeros(3, dtype=np.int64), 1)
    with pytest.raises(ValueError, match="window"):
        align(acc, base, base + 1, acc.shape[2])
