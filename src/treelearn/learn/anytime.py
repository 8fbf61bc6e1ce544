"""What the anytime searches share: the incumbent, the tie tolerance, the thread count and the
fitted attributes of a search.

The exact searches (Top-k / optimal over binary features, the continuous solver) start from an
incumbent, a tree known before the search (the greedy tree, the Top-1 tree, the Top-k lookahead
of the continuous solver), look only for trees at least as good, and when a limit stops them
return the best tree met, never worse than the incumbent. Each learner's room owns its search;
this module owns what they must agree on:

* :data:`ERROR_TIE`: two training errors (weighted misclassifications) closer than
  ``ERROR_TIE * max(1, total weight)`` are equal (:func:`error_tie`): exact for unit and integer
  weights, and float sums of fractional weights in another order never decide. The compiled
  continuous search compares with the same tolerance (``learn/continuous/data.h``, ``eps``).
  Scores are another quantity with tolerances of their own: the greedy learner's gains tie
  within ``GAIN_TOL`` (``learn/greedy/types.h``) and Top-k quantises its ranking keys
  (``learn/topk/ranking.h``).
* :func:`incumbent_bound`: the bound that makes a search find the trees tying with an
  incumbent too (ties go to the search's tree).
* :class:`Incumbent`: an incumbent's error at once or on first use, its Tree (a fresh copy)
  only when it is returned.
* :func:`n_threads`: scikit-learn's ``n_jobs`` as a number of threads, for every learner.
* :func:`set_search_attributes`: the fitted attributes every exact search reports, set in one
  place (``training_error_``, ``lower_bound_``, ``is_optimal_``, ``timed_out_``,
  ``incumbent_source_``, ``greedy_error_``, ``n_nodes_searched_``, ``cache_hits_``,
  ``cache_evictions_``, ``peak_memory_mb_``, ``fit_time_``), with the limit warning.
"""
from __future__ import annotations

import os
from typing import Callable

from treelearn._limits import warn_limit
from treelearn.tree.tree import Tree, training_errors

__all__ = ["ERROR_TIE", "error_tie", "incumbent_bound", "Incumbent", "n_threads", "set_search_attributes"]

#: relative tolerance of training-error comparisons (see the module doc)
ERROR_TIE = 1e-9


def error_tie(total_weight: float) -> float:
    """Training errors closer than this tie (``ERROR_TIE`` of the total weight, at least of 1)."""
    return ERROR_TIE * max(1.0, float(total_weight))


def incumbent_bound(error: float, total_weight: float) -> float:
    """The upper bound handed to a search that keeps trees of error below it, so that it finds
    the trees as good as an incumbent of ``error``, ties included."""
    return float(error) + error_tie(total_weight)


class Incumbent:
    """A tree known before (or beside) a search: ``error`` (its weighted training errors; None:
    computed from the tree on first use) and ``build()``, which makes the tree when it is first
    needed (a greedy tree the search may never need is not grown, a Top-1 result not rebuilt)."""

    def __init__(self, error: float | None, build: Callable[[], Tree]):
        self._error = None if error is None else float(error)
        self._build = build
        self._tree = None

    def _made(self) -> Tree:
        if self._tree is None:
            self._tree = self._build()
        return self._tree

    @property
    def error(self) -> float:
        if self._error is None:
            self._error = training_errors(self._made().children_left, self._made().value)
        return self._error

    @property
    def grown(self) -> bool:
        """Whether the tree was made (its error then known)."""
        return self._tree is not None

    def tree(self) -> Tree:
        """A fresh copy of the tree (the caller may change it)."""
        return self._made().copy()


#: from this much work (rows x columns x classes) on, the greedy incumbent of an exact search
#: grows under the fit's clock (a limit reached during it leaves it shallower, the root alone at
#: worst); below, it takes a fraction of a second and grows whole, so that a timed-out fit is
#: never worse than the greedy tree
CLOCKED_GREEDY_WORK = 4_000_000


def incumbent_time_limit(work: int, remaining):
    """The time limit of a greedy incumbent of ``work`` = rows x columns x classes: ``remaining``
    (the fit's clock) from :data:`CLOCKED_GREEDY_WORK` on, else None (grown whole)."""
    return remaining if work >= CLOCKED_GREEDY_WORK else None


#: address space one more thread takes: its stack and the malloc arena glibc reserves for it
#: (64 MiB on 64-bit systems)
THREAD_ADDRESS_SPACE = 8 * 2**20 + 64 * 2**20


def n_threads(n_jobs) -> int:
    """scikit-learn's ``n_jobs`` -> a number of threads (None: 1; -1: every core; -2: all but
    one; ...), no more than the address space left under a cap (``ulimit -v``) can start: past
    it, a thread either fails to start or aborts the process (glibc cannot place its
    thread-local data), and a search with fewer threads finds the same tree."""
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, min(n_jobs, _thread_room()))


def _thread_room() -> int:
    """Threads the address-space cap leaves room for (half of what is left is spent at most);
    no cap: unbounded."""
    try:
        import resource

        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
        if cap == resource.RLIM_INFINITY:
            return 2**31 - 1
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
    except (ImportError, OSError, ValueError, IndexError):
        return 2**31 - 1
    return max(1, (cap - used) // 2 // THREAD_ADDRESS_SPACE)


def set_search_attributes(est, *, training_error: float, lower_bound, timed_out: bool, is_optimal: bool,
                          incumbent_source: str, greedy_error, fit_time: float, stats: dict | None = None,
                          limit: str | None = None) -> None:
    """Set the fitted attributes of an exact search on the estimator ``est`` (see the module
    doc). ``stats``: the compiled search's counters (``nodes``, ``cache_hits``, ``evictions``,
    ``peak_bytes``; missing ones are 0: no search ran); ``limit``: what to say when
    ``timed_out`` (a :class:`~treelearn.SearchLimitWarning` naming the time limit)."""
    stats = stats or {}
    est.training_error_ = float(training_error)
    est.lower_bound_ = None if lower_bound is None else float(lower_bound)
    est.timed_out_ = bool(timed_out)
    est.is_optimal_ = bool(is_optimal)
    est.incumbent_source_ = incumbent_source
    est.greedy_error_ = None if greedy_error is None else float(greedy_error)
    est.n_nodes_searched_ = int(stats.get("nodes", 0))
    est.cache_hits_ = int(stats.get("cache_hits", 0))
    est.cache_evictions_ = int(stats.get("evictions", 0))
    est.peak_memory_mb_ = float(stats.get("peak_bytes", 0.0)) / (1024.0 * 1024.0)
    est.fit_time_ = float(fit_time)
    if est.timed_out_:
        warn_limit(type(est).__name__, limit or f"its time limit of {est.time_limit:g} s")
