"""The fuzz suite's fork server: imports Strata once, runs each job in a forked child.

Started by :mod:`tests.fuzz.harness` as ``python -m tests.fuzz._server`` (``-m``, so that the
repository root, not the installed package, is what ``import strata.analysis`` finds). It reads one
JSON job per line on stdin, forks, and answers one JSON line on stdout when the child has
ended. The child calls ``app.cli.main(argv)`` for each step of the job, in process, with
stdout and stderr captured, and appends one JSON line per step to the job's result file.

Why a fork per job rather than calling ``main`` in the pytest process: a hostile report can
hang inside SQLite's C code (an endless recursive view), where ``signal.alarm`` never gets
to run; a damaged cache can segfault; a huge string id can allocate tens of GiB (the kernel's
OOM killer then ends the whole test run). In a child, each of these is one failed example:
the server kills a child that overruns its time, and the child runs under a memory limit.
The server itself starts no thread, so forking it is safe.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
import warnings

#: Imported once here so that every child starts warm (what ``main`` would import anyway).
_PRELOAD = (
    "strata.app.cli",
    "strata.app.cli.info",
    "strata.app.cli.stats",
    "strata.analysis.stats",
    "strata.analysis.stats.lean",
)
#: Project packages: an exception's origin is its innermost frame in one of these.
_PROJECT = ("strata", "analysis", "app", "viewer", "resources")


#: The checkout (the server starts there; a job may run elsewhere).
_ROOT = os.getcwd() + os.sep


def _origin(exc: BaseException) -> str:
    """``file:line`` of the innermost project frame of ``exc`` (how failures are grouped)."""
    root = _ROOT
    where = "?"
    for frame in traceback.extract_tb(exc.__traceback__):
        rel = frame.filename.removeprefix(root)
        if rel.split(os.sep, 1)[0] in _PROJECT:
            where = f"{rel}:{frame.lineno}"
    return where


def _run_step(argv: list[str]) -> dict:
    import logging

    from strata.app.cli import main

    # main() calls logging.basicConfig, which binds the handler to the sys.stderr of the
    # first call only: start each step as a fresh process would.
    for handler in list(logging.root.handlers):
        logging.root.removeHandler(handler)
    # Streams that encode as the terminal's do (UTF-8; stderr lenient like Python's own), so
    # that a name a terminal cannot take fails here as it would there.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), "utf-8", errors="backslashreplace", write_through=True)
    record: dict = {"argv": argv, "rc": None, "exc": None}
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            record["rc"] = main(list(argv))
    except BaseException as exc:  # noqa: BLE001 - what escaped main() is the finding
        record["exc"] = {
            "type": type(exc).__name__,
            "message": str(exc)[:2000],
            "origin": _origin(exc),
            "traceback": "".join(traceback.format_exception(exc))[-6000:],
        }
    record["wall_s"] = time.perf_counter() - start
    record["out"] = out.buffer.getvalue().decode("utf-8", "replace")
    record["err"] = err.buffer.getvalue().decode("utf-8", "replace")
    return record


def _limit_memory(mem_mb: int) -> None:
    with open("/proc/self/statm") as fh:
        mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (mem_mb << 20), hard))


def _child(job: dict) -> None:
    """Run one job's steps; never returns."""
    with open(job["result"] + ".stderr", "wb") as raw_err:
        os.dup2(raw_err.fileno(), 2)  # C-level output and faulthandler's dumps
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    os.dup2(2, 1)
    faulthandler.enable(file=sys.__stderr__, all_threads=True)
    # A hang is killed by the server at timeout_s; dump every thread's stack just before.
    faulthandler.dump_traceback_later(max(0.5, job["timeout_s"] - 1.0), exit=False)
    os.environ.update(job.get("env", {}))
    if job.get("cwd"):
        os.chdir(job["cwd"])
    # As tests/ (pyproject filterwarnings): a warning from our own code is an error.
    warnings.filterwarnings("error", module=r"(analysis|viewer|app)(\.|$)")
    _limit_memory(job["mem_mb"])
    with open(job["result"], "w", encoding="utf-8") as fh:
        for argv in job["steps"]:
            fh.write(json.dumps({"start": argv}) + "\n")
            fh.flush()
            fh.write(json.dumps(_run_step(argv)) + "\n")
            fh.flush()
    os._exit(0)


def _wait(pid: int, timeout_s: float) -> tuple[int, bool]:
    """Wait for ``pid`` at most ``timeout_s``; kill it past that. Return (status, timed out)."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
    finally:
        os.close(fd)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return status, not ready


def main() -> None:
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    sys.stdout.write(json.dumps({"ready": os.getpid()}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        job = json.loads(line)
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                _child(job)
            finally:
                os._exit(70)
        status, timed_out = _wait(pid, job["timeout_s"])
        reply = {
            "timed_out": timed_out,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "wall_s": time.perf_counter() - start,
        }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
