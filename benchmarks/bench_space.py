"""The default search space of ``OptimalTreeClassifier``: ``max_binary_features="auto"`` against 100.

Default mode: on the 12 sets of ``bench_small_trees.py`` (one stratified 70/30 split per seed,
``--seeds``), at ``--depths`` (3 and 4), side by side in one process: the fit with
``max_binary_features=100`` (the old default: about 100 quantile thresholds plus the greedy
tree's) and the default fit (``"auto"``: every threshold when the estimate is within the budget,
``learn/topk/space.py``). Per row: the space "auto" searched, the estimate, the training errors and
test accuracy of both, their CPU seconds (``time.process_time``, one thread) and the ratio
auto / 100. The summary, per depth, over the rows where auto searched every threshold and 100 did not (on
the categorical sets 100 binary features already hold every threshold): how many, the mean
training errors saved, the test accuracy change and the geometric mean CPU ratio.

``--calibrate``: the data of the cost model. On the UCI and Top-k sets of ``bench_small_trees.py``
and ``bench_continuous.py``, at ``--depths`` (2 3 4), the every-threshold fit's CPU seconds
(``max_binary_features=None``, ``--time-limit``, one thread) beside ``space.continuous_cost``'s
estimate, with (n, m, T); then a least-squares fit of log(seconds) = a + b log(n m) + c log(T + 1)
per depth over the rows that finished, and the largest log residual (the envelope's margin).

    python benchmarks/bench_space.py [--depths 3 4] [--seeds 1] [--data-dir DIR]
    python benchmarks/bench_space.py --calibrate [--depths 2 3 4] [--time-limit 20]
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

SMALL_TREES = ["uci/wine", "uci/iris", "uci/seeds", "uci/haberman", "uci/vertebral-column-3c", "uci/ionosphere",
               "uci/parkinsons", "uci/breast-cancer-wisconsin-diagnostic", "topk/monks-1", "topk/tic-tac-toe",
               "topk/balance-scale", "topk/hayes-roth"]
CONTINUOUS = ["uci/connectionist-bench-sonar", "topk/spambase", "topk/telescope", "topk/dry-bean",
              "topk/credit-card", "topk/electrical-grid-stability", "topk/occupancy-estimation", "topk/avila-train"]


def _load(name, data_dir):
    from treelearn.datasets import load_dataset

    X, y = load_dataset(name, data_dir, dropna=True)
    return X, np.unique(np.asarray(y), return_inverse=True)[1].ravel()


def _cpu(fn):
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def _shape(X, y):
    """(n, m, T, classes) of the every-threshold search on X (space.searched_columns)."""
    from treelearn import OptimalTreeClassifier
    from treelearn.learn.topk.space import searched_columns

    _, sample = OptimalTreeClassifier()._training_sample(X, y, None)
    m, t, _ = searched_columns(sample.encoded, sample.schema)
    return sample.n_samples, m, t, sample.n_classes


def _warm_up():
    """A process's first fit loads its modules (tens of ms): not any row's time."""
    from treelearn import OptimalTreeClassifier

    X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    for mbf in (None, 100):
        OptimalTreeClassifier(max_depth=2, max_binary_features=mbf).fit(X, y)


def calibrate(names, depths, time_limit, data_dir):
    from treelearn import OptimalTreeClassifier
    from treelearn.learn.topk.space import continuous_cost

    rows = []
    print(f"{'dataset':36s} {'n':>6s} {'m':>4s} {'T':>7s} {'d':>2s} {'cpu s':>8s} {'est s':>9s} {'est/cpu':>8s}")
    for name in names:
        X, y = _load(name, data_dir)
        n, m, t, k = _shape(X, y)
        for d in depths:
            est = OptimalTreeClassifier(max_depth=d, max_binary_features=None, time_limit=time_limit, n_jobs=1)
            _, cpu = _cpu(lambda: est.fit(X, y))
            guess = continuous_cost(n, m, t, d, k)
            flag = " (time limit)" if est.timed_out_ else ""
            print(f"{name:36s} {n:6d} {m:4d} {t:7d} {d:2d} {cpu:8.3f} {guess:9.3g} {guess / cpu:8.2g}{flag}", flush=True)
            rows.append((d, n, m, t, cpu, est.timed_out_))
    for d in depths:
        fin = [(n, m, t, c) for dd, n, m, t, c, out in rows if dd == d and not out and c > 0]
        if len(fin) < 3:
            continue
        A = np.array([[1.0, math.log(n * m), math.log(t + 1.0)] for n, m, t, _ in fin])
        b = np.log([c for *_, c in fin])
        coef, *_ = np.linalg.lstsq(A, b, rcond=None)
        res = b - A @ coef
        print(f"depth {d}: log s = {coef[0]:.2f} + {coef[1]:.2f} log(n m) + {coef[2]:.2f} log(T + 1); "
              f"largest residual {res.max():+.2f} ({len(fin)} finished rows)")


def compare(names, depths, seeds, data_dir):
    from sklearn.model_selection import train_test_split

    from treelearn import OptimalTreeClassifier

    print(f"{'dataset':36s} {'d':>2s} {'100 searched':>16s} {'auto searched':>16s} {'est s':>7s} {'err100':>7s} {'errAuto':>7s} "
          f"{'acc100':>7s} {'accAuto':>7s} {'cpu100':>7s} {'cpuAuto':>7s} {'ratio':>6s}")
    every = []
    for name in names:
        X, y = _load(name, data_dir)
        for d in depths:
            for seed in range(seeds):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
                old, c_old = _cpu(lambda: OptimalTreeClassifier(max_depth=d, max_binary_features=100,
                                                                n_jobs=1).fit(Xtr, ytr))
                new, c_new = _cpu(lambda: OptimalTreeClassifier(max_depth=d, n_jobs=1).fit(Xtr, ytr))
                space = new.feature_space_

                def what(fs):
                    return "every threshold" if fs["thresholds"] == "all" else f"{fs['n_binary_features']} features"
                est_s = space["chosen_by"].split("estimated at ")[-1].split(" s")[0] if "estimated" in \
                    space["chosen_by"] else "-"
                a_old, a_new = old.score(Xte, yte), new.score(Xte, yte)
                ratio = c_new / max(c_old, 1e-6)
                print(f"{name:36s} {d:2d} {what(old.feature_space_):>16s} {what(space):>16s} {est_s:>7s} {old.training_error_:7g} {new.training_error_:7g} "
                      f"{a_old:7.3f} {a_new:7.3f} {c_old:7.3f} {c_new:7.3f} {ratio:6.2f}", flush=True)
                if space["thresholds"] == "all" and old.feature_space_["thresholds"] != "all":
                    every.append((d, old.training_error_ - new.training_error_, a_new - a_old, ratio))
    for d in depths:
        rows = [r for r in every if r[0] == d]
        if rows:
            print(f"depth {d}: every threshold (not before) on {len(rows)} rows; training errors saved {np.mean([r[1] for r in rows]):.2f}"
                  f" on average; test accuracy {100 * np.mean([r[2] for r in rows]):+.2f} points; CPU ratio auto/100 "
                  f"geometric mean {math.exp(np.mean([math.log(max(r[3], 1e-6)) for r in rows])):.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--depths", type=int, nargs="+")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", nargs="+")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    _warm_up()
    if a.calibrate:
        calibrate(a.datasets or SMALL_TREES + CONTINUOUS, a.depths or [2, 3, 4], a.time_limit, a.data_dir)
    else:
        compare(a.datasets or SMALL_TREES, a.depths or [3, 4], a.seeds, a.data_dir)


if __name__ == "__main__":
    main()
