"""``main.py outliers REPORT... [--top N] [--threshold Z] [--min-ratio R] [--min-delta T]
[-f column|csv|json] [-o FILE]``.

Prints the instances whose duration lies far from their name's typical one (robust z-score
over every instance in every report, and at least a minimum effect, ``--min-ratio`` times
and ``--min-delta`` away from the median; see :mod:`analysis.outliers`), worst first, then the
reports whose median for a name differs most from the other reports' (e.g. a straggler
rank). Times are in ns as the reports store them.
"""

from __future__ import annotations

import argparse
import json
import math

import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.filterspec import parse_duration_ns
from strata.analysis.kinds import resolve_kinds
from strata.analysis.outliers import (
    DEFAULT_MIN_DELTA_NS,
    DEFAULT_MIN_RATIO,
    DEFAULT_THRESHOLD,
    OUTLIER_KINDS,
)
from strata.analysis.reportset import ReportSet
from strata.analysis.stats import StatsResult
from strata.analysis.stats.format import json_records
from strata.analysis.stats.text import format_table
from strata.analysis.xp import BACKENDS, get_xp
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["FORMATS", "add_parser", "format_outliers", "run"]

FORMATS = ("column", "csv", "json")
_INSTANCE_OUT = ["robust_z", "duration_ns", "median_ns", "start_ns", "kind", "report", "row"]
_INSTANCE_OUT += ["index", "name"]
_REPORT_OUT = ["robust_z", "ratio", "median_ns", "others_median_ns", "count", "kind", "report"]
_REPORT_OUT += ["name"]
_DIGITS = {"robust_z": 1, "ratio": 3}  # decimals the column format shows


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "outliers",
        help="instances and reports far from their name's typical duration",
        description="Rank kernel, NVTX range, projected NVTX range and CUDA API instances by "
        "the robust z-score of their duration, worst first, then rank whole reports per name.",
    )
    add_report_args(parser)
    parser.add_argument("--top", type=int, default=20, metavar="N", help="rows per table (20)")
    parser.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="Z",
        help=f"keep rows with |robust z| above Z (default {DEFAULT_THRESHOLD})",
    )
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=DEFAULT_MIN_RATIO,
        metavar="R",
        help="keep rows at least R times slower or faster than their median "
        f"(default {DEFAULT_MIN_RATIO:g}; 1: any ratio)",
    )
    parser.add_argument(
        "--min-delta",
        default=f"{DEFAULT_MIN_DELTA_NS}ns",
        metavar="TIME",
        help="keep rows at least TIME away from their median, in --filter-time units "
        f"(e.g. 500ns, 2us; default {DEFAULT_MIN_DELTA_NS // 1000}us; 0: any difference)",
    )
    parser.add_argument(
        "--kinds",
        default=",".join(OUTLIER_KINDS),
        metavar="KIND[,KIND...]",
        help=f"what to score, among {', '.join(OUTLIER_KINDS)} (default: all)",
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="column", dest="fmt")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE ('-': stdout); never onto, into or around an input",
    )
    parser.add_argument("--backend", choices=BACKENDS, default=None, help="array backend")


def _table(frame: pd.DataFrame, fmt: str, title: str) -> str:
    """One ranked table through the stats printer (same null, CSV and column conventions)."""
    if not len(frame):  # the csv header alone, so that both tables stay parseable
        return ",".join(frame.columns) if fmt == "csv" else "(none)"
    if fmt == "column":  # a readable number of digits on screen; csv keeps them all
        frame = frame.round(_DIGITS)
    return format_table(StatsResult(name="outliers", title=title, frame=frame), fmt)


def format_outliers(
    instances: pd.DataFrame, reports: pd.DataFrame, fmt: str, notes: tuple[str, str] = ("", "")
) -> str:
    """Render the two ranked tables in ``fmt`` (column, csv or json); ``notes`` title them."""
    if fmt == "json":
        return json.dumps({"instances": json_records(instances), "reports": json_records(reports)},
                          indent=1) + "\n"  # fmt: skip
    first, second = _table(instances, fmt, "instances"), _table(reports, fmt, "reports")
    if fmt == "csv":
        return f"{first}\n\n{second}\n"
    return (
        f" ** Outlying instances ({notes[0]}):\n\n{first}\n\n"
        f" ** Reports whose median differs from the others' ({notes[1]}):\n\n{second}\n"
    )


def _check_args(args: argparse.Namespace) -> tuple[tuple[str, ...], int]:
    """The kinds and --min-delta ns asked for; a bad option value is refused."""
    kinds = resolve_kinds(args.kinds, OUTLIER_KINDS)
    if args.top < 1:
        raise AnalysisError(f"--top must be 1 or more, not {args.top}")
    if not math.isfinite(args.threshold) or args.threshold < 0:
        raise AnalysisError(f"--threshold must be a finite number >= 0, not {args.threshold}")
    if not math.isfinite(args.min_ratio) or args.min_ratio < 1:
        raise AnalysisError(f"--min-ratio must be a finite number >= 1, not {args.min_ratio}")
    min_delta_ns = parse_duration_ns(str(args.min_delta), "--min-delta")
    if min_delta_ns < 0:
        raise AnalysisError(f"--min-delta must be 0 or more, not {args.min_delta}")
    return kinds, min_delta_ns


def run(args: argparse.Namespace) -> int:
    kinds, min_delta_ns = _check_args(args)
    xp = get_xp(args.backend)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)
    loaded = open_all(paths, not args.no_cache, skips, LoadBar.for_args(args))
    if not loaded:
        return skips.status()
    found = ReportSet(loaded).outliers(
        threshold=args.threshold,
        kinds=kinds,
        xp=xp,
        min_ratio=args.min_ratio,
        min_delta_ns=min_delta_ns,
    )
    instances = found.instances[_INSTANCE_OUT].head(args.top)
    reports = found.reports[_REPORT_OUT].head(args.top)
    limit = (f"|robust z| > {args.threshold:g}, x{args.min_ratio:g} and {min_delta_ns:,} ns "
             "from the median")  # fmt: skip
    notes = (
        f"{limit}; {len(instances)} of {len(found.instances)} shown",
        f"{limit}; {len(reports)} of {len(found.reports)} shown",
    )
    text = format_outliers(instances, reports, args.fmt, notes)
    with output_stream(args.output) as out:
        out.write(text)
    return skips.status()
