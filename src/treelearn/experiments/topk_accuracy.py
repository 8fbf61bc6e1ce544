"""003 Fig. 2 and Fig. 4: test accuracy of Top-k for several k.

* Fig. 2 (``--figure 2``): test accuracy vs depth (2..6) for k in {1, 2, 3, 4, 8, 12, 16, all}
  on the datasets of ``<data-dir>/topk``, averaged over random 80:20 splits (avila and ml-prove
  use their fixed train/test files), with 2-sigma bands;
* Fig. 4 (``--figure 4``): train and test accuracy vs k at depth 3 on car, hayes-roth and
  tic-tac-toe.

Binarisation as 003 App. C (the Binarizer default of the estimators: categorical one-hot, numeric
thresholds with about 100 binary features in total); a missing categorical value ('?') is a
category of its own (a one-hot encoding of the raw values; dropping those rows would leave
audiology 4 of its 226 rows), and rows missing a numeric value are dropped. Every fit has a time limit; a timed-out
fit is recorded (``timed_out``) and left out of the plots, as the paper leaves out the runs
that did not finish. Outputs ``fig2.csv``/``fig2.png``, ``fig4.csv``/``fig4.png`` and
``headline.csv`` (mean test-accuracy gain of the best k > 1 over k = 1 at depths 4 and 5).

    treelearn experiment topk-accuracy [--quick] [--data-dir DIR] [--out-dir DIR]
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
    FitProgress, experiment_parser, figure_legend, integer_ticks, mark_timed_out, pyplot, save_figure, series_label,
)

FIG2_K = ["1", "2", "3", "4", "8", "12", "16", "all"]
FIG2_DEPTHS = [2, 3, 4, 5, 6]
FIG4_SETS = ["car", "hayes-roth", "tic-tac-toe"]
FIXED_SPLITS = {"avila": ("avila-train", "avila-test"), "ml-prove": ("ml-prove-train", "ml-prove-test")}
QUICK_SETS = ["monks-1", "hayes-roth", "car"]


def _datasets(data_dir: Path) -> list[str]:
    names = sorted(p.stem for p in (data_dir / "topk").glob("*.csv"))
    out = []
    for n in names:
        for base, (tr, te) in FIXED_SPLITS.items():
            if n in (tr, te):
                n = base
        if n not in out:
            out.append(n)
    return out


def _load(name: str, data_dir: Path):
    from treelearn.datasets import load_dataset

    if name in FIXED_SPLITS:
        tr, te = FIXED_SPLITS[name]
        Xtr, ytr = load_dataset(f"topk/{tr}", data_dir, dropna=True, missing_category=True)
        Xte, yte = load_dataset(f"topk/{te}", data_dir, dropna=True, missing_category=True)
        return (Xtr, np.asarray(ytr), Xte, np.asarray(yte))
    X, y = load_dataset(f"topk/{name}", data_dir, dropna=True, missing_category=True)
    return X, np.asarray(y)


def _splits(data, n_splits: int, seed: int):
    if len(data) == 4:
        yield data
        return
    X, y = data
    n = len(y)
    for s in range(n_splits):
        rng = np.random.default_rng(seed + s)
        perm = rng.permutation(n)
        cut = int(round(0.8 * n))
        tr, te = perm[:cut], perm[cut:]
        take = (lambda idx: X.iloc[idx]) if hasattr(X, "iloc") else (lambda idx: X[idx])
        yield take(tr), y[tr], take(te), y[te]


def _fit(k: str, depth: int, Xtr, ytr, time_limit: float):
    from treelearn import TopKTreeClassifier

    kk = "all" if k == "all" else int(k)
    m = TopKTreeClassifier(k=kk, max_depth=depth, max_binary_features=100, time_limit=time_limit)  # (003 App. C)
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # a timed-out fit is recorded (timed_out) and logged instead
        warnings.simplefilter("ignore", SearchLimitWarning)
        m.fit(Xtr, ytr)
    return m, time.perf_counter() - t0


def run_fig2(data_dir, out_dir, names, depths, ks, n_splits, time_limit, seed, log):
    rows = []
    per_set = n_splits * len(ks) * len(depths)
    with FitProgress(len(names) * per_set, "Fig. 2 fits") as progress:
        log = progress.log
        for name in names:
            try:
                data = _load(name, data_dir)
            except Exception as exc:  # a dataset that cannot be read is reported, not fatal
                log(f"  {name}: skipped ({exc})")
                progress.advance(per_set)
                continue
            for si, (Xtr, ytr, Xte, yte) in enumerate(_splits(data, n_splits, seed)):
                for k in ks:
                    for di, depth in enumerate(depths):
                        m, t = _fit(k, depth, Xtr, ytr, time_limit)
                        progress.advance()
                        rows.append(dict(dataset=name, split=si, k=k, depth=depth, train_acc=m.score(Xtr, ytr),
                                         test_acc=m.score(Xte, yte), fit_time_s=round(t, 5), timed_out=m.timed_out_,
                                         n_binary_features=m.n_binary_features_))
                        if m.timed_out_:
                            log(f"  {name} split {si} k={k} depth={depth}: time limit ({time_limit} s)")
                            progress.advance(len(depths) - di - 1)
                            break  # deeper trees with the same k would time out as well
            log(f"  {name}: done")
    _write(out_dir / "fig2.csv", rows)
    return rows


def run_fig4(data_dir, out_dir, names, n_splits, time_limit, seed, log, depth=3, quick=False):
    rows = []
    with FitProgress(len(names) * n_splits, "Fig. 4 splits") as progress:
        log = progress.log
        for name in names:
            try:
                data = _load(name, data_dir)
            except Exception as exc:
                log(f"  {name}: skipped ({exc})")
                progress.advance(n_splits)
                continue
            for si, (Xtr, ytr, Xte, yte) in enumerate(_splits(data, n_splits, seed)):
                from treelearn import TopKTreeClassifier

                d = TopKTreeClassifier(k=1, max_depth=1, max_binary_features=100).fit(Xtr, ytr).n_binary_features_
                ks = sorted(set([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, d] if not quick else [1, 2, 4, 8, d]))
                for k in [k for k in ks if k <= d]:
                    m, t = _fit(str(k), depth, Xtr, ytr, time_limit)
                    rows.append(dict(dataset=name, split=si, k=k, depth=depth, train_acc=m.score(Xtr, ytr),
                                     test_acc=m.score(Xte, yte), fit_time_s=round(t, 5), timed_out=m.timed_out_,
                                     n_binary_features=d))
                progress.advance()
            log(f"  {name}: done")
    _write(out_dir / "fig4.csv", rows)
    return rows


def _write(path: Path, rows):
    if not rows:
        return
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def _agg(rows, keys, value, *, timed_out: bool = False):
    """Mean, std and count of ``value`` per group; over the fits that finished (or, with
    ``timed_out``, over those that hit the time limit)."""
    groups = {}
    for r in rows:
        if (r.get("timed_out") in (True, "True")) != timed_out:
            continue
        groups.setdefault(tuple(r[k] for k in keys), []).append(float(r[value]))
    return {g: (float(np.mean(v)), float(np.std(v)), len(v)) for g, v in groups.items()}


def headline(rows, depths=(4, 5)):
    """Per dataset and depth: mean test accuracy of k = 1 and of the best k > 1, and the gain."""
    agg = _agg(rows, ("dataset", "k", "depth"), "test_acc")
    out = []
    for name in sorted({r["dataset"] for r in rows}):
        for depth in depths:
            base = agg.get((name, "1", depth))
            others = [(k, agg[(name, k, depth)][0]) for k in FIG2_K[1:] if (name, k, depth) in agg]
            if base is None or not others:
                continue
            bk, bv = max(others, key=lambda t: t[1])
            out.append(dict(dataset=name, depth=depth, top1_test_acc=round(base[0], 4), best_k=bk,
                            best_test_acc=round(bv, 4), gain=round(bv - base[0], 4)))
    return out


def plot_fig2(rows, path: Path):
    plt = pyplot()

    names = sorted({r["dataset"] for r in rows})
    if not names:
        return
    agg = _agg(rows, ("dataset", "k", "depth"), "test_acc")
    late = _agg(rows, ("dataset", "k", "depth"), "test_acc", timed_out=True)
    cols = min(4, len(names))
    nrows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows + 0.6), squeeze=False)
    present = {str(r["k"]) for r in rows}
    order = sorted(present, key=lambda k: (k == "all", int(k) if k.isdigit() else 0, k))
    colors = {k: f"C{i % 10}" for i, k in enumerate(order)}
    for ax, name in zip(axes.ravel(), names):
        for k in order:
            pts = sorted((d, agg[(name, k, d)]) for d in FIG2_DEPTHS if (name, k, d) in agg)
            if pts:
                ds = np.array([p[0] for p in pts])
                mu = np.array([p[1][0] for p in pts])
                sd = np.array([p[1][1] for p in pts])
                ax.plot(ds, mu, marker="o", ms=3, color=colors[k], label=series_label("k", k))
                ax.fill_between(ds, mu - 2 * sd, mu + 2 * sd, alpha=0.12, color=colors[k])
            tpts = sorted((d, late[(name, k, d)][0]) for d in FIG2_DEPTHS if (name, k, d) in late)
            if tpts:
                mark_timed_out(ax, [p[0] for p in tpts], [p[1] for p in tpts], [True] * len(tpts))
        ax.set_title(name)
        ax.set_xlabel("depth")
        ax.set_ylabel("test accuracy")
        integer_ticks(ax, "x")
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    figure_legend(fig, axes)
    save_figure(fig, path, dpi=110, rect=(0, 0.06, 1, 1))


def plot_fig4(rows, path: Path):
    plt = pyplot()

    names = sorted({r["dataset"] for r in rows})
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.2), squeeze=False)
    for ax, name in zip(axes.ravel(), names):
        sub = [r for r in rows if r["dataset"] == name]
        for value, style in (("train_acc", "--"), ("test_acc", "-")):
            agg = _agg(sub, ("k",), value)
            ks = sorted(k[0] for k in agg)
            mu = np.array([agg[(k,)][0] for k in ks])
            sd = np.array([agg[(k,)][1] for k in ks])
            ax.plot(ks, mu, style, marker="o", ms=3, label=value.replace("_acc", ""))
            ax.fill_between(ks, mu - 2 * sd, mu + 2 * sd, alpha=0.12)
            late = _agg(sub, ("k",), value, timed_out=True)
            if late:
                tks = sorted(k[0] for k in late)
                mark_timed_out(ax, tks, [late[(k,)][0] for k in tks], [True] * len(tks))
        ax.set_xscale("log", base=2)
        ks_all = sorted({int(r["k"]) for r in sub})
        d = max(int(r.get("n_binary_features") or 0) for r in sub)
        ax.set_xticks(ks_all, [f"all ({k})" if k == d else str(k) for k in ks_all], fontsize=7)
        ax.xaxis.set_minor_locator(__import__("matplotlib.ticker", fromlist=["NullLocator"]).NullLocator())
        ax.set_title(f"{name} (depth 3)")
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=7)
    save_figure(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("topk-accuracy", __doc__.split("\n")[0],
                           quick_help="3 small datasets, depths 2-4, 2 splits")
    ap.add_argument("--figure", choices=["2", "4", "both"], default="both")
    ap.add_argument("--datasets", default=None, help="comma-separated names (default: all of <data-dir>/topk)")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per fit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depths", default=None, help="comma-separated depths (default 2,3,4,5,6)")
    ap.add_argument("--ks", default=None, help="comma-separated k values, 'all' allowed (default 1,2,3,4,8,12,16,all)")
    args = ap.parse_args(argv)

    from treelearn.datasets import default_data_dir

    data_dir = Path(args.data_dir) if args.data_dir else Path(default_data_dir())
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    if args.quick:
        names = QUICK_SETS
        depths, ks, splits, tl = [2, 3, 4], ["1", "2", "4", "all"], 2, min(args.time_limit, 10.0)
    else:
        names = _datasets(data_dir)
        depths, ks, splits, tl = FIG2_DEPTHS, FIG2_K, args.splits, args.time_limit
    if args.datasets:
        names = args.datasets.split(",")
    if args.depths:
        depths = [int(x) for x in args.depths.split(",")]
    if args.ks:
        ks = args.ks.split(",")
    if args.figure in ("2", "both"):
        log(f"Fig. 2: {len(names)} datasets, depths {depths}, k in {ks}, {splits} splits")
        rows = run_fig2(data_dir, out_dir, names, depths, ks, splits, tl, args.seed, log)
        plot_fig2(rows, out_dir / "fig2.png")
        head = headline(rows)
        _write(out_dir / "headline.csv", head)
        log("mean test-accuracy gain of the best k > 1 over k = 1:")
        for h in head:
            log(f"  {h['dataset']:28s} depth {h['depth']}: k=1 {h['top1_test_acc']:.4f}  best k={h['best_k']:>3s} "
                f"{h['best_test_acc']:.4f}  gain {h['gain']:+.4f}")
    if args.figure in ("4", "both"):
        f4 = [n for n in FIG4_SETS if not args.quick or n != "tic-tac-toe"]
        log(f"Fig. 4: {f4} at depth 3")
        rows4 = run_fig4(data_dir, out_dir, f4, 2 if args.quick else args.splits, tl, args.seed, log,
                         quick=args.quick)
        plot_fig4(rows4, out_dir / "fig4.png")
    log(f"results in {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
