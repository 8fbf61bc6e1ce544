"""The documentation's examples run (doctest over docs/**/*.rst and the docstrings of the view
modules), and `make docs` (Sphinx, warnings as errors) builds."""
from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.fixture(autouse=True)
def _agg():
    import matplotlib

    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_every_guide_page_has_examples():
    guide = [p for p in PAGES if p.parent.name == "guide" and p.stem not in ("cli", "figures")]
    assert len(guide) >= 7
    for p in guide:
        assert ">>> " in p.read_text(encoding="utf-8"), f"{p.name} has no runnable example"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_doc_examples_run(page):
    result = doctest.testfile(str(page), module_relative=False, optionflags=FLAGS, verbose=False,
                              raise_on_error=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {page.name} failed"


@pytest.mark.parametrize("module", ["treelearn.tree.plot", "treelearn.tree.html"])
def test_docstring_examples_run(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=FLAGS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.slow
def test_sphinx_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra (Sphinx) is not installed")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q", str(DOCS),
                        str(tmp_path / "html")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "html" / "api.html").exists()
    assert "GreedyTreeClassifier" in (tmp_path / "html" / "api.html").read_text(encoding="utf-8")


def test_readme_says_up_front_which_learner_fits_which_data():
    """Min-rank needs a consistent sample and the query learner an oracle over Boolean inputs:
    the README says so before it lists the learners, not after a user's fit failed."""
    text = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    learners = text.index("## Learners")
    table = text.index("| estimator | paper |")
    up_front = text[learners:table]
    assert "MinRankTreeClassifier" in up_front and "consistent" in up_front and "InconsistentSampleError" in up_front
    assert "QueryTreeClassifier" in up_front and "oracle" in up_front and "Boolean" in up_front
