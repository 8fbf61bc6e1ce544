"""What every experiment shares: its command-line options and how it draws and saves figures."""
from __future__ import annotations

import argparse


def experiment_parser(name: str, doc: str | None, *, quick_help: str,
                      data_dir_help: str = "directory of the real datasets (default ../shared/datasets)",
                      ) -> argparse.ArgumentParser:
    """The parser of ``treelearn experiment NAME``: ``--data-dir``, ``--out-dir`` (default
    ``results/NAME``) and ``--quick``; the experiment adds its own options."""
    ap = argparse.ArgumentParser(prog=f"treelearn experiment {name}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=None, help=data_dir_help)
    ap.add_argument("--out-dir", default=f"results/{name}")
    ap.add_argument("--quick", action="store_true", help=quick_help)
    return ap


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (experiments run without a screen)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, *, dpi: int = 120, **tight_layout) -> None:
    """Lay out, write and close a figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout(**tight_layout)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def integer_ticks(ax, axis: str = "x") -> None:
    """Only integer ticks on an axis (depths, sizes, k): no 2.5-deep trees."""
    from matplotlib.ticker import MaxNLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(MaxNLocator(integer=True))


def series_label(name: str, value) -> str:
    """The legend label of one series, e.g. ``k = 3`` or ``k = all``."""
    return f"{name} = {value}"


def mark_timed_out(ax, xs, ys, timed_out, *, label: str = "timed out (best so far)") -> None:
    """Mark the points whose fit hit its time limit with a red cross (one legend entry per axes)."""
    import numpy as np

    xs, ys, mask = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), np.asarray(timed_out, dtype=bool)
    if not mask.any():
        return
    seen = any(t.get_label() == label for t in ax.get_lines())
    ax.plot(xs[mask], ys[mask], linestyle="none", marker="x", color="red", ms=8, mew=1.5, zorder=5,
            label="_nolegend_" if seen else label)


def figure_legend(fig, axes, **kw) -> None:
    """One legend for the whole figure with every series of every axes (each label once), so a
    series missing from the first panel (say k = all) is still labelled."""
    handles, labels = [], []
    for ax in (axes.ravel() if hasattr(axes, "ravel") else axes):
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels and not l.startswith("_"):
                handles.append(h)
                labels.append(l)
    if handles:
        kw.setdefault("loc", "lower center")
        kw.setdefault("ncol", min(len(labels), 8))
        kw.setdefault("fontsize", 8)
        fig.legend(handles, labels, **kw)
