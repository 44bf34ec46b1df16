"""Whether a report file's summaries are computed inside SQLite or from columns, and the latter.

:func:`choose_path` measures, per report, what :func:`analysis.summary.choose_strategy` (the
one choice of every stats strategy) decides from:

* a valid cache entry for the report: the column path (mapping the entry beats any query);
* otherwise a report with at most :data:`SQL_MAX_ROWS` events in the tables the summaries
  read, all of them served by :func:`~analysis.stats.sql.serves`: the SQL path
  (:mod:`analysis.stats.sql`), which writes no cache entry;
* otherwise the column path, which reads what the summaries need and caches it.

``$STRATA_STATS_PATH`` forces one: ``sql`` (where the SQL path can answer at all),
``columns``, or ``auto`` (the default). Both paths print the same bytes (parity tests).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from strata.analysis import cachedir
from strata.analysis._sqlfile import _ro_uri, is_sqlite_file, quote_ident, usable_cores
from strata.analysis.errors import AnalysisError, StrataError
from strata.analysis.stats.sql import normal_spec, serves
from strata.analysis.stats.text import Printable

__all__ = [
    "PATH_ENV",
    "SQL_MAX_BYTES",
    "SQL_MAX_ROWS",
    "choose_path",
    "column_summaries",
]

PATH_ENV = "STRATA_STATS_PATH"
#: The SQL path is taken for at most this many rows in the tables the summaries read (their
#: largest rowids: one B-tree descent each), in a file of at most :data:`SQL_MAX_BYTES`.
#: benchmarks/bench_sql_path.py, kernel and API summaries, imports done, 2-core machine
#: shared with other jobs: 1,025 rows 5.7 ms against 11.6 ms for a cold column read; 9,700
#: rows 12.4 ms against 11.7 ms; 33,700 rows 33 ms against 20 ms (ADBC's columnar read wins
#: from there on); a cache entry maps in 2-9 ms at every size, so it is always preferred.
SQL_MAX_ROWS = 8_000
SQL_MAX_BYTES = 64 * 2**20
#: The tables each summary of the SQL path reads.
_TABLES = {
    "nvtx_sum": ("NVTX_EVENTS",),
    "cuda_gpu_kern_sum": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "cuda_api_sum": ("CUPTI_ACTIVITY_KIND_RUNTIME",),
    "osrt_sum": ("OSRT_API",),
    "cuda_gpu_mem_time_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
    "cuda_gpu_mem_size_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
}


def choose_path(path: str | Path, specs: Sequence[str], use_cache: bool = True) -> str:
    """Return ``"sql"`` or ``"columns"``: how to compute ``specs`` for the report at ``path``.

    Raises
    ------
    AnalysisError
        ``$STRATA_STATS_PATH`` is not ``sql``, ``columns`` or ``auto``.
    """
    forced = os.environ.get(PATH_ENV, "auto").strip().lower() or "auto"
    if forced not in ("sql", "columns", "auto"):
        raise AnalysisError(f"{PATH_ENV}={forced!r}: use sql, columns or auto")
    path = Path(path)
    if forced == "columns" or not _sql_can_serve(path, specs):
        return "columns"
    if forced == "sql":
        return "sql"
    if use_cache and _has_cache_entry(path):
        return "columns"
    if path.stat().st_size > SQL_MAX_BYTES:
        return "columns"
    return "sql" if _event_rows(path, specs) <= SQL_MAX_ROWS else "columns"


def column_summaries(
    path: str | Path, specs: Sequence[str], xp: ModuleType | None, use_cache: bool = True
) -> tuple[str, list[Printable]]:
    """The column engine, one shot, on a report file: the columns ``specs`` read (from the
    cache entry, else read and cached), every summary computed with ``xp``; (report name,
    one :class:`~analysis.stats.StatsResult` or plain table per spec)."""
    from strata.analysis.stats import lean_plain
    from strata.analysis.stats.lean import open_for_stats

    # Nothing cached, so no report to keep: plain tables from the columns, no pandas.
    numpy = xp is not None and xp.__name__ == "numpy"
    if not use_cache and numpy and lean_plain.serves(path, specs):
        return lean_plain.lean_summaries(path, specs)
    # pandas (~0.25 s to import on the 2-core machine, a fifth of a cold 10 M-kernel stats)
    # is first needed once the columns are read: it is imported on another thread while the
    # reader threads (C, the GIL released) read them. Started once what the read needs is
    # imported (two threads importing at once share one GIL: the read started ~0.1 s later).
    # Only pandas itself, which imports no Strata module: the two threads' imports cannot
    # wait on each other.
    importer = threading.Thread(target=_import_pandas, name="strata-import", daemon=True)
    importer.start()
    try:
        report = open_for_stats(path, specs, use_cache=use_cache)
    finally:
        importer.join()
    from strata.analysis.stats import run_report

    if len(specs) < 2 or (xp is not None and xp.__name__ != "numpy") or usable_cores() < 2:
        return report.name, [run_report(report, spec, xp) for spec in specs]
    # NumPy's sorts and reductions release the GIL: the summaries of two tables (kernels,
    # CUDA API) run side by side (10 M + 10 M events: 0.6 s -> ~0.35 s on 2 cores). The
    # first failing summary in ``specs`` order raises, as one after the other would.
    # concurrent.futures here: ~1.5 ms of a small report's `stats`, which needs no pool.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(len(specs), usable_cores())) as pool:
        futures = [pool.submit(run_report, report, spec, xp) for spec in specs]
        return report.name, [future.result() for future in futures]


def _import_pandas() -> None:
    import pandas  # noqa: F401 - imported for its side effect: the module is ready


def _sql_can_serve(path: Path, specs: Sequence[str]) -> bool:
    try:
        return (
            bool(specs)
            and all(serves(normal_spec(s)) for s in specs)
            and path.is_file()
            and is_sqlite_file(path)
        )
    except (OSError, StrataError):
        return False  # the column path says what is wrong


def _event_rows(path: Path, specs: Sequence[str]) -> int:
    """The rows of the tables ``specs`` read (largest rowids); past the limit when unsure."""
    # A report of data Strata does not load reads no event table (its checks are cheap).
    tables = {t for s in specs for t in _TABLES.get(normal_spec(s).split(":")[0], ())}
    try:
        con = sqlite3.connect(_ro_uri(path), uri=True)
        try:
            present = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            return sum(
                int(
                    con.execute(f"SELECT coalesce(max(rowid), 0) FROM {quote_ident(t)}").fetchone()[
                        0
                    ]
                )
                for t in tables & present
            )
        finally:
            con.close()
    except (sqlite3.Error, TypeError, ValueError, OverflowError):
        return SQL_MAX_ROWS + 1  # the column path says what is wrong


def _has_cache_entry(path: Path) -> bool:
    try:
        return (
            cachedir.cache_root() / "reports" / cachedir.cache_key(path) / "meta.json"
        ).is_file()
    except OSError:
        return False
