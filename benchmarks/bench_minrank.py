"""Benchmark: treelearn's FINDMIN (001) against a plain recursive implementation of the procedure.

Realizable samples: a random target tree of rank r over n variables (treelearn.datasets), |S|
uniform examples. For each (n, r, |S|) it times, in one process and side by side:

* ``treelearn``: ``MinRankSearch(X, y).find_min()`` — compiled, with (cover, r) memoisation;
* ``compiled, no memo``: the same compiled search with memoisation off (to show what the memo
  itself buys, apart from compilation; stopped at ``--baseline-timeout`` too);
* ``baseline``: the plain recursive FIND / FINDMIN written below in Python, covers as Python
  integers used as row bitsets (AND, XOR, compare), variables in the same order, no memo.

All three must return the same tree (the procedure is deterministic); the script checks it.
Times are medians over ``--repeats`` runs (the baseline is run once when slow and stopped at
``--baseline-timeout`` seconds; a stopped run is reported as ">T" and its ratio as a lower bound).

A second table (``--hard``, on by default) uses samples of random labels on distinct random
points: their rank is high (6-8), FIND explores far more, and the sub-samples it meets repeat,
which is where the (cover, r) memo pays.

    python benchmarks/bench_minrank.py            # n in {20, 50, 100}, r in {2, 3}, |S| in {1000, 10000}
    python benchmarks/bench_minrank.py --quick
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from treelearn.datasets.rank import make_rank_tree_sample
from treelearn.learn.minrank.estimator import MinRankSearch, RankSearchLimitError


class BaselineTimeout(Exception):
    pass


class PlainFind:
    """FIND(S, r) exactly as printed in 001, recursive, no memo; covers are int bitsets."""

    def __init__(self, X, y, deadline):
        self.n = X.shape[1]
        self.cols = [int.from_bytes(np.packbits(X[:, v].astype(bool), bitorder="little").tobytes(), "little")
                     for v in range(self.n)]
        self.classes = np.unique(y)
        self.cls = [int.from_bytes(np.packbits(y == c, bitorder="little").tobytes(), "little")
                    for c in self.classes]
        self.full = (1 << X.shape[0]) - 1
        self.deadline = deadline
        self.calls = 0

    def find(self, cover, r):
        self.calls += 1
        if self.calls & 1023 == 0 and time.process_time() > self.deadline:
            raise BaselineTimeout
        for c, bits in enumerate(self.cls):  # step 1
            if cover & bits == cover:
                return ("leaf", c)
        if r == 0:  # step 2
            return None
        for v in range(self.n):  # step 3, informative variables only
            s1 = cover & self.cols[v]
            if s1 == 0 or s1 == cover:
                continue
            s0 = cover ^ s1
            q0 = self.find(s0, r - 1)
            q1 = self.find(s1, r - 1)
            if q0 is not None and q1 is not None:
                return (v, q0, q1)
            if q0 is not None or q1 is not None:  # step 3.3: re-run the failing side with bound r
                if q0 is None:
                    q0 = self.find(s0, r)
                else:
                    q1 = self.find(s1, r)
                return (v, q0, q1) if q0 is not None and q1 is not None else None
        return None  # step 4

    def find_min(self):
        r = 0
        while True:
            q = self.find(self.full, r)
            if q is not None:
                return q
            r += 1


def tree_tuple(t, node=0):
    if t.children_left[node] < 0:
        return ("leaf", int(np.argmax(t.value[node])))
    return (int(t.feature[node]), tree_tuple(t, t.children_left[node]), tree_tuple(t, t.children_right[node]))


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def run_case(n, r, X, y, args) -> bool:
    """Time the three implementations on one sample and print a table row; False on a mismatch."""
    limit = args.baseline_timeout
    m = X.shape[0]
    t_tl, tree = timed(lambda: MinRankSearch(X, y).find_min(), args.repeats)
    search = MinRankSearch(X, y)
    search.find_min()
    hits = search.stats_["memo_hits"]
    nm_times, tree_nm = [], None
    for _ in range(args.repeats):
        t0 = time.process_time()
        try:
            tree_nm = MinRankSearch(X, y, memoize=False, time_limit=limit).find_min()
        except RankSearchLimitError:
            nm_times = [float("inf")]
            break
        nm_times.append(time.process_time() - t0)
        if nm_times[-1] > 5.0:
            break
    t_nm = statistics.median(nm_times)
    ref, base_times = None, []
    for _ in range(args.repeats):
        t0 = time.process_time()
        try:
            ref = PlainFind(X, y, t0 + limit).find_min()
        except BaselineTimeout:
            base_times = [float("inf")]
            break
        base_times.append(time.process_time() - t0)
        if base_times[-1] > 5.0:  # slow: one run is enough
            break
    t_b = statistics.median(base_times)
    same = (tree_nm is None or tree_tuple(tree) == tree_tuple(tree_nm)) and (ref is None or tree_tuple(tree) == ref)

    def fmt(t):
        return f">{limit:.0f}" if t == float("inf") else f"{t:.4f}"

    def ratio(t):
        return f">{limit / t_tl:.0f}" if t == float("inf") else f"{t / t_tl:.1f}"

    print(f"{n:>4} {r:>2} {m:>6} {tree.rank:>4} {t_tl:>12.4f} {fmt(t_nm):>10} {fmt(t_b):>11} {ratio(t_b):>9} "
          f"{ratio(t_nm):>9} {hits:>10} {str(same):>9}", flush=True)
    if not same:
        print("ERROR: the implementations returned different trees", file=sys.stderr)
    return same


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None, help="unused (synthetic data); accepted for uniformity")
    ap.add_argument("--n", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--rank", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--samples", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-timeout", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="n in {20, 50}, |S| = 1000 only, small hard cases")
    ap.add_argument("--no-hard", dest="hard", action="store_false", help="skip the random-label table")
    args = ap.parse_args(argv)
    args.hard_cases = [(16, 2000), (20, 3000)]
    if args.quick:
        args.n, args.samples, args.repeats, args.baseline_timeout = [20, 50], [1000], 1, 30.0
        args.hard_cases = [(12, 500)]

    header = (f"{'n':>4} {'r':>2} {'|S|':>6} {'r(S)':>4} {'treelearn s':>12} {'no-memo s':>10} "
              f"{'baseline s':>11} {'base/tl':>9} {'nomemo/tl':>9} {'memo hits':>10} {'same tree':>9}")
    cases = [("realizable: random rank-r target, uniform sample", n, r, m)
             for n in args.n for r in args.rank for m in args.samples]
    if args.hard:
        cases += [("random labels on distinct random points (high rank)", n, None, m) for n, m in args.hard_cases]
    section = None
    for title, n, r, m in cases:
        if title != section:
            section = title
            print(f"\n{title}\n{header}\n{'-' * len(header)}")
        if r is None:
            rng = np.random.default_rng(args.seed + n)
            X = np.unique(rng.integers(0, 2, size=(m, n), dtype=np.uint8), axis=0)
            y = rng.integers(0, 2, size=X.shape[0])
        else:
            X, y, _ = make_rank_tree_sample(n, r, m, random_state=args.seed + 1000 * n + 10 * r)
        if not run_case(n, "-" if r is None else r, X, y, args):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
