"""Learning decision trees from membership queries.

Implements Blanc, Lange, Qiao, Tan, *Properly learning decision trees in almost polynomial time*
(paper 004: influence, smoothing, PRUNE of Fig. 1, BuildDT of Fig. 2, the monotone
random-example variant of §6) and BuildTopDownDT_Inf of Blanc, Lange, Tan (paper 000, Fig. 2).

Conventions
-----------
* Functions are ``f: {±1}^n -> {±1}`` (Boolean) or ``-> [-1, 1]`` (real valued, e.g. the smoothed
  ``f_δ``), given as an :class:`Oracle` that answers batches of queries (an ``(N, n)`` int8 array
  of ±1) and counts them.
* Trees over {±1}^n are :class:`treelearn.Tree` objects with ``feature = i``, ``kind = 0``,
  ``threshold = 0.0`` (``x_i = +1`` goes right), ``classes = [-1, 1]``.
* Truth tables are indexed by ``sum_j [x_j = +1] 2^j`` (``x_0`` is the least significant bit).
* **Influence** (004 Def. 1) uses a *re-randomised* coordinate: ``Inf_i(f) = E[ρ(f(x), f(x^~i))]``
  where ``x^~i`` has coordinate i redrawn uniformly. Since the redraw keeps ``x_i`` half the
  time, ``Inf_i(f) = ½·E[ρ(f(x), f(x^{⊕i}))]``: **half** of the flipped-coordinate influence
  ``Pr[f(x) ≠ f(x^{⊕i})]`` of paper 000 (and of O'Donnell's book). The metric ρ is ``1[a ≠ b]``
  for Boolean functions and ``|a − b|`` for real-valued ones (004 Remark 1); for ±1-valued
  functions the second is twice the first.
* **dist** (004 Def. 2) is ``E[ρ(f(x), g(x))]`` under the uniform distribution with the same metric
  (``metric="auto"`` picks ``hamming`` when both functions are Boolean, else ``abs``).
"""
from treelearn.learn.queries.builddt import (
    build_dt,
    default_parameters,
    learn_from_queries,
    monotone_sample_size,
)
from treelearn.learn.queries.estimator import QueryTreeClassifier
from treelearn.learn.queries.influence import (
    average_depth,
    dist,
    influence,
    influences,
    noisy_influences,
    top_down_influence,
)
from treelearn.learn.queries.oracle import (
    MAX_EXACT_N,
    Oracle,
    SearchLimitError,
    TreeBuilder,
    all_points,
    as_oracle,
    hoeffding_sample_size,
    random_pm1,
    rng_seed,
    smooth,
    tree_from_nested,
)
from treelearn.learn.queries.prune import influential_pruning, is_everywhere_influential

__all__ = [
    "Oracle",
    "SearchLimitError",
    "influence",
    "influences",
    "noisy_influences",
    "smooth",
    "dist",
    "average_depth",
    "influential_pruning",
    "is_everywhere_influential",
    "build_dt",
    "top_down_influence",
    "learn_from_queries",
    "default_parameters",
    "monotone_sample_size",
    "hoeffding_sample_size",
    "QueryTreeClassifier",
    "tree_from_nested",
    "TreeBuilder",
    "all_points",
    "as_oracle",
    "random_pm1",
    "rng_seed",
    "MAX_EXACT_N",
]
