"""``main.py outliers REPORT... [--top N] [--threshold Z] [-f column|csv|json] [-o FILE]``.

Prints the instances whose duration lies far from their name's typical one (robust z-score
over every instance in every report, see :mod:`analysis.outliers`), worst first, then the
reports whose median for a name differs most from the other reports' (e.g. a straggler
rank). Times are in ns as the reports store them.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.escape import escape_frame, escape_texts
from analysis.outliers import DEFAULT_THRESHOLD, OUTLIER_KINDS
from analysis.reportset import ReportSet
from analysis.xp import BACKENDS, get_xp
from app.cli.common import (
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
_NAME_WIDTH = 100  # column format truncates names like nsys stats does


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


def _column_table(frame: pd.DataFrame) -> str:
    """Right-aligned numbers, left-aligned text, one header and a dash rule."""
    cells, numeric = {}, {}
    for col in frame.columns:
        values = frame[col]
        numeric[col] = pd.api.types.is_numeric_dtype(values)
        if pd.api.types.is_float_dtype(values):
            digits = 3 if col == "ratio" else 1
            cells[col] = [f"{v:.{digits}f}" for v in values]
        else:
            text = pd.Series(escape_texts(values.astype(str).tolist()), index=values.index)
            if col == "name":
                text = text.where(text.str.len() <= _NAME_WIDTH, text.str[: _NAME_WIDTH - 1] + "…")
            cells[col] = list(text)
    widths = {c: max([len(c), *map(len, cells[c])]) for c in frame.columns}

    def line(values: dict[str, str]) -> str:
        parts = [
            values[c].rjust(widths[c]) if numeric[c] else values[c].ljust(widths[c])
            for c in frame.columns
        ]
        return "  ".join(parts).rstrip()

    rows = [line({c: c for c in frame.columns}), line({c: "-" * widths[c] for c in frame.columns})]
    rows += [line({c: cells[c][i] for c in frame.columns}) for i in range(len(frame))]
    return "\n".join(rows)


def _json_rows(frame: pd.DataFrame) -> list[dict]:
    out = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    for row in out:
        for key, value in row.items():
            if isinstance(value, np.generic):
                row[key] = value.item()
            if isinstance(row[key], float) and not np.isfinite(row[key]):
                row[key] = str(row[key])
    return out


def format_outliers(
    instances: pd.DataFrame, reports: pd.DataFrame, fmt: str, notes: tuple[str, str] = ("", "")
) -> str:
    """Render the two ranked tables in ``fmt`` (column, csv or json); ``notes`` title them."""
    if fmt == "json":
        return json.dumps({"instances": _json_rows(instances), "reports": _json_rows(reports)},
                          indent=1) + "\n"  # fmt: skip
    if fmt == "csv":
        return (
            escape_frame(instances).to_csv(index=False)
            + "\n"
            + escape_frame(reports).to_csv(index=False)
        )
    return (
        f" ** Outlying instances ({notes[0]}):\n\n"
        + (_column_table(instances) if len(instances) else "(none)")
        + f"\n\n ** Reports whose median differs from the others' ({notes[1]}):\n\n"
        + (_column_table(reports) if len(reports) else "(none)")
        + "\n"
    )


def _check_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The kinds asked for; a bad --kinds, --top or --threshold is refused."""
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    bad = [k for k in kinds if k not in OUTLIER_KINDS]
    if bad or not kinds:
        raise AnalysisError(f"unknown kind {bad[0] if bad else '(none)'!r}; "
                            f"choose among {', '.join(OUTLIER_KINDS)}")  # fmt: skip
    if args.top < 1:
        raise AnalysisError(f"--top must be 1 or more, not {args.top}")
    if not math.isfinite(args.threshold) or args.threshold < 0:
        raise AnalysisError(f"--threshold must be a finite number >= 0, not {args.threshold}")
    return kinds


def run(args: argparse.Namespace) -> int:
    kinds = _check_args(args)
    xp = get_xp(args.backend)
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    check_output_file(args.output, args.reports, paths)
    loaded = open_all(paths, not args.no_cache, skips)
    if not loaded:
        return skips.status()
    found = ReportSet(loaded).outliers(threshold=args.threshold, kinds=kinds, xp=xp)
    instances = found.instances[_INSTANCE_OUT].head(args.top)
    reports = found.reports[_REPORT_OUT].head(args.top)
    limit = f"|robust z| > {args.threshold:g}"
    notes = (
        f"{limit}; {len(instances)} of {len(found.instances)} shown",
        f"{limit}; {len(reports)} of {len(found.reports)} shown",
    )
    text = format_outliers(instances, reports, args.fmt, notes)
    with output_stream(args.output) as out:
        out.write(text)
    return skips.status()
