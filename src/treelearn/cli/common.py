"""What every command of the ``treelearn`` command line shares: the one-line error, the exit
codes, and the small formatting helpers of its reports.

Only light modules are imported here (typer, the standard library): ``treelearn --help`` and
``treelearn show`` must start at once, so scikit-learn, pandas and the learners are imported
inside the commands that need them.
"""
from __future__ import annotations

import math
from enum import Enum
from typing import Any

import typer

#: exit codes (``treelearn --help``, the README and docs/guide/cli.rst list them)
EXIT_DONE = 0
#: an unexpected failure (a bug: the traceback is printed)
EXIT_FAILED = 1
#: bad input: a missing or unreadable file, an unknown column, a malformed model, a bad value
EXIT_BAD_INPUT = 2
#: done at a limit: the time limit or memory cap stopped the search; the best tree found was saved
EXIT_LIMIT = 3
#: interrupted (Ctrl-C); the best tree found so far was saved
EXIT_INTERRUPTED_SAVED = 4
#: interrupted (Ctrl-C) before any tree existed: nothing was saved (128 + SIGINT, the shell's code)
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (f"Exit codes: {EXIT_DONE} done; {EXIT_LIMIT} done at a limit (time limit or memory cap; the best "
                   f"tree found is saved); {EXIT_INTERRUPTED_SAVED} interrupted by Ctrl-C, the best tree so far "
                   f"saved; {EXIT_INTERRUPTED} interrupted before any tree existed; {EXIT_BAD_INPUT} bad input "
                   "(one line on stderr).")


class CLIError(typer.TyperException):
    """A user error: printed as one line, exit code 2."""

    exit_code = EXIT_BAD_INPUT


def one_line(message: Any) -> str:
    """A message on one line, its controls (from a model or a data file) as visible escapes."""
    from treelearn.tree.formats import printable

    return printable(" ".join(str(message).split()))


def shown(v) -> str:
    """A value from a model or a data file as the terminal shows it (controls escaped: nothing
    printed can move the cursor or add a line)."""
    from treelearn.tree.formats import printable

    return printable(v)


class OutFormat(str, Enum):
    text = "text"
    csv = "csv"
    json = "json"


def json_safe(v: Any):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [json_safe(x) for x in v]
    return repr(v)


def csv_cell(v) -> str:
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if any(ch in s for ch in ',"\n') else s


def py(v):
    """A numpy scalar as the Python value (anything else unchanged)."""
    return v.item() if hasattr(v, "item") else v


def same_kind(pred, y):
    """Predictions and labels made comparable (strings on both sides unless both are numbers)."""
    import numpy as np

    pred = np.asarray(pred)
    y = np.asarray(y)
    if pred.dtype.kind != y.dtype.kind and not (pred.dtype.kind in "iuf" and y.dtype.kind in "iuf"):
        pred, y = pred.astype(str), y.astype(str)
    return pred, y


def accuracy(pred, y) -> float:
    import numpy as np

    pred, y = same_kind(pred, y)
    return float(np.mean(pred == y))
