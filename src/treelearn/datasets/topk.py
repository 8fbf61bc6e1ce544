"""The hard distributions of 003 §4 (Top-k vs Top-(k+1) and Top-K on monotone data).

Both draw x uniformly from {0, 1}^d with d = h + K − 1, split as x(1) = the first h coordinates
and x(2) = the other K − 1, and label each row by a stochastic function:

* :func:`make_parity_distractors` (003 §4.1, Theorem 1/2): with probability 1 − ε the parity
  Par_h(x(1)), otherwise the value of a uniformly random coordinate of x(2);
* :func:`make_tribes_majority` (003 §4.2, Theorem 3, monotone): with probability 1 − ε
  Tribes_h(x(1)), otherwise Maj_{K−1}(x(2)) (1 when at least half of the coordinates are 1).

Tribes_ℓ (003 Definition 7): w is the largest integer with (1 − 2^−w)^(ℓ/w) <= 1/2; the first
t = ⌊ℓ/w⌋ blocks of w coordinates are ANDed and the blocks ORed.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from treelearn._validation import check_float_param, check_int_param

__all__ = ["make_parity_distractors", "make_tribes_majority", "parity", "tribes", "majority", "tribes_width"]


def parity(X) -> np.ndarray:
    """Par_ℓ(x) = (Σ x_i) mod 2 per row."""
    X = np.asarray(X)
    return (X.sum(axis=1) % 2).astype(np.int64)


def majority(X) -> np.ndarray:
    """Maj_ℓ(x) = 1[at least half of the coordinates are 1] per row (003 Definition 6)."""
    X = np.asarray(X)
    return (2 * X.sum(axis=1) >= X.shape[1]).astype(np.int64)


def tribes_width(ell: int) -> int:
    """w of 003 Definition 7: the largest integer w >= 1 with (1 − 2^−w)^(ℓ/w) <= 1/2."""
    check_int_param("ell", ell, low=1)
    best = 1
    for w in range(1, ell + 1):
        if (1.0 - 2.0 ** -w) ** (ell / w) <= 0.5:
            best = w
    return best


def tribes(X) -> np.ndarray:
    """Tribes_ℓ(x): OR over the t = ⌊ℓ/w⌋ blocks of the AND of their w coordinates."""
    X = np.asarray(X)
    ell = X.shape[1]
    w = tribes_width(ell)
    t = ell // w
    blocks = X[:, : t * w].reshape(X.shape[0], t, w)
    return blocks.all(axis=2).any(axis=1).astype(np.int64)


def _check(h, K, eps, n_samples):
    check_int_param("h", h, low=1)
    check_int_param("K", K, low=2)
    check_float_param("eps", eps, low=0.0, high=1.0)
    check_int_param("n_samples", n_samples, low=1)


def make_parity_distractors(h=4, K=3, eps=0.1, n_samples=1000, random_state=None):
    """003 §4.1: X in {0,1}^(h+K−1); y = Par_h(x(1)) w.p. 1 − ε, else x(2)_i for a uniform i.

    Top-K at depth h can fit it (accuracy >= 1 − ε, Lemma 4.1); Top-k with k < K cannot beat
    1/2 + ε at depth h + K − k − 1 (Lemma 4.2). Returns ``(X, y)`` as int64 arrays.
    """
    _check(h, K, eps, n_samples)
    rng = check_random_state(random_state)
    d = h + K - 1
    X = rng.randint(0, 2, size=(n_samples, d)).astype(np.int64)
    y = parity(X[:, :h])
    noisy = rng.random_sample(n_samples) < eps
    pick = h + rng.randint(0, K - 1, size=n_samples)
    y = np.where(noisy, X[np.arange(n_samples), pick], y)
    return X, y.astype(np.int64)


def make_tribes_majority(h=4, K=3, eps=0.1, n_samples=1000, random_state=None):
    """003 §4.2: X in {0,1}^(h+K−1); y = Tribes_h(x(1)) w.p. 1 − ε, else Maj_{K−1}(x(2)).

    A monotone distribution on which Top-K at depth h reaches accuracy >= 1 − ε (Lemma 4.3)
    while Top-k, k <= K − h, is near 1/2 + ε for large h (Lemma 4.4). Returns ``(X, y)``.
    """
    _check(h, K, eps, n_samples)
    rng = check_random_state(random_state)
    d = h + K - 1
    X = rng.randint(0, 2, size=(n_samples, d)).astype(np.int64)
    t = tribes(X[:, :h])
    m = majority(X[:, h:])
    noisy = rng.random_sample(n_samples) < eps
    return X, np.where(noisy, m, t).astype(np.int64)
