"""Which space the default fit searches: ``max_binary_features="auto"``.

An optimal tree is optimal over the thresholds it was allowed. Every threshold (the continuous
solver, :mod:`treelearn.learn.continuous.solver`) is the honest default, but its cost grows with
the rows, the columns and their distinct values far faster than the binary search over about
:data:`AUTO_BINARY_FEATURES` quantile thresholds (paper 003, App. C). So "auto" predicts the
every-threshold search's CPU time before running it (:func:`continuous_cost`, from the rows ``n``,
the searched columns ``m``, their thresholds ``T`` = sum of (distinct values - 1), the depth and
the classes) and searches every threshold when the estimate is within :func:`auto_budget`
(:data:`BUDGET_SECONDS`, at most :data:`BUDGET_SHARE` of ``time_limit``); else the binary features
as with ``max_binary_features=100``. The estimate is a function of the data and the parameters
alone (no clock), so a fit on Dask input chooses the space the in-memory fit chooses.

The model (log-linear in ``n m`` and ``T`` per depth, fitted to the continuous solver's CPU time
on the UCI and Top-k sets of ``benchmarks/bench_small_trees.py`` and ``benchmarks/bench_continuous.py``
at depths 2-4, ``benchmarks/bench_space.py --calibrate``) predicts an upper envelope rather than the
mean: branch and bound makes the real cost vary by 100x between sets of the same shape (a
zero-error tree closes the search at once), and an overestimate only costs the default fit its
every-threshold claim, never its time limit.

Never every threshold under "auto": the constraints only the binary search has (``ccp_alpha``,
``max_leaves``, ``min_samples_leaf``, ``min_weight_fraction_leaf``, ``monotonic_cst``, ``select``),
``solver="binary"``, ``max_thresholds`` set, Top-k with k below the thresholds, 0/1 data (the binary
features are every threshold there), and more than :data:`AUTO_MAX_ROWS` rows (the estimate's
distinct counts are not computed there: no every-threshold search of that size fits the budget
beyond depth 2, and the sharded fit decides from the row count alone).
"""
from __future__ import annotations

import math

import numpy as np

from treelearn.learn.topk.sparse import is_sparse

__all__ = ["AUTO", "AUTO_BINARY_FEATURES", "continuous_cost", "auto_budget", "auto_excluded", "binary_budget",
           "binary_features", "chosen_by"]

AUTO = "auto"
#: the binary features of "auto" when every threshold is not chosen (003 App. C: about 100)
AUTO_BINARY_FEATURES = 100
#: the estimated CPU seconds an every-threshold default fit may cost: about what the binary
#: default fit costs at depth 4 on the calibration sets (up to 1.4 s), so the default stays interactive
BUDGET_SECONDS = 2.0
#: ... and at most this share of ``time_limit`` (a short limit keeps its room for the anytime answer)
BUDGET_SHARE = 0.05
#: above this many input rows "auto" is the binary search without an estimate
#: (:data:`treelearn.data.sketch.SKETCH_ROWS`: the Dask fit gathers the rows up to there only)
AUTO_MAX_ROWS = 200_000

# log(seconds) = A[d] + B[d] * log(n * m) + C[d] * log(T + 1) per depth (benchmarks/bench_space.py
# --calibrate): one evaluation costs about n m, and their count grows with T; B fixed at 1 (the
# least-squares slope was 0.93 at depth 2, 0.99 at depth 3), C the least-squares slope at depth 3
# (0.41; 0 at depth 2, where the root's thresholds are mostly skipped) and the one through the two
# costliest finished rows at depth 4 (vertebral 1.7 s, ionosphere 17.6 s), A the intercept through
# the costliest finished row (credit-card 3.0 s at depth 2, sonar 1.2 s at depth 3): an upper
# envelope. At depth 4 the cost is hardly a function of the shape (a set with a zero-error tree
# finishes in milliseconds), so the envelope overestimates most sets: they keep the binary features.
_MODEL = {2: (-12.3, 1.0, 0.0), 3: (-13.0, 1.0, 0.41), 4: (-9.5, 1.0, 0.34)}
#: seconds per row x column of one sorted pass (sorting included), the floor of every estimate
_PASS_SECONDS = 2e-8


def continuous_cost(n_rows: int, n_columns: int, n_thresholds: int, max_depth: int, n_classes: int = 2) -> float:
    """Estimated CPU seconds of the every-threshold search (one thread) on ``n_rows`` rows of
    ``n_columns`` searched columns with ``n_thresholds`` thresholds in all, at ``max_depth``.
    Depth 5 on: depth 4's estimate times its growth from depth 3 per level."""
    n, m, t, d = float(n_rows), float(max(n_columns, 1)), float(max(n_thresholds, 0)), int(max_depth)
    floor = _PASS_SECONDS * n * m * max(1.0, math.log2(max(n, 2.0)))
    if d <= 1 or t == 0:
        return floor

    def at(depth):
        a, b, c = _MODEL[depth]
        return math.exp(a + b * math.log(max(n * m, 1.0)) + c * math.log(t + 1.0))

    if d <= 4:
        est = at(d)
    else:
        growth = max(at(4) / at(3), 1.0)
        est = at(4) * growth ** (d - 4)
    # more classes: longer count vectors in every evaluation
    return floor + est * max(1.0, n_classes / 2.0) ** 0.5


def auto_budget(time_limit) -> float:
    """The estimated seconds within which "auto" searches every threshold."""
    return BUDGET_SECONDS if time_limit is None else min(BUDGET_SECONDS, BUDGET_SHARE * float(time_limit))


def binary_budget(max_binary_features):
    """The Binarizer's ``max_binary_features`` of a binary search under this setting."""
    return AUTO_BINARY_FEATURES if max_binary_features == AUTO else max_binary_features


def searched_columns(Xe, schema, stop=None) -> tuple[int, int, bool]:
    """(searched columns, thresholds, counted to the end) of the every-threshold search: a numeric
    column with u > 1 distinct values is one column of u - 1 thresholds; a categorical one of c
    categories c one-hot columns (1 for two categories) of one threshold each (as
    ``continuous.solver.expand_columns``). ``stop(m, t)`` True after a column ends the count (the
    estimate grows with both: what is known already passes the budget)."""
    m = t = 0
    for j in range(Xe.shape[1]):
        if stop is not None and stop(m, t):
            return m, t, False
        present = np.unique(Xe[:, j])
        present = present[~np.isnan(present)]
        if schema is not None and schema.is_categorical(j):
            present = present[present >= 0]
            k = 0 if present.size <= 1 else (1 if present.size == 2 else int(present.size))
            m, t = m + k, t + k
        elif present.size > 1:
            m, t = m + 1, t + int(present.size) - 1
    return m, t, True


def auto_excluded(est, sample=None) -> str | None:
    """Why "auto" cannot search every threshold for ``est`` (None: it may, by the estimate); without
    ``sample`` (a TrainingSample), for the parameters alone (the Dask fit, before any row is read)."""
    if getattr(est, "solver", "auto") == "binary":
        return "solver='binary'"
    if est.max_thresholds is not None:
        return "max_thresholds is set"
    if est.min_weight_fraction_leaf > 0 or est.monotonic_cst is not None or is_sparse(est):
        return ("options of the binary search only (ccp_alpha, max_leaves, min_samples_leaf, "
                "min_weight_fraction_leaf, monotonic_cst, select)")
    if not isinstance(getattr(est, "k", "all"), str):  # (OptimalTreeClassifier has no k: "all")
        return f"Top-{est.k} ranks binary features"
    if sample is not None and sample.is_binary():
        return "0/1 data: its binary features are every threshold"
    return None


def binary_features(n_rows: int, excluded: str | None) -> dict | None:
    """The decision of "auto" known before the distinct values are counted: the binary features
    when ``excluded`` (why every threshold is not a candidate) or above :data:`AUTO_MAX_ROWS` rows;
    else None (the estimate decides, :func:`chosen_by`)."""
    if excluded is None and n_rows <= AUTO_MAX_ROWS:
        return None
    return {"solver": "binary", "max_binary_features": AUTO_BINARY_FEATURES,
            "chosen_by": "max_binary_features='auto': " + (f"more than {AUTO_MAX_ROWS} rows" if n_rows > AUTO_MAX_ROWS
                                                           else excluded)}


def chosen_by(est, sample, eligible: str | None) -> dict:
    """The decision of "auto" for ``est`` on ``sample`` (a TrainingSample): ``{"solver":
    "continuous" or "binary", "max_binary_features": the binary search's (None: every threshold),
    "chosen_by": words}``, with ``estimate_seconds`` and ``budget_seconds`` when estimated.
    ``eligible``: None when every threshold is a candidate, else why not (words). When every
    threshold is at most :data:`AUTO_BINARY_FEATURES` binary features (categorical or few distinct
    values), the binary search over all of them is every threshold, at the old default's cost."""
    said = "max_binary_features='auto': "
    binary = {"solver": "binary", "max_binary_features": AUTO_BINARY_FEATURES}
    if eligible is not None or sample.n_input_rows > AUTO_MAX_ROWS:
        return binary_features(sample.n_input_rows, eligible)
    budget = auto_budget(est.time_limit)

    def cost(m, t):
        return continuous_cost(sample.n_samples, m, t, int(est.max_depth), sample.n_classes)

    # (counting stops once the columns counted cost more than the budget: a wide sample's count
    # would cost more than the binary fit)
    m, t, whole = searched_columns(sample.encoded, sample.schema,
                                   lambda m, t: t > AUTO_BINARY_FEATURES and cost(m, t) > budget)
    if t <= AUTO_BINARY_FEATURES:  # the binary budget holds every threshold: the binary search over them
        return {"solver": "binary", "max_binary_features": None,
                "chosen_by": said + f"every threshold ({t} in all, within {AUTO_BINARY_FEATURES}) as binary features"}
    est_s = cost(m, t)
    every = est_s <= budget
    words = said + (f"every threshold estimated at {'' if whole else 'least '}{est_s:.2g} s "
                    f"{'<=' if every else '>'} the budget {budget:g} s")
    return {**({"solver": "continuous", "max_binary_features": None} if every else binary), "chosen_by": words,
            "estimate_seconds": float(est_s), "budget_seconds": float(budget)}
