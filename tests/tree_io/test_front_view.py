"""The error-size front drawn: plot_front (matplotlib Axes: every point, the hull, the
breakpoints, the selected tree) and the HTML view's inline SVG (the same points, escaped, no
script), with named errors for what is not a front."""
import re

import numpy as np
import pytest

import treelearn as tl
from treelearn import OptimalTreeClassifier, TreeLearnValueError, error_size_front, plot_front


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).round(1)
    y = ((X[:, 0] > 0) & (X[:, 1] > 0.3) | (X[:, 2] > 1.2)).astype(int)
    return X, np.where(rng.random(n) < 0.15, 1 - y, y)


@pytest.fixture(scope="module")
def selected():
    X, y = _data()
    return OptimalTreeClassifier(max_depth=3, select="cv", random_state=0).fit(X, y)


def test_plot_front_draws_every_point_the_hull_and_the_selected_tree(selected):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert plot_front(selected, ax=ax) is ax
    front = selected.front_
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    points = lines["fewest errors, at most b leaves"]
    assert sorted(set(points.get_xdata())) == sorted(set(front.n_leaves))
    hull = lines["lower convex hull (ccp_alpha path)"]
    assert list(hull.get_xdata()) == list(front.n_leaves[front.hull])
    assert np.allclose(hull.get_ydata(), front.error_rates[front.hull])
    ring = lines["selected (cv)"]
    assert list(ring.get_xdata()) == [selected.selected_leaves_]
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == len(front.hull) and labels[0] == "\u03b1 \u2265 0"
    plt.close(fig)
    fig, ax = plt.subplots()  # a bare front: no selection unless asked for
    plot_front(front, ax=ax, selected=int(front.n_leaves[0]), annotate=False)
    assert "selected" in [ln.get_label() for ln in ax.get_lines()] and not ax.texts
    plt.close(fig)


@pytest.mark.parametrize("bad, match", [("front", "expected a front"), (None, "expected a front")])
def test_plot_front_names_what_is_not_a_front(bad, match):
    with pytest.raises(TreeLearnValueError, match=match):
        plot_front(bad)


def test_plot_front_names_a_selection_outside_the_front(selected):
    with pytest.raises(TreeLearnValueError, match="not a leaf count of the front"):
        plot_front(selected.front_, selected=99)
    with pytest.raises(TreeLearnValueError, match="number of leaves"):
        plot_front(selected.front_, selected=2.5)


def test_html_view_draws_the_estimators_front_with_its_hull_and_selection(selected):
    page = tl.export_html(selected)
    svg = re.search(r'<svg class="tl-front".*?</svg>', page, re.S).group(0)
    front = selected.front_
    hull_pts = re.search(r'<polyline points="([^"]*)"', svg).group(1).split()
    assert len(hull_pts) == len(front.hull)
    assert svg.count('fill="#8c8c8c"') == len(set(front.n_leaves))  # every distinct point
    assert f"{selected.selected_leaves_} leaves" in svg and 'stroke="#d62728"' in svg  # the selection
    assert "by cv" in page and page.count("<script") == 2  # the payload and the code, no other
    plain = OptimalTreeClassifier(max_depth=2).fit(*_data())
    assert "tl-front" not in tl.export_html(plain) and "tl-front" not in tl.export_html(selected, front=False)
    given = tl.export_html(plain, front=error_size_front(*_data(), max_depth=2))
    assert 'class="tl-front"' in given and 'stroke="#d62728"' not in given
    with pytest.raises(TreeLearnValueError, match="expected a front"):
        tl.export_html(plain, front="<script>")


def test_html_front_escapes_the_selection_label(selected):
    class Forged:  # an object posing as a fitted estimator: its words reach the page escaped
        front_ = selected.front_
        selected_leaves_ = selected.selected_leaves_
        select = "<script>alert(1)</script>"
        tree_ = selected.tree_

    page = tl.export_html(Forged().tree_, front=None)
    assert "tl-front" not in page  # a Tree carries no front
    from treelearn.tree.front_view import front_svg

    svg = front_svg(Forged())
    assert "<script" not in svg and "&lt;script&gt;" in svg
