"""Fuzz-suite options (declared in tests/conftest.py): --fuzz-long, --fuzz-seconds, --fuzz-report."""
import fuzz_harness as fh
import pytest


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: the long form's time goes to the tests that run
def pytest_collection_modifyitems(config, items):
    fh.Config.long = bool(config.getoption("--fuzz-long"))
    fh.Config.seconds = float(config.getoption("--fuzz-seconds"))
    fh.Config.report = config.getoption("--fuzz-report")
    fh.Config.n_tests = max(1, sum(1 for it in items if "fuzz" in it.keywords))


@pytest.fixture(scope="session", autouse=True)
def _fuzz_worker():
    yield
    fh.Worker.shutdown()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not fh.STATS:
        return
    terminalreporter.write_sep("-", "fuzz outcomes per area" + (" (long form)" if fh.Config.long else ""))
    terminalreporter.write_line(fh.table())
    if fh.Config.report:
        fh.write_report(fh.Config.report)
        terminalreporter.write_line(f"fuzz report written to {fh.Config.report}")


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: the fuzz suite (short form in make test, long form: make fuzz)")
