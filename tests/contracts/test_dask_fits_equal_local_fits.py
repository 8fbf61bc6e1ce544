"""Dask input (issue 14): fits on row shards held by the workers of a LocalCluster equal the local
fits on the same data; a worker lost mid-fit changes nothing."""
from __future__ import annotations

import os

import numpy as np
import pytest
from sklearn.datasets import make_classification

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from treelearn import GreedyTreeClassifier  # noqa: E402
from treelearn.data import sketch  # noqa: E402
from treelearn.distributed import last_fit_log, use_client  # noqa: E402

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "n_node_samples")


def _data(n=3000, d=6, classes=2, seed=0):
    inf = min(4, d - 1)
    X, y = make_classification(n_samples=n, n_features=d, n_informative=inf, n_redundant=min(1, d - inf - 1),
                               n_classes=classes,
                               n_clusters_per_class=2, random_state=seed)
    X[:, 0] = np.round(X[:, 0], 1)  # a column with few distinct values (node-local midpoints)
    return X, y


def assert_same_tree(a, b, exact=True):
    ta, tb = a.tree_, b.tree_
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
    if exact:
        np.testing.assert_array_equal(ta.value, tb.value)
        np.testing.assert_array_equal(ta.impurity, tb.impurity)
    else:
        np.testing.assert_allclose(ta.value, tb.value, rtol=1e-12, atol=0)
        np.testing.assert_allclose(ta.impurity, tb.impurity, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(a.classes_, b.classes_)


@pytest.mark.parametrize("criterion,classes,params", [
    ("entropy", 2, dict(max_depth=6, max_thresholds=16)),
    ("gini", 3, dict(max_depth=5, max_thresholds=255, min_samples_leaf=7)),
    ("kearns_mansour", 2, dict(max_depth=4, max_thresholds=8, random_state=3, min_samples_split=0.05)),
    ("entropy", 3, dict(max_thresholds=32, min_samples_leaf=0.01, ccp_alpha=0.002)),
    ("gini", 2, dict(max_depth=6, max_thresholds=64, min_impurity_decrease=0.001)),
])
def test_dask_greedy_equals_local_bit_for_bit(client, criterion, classes, params):
    X, y = _data(classes=classes)
    local = GreedyTreeClassifier(criterion=criterion, **params).fit(X, y)
    Xd = da.from_array(X, chunks=(700, 3))  # 5 row shards, columns in 2 chunks (rechunked)
    with use_client(client):
        dist = GreedyTreeClassifier(criterion=criterion, **params).fit(Xd, da.from_array(y, chunks=500))
    assert last_fit_log(), "the sharded path ran"
    assert local.tree_.node_count > 7
    assert_same_tree(local, dist)
    np.testing.assert_array_equal(local.predict(X), dist.predict(X))


@pytest.mark.parametrize("params", [dict(min_weight_fraction_leaf=0.05), dict(max_features=3, random_state=1),
                                    dict(splitter="random", random_state=2), dict(monotonic_cst=[1, 0, -1, 0, 0, 0])])
def test_dask_greedy_with_sklearn_options_equals_local(client, params):
    """The options the sharded growth does not implement fit on the gathered blocks: the local tree."""
    X, y = _data()
    local = GreedyTreeClassifier(max_depth=5, max_thresholds=16, **params).fit(X, y)
    with use_client(client):
        dist = GreedyTreeClassifier(max_depth=5, max_thresholds=16, **params).fit(
            da.from_array(X, chunks=(700, 6)), da.from_array(y, chunks=700))
    assert_same_tree(local, dist)


def test_dask_threshold_sample_matches_local(client, monkeypatch):
    """Above the sample size the thresholds come from the index-hashed sample: shards pick the
    same rows from their offsets, so the trees stay identical (and differ from all-row quantiles)."""
    X, y = _data(n=4000, d=5, seed=4)
    params = dict(max_depth=6, max_thresholds=12)
    full = GreedyTreeClassifier(**params).fit(X, y)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 900)
    local = GreedyTreeClassifier(**params).fit(X, y)
    with use_client(client):
        dist = GreedyTreeClassifier(**params).fit(da.from_array(X, chunks=(613, 5)), da.from_array(y, chunks=613))
    assert_same_tree(local, dist)
    assert not np.array_equal(full.tree_.threshold, local.tree_.threshold)


def test_sketch_mask_is_shard_invariant():
    n = 10_000
    whole = sketch.sketch_mask(0, n, n, 1000)
    parts = np.concatenate([sketch.sketch_mask(a, min(a + 777, n), n, 1000) for a in range(0, n, 777)])
    np.testing.assert_array_equal(whole, parts)
    assert 800 < whole.sum() < 1200
    assert sketch.sketch_mask(0, 50, 50, 1000).all()


@pytest.mark.parametrize("code_dtype", [np.uint8, np.uint16])
def test_unweighted_shard_counts_equal_the_weighted_histograms(code_dtype):
    """The unweighted per-level kernel (int32 class counts per cell) against the weighted one with
    unit weights and against a brute-force count; rows of other nodes / leaves (-1) are skipped."""
    from treelearn.learn.greedy import _level

    rng = np.random.default_rng(3)
    n, C, n_codes = 700, 3, np.array([5, 1, 300 if code_dtype == np.uint16 else 40, 7])
    offset = np.concatenate([[0], np.cumsum(n_codes)]).astype(np.int64)
    codes = np.ascontiguousarray(np.stack([rng.integers(0, m, n) for m in n_codes], axis=1).astype(code_dtype))
    y = rng.integers(0, C, n).astype(np.uint8)
    nid = rng.integers(-1, 6, n).astype(np.int32)
    slot_of = np.array([-1, 0, -1, 2, 1, -1], dtype=np.int32)
    h, hc = _level.histograms(codes, y.astype(np.int64), np.ones(n), nid, slot_of, 3, offset, C)
    cnt = _level.counts(codes, y, nid, slot_of, 3, offset, C, False)
    assert cnt.dtype == np.int32 and cnt.shape == h.shape
    np.testing.assert_array_equal(cnt.astype(np.float64), h)
    np.testing.assert_array_equal(cnt.reshape(3, -1, C).sum(axis=2), hc)
    brute = np.zeros((3, offset[-1], C), dtype=np.int64)
    for r in range(n):
        if nid[r] >= 0 and slot_of[nid[r]] >= 0:
            for f in range(len(n_codes)):
                brute[slot_of[nid[r]], offset[f] + codes[r, f], y[r]] += 1
    np.testing.assert_array_equal(cnt.reshape(3, -1, C), brute)
    wide = _level.counts(codes, y, nid, slot_of, 3, offset, C, True)
    assert wide.dtype == np.int64
    np.testing.assert_array_equal(wide, cnt)
    root = _level.counts(codes, y, None, np.zeros(1, dtype=np.int32), 1, offset, C, False)
    assert root.sum() == n * len(n_codes)


def test_dask_greedy_float_weights_ties_within_tolerance(client):
    X, y = _data(n=2500, seed=1)
    w = np.random.default_rng(0).uniform(0.1, 3.0, size=y.size)
    w[::17] = 0.0  # zero-weight rows are dropped on the shards as in the local fit
    params = dict(max_depth=6, max_thresholds=32)
    local = GreedyTreeClassifier(**params).fit(X, y, sample_weight=w)
    with use_client(client):
        dist = GreedyTreeClassifier(**params).fit(da.from_array(X, chunks=(600, 6)), da.from_array(y, chunks=600),
                                                  sample_weight=da.from_array(w, chunks=600))
    assert_same_tree(local, dist, exact=False)


def test_dask_dataframe_and_global_client(client):
    pd = pytest.importorskip("pandas")
    X, y = _data(n=2000, d=4, seed=2)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    local = GreedyTreeClassifier(max_depth=5, max_thresholds=20).fit(df, y)
    ddf = dd.from_pandas(df, npartitions=3)
    ys = dd.from_pandas(pd.Series(y), npartitions=3)
    with client.as_current():
        dist = GreedyTreeClassifier(max_depth=5, max_thresholds=20).fit(ddf, ys)
    assert_same_tree(local, dist)
    assert list(dist.feature_names_in_) == ["a", "b", "c", "d"]


def test_import_treelearn_imports_no_dask():
    """Dask stays optional: an estimator reaches it only for Dask input, through its room's
    plug-in, imported then (no import of treelearn wires anything in)."""
    import subprocess
    import sys

    code = "import sys, treelearn; print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _majority_leaf_learner(with_plugin: bool):
    """A learner written from the outside: the majority leaf. With its Dask plug-in (the class
    totals counted per block on the workers) or without one (the gathered blocks)."""
    import sys
    import types

    from treelearn.base import BaseTreeClassifier
    from treelearn.tree.tree import Tree

    plugin = types.ModuleType("leaf_room_sharded")
    plugin.calls = []

    def block_totals(y, w):
        y = np.asarray(y).ravel()
        w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=float)
        labels, inv = np.unique(y, return_inverse=True)
        return labels, np.bincount(inv.ravel(), weights=w), int(y.shape[0])

    def class_totals(data):
        import dask

        plugin.calls.append(len(data.blocks.y))
        parts = data.executor.gather(data.executor.compute(
            [dask.delayed(block_totals)(yb, wb) for yb, wb in zip(data.blocks.y, data.blocks.w)]))
        classes = np.unique(np.concatenate([p[0] for p in parts]))
        totals = np.zeros(classes.size)
        for labels, counts, _ in parts:
            totals[np.searchsorted(classes, labels)] += counts
        return classes, totals, sum(p[2] for p in parts)

    plugin.class_totals = class_totals
    sys.modules[plugin.__name__] = plugin

    class MajorityLeaf(BaseTreeClassifier):
        _parameter_constraints: dict = {}
        _dask_plugin = plugin.__name__ if with_plugin else None

        def _fit(self, sample, params):
            counts = np.bincount(sample.y, weights=sample.weights, minlength=sample.n_classes)
            return self._leaf(counts, sample.n_samples, sample.schema)

        def _fit_sharded(self, plugin, data, params):
            classes, totals, n = plugin.class_totals(data)
            return classes, self._leaf(totals, n, data.schema()), 1.0

        @staticmethod
        def _leaf(counts, n, schema):
            tree = Tree.leaf(counts, np.arange(counts.size), schema=schema)
            tree.n_node_samples[0] = n
            return tree

    return MajorityLeaf, plugin


@pytest.mark.parametrize("with_plugin", [True, False], ids=["plug-in", "gathered"])
def test_a_learner_gets_dask_from_its_own_plugin(client, with_plugin):
    """The hook's contract, for a learner nothing in treelearn.distributed knows: with a plug-in
    named by ``_dask_plugin`` its ``_fit_sharded`` runs on the blocks; without one the blocks are
    gathered and fitted as in memory. Either way ``fit`` ends as for arrays (classes, features)."""
    X, y = _data(n=900, d=4, classes=3, seed=21)
    labels = np.array(["a", "b", "c"])[y]
    make, plugin = _majority_leaf_learner(with_plugin)
    local = make().fit(X, labels)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(200, 4)), da.from_array(labels, chunks=200))
    assert plugin.calls == ([5] if with_plugin else [])
    assert_same_tree(local, dist)
    np.testing.assert_array_equal(local.tree_.value, [np.bincount(y)])
    assert dist.n_features_in_ == 4 and list(dist.predict(X[:2])) == [local.classes_[np.argmax(np.bincount(y))]] * 2


def test_dask_without_client_runs_in_process():
    X, y = _data(n=1500, d=4, seed=5)
    local = GreedyTreeClassifier(max_depth=4, max_thresholds=10).fit(X, y)
    dist = GreedyTreeClassifier(max_depth=4, max_thresholds=10).fit(da.from_array(X, chunks=(400, 4)), y)
    assert_same_tree(local, dist)


def test_dask_bad_input_is_a_clear_error(client):
    X, y = _data(n=600, d=3)
    X[5, 1] = np.nan
    with use_client(client), pytest.raises(ValueError, match="NaN or infinity"):
        GreedyTreeClassifier(max_thresholds=8).fit(da.from_array(X, chunks=(200, 3)), y)
    with use_client(client), pytest.raises(ValueError, match="rows"):
        GreedyTreeClassifier(max_thresholds=8).fit(da.from_array(X[:, :2] * 0, chunks=(200, 2)), y[:500])


def test_worker_killed_mid_fit_gives_the_same_tree(monkeypatch):
    """A worker holding shards is closed after the first level: the scheduler recomputes its shards
    (and their node ids) on the other worker from the graph, and the tree is the local one."""
    from treelearn.learn.greedy import sharded as G

    X, y = _data(n=3000, seed=7)
    params = dict(max_depth=6, max_thresholds=16)
    local = GreedyTreeClassifier(**params).fit(X, y)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0", host="127.0.0.1", protocol="tcp")
    client = distributed.Client(cluster, set_as_default=False)
    killed = []
    orig = G.DistributedGreedy._hists

    def hists(self, nid, slot_of, n_slots):
        if len(self.log) == 2 and not killed:  # mid-fit: after two levels
            held = {w: len(keys) for w, keys in client.has_what().items()}
            victim = max(held, key=held.get)
            assert held[victim] > 0, "the victim holds shards"
            _close_worker(cluster, victim)
            killed.append(victim)
        return orig(self, nid, slot_of, n_slots)

    monkeypatch.setattr(G.DistributedGreedy, "_hists", hists)
    try:
        with use_client(client):
            dist = GreedyTreeClassifier(**params).fit(da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500))
        assert killed and len(client.scheduler_info()["workers"]) == 1
        assert_same_tree(local, dist)
    finally:
        client.close()
        cluster.close()


@pytest.mark.parametrize("make", [
    lambda: __import__("treelearn").TopKTreeClassifier(k=2, max_depth=3, max_thresholds=8),
    lambda: __import__("treelearn").OptimalTreeClassifier(max_depth=2, max_thresholds=6),
    lambda: __import__("treelearn").GreedyTreeClassifier(max_depth=4),  # exact mode: gathered
    lambda: __import__("treelearn").GreedyTreeClassifier(max_leaves=6, max_thresholds=16),
    lambda: __import__("treelearn").PrunedTreeClassifier(max_depth=4),
    # monotonic constraints: the gathered blocks (the local fit)
    lambda: __import__("treelearn").TopKTreeClassifier(k=2, max_depth=3, max_thresholds=8, monotonic_cst=[1, 0, -1, 0]),
    lambda: __import__("treelearn").OptimalTreeClassifier(max_depth=2, max_binary_features=None,
                                                          monotonic_cst=[0, -1, 0, 1]),
])
def test_other_estimators_accept_dask_with_identical_trees(client, make):
    X, y = _data(n=400, d=4, seed=3)
    local = make().fit(X, y)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(150, 4)), da.from_array(y, chunks=150))
    assert_same_tree(local, dist)


@pytest.mark.parametrize("make", [
    lambda: __import__("treelearn").MinRankTreeClassifier(time_limit=20),
    lambda: __import__("treelearn").QueryTreeClassifier(size=4, epsilon=0.2, random_state=0),
    lambda: __import__("treelearn").OptimalTreeClassifier(max_depth=2, solver="continuous"),
])
def test_searching_learners_accept_dask_on_binary_data(client, make):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(240, 5)).astype(float)
    y = ((X[:, 0] == 1) & (X[:, 1] == 0) | (X[:, 2] == 1) & (X[:, 3] == 1)).astype(int)
    local = make().fit(X, y)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100))
    assert_same_tree(local, dist)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TREELEARN_DASK_PROCESSES"),
                    reason="worker processes take ~15-60 s to start here: set TREELEARN_DASK_PROCESSES=1")
def test_worker_process_killed_mid_fit(monkeypatch):
    """SIGKILL of a worker process (its nanny starts a new one): the fit ends with the local tree."""
    from treelearn.learn.greedy import sharded as G

    X, y = _data(n=2000, seed=8)
    params = dict(max_depth=5, max_thresholds=16)
    local = GreedyTreeClassifier(**params).fit(X, y)
    cluster, client = _process_cluster()
    killed = []
    orig = G.DistributedGreedy._hists

    def hists(self, nid, slot_of, n_slots):
        if len(self.log) == 2 and not killed:
            held = {w: len(keys) for w, keys in client.has_what().items()}
            victim = max(held, key=held.get)
            assert held[victim] > 0
            killed.append(_sigkill_worker(client, victim))
        return orig(self, nid, slot_of, n_slots)

    monkeypatch.setattr(G.DistributedGreedy, "_hists", hists)
    try:
        with use_client(client):
            dist = GreedyTreeClassifier(**params).fit(da.from_array(X, chunks=(400, 6)), da.from_array(y, chunks=400))
        assert killed
        assert_same_tree(local, dist)
    finally:
        client.close()
        cluster.close()


# ------------------------------------------------------------------ Top-k / optimal on shards
TOPK_ATTRS = ("training_error_", "is_optimal_", "lower_bound_", "greedy_error_", "incumbent_source_", "timed_out_",
              "n_binary_features_", "solver_")


def assert_same_search_fit(local, dist, exact=True):
    """The tree and the fitted attributes of the local fit (search statistics aside: they are
    sums over the tasks, as for local n_jobs threads)."""
    assert_same_tree(local, dist, exact=exact)
    np.testing.assert_array_equal(local.tree_.threshold, dist.tree_.threshold)
    np.testing.assert_array_equal(local.tree_.missing_go_to_left, dist.tree_.missing_go_to_left)
    for name in TOPK_ATTRS:
        a, b = getattr(local, name), getattr(dist, name)
        if exact or not isinstance(a, float):
            assert a == b, (name, a, b)
        else:
            assert b == pytest.approx(a, rel=1e-12), name
    fa, fb = local.feature_space_, dist.feature_space_
    assert fa.keys() == fb.keys()
    for key in fa:
        np.testing.assert_array_equal(fa[key], fb[key], err_msg=key)
    for name in ("feature_", "kind_", "threshold_", "missing_"):
        np.testing.assert_array_equal(getattr(local.binarizer_, name), getattr(dist.binarizer_, name), err_msg=name)


def _topk_make(kind):
    import treelearn as tl

    return {
        "topk3": lambda: tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=30),
        "topk2-thr": lambda: tl.TopKTreeClassifier(k=2, max_depth=4, max_thresholds=6, max_binary_features=None),
        "optimal3": lambda: tl.OptimalTreeClassifier(max_depth=3, max_binary_features=24),
        "optimal2": lambda: tl.OptimalTreeClassifier(max_depth=2, max_binary_features=40),
        "topk-no-greedy": lambda: tl.TopKTreeClassifier(k=4, max_depth=3, max_binary_features=30,
                                                        greedy_incumbent=False),
        "gini-ratio": lambda: tl.TopKTreeClassifier(k=3, max_depth=3, criterion="gini", scoring="gain_ratio",
                                                    max_binary_features=30),
    }[kind]


@pytest.mark.parametrize("sharded_sample", [False, True], ids=["gathered-sample", "sharded"])
@pytest.mark.parametrize("kind,classes,seed", [
    ("topk3", 2, 0), ("topk3", 3, 1), ("topk2-thr", 2, 2), ("optimal3", 2, 3), ("optimal3", 3, 4),
    ("optimal2", 2, 5), ("topk-no-greedy", 2, 6), ("gini-ratio", 3, 7),
])
def test_dask_topk_equals_local_bit_for_bit(client, monkeypatch, kind, classes, seed, sharded_sample):
    """Top-k / optimal on shards: the local tree and attributes. ``sharded``: above the threshold
    sample's size (made small here), the incumbent is the sharded histogram greedy, the Binarizer is
    fitted from the sample and every block packs its own bits."""
    from treelearn.distributed import last_search_info

    X, y = _data(n=2400, d=5, classes=classes, seed=seed)
    if sharded_sample:
        monkeypatch.setattr(sketch, "SKETCH_ROWS", 700)
    make = _topk_make(kind)
    local = make().fit(X, y)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(550, 5)), da.from_array(y, chunks=550))
    info = last_search_info()
    assert ("packed blocks to the assembling worker" in info["bytes"]) == sharded_sample
    if "2" not in kind[-1]:
        assert info["shares"] == 2, "two search tasks shared the root's candidates"
    assert local.tree_.node_count >= 5
    assert_same_search_fit(local, dist)
    np.testing.assert_array_equal(local.predict(X), dist.predict(X))


@pytest.mark.parametrize("sharded_sample", [False, True], ids=["gathered-sample", "sharded"])
@pytest.mark.parametrize("seed", [0, 1])
def test_dask_topk_binary_data(client, monkeypatch, sharded_sample, seed):
    """0/1 data: packed as is (constant columns dropped), the Top-1 incumbent on the packed bits."""
    import treelearn as tl

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(1500, 14)).astype(np.uint8)
    X[:, 5] = 1  # a constant column: no feature
    y = ((X[:, 0] ^ X[:, 1]) | (X[:, 2] & X[:, 3])).astype(int)
    y = np.where(rng.random(y.size) < 0.15, 1 - y, y) + (X[:, 4] & X[:, 6])
    if sharded_sample:
        monkeypatch.setattr(sketch, "SKETCH_ROWS", 400)
    for make in (lambda: tl.TopKTreeClassifier(k=4, max_depth=4), lambda: tl.OptimalTreeClassifier(max_depth=3)):
        local = make().fit(X, y)
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(333, 14)), da.from_array(y, chunks=333))
        assert_same_search_fit(local, dist)


@pytest.mark.parametrize("sharded_sample", [False, True], ids=["gathered-sample", "sharded"])
def test_dask_topk_float_weights(client, monkeypatch, sharded_sample):
    import treelearn as tl

    X, y = _data(n=2000, d=4, classes=3, seed=11)
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=y.size)
    w[::13] = 0.0
    if sharded_sample:
        monkeypatch.setattr(sketch, "SKETCH_ROWS", 600)
    for make in (lambda: tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=20),
                 lambda: tl.OptimalTreeClassifier(max_depth=3, max_binary_features=16)):
        local = make().fit(X, y, sample_weight=w)
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(450, 4)), da.from_array(y, chunks=450),
                              sample_weight=da.from_array(w, chunks=450))
        assert_same_search_fit(local, dist, exact=False)


def test_dask_topk_missing_values(client, monkeypatch):
    """NaN: the Binarizer's missing directions (gathered sample); above the sample size the fit is
    gathered (the sharded greedy incumbent needs finite values): the local tree either way."""
    import treelearn as tl

    X, y = _data(n=1600, d=4, seed=12)
    X[np.random.default_rng(2).random(X.shape) < 0.05] = np.nan
    make = lambda: tl.OptimalTreeClassifier(max_depth=3, max_binary_features=16)  # noqa: E731
    for rows in (200_000, 500):
        monkeypatch.setattr(sketch, "SKETCH_ROWS", rows)
        local = make().fit(X, y)
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(400, 4)), da.from_array(y, chunks=400))
        assert_same_search_fit(local, dist)


def test_dask_topk_without_client_runs_in_process(monkeypatch):
    import treelearn as tl

    X, y = _data(n=1500, d=4, seed=13)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 500)
    local = tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=20).fit(X, y)
    dist = tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=20).fit(da.from_array(X, chunks=(400, 4)), y)
    assert_same_search_fit(local, dist)


def test_root_search_shares_give_the_search_tree():
    """The compiled RootSearch: shares of the root's candidates, each searched below its own best,
    merged by the lowest rank among the smallest errors, give topk_search's tree (k < d, optimum,
    weights), whatever the number of shares."""
    from treelearn.data.bitmatrix import BinaryData
    from treelearn.learn.topk.estimator import root_search, topk_search

    for seed in range(12):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 2, size=(300, 12)).astype(np.uint8)
        y = ((X[:, 0] ^ X[:, 1]) | (X[:, 2] & X[:, 3])).astype(int)
        y = np.where(rng.random(300) < 0.2, 1 - y, y)
        data = BinaryData(X, y, 2, rng.uniform(0.5, 2.0, 300) if seed % 2 else None)
        k, h, T = [2, 4, "all"][seed % 3], 3 + seed % 2, 1 + seed % 4
        ref = topk_search(data, k=k, max_depth=h)
        shares = []
        for t in range(T):
            rs = root_search(data.columns, data.y, 2, data.weights, k=k, max_depth=h)
            cand = rs.candidates()
            best, best_ci = np.inf, -1
            for ci in range(t, len(cand), T):
                e = rs.search(int(cand[ci]), best)
                if e is not None:
                    best, best_ci = e, ci
            if best_ci >= 0:
                shares.append((best, best_ci, rs.build(int(cand[best_ci]))))
        err, _, tree = min(shares, key=lambda s: (s[0], s[1]))
        assert err == ref["error"]
        for a, b in (("feature", "feature"), ("left", "children_left"), ("right", "children_right"),
                     ("n_node_samples", "n_node_samples"), ("value", "value")):
            np.testing.assert_array_equal(tree[a], ref[b])


def test_topk_binarizer_threshold_sample_above_sketch_rows(monkeypatch):
    """Local behaviour above SKETCH_ROWS rows (issue 14): a budgeted Binarizer's thresholds come
    from the fixed threshold sample, and the greedy incumbent is the histogram greedy of
    INCUMBENT_THRESHOLDS thresholds; at or below it, every row and the exact greedy tree."""
    import treelearn as tl
    from treelearn.data.binarize import Binarizer
    from treelearn.learn.topk.estimator import INCUMBENT_THRESHOLDS

    X, y = _data(n=3000, d=4, seed=14)

    def expected(rows, greedy):
        g = greedy.tree_
        binz = Binarizer(max_binary_features=20).fit(X[rows])
        out = []
        for j in range(X.shape[1]):
            own = binz.threshold_[binz.feature_ == j]
            split = g.threshold[(g.children_left >= 0) & (g.feature == j)]
            out.append(np.union1d(own, split))
        return out, float(np.sum(g.value[g.children_left < 0].sum(1) - g.value[g.children_left < 0].max(1)))

    for sample_rows, max_thr in ((200_000, None), (800, INCUMBENT_THRESHOLDS)):
        monkeypatch.setattr(sketch, "SKETCH_ROWS", sample_rows)
        m = tl.OptimalTreeClassifier(max_depth=3, max_binary_features=20).fit(X, y)
        greedy = tl.GreedyTreeClassifier(max_depth=3, max_thresholds=max_thr).fit(X, y)
        thr, g_err = expected(sketch.sketch_mask(0, 3000, 3000), greedy)
        assert m.greedy_error_ == g_err
        for j in range(X.shape[1]):
            np.testing.assert_array_equal(m.binarizer_.threshold_[m.binarizer_.feature_ == j], thr[j])


def _cluster():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0", host="127.0.0.1", protocol="tcp")
    return cluster, distributed.Client(cluster, set_as_default=False)


def _process_cluster():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", host="127.0.0.1")
    return cluster, distributed.Client(cluster, set_as_default=False)


def _workers_running(client, futures, tries=200, pause=0.01):
    """{worker address: its processing keys} for the workers running one of the futures' tasks,
    polled until one does (at most tries x pause seconds)."""
    import time

    keys = {f.key for f in futures}
    busy = {}
    for _ in range(tries):
        busy = {w: ks for w, ks in client.processing().items() if keys & set(ks)}
        if busy:
            break
        time.sleep(pause)
    assert busy, "a search task was running"
    return busy


def _close_worker(cluster, address):
    """Close the in-process worker at this address: the scheduler loses it and everything it held."""
    name = next(n for n, w in cluster.workers.items() if w.address == address)
    cluster.sync(cluster.workers[name].close, timeout=10)


def _sigkill_worker(client, address):
    """SIGKILL the worker process at this address (its nanny starts a new one); returns its pid."""
    import signal

    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    return pid


def test_worker_killed_mid_search_gives_the_same_tree(monkeypatch):
    """A worker running a search task and holding the packed sample and shards is closed once
    the search tasks are submitted: its task runs again on the other worker (the packed sample
    was replicated there; shards and greedy are recomputed from the graph when needed), and the
    tree and attributes are the local fit's."""
    import treelearn as tl
    from treelearn.distributed import farm

    X, y = _data(n=3000, d=6, seed=7)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 1000)
    make = lambda: tl.OptimalTreeClassifier(max_depth=4, max_binary_features=60)  # noqa: E731
    local = make().fit(X, y)
    cluster, client = _cluster()
    killed = []

    def after_submit(futures):
        busy = _workers_running(client, futures, tries=100, pause=0.02)
        held = client.has_what()
        victim = max(busy, key=lambda w: len(held.get(w, ())))
        assert held[victim], "the victim holds data"
        _close_worker(cluster, victim)
        killed.append(victim)

    monkeypatch.setattr(farm, "after_submit", after_submit)
    try:
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500))
        assert killed and len(client.scheduler_info()["workers"]) == 1
        assert_same_search_fit(local, dist)
    finally:
        client.close()
        cluster.close()


def test_dask_topk_time_limit_and_ctrl_c(client, monkeypatch):
    """time_limit holds for the whole Dask fit (the tasks stop at the fit's deadline: the best
    tree found, timed_out_); Ctrl-C on the driver stops the running searches, cancels them and
    raises KeyboardInterrupt with the greedy incumbent as ``partial_tree``."""
    import time
    import warnings

    import treelearn as tl
    from treelearn.distributed import farm

    X, y = _data(n=4000, d=6, seed=7)
    Xd, yd = da.from_array(X, chunks=(1000, 6)), da.from_array(y, chunks=1000)
    greedy = tl.GreedyTreeClassifier(max_depth=5).fit(X, y)
    with use_client(client), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        m = tl.OptimalTreeClassifier(max_depth=5, max_binary_features=30, time_limit=1.0).fit(Xd, yd)
        took = time.perf_counter() - t0
    assert m.timed_out_ and not m.is_optimal_ and took < 4.0, took
    assert any("time limit" in str(w.message) for w in caught)
    assert m.score(X, y) >= greedy.score(X, y)

    def interrupt(futures):
        time.sleep(0.3)
        raise KeyboardInterrupt

    monkeypatch.setattr(farm, "after_submit", interrupt)
    with use_client(client), pytest.raises(KeyboardInterrupt) as info:
        tl.OptimalTreeClassifier(max_depth=5, max_binary_features=30).fit(Xd, yd)
    assert info.value.partial_tree is not None and info.value.partial_tree.node_count > 1
    t0 = time.perf_counter()
    while any(client.processing().values()) and time.perf_counter() - t0 < 3.0:
        time.sleep(0.05)
    assert not any(client.processing().values()), "the searches stopped"


@pytest.mark.parametrize("criterion,classes,params", [
    ("gini", 2, dict(max_leaves=12, max_thresholds=16)),
    ("entropy", 3, dict(max_leaves=30, max_thresholds=64, min_samples_leaf=5)),
    ("kearns_mansour", 2, dict(max_leaves=20, max_thresholds=8, max_depth=5, random_state=2)),
    ("gini", 3, dict(max_leaves=40, max_thresholds=255, min_impurity_decrease=0.0005, ccp_alpha=0.001)),
])
def test_dask_greedy_best_first_equals_local(client, criterion, classes, params):
    """Best-first growth (max_leaves) on shards: one split per round trip, the local tree."""
    X, y = _data(classes=classes, seed=9)
    local = GreedyTreeClassifier(criterion=criterion, **params).fit(X, y)
    with use_client(client):
        dist = GreedyTreeClassifier(criterion=criterion, **params).fit(da.from_array(X, chunks=(700, 3)),
                                                                       da.from_array(y, chunks=500))
    assert last_fit_log(), "the sharded path ran"
    assert local.tree_.node_count > 9
    assert_same_tree(local, dist)
    np.testing.assert_array_equal(local.tree_.threshold, dist.tree_.threshold)


def test_dask_greedy_best_first_float_weights(client):
    X, y = _data(n=2500, seed=10)
    w = np.random.default_rng(3).uniform(0.1, 3.0, size=y.size)
    w[::19] = 0.0
    params = dict(max_leaves=25, max_thresholds=32)
    local = GreedyTreeClassifier(**params).fit(X, y, sample_weight=w)
    with use_client(client):
        dist = GreedyTreeClassifier(**params).fit(da.from_array(X, chunks=(600, 6)), da.from_array(y, chunks=600),
                                                  sample_weight=da.from_array(w, chunks=600))
    assert_same_tree(local, dist, exact=False)


@pytest.mark.parametrize("params", [
    dict(pruning="bound", max_thresholds=32),  # best-first to 40 leaves (the default)
    dict(pruning="bound", max_thresholds=16, max_leaves=None, max_depth=7, criterion="entropy"),
    dict(pruning=None, max_thresholds=64, max_leaves=25, min_samples_leaf=3),
    dict(pruning="bound", max_thresholds=255, max_leaves=12, loose=False, delta=0.1),
])
def test_dask_pruned_tree_bound_pruning_equals_local(client, params):
    """PrunedTreeClassifier: the greedy tree grown on the shards, bound pruning on its node counts
    (the driver): the local trees, bound and history."""
    from treelearn import PrunedTreeClassifier

    X, y = _data(n=3000, classes=3, seed=15)
    local = PrunedTreeClassifier(**params).fit(X, y)
    with use_client(client):
        dist = PrunedTreeClassifier(**params).fit(da.from_array(X, chunks=(700, 6)), da.from_array(y, chunks=700))
    assert last_fit_log(), "the sharded path ran"
    assert_same_tree(local, dist)
    for a, b in ((local.unpruned_tree_, dist.unpruned_tree_),):
        for name in TREE_ARRAYS + ("value", "impurity"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.classes, b.classes)
    assert local.bound_ == dist.bound_ and local.ccp_alpha_ == dist.ccp_alpha_
    if params["pruning"] == "bound":
        np.testing.assert_array_equal(local.bound_history_, dist.bound_history_)
    if params["pruning"] == "bound" and params.get("loose", True):
        assert local.tree_.node_count < local.unpruned_tree_.node_count  # (something was pruned)


@pytest.mark.parametrize("signed,weighted,seed", [(False, False, 0), (True, False, 1), (False, True, 2),
                                                  (False, False, 3)])
def test_dask_min_rank_equals_local(client, signed, weighted, seed):
    """MinRankTreeClassifier on 0/1 (or ±1) data: the blocks' distinct points with their
    multiplicities, merged on the driver, give the local search's input; the local tree, rank
    and counts (weights: up to the order of the sums)."""
    import treelearn as tl

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(900, 9)).astype(np.int8 if signed else np.uint8)
    X[:, 4] = 1  # a constant column
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3]) | (X[:, 5] & X[:, 6] & X[:, 7])).astype(int)
    y = np.where(X[:, 8] & X[:, 0] & ~X[:, 1] & 1, 2, y)  # a third class
    if signed:
        X = (2 * X.astype(np.int64) - 1).astype(np.int8)
    w = rng.uniform(0.5, 2.0, size=y.size) if weighted else None
    local = tl.MinRankTreeClassifier().fit(X, y, sample_weight=w)
    with use_client(client):
        dist = tl.MinRankTreeClassifier().fit(da.from_array(X, chunks=(250, 9)), da.from_array(y, chunks=250),
                                              sample_weight=None if w is None else da.from_array(w, chunks=250))
    assert local.rank_ == dist.rank_ >= 2
    assert_same_tree(local, dist, exact=not weighted)
    np.testing.assert_array_equal(local.tree_.threshold, dist.tree_.threshold)
    np.testing.assert_array_equal(local.binarizer_.feature_, dist.binarizer_.feature_)


def test_dask_min_rank_inconsistent_sample_is_a_clear_error(client):
    import treelearn as tl
    from treelearn.learn.minrank.estimator import InconsistentSampleError

    X = np.array([[0, 1], [1, 0], [0, 1], [1, 1]] * 50, dtype=np.uint8)
    y = np.array([0, 1, 1, 0] * 50)
    with use_client(client), pytest.raises(InconsistentSampleError, match="identical rows"):
        tl.MinRankTreeClassifier().fit(da.from_array(X, chunks=(60, 2)), da.from_array(y, chunks=60))


@pytest.mark.parametrize("max_depth", [0, 1, 3])
def test_dask_topk_dataframe_string_labels(client, monkeypatch, max_depth):
    """A Dask DataFrame with integer and float columns and string labels, on both paths."""
    pd = pytest.importorskip("pandas")
    import treelearn as tl

    X, y = _data(n=1800, d=4, classes=3, seed=16)
    df = pd.DataFrame({"a": X[:, 0], "b": np.round(X[:, 1] * 3).astype(np.int64), "c": X[:, 2], "d": X[:, 3]})
    labels = np.array(["lo", "mid", "hi"])[y]
    for rows in (200_000, 600):
        monkeypatch.setattr(sketch, "SKETCH_ROWS", rows)
        make = lambda: tl.TopKTreeClassifier(k=3, max_depth=max_depth, max_binary_features=24)  # noqa: E731
        local = make().fit(df, labels)
        with use_client(client):
            dist = make().fit(dd.from_pandas(df, npartitions=4), dd.from_pandas(pd.Series(labels), npartitions=4))
        assert_same_search_fit(local, dist)
        assert list(dist.feature_names_in_) == ["a", "b", "c", "d"]
        np.testing.assert_array_equal(local.predict(df), dist.predict(df))


@pytest.mark.parametrize("params,weighted", [
    (dict(pruning="ccp", max_thresholds=32, cv=3, max_leaves=16, criterion="gini", random_state=0), False),
    (dict(pruning="mcart", max_thresholds=16, cv=4, max_leaves=None, max_depth=6, criterion="gini", random_state=1),
     False),
    (dict(pruning="ccp", max_thresholds=64, cv=2, max_leaves=20, criterion="entropy", random_state=2), True),
])
def test_dask_pruned_tree_cv_pruning_equals_local(client, monkeypatch, params, weighted):
    """The CV pruners: the fold trees grown on the shards (held-out rows at weight zero), scored on
    their held-out rows per block: the local α, path and pruned tree (the threshold sample made
    small so that the folds' thresholds come from their own samples)."""
    from treelearn import PrunedTreeClassifier

    monkeypatch.setattr(sketch, "SKETCH_ROWS", 900)
    # (a seed where every pruner's cross-validated alpha is positive, so that pruning acts)
    X, y = _data(n=2400, classes=3, seed=19)
    # integer weights (zeros too): every sum is exact, so the α is the local one bit for bit
    w = np.random.default_rng(4).integers(0, 4, size=y.size).astype(float) if weighted else None
    local = PrunedTreeClassifier(**params).fit(X, y, sample_weight=w)
    with use_client(client):
        dist = PrunedTreeClassifier(**params).fit(da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500),
                                                  sample_weight=None if w is None else da.from_array(w, chunks=500))
    assert local.ccp_alpha_ == dist.ccp_alpha_ and local.ccp_alpha_ > 0
    np.testing.assert_array_equal(local.ccp_path_.ccp_alphas, dist.ccp_path_.ccp_alphas)
    assert_same_tree(local, dist)
    for name in TREE_ARRAYS + ("value",):
        np.testing.assert_array_equal(getattr(local.unpruned_tree_, name), getattr(dist.unpruned_tree_, name))
    assert local.tree_.node_count < local.unpruned_tree_.node_count


def test_dask_search_tasks_leave_the_default_scheduler_alone(client):
    """The search tasks reach the scheduler (shared bound, stop event) with a client of their own:
    in a cluster of threads (the caller's process) ``get_client()`` in a task would make the
    worker's client the process's default scheduler."""
    import treelearn as tl

    X, y = _data(n=1200, d=4, seed=18)
    with pytest.raises(ValueError):
        distributed.default_client()
    with use_client(client):
        tl.OptimalTreeClassifier(max_depth=3, max_binary_features=16).fit(da.from_array(X, chunks=(300, 4)), y)
    with pytest.raises(ValueError):
        distributed.default_client()


def test_dask_topk_time_limit_before_the_search(client, monkeypatch):
    """A deadline passed before the bits are packed: the greedy incumbent, timed out."""
    import warnings

    import treelearn as tl

    monkeypatch.setattr(sketch, "SKETCH_ROWS", 500)
    X, y = _data(n=1500, d=4, seed=19)
    with use_client(client), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=16, time_limit=1e-6).fit(
            da.from_array(X, chunks=(400, 4)), da.from_array(y, chunks=400))
    greedy = tl.GreedyTreeClassifier(max_depth=3, max_thresholds=255).fit(X, y)
    assert m.timed_out_ and m.incumbent_source_ == "greedy" and not m.is_optimal_
    np.testing.assert_array_equal(m.tree_.feature, greedy.tree_.feature)
    np.testing.assert_array_equal(m.predict(X), greedy.predict(X))


@pytest.mark.parametrize("greedy_incumbent", [True, False])
def test_dask_topk_constant_weights_with_zeros(client, monkeypatch, greedy_incumbent):
    """sample_weight given but equal on the kept rows (the unweighted fit), some rows at zero:
    the threshold sample is drawn among the kept rows (a second pass)."""
    import treelearn as tl

    monkeypatch.setattr(sketch, "SKETCH_ROWS", 500)
    X, y = _data(n=1800, d=4, seed=20)
    w = np.full(y.size, 2.0)
    w[::7] = 0.0
    make = lambda: tl.TopKTreeClassifier(k=3, max_depth=3, max_binary_features=16,  # noqa: E731
                                         greedy_incumbent=greedy_incumbent)
    local = make().fit(X, y, sample_weight=w)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(450, 4)), da.from_array(y, chunks=450),
                          sample_weight=da.from_array(w, chunks=450))
    assert_same_search_fit(local, dist)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TREELEARN_DASK_PROCESSES"),
                    reason="worker processes take ~15-60 s to start here: set TREELEARN_DASK_PROCESSES=1")
def test_worker_process_killed_mid_search(monkeypatch):
    """SIGKILL of a worker process running a search task (its nanny starts a new one): the fit
    ends with the local tree and attributes."""
    import treelearn as tl
    from treelearn.distributed import farm

    X, y = _data(n=3000, d=6, seed=7)
    # (the worker processes keep SKETCH_ROWS at its default: the driver passes the sample size)
    monkeypatch.setattr(sketch, "SKETCH_ROWS", 1000)
    make = lambda: tl.OptimalTreeClassifier(max_depth=4, max_binary_features=60)  # noqa: E731
    local = make().fit(X, y)
    cluster, client = _process_cluster()
    killed = []

    def after_submit(futures):
        killed.append(_sigkill_worker(client, next(iter(_workers_running(client, futures, tries=500, pause=0.02)))))

    monkeypatch.setattr(farm, "after_submit", after_submit)
    try:
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500))
        assert killed
        assert_same_search_fit(local, dist)
    finally:
        client.close()
        cluster.close()


# ---------------------------------------------------------------- the continuous solver on Dask
CONT_ATTRS = ("training_error_", "is_optimal_", "lower_bound_", "greedy_error_", "incumbent_source_", "timed_out_",
              "n_binary_features_", "solver_")


def _cont_data(seed, classes=2, weights=None, nan=False, n=1500, d=5):
    """Many equal-error trees: an integer-valued column and its duplicate, a constant column."""
    X, y = _data(n=n, d=d, classes=classes, seed=seed)
    rng = np.random.default_rng(seed)
    X[:, 1] = np.round(X[:, 1])
    X[:, -1] = X[:, 1]
    X[:, 2] = 1.0
    if nan:
        X[rng.random(X.shape) < 0.05] = np.nan
    w = None
    if weights == "int":
        w = rng.integers(0, 4, size=n).astype(float)  # zeros: rows dropped
    elif weights == "float":
        w = rng.uniform(0.1, 3.0, size=n)
    return X, y, w


def assert_same_continuous_fit(local, dist, exact=True):
    assert_same_tree(local, dist, exact=exact)
    np.testing.assert_array_equal(local.tree_.threshold, dist.tree_.threshold)
    np.testing.assert_array_equal(local.tree_.missing_go_to_left, dist.tree_.missing_go_to_left)
    for name in CONT_ATTRS:
        a, b = getattr(local, name), getattr(dist, name)
        if exact or not isinstance(a, float):
            assert a == b, (name, a, b)
        else:
            assert b == pytest.approx(a, rel=1e-12), name
    assert dist.solver_ == "continuous"


@pytest.mark.parametrize("seed,classes,weights,nan,depth,n", [
    (0, 2, None, False, 3, 1500), (1, 3, None, False, 3, 1500), (2, 2, "int", False, 3, 1500),
    (3, 3, "int", False, 2, 1500), (4, 2, None, True, 3, 1200), (5, 3, "int", True, 3, 1200),
    (6, 2, None, False, 3, 4500),  # >= GREEDY_FIRST_CELLS: the greedy tree is the first bound
    (7, 2, "int", False, 4, 800),
])
def test_dask_continuous_equals_local_bit_for_bit(client, seed, classes, weights, nan, depth, n):
    """The continuous solver on Dask: the searched columns broadcast, the root's features dealt to
    two tasks sharing a bound; the tree (thresholds, counts, missing directions) and the fitted
    attributes are the local fit's."""
    import treelearn as tl
    from treelearn.distributed import last_search_info

    X, y, w = _cont_data(seed, classes, weights, nan, n=n)
    make = lambda: tl.OptimalTreeClassifier(max_depth=depth, solver="continuous")  # noqa: E731
    local = make().fit(X, y, sample_weight=w)
    with use_client(client):
        dist = make().fit(da.from_array(X, chunks=(400, 5)), da.from_array(y, chunks=400),
                          None if w is None else da.from_array(w, chunks=400))
    info = last_search_info()
    assert info["shares"] == 2 and "searched columns broadcast" in info["bytes"]
    assert local.is_optimal_ and local.tree_.node_count >= 5
    assert_same_continuous_fit(local, dist)
    np.testing.assert_array_equal(local.predict(X), dist.predict(X))


def test_dask_continuous_topk_and_float_weights(client):
    """Top-k with every threshold (the continuous solver) and float weights: the local tree, the
    counts to the last bits (the weights are summed in the local order: same search)."""
    import treelearn as tl

    X, y, w = _cont_data(11, 2, "float", n=1000)
    for make in (lambda: tl.TopKTreeClassifier(k="all", max_depth=3, max_binary_features=None),
                 lambda: tl.OptimalTreeClassifier(max_depth=3, max_binary_features=None)):
        local = make().fit(X, y, sample_weight=w)
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300),
                              da.from_array(w, chunks=300))
        assert_same_continuous_fit(local, dist, exact=False)


def test_dask_continuous_without_client_runs_in_process():
    import treelearn as tl

    X, y, _ = _cont_data(3, n=600)
    local = tl.OptimalTreeClassifier(max_depth=3, solver="continuous").fit(X, y)
    dist = tl.OptimalTreeClassifier(max_depth=3, solver="continuous").fit(da.from_array(X, chunks=(200, 5)),
                                                                         da.from_array(y, chunks=200))
    assert_same_continuous_fit(local, dist)


def test_worker_killed_mid_continuous_search_gives_the_same_tree(monkeypatch):
    """A worker running a continuous search task is closed once the tasks are submitted: its
    task runs again on the other worker from the broadcast columns, and the tree and attributes
    are the local fit's."""
    import treelearn as tl
    from treelearn.distributed import farm

    X, y, _ = _cont_data(8, n=600, d=8)  # a search of a few seconds
    make = lambda: tl.OptimalTreeClassifier(max_depth=4, solver="continuous")  # noqa: E731
    local = make().fit(X, y)
    cluster, client = _cluster()
    killed = []

    def after_submit(futures):
        victim = next(iter(_workers_running(client, futures)))
        _close_worker(cluster, victim)
        killed.append(victim)

    monkeypatch.setattr(farm, "after_submit", after_submit)
    try:
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(200, 8)), da.from_array(y, chunks=200))
        assert killed and len(client.scheduler_info()["workers"]) == 1
        assert_same_continuous_fit(local, dist)
    finally:
        client.close()
        cluster.close()


def test_dask_continuous_time_limit_and_ctrl_c(client, monkeypatch):
    """time_limit: the tasks stop at the fit's deadline (timed_out_, at least the greedy tree's
    accuracy, a valid lower bound); Ctrl-C on the driver stops and cancels the tasks."""
    import time
    import warnings

    import treelearn as tl
    from treelearn.distributed import farm

    X, y, _ = _cont_data(9, n=4000, d=8)
    Xd, yd = da.from_array(X, chunks=(1000, 8)), da.from_array(y, chunks=1000)
    greedy = tl.GreedyTreeClassifier(max_depth=6).fit(X, y)
    with use_client(client), warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        m = tl.OptimalTreeClassifier(max_depth=6, solver="continuous", time_limit=1.0).fit(Xd, yd)
        took = time.perf_counter() - t0
    assert m.timed_out_ and not m.is_optimal_ and took < 5.0, took
    assert m.score(X, y) >= greedy.score(X, y)
    assert 0 <= m.lower_bound_ <= m.training_error_

    def interrupt(futures):
        time.sleep(0.3)
        raise KeyboardInterrupt

    monkeypatch.setattr(farm, "after_submit", interrupt)
    with use_client(client), pytest.raises(KeyboardInterrupt):
        tl.OptimalTreeClassifier(max_depth=6, solver="continuous").fit(Xd, yd)
    t0 = time.perf_counter()
    while any(client.processing().values()) and time.perf_counter() - t0 < 3.0:
        time.sleep(0.05)
    assert not any(client.processing().values()), "the searches stopped"


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TREELEARN_DASK_PROCESSES"),
                    reason="worker processes take ~15-60 s to start here: set TREELEARN_DASK_PROCESSES=1")
def test_worker_process_killed_mid_continuous_search(monkeypatch):
    """SIGKILL of a worker process running a continuous search task (its nanny starts a new one):
    the fit ends with the local tree and attributes."""
    import treelearn as tl
    from treelearn.distributed import farm

    X, y, _ = _cont_data(8, n=600, d=8)
    make = lambda: tl.OptimalTreeClassifier(max_depth=4, solver="continuous")  # noqa: E731
    local = make().fit(X, y)
    cluster, client = _process_cluster()
    killed = []

    def after_submit(futures):
        killed.append(_sigkill_worker(client, next(iter(_workers_running(client, futures, tries=500, pause=0.02)))))

    monkeypatch.setattr(farm, "after_submit", after_submit)
    try:
        with use_client(client):
            dist = make().fit(da.from_array(X, chunks=(200, 8)), da.from_array(y, chunks=200))
        assert killed
        assert_same_continuous_fit(local, dist)
    finally:
        client.close()
        cluster.close()
