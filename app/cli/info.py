"""``main.py info REPORT...``: what a report holds."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from strata.analysis import Report
from strata.analysis.escape import escape_text
from strata.analysis.timefmt import pluralize
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    expand_reports,
    open_each,
    report_opener,
)

__all__ = ["add_parser", "format_info", "format_schema", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("info", help="what a report holds: version, GPUs, processes, counts")
    add_report_args(parser)
    parser.add_argument(
        "--schema", action="store_true", help="also list every SQLite table: rows and columns"
    )


def _ns(value: int) -> str:
    return f"{value / 1e9:.6f} s"


def format_info(report: Report) -> str:
    """Return the human-readable summary of one report, control characters escaped."""
    info = report.info
    lo, hi = report.span_ns()
    lines = [
        f"{info.name}",
        f"  path:          {info.path}",
        f"  nsys version:  {info.nsys_version} (export schema {info.schema_version})"
        if info.nsys_version or not info.schema_version.startswith("Kineto")
        else f"  format:        PyTorch profiler trace ({info.schema_version})",
    ]
    if info.rank is not None:
        size = "?" if info.world_size is None else info.world_size
        lines.append(f"  rank:          {info.rank} of {size}")
    if info.session_start_utc_ns:
        when = dt.datetime.fromtimestamp(info.session_start_utc_ns / 1e9, tz=dt.timezone.utc)
        lines.append(f"  session start: {when.isoformat(timespec='seconds')}")
    lines.append(f"  capture span:  {_ns(hi - lo)} ({lo} .. {hi} ns)")
    if len(report.gpus):
        lines.append("  GPUs:")
        lines += [f"    {r.device_id}: {r.name}" for r in report.gpus.itertuples()]
    else:
        lines.append("  GPUs:          none recorded")
    lines.append("  processes:")
    for row in report.processes.itertuples():
        lines.append(f"    {row.pid:>8}  {row.name or '(unnamed)'}  threads: {row.thread_count}")
    lines.append("  events:")
    for kind, table in report.tables.items():
        source = table.source or "absent"
        lines.append(f"    {kind:<12} {len(table):>10}  ({source})")
    # Names (report, GPU, process) come from the report: nothing in them may drive a terminal.
    return "\n".join(escape_text(line) for line in lines)


def format_schema(path: Path) -> str:
    """Return the report's SQLite tables with row counts and columns, names escaped."""
    from strata.analysis.metadata import table_schema
    from strata.analysis.open import sqlite_source

    source = sqlite_source(path)
    if source is None:
        return "  tables:        (no SQLite export to list)"
    tables = table_schema(source)
    lines = ["  tables:"]
    for name, rows, columns in tables:
        lines.append(f"    {name}  {pluralize(rows, 'row')}")
        lines += [f"      {column}  {kind}".rstrip() for column, kind in columns]
    return "\n".join(escape_text(line) for line in lines)


def run(args: argparse.Namespace) -> int:
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    open_one = report_opener(not args.no_cache, LoadBar.for_args(args))

    def read(path: Path) -> tuple[Report, str]:
        # The schema is listed only when asked: importing sqlite-utils costs start-up time.
        return open_one(path), (format_schema(path) if args.schema else "")

    for _path, (report, schema) in open_each(paths, read, skips):
        # Each report as soon as it is read; a blank line between two.
        text = format_info(report) + ("\n" + schema if schema else "")
        sys.stdout.write(("\n" if skips.done > 1 else "") + text + "\n")
        sys.stdout.flush()
    return skips.status()
