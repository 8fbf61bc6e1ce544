"""Shared test options: ``--data-dir`` points at the real datasets (default ../shared/datasets)."""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--data-dir",
        default=os.environ.get("TREELEARN_DATA_DIR", str(REPO.parent / "shared" / "datasets")),
        help="directory holding the shared real datasets (topk/, uci/, benchmark/, dl85/)",
    )


@pytest.fixture(scope="session")
def data_dir(request) -> Path:
    path = Path(request.config.getoption("--data-dir"))
    if not path.is_dir():
        pytest.skip(f"real datasets not found at {path}: pass --data-dir or set TREELEARN_DATA_DIR")
    return path
