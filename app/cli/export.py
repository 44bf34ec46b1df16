"""``main.py export REPORT... -t|--type TYPE -o OUT``: the loaded events, for other tools.

``parquet`` and ``arrow`` write a folder: one table per event kind (what
``ReportSet.events(kind)`` returns, every report stacked with its ``report`` column) and a
``manifest.json``. ``arrowdir`` and ``parquetdir`` write nsys's own export folders: every
table of the report's SQLite export, one file each. ``chrome-trace`` writes one JSON file
and ``perfetto`` one Perfetto protobuf trace (``.gz``: gzipped; ``-``: stdout), every report
merged (:mod:`analysis.export`, :mod:`analysis.perfetto`).
"""

from __future__ import annotations

import argparse
import gzip
import io
from contextlib import contextmanager

from strata.analysis.cache import cache_root
from strata.analysis.errors import StrataError
from strata.analysis.export import (
    EXPORT_TYPES,
    NSYS_DIR_TYPES,
    TRACE_KINDS,
    export_nsys_dirs,
    export_tables,
    write_chrome_trace,
)
from strata.analysis.kinds import resolve_kinds
from strata.analysis.outputs import check_folder_target, check_output, is_stdout
from strata.analysis.reportset import EVENT_KINDS, ReportSet
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["add_parser", "run"]

#: Types that write one file (the others write a folder).
_FILE_TYPES = ("chrome-trace", "perfetto")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "export",
        help="export the events as Parquet/Arrow tables, nsys's arrowdir/parquetdir folders, "
        "a Chrome trace or a Perfetto trace",
        description="Export the loaded events. parquet/arrow: a folder with one table per "
        "event kind and a manifest.json. arrowdir/parquetdir: nsys's export folders, every "
        "table of the report's SQLite export in its own file (one folder per report when "
        "there are several). chrome-trace: one JSON file (Trace Event Format). perfetto: one "
        "Perfetto protobuf trace, smaller than the JSON and read natively by Perfetto. "
        "Both traces merge every report; '.gz' gzips them.",
    )
    add_report_args(parser)
    parser.add_argument(
        "-t", "--type", required=True, choices=EXPORT_TYPES, dest="export_type",
        help=f"{', '.join(EXPORT_TYPES)} (-t and arrowdir/parquetdir as nsys export spells them)",
    )  # fmt: skip
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="folder (parquet, arrow, arrowdir, parquetdir) or file (chrome-trace, perfetto; "
        "'-': stdout); never onto, into or around an input",
    )
    parser.add_argument(
        "--kinds",
        metavar="KIND[,KIND...]",
        help=f"event kinds (default: all; tables: {', '.join(EVENT_KINDS)}; "
        f"chrome-trace, perfetto: {', '.join(TRACE_KINDS)}; not for arrowdir/parquetdir, "
        "which copy every table)",
    )


def _kinds(args: argparse.Namespace) -> list[str] | None:
    """The --kinds asked for (None: all); refused for the types that copy every table."""
    if args.kinds is None:
        return None
    if args.export_type in NSYS_DIR_TYPES:
        raise StrataError(
            f"export: --kinds does not apply to {args.export_type}, which copies every table "
            "of the report as nsys export does"
        )
    allowed = TRACE_KINDS if args.export_type in _FILE_TYPES else EVENT_KINDS
    return list(resolve_kinds(args.kinds, allowed, f" for {args.export_type}"))


def run(args: argparse.Namespace) -> int:
    kinds = _kinds(args)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    if args.export_type in _FILE_TYPES:
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
    elif args.export_type == "perfetto":
        from strata.analysis.perfetto import write_perfetto_trace

        with _trace_stream(args.output, binary=True) as out:
            write_perfetto_trace(report_set, out, kinds)
    elif args.export_type in NSYS_DIR_TYPES:
        export_nsys_dirs(report_set, args.output, args.export_type)
    else:
        export_tables(report_set, args.output, args.export_type, kinds)
    return skips.status()


@contextmanager
def _trace_stream(output: str, binary: bool = False):
    """A stream to the trace file (text, or ``binary``), gzipped when its name ends in ``.gz``."""
    if is_stdout(output) or not output.endswith(".gz"):
        with output_stream(output, binary=binary) as out:
            yield out
        return
    # mtime 0: the same events give the same bytes.
    with (
        output_stream(output, binary=True) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
    ):
        if binary:
            yield packed
            return
        with io.TextIOWrapper(packed, encoding="utf-8", newline="") as text:
            yield text
