"""The continuous solver's anytime answer: the incumbent over time (``incumbent_history_``), the
probe that spares small deep fits their incumbents, and what a stopped fit returns."""
import numpy as np
import pytest

from treelearn import OptimalTreeClassifier
from treelearn.learn.continuous import solver
from treelearn.learn.continuous.solver import continuous_fit


def _data(n, seed=0, d=6, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(3)
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] * X[:, 2] > 0) ^ (X[:, 3] + X[:, 4] > 0.5)).astype(np.int64)
    y[rng.random(n) < noise] ^= 1
    return X, y


def _check_history(hist, error, lower_bound, fit_time):
    secs = [h[0] for h in hist]
    errs = [h[1] for h in hist]
    assert secs == sorted(secs) and 0 <= secs[0] and secs[-1] <= fit_time + 1e-6
    assert all(b < a for a, b in zip(errs, errs[1:-1])), errs  # strictly better, but the last (the bound)
    assert errs[-1] == pytest.approx(error) and hist[-1][2] == pytest.approx(lower_bound)
    assert all(h[2] == 0.0 for h in hist[:-1])


def test_history_of_a_finished_fit():
    X, y = _data(400)
    m = OptimalTreeClassifier(max_depth=3, solver="continuous").fit(X, y)
    assert m.is_optimal_
    _check_history(m.incumbent_history_, m.training_error_, m.lower_bound_, m.fit_time_)
    assert m.incumbent_history_[-1][2] == m.training_error_  # finished: the bound is the error


def test_history_of_a_stopped_deep_fit_and_verbose(capsys):
    """Depth 5 under a short time limit: the probe, the Top-k rounds and the search each add their
    improvements; the returned tree is the best of them, and verbose prints every entry."""
    X, y = _data(4000, seed=1, d=8, noise=0.15)
    m = OptimalTreeClassifier(max_depth=5, solver="continuous", time_limit=3.0, verbose=1).fit(X, y)
    assert m.timed_out_
    _check_history(m.incumbent_history_, m.training_error_, m.lower_bound_, m.fit_time_)
    assert len(m.incumbent_history_) >= 3
    assert float(np.sum(m.predict(X) != y)) == m.training_error_
    err = capsys.readouterr().err
    assert err.count("incumbent ") >= len(m.incumbent_history_)


def test_probe_spares_small_deep_fits_their_incumbents(monkeypatch):
    """From depth 4 the exact search runs alone first: a fit it finishes grows neither the greedy
    nor the Top-k tree; one it does not finish goes on with both and returns the same tree as a
    fit without the probe."""
    X, y = _data(150, seed=2, d=5)
    monkeypatch.setattr(solver, "PROBE_MAX", 5.0)  # (a loaded machine: the probe finishes, whatever its load)
    _, info = continuous_fit(X, y, 2, None, None, max_depth=4, time_limit=600.0)
    assert not info["timed_out"] and info["topk_error"] is None and info["greedy_error"] is None
    monkeypatch.setattr(solver, "PROBE_MAX", 1e-4)  # the probe always stops
    tree, info2 = continuous_fit(X, y, 2, None, None, max_depth=4, time_limit=60.0)
    assert info2["topk_error"] is not None and not info2["timed_out"]
    ref, _ = continuous_fit(X, y, 2, None, None, max_depth=4, incumbent=False)
    assert tree.feature.tolist() == ref.feature.tolist()
    np.testing.assert_array_equal(tree.threshold, ref.threshold)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_topk_rounds_stop_at_a_zero_error_tree(n_threads):
    """No tree beats zero errors: the Top-k rounds stop at the first round that finds one (not every
    column, nor the other criteria), with the tree that round found."""
    from treelearn.learn.continuous import _continuous

    X, y = _data(300, seed=3, d=8, noise=0.0)
    y = (X[:, 0] > 0.3).astype(np.int64)  # one split: the first round (k = 1) is exact
    X_fm = np.ascontiguousarray(X.T)
    res = _continuous.continuous_lookahead(X_fm, y, 2, None, 4, 0, 60.0, 1e9, n_threads=n_threads)
    one = _continuous.continuous_lookahead(X_fm, y, 2, None, 4, 0, 60.0, 1e9, k_max=1, n_threads=n_threads)
    assert res["cost"] == 0.0 and res["k"] == 1 and res["rounds"] == 1 and not res["complete"]
    assert res["feature"].tolist() == one["feature"].tolist()
    np.testing.assert_array_equal(res["threshold"], one["threshold"])


def test_the_returned_tree_keeps_the_time_it_was_found():
    """A tree found before the end keeps its own time in the history (the anytime curve reads the
    error reached by a checkpoint from it); the bound is stamped at the close, in a point of its own."""
    t0 = solver.time.perf_counter()
    h = solver._History(t0, 1e-9)
    h.add(0.5, 10.0)
    h.add(1.5, 7.0)
    points = h.close(7.0, 6.0)
    assert points[:2] == [(0.5, 10.0, 0.0), (1.5, 7.0, 0.0)]
    assert points[2][1:] == (7.0, 6.0) and points[2][0] >= 0.0
    h2 = solver._History(t0, 1e-9)
    h2.add(0.5, 10.0)
    points = h2.close(4.0, 4.0)  # a tree better than every recorded one: one point, at the close
    assert len(points) == 2 and points[1][1:] == (4.0, 4.0)


def test_cpu_limit_stops_the_search():
    """The probe's budget is CPU time (``cpu_limit``): a search given less stops with a valid bound
    and a tree no better than the optimum; without it, the same search finishes."""
    from treelearn.learn.continuous import _continuous

    X, y = _data(600, seed=3, d=6)
    X_fm = np.ascontiguousarray(X.T)
    full = _continuous.continuous_search(X_fm, y, 2, None, 3)
    assert not full["timed_out"] and full["evaluations"] > 10
    cut = _continuous.continuous_search(X_fm, y, 2, None, 3, cpu_limit=1e-6)
    assert cut["timed_out"] and cut["evaluations"] < full["evaluations"]
    assert cut["lower_bound"] <= full["cost"] <= cut["cost"]
