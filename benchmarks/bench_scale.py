"""One machine at scale (issue 14): greedy depth-8 trees on 10^5 ... 10^7 rows, side by side.

make_classification (20 features, 2 classes, random_state 0) with 100,000 further rows held out
for the test accuracy; entropy, depth 8, one thread each:

* scikit-learn ``DecisionTreeClassifier(criterion="entropy", max_depth=8)``;
* treelearn exact (``GreedyTreeClassifier(max_depth=8)``);
* treelearn histogram (``max_thresholds=255``: thresholds from the fixed 200,000-row sample);
* treelearn histogram with ``criterion="gini"`` (``hist255-gini``): LightGBM's like-for-like row;
* LightGBM, one tree of depth 8 (255 bins, binning included: ``Dataset`` construction is timed).

Like with like. LightGBM's first tree (binary log-loss, ``learning_rate=1``, no regularisation,
``min_data_in_leaf=1``, ``min_sum_hessian_in_leaf=0``) splits by the gain
``G_L^2/H_L + G_R^2/H_R - G^2/H`` with gradients ``p0 - y`` and constant hessians ``p0(1 - p0)``
around the base rate ``p0``; that gain is ``n_L (p_node - p_L)^2 + n_R (p_node - p_R)^2`` over
``p0(1 - p0)``, i.e. the Gini (variance) reduction of the node for any ``p0``. So LightGBM's one
tree is a Gini tree (leaf-wise with ``num_leaves=2**depth``: the full depth-8 tree when every split
has positive gain), and the accuracy target (within 0.3 points of LightGBM) is checked on
``hist255-gini``; ``hist255`` (entropy) is compared with our exact entropy mode and scikit-learn's
entropy tree. Both use the same 255-bin budget and the same 200,000-row binning sample size.

Every fit runs in its own subprocess (the data read from a .npy file): wall time of the fit and
its peak memory above the loaded data (``ru_maxrss`` after the fit minus the resident size before
it). Printed: times, memory, test accuracy and the ratios treelearn / peer.

    python benchmarks/bench_scale.py --max-rows 1000000
    python benchmarks/bench_scale.py --rows 100000 1000000 4000000 10000000 --peer-max-rows 4000000

Timings are wall-clock on whatever else the machine runs: compare ratios, not absolute times.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TOOLS = ["sklearn", "exact", "hist255", "hist255-gini", "lightgbm"]
N_TEST = 100_000


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def run_one(tool: str, path: str, depth: int) -> dict:
    """In the subprocess: load, fit once, report."""
    import resource

    if tool == "sklearn":  # imports before the clock and the memory baseline
        from sklearn.tree import DecisionTreeClassifier
    elif tool == "lightgbm":
        import lightgbm as lgb
    else:
        from treelearn import GreedyTreeClassifier
    data = np.load(path)
    X, y, Xt, yt = data["X"], data["y"], data["Xt"], data["yt"]
    X = np.ascontiguousarray(X)
    base = _rss_mb()
    t0 = time.perf_counter()
    if tool == "sklearn":
        m = DecisionTreeClassifier(criterion="entropy", max_depth=depth, random_state=0).fit(X, y)
        pred = lambda A: m.predict(A)  # noqa: E731
    elif tool in ("exact", "hist255", "hist255-gini"):
        m = GreedyTreeClassifier(criterion="gini" if tool == "hist255-gini" else "entropy", max_depth=depth,
                                 max_thresholds=None if tool == "exact" else 255).fit(X, y)
        pred = lambda A: m.predict(A)  # noqa: E731
    elif tool == "lightgbm":
        params = {"objective": "binary", "num_iterations": 1, "learning_rate": 1.0, "max_depth": depth,
                  "num_leaves": 2 ** depth, "max_bin": 255, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0,
                  "lambda_l2": 0.0, "num_threads": 1, "verbose": -1, "deterministic": True, "seed": 0}
        ds = lgb.Dataset(X, label=y, params={"max_bin": 255, "verbose": -1})
        booster = lgb.train(params, ds)
        pred = lambda A: (booster.predict(A) > 0.5).astype(int)  # noqa: E731
    else:
        raise ValueError(tool)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    acc = float((pred(Xt) == yt).mean())
    return {"tool": tool, "seconds": seconds, "peak_mb": max(0.0, peak - base), "data_mb": X.nbytes / 2**20,
            "accuracy": acc}


def make(rows: int, path: str) -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=rows + N_TEST, n_features=20, n_informative=10, n_redundant=5,
                               n_classes=2, random_state=0)
    np.savez(path, X=X[:rows], y=y[:rows], Xt=X[rows:], yt=y[rows:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000, 4_000_000, 10_000_000])
    ap.add_argument("--max-rows", type=int, default=None, help="skip row counts above this")
    ap.add_argument("--peer-max-rows", type=int, default=None, help="scikit-learn only up to this many rows")
    ap.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: tool path
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], args.depth)))
        return
    rows = [r for r in args.rows if args.max_rows is None or r <= args.max_rows]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    results = []
    print(f"{'rows':>10} {'tool':>12} {'seconds':>9} {'peak MB':>9} {'data MB':>8} {'test acc':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in rows:
            path = os.path.join(tmp, f"data_{n}.npz")
            make(n, path)
            for tool in args.tools:
                if tool == "sklearn" and args.peer_max_rows is not None and n > args.peer_max_rows:
                    continue
                out = subprocess.run([sys.executable, __file__, "--depth", str(args.depth), "--one", tool, path],
                                     capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    print(f"{n:>10} {tool:>12} failed: {out.stderr.strip().splitlines()[-1:]}")
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                r["rows"] = n
                results.append(r)
                print(f"{n:>10} {tool:>12} {r['seconds']:>9.2f} {r['peak_mb']:>9.0f} {r['data_mb']:>8.0f} "
                      f"{r['accuracy']:>9.4f}", flush=True)
            os.remove(path)
    print("\nratios (treelearn / peer: time; accuracy difference in points; like with like: exact and hist255"
          "\nvs scikit-learn's entropy tree, hist255-gini vs LightGBM's one tree, whose gain is the Gini gain)")
    by = {(r["rows"], r["tool"]): r for r in results}
    for n in rows:
        parts = []
        for mine, peer in (("exact", "sklearn"), ("hist255", "sklearn"), ("exact", "lightgbm"),
                           ("hist255", "lightgbm"), ("hist255-gini", "lightgbm")):
            a, b = by.get((n, mine)), by.get((n, peer))
            if a and b:
                parts.append(f"{mine}/{peer} {a['seconds'] / b['seconds']:.2f}x "
                             f"({100 * (a['accuracy'] - b['accuracy']):+.2f} pt)")
        print(f"{n:>10}  " + ", ".join(parts))
    for mine in ("exact", "hist255", "hist255-gini", "sklearn", "lightgbm"):
        pts = [(n, by[(n, mine)]["seconds"]) for n in rows if (n, mine) in by]
        if len(pts) > 1:
            growth = ", ".join(f"{b[1] / a[1]:.1f}x for {b[0] / a[0]:.0f}x rows" for a, b in zip(pts, pts[1:]))
            print(f"growth {mine}: {growth}")


if __name__ == "__main__":
    main()
