"""``main.py analyze REPORT... [-r RULE[:opt=v...]] [-f FORMAT] [--filter-time|--filter-nvtx]``.

The ``nsys analyze`` expert rules (see :mod:`analysis.rules`): for each report, each rule's
findings under a ``Processing [<report>] with [<rule>.py]...`` line, as nsys 2023.4 prints
them, in its formats (column, table, csv, tsv, json, hdoc, htable).
"""

from __future__ import annotations

import argparse

from analysis.errors import AnalysisError
from analysis.filterspec import parse_filter_time
from analysis.rules import (
    DEFAULT_RULES,
    RULE_FORMATS,
    RULE_NAMES,
    format_rule_results,
    parse_rule_spec,
    run_rule,
)
from analysis.stats.text import parse_timeunit
from app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_each,
    output_stream,
    report_opener,
)

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "analyze",
        help="nsys-analyze-compatible expert rules",
        description="Run nsys-analyze-compatible expert rules. Rules: " + ", ".join(RULE_NAMES),
    )
    add_report_args(parser)
    parser.add_argument(
        "-r",
        "--rule",
        dest="rules",
        action="append",
        metavar="NAME[:OPT=V...][,NAME...]",
        help="rules to run, repeatable, options after colons (e.g. gpu_gaps:gap=1); "
        "default: all seven, in nsys's order",
    )
    parser.add_argument(
        "-f", "--format", choices=RULE_FORMATS, default="column", dest="fmt", help="nsys's formats"
    )
    parser.add_argument("--timeunit", default="nsec", help="nsec (default), usec, msec, seconds")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE ('-': stdout)")
    parser.add_argument(
        "--filter-time",
        metavar="[START]/[END]",
        help="only events overlapping this range (ns, or with units: 1s2ms, 5us...)",
    )
    parser.add_argument(
        "--filter-nvtx",
        metavar="RANGE[@DOMAIN][/INDEX]",
        help="only events overlapping this NVTX range (the first, or the INDEX-th)",
    )


def _specs(args: argparse.Namespace) -> list[str]:
    """The rule specs asked for, each with the filter's options first (as nsys adds them)."""
    raw = args.rules or [",".join(DEFAULT_RULES)]
    specs = [s.strip() for group in raw for s in group.split(",") if s.strip()]
    if not specs:
        raise AnalysisError(f"no rule named in -r {','.join(raw)!r}; e.g. -r gpu_gaps")
    prefix = ""
    if args.filter_nvtx:
        prefix = f"nvtx={args.filter_nvtx}"
    elif args.filter_time:
        start, end = parse_filter_time(args.filter_time)
        prefix = f"start={start}:end={end}"
    if prefix:
        specs = [_with_prefix(spec, prefix) for spec in specs]
    for spec in specs:
        parse_rule_spec(spec)  # a bad name or option fails before any report is opened
    return specs


def _with_prefix(spec: str, prefix: str) -> str:
    name, colon, rest = spec.partition(":")
    return f"{name}:{prefix}{colon}{rest}"


def run(args: argparse.Namespace) -> int:
    specs = _specs(args)
    timeunit = parse_timeunit(args.timeunit)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)
    opener = report_opener(not args.no_cache, LoadBar.for_args(args))
    results = {}
    for path, report in open_each(paths, opener, skips):
        name = report.name if report.name not in results else str(path)
        results[name] = [run_rule(report, spec) for spec in specs]
    if results:
        text = format_rule_results(results, args.fmt, timeunit, args.quiet)
        with output_stream(args.output) as out:
            out.write(text)
    return skips.status()
