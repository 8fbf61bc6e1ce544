"""Dask at scale (issue 14): synthetic rows generated shard by shard on the workers.

A LocalCluster of 1 and of 2 worker processes (one thread each) on loopback; X (``--features``
float64 columns, uniform) and y are generated per shard inside the workers' tasks, as two
independent tasks per shard (the driver never holds the data): shard s comes from generators
seeded by s, the label from a fixed rule of the first five features plus noise. Workers do not
spill to disk (a spilled shard would be re-read every level); they pause at 80% of
``--memory-limit``. Measured:

* greedy, entropy, depth 8, ``max_thresholds=255``: wall time of the three data passes
  (statistics, threshold sample, coding) and of each level, with the bytes of histograms the shards
  produce per level (what crosses the network at most, before the pairwise sums on the workers);
* Top-k (k = 4, depth 4, ``max_binary_features=--topk-features``) on ``--topk-rows`` rows (default:
  all of them), on the shards: statistics and threshold sample, the sharded histogram greedy
  incumbent, every shard packing its rows into bit columns, one assembled bit matrix replicated to
  the workers, the root's candidates searched by one task per worker (docs/scaling.md); the
  seconds and bytes moved of each phase.

    python benchmarks/bench_dask.py --rows 100000000 --workers 1 2
    python benchmarks/bench_dask.py --rows 2000000 --shard-rows 250000 --workers 2   # quick
    python benchmarks/bench_dask.py --rows 2000000 --shard-rows 250000 --workers 2 --skip-greedy --check-local

Timings are wall-clock on whatever else the machine runs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


N_RULE = 5  # y depends on X's first N_RULE columns


def _rule_columns(s: int, rows: int, out=None):
    """X's first ``N_RULE`` columns of shard s, as the rows of an (N_RULE, rows) array."""
    return np.random.default_rng([s, 0, 17]).random((N_RULE, rows), out=out)


def gen_x(s: int, rows: int, d: int):
    """Shard s of X (rows x d float64, uniform on [0, 1): 4x cheaper to draw than normal values),
    deterministic in s: the rule columns, then the others; drawn column by column into a
    Fortran-ordered block (no copy)."""
    xt = np.empty((max(d, N_RULE), rows))
    _rule_columns(s, rows, out=xt[:N_RULE])
    if d > N_RULE:
        np.random.default_rng([s, 1, 17]).random((d - N_RULE, rows), out=xt[N_RULE:])
    return xt[:d].T


def gen_y(s: int, rows: int, d: int):
    """Shard s of y: a fixed rule of X's first columns plus noise. It regenerates only those
    columns, so X and y are two independent tasks: one generator run for X per pass over the data
    (a shared (X, y) task would be inlined by Dask into each of its two consumers, i.e. run twice)."""
    r = _rule_columns(s, rows)
    c = [r[j % min(d, N_RULE)] - 0.5 for j in range(N_RULE)]
    z = c[0] + 0.8 * c[1] * (c[2] > 0) - 0.6 * np.abs(c[3]) + 0.3 * c[4]
    return (z + 0.2 * np.random.default_rng([s, 2, 17]).standard_normal(rows) > 0).astype(np.int8)


def gen_block(s: int, rows: int, d: int):
    """Shard s: (X, y)."""
    return gen_x(s, rows, d), gen_y(s, rows, d)


def synthetic(rows: int, shard_rows: int, d: int):
    import dask
    import dask.array as da

    xs, ys = [], []
    for s, a in enumerate(range(0, rows, shard_rows)):
        m = min(shard_rows, rows - a)
        xs.append(da.from_delayed(dask.delayed(gen_x, pure=True)(s, m, d), shape=(m, d), dtype=np.float64))
        ys.append(da.from_delayed(dask.delayed(gen_y, pure=True)(s, m, d), shape=(m,), dtype=np.int8))
    return da.concatenate(xs), da.concatenate(ys)


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run(workers: int, args) -> None:
    import dask
    import distributed

    dask.config.set({"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False})
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", host="127.0.0.1", memory_limit=args.memory_limit)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        if not args.skip_greedy:
            run_greedy(client, workers, args)
        topk_rows = args.rows if args.topk_rows is None else args.topk_rows
        if topk_rows:
            run_topk(client, topk_rows, args)
        peaks = client.run(_peak_rss_mb)
        print("worker peak RSS: " + ", ".join(f"{v:,.0f} MB" for v in peaks.values())
              + f"; driver peak RSS {_peak_rss_mb():,.0f} MB")
    finally:
        client.close()
        cluster.close()


def run_greedy(client, workers: int, args) -> None:
    from treelearn import GreedyTreeClassifier
    from treelearn.distributed import last_fit_log, last_fit_passes, use_client

    X, y = synthetic(args.rows, args.shard_rows, args.features)
    with use_client(client):
        t0 = time.perf_counter()
        est = GreedyTreeClassifier(criterion="entropy", max_depth=args.depth, max_thresholds=255).fit(X, y)
        total = time.perf_counter() - t0
    log = last_fit_log()
    grow = sum(r["seconds"] for r in log)
    print(f"\n== {workers} worker(s): greedy depth {args.depth}, {args.rows:,} rows x {args.features} features, "
          f"{len(X.chunks[0])} shards")
    passes = ", ".join(f"{k} {v:.1f} s" for k, v in last_fit_passes().items())
    print(f"total {total:.1f} s: data passes {total - grow:.1f} s ({passes}), "
          f"levels {grow:.1f} s; {est.tree_.node_count} nodes")
    print(f"{'level':>5} {'hist nodes':>10} {'seconds':>8} {'hist bytes (all shards)':>24} {'split bytes':>12}")
    for r in log:
        print(f"{r['level']:>5} {r['nodes']:>10} {r['seconds']:>8.2f} {r['hist_bytes']:>24,} "
              f"{r.get('split_bytes', 0):>12,}")


def run_topk(client, rows: int, args) -> None:
    from treelearn import TopKTreeClassifier
    from treelearn.distributed import last_search_info, use_client

    Xk, yk = synthetic(rows, min(args.shard_rows, rows), args.features)
    with use_client(client):
        t0 = time.perf_counter()
        tk = TopKTreeClassifier(k=4, max_depth=4, max_binary_features=args.topk_features).fit(Xk, yk)
        tt = time.perf_counter() - t0
    info = last_search_info()
    print(f"\nTop-k k=4 depth 4, {rows:,} rows, {tk.n_binary_features_} binary features, on the shards: "
          f"{tt:.1f} s, {tk.tree_.node_count} nodes, training error {tk.training_error_:,.0f} "
          f"(greedy incumbent {tk.greedy_error_:,.0f}), {info.get('shares')} search tasks")
    print("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in info["seconds"].items()))
    print("  bytes moved: " + ", ".join(f"{k} {v:,}" for k, v in info["bytes"].items()))
    if info.get("task_seconds"):
        print("  search tasks (total / building the searcher / rebuilding the tree): "
              + ", ".join(f"{a:.2f} / {b:.2f} / {c:.2f} s" for a, b, c in info["task_seconds"]))
    if args.check_local:  # the same rows in this process: the local fit must be the same
        X, y = Xk.compute(), yk.compute()
        t0 = time.perf_counter()
        loc = TopKTreeClassifier(k=4, max_depth=4, max_binary_features=args.topk_features).fit(X, y)
        tl_ = time.perf_counter() - t0
        same = all(np.array_equal(getattr(loc.tree_, a), getattr(tk.tree_, a))
                   for a in ("children_left", "children_right", "feature", "threshold", "value", "n_node_samples"))
        same = same and loc.training_error_ == tk.training_error_ and loc.greedy_error_ == tk.greedy_error_
        print(f"  local fit on the same rows: {tl_:.1f} s; identical tree and attributes: {same}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--shard-rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory-limit", default="8GB", help="per worker")
    ap.add_argument("--topk-rows", type=int, default=None, help="default: --rows; 0: skip Top-k")
    ap.add_argument("--topk-features", type=int, default=100, help="Top-k's max_binary_features")
    ap.add_argument("--skip-greedy", action="store_true", help="only the Top-k fit")
    ap.add_argument("--check-local", action="store_true",
                    help="also fit Top-k locally on the same rows (held in this process) and compare")
    args = ap.parse_args(argv)
    for w in args.workers:
        run(w, args)


if __name__ == "__main__":
    main()
