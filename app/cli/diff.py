"""``main.py diff BEFORE AFTER`` or ``main.py diff --before A... --after B...``: what changed.

Prints, per name (kernel, NVTX range, projected range, CUDA API call), the change in count,
total and median from the *before* reports to the *after* ones, with a bootstrap interval
of the median change, sorted by impact; a change the interval cannot tell from 0, or
smaller than ``--tolerance``, is marked ``noise`` (:mod:`analysis.diff`).
"""

from __future__ import annotations

import argparse
import json

from strata.analysis.diff import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_TOLERANCE_PCT,
    DIFF_KINDS,
    DiffOptions,
    diff_sets,
)
from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import resolve_kinds
from strata.analysis.stats import StatsResult
from strata.analysis.stats.format import json_records
from strata.analysis.stats.text import format_table
from strata.app.cli.common import (
    LoadBar,
    Skips,
    check_output_file,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["FORMATS", "add_parser", "run"]

FORMATS = ("column", "csv", "json")
_DURATIONS = ("Total Delta", "Total Before", "Total After", "Med Before", "Med After")
_UNITS = dict.fromkeys((*_DURATIONS, "Med Delta", "Med Delta Low", "Med Delta High"), "dur")
_DIGITS = {"Med Delta Low": 1, "Med Delta High": 1, "Med Change (%)": 2}


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "diff",
        help="per-name change between two reports or two groups of reports",
        description="Compare BEFORE and AFTER (two reports; or --before/--after groups, "
        "pooled per side) name by name: count, total and median change with a bootstrap "
        "interval, biggest total change first; changes within noise are marked 'noise', "
        "those on a single instance 'slower, few', 'faster, few' or 'too few'.",
    )
    parser.add_argument("pair", nargs="*", metavar="REPORT", help="BEFORE AFTER")
    parser.add_argument("--before", nargs="+", default=[], metavar="REPORT", help="group")
    parser.add_argument("--after", nargs="+", default=[], metavar="REPORT", help="group")
    parser.add_argument("--no-cache", action="store_true", help="bypass the columnar cache")
    parser.add_argument(
        "--kinds", default=",".join(DIFF_KINDS), metavar="KIND[,KIND...]",
        help=f"what to compare (default: {','.join(DIFF_KINDS)})",
    )  # fmt: skip
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE,
                        help=f"interval level (default {DEFAULT_CONFIDENCE})")  # fmt: skip
    parser.add_argument(
        "--tolerance", type=float, default=DEFAULT_TOLERANCE_PCT, metavar="PCT",
        help=f"a median change up to PCT%% is noise (default {DEFAULT_TOLERANCE_PCT:g})",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, metavar="N")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--top", type=int, default=None, metavar="N", help="first N rows")
    parser.add_argument("-f", "--format", choices=FORMATS, default="column", dest="fmt")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE ('-': stdout)")


def _sides(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The before and after arguments; one way of giving them, not both."""
    if args.pair and (args.before or args.after):
        raise AnalysisError("give BEFORE AFTER or --before/--after, not both")
    if args.pair:
        if len(args.pair) != 2:
            raise AnalysisError(f"diff takes two reports (BEFORE AFTER), got {len(args.pair)}")
        return [args.pair[0]], [args.pair[1]]
    if not args.before or not args.after:
        raise AnalysisError("diff needs BEFORE AFTER, or --before REPORT... --after REPORT...")
    return list(args.before), list(args.after)


def _options(args: argparse.Namespace) -> tuple[tuple[str, ...], DiffOptions]:
    kinds = resolve_kinds(args.kinds, DIFF_KINDS)
    if args.top is not None and args.top < 1:
        raise AnalysisError(f"--top must be 1 or more, not {args.top}")
    options = DiffOptions(args.confidence, args.tolerance, args.resamples, args.seed)
    options.check()
    return kinds, options


def format_diff(frame, fmt: str) -> str:
    """Render a :func:`analysis.diff.diff_sets` table in ``fmt`` (column, csv or json)."""
    if fmt == "json":
        return json.dumps(json_records(frame), indent=1) + "\n"
    if fmt == "column":  # a readable number of digits on screen; csv keeps them all
        frame = frame.round(_DIGITS)
    text = format_table(StatsResult(name="diff", title="diff", frame=frame, units=_UNITS), fmt)
    return text + "\n"


def run(args: argparse.Namespace) -> int:
    before_raw, after_raw = _sides(args)
    kinds, options = _options(args)
    skips = Skips()
    sides = []
    for raws in (before_raw, after_raw):
        paths = expand_reports(raws, skips)
        check_output_file(args.output, [*before_raw, *after_raw], paths)
        sides.append(open_all(paths, not args.no_cache, skips, LoadBar.for_args(args)))
    if not sides[0] or not sides[1]:
        side = "before" if not sides[0] else "after"
        raise AnalysisError(f"no {side} report could be opened; nothing to compare")
    frame = diff_sets(sides[0], sides[1], kinds, options)
    if args.top is not None:
        frame = frame.head(args.top)
    with output_stream(args.output) as out:
        out.write(format_diff(frame, args.fmt))
    return skips.status()
