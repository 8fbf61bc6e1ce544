"""The one CSV reader of the command line: ``fit``, ``predict`` and ``evaluate`` read a file the
same way, and a column's type is never changed silently.

Reading is two steps. :func:`read_table` reads the cells as text (every row kept, the header row
detected unless ``--header``/``--no-header`` says, the markers of missing cells applied);
:func:`typed_frame` then decides each column's type:

* a column whose present cells are all numbers (with the file's decimal mark) is numeric;
* a column with a *few* cells that are not numbers (at most :data:`STRAY_SHARE` of its present
  cells), or whose cells are numbers written with a decimal comma, is an error that names the
  column, the cells (data row and value) and the fixes (``--na-values``, ``--decimal ,``,
  ``--categorical COL``): one stray token must not turn a numeric column into 100 categories;
* any other column is categorical (its cells as text), and ``fit`` lists it in its summary
  (with the share of its cells that are numbers when it has some);
* ``--categorical COL`` makes a column categorical whatever its cells;
* ``predict`` and ``evaluate`` type the columns as the model says (numeric or categorical):
  a cell that is not a number in a numeric column is the same error.

``nan``, ``inf`` and ``1_000`` are not numbers here (mark such cells with ``--na-values``);
with ``--decimal ,`` a cell holding a ``.`` is not a number (no thousands separators are read).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import typer

from treelearn.cli.common import CLIError

DEFAULT_NA_VALUES = ("?", "", "NA")
#: a column whose non-numeric cells are at most this share of its present cells is numeric with
#: stray tokens (an error), not a text column
STRAY_SHARE = 0.05
#: the cells an error shows
SHOWN_CELLS = 5
#: more digits than a float64 holds exactly (its integers are exact up to 2**53, 16 digits)
_LONG_INTEGER = re.compile(r"^[+-]?\d{16,}$")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")

NA_HELP = ("Comma-separated markers of missing cells (default: '?,,NA', i.e. ?, empty and NA); 'none' for no "
           "marker. Default for predict/evaluate: the model's.")
HEADER_HELP = "Whether the first row names the columns (default: detected)."
SEP_HELP = "CSV field separator (default ','; predict/evaluate: the model's)."
DECIMAL_HELP = "Decimal mark of the numbers: '.' or ',' (default '.'; predict/evaluate: the model's)."
# the reading options of fit, predict and evaluate (typer reads these defaults; one definition each)
NA_OPTION = typer.Option(None, help=NA_HELP)
HEADER_OPTION = typer.Option(None, "--header/--no-header", help=HEADER_HELP)
SEP_OPTION = typer.Option(None, help=SEP_HELP)
DECIMAL_OPTION = typer.Option(None, help=DECIMAL_HELP)


@dataclass
class CsvOptions:
    """How a file is read; ``fit`` stores them in the model, ``predict``/``evaluate`` default to them."""

    sep: str = ","
    decimal: str = "."
    na_values: tuple = DEFAULT_NA_VALUES
    header: Optional[bool] = None

    @classmethod
    def from_cli(cls, *, sep: Optional[str], decimal: Optional[str], na_values: Optional[str],
                 header: Optional[bool], stored: Optional[dict] = None) -> "CsvOptions":
        """The options given on the command line, else the model's stored ones, else the defaults."""
        stored = stored if isinstance(stored, dict) else {}

        def pick(given, key, default):
            if given is not None:
                return given
            v = stored.get(key)
            return v if isinstance(v, str) else default

        na = na_list(na_values) if na_values is not None else (
            tuple(v for v in stored["na_values"] if isinstance(v, str)) if isinstance(stored.get("na_values"), list)
            else DEFAULT_NA_VALUES)
        opts = cls(sep=pick(sep, "sep", ","), decimal=pick(decimal, "decimal", "."), na_values=tuple(na),
                   header=header)
        if opts.decimal not in (".", ","):
            raise CLIError(f"--decimal must be '.' or ',', got {opts.decimal!r}")
        if not opts.sep:
            raise CLIError("--sep must not be empty")
        if opts.sep == opts.decimal:
            raise CLIError(f"--decimal {opts.decimal} needs another field separator than {opts.sep!r} "
                           "(e.g. --sep ';')")
        return opts

    def to_json(self) -> dict:
        return {"sep": self.sep, "decimal": self.decimal, "na_values": list(self.na_values)}


def na_list(na_values: Optional[str]) -> tuple:
    """``--na-values``: comma-separated markers of missing cells (default ``?``, empty, ``NA``);
    ``--na-values none``: no marker (every cell is a value)."""
    if na_values is None:
        return DEFAULT_NA_VALUES
    if na_values.strip().lower() == "none":
        return ()
    return tuple(v.strip() for v in na_values.split(","))


def _is_number(s: str, decimal: str = ".") -> bool:
    if decimal != ".":
        if "." in s:
            return False
        s = s.replace(decimal, ".")
    try:
        v = float(s)
    except ValueError:
        return False
    return v == v and v not in (float("inf"), float("-inf")) and "_" not in s


def _detect_header(rows: list[list[str]], na: set[str], decimal: str) -> bool:
    """Whether the first row of a CSV (read as strings) is a header row.

    A header when no cell of the first row is a number or a missing marker, and some column
    is told apart by it: numeric below but not in the first row, or (text columns) a first-row
    value that never occurs again in its column."""
    first = rows[0]
    if len(rows) < 2:  # one line: a header unless it holds a number or a missing marker
        return not any(c.strip() in na or _is_number(c.strip(), decimal) for c in first)
    if any(c.strip() in na or _is_number(c.strip(), decimal) for c in first):
        return False
    body = rows[1:]
    for j, name in enumerate(first):
        col = [r[j].strip() for r in body if j < len(r) and r[j].strip() not in na]
        if col and all(_is_number(v, decimal) for v in col):
            return True  # a numeric column under a text cell
    for j, name in enumerate(first):
        col = {r[j].strip() for r in body if j < len(r)}
        if name.strip() not in col:
            return True  # a name that never occurs as a value
    return False


def _dedup(names: list[str]) -> tuple[list[str], list[str]]:
    """Repeated column names renamed as pandas does (a, a.1, a.2, ...); and the repeated ones."""
    dup = sorted({n for n in names if names.count(n) > 1})
    if not dup:
        return names, []
    names = list(names)
    seen: dict[str, int] = {}
    taken = set(names)
    for j, n in enumerate(names):
        if n in seen:
            k = seen[n]
            while f"{n}.{k}" in taken:
                k += 1
            names[j] = f"{n}.{k}"
            taken.add(names[j])
            seen[n] = k + 1
        else:
            seen[n] = 1
    return names, dup


@dataclass
class RawTable:
    """A CSV file's cells as stripped text, with its column names and missing cells."""

    path: Path
    options: CsvOptions
    cells: object  # a pandas DataFrame of str
    missing: object  # a pandas DataFrame of bool

    @property
    def names(self) -> list[str]:
        return [str(c) for c in self.cells.columns]


def _separator_hint(path: Path, sep: str) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return ""
    for other in (";", "\t", "|"):
        if other != sep and other in first and (sep not in first or first.count(other) > first.count(sep)):
            shown = "'\\t'" if other == "\t" else repr(other)
            return f" (the first line is separated by {shown}: pass --sep {shown})"
    return ""


def read_table(path: Path, options: CsvOptions, *, quiet: bool = False) -> RawTable:
    """Read a CSV file's cells as text: every row kept; the header row detected unless
    ``options.header`` says whether there is one (without one, the columns are named
    ``x0, x1, ...``); cells equal to a marker of ``options.na_values`` are missing."""
    import pandas as pd

    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if path.is_dir():
        raise CLIError(f"{path}: is a directory, expected a CSV file")
    try:
        raw = pd.read_csv(path, sep=options.sep, header=None, dtype=str, keep_default_na=False, na_filter=False,
                          skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise CLIError(f"{path}: cannot read as CSV: {exc}{_separator_hint(path, options.sep)}") from None
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    if raw.shape[0] == 0:
        raise CLIError(f"{path}: the file is empty")
    na = set(options.na_values)
    head = [[str(c) for c in r] for r in raw.iloc[:1000].to_numpy(dtype=object).tolist()]
    has_header = _detect_header(head, na, options.decimal) if options.header is None else options.header
    if has_header:
        names, dup = _dedup([str(c).strip() for c in raw.iloc[0].tolist()])
        body = raw.iloc[1:]
        if dup and not quiet:
            shown = ", ".join(map(repr, dup[:5])) + (", ..." if len(dup) > 5 else "")
            typer.echo(f"{path}: the header row repeats the column name(s) {shown}; the repeats are "
                       "renamed NAME.1, NAME.2, ...", err=True)
    else:
        names = [f"x{j}" for j in range(raw.shape[1])]
        body = raw
        if options.header is None and not quiet:
            typer.echo(f"{path}: no header row detected; the columns are named x0..x{len(names) - 1} "
                       "(--header to read the first row as names)", err=True)
    if body.shape[0] == 0:
        raise CLIError(f"{path}: no data rows (only a header)")
    cells = pd.DataFrame({name: body.iloc[:, j].astype(str).str.strip().to_numpy()
                          for j, name in enumerate(names)}, columns=names)
    if raw.shape[1] == 1 and not quiet:
        hint = _separator_hint(path, options.sep)
        if hint:
            typer.echo(f"{path}: one column read{hint}", err=True)
    return RawTable(path=path, options=options, cells=cells, missing=cells.isin(na))


@dataclass
class ColumnReport:
    """What the reader decided about the columns it typed."""

    categorical: list = field(default_factory=list)   # read as categorical (text, or --categorical)
    mixed: dict = field(default_factory=dict)          # categorical, though this share of cells are numbers
    missing: list = field(default_factory=list)        # columns with missing cells

    def summary(self) -> str:
        """One line: the columns read as categorical and those with missing cells."""
        if self.categorical:
            shown = ", ".join(f"{c!r}" + (f" ({self.mixed[c]:.0%} of its cells are numbers)" if c in self.mixed else "")
                              for c in self.categorical)
            parts = [f"read as categorical: {shown}"]
        else:
            parts = ["every feature column read as numeric"]
        if self.missing:
            parts.append("missing values in " + ", ".join(map(repr, self.missing)))
        return "; ".join(parts)


def _numbers(text, decimal: str):
    """The cells of a text Series as numbers: ``(values, bad)`` where ``bad`` marks the cells that
    are not numbers (``values`` NaN there)."""
    import numpy as np
    import pandas as pd

    t = text if decimal == "." else text.str.replace(decimal, ".", regex=False)
    values = pd.to_numeric(t, errors="coerce")
    bad = values.isna().to_numpy() | np.isinf(values.to_numpy(dtype=np.float64))
    bad |= t.str.contains("_", regex=False).to_numpy()
    if decimal != ".":
        bad |= text.str.contains(".", regex=False).to_numpy()
    return values, bad


def _cells_text(rows, values) -> str:
    return "; ".join(f"data row {r + 1}: {v!r}" for r, v in zip(rows[:SHOWN_CELLS], values[:SHOWN_CELLS]))


def _not_numbers_error(table: RawTable, name: str, rows, values, n_present: int, why: str) -> CLIError:
    """The error of a numeric column with cells that are not numbers: the column, the cells, the fixes."""
    n = len(rows)
    opts = table.options
    comma = sum(bool(_DECIMAL_COMMA.match(v)) for v in values) if opts.decimal == "." else 0
    fixes = []
    if comma:
        fixes.append("numbers with a decimal comma: pass --decimal ," + (" --sep ';'" if opts.sep == "," else ""))
    markers = sorted({v for v in values if "," not in v and v})
    if markers:
        shown = ",".join(list(opts.na_values) + markers[:SHOWN_CELLS])
        fixes.append(f"missing-value markers: pass --na-values '{shown}'")
    fixes.append(f"a text column: pass --categorical {name!r}")
    more = f" ({n} in all)" if n > SHOWN_CELLS else ""
    return CLIError(f"{table.path}: column {name!r} {why} but {n} of its {n_present} cells "
                    f"{'is' if n == 1 else 'are'} not a number: {_cells_text(rows, values)}{more}. "
                    f"If these are {'; if '.join(fixes)}")


def _check_long_integers(table: RawTable, name: str, text, values) -> None:
    """Integers with more digits than float64 holds exactly: refused (never rounded silently)."""
    long = text.str.match(_LONG_INTEGER).to_numpy()
    if not long.any():
        return
    for i in long.nonzero()[0].tolist():
        s = text.iloc[i]
        if int(s) != int(float(s)):
            raise CLIError(f"{table.path}: column {name!r} has the integer {s} (data row {i + 1}), which a "
                           "float64 cannot hold exactly (treelearn's features are float64, exact up to 2**53); "
                           f"pass --categorical {name!r} to read the column as text")


def _numeric_column(table: RawTable, name: str, why: str):
    """The column as numbers (int64 when every cell is an integer and none is missing, else
    float64 with NaN for the missing cells), or the error naming its non-numeric cells."""
    import numpy as np
    import pandas as pd

    text, missing = table.cells[name], table.missing[name].to_numpy()
    present = ~missing
    values, bad = _numbers(text[present], table.options.decimal)
    if bad.any():
        rows = np.flatnonzero(present)[bad]
        raise _not_numbers_error(table, name, rows.tolist(), text.iloc[rows].tolist(), int(present.sum()), why)
    _check_long_integers(table, name, text[present], values)
    if not missing.any():
        return pd.Series(values.to_numpy(), index=text.index, name=name)
    out = np.full(len(text), np.nan)
    out[present] = values.to_numpy(dtype=np.float64)
    return pd.Series(out, index=text.index, name=name)


def _text_column(table: RawTable, name: str):
    """The column's cells as text (object dtype), missing cells NaN."""
    import numpy as np

    text = table.cells[name].astype(object)
    return text.where(~table.missing[name], np.nan)


def _label_column_values(table: RawTable, name: str):
    """A label column: numbers when every present cell is one, else text; never an error."""
    import numpy as np

    present = ~table.missing[name].to_numpy()
    _, bad = _numbers(table.cells[name][present], table.options.decimal)
    if present.any() and not bad.any():
        try:
            return _numeric_column(table, name, "holds the labels")
        except CLIError:  # an integer too long for a float64: keep the labels as text
            pass
    col = _text_column(table, name)
    return col if present.all() else col.where(present, np.nan)


def typed_frame(table: RawTable, *, categorical=(), kinds: Optional[dict] = None, labels=()):
    """The table with each column typed (module docstring): ``categorical`` names columns read as
    text whatever their cells; ``kinds`` (a model's ``{name: "numeric" | "categorical"}``) types
    the columns it names as the model does; ``labels`` are label columns (numbers when every cell
    is one, else text, never an error). Columns that neither ``kinds`` nor ``labels`` name are
    typed by their cells when ``kinds`` is None, else kept as text. Returns ``(frame, report)``."""
    import numpy as np
    import pandas as pd

    report = ColumnReport()
    forced = set(categorical)
    columns = {}
    for name in table.names:
        present = ~table.missing[name].to_numpy()
        if name in labels:
            columns[name] = _label_column_values(table, name)
            continue
        if not present.all():
            report.missing.append(name)
        if kinds is not None:
            kind = kinds.get(name)
            if kind == "numeric":
                columns[name] = _numeric_column(table, name, "is numeric in the model")
            else:  # categorical in the model, or a column the model does not read
                columns[name] = _text_column(table, name)
            continue
        if name in forced:
            report.categorical.append(name)
            columns[name] = _text_column(table, name)
            continue
        text = table.cells[name][present]
        _, bad = _numbers(text, table.options.decimal)
        n_bad, n_present = int(bad.sum()), int(present.sum())
        comma = n_bad and table.options.decimal == "." and \
            int(text[bad].str.match(_DECIMAL_COMMA).sum()) * 2 >= n_bad
        if n_bad and (comma or n_bad <= STRAY_SHARE * n_present):
            rows = np.flatnonzero(present)[bad]
            raise _not_numbers_error(table, name, rows.tolist(), table.cells[name].iloc[rows].tolist(), n_present,
                                     "holds numbers")
        if n_bad:
            report.categorical.append(name)
            if n_bad < n_present:
                report.mixed[name] = 1.0 - n_bad / n_present
            columns[name] = _text_column(table, name)
        else:
            columns[name] = _numeric_column(table, name, "holds numbers")
    return pd.DataFrame(columns, columns=table.names), report


def read_csv(path: Path, *, sep: str = ",", decimal: str = ".", na_values: Optional[str] = None,
             header: Optional[bool] = None, categorical=(), quiet: bool = False):
    """Read and type a CSV file as ``fit`` does (every column typed by its cells; module
    docstring): a pandas DataFrame."""
    opts = CsvOptions.from_cli(sep=sep, decimal=decimal, na_values=na_values, header=header)
    return typed_frame(read_table(Path(path), opts, quiet=quiet), categorical=categorical)[0]
