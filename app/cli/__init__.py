"""The command line: ``main.py [-v|-q] [REPORT|DIR ...]`` opens the GUI; sub-commands run headless.

Each sub-command is a module of this package with ``add_parser(subparsers)`` and
``run(args) -> int``. Exit status: 0 when everything was done; 1 when it was done but some
inputs were skipped (each named in one ``strata: <path>: <reason>`` line on stderr); 2 when
nothing could be done, for bad arguments, or an output that may not be written (one line);
130 on Ctrl-C. ``StrataError`` becomes one line on stderr; anything else is a bug and keeps
its traceback. Every line printed has its control characters escaped
(:mod:`analysis.escape`): names and paths come from reports and file systems.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from strata.analysis import __version__
from strata.analysis.errors import StrataError
from strata.analysis.escape import escape_text
from strata.analysis.lazylog import when_imported
from strata.app.argparsing import StrataArgumentParser
from strata.app.commands import SUBCOMMANDS

if TYPE_CHECKING:  # the window's context imports Qt: the command line does not, at run time
    from strata.app.context import DemoBuilder

__all__ = ["EXIT_HELP", "SUBCOMMANDS", "build_parser", "main", "run"]


#: What the exit status says; every sub-command's help ends with it.
EXIT_HELP = (
    "exit status: 0 all done; 1 done, but some inputs were skipped (each named on stderr as "
    "'strata: PATH: REASON'); 2 nothing could be done, or bad arguments; 130 interrupted"
)

_VERBOSE = ("-v", "--verbose")
_QUIET = ("-q", "--quiet")
#: Options answered by the top-level parser rather than the GUI.
_TOP_OPTIONS = ("-h", "--help", "--version")


def _add_verbosity(parser: argparse.ArgumentParser, default: object) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        *_VERBOSE, action="store_true", default=default, help="log what happens (INFO)"
    )
    group.add_argument(
        *_QUIET,
        action="store_true",
        default=default,
        help="no progress bar, no warnings; only errors and skipped inputs",
    )


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser, with the sub-commands ``commands`` (None: all of them).

    A sub-command's parser comes from its module, and some of those import NumPy, pandas or
    pyarrow: a run builds only the one it runs (``--version``: none), ``--help`` all.
    """
    parser = StrataArgumentParser(
        prog="strata",
        description="Timeline viewer for Nsight Systems reports.",
        epilog=EXIT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"strata {__version__}")
    _add_verbosity(parser, False)
    # prog: what argparse would work out from a usage line with no positional argument
    # before the sub-command, without asking the terminal's width (StrataArgumentParser).
    sub = parser.add_subparsers(dest="command", parser_class=StrataArgumentParser, prog=parser.prog)
    for command in SUBCOMMANDS if commands is None else commands:
        importlib.import_module(SUBCOMMANDS[command]).add_parser(sub)
    for subparser in sub.choices.values():
        # -v/-q also after the sub-command; SUPPRESS keeps a value given before it.
        _add_verbosity(subparser, argparse.SUPPRESS)
        subparser.epilog = "\n".join(filter(None, (subparser.epilog, EXIT_HELP)))
    return parser


def _configure_logging(verbose: bool, quiet: bool) -> None:
    """Set logging up (:mod:`app.cli.logsetup`): now for ``-v``/``-q``, else once something
    imports :mod:`logging` (a stored answer's run never does: ~10 % of its time)."""

    def configure() -> None:
        from strata.app.cli.logsetup import configure

        configure(verbose, quiet)

    if verbose or quiet:
        configure()
    else:
        when_imported(configure)
    # Dask's own loggers (its config says INFO) would fill the terminal of a --mode dask
    # run, workers included (they inherit the environment); a user's setting wins.
    dask_level = "info" if verbose else "error" if quiet else "warning"
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", dask_level)


def _split_verbosity(argv: list[str]) -> tuple[list[str], list[str]]:
    """The -v/-q flags before anything else, and the rest of the command line."""
    count = 0
    while count < len(argv) and argv[count] in _VERBOSE + _QUIET:
        count += 1
    return argv[:count], argv[count:]


def _commands_of(first: str) -> tuple[str, ...] | None:
    """The sub-commands a command line starting with ``first`` may run (None: all, for -h)."""
    if first in SUBCOMMANDS:
        return (first,)
    return () if first == "--version" else None


#: What a mistyped sub-command looks like: a word, not a path (no dot, no slash).
_COMMAND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _check_command_word(first: str) -> None:
    """Refuse a first argument that looks like a mistyped sub-command rather than a report.

    The window takes report paths; a word that names no file or folder and has the shape of
    a command (``stat``) would open it on a path that is not there.

    Raises
    ------
    StrataError
        ``first`` is a command-like word and not an existing path.
    """
    if not _COMMAND_WORD.fullmatch(first) or os.path.lexists(first):
        return
    import difflib

    near = difflib.get_close_matches(first.lower(), SUBCOMMANDS, n=1, cutoff=0.6)
    if near:
        raise StrataError(f"unknown command {first!r}; did you mean {near[0]!r}?")
    raise StrataError(
        f"unknown command {first!r}, and no file or folder of that name; "
        f"commands: {', '.join(SUBCOMMANDS)} (or REPORT|DIR... to open the window)"
    )


def _run_gui(flags: list[str], rest: list[str], build_demo: DemoBuilder | None) -> int:
    from strata.app.gui import run_gui

    if any(f in _QUIET for f in flags):
        if any(f in _VERBOSE for f in flags):
            raise StrataError("strata: -v and -q exclude each other")
        _configure_logging(verbose=False, quiet=True)
        return run_gui(rest, build_demo=build_demo)
    return run_gui(["-v", *rest] if flags else rest, build_demo=build_demo)


def main(argv: list[str], build_demo: DemoBuilder | None = None) -> int:
    """Run the command line; return the exit status.

    ``build_demo`` builds the demo reports the window opens without a report (None: none);
    :mod:`strata.launch` passes the built-in one.
    """
    # A name or path that is not valid UTF-8 is printed with escapes, never a traceback.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        flags, rest = _split_verbosity(argv)
        if not rest or rest[0] not in SUBCOMMANDS and rest[0] not in _TOP_OPTIONS:
            if rest:
                _check_command_word(rest[0])
            return _run_gui(flags, rest, build_demo)
        args = build_parser(_commands_of(rest[0])).parse_args(_joined_values(argv))
        _configure_logging(args.verbose, args.quiet)
        module = importlib.import_module(SUBCOMMANDS[args.command])
        return module.run(args)
    except StrataError as exc:
        print(f"strata: {escape_text(str(exc))}", file=sys.stderr)  # noqa: T201 - the CLI's line
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        # Ctrl-C: workers and files are cleaned up on the way out; no traceback for it.
        print("strata: interrupted", file=sys.stderr)  # noqa: T201 - the CLI's one-line error
        return 130
    except Exception:  # noqa: BLE001 - last resort: a bug, keep its traceback
        raise


#: Options whose value may start with a dash (``--filter-time -5s/3s``: nsys takes it).
_DASHED_VALUES = ("--filter-time",)


def _joined_values(argv: list[str]) -> list[str]:
    """``--filter-time -5s/3s`` as ``--filter-time=-5s/3s``: argparse would take a value
    starting with a dash for an option."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            return out + argv[i:]
        if argv[i] in _DASHED_VALUES and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def run(build_demo: DemoBuilder | None = None) -> None:
    """Run the command line on ``sys.argv`` and exit with its status (see :func:`main`)."""
    sys.exit(main(sys.argv[1:], build_demo))
