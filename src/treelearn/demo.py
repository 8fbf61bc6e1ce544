"""``treelearn demo`` (``make demo``): a tour of the five papers' learners on real data.

1. greedy top-down trees (paper 000) vs scikit-learn's ``DecisionTreeClassifier``;
2. the Top-k path (paper 003): k = 1 (greedy) up to k = all (the optimal depth-h tree), with
   accuracy and time per k; the optimal tree vs the greedy one; the error-size front of the
   optimal tree and the size paper 002's bound picks from it (``select="bound"``);
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


class _Tour:
    """What the sections of the tour share: the console, the summary rows and the trees shown."""

    def __init__(self, console, random_state: int, quick: bool, data_dir):
        self.console, self.random_state, self.quick, self.data_dir = console, random_state, quick, data_dir
        self.rows: list[dict] = []
        self.trees: list[tuple] = []

    def add(self, section, learner, data, acc, leaves, depth, seconds, note=""):
        self.rows.append(dict(section=section, learner=learner, data=data, accuracy=acc, leaves=leaves, depth=depth,
                              seconds=seconds, note=note))


def run_demo(*, out_dir="results/demo", data_dir=None, random_state: int = 0, quick: bool = False,
             console=None) -> dict:
    """Run the tour; returns ``{"rows": [...summary rows...], "png": path, "html": path, ...}``."""
    from rich.console import Console

    from treelearn.tree.html import export_html_page

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    console = console or Console(width=None if sys.stdout.isatty() else 150, highlight=False)
    tour = _Tour(console, random_state, quick, data_dir)
    Xtr, Xte, ytr, yte = _greedy_section(tour)
    path, opt, h = _topk_section(tour, Xtr, Xte, ytr, yte)
    chosen = _front_section(tour, Xtr, Xte, ytr, yte)
    r, m_needed = _minrank_section(tour)
    prune_rows = _pruning_section(tour)
    qc, err = _queries_section(tour)
    console.print(_summary_table(tour.rows))

    png = out_dir / "demo.png"
    _figure(png, tour.rows, path, prune_rows, opt, qc, h, chosen)
    html_path = out_dir / "demo.html"
    html_path.write_text(export_html_page(
        tour.trees, title="treelearn demo: the trees",
        intro="Every tree of the demo. Click a node to fold or unfold it; paste a sample to see its path."),
        encoding="utf-8")
    console.print(f"wrote {png} and {html_path}")
    return {"rows": tour.rows, "topk_path": path, "png": png, "html": html_path, "rank": r,
            "eh_sample_size": m_needed, "query_error": err}


def _greedy_section(tour: _Tour):
    """1. greedy vs scikit-learn on breast cancer; returns the split the Top-k section reuses."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    import treelearn as tl

    bc = load_breast_cancer(as_frame=True)
    Xb = bc.data
    yb = np.asarray(bc.target_names)[bc.target.to_numpy()]
    Xtr, Xte, ytr, yte = train_test_split(Xb, yb, test_size=0.3, stratify=yb, random_state=tour.random_state)
    tour.console.print(f"[bold]breast cancer[/bold] (scikit-learn): {Xb.shape[0]} rows, {Xb.shape[1]} numeric "
                       f"features; stratified split {len(ytr)} train / {len(yte)} test")
    depth = 4
    greedy = {}
    for crit in ("entropy", "gini"):
        est, t = _timed(lambda: tl.GreedyTreeClassifier(criterion=crit, max_depth=depth).fit(Xtr, ytr))
        sk, tsk = _timed(lambda: DecisionTreeClassifier(criterion=crit, max_depth=depth,
                                                        random_state=tour.random_state).fit(Xtr, ytr))
        greedy[crit] = est
        tour.add("greedy (000)", f"treelearn {crit}", "breast cancer", est.score(Xte, yte), est.tree_.n_leaves,
                 est.tree_.depth, t, f"depth <= {depth}")
        tour.add("greedy (000)", f"scikit-learn {crit}", "breast cancer", sk.score(Xte, yte), int(sk.get_n_leaves()),
                 int(sk.get_depth()), tsk, "same limits")
    tour.trees.append(("Greedy entropy tree, breast cancer (paper 000)", greedy["entropy"]))
    return Xtr, Xte, ytr, yte


def _topk_section(tour: _Tour, Xtr, Xte, ytr, yte):
    """2. the Top-k path and the optimal tree; returns (path, optimal estimator, depth)."""
    import treelearn as tl

    h, rs = 3, tour.random_state
    n_thr = 4 if tour.quick else 8  # quantile thresholds per column: 30 x n_thr binary features
    ks = [1, 2, 4] if tour.quick else [1, 2, 3, 5, 8, 16]
    path = []
    for k in ks:
        est, t = _timed(lambda: tl.TopKTreeClassifier(k=k, max_depth=h, max_thresholds=n_thr, max_binary_features=None,
                                                      time_limit=30, random_state=rs).fit(Xtr, ytr))
        path.append(dict(k=str(k), train=est.score(Xtr, ytr), test=est.score(Xte, yte), seconds=t,
                         leaves=est.tree_.n_leaves, timed_out=bool(getattr(est, "timed_out_", False))))
    opt, t_opt = _timed(lambda: tl.OptimalTreeClassifier(max_depth=h, max_thresholds=n_thr, max_binary_features=None,
                                                         time_limit=60, random_state=rs).fit(Xtr, ytr))
    n_bin = int(getattr(opt, "n_binary_features_", 0)) or 30 * n_thr
    path.append(dict(k="all", train=opt.score(Xtr, ytr), test=opt.score(Xte, yte), seconds=t_opt,
                     leaves=opt.tree_.n_leaves, timed_out=bool(getattr(opt, "timed_out_", False))))
    for p in path:
        tour.add("Top-k (003)", f"Top-k k = {p['k']}" if p["k"] != "all" else "Optimal (k = all)", "breast cancer",
                 p["test"], p["leaves"], h, p["seconds"],
                 f"train {p['train']:.4f}" + (" (timed out)" if p["timed_out"] else ""))
    g3 = tl.GreedyTreeClassifier(criterion="entropy", max_depth=h).fit(Xtr, ytr)
    tour.add("Top-k (003)", f"greedy depth {h}", "breast cancer", g3.score(Xte, yte), g3.tree_.n_leaves,
             g3.tree_.depth, None, f"train {g3.score(Xtr, ytr):.4f}; every threshold (reference)")
    from treelearn.learn.topk.summary import optimality_summary

    optimal_note = optimality_summary(opt) or f"over {n_bin} binary features"
    tour.rows[-2]["note"] += "; " + optimal_note
    tour.trees.append((f"Optimal depth-{h} tree, breast cancer (paper 003, k = all)", opt, optimal_note))
    return path, opt, h


def _front_section(tour: _Tour, Xtr, Xte, ytr, yte):
    """2b. the error-size fronts of the optimal trees of depth <= 3 and the depth and size paper
    002's bound picks from them (no cross-validation); returns the fitted estimator (it carries
    the front of the chosen depth)."""
    import treelearn as tl
    from treelearn.learn.topk.summary import optimality_summary

    est, t = _timed(lambda: tl.OptimalTreeClassifier(max_depth=3, max_thresholds=4, max_binary_features=None,
                                                     select="bound", time_limit=60).fit(Xtr, ytr))
    front = est.front_
    tour.console.print(f"[bold]error-size front[/bold] (depth {front.max_depth}, {est.n_binary_features_} binary "
                       "features): " + ", ".join(f"{int(n)}: {r:.4f}" for n, r in zip(front.n_leaves, front.error_rates))
                       + f" (leaves: training error rate); the bound picks {est.selected_leaves_} leaves at depth "
                       f"{est.selected_depth_} (depths 1-3 tried)")
    tour.add("front (002+003)", "Optimal, size by bound", "breast cancer", est.score(Xte, yte), est.tree_.n_leaves,
             est.tree_.depth, t, f"{est.selected_leaves_} of up to {int(front.n_leaves[-1])} leaves, depth "
             f"{est.selected_depth_} of <= 3, no CV")
    tour.trees.append(("Optimal tree of the depth and size the bound picks (depth <= 3), with its error-size front",
                       est, optimality_summary(est)))
    return est


def _minrank_section(tour: _Tour):
    """3. a minimum-rank consistent tree; returns (its rank, Theorem 2's sample size)."""
    import treelearn as tl

    try:
        from treelearn.datasets.loaders import load_dataset

        Xm, ym = load_dataset("benchmark/monk-1-binary", tour.data_dir)
        mr_data = "MONK's-1 (binary)"
    except Exception:  # the data directory is optional
        from treelearn.datasets.rank import make_rank_tree_sample

        Xm, ym, _target = make_rank_tree_sample(12, 2, 400, random_state=tour.random_state)
        mr_data = "synthetic rank-2 sample"
        tour.console.print("[dim]MONK's-1 not found in the data directory: the min-rank step uses a synthetic "
                           "sample[/dim]")
    Xm = np.asarray(Xm, dtype=float)
    ym = np.asarray(ym)
    mr, t_mr = _timed(lambda: tl.MinRankTreeClassifier(time_limit=60).fit(Xm, ym))
    r = mr.tree_.rank
    n_vars = Xm.shape[1]
    m_needed = tl.eh_sample_size(n_vars, max(r, 1), 0.1, 0.05)
    tour.add("min-rank (001)", "FINDMIN", mr_data, mr.score(Xm, ym), mr.tree_.n_leaves,
             mr.tree_.depth, t_mr, f"rank {r}; Thm 2 (eps 0.1, delta 0.05, n {n_vars}) asks m = {m_needed}, "
                                    f"sample has {len(ym)}")
    tour.trees.append((f"Minimum-rank consistent tree (rank {r}), {mr_data} (paper 001)", mr,
                       f"Theorem 2: m = {m_needed} examples guarantee error <= 0.1 with probability 0.95 "
                       f"for rank {r} over {n_vars} variables; this sample has {len(ym)}."))
    return r, m_needed


def _pruning_section(tour: _Tour) -> list[dict]:
    """4. bound pruning vs cost-complexity pruning on wine; returns a row per pruning."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split

    import treelearn as tl

    wine = load_wine(as_frame=True)
    Xw = wine.data
    yw = np.asarray(wine.target_names)[wine.target.to_numpy()]
    Xwtr, Xwte, ywtr, ywte = train_test_split(Xw, yw, test_size=0.3, stratify=yw, random_state=tour.random_state)
    prune_rows = []
    for how in ("bound", "ccp"):
        kw = dict(cv=5) if how == "ccp" else {}
        est, t = _timed(lambda: tl.PrunedTreeClassifier(pruning=how, criterion="gini", max_leaves=20,
                                                        random_state=tour.random_state,
                                                        **kw).fit(Xwtr, ywtr))
        label = "Shawe-Taylor bound, no CV" if how == "bound" else "alpha by 5-fold CV"
        prune_rows.append(dict(how=how, acc=est.score(Xwte, ywte), leaves=est.tree_.n_leaves, seconds=t))
        tour.add("pruning (002)", "bound pruning" if how == "bound" else "CART cost-complexity", "wine",
                 est.score(Xwte, ywte), est.tree_.n_leaves, est.tree_.depth, t, label)
        if how == "bound":
            tour.trees.append(("Bound-pruned tree, wine (paper 002)", est))
    return prune_rows


def _queries_section(tour: _Tour):
    """5. a hidden tree learned from membership queries; returns (the estimator, its error)."""
    import treelearn as tl
    from treelearn.datasets.boolean import random_tree
    from treelearn.learn.queries import dist

    n_q, s_q = 10, 6
    hidden = random_tree(n_q, s_q, random_state=tour.random_state)
    qc, t_q = _timed(lambda: tl.QueryTreeClassifier(size=s_q, epsilon=0.05, mode="realizable", time_limit=60,
                                                    random_state=tour.random_state).fit_oracle(hidden))
    err = dist(qc.tree_, hidden)
    queries = int(qc.info_.get("queries", 0)) if isinstance(getattr(qc, "info_", None), dict) else 0
    exact = err == 0.0
    tour.add("queries (004)", "BuildDT", f"hidden tree, {{±1}}^{n_q}", 1.0 - err,
             qc.tree_.n_leaves, qc.tree_.depth, t_q,
             f"size {s_q}, {queries} queries; " + ("recovered exactly (error 0 on all 2^10 inputs)" if exact
                                                   else f"error {err:.4f}"))
    tour.trees.append((f"Hidden tree (size {s_q})", hidden))
    tour.trees.append(("Learned from membership queries (paper 004)", qc,
                       "identical function to the hidden tree" if exact else f"error {err:.4f}"))
    return qc, err


def _summary_table(rows):
    from rich.table import Table

    table = Table(title="treelearn demo: the five papers' learners",
                  caption="accuracy on held-out test rows (min-rank: training sample, consistent by construction; "
                          "queries: agreement with the hidden tree on every input); seconds: fit time")
    for col, kw in (("paper", dict(no_wrap=True)), ("learner", dict(no_wrap=True)), ("data", dict(no_wrap=True)),
                    ("accuracy", dict(justify="right")), ("leaves", dict(justify="right")),
                    ("depth", dict(justify="right")), ("seconds", dict(justify="right")), ("note", {})):
        table.add_column(col, **kw)
    for rr in rows:
        table.add_row(rr["section"], rr["learner"], rr["data"], f"{rr['accuracy']:.4f}",
                      "" if rr["leaves"] is None else str(rr["leaves"]), "" if rr["depth"] is None else str(rr["depth"]),
                      "" if rr["seconds"] is None else f"{rr['seconds']:.3f}", rr["note"])
    return table


def _figure(png, rows, path, prune_rows, opt, qc, h, chosen) -> None:
    from matplotlib.ticker import MaxNLocator

    from treelearn.experiments._common import pyplot, save_figure
    from treelearn.tree.front_view import plot_front
    from treelearn.tree.plot import plot_tree

    plt = pyplot()
    fig = plt.figure(figsize=(18, 10))
    gs = fig.add_gridspec(2, 4, height_ratios=[1, 1.3])
    # (a) greedy vs scikit-learn
    ax = fig.add_subplot(gs[0, 0])
    g = [r for r in rows if r["section"] == "greedy (000)"]
    xs = np.arange(len(g))
    bars = ax.bar(xs, [r["accuracy"] for r in g],
                  color=["tab:blue" if r["learner"].startswith("treelearn") else "tab:gray" for r in g])
    ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_xticks(xs, [r["learner"].replace("scikit-learn", "sklearn") for r in g], rotation=15, fontsize=8)
    lo = min(r["accuracy"] for r in g)
    ax.set_ylim(max(0.0, lo - 0.08), 1.0)
    ax.set_ylabel("test accuracy")
    ax.set_title("greedy (000) vs scikit-learn, breast cancer", fontsize=10)
    # (b) Top-k path: accuracy per k, (c) time per k
    labels = [f"k = {p['k']}" for p in path]
    xs = np.arange(len(path))
    ax = fig.add_subplot(gs[0, 1])
    ax.plot(xs, [p["train"] for p in path], "o-", label="train accuracy")
    ax.plot(xs, [p["test"] for p in path], "s-", label="test accuracy")
    late = [i for i, p in enumerate(path) if p["timed_out"]]
    if late:
        ax.plot(late, [path[i]["train"] for i in late], "x", color="red", ms=10, mew=2, label="timed out")
    ax.set_xticks(xs, labels, fontsize=8, rotation=15)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
    ax.set_title(f"Top-k (003), depth {h}: accuracy per k", fontsize=10)
    ax = fig.add_subplot(gs[0, 2])
    bars = ax.bar(xs, [p["seconds"] for p in path], color="tab:green")
    ax.bar_label(bars, fmt="%.2f", fontsize=8)
    ax.set_xticks(xs, labels, fontsize=8, rotation=15)
    ax.set_ylabel("fit time (s)")
    ax.set_title("Top-k (003): time per k (k = all: optimal)", fontsize=10)
    # (d) pruning: accuracy and leaves
    ax = fig.add_subplot(gs[0, 3])
    xs = np.arange(len(prune_rows))
    b1 = ax.bar(xs - 0.2, [r["acc"] for r in prune_rows], 0.4, color="tab:blue")
    ax.bar_label(b1, fmt="%.3f", fontsize=8)
    ax.set_ylim(0.5, 1.05)
    ax.set_ylabel("test accuracy (blue)")
    ax2 = ax.twinx()
    b2 = ax2.bar(xs + 0.2, [r["leaves"] for r in prune_rows], 0.4, color="tab:orange")
    ax2.bar_label(b2, fontsize=8)
    ax2.set_ylabel("leaves (orange)")
    ax2.set_ylim(0, 1.25 * max(r["leaves"] for r in prune_rows))
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(xs, [("bound" if r["how"] == "bound" else "CART + 5-fold CV") + f"\n{r['seconds']:.2f} s"
                       for r in prune_rows], fontsize=8)
    ax.set_title("pruning (002), wine", fontsize=10)
    # (e) the optimal tree, (f) the tree learned from queries
    bottom = gs[1, :].subgridspec(1, 3, width_ratios=[1.6, 0.75, 0.9])
    ax = fig.add_subplot(bottom[0, 0])
    plot_tree(opt, ax=ax, fontsize=6.5, precision=2)
    ax.set_title(f"optimal depth-{h} tree (003), breast cancer", fontsize=10)
    ax = fig.add_subplot(bottom[0, 1])
    plot_front(chosen, ax=ax)
    ax.set_title("error-size front, depth 3 (size by 002's bound)", fontsize=10)
    ax = fig.add_subplot(bottom[0, 2])
    plot_tree(qc, ax=ax, fontsize=5.5, impurity=False, precision=2)
    ax.set_title("learned from membership queries (004)", fontsize=10)
    save_figure(fig, png)
