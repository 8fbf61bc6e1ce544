"""Small trees that generalise: the size chosen from the error-size front, against CV-tuned CART.

On UCI sets of paper 002 and Top-k sets of paper 003, over stratified 70/30 splits (``--splits``,
default 10), the test accuracy, leaves and fit time (seconds, the whole selection included) of

(a) ``bound``: ``OptimalTreeClassifier(max_depth=D, select="bound")``: one front per depth
    1..D, the (depth, leaves) tree of smallest paper-002 bound kept (no cross-validation); D is
    the largest depth tried, the depth is chosen;
(b) ``cv-front``: ``select="cv"``: 5-fold CV over the same fronts (one set of fronts per fold);
(c) ``cart-ccp``: scikit-learn's ``DecisionTreeClassifier`` with ``ccp_alpha`` chosen by 5-fold
    CV over its own ``cost_complexity_pruning_path`` (``GridSearchCV``, refit on the training part);
(d) ``streed``: STreeD (pystreed, ``hyper_tune=True``: its own 5-fold CV over tree size), and
    ``gosdt``: GOSDT (the ``peers`` extra: ``pip install gosdt``) on its threshold-guessing
    binarization (40 rounds of depth-2 gradient boosting fitted on the training part), depth budget
    D, its per-leaf penalty λ chosen by 5-fold CV over :data:`GOSDT_LAMBDAS`, at most
    :data:`GOSDT_TIME_LIMIT` s per fit (its best tree then); each only when installed;
(e) ``greedy-cv``: ``GreedyTreeClassifier`` with ``max_depth`` 1..8 chosen by 5-fold CV.

A peer that fails on a split (STreeD's ``hyper_tune`` at depth 4 can stop with a negative
remaining time) counts as nan there, so its means become nan. Categorical columns are one-hot
for the scikit-learn, STreeD and GOSDT peers (treelearn reads them as
they are); rows with missing values are dropped. The closing lines compare (a) and (b) with (c):
mean accuracy (points), mean leaves and where (a) dominates (accuracy at least CART's with at
most as many leaves), and (a)'s time against (b)'s; over every dataset run and, when both kinds
ran, over the UCI sets and the Top-k sets apart. After each dataset's line, the mean depth of the
trees (a) and (b) chose.

``--front`` also times ``select="bound"`` (the fronts of every depth 1..D, scored) against the
one front at D: the cost of choosing the depth.

``--front``: the cost of the front instead. On every dataset, the whole training set: the time of
``error_size_front`` (every budget 1..2^D) against one fit of the optimal tree of depth D (the
largest budget), median of ``--repeats`` interleaved runs in one process, and their ratio (the
target: at most 2 at depth 4); the front's last error must equal the fit's.

``--choose-k``: paper 003's open question (§6), how to choose Top-k's k, answered with data. For
every k of 1, 2, 4, 8 and all, ``TopKTreeClassifier(k, max_depth=D, select="bound")`` (the leaf
count chosen by paper 002's bound); then k is chosen by the same bound (the smallest over k; ties
to the smaller k), by 5-fold CV on the training part (the same fits per fold; ties to the smaller
k), and in hindsight (the best test accuracy: the oracle no method can reach). Reported: mean test
accuracy of every fixed k and of the three choices, and how often the bound picks each k.

Run: ``python benchmarks/bench_small_trees.py [--splits N] [--depth D] [--quick] [--data-dir DIR] [--methods M ...]``
(``--quick``: 2 splits, 3 datasets); ``... --front [--depth 4] [--repeats 3]``; ``... --choose-k``.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

UCI = ["uci/wine", "uci/iris", "uci/seeds", "uci/haberman", "uci/vertebral-column-3c", "uci/ionosphere",
       "uci/parkinsons", "uci/breast-cancer-wisconsin-diagnostic"]
TOPK = ["topk/monks-1", "topk/tic-tac-toe", "topk/balance-scale", "topk/hayes-roth"]
QUICK = ["uci/wine", "uci/haberman", "topk/tic-tac-toe"]
METHODS = ["bound", "cv-front", "cart-ccp", "streed", "gosdt", "greedy-cv"]
#: GOSDT's per-leaf penalties λ tried by its 5-fold CV (GOSDT's default is 0.05; 0.002, below 1/n on
#: most sets, ran into the time limit on breast cancer), and its time limit per fit (s)
GOSDT_LAMBDAS = [0.005, 0.01, 0.02, 0.05]
GOSDT_TIME_LIMIT = 10


def _load(name, data_dir):
    from treelearn.datasets import load_dataset

    X, y = load_dataset(name, data_dir, dropna=True)
    return X, np.unique(np.asarray(y), return_inverse=True)[1].ravel()  # (class codes: STreeD takes ints)


def _numeric(X):
    """X as a float matrix for the scikit-learn and STreeD peers (categorical columns one-hot)."""
    import pandas as pd

    return pd.get_dummies(X, dtype=float).to_numpy(dtype=float)


def _timed(fn):
    t0 = time.perf_counter()
    est = fn()
    return est, time.perf_counter() - t0


def _cart_ccp(Xn, y, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    path = DecisionTreeClassifier(random_state=seed).cost_complexity_pruning_path(Xn, y)
    alphas = np.unique(np.clip(path.ccp_alphas[:-1], 0, None)) if len(path.ccp_alphas) > 1 else [0.0]
    grid = GridSearchCV(DecisionTreeClassifier(random_state=seed), {"ccp_alpha": alphas},
                        cv=StratifiedKFold(5, shuffle=True, random_state=seed))
    return grid.fit(Xn, y).best_estimator_


def _greedy_cv(X, y, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from treelearn import GreedyTreeClassifier

    grid = GridSearchCV(GreedyTreeClassifier(), {"max_depth": list(range(1, 9))},
                        cv=StratifiedKFold(5, shuffle=True, random_state=seed))
    return grid.fit(X, y).best_estimator_


def _streed(Xn, y, depth, seed):
    import pystreed

    return pystreed.STreeDClassifier(max_depth=depth, hyper_tune=True, time_limit=60,
                                     random_seed=seed).fit(Xn, y)


def _gosdt_cv(Xn, y, depth, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    grid = GridSearchCV(_GOSDT(depth=depth, seed=seed), {"regularization": GOSDT_LAMBDAS},
                        cv=StratifiedKFold(5, shuffle=True, random_state=seed))
    return grid.fit(Xn, y).best_estimator_


def _gosdt_class():
    """A scikit-learn estimator around GOSDT: the threshold-guessing binarization fitted on the rows
    it is given, then GOSDT with the depth budget (its own prints silenced)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class GOSDT(ClassifierMixin, BaseEstimator):
        def __init__(self, regularization=0.05, depth=3, seed=0):
            self.regularization, self.depth, self.seed = regularization, depth, seed

        def fit(self, X, y):
            import contextlib
            import io

            from gosdt import GOSDTClassifier, ThresholdGuessBinarizer

            # (40 boosting rounds of depth 2: stumps kept 2 columns on iris, GOSDT's default depth 3
            # many more, slow on breast cancer)
            self.binarizer_ = ThresholdGuessBinarizer(n_estimators=40, max_depth=2, random_state=self.seed)
            B = self.binarizer_.fit_transform(X, y)
            with contextlib.redirect_stdout(io.StringIO()):
                self.model_ = GOSDTClassifier(regularization=self.regularization, allow_small_reg=True,
                                              depth_budget=self.depth, time_limit=GOSDT_TIME_LIMIT).fit(B, y)
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            # (GOSDT 1.0.4's own predict first calls check_array(force_all_finite=...), which
            # scikit-learn 1.8 removed; after that check it is exactly its first tree's predict)
            return self.model_.trees_[0].predict(self.binarizer_.transform(X))

        def get_n_leaves(self):
            stack, n = [self.model_.trees_[0].tree], 0
            while stack:
                node = stack.pop()
                if hasattr(node, "left_child"):
                    stack += [node.left_child, node.right_child]
                else:
                    n += 1
            return n

    return GOSDT


def _GOSDT(**params):
    return _gosdt_class()(**params)


def _leaves(est):
    return int(est.get_n_leaves())


def _fit(method, Xtr, Xntr, ytr, depth, seed):
    from treelearn import OptimalTreeClassifier

    if method == "bound":
        return _timed(lambda: OptimalTreeClassifier(max_depth=depth, select="bound").fit(Xtr, ytr))
    if method == "cv-front":
        return _timed(lambda: OptimalTreeClassifier(max_depth=depth, select="cv", random_state=seed).fit(Xtr, ytr))
    if method == "cart-ccp":
        return _timed(lambda: _cart_ccp(Xntr, ytr, seed))
    if method == "streed":
        return _timed(lambda: _streed(Xntr, ytr, depth, seed))
    if method == "gosdt":
        return _timed(lambda: _gosdt_cv(Xntr, ytr, depth, seed))
    return _timed(lambda: _greedy_cv(Xtr, ytr, seed))


def run(names, splits, depth, data_dir, methods):
    from sklearn.model_selection import StratifiedShuffleSplit

    rows = []
    for name in names:
        X, y = _load(name, data_dir)
        Xn = _numeric(X)
        acc = {m: [] for m in methods}
        leaves = {m: [] for m in methods}
        secs = {m: [] for m in methods}
        depths = {m: [] for m in ("bound", "cv-front") if m in methods}
        sss = StratifiedShuffleSplit(n_splits=splits, test_size=0.3, random_state=0)
        for seed, (tr, te) in enumerate(sss.split(Xn, y)):
            Xtr, Xte = X.iloc[tr], X.iloc[te]
            for m in methods:
                numeric = m in ("cart-ccp", "streed", "gosdt")
                try:
                    est, t = _fit(m, Xtr, Xn[tr], y[tr], depth, seed)
                except Exception as exc:  # (a peer that fails on a split: nan, said once per dataset)
                    if not np.isnan(acc[m]).any():
                        print(f"{name}: {m} failed: {str(exc).splitlines()[0][:100]}", flush=True)
                    acc[m].append(np.nan), leaves[m].append(np.nan), secs[m].append(np.nan)
                    continue
                acc[m].append(float(np.mean(est.predict(Xn[te] if numeric else Xte) == y[te])))
                leaves[m].append(_leaves(est))
                secs[m].append(t)
                if m in depths:
                    depths[m].append(est.selected_depth_)
        row = {"data": name, "n": len(y), "depths": {m: np.mean(d) for m, d in depths.items()}}
        for m in methods:
            row[m] = (np.mean(acc[m]), np.mean(leaves[m]), np.mean(secs[m]))
        rows.append(row)
        print(_line(row, methods), flush=True)
        if row["depths"]:
            print(f"{'':<40}   depth chosen: " + ", ".join(f"{m} {d:.1f}" for m, d in row["depths"].items()),
                  flush=True)
    return rows


def _header(methods):
    cols = "".join(f" | {m + ' acc':>14} {'leaves':>6} {'s':>6}" for m in methods)
    return f"{'data':<40} {'n':>5}{cols}"


def _line(row, methods):
    cols = "".join(f" | {row[m][0]:>14.4f} {row[m][1]:>6.1f} {row[m][2]:>6.2f}" for m in methods)
    return f"{row['data']:<40} {row['n']:>5}{cols}"


def summary(rows, methods):
    """The closing comparison lines over every dataset run, then over the UCI and the Top-k sets
    apart when both ran."""
    out = _summary(rows, methods, "mean over datasets")
    uci, topk = [r for r in rows if r["data"] in UCI], [r for r in rows if r["data"] in TOPK]
    if uci and topk:
        out += _summary(uci, methods, f"mean over the {len(uci)} UCI sets")
        out += _summary(topk, methods, f"mean over the {len(topk)} Top-k sets")
    return out


def _summary(rows, methods, title):
    """Means over ``rows``, and (a), (b) against CART."""
    out = []
    mean = {m: np.mean([[r[m][0], r[m][1], r[m][2]] for r in rows], axis=0) for m in methods}
    out.append(_line({"data": title, "n": 0, **{m: mean[m] for m in methods}}, methods))
    for m in ("bound", "cv-front"):
        if m not in methods or "cart-ccp" not in methods:
            continue
        dom = sum(1 for r in rows if r[m][0] >= r["cart-ccp"][0] - 1e-12 and r[m][1] <= r["cart-ccp"][1] + 1e-12)
        out.append(f"{m} vs CV-tuned CART: {100 * (mean[m][0] - mean['cart-ccp'][0]):+.2f} points, "
                   f"{mean[m][1] / mean['cart-ccp'][1]:.2f}x its leaves; dominates on {dom} of {len(rows)} datasets")
    if "bound" in methods and "cv-front" in methods:
        ratio = np.mean([r["bound"][2] / r["cv-front"][2] for r in rows])
        out.append(f"bound time / cv-front time: {ratio:.2f} (mean of per-dataset ratios); "
                   f"{mean['bound'][2] / mean['cv-front'][2]:.2f} (ratio of the mean times)")
    return out


def front_cost(names, depth, repeats, data_dir):
    """The front against one fit (module docstring, ``--front``): a line per dataset, then the
    geometric mean and the largest ratio."""
    from treelearn import OptimalTreeClassifier

    print(f"depth {depth}: error_size_front vs one fit; select='bound' (the fronts of every depth 1..{depth}) "
          f"vs the front (median of {repeats} interleaved runs)")
    print(f"{'data':<40} {'n':>5} {'fit s':>8} {'front s':>8} {'ratio':>6} {'depths s':>8} {'ratio':>6}  errors")
    ratios, depth_ratios = [], []
    for name in names:
        X, y = _load(name, data_dir)
        fit, front, every = [], [], []
        for _ in range(repeats):
            est, t = _timed(lambda: OptimalTreeClassifier(max_depth=depth, max_binary_features=100).fit(X, y))
            fit.append(t)
            f, t = _timed(lambda: OptimalTreeClassifier(max_depth=depth, max_binary_features=100).error_size_front(X, y))
            front.append(t)
            every.append(_timed(lambda: OptimalTreeClassifier(max_depth=depth, select="bound").fit(X, y))[1])
        if abs(f.errors[-1] - est.training_error_) > 1e-9 * max(1.0, est.training_error_):
            raise AssertionError(f"{name}: the front's last error {f.errors[-1]} is not the fit's "
                                 f"{est.training_error_}")
        ratio = np.median(front) / np.median(fit)
        ratios.append(ratio)
        depth_ratios.append(np.median(every) / np.median(front))
        print(f"{name:<40} {len(y):>5} {np.median(fit):>8.3f} {np.median(front):>8.3f} {ratio:>6.2f} "
              f"{np.median(every):>8.3f} {depth_ratios[-1]:>6.2f}  {' '.join(f'{e:g}' for e in f.errors)}", flush=True)
    print(f"front / fit: geometric mean {np.exp(np.mean(np.log(ratios))):.2f}, largest {max(ratios):.2f}; "
          f"select='bound' / front: geometric mean {np.exp(np.mean(np.log(depth_ratios))):.2f}, "
          f"largest {max(depth_ratios):.2f}")


KS = [1, 2, 4, 8, "all"]


def _k_fit(k, depth, X, y, seed):
    from treelearn import TopKTreeClassifier

    return TopKTreeClassifier(k=k, max_depth=depth, select="bound", random_state=seed).fit(X, y)


def _k_row(X, y, tr, te, depth, seed):
    """One split of ``--choose-k``: per k the test accuracy, leaves and bound, and the three
    choices of k (bound, 5-fold CV, hindsight) as indices into KS."""
    from sklearn.model_selection import StratifiedKFold

    Xtr, ytr = X.iloc[tr], y[tr]
    fits = [_k_fit(k, depth, Xtr, ytr, seed) for k in KS]
    acc = np.array([np.mean(e.predict(X.iloc[te]) == y[te]) for e in fits])
    leaves = np.array([e.get_n_leaves() for e in fits])
    bound = np.array([min(float(np.min(s)) for s in e.selection_scores_.values()) for e in fits])
    held = np.zeros(len(KS))
    for a, b in StratifiedKFold(5, shuffle=True, random_state=seed).split(Xtr, ytr):
        for i, k in enumerate(KS):
            held[i] += np.mean(_k_fit(k, depth, Xtr.iloc[a], ytr[a], seed).predict(Xtr.iloc[b]) == ytr[b])
    picks = {"bound": int(np.argmin(bound)), "cv": int(np.argmax(held)), "hindsight": int(np.argmax(acc))}
    return acc, leaves, picks


def choose_k(names, splits, depth, data_dir):
    """``--choose-k`` (module docstring): a line per dataset, then the means and the picks."""
    from sklearn.model_selection import StratifiedShuffleSplit

    choices = ("bound", "cv", "hindsight")
    head = "".join(f" {'k=' + str(k):>12}" for k in KS) + "".join(f" {c:>12}" for c in choices)
    print(f"depth {depth}, {splits} stratified 70/30 splits; mean test accuracy / leaves; k chosen by 002's bound,"
          f" by 5-fold CV, in hindsight")
    print(f"{'data':<36}{head}  bound's picks ({', '.join(map(str, KS))})")
    table, counts = [], np.zeros(len(KS), int)
    for name in names:
        X, y = _load(name, data_dir)
        sss = StratifiedShuffleSplit(n_splits=splits, test_size=0.3, random_state=0)
        rows = [_k_row(X, y, tr, te, depth, seed) for seed, (tr, te) in enumerate(sss.split(X, y))]
        acc = np.mean([r[0] for r in rows], axis=0)
        leaves = np.mean([r[1] for r in rows], axis=0)
        chosen = {c: (np.mean([r[0][r[2][c]] for r in rows]), np.mean([r[1][r[2][c]] for r in rows]))
                  for c in choices}
        picks = np.bincount([r[2]["bound"] for r in rows], minlength=len(KS))
        counts += picks
        table.append(list(acc) + [chosen[c][0] for c in choices])
        cells = "".join(f" {a:>6.3f}/{n:<5.1f}" for a, n in zip(acc, leaves))
        cells += "".join(f" {chosen[c][0]:>6.3f}/{chosen[c][1]:<5.1f}" for c in choices)
        print(f"{name:<36}{cells}  {' '.join(map(str, picks))}", flush=True)
    mean = np.mean(table, axis=0)
    print(f"{'mean accuracy':<36}" + "".join(f" {a:>12.4f}" for a in mean)
          + f"  {' '.join(map(str, counts))}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="2 splits, 3 datasets")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", nargs="*", default=None)
    ap.add_argument("--front", action="store_true", help="the front's cost against one fit")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--choose-k", action="store_true", help="Top-k's k chosen by the bound, by CV, in hindsight")
    ap.add_argument("--methods", nargs="*", default=None, help=f"a subset of {METHODS}")
    args = ap.parse_args(argv)
    names = args.datasets or (QUICK if args.quick else UCI + TOPK)
    splits = 2 if args.quick else args.splits
    if args.front:
        front_cost(names, args.depth, args.repeats, args.data_dir)
        return
    if args.choose_k:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            choose_k(names, splits, args.depth, args.data_dir)
        return
    methods = [m for m in (args.methods or METHODS) if m in METHODS]
    for method, module in (("streed", "pystreed"), ("gosdt", "gosdt")):
        try:
            __import__(module)
        except ImportError:
            if method in methods:
                methods.remove(method)
    print(f"max depth {args.depth} (bound, cv-front: the depth chosen in 1..{args.depth}), {splits} stratified 70/30 "
          "splits; mean test accuracy, leaves, fit seconds")
    print(_header(methods))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(names, splits, args.depth, args.data_dir, methods)
    for line in summary(rows, methods):
        print(line)


if __name__ == "__main__":
    main()
