"""The separation of 000 §4 (issue 6, experiment b): top-down heuristics on f_{ℓ,k}.

f_{ℓ,k}(x, y) = TRIBES'_ℓ(x) ∨ (REST_ℓ(x) ∧ MAJ_k(y)) (:func:`treelearn.datasets.lower_bound_function`)
is within Pr[REST]/2 of TRIBES_ℓ, which a tree of size <= 2^ℓ computes; 000 Lemma 4.2 says
top-down heuristics still have error >= 0.49 at size 2^{c·k/log k} when c1/√k >= log ℓ/ℓ
(Eq. 2). For each ℓ (k from Eq. 2 with c1 = ``--c1``: k = ⌈(c1·ℓ/log2 ℓ)²⌉), the error of
greedy top-down (entropy, Gini, Kearns–Mansour: :class:`treelearn.GreedyTreeClassifier`,
best-first with ``max_leaves = t``, trained on ``--train`` uniform examples) and of
BuildTopDownDT_Inf (membership queries, ``--influence-samples`` points per leaf) against the size
t, on ``--test`` fresh uniform points, beside the error and size of the TRIBES_ℓ tree.

ℓ grows through ``--ls`` until one ℓ takes longer than ``--budget`` seconds (default 600: the
largest ℓ that runs in 10 minutes). ``--construction refined`` (default) tunes Pr[REST] to the
paper's 0.001 with extra literals; ``terms`` is the paper's literal construction (m' of m terms),
whose Pr[REST] is far from 0.001 at small ℓ.

Outputs (``--out-dir``, default ``results/queries-separation``): ``curves.csv``, ``functions.csv``,
``queries_separation.png``.

    treelearn experiment queries-separation [--quick] [--ls 8 12 16 20 24 28 32] [--c1 1.0]
"""
from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import numpy as np

from treelearn.experiments._common import experiment_parser, pyplot, save_figure

CRITERIA = ("entropy", "gini", "kearns_mansour")


def k_for(l, c1):
    return max(1, int(math.ceil((c1 * l / math.log2(l)) ** 2)))


def run_l(l, k, construction, sizes, n_train, n_test, inf_samples, seed):
    from treelearn import GreedyTreeClassifier
    from treelearn.datasets import lower_bound_function, tribes_tree
    from treelearn.learn.queries import _random_pm1, top_down_influence

    f = lower_bound_function(l, k, p_rest=0.001 if construction == "refined" else None)
    n = l + k
    rng = np.random.default_rng([seed, l, k])
    zero = np.zeros(n, dtype=np.int8)
    Xtr = _random_pm1(rng, n_train, zero)
    ytr = f(Xtr)
    Xte = _random_pm1(rng, n_test, zero)
    yte = f(Xte)
    info = dict(f.info)
    tt = tribes_tree(n, info["width"], info["n_terms"])
    info.update(n=n, tribes_tree_leaves=tt.n_leaves, tribes_tree_test_error=float(np.mean(tt.predict(Xte) != yte)))
    rows = []
    sizes = [t for t in sizes if t <= 2 ** min(l + 2, 30)]
    for crit in CRITERIA:
        for t in sizes:
            clf = GreedyTreeClassifier(criterion=crit, max_leaves=t).fit(Xtr, ytr)
            rows.append({"l": l, "k": k, "method": crit, "size": t, "leaves": clf.get_n_leaves(),
                         "error": float(np.mean(clf.predict(Xte) != yte))})
    snaps = top_down_influence(f, max(sizes), return_sizes=sizes, influence="sampled", n_samples=inf_samples,
                               random_state=seed)
    for t in sizes:
        rows.append({"l": l, "k": k, "method": "influence", "size": t, "leaves": snaps[t].n_leaves,
                     "error": float(np.mean(snaps[t].predict(Xte) != yte))})
    return rows, info


def plot(curves, funcs, path):
    plt = pyplot()

    ls = [fi["l"] for fi in funcs]
    fig, axes = plt.subplots(1, len(ls), figsize=(4.5 * len(ls), 4), squeeze=False)
    for ax, fi in zip(axes[0], funcs):
        l = fi["l"]
        for m in (*CRITERIA, "influence"):
            pts = sorted((r["size"], r["error"]) for r in curves if r["l"] == l and r["method"] == m)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=f"top-down {m}")
        ax.plot([fi["tribes_tree_leaves"]], [fi["tribes_tree_test_error"]], "k*", ms=10,
                label=f"TRIBES tree ({fi['tribes_tree_leaves']} leaves)")
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 0.55)
        ax.set_xlabel("tree size t")
        ax.set_ylabel("test error")
        ax.set_title(f"f_(l={l}, k={fi['k']}), Pr[REST] = {fi['p_rest']:.4f}")
        ax.legend(fontsize=7)
    save_figure(fig, path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("queries-separation", __doc__,
                           quick_help="l in {8, 12}, sizes up to 64, small samples",
                           data_dir_help="unused (synthetic targets)")
    ap.add_argument("--ls", type=int, nargs="+", default=[8, 12, 16, 20, 24, 28, 32, 40])
    ap.add_argument("--c1", type=float, default=1.0)
    ap.add_argument("--construction", choices=["refined", "terms"], default="refined")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    ap.add_argument("--train", type=int, default=200_000)
    ap.add_argument("--test", type=int, default=100_000)
    ap.add_argument("--influence-samples", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=600.0, help="stop after the first l taking longer (s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        args.ls, args.sizes, args.train, args.test, args.influence_samples = [8, 12], [1, 2, 4, 8, 16, 32, 64], \
            30_000, 20_000, 300
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    curves, funcs = [], []
    for l in args.ls:
        k = k_for(l, args.c1)
        t0 = time.perf_counter()
        rows, info = run_l(l, k, args.construction, args.sizes, args.train, args.test, args.influence_samples,
                           args.seed)
        sec = time.perf_counter() - t0
        info["seconds"] = sec
        curves += rows
        funcs.append(info)
        best = {m: min(r["error"] for r in rows if r["method"] == m) for m in (*CRITERIA, "influence")}
        print(f"l={l} k={k} n={info['n']}: {sec:.0f}s, Pr[REST]={info['p_rest']:.4f}, TRIBES tree "
              f"{info['tribes_tree_leaves']} leaves error {info['tribes_tree_test_error']:.4f}; top-down best error "
              + ", ".join(f"{m} {e:.3f}" for m, e in best.items()), flush=True)
        if sec > args.budget:
            print(f"l = {l} took {sec:.0f}s > budget {args.budget:.0f}s: stopping")
            break
    with open(out / "curves.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(curves[0]))
        w.writeheader()
        w.writerows(curves)
    with open(out / "functions.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(funcs[0]))
        w.writeheader()
        w.writerows(funcs)
    plot(curves, funcs, out / "queries_separation.png")
    print(f"wrote {out / 'curves.csv'}, {out / 'functions.csv'}, {out / 'queries_separation.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
