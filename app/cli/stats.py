"""``main.py stats REPORT... -r NAME[,NAME...] [-f column|csv|json] [-o FILE]``.

nsys-stats-compatible summaries (see :mod:`analysis.stats`): for each report, each asked
summary is printed under a ``Processing [<report>] with [<name>.py]...`` line, as
``nsys stats`` prints it, so scripts written against ``nsys stats -f csv`` keep working.
"""

from __future__ import annotations

import argparse

from analysis import answers
from analysis.errors import AnalysisError
from analysis.stats import FORMATS, REPORT_NAMES, format_results, parse_spec
from analysis.stats.compute import summarize as compute_summaries
from analysis.stats.format import parse_timeunit
from analysis.stats.lean import wait_for_cache_writes
from analysis.xp import BACKENDS, get_xp
from app.cli.common import (
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_each,
    output_stream,
)

__all__ = ["DEFAULT_REPORTS", "add_parser", "run"]

#: What ``nsys stats`` runs without ``-r`` (the ones Strata implements, in nsys's order).
DEFAULT_REPORTS = (
    "nvtx_sum",
    "osrt_sum",
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "stats",
        help="nsys-stats-compatible summaries",
        description="Print nsys-stats-compatible summaries. Reports: " + ", ".join(REPORT_NAMES),
    )
    add_report_args(parser)
    parser.add_argument(
        "-r",
        "--report",
        dest="report_names",
        default=",".join(DEFAULT_REPORTS),
        metavar="NAME[,NAME...]",
        help="summaries to run, with options after a colon (e.g. cuda_gpu_kern_sum:base)",
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="column", dest="fmt")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE ('-': stdout); never onto, into or around an input",
    )
    parser.add_argument(
        "--timeunit",
        default="nsec",
        help="durations and timestamps in nsec (default), usec, msec or seconds",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="array backend of the aggregation engine (default: $STRATA_BACKEND, else CuPy "
        "when a GPU is usable, else NumPy)",
    )


def run(args: argparse.Namespace) -> int:
    specs = [s.strip() for s in args.report_names.split(",") if s.strip()]
    if not specs:
        raise AnalysisError(f"-r {args.report_names!r} names no summary; e.g. -r cuda_api_sum")
    for spec in specs:
        parse_spec(spec)  # a bad name fails before any report is opened
    timeunit = parse_timeunit(args.timeunit)
    xp = get_xp(args.backend)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)

    def compute(path, wanted):
        # Inside SQLite for a small report, else only the columns the summaries read.
        return compute_summaries(path, wanted, xp, use_cache=not args.no_cache)

    def summarize(path):
        if args.no_cache:
            return compute(path, specs)
        # Summaries computed before for this same report are printed from their tables.
        return answers.summaries(path, specs, lambda wanted: compute(path, wanted))

    results = {}
    for path, (report_name, tables) in open_each(paths, summarize, skips):
        # Two reports with one file name (other folders) are told apart by their path.
        name = report_name if report_name not in results else str(path)
        results[name] = tables
    if results:
        text = format_results(results, args.fmt, timeunit)
        with output_stream(args.output) as out:
            out.write(text)
    wait_for_cache_writes()
    return skips.status()
