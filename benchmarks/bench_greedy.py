"""Benchmark: GreedyTreeClassifier vs scikit-learn's DecisionTreeClassifier, side by side.

On the numerical datasets of the Top-k paper (../shared/datasets/topk), with a fixed 80/20 split
(seed 0), for max_depth 4, 8, 12: the fit time (median of ``--repeats`` interleaved runs) and the
test accuracy of

* treelearn exact (every midpoint threshold) vs sklearn (same criterion),
* treelearn ``max_thresholds=255`` (quantile thresholds, histogram split finding),

printing the time ratio treelearn / sklearn per dataset and depth and the medians.
Targets (issue 2): exact median ratio <= 0.8; histogram median ratio <= 0.25 with test accuracy
within 0.5 points of exact.

    python benchmarks/bench_greedy.py [--data-dir ../shared/datasets] [--repeats 7] [--criterion entropy]
                                      [--clock wall|cpu]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from treelearn import GreedyTreeClassifier

REPO = Path(__file__).resolve().parents[1]
DATASETS = ["spambase", "telescope", "dry-bean", "credit-card", "electrical-grid-stability", "occupancy-estimation"]
DEPTHS = [4, 8, 12]


def load_topk(data_dir: Path, name: str):
    """The Top-k numerical files: a header row, the label in the last column (MANIFEST.md)."""
    try:  # the shared loader, when it is there
        from treelearn.datasets import load_dataset  # noqa: PLC0415

        ds = load_dataset(name, data_dir)
        X, y = (ds[0], ds[1]) if isinstance(ds, tuple) else (ds.X, ds.y)
        return np.asarray(X, dtype=np.float64), np.asarray(y)
    except Exception:
        pass
    df = pd.read_csv(data_dir / "topk" / f"{name}.csv", skip_blank_lines=True)
    return df.iloc[:, :-1].to_numpy(dtype=np.float64), df.iloc[:, -1].to_numpy()


CLOCK = time.perf_counter


def timed_fit(est, X, y):
    t0 = CLOCK()
    est.fit(X, y)
    return CLOCK() - t0, est


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "datasets"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--criterion", default="entropy", choices=["entropy", "gini"])
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    ap.add_argument("--depths", nargs="*", type=int, default=DEPTHS)
    ap.add_argument("--binary", action="store_true",
                    help="also time both on the binary matrices of ../shared/anchors/binarized (depths 3-5, "
                         "training accuracy vs the Top-k k=1 reference)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: perf_counter; cpu: process CPU time (steadier on a loaded machine)")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    data_dir = Path(args.data_dir)
    if not (data_dir / "topk").is_dir():
        print(f"datasets not found under {data_dir}/topk (pass --data-dir)", file=sys.stderr)
        return 2
    header = (f"{'dataset':27s} {'depth':>5s} {'sklearn ms':>10s} {'exact ms':>9s} {'ratio':>6s} {'hist ms':>8s} "
              f"{'ratio':>6s} {'acc sk':>7s} {'acc ex':>7s} {'acc h':>7s}")
    print(f"criterion={args.criterion}, repeats={args.repeats} (median), {args.clock} clock, 80/20 split seed 0")
    print(header)
    r_exact, r_hist, acc_gap = [], [], []
    for name in args.datasets:
        X, y = load_topk(data_dir, name)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
        for depth in args.depths:
            makers = {
                "sk": lambda: DecisionTreeClassifier(criterion=args.criterion, max_depth=depth, random_state=0),
                "ex": lambda: GreedyTreeClassifier(criterion=args.criterion, max_depth=depth),
                "h": lambda: GreedyTreeClassifier(criterion=args.criterion, max_depth=depth, max_thresholds=255),
            }
            times = {k: [] for k in makers}
            fitted = {}
            for _ in range(args.repeats):  # interleaved, so that machine noise hits all three alike
                for k, make in makers.items():
                    t, fitted[k] = timed_fit(make(), Xtr, ytr)
                    times[k].append(t)
            med = {k: statistics.median(v) for k, v in times.items()}
            acc = {k: float(np.mean(est.predict(Xte) == yte)) for k, est in fitted.items()}
            re, rh = med["ex"] / med["sk"], med["h"] / med["sk"]
            r_exact.append(re)
            r_hist.append(rh)
            acc_gap.append(100 * (acc["ex"] - acc["h"]))
            print(f"{name:27s} {depth:5d} {1e3 * med['sk']:10.1f} {1e3 * med['ex']:9.1f} {re:6.2f} "
                  f"{1e3 * med['h']:8.1f} {rh:6.2f} {acc['sk']:7.4f} {acc['ex']:7.4f} {acc['h']:7.4f}", flush=True)
    print()
    print(f"median time ratio exact/sklearn: {statistics.median(r_exact):.3f}  (target <= 0.8)")
    print(f"median time ratio hist/sklearn:  {statistics.median(r_hist):.3f}  (target <= 0.25)")
    print(f"test accuracy exact - hist (points): median {statistics.median(acc_gap):+.2f}, "
          f"max {max(acc_gap):+.2f}  (target: within 0.5)")
    if args.binary:
        bench_binary(data_dir.parent / "anchors", args)
    return 0


def bench_binary(anchors: Path, args) -> None:
    """Full binary matrices the peers were timed on (no split): fit time vs sklearn, and the
    training accuracy next to Top-k's with k = 1 (the greedy entropy tree of 003's own code)."""
    import csv

    table = anchors / "peer_timings.csv"
    if not table.exists():
        print(f"\n{table} not found: skipping the binary matrices")
        return
    ref = {}
    with open(table) as fh:
        for row in csv.DictReader(fh):
            if row["tool"] == "topk" and row["k"] == "1" and row["train_acc"]:
                ref[(row["dataset"], int(row["depth"]))] = float(row["train_acc"])
    print(f"\nbinary anchor matrices, criterion={args.criterion}")
    print(f"{'dataset':16s} {'depth':>5s} {'sklearn ms':>10s} {'ours ms':>8s} {'ratio':>6s} {'acc ours':>9s} "
          f"{'acc topk1':>9s}")
    ratios = []
    for name in sorted({d for d, _ in ref}):
        path = anchors / "binarized" / f"{name}.csv"
        if not path.exists():
            continue
        df = pd.read_csv(path)
        X, y = df.iloc[:, :-1].to_numpy(np.float64), df.iloc[:, -1].to_numpy()
        for depth in (3, 4, 5):
            ts, to = [], []
            for _ in range(args.repeats):
                t, _sk = timed_fit(DecisionTreeClassifier(criterion=args.criterion, max_depth=depth, random_state=0),
                                   X, y)
                ts.append(t)
                t, ours = timed_fit(GreedyTreeClassifier(criterion=args.criterion, max_depth=depth), X, y)
                to.append(t)
            r = statistics.median(to) / statistics.median(ts)
            ratios.append(r)
            acc = ours.score(X, y)
            print(f"{name:16s} {depth:5d} {1e3 * statistics.median(ts):10.2f} {1e3 * statistics.median(to):8.2f} "
                  f"{r:6.2f} {acc:9.4f} {ref.get((name, depth), float('nan')):9.4f}", flush=True)
    print(f"median time ratio ours/sklearn on binary matrices: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    sys.exit(main())
