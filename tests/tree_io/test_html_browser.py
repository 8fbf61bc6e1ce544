"""The interactive HTML view (export_html) in a real headless browser: Chromium from the system's
packages (``make browser`` installs it where it can), driven by selenium through chromedriver.

Checked: the page loads without console errors, shows one element per node, folds and unfolds
on click, and highlights the path of a pasted sample (compared with ``Tree.decision_path``).
Without Chromium the test skips with a message, unless ``TREELEARN_REQUIRE_BROWSER=1`` (CI sets
it after installing Chromium), where it fails instead.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest

from treelearn import GreedyTreeClassifier, export_html

REQUIRED = os.environ.get("TREELEARN_REQUIRE_BROWSER", "") not in ("", "0")


def _browser_or_skip():
    chrome = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                  None)
    driver = shutil.which("chromedriver")
    missing = []
    if chrome is None or driver is None:
        missing.append("Chromium and chromedriver (install with `make browser`: Debian's chromium, "
                       "chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (the test extra)")
    if missing:
        msg = "browser test needs " + " and ".join(missing)
        if REQUIRED:
            pytest.fail(msg)
        pytest.skip(msg)
    return chrome, driver


@pytest.fixture(scope="module")
def browser():
    chrome, driver_path = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--no-first-run", "--disable-background-networking"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    except Exception as exc:  # a browser that does not start is an environment problem
        if REQUIRED:
            raise
        pytest.skip(f"headless Chromium did not start: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def fitted():
    from sklearn.datasets import load_iris

    d = load_iris(as_frame=True)
    X = d.data.copy()
    X.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    rng = np.random.default_rng(1)
    X["color"] = pd.Series(rng.choice(["red", "green"], size=len(X)), dtype=object)
    y = np.asarray(d.target_names)[d.target.to_numpy()]
    est = GreedyTreeClassifier(criterion="entropy", max_depth=4).fit(X, y)
    return est, X, y


def _console_errors(drv):
    return [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]


def test_page_loads_one_element_per_node_folds_and_highlights(browser, fitted, tmp_path):
    from selenium.webdriver.common.by import By

    est, X, y = fitted
    tree = est.tree_
    page = export_html(est, open_depth=1)
    assert "http://" not in page and "https://" not in page  # nothing fetched from the network
    path = tmp_path / "tree.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    assert _console_errors(browser) == []

    nodes = browser.find_elements(By.CSS_SELECTOR, "li.tl-node")
    assert len(nodes) == tree.node_count
    assert sorted(int(n.get_attribute("data-node")) for n in nodes) == list(range(tree.node_count))
    # each box shows its node's sample count and a class-distribution bar with one part per class
    for n in nodes[:5]:
        i = int(n.get_attribute("data-node"))
        assert f"samples = {tree.n_node_samples[i]}" in n.find_element(By.CSS_SELECTOR, ".tl-box").get_attribute(
            "textContent")
        assert len(n.find_elements(By.CSS_SELECTOR, ":scope > .tl-box .tl-bar span")) == tree.n_classes

    def node(i):
        return browser.find_element(By.CSS_SELECTOR, f'li.tl-node[data-node="{i}"]')

    # nodes deeper than open_depth start folded: a grandchild of the root is hidden
    depth = tree.node_depths()
    deep = int(np.nonzero(depth == 2)[0][0])
    child = int(tree.parents()[deep])
    assert not node(deep).is_displayed()
    assert "tl-collapsed" in node(child).get_attribute("class")
    node(child).find_element(By.CSS_SELECTOR, ":scope > .tl-box").click()  # unfold
    assert "tl-collapsed" not in node(child).get_attribute("class")
    assert node(deep).is_displayed()
    node(0).find_element(By.CSS_SELECTOR, ":scope > .tl-box").click()  # fold the root
    assert not node(child).is_displayed()
    node(0).find_element(By.CSS_SELECTOR, ":scope > .tl-box").click()  # and unfold it
    assert node(child).is_displayed()

    # paste samples: the highlighted nodes are the sample's decision path
    for row in (0, 60, 120, 149):
        sample = X.iloc[[row]]
        expected = sorted(tree.decision_path(sample).indices.tolist())
        text = ", ".join(f"{c}={sample.iloc[0][c]}" for c in X.columns)
        box = browser.find_element(By.CSS_SELECTOR, "textarea")
        box.clear()
        box.send_keys(text)
        browser.find_element(By.CSS_SELECTOR, "button.tl-go").click()
        on = sorted(int(e.get_attribute("data-node")) for e in browser.find_elements(By.CSS_SELECTOR, "li.tl-onpath"))
        assert on == expected, (row, on, expected)
        leaf = browser.find_elements(By.CSS_SELECTOR, "li.tl-leafhit")
        assert len(leaf) == 1 and int(leaf[0].get_attribute("data-node")) == expected[-1]
        assert all(node(i).is_displayed() for i in expected)  # the path is unfolded
        result = browser.find_element(By.CSS_SELECTOR, ".tl-result").text
        assert f"prediction: {est.predict(sample)[0]}" in result

    # a sample without a value the tree needs: a message on the page, no console error
    box = browser.find_element(By.CSS_SELECTOR, "textarea")
    box.clear()
    box.send_keys("color=red")
    browser.find_element(By.CSS_SELECTOR, "button.tl-go").click()
    assert "no value for" in browser.find_element(By.CSS_SELECTOR, ".tl-result").text
    assert _console_errors(browser) == []


def test_demo_style_page_with_several_trees(browser, fitted, tmp_path):
    from selenium.webdriver.common.by import By

    from treelearn.tree.html import export_html_page

    est, X, y = fitted
    small = GreedyTreeClassifier(max_depth=1).fit(X, y)
    path = tmp_path / "page.html"
    path.write_text(export_html_page([("big", est), ("small", small, "a stump")]), encoding="utf-8")
    browser.get(path.as_uri())
    assert _console_errors(browser) == []
    sections = browser.find_elements(By.CSS_SELECTOR, "section.tl-view")
    assert len(sections) == 2
    assert len(sections[0].find_elements(By.CSS_SELECTOR, "li.tl-node")) == est.tree_.node_count
    assert len(sections[1].find_elements(By.CSS_SELECTOR, "li.tl-node")) == small.tree_.node_count


def test_hostile_names_neither_stop_the_drawing_nor_break_the_path(browser, tmp_path):
    """``<!--<script`` in a name once kept the payload's script element open (the tree was not
    drawn); a feature named ``__proto__`` once broke the path (an inherited property)."""
    from selenium.webdriver.common.by import By

    rng = np.random.default_rng(3)
    names = ["<!--<script", "__proto__", "constructor"]
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=names)
    y = np.where(X["__proto__"] > 0, "a\x1b[2J", np.where(X["<!--<script"] > 0.5, "b", "c"))
    est = GreedyTreeClassifier(max_depth=3).fit(X, y)
    tree = est.tree_
    assert {0, 1} <= set(tree.feature[tree.children_left >= 0].tolist())
    path = tmp_path / "hostile.html"
    path.write_text(export_html(est, title="<!--<script"), encoding="utf-8")
    browser.get(path.as_uri())
    assert _console_errors(browser) == []
    assert len(browser.find_elements(By.CSS_SELECTOR, "li.tl-node")) == tree.node_count
    for row in (0, 1, 2, 3):
        sample = X.iloc[[row]]
        expected = sorted(tree.decision_path(sample).indices.tolist())
        box = browser.find_element(By.CSS_SELECTOR, "textarea")
        box.clear()
        box.send_keys(", ".join(f"{c}={sample.iloc[0][c]}" for c in X.columns))
        browser.find_element(By.CSS_SELECTOR, "button.tl-go").click()
        on = sorted(int(e.get_attribute("data-node")) for e in browser.find_elements(By.CSS_SELECTOR, "li.tl-onpath"))
        assert on == expected, (row, browser.find_element(By.CSS_SELECTOR, ".tl-result").text)
    assert _console_errors(browser) == []
