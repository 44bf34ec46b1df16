"""The Dask ``LocalCluster`` a recipe run starts when it is given no scheduler.

Its workers are single-threaded processes; how they start decides most of the start-up time:

* **forked** (:class:`PreforkedWorker`): when this process runs no other thread yet (the
  CLI), the worker processes are forked *before* the cluster starts its event-loop thread,
  each inheriting the imports already done here, and wait on a pipe for the scheduler's
  address; the cluster then starts a :class:`distributed.Worker` in each. Forking before any
  thread exists is what makes it safe (a thread holding a lock at a fork leaves that lock
  held forever in the child; Dask's own Nanny would fork from its event-loop thread).
* **fork server** (the Nanny's ``forkserver`` method, ``spawn`` where that is missing):
  when other threads already run (the GUI, a test runner). The fork server is a fresh
  interpreter that imports ``distributed`` and the recipes once, ~1 s of one core here.

Measured on the 2-core reference machine, 2 workers: cluster up in 0.95 s with the fork
server, 0.1 s forked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import signal
from multiprocessing.connection import Connection
from typing import Any

from distributed import LocalCluster
from distributed.deploy.spec import ProcessInterface

from strata.analysis.recipes._procs import can_fork_safely, unforked_method

__all__ = ["PreforkedWorker", "RecipeCluster", "local_cluster"]

log = logging.getLogger(__name__)

#: Dask settings of every cluster started here (the forked workers apply them too).
SETTINGS: dict[str, Any] = {
    # The workers' sampling profiler walks every thread's stack every 10 ms; nobody reads
    # its output here.
    "distributed.worker.profile.enabled": False,
}
#: Seconds a forked worker gets to join the scheduler, and to exit once retired.
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 10.0


class RecipeCluster(LocalCluster):
    """A ``LocalCluster`` that knows whether its forked workers still live.

    A Nanny restarts a worker that dies (killed, out of memory) and Dask gives up on a task
    after it killed a few; nobody restarts a forked worker, so once every one has exited the
    tasks left would wait forever: :meth:`lost_workers` tells the driver to stop instead.
    """

    def __init__(self, *, children: _Children | None = None, **options: Any) -> None:
        self.children = children
        if children is not None:
            options.update(worker_class=PreforkedWorker, children=children)
        super().__init__(**options)

    def lost_workers(self) -> str | None:
        """Return why no worker is left (every forked worker exited), else None."""
        if self.children is None:
            return None
        codes = self.children.exit_codes()
        if not codes or any(code is None for code in codes):
            return None
        how = ", ".join(_exit_text(code) for code in codes)
        return f"every Dask worker process died ({how})"


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def local_cluster(workers: int) -> RecipeCluster:
    """Start a ``LocalCluster`` of ``workers`` single-threaded worker processes."""
    import dask

    options: dict[str, Any] = {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": True,
        # No memory limit: a worker holds one report at a time and keeps nothing between
        # tasks, so there is nothing to spill; without a limit the nannies do not poll their
        # worker's memory every 100 ms (driver CPU 1.2-1.4 s -> 0.8-1.1 s on 64 reports).
        "memory_limit": 0,
        # ":0": any free port; None still binds the HTTP server to 8787 and warns on clash.
        "dashboard_address": ":0",
        # The run reports what went wrong in one line; the scheduler's own error lines (a
        # gather of a task that lost every worker, say) would only come before it.
        "silence_logs": logging.CRITICAL,
    }
    if can_fork_safely():
        children = _Children(workers)  # now, before the cluster starts any thread
        try:
            with dask.config.set(SETTINGS):
                return RecipeCluster(children=children, **options)
        except BaseException:
            children.close()
            raise
    method = unforked_method()
    with dask.config.set({**SETTINGS, "distributed.worker.multiprocessing-method": method}):
        if method == "forkserver":
            from distributed.utils import get_mp_context

            # dask sets its own preload list once; ours replaces it before the server starts.
            get_mp_context().set_forkserver_preload(["distributed", "strata.analysis.recipes"])
        return RecipeCluster(**options)


class _Child:
    """One forked process that will run a Dask worker once it is told the scheduler."""

    def __init__(self, context: Any, siblings: list[_Child]) -> None:
        self.conn, child_end = context.Pipe()
        # The child inherits this process's ends of its own pipe and its elder siblings'
        # pipes; it closes them, else closing them here would never reach a child as EOF.
        inherited = [self.conn, *(s.conn for s in siblings)]
        self.process = context.Process(
            target=_child_main,
            args=(child_end, inherited),
            name="strata-dask-worker",
            daemon=True,
        )
        self.process.start()
        child_end.close()

    def start(self, scheduler: str, options: dict[str, Any]) -> str:
        """Start the worker; return its address once it has joined the scheduler."""
        self.conn.send((scheduler, options))
        if not self.conn.poll(_START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"a forked Dask worker did not start in {_START_TIMEOUT_S:.0f} s")
        status, detail = self.conn.recv()
        if status != "ok":
            self.stop()
            raise RuntimeError(f"a forked Dask worker failed to start: {detail}")
        return detail

    def stop(self) -> None:
        """Close the worker: EOF on its pipe tells it to; end the process if it lingers."""
        self.conn.close()
        self.process.join(_STOP_TIMEOUT_S)
        if self.process.is_alive():
            log.warning("a Dask worker did not exit in %.0f s; terminating it", _STOP_TIMEOUT_S)
            self.process.terminate()
            self.process.join()


class _Children:
    """The forked processes of one cluster, handed to its workers one by one."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("fork")
        self._all: list[_Child] = []
        for _ in range(count):
            self._all.append(_Child(context, self._all))
        self._free = list(self._all)

    def take(self) -> _Child:
        if not self._free:
            # The cluster asked for more workers than were forked (it was scaled up).
            raise RuntimeError("no forked worker process left for this cluster")
        return self._free.pop()

    def close(self) -> None:
        for child in self._all:
            if child.process.is_alive():
                child.stop()

    def exit_codes(self) -> list[int | None]:
        """Each process's exit code; None while it runs."""
        return [child.process.exitcode for child in self._all]


def _child_main(conn: Connection, inherited: list[Connection]) -> None:
    # Ctrl-C reaches the whole process group; the driver handles it and closes the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for other in inherited:
        other.close()
    try:
        scheduler, options = conn.recv()
    except (EOFError, OSError):
        return  # the cluster never started
    import dask

    dask.config.set(SETTINGS)
    try:
        asyncio.run(_serve(conn, scheduler, options))
    except Exception as exc:  # noqa: BLE001 - reported to the driver, which raises it
        with contextlib.suppress(OSError):
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


async def _serve(conn: Connection, scheduler: str, options: dict[str, Any]) -> None:
    """Run a worker until it closes itself or the driver closes its end of the pipe."""
    from distributed import Worker

    async with Worker(scheduler, **options) as worker:
        conn.send(("ok", worker.address))
        loop = asyncio.get_running_loop()
        told = asyncio.Event()
        loop.add_reader(conn.fileno(), told.set)  # EOF: the cluster is closing this worker
        waits = [asyncio.ensure_future(worker.finished()), asyncio.ensure_future(told.wait())]
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        loop.remove_reader(conn.fileno())
        for task in pending:
            task.cancel()


class PreforkedWorker(ProcessInterface):
    """A ``LocalCluster`` worker that runs in a process forked before the cluster started.

    ``LocalCluster(worker_class=PreforkedWorker, children=...)`` passes every worker option
    here; those a single-threaded worker on this machine needs are handed to its process.
    """

    def __init__(
        self,
        scheduler: str,
        *,
        children: _Children,
        name: Any = None,
        nthreads: int = 1,
        memory_limit: Any = 0,
        host: str | None = None,
        silence_logs: Any = None,
        **_ignored: Any,
    ) -> None:
        super().__init__(scheduler=scheduler, name=name)
        self._scheduler = scheduler
        self._child = children.take()
        self._options = {
            "name": name,
            "nthreads": nthreads,
            "memory_limit": memory_limit,
            "host": host,
            "silence_logs": silence_logs,
            "dashboard": False,
        }

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.address = await loop.run_in_executor(
            None, self._child.start, self._scheduler, self._options
        )
        await super().start()

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._child.stop)
        await super().close()
