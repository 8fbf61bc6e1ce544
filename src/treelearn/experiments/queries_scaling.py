"""004 in practice (experiment a): queries and time of BuildDT against n and s.

For every n (variables) and s (size) of the grid and every seed, a random size-s decision tree
over {±1}^n (:func:`treelearn.datasets.random_tree`) is learned with ε (default 0.1) and the
parameters of 004 Thm 1 (d = ⌈log2(s/ε)⌉, τ = ε/log2 s):

* ``realizable``: BuildDT queries the tree itself;
* ``agnostic``: the target is a random size-2s tree (so opt_s > 0 in general) and BuildDT runs on
  its smoothing f_δ, δ = τ/(4d) (Lemma 7.3), every query to f_δ a Monte Carlo average of
  ``--noise-samples`` queries to f.

Recorded per run: queries, seconds, distinct restrictions, error (on 100 000 fresh uniform points)
and the tree size. The plot draws queries against n for each s beside the proven bound
n²·(s/ε)^(log2 log2(s/ε)) of Thm 1 (constant 1 in the O(·), scaled to the first point: for shape
only).

Outputs (``--out-dir``, default ``results/queries-scaling``): ``runs.csv``, ``summary.csv`` and
``queries_scaling.png``.

    treelearn experiment queries-scaling [--quick] [--n 50 100 200 500] [--sizes 4 8 16]
                                         [--seeds 3] [--epsilon 0.1] [--modes realizable agnostic]
"""
from __future__ import annotations

import csv
import math
import statistics
import time
from pathlib import Path

from treelearn.experiments._common import FitProgress, experiment_parser, mark_timed_out, pyplot, save_figure

FRESH = 100_000


def run_one(n, s, eps, mode, seed, time_limit, noise_samples):
    from treelearn import Oracle, SearchLimitError, learn_from_queries
    from treelearn.datasets import random_tree
    from treelearn.learn.queries import dist

    target = random_tree(n, s if mode == "realizable" else min(2 * s, 2**n), random_state=1_000_003 * seed + 1009 * n + s)
    o = Oracle.from_tree(target)
    row = {"mode": mode, "n": n, "s": s, "epsilon": eps, "seed": seed, "target_leaves": target.n_leaves}
    t0 = time.perf_counter()
    kw = {"n_noise": noise_samples} if mode == "agnostic" else {}
    try:
        h, info = learn_from_queries(o, s, eps, mode=mode, random_state=seed, influence="sampled",
                                     time_limit=time_limit, return_info=True, **kw)
    except SearchLimitError as exc:
        row.update(status=f"limit: {exc}", seconds=time.perf_counter() - t0, queries=o.n_queries,
                   restrictions=math.nan, error=math.nan, leaves=math.nan)
        return row
    sec = time.perf_counter() - t0
    err = dist(h, o, method="sampled", n_samples=FRESH, random_state=seed + 1)
    if mode == "agnostic":
        row["opt_s"] = opt_size(target, s)
    row.update(status="ok", seconds=sec, queries=info["queries"], restrictions=info["restrictions"], error=err,
               leaves=h.n_leaves, depth=info["depth"], tau=info["tau"], smoothing=info["smoothing"] or 0.0)
    return row


def opt_size(target, s):
    """opt_s exactly: the best size-<= s tree over the target's relevant variables (a tree may skip
    irrelevant ones without loss), by BuildDT on the projected truth table with τ → 0 (every
    variable of positive influence allowed, which loses nothing by PRUNE with τ → 0) and d = s − 1."""
    import numpy as np

    from treelearn import Oracle
    from treelearn.learn.queries import all_points, build_dt, dist

    rel = np.unique(target.feature[target.feature >= 0])
    P = all_points(rel.size)
    X = np.ones((P.shape[0], target.n_features), dtype=np.int8)
    X[:, rel] = P
    tab = Oracle.from_tree(target)(X)
    o = Oracle.from_truth_table(tab)
    best = build_dt(o, s, depth=min(s - 1, rel.size), tau=1e-12, influence="exact", time_limit=120.0)
    return dist(best, o)


def bound_shape(n, s, eps):
    r = s / eps
    return n**2 * r ** math.log2(max(math.log2(r), 1.0))


def plot(rows, path):
    plt = pyplot()

    modes = sorted({r["mode"] for r in rows})
    fig, axes = plt.subplots(1, 2 * len(modes), figsize=(6 * len(modes) * 2, 4.2), squeeze=False)
    for mi, mode in enumerate(modes):
        axq, axt = axes[0, 2 * mi], axes[0, 2 * mi + 1]
        for s in sorted({r["s"] for r in rows if r["mode"] == mode}):
            sub = [r for r in rows if r["mode"] == mode and r["s"] == s and r["status"] == "ok"]
            ns = sorted({r["n"] for r in sub})
            if not ns:
                continue
            q = [statistics.median(r["queries"] for r in sub if r["n"] == n) for n in ns]
            t = [statistics.median(r["seconds"] for r in sub if r["n"] == n) for n in ns]
            line, = axq.plot(ns, q, "o-", label=f"s = {s}")
            eps = sub[0]["epsilon"]
            b = [bound_shape(n, s, eps) for n in ns]
            axq.plot(ns, [bi * q[0] / b[0] for bi in b], ":", color=line.get_color(),
                     label=f"n²(s/ε)^loglog(s/ε), s = {s} (scaled)")
            axt.plot(ns, t, "o-", label=f"s = {s}")
        late = [r for r in rows if r["mode"] == mode and str(r["status"]).startswith("limit")]
        if late:  # runs stopped by the time limit: the queries and time they took
            mark_timed_out(axq, [r["n"] for r in late], [r["queries"] for r in late], [True] * len(late),
                           label="stopped by the time limit")
            mark_timed_out(axt, [r["n"] for r in late], [r["seconds"] for r in late], [True] * len(late),
                           label="stopped by the time limit")
        for ax, yl in ((axq, "queries (median)"), (axt, "seconds (median)")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("n (variables)")
            ax.set_ylabel(yl)
            ax.set_title(f"BuildDT, {mode}")
            ax.legend(fontsize=7)
    save_figure(fig, path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("queries-scaling", __doc__,
                           quick_help="n in {50, 100}, s in {4, 8}, 2 seeds",
                           data_dir_help="unused (synthetic targets)")
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 200, 500])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16])
    ap.add_argument("--agnostic-sizes", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--modes", nargs="+", default=["realizable", "agnostic"], choices=["realizable", "agnostic"])
    ap.add_argument("--noise-samples", type=int, default=16, help="queries to f per query to f_delta")
    ap.add_argument("--time-limit", type=float, default=300.0)
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.sizes, args.agnostic_sizes, args.seeds = [50, 100], [4, 8], [4], 2
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    total = sum(len(args.sizes if mode == "realizable" else args.agnostic_sizes) for mode in args.modes)
    with FitProgress(total * len(args.n) * args.seeds, "query-learning runs") as progress:
        for mode in args.modes:
            for s in (args.sizes if mode == "realizable" else args.agnostic_sizes):
                for n in args.n:
                    for seed in range(args.seeds):
                        r = run_one(n, s, args.epsilon, mode, seed, args.time_limit, args.noise_samples)
                        rows.append(r)
                        progress.advance()
                        progress.log(f"{mode:>10} n={n:>4} s={s:>3} seed={seed} {r['status'][:40]:>6} "
                                     f"{r['seconds']:8.2f}s queries={r['queries']:>12,} error={r['error']:.4f} "
                                     f"opt_s={r.get('opt_s', 0):.4f}")
    keys = sorted({k for r in rows for k in r})
    with open(out / "runs.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    summ = []
    for mode in args.modes:
        for s in sorted({r["s"] for r in rows if r["mode"] == mode}):
            for n in args.n:
                sub = [r for r in rows if r["mode"] == mode and r["s"] == s and r["n"] == n]
                ok = [r for r in sub if r["status"] == "ok"]
                summ.append({
                    "mode": mode, "n": n, "s": s, "runs": len(sub), "finished": len(ok),
                    "median_queries": statistics.median(r["queries"] for r in ok) if ok else math.nan,
                    "median_seconds": statistics.median(r["seconds"] for r in ok) if ok else math.nan,
                    "max_error": max(r["error"] for r in ok) if ok else math.nan,
                    "error_le_eps": sum(r["error"] <= args.epsilon for r in ok),
                    "max_error_minus_opt": max((r["error"] - r["opt_s"] for r in ok), default=math.nan)
                    if mode == "agnostic" else math.nan,
                    "bound_shape": bound_shape(n, s, args.epsilon),
                })
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summ[0]))
        w.writeheader()
        w.writerows(summ)
    for r in summ:
        print(f"{r['mode']:>10} s={r['s']:>3} n={r['n']:>4}: {r['finished']}/{r['runs']} finished, median "
              f"{r['median_queries']:,.0f} queries, {r['median_seconds']:.2f} s, max error {r['max_error']:.4f}")
    plot(rows, out / "queries_scaling.png")
    print(f"wrote {out / 'runs.csv'}, {out / 'summary.csv'}, {out / 'queries_scaling.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
