"""Run a recipe over many reports: serially, in a process pool, or on a Dask cluster.

The same recipe code runs in every mode (spec: nsys-sqlite.md §5.2): each report is mapped
where it lies — only paths and the options travel to a worker, the report is loaded there
and only the small partial result travels back — and the partials are reduced here, in rank
order, so every mode gives identical output. A report that fails to load (any
:class:`~analysis.errors.StrataError`) is recorded with its name and one-line reason and
skipped; the run still finishes.

Modes (nsys's names first; Strata's own stay as aliases, :data:`MODE_ALIASES`):

``none`` (``serial``)
    ``map`` in this process, one report after the other (nsys's ``ContextNone``).
``concurrent`` (``processes``)
    :class:`concurrent.futures.ProcessPoolExecutor` with ``workers`` processes (default:
    the number of cores), forked from this process when it runs no other thread (the CLI),
    else started by ``forkserver`` (``spawn`` where that is missing) so that a caller with
    threads (the GUI) is safe (nsys's ``ContextConcurrent``: a ``ProcessPoolExecutor``).
``dask-futures`` (``dask``)
    :mod:`dask.distributed`: a ``LocalCluster`` of ``workers`` single-threaded worker
    processes by default (see :mod:`analysis.recipes._cluster` for how they start), or an
    existing scheduler by address or scheduler file (nsys's ``ContextDaskFutures``: a
    ``distributed.Client``). Reports must lie on a filesystem the workers see; workers must
    be able to import ``analysis``.

Pool and Dask tasks carry a few reports each (:mod:`analysis.recipes._tasks`), and a worker
sharing the machine's cores reads SQLite on ``cores / workers`` threads instead of one per
core. The inputs are expanded by :mod:`analysis.recipes._inputs`, the Dask mode lives in
:mod:`analysis.recipes._dask`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from strata.analysis._sqlite import usable_cores
from strata.analysis.errors import AnalysisError
from strata.analysis.progress import ItemProgress
from strata.analysis.recipes._dask import map_dask
from strata.analysis.recipes._inputs import ReportFailure, expand_inputs, file_labels, input_paths
from strata.analysis.recipes._procs import pool_context
from strata.analysis.recipes._tasks import MapResult, died, map_report, map_reports, report_batches
from strata.analysis.recipes.base import (
    NSYS_OPTIONS,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    get_recipe,
)

__all__ = [
    "MODES",
    "MODE_ALIASES",
    "MapResult",
    "NoReportError",
    "RecipeRun",
    "ReportFailure",
    "check_numbers",
    "check_taken",
    "file_labels",
    "input_paths",
    "map_report",
    "map_reports",
    "mode_name",
    "run_recipe",
]

#: The modes, by Strata's own names (what a run records in its manifest and summary).
MODES = ("serial", "processes", "dask")
#: nsys's names of the modes (``nsys recipe --mode``, its ``recipe.Mode``) -> Strata's.
MODE_ALIASES = {"none": "serial", "concurrent": "processes", "dask-futures": "dask"}


def mode_name(mode: str) -> str:
    """Return Strata's name of ``mode``, given by its own name or by nsys's.

    Raises
    ------
    AnalysisError
        Neither an nsys nor a Strata mode name.
    """
    if mode in MODES:
        return mode
    if mode in MODE_ALIASES:
        return MODE_ALIASES[mode]
    names = ", ".join([*MODE_ALIASES, *MODES])
    raise AnalysisError(f"unknown mode {mode!r}; choose one of: {names}")


class NoReportError(AnalysisError):
    """Nothing to output, and inputs were skipped: none gave data, or too few for the recipe.

    ``failures`` lists the inputs that failed, each with its one-line reason, so that a
    caller can name every one of them.
    """

    def __init__(self, message: str, failures: Sequence[ReportFailure]) -> None:
        super().__init__(message)
        self.failures = tuple(failures)


@dataclass
class RecipeRun:
    """The result of :func:`run_recipe`.

    Attributes
    ----------
    output
        The reduced tables, plots and summary.
    failures
        Inputs that were skipped, with the reason: missing paths, folders without reports,
        reports that failed to load.
    no_data
        Labels of reports that loaded but had nothing for this recipe.
    mode
        The mode that ran (``serial`` when a pool would have had one report).
    inputs
        Every report path, in rank order.
    options
        The recipe options used.
    started_utc, ended_utc
        ISO 8601 times of the run.
    wall_s
        Seconds from the first map to the end of the reduce.
    """

    output: RecipeOutput
    failures: list[ReportFailure]
    no_data: list[str]
    mode: str
    inputs: list[Path]
    options: RecipeOptions
    started_utc: str = ""
    ended_utc: str = ""
    wall_s: float = 0.0
    workers: int = 1


def check_numbers(options: RecipeOptions) -> None:
    """Refuse options no recipe can run with: NaN, infinite or negative amounts.

    Raises
    ------
    AnalysisError
        Named by the command line option that set it.
    """
    amounts = {
        "--gap": options.gap_ms,
        "--threshold": options.threshold_pct,
        "--tolerance": options.tolerance_pct,
    }
    for option, value in amounts.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise AnalysisError(f"{option} must be a finite number >= 0, not {value}")
    if options.threshold_pct > 100:
        raise AnalysisError(f"--threshold is a percentage (0-100), not {options.threshold_pct}")
    if not isinstance(options.bins, int) or options.bins < 1:
        raise AnalysisError(f"--bins must be 1 or more, not {options.bins}")
    if (
        options.start_ns is not None
        and options.end_ns is not None
        and options.start_ns > options.end_ns
    ):
        raise AnalysisError(f"--start {options.start_ns} is after --end {options.end_ns}")
    if not isinstance(options.rows, int):
        raise AnalysisError(f"--rows must be an integer, not {options.rows}")
    if options.nvtx is not None and not options.nvtx.strip():
        raise AnalysisError("--nvtx: the NVTX range name is empty")


def check_taken(recipe: Recipe, options: RecipeOptions) -> None:
    """Refuse nsys's options that ``recipe`` does not take (``--rows`` for ``nvtx_sum``),
    as nsys's recipe refuses an option it does not know.

    Raises
    ------
    AnalysisError
        Naming the option and the recipe.
    """
    defaults = RecipeOptions()
    for field, option in NSYS_OPTIONS.items():
        if field not in recipe.options_taken and getattr(options, field) != getattr(
            defaults, field
        ):
            taken = sorted(NSYS_OPTIONS[f] for f in recipe.options_taken)
            also = f" (it takes {', '.join(taken)})" if taken else ""
            raise AnalysisError(f"recipe {recipe.name} does not take {option}{also}")


def run_recipe(
    name: str,
    inputs: Iterable[str | Path],
    options: RecipeOptions | None = None,
    mode: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    scheduler_file: str | Path | None = None,
    progress: ItemProgress | None = None,
) -> RecipeRun:
    """Map a recipe over every report of ``inputs`` and reduce the partials.

    Parameters
    ----------
    name
        A registered recipe (see :func:`analysis.recipes.recipe_names`).
    inputs
        Report files and folders (a folder means every report in it); for ``diff``, two
        reports or recipe output folders.
    options
        Recipe options; defaults when ``None``.
    mode
        ``serial``, ``processes`` or ``dask``, or by nsys's names ``none``, ``concurrent``
        or ``dask-futures`` (:data:`MODE_ALIASES`).
    workers
        Worker processes for ``processes`` and a new Dask ``LocalCluster``; default: cores.
    scheduler, scheduler_file
        ``dask`` only: connect to this scheduler instead of starting a LocalCluster.
    progress
        Called as ``progress(done, total, label)`` after each report.

    Returns
    -------
    RecipeRun

    Raises
    ------
    AnalysisError
        Unknown recipe or mode, bad options.
    NoReportError
        No report had data (an input that does not exist, a folder without reports and a
        report that fails to load are each a failure; the others still run).
    """
    recipe = get_recipe(name)
    options = options or RecipeOptions()
    check_numbers(options)
    check_taken(recipe, options)
    recipe.check_options(options)
    mode = mode_name(mode)
    if workers is not None and workers < 1:
        raise AnalysisError(f"--workers must be 1 or more, not {workers}")
    if mode != "dask" and (scheduler is not None or scheduler_file is not None):
        raise AnalysisError("--scheduler and --scheduler-file need --mode dask-futures (dask)")
    paths, missing = expand_inputs(recipe.takes_reports, inputs)
    recipe.check_inputs(paths)
    if not paths:
        if missing:
            raise NoReportError(_nothing_message(name, missing, []), missing)
        raise AnalysisError(f"recipe {name!r} needs at least one input report")
    labels = file_labels(paths)
    workers = max(1, min(workers or os.cpu_count() or 1, len(paths)))
    if mode == "processes" and len(paths) <= 1:
        mode = "serial"  # a pool for one report only adds its start-up time
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    tick = _ticker(labels, progress)
    if mode == "serial":
        results = _map_serial(name, paths, options, tick)
    elif mode == "processes":
        results = _map_processes(name, paths, options, workers, tick)
    else:
        results = map_dask(name, paths, options, workers, scheduler, scheduler_file, tick)
    failures, no_data, partials = _sort_results(labels, paths, results)
    failures = missing + failures
    if not partials:
        raise NoReportError(_nothing_message(name, failures, no_data), failures)
    try:
        output = recipe.reduce(partials, options)
    except AnalysisError as exc:
        if not failures:
            raise
        # e.g. diff with one side unreadable: the reason of each skipped input goes along.
        raise NoReportError(str(exc), failures) from exc
    return RecipeRun(
        output=output,
        failures=failures,
        no_data=no_data,
        mode=mode,
        inputs=paths,
        options=options,
        started_utc=started.isoformat(timespec="seconds"),
        ended_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        wall_s=time.perf_counter() - t0,
        workers=1 if mode == "serial" else workers,
    )


def _nothing_message(name: str, failures: list[ReportFailure], no_data: list[str]) -> str:
    parts = []
    if failures:
        first = failures[0]
        more = f" and {len(failures) - 1} more" if len(failures) > 1 else ""
        parts.append(f"{len(failures)} failed to load ({first.file}: {first.reason}{more})")
    if no_data:
        parts.append(f"{len(no_data)} had no data for it")
    return f"no report gave data for recipe {name!r}: " + "; ".join(parts)


def _ticker(labels: Sequence[str], progress: ItemProgress | None) -> Callable[[int], None]:
    done = 0

    def tick(index: int) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(labels), labels[index])

    return tick


def _sort_results(
    labels: Sequence[str], paths: Sequence[Path], results: Sequence[MapResult]
) -> tuple[list[ReportFailure], list[str], list[FilePartial]]:
    """Split map results into (failures, labels without data, partials), in rank order."""
    failures, no_data, partials = [], [], []
    for label, path, result in zip(labels, paths, results, strict=True):
        if result.error is not None:
            failures.append(ReportFailure(label, path, result.error))
        elif result.partial is None:
            no_data.append(label)
        else:
            partials.append(FilePartial(label, path, result.partial))
    return failures, no_data, partials


def _map_serial(
    name: str, paths: Sequence[Path], options: RecipeOptions, tick: Callable[[int], None]
) -> list[MapResult]:
    results = []
    for index, path in enumerate(paths):
        results.append(map_report(name, path, options))
        tick(index)
    return results


def _map_processes(
    name: str,
    paths: Sequence[Path],
    options: RecipeOptions,
    workers: int,
    tick: Callable[[int], None],
) -> list[MapResult]:
    results: list[MapResult | None] = [None] * len(paths)
    threads = max(1, usable_cores() // workers)
    with ProcessPoolExecutor(workers, mp_context=pool_context()) as pool:
        try:
            futures = {}
            for batch in report_batches(paths, workers):
                # A worker may die before the last task is queued: submit then raises the
                # same BrokenProcessPool as a result would.
                task = pool.submit(map_reports, name, [paths[i] for i in batch], options, threads)
                futures[task] = batch
            for future in as_completed(futures):
                for index, result in zip(futures[future], future.result(), strict=True):
                    results[index] = result
                    tick(index)
        except BrokenProcessPool as exc:
            pool.shutdown(wait=False, cancel_futures=True)
            # Every queued future breaks with the pool: which report did it is unknown.
            raise AnalysisError(died(paths, None, "a worker process")) from exc
        except BaseException:
            # A bug (not a bad report) or Ctrl-C: do not wait for the reports still queued.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return results  # type: ignore[return-value]
