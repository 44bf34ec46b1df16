"""The command line: ``main.py [REPORT|DIR ...]`` opens the GUI; sub-commands run headless.

Each sub-command is a module of this package with ``add_parser(subparsers)`` and
``run(args) -> int``. ``StrataError`` becomes one line on stderr and exit status 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from analysis.errors import StrataError

__all__ = ["SUBCOMMANDS", "main"]

#: sub-command -> module under app.cli
SUBCOMMANDS = {
    "info": "app.cli.info",
    "stats": "app.cli.stats",
    "outliers": "app.cli.outliers",
    "recipe": "app.cli.recipe",
    "render": "app.cli.render",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # argparse's own name
        raise StrataError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="strata", description="Timeline viewer for Nsight Systems reports.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for module_name in SUBCOMMANDS.values():
        importlib.import_module(module_name).add_parser(sub)
    return parser


def main(argv: list[str]) -> int:
    """Run the command line; return the exit status."""
    try:
        if not argv or argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help"):
            from app.gui import run_gui

            return run_gui(argv)
        args = build_parser().parse_args(argv)
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
        # Dask's own loggers (its config says INFO) would fill the terminal of a --mode dask
        # run, workers included (they inherit the environment); a user's setting wins.
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "info" if args.verbose else "warning")
        module = importlib.import_module(SUBCOMMANDS[args.command])
        return module.run(args)
    except StrataError as exc:
        print(f"strata: {exc}", file=sys.stderr)  # noqa: T201 - the CLI's one-line error
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        # Ctrl-C: workers and files are cleaned up on the way out; no traceback for it.
        print("strata: interrupted", file=sys.stderr)  # noqa: T201 - the CLI's one-line error
        return 130
    except Exception:  # noqa: BLE001 - last resort: a bug, keep its traceback
        raise
