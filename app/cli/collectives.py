"""``main.py collectives REPORT... [--align MODE] [--top N] [-f column|csv|json] [-o FILE]``.

Matches the collectives of several reports (one per rank; :mod:`analysis.collectives`) and
prints one row per matched collective (arrival skew, straggler, waits, transfer), then one
per collective type (count, skew, total wait, worst straggler) and each rank's share of the
wait. Times are ns on the shared axis: by default every session starts at 0, as the
timeline (and its Collectives tab) opens, so both give the same skews; ``--align
wallclock`` puts the ranks on their UTC session starts, as ``nsys recipe`` does. The output
names the alignment it used.
"""

from __future__ import annotations

import argparse
import json
import logging

import pandas as pd

from strata.analysis.alignment import TimeAlignment
from strata.analysis.collectives import collectives
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.reportset import ReportSet
from strata.analysis.stats import StatsResult
from strata.analysis.stats.format import json_records
from strata.analysis.stats.text import format_table
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["FORMATS", "add_parser", "format_collectives", "run"]

log = logging.getLogger(__name__)

FORMATS = ("column", "csv", "json")
ALIGNMENTS = ("wallclock", "session")
_INSTANCE_OUT = ["collective", "communicator", "instance", "ranks", "size_bytes",
                 "first_start_ns", "skew_ns", "straggler", "near_ties", "max_wait_ns",
                 "total_wait_ns", "transfer_ns"]  # fmt: skip
_SUMMARY_OUT = ["collective", "communicator", "count", "ranks", "mean_skew_ns",
                "max_skew_ns", "total_wait_ns", "worst_straggler", "straggler_count",
                "caused_wait_ns"]  # fmt: skip
_WAITS_OUT = ["collective", "communicator", "report", "wait_ns", "wait_share",
              "straggler_count", "instances"]  # fmt: skip


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "collectives",
        help="NCCL collectives matched across ranks: skew, waits, stragglers",
        description="Match each collective (NCCL kernels, torch.distributed records or NCCL "
        "NVTX ranges) across the reports, one per rank, and print its arrival skew, the "
        "straggler, each rank's wait and the transfer after the last arrival; then a "
        "summary per collective type and each rank's share of the wait.",
    )
    add_report_args(parser)
    parser.add_argument(
        "--align",
        choices=ALIGNMENTS,
        default="session",
        help="the shared clock: every session at 0 (default, as the timeline opens) or UTC "
        "session starts (wallclock); the output names it",
    )
    parser.add_argument(
        "--top", type=int, default=0, metavar="N", help="matched collectives shown (0: all)"
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="column", dest="fmt")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE ('-': stdout); never onto, into or around an input",
    )


def _table(frame: pd.DataFrame, fmt: str, title: str) -> str:
    if not len(frame):  # the csv header alone, so that every section stays parseable
        return ",".join(frame.columns) if fmt == "csv" else "(none)"
    if fmt == "column":
        frame = frame.round({"mean_skew_ns": 0, "wait_share": 3})
        # Columns as wide as their widest value, not nsys's first 100 rows (Strata's table).
        fmt = "column:autolines=0"
    return format_table(StatsResult(name="collectives", title=title, frame=frame), fmt)


def format_collectives(
    instances: pd.DataFrame,
    summary: pd.DataFrame,
    waits: pd.DataFrame,
    notes: tuple[str, ...],
    fmt: str,
    shown: str = "",
    alignment: str = "",
) -> str:
    """Render the three tables (and the notes) in ``fmt``: column, csv or json; ``alignment``
    (how the ranks share one axis, which every skew depends on) heads the column output, is
    a JSON key and, for csv, a log line (the tables stay parseable)."""
    if fmt == "json":
        body = {"alignment": alignment, "collectives": json_records(instances),
                "summary": json_records(summary), "rank_waits": json_records(waits),
                "notes": list(notes)}  # fmt: skip
        return json.dumps(body, indent=1) + "\n"
    tables = [_table(instances, fmt, "collectives"), _table(summary, fmt, "summary"),
              _table(waits, fmt, "rank waits")]  # fmt: skip
    if fmt == "csv":
        if alignment:
            log.info("alignment: %s", alignment)
        for note in notes:
            log.warning("%s", note)
        return "\n\n".join(tables) + "\n"
    head = f" ** Alignment: {alignment}\n\n" if alignment else ""
    text = head + (
        f" ** Matched collectives{shown}:\n\n{tables[0]}\n\n"
        f" ** Per collective type:\n\n{tables[1]}\n\n"
        f" ** Each rank's wait:\n\n{tables[2]}\n"
    )
    if notes:
        text += "\n ** Notes:\n\n" + "".join(f"  {escape_text(n)}\n" for n in notes)
    return text


def run(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise AnalysisError(f"--top must be 0 (all) or more, not {args.top}")
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)
    loaded = open_all(paths, not args.no_cache, skips, LoadBar.for_args(args))
    if not loaded:
        return skips.status()
    found = collectives(ReportSet(loaded), TimeAlignment(args.align))
    instances = found.instances[_INSTANCE_OUT]
    shown = ""
    if args.top and len(instances) > args.top:
        shown = f" (first {args.top} of {len(instances)})"
        instances = instances.head(args.top)
    text = format_collectives(
        instances, found.summary[_SUMMARY_OUT], found.rank_waits[_WAITS_OUT], found.notes,
        args.fmt, shown, found.alignment,
    )  # fmt: skip
    with output_stream(args.output) as out:
        out.write(text)
    return skips.status()
