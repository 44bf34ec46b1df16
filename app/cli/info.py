"""``main.py info REPORT...``: what a report holds."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from analysis import Report
from analysis.escape import escape_text
from app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    expand_reports,
    open_each,
    report_opener,
)

__all__ = ["add_parser", "format_info", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("info", help="what a report holds: version, GPUs, processes, counts")
    add_report_args(parser)


def _ns(value: int) -> str:
    return f"{value / 1e9:.6f} s"


def format_info(report: Report) -> str:
    """Return the human-readable summary of one report, control characters escaped."""
    info = report.info
    lo, hi = report.span_ns()
    lines = [
        f"{info.name}",
        f"  path:          {info.path}",
        f"  nsys version:  {info.nsys_version} (export schema {info.schema_version})",
    ]
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


def run(args: argparse.Namespace) -> int:
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    open_one = report_opener(not args.no_cache, LoadBar.for_args(args))
    for _path, report in open_each(paths, open_one, skips):
        # Each report as soon as it is read; a blank line between two.
        sys.stdout.write(("\n" if skips.done > 1 else "") + format_info(report) + "\n")
        sys.stdout.flush()
    return skips.status()
