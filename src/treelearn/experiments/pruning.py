"""Table 1 of paper 002 (§6): pruning a greedy tree by the Shawe-Taylor bound vs CART and M-CART.

Protocol (§6.2): for every real-valued dataset, 25 random 75/25 splits; on the training part a
greedy tree (Gini, best-first until pure or 40 leaves) is grown and

* **Original** — kept as is;
* **CART** — pruned by cost-complexity pruning, α chosen by 10-fold CV on the training part as
  :class:`~treelearn.PrunedTreeClassifier` chooses it (stratified shuffled folds, Breiman's
  geometric means of the weakest-link α's, the tree pruned along its weakest-link sequence);
* **M-CART** — the same with complexity (d/m) ln(m/d), d = L ln(L l);
* **CART-paper**, **M-CART-paper** — α chosen as the paper's experiments choose it and the tree
  pruned in one pass by its unpruned coefficients (protocol a, see
  :mod:`treelearn.experiments.pruning_paper`): the source of the paper's collapsed splits;
* **CART-WL**, **M-CART-WL** — the same α, the tree pruned along its weakest-link sequence
  (protocol b: never collapses a strong split whose subtree was merely large);
* **Bound** — pruned by the Shawe-Taylor bound with the loose partitioning bound (δ = 0.05,
  r = 2^-13.7), no cross-validation;
* **Bound-tight** (``--tight``) — the same with the tight bound of Eq. (7) (exact convolutions).

Writes ``results.csv`` (one row per dataset, split and model), ``summary.csv``, ``table1.md``
(mean ± std test accuracy; best up to 0.0025 in bold, as in the paper) and ``table1.png``, and
prints the headline per CART protocol: on how many datasets Bound is best or within 0.0025 of the
best, its mean accuracy gain over CART, and how much faster it prunes than CART with CV. On the
paper's datasets ``table1.md`` also sets the paper's CART and "Ours" columns (Table 1, kept as data
in :mod:`~treelearn.experiments.pruning_paper`) beside ours, with the number of splits whose
pruned tree kept at most 2 leaves.

Run: ``treelearn experiment pruning [--data-dir DIR] [--out-dir DIR] [--quick] [--splits N] [--tight]``.
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from treelearn.experiments._common import experiment_parser, pyplot, save_figure
from treelearn.experiments.pruning_paper import PAPER_HEADLINE, PROTOCOLS, TIE, best_or_tied, comparison_lines
from treelearn.experiments.pruning_paper import headline as headline_counts

#: the 19 datasets of Table 1 (our names in the data directory) with the paper's labels
PAPER_DATASETS = [
    ("uci/breast-cancer-wisconsin-diagnostic", "BCWD"),
    ("uci/cardiotocography-10", "Cardiotocography 10"),
    ("uci/climate-model-simulation-crashes", "CMSC"),
    ("uci/connectionist-bench-sonar", "CBS"),
    ("uci/diabetic-retinopathy-debrecen", "DRD"),
    ("uci/fertility", "Fertility"),
    ("uci/haberman", "Habermans Survival"),
    ("uci/image-segmentation-train", "Image Segmentation"),
    ("uci/ionosphere", "Ionosphere"),
    ("uci/iris", "Iris"),
    ("uci/parkinsons", "Parkinson"),
    ("uci/planning-relax", "Planning Relax"),
    ("uci/qsar-biodegradation", "QSAR Biodegradation"),
    ("uci/seeds", "Seeds"),
    ("uci/spambase", "Spambase"),
    ("uci/vertebral-column-3c", "Vertebral Column 3C"),
    ("uci/wall-following-robot-24", "WFR24"),
    ("uci/wine", "Wine"),
    ("uci/yeast", "Yeast"),
]
SKLEARN_DATASETS = [("sklearn/iris", "Iris (sklearn)"), ("sklearn/wine", "Wine (sklearn)"),
                    ("sklearn/breast_cancer", "Breast cancer (sklearn)")]
#: CART and M-CART with α chosen as the paper's experiments choose it, the tree then pruned in
#: one pass (protocol a) or along its weakest-link sequence (protocol b): model -> (complexity, final)
PAPER_PROTOCOL = {"CART-paper": ("leaves", "one-pass"), "M-CART-paper": ("mcart", "one-pass"),
                  "CART-WL": ("leaves", "weakest-link"), "M-CART-WL": ("mcart", "weakest-link")}
MODELS = ["Original", "CART", "M-CART", *PAPER_PROTOCOL, "Bound"]


def _load(name, data_dir):
    from treelearn.datasets import load_dataset

    X, y = load_dataset(name, data_dir)
    X = np.asarray(X, dtype=np.float64)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return X, codes.astype(np.int64), len(classes)


def run_dataset(X, y, n_classes, splits, seed, models, max_leaves=40, cv=10):
    """Per split and model: (test accuracy, leaves, pruning seconds)."""
    from sklearn.model_selection import train_test_split

    from treelearn.learn.greedy.estimator import grow_greedy

    rows = []
    for s in range(splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed + s)

        def grow(Xa, ya, wa=None):
            wa = np.ones(len(ya)) if wa is None else wa
            return grow_greedy(Xa, ya, n_classes, wa, criterion="gini", max_leaves=max_leaves)

        tree = grow(Xtr, ytr)
        for model, out, dt in _pruned_models(tree, grow, Xtr, ytr, n_classes, models, cv, seed + s):
            acc = float(np.mean(out.predict(Xte) == yte))
            rows.append((s, model, acc, out.n_leaves, dt))
    return rows


def _pruned_models(tree, grow, Xtr, ytr, n_classes, models, cv, random_state):
    """(model, pruned tree, pruning seconds) for each model of ``models`` on one split. The paper
    protocol's models share one CV (its fold trees); each is charged the CV time and its own prune."""
    from treelearn.experiments.pruning_paper import paper_cv_alphas, prune_at
    from treelearn.prune.pruners import (
        cost_complexity_pruning_path, prune_cost_complexity, prune_with_bound, select_alpha_cv,
    )

    n_features = Xtr.shape[1]
    paper = [m for m in models if m in PAPER_PROTOCOL]
    if paper:
        t0 = time.perf_counter()
        alphas = paper_cv_alphas(grow, Xtr, ytr, tree, complexities=sorted({PAPER_PROTOCOL[m][0] for m in paper}),
                                 n_features=n_features, cv=cv)
        cv_time = time.perf_counter() - t0
    for model in models:
        t0 = time.perf_counter()
        if model == "Original":
            yield model, tree, 0.0
            continue
        if model in PAPER_PROTOCOL:
            cx, final = PAPER_PROTOCOL[model]
            out = prune_at(tree, alphas[cx], cx, n_features, final)
            yield model, out, cv_time + time.perf_counter() - t0
            continue
        if model in ("CART", "M-CART"):
            cx = "leaves" if model == "CART" else "mcart"
            path = cost_complexity_pruning_path(tree, cx)
            alpha = select_alpha_cv(grow, Xtr, ytr, np.ones(len(ytr)), path, complexity=cx, n_features=n_features,
                                    cv=cv, random_state=random_state)
            out = prune_cost_complexity(tree, alpha, cx, path=path)
        elif model == "Bound":
            out = prune_with_bound(tree, n_classes=n_classes)
        elif model == "Bound-tight":
            out = prune_with_bound(tree, n_classes=n_classes, loose=False)
        else:  # pragma: no cover
            raise ValueError(model)
        yield model, out, time.perf_counter() - t0


def summarize(rows: list, models: list) -> dict:
    """Per model, from ``(split, model, accuracy, leaves, seconds)`` rows: (mean accuracy, its
    standard deviation over the splits, mean leaves, mean seconds, splits with <= 2 leaves); NaNs
    for a model without rows (Bound-tight skipped on a dataset)."""
    stats = {}
    for model in models:
        r = [row for row in rows if row[1] == model]
        if not r:
            stats[model] = (float("nan"),) * 5
            continue
        accs = np.array([row[2] for row in r])
        leaves = np.array([row[3] for row in r])
        stats[model] = (float(accs.mean()), float(accs.std()), float(leaves.mean()),
                        float(np.mean([row[4] for row in r])), int(np.sum(leaves <= 2)))
    return stats


def _bold_best(means: dict) -> set:
    return {k for k in means if best_or_tied(means, k)}


def main(argv: list[str] | None = None) -> int:
    ap = experiment_parser("pruning", __doc__.split("\n")[0],
                           quick_help="3 splits on the bundled scikit-learn datasets only",
                           data_dir_help="directory of the real datasets (uci/ ...)")
    ap.add_argument("--splits", type=int, default=None, help="random splits per dataset (default 25; quick 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-leaves", type=int, default=40)
    ap.add_argument("--cv", type=int, default=10)
    ap.add_argument("--tight", action="store_true", help="also prune with the tight bound (Eq. 7)")
    ap.add_argument("--tight-max-classes", type=int, default=3,
                    help="run Bound-tight only on datasets with at most this many classes (its exact "
                         "convolutions grow with the square of the number of classes; default 3)")
    ap.add_argument("--datasets", default=None, help="comma-separated dataset names (default: all available)")
    args = ap.parse_args(argv)

    from treelearn.datasets import default_data_dir

    splits = args.splits if args.splits is not None else (3 if args.quick else 25)
    models = MODELS + (["Bound-tight"] if args.tight else [])
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    if args.datasets:
        wanted = [d.strip() for d in args.datasets.split(",") if d.strip()]
        label = dict(PAPER_DATASETS + SKLEARN_DATASETS)
        datasets = [(d, label.get(d, d)) for d in wanted]
    elif args.quick:
        datasets = list(SKLEARN_DATASETS)
    else:
        datasets = list(PAPER_DATASETS) + list(SKLEARN_DATASETS)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    all_rows, summary, skipped = [], [], []
    for name, label in datasets:
        try:
            X, y, C = _load(name, data_dir)
        except Exception as exc:  # missing file: report and go on
            skipped.append(f"{name}: {exc}")
            continue
        t0 = time.perf_counter()
        ds_models = [m for m in models if m != "Bound-tight" or C <= args.tight_max_classes]
        rows = run_dataset(X, y, C, splits, args.seed, ds_models, args.max_leaves, args.cv)
        for s, model, acc, leaves, dt in rows:
            all_rows.append((name, label, X.shape[0], C, s, model, acc, leaves, dt))
        stats = summarize(rows, models)
        summary.append((name, label, X.shape[0], C, stats))
        print(f"{label:28s} ({X.shape[0]}, {C}) " + "  ".join(
            f"{m}={stats[m][0]:.3f}±{stats[m][1]:.3f}/{stats[m][2]:.1f}L" for m in models)
            + f"  [{time.perf_counter() - t0:.1f}s]", flush=True)

    _write_csvs(out, all_rows, summary, models)
    headline = _headline(summary, models, splits, args.max_leaves, args.cv, args.tight_max_classes)
    if skipped:
        headline.append("Skipped (not found): " + "; ".join(skipped))
    text = "# Table 1 (002): pruning by the bound vs CART and M-CART\n\n" + "\n".join(
        _table_lines(summary, models)) + "\n\n" + "\n".join(f"- {h}" for h in headline) + "\n"
    beside = comparison_lines(summary)
    if beside:
        text += "\n## The paper's numbers beside ours\n\n" + "\n".join(beside) + "\n"
    (out / "table1.md").write_text(text)
    print("\n".join(headline))
    if summary:
        _plot(summary, models, splits, args.max_leaves, out / "table1.png")
    print(f"wrote {out / 'results.csv'}, {out / 'summary.csv'}, {out / 'table1.md'}, {out / 'table1.png'}")
    return 0


def _write_csvs(out: Path, all_rows: list, summary: list, models: list) -> None:
    """results.csv (a row per dataset, split and model) and summary.csv (means per dataset and model)."""
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dataset", "label", "n_examples", "n_classes", "split", "model", "test_accuracy", "n_leaves",
                    "prune_seconds"])
        w.writerows(all_rows)
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dataset", "label", "n_examples", "n_classes", "model", "mean_accuracy", "std_accuracy",
                    "mean_leaves", "mean_prune_seconds", "splits_le2_leaves"])
        for name, label, n, C, stats in summary:
            for m in models:
                w.writerow([name, label, n, C, m, *[f"{v:.6g}" for v in stats[m]]])


def _table_lines(summary: list, models: list) -> list[str]:
    """The markdown tables, like Table 1: accuracies (the best in bold), then leaves and pruning time."""
    lines = ["| Dataset | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for name, label, n, C, stats in summary:
        bold = _bold_best({m: stats[m][0] for m in models if np.isfinite(stats[m][0])})
        cells = []
        for m in models:
            c = f"{stats[m][0]:.3f} ± {stats[m][1]:.3f}" if np.isfinite(stats[m][0]) else "n/a"
            cells.append(f"**{c}**" if m in bold else c)
        lines.append(f"| {label} ({n}, {C}) | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| Dataset | " + " | ".join(f"{m} leaves" for m in models) + " | "
                 + " | ".join(f"{m} prune s" for m in models if m != "Original") + " |")
    lines.append("|---|" + "---|" * (2 * len(models) - 1))
    for name, label, n, C, stats in summary:
        lines.append(f"| {label} | " + " | ".join(f"{stats[m][2]:.1f}" for m in models) + " | "
                     + " | ".join(f"{stats[m][3]:.4f}" for m in models if m != "Original") + " |")
    return lines


def _headline(summary: list, models: list, splits: int, max_leaves: int, cv: int, tight_max_classes: int) -> list[str]:
    """The headline numbers against the paper's, over the paper's datasets when present, else all:
    for each CART protocol run, the paper's counts (Bound best or tied, its gain over CART)."""
    paper_names = {d for d, _ in PAPER_DATASETS}
    pool = [s for s in summary if s[0] in paper_names] or summary
    if not pool:
        return []
    ph = PAPER_HEADLINE
    headline = [f"Datasets: {len(pool)}; splits: {splits}; max_leaves: {max_leaves}."]
    for proto, cart, mcart in PROTOCOLS:
        if not all(m in models for m in ("Original", cart, mcart, "Bound")):
            continue
        h = headline_counts([{m: s[4][m][0] for m in models} for s in pool], cart, mcart, "Bound")
        headline.append(
            f"CART {proto}: Bound best or within {TIE} of best: {h['best_without_original']}/{h['n']} excluding "
            f"Original (paper {ph['best_without_original']}/19), {h['best_with_original']}/{h['n']} including it "
            f"(paper {ph['best_with_original']}/19); mean accuracy gain of Bound over {cart}: "
            f"{h['gain_over_cart']:+.2f} points (paper {ph['gain_over_cart']:+.2f}), {mcart} over {cart}: "
            f"{h['mcart_gain_over_cart']:+.2f} (paper {ph['mcart_gain_over_cart']:+.2f}).")
    for cart in ("CART-paper", "CART"):
        if cart in models and "Bound" in models:
            speed = np.mean([s[4][cart][3] / max(s[4]["Bound"][3], 1e-9) for s in pool])
            leaves_ratio = np.mean([s[4]["Bound"][2] / max(s[4][cart][2], 1e-9) for s in pool])
            headline.append(f"Pruning time, {cart} with {cv}-fold CV / Bound: {speed:.1f}x on average (paper "
                            f"{ph['speedup']}x); leaves kept, Bound / {cart}: {leaves_ratio:.2f}x on average "
                            "(paper: CART keeps ~3x fewer).")
    tpool = [s for s in pool if "Bound-tight" in s[4] and np.isfinite(s[4]["Bound-tight"][0])]
    if tpool:
        gt = 100 * np.mean([s[4]["Bound-tight"][0] - s[4]["Bound"][0] for s in tpool])
        headline.append(
            f"Tight vs loose bound pruning on {len(tpool)} datasets (<= {tight_max_classes} classes): "
            f"{gt:+.2f} points; mean leaves {np.mean([s[4]['Bound-tight'][2] for s in tpool]):.1f} vs "
            f"{np.mean([s[4]['Bound'][2] for s in tpool]):.1f}; mean pruning time "
            f"{np.mean([s[4]['Bound-tight'][3] for s in tpool]):.2f} s vs "
            f"{np.mean([s[4]['Bound'][3] for s in tpool]):.4f} s.")
    return headline


def _plot(summary: list, models: list, splits: int, max_leaves: int, path: Path) -> None:
    """Mean test accuracy and mean leaves per dataset and model, as bars."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(14, max(4, 0.35 * len(summary) + 1)))
    ypos = np.arange(len(summary))
    hgt = 0.8 / len(models)
    for i, m in enumerate(models):
        axes[0].barh(ypos + i * hgt, [s[4][m][0] for s in summary], height=hgt,
                     xerr=[s[4][m][1] for s in summary], label=m)
        axes[1].barh(ypos + i * hgt, [s[4][m][2] for s in summary], height=hgt, label=m)
    for ax in axes:
        ax.set_yticks(ypos + 0.4 - hgt / 2)
        ax.set_yticklabels([s[1] for s in summary])
        ax.invert_yaxis()
    axes[0].set_xlabel(f"mean test accuracy ({splits} split{'s' if splits != 1 else ''})")
    axes[0].set_xlim(0.3, 1.0)
    axes[1].set_xlabel("mean leaves")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(models), fontsize=9)
    fig.suptitle("Pruning a greedy Gini tree (<= %d leaves): bound vs CART vs M-CART" % max_leaves)
    save_figure(fig, path, dpi=110, rect=(0, 0.05, 1, 1))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
