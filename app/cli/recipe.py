"""``main.py recipe``: not built yet (see its issue)."""

from __future__ import annotations

import argparse

from analysis.errors import StrataError

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("recipe", help="(not built yet)")
    parser.add_argument("rest", nargs="*")


def run(args: argparse.Namespace) -> int:
    raise StrataError("'recipe' is not built yet")
