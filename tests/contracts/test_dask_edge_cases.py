"""Dask input at the edges: min-rank on 0/1 data wider than one byte of packed bits, an empty
Dask array (the local fit's error, not a weights' one), and a connection that closes while data
is scattered to the workers (retried, then a named error)."""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import treelearn as tl  # noqa: E402
from treelearn.distributed import WorkerLostError, use_client  # noqa: E402
from treelearn.distributed import client as dclient  # noqa: E402


@pytest.mark.parametrize("d", [8, 9, 12, 64, 70])
def test_minrank_on_dask_equals_local_for_any_number_of_columns(client, d):
    # more than 8 columns once failed: the packed keys came Fortran-ordered and could not be viewed
    rng = np.random.default_rng(d)
    X = rng.integers(0, 2, size=(300, d)).astype(float)
    y = (X[:, 0].astype(int) & X[:, 1].astype(int)) | X[:, d - 1].astype(int)
    local = tl.MinRankTreeClassifier().fit(X, y)
    with use_client(client):
        dist = tl.MinRankTreeClassifier().fit(da.from_array(X, chunks=(100, d)), da.from_array(y, chunks=100))
    for name in ("children_left", "children_right", "feature", "threshold", "value"):
        np.testing.assert_array_equal(getattr(local.tree_, name), getattr(dist.tree_, name), err_msg=name)


@pytest.mark.parametrize("make", [
    lambda: tl.GreedyTreeClassifier(max_thresholds=8), lambda: tl.TopKTreeClassifier(max_depth=2, max_thresholds=4),
    lambda: tl.OptimalTreeClassifier(max_depth=2), lambda: tl.MinRankTreeClassifier(),
    lambda: tl.PrunedTreeClassifier(max_thresholds=8),
])
def test_an_empty_dask_array_is_named_as_empty(client, make):
    with use_client(client), pytest.raises(tl.TreeLearnValueError, match="X is empty"):
        make().fit(da.zeros((0, 3), chunks=(10, 3)), da.zeros(0, chunks=10))
    with use_client(client), pytest.raises(tl.TreeLearnValueError, match="X is empty"):
        make().fit(da.zeros((20, 3), chunks=(10, 3))[:0], np.zeros(0))


class _FlakyClient:
    """A client whose first ``fails`` scatters lose their connection."""

    def __init__(self, fails):
        self.fails = fails
        self.calls = 0

    def scatter(self, objs, broadcast=False):
        from distributed.comm.core import CommClosedError

        self.calls += 1
        if self.calls <= self.fails:
            raise CommClosedError("in <TCP (closed) ConnectionPool.scatter local=tcp://127.0.0.1:1>: Stream is closed")
        return [("future", o) for o in objs]


def test_a_scatter_whose_connection_closes_is_retried():
    flaky = _FlakyClient(fails=dclient.SCATTER_ATTEMPTS - 1)
    assert dclient.ClientExecutor(flaky).scatter("data", broadcast=True) == ("future", "data")
    assert flaky.calls == dclient.SCATTER_ATTEMPTS


def test_a_scatter_that_keeps_failing_is_a_named_error():
    flaky = _FlakyClient(fails=10**6)
    with pytest.raises(WorkerLostError, match=f"failed {dclient.SCATTER_ATTEMPTS} times.*CommClosedError"):
        dclient.ClientExecutor(flaky).scatter("data")
    assert flaky.calls == dclient.SCATTER_ATTEMPTS


@pytest.mark.parametrize("patch", [{}, {"BUDGET_SECONDS": 1e-9}, {"AUTO_MAX_ROWS": 500}])
def test_the_default_space_on_dask_is_the_local_choice(client, monkeypatch, patch):
    """max_binary_features="auto" (issue 26): every threshold (the estimate within the budget),
    the binary features (above it, or above AUTO_MAX_ROWS rows): the same space and tree as in memory."""
    from treelearn.learn.topk import space

    for name, value in patch.items():
        monkeypatch.setattr(space, name, value)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(scale=0.5, size=600) > 0.5).astype(int)
    local = tl.OptimalTreeClassifier(max_depth=2).fit(X, y)
    with use_client(client):
        dist = tl.OptimalTreeClassifier(max_depth=2).fit(da.from_array(X, chunks=(150, 4)), y)
    assert local.solver_ == dist.solver_ == ("continuous" if not patch else "binary")
    assert dist.feature_space_["chosen_by"] == local.feature_space_["chosen_by"]
    for name in ("children_left", "feature", "threshold", "value"):
        np.testing.assert_array_equal(getattr(dist.tree_, name), getattr(local.tree_, name))
