"""min_weight_fraction_leaf in the Top-k and optimal searches: the optimum is the best tree whose
leaves all hold the minimum weight, checked against a brute-force search on small inputs, and the
constraint holds in every returned tree (incumbents included)."""
import numpy as np
import pytest

from treelearn import OptimalTreeClassifier, TopKTreeClassifier, TreeLearnValueError


def _brute(B, y, w, depth, min_weight, n_classes):
    """The fewest weighted training errors of a tree of depth <= ``depth`` over the 0/1 columns of
    B whose every leaf weighs at least ``min_weight`` (every tree, recursively)."""
    def best(rows, h):
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        out = counts.sum() - counts.max()
        if h == 0:
            return out
        for f in range(B.shape[1]):
            right = B[rows, f] == 1
            r1, r0 = rows[right], rows[~right]
            if r1.size == 0 or r0.size == 0 or w[r1].sum() < min_weight or w[r0].sum() < min_weight:
                continue
            out = min(out, best(r0, h - 1) + best(r1, h - 1))
        return out
    return best(np.arange(len(y)), depth)


def _leaf_weights(est, X, w):
    leaves = est.apply(X)
    return np.bincount(leaves, weights=w)[np.unique(leaves)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("frac", [0.05, 0.15, 0.3])
@pytest.mark.parametrize("weights", ["unit", "integer", "fractional"])
def test_optimal_with_min_weight_is_the_brute_force_optimum(seed, depth, frac, weights):
    rng = np.random.default_rng(seed)
    n, d, C = 40, 5, 2 + seed % 2
    B = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((B[:, 0] + B[:, 1] * B[:, 2] + rng.integers(0, 2, n)) % C).astype(int)
    w = {"unit": np.ones(n), "integer": rng.integers(1, 4, n).astype(float),
         "fractional": rng.uniform(0.1, 2.0, n)}[weights]
    ref = _brute(B, y, w, depth, frac * w.sum(), C)
    for incumbent in (True, False):
        est = OptimalTreeClassifier(max_depth=depth, min_weight_fraction_leaf=frac, greedy_incumbent=incumbent,
                                    time_limit=60).fit(B, y, sample_weight=w)
        assert est.is_optimal_
        assert est.training_error_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert _leaf_weights(est, B, w).min() >= frac * w.sum() * (1 - 1e-12)
    topk = TopKTreeClassifier(k=2, max_depth=depth, min_weight_fraction_leaf=frac).fit(B, y, sample_weight=w)
    assert topk.training_error_ >= ref - 1e-9
    assert _leaf_weights(topk, B, w).min() >= frac * w.sum() * (1 - 1e-12)


@pytest.mark.parametrize("frac", [0.02, 0.1, 0.25])
def test_optimal_with_min_weight_on_numeric_columns(frac):
    """Numeric columns: every threshold (the binary search, not the continuous solver) from the
    greedy incumbent grown under the same constraint."""
    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = ((X[:, 0] > 1) ^ (X[:, 1] > 2) ^ (rng.random(60) < 0.2)).astype(int)
    B = np.column_stack([(X[:, j] >= t) for j in range(3) for t in (1, 2, 3)]).astype(float)
    est = OptimalTreeClassifier(max_depth=2, max_binary_features=None, min_weight_fraction_leaf=frac).fit(X, y)
    assert est.solver_ == "binary" and est.is_optimal_
    assert est.training_error_ == pytest.approx(_brute(B, y, np.ones(60), 2, frac * 60, 2))
    assert _leaf_weights(est, X, np.ones(60)).min() >= frac * 60


def test_min_weight_fraction_leaf_is_checked():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(TreeLearnValueError, match="min_weight_fraction_leaf"):
        TopKTreeClassifier(min_weight_fraction_leaf=0.7).fit(X, y)
    with pytest.raises(TreeLearnValueError, match="continuous solver has no minimum leaf weight"):
        OptimalTreeClassifier(solver="continuous", min_weight_fraction_leaf=0.1).fit(X, y)
