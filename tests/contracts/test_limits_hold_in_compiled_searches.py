"""Limits of the compiled searches (issue 12, items 1-3, for Top-k / optimal and min-rank), each
checked in a subprocess (a crash or a hang must not take the test run with it):

* Ctrl-C (SIGINT) during a search stops it promptly with KeyboardInterrupt, the best tree found
  so far attached (Top-k / optimal), and a caught interrupt leaves Python's handler in place;
* the deadline holds also while the returned tree is rebuilt under a small memory cap;
* min-rank on a long chain of splits (one column, alternating labels) does not recurse per row;
* worker threads that cannot be started or allocate fail cleanly (fewer threads or MemoryError,
  never std::terminate).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and resource limits")


def _run(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


_HARD = """
import numpy as np
rng = np.random.default_rng(0)
B = rng.integers(0, 2, size=(3000, 60)).astype(np.uint8)
y = (B[:, 0] ^ B[:, 1] ^ B[:, 2] ^ B[:, 3] ^ (rng.random(3000) < 0.2)).astype(np.int64)
"""


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_sigint_stops_optimal_search(n_jobs, sigint_after_ready):
    code = (_HARD + f"""
import signal, sys, time
from treelearn.learn.topk.estimator import OptimalTreeClassifier
m = OptimalTreeClassifier(max_depth=6, max_binary_features=None, n_jobs={n_jobs})
print("ready", flush=True)
try:
    m.fit(B, y)
    print("finished", flush=True)
except KeyboardInterrupt as exc:
    t = time.perf_counter()
    res = getattr(exc, "partial_result", None)
    ok = res is not None and len(res["feature"]) >= 1
    print("interrupted", ok, flush=True)
# the handler of Python is back: a second Ctrl-C raises at once
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
""")
    # 2 s in, the search is running (a depth-6 optimum on 3000 x 60 takes minutes)
    line, elapsed, err, rc = sigint_after_ready(code, wait=2.0)
    assert line == "interrupted True", (line, err)
    assert rc == 0, err
    # the issue asks for 1 s; the margin is for a loaded test machine
    assert elapsed < 3.0


def test_sigint_stops_min_rank_search(sigint_after_ready):
    code = ("""
import numpy as np, time
from treelearn.learn.minrank.estimator import MinRankSearch
rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(4000, 40)).astype(np.uint8)
y = rng.integers(0, 2, size=4000)
s = MinRankSearch(X, y)
print("ready", flush=True)
try:
    s.find_min()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
""")
    line, elapsed, err, _ = sigint_after_ready(code, wait=2.0)
    assert line in ("interrupted", "finished"), err
    if line == "interrupted":
        assert elapsed < 3.0


def test_deadline_holds_through_tree_rebuild_under_small_cap():
    # the case: after the deadline the returned tree used to be rebuilt without time
    # checks, re-solving evicted subtrees from scratch (over 200 s)
    res = _run("""
import time
import numpy as np
from treelearn.learn.topk.estimator import TopKTreeClassifier
rng = np.random.default_rng(0)
B = rng.integers(0, 2, size=(2000, 500)).astype(np.uint8)
y = rng.integers(0, 2, size=2000)
m = TopKTreeClassifier(k=50, max_depth=6, time_limit=2, memory_limit_mb=8, max_binary_features=None)
t0 = time.perf_counter()
m.fit(B, y)
wall = time.perf_counter() - t0
err = int((m.predict(B) != y).sum())
print(wall, m.timed_out_, err, m.training_error_)
""", timeout=300)
    assert res.returncode == 0, res.stderr
    wall, timed_out, err, reported = res.stdout.split()
    assert timed_out == "True"
    assert float(wall) < 2 * 1.1 + 0.5 + 1.0  # the bound, plus a margin for a loaded machine
    assert float(err) <= float(reported) + 1e-9  # the reported error is the returned tree's


def test_min_rank_long_chain_does_not_recurse():
    # one float column, alternating labels: every split peels off a row or two (about n / 2
    # nested FIND calls). A recursive search overflowed the C stack (at 25,000 rows with the
    # default 8 MB stack; at 3,000 rows with the 1 MB stack given here)
    import resource

    def small_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (2**20, 2**20))

    code = textwrap.dedent("""
    import numpy as np
    from treelearn.learn.minrank.estimator import MinRankTreeClassifier
    n = 3000
    X = np.arange(n, dtype=float).reshape(-1, 1)
    y = np.arange(n) % 2
    m = MinRankTreeClassifier(time_limit=120).fit(X, y)
    print("ok", (m.predict(X) == y).all())
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         preexec_fn=small_stack)
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert res.stdout.split() == ["ok", "True"]


def test_worker_threads_fail_cleanly_under_address_space_limit():
    # thread stacks and per-thread allocations fail under a tight address-space limit: the search
    # runs the share of a thread it could not start itself (same tree), or raises MemoryError;
    # it never aborts the process
    res = _run(_HARD + """
import resource
from treelearn.learn.topk.estimator import TopKTreeClassifier
ref = TopKTreeClassifier(k=4, max_depth=4, n_jobs=1, max_binary_features=None).fit(B, y)
vm = 0
with open("/proc/self/status") as fh:
    for line in fh:
        if line.startswith("VmSize:"):
            vm = int(line.split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 48 * 2**20, resource.RLIM_INFINITY))
try:
    m = TopKTreeClassifier(k=4, max_depth=4, n_jobs=16, max_binary_features=None).fit(B, y)
    print("same" if m.tree_ == ref.tree_ else "different")
except MemoryError:
    print("MemoryError")
""")
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert res.stdout.strip() in ("same", "MemoryError")


def test_deadline_holds_while_a_wide_sample_is_laid_out():
    # issue 12 item 1 (the telescope overrun): with every threshold of telescope (~147,000 binary
    # features) the search's copy and transpose of the bit matrix took seconds before its first
    # clock check, and its clock started only after them; single nodes that wide take ~25 ms,
    # and the clock is read every up-to-64th call. 160,000 random features x 8,192 rows: the
    # layout alone takes seconds. The whole search must return within time_limit x 1.1 + 0.5 s
    # (plus the suite's margin for a loaded machine).
    res = _run("""
import time
import numpy as np
from treelearn.data.bitmatrix import BinaryData
from treelearn.learn.topk.estimator import topk_search
rng = np.random.default_rng(0)
d, nw = 160_000, 128
data = BinaryData.from_packed(rng.integers(0, 2**63, size=(d, nw), dtype=np.uint64),
                              rng.integers(0, 2, size=64 * nw), 2)
for limit in (0.3, 3.0):
    t0 = time.perf_counter()
    res = topk_search(data, k="all", max_depth=3, time_limit=limit, memory_limit_mb=4096)
    print(limit, time.perf_counter() - t0, res["timed_out"], len(res["feature"]))
""", timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    for line in res.stdout.splitlines():
        limit, wall, timed_out, n_nodes = line.split()
        assert timed_out == "True" and int(n_nodes) >= 1, line  # a tree (at worst the root leaf)
        assert float(wall) <= float(limit) * 1.1 + 0.5 + 1.0, line
