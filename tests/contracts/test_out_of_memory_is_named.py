"""Running out of memory is a named error, never a bare ``MemoryError: std::bad_alloc`` or an
abort: ``n_jobs`` is held to the threads an address-space cap can start (each takes its stack and
a malloc arena), and whatever still runs out of memory inside a fit comes back as a
``ResourceLimitError`` naming the fit and its n_jobs / memory_limit_mb / max_depth."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import treelearn as tl
from treelearn._limits import LimitError, ResourceLimitError
from treelearn.learn import anytime

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def test_n_threads_is_held_to_what_the_address_space_cap_can_start(monkeypatch):
    monkeypatch.setattr(anytime, "_thread_room", lambda: 5)
    assert anytime.n_threads(1000) == 5
    assert anytime.n_threads(3) == 3
    assert anytime.n_threads(None) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ulimit -v and /proc are Linux's")
def test_a_thousand_jobs_under_an_address_space_cap_fit_or_name_the_problem():
    # once: MemoryError: std::bad_alloc (continuous solver) and a glibc abort (Top-k search)
    code = textwrap.dedent("""
        import resource, warnings
        import numpy as np
        import treelearn as tl
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        X = rng.normal(size=(50000, 30)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
        resource.setrlimit(resource.RLIMIT_AS, (1200 * 2**20, resource.RLIM_INFINITY))
        for est in (tl.OptimalTreeClassifier(max_depth=3, n_jobs=1000, time_limit=2, solver="continuous"),
                    tl.OptimalTreeClassifier(max_depth=3, n_jobs=1000, time_limit=2),
                    tl.TopKTreeClassifier(k=2, max_depth=3, n_jobs=1000, time_limit=2)):
            try:
                est.fit(X, y)
                print("fitted", est.tree_.node_count)
            except tl.TreeLearnValueError as exc:
                assert "n_jobs" in str(exc), exc
                print("named", exc)
    """)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "bad_alloc" not in r.stdout and "ABORT" not in r.stderr
    assert len(r.stdout.splitlines()) == 3, r.stdout


@pytest.mark.parametrize("make", [lambda: tl.OptimalTreeClassifier(max_depth=2, n_jobs=4),
                                  lambda: tl.GreedyTreeClassifier(max_depth=3)])
def test_a_bare_memory_error_inside_a_fit_is_named(monkeypatch, make):
    est = make()

    def boom(*a, **k):
        raise MemoryError("std::bad_alloc")

    monkeypatch.setattr(type(est), "_fit_arrays", boom)
    with pytest.raises(ResourceLimitError, match=r"ran out of memory \(MemoryError: std::bad_alloc\)") as info:
        est.fit(np.zeros((4, 2)), [0, 1, 0, 1])
    assert "max_depth=" in str(info.value) and isinstance(info.value, MemoryError)
    assert isinstance(info.value, LimitError)
