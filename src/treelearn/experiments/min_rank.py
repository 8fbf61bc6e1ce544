"""001, Theorem 2 in practice: FINDMIN on samples of the size the theorem asks for.

For every (n, r, eps) of the grid and every seed: a random target tree of rank r over n Boolean
variables (:func:`treelearn.datasets.random_rank_tree`), a sample of
``m = eh_sample_size(n, r, eps, delta)`` = (1/eps)((en/r)^r ln(8n) + ln(1/delta)) examples drawn
uniformly from {0,1}^n, the tree FINDMIN learns from it, and that tree's true error under the
uniform distribution (exact, by summing over pairs of leaves, for n <= 20; else on 10^5 fresh
examples). Theorem 2 promises error <= eps with probability >= 1 - delta: the fraction of seeds
with error <= eps must be at least 1 - delta. The same runs at a fraction of m (``--fractions``,
default 1, 0.1, 0.01) show how loose the bound is (no promise there). The run time is set against |S|(n+1)^(2r), the
bound of Lemma 3 / Theorem 1 (CPU seconds of ``MinRankSearch(X, y).find_min()``).

Outputs (in ``--out-dir``, default ``results/min-rank``): ``runs.csv`` (one row per run),
``summary.csv`` (per (n, r, eps): success fraction, 1 - delta, whether it holds, errors, times)
and ``min_rank.png`` (errors against eps; time against |S|(n+1)^(2r)).

    treelearn experiment min-rank [--quick] [--n 8 12 16 20 30] [--ranks 1 2 3] [--eps 0.2 0.1]
                                  [--delta 0.1] [--seeds 50] [--time-limit 600] [--max-samples 400000]
                                  [--out-dir DIR]
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from treelearn.experiments._common import FitProgress, experiment_parser, figure_legend, mark_timed_out, pyplot, save_figure

EXACT_MAX_N = 20
FRESH_SAMPLES = 100_000


def run_one(n, r, eps, delta, seed, time_limit, fraction=1.0):
    from treelearn.datasets.rank import random_rank_tree, sample_uniform, uniform_error
    from treelearn.learn.minrank.estimator import MinRankSearch, RankSearchLimitError, eh_sample_size

    rng = np.random.default_rng([seed, n, r, int(round(eps * 1e6)), int(round(fraction * 1e6))])
    target = random_rank_tree(n, r, rng)
    m = max(1, int(round(fraction * eh_sample_size(n, r, eps, delta))))
    X, y = sample_uniform(target, m, rng)
    row = {"n": n, "r": r, "eps": eps, "delta": delta, "fraction": fraction, "seed": seed, "m": m,
           "work_bound": float(m) * float(n + 1) ** (2 * r), "target_leaves": target.n_leaves}
    t0 = time.process_time()  # CPU time: the machine may be shared
    try:
        search = MinRankSearch(X, y, time_limit=time_limit)
        tree = search.find_min()
    except RankSearchLimitError as exc:
        row.update(status=f"{exc.bound} limit", seconds=time.process_time() - t0, rank=np.nan, leaves=np.nan,
                   error=np.nan, error_method="", success=np.nan, rank_lower_bound=exc.rank_lower_bound)
        return row
    seconds = time.process_time() - t0
    if n <= EXACT_MAX_N:
        err, method = uniform_error(tree, target), "exact"
    else:
        Xf, yf = sample_uniform(target, FRESH_SAMPLES, rng)
        err, method = float(np.mean(tree.predict(Xf) != yf)), f"{FRESH_SAMPLES} fresh samples"
    row.update(status="ok", seconds=seconds, rank=tree.rank, leaves=tree.n_leaves, error=err, error_method=method,
               success=bool(err <= eps), rank_lower_bound=tree.rank, calls=search.stats_.get("calls"))
    return row


def summarize(rows):
    out = []
    keys = sorted({(r["n"], r["r"], r["eps"], r["delta"], r["fraction"]) for r in rows})
    for n, r, eps, delta, fraction in keys:
        rs = [x for x in rows if (x["n"], x["r"], x["eps"], x["delta"], x["fraction"]) == (n, r, eps, delta, fraction)]
        ok = [x for x in rs if x["status"] == "ok"]
        errs = np.array([x["error"] for x in ok], dtype=float)
        frac = float(np.mean([x["success"] for x in ok])) if ok else float("nan")
        out.append({
            "n": n, "r": r, "eps": eps, "delta": delta, "fraction": fraction, "m": rs[0]["m"], "runs": len(rs),
            "completed": len(ok), "success_fraction": frac, "required": 1 - delta,
            # Theorem 2 promises the success fraction only at the full sample size (fraction 1)
            "holds": (bool(ok) and frac >= 1 - delta) if fraction == 1.0 else "",
            "mean_error": float(errs.mean()) if ok else float("nan"),
            "max_error": float(errs.max()) if ok else float("nan"),
            "max_rank_found": int(max(x["rank"] for x in ok)) if ok else -1,
            "median_seconds": float(np.median([x["seconds"] for x in ok])) if ok else float("nan"),
            "work_bound": rs[0]["work_bound"],
        })
    return out


def write_csv(path, rows):
    if not rows:
        return
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def plot(rows, summary, path):
    plt = pyplot()

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 4.8))
    ok = [x for x in rows if x["status"] == "ok"]
    groups = sorted({(s["n"], s["r"], s["eps"]) for s in summary})
    cmap = plt.get_cmap("viridis")
    for k, (n, r, eps) in enumerate(groups):
        ss = sorted((s for s in summary if (s["n"], s["r"], s["eps"]) == (n, r, eps)), key=lambda s: s["fraction"])
        fr = [s["fraction"] for s in ss]
        color = cmap(k / max(len(groups) - 1, 1))
        series = f"n = {n}, r = {r}, eps = {eps:g}"
        ax1.plot(fr, [s["success_fraction"] for s in ss], "o-", color=color, alpha=0.6, ms=3, label=series)
        ax2.plot(fr, [max(s["mean_error"] / eps, 1e-6) for s in ss], "o-", color=color, alpha=0.6, ms=3,
                 label=series)
    delta = summary[0]["delta"] if summary else 0.1
    ax1.axhline(1 - delta, color="C3", ls="--", label=f"1 - delta = {1 - delta:g} (promised at m)")
    ax1.axvline(1.0, color="0.5", lw=0.8)
    ax1.set_xscale("log")
    ax1.set_xlabel("sample size / Theorem 2's m")
    ax1.set_ylabel("fraction of seeds with error <= eps")
    ax1.set_title(f"Theorem 2 (one line per (n, r, eps), {len(groups)} lines)")
    ax1.legend(handles=[h for h, l in zip(*ax1.get_legend_handles_labels()) if l.startswith("1 - delta")],
               fontsize=8, loc="lower right")
    ax2.axhline(1.0, color="C3", ls="--", label="error = eps")
    ax2.axvline(1.0, color="0.5", lw=0.8)
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("sample size / Theorem 2's m")
    ax2.set_ylabel("mean true error / eps (0 drawn at 1e-6)")
    ax2.set_title("how loose the bound is")
    ax2.legend(handles=[h for h, l in zip(*ax2.get_legend_handles_labels()) if l == "error = eps"], fontsize=8)
    for r in sorted({x["r"] for x in ok}):
        pts = [(x["work_bound"], x["seconds"]) for x in ok if x["r"] == r]
        ax3.scatter(*zip(*pts), s=6, alpha=0.5, label=f"r = {r}")
    late = [x for x in rows if "limit" in str(x["status"])]
    if late:  # runs stopped by the time or memory limit: the time they ran
        mark_timed_out(ax3, [x["work_bound"] for x in late], [x["seconds"] for x in late], [True] * len(late),
                       label="stopped by a limit")
    ax3.set_xscale("log")
    ax3.set_yscale("log")
    ax3.set_xlabel("|S| (n+1)^(2r)  (Lemma 3 bound, up to a constant)")
    ax3.set_ylabel("FINDMIN CPU time (s)")
    ax3.set_title("run time against the time bound")
    ax3.legend(fontsize=8)
    figure_legend(fig, [ax1], ncol=min(6, max(1, len(groups))), fontsize=7)  # every (n, r, eps) line
    save_figure(fig, path, dpi=120, rect=(0, 0.04 + 0.025 * ((len(groups) + 5) // 6), 1, 1))


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("min-rank", __doc__,
                           quick_help="n in {6, 10, 24}, r in {1, 2}, eps 0.2, 5 seeds",
                           data_dir_help="unused (synthetic data)")
    ap.add_argument("--n", type=int, nargs="+", default=[8, 12, 16, 20, 30])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.2, 0.1])
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.1, 0.01],
                    help="also run at these fractions of the Theorem 2 sample size (the promise is for 1)")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per FINDMIN run")
    ap.add_argument("--max-samples", type=int, default=400_000,
                    help="skip (n, r, eps) whose Theorem 2 sample size is larger (memory)")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.ranks, args.eps, args.seeds, args.fractions = [6, 10, 24], [1, 2], [0.2], 5, [1.0, 0.01]
    from treelearn.learn.minrank.estimator import eh_sample_size

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    total = len(args.n) * len(args.ranks) * len(args.eps) * len(args.fractions) * args.seeds
    with FitProgress(total, "min-rank runs") as progress:
        for n in args.n:
            for r in args.ranks:
                if r > n:
                    progress.advance(len(args.eps) * len(args.fractions) * args.seeds)
                    continue
                for eps in args.eps:
                    m = eh_sample_size(n, r, eps, args.delta)
                    if m > args.max_samples:
                        print(f"n={n:3d} r={r} eps={eps:<5g} m={m:>8d}  skipped (more than --max-samples)", flush=True)
                        progress.advance(len(args.fractions) * args.seeds)
                        continue
                    for fraction in args.fractions:
                        t0 = time.perf_counter()
                        for seed in range(args.seeds):
                            rows.append(run_one(n, r, eps, args.delta, seed, args.time_limit, fraction))
                            progress.advance()
                        s = summarize([x for x in rows if (x["n"], x["r"], x["eps"], x["fraction"]) ==
                                       (n, r, eps, fraction)])[0]
                        verdict = ("holds" if s["holds"] else "FAILS") if fraction == 1.0 else "no promise"
                        print(f"n={n:3d} r={r} eps={eps:<5g} m={s['m']:>8d} (x{fraction:g})  success "
                              f"{s['success_fraction']:.2f} (need >= {s['required']:.2f}: {verdict})  mean error "
                              f"{s['mean_error']:.2e}  max rank {s['max_rank_found']}  median "
                              f"{s['median_seconds']:.3f} s  [{time.perf_counter() - t0:.1f} s]", flush=True)
    summary = summarize(rows)
    write_csv(out / "runs.csv", rows)
    write_csv(out / "summary.csv", summary)
    plot(rows, summary, out / "min_rank.png")
    print(f"wrote {out / 'runs.csv'}, {out / 'summary.csv'}, {out / 'min_rank.png'}")
    return 0 if all(s["holds"] for s in summary if s["fraction"] == 1.0) else 1


if __name__ == "__main__":
    raise SystemExit(main())
