"""Build a large Nsight Systems SQLite report by replicating a real one.

The copy keeps the real schema and every table of the source; the GPU activity, CUDA API and
NVTX tables are replicated ``copies`` times, each copy shifted in time to start after the
previous one ends and given fresh correlation ids (a kernel/memcpy and its API call stay
paired by ``correlationId`` + process). Rows are multiplied with SQLite's own
``INSERT ... SELECT`` in doubling rounds, so no event passes through Python.

Timing (2-core reference machine, default source, nsys 2023.4 schema, 1,010 kernels per
copy): 10 M kernels (9,901 copies, 20 M CUDA rows, 1.2 GB file) take about 35 s; 1 M
kernels about 3 s; 64 copies 0.2 s.

Usage::

    python benchmarks/scale_report.py SRC DST --kernels 10000000
    python benchmarks/scale_report.py SRC DST --copies 64

``SRC`` defaults to the ayush-os ``vector_add_profile_v3`` export in ``../shared``.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sqlite3
import sys
import time
from pathlib import Path

__all__ = ["DEFAULT_SOURCE", "REPLICATED_TABLES", "scale_report"]

DEFAULT_SOURCE = (
    Path(__file__).resolve().parents[1].parent
    / "shared/reports/real/ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
)

#: Tables whose rows are replicated; the others (strings, threads, OSRT, sampling...) are kept.
REPLICATED_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
)
_KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
# NVTX rows that are events (ranges and marks); domain/category/thread-name rows are metadata
# and must stay unique. spec: nsys-sqlite.md §1.5.
_NVTX_EVENT_TYPES = (34, 59, 60, 65, 70, 71)
_GAP_NS = 1_000


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]


def _present(con: sqlite3.Connection) -> list[str]:
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return [t for t in REPLICATED_TABLES if t in names]


def _row_filter(table: str) -> str:
    if table == "NVTX_EVENTS":
        return f"eventType IN ({', '.join(map(str, _NVTX_EVENT_TYPES))})"
    return "1"


def _extent(con: sqlite3.Connection, tables: list[str]) -> tuple[int, int, int]:
    """Return (first start, span of one copy incl. a gap, correlation-id span of one copy)."""
    lo, hi, corr = None, None, 0
    for table in tables:
        cols = _columns(con, table)
        row = con.execute(
            f'SELECT min(start), max(coalesce("end", start)) FROM "{table}" '
            f"WHERE {_row_filter(table)}"
        ).fetchone()
        if row[0] is not None:
            lo = row[0] if lo is None else min(lo, row[0])
            hi = row[1] if hi is None else max(hi, row[1])
        if "correlationId" in cols:
            top = con.execute(f'SELECT max(correlationId) FROM "{table}"').fetchone()[0]
            corr = max(corr, int(top or 0))
    if lo is None:
        raise ValueError("the source report has no events to replicate")
    return int(lo), int(hi) - int(lo) + _GAP_NS, corr + 1


def _insert_sql(con: sqlite3.Connection, table: str) -> str:
    """``INSERT ... SELECT`` that appends copies shifted by :shift_ns / :corr_shift."""
    cols = _columns(con, table)
    exprs = []
    for col in cols:
        if col in ("start", "end"):
            exprs.append(f'"{col}" + :shift_ns')
        elif col == "correlationId":
            exprs.append('"correlationId" + :corr_shift')
        else:
            exprs.append(f'"{col}"')
    names = ", ".join(f'"{c}"' for c in cols)
    return (
        f'INSERT INTO "{table}" ({names}) SELECT {", ".join(exprs)} FROM "{table}" '
        f"WHERE {_row_filter(table)} AND start < :limit_ns"
    )


def scale_report(
    src: Path,
    dst: Path,
    n_kernels: int,
    copies: int | None = None,
    log: bool = False,
) -> Path:
    """Write a copy of ``src`` to ``dst`` with its events replicated to ``n_kernels`` kernels.

    Parameters
    ----------
    src
        A real SQLite export with at least one kernel (or any replicated event when
        ``copies`` is given).
    dst
        Output file; overwritten.
    n_kernels
        Wanted kernel count; rounded up to a whole number of copies of the source
        (``ceil(n_kernels / source kernels)``). Ignored when ``copies`` is given.
    copies
        Number of copies of the source events (1 = the source itself).
    log
        Print one line per doubling round.

    Returns
    -------
    Path
        ``dst``. ``ANALYSIS_DETAILS.duration``/``stopTime`` grow by the added time.

    Raises
    ------
    ValueError
        The source has no kernels (and no ``copies`` was given) or no events at all.
    """
    src, dst = Path(src), Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    con = sqlite3.connect(dst, isolation_level=None)
    try:
        # The file is a throwaway benchmark input: no journal, no fsync.
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        con.execute("PRAGMA cache_size = -262144")
        tables = _present(con)
        if copies is None:
            per_copy = con.execute(f"SELECT count(*) FROM {_KERNELS}").fetchone()[0]
            if not per_copy:
                raise ValueError(f"{src} has no kernels to replicate; pass copies=")
            copies = max(1, math.ceil(n_kernels / per_copy))
        first_ns, span_ns, corr_span = _extent(con, tables)
        inserts = {t: _insert_sql(con, t) for t in tables}
        have = 1
        while have < copies:
            add = min(have, copies - have)
            params = {
                "shift_ns": have * span_ns,
                "corr_shift": have * corr_span,
                "limit_ns": first_ns + add * span_ns,
            }
            t0 = time.perf_counter()
            con.execute("BEGIN")
            for sql in inserts.values():
                con.execute(sql, params)
            con.execute("COMMIT")
            have += add
            if log:
                print(f"  {have} copies ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        _stretch_details(con, (copies - 1) * span_ns)
    finally:
        con.close()
    return dst


def _stretch_details(con: sqlite3.Connection, added_ns: int) -> None:
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "ANALYSIS_DETAILS" not in names:
        return
    cols = set(_columns(con, "ANALYSIS_DETAILS"))
    sets = [f'"{c}" = "{c}" + :added' for c in ("duration", "stopTime") if c in cols]
    if sets:
        con.execute(f"UPDATE ANALYSIS_DETAILS SET {', '.join(sets)}", {"added": added_ns})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("dst", type=Path)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--kernels", type=int, default=1_000_000, help="kernel count wanted")
    size.add_argument("--copies", type=int, help="copies of the source events instead")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    out = scale_report(args.src, args.dst, args.kernels, copies=args.copies, log=True)
    con = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    kernels = con.execute(f"SELECT count(*) FROM {_KERNELS}").fetchone()[0]
    con.close()
    print(
        f"{out}: {kernels:,} kernels, {out.stat().st_size / 1e6:,.0f} MB, "
        f"{time.perf_counter() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
