"""``main.py calltree REPORT...``: the call tree of the CPU samples, for scripts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from strata.analysis import Report
from strata.analysis.calltree import call_tree, merge_stacks, sample_stacks, selected_samples
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_frame, escape_text
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    expand_reports,
    open_each,
    report_opener,
)
from strata.app.cli.render import parse_range

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "calltree", help="the call tree of the CPU samples (top-down or bottom-up)"
    )
    add_report_args(parser)
    parser.add_argument(
        "--range",
        help="samples in START:END only, each with its unit (600ms:1.9s; the report's own time)",
    )
    parser.add_argument(
        "--thread", type=int, action="append", default=[], metavar="TID",
        help="samples of this thread only (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--bottom-up", action="store_true", help="roots are where samples stopped; callers below"
    )
    parser.add_argument("-f", "--format", choices=("text", "csv", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    window = parse_range(args.range, "calltree") if args.range else (None, None)
    if any(t < 0 for t in args.thread):
        raise AnalysisError("--thread takes a thread id (TID), not a negative number")
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    open_one = report_opener(not args.no_cache, LoadBar.for_args(args))

    def stacks(path: Path):
        report: Report = open_one(path)
        rows = selected_samples(report, (), 0, window[0], window[1], args.thread)
        return sample_stacks(report).take(rows)

    parts = [own for _path, own in open_each(paths, stacks, skips)]
    skips.done = len(parts)
    if not parts:
        return skips.status()
    tree = call_tree(merge_stacks(parts), args.bottom_up)
    frame = tree.to_frame()
    if args.format == "json":
        records = frame.to_dict(orient="records")
        json.dump({"samples": tree.samples, "bottom_up": tree.bottom_up, "nodes": records},
                  sys.stdout, indent=1)  # fmt: skip
        sys.stdout.write("\n")
    elif args.format == "csv":
        escape_frame(frame).to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(_text(frame, tree.samples))
    return skips.status()


def _text(frame, samples: int) -> str:
    lines = [f"{samples:,} samples", f"{'total':>9} {'self':>9} {'%':>6}  function  [module]"]
    for row in frame.itertuples(index=False):
        indent = "  " * int(row.level)
        module = Path(str(row.module)).name
        lines.append(
            f"{int(row.total):>9,} {int(row.self):>9,} {row.total_pct:>6.1f}  "
            f"{indent}{escape_text(str(row.symbol))}  [{escape_text(module)}]"
        )
    return "\n".join(lines) + "\n"
