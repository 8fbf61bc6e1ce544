"""Impurity functions G and feature scores, normalised as the papers do.

000 Definition 2: an impurity function G: [0, 1] -> [0, 1] is concave, symmetric around 1/2,
with G(0) = G(1) = 0 and G(1/2) = 1; it is κ-strongly concave when
(G(a) + G(b))/2 <= G((a+b)/2) − (κ/2)(b − a)² for all a, b.

Built in (with their κ, 000 Remark 1):

* ``entropy`` (ID3/C4.5): binary entropy in bits, κ = 1/ln 2;
* ``gini`` (CART): 4p(1 − p), κ = 2;
* ``kearns_mansour``: 2√(p(1 − p)), κ = 1.

Multiclass forms, for class proportions p_1..p_C: entropy −Σ p_c log2 p_c; Gini 2(1 − Σ p_c²);
Kearns–Mansour Σ √(p_c(1 − p_c)); a user G: ½ Σ_c G(p_c). Each equals the binary G when C = 2.

The built-in G, their multiclass forms and κ are defined once, in C++ (policy types of
``core/criteria.h`` that the compiled learners take as template parameters); this module
reads them through ``treelearn._criteria``. A user G is evaluated by the compiled learners through
one callback (``Criterion.impurity`` on batches of class counts).

scikit-learn's units differ: its entropy is ours (bits), its Gini 1 − Σ p_c² is half of ours.
``Criterion.sklearn_scale`` converts (``sklearn_impurity``); trees' ``impurity`` arrays and
``min_impurity_decrease`` of the greedy learner use scikit-learn's units.

``purity_gain`` is 000 Definition 3's purity gain of one split, and ``gain_ratio`` C4.5's score
(003 Definition 1 / §3.1): the local gain divided by the split information.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from treelearn import _criteria
from treelearn._validation import TreeLearnValueError

__all__ = ["Criterion", "get_criterion", "ENTROPY", "GINI", "KEARNS_MANSOUR", "purity_gain", "gain_ratio",
           "kappa", "impurity", "split_information", "gini_index"]

_GRID = np.linspace(0.0, 1.0, 201)


@dataclass(frozen=True)
class Criterion:
    """An impurity function with its compiled policy code (0 entropy, 1 Gini, 2 Kearns–Mansour;
    ``-1``: a user G, which the compiled learners call back in batches)."""

    name: str
    binary: Callable[[np.ndarray], np.ndarray]  # G on [0, 1], vectorised
    code: int
    kappa: float

    def __call__(self, p):
        return self.binary(np.asarray(p, dtype=np.float64))

    def impurity(self, counts) -> np.ndarray:
        """Multiclass impurity of class-count vectors (last axis = classes); 0 for empty nodes."""
        if self.code >= 0:
            return _criteria.impurity(counts, self.code)
        c = np.asarray(counts, dtype=np.float64)
        tot = c.sum(axis=-1, keepdims=True)
        p = np.divide(c, tot, out=np.zeros_like(c), where=tot > 0)
        return 0.5 * self.binary(p).sum(axis=-1) * (tot[..., 0] > 0)

    def weighted_impurity(self, counts) -> np.ndarray:
        """Each row's weight (sum of its counts) times its impurity: what the compiled learners
        ask of a user G, a batch of rows at a time (``_criteria.batch_cost``)."""
        c = np.asarray(counts, dtype=np.float64)
        return c.sum(axis=-1) * self.impurity(c)

    @property
    def sklearn_scale(self) -> float:
        """Factor from this normalised impurity to scikit-learn's units (entropy 1, Gini 1/2;
        1 for Kearns–Mansour and user G, which scikit-learn does not have)."""
        return _criteria.sklearn_scale(self.code)

    def sklearn_impurity(self, counts) -> np.ndarray:
        """Impurity in scikit-learn's units (entropy in bits, Gini 1 − Σ p_c²)."""
        return self.sklearn_scale * self.impurity(counts)


def _builtin(name: str, code: int) -> Criterion:
    def binary(p, _code=code):
        return _criteria.binary(p, _code)

    binary.__name__ = f"_{name}"
    return Criterion(name, binary, code, _criteria.kappa(code))


ENTROPY = _builtin("entropy", 0)
GINI = _builtin("gini", 1)
KEARNS_MANSOUR = _builtin("kearns_mansour", 2)
_BUILTIN = {"entropy": ENTROPY, "gini": GINI, "kearns_mansour": KEARNS_MANSOUR}


def strong_concavity(G: Callable, grid: np.ndarray = _GRID) -> float:
    """Largest κ with (G(a)+G(b))/2 <= G((a+b)/2) − (κ/2)(b−a)² over all pairs of a grid."""
    a = grid[:, None]
    b = grid[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        lhs = 2.0 * (G((a + b) / 2.0) - (G(a) + G(b)) / 2.0) / (b - a) ** 2
    lhs = lhs[~np.eye(grid.size, dtype=bool)]
    return float(np.min(lhs))


def _validate_user_G(fn: Callable) -> Criterion:
    try:
        vec = fn(_GRID.copy())
        vec = np.asarray(vec, dtype=np.float64)
        if vec.shape != _GRID.shape:
            raise ValueError
        binary = lambda p: np.asarray(fn(np.asarray(p, dtype=np.float64)), dtype=np.float64)  # noqa: E731
    except Exception:
        # not vectorised: wrap it
        def binary(p, _fn=fn):
            p = np.asarray(p, dtype=np.float64)
            return np.vectorize(lambda x: float(_fn(float(x))), otypes=[float])(p)

        try:
            vec = binary(_GRID)
        except Exception as exc:
            raise TreeLearnValueError(f"criterion callable failed on [0, 1]: {exc}") from None
    name = getattr(fn, "__name__", "custom")
    tol = 1e-9
    if not np.all(np.isfinite(vec)):
        raise TreeLearnValueError(f"criterion {name!r} is not finite on [0, 1]")
    if abs(vec[0]) > tol or abs(vec[-1]) > tol or abs(vec[100] - 1.0) > 1e-7:
        raise TreeLearnValueError(
            f"criterion {name!r} is not normalised: need G(0) = G(1) = 0 and G(1/2) = 1, got "
            f"G(0) = {vec[0]:.4g}, G(1/2) = {vec[100]:.4g}, G(1) = {vec[-1]:.4g}"
        )
    if np.max(np.abs(vec - vec[::-1])) > 1e-7:
        raise TreeLearnValueError(f"criterion {name!r} is not symmetric around 1/2 (G(p) != G(1 - p))")
    second = vec[:-2] - 2 * vec[1:-1] + vec[2:]
    if np.max(second) > 1e-9:
        raise TreeLearnValueError(f"criterion {name!r} is not concave on [0, 1]")
    k = strong_concavity(binary)
    return Criterion(name, binary, -1, max(0.0, k))


def get_criterion(criterion) -> Criterion:
    """A name (``entropy``, ``gini``, ``kearns_mansour``), a Criterion, or a callable G."""
    if isinstance(criterion, Criterion):
        return criterion
    if isinstance(criterion, str):
        key = criterion.lower().replace("-", "_")
        if key in ("km", "kearns mansour"):
            key = "kearns_mansour"
        if key in ("log_loss", "id3", "c4.5"):
            key = "entropy"
        if key == "cart":
            key = "gini"
        if key not in _BUILTIN:
            raise TreeLearnValueError(
                f"unknown criterion {criterion!r}; use 'entropy', 'gini', 'kearns_mansour' or a callable G"
            )
        return _BUILTIN[key]
    if callable(criterion):
        return _validate_user_G(criterion)
    raise TreeLearnValueError(f"criterion must be a name or a callable, got {criterion!r}")


def kappa(criterion) -> float:
    """Strong-concavity constant κ of a criterion (000 Definition 2 / Remark 1)."""
    return get_criterion(criterion).kappa


def impurity(counts, criterion="entropy") -> np.ndarray:
    """Impurity of class-count vectors (multiclass form)."""
    return get_criterion(criterion).impurity(counts)


def gini_index(counts) -> np.ndarray:
    """scikit-learn's Gini impurity ``1 − Σ p_c²`` of class-count vectors (rows; 0 for an empty
    row), through the Gini policy of ``core/criteria.h``: the ``impurity`` array of trees learnt
    without an impurity criterion (min-rank trees, local and on Dask alike)."""
    return get_criterion("gini").sklearn_impurity(np.asarray(counts, dtype=np.float64))


def purity_gain(parent_counts, left_counts, right_counts=None, criterion="entropy", *, reach=None) -> float:
    """000 Definition 3: the decrease of G-impurity from splitting one leaf.

    ``parent_counts`` are the leaf's (weighted) class counts, ``left_counts`` those on one side
    (``right_counts`` defaults to the rest). The local gain is
    G(parent) − Pr[left]·G(left) − Pr[right]·G(right); the global purity gain multiplies it by
    Pr[x reaches the leaf], given as ``reach`` (default 1: the leaf is the whole sample).
    """
    crit = get_criterion(criterion)
    parent = np.asarray(parent_counts, dtype=np.float64)
    left = np.asarray(left_counts, dtype=np.float64)
    right = parent - left if right_counts is None else np.asarray(right_counts, dtype=np.float64)
    n = parent.sum()
    if n <= 0:
        return 0.0
    gain = crit.impurity(parent) - (left.sum() / n) * crit.impurity(left) - (right.sum() / n) * crit.impurity(right)
    return float((1.0 if reach is None else reach) * gain)


def split_information(left_weight: float, right_weight: float) -> float:
    """C4.5's split information: the binary entropy of the split proportions."""
    n = left_weight + right_weight
    if n <= 0:
        return 0.0
    return float(ENTROPY(left_weight / n))


def gain_ratio(parent_counts, left_counts, right_counts=None, criterion="entropy") -> float:
    """C4.5's gain ratio: purity gain / split information (0 when a side is empty)."""
    parent = np.asarray(parent_counts, dtype=np.float64)
    left = np.asarray(left_counts, dtype=np.float64)
    right = parent - left if right_counts is None else np.asarray(right_counts, dtype=np.float64)
    si = split_information(left.sum(), right.sum())
    if si <= 0:
        return 0.0
    return purity_gain(parent, left, right, criterion) / si
