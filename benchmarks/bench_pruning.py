"""Benchmark of bound pruning (issue 5, paper 002) against CART cost-complexity pruning with CV.

Three parts, in one run (times are medians of ``--repeat`` runs, measured side by side):

(a) loose-bound pruning of greedy Gini trees with 40, 200, 1000 and 3000 leaves grown on 75% of
    credit-card and telescope (target: a 1000-leaf tree in under 0.5 s), next to our CART pruning
    with 10-fold CV of the same tree (fold trees grown with the same settings);
(b) bound pruning vs CART pruning with 10-fold CV on the Table-1 datasets (40-leaf trees), with
    two CART peers: ours (weakest-link path once per fold) and scikit-learn's
    (``cost_complexity_pruning_path`` + ``GridSearchCV`` over ``ccp_alpha``, refitting per α, on a
    ``DecisionTreeClassifier(max_leaf_nodes=40)``); target: at least 100x faster;
(c) the tight bound (Eq. 7) made usable: π of a 40-leaf credit-card tree at M = 2m = 45,000 by
    exact convolutions (the direct sum over k is O(M^2) per sub-shape), and pruning with the
    tight bound on the Table-1 datasets (one split each).

Run: ``python benchmarks/bench_pruning.py [--data-dir DIR] [--quick] [--repeat N]``.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np


def _median_time(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _split(X, y, seed=0):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.25, random_state=seed)


def _load(name, data_dir):
    from treelearn.experiments.pruning import _load as load

    return load(name, data_dir)


def _ours_cart_cv(tree, Xtr, ytr, C, max_leaves, cv=10, seed=0):
    from treelearn.learn.greedy.estimator import grow_greedy
    from treelearn.prune.pruners import cost_complexity_pruning_path, prune_cost_complexity, select_alpha_cv

    w = np.ones(len(ytr))

    def grow(Xa, ya, wa):
        return grow_greedy(Xa, ya, C, wa, criterion="gini", max_leaves=max_leaves)

    path = cost_complexity_pruning_path(tree)
    alpha = select_alpha_cv(grow, Xtr, ytr, w, path, cv=cv, random_state=seed)
    return prune_cost_complexity(tree, alpha, path=path)


def _sklearn_cart_cv(Xtr, ytr, max_leaves, cv=10, seed=0):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    base = DecisionTreeClassifier(criterion="gini", max_leaf_nodes=max_leaves, random_state=seed)
    alphas = base.cost_complexity_pruning_path(Xtr, ytr).ccp_alphas
    alphas = np.unique(np.clip(alphas, 0, None))
    counts = np.bincount(ytr)
    k = cv if counts[counts > 0].min() >= cv else 3
    gs = GridSearchCV(base, {"ccp_alpha": alphas}, cv=StratifiedKFold(k, shuffle=True, random_state=seed), n_jobs=1)
    gs.fit(Xtr, ytr)
    return gs.best_estimator_


def part_a(data_dir, repeat, quick):
    from treelearn.learn.greedy.estimator import grow_greedy
    from treelearn.prune.pruners import prune_with_bound

    print("\n(a) loose-bound pruning of large greedy trees (median of %d)" % repeat)
    print(f"{'dataset':14s} {'leaves':>7s} {'kept':>6s} {'bound s':>9s} {'CART+CV s':>10s} {'CART kept':>9s} {'ratio':>8s}")
    sizes = [40, 200, 1000] if quick else [40, 200, 1000, 3000]
    for name in ("topk/credit-card", "topk/telescope"):
        X, y, C = _load(name, data_dir)
        Xtr, Xte, ytr, yte = _split(X, y)
        for L in sizes:
            tree = grow_greedy(Xtr, ytr, C, criterion="gini", max_leaves=L)
            prune_with_bound(tree)  # warm-up (Wedderburn-Etherington table, module import)
            tb, pruned = _median_time(lambda: prune_with_bound(tree), repeat)
            if L <= 1000:
                tc, cart = _median_time(lambda: _ours_cart_cv(tree, Xtr, ytr, C, L), 1)
                ratio = f"{tc / tb:8.1f}x"
                ckept = cart.n_leaves
                acc_c = np.mean(cart.predict(Xte) == yte)
            else:
                tc, ratio, ckept, acc_c = float("nan"), "     n/a", -1, float("nan")
            acc_b = np.mean(pruned.predict(Xte) == yte)
            print(f"{name.split('/')[1]:14s} {tree.n_leaves:7d} {pruned.n_leaves:6d} {tb:9.4f} {tc:10.2f} "
                  f"{ckept:9d} {ratio}   test acc bound {acc_b:.4f} cart {acc_c:.4f}", flush=True)


def part_b(data_dir, repeat, quick):
    from treelearn.experiments.pruning import PAPER_DATASETS, SKLEARN_DATASETS
    from treelearn.learn.greedy.estimator import grow_greedy
    from treelearn.prune.pruners import prune_with_bound

    print("\n(b) bound pruning vs CART with 10-fold CV, 40-leaf trees (bound: median of %d)" % repeat)
    print(f"{'dataset':38s} {'bound s':>9s} {'ours CART s':>11s} {'ratio':>8s} {'sklearn CART s':>14s} {'ratio':>8s}")
    ratios_ours, ratios_sk = [], []
    names = SKLEARN_DATASETS if quick else PAPER_DATASETS
    for name, label in names:
        try:
            X, y, C = _load(name, data_dir)
        except Exception as exc:
            print(f"{label:38s} skipped: {exc}")
            continue
        Xtr, Xte, ytr, yte = _split(X, y)
        tree = grow_greedy(Xtr, ytr, C, criterion="gini", max_leaves=40)
        prune_with_bound(tree)
        tb, _ = _median_time(lambda: prune_with_bound(tree), repeat)
        to, _ = _median_time(lambda: _ours_cart_cv(tree, Xtr, ytr, C, 40), 1)
        ts, _ = _median_time(lambda: _sklearn_cart_cv(Xtr, ytr, 40), 1)
        ratios_ours.append(to / tb)
        ratios_sk.append(ts / tb)
        print(f"{label:38s} {tb:9.5f} {to:11.3f} {to / tb:7.0f}x {ts:14.3f} {ts / tb:7.0f}x", flush=True)
    if ratios_ours:
        gm = lambda r: math.exp(np.mean(np.log(r)))  # noqa: E731
        print(f"geometric mean speed-up: {gm(ratios_ours):.0f}x vs our CART+CV, {gm(ratios_sk):.0f}x vs "
              f"scikit-learn CART+CV (target >= 100x; the paper: 19.5x)")


def part_c(data_dir, quick):
    from treelearn.experiments.pruning import PAPER_DATASETS
    from treelearn.learn.greedy.estimator import grow_greedy
    from treelearn.prune.bounds import as_shape, tight_partitioning_sequences, partitioning_functions_upper_bound
    from treelearn.prune.pruners import prune_with_bound

    print("\n(c) the tight bound by exact convolutions")
    X, y, C = _load("topk/credit-card", data_dir)
    Xtr, Xte, ytr, yte = _split(X, y)
    tree = grow_greedy(Xtr, ytr, C, criterion="gini", max_leaves=40)
    m = len(ytr)
    shape = as_shape(tree)
    l = tree.n_features
    for M in ((m,) if quick else (m, 2 * m)):
        t0 = time.perf_counter()
        tight = tight_partitioning_sequences(shape, M, l, 2, only_last=True)[2]
        tt = time.perf_counter() - t0
        loose = partitioning_functions_upper_bound(shape, M, l, 2, loose=True)[1]
        print(f"40-leaf credit-card tree (depth {tree.depth}), l = {l}, M = {M}: tight π^2 in {tt:.2f} s "
              f"(target < 10 s); ln π^2 tight {math.log(tight):.1f} vs loose {math.log(loose):.1f}", flush=True)
    print("pruning with the tight bound, one split per dataset (40-leaf trees):")
    print(f"{'dataset':28s} {'classes':>7s} {'loose s':>9s} {'tight s':>9s} {'leaves loose':>12s} {'tight':>6s} "
          f"{'acc loose':>9s} {'tight':>6s}")
    names = [("uci/wine", "Wine"), ("uci/iris", "Iris")] if quick else PAPER_DATASETS
    for name, label in names:
        try:
            X, y, C = _load(name, data_dir)
        except Exception as exc:
            print(f"{label:28s} skipped: {exc}")
            continue
        Xtr, Xte, ytr, yte = _split(X, y)
        tree = grow_greedy(Xtr, ytr, C, criterion="gini", max_leaves=40)
        t0 = time.perf_counter()
        pl = prune_with_bound(tree)
        tl = time.perf_counter() - t0
        t0 = time.perf_counter()
        pt = prune_with_bound(tree, loose=False)
        tt = time.perf_counter() - t0
        print(f"{label:28s} {C:7d} {tl:9.4f} {tt:9.2f} {pl.n_leaves:12d} {pt.n_leaves:6d} "
              f"{np.mean(pl.predict(Xte) == yte):9.3f} {np.mean(pt.predict(Xte) == yte):6.3f}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", default="abc")
    args = ap.parse_args(argv)
    from treelearn.datasets import default_data_dir

    data_dir = args.data_dir or default_data_dir()
    if "a" in args.parts:
        part_a(data_dir, args.repeat, args.quick)
    if "b" in args.parts:
        part_b(data_dir, args.repeat, args.quick)
    if "c" in args.parts:
        part_c(data_dir, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
