"""Limits of a whole fit: one clock from the start of ``fit`` over binarization, search
and tree rebuild, the default time limit of the exponential searches, the warning a learner gives
when it stops at a limit, and the ``verbose`` progress reporter.

* :data:`DEFAULT_TIME_LIMIT` (600 s): the default ``time_limit`` of every exponential search
  (Top-k, optimal, min-rank, BuildDT). Ten minutes is long enough for every experiment of the
  papers' sizes to finish (the longest optimal fit of the reproduced experiments takes about a
  minute) and short enough that a mistaken depth or size comes back with its best tree instead of
  running for hours; ``time_limit=None`` removes it.
* :class:`FitClock`: the deadline of one fit; ``remaining()`` is what a phase may still spend, and
  ``check()`` raises :class:`FitTimeout` (internal: the learner turns it into its anytime answer)
  between the phases and blocks of the work before the compiled search.
* :class:`SearchLimitWarning`: a learner that stops at its time limit or memory cap says so with
  this warning (and ``timed_out_``); filter it with ``warnings.simplefilter("ignore",
  SearchLimitWarning)``.
* :class:`LimitError`: the one base of the errors a limit raises, so that one ``except`` clause
  catches them all: :class:`ResourceLimitError` (work that cannot fit in ``memory_limit_mb`` at
  all, e.g. a binarized sample larger than the cap, refused before it is allocated), the
  min-rank search's ``RankSearchLimitError`` and the query learner's ``SearchLimitError``
  (each keeps its own bases too).
* :class:`ProgressReporter`: ``verbose > 0`` prints one line to stderr at most every 0.5 s while a
  search runs (elapsed seconds, phase, and the counters a search publishes: incumbent error, lower
  bound, nodes, cache entries), from a daemon thread that is stopped and joined when the fit ends.
* :class:`LiveCounters`: the array a compiled search writes those counters to while it runs
  (``core/progress.h``: relaxed atomic writes where the search reads its clock, no lock);
  ``ProgressReporter.live()`` makes one and prints it on every line.
"""
from __future__ import annotations

import sys
import threading
import time
import warnings

import numbers
import os

import numpy as np

from treelearn._validation import BOOLEAN, INT32_MAX, Interval, TreeLearnValueError

DEFAULT_TIME_LIMIT = 600.0
#: the constraint of every learner's ``verbose`` parameter: 0, 1, 2, ... or a bool
VERBOSE = [Interval(numbers.Integral, 0, INT32_MAX), BOOLEAN]
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

__all__ = ["DEFAULT_TIME_LIMIT", "VERBOSE", "SPENT", "FitClock", "fit_started", "set_interrupt_probe", "FitTimeout", "LimitError", "LiveCounters",
           "ProgressReporter", "ResourceLimitError", "SearchLimitWarning", "warn_limit"]


class SearchLimitWarning(UserWarning):
    """A search stopped at its time limit or memory cap and returned its best tree so far."""


class LimitError(Exception):
    """A fit or search stopped at, or was refused by, one of its limits (time, memory, queries):
    the base of :class:`ResourceLimitError`, :class:`treelearn.RankSearchLimitError` and
    :class:`treelearn.SearchLimitError`. (An anytime search that stops at its time limit returns
    its best tree with a :class:`SearchLimitWarning` instead.)"""


class ResourceLimitError(TreeLearnValueError, MemoryError, LimitError):
    """The work asked for cannot be done within ``memory_limit_mb`` (refused before allocating)."""


class FitTimeout(Exception):
    """Internal: the fit's deadline passed before the search started."""


#: what :meth:`FitClock.remaining` gives once the deadline has passed: a phase handed this much
#: time (or less) does not start (a search given it stops at once)
SPENT = 1e-3


class FitClock:
    """The deadline of one fit: ``time_limit`` seconds (None: none) from ``t0`` (default: the start
    of the estimator's ``fit`` running in this thread, see :func:`fit_started`, else now), so that
    the input checks and encodings before the learner's own work count too."""

    def __init__(self, time_limit, t0=None):
        if t0 is None:
            starts = getattr(_fit_starts, "stack", None)
            t0 = starts[-1] if starts else time.perf_counter()
        self.t0 = t0
        #: set by a phase that stopped at the deadline (its caller reports ``timed_out_``)
        self.timed_out = False
        self.time_limit = None if time_limit is None else float(time_limit)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self):
        """Seconds left (at least a millisecond, so that a search given it still stops at once);
        None without a limit."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - self.elapsed(), SPENT)

    def expired(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    def check(self) -> None:
        """Between the phases and blocks of a fit: Ctrl-C (in any thread: the process's flag,
        :func:`set_interrupt_probe`) raises KeyboardInterrupt, the deadline :class:`FitTimeout`."""
        probe = _interrupt_probe[0]
        if probe is not None and probe():
            raise KeyboardInterrupt("fit interrupted (Ctrl-C)")
        if self.expired():
            raise FitTimeout()


# per thread, the start times of the fits running in it (innermost last)
_fit_starts = threading.local()


class fit_started:
    """``with fit_started():`` around an estimator's whole ``fit``: a :class:`FitClock` made in
    this thread while it runs counts from the moment the ``with`` began (a fit inside a fit counts
    from its own start)."""

    def __enter__(self):
        stack = getattr(_fit_starts, "stack", None)
        if stack is None:
            stack = _fit_starts.stack = []
        stack.append(time.perf_counter())
        return self

    def __exit__(self, *exc):
        _fit_starts.stack.pop()
        return False


# the probe of the process's Ctrl-C flag (installed by the estimator seam: this layer imports
# nothing compiled)
_interrupt_probe: list = [None]


def set_interrupt_probe(probe) -> None:
    """``probe()`` -> whether Ctrl-C came during the running fits (the compiled searches' flag):
    :meth:`FitClock.check` asks it, so that the Python phases of a fit in a worker thread stop
    on Ctrl-C too."""
    _interrupt_probe[0] = probe


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside the treelearn package (the user's call)."""
    level, f = 1, sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


def warn_limit(owner: str, what: str, stacklevel=None) -> None:
    """Warn that ``owner`` stopped at ``what`` (e.g. "its time limit of 2 s"), attributed to the
    user's line that called into treelearn."""
    warnings.warn(f"{owner} stopped at {what}; the best tree found so far is returned (timed_out_=True)",
                  SearchLimitWarning, stacklevel=_caller_stacklevel() if stacklevel is None else stacklevel)


class LiveCounters:
    """The live counters of one running compiled search (the slots of ``core/progress.h``).

    ``array`` (float64, NaN where not known yet) is handed to the search's binding, which passes
    its address to the search; the search writes it while it runs without the GIL, and
    :meth:`stats` reads it from the reporter's thread. The array is owned here (Python memory):
    nothing to free when the fit is interrupted, and the binding holds a reference while the
    search runs.
    """

    SLOTS = ("nodes", "cache", "incumbent", "lower_bound")  # core/progress.h's Slot order

    def __init__(self, incumbent=None):
        self.array = np.full(len(self.SLOTS), np.nan)
        if incumbent is not None:
            self.array[2] = float(incumbent)

    def stats(self) -> dict:
        vals = self.array.tolist()
        out = {}
        for name, v in zip(self.SLOTS, vals):
            if v != v:  # NaN: not known yet
                continue
            out[name] = int(v) if name in ("nodes", "cache") else round(v, 6)
        return out


class ProgressReporter:
    """Prints the progress of a fit to stderr at most every ``interval`` seconds (``verbose > 0``).

    Use as a context manager around the fit; ``phase`` and ``stats`` (a dict of counters, or a
    callable returning one) may be updated while it runs. Each line: ``[Owner] 3.5 s  searching
    nodes=... incumbent=... bound=...``. Nothing is printed when ``verbose`` is 0. The thread only
    prints; it never touches the search, and it is joined on exit.
    """

    def __init__(self, owner: str, verbose, interval: float = 0.5, stream=None):
        self.owner = owner
        self.verbose = int(verbose or 0)
        self.interval = float(interval)
        self.stream = stream
        self.phase = "starting"
        self.stats = None
        self.t0 = time.perf_counter()
        self._stop = threading.Event()
        self._thread = None

    def line(self) -> str:
        parts = [f"[{self.owner}] {time.perf_counter() - self.t0:7.1f} s  {self.phase}"]
        stats = self.stats() if callable(self.stats) else self.stats
        for k, v in (stats or {}).items():
            if v is None:
                continue
            parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
        return "  ".join(parts)

    def live(self, incumbent=None) -> LiveCounters | None:
        """The counters array for the compiled search about to run, shown on every line from
        now on (None when ``verbose`` is 0: the search then publishes nothing)."""
        if self.verbose <= 0:
            return None
        counters = LiveCounters(incumbent)
        self.stats = counters.stats
        return counters

    def emit(self, text=None) -> None:
        if self.verbose > 0:
            print(self.line() if text is None else f"[{self.owner}] {text}", file=self.stream or sys.stderr,
                  flush=True)

    def _run(self):
        while not self._stop.wait(self.interval):
            try:
                self.emit()
            except Exception:  # a reporter never takes the fit down
                return

    def __enter__(self):
        if self.verbose > 0:
            self._thread = threading.Thread(target=self._run, name=f"treelearn-progress-{self.owner}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.verbose > 0:
            self.phase = "interrupted" if exc[0] is KeyboardInterrupt else ("failed" if exc[0] else "done")
            self.emit()
        return False
