"""``treelearn demo`` (``make demo``): a tour of the five papers' learners on real data.

1. greedy top-down trees (paper 000) vs scikit-learn's ``DecisionTreeClassifier``;
2. the Top-k path (paper 003): k = 1 (greedy) up to k = all (the optimal depth-h tree), with
   accuracy and time per k; the optimal tree vs the greedy one;
3. a minimum-rank consistent tree (paper 001, FINDMIN) with its rank and the sample size
   Theorem 2 asks for that rank;
4. pruning by a generalization bound (paper 002) vs CART cost-complexity pruning with
   cross-validation: accuracy, leaves and time;
5. a tree learned from membership queries of a hidden tree (paper 004, BuildDT), recovered exactly.

It prints one summary table and writes ``demo.png`` (the figure) and ``demo.html`` (every tree,
interactive) to the output directory. The data are scikit-learn's bundled datasets, plus the
MONK's-1 problem from the data directory when it is there (otherwise a synthetic rank-2 sample).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["run_demo"]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_demo(*, out_dir="results/demo", data_dir=None, random_state: int = 0, quick: bool = False,
             console=None) -> dict:
    """Run the tour; returns ``{"rows": [...summary rows...], "png": path, "html": path, ...}``."""
    from rich.console import Console
    from rich.table import Table
    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    import treelearn as tl
    from treelearn.datasets.boolean import random_tree
    from treelearn.learn.queries import dist
    from treelearn.tree.html import export_html_page

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    console = console or Console(width=None if sys.stdout.isatty() else 120, highlight=False)
    rows: list[dict] = []
    trees: list[tuple] = []

    def add(section, learner, data, acc, leaves, depth, seconds, note=""):
        rows.append(dict(section=section, learner=learner, data=data, accuracy=acc, leaves=leaves, depth=depth,
                         seconds=seconds, note=note))

    # ---------------------------------------------------------------- 1. greedy vs scikit-learn
    bc = load_breast_cancer(as_frame=True)
    Xb = bc.data
    yb = np.asarray(bc.target_names)[bc.target.to_numpy()]
    Xtr, Xte, ytr, yte = train_test_split(Xb, yb, test_size=0.3, stratify=yb, random_state=random_state)
    console.print(f"[bold]breast cancer[/bold] (scikit-learn): {Xb.shape[0]} rows, {Xb.shape[1]} numeric features; "
                  f"stratified split {len(ytr)} train / {len(yte)} test")
    depth = 4
    greedy = {}
    for crit in ("entropy", "gini"):
        est, t = _timed(lambda: tl.GreedyTreeClassifier(criterion=crit, max_depth=depth).fit(Xtr, ytr))
        sk, tsk = _timed(lambda: DecisionTreeClassifier(criterion=crit, max_depth=depth,
                                                        random_state=random_state).fit(Xtr, ytr))
        greedy[crit] = est
        add("greedy (000)", f"GreedyTreeClassifier {crit}", "breast cancer", est.score(Xte, yte), est.tree_.n_leaves,
            est.tree_.depth, t, f"depth <= {depth}")
        add("greedy (000)", f"sklearn DecisionTree {crit}", "breast cancer", sk.score(Xte, yte), int(sk.get_n_leaves()),
            int(sk.get_depth()), tsk, "same limits")
    trees.append(("Greedy entropy tree, breast cancer (paper 000)", greedy["entropy"]))

    # ---------------------------------------------------------------- 2. Top-k path and the optimal tree
    h = 3
    n_bin = 24 if quick else 40
    ks = [1, 2, 4] if quick else [1, 2, 3, 5, 8, 16]
    path = []
    for k in ks:
        est, t = _timed(lambda: tl.TopKTreeClassifier(k=k, max_depth=h, max_binary_features=n_bin,
                                                      time_limit=30, random_state=random_state).fit(Xtr, ytr))
        path.append(dict(k=str(k), train=est.score(Xtr, ytr), test=est.score(Xte, yte), seconds=t,
                         timed_out=bool(getattr(est, "timed_out_", False))))
    opt, t_opt = _timed(lambda: tl.OptimalTreeClassifier(max_depth=h, max_binary_features=n_bin, time_limit=60,
                                                         random_state=random_state).fit(Xtr, ytr))
    path.append(dict(k="all", train=opt.score(Xtr, ytr), test=opt.score(Xte, yte), seconds=t_opt,
                     timed_out=bool(getattr(opt, "timed_out_", False))))
    for p in path:
        add("Top-k (003)", f"Top-k k = {p['k']}" if p["k"] != "all" else "Optimal (k = all)", "breast cancer",
            p["test"], None, h, p["seconds"], f"train {p['train']:.4f}" + (" (timed out)" if p["timed_out"] else ""))
    g3 = tl.GreedyTreeClassifier(criterion="entropy", max_depth=h).fit(Xtr, ytr)
    add("Top-k (003)", f"greedy depth {h} (reference)", "breast cancer", g3.score(Xte, yte), g3.tree_.n_leaves,
        g3.tree_.depth, None, f"train {g3.score(Xtr, ytr):.4f}")
    optimal_note = (f"optimal over {n_bin} binary features: " +
                    ("proven optimal" if getattr(opt, "is_optimal_", False) else "not proven (limit hit)"))
    rows[-2]["note"] += "; " + optimal_note
    rows[-2]["leaves"] = opt.tree_.n_leaves
    trees.append((f"Optimal depth-{h} tree, breast cancer (paper 003, k = all)", opt, optimal_note))

    # ---------------------------------------------------------------- 3. minimum-rank consistent tree
    mr_data = None
    try:
        from treelearn.datasets.loaders import load_dataset

        Xm, ym = load_dataset("benchmark/monk-1-binary", data_dir)
        mr_data = "MONK's-1 (binary)"
    except Exception:  # the data directory is optional
        from treelearn.datasets.rank import make_rank_tree_sample

        Xm, ym, _target = make_rank_tree_sample(12, 2, 400, random_state=random_state)
        mr_data = "synthetic rank-2 sample"
        console.print("[dim]MONK's-1 not found in the data directory: the min-rank step uses a synthetic sample[/dim]")
    Xm = np.asarray(Xm, dtype=float)
    ym = np.asarray(ym)
    mr, t_mr = _timed(lambda: tl.MinRankTreeClassifier(time_limit=60).fit(Xm, ym))
    r = mr.tree_.rank
    n_vars = Xm.shape[1]
    m_needed = tl.eh_sample_size(n_vars, max(r, 1), 0.1, 0.05)
    add("min-rank (001)", "MinRankTreeClassifier (FINDMIN)", mr_data, mr.score(Xm, ym), mr.tree_.n_leaves,
        mr.tree_.depth, t_mr, f"rank {r}; Thm 2 (eps 0.1, delta 0.05, n {n_vars}) asks m = {m_needed}, "
                               f"sample has {len(ym)}")
    trees.append((f"Minimum-rank consistent tree (rank {r}), {mr_data} (paper 001)", mr,
                  f"Theorem 2: m = {m_needed} examples guarantee error <= 0.1 with probability 0.95 "
                  f"for rank {r} over {n_vars} variables; this sample has {len(ym)}."))

    # ---------------------------------------------------------------- 4. bound pruning vs cost-complexity
    wine = load_wine(as_frame=True)
    Xw = wine.data
    yw = np.asarray(wine.target_names)[wine.target.to_numpy()]
    Xwtr, Xwte, ywtr, ywte = train_test_split(Xw, yw, test_size=0.3, stratify=yw, random_state=random_state)
    prune_rows = []
    for how in ("bound", "ccp"):
        kw = dict(cv=5) if how == "ccp" else {}
        est, t = _timed(lambda: tl.PrunedTreeClassifier(pruning=how, max_leaves=20, random_state=random_state,
                                                        **kw).fit(Xwtr, ywtr))
        label = "bound (Shawe-Taylor, no CV)" if how == "bound" else "CART cost-complexity, 5-fold CV"
        prune_rows.append(dict(how=how, acc=est.score(Xwte, ywte), leaves=est.tree_.n_leaves, seconds=t))
        add("pruning (002)", f"PrunedTreeClassifier {how}", "wine", est.score(Xwte, ywte), est.tree_.n_leaves,
            est.tree_.depth, t, label)
        if how == "bound":
            trees.append(("Bound-pruned tree, wine (paper 002)", est))

    # ---------------------------------------------------------------- 5. membership queries
    n_q, s_q = 10, 6
    hidden = random_tree(n_q, s_q, random_state=random_state)
    qc, t_q = _timed(lambda: tl.QueryTreeClassifier(size=s_q, epsilon=0.05, mode="realizable",
                                                    random_state=random_state).fit_oracle(hidden))
    err = dist(qc.tree_, hidden)
    queries = int(qc.info_.get("queries", 0)) if isinstance(getattr(qc, "info_", None), dict) else 0
    exact = err == 0.0
    add("queries (004)", "QueryTreeClassifier (BuildDT)", f"hidden size-{s_q} tree on {{±1}}^{n_q}", 1.0 - err,
        qc.tree_.n_leaves, qc.tree_.depth, t_q,
        f"{queries} queries; " + ("recovered exactly (error 0 on all 2^10 inputs)" if exact else f"error {err:.4f}"))
    trees.append((f"Hidden tree (size {s_q})", hidden))
    trees.append(("Learned from membership queries (paper 004)", qc,
                  "identical function to the hidden tree" if exact else f"error {err:.4f}"))

    # ---------------------------------------------------------------- outputs
    table = Table(title="treelearn demo: the five papers' learners",
                  caption="accuracy on held-out test rows (min-rank: training sample, consistent by construction; "
                          "queries: agreement with the hidden tree on every input); seconds: fit time")
    for col, kw in (("paper / step", {}), ("learner", {}), ("data", {}), ("accuracy", dict(justify="right")),
                    ("leaves", dict(justify="right")), ("depth", dict(justify="right")),
                    ("seconds", dict(justify="right")), ("note", {})):
        table.add_column(col, **kw)
    for rr in rows:
        table.add_row(rr["section"], rr["learner"], rr["data"], f"{rr['accuracy']:.4f}",
                      "" if rr["leaves"] is None else str(rr["leaves"]), "" if rr["depth"] is None else str(rr["depth"]),
                      "" if rr["seconds"] is None else f"{rr['seconds']:.3f}", rr["note"])
    console.print(table)

    png = out_dir / "demo.png"
    _figure(png, rows, path, prune_rows, opt, qc, h)
    html_path = out_dir / "demo.html"
    html_path.write_text(export_html_page(
        trees, title="treelearn demo: the trees",
        intro="Every tree of the demo. Click a node to fold or unfold it; paste a sample to see its path."),
        encoding="utf-8")
    console.print(f"wrote {png} and {html_path}")
    return {"rows": rows, "topk_path": path, "png": png, "html": html_path, "rank": r, "eh_sample_size": m_needed,
            "query_error": err}


def _figure(png, rows, path, prune_rows, opt, qc, h) -> None:
    from matplotlib.ticker import MaxNLocator

    from treelearn.experiments._common import pyplot, save_figure
    from treelearn.tree.plot import plot_tree

    plt = pyplot()
    fig = plt.figure(figsize=(15, 9))
    gs = fig.add_gridspec(2, 3)
    # (a) greedy vs sklearn
    ax = fig.add_subplot(gs[0, 0])
    g = [r for r in rows if r["section"] == "greedy (000)"]
    xs = np.arange(len(g))
    ax.bar(xs, [r["accuracy"] for r in g], color=["tab:blue" if "Greedy" in r["learner"] else "tab:gray" for r in g])
    ax.set_xticks(xs, [r["learner"].replace("GreedyTreeClassifier", "treelearn").replace("sklearn DecisionTree",
                                                                                         "sklearn") for r in g],
                  rotation=20, fontsize=8)
    lo = min(r["accuracy"] for r in g)
    ax.set_ylim(max(0.0, lo - 0.05), 1.0)
    ax.set_ylabel("test accuracy")
    ax.set_title("Greedy (000) vs scikit-learn, breast cancer")
    # (b) Top-k path: accuracy and time per k
    ax = fig.add_subplot(gs[0, 1])
    labels = [p["k"] for p in path]
    xs = np.arange(len(path))
    ax.plot(xs, [p["train"] for p in path], "o-", label="train accuracy")
    ax.plot(xs, [p["test"] for p in path], "s-", label="test accuracy")
    for i, p in enumerate(path):
        if p["timed_out"]:
            ax.plot(i, p["train"], "x", color="red", ms=10, label="timed out" if i == 0 else None)
    ax.set_xticks(xs, [f"k = {k}" for k in labels], fontsize=8)
    ax.set_ylabel("accuracy")
    ax.set_title(f"Top-k path (003), depth {h}")
    ax2 = ax.twinx()
    ax2.plot(xs, [p["seconds"] for p in path], "d--", color="tab:green", label="fit time (s)")
    ax2.set_ylabel("seconds")
    ax2.set_yscale("log")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower right")
    # (c) pruning
    ax = fig.add_subplot(gs[0, 2])
    xs = np.arange(len(prune_rows))
    ax.bar(xs - 0.2, [r["acc"] for r in prune_rows], 0.4, label="test accuracy", color="tab:blue")
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("test accuracy")
    ax2 = ax.twinx()
    ax2.bar(xs + 0.2, [r["leaves"] for r in prune_rows], 0.4, label="leaves", color="tab:orange")
    ax2.set_ylabel("leaves")
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(xs, [f"{r['how']}\n{r['seconds']:.2f} s" for r in prune_rows])
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower right")
    ax.set_title("Bound pruning (002) vs CART + CV, wine")
    # (d) the optimal tree, (e) the tree learned from queries
    ax = fig.add_subplot(gs[1, :2])
    plot_tree(opt, ax=ax, fontsize=6, precision=2)
    ax.set_title(f"Optimal depth-{h} tree (003), breast cancer")
    ax = fig.add_subplot(gs[1, 2])
    plot_tree(qc, ax=ax, fontsize=6, impurity=False)
    ax.set_title("Learned from membership queries (004)")
    save_figure(fig, png)
