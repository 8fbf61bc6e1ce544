"""Choosing the tree's size from the error-size front (``select``): "bound" is the argmin of paper
002's bound over the front's trees (recomputed here from each tree's structure and training
errors); "cv" is the same choice as a plain K-fold CV that fits every leaf budget separately with
``max_leaves``; bad settings are named errors. And the honest optimality wording of the fitted
repr and the verbose summary."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from treelearn import OptimalTreeClassifier, TopKTreeClassifier, TreeLearnValueError
from treelearn.learn.topk.select import fit_front
from treelearn.prune.bounds import shawe_taylor_bound
from treelearn.prune.shapes import as_shape


def _noisy(seed, n=400, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(1)
    y = ((X[:, 0] > 0) & (X[:, 1] > 0.3) | (X[:, 2] > 1.2)).astype(int)  # (four leaves)
    flip = rng.random(n) < 0.15
    return X, np.where(flip, 1 - y, y)


def _binary(seed, n=200, d=6):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(int)
    y = X[:, 0] ^ (X[:, 1] & X[:, 2])
    return X, np.where(rng.random(n) < 0.2, 1 - y, y)


def _bound(tree, X, y):
    """002's bound of ``tree`` recomputed from its structure and its errors on (X, y)."""
    errors = int(np.sum(tree.predict(X) != y))
    return shawe_taylor_bound(as_shape(tree), errors, len(y), 2, X.shape[1], delta=0.05)


def _reference(cls, est, X, y):
    """Every (bound, leaves, depth) candidate of an independent enumeration: one plain front per
    depth d = 1..max_depth (a ``select=None`` fit each, ``fit_front`` of one depth) over the binary
    features ``est`` searched (its binarizer's 0/1 columns: the same space at every depth), each
    tree's bound computed here with X's raw feature count (the bound's l)."""
    B = est.binarizer_.transform(X)
    out = []
    for d in range(1, est.max_depth + 1):
        front = fit_front(cls(max_depth=d), B, y)
        for tree in front.trees:
            errors = int(np.sum(tree.predict(B) != y))
            bound = shawe_taylor_bound(as_shape(tree), errors, len(y), 2, X.shape[1], delta=0.05)
            out.append((bound, int(tree.n_leaves), d))
    return out


@pytest.mark.parametrize("data, seed, depth", [(_noisy, 0, 3), (_noisy, 2, 3), (_noisy, 1, 4), (_binary, 2, 4),
                                               (_binary, 0, 4), (_binary, 3, 3)])
@pytest.mark.parametrize("cls", [OptimalTreeClassifier, TopKTreeClassifier])
def test_bound_selects_the_least_bound_over_every_depth_and_leaf_count(data, seed, depth, cls):
    X, y = data(seed, n=200)
    est = cls(max_depth=depth, select="bound").fit(X, y)
    ref = _reference(cls, est, X, y)
    best = min(b for b, _, _ in ref)
    assert float(_bound(est.tree_, X, y)) == pytest.approx(best, rel=1e-12)
    # ties: the fewest leaves, then the shallowest front
    leaves, front_depth = min((n, d) for b, n, d in ref if b <= best * (1 + 1e-12))
    assert (est.selected_leaves_, est.front_.max_depth) == (leaves, front_depth)
    assert est.selected_leaves_ == est.get_n_leaves() and est.selected_depth_ == est.tree_.depth <= front_depth
    assert est.training_error_ == pytest.approx(np.sum(est.predict(X) != y))
    # every front's scores are its trees' bounds, and the chosen tree is a point of front_
    assert sorted(est.fronts_) == list(range(1, depth + 1)) and est.front_ is est.fronts_[front_depth]
    for d, front in est.fronts_.items():
        assert front.max_depth == d and len(front.trees) == 2 ** d
        assert np.allclose(est.selection_scores_[d], [_bound(t, X, y) for t in front.trees], rtol=1e-12)
    assert any(t == est.tree_ for t in est.front_.trees)
    if data is _binary and seed == 2 and depth == 4:
        # the deepest front alone misses it: a balanced depth-3 tree of 8 leaves, 10.18 against the
        # depth-4 front's best 10.25 (the bound of a tree is of its own shape, not of the depth limit)
        assert est.selection_scores_[3].min() < est.selection_scores_[4].min()
        assert est.front_.max_depth == 3 and est.selected_depth_ == 3


def test_the_depth_chosen_is_reproducible():
    X, y = _binary(2)
    for select in ("bound", "cv"):
        a = OptimalTreeClassifier(max_depth=4, select=select, random_state=3).fit(X, y)
        b = clone(a).fit(X, y)
        assert (a.selected_depth_, a.selected_leaves_, a.front_.max_depth) == \
               (b.selected_depth_, b.selected_leaves_, b.front_.max_depth)
        assert a.tree_ == b.tree_
        for d in a.selection_scores_:
            assert np.array_equal(a.selection_scores_[d], b.selection_scores_[d])


@pytest.mark.parametrize("seed", range(3))
def test_cv_chooses_the_depth_and_leaves_of_least_held_out_error(seed):
    """Against an independent per-fold loop: in each fold one plain front per depth (a separate
    one-depth fit each, every threshold: the same binary space at every depth), every (depth,
    budget) tree scored on the held-out rows; the choice is the least held-out error (ties: the
    fewest leaves, then the shallower depth) and the full sample's tree of that depth and budget."""
    X, y = _noisy(seed, n=120, d=3)
    est = OptimalTreeClassifier(max_depth=3, max_binary_features=None, select="cv", random_state=seed).fit(X, y)
    held_out = {d: np.zeros(2 ** d) for d in (1, 2, 3)}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        for d, err in held_out.items():
            front = fit_front(OptimalTreeClassifier(max_depth=d, max_binary_features=None), X[tr], y[tr])
            err += [np.sum(t.predict(X[te]) != y[te]) for t in front.trees]
    for d, err in held_out.items():
        assert np.allclose(est.selection_scores_[d], err / len(y))
    full = {d: fit_front(OptimalTreeClassifier(max_depth=d, max_binary_features=None), X, y) for d in held_out}
    low = min(e.min() for e in held_out.values())
    n_leaves, d, b = min((int(full[d].n_leaves[b]), d, b) for d, e in held_out.items() for b in np.flatnonzero(e == low))
    assert (est.selected_leaves_, est.front_.max_depth) == (n_leaves, d)
    assert est.tree_ == full[d].trees[b] and est.selected_depth_ == full[d].trees[b].depth


def test_select_settings_it_cannot_go_with_are_named_errors():
    X, y = _noisy(0, n=60)
    with pytest.raises(TreeLearnValueError, match="select"):
        OptimalTreeClassifier(select="aic").fit(X, y)
    with pytest.raises(TreeLearnValueError, match="max_depth must be an integer"):
        OptimalTreeClassifier(select="bound", max_depth=None).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="select='bound' with ccp_alpha"):
        OptimalTreeClassifier(select="bound", ccp_alpha=0.01).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="solver='binary'"):
        OptimalTreeClassifier(select="cv", solver="continuous").fit(X, y)
    with pytest.raises(TreeLearnValueError, match="monotonic_cst"):
        TopKTreeClassifier(select="bound", monotonic_cst=[1, 0, 0, 0, 0]).fit(X, y)


def test_a_plain_refit_drops_the_selection_and_max_leaves_caps_the_front():
    X, y = _noisy(1, n=200)
    est = OptimalTreeClassifier(max_depth=3, select="bound", max_leaves=3).fit(X, y)
    assert [len(f.trees) for f in est.fronts_.values()] == [2, 3, 3]  # (min(max_leaves, 2^depth) budgets)
    assert est.selected_leaves_ <= 3 and est.max_leaves == 3
    est.set_params(select=None, max_leaves=None).fit(X, y)
    assert not any(hasattr(est, a) for a in ("selected_leaves_", "selected_depth_", "front_", "fronts_"))
    est.set_params(select="cv").fit(X, y)
    front = est.error_size_front(X, y)  # the front alone: no selection left over
    assert not hasattr(est, "selected_leaves_") and est.get_n_leaves() == front.n_leaves[-1]


def test_repr_and_verbose_say_which_space_the_tree_is_optimal_over(capsys):
    X, y = _noisy(2, n=200)
    assert "#" not in repr(OptimalTreeClassifier())  # not fitted: scikit-learn's repr
    every = OptimalTreeClassifier(max_depth=2, max_binary_features=None).fit(X, y)
    assert repr(every).endswith("# optimal over every threshold (depth <= 2)")
    budget = OptimalTreeClassifier(max_depth=2, max_binary_features=20, verbose=1).fit(X, y)
    assert budget.feature_space_["thresholds"] != "all"
    per = int(np.max(budget.feature_space_["n_thresholds"]))
    said = f"optimal over {budget.n_binary_features_} binary features"
    assert said in repr(budget) and f"{per} thresholds per column" in repr(budget)
    assert f"[OptimalTreeClassifier] {said}" in capsys.readouterr().err
    topk = TopKTreeClassifier(k=1, max_depth=2).fit(X, y)
    assert "Top-1 tree over" in repr(topk) and "no optimality claim" in repr(topk) and not topk.is_optimal_
    with pytest.warns(Warning):
        slow = OptimalTreeClassifier(max_depth=6, time_limit=1e-4, greedy_incumbent=False).fit(X, y)
    assert "not proven optimal" in repr(slow)
