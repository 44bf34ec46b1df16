"""``main.py recipe NAME --input DIR|FILES...``: multi-report analysis (spec §5).

Runs a recipe of :mod:`analysis.recipes` over every report serially, in worker processes or
on Dask, writes its tables (Parquet + CSV), plots (PNG), a Jupyter notebook, ``summary.txt``
and ``recipe.json`` into the output folder, prints the summary, and lists the reports that
were skipped. On a terminal, a text progress bar over reports updates in place on stderr.

nsys's spellings work as they are: ``--mode none|concurrent|dask-futures``, ``--output``
with ``%q{ENV}``, ``%h``, ``%p``, ``%n`` and ``%%`` (:mod:`analysis.recipes.output_name`),
``--csv``, ``--rows``, ``--nvtx``, ``--base``, ``--mangled``, and nsys's environment
variables of its modes (``NSYS_CONCURRENT_MAX_WORKERS``; ``NSYS_DASK_ADDRESS``,
``NSYS_DASK_SCHEDULER_FILE``, ``NSYS_DASK_N_WORKERS``), which the options override.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from strata.analysis.cache import cache_root
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.outputs import STDOUT, check_folder_target, check_output
from strata.analysis.recipes import (
    MODE_ALIASES,
    MODES,
    RecipeOptions,
    get_recipe,
    mode_name,
    recipe_names,
    run_recipe,
    write_output,
)
from strata.analysis.recipes.output import check_replaceable
from strata.analysis.recipes.output_name import expand_output_name
from strata.analysis.recipes.runner import (
    NoReportError,
    RecipeRun,
    check_numbers,
    check_taken,
    input_paths,
)
from strata.analysis.timefmt import pluralize
from strata.app.cli.common import Skips, draws_progress

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
        help="output folder (default: ./NAME-N); never an input, inside one or around one. "
        "As in nsys: %%q{VAR} is the environment variable VAR, %%h the host name, %%p the "
        "process id, %%n the smallest positive number that makes a new name, %%%% a %%",
    )
    parser.add_argument(
        "--force-overwrite",
        action="store_true",
        help="replace an existing output folder, only if it is a recipe output Strata wrote",
    )
    parser.add_argument(
        "--mode",
        choices=[*MODE_ALIASES, *MODES],
        default="concurrent",
        metavar="MODE",
        help="none (serial: in this process), concurrent (processes: a local process pool; "
        "the default) or dask-futures (dask: a Dask cluster); nsys's names, or Strata's",
    )
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
    group.add_argument(
        "--nvtx",
        metavar="RANGE[@DOMAIN][/INDEX]",
        help="rule tables, gpu_gaps, gpu_time_util, nvtx_gpu_proj_trace: only what overlaps "
        "this NVTX range on its thread (push/pop) or process (start/end)",
    )
    group.add_argument(
        "--rows",
        type=int,
        default=-1,
        metavar="N",
        help="rule tables, gpu_gaps, gpu_time_util: at most N rows per report (default: all)",
    )
    group.add_argument(
        "--base", action="store_true", help="cuda_gpu_kern_sum: kernels by their base name"
    )
    group.add_argument(
        "--mangled", action="store_true", help="cuda_gpu_kern_sum: kernels by their mangled name"
    )
    group.add_argument(
        "--csv",
        action="store_true",
        help="accepted for nsys's scripts: every table is written as CSV beside its Parquet",
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
        nvtx=args.nvtx,
        rows=args.rows,
        base=args.base,
        mangled=args.mangled,
        csv=args.csv,
    )
    check_numbers(options)
    recipe = get_recipe(args.name)
    check_taken(recipe, options)
    recipe.check_options(options)
    if args.workers is not None and args.workers < 1:
        raise AnalysisError(f"--workers must be 1 or more, not {args.workers}")
    return options


#: nsys's environment variables of its modes (``Context.get_mode_argument_dict``) that a
#: Strata run honours: variable -> (mode, the option it stands for).
_MODE_ENVIRONMENT = {
    "NSYS_CONCURRENT_MAX_WORKERS": ("processes", "workers"),
    "NSYS_DASK_N_WORKERS": ("dask", "workers"),
    "NSYS_DASK_ADDRESS": ("dask", "scheduler"),
    "NSYS_DASK_SCHEDULER_FILE": ("dask", "scheduler_file"),
}


def _mode_settings(args: argparse.Namespace) -> dict[str, object]:
    """``mode``, ``workers``, ``scheduler``, ``scheduler_file`` of the run: the options, else
    nsys's environment variables of that mode (``NSYS_CONCURRENT_MAX_WORKERS=4``)."""
    mode = mode_name(args.mode)
    settings: dict[str, object] = {
        "mode": mode,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "scheduler_file": args.scheduler_file,
    }
    given = args.scheduler is not None or args.scheduler_file is not None
    for variable, (wanted, key) in _MODE_ENVIRONMENT.items():
        value = os.environ.get(variable)
        if value is None or wanted != mode or settings[key] is not None:
            continue
        if key in ("scheduler", "scheduler_file") and given:
            continue
        if key == "workers":
            try:
                settings[key] = int(value)
            except ValueError:
                raise AnalysisError(f"{variable}={value!r} is not a number of workers") from None
            if settings[key] < 1:
                raise AnalysisError(f"{variable} must be 1 or more, not {value}")
        else:
            settings[key] = value
            given = True
    return settings


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
        name, warnings = expand_output_name(args.output)
        if not args.quiet:
            for line in warnings:  # nsys's words; nsys goes on with the name too
                sys.stderr.write(f"WARNING: {escape_text(line)}\n")
        folder = Path(name)
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
        return run_recipe(args.name, args.input, options, progress=bar, **_mode_settings(args))
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
