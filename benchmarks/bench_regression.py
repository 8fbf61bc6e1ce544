"""Benchmark: regression trees, side by side in one process.

Greedy part (this file today):

1. **Scale**: synthetic data with a known structure plus noise (a depth-6 piecewise-constant
   function of 4 of the 10 columns, a smooth term and Gaussian noise), 80/20 split, at
   ``--sizes`` rows (default 1e5, 1e6, 4e6): fit time (median of ``--repeats`` interleaved runs)
   and test R^2 of

   * ``GreedyTreeRegressor`` exact vs scikit-learn's ``DecisionTreeRegressor`` (exact), same depth;
   * ``GreedyTreeRegressor(max_thresholds=255)`` vs LightGBM one tree (255 bins, the same depth and
     leaves, learning rate 1, no bagging, no shrinkage: one CART tree); binning is included in
     both timings (LightGBM builds its Dataset inside ``fit``, treelearn codes inside ``fit``).

   printing the time ratios treelearn / peer. Targets: exact <= 0.3x scikit-learn; histogram
   <= 0.5x LightGBM at 4e6 rows, test R^2 within 0.003.
2. **Accuracy on the regression sets** of ``quantbnb/regress`` (train/test as published) and
   ``regression/osrt-binarized`` (80/20, seed 0): test R^2 of the greedy tree and of scikit-learn's
   at depths 2-5.

Optimal part (``--section optimal``):

3. **Every threshold** on the six ``quantbnb/regress`` training sets (carbon: its first target
   ``y0``) at depths 2 and 3 under ``--limit`` seconds (default 60): fit time, proven optimal or
   not, training MSE of ``OptimalTreeRegressor`` next to the greedy tree's, and the lower bound.
   Goal: every set proven optimal within 60 s at depths 2 and 3 (``--n-jobs``, default every core).
4. **0/1 features vs pystreed** (``STreeDRegressor``, ``cost_complexity=0``, the same depth):
   ``regression/osrt-binarized`` and the quantbnb sets binarized at 5 quantile thresholds per
   column (``x >= t``), depths 2, 3, 4, side by side in one process: both times, the ratio
   treelearn / pystreed (geometric mean per depth and overall; goal <= 0.5) and whether the
   training SSEs agree (relative 1e-7). Fits under 0.1 s: the median of 5 interleaved runs.

``--quick``: the three small quantbnb sets and four small 0/1 sets, depths 2-3, 10 s limits.

``--section hist``: only the histogram mode vs LightGBM of part 1 (interleaved runs), with both
sides on each number of threads of ``--threads`` (``n_jobs``; default 1), every fit timed on the
wall clock and on the process's CPU time (fairer on a loaded machine; with threads it sums them).

    python benchmarks/bench_regression.py [--data-dir ../shared/datasets] [--sizes 1e5 1e6 4e6]
                                          [--depth 8] [--repeats 3] [--limit 60] [--quick]
                                          [--section scale|hist|datasets|optimal|binary|all] [--threads 1 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor

import warnings

from treelearn import GreedyTreeRegressor, OptimalTreeRegressor, SearchLimitWarning

REPO = Path(__file__).resolve().parents[1]


def synthetic(n: int, seed: int = 0, d: int = 10):
    """A depth-6 piecewise-constant function of columns 0-3 plus a smooth term of column 4 and
    noise (signal variance about 4x the noise's)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d), dtype=np.float32).astype(np.float64)
    cells = ((X[:, 0] > 0.5).astype(int) * 8 + (X[:, 1] > 0.3).astype(int) * 4
             + (X[:, 2] > 0.7).astype(int) * 2 + (X[:, 3] > 0.4).astype(int))
    levels = np.random.default_rng(seed + 1).normal(size=16) * 2.0
    y = levels[cells] + np.sin(6.0 * X[:, 4]) + rng.normal(scale=0.5, size=n)
    return X, y


def synthetic_split(n):
    """``n`` synthetic training rows and a quarter as many test rows after them: Xtr, ytr, Xte, yte."""
    X, y = synthetic(int(n / 0.8))
    cut = int(n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def timed(make, X, y, repeats: int, clock=time.perf_counter):
    times, est = [], None
    for _ in range(repeats):
        est = make()
        t0 = clock()
        est.fit(X, y)
        times.append(clock() - t0)
    return statistics.median(times), est


def lightgbm_tree(depth: int, leaves: int, n_jobs: int = 1):
    import lightgbm as lgb

    return lgb.LGBMRegressor(n_estimators=1, learning_rate=1.0, max_depth=depth, num_leaves=leaves, max_bin=255,
                             min_child_samples=1, min_child_weight=0.0, min_split_gain=0.0, subsample=1.0,
                             colsample_bytree=1.0, reg_lambda=0.0, boost_from_average=True, verbose=-1,
                             n_jobs=n_jobs)


def scale_section(sizes, depth: int, repeats: int) -> None:
    leaves = 2 ** depth
    print(f"## Scale: synthetic, depth {depth} ({leaves} leaves for LightGBM), one thread, median of {repeats}")
    print("| rows | sklearn s | greedy exact s | ratio | R2 sk | R2 exact | LightGBM s | greedy hist s | ratio "
          "| R2 lgbm | R2 hist |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        Xtr, ytr, Xte, yte = synthetic_split(n)
        t_sk, sk = timed(lambda: DecisionTreeRegressor(max_depth=depth, random_state=0), Xtr, ytr, repeats)
        t_ex, ex = timed(lambda: GreedyTreeRegressor(max_depth=depth), Xtr, ytr, repeats)
        try:
            t_lg, lg = timed(lambda: lightgbm_tree(depth, leaves), Xtr, ytr, repeats)
            r2_lg = r2_score(yte, lg.predict(Xte))
        except ImportError:
            t_lg, r2_lg = float("nan"), float("nan")
        t_hi, hi = timed(lambda: GreedyTreeRegressor(max_depth=depth, max_thresholds=255), Xtr, ytr, repeats)
        print(f"| {int(n):,} | {t_sk:.3f} | {t_ex:.3f} | {t_ex / t_sk:.2f} | {sk.score(Xte, yte):.4f} "
              f"| {ex.score(Xte, yte):.4f} | {t_lg:.3f} | {t_hi:.3f} | {t_hi / t_lg:.2f} | {r2_lg:.4f} "
              f"| {hi.score(Xte, yte):.4f} |", flush=True)


def timed_both(make, X, y):
    """One fit's (wall seconds, CPU seconds of the process: every thread's summed, estimator)."""
    est = make()
    w0, c0 = time.perf_counter(), time.process_time()
    est.fit(X, y)
    return time.perf_counter() - w0, time.process_time() - c0, est


def hist_section(sizes, depth: int, repeats: int, threads) -> None:
    """Histogram mode alone against LightGBM's one tree (no exact fits: quick at 4e6 rows), with
    the same number of threads on both sides (``n_jobs``) for each of ``threads``; every fit timed
    on the wall clock and on the process's CPU time (both sides' threads summed), the medians of
    each and their ratios. The machine's load average is printed with each row."""
    leaves = 2 ** depth
    print(f"## Histogram mode vs LightGBM one tree: synthetic, depth {depth}, median of {repeats} interleaved runs")
    print("| rows | threads | LightGBM wall s | hist wall s | ratio wall | LightGBM cpu s | hist cpu s | ratio cpu "
          "| R2 lgbm | R2 hist | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        Xtr, ytr, Xte, yte = synthetic_split(n)
        for t in threads:
            lgw, lgc, hiw, hic = [], [], [], []
            for _ in range(repeats):  # interleaved: both sides see the same machine load
                a, b, lg = timed_both(lambda: lightgbm_tree(depth, leaves, t), Xtr, ytr)
                c, d, hi = timed_both(lambda: GreedyTreeRegressor(max_depth=depth, max_thresholds=255, n_jobs=t),
                                      Xtr, ytr)
                lgw.append(a)
                lgc.append(b)
                hiw.append(c)
                hic.append(d)
            a, b = statistics.median(lgw), statistics.median(hiw)
            c, d = statistics.median(lgc), statistics.median(hic)
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"| {int(n):,} | {t} | {a:.3f} | {b:.3f} | {b / a:.2f} | {c:.3f} | {d:.3f} | {d / c:.2f} "
                  f"| {r2_score(yte, lg.predict(Xte)):.4f} | {hi.score(Xte, yte):.4f} | {load:.1f} |", flush=True)


def regression_sets(data_dir: Path):
    """(name, Xtr, ytr, Xte, yte) of quantbnb/regress (published splits) and osrt-binarized (80/20)."""
    q = data_dir / "quantbnb" / "regress"
    for train in sorted(q.glob("*_train.csv")):
        name = train.name[: -len("_train.csv")]
        tr, te = pd.read_csv(train), pd.read_csv(q / f"{name}_test.csv")
        ycols = [c for c in tr.columns if c.startswith("y")]
        yield (f"quantbnb/{name}", tr.drop(columns=ycols).to_numpy(float), tr[ycols].to_numpy(float).squeeze(),
               te.drop(columns=ycols).to_numpy(float), te[ycols].to_numpy(float).squeeze())
    for f in sorted((data_dir / "regression" / "osrt-binarized").glob("*.csv")):
        df = pd.read_csv(f)
        X, y = df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy(float)
        idx = np.random.default_rng(0).permutation(len(y))
        cut = int(0.8 * len(y))
        yield f"osrt/{f.stem}", X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]


def datasets_section(data_dir: Path, depths=(2, 3, 4, 5)) -> None:
    print("## Test R^2 on the regression sets: greedy (exact) vs scikit-learn, by depth")
    print("| data | rows | " + " | ".join(f"d{d} greedy | d{d} sk" for d in depths) + " |")
    print("|---|---|" + "---|---|" * len(depths))
    for name, Xtr, ytr, Xte, yte in regression_sets(data_dir):
        cells = []
        for d in depths:
            ours = GreedyTreeRegressor(max_depth=d).fit(Xtr, ytr).score(Xte, yte)
            sk = DecisionTreeRegressor(max_depth=d, random_state=0).fit(Xtr, ytr).score(Xte, yte)
            cells.append(f"{ours:.4f} | {sk:.4f}")
        print(f"| {name} | {len(ytr)} | " + " | ".join(cells) + " |", flush=True)


def _mse(est, X, y) -> float:
    return float(np.mean((np.asarray(y, float) - est.predict(X)) ** 2))


def optimal_continuous(data_dir: Path, limit: float, quick: bool, n_jobs=-1) -> None:
    from treelearn.learn.anytime import n_threads

    print(f"## Optimal regression over every threshold: quantbnb/regress, {limit:g} s limit, "
          f"{n_threads(n_jobs)} thread(s)")
    print("| data | rows x cols | depth | time (s) | proven optimal | train MSE optimal | train MSE greedy "
          "| lower bound (MSE) |")
    print("|---|---|---|---|---|---|---|---|")
    small = {"quantbnb/qsar", "quantbnb/fish", "quantbnb/concrete"}
    for name, X, y, _, _ in regression_sets(data_dir):
        if not name.startswith("quantbnb/") or (quick and name not in small):
            continue
        y = y[:, 0] if y.ndim > 1 else y
        for depth in (2, 3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SearchLimitWarning)
                t0 = time.perf_counter()
                est = OptimalTreeRegressor(max_depth=depth, time_limit=limit, n_jobs=n_jobs).fit(X, y)
                t = time.perf_counter() - t0
            greedy = GreedyTreeRegressor(max_depth=depth).fit(X, y)
            n = len(y)
            print(f"| {name} | {n} x {X.shape[1]} | {depth} | {t:.2f} | {est.is_optimal_} | "
                  f"{est.train_sse_ / n:.6f} | {_mse(greedy, X, y):.6f} | {est.lower_bound_ / n:.6f} |", flush=True)


def binary_sets(data_dir: Path, quick: bool):
    """(name, X 0/1 int, y) of osrt-binarized and of quantbnb/regress binarized at 5 quantiles per column."""
    keep = {"servo", "airquality", "real-estate", "yacht"}
    for f in sorted((data_dir / "regression" / "osrt-binarized").glob("*.csv")):
        if quick and f.stem not in keep:
            continue
        df = pd.read_csv(f)
        yield f"osrt/{f.stem}", df.iloc[:, :-1].to_numpy(int), df.iloc[:, -1].to_numpy(float)
    if quick:
        return
    for name, X, y, _, _ in regression_sets(data_dir):
        if not name.startswith("quantbnb/"):
            continue
        cols = [(X[:, j] >= t).astype(int) for j in range(X.shape[1])
                for t in np.unique(np.quantile(X[:, j], [0.1, 0.3, 0.5, 0.7, 0.9]))]
        Xb = np.stack(cols, axis=1)
        Xb = Xb[:, (Xb.min(axis=0) < Xb.max(axis=0))]
        yield f"{name} (5 q)", Xb, (y[:, 0] if y.ndim > 1 else y)


def optimal_binary(data_dir: Path, limit: float, quick: bool) -> None:
    import pystreed

    depths = (2, 3) if quick else (2, 3, 4)
    print(f"## Optimal regression on 0/1 features: treelearn vs pystreed STreeDRegressor, {limit:g} s limits")
    print("| data | rows x cols | depth | pystreed (s) | treelearn (s) | ratio | SSE equal |")
    print("|---|---|---|---|---|---|---|")
    ratios = {d: [] for d in depths}
    for name, X, y in binary_sets(data_dir, quick):
        Xf = X.astype(float)
        for depth in depths:
            t_st, t_tl = [], []
            for _ in range(5):  # fits under 0.1 s: the median of 5 interleaved runs (milliseconds are noisy)
                st = pystreed.STreeDRegressor(max_depth=depth, cost_complexity=0.0, time_limit=limit)
                t0 = time.perf_counter()
                st.fit(X, y)
                t_st.append(time.perf_counter() - t0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SearchLimitWarning)
                    t0 = time.perf_counter()
                    est = OptimalTreeRegressor(max_depth=depth, time_limit=limit).fit(Xf, y)
                    t_tl.append(time.perf_counter() - t0)
                if max(t_st[0], t_tl[0]) >= 0.1:
                    break
            t_st, t_tl = statistics.median(t_st), statistics.median(t_tl)
            sse_st = float(np.sum((y - st.predict(X)) ** 2))
            same = abs(est.train_sse_ - sse_st) <= 1e-7 * max(1.0, sse_st)
            ratio = t_tl / max(t_st, 1e-6)
            ratios[depth].append(ratio)
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {depth} | {t_st:.3f} | {t_tl:.3f} | {ratio:.2f} | "
                  f"{same}{'' if same else f' ({est.train_sse_:.6g} vs {sse_st:.6g})'} |", flush=True)
    every = [r for d in depths for r in ratios[d]]
    for d in depths:
        print(f"geometric mean ratio, depth {d}: {np.exp(np.mean(np.log(ratios[d]))):.2f}")
    print(f"geometric mean ratio, depths {depths[0]}-{depths[-1]}: {np.exp(np.mean(np.log(every))):.2f} (goal <= 0.5)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "datasets")
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6, 4e6])
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--section", choices=["scale", "hist", "datasets", "optimal", "binary", "all"], default="all",
                    help="binary: only the 0/1 features vs pystreed part of the optimal section; hist: only "
                         "histogram mode vs LightGBM of the scale section, at each of --threads")
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="n_jobs of both sides (--section hist)")
    ap.add_argument("--limit", type=float, default=60.0, help="time limit of each optimal fit (s)")
    ap.add_argument("--n-jobs", type=int, default=-1, help="threads of the every-threshold optimal fits")
    ap.add_argument("--quick", action="store_true", help="optimal section: small sets, depths 2-3, 10 s limits")
    args = ap.parse_args(argv)
    if args.section in ("scale", "all"):
        scale_section(args.sizes, args.depth, args.repeats)
    if args.section in ("datasets", "all"):
        datasets_section(args.data_dir)
    if args.section in ("optimal", "all"):
        limit = min(args.limit, 10.0) if args.quick else args.limit
        optimal_continuous(args.data_dir, limit, args.quick, args.n_jobs)
        optimal_binary(args.data_dir, limit, args.quick)
    if args.section == "hist":
        hist_section(args.sizes, args.depth, args.repeats, args.threads)
    if args.section == "binary":
        optimal_binary(args.data_dir, min(args.limit, 10.0) if args.quick else args.limit, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
