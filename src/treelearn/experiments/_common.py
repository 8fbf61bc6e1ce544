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


class FitProgress:
    """Progress of an experiment's fits: a ``rich`` bar with the count, elapsed time and ETA on a
    terminal (stderr), or, when stderr is not a terminal (a log file, a test), one plain line
    ``[i/N] elapsed, ETA`` at most every ``every`` seconds. ``log(msg)`` prints a message above the
    bar (stdout); ``advance(n)`` counts fits done (or skipped). Use as a context manager."""

    def __init__(self, total: int, description: str, *, every: float = 30.0, stream=None):
        import sys
        import time

        self.total, self.description, self.every = max(int(total), 0), description, every
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self._time = time.perf_counter
        self._t0 = self._last = self._time()
        self._bar = None
        if getattr(self.stream, "isatty", lambda: False)():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=Console(file=self.stream), transient=False)

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(self.description, total=self.total or None)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
        return False

    def eta(self) -> float | None:
        if self.done <= 0 or self.total <= 0:
            return None
        return (self._time() - self._t0) / self.done * max(self.total - self.done, 0)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.advance(self._task, n)
            return
        now = self._time()
        if now - self._last >= self.every or self.done >= self.total:
            self._last = now
            eta = self.eta()
            print(f"{self.description}: [{self.done}/{self.total}] {now - self._t0:.0f} s elapsed"
                  + ("" if eta is None else f", ETA {eta:.0f} s"), file=self.stream, flush=True)

    def log(self, msg: str) -> None:
        if self._bar is not None:
            self._bar.console.print(msg, markup=False, highlight=False)
        else:
            print(msg, flush=True)
