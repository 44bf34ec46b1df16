"""Loader speed and memory on a large scaled report, against SQLite's own scan.

Builds (or reuses) a report with ``--kernels`` kernels by replicating a real export
(:mod:`scale_report`), then measures, each in its own process:

* **sqlite scan**: SQLite's C code reading the same columns the loader reads
  (``SELECT total(a), total(b), ... FROM t`` per table; one result row, so no Python per row);
* **first open**: ``open_report`` with an empty cache (reads SQLite, builds the model,
  writes the cache entry);
* **cached reopen**: ``open_report`` again (the entry is memory-mapped).

and prints times, peak RSS and resident bytes per event with the ratios to the targets
(first open <= 1.2 x sqlite scan, reopen <= 0.5 s, <= 64 resident bytes per event).
``STRATA_SQLITE_READER=adbc`` times the ADBC reader instead of the native one (docs/design.md).

Usage::

    python benchmarks/bench_load.py --kernels 10000000
    python benchmarks/bench_load.py --report big.sqlite

Measured on the shared 2-core machine (load average 3-6 from other work, so wall times
vary by 2x between runs; CPU seconds are steadier), 10 M kernels = 20.2 M events:
sqlite scan 9.6-11.3 s; first open 27-31 s CPU (2.7-3.1x the scan's CPU; 5x and 60 s wall
before this work), 24.7 s wall = 2.2x in the quietest full run, 15.6 s (1.4x) in a quiet
moment; cached reopen 0.03-0.1 s; resident after either open 2.5-6 B/event; first-open
peak +1.6 GiB (83-88 B/event). 1 M kernels: first open 2.2-2.8x the scan's CPU.
With the native reader (2026-11-27, idle machine): scan 6.54 s; first open 7.78 s wall,
12.9 s CPU = 1.19x the scan (ADBC, same machine: 11.66 s, 1.76x); peak 43 B/event.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from _common import (
    REPO,
    AnonPeak,
    cpu_seconds,
    ensure_scaled_report,
    memory_status,
    peak_rss_bytes,
    print_phase_result,
    run_phase,
    timed,
)

_KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"


def _scan_queries(path: Path) -> list[str]:
    """One aggregate query per table the loader reads, over the same columns."""
    from strata.analysis.loader import _SPECS

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        queries = ["SELECT count(id), total(length(value)) FROM StringIds"]
        for table, cols in _SPECS.values():
            if table not in tables:
                continue
            present = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
            exprs = ["total(rowid)"] + [f'total("{c.source}")' for c in cols if c.source in present]
            if table == "NVTX_EVENTS" and "text" in present:
                exprs.append("total(length(text))")
            queries.append(f'SELECT {", ".join(exprs)} FROM "{table}"')
        return queries
    finally:
        con.close()


def _phase_scan(path: Path) -> dict:
    queries = _scan_queries(path)
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)

    def scan() -> None:
        for sql in queries:
            con.execute(sql).fetchall()

    cpu0 = cpu_seconds()
    _, seconds = timed(scan)
    cpu = cpu_seconds() - cpu0
    con.close()
    return {"seconds": seconds, "cpu": cpu, "peak": peak_rss_bytes()}


def _phase_open(path: Path) -> dict:
    from strata.analysis import open_report

    before = memory_status()
    cpu0 = cpu_seconds()
    with AnonPeak() as anon:
        report, seconds = timed(lambda: open_report(path, use_cache=True))
    cpu = cpu_seconds() - cpu0
    after = memory_status()
    return {
        "seconds": seconds,
        "cpu": cpu,
        "events": report.event_count,
        "resident": after["rss"] - before["rss"],
        "resident_anon": after["anon"] - before["anon"],
        "peak": peak_rss_bytes() - before["rss"],
        "peak_anon": anon.peak - before["anon"],
    }


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Loader speed and memory vs SQLite's scan.")
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--src", type=Path, help="real export to scale (default: ayush v3)")
    parser.add_argument("--report", type=Path, help="use this report instead of building one")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "strata")
    parser.add_argument("--phase", choices=("scan", "open"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        run = _phase_scan if args.phase == "scan" else _phase_open
        print_phase_result(run(args.report))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = ensure_scaled_report(args.report, args.workdir, args.kernels, args.src)
    script = Path(__file__).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-cache-", dir=args.workdir) as cache_dir:
        env = {"STRATA_CACHE_DIR": cache_dir, "PYTHONPATH": str(REPO)}
        # Warm the OS page cache so that the peer and the loader both read from memory.
        run_phase(script, ["--phase", "scan", "--report", str(path)], env)
        scan = run_phase(script, ["--phase", "scan", "--report", str(path)], env)
        first = run_phase(script, ["--phase", "open", "--report", str(path)], env)
        again = run_phase(script, ["--phase", "open", "--report", str(path)], env)
    events = first["events"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"report          {path.name}: {events:,} events, {_mb(path.stat().st_size)}")
    print(f"machine         {os.cpu_count()} cores, load average {load} (other work skews wall)")
    print(
        f"sqlite scan     {scan['seconds']:7.2f} s wall {scan['cpu']:7.2f} s CPU  "
        f"(peer: SQLite's C scan of the columns, one thread)"
    )
    print(
        f"first open      {first['seconds']:7.2f} s wall {first['cpu']:7.2f} s CPU  = "
        f"{first['seconds'] / scan['seconds']:.2f} x sqlite scan wall (target <= 1.2), "
        f"{first['cpu'] / scan['cpu']:.2f} x its CPU"
    )
    print(
        f"cached reopen   {again['seconds']:7.2f} s wall {again['cpu']:7.2f} s CPU  "
        "(target <= 0.5 s)"
    )
    for label, res in (("first open", first), ("cached reopen", again)):
        print(
            f"{label:15s} peak RSS +{_mb(res['peak'])} ({res['peak'] / events:.1f} B/event), "
            f"anonymous +{_mb(res['peak_anon'])} ({res['peak_anon'] / events:.1f} B/event; "
            f"target <= 64); resident RSS +{_mb(res['resident'])} "
            f"({res['resident'] / events:.1f} B/event), anonymous "
            f"{res['resident_anon'] / events:.1f} B/event (target <= 8; the rest of RSS is "
            "the cache's mapped columns, page cache)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
