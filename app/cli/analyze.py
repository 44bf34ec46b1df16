"""``main.py analyze REPORT... [-r RULE[:opt=v...]]... [-f FORMAT]... [-o PREFIX]...``.

The ``nsys analyze`` expert rules (see :mod:`analysis.rules`): for each report, each rule's
findings under a ``Processing [<report>] with [<rule>.py]...`` line, as nsys 2023.4 prints
them, in its formats (column, table, csv, tsv, json, hdoc, htable, with their formatter
arguments). ``-r``, ``-f`` and ``-o`` take comma lists and repeat, paired by position as
``stats`` pairs them (:mod:`app.cli.stats_plan`): ``-o PREFIX`` writes
``PREFIX_<rule>.<ext>`` per rule, ``-o .`` beside each report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.analysis.errors import AnalysisError
from strata.analysis.filterspec import parse_filter_time
from strata.analysis.rules import (
    DEFAULT_RULES,
    RULE_FORMATS,
    RULE_NAMES,
    format_rule_results,
    parse_rule_spec,
    run_rule,
)
from strata.analysis.rules.format import rule_file_section
from strata.analysis.stats.text import parse_timeunit
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    check_output_file,
    expand_reports,
    open_each,
    output_stream,
    report_opener,
)
from strata.app.cli.nsys_inputs import add_export_args, add_overwrite_arg, exported_inputs
from strata.app.cli.reports_help import HelpRules
from strata.app.cli.stats_help import HelpFormats
from strata.app.cli.stats_plan import SummaryJob, check_formats, comma_list, output_file, plan

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
        "-f",
        "--format",
        dest="formats",
        action="append",
        metavar="FORMAT[:ARG...][,FORMAT...]",
        help=f"{', '.join(RULE_FORMATS)}, or '.' (column, csv into files), with nsys's "
        "formatter arguments (csv:nohdr...); repeatable, the i-th for the i-th rule",
    )
    parser.add_argument(
        "--timeunit",
        default=None,
        help="nsec (default), usec, msec, seconds; or a prefix of nsys's words (micro...)",
    )
    parser.add_argument(
        "-o",
        "--output",
        dest="outputs",
        action="append",
        metavar="PREFIX",
        help="'-' (stdout, the default), '.' (beside each report) or a prefix: files "
        "PREFIX_<rule>.<ext> as nsys names them; repeatable like -f; never onto an input",
    )
    parser.add_argument(
        "--help-rules",
        nargs="?",
        action=HelpRules,
        metavar="NAME|ALL",
        help="list the rules (or describe one, or ALL) as nsys does, and exit",
    )
    parser.add_argument(
        "--help-formats",
        nargs="?",
        action=HelpFormats,
        metavar="NAME|ALL",
        help="describe the formats (nsys's text) and exit",
    )
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
    add_overwrite_arg(parser)
    parser.allow_dashed_values("-o", "--output")
    add_export_args(parser)


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


def _jobs(args: argparse.Namespace) -> list[SummaryJob]:
    formats = comma_list(args.formats, "-f")
    for fmt in formats:
        if fmt.partition(":")[0] not in (*RULE_FORMATS, "."):
            choices = ", ".join(RULE_FORMATS)
            raise AnalysisError(f"-f: invalid choice '{fmt}' (choose from {choices})")
    check_formats(formats, args.quiet)
    return plan(_specs(args), formats, comma_list(args.outputs, "-o"), quiet=args.quiet)


def run(args: argparse.Namespace) -> int:
    jobs = _jobs(args)
    timeunit = None if args.timeunit is None else parse_timeunit(args.timeunit)
    skips = Skips()
    paths = exported_inputs(expand_reports(args.reports, skips), args, skips, args.quiet)
    targets = {
        (path, i): Path(job.output) if job.whole else output_file(job, path, len(paths) > 1)
        for path in paths
        for i, job in enumerate(jobs)
        if job.output is not None
    }
    for target in targets.values():
        check_output_file(str(target), args.reports, paths)
    opener = report_opener(not args.no_cache, LoadBar.for_args(args))
    results, sources = {}, {}
    for path, report in open_each(paths, opener, skips):
        name = report.name if report.name not in results else str(path)
        results[name] = [run_rule(report, job.spec) for job in jobs]
        sources[name] = path
    if results:
        texts = _texts(results, sources, jobs, targets, timeunit, args)
        for dest, text in texts.items():  # each file replaced once complete, then the console
            if dest is not None:
                with output_stream(dest) as out:
                    out.write(text)
        if None in texts:
            with output_stream(None) as out:
                out.write(texts[None])
    return skips.status()


def _texts(results, sources, jobs, targets, timeunit, args) -> dict[str | None, str]:
    """Destination (None: the console; else a file) -> its text, in printing order."""
    texts: dict[str | None, list[str]] = {}
    for name, rule_results in results.items():
        for i, (job, result) in enumerate(zip(jobs, rule_results, strict=True)):
            if job.output is None or job.whole:
                text = format_rule_results({name: [result]}, job.fmt, timeunit, args.quiet)
                texts.setdefault(job.output, []).append(text)
                continue
            target = targets[(sources[name], i)]
            exists = not args.force_overwrite and (target.exists() or target.is_symlink())
            line, body = rule_file_section(
                name, result, job.fmt, timeunit, str(target), args.quiet, exists
            )
            texts.setdefault(None, []).append(line)
            if body is not None:
                texts[str(target)] = [body]
    if None in texts:
        sys.stdout.flush()
    return {dest: "".join(parts) for dest, parts in texts.items()}
