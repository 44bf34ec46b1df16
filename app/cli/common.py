"""Helpers shared by the sub-commands: report arguments, output files, backends."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from analysis import Report, find_reports, open_report

__all__ = ["add_report_args", "load_reports", "output_stream"]


def add_report_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report files or folders")
    parser.add_argument("--no-cache", action="store_true", help="bypass the columnar cache")


def load_reports(args: argparse.Namespace) -> list[Report]:
    """Open every report named by ``args.reports`` (folders expanded)."""
    return [open_report(p, use_cache=not args.no_cache) for p in find_reports(args.reports)]


@contextmanager
def output_stream(path: str | None) -> IO[str]:
    """Yield stdout, or a file opened for writing when ``path`` is given."""
    if path is None:
        yield sys.stdout
        return
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        yield fh
