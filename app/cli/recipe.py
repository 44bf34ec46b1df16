"""``main.py recipe NAME --input DIR|FILES...``: multi-report analysis (spec §5).

Runs a recipe of :mod:`analysis.recipes` over every report serially, in worker processes or
on Dask, writes its tables (Parquet + CSV), plots (PNG), ``summary.txt`` and ``recipe.json``
into the output folder, prints the summary, and lists the reports that were skipped. A text
progress bar over reports updates in place on stderr.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import TextIO

from analysis.errors import AnalysisError
from analysis.recipes import (
    MODES,
    RecipeOptions,
    is_recipe_output,
    recipe_names,
    run_recipe,
    write_output,
)

__all__ = ["ProgressBar", "add_parser", "run"]

_BAR_WIDTH = 30


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "recipe",
        help="multi-report analysis (cuda_gpu_kern_sum, nvtx_sum, gpu_gaps, diff, ...)",
        description="Run a recipe over many reports and write its tables, plots and summary.",
    )
    parser.add_argument(
        "name", choices=recipe_names(), metavar="NAME", help=", ".join(recipe_names())
    )
    parser.add_argument(
        "--input", nargs="+", required=True, metavar="PATH", help="report files or folders"
    )
    parser.add_argument("--output", metavar="DIR", help="output folder (default: ./NAME-N)")
    parser.add_argument(
        "--force-overwrite", action="store_true", help="replace an existing recipe output folder"
    )
    parser.add_argument("--mode", choices=MODES, default="processes", help="default: processes")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="dask: existing scheduler address")
    where.add_argument("--scheduler-file", metavar="FILE", help="dask: scheduler file")
    parser.add_argument(
        "--workers", type=int, metavar="N", help="worker processes (default: cores)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the columnar cache")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    group = parser.add_argument_group("recipe options")
    group.add_argument(
        "--name", dest="kernel_name", metavar="KERNEL", help="pace: kernel short name"
    )
    group.add_argument("--gap", type=float, default=500.0, metavar="MS", help="gpu_gaps: min gap")
    group.add_argument("--threshold", type=float, default=50.0, metavar="PCT", help="gpu_time_util")
    group.add_argument("--chunks", type=int, default=30, metavar="N", help="gpu_time_util: 1-1000")
    group.add_argument("--bins-per-decade", type=int, default=10, metavar="N", help="histogram")
    group.add_argument("--tolerance", type=float, default=1.0, metavar="PCT", help="diff")


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
        name = name if len(name) <= 40 else "…" + name[-39:]
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {elapsed:5.1f} s  {name:40s}")
        self.stream.flush()

    def close(self) -> None:
        if self.total:
            self.stream.write("\n")
            self.stream.flush()


def _output_folder(args: argparse.Namespace) -> Path:
    if args.output is None:
        n = 1
        while Path(f"{args.name}-{n}").exists():
            n += 1
        return Path(f"{args.name}-{n}")
    folder = Path(args.output)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        if not args.force_overwrite:
            raise AnalysisError(f"{folder} exists and is not empty; pass --force-overwrite")
        if not is_recipe_output(folder):
            raise AnalysisError(f"{folder} is not a recipe output folder; refusing to replace it")
    return folder


def run(args: argparse.Namespace) -> int:
    folder = _output_folder(args)
    options = RecipeOptions(
        use_cache=not args.no_cache,
        kernel_name=args.kernel_name,
        gap_ms=args.gap,
        threshold_pct=args.threshold,
        chunks=args.chunks,
        bins_per_decade=args.bins_per_decade,
        tolerance_pct=args.tolerance,
    )
    bar = None if args.quiet else ProgressBar(sys.stderr, args.name)
    try:
        result = run_recipe(
            args.name,
            args.input,
            options,
            mode=args.mode,
            workers=args.workers,
            scheduler=args.scheduler,
            scheduler_file=args.scheduler_file,
            progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()
    if folder.exists() and is_recipe_output(folder):
        shutil.rmtree(folder)
    write_output(result.output, folder, result)
    out = sys.stdout
    out.write(result.output.summary.rstrip() + "\n")
    out.write(
        f"{len(result.inputs)} report(s), mode {result.mode}, {result.wall_s:.1f} s; "
        f"output in {folder}\n"
    )
    for name in result.no_data:
        sys.stderr.write(f"strata: no {args.name} data in {name}\n")
    for failure in result.failures:
        sys.stderr.write(f"strata: skipped {failure.file}: {failure.reason}\n")
    return 0
