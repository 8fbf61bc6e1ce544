"""Generalization bounds of binary decision tree *structures* (paper 002, Leboeuf, LeBlanc, Marchand 2020).

A tree class ``T`` is a fixed binary tree shape whose decision rules (one real-valued feature
among ``l`` and a threshold per internal node) and leaf labels are free. This module gives

* :class:`TreeShape` — a hashable, canonical shape (mirror-symmetric shapes are the *same*
  object), and :func:`as_shape` (both defined in :mod:`treelearn.prune.shapes`), which accepts a shape, a fitted :class:`~treelearn.Tree` (or an
  estimator holding one in ``tree_``) or nested tuples (a leaf is ``()``, a node ``(left, right)``);
* :func:`partitioning_function_upper_bound` — the recursive bound of Theorem 9 / Eq. (7) on the
  ``c``-partitioning function ``π_T^c(m)``, as an exact integer, in its tight form (the sum over
  ``k``) or the loose form of §6.2;
* :func:`growth_function_upper_bound` — Eq. (4), ``τ_T(m) <= Σ_a (n)_a π_T^a(m)``;
* :func:`stump_vc_dimension` (Cor. 8), :func:`vc_dimension_upper_bound` (Eq. (5) with Eq. (7)) and
  :func:`vc_dimension_lower_bound`;
* :func:`shawe_taylor_bound` — the risk bound of Eq. (8) with the paper's priors, in log space;
* :func:`wedderburn_etherington` — the number of unordered binary tree shapes with ``L`` leaves.

All counts are exact Python integers; the tight bound at large ``m`` is computed by exact
convolutions (:func:`tight_partitioning_sequences`), using ``gmpy2`` when it is installed.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.prune.shapes import (  # noqa: F401  (shapes are part of this module's API)
    LEAF,
    TreeShape,
    check_pos_int,
    postorder,
    shape_from_arrays,
    all_shapes,
    as_shape,
    leaf_shape,
    node_shapes,
    stump_shape,
)

try:  # optional: GMP's FFT multiplication makes the exact convolutions of the tight bound fast
    import gmpy2 as _gmpy2
except ImportError:  # pragma: no cover - exercised only without gmpy2
    _gmpy2 = None

__all__ = [
    "TreeShape", "as_shape", "leaf_shape", "stump_shape", "all_shapes",
    "stirling2", "wedderburn_etherington", "log_wedderburn_etherington",
    "partitioning_function_upper_bound", "partitioning_functions_upper_bound",
    "tight_partitioning_sequences", "TightEvaluator",
    "growth_function_upper_bound", "log_growth_function_upper_bound",
    "stump_vc_dimension", "vc_dimension_upper_bound", "vc_dimension_lower_bound",
    "shawe_taylor_bound", "log_q_geometric", "log_p_wedderburn", "DEFAULT_R",
]

#: the paper's error prior parameter r = 2^-13.7 (q_k = (1 - r) r^k), chosen by CV on Wine (§6.2)
DEFAULT_R = 2.0 ** -13.7


# ====================================================================== combinatorics
@lru_cache(maxsize=1 << 16)
def stirling2(m: int, c: int) -> int:
    """Stirling number of the second kind: the number of c-partitions of an m-set (exact)."""
    if m < 0 or c < 0:
        return 0
    if c == 0:
        return 1 if m == 0 else 0
    if c > m:
        return 0
    if c == 1 or c == m:
        return 1
    if c == 2:
        return (1 << (m - 1)) - 1
    # inclusion-exclusion: c! S(m, c) = sum_j (-1)^j C(c, j) (c - j)^m
    s = 0
    for j in range(c + 1):
        term = math.comb(c, j) * (c - j) ** m
        s += -term if j & 1 else term
    return s // math.factorial(c)


#: above this m the tight bound goes through the convolution engine (same values, faster)
_DIRECT_MAX_M = 64

_FLOOR_LOG2 = [0, 0] + [int(math.floor(math.log2(c))) for c in range(2, 4096)]


def _cap(value: int, m: int, c: int) -> int:
    """min(value, S(m, c)) without computing S(m, c) when it is obviously larger.

    S(m, c) >= c^(m - c) (put the first c points in distinct parts; the rest anywhere) >=
    2^((m - c) floor(log2 c)), so a value with fewer bits cannot exceed it.
    """
    if c <= 1:
        return min(value, 1 if m >= 1 else 0)
    lg = _FLOOR_LOG2[c] if c < len(_FLOOR_LOG2) else int(math.floor(math.log2(c)))
    if value.bit_length() <= (m - c) * lg:
        return value
    return min(value, stirling2(m, c))


_WE = [0, 1]


def wedderburn_etherington(n_leaves: int) -> int:
    """Number of unordered binary tree shapes with ``n_leaves`` leaves: 1, 1, 1, 2, 3, 6, 11, 23, 46, 98, ..."""
    n = check_pos_int(n_leaves, "n_leaves")
    while len(_WE) <= n:
        k = len(_WE)
        half = k // 2
        if k % 2:
            v = sum(_WE[i] * _WE[k - i] for i in range(1, half + 1))
        else:
            v = sum(_WE[i] * _WE[k - i] for i in range(1, half)) + _WE[half] * (_WE[half] + 1) // 2
        _WE.append(v)
    return _WE[n]


_WE_EXACT_LOG_UPTO = 300
_WE_BETA = 2.4832535361726368  # growth constant of the sequence: WE(n) ~ 0.3188 β^n n^(-3/2)
_WE_SCALED = [0.0, 1.0 / _WE_BETA]  # WE(n) β^-n, float recurrence (all terms positive: stable)


def log_wedderburn_etherington(n_leaves: int) -> float:
    """ln WE(n): exact integers up to n = 300, then the same recurrence on β^-n-scaled floats
    (sums of positive terms, relative error ~1e-13), so long trees cost O(n^2) flops, not bigints."""
    n = check_pos_int(n_leaves, "n_leaves")
    if n <= _WE_EXACT_LOG_UPTO:
        return math.log(wedderburn_etherington(n))
    w = _WE_SCALED
    while len(w) <= n:
        k = len(w)
        half = k // 2
        arr = np.asarray(w)
        if k % 2:
            v = float(np.dot(arr[1:half + 1], arr[k - 1:k - half - 1:-1]))
        else:
            v = float(np.dot(arr[1:half], arr[k - 1:k - half:-1])) + w[half] * (w[half] + _WE_BETA ** -half) / 2
        w.append(v)
    return math.log(w[n]) + n * math.log(_WE_BETA)


def falling_factorial(n: int, a: int) -> int:
    out = 1
    for i in range(a):
        out *= n - i
    return out


@lru_cache(maxsize=None)
def _pair_coefficients(c: int) -> tuple:
    """((a, b, C(a, c-b) C(b, c-a) (a+b-c)!), ...) for 1 <= a, b <= c with a + b >= c."""
    out = []
    for a in range(1, c + 1):
        for b in range(1, c + 1):
            if a + b >= c:
                coef = math.comb(a, c - b) * math.comb(b, c - a) * math.factorial(a + b - c)
                if coef:
                    out.append((a, b, coef))
    return tuple(out)


# ====================================================================== partitioning functions
def _check_args(c, m, l):
    c = check_pos_int(c, "n_parts")
    m = check_pos_int(m, "n_examples", 0)
    l = check_pos_int(l, "n_features")
    return c, m, l


def _base_case(L: int, c: int, m: int):
    """The cases of Thm 9 that need no recursion; None when Eq. (7) applies."""
    if c > m or c > L or c < 1:
        return 0
    if c == 1 or c == m or m == 1:
        return 1
    if m <= L:
        return stirling2(m, c)
    return None


@lru_cache(maxsize=1 << 20)
def _tight(shape: TreeShape, c: int, m: int, l: int) -> int:
    base = _base_case(shape.n_leaves, c, m)
    if base is not None:
        return base
    A, B = shape.left, shape.right
    LA, LB = A.n_leaves, B.n_leaves
    two_l = 2 * l
    coefs = _pair_coefficients(c)
    total = 0
    for k in range(LA, m - LB + 1):
        inner = 0
        for a, b, coef in coefs:
            pa = _tight(A, a, k, l)
            if pa:
                pb = _tight(B, b, m - k, l)
                if pb:
                    inner += coef * pa * pb
        if inner:
            total += min(two_l, math.comb(m, k)) * inner
    if A is B:
        total = (total + 1) // 2  # the sum is even when both subtrees are equal (symmetric in k)
    return _cap(total, m, c)


def _loose_vectors(shape: TreeShape, excess: int, l: int, cmax: int) -> dict:
    """Loose bound (§6.2) of every sub-shape S at m_S = L_S + excess, for c = 0..cmax.

    In the loose recursion a node at m examples evaluates its subtrees at m - L_right and m -
    L_left, so every node's (m - L) equals the root's: one vector per sub-shape suffices.
    """
    return _loose_vectors_cached(shape, excess, l, cmax)


@lru_cache(maxsize=256)
def _loose_vectors_cached(shape: TreeShape, excess: int, l: int, cmax: int) -> dict:
    out: dict[TreeShape, list[int]] = {}
    two_l = 2 * l
    for s in postorder(shape):
        L = s.n_leaves
        m = L + excess
        vec = [0] * (cmax + 1)
        for c in range(1, cmax + 1):
            base = _base_case(L, c, m)
            if base is not None:
                vec[c] = base
                continue
            va, vb = out[s.left], out[s.right]
            inner = 0
            for a, b, coef in _pair_coefficients(c):
                pa = va[a]
                if pa:
                    pb = vb[b]
                    if pb:
                        inner += coef * pa * pb
            total = (excess + 1) * two_l * inner  # (m - L + 1) terms, each <= the largest
            if s.left is s.right:
                total //= 2  # exact: two_l is even
            vec[c] = _cap(total, m, c)
        out[s] = vec
    return out


def partitioning_function_upper_bound(shape, n_parts: int, n_examples: int, n_features: int,
                                      loose: bool = False) -> int:
    """Upper bound on the c-partitioning function π_T^c(m) of a tree class (Thm 9, exact integer).

    Parameters
    ----------
    shape : TreeShape, fitted Tree or nested tuples (``()`` leaf, ``(left, right)`` node)
    n_parts : c, the number of parts
    n_examples : m, the sample size
    n_features : l, the number of real-valued features
    loose : if True, the §6.2 form: the sum over k replaced by its number of terms (m - L + 1)
        times its largest term; always >= the tight form.

    0 if c > m or c > L; 1 if c == 1, c == m or m == 1; S(m, c) if m <= L; otherwise Eq. (7),
    halved for equal subtrees and capped by S(m, c). For a stump this is Thm 7:
    (1/2) Σ_{k=1}^{m-1} min(2l, C(m, k)).
    """
    T = as_shape(shape)
    c, m, l = _check_args(n_parts, n_examples, n_features)
    if loose:
        base = _base_case(T.n_leaves, c, m)
        if base is not None:
            return base
        return _loose_vectors(T, m - T.n_leaves, l, c)[T][c]
    if m > _DIRECT_MAX_M and T.n_leaves > 2:
        return tight_partitioning_sequences(T, m, l, c, only_last=True)[c]
    return _tight(T, c, m, l)


def partitioning_functions_upper_bound(shape, n_examples: int, n_features: int, max_parts: int | None = None,
                                       loose: bool = False) -> list[int]:
    """[π^1(m), ..., π^C(m)] with C = max_parts (default: the number of leaves)."""
    T = as_shape(shape)
    m = check_pos_int(n_examples, "n_examples", 0)
    l = check_pos_int(n_features, "n_features")
    C = T.n_leaves if max_parts is None else check_pos_int(max_parts, "max_parts")
    C = min(C, T.n_leaves)
    if loose:
        vec = _loose_vectors(T, m - T.n_leaves, l, C)[T] if m > T.n_leaves else None
        return [(_base_case(T.n_leaves, c, m) if vec is None or _base_case(T.n_leaves, c, m) is not None
                 else vec[c]) for c in range(1, C + 1)]
    if m > _DIRECT_MAX_M and T.n_leaves > 2:
        last = tight_partitioning_sequences(T, m, l, C, only_last=True)
        return [last[c] for c in range(1, C + 1)]
    return [_tight(T, c, m, l) for c in range(1, C + 1)]


# ---------------------------------------------------------------------- tight bound by convolution
def _pack(seq, lo: int, hi: int, nbytes: int):
    """Kronecker packing: Σ_{k=lo}^{hi} seq[k] 2^(8·nbytes·k) (entries outside [lo, hi] are zero)."""
    if hi < lo:
        return 0
    zeros = bytes(nbytes * lo)
    body = b"".join([x.to_bytes(nbytes, "little") for x in seq[lo:hi + 1]])
    v = int.from_bytes(zeros + body, "little")
    return _gmpy2.mpz(v) if _gmpy2 is not None else v


def _node_sequences(s: TreeShape, sa: list, sb: list, Ms: int, l: int, C: int, last_only: bool) -> list:
    """Tight bound (Eq. 7) of the node shape ``s`` for m = 0..Ms (or only m = Ms), c = 1..C.

    ``sa``/``sb``: the subtrees' sequences (per_c lists over m, long enough). Writing
    min(2l, C(m, k)) = 2l − (2l − C(m, k))⁺, the sum of Eq. (7) is 2l times a convolution of the
    subtrees' sequences (zeroed below their leaf counts) minus corrections at the few (m, k) with
    C(m, k) < 2l — none once m >= 2l, since C(m, k) >= m for 1 <= k <= m − 1. The convolutions
    are exact: Kronecker substitution packs every sequence into one big integer (slots wide
    enough for the largest sum), Σ_b coef·B_b is integer arithmetic on the packed values, and one
    multiplication per (c, a) does a whole convolution (GMP's FFT multiplication with gmpy2).
    Returns per_c[c] = list over m (only index Ms is filled with ``last_only``).
    """
    L = s.n_leaves
    A, B = s.left, s.right
    g = _Geometry(LA=A.n_leaves, LB=B.n_leaves, Ms=Ms, hiA=min(Ms - B.n_leaves, len(sa[1]) - 1),
                  hiB=min(Ms - A.n_leaves, len(sb[1]) - 1))  # the k ranges of the subtrees
    CA, CB = min(C, g.LA), min(C, g.LB)
    per_c = [None] * (C + 1)
    ms_all = [Ms] if last_only else list(range(Ms + 1))
    packed = None
    prefix: dict[int, list] = {}
    for c in range(1, C + 1):
        seq = [0] * (Ms + 1)
        per_c[c] = seq
        if c > L:
            continue
        if c == 1:  # one part: a single partition for every m >= 1
            for m in ms_all:
                seq[m] = 1 if m >= 1 else 0
            continue
        # c >= 2: the base cases are exactly the m <= L (Thm 9); Eq. (7) for every m > L
        todo = []
        for m in ms_all:
            if m <= L:
                seq[m] = _base_case(L, c, m)
            else:
                todo.append(m)
        if not todo:
            continue
        coefs = [(a, b, coef) for a, b, coef in _pair_coefficients(c) if a <= CA and b <= CB]
        if packed is None:
            packed = _pack_subtrees(sa, sb, g, CA, CB, C)
        conv = _convolution(packed, coefs, c, g, todo, last_only)
        if packed[0] != "color":
            _add_single_part_terms(conv, coefs, prefix, sb, g, todo)
        for m in todo:
            seq[m] = _node_value(conv[m], m, c, l, coefs, sa, sb, g, half=A is B)
    return per_c


class _Geometry:
    """The index ranges of one node's convolution: leaves LA, LB of its subtrees, the largest m
    (Ms) and the largest k of each subtree's sequences (hiA, hiB); ``nbytes``: the packed slot width."""

    def __init__(self, *, LA: int, LB: int, Ms: int, hiA: int, hiB: int):
        self.LA, self.LB, self.Ms, self.hiA, self.hiB = LA, LB, Ms, hiA, hiB
        self.nbytes = 0


def _pack_subtrees(sa: list, sb: list, g: _Geometry, CA: int, CB: int, C: int):
    """The subtrees' sequences packed once per node (sets ``g.nbytes``): ``("color", conv)`` with
    every convolution already summed (C >= 3), else (packed left sequences, packed right ones)."""
    LA, LB, hiA, hiB, Ms = g.LA, g.LB, g.hiA, g.hiB, g.Ms
    # entries are nonnegative: the largest value has the most bits
    bits_a = max((max(sa[a][LA:hiA + 1], default=0) for a in range(1, CA + 1)), default=0).bit_length()
    bits_b = max((max(sb[b][LB:hiB + 1], default=0) for b in range(1, CB + 1)), default=0).bit_length()
    coef_bits = max(sum(cf for _, _, cf in _pair_coefficients(cc)) for cc in range(1, C + 1)).bit_length()
    if C < 3:
        g.nbytes = nbytes = (bits_a + bits_b + coef_bits + (Ms + 1).bit_length() + 2 + 7) // 8
        return ([None, None] + [_pack(sa[a], LA, hiA, nbytes) for a in range(2, CA + 1)],
                [None] + [_pack(sb[b], LB, hiB, nbytes) for b in range(1, CB + 1)])
    # "colour space": Σ_c coef(a, b, c) (n)_c = (n)_a (n)_b (colour an a- and a b-partition
    # with n colours; equal colours merge). So with F_n = Σ_a (n)_a A_a, F_n * G_n = Σ_c (n)_c
    # conv_c for n = 1..C: C multiplications instead of ~C²/2, then the triangular system (n)_c
    # is solved exactly on the packed integers (every slot of G_c − Σ_{c'<c} (c)_{c'} conv_{c'}
    # is c! conv_c >= 0).
    fall_bits = (C * math.factorial(C)).bit_length()
    g.nbytes = nbytes = (bits_a + bits_b + 2 * fall_bits + (Ms + 1).bit_length() + 2 + 7) // 8
    PA = [None] + [_pack(sa[a], LA, hiA, nbytes) for a in range(1, CA + 1)]
    PB = [None] + [_pack(sb[b], LB, hiB, nbytes) for b in range(1, CB + 1)]
    color = [None]
    for n in range(1, C + 1):
        FA = sum(falling_factorial(n, a) * PA[a] for a in range(1, min(n, CA) + 1))
        FB = sum(falling_factorial(n, b) * PB[b] for b in range(1, min(n, CB) + 1))
        color.append(FA * FB)
    conv_packed = [None]
    for cc in range(1, C + 1):
        acc = color[cc]
        for c2 in range(1, cc):
            acc = acc - falling_factorial(cc, c2) * conv_packed[c2]
        conv_packed.append(acc // math.factorial(cc))
    return ("color", conv_packed)


def _convolution(packed, coefs, c: int, g: _Geometry, todo: list, last_only: bool) -> dict:
    """{m: Σ_k Σ_(a,b) coef·A_a[k]·B_b[m − k]} for the m of ``todo`` from the packed sequences
    (without the a = 1 terms unless in colour mode: :func:`_add_single_part_terms` adds those)."""
    if packed[0] == "color":
        R = packed[1][c]  # the whole convolution, the π^1 terms included
    else:
        PA, PB = packed
        by_a: dict[int, list] = {}
        for a, b, coef in coefs:
            by_a.setdefault(a, []).append((b, coef))
        R = 0
        for a, terms in by_a.items():
            if a == 1:
                continue  # π^1 = 1 on [LA, hiA]: prefix sums, no multiplication
            H = 0
            for b, coef in terms:
                H += coef * PB[b] if coef != 1 else PB[b]
            R += PA[a] * H
    R = int(R)
    width = 8 * g.nbytes
    mask = (1 << width) - 1
    if last_only:
        return {g.Ms: (R >> (width * g.Ms)) & mask}
    raw = R.to_bytes(max((R.bit_length() + 7) // 8, g.nbytes * (g.Ms + 1)), "little")
    return {m: int.from_bytes(raw[m * g.nbytes:(m + 1) * g.nbytes], "little") for m in todo}


def _add_single_part_terms(conv: dict, coefs, prefix: dict, sb: list, g: _Geometry, todo: list) -> None:
    """Add the a = 1 terms to ``conv``: π^1 = 1 on [LA, hiA], so each is a prefix sum of B_b
    (kept in ``prefix`` across the c of one node)."""
    LA, LB, hiA, hiB, Ms = g.LA, g.LB, g.hiA, g.hiB, g.Ms
    for a, b, coef in coefs:
        if a != 1:
            continue
        pref = prefix.get(b)
        if pref is None:  # pref[j + 1] = Σ_{i=LB}^{j} B_b[i] for j <= hiB
            pref = [0] * (hiB + 2)
            acc, vb = 0, sb[b]
            for j in range(LB, hiB + 1):
                acc += vb[j]
                pref[j + 1] = acc
            for j in range(0, LB):
                pref[j + 1] = 0
            prefix[b] = pref
        if hiB >= Ms - LA and hiA >= Ms - LB:  # the usual case: the k range is [LA, m - LB]
            if coef == 1:
                for m in todo:
                    conv[m] += pref[m - LA + 1]
            else:
                for m in todo:
                    conv[m] += coef * pref[m - LA + 1]
        else:
            for m in todo:
                hi_j = min(m - LA, hiB)
                lo_j = max(LB, m - hiA)
                if hi_j >= lo_j:
                    conv[m] += coef * (pref[hi_j + 1] - pref[lo_j])


def _node_value(conv_m: int, m: int, c: int, l: int, coefs, sa: list, sb: list, g: _Geometry, *, half: bool) -> int:
    """Eq. (7) at (m, c) from its convolution: 2l·conv minus the corrections where C(m, k) < 2l,
    halved for a node with two equal subtrees, capped by the Stirling number S(m, c)."""
    two_l = 2 * l
    total = two_l * conv_m
    if m < two_l:  # corrections where C(m, k) < 2l
        for k in range(g.LA, m - g.LB + 1):
            w = math.comb(m, k)
            if w >= two_l:
                continue
            inner = 0
            for a, b, coef in coefs:
                pa = sa[a][k]
                if pa:
                    pb = sb[b][m - k]
                    if pb:
                        inner += coef * pa * pb
            total -= (two_l - w) * inner
    if half:
        total = (total + 1) // 2
    lg = _FLOOR_LOG2[c] if c < len(_FLOOR_LOG2) else int(math.floor(math.log2(c)))
    if total.bit_length() > (m - c) * lg:  # else total < 2^((m-c)lg) <= c^(m-c) <= S(m, c)
        total = min(total, stirling2(m, c))
    return total


def _leaf_sequences(Ms: int, C: int) -> list:
    per_c = [None] * (C + 1)
    per_c[1] = [0] + [1] * Ms
    for c in range(2, C + 1):
        per_c[c] = [0] * (Ms + 1)
    return per_c


def tight_partitioning_sequences(shape, n_examples: int, n_features: int, max_parts: int | None = None,
                                 only_last: bool = False):
    """The tight bound (Eq. 7) of π_S^c(m) for every sub-shape S, m = 0..M and c = 1..C, exactly.

    The direct sum over k costs O(M^2) per sub-shape; here wherever min(2l, C(m, k)) = 2l the
    inner sum is a convolution (see :func:`_node_sequences`), so a 40-leaf tree at M = 45,000
    takes seconds. Each sub-shape is computed only up to M minus the leaves of the rest of the
    tree. Returns a dict shape -> per_c lists (per_c[c][m]); with ``only_last``, the list
    ``[0, π^1(M), ..., π^C(M)]`` of the root.
    """
    T = as_shape(shape)
    M = check_pos_int(n_examples, "n_examples", 0)
    l = check_pos_int(n_features, "n_features")
    C = T.n_leaves if max_parts is None else min(check_pos_int(max_parts, "max_parts"), T.n_leaves)
    need: dict[TreeShape, int] = {T: M}
    order = postorder(T)
    for s in reversed(order):  # parents before children
        if s.is_leaf:
            continue
        top = need[s]
        need[s.left] = max(need.get(s.left, 0), top - s.right.n_leaves)
        need[s.right] = max(need.get(s.right, 0), top - s.left.n_leaves)
    seqs: dict[TreeShape, list] = {}
    # with only_last, free a sub-shape's sequences once every parent has used them (memory:
    # C lists of M big integers per live sub-shape)
    uses: dict[TreeShape, int] = {}
    for s in order:
        if not s.is_leaf:
            uses[s.left] = uses.get(s.left, 0) + 1
            uses[s.right] = uses.get(s.right, 0) + 1
    for s in order:
        if s.is_leaf:
            seqs[s] = _leaf_sequences(need[s], C)
        else:
            seqs[s] = _node_sequences(s, seqs[s.left], seqs[s.right], need[s], l, C, only_last and s is T)
            if only_last:
                for child in (s.left, s.right):
                    uses[child] -= 1
                    if uses[child] == 0:
                        del seqs[child]
    if only_last:
        return [0] + [seqs[T][c][M] for c in range(1, C + 1)]
    return seqs


class TightEvaluator:
    """π_T^c(M), c = 1..C, for many shapes at one (M, l): sub-shape sequences are cached (LRU,
    at most ``max_cached`` shapes), so a shape that differs from a cached one along one path costs
    one convolution per new node — what bound pruning with the tight bound needs."""

    def __init__(self, M: int, l: int, C: int, max_cached: int = 400, check: Callable[[], None] | None = None):
        from collections import OrderedDict

        self.M, self.l, self.C = int(M), int(l), int(C)
        self.max_cached = int(max_cached)
        self._cache: OrderedDict = OrderedDict()
        # called before each node's convolution (a fit's clock: it raises to stop the evaluation)
        self._check = check

    def _seq(self, s: TreeShape) -> list:
        got = self._cache.get(s)
        if got is not None:
            self._cache.move_to_end(s)
            return got
        for t in postorder(s):
            if t in self._cache:
                self._cache.move_to_end(t)
                continue
            if t.is_leaf:
                val = _leaf_sequences(self.M, self.C)
            else:
                if self._check is not None:
                    self._check()
                val = _node_sequences(t, self._cache_get(t.left), self._cache_get(t.right), self.M, self.l,
                                      self.C, False)
            self._cache[t] = val
        out = self._cache[s]
        while len(self._cache) > self.max_cached:
            self._cache.popitem(last=False)
        return out

    def _cache_get(self, s):
        v = self._cache.get(s)
        return v if v is not None else self._seq(s)

    def root_values(self, shape) -> list:
        """[0, π^1(M), ..., π^C(M)] for ``shape``."""
        T = as_shape(shape)
        if T.is_leaf:
            seq = _leaf_sequences(self.M, self.C)
            return [0] + [seq[c][self.M] for c in range(1, self.C + 1)]
        sa, sb = self._seq(T.left), self._seq(T.right)
        if self._check is not None:
            self._check()
        per_c = _node_sequences(T, sa, sb, self.M, self.l, self.C, True)
        return [0] + [per_c[c][self.M] for c in range(1, self.C + 1)]

    def log_growth(self, shape, n_classes: int) -> float:
        T = as_shape(shape)
        vals = self.root_values(T)
        amax = min(n_classes, T.n_leaves, self.M, self.C)
        return math.log(sum(falling_factorial(n_classes, a) * vals[a] for a in range(1, amax + 1)))


# ====================================================================== growth function
def growth_function_upper_bound(shape, n_examples: int, n_classes: int, n_features: int,
                                loose: bool = False) -> int:
    """Eq. (4): τ_T(m) <= Σ_{a=1}^{min(n, L, m)} (n)_a π_T^a(m), exact."""
    T = as_shape(shape)
    m = check_pos_int(n_examples, "n_examples", 0)
    n = check_pos_int(n_classes, "n_classes")
    l = check_pos_int(n_features, "n_features")
    amax = min(n, T.n_leaves, m)
    if amax < 1:
        return 0
    pis = partitioning_functions_upper_bound(T, m, l, amax, loose=loose)
    return sum(falling_factorial(n, a) * pis[a - 1] for a in range(1, amax + 1))


def log_growth_function_upper_bound(shape, n_examples: int, n_classes: int, n_features: int,
                                    loose: bool = False) -> float:
    """Natural log of :func:`growth_function_upper_bound` (exact integer, then log)."""
    return math.log(growth_function_upper_bound(shape, n_examples, n_classes, n_features, loose=loose))


# ====================================================================== VC dimension
def stump_vc_dimension(n_features: int) -> int:
    """Exact VC dimension of decision stumps on l real features (Cor. 8): the largest d with
    2l >= C(d, floor(d/2))."""
    l = check_pos_int(n_features, "n_features")
    d = 1
    while math.comb(d + 1, (d + 1) // 2) <= 2 * l:
        d += 1
    return d


def vc_dimension_upper_bound(shape, n_features: int, max_examples: int = 100_000) -> int:
    """Upper bound on the VC dimension of a tree class by Eq. (5) with the tight bound (7).

    From m = L + 1 upward, while π^2(m) == 2^(m-1) - 1 increase m; the answer is the last m that
    satisfied it (L if none).
    """
    T = as_shape(shape)
    l = check_pos_int(n_features, "n_features")
    L = T.n_leaves
    if L == 1:
        return 1
    d = L
    m = L + 1
    while m <= max_examples:
        if _tight(T, 2, m, l) == (1 << (m - 1)) - 1:
            d = m
            m += 1
        else:
            break
    else:
        import warnings

        warnings.warn(f"vc_dimension_upper_bound stopped at max_examples={max_examples}: the VC dimension "
                      f"bound is at least {d} (raise max_examples for the exact value)", RuntimeWarning,
                      stacklevel=2)
    return d


def vc_dimension_lower_bound(shape, n_features: int) -> int:
    """Lower bound: a stump has its exact value (Cor. 8), a leaf 1, a node the sum of its subtrees'."""
    T = as_shape(shape)
    l = check_pos_int(n_features, "n_features")
    stump = stump_vc_dimension(l)
    memo = {}
    for s in postorder(T):
        if s.is_leaf:
            memo[s] = 1
        elif s.is_stump:
            memo[s] = stump
        else:
            memo[s] = memo[s.left] + memo[s.right]
    return memo[T]


# ====================================================================== Shawe-Taylor bound
def log_q_geometric(r: float = DEFAULT_R) -> Callable[[int], float]:
    """log q_k for the paper's error prior q_k = (1 - r) r^k."""
    if not (0.0 < r < 1.0):
        raise TreeLearnValueError(f"r must be in (0, 1), got {r!r}")
    lr, l1r = math.log(r), math.log1p(-r)
    return lambda k: l1r + k * lr


def log_p_wedderburn(shape) -> float:
    """log p_d for the paper's structure prior p_d = 6/(π² L²) · 1/WE(L), L = leaves of the shape."""
    L = as_shape(shape).n_leaves
    return math.log(6.0) - 2.0 * math.log(math.pi) - 2.0 * math.log(L) - log_wedderburn_etherington(L)


def shawe_taylor_bound(shape, n_errors: float, n_examples: int, n_classes: int, n_features: int,
                       delta: float = 0.05, r: float = DEFAULT_R, loose: bool = True,
                       log_q_k: Callable | None = None, log_p_d: Callable | None = None,
                       log_growth: float | None = None) -> float:
    """Eq. (8): ε = (1/m)(2k + 4 ln(4 τ(2m) / (δ q_k p_d))), computed in log space.

    ``shape``: the tree structure; ``n_errors`` k (training misclassifications; may be a weighted
    count); ``n_examples`` m. τ is the growth-function bound of Eq. (4) at 2m (``loose`` selects the
    §6.2 form of Eq. (7), as in the paper's experiments). Priors default to the paper's:
    q_k = (1 - r) r^k and p_d = 6/(π² L²)/WE(L); pass ``log_q_k(k)`` / ``log_p_d(shape)``
    callables returning natural logs of probabilities to replace them.
    """
    T = as_shape(shape)
    m = check_pos_int(n_examples, "n_examples")
    if not (0.0 < delta < 1.0):
        raise TreeLearnValueError(f"delta must be in (0, 1), got {delta!r}")
    if n_errors < 0:
        raise TreeLearnValueError(f"n_errors must be >= 0, got {n_errors!r}")
    lq = log_q_geometric(r) if log_q_k is None else log_q_k
    lp = log_p_wedderburn if log_p_d is None else log_p_d
    if log_growth is None:
        log_growth = log_growth_function_upper_bound(T, 2 * m, n_classes, n_features, loose=loose)
    inside = math.log(4.0) + log_growth - math.log(delta) - lq(n_errors) - lp(T)
    return (2.0 * n_errors + 4.0 * inside) / m
