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

Optimal part (``OptimalTreeRegressor``: depth 2, 3, 4 vs brute force and pystreed's regression):
not here yet; it is to be added as ``optimal_section`` beside ``scale_section`` and
``datasets_section`` below, on the same data loaders.

    python benchmarks/bench_regression.py [--data-dir ../shared/datasets] [--sizes 1e5 1e6 4e6]
                                          [--depth 8] [--repeats 3] [--section scale|datasets|all]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor

from treelearn import GreedyTreeRegressor

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


def timed(make, X, y, repeats: int):
    times, est = [], None
    for _ in range(repeats):
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), est


def lightgbm_tree(depth: int, leaves: int):
    import lightgbm as lgb

    return lgb.LGBMRegressor(n_estimators=1, learning_rate=1.0, max_depth=depth, num_leaves=leaves, max_bin=255,
                             min_child_samples=1, min_child_weight=0.0, min_split_gain=0.0, subsample=1.0,
                             colsample_bytree=1.0, reg_lambda=0.0, boost_from_average=True, verbose=-1,
                             n_jobs=1)


def scale_section(sizes, depth: int, repeats: int) -> None:
    leaves = 2 ** depth
    print(f"## Scale: synthetic, depth {depth} ({leaves} leaves for LightGBM), one thread, median of {repeats}")
    print("| rows | sklearn s | greedy exact s | ratio | R2 sk | R2 exact | LightGBM s | greedy hist s | ratio "
          "| R2 lgbm | R2 hist |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        X, y = synthetic(int(n / 0.8))
        cut = int(n)
        Xtr, ytr, Xte, yte = X[:cut], y[:cut], X[cut:], y[cut:]
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "datasets")
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6, 4e6])
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--section", choices=["scale", "datasets", "all"], default="all")
    args = ap.parse_args(argv)
    if args.section in ("scale", "all"):
        scale_section(args.sizes, args.depth, args.repeats)
    if args.section in ("datasets", "all"):
        datasets_section(args.data_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
