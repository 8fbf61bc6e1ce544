"""Sparse objectives of the binary exact search (Top-k and optimal over binary features).

* ``ccp_alpha`` (scikit-learn's unit; GOSDT's λ, STreeD's ``cost_complexity``): the search
  minimises ``weighted errors / total weight + ccp_alpha * n_leaves``. The compiled search works
  in weighted errors, so each leaf costs ``ccp_alpha * total weight`` on top of its errors (the
  ``Penalised`` objective of ``learn/topk/objective.h``). A node is split only when the split
  lowers that cost (ties: the leaf), so the returned tree never has a split that does not pay.
* ``min_samples_leaf`` (int rows, or float fraction of the training rows rounded up, as in
  scikit-learn; rows, not weight: ``min_weight_fraction_leaf`` is the weighted variant): a split
  leaving a side with fewer rows is not a split; the optimum is the best tree among those.

* ``max_leaves`` (alias ``max_leaf_nodes``): at most that many leaves; at a node of depth budget
  h and leaf budget b < 2^h the search tries every split of b between the children (MurTree's
  dynamic program over budgets, the cache keyed by cover, depth and budget).

All are options of the binary search only: with any set, ``solver="auto"`` takes the binary
search, the greedy incumbent is not used (its tree and error are of another objective) and the
Dask fit runs on the gathered blocks.
"""
from __future__ import annotations

import numbers

import numpy as np

from treelearn._validation import INT32_MAX, INT64_MAX, Interval, RealNotInt, TreeLearnValueError, resolve_alias

#: the sparse parameters' constraints (scikit-learn's)
SPARSE_CONSTRAINTS = {
    "min_samples_leaf": [Interval(numbers.Integral, 1, INT64_MAX), Interval(RealNotInt, 0, 1, closed="neither")],
    "ccp_alpha": [Interval(numbers.Real, 0, None)],
    "max_leaves": [Interval(numbers.Integral, 1, INT32_MAX), None],
    "max_leaf_nodes": [Interval(numbers.Integral, 1, INT32_MAX), None],
}


def is_sparse(est) -> bool:
    """Whether ``ccp_alpha``, ``min_samples_leaf`` or a leaf budget asks for more than plain
    misclassification."""
    return (float(getattr(est, "ccp_alpha", 0.0)) > 0.0 or _msl_set(getattr(est, "min_samples_leaf", 1))
            or _budget(est) is not None)


def _budget(est):
    """``max_leaves`` or its alias ``max_leaf_nodes`` (None: no budget)."""
    if not hasattr(est, "max_leaves"):
        return None
    return resolve_alias(type(est).__name__, "max_leaves", est.max_leaves, "max_leaf_nodes", est.max_leaf_nodes)


def _msl_set(msl) -> bool:
    return not isinstance(msl, numbers.Integral) or int(msl) > 1


def min_rows(min_samples_leaf, n_samples: int) -> int:
    """``min_samples_leaf`` as rows (a float is a fraction of ``n_samples``, rounded up; any count
    above ``n_samples`` allows no split, as ``n_samples + 1`` does, and fits the search's int)."""
    if isinstance(min_samples_leaf, numbers.Integral):
        return min(int(min_samples_leaf), int(n_samples) + 1)
    return max(1, int(np.ceil(float(min_samples_leaf) * n_samples)))


def search_options(est, n_samples: int, total_weight: float) -> dict:
    """The compiled search's keywords of ``est``'s sparse parameters: ``min_rows``,
    ``leaf_penalty`` (``ccp_alpha`` times the total weight: the cost of a leaf in weighted errors)
    and ``max_leaves`` (0: no budget)."""
    return {"min_rows": min_rows(getattr(est, "min_samples_leaf", 1), n_samples),
            # (a leaf costing more than every error it could save, W, allows no split: any larger
            # penalty is that one, kept finite)
            "leaf_penalty": min(float(getattr(est, "ccp_alpha", 0.0)) * float(total_weight),
                                2.0 * float(total_weight) + 1.0),
            "max_leaves": int(_budget(est) or 0)}


def check_sparse(est, solver: str = "auto") -> None:
    """The combinations the search does not have, named."""
    if not is_sparse(est):
        return
    if solver == "continuous":
        raise TreeLearnValueError("ccp_alpha, min_samples_leaf and max_leaves need solver='binary' or 'auto': "
                                  "the continuous solver has none of them")
    if float(est.ccp_alpha) > 0.0 and getattr(est, "monotonic_cst", None) is not None:
        raise TreeLearnValueError("ccp_alpha > 0 with monotonic_cst is not supported: set one of them")
    if _budget(est) is not None and getattr(est, "monotonic_cst", None) is not None:
        raise TreeLearnValueError("max_leaves with monotonic_cst is not supported: set one of them")
