"""``main.py dlprof REPORT... [--reports R,...] [--key-node NAME] [--iter-start N] ...``.

DLProf-style reports of a deep-learning run (:mod:`analysis.dlprof`): the summary, per-op
(``detailed``), per-kernel, per-launch (``iteration``), per-op-type and per-module-path
(``group_node``) tables and the expert-system advice. ``-f csv`` (default) prints each table
after a ``# name`` line; ``-f json`` prints one object of tables. ``-o DIR`` writes one file
per table (``dlprof_<name>.csv`` or ``.json``) into a new or earlier dlprof folder, never
onto, into or around an input. Times are integer ns as the reports store them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
from pathlib import Path

import pandas as pd

from strata.analysis.cache import cache_root
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.outputs import (
    check_folder_target,
    check_output,
    is_stdout,
    staged_folder,
)
from strata.analysis.stats.format import json_records
from strata.app.cli.common import (
    LoadBar,
    Skips,
    add_report_args,
    expand_reports,
    open_all,
    output_stream,
)

__all__ = ["FORMATS", "add_parser", "format_tables", "run"]

FORMATS = ("csv", "json")
_MARKER = ".strata-dlprof"


def add_parser(sub: argparse._SubParsersAction) -> None:
    from strata.analysis.dlprof.iterations import DEFAULT_KEY_NODES
    from strata.analysis.dlprof.reports import DLPROF_REPORTS

    parser = sub.add_parser(
        "dlprof",
        help="DLProf-style reports: ops, kernels, iterations, Tensor Core use, advice",
        description="Aggregate a deep-learning run as NVIDIA DLProf did: framework ops "
        "(PyTorch emit_nvtx aten:: ranges or DLProf markers; else the innermost NVTX ranges) "
        "with the kernels they launched, grouped by op type and module path, over the "
        "iterations cut at the end of each key node instance.",
    )
    add_report_args(parser)
    parser.add_argument(
        "--reports",
        dest="which",
        default=",".join(DLPROF_REPORTS),
        metavar="R[,R...]",
        help=f"which reports, among {', '.join(DLPROF_REPORTS)} (default: all)",
    )
    parser.add_argument(
        "--key-node",
        metavar="NAME",
        help="NVTX range or op whose instances end the iterations (default: the first "
        f"present of {', '.join(DEFAULT_KEY_NODES)}; none: one iteration)",
    )
    parser.add_argument("--iter-start", type=int, metavar="N", help="first iteration aggregated")
    parser.add_argument("--iter-stop", type=int, metavar="N", help="last iteration aggregated")
    parser.add_argument(
        "--domains",
        metavar="D[,D...]",
        help="NVTX domains whose ranges count ('default' for the unnamed one; default: all)",
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="csv", dest="fmt")
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write one file per report into DIR ('-' or none: stdout); "
        "never onto, into or around an input",
    )


def _csv(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def format_tables(tables: dict[str, pd.DataFrame], fmt: str) -> str:
    """All tables as one text: CSV blocks after ``# name`` lines, or one JSON object."""
    if fmt == "json":
        body = {name: json_records(frame) for name, frame in tables.items()}
        return json.dumps(body, indent=1, ensure_ascii=False) + "\n"
    return "\n".join(f"# {name}\n{_csv(frame)}" for name, frame in tables.items())


def _parse_options(args: argparse.Namespace):
    from strata.analysis.dlprof.reports import DlprofOptions

    names = tuple(n.strip() for n in args.which.split(",") if n.strip())
    if not names:
        raise AnalysisError("dlprof: --reports names no report")
    domains = None
    if args.domains is not None:
        domains = tuple(d.strip() for d in args.domains.split(",") if d.strip())
        if not domains:
            raise AnalysisError("dlprof: --domains names no domain")
    for flag, value in (("--iter-start", args.iter_start), ("--iter-stop", args.iter_stop)):
        if value is not None and value < 0:
            raise AnalysisError(f"dlprof: {flag} must be 0 or more, not {value}")
    options = DlprofOptions(args.key_node or None, args.iter_start, args.iter_stop, domains)
    return names, options


def _may_replace(folder: str):
    def may_replace(existing: Path) -> None:
        if existing.is_dir() and (not any(existing.iterdir()) or (existing / _MARKER).is_file()):
            return
        raise AnalysisError(
            f"{escape_text(os.fspath(folder))} exists and is not an earlier dlprof output; "
            "give a new or empty folder"
        )

    return may_replace


def _write_folder(tables: dict[str, pd.DataFrame], fmt: str, folder: str) -> None:
    with staged_folder(folder, _may_replace(folder)) as tmp:
        for name, frame in tables.items():
            text = _csv(frame) if fmt == "csv" else format_tables({name: frame}, fmt)
            (tmp / f"dlprof_{name}.{fmt}").write_text(text, encoding="utf-8")
        (tmp / _MARKER).write_text("written by strata dlprof\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    from strata.analysis.dlprof.reports import DLPROF_REPORTS, dlprof_reports
    from strata.analysis.reportset import ReportSet

    names, options = _parse_options(args)
    unknown = [n for n in names if n not in DLPROF_REPORTS]
    if unknown:
        raise AnalysisError(
            f"dlprof: unknown report {unknown[0]!r}; choose among {', '.join(DLPROF_REPORTS)}"
        )
    skips = Skips()
    paths = expand_reports(args.reports, skips)
    if not is_stdout(args.output):
        check_output(args.output, [*args.reports, *paths], "-o", cache=cache_root())
        check_folder_target(args.output, "-o")
    loaded = open_all(paths, not args.no_cache, skips, LoadBar.for_args(args))
    if not loaded:
        return skips.status()
    tables = dlprof_reports(ReportSet(loaded), options, names)
    if is_stdout(args.output):
        with output_stream(None) as out:
            out.write(format_tables(tables, args.fmt))
    else:
        _write_folder(tables, args.fmt, args.output)
    return skips.status()
