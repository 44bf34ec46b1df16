"""``--mode dask-futures``: a recipe's reports mapped on a Dask cluster, a new
``LocalCluster`` (:mod:`analysis.recipes._cluster`) or an existing scheduler.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from strata.analysis._sqlite import usable_cores
from strata.analysis.errors import AnalysisError
from strata.analysis.recipes._tasks import RETRY, MapResult, died, map_reports, report_batches
from strata.analysis.recipes.base import RecipeOptions

__all__ = ["map_dask"]


def map_dask(
    name: str,
    paths: Sequence[Path],
    options: RecipeOptions,
    workers: int,
    scheduler: str | None,
    scheduler_file: str | Path | None,
    tick: Callable[[int], None],
) -> list[MapResult]:
    try:
        from distributed import Client
    except ImportError as exc:
        raise AnalysisError(
            "--mode dask needs dask.distributed: pip install 'dask[distributed]'"
        ) from exc
    cluster = None
    threads = None  # an existing cluster's workers know their own cores
    if scheduler is not None or scheduler_file is not None:
        client = _connect(Client, scheduler, scheduler_file)
    else:
        from strata.analysis.recipes._cluster import local_cluster

        cluster = local_cluster(workers)
        client = Client(cluster)
        threads = max(1, usable_cores() // workers)
    try:
        # Keys are unique per run: a shared scheduler may hold another run's results.
        run_id = uuid.uuid4().hex[:12]
        # Tasks are sized for the threads that will run them (an existing cluster's workers
        # may run several each).
        slots = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
        batches = report_batches(paths, slots or workers)
        futures = [
            client.submit(
                map_reports,
                name,
                [str(paths[i]) for i in batch],
                options,
                threads,
                key=f"strata-{name}-{run_id}-{n}",
            )
            for n, batch in enumerate(batches)
        ]
        batch_of = {f.key: batch for f, batch in zip(futures, batches, strict=True)}
        try:
            return _collect_dask(futures, batch_of, paths, cluster, tick)
        except BaseException:
            # Do not leave the scheduler holding (or still running) this run's tasks.
            with contextlib.suppress(Exception):
                client.cancel(futures, force=True)
            raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _scheduler_address(scheduler_file: str | Path) -> str:
    """The address in a Dask scheduler file (distributed waits without end for a missing one)."""
    path = Path(scheduler_file)
    try:
        if not path.is_file() or path.stat().st_size > 1 << 20:
            raise AnalysisError(f"--scheduler-file {path}: no such file")
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise AnalysisError(f"--scheduler-file {path}: not a Dask scheduler file") from exc
    address = info.get("address") if isinstance(info, dict) else None
    if not isinstance(address, str) or not address:
        raise AnalysisError(f"--scheduler-file {path}: no scheduler address in it")
    return address


def _connect(client_class: Any, scheduler: str | None, scheduler_file: str | Path | None) -> Any:
    """A client of an existing Dask scheduler; one line when it cannot be reached."""
    address = scheduler if scheduler is not None else _scheduler_address(scheduler_file)
    try:
        return client_class(address)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AnalysisError(f"cannot reach the Dask scheduler at {address}: {reason}") from exc


def _collect_dask(
    futures: Sequence[Any],
    batch_of: dict[str, list[int]],
    paths: Sequence[Path],
    cluster: Any,
    tick: Callable[[int], None],
) -> list[MapResult]:
    """Gather the Dask results as they complete; stop once every own worker has died.

    ``cluster`` is the run's own :class:`~analysis.recipes._cluster.RecipeCluster`, or None
    for a cluster reached by address (its workers are someone else's to restart).
    """
    from distributed import KilledWorker
    from distributed import as_completed as dask_completed

    results: list[MapResult | None] = [None] * len(paths)
    done = dask_completed(futures, with_results=True, raise_errors=False)
    while not done.is_empty():
        if not done.has_ready():
            lost = cluster.lost_workers() if cluster is not None else None
            if lost is not None:
                raise AnalysisError(f"{lost}; {RETRY}")
            time.sleep(0.02)
            continue
        for future, mapped in done.next_batch(block=False):
            batch = batch_of[future.key]
            if future.status == "error":
                if isinstance(mapped, KilledWorker):
                    raise AnalysisError(died(paths, batch, "Dask workers")) from mapped
                raise mapped  # a bug: keep its traceback
            for index, result in zip(batch, mapped, strict=True):
                results[index] = result
                tick(index)
    return results  # type: ignore[return-value]
