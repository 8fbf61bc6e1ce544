"""Paper 002's Table 1 as data, its CART protocol, and the table that sets our numbers beside its.

* :data:`PAPER_TABLE1` — the numbers printed in Table 1 of Leboeuf, LeBlanc and Marchand
  (NeurIPS 2020): mean ± standard deviation of the test accuracy over 25 random 75/25 splits,
  per dataset, for Original, CART, M-CART and Ours (bound pruning), with the paper's headline.
* :func:`paper_cv_prune` — CART / M-CART pruning with α chosen by 10-fold CV the way the paper's
  experiments choose it. §6.2 says only "a 10-fold cross-validation on the training set to find
  α"; the code the paper links to (its §6.2) fixes the details, which we reimplement here:

  1. the candidate thresholds are the pruning coefficients g(t) of *every* internal node of the
     unpruned tree, sorted (not the weakest-link sequence α_k nor Breiman's geometric means);
  2. unshuffled K-fold on the training part; each fold's tree is pruned at the thresholds in
     increasing order, each time collapsing every internal node whose coefficient, recomputed on
     the fold tree pruned so far, is <= the threshold; held-out errors are summed over the folds;
  3. α is the midpoint of the first and the last threshold of smallest total error;
  4. the tree of the training part is pruned in **one pass** by the coefficients of its
     *unpruned* form: every internal node with g(t) <= α becomes a leaf.

  Step 4 is the root of the paper's large CART standard deviations: a node whose subtree has
  many leaves gets a small unpruned coefficient (its error gain divided by L_t − 1) although, once
  its weak descendants are gone, it is the strongest split of the tree. Pruning along the
  weakest-link sequence (what :func:`treelearn.prune.pruners.prune_cost_complexity` does, and
  what every fold of step 2 does) would keep it; the one pass cuts it, e.g. Iris's
  versicolor/virginica split, leaving a 2-leaf stump. The experiment counts the splits whose tree
  kept <= 2 leaves; ``docs/guide/table1.rst`` has the measurements.

  The coefficient of CART is (e(t) − e(T_t)) / (m (L_t − 1)) and that of M-CART
  (e(t) − e(T_t)) / (C(L_t) − C(1)), C(L) = d ln(m/d), d = L ln(l L), with e the training errors
  (as a leaf, of the subtree), L_t the subtree's leaves, m the root's examples, l the features.
* :func:`comparison` / :func:`comparison_lines` — per dataset the paper's CART and Ours beside our
  CART (both protocols) and Bound, and the headline counts (best or tied, mean gain over CART) for
  the paper and for each of our protocols.
"""
from __future__ import annotations

import numpy as np

from treelearn.tree.tree import leaf_errors

#: the accuracy gap within which Table 1 calls two models tied (bold)
TIE = 0.0025

#: Table 1 of paper 002: (label, n_examples, n_classes, {model: (mean, std)}) per dataset, keyed
#: by our dataset name; models Original, CART, M-CART, Ours
PAPER_TABLE1 = {
    "uci/breast-cancer-wisconsin-diagnostic": ("BCWD", 569, 2, {
        "Original": (0.928, 0.024), "CART": (0.923, 0.027), "M-CART": (0.930, 0.017), "Ours": (0.942, 0.022)}),
    "uci/cardiotocography-10": ("Cardiotocography 10", 2126, 10, {
        "Original": (0.566, 0.023), "CART": (0.562, 0.023), "M-CART": (0.566, 0.024), "Ours": (0.567, 0.022)}),
    "uci/climate-model-simulation-crashes": ("CMSC", 540, 2, {
        "Original": (0.903, 0.024), "CART": (0.920, 0.021), "M-CART": (0.922, 0.017), "Ours": (0.921, 0.014)}),
    "uci/connectionist-bench-sonar": ("CBS", 208, 2, {
        "Original": (0.727, 0.061), "CART": (0.702, 0.054), "M-CART": (0.695, 0.084), "Ours": (0.724, 0.053)}),
    "uci/diabetic-retinopathy-debrecen": ("DRD", 1151, 2, {
        "Original": (0.613, 0.027), "CART": (0.576, 0.044), "M-CART": (0.602, 0.040), "Ours": (0.622, 0.023)}),
    "uci/fertility": ("Fertility", 100, 2, {
        "Original": (0.790, 0.060), "CART": (0.878, 0.051), "M-CART": (0.878, 0.051), "Ours": (0.866, 0.056)}),
    "uci/haberman": ("Habermans Survival", 306, 2, {
        "Original": (0.660, 0.062), "CART": (0.746, 0.043), "M-CART": (0.721, 0.043), "Ours": (0.719, 0.043)}),
    "uci/image-segmentation-train": ("Image Segmentation", 210, 7, {
        "Original": (0.862, 0.048), "CART": (0.814, 0.144), "M-CART": (0.844, 0.050), "Ours": (0.858, 0.050)}),
    "uci/ionosphere": ("Ionosphere", 351, 2, {
        "Original": (0.891, 0.035), "CART": (0.772, 0.108), "M-CART": (0.867, 0.057), "Ours": (0.892, 0.032)}),
    "uci/iris": ("Iris", 150, 3, {
        "Original": (0.933, 0.030), "CART": (0.860, 0.139), "M-CART": (0.838, 0.158), "Ours": (0.937, 0.028)}),
    "uci/parkinsons": ("Parkinson", 195, 2, {
        "Original": (0.859, 0.062), "CART": (0.848, 0.064), "M-CART": (0.858, 0.065), "Ours": (0.863, 0.065)}),
    "uci/planning-relax": ("Planning Relax", 182, 2, {
        "Original": (0.595, 0.075), "CART": (0.725, 0.049), "M-CART": (0.729, 0.048), "Ours": (0.595, 0.075)}),
    "uci/qsar-biodegradation": ("QSAR Biodegradation", 1055, 2, {
        "Original": (0.752, 0.031), "CART": (0.741, 0.033), "M-CART": (0.757, 0.026), "Ours": (0.761, 0.028)}),
    "uci/seeds": ("Seeds", 210, 3, {
        "Original": (0.918, 0.034), "CART": (0.914, 0.040), "M-CART": (0.905, 0.081), "Ours": (0.925, 0.033)}),
    "uci/spambase": ("Spambase", 4601, 2, {
        "Original": (0.844, 0.027), "CART": (0.839, 0.028), "M-CART": (0.842, 0.029), "Ours": (0.846, 0.026)}),
    "uci/vertebral-column-3c": ("Vertebral Column 3C", 310, 3, {
        "Original": (0.800, 0.050), "CART": (0.725, 0.139), "M-CART": (0.804, 0.046), "Ours": (0.819, 0.044)}),
    "uci/wall-following-robot-24": ("WFR24", 5456, 4, {
        "Original": (0.995, 0.002), "CART": (0.994, 0.002), "M-CART": (0.994, 0.002), "Ours": (0.994, 0.001)}),
    "uci/wine": ("Wine", 178, 3, {
        "Original": (0.908, 0.041), "CART": (0.902, 0.045), "M-CART": (0.903, 0.043), "Ours": (0.904, 0.046)}),
    "uci/yeast": ("Yeast", 1484, 10, {
        "Original": (0.429, 0.019), "CART": (0.368, 0.059), "M-CART": (0.384, 0.058), "Ours": (0.442, 0.019)}),
}
#: the paper's headline (§6.3): Ours best or tied on 13/19 (16/19 without Original), mean gain
#: over CART +2.02 points (M-CART +1.20), pruning 19.5x faster than CART with CV
PAPER_HEADLINE = {"best_with_original": 13, "best_without_original": 16, "gain_over_cart": 2.02,
                  "mcart_gain_over_cart": 1.20, "speedup": 19.5}


# ====================================================================== the paper's CV protocol
def _subtree_stats(tree, cut: set):
    """Per node of the tree pruned at ``cut``: training errors of its subtree and its leaves
    (children before parents; nodes below a cut node are not visited)."""
    left, right = tree.children_left, tree.children_right
    node_err = leaf_errors(tree.value)
    sub_err = node_err.astype(float).copy()
    leaves = np.ones(tree.node_count, dtype=np.int64)
    order = [0]  # the nodes of the pruned tree, breadth-first (the list grows as it is read)
    for v in order:
        if left[v] >= 0 and v not in cut:
            order += [int(left[v]), int(right[v])]
    internal = []
    for v in reversed(order):
        if left[v] >= 0 and v not in cut:
            sub_err[v] = sub_err[left[v]] + sub_err[right[v]]
            leaves[v] = leaves[left[v]] + leaves[right[v]]
            internal.append(v)
    return node_err, sub_err, leaves, internal[::-1]


def _mcart_complexity(L, m, n_features):
    d = L * np.log(n_features * L)
    return d * np.log(m / d)


def node_coefficients(tree, cut: set, complexity: str = "leaves", n_features: int | None = None) -> dict:
    """The pruning coefficient g(t) of every internal node of ``tree`` pruned at ``cut`` (CART:
    ``complexity="leaves"``, M-CART: ``"mcart"``), computed on that pruned tree as the paper's
    experiments compute it (see the module docstring)."""
    node_err, sub_err, leaves, internal = _subtree_stats(tree, cut)
    total = float(tree.value[0].sum())
    m = float(tree.n_node_samples[0])
    scale = m / total if total > 0 else 1.0  # errors in examples when the counts are weighted
    l = tree.n_features if n_features is None else n_features
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for v in internal:
            gain = (node_err[v] - sub_err[v]) * scale
            if complexity == "leaves":
                out[v] = float(gain / (m * (leaves[v] - 1)))
            else:
                out[v] = float(gain / (_mcart_complexity(leaves[v], m, l) - _mcart_complexity(1, m, l)))
    return out


def collapse_at(tree, cut: set, threshold: float, complexity: str = "leaves", n_features=None) -> set:
    """``cut`` plus every internal node (of the tree pruned at ``cut``) whose coefficient is <=
    ``threshold``: one pass, the coefficients computed before any of these collapses."""
    coef = node_coefficients(tree, cut, complexity, n_features)
    return set(cut) | {v for v, g in coef.items() if g <= threshold}


def weakest_link_at(tree, threshold: float, complexity: str = "leaves", n_features=None) -> set:
    """The nodes to collapse to prune ``tree`` along its weakest-link sequence up to ``threshold``:
    repeatedly collapse the internal nodes of smallest coefficient (recomputed on the tree pruned
    so far) while that coefficient is <= ``threshold``."""
    cut: set = set()
    while True:
        coef = node_coefficients(tree, cut, complexity, n_features)
        if not coef:
            return cut
        g = min(coef.values())
        if not g <= threshold:
            return cut
        cut |= {v for v, c in coef.items() if c <= g}


def _fold_errors(fold_tree, X_te, y_te, thresholds, complexity, n_features) -> np.ndarray:
    """Held-out errors of a fold's tree pruned at each threshold in turn (cumulatively)."""
    left, right = fold_tree.children_left, fold_tree.children_right
    leaf_of = fold_tree.apply_encoded(X_te)
    label = fold_tree.leaf_class_index()
    errs = np.zeros(len(thresholds))
    cut: set = set()
    for k, a in enumerate(thresholds):
        cut = collapse_at(fold_tree, cut, a, complexity, n_features)
        top = np.arange(fold_tree.node_count)  # each node's highest collapsed ancestor (or itself)
        stack = [0]
        while stack:
            v = stack.pop()
            if left[v] >= 0:
                for c in (int(left[v]), int(right[v])):
                    top[c] = top[v] if (v in cut or top[v] != v) else c
                    stack.append(c)
        errs[k] = float(np.sum(label[top[leaf_of]] != y_te))
    return errs


def _pick_alpha(thresholds, errs) -> float:
    """The midpoint of the first and the last threshold of smallest total held-out error."""
    at_min = np.flatnonzero(errs == errs.min())
    return float((thresholds[at_min[0]] + thresholds[at_min[-1]]) / 2)


def paper_cv_alphas(grow, X, y, tree, *, complexities=("leaves",), n_features: int | None = None,
                    cv: int = 10) -> dict:
    """α per complexity (``"leaves"`` for CART, ``"mcart"`` for M-CART) chosen by ``cv``-fold CV as
    in the paper's experiments (steps 1–3 of the module docstring); ``grow(X, y)`` grows the tree
    of a fold (the same fold trees serve every complexity). A one-leaf ``tree`` gets α = 0."""
    from sklearn.model_selection import KFold

    thresholds = {cx: sorted(node_coefficients(tree, set(), cx, n_features).values()) for cx in complexities}
    if not any(thresholds.values()):
        return {cx: 0.0 for cx in complexities}
    errs = {cx: np.zeros(len(t)) for cx, t in thresholds.items()}
    for tr, te in KFold(n_splits=cv).split(X):
        fold_tree = grow(X[tr], y[tr])
        for cx, t in thresholds.items():
            if t:
                errs[cx] += _fold_errors(fold_tree, X[te], y[te], t, cx, n_features)
    return {cx: _pick_alpha(t, errs[cx]) if t else 0.0 for cx, t in thresholds.items()}


def prune_at(tree, alpha: float, complexity: str = "leaves", n_features: int | None = None,
             final: str = "one-pass"):
    """``tree`` pruned at ``alpha``: in one pass by its unpruned coefficients (``final="one-pass"``,
    the paper's step 4) or along its weakest-link sequence (``"weakest-link"``)."""
    if final == "one-pass":
        cut = collapse_at(tree, set(), alpha, complexity, n_features)
    elif final == "weakest-link":
        cut = weakest_link_at(tree, alpha, complexity, n_features)
    else:  # pragma: no cover - internal
        raise ValueError(final)
    return tree.prune(cut) if cut else tree.copy()


def paper_cv_prune(grow, X, y, tree, *, complexity: str = "leaves", n_features: int | None = None, cv: int = 10,
                   final: str = "one-pass"):
    """Prune ``tree`` (grown by ``grow(X, y)`` on the training part) by CART (``complexity=
    "leaves"``) or M-CART (``"mcart"``) with α chosen by ``cv``-fold CV as in the paper's
    experiments, then pruned by ``final`` (see :func:`prune_at`). Returns ``(alpha, pruned tree)``."""
    alpha = paper_cv_alphas(grow, X, y, tree, complexities=(complexity,), n_features=n_features, cv=cv)[complexity]
    return alpha, prune_at(tree, alpha, complexity, n_features, final)


# ====================================================================== the paper's column beside ours
#: our CART protocols: (name, CART model, M-CART model) as the experiment labels them
PROTOCOLS = [
    ("(a) the paper's CV and one-pass prune", "CART-paper", "M-CART-paper"),
    ("(b) the paper's CV, weakest-link prune", "CART-WL", "M-CART-WL"),
    ("(c) PrunedTreeClassifier's ccp/mcart (stratified folds, Breiman's α grid)", "CART", "M-CART"),
]


def best_or_tied(means: dict, model: str) -> bool:
    """Whether ``model``'s mean accuracy is the best of ``means`` up to Table 1's tie of 0.0025."""
    return means[model] >= max(means.values()) - TIE - 1e-9


def headline(means: list, cart: str, mcart: str, bound: str, original: str = "Original") -> dict:
    """The paper's headline numbers for mean accuracies ``means`` (one dict model -> mean per
    dataset): on how many datasets ``bound`` is best or tied among the four models (and without
    the original tree), and the mean gains, in points, of ``bound`` and ``mcart`` over ``cart``."""
    four = [{k: m[k] for k in (original, cart, mcart, bound)} for m in means]
    return {
        "n": len(four),
        "best_with_original": sum(best_or_tied(m, bound) for m in four),
        "best_without_original": sum(best_or_tied({k: v for k, v in m.items() if k != original}, bound)
                                     for m in four),
        "gain_over_cart": 100 * float(np.mean([m[bound] - m[cart] for m in four])) if four else float("nan"),
        "mcart_gain_over_cart": 100 * float(np.mean([m[mcart] - m[cart] for m in four])) if four else float("nan"),
    }


def paper_headline(names=None) -> dict:
    """:func:`headline` of Table 1's own numbers (over ``names``, default all 19 datasets)."""
    names = list(PAPER_TABLE1) if names is None else names
    means = [{k: v[0] for k, v in PAPER_TABLE1[d][3].items()} for d in names]
    return headline(means, "CART", "M-CART", "Ours")


def _headline_text(h: dict, bound: str = "Bound") -> str:
    return (f"{bound} best or tied on {h['best_with_original']}/{h['n']} datasets ({h['best_without_original']}/"
            f"{h['n']} without Original); mean gain over CART {h['gain_over_cart']:+.2f} points "
            f"(M-CART over CART {h['mcart_gain_over_cart']:+.2f})")


def comparison(summary: list) -> tuple[list, list]:
    """The paper's datasets present in ``summary`` (tuples ``(name, label, n, C, stats)``, stats a
    dict model -> (mean, std, mean leaves, seconds, splits with <= 2 leaves)): the rows of the
    comparison table and the headline lines, the paper's (on the same datasets) first."""
    pool = [s for s in summary if s[0] in PAPER_TABLE1]
    rows = []
    for name, label, n, C, stats in pool:
        paper = PAPER_TABLE1[name][3]
        rows.append((label, n, C, paper, stats))
    lines = []
    if pool:
        lines.append(f"Paper (Table 1, its {len(pool)} datasets here): "
                     + _headline_text(paper_headline([s[0] for s in pool]), "Ours"))
        for proto, cart, mcart in PROTOCOLS:
            if all(m in pool[0][4] for m in ("Original", cart, mcart, "Bound")):
                means = [{k: v[0] for k, v in s[4].items()} for s in pool]
                lines.append(f"treelearn, CART {proto}: " + _headline_text(headline(means, cart, mcart, "Bound")))
    return rows, lines


def _cell(mean, std) -> str:
    return f"{mean:.3f} ± {std:.3f}" if np.isfinite(mean) else "n/a"


def comparison_lines(summary: list) -> list[str]:
    """The markdown of :func:`comparison`: per dataset the paper's CART and Ours beside our CART
    under protocols (a) and (b) and our Bound, the splits whose CART kept <= 2 leaves, then the
    headlines."""
    rows, heads = comparison(summary)
    if not rows:
        return []
    have = rows[0][4]
    ours = [m for m in ("CART-paper", "CART-WL", "CART") if m in have]
    out = ["| Dataset | paper CART | " + " | ".join(f"{m}" for m in ours) + " | paper Ours | Bound | "
           + " | ".join(f"{m} <= 2 leaves" for m in ours) + " |",
           "|---|---|" + "---|" * len(ours) + "---|---|" + "---|" * len(ours)]
    for label, n, C, paper, stats in rows:
        cells = [_cell(*paper["CART"])] + [_cell(*stats[m][:2]) for m in ours]
        cells += [_cell(*paper["Ours"]), _cell(*stats["Bound"][:2])]
        cells += [str(int(stats[m][4])) for m in ours]
        out.append(f"| {label} ({n}, {C}) | " + " | ".join(cells) + " |")
    out.append("")
    out += [f"- {h}" for h in heads]
    return out
