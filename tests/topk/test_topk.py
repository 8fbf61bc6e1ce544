"""Top-k / optimal trees (003): the compiled search against independent references.

* a brute-force enumeration of every complete tree of depth <= 3 (optimum, k = all);
* a plain Python recursion of 003 Fig. 1 (scores from treelearn.criteria, no cache, no bounds):
  same training error and the same tree, for k in 1..4, h in 1..4, several criteria;
* pystreed's optimal training error on small shared datasets at depth 2 and 3;
* the greedy learner (Top-1 == greedy);
* anytime / memory cap / n_jobs behaviour and the estimator conventions.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn.criteria import gain_ratio, purity_gain
from treelearn.data.bitmatrix import BinaryData
from treelearn.learn.topk.estimator import OptimalTreeClassifier, TopKTreeClassifier, topk_search


# ----------------------------------------------------------------------------- references
def ref_topk(B, y, w, rows, h, k, C, criterion="entropy", scoring="gain"):
    """Plain recursion of 003 Fig. 1 -> (error, nested tree (f, left, right) or None for a leaf)."""
    yr, wr = y[rows], w[rows]
    counts = np.bincount(yr, weights=wr, minlength=C)
    leaf = counts.sum() - counts.max()
    if h == 0 or np.count_nonzero(counts) <= 1:
        return leaf, None
    Bs = B[rows]
    n1 = Bs.sum(axis=0)
    cand = np.nonzero((n1 > 0) & (n1 < len(rows)))[0]
    if cand.size == 0:
        return leaf, None
    scores = []
    for j in cand:
        one = np.bincount(yr[Bs[:, j] == 1], weights=wr[Bs[:, j] == 1], minlength=C)
        if scoring == "gain":
            s = purity_gain(counts, one, counts - one, criterion)
        else:
            s = gain_ratio(counts, one, counts - one, criterion)
        scores.append(round(s, 9))
    order = sorted(range(cand.size), key=lambda i: (-scores[i], cand[i]))[:k]
    best, tree = np.inf, None
    for i in order:
        f = cand[i]
        e0, t0 = ref_topk(B, y, w, rows[Bs[:, f] == 0], h - 1, k, C, criterion, scoring)
        e1, t1 = ref_topk(B, y, w, rows[Bs[:, f] == 1], h - 1, k, C, criterion, scoring)
        if e0 + e1 < best - 1e-9:
            best, tree = e0 + e1, (int(f), t0, t1)
    return best, tree


def preorder(tree, out=None):
    out = [] if out is None else out
    if tree is None:
        out.append(-1)
    else:
        out.append(tree[0])
        preorder(tree[1], out)
        preorder(tree[2], out)
    return out


def brute_force_optimum(B, y, w, h, C):
    """Minimum weighted error over every complete depth-h tree (features may repeat, so every
    tree of depth <= h is represented), enumerated explicitly and evaluated vectorised."""
    n, d = B.shape
    n_int = 2 ** h - 1
    trees = np.array(list(itertools.product(range(d), repeat=n_int)), dtype=np.int64)  # (T, n_int)
    T = trees.shape[0]
    node = np.zeros((T, n), dtype=np.int64)
    cols = np.arange(n)[None, :]
    for _ in range(h):
        feat = np.take_along_axis(trees, node, axis=1)
        bit = B[cols, feat]
        node = 2 * node + 1 + bit
    leaf = node - n_int
    L = 2 ** h
    flat = (np.arange(T)[:, None] * L + leaf) * C + y[None, :]
    counts = np.bincount(flat.ravel(), weights=np.broadcast_to(w, (T, n)).ravel(), minlength=T * L * C)
    counts = counts.reshape(T, L, C)
    err = w.sum() - counts.max(axis=2).sum(axis=1)
    return err.min()


def _search(B, y, C, k, h, w=None, **kw):
    data = BinaryData(B, y, C, w)
    return topk_search(data, k=k, max_depth=h, **kw)


def _tree_error(res, B, y, w):
    """Weighted training error of a search result's tree, recomputed from the data."""
    f, left, right = res["feature"], res["children_left"], res["children_right"]
    n = B.shape[0]
    pred_node = np.zeros(n, dtype=np.int64)
    for _ in range(64):
        fn = f[pred_node]
        internal = fn >= 0
        if not internal.any():
            break
        bit = B[np.arange(n), np.where(internal, fn, 0)]
        nxt = np.where(bit == 1, right[pred_node], left[pred_node])
        pred_node = np.where(internal, nxt, pred_node)
    C = res["value"].shape[1]
    err = 0.0
    for leaf in np.unique(pred_node):
        m = pred_node == leaf
        c = np.bincount(y[m], weights=w[m], minlength=C)
        # the leaf predicts its stored majority (ties to the first class)
        err += c.sum() - c[np.argmax(res["value"][leaf])]
    return err


# ----------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("seed", range(6))
def test_optimal_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 24 + seed
    C = 2 if seed % 2 == 0 else 3
    for h, d in ((1, 6), (2, 6), (3, 5)):
        B = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
        y = (B[:, 0] ^ B[:, 1 % d]).astype(np.int64)
        flip = rng.random(n) < 0.3
        y[flip] = rng.integers(0, C, size=flip.sum())
        w = np.ones(n)
        res = _search(B, y, C, d, h)
        opt = brute_force_optimum(B, y, w, h, C)
        assert res["error"] == opt, (seed, h, d)
        assert _tree_error(res, B, y, w) == opt
        # the tree respects the depth budget
        assert _depth(res) <= h


def test_optimal_weighted_equals_brute_force():
    rng = np.random.default_rng(11)
    n, d, C = 20, 5, 3
    for h in (1, 2, 3):
        B = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
        y = rng.integers(0, C, size=n).astype(np.int64)
        w = rng.uniform(0.1, 3.0, size=n)
        res = _search(B, y, C, d, h, w=w)
        opt = brute_force_optimum(B, y, w, h, C)
        assert res["error"] == pytest.approx(opt, abs=1e-9)
        assert _tree_error(res, B, y, w) == pytest.approx(opt, abs=1e-9)


def _depth(res):
    left, right = res["children_left"], res["children_right"]
    depth = np.zeros(left.size, dtype=np.int64)
    for i in range(left.size):
        if left[i] >= 0:
            depth[left[i]] = depth[i] + 1
            depth[right[i]] = depth[i] + 1
    return int(depth.max())


# ----------------------------------------------------------------------------- plain recursion
@pytest.mark.parametrize("criterion,scoring", [("entropy", "gain"), ("gini", "gain"), ("kearns_mansour", "gain"),
                                               ("entropy", "gain_ratio")])
def test_search_equals_plain_recursion(criterion, scoring):
    rng = np.random.default_rng(hash((criterion, scoring)) % 2**32)
    for trial in range(3):
        n = int(rng.integers(40, 90))
        d = int(rng.integers(6, 12))
        C = int(rng.integers(2, 4))
        B = (rng.random((n, d)) < rng.uniform(0.2, 0.8, size=d)).astype(np.uint8)
        # a label with structure plus noise, so that deeper trees matter
        y = ((B[:, 0] & B[:, 1]) | (B[:, 2] ^ B[:, 3])).astype(np.int64)
        flip = rng.random(n) < 0.25
        y[flip] = rng.integers(0, C, size=flip.sum())
        if rng.random() < 0.3:
            B[:, -1] = 1 - B[:, 0]  # a complementary column
            B[:, -2] = B[:, 1]      # a duplicate column
        w = np.ones(n)
        for k in (1, 2, 3, 4):
            for h in (1, 2, 3, 4):
                e_ref, t_ref = ref_topk(B, y, w, np.arange(n), h, k, C, criterion, scoring)
                for c1, fc in ((False, False), (True, True)):
                    res = _search(B, y, C, k, h, criterion=criterion, scoring=scoring, cache_depth1=c1,
                                  feature_classes=fc)
                    assert res["error"] == e_ref, (trial, k, h)
                    assert _tree_error(res, B, y, w) == e_ref
                    assert list(res["feature"]) == preorder(t_ref), (trial, k, h)


def test_search_equals_plain_recursion_deep():
    """Depths 5 and 6 on multi-word samples: nodes with h >= 3 count in an ancestor's frame
    (their rows as a mask) through chains of several levels; the tree is still Fig. 1's."""
    rng = np.random.default_rng(11)
    for C, n in ((2, 300), (3, 260)):
        d = 10
        B = (rng.random((n, d)) < rng.uniform(0.3, 0.7, size=d)).astype(np.uint8)
        y = ((B[:, 0] & B[:, 1]) | (B[:, 2] ^ B[:, 3]) | (B[:, 4] & B[:, 5] & B[:, 6])).astype(np.int64)
        flip = rng.random(n) < 0.2
        y[flip] = rng.integers(0, C, size=flip.sum())
        w = np.ones(n)
        for k, h in ((2, 5), (3, 5), (2, 6)):
            e_ref, t_ref = ref_topk(B, y, w, np.arange(n), h, k, C)
            res = _search(B, y, C, k, h)
            assert res["error"] == e_ref, (C, k, h)
            assert list(res["feature"]) == preorder(t_ref), (C, k, h)


def test_optimum_tree_equals_plain_recursion_with_twin_columns():
    """The optimum (k = all) at depths 3 and 4: the h = 2 children of an h = 3 node take their
    counts and their duplicate test from the pair matrix (no matrix of their own). Columns equal
    or complementary on the whole sample or only on one side of a split must give Fig. 1's tree
    (the same candidates skipped, the same first of equal errors)."""
    rng = np.random.default_rng(23)
    for trial, (n, d, h) in enumerate(((150, 9, 3), (140, 9, 3), (130, 6, 4))):
        C = 2 + trial % 2
        B = (rng.random((n, d)) < rng.uniform(0.25, 0.75, size=d)).astype(np.uint8)
        B[:, 3] = 1 - B[:, 0]                                   # complementary everywhere
        B[:, 4] = B[:, 1]                                       # duplicate everywhere
        B[:, 5] = np.where(B[:, 0] == 1, B[:, 2], 1 - B[:, 2])  # equal / complementary by side of 0
        y = ((B[:, 0] & B[:, 1]) | (B[:, 2] ^ B[:, d - 1])).astype(np.int64)
        flip = rng.random(n) < 0.25
        y[flip] = rng.integers(0, C, size=flip.sum())
        w = np.ones(n)
        e_ref, t_ref = ref_topk(B, y, w, np.arange(n), h, d, C)
        res = _search(B, y, C, d, h)
        assert res["error"] == e_ref, (trial, h)
        assert _tree_error(res, B, y, w) == e_ref
        assert list(res["feature"]) == preorder(t_ref), (trial, h)


def test_search_equals_plain_recursion_weighted():
    rng = np.random.default_rng(5)
    n, d, C = 50, 8, 2
    B = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
    y = (B[:, 0] ^ B[:, 1] ^ (rng.random(n) < 0.2)).astype(np.int64)
    w = rng.uniform(0.2, 2.0, size=n)
    for k in (1, 2, 3):
        for h in (1, 2, 3):
            e_ref, _ = ref_topk(B, y, w, np.arange(n), h, k, C)
            res = _search(B, y, C, k, h, w=w, cache_depth1=True, feature_classes=True)
            assert res["error"] == pytest.approx(e_ref, abs=1e-9)
            res = _search(B, y, C, k, h, w=w)
            assert res["error"] == pytest.approx(e_ref, abs=1e-9)
            assert _tree_error(res, B, y, w) == pytest.approx(e_ref, abs=1e-9)


def test_k_monotone_in_training_error():
    """The search space of Top-(k+1) contains Top-k's root choices; training error never grows
    with k at depth 1 and the optimum is a lower bound for every k."""
    rng = np.random.default_rng(3)
    B = rng.integers(0, 2, size=(120, 10)).astype(np.uint8)
    y = (B[:, 0] & B[:, 1] | B[:, 2] & B[:, 3]).astype(np.int64) ^ (rng.random(120) < 0.1)
    opt = _search(B, y, 2, 10, 3)["error"]
    for k in range(1, 11):
        assert _search(B, y, 2, k, 3)["error"] >= opt
    assert _search(B, y, 2, 10, 3)["error"] == opt


# ----------------------------------------------------------------------------- pystreed
PYSTREED_SETS = ["benchmark/monk-1-binary", "benchmark/monk-2-binary", "benchmark/monk-3-binary",
                 "benchmark/balance-scale-binary", "benchmark/car-evaluation-binary", "dl85/zoo-1",
                 "dl85/hepatitis", "dl85/lymph", "dl85/vote"]


@pytest.mark.parametrize("name", PYSTREED_SETS)
def test_optimal_matches_pystreed(name, data_dir):
    pystreed = pytest.importorskip("pystreed")
    from treelearn.datasets import load_dataset

    X, y = load_dataset(name, data_dir)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    keep = ~np.isnan(X).any(axis=1)
    X, y = X[keep].astype(np.int32), y[keep]
    _, yc = np.unique(y, return_inverse=True)
    for h in (2, 3):
        st = pystreed.STreeDClassifier(optimization_task="accuracy", max_depth=h, cost_complexity=0.0, time_limit=60)
        st.fit(X, yc)
        st_err = int((st.predict(X) != yc).sum())
        m = OptimalTreeClassifier(max_depth=h, max_binary_features=None).fit(X, yc)
        assert m.is_optimal_
        ours = int((m.predict(X) != yc).sum())
        assert ours == st_err == m.training_error_, (name, h)
        assert m.lower_bound_ == m.training_error_


# ----------------------------------------------------------------------------- greedy
def _walk_up_to_ties(a, b, X, y, criterion):
    """Walk trees a and b (x >= threshold goes right) from the root. Where they split a node's
    rows alike, descend; where they split them differently, both splits must have the same gain
    (a tie: the greedy learner gives it to the widest split, Top-k to the lowest binary feature)
    and the subtrees below are not compared. Returns (splits compared alike, ties)."""
    alike, ties = 0, 0
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        i, j, rows = stack.pop()
        assert (a.children_left[i] < 0) == (b.children_left[j] < 0)
        if a.children_left[i] < 0:
            continue
        ga = X[rows, a.feature[i]] >= a.threshold[i]
        gb = X[rows, b.feature[j]] >= b.threshold[j]
        if not np.array_equal(ga, gb):
            counts = [np.bincount(y[rows[m]], minlength=2) for m in (ga, gb)]
            parent = np.bincount(y[rows], minlength=2)
            assert purity_gain(parent, counts[0], criterion=criterion) == pytest.approx(
                purity_gain(parent, counts[1], criterion=criterion), abs=1e-12), "different splits without a tie"
            ties += 1
            continue
        alike += 1
        stack.append((a.children_left[i], b.children_left[j], rows[~ga]))
        stack.append((a.children_right[i], b.children_right[j], rows[ga]))
    return alike, ties


@pytest.mark.parametrize("criterion", ["entropy", "gini"])
def test_top1_equals_greedy(criterion):
    from treelearn.learn.greedy.estimator import GreedyTreeClassifier

    rng = np.random.default_rng(7)
    n = 300
    X = rng.normal(size=(n, 5))
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] + 0.5 * X[:, 2] > 0)).astype(int)
    y[rng.random(n) < 0.1] ^= 1
    for h in (1, 2, 3, 4):
        g = GreedyTreeClassifier(criterion=criterion, max_depth=h).fit(X, y)
        t = TopKTreeClassifier(k=1, criterion=criterion, max_depth=h, max_binary_features=None).fit(X, y)
        alike, ties = _walk_up_to_ties(g.tree_, t.tree_, X, y, criterion)
        assert alike >= 0.75 * np.count_nonzero(g.tree_.children_left >= 0)  # ties stay rare
        if ties:
            continue
        assert np.array_equal(g.predict(X), t.predict(X)), h
        assert g.tree_.training_misclassifications() == t.tree_.training_misclassifications()
        gi = g.tree_.children_left >= 0
        ti = t.tree_.children_left >= 0
        assert np.array_equal(np.sort(g.tree_.feature[gi]), np.sort(t.tree_.feature[ti]))  # node order may differ
        # thresholds may differ between values no training row separates at that node: the
        # trees must induce the same partition of the training rows
        lg, lt = g.apply(X), t.apply(X)
        pairs = np.unique(np.stack([lg, lt], axis=1), axis=0)
        assert pairs.shape[0] == np.unique(lg).size == np.unique(lt).size


# ----------------------------------------------------------------------------- anytime / memory / jobs
def _hard_binary(n=600, d=60, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, d)).astype(np.uint8)
    y = (B[:, 0] ^ B[:, 1] ^ B[:, 2] ^ (rng.random(n) < 0.1)).astype(np.int64)
    return B, y


def test_time_limit_returns_best_found():
    B, y = _hard_binary()
    m = OptimalTreeClassifier(max_depth=5, time_limit=0.2, max_binary_features=None)
    import time

    t0 = time.perf_counter()
    m.fit(B, y)
    assert time.perf_counter() - t0 < 5.0
    assert m.timed_out_ and not m.is_optimal_
    # the returned tree is a valid tree whose reported error is its real training error
    assert m.tree_.depth <= 5
    assert (m.predict(B) != y).sum() <= m.training_error_ + 1e-9
    assert m.lower_bound_ <= m.training_error_


def test_memory_cap_evicts_and_keeps_result():
    B, y = _hard_binary(n=300, d=24, seed=1)
    full = _search(B, y, 2, 8, 4, memory_limit_mb=512)
    tiny = _search(B, y, 2, 8, 4, memory_limit_mb=0.01)
    assert tiny["evictions"] > 0 and full["evictions"] == 0
    assert tiny["error"] == full["error"]
    assert list(tiny["feature"]) == list(full["feature"])
    assert tiny["peak_bytes"] <= full["peak_bytes"]
    # the optimum under a cap too small for its pair-count matrix (plain counting passes instead)
    opt_full = _search(B, y, 2, 24, 4, memory_limit_mb=512)
    opt_tiny = _search(B, y, 2, 24, 4, memory_limit_mb=0.01)
    assert opt_tiny["error"] == opt_full["error"] and opt_tiny["evictions"] > 0


def test_n_jobs_identical():
    B, y = _hard_binary(n=400, d=30, seed=2)
    for k in (3, 30):
        a = _search(B, y, 2, k, 3, n_jobs=1)
        b = _search(B, y, 2, k, 3, n_jobs=2)
        assert a["error"] == b["error"]
        assert list(a["feature"]) == list(b["feature"])
        assert np.array_equal(a["value"], b["value"])


# ----------------------------------------------------------------------------- estimator
def test_estimator_conventions_and_categorical():
    pd = pytest.importorskip("pandas")
    from sklearn.base import clone

    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"a": pd.Categorical(rng.choice(["r", "g", "b"], size=n)), "x": rng.normal(size=n)})
    y = np.where((df["a"] == "g") | (df["x"] > 1.0), "yes", "no")
    m = TopKTreeClassifier(k=3, max_depth=2).fit(df, y)
    assert set(m.classes_) == {"no", "yes"}
    assert (m.predict(df) == y).mean() > 0.95
    assert m.predict_proba(df).shape == (n, 2)
    assert clone(m).get_params()["k"] == 3
    assert "k" not in OptimalTreeClassifier().get_params()
    with pytest.raises(ValueError, match="k"):
        TopKTreeClassifier(k=0).fit(df, y)
    with pytest.raises(ValueError, match="scoring"):
        TopKTreeClassifier(scoring="bogus").fit(df, y)
    with pytest.raises(ValueError, match="criterion"):
        TopKTreeClassifier(criterion="gina").fit(df, y)


def test_sample_weight_as_repetition():
    rng = np.random.default_rng(4)
    B = rng.integers(0, 2, size=(40, 6))
    y = (B[:, 0] ^ B[:, 1] ^ (rng.random(40) < 0.2)).astype(int)
    reps = rng.integers(1, 4, size=40)
    a = OptimalTreeClassifier(max_depth=2).fit(B, y, sample_weight=reps.astype(float))
    b = OptimalTreeClassifier(max_depth=2).fit(np.repeat(B, reps, axis=0), np.repeat(y, reps))
    assert a.training_error_ == pytest.approx(b.training_error_)


# every check passes (check_class_weight_classifiers too: it sets min_weight_fraction_leaf=0.01, which the
# searches honour)
@parametrize_with_checks([TopKTreeClassifier(max_depth=2), OptimalTreeClassifier(max_depth=2)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("dtype", [np.uint8, bool, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_binary_fast_path_matches_binarizer(dtype, order):
    """0/1 input is packed straight into bit columns (any numeric dtype, C or Fortran order):
    the same binary features, names and BinaryData as the Binarizer's threshold search."""
    from treelearn import Binarizer
    from treelearn.data import _bitset
    from treelearn.data.binarize import binarize_sample
    from treelearn.data.schema import ColumnSchema

    rng = np.random.default_rng(9)
    B = rng.integers(0, 2, size=(150, 9)).astype(float)
    B[:, 3] = 1.0  # constant columns give no feature
    B[:, 6] = 0.0
    y = rng.integers(0, 3, size=150)
    schema = ColumnSchema.infer(B)
    Xe = schema.encode(B)
    ref = Binarizer()
    ref.fit_encoded(Xe, schema)
    ref_data = BinaryData(ref.transform_encoded(Xe), y, 3)
    raw = np.asarray(B.astype(dtype), order=order)
    fast, data = binarize_sample(raw, schema, y, 3)  # the packed path (no Binarizer threshold search)
    assert np.array_equal(fast.feature_, ref.feature_)
    assert np.array_equal(fast.kind_, ref.kind_)
    assert np.array_equal(fast.threshold_, ref.threshold_)
    assert list(fast.feature_names_out_) == list(ref.feature_names_out_)
    for name in ("columns", "class_bits", "y"):
        assert np.array_equal(getattr(data, name), getattr(ref_data, name)), name
    assert data.weights is None and data.n_words == ref_data.n_words
    assert np.array_equal(data.count(data.full_cover()), ref_data.count(ref_data.full_cover()))
    # the estimator takes the packed path and returns the same tree as from a DataFrame
    import pandas as pd

    m1 = TopKTreeClassifier(k=2, max_depth=3).fit(raw, y)
    m2 = TopKTreeClassifier(k=2, max_depth=3).fit(pd.DataFrame(B), y)
    assert np.array_equal(m1.tree_.feature, m2.tree_.feature)
    assert np.array_equal(m1.predict(raw), m2.predict(pd.DataFrame(B)))
    # not 0/1 (or NaN): no fast path
    assert _bitset.pack_binary(Xe + 0.5) is None
    bad = B.copy()
    bad[7, 2] = np.nan
    assert _bitset.pack_binary(bad) is None


def test_packed_path_keeps_errors_and_zero_weights():
    """The packed path changes no behaviour: a NaN leaves it for the Binarizer (a missing value),
    and zero-weight rows are still dropped (same tree as without them)."""
    rng = np.random.default_rng(3)
    B = rng.integers(0, 2, size=(200, 6)).astype(np.uint8)
    y = (B[:, 0] ^ B[:, 1]).astype(int)
    bad = B.astype(float)
    bad[5, 1] = np.nan
    m = TopKTreeClassifier(k=2, max_depth=2).fit(bad, y)
    assert m.training_error_ == np.sum(m.predict(bad) != y)
    assert "x1 is missing" in m.binarizer_.get_feature_names_out().tolist()
    w = np.ones(200)
    w[:50] = 0.0
    a = TopKTreeClassifier(k=2, max_depth=2).fit(B, y, sample_weight=w)
    b = TopKTreeClassifier(k=2, max_depth=2).fit(B[50:], y[50:])
    assert np.array_equal(a.tree_.feature, b.tree_.feature)
    assert a.training_error_ == b.training_error_


def test_simd_build_equals_portable_build():
    """The AVX-512 build of the search (chosen at import on a CPU that has it) returns exactly
    the portable build's tree, error and statistics: Top-k and optimal, weighted and not."""
    from treelearn.learn.topk import _topk as portable
    from treelearn.learn.topk import estimator as topk_mod

    # the CPU first: importing the AVX-512 build on a CPU without it is an illegal instruction
    if not topk_mod._cpu_has_avx512_popcnt():
        pytest.skip("this CPU has no AVX-512 VPOPCNTDQ")
    try:
        from treelearn.learn.topk import _topk_avx512 as simd
    except ImportError:
        pytest.skip("the AVX-512 build was not compiled on this machine")
    rng = np.random.default_rng(17)
    for trial in range(6):
        n, d, C = int(rng.integers(100, 700)), int(rng.integers(8, 90)), int(rng.integers(2, 5))
        B = (rng.random((n, d)) < rng.uniform(0.2, 0.8, size=d)).astype(np.uint8)
        y = ((B[:, 0] & B[:, 1]) | (B[:, 2] ^ B[:, 3])).astype(np.int64) % C
        y[rng.random(n) < 0.2] = rng.integers(0, C)
        w = rng.uniform(0.5, 2.0, size=n) if trial % 3 == 2 else None
        data = BinaryData(B, y, C, w)
        cols = np.ascontiguousarray(data.columns)
        for k, h in ((2, 4), (5, 3), (d, 3)):
            args = (cols, data.y, C, data.weights, k, h, 0, False, 0.0, 2.0**30, 1)
            a, b = portable.search(*args), simd.search(*args)
            for key in ("feature", "left", "right", "value", "n_node_samples"):
                assert np.array_equal(a[key], b[key]), (trial, k, h, key)
            assert a["error"] == b["error"] and a["nodes"] == b["nodes"]


def _gini_G(p):
    return 4.0 * p * (1.0 - p)


def _skewed_G(p):
    # a normalised, symmetric, concave G that is none of the built-ins
    return np.sin(np.pi * p) ** 0.7


@pytest.mark.parametrize("scoring", ["gain", "gain_ratio"])
def test_user_criterion_equals_plain_recursion(scoring):
    """A callable G ranks through the batched callback exactly as Fig. 1 with that G, and G =
    4p(1 - p) gives the built-in Gini's trees."""
    rng = np.random.default_rng(23)
    for trial in range(3):
        n, d, C = int(rng.integers(60, 140)), int(rng.integers(6, 11)), int(rng.integers(2, 4))
        B = (rng.random((n, d)) < rng.uniform(0.2, 0.8, size=d)).astype(np.uint8)
        y = ((B[:, 0] & B[:, 1]) | (B[:, 2] ^ B[:, 3])).astype(np.int64)
        y[rng.random(n) < 0.25] = rng.integers(0, C)
        w = np.ones(n)
        for k, h in ((1, 3), (2, 3), (3, 2), (d, 2)):
            e_ref, t_ref = ref_topk(B, y, w, np.arange(n), h, k, C, _skewed_G, scoring)
            res = _search(B, y, C, k, h, criterion=_skewed_G, scoring=scoring)
            assert res["error"] == e_ref, (trial, k, h)
            assert list(res["feature"]) == preorder(t_ref), (trial, k, h)
            a = _search(B, y, C, k, h, criterion=_gini_G, scoring=scoring)
            b = _search(B, y, C, k, h, criterion="gini", scoring=scoring)
            assert a["error"] == b["error"]
            if scoring == "gain":
                assert list(a["feature"]) == list(b["feature"])


def test_user_criterion_estimator_and_errors():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(200, 7))
    y = X[:, 0] ^ X[:, 1]
    m = TopKTreeClassifier(k=2, max_depth=3, criterion=_skewed_G).fit(X, y)
    assert m.training_error_ <= TopKTreeClassifier(k=1, max_depth=3, criterion=_skewed_G).fit(X, y).training_error_
    assert m.score(X, y) == 1.0
    # a G that is not an impurity function is refused before any search
    with pytest.raises(ValueError, match="normalised"):
        TopKTreeClassifier(criterion=lambda p: p).fit(X, y)

    # a G that fails during the search: its own error, not a crash or a silent tree
    def flaky(p):
        if np.ndim(p) == 2:  # the search's batched class proportions (validation uses a 1-D grid)
            raise ArithmeticError("G failed")
        return _skewed_G(p)

    with pytest.raises(ArithmeticError, match="G failed"):
        TopKTreeClassifier(k=2, max_depth=3, criterion=flaky).fit(X, y)
