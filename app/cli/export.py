"""``main.py export REPORT... --type parquet|arrow|chrome-trace -o OUT``: the loaded events.

``parquet`` and ``arrow`` write a folder: one table per event kind (what
``ReportSet.events(kind)`` returns, every report stacked with its ``report`` column) and a
``manifest.json``. ``chrome-trace`` writes one JSON file (``.gz``: gzipped; ``-``: stdout)
that Perfetto UI opens, every report merged with its own pid range (:mod:`analysis.export`).
"""

from __future__ import annotations

import argparse
import gzip
import io
from contextlib import contextmanager

from analysis.cache import cache_root
from analysis.errors import StrataError
from analysis.export import EXPORT_TYPES, TRACE_KINDS, export_tables, write_chrome_trace
from analysis.kinds import resolve_kinds
from analysis.outputs import check_folder_target, check_output, is_stdout
from analysis.reportset import EVENT_KINDS, ReportSet
from app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "export",
        help="export the events as Parquet/Arrow tables or a Chrome trace (Perfetto)",
        description="Export the loaded events. parquet/arrow: a folder with one table per "
        "event kind and a manifest.json. chrome-trace: one JSON file (Trace Event Format; "
        "'.gz' gzips it) with every report merged, each in its own pid range.",
    )
    add_report_args(parser)
    parser.add_argument("--type", required=True, choices=EXPORT_TYPES, dest="export_type")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="folder (parquet, arrow) or file (chrome-trace; '-': stdout); "
        "never onto, into or around an input",
    )
    parser.add_argument(
        "--kinds",
        metavar="KIND[,KIND...]",
        help=f"event kinds (default: all; tables: {', '.join(EVENT_KINDS)}; "
        f"chrome-trace: {', '.join(TRACE_KINDS)})",
    )


def run(args: argparse.Namespace) -> int:
    allowed = TRACE_KINDS if args.export_type == "chrome-trace" else EVENT_KINDS
    kinds = None
    if args.kinds is not None:
        kinds = list(resolve_kinds(args.kinds, allowed, f" for {args.export_type}"))
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    if args.export_type == "chrome-trace":
        check_output_file(args.output, args.reports, paths)
    else:
        if is_stdout(args.output):
            raise StrataError(f"export: --type {args.export_type} writes a folder; give -o DIR")
        check_output(args.output, [*args.reports, *paths], "-o", cache=cache_root())
        check_folder_target(args.output, "-o")
    reports = open_all(paths, not args.no_cache, skips, LoadBar.for_args(args))
    if not reports:
        return skips.status()
    report_set = ReportSet(reports)
    if args.export_type == "chrome-trace":
        with _trace_stream(args.output) as out:
            write_chrome_trace(report_set, out, kinds)
    else:
        export_tables(report_set, args.output, args.export_type, kinds)
    return skips.status()


@contextmanager
def _trace_stream(output: str):
    """A text stream to the trace file, gzipped when its name ends in ``.gz``."""
    if is_stdout(output) or not output.endswith(".gz"):
        with output_stream(output) as out:
            yield out
        return
    # mtime 0: the same events give the same bytes.
    with (
        output_stream(output, binary=True) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
        io.TextIOWrapper(packed, encoding="utf-8", newline="") as text,
    ):
        yield text
