"""Which way ``stats`` computes a report's summaries: inside SQLite, or from loaded columns.

One place decides (:func:`choose_path`), per report:

* a valid cache entry for the report: the column path (mapping the entry beats any query);
* otherwise a report of at most :data:`SQL_MAX_BYTES` whose summaries are all in
  :data:`~analysis.stats.sql.SQL_REPORTS`: the SQL path (:mod:`analysis.stats.sql`), which
  writes no cache entry;
* otherwise the column path, which reads what the summaries need and caches it.

``$STRATA_STATS_PATH`` forces one: ``sql`` (where the SQL path can answer at all),
``columns``, or ``auto`` (the default). Both paths print the same bytes (parity tests).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from analysis import cache
from analysis.errors import AnalysisError, StrataError
from analysis.stats import run_report
from analysis.stats._base import StatsResult
from analysis.stats.lean import _is_sqlite, open_for_stats
from analysis.stats.sql import SQL_REPORTS, NotServed, normal_spec, sql_summaries

__all__ = ["PATH_ENV", "SQL_MAX_BYTES", "choose_path", "summarize"]

PATH_ENV = "STRATA_STATS_PATH"
#: Reports up to this size go the SQL path when no cache entry holds them. Measured with
#: benchmarks/bench_sql_path.py (see its docstring): the SQL path beats a cold column read
#: up to ~TODO and costs more above.
SQL_MAX_BYTES = 16 * 2**20


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
    return "sql" if path.stat().st_size <= SQL_MAX_BYTES else "columns"


def summarize(
    path: str | Path, specs: Sequence[str], xp: ModuleType | None = None, use_cache: bool = True
) -> tuple[str, list[StatsResult]]:
    """Compute ``specs`` for one report the chosen way; return (report name, results).

    A report the SQL path does not answer (one its checks refuse, say) goes the column path,
    which answers it or refuses it with its own message.
    """
    if choose_path(path, specs, use_cache) == "sql":
        try:
            return sql_summaries(path, specs)
        except NotServed:
            pass
    report = open_for_stats(path, specs, use_cache=use_cache)
    return report.name, [run_report(report, spec, xp) for spec in specs]


def _sql_can_serve(path: Path, specs: Sequence[str]) -> bool:
    try:
        return (
            bool(specs)
            and all(normal_spec(s) in SQL_REPORTS for s in specs)
            and path.is_file()
            and _is_sqlite(path)
        )
    except (OSError, StrataError):
        return False  # the column path says what is wrong


def _has_cache_entry(path: Path) -> bool:
    try:
        return (cache.cache_root() / "reports" / cache.cache_key(path) / "meta.json").is_file()
    except OSError:
        return False
