"""What a fitted Top-k / optimal tree may claim, in words: the fitted repr and the ``verbose``
summary line say it.

``is_optimal_`` is True when the exact search finished, but the optimum is over the space that
was searched (``feature_space_``): "optimal over every threshold" only when every threshold was
searched (the continuous solver, ``max_binary_features=None`` with ``max_thresholds=None``, or
0/1 data), else "optimal over N binary features (M thresholds per column)". A Top-k tree with k
below the number of binary features makes no optimality claim; a search stopped by a limit
returns its best tree so far, not proven optimal.
"""
from __future__ import annotations

import numpy as np


def space_words(space: dict | None) -> str:
    """``feature_space_`` in a few words: "every threshold" or "N binary features (M thresholds
    per column)" ("up to M" when the columns have different counts)."""
    if space is None:
        return "no binary features (no search ran)"
    if space.get("thresholds") == "all":
        return "every threshold"
    n = int(space["n_binary_features"])
    counts = np.asarray(space.get("n_thresholds", ()), dtype=np.int64)
    counts = counts[counts > 0]
    if counts.size == 0:
        return f"{n} binary features"
    m = int(counts.max())
    per = f"{m}" if np.all(counts == m) else f"up to {m}"
    return f"{n} binary features ({per} threshold{'s' if m != 1 else ''} per column)"


def _constraints(est) -> str:
    """The sparse objective's settings that the claim is relative to (", ccp_alpha=0.01", ...)."""
    parts = []
    for name, default in (("ccp_alpha", 0.0), ("min_samples_leaf", 1), ("min_weight_fraction_leaf", 0.0)):
        v = getattr(est, name, default)
        if v != default:
            parts.append(f"{name}={v!r}")
    budget = getattr(est, "max_leaves", None) or getattr(est, "max_leaf_nodes", None)
    if budget is not None:
        parts.append(f"at most {int(budget)} leaves")
    if getattr(est, "monotonic_cst", None) is not None:
        parts.append("monotonic_cst")
    return "".join(", " + p for p in parts)


def optimality_summary(est) -> str | None:
    """The fitted estimator's claim in one phrase, e.g. ``"optimal over every threshold (depth <=
    3)"``, ``"optimal over 100 binary features (25 thresholds per column) (depth <= 3)"``, ``"Top-2
    tree over ... (no optimality claim)"``, ``"not proven optimal: ..."``; None when not fitted.
    With ``select`` the selected tree is optimal for its leaf count (``selected_leaves_``) and
    depth (``selected_depth_``), e.g. ``"(depth 2 of <= 4, 3 leaves selected by 'bound')"``."""
    if not hasattr(est, "is_optimal_"):
        return None
    space = getattr(est, "feature_space_", None)
    where = space_words(space)
    scope = f"depth <= {est.max_depth}{_constraints(est)}"
    why = (space or {}).get("chosen_by", "")
    if why.startswith("max_binary_features='auto'"):  # the default's decision, and why
        scope += "; " + why
    chosen = getattr(est, "selected_leaves_", None)
    if chosen is not None:
        depth = getattr(est, "selected_depth_", est.max_depth)
        scope = (f"depth {depth} of <= {est.max_depth}, {int(chosen)} lea{'f' if chosen == 1 else 'ves'} "
                 f"selected by {est.select!r}")
    if est.is_optimal_:
        return f"optimal over {where} ({scope})"
    if getattr(est, "timed_out_", False):
        return f"not proven optimal: a limit stopped the search (best tree found over {where}, {scope})"
    k = getattr(est, "k", "all")
    return f"Top-{k} tree over {where} ({scope}; no optimality claim)"


def feature_space(binz, chosen_by: str = "") -> dict:
    """``feature_space_`` of a binary search over the :class:`~treelearn.Binarizer` ``binz``'s
    features; ``chosen_by``: the setting that chose it (``max_binary_features="auto"``'s decision)."""
    return {"thresholds": binz.thresholds_, "n_binary_features": int(binz.n_binary_features_),
            "n_thresholds": binz.n_thresholds_, "n_greedy_thresholds": int(binz.n_added_thresholds_),
            "chosen_by": chosen_by, "description": binz.describe_space()}
