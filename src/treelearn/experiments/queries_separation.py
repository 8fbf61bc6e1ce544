"""The separation of 000 §4 (experiment b): top-down heuristics on f_{ℓ,k}.

f_{ℓ,k}(x, y) = TRIBES'_ℓ(x) ∨ (REST_ℓ(x) ∧ MAJ_k(y)) (:func:`treelearn.datasets.lower_bound_function`)
is within Pr[REST]·Pr[MAJ_k = 0] of TRIBES_ℓ, which a tree of size <= 2^ℓ computes (000 Prop. 4.1);
000 Lemma 4.2 says top-down heuristics still have error >= 0.49 at size 2^{c2·k/log k} when
c1/√k >= log ℓ/ℓ (Eq. 2), because the y's distract them: at the root a y has influence
Pr[REST]·Inf(MAJ_k) ≈ 0.001·0.8/√k, an x about 2^{−w} ≈ ln ℓ/ℓ (Claim 4.3). That needs ℓ in the
ten-thousands and more, far beyond sampled training, so the default mode is exact.

**Exact mode** (default; :mod:`treelearn.experiments.separation_exact`). For ℓ = w·m with m the
number of width-w terms making Pr[TRIBES_ℓ] closest to 1/2 (``--widths``, default w = 8, 10, …, 24,
i.e. ℓ from 1416 to 2.8·10^8; at such ℓ the paper's construction has Pr[REST] = 0.001 ± 2^{−w−1},
whereas at powers of two Pr[TRIBES_ℓ] is up to 0.13 off 1/2 and Pr[REST] far from 0.001), k from
Eq. (2) with equality, k = ⌈(c1·ℓ/log2 ℓ)²⌉ with ``--c1`` (default 0.001, small enough that a y
beats every x at the root: the ratio of their influences is reported), the paper's ("terms")
construction: BuildTopDownDT with entropy, Gini and Kearns–Mansour (000 Fig. 1, as
:class:`treelearn.GreedyTreeClassifier` with ``max_leaves``) and BuildTopDownDT_Inf (000 Fig. 2, as
:func:`treelearn.learn.queries.top_down_influence` with exact influences) are *simulated exactly*
on the uniform distribution, to sizes 1, 2, 4, …, 2^18 (``--sizes``): f restricted to a path is
described by a handful of counts (live terms by number of free variables, free/fixed y's), and
its mean, every variable's influence and every purity gain are closed-form products of these
counts, so each split is the learner's split (lowest variable index and oldest leaf on ties; the
small-ℓ tests check the simulator against the real learners on full truth tables) and the error
Σ_leaves 2^{−depth}·min(μ, 1 − μ) is exact — no sampling. Reported per size: the error, the
probability mass of leaves whose path queries no x-variable, the numbers of x- and y-splits. A
control row (``gini on TRIBES_l``) runs the Gini heuristic on TRIBES_ℓ itself (no y's): at every
size a computer can reach it is also near 1/2, since the exact TRIBES_ℓ tree has
(w^{m+1} − 1)/(w − 1) ≈ 2^{m·log2 w} leaves (reported as ``log2_tribes_tree_leaves``). ℓ stops
growing after the first ℓ taking longer than ``--budget`` seconds.

**Sampled mode** (``--sampled``, the former experiment): for ℓ in ``--ls`` (default 8 … 40),
the learners trained on ``--train`` uniform examples (influences from ``--influence-samples``
queries per leaf), error on ``--test`` fresh points; ``--construction refined`` (default there)
tunes Pr[REST] to 0.001 with extra literals E. (The exact mode accepts ``--construction refined``
but defaults to the paper's: at large ℓ the refined REST is a single term, Pr[REST] <= 2^{−w−1}
≪ 0.001, so no literal is added; where E-literals are added, each has influence ≈ Pr[REST], more
than any y's Pr[REST]·Inf(MAJ_k), and they are queried before the y's.)

Outputs (``--out-dir``, default ``results/queries-separation``): ``curves.csv``, ``functions.csv``,
``queries_separation.png``.

    treelearn experiment queries-separation [--quick] [--widths 8 10 12] [--c1 0.001] [--sizes ...]
    treelearn experiment queries-separation --sampled [--quick] [--ls 8 12 16] [--c1 1.0]
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
    from treelearn.learn.queries import random_pm1, top_down_influence

    f = lower_bound_function(l, k, p_rest=0.001 if construction == "refined" else None)
    n = l + k
    rng = np.random.default_rng([seed, l, k])
    zero = np.zeros(n, dtype=np.int8)
    Xtr = random_pm1(rng, n_train, zero)
    ytr = f(Xtr)
    Xte = random_pm1(rng, n_test, zero)
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


EXACT_METHODS = (*CRITERIA, "influence")
CONTROL = "gini on TRIBES_l"


def run_exact(l, k, construction, sizes, c1):
    """Exact curves of the four heuristics (and the control) on f_{ℓ,k}; returns (rows, info)."""
    from treelearn.experiments.separation_exact import Structure, root_scores, simulate_topdown

    s = Structure.paper(l, k, construction)
    rs = root_scores(s)
    info = {"l": l, "k": k, "c1": c1, "width": s.w, "n_terms": s.m, "n_terms_prime": s.mp, "extra_literals": s.r,
            "construction": s.construction, "p_tribes": s.p_tribes, "p_rest": s.p_rest,
            "p_maj_negative": s.p_maj_negative, "tribes_tree_error": s.tribes_tree_error,
            "log2_tribes_tree_leaves": s.log2_tribes_tree_leaves, "log2_size_bound": l,
            "eq2_lhs_c1_over_sqrt_k": c1 / math.sqrt(k), "eq2_rhs_log2l_over_l": math.log2(l) / l,
            "root_delta_x": rs["delta_x"], "root_delta_y": rs["delta_y"], "root_ratio_y_x": rs["ratio_y_x"],
            "root_first": "y" if rs["ratio_y_x"] > 1 else "x"}
    rows = []
    control = Structure(s.l, s.k, s.w, s.m, s.m, 0, "tribes")  # every term in A, no REST: f = TRIBES_l
    for method in (*EXACT_METHODS, CONTROL):
        t0 = time.perf_counter()
        res = simulate_topdown(control, "gini", sizes) if method == CONTROL else simulate_topdown(s, method, sizes)
        sec = time.perf_counter() - t0
        for r in res:
            rows.append({"l": l, "k": k, "method": method, **r, "seconds": round(sec, 3)})
    return rows, info


def plot_exact(curves, funcs, path):
    """One panel per ℓ: exact error against size (solid, left axis), the TRIBES_ℓ tree's error and
    1/2 (horizontal lines), and the mass of leaves whose path queries no x (dotted, right axis)."""
    plt = pyplot()

    ncols = min(3, len(funcs))
    nrows = -(-len(funcs) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    for ax in axes.flat[len(funcs):]:
        ax.set_visible(False)
    colors = dict(zip(EXACT_METHODS, ("C0", "C1", "C2", "C3")))
    for ax, fi in zip(axes.flat, funcs):
        l = fi["l"]
        ax2 = ax.twinx()
        for m in (*EXACT_METHODS, CONTROL):
            pts = sorted((r["size"], r["error"], r["mass_no_x"]) for r in curves if r["l"] == l and r["method"] == m)
            xs = [p[0] for p in pts]
            if m == CONTROL:
                ax.plot(xs, [p[1] for p in pts], "k--", lw=1, label=m)
                continue
            ax.plot(xs, [p[1] for p in pts], "o-", color=colors[m], ms=2.5, lw=1, label=f"top-down {m}")
            ax2.plot(xs, [p[2] for p in pts], ":", color=colors[m], lw=1.2)
        ax.axhline(0.5, color="grey", lw=0.6)
        ax.axhline(fi["tribes_tree_error"], color="k", lw=0.8, ls="-.",
                   label=f"TRIBES_l tree (2^{fi['log2_tribes_tree_leaves']:.4g} leaves)")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 0.55)
        ax.set_xlabel("tree size t (leaves)")
        ax.set_ylabel("exact error (solid)")
        ax2.set_ylim(-0.03, 1.03)
        ax2.set_ylabel("mass of leaves with no x queried (dotted)", fontsize=7)
        ax.set_title(f"l={l} (w={fi['width']}), k={k_label(fi['k'])}, Pr[REST]={fi['p_rest']:.4f}\n"
                     f"root influence y/x = {fi['root_ratio_y_x']:.2f}", fontsize=9)
        ax.legend(fontsize=6, loc="center left")
    save_figure(fig, path, dpi=110)


def k_label(k):
    return str(k) if k < 10**6 else f"{k:.3g}"


def _write_csv(path, rows):
    fields = []
    for r in rows:
        fields += [c for c in r if c not in fields]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("queries-separation", __doc__,
                           quick_help="exact: w in {8, 12, 16}, sizes up to 2^10; sampled: l in {8, 12}, "
                                      "sizes up to 64, small samples",
                           data_dir_help="unused (synthetic targets)")
    ap.add_argument("--sampled", action="store_true", help="the sampled experiment (learners trained on examples)")
    ap.add_argument("--widths", type=int, nargs="+", default=None,
                    help="exact mode: term widths w, l = w*m with Pr[TRIBES_l] closest to 1/2 (default 8 10 ... 24)")
    ap.add_argument("--ls", type=int, nargs="+", default=None,
                    help="explicit l values (sampled default 8 12 16 20 24 28 32 40; exact: overrides --widths)")
    ap.add_argument("--c1", type=float, default=None, help="Eq. (2) constant (default exact 0.001, sampled 1.0)")
    ap.add_argument("--construction", choices=["refined", "terms"], default=None,
                    help="default exact: terms (the paper's), sampled: refined")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="tree sizes (default exact 2^0..2^18, sampled 1..1024)")
    ap.add_argument("--train", type=int, default=200_000)
    ap.add_argument("--test", type=int, default=100_000)
    ap.add_argument("--influence-samples", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=600.0, help="stop after the first l taking longer (s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.sampled:
        return main_sampled(args)
    from treelearn.experiments.separation_exact import balanced_l

    c1 = 0.001 if args.c1 is None else args.c1
    construction = args.construction or "terms"
    sizes = args.sizes or [2**i for i in range(19)]
    widths = args.widths or list(range(8, 25, 2))
    if args.quick:
        widths, sizes = [8, 12, 16], [2**i for i in range(11)]
    ls = args.ls or [balanced_l(w) for w in widths]
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    curves, funcs = [], []
    for l in ls:
        k = k_for(l, c1)
        t0 = time.perf_counter()
        rows, info = run_exact(l, k, construction, sizes, c1)
        sec = time.perf_counter() - t0
        info["seconds"] = round(sec, 2)
        curves += rows
        funcs.append(info)
        last = {r["method"]: r for r in rows if r["size"] == max(sizes)}
        print(f"l={l} (w={info['width']}) k={k}: {sec:.0f}s, Pr[REST]={info['p_rest']:.5f}, TRIBES tree error "
              f"{info['tribes_tree_error']:.5f} at 2^{info['log2_tribes_tree_leaves']:.5g} leaves, root y/x "
              f"{info['root_ratio_y_x']:.3f}; at size {max(sizes)}: "
              + ", ".join(f"{m} {r['error']:.4f} (no-x mass {r['mass_no_x']:.3f})" for m, r in last.items()),
              flush=True)
        if sec > args.budget:
            print(f"l = {l} took {sec:.0f}s > budget {args.budget:.0f}s: stopping")
            break
    _write_csv(out / "curves.csv", curves)
    _write_csv(out / "functions.csv", funcs)
    plot_exact(curves, funcs, out / "queries_separation.png")
    print(f"wrote {out / 'curves.csv'}, {out / 'functions.csv'}, {out / 'queries_separation.png'}")
    return 0


def main_sampled(args) -> int:
    args.ls = args.ls or [8, 12, 16, 20, 24, 28, 32, 40]
    args.c1 = 1.0 if args.c1 is None else args.c1
    args.construction = args.construction or "refined"
    args.sizes = args.sizes or [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
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
