"""The root's search order does not hinge on the number of threads.

Threads take the root's features in turn, so a feature that leads to the optimum at once was met
early with many threads and late with one: one thread took far longer to reach the tree, and under
a time limit returned a worse one. The root now steps the threshold scans of several features in
turn (``root_lanes``), so one thread meets what threads meet early. The counts of threshold
evaluations say it deterministically (one thread) where timings would not."""
from __future__ import annotations

import numpy as np
import pytest

from treelearn.datasets import load_dataset
from treelearn.learn.continuous.solver import continuous_fit


def _fit(X, y, **kw):
    tree, info = continuous_fit(X, y, int(y.max()) + 1, None, None, max_depth=3, **kw)
    return (tree.feature.tolist(), tree.threshold.tolist()), info


def test_one_thread_does_no_more_work_than_threads_taking_features_in_turn(data_dir):
    X, y = load_dataset("quantbnb/bidding-train", data_dir)
    y = np.unique(y, return_inverse=True)[1]
    tree1, one = _fit(X, y, n_jobs=1)
    tree_seq, seq = _fit(X, y, n_jobs=1, root_lanes=1)  # one feature after the other (the old order)
    tree4, four = _fit(X, y, n_jobs=4, root_lanes=1)  # four threads, one feature each at a time
    assert tree1 == tree_seq == tree4  # the tie rule: the same tree in any order
    assert one["error"] == seq["error"] == four["error"]
    assert one["evaluations"] <= four["evaluations"], (one["evaluations"], four["evaluations"])
    assert 3 * one["evaluations"] <= seq["evaluations"], (one["evaluations"], seq["evaluations"])


@pytest.mark.parametrize("seed", range(6))
def test_lanes_and_threads_give_the_same_tree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 200))
    X = np.round(rng.random((n, int(rng.integers(2, 12)))), 2)  # ties
    y = (X[:, 0] + X[:, -1] + 0.3 * rng.random(n) > 1.1).astype(int)
    w = rng.integers(1, 4, n).astype(float) if seed % 2 else None
    trees = set()
    for lanes in (1, 2, 64):
        for jobs in (1, 3):
            tree, info = continuous_fit(X, y, 2, w, None, max_depth=3, n_jobs=jobs, root_lanes=lanes)
            trees.add((tuple(tree.feature.tolist()), tuple(np.round(tree.threshold, 12).tolist()), info["error"]))
    assert len(trees) == 1, trees
