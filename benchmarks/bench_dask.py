"""Dask at scale (issue 14): synthetic rows generated shard by shard on the workers.

A LocalCluster of 1 and of 2 worker processes (one thread each) on loopback; X (``--features``
float64 columns) and y are generated per shard inside the workers' tasks (the driver never holds
the data): row i of shard s comes from a generator seeded by s, the label from a fixed rule of the
features plus noise. Measured:

* greedy, entropy, depth 8, ``max_thresholds=255``: wall time of the three data passes
  (statistics, threshold sample, coding) and of each level, with the bytes of histograms the shards
  produce per level (what crosses the network at most, before the pairwise sums on the workers);
* Top-k (k = 4, depth 4) on ``--topk-rows`` rows: Top-k and the other searching learners gather
  their input to the driver (see docs/scaling.md), so it runs on fewer rows.

    python benchmarks/bench_dask.py --rows 100000000 --workers 1 2
    python benchmarks/bench_dask.py --rows 2000000 --shard-rows 250000 --workers 2   # quick

Timings are wall-clock on whatever else the machine runs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def gen_block(s: int, rows: int, d: int):
    """Shard s: (X, y), deterministic in s."""
    rng = np.random.default_rng(1_000_003 * s + 17)
    X = rng.standard_normal((rows, d))
    z = X[:, 0] + 0.8 * X[:, 1] * (X[:, 2] > 0) - 0.6 * np.abs(X[:, 3]) + 0.3 * X[:, 4 % d]
    y = (z + 0.5 * rng.standard_normal(rows) > 0).astype(np.int8)
    return X, y


def _x(t):
    return t[0]


def _y(t):
    return t[1]


def synthetic(rows: int, shard_rows: int, d: int):
    import dask
    import dask.array as da

    xs, ys = [], []
    for s, a in enumerate(range(0, rows, shard_rows)):
        m = min(shard_rows, rows - a)
        g = dask.delayed(gen_block, pure=True)(s, m, d)
        xs.append(da.from_delayed(dask.delayed(_x, pure=True)(g), shape=(m, d), dtype=np.float64))
        ys.append(da.from_delayed(dask.delayed(_y, pure=True)(g), shape=(m,), dtype=np.int8))
    return da.concatenate(xs), da.concatenate(ys)


def run(workers: int, args) -> None:
    import distributed

    from treelearn import GreedyTreeClassifier, TopKTreeClassifier
    from treelearn.distributed import last_fit_log, use_client

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", host="127.0.0.1", memory_limit=args.memory_limit)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        X, y = synthetic(args.rows, args.shard_rows, args.features)
        with use_client(client):
            t0 = time.perf_counter()
            est = GreedyTreeClassifier(criterion="entropy", max_depth=args.depth, max_thresholds=255).fit(X, y)
            total = time.perf_counter() - t0
        log = last_fit_log()
        grow = sum(r["seconds"] for r in log)
        print(f"\n== {workers} worker(s): greedy depth {args.depth}, {args.rows:,} rows x {args.features} features, "
              f"{len(X.chunks[0])} shards")
        print(f"total {total:.1f} s: data passes (statistics, sample, coding) {total - grow:.1f} s, "
              f"levels {grow:.1f} s; {est.tree_.node_count} nodes")
        print(f"{'level':>5} {'hist nodes':>10} {'seconds':>8} {'hist bytes (all shards)':>24} {'split bytes':>12}")
        for r in log:
            print(f"{r['level']:>5} {r['nodes']:>10} {r['seconds']:>8.2f} {r['hist_bytes']:>24,} "
                  f"{r.get('split_bytes', 0):>12,}")
        if args.topk_rows:
            Xk, yk = synthetic(args.topk_rows, min(args.shard_rows, args.topk_rows), args.features)
            with use_client(client):
                t0 = time.perf_counter()
                tk = TopKTreeClassifier(k=4, max_depth=4, max_thresholds=args.topk_thresholds).fit(Xk, yk)
                tt = time.perf_counter() - t0
            print(f"Top-k k=4 depth 4, {args.topk_rows:,} rows (gathered to the driver): {tt:.1f} s, "
                  f"{tk.tree_.node_count} nodes, {Xk.nbytes + yk.nbytes:,} bytes gathered")
    finally:
        client.close()
        cluster.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--shard-rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory-limit", default="8GB", help="per worker")
    ap.add_argument("--topk-rows", type=int, default=200_000, help="0: skip Top-k")
    ap.add_argument("--topk-thresholds", type=int, default=4)
    args = ap.parse_args(argv)
    for w in args.workers:
        run(w, args)


if __name__ == "__main__":
    main()
