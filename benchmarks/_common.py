"""Timing and memory helpers shared by the benchmark scripts.

Peak memory is a per-process high-water mark, so a benchmark that compares phases runs each
phase in its own child process (:func:`run_phase`) and reads back one JSON line.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

__all__ = [
    "REPO",
    "AnonPeak",
    "cache_entries",
    "cpu_seconds",
    "ensure_scaled_report",
    "memory_line",
    "memory_status",
    "open_together",
    "peak_rss_bytes",
    "print_phase_result",
    "report_copies",
    "rss_bytes",
    "run_phase",
    "timed",
]

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def rss_bytes() -> int:
    """Return this process's current resident set size in bytes (Linux ``/proc``)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return peak_rss_bytes()


def memory_status() -> dict[str, int]:
    """Return this process's memory in bytes from ``/proc/self/status`` (Linux): ``rss``
    (VmRSS: every resident page), ``anon`` (RssAnon: private anonymous memory, what the
    process costs), ``file`` (RssFile: resident pages of mapped files, e.g. the cache
    entry's memory-mapped columns, page cache that the kernel reclaims under pressure) and
    ``hwm`` (VmHWM: peak VmRSS). Zeros where ``/proc`` has no such file."""
    names = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "VmHWM": "hwm"}
    out = dict.fromkeys(names.values(), 0)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in names:
                    out[names[key]] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


class AnonPeak:
    """Sample RssAnon every 5 ms on a thread while held; ``peak`` is the largest seen.

    The kernel keeps no high-water mark of anonymous memory (VmHWM counts mapped file pages
    too), so it is sampled. Not held while frames are timed (the thread takes the GIL).
    """

    def __init__(self) -> None:
        import threading

        self.peak = memory_status()["anon"]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, memory_status()["anon"])

    def __enter__(self) -> AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, memory_status()["anon"])


def peak_rss_bytes() -> int:
    """Return this process's peak resident set size in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def cpu_seconds() -> float:
    """Return this process's user + system CPU time so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Call ``fn`` and return (its result, wall seconds)."""
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def print_phase_result(result: dict[str, Any]) -> None:
    """Print a phase's result as the last stdout line (read by :func:`run_phase`)."""
    print(json.dumps(result), flush=True)  # noqa: T201 - the phase protocol


def run_phase(
    script: Path,
    args: list[str],
    env: dict[str, str] | None = None,
    watch: Callable[[int], AbstractContextManager[Any]] | None = None,
) -> dict[str, Any]:
    """Run ``script args`` in a fresh interpreter and return the JSON of its last line.

    ``watch(pid)``, when given, is a context manager held while the phase runs (a sampler
    of its child processes, say): it runs here, so the phase itself stays as it is.
    """
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    with watch(proc.pid) if watch is not None else contextlib.nullcontext():
        out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} failed:\n{err}")
    return json.loads(out.strip().splitlines()[-1])


def ensure_scaled_report(
    report: Path | None, workdir: Path, n_kernels: int, src: Path | None = None
) -> Path:
    """Return ``report`` if given, else a scaled copy of ``src`` with at least ``n_kernels``
    kernels in ``workdir`` (reused when one is already there; 10 M kernels take ~35 s)."""
    if report is not None:
        return report
    import sqlite3

    from scale_report import DEFAULT_SOURCE, scale_report

    dst = workdir / f"scaled-{n_kernels}.sqlite"
    if dst.is_file():
        con = sqlite3.connect(f"file:{dst}?mode=ro", uri=True)
        have = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        con.close()
        if have >= n_kernels:
            return dst
    print(f"building {dst} ...", file=sys.stderr)  # noqa: T201 - benchmark progress
    _, seconds = timed(lambda: scale_report(src or DEFAULT_SOURCE, dst, n_kernels))
    print(f"built in {seconds:.1f} s", file=sys.stderr)  # noqa: T201
    return dst


# A cold open in its own process: its time, its peak RSS above the RSS before it, and its
# peak anonymous memory above the anonymous memory before it.
_COLD_OPEN = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from _common import AnonPeak, memory_status
from strata.analysis import open_report
before = memory_status()
t = time.perf_counter()
with AnonPeak() as anon:
    report = open_report(sys.argv[2], use_cache=True)
seconds = time.perf_counter() - t
peak = memory_status()["hwm"] - before["rss"]
print(json.dumps({"seconds": seconds, "events": report.event_count, "peak": peak,
                  "peak_anon": anon.peak - before["anon"]}))
"""


def report_copies(path: Path, n: int) -> list[Path]:
    """Return ``path`` and ``n - 1`` hard links to it under distinct names (copies where a
    link fails): distinct paths are distinct reports to Strata, each with its own cache
    entry, as ``n`` separate files would be."""
    paths = [path]
    for k in range(1, n):
        other = path.with_name(f"{path.stem}-{k}{path.suffix}")
        if not other.exists():
            try:
                os.link(path, other)
            except OSError:
                import shutil

                shutil.copyfile(path, other)
        paths.append(other)
    return paths


def cache_entries(paths: list[Path]) -> list[dict[str, Any]]:
    """Open each report once in its own process (a cold first open when its cache entry is
    missing, which writes it); return each one's seconds, events and peak RSS increase."""
    out = []
    for path in paths:
        proc = subprocess.run(
            [sys.executable, "-c", _COLD_OPEN, str(REPO), str(path)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def open_together(paths: list[Path]) -> tuple[list[Any], dict[str, float]]:
    """Open ``paths`` in this process, one after the other, as the GUI holds them together.

    Returns the reports and ``seconds``, ``events``, ``before`` (RSS before the first open)
    and ``resident`` (RSS after the last), in bytes, and prints them. Entries are prepared by
    :func:`cache_entries` first, so that this process's peak is the set's, not a cold read's.
    """
    from strata.analysis import open_report

    cold = cache_entries(paths)
    status = memory_status()
    reports, seconds = timed(lambda: [open_report(p, use_cache=True) for p in paths])
    events = sum(r.event_count for r in reports)
    cold_peak = max(c["peak"] / max(c["events"], 1) for c in cold)
    cold_anon = max(c["peak_anon"] / max(c["events"], 1) for c in cold)
    info = {
        "seconds": seconds,
        "events": events,
        "before": status["rss"],
        "before_anon": status["anon"],
        "resident": rss_bytes(),
        "cold_peak_per_event": cold_peak,
        "cold_seconds": max(c["seconds"] for c in cold),
    }
    print(  # noqa: T201 - benchmark output
        f"{len(paths)} x {paths[0].name}: {events:,} events, opened together from the cache "
        f"in {seconds:.2f} s (a cold first open of one, own process: "
        f"{info['cold_seconds']:.1f} s, peak RSS {cold_peak:.1f} B/event, peak anonymous "
        f"{cold_anon:.1f} B/event above the process before it)"
    )
    return reports, info


def memory_line(info: dict[str, float], label: str) -> str:
    """One line: peak and resident bytes per event of the reports held (above ``before``,
    the interpreter and its imports; absolute figures in brackets)."""
    events = max(info["events"], 1)
    now = memory_status()
    peak = now["hwm"] or peak_rss_bytes()
    anon = now["anon"] - info.get("before_anon", 0)
    mapped = now["rss"] - info["before"] - anon
    line = (
        f"memory {label}: peak RSS {(peak - info['before']) / events:.1f} B/event "
        f"({peak / events:.1f} absolute, {peak / 2**30:.2f} GiB)"
    )
    if "peak_anon" in info:
        line += f", peak anonymous {(info['peak_anon'] - info['before_anon']) / events:.1f}"
    return line + (
        f"; resident RSS {(now['rss'] - info['before']) / events:.1f} B/event "
        f"({now['rss'] / events:.1f} absolute, {now['rss'] / 2**30:.2f} GiB) = anonymous "
        f"{anon / events:.1f} + mapped files {mapped / events:.1f}"
        f" (cache columns: page cache); target peak <= 64, resident <= 8 B/event"
    )
