"""Benchmark: BuildDT (004 Fig. 2) in the realizable setting from membership queries.

n = 100 variables, sizes s in {4, 8, 16}, ε = 0.1, on 10 random size-s trees each: time, queries,
distinct restrictions and error (on 200 000 uniform points) of the full learner, side by side
with ablations of the same DP in the same process:

* ``no-adaptive``: every candidate variable gets the full Hoeffding batch (no sequential test);
* ``no-memo``: restrictions are keyed by their path, so one reached in two orders is redone;
* ``no-shared``: a fresh batch per candidate variable (f(x) queried again for each).

Ratios are (ablation / full) of the medians over targets. Ablations run under ``--ablation-limit``
seconds per target; a run hitting it counts at the limit and is marked ">".

There is no peer library for this algorithm (no public implementation of BuildDT); the
reference points are the issue's targets (s = 8 under 0.5 s, s = 16 under 10 s, median) and the
throwaway NumPy prototype of the issue (s = 8 in 0.05–1.85 s with 0.4–9 M queries).

    .venv/bin/python benchmarks/bench_queries.py [--sizes 4 8 16] [--targets 10] [--no-ablations]
"""
from __future__ import annotations

import argparse
import statistics
import time

from treelearn import Oracle, SearchLimitError
from treelearn.datasets import random_tree
from treelearn.learn.queries import build_dt, default_parameters, dist

VARIANTS = {
    "full": {},
    "no-adaptive": {"adaptive": False},
    "no-memo": {"memo": False},
    "no-shared": {"shared_batch": False},
}


def run_one(T, s, eps, seed, opts, limit):
    o = Oracle.from_tree(T)
    p = default_parameters(s, eps)
    t0 = time.perf_counter()
    try:
        h, info = build_dt(o, s, depth=p["depth"], tau=p["tau"], influence="sampled", random_state=seed,
                           time_limit=limit, return_info=True, **opts)
    except SearchLimitError:
        return {"time": limit, "queries": o.n_queries, "restrictions": float("nan"), "error": float("nan"),
                "size": -1, "hit": True}
    el = time.perf_counter() - t0
    err = dist(h, T, method="sampled", n_samples=200_000, random_state=seed)
    return {"time": el, "queries": info["queries"], "restrictions": info["restrictions"], "error": err,
            "size": h.n_leaves, "hit": False}


def memo_hard(limit):
    from treelearn.datasets import flip_labels

    f = flip_labels(random_tree(12, 10, random_state=3), 0.05, random_state=3)
    p = default_parameters(8, 0.05)
    print("memo ablation, agnostic exact DP (n = 12, s = 8, eps = 0.05):")
    res = {}
    for memo in (True, False):
        t0 = time.perf_counter()
        try:
            h, info = build_dt(f, 8, depth=p["depth"], tau=p["tau"], smoothing=p["delta"], influence="exact",
                               memo=memo, time_limit=limit, return_info=True)
            res[memo] = (time.perf_counter() - t0, info["restrictions"], dist(h, f), False)
        except SearchLimitError as exc:
            res[memo] = (limit, str(exc).split(" after ")[1].split(" ")[0], float("nan"), True)
        t, r, e, hit = res[memo]
        print(f"   memo={memo!s:>5}: {'>' if hit else ' '}{t:8.2f} s, restrictions {r}, error {e:.4f}")
    print(f"   no-memo / memo time ratio {'>=' if res[False][3] else ''}{res[False][0] / res[True][0]:.1f}x")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None, help="unused (synthetic targets); accepted for uniformity")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16])
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--targets", type=int, default=10)
    ap.add_argument("--limit", type=float, default=300.0, help="time limit of the full learner per target (s)")
    ap.add_argument("--ablation-limit", type=float, default=60.0)
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="repeat the full learner, keep the median time")
    ap.add_argument("--memo-hard", action="store_true",
                    help="also time the memo ablation where the DP is exhaustive: agnostic, exact influences of "
                         "f_delta, a size-10 tree on 12 variables with 5%% of its truth table flipped, s = 8, eps = 0.05")
    args = ap.parse_args(argv)
    if args.memo_hard:
        memo_hard(args.ablation_limit)
    variants = ["full"] if args.no_ablations else list(VARIANTS)
    print(f"BuildDT realizable, n = {args.n}, eps = {args.epsilon}, {args.targets} random size-s trees per s")
    for s in args.sizes:
        p = default_parameters(s, args.epsilon)
        print(f"\n== s = {s}: d = {p['depth']}, tau = {p['tau']:.4f}")
        print(f"{'target':>6} {'variant':>12} {'time s':>9} {'queries':>11} {'restr.':>7} {'error':>7} {'size':>4}")
        res = {v: [] for v in variants}
        for k in range(args.targets):
            T = random_tree(args.n, s, random_state=1000 * s + k)
            for v in variants:
                limit = args.limit if v == "full" else args.ablation_limit
                reps = [run_one(T, s, args.epsilon, k, VARIANTS[v], limit)
                        for _ in range(args.repeat if v == "full" else 1)]
                r = reps[0]
                r["time"] = statistics.median(x["time"] for x in reps)
                res[v].append(r)
                mark = ">" if r["hit"] else " "
                print(f"{k:>6} {v:>12} {mark}{r['time']:>8.3f} {r['queries']:>11,d} {r['restrictions']:>7} "
                      f"{r['error']:>7.4f} {r['size']:>4}", flush=True)
        full = res["full"]
        mt = statistics.median(r["time"] for r in full)
        mq = statistics.median(r["queries"] for r in full)
        ok = sum(1 for r in full if not r["hit"] and r["error"] <= args.epsilon and 0 < r["size"] <= s)
        print(f"-- s = {s}: full median time {mt:.3f} s (max {max(r['time'] for r in full):.3f}), "
              f"median queries {mq:,.0f}, median restrictions "
              f"{statistics.median(r['restrictions'] for r in full):.0f}, error <= eps and size <= s on {ok}/{len(full)}")
        for v in variants[1:]:
            rt = statistics.median(r["time"] for r in res[v])
            rq = statistics.median(r["queries"] for r in res[v])
            hits = sum(r["hit"] for r in res[v])
            flag = f" ({hits} hit the {args.ablation_limit:g} s limit: ratios are lower bounds)" if hits else ""
            print(f"   {v:>12}: median time {rt:.3f} s = {rt / mt:6.1f}x, median queries {rq:,.0f} = "
                  f"{rq / mq:6.1f}x{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
