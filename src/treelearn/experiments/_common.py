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
