"""What a process pool's or Dask worker runs for a recipe: a batch of reports mapped, each to
its partial result or the one-line reason it has none; and how reports are cut into batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.analysis._sqlite import limit_read_threads
from strata.analysis.errors import ReportError, StrataError
from strata.analysis.recipes.base import RecipeOptions, get_recipe

__all__ = ["RETRY", "MapResult", "report_batches", "died", "map_report", "map_reports"]


@dataclass(frozen=True)
class MapResult:
    """What a worker sends back for one report: the partial, or why there is none."""

    partial: Any = None
    error: str | None = None


def map_report(recipe_name: str, path: Path, options: RecipeOptions) -> MapResult:
    """Run one recipe's map step on one report (this is what a worker executes).

    A :class:`StrataError` (bad, corrupt, unsupported or unexportable report) becomes a
    :class:`MapResult` with the one-line reason; anything else is a bug and propagates.
    """
    try:
        return MapResult(partial=get_recipe(recipe_name).map(Path(path), options))
    except StrataError as exc:
        reason = exc.reason if isinstance(exc, ReportError) else str(exc)
        return MapResult(error=reason)


def map_reports(
    recipe_name: str,
    paths: Sequence[str | Path],
    options: RecipeOptions,
    read_threads: int | None = None,
) -> list[MapResult]:
    """Map several reports one after the other: one pool or Dask task (:func:`report_batches`).

    ``read_threads`` caps this process's SQLite reader threads, so that workers sharing a
    machine's cores do not each start one reader per core (None: leave the default).
    """
    if read_threads is not None:
        limit_read_threads(read_threads)
    return [map_report(recipe_name, Path(p), options) for p in paths]


#: A task carries reports of at least this many bytes in all (or one larger report), so the
#: fixed cost per task (a round trip to the worker, a result message) stays small next to
#: the work; measured on 64 reports of 12 MB on a LocalCluster of 2 workers, 4 reports per
#: task instead of 1 took 2.1-2.6 s instead of 2.4-3.3 s.
_TASK_BYTES = 48 << 20
#: ... but each worker gets at least this many tasks, so that one slow report at the end
#: does not leave the other workers idle.
_TASKS_PER_WORKER = 4


def report_batches(paths: Sequence[Path], workers: int) -> list[list[int]]:
    """Split report indices, in order, into tasks of about :data:`_TASK_BYTES` each."""
    most = max(1, -(-len(paths) // (workers * _TASKS_PER_WORKER)))
    batches: list[list[int]] = []
    size = 0
    for index, path in enumerate(paths):
        if not batches or len(batches[-1]) >= most or size >= _TASK_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(index)
        try:
            size += path.stat().st_size
        except OSError:
            size += _TASK_BYTES  # unreadable: its own task, it fails fast anyway
    return batches


RETRY = "out of memory? try fewer --workers, or --mode serial"


def died(paths: Sequence[Path], batch: Sequence[int] | None, who: str) -> str:
    """One line on workers that died (killed, out of memory?) while mapping ``batch``."""
    if batch is None:
        return f"{who} died while mapping reports; {RETRY}"
    names = ", ".join(paths[i].name for i in batch[:3]) + (" ..." if len(batch) > 3 else "")
    return f"{who} died while mapping {names}; {RETRY}"
