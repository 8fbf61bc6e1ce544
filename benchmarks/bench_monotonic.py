"""Benchmark: the cost of ``monotonic_cst`` in the optimal binary search (breast cancer).

``OptimalTreeClassifier`` (binary search over the default ~100 and over ~300 binary features)
unconstrained and constrained side by side in this process
(alternating, median of repeats): the constraints are each column's "natural" sign (the sign
of its correlation with y: the constraint the data mostly agrees with) and the opposite signs
(a binding constraint). Reported: time, the ratio to the unconstrained fit, training errors.
The constrained search runs without the pair-count matrices of the unconstrained depth-2
solver (their depth-1 shortcut assumes unconstrained splits). Usage::

    python benchmarks/bench_monotonic.py [--depth 3] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.datasets import load_breast_cancer

from treelearn import OptimalTreeClassifier


def _time(make, X, y, repeats):
    times, model = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        model = make().fit(X, y)
        times.append(time.perf_counter() - t)
    return statistics.median(times), model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    natural = np.sign([np.corrcoef(X[:, j], y)[0, 1] for j in range(X.shape[1])]).astype(int)
    settings = {"~100 binary features (default)": (X, {}), "~300 binary features": (X, {"max_binary_features": 300})}
    print(f"breast cancer, depth {args.depth}, median of {args.repeats}")
    print(f"{'feature space':32} {'constraint':10} {'time s':>8} {'ratio':>6} {'error':>6} {'optimal':>7}")
    for name, (Xs, kw) in settings.items():
        rows = {"none": None, "natural": natural, "opposite": -natural}
        base = None
        for label, cst in rows.items():
            def make(cst=cst):
                return OptimalTreeClassifier(max_depth=args.depth, solver="binary", monotonic_cst=cst, **kw)
            t, m = _time(make, Xs, y, args.repeats)
            base = t if base is None else base
            print(f"{name:32} {label:10} {t:8.3f} {t / base:6.2f} {m.training_error_:6.0f} {str(m.is_optimal_):>7}")


if __name__ == "__main__":
    main()
