"""Do the limits bound the whole fit? Time-limit and memory-cap overshoot per learner, and Ctrl-C
latency per learner in the main thread and in a worker thread.

Every measurement runs in a child process of its own (a fresh peak RSS, signals of its own):

* overshoot table (after a warm-up fit on 200 rows, so that the libraries a process's first fit
  loads are not counted as the fit's memory): learner x rows (``--rows``, default 10^5 and 10^6; 10^7 with ``--rows 1e7``:
  1.6 GB of input per fit) x time limit (``--limits``, default 0.1 1 10 s): the fit's wall time
  against the documented bound ``limit * 1.1 + 0.5 s``, and its memory growth (peak RSS above the
  input) against the cap's bound ``memory_limit_mb + size of X + 64 MiB``;
* Ctrl-C table: SIGINT ``--sigint-after`` seconds into a long fit (no time limit), the seconds
  until the fit has raised KeyboardInterrupt, in the main thread and in a worker thread (the
  main thread gets the KeyboardInterrupt; the worker's fit must stop too).

    python benchmarks/bench_limits.py --quick
    nice python benchmarks/bench_limits.py --rows 1e5 1e6 1e7 --limits 0.1 1 10

Data: a numeric X (20 columns, normal) with a noisy rule y; for min-rank 0/1 columns and the
parity of 8 of them (its Ctrl-C fit: the threshold concept on 6,000 points). Timings are
wall-clock on whatever else the machine runs (``os.getloadavg`` is printed alongside).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")

# learner -> constructor (``L`` the time limit, ``M`` the memory cap in MB); the exponential
# searches get a depth that never finishes within the limits measured
LEARNERS = {
    "greedy": "tl.GreedyTreeClassifier()",
    "pruned-bound": "tl.PrunedTreeClassifier(pruning='bound')",
    "topk": "tl.TopKTreeClassifier(k=3, max_depth=6, time_limit=L, memory_limit_mb=M)",
    "optimal-binary": "tl.OptimalTreeClassifier(max_depth=6, max_binary_features=100, time_limit=L, memory_limit_mb=M)",
    "optimal-continuous": "tl.OptimalTreeClassifier(max_depth=5, solver='continuous', time_limit=L, "
                          "memory_limit_mb=M)",
    "minrank": "tl.MinRankTreeClassifier(time_limit=L)",
}
# the learners with a time limit (the greedy ones have none: they are in the Ctrl-C table only)
TIMED = ["topk", "optimal-binary", "optimal-continuous", "minrank"]

_CHILD = """
import json, sys, time, threading, warnings
import numpy as np
import treelearn as tl
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
n, d = spec["rows"], 20
if spec["learner"] == "minrank" and spec["mode"] != "limit":  # a threshold concept: rank ~ log2(rows)
    X = np.arange(6000, dtype=float).reshape(-1, 1)
    y = np.arange(6000) % 2
elif spec["learner"] == "minrank":  # the parity of 8 columns: a rank-8 search
    X = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
    y = X[:, :8].sum(axis=1) % 2
else:
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n) > 0).astype(int)
L, M = 0.05, spec["cap"]
try:  # the libraries a first fit loads (scikit-learn, SciPy, pandas: ~150 MB) load before measuring
    eval(spec["make"]).fit(X[:200], y[:200])
except Exception:
    pass
L = spec["limit"]
est = eval(spec["make"])

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

def hwm_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024

open("/proc/self/clear_refs", "w").write("5")
base = rss_mb()
out = {"input_mb": X.nbytes / 2**20}

def run():
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
        out["outcome"] = "fitted"
    except KeyboardInterrupt:
        out["outcome"] = "interrupted"
    except Exception as exc:
        out["outcome"] = type(exc).__name__
    out["wall"] = time.perf_counter() - t0
    out["end"] = time.perf_counter()

if spec["mode"] == "limit":
    run()
    out["grow_mb"] = hwm_mb() - base
    print("RESULT " + json.dumps(out), flush=True)
elif spec["mode"] == "main":
    print("ready", flush=True)
    try:
        run()
    except KeyboardInterrupt:
        out["outcome"], out["end"] = "interrupted", time.perf_counter()
    print("RESULT " + json.dumps(out), flush=True)
else:
    th = threading.Thread(target=run, daemon=True)
    th.start()
    print("ready", flush=True)
    try:
        while th.is_alive():
            time.sleep(0.01)
    except KeyboardInterrupt:
        th.join(600)
    print("RESULT " + json.dumps(out), flush=True)
"""


def _env():
    return dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _result(text: str) -> dict:
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return {"outcome": "no result"}


def overshoot(learner: str, rows: int, limit: float, cap: float, timeout: float) -> dict:
    spec = {"learner": learner, "rows": rows, "limit": limit, "cap": cap, "make": LEARNERS[learner], "mode": "limit"}
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], capture_output=True, text=True,
                           timeout=timeout, env=_env())
        r = _result(p.stdout)
        if r["outcome"] == "no result":
            r["outcome"] = (p.stderr.strip().splitlines() or ["?"])[-1][:60]
    except subprocess.TimeoutExpired:
        r = {"outcome": f"killed after {timeout:.0f} s", "wall": float("nan"), "grow_mb": float("nan")}
    return r


def ctrl_c(learner: str, rows: int, mode: str, after: float) -> float:
    """Seconds from SIGINT to the fit's KeyboardInterrupt (nan: it did not stop)."""
    spec = {"learner": learner, "rows": rows, "limit": None, "cap": 4096, "make": LEARNERS[learner], "mode": mode}
    p = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(spec)], stdout=subprocess.PIPE, text=True,
                         env=_env())
    try:
        if not p.stdout.readline().startswith("ready"):
            return float("nan")
        time.sleep(after)
        t = time.perf_counter()  # CLOCK_MONOTONIC: the child's perf_counter too
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    r = _result(out)
    return r["end"] - t if r.get("outcome") == "interrupted" and "end" in r else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, nargs="+", default=[1e5, 1e6])
    ap.add_argument("--limits", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    ap.add_argument("--cap", type=float, default=1024.0, help="memory_limit_mb of the searches (their default)")
    ap.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=list(LEARNERS))
    ap.add_argument("--sigint-after", type=float, default=2.0)
    ap.add_argument("--sigint-rows", type=float, default=1e6)
    ap.add_argument("--quick", action="store_true", help="10^5 rows, limits 0.1 and 1 s")
    ap.add_argument("--no-sigint", action="store_true")
    a = ap.parse_args(argv)
    rows = [100000] if a.quick else [int(r) for r in a.rows]
    limits = [0.1, 1.0] if a.quick else a.limits
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print("\ntime-limit and memory-cap overshoot (bound: limit x 1.1 + 0.5 s; cap + X + 64 MiB)")
    print(f"{'learner':20s} {'rows':>9s} {'limit':>6s} {'wall s':>8s} {'bound':>6s} {'grow MB':>8s} "
          f"{'mem bound':>9s}  outcome")
    worst = []
    for learner in [x for x in a.learners if x in TIMED]:
        for n in rows:
            for lim in limits:
                r = overshoot(learner, n, lim, a.cap, timeout=max(120.0, 20 * lim + 60))
                bound = lim * 1.1 + 0.5
                mem_bound = a.cap + r.get("input_mb", 0.0) + 64
                ok = r.get("wall", float("inf")) <= bound and r.get("grow_mb", float("inf")) <= mem_bound
                worst.append(ok)
                print(f"{learner:20s} {n:9d} {lim:6.1f} {r.get('wall', float('nan')):8.2f} {bound:6.2f} "
                      f"{r.get('grow_mb', float('nan')):8.0f} {mem_bound:9.0f}  {r['outcome']}"
                      f"{'' if ok else '  OVER'}", flush=True)
    print(f"cells within both bounds: {sum(worst)}/{len(worst)}")
    if a.no_sigint:
        return
    print(f"\nCtrl-C latency (s from SIGINT to KeyboardInterrupt, {a.sigint_after:g} s into a fit on "
          f"{int(a.sigint_rows)} rows)")
    print(f"{'learner':20s} {'main':>7s} {'worker':>7s}")
    for learner in a.learners:
        lat = [ctrl_c(learner, int(a.sigint_rows), mode, a.sigint_after) for mode in ("main", "worker")]
        print(f"{learner:20s} {lat[0]:7.2f} {lat[1]:7.2f}", flush=True)


if __name__ == "__main__":
    main()
