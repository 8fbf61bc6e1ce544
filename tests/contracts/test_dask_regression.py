"""GreedyTreeRegressor on Dask row shards (a LocalCluster): histograms of the rows' channels
(w, w y, w y^2; Poisson w y log y) summed from the shards give the local fit's tree: the same
features, thresholds and row counts; and the same values, weights and impurities to the bit,
weighted or not (both fits compute them from exact sums of the rows' channels, whatever their
order). Settings without a sharded growth fit the gathered blocks: the local tree."""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from treelearn import GreedyTreeRegressor  # noqa: E402
from treelearn._validation import TreeLearnValueError  # noqa: E402
from treelearn.distributed import last_fit_log, use_client  # noqa: E402

STRUCTURE = ("children_left", "children_right", "feature", "threshold", "n_node_samples", "missing_go_to_left")


def _data(n=3000, d=5, seed=0, poisson=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 0] = np.round(X[:, 0], 1)  # a column with few distinct values (node-local midpoints)
    signal = np.sin(2 * X[:, 1]) + X[:, 2] * (X[:, 3] > 0)
    y = rng.gamma(2.0, np.exp(0.5 * signal) / 2.0) if poisson else signal + 0.3 * rng.normal(size=n)
    return X, y


def _same_tree(local, dist):
    a, b = local.tree_, dist.tree_
    for name in STRUCTURE:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("value", "weighted_n_node_samples", "impurity"):  # bit for bit
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("params", [
    dict(max_depth=6, max_thresholds=64),
    dict(max_leaves=15, max_thresholds=255, min_samples_leaf=5),
    dict(criterion="poisson", max_depth=4, max_thresholds=32),
    dict(criterion="friedman_mse", max_thresholds=16, min_samples_split=0.05, random_state=3, ccp_alpha=1e-3),
    dict(max_depth=5, max_thresholds=32, min_impurity_decrease=1e-3),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_dask_regressor_equals_local(client, params, weighted):
    X, y = _data(poisson=params.get("criterion") == "poisson")
    w = np.random.default_rng(1).uniform(0.5, 3.0, size=len(y)) if weighted else None
    local = GreedyTreeRegressor(**params).fit(X, y, sample_weight=w)
    with use_client(client):
        dist = GreedyTreeRegressor(**params).fit(da.from_array(X, chunks=(700, 3)), da.from_array(y, chunks=500),
                                                 sample_weight=None if w is None else da.from_array(w, chunks=600))
    assert last_fit_log(), "the sharded path ran"
    assert local.tree_.node_count > 7
    _same_tree(local, dist)
    np.testing.assert_array_equal(dist.predict(X), local.predict(X))


@pytest.mark.parametrize("params", [dict(criterion="absolute_error", max_thresholds=32, max_depth=4),
                                    dict(max_depth=4), dict(max_thresholds=32, min_weight_fraction_leaf=0.05)])
def test_other_settings_gather(client, params):
    """absolute_error (a node's medians need its rows), exact mode and min_weight_fraction_leaf fit
    the gathered blocks: the local tree bit for bit."""
    X, y = _data(n=1500)
    local = GreedyTreeRegressor(**params).fit(X, y)
    with use_client(client):
        dist = GreedyTreeRegressor(**params).fit(da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500))
    assert dist.tree_ == local.tree_
    np.testing.assert_array_equal(dist.tree_.value, local.tree_.value)


def test_constant_and_bad_targets(client):
    X, y = _data(n=900)
    with use_client(client):
        Xd = da.from_array(X, chunks=(300, 5))
        est = GreedyTreeRegressor(max_thresholds=16).fit(Xd, da.from_array(np.full(900, 1.5), chunks=300))
        assert est.get_n_leaves() == 1 and np.all(est.predict(X) == 1.5)
        bad = y.copy()
        bad[700] = np.nan
        with pytest.raises(TreeLearnValueError, match="NaN or infinite"):
            GreedyTreeRegressor(max_thresholds=16).fit(Xd, da.from_array(bad, chunks=300))
        with pytest.raises(TreeLearnValueError, match="negative"):
            GreedyTreeRegressor(criterion="poisson", max_thresholds=16).fit(Xd, da.from_array(y - 10, chunks=300))
