"""Machinery of the fuzz suite: a crash-proof worker process, outcome bookkeeping per area, and
the short/long runner.

Every fuzzed call runs in a worker process (``fuzz_worker.serve``) with an address-space limit
and a wall-clock limit, so that a segfault, an abort, a runaway allocation or a hang is recorded
as such instead of ending the test session. Outcomes per area:

* ``ok``: a valid result (checked by the test's property);
* ``named``: an error of treelearn's own (``TreeLearnValueError``, ``RankSearchLimitError``, ...)
  or a ``ValueError``/``TypeError`` raised by treelearn's or scikit-learn's Python code, with a
  one-line message that names the problem;
* ``unclear``: any other exception (OverflowError, IndexError, a numpy or Cython buffer error,
  a traceback from deep inside a library, an empty or multi-screen message);
* ``crash``: the worker died (signal, abort); ``limit``: it hung past the wall-clock limit or
  ran out of memory (MemoryError);
* ``wrong``: a result that contradicts the property or an independent reference.

Short form (``make test``): a few examples per test, derandomized under CI like the other
property tests. Long form (``pytest tests/fuzz --fuzz-long --fuzz-seconds=N``, or ``make fuzz``):
each test repeats fresh random runs for its share of N seconds, keeps going after a failure, and
the session ends with a table of the outcomes per area (also written to ``--fuzz-report``).
"""
from __future__ import annotations

import collections
import json
import multiprocessing
import os
import time
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

#: seconds a single fuzzed call may take before the worker is killed (a "limit" outcome)
CALL_TIMEOUT = float(os.environ.get("TREELEARN_FUZZ_CALL_TIMEOUT", "30"))
#: address space a worker may add to what it maps at its start (bytes): ample for any fuzzed fit
WORKER_MEMORY = int(float(os.environ.get("TREELEARN_FUZZ_WORKER_MB", "3072")) * 2**20)
OUTCOMES = ("tried", "ok", "named", "crash", "unclear", "wrong", "limit")


class Config:
    long = False
    seconds = 600.0
    n_tests = 1
    report = None


class AreaStats:
    def __init__(self):
        self.counts = collections.Counter()
        self.examples: dict[str, list[str]] = collections.defaultdict(list)

    def note(self, outcome: str, example: str | None = None):
        self.counts[outcome] += 1
        if example is not None and len(self.examples[outcome]) < 5:
            if example not in self.examples[outcome]:
                self.examples[outcome].append(example)


STATS: dict[str, AreaStats] = collections.defaultdict(AreaStats)


# ---------------------------------------------------------------------------------- the worker
class Worker:
    """One long-lived worker process; restarted after a crash or a timeout."""

    _instance = None

    @classmethod
    def get(cls) -> "Worker":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @classmethod
    def shutdown(cls):
        if cls._instance is not None:
            cls._instance._stop()
            cls._instance = None

    def __init__(self):
        self.proc = None
        self.conn = None

    def _start(self):
        import fuzz_worker

        # fork where the platform has it: the worker starts in milliseconds with treelearn already
        # imported (a spawned one re-imports scikit-learn, pandas and scipy: seconds, each restart)
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=fuzz_worker.serve, args=(child, WORKER_MEMORY), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def _stop(self):
        if self.proc is not None:
            try:
                self.conn.close()
            except OSError:  # pragma: no cover
                pass
            self.proc.join(timeout=2)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(timeout=5)
        self.proc = self.conn = None

    def call(self, task: str, *args, timeout: float = CALL_TIMEOUT) -> dict:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        start_timeout = 60.0  # the first request also waits for the imports
        try:
            self.conn.send((task, args))
            if not self.conn.poll(timeout + (start_timeout if not getattr(self, "_warm", False) else 0)):
                self.proc.kill()
                self.proc.join(timeout=5)
                self.proc = None
                return {"status": "hang", "message": f"no answer within {timeout:.0f} s"}
            result = self.conn.recv()
            self._warm = True
            return result
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            self.proc.join(timeout=5)
            code = self.proc.exitcode
            self.proc = None
            self._warm = False
            return {"status": "crash", "message": f"worker died (exit code {code})", "exitcode": code}


def call(task: str, *args, timeout: float = CALL_TIMEOUT) -> dict:
    return Worker.get().call(task, *args, timeout=timeout)


# ---------------------------------------------------------------------------------- outcomes
def _is_named(result: dict) -> bool:
    """A treelearn/sklearn-style error: the problem named in one readable line."""
    bases = result.get("bases", [])
    own = result["type"].startswith("treelearn.")
    value_or_type = "builtins.ValueError" in bases or "builtins.TypeError" in bases
    origin = result.get("origin", "")
    from_python_api = origin.startswith(("treelearn/", "sklearn/")) and origin.endswith(".py")
    msg = result.get("message", "")
    readable = 0 < len(msg.strip()) <= 600 and "Traceback" not in msg
    return readable and (own or (value_or_type and from_python_api))


def classify(result: dict) -> str:
    """ok / named / unclear / crash / limit for a worker answer."""
    status = result["status"]
    if status == "ok":
        return "ok"
    if status == "crash":
        return "crash"
    if status == "hang" or result.get("memory") or result.get("type") == "builtins.MemoryError":
        return "limit"
    return "named" if _is_named(result) else "unclear"


def describe(result: dict) -> str:
    if result["status"] in ("crash", "hang"):
        return result["message"]
    if result["status"] == "error":
        return f"{result['type']} at {result.get('origin')}: {result['message'][:200]}"
    return "ok"


class FuzzFailure(AssertionError):
    pass


class _OutOfTime(Exception):
    """The long form's time for this test is up (raised between examples)."""


def record(area: str, outcome: str, case: str, detail: str = "", trace: str = "") -> None:
    """Count an outcome; a bad one fails the example (after being counted). Every call to the
    worker counts once as tried and once as ok/named/crash/unclear/limit (``expect_clean``); a
    property check adds ``wrong`` for a valid result that contradicts it (``ok`` adds nothing)."""
    if outcome == "ok":
        return
    STATS[area].note(outcome, None if outcome == "named" else f"{detail} | input: {case[:600]}")
    if outcome in ("crash", "unclear", "wrong", "limit"):
        raise FuzzFailure(f"[{area}] {outcome}: {detail}\n  input: {case[:2000]}" + (f"\n{trace}" if trace else ""))


def expect_clean(area: str, result: dict, case: str) -> bool:
    """Record a worker answer; True when it is a valid result for the caller to check further."""
    STATS[area].counts["tried"] += 1
    outcome = classify(result)
    if outcome == "ok":
        STATS[area].counts["ok"] += 1
        return True
    record(area, outcome, case, describe(result),
           result.get("traceback", "")[-1500:] if outcome == "unclear" else "")
    return False


# ---------------------------------------------------------------------------------- the runner
def run(strategy, check, *, examples: int = 20, share: float = 1.0):
    """Run ``check(case)`` for cases drawn from ``strategy``: ``examples`` of them in the short
    form; in the long form repeated fresh runs for ``share`` of this test's time, collecting every
    distinct failure and failing at the end if there was any."""
    if not Config.long:
        inner = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
                         database=None)(given(strategy)(check))
        inner()
        return
    budget = share * Config.seconds / max(1, Config.n_tests)
    stop = time.monotonic() + budget
    failures: dict[str, str] = {}
    chunk = max(10, 2 * examples)

    def timed(case):
        if time.monotonic() > stop:
            raise _OutOfTime()
        check(case)

    while time.monotonic() < stop:
        inner = settings(max_examples=chunk, deadline=None, suppress_health_check=list(HealthCheck),
                         derandomize=False, database=None,
                         phases=[Phase.generate, Phase.target, Phase.shrink])(given(strategy)(timed))
        try:
            inner()
        except _OutOfTime:
            break
        except Exception as exc:  # noqa: BLE001 - every failure is collected, the run goes on
            parts = list(exc.exceptions) if isinstance(exc, BaseExceptionGroup) else [exc]
            out_of_time = False
            for part in parts:
                if isinstance(part, _OutOfTime):
                    out_of_time = True
                    continue
                notes = "\n".join(getattr(part, "__notes__", []))
                key = str(part).split("\n", 1)[0][:160]
                if key not in failures:
                    failures[key] = f"{part}\n{notes}"[:4000]
            if out_of_time or len(failures) >= 20:
                break
    if failures:
        raise FuzzFailure(f"{len(failures)} distinct failure(s):\n\n" + "\n\n".join(failures.values()))


def table() -> str:
    rows = [("area", "inputs tried", "ok", "named errors", "crashes", "unclear errors", "wrong answers",
             "limit violations")]
    total = collections.Counter()
    for area in sorted(STATS):
        c = STATS[area].counts
        total.update(c)
        rows.append((area, c["tried"], c["ok"], c["named"], c["crash"], c["unclear"], c["wrong"], c["limit"]))
    rows.append(("total", total["tried"], total["ok"], total["named"], total["crash"], total["unclear"],
                 total["wrong"], total["limit"]))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(str(v).ljust(w) for v, w in zip(r, widths)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def report_dict() -> dict:
    return {area: {"counts": dict(s.counts), "examples": dict(s.examples)} for area, s in sorted(STATS.items())}


def write_report(path: str) -> None:
    with open(path, "w") as f:
        json.dump({"seconds": Config.seconds, "long": Config.long, "areas": report_dict(), "table": table()},
                  f, indent=1, default=str)


def case_repr(**kw) -> str:
    """A compact, replayable description of a fuzz input."""
    def show(v):
        if isinstance(v, np.ndarray):
            return f"np.array({v.tolist()!r}, dtype={v.dtype.str!r})"
        return repr(v)
    return ", ".join(f"{k}={show(v)}" for k, v in kw.items())


def format_exc_short(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


__all__ = ["Config", "STATS", "call", "classify", "expect_clean", "record", "run", "table", "case_repr",
           "pytest", "write_report"]
