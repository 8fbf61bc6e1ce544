"""The ``treelearn`` command group: the commands, the one-line errors and the exit codes.

The commands live in :mod:`treelearn.cli.fit` and :mod:`treelearn.cli.commands`; this module
assembles them into one typer application. Nothing heavy is imported before a command runs.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from treelearn.cli import commands
from treelearn.cli.common import EXIT_CODES_HELP, EXIT_INTERRUPTED, CLIError, one_line
from treelearn.cli.fit import fit


class _OneLineErrorGroup(TyperGroup):
    """Typer's group with usage errors and CLIErrors printed as one line on stderr."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name or "treelearn", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except typer.TyperException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `treelearn` alone: print the help
                typer.echo(exc.format_message())
                return self._exit(0, standalone_mode)
            where = "treelearn"
            ctx = getattr(exc, "ctx", None)
            if ctx is not None and ctx.command_path:
                where = ctx.command_path
            typer.echo(f"{where}: error: {one_line(exc.format_message())}", err=True)
            rv = exc.exit_code
        except typer.Abort:
            typer.echo("treelearn: aborted", err=True)
            rv = 1
        except KeyboardInterrupt:
            rv = EXIT_INTERRUPTED
        code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        if code == EXIT_INTERRUPTED:  # Ctrl-C before any tree existed (typer's code for KeyboardInterrupt)
            typer.echo("treelearn: interrupted", err=True)
        return self._exit(code, standalone_mode)

    @staticmethod
    def _exit(code: int, standalone_mode: bool) -> int:
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=_OneLineErrorGroup,
    name="treelearn",
    help="Decision trees learned with the algorithms learning theory says work.\n\n" + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # click's plain help: importing rich costs more than the rest of a start-up
)
app.command()(fit)
app.command()(commands.predict)
app.command()(commands.show)
app.command()(commands.evaluate)
app.command()(commands.export)


@app.command()
def demo(
    out_dir: Path = typer.Option(Path("results/demo"), "--out-dir", "-o",
                                 help="Where the figure (demo.png) and the page of trees (demo.html) go."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Directory of the real datasets (default "
                                            "../shared/datasets or TREELEARN_DATA_DIR); optional."),
    random_state: int = typer.Option(0, help="Seed of the splits and searches."),
    quick: bool = typer.Option(False, help="A smaller tour (for tests)."),
):
    """A tour of the five papers' learners on real data: a table, a figure and a page of trees."""
    from treelearn._validation import TreeLearnValueError
    from treelearn.demo import run_demo

    try:
        run_demo(out_dir=out_dir, data_dir=data_dir, random_state=random_state, quick=quick)
    except TreeLearnValueError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"{out_dir}: {exc.strerror or exc}") from None


def available_experiments() -> list[str]:
    """Names (with dashes) of the modules in ``treelearn.experiments``."""
    import treelearn.experiments as pkg

    names = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    return sorted(n.replace("_", "-") for n in names)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
def experiment(
    ctx: typer.Context,
    name: Optional[str] = typer.Argument(None, help="The experiment (see the list with --help)."),
):
    """Run an experiment: treelearn experiment NAME [ARGS...] (ARGS go to the experiment; NAME --help shows them)."""
    available = available_experiments()
    if name is None or name in ("-h", "--help"):
        typer.echo("Usage: treelearn experiment NAME [ARGS...]\n")
        typer.echo("Runs treelearn.experiments.<NAME with - as _>.main(ARGS); `treelearn experiment NAME --help`")
        typer.echo("lists an experiment's options (--data-dir, --out-dir, --quick, ...).\n")
        typer.echo("Available experiments: " + (", ".join(available) if available else "(none yet)"))
        return
    key = name.replace("_", "-")
    if key not in available:
        raise CLIError(f"unknown experiment {name!r}; available: {', '.join(available) if available else '(none yet)'}")
    from treelearn._validation import TreeLearnValueError

    module = importlib.import_module("treelearn.experiments." + key.replace("-", "_"))
    entry = getattr(module, "main", None)
    if not callable(entry):
        raise CLIError(f"experiment {key!r} has no main(argv) function")
    try:
        rc = entry(list(ctx.args))
    except SystemExit as exc:  # argparse --help / usage errors
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except TreeLearnValueError as exc:
        raise CLIError(f"experiment {key}: {exc}") from None
    raise typer.Exit(int(rc or 0))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``treelearn`` console script; returns the exit code."""
    command = typer.main.get_command(app)
    return command.main(args=argv, prog_name="treelearn", standalone_mode=False)
