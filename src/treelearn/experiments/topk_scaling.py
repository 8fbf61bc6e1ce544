"""003 Fig. 3: training time of Top-k vs optimal trees as the number of features / samples grows.

FICO (``<data-dir>/benchmark/fico-1000.csv``, 1000 rows, 23 numeric columns) in its complete
threshold encoding (one ``x >= midpoint`` column per pair of adjacent distinct values: 1384
binary features, the matrix ``<data-dir>/../anchors/binarized/fico-binary.csv``; rebuilt with the
exact Binarizer when that file is absent). Two sweeps, for depths 4, 5, 6:

* features: the first F binary columns (all rows), F in 10 .. 1384;
* samples: the first N rows (all features), N in 50 .. 1000;

timing treelearn's Top-k (k in ``--ks``, default 4 and 16), treelearn's optimal tree and pystreed
(an optimal-tree solver; GOSDT too when it is installed: ``pip install -e .[peers]``; it solves
the regularised objective with λ = 2^-depth, as 003 did, and only its fit time is used), each
with a time limit; once a solver
hits the limit, larger sizes of that sweep are skipped for it (recorded as not run). Outputs
``scaling.csv`` and ``scaling.png``.

    treelearn experiment topk-scaling [--quick] [--data-dir DIR] [--out-dir DIR]
"""
from __future__ import annotations

import csv
import math
import time
import warnings
from pathlib import Path

import numpy as np

from treelearn._limits import SearchLimitWarning
from treelearn.experiments._common import (
    FitProgress, experiment_parser, figure_legend, integer_ticks, mark_timed_out, pyplot, save_figure,
)

FEATURES = [10, 25, 50, 100, 200, 300, 500, 800, 1100, 1384]
SAMPLES = [50, 100, 150, 200, 300, 500, 750, 1000]


def load_fico(data_dir: Path):
    import pandas as pd

    anchors = data_dir.parent / "anchors" / "binarized" / "fico-binary.csv"
    if anchors.is_file():
        df = pd.read_csv(anchors)
        return df.iloc[:, :-1].to_numpy(np.uint8), df.iloc[:, -1].to_numpy()
    from treelearn import Binarizer
    from treelearn.datasets import load_dataset

    X, y = load_dataset("benchmark/fico-1000", data_dir)
    B = Binarizer().fit(X).transform(X)
    return B, np.asarray(y)


def _solvers(ks, time_limit):
    from treelearn import OptimalTreeClassifier, TopKTreeClassifier

    out = {}
    for k in ks:
        out[f"topk-{k}"] = lambda h, k=k: TopKTreeClassifier(k=k, max_depth=h, max_binary_features=None,
                                                             time_limit=time_limit)
    out["treelearn-optimal"] = lambda h: OptimalTreeClassifier(max_depth=h, max_binary_features=None,
                                                               time_limit=time_limit)
    try:
        import pystreed

        out["pystreed"] = lambda h: pystreed.STreeDClassifier(optimization_task="accuracy", max_depth=h,
                                                              cost_complexity=0.0, time_limit=time_limit)
    except ImportError:  # pragma: no cover
        pass
    try:  # pragma: no cover - optional
        from gosdt import GOSDTClassifier

        # (GOSDT takes whole seconds)
        out["gosdt"] = lambda h: GOSDTClassifier(regularization=2.0 ** -h, allow_small_reg=True, depth_budget=h,
                                                 time_limit=max(1, int(math.ceil(time_limit))))
    except Exception:
        pass
    return out


def run(B, y, sweep, sizes, depths, solvers, time_limit, log):
    with FitProgress(len(depths) * len(solvers) * len(sizes), f"{sweep} sweep fits") as progress:
        return _run(B, y, sweep, sizes, depths, solvers, time_limit, progress.log, progress)


def _run(B, y, sweep, sizes, depths, solvers, time_limit, log, progress):
    rows = []
    for h in depths:
        for name, make in solvers.items():
            dead = False
            for size in sizes:
                progress.advance()
                if dead:
                    rows.append(dict(sweep=sweep, size=size, depth=h, solver=name, fit_time_s="", train_acc="",
                                     timed_out="", note="not run (smaller size hit the limit)"))
                    continue
                Xs, ys = (B[:, :size], y) if sweep == "features" else (B[:size], y[:size])
                if len(np.unique(ys)) < 2:
                    continue
                Xs = np.ascontiguousarray(Xs.astype(np.int32 if name in ("pystreed", "gosdt") else np.uint8))
                m = make(h)
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():  # a timed-out fit is recorded and logged instead
                        warnings.simplefilter("ignore", SearchLimitWarning)
                        m.fit(Xs, ys)
                except Exception as exc:  # a peer that fails is reported, not fatal
                    if name.startswith(("topk", "treelearn")):
                        raise
                    log(f"  {sweep}={size:5d} depth {h} {name}: failed ({type(exc).__name__}: {exc})"[:200])
                    rows.append(dict(sweep=sweep, size=size, depth=h, solver=name, fit_time_s="", train_acc="",
                                     timed_out="", note=f"failed: {type(exc).__name__}"))
                    dead = True
                    continue
                t = time.perf_counter() - t0
                to = bool(getattr(m, "timed_out_", False)) or t >= 0.98 * time_limit
                try:
                    acc = float(np.mean(m.predict(Xs) == ys))
                except Exception:  # a peer whose predict breaks (gosdt 1.0 with recent scikit-learn)
                    acc = float("nan")
                rows.append(dict(sweep=sweep, size=size, depth=h, solver=name, fit_time_s=round(t, 5),
                                 train_acc=round(acc, 6), timed_out=to, note=""))
                log(f"  {sweep}={size:5d} depth {h} {name:18s} {t:9.3f} s  acc {acc:.4f}{'  TIME LIMIT' if to else ''}")
                dead = to
    return rows


def plot(rows, path: Path, depths):
    plt = pyplot()

    fig, axes = plt.subplots(2, len(depths), figsize=(4.2 * len(depths), 6.4), squeeze=False)
    for i, sweep in enumerate(("features", "samples")):
        for j, h in enumerate(depths):
            ax = axes[i, j]
            for name in sorted({r["solver"] for r in rows}):
                pts = [(r["size"], r["fit_time_s"]) for r in rows
                       if r["sweep"] == sweep and r["depth"] == h and r["solver"] == name and r["fit_time_s"] != ""]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=name)
                late = [(r["size"], r["fit_time_s"]) for r in rows
                        if r["sweep"] == sweep and r["depth"] == h and r["solver"] == name
                        and r["fit_time_s"] != "" and r.get("timed_out") in (True, "True")]
                if late:
                    mark_timed_out(ax, [p[0] for p in late], [p[1] for p in late], [True] * len(late))
            ax.set_yscale("log")
            integer_ticks(ax, "x")
            ax.set_xlabel(f"number of {sweep}")
            ax.set_ylabel("training time (s)")
            ax.set_title(f"FICO, depth {h}")
    figure_legend(fig, axes)
    save_figure(fig, path, dpi=110, rect=(0, 0.06, 1, 1))


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("topk-scaling", __doc__.split("\n")[0],
                           quick_help="depth 4 only, small sizes, 5 s limit")
    ap.add_argument("--depths", default="4,5,6")
    ap.add_argument("--ks", default="4,16")
    ap.add_argument("--time-limit", type=float, default=600.0)
    args = ap.parse_args(argv)

    from treelearn.datasets import default_data_dir

    data_dir = Path(args.data_dir) if args.data_dir else Path(default_data_dir())
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    B, y = load_fico(data_dir)
    _, y = np.unique(y, return_inverse=True)
    depths = [int(d) for d in args.depths.split(",")]
    ks = [int(k) for k in args.ks.split(",")]
    feats, samples, tl = FEATURES, SAMPLES, args.time_limit
    if args.quick:
        depths, ks, tl = [3], [4], min(tl, 5.0)
        feats, samples = [10, 50, 200], [100, 300, 1000]
    feats = [f for f in feats if f <= B.shape[1]]
    solvers = _solvers(ks, tl)
    log(f"FICO {B.shape[0]} x {B.shape[1]}; solvers {list(solvers)}; depths {depths}; limit {tl} s")
    rows = run(B, y, "features", feats, depths, solvers, tl, log)
    rows += run(B, y, "samples", samples, depths, solvers, tl, log)
    with open(out_dir / "scaling.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    plot(rows, out_dir / "scaling.png", depths)
    log(f"results in {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
