"""``main.py recipe NAME --input DIR|FILES...``: multi-report analysis (spec §5).

Runs a recipe of :mod:`analysis.recipes` over every report serially, in worker processes or
on Dask, writes its tables (Parquet + CSV), plots (PNG), ``summary.txt`` and ``recipe.json``
into the output folder, prints the summary, and lists the reports that were skipped. On a
terminal, a text progress bar over reports updates in place on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from analysis.cache import cache_root
from analysis.errors import AnalysisError
from analysis.escape import escape_text
from analysis.outputs import STDOUT, check_folder_target, check_output
from analysis.recipes import (
    MODES,
    RecipeOptions,
    get_recipe,
    recipe_names,
    run_recipe,
    write_output,
)
from analysis.recipes.output import check_replaceable
from analysis.recipes.runner import NoReportError, RecipeRun, check_numbers, input_paths
from analysis.timefmt import pluralize
from app.cli.common import Skips, draws_progress

__all__ = ["ProgressBar", "add_parser", "run"]

_BAR_WIDTH = 30


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "recipe",
        help="multi-report analysis (cuda_gpu_kern_sum, nvtx_sum, gpu_gaps, diff, ...)",
        description="Run a recipe over many reports and write its tables, plots and summary. "
        "A report that cannot be read is skipped, named on stderr and in the output's "
        "recipe.json (Failures) and summary.txt.",
    )
    parser.add_argument(
        "name", choices=recipe_names(), metavar="NAME", help=", ".join(recipe_names())
    )
    parser.add_argument(
        "--input", nargs="+", required=True, metavar="PATH", help="report files or folders"
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        help="output folder (default: ./NAME-N); never an input, inside one or around one",
    )
    parser.add_argument(
        "--force-overwrite",
        action="store_true",
        help="replace an existing output folder, only if it is a recipe output Strata wrote",
    )
    parser.add_argument("--mode", choices=MODES, default="processes", help="default: processes")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="dask: existing scheduler address")
    where.add_argument("--scheduler-file", metavar="FILE", help="dask: scheduler file")
    parser.add_argument(
        "--workers", type=int, metavar="N", help="worker processes, 1 or more (default: cores)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the columnar cache")
    group = parser.add_argument_group("recipe options")
    group.add_argument(
        "--name",
        dest="kernel_name",
        metavar="NAME",
        help="pace: kernel short name (cuda_gpu_kern_pace) or NVTX range (nvtx_*pace)",
    )
    group.add_argument("--gap", type=float, default=500.0, metavar="MS", help="gpu_gaps: min gap")
    group.add_argument(
        "--threshold", type=float, default=50.0, metavar="PCT", help="gpu_time_util: 0-100"
    )
    group.add_argument("--chunks", type=int, default=30, metavar="N", help="gpu_time_util: 1-1000")
    group.add_argument(
        "--bins-per-decade", type=int, default=10, metavar="N", help="histogram: 1-1000"
    )
    group.add_argument("--tolerance", type=float, default=1.0, metavar="PCT", help="diff: >= 0")
    group.add_argument(
        "--start", type=int, metavar="NS", help="pace, maps, MPI/NCCL: events ending at or after"
    )
    group.add_argument(
        "--end", type=int, metavar="NS", help="pace, maps, MPI/NCCL: events starting at or before"
    )
    group.add_argument("--bins", type=int, default=30, metavar="N", help="*_util_map: time bins")
    group.add_argument(
        "--cumulative",
        action="store_true",
        help="cuda/nccl_gpu_time_util_map: add up every kernel's share (may pass 100%%)",
    )


class ProgressBar:
    """A one-line text progress bar over reports that redraws in place (``\\r``)."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream = stream
        self.label = label
        self.t0 = time.perf_counter()
        self.total = 0

    def __call__(self, done: int, total: int, name: str) -> None:
        self.total = total
        filled = round(_BAR_WIDTH * done / max(total, 1))
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        elapsed = time.perf_counter() - self.t0
        name = escape_text(name)
        name = name if len(name) <= 40 else "…" + name[-39:]
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {elapsed:5.1f} s  {name:40s}")
        self.stream.flush()

    def close(self) -> None:
        if self.total:
            self.stream.write("\n")
            self.stream.flush()


def _options(args: argparse.Namespace) -> RecipeOptions:
    """The recipe options, checked before anything is read or written."""
    options = RecipeOptions(
        use_cache=not args.no_cache,
        kernel_name=args.kernel_name,
        gap_ms=args.gap,
        threshold_pct=args.threshold,
        chunks=args.chunks,
        bins_per_decade=args.bins_per_decade,
        tolerance_pct=args.tolerance,
        start_ns=args.start,
        end_ns=args.end,
        bins=args.bins,
        cumulative=args.cumulative,
    )
    check_numbers(options)
    get_recipe(args.name).check_options(options)
    if args.workers is not None and args.workers < 1:
        raise AnalysisError(f"--workers must be 1 or more, not {args.workers}")
    return options


def _output_folder(args: argparse.Namespace) -> Path:
    """The output folder, refused before the run if it overlaps an input or may not be used."""
    if args.output == STDOUT:
        raise AnalysisError("--output -: a recipe writes a folder (tables, plots), not a stream")
    if args.output is None:
        n = 1
        while Path(f"{args.name}-{n}").exists():
            n += 1
        folder = Path(f"{args.name}-{n}")
    else:
        folder = Path(args.output)
    option = "--output" if args.output is not None else "the default output (give --output)"
    check_output(folder, input_paths(args.input), option, cache=cache_root())
    check_folder_target(folder, option)
    if folder.is_dir() and any(folder.iterdir()):
        if not args.force_overwrite:
            raise AnalysisError(
                f"{escape_text(str(folder))} exists and is not empty; pass --force-overwrite"
            )
        check_replaceable(folder)
    return folder


def _run(args: argparse.Namespace, options: RecipeOptions, skips: Skips) -> RecipeRun:
    bar = ProgressBar(sys.stderr, args.name) if draws_progress(args) else None
    try:
        return run_recipe(
            args.name,
            args.input,
            options,
            mode=args.mode,
            workers=args.workers,
            scheduler=args.scheduler,
            scheduler_file=args.scheduler_file,
            progress=bar,
        )
    except NoReportError as exc:
        if bar is not None:
            bar.close()
            bar = None
        for failure in exc.failures:
            skips.skip(failure.path, failure.reason)
        raise
    finally:
        if bar is not None:
            bar.close()


def run(args: argparse.Namespace) -> int:
    options = _options(args)
    folder = _output_folder(args)
    skips = Skips()
    result = _run(args, options, skips)
    write_output(result.output, folder, result, replace=args.force_overwrite)
    out = sys.stdout
    out.write("\n".join(escape_text(line) for line in result.output.summary.rstrip().split("\n")))
    out.write(
        f"\n{pluralize(len(result.inputs), 'report')}, mode {result.mode}, {result.wall_s:.1f} s; "
        f"output in {escape_text(str(folder))}\n"
    )
    out.flush()
    if not args.quiet:
        for name in result.no_data:
            sys.stderr.write(f"strata: no {args.name} data in {escape_text(name)}\n")
    for failure in result.failures:
        skips.skip(failure.path, failure.reason)
    skips.done += 1  # the recipe ran: 1 if some inputs were skipped, else 0
    return skips.status()
