"""Experiment figures: integer depth ticks, every series labelled (k = all included, even when the
first panel lacks it), timed-out points marked. Drawn from hand-made result rows."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture()
def captured(monkeypatch):
    """The figure each plot function saves (instead of writing a file)."""
    import matplotlib

    matplotlib.use("Agg")
    import treelearn.experiments._common as common

    figs = []

    def keep(fig, path, **kw):
        fig.canvas.draw()
        figs.append(fig)

    # import the modules before patching: they bind save_figure at import
    mods = [__import__(f"treelearn.experiments.{mod}", fromlist=["x"])
            for mod in ("topk_accuracy", "topk_scaling", "min_rank", "queries_scaling")]
    monkeypatch.setattr(common, "save_figure", keep)
    for m in mods:
        monkeypatch.setattr(m, "save_figure", keep)
    yield figs
    import matplotlib.pyplot as plt

    plt.close("all")


def _legend_texts(fig):
    texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    for ax in fig.axes:
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return texts


def _timed_out_markers(ax):
    return [line for line in ax.get_lines() if line.get_marker() == "x" and line.get_color() == "red"]


def test_fig2_integer_depths_all_series_labelled_timeouts_marked(captured, tmp_path):
    from treelearn.experiments.topk_accuracy import plot_fig2

    rows = []
    for ds in ("a", "b"):
        for k in ("1", "2", "all"):
            for d in (2, 3, 4, 5):
                if ds == "a" and k == "all":
                    continue  # the first panel has no k = all series at all
                rows.append(dict(dataset=ds, split=0, k=k, depth=d, train_acc=0.8, test_acc=0.7 + 0.02 * d,
                                 timed_out=(k == "all" and d == 5)))
    plot_fig2(rows, tmp_path / "fig2.png")
    fig = captured[-1]
    labels = _legend_texts(fig)
    for k in ("1", "2", "all"):
        assert f"k = {k}" in labels
    assert any("timed out" in t for t in labels)
    panels = [ax for ax in fig.axes if ax.get_title() in ("a", "b")]
    for ax in panels:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
    b = next(ax for ax in panels if ax.get_title() == "b")
    marks = _timed_out_markers(b)
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [5]


def test_fig4_ticks_are_the_k_values_and_the_last_is_all(captured, tmp_path):
    from treelearn.experiments.topk_accuracy import plot_fig4

    rows = [dict(dataset="a", split=0, k=k, depth=3, train_acc=0.8, test_acc=0.7, n_binary_features=12,
                 timed_out=(k == 12)) for k in (1, 2, 4, 8, 12)]
    plot_fig4(rows, tmp_path / "fig4.png")
    ax = captured[-1].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8", "all (12)"]
    marks = _timed_out_markers(ax)  # its train and its test accuracy
    assert len(marks) == 2 and all(list(m.get_xdata()) == [12] for m in marks)


def test_scaling_figures_mark_limits(captured, tmp_path):
    from treelearn.experiments.queries_scaling import plot as qplot
    from treelearn.experiments.topk_scaling import plot as tplot

    rows = [dict(sweep=sw, size=sz, depth=4, solver=so, fit_time_s=0.01 * sz, train_acc=0.9,
                 timed_out=(sz == 400 and so == "topk-16"), note="")
            for sw in ("features", "samples") for so in ("topk-4", "topk-16") for sz in (50, 100, 400)]
    tplot(rows, tmp_path / "s.png", [4])
    fig = captured[-1]
    assert {"topk-4", "topk-16"} <= set(_legend_texts(fig))
    assert all(len(_timed_out_markers(ax)) == 1 for ax in fig.axes)
    qrows = [dict(mode="realizable", n=n, s=4, epsilon=0.1, status="ok" if n < 500 else "limit: time",
                  queries=10 * n, seconds=0.01 * n) for n in (50, 100, 500)]
    qplot(qrows, tmp_path / "q.png")
    fig = captured[-1]
    assert all(len(_timed_out_markers(ax)) == 1 for ax in fig.axes)
    assert np.array_equal(_timed_out_markers(fig.axes[0])[0].get_xdata(), [500])
