"""How recipe worker processes start: forked when that is safe, else from a fork server."""

from __future__ import annotations

import multiprocessing
import sys
import threading
from multiprocessing.context import BaseContext

__all__ = ["can_fork_safely", "pool_context", "unforked_method"]


def can_fork_safely() -> bool:
    """Whether this process may fork a copy of itself: on Linux, with no other thread running.

    A thread holding a lock at the moment of a fork leaves that lock held forever in the
    child, so a process with threads (the GUI, a test runner, a live Dask client) must not
    fork. macOS's system libraries are not fork-safe even then (Python spawns there).
    """
    return sys.platform.startswith("linux") and threading.active_count() == 1


def unforked_method() -> str:
    """The start method for workers where forking this process is not safe.

    ``forkserver`` (a fresh server process that imports once and forks every worker), or
    ``spawn`` where that is missing.
    """
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def pool_context() -> BaseContext:
    """Return the start method of a recipe's process pool.

    ``fork`` where :func:`can_fork_safely`: a forked worker starts with this process's imports
    already done (~10 ms), where a fork server must first import the recipes itself (~0.5 s on
    the 2-core reference machine, while a core idles); ``ProcessPoolExecutor`` forks every
    worker before it starts its own manager thread. Otherwise ``forkserver``, or ``spawn``
    where that is missing.
    """
    if can_fork_safely():
        return multiprocessing.get_context("fork")
    method = unforked_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        # The fork server imports the recipes once; every worker forked from it starts with
        # them loaded (a spawned worker spends ~1 s importing pandas and pyarrow here).
        context.set_forkserver_preload(["strata.analysis.recipes"])
    return context
