"""Shared test options: ``--data-dir`` points at the real datasets (default ../shared/datasets)."""
import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed, so that main's verdict is repeatable; a local
# run explores new examples (set TREELEARN_HYPOTHESIS_PROFILE=ci to get CI's behaviour).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") or os.environ.get("TREELEARN_HYPOTHESIS_PROFILE") == "ci":
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--data-dir",
        default=os.environ.get("TREELEARN_DATA_DIR", str(REPO.parent / "shared" / "datasets")),
        help="directory holding the shared real datasets (topk/, uci/, benchmark/, dl85/)",
    )
    # the fuzz suite (tests/fuzz): a short form runs with every test; the long form on request
    parser.addoption("--fuzz-long", action="store_true", default=bool(os.environ.get("TREELEARN_FUZZ_LONG")),
                     help="run the fuzz suite's long form (fresh random inputs until --fuzz-seconds)")
    parser.addoption("--fuzz-seconds", type=float, default=float(os.environ.get("TREELEARN_FUZZ_SECONDS", "600")),
                     help="total seconds of the long fuzz form, shared by the fuzz tests (default 600)")
    parser.addoption("--fuzz-report", default=os.environ.get("TREELEARN_FUZZ_REPORT"),
                     help="write the fuzz outcome table (JSON) to this file")


@pytest.fixture(scope="session")
def data_dir(request) -> Path:
    path = Path(request.config.getoption("--data-dir"))
    if not path.is_dir():
        pytest.skip(f"real datasets not found at {path}: pass --data-dir or set TREELEARN_DATA_DIR")
    return path


# ------------------------------------------------------------------ Ctrl-C in a child process
# Python leaves SIGINT ignored in a child whose parent ignored it (a background job): the child
# restores Python's handler first, so these tests hold whatever the runner's SIGINT disposition.
_RESTORE_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def _sigint_after_ready(code: str, wait: float = 1.5):
    """Run ``code`` in a child Python; ``wait`` seconds after it prints "ready" (so inside its
    search) send it SIGINT. Returns the next line it prints, the seconds from the signal to that
    line, its stderr and its exit code; the child is waited for (killed if still running)."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    child = subprocess.Popen([sys.executable, "-u", "-c", _RESTORE_SIGINT + textwrap.dedent(code)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = child.stdout.readline().strip()
        assert ready == "ready", (ready, child.stderr.read() if child.poll() is not None else "")
        time.sleep(wait)
        t0 = time.perf_counter()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        elapsed = time.perf_counter() - t0
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return line, elapsed, err, child.returncode


@pytest.fixture
def sigint_after_ready():
    """The Ctrl-C helper of the limits tests: ``sigint_after_ready(code, wait=1.5)`` ->
    ``(line, seconds, stderr, returncode)`` (see ``_sigint_after_ready``)."""
    return _sigint_after_ready
