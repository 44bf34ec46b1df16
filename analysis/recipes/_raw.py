"""Raw table reads for the recipes that follow nsys's own DataFrame code column by column.

nsys 2023.4's ``nvtx_pace``, the ``*_util_map`` heatmaps, ``mpi_sum`` and the NCCL recipes
read a report's tables as they are: in the table's row order, NULL kept as NULL, an NVTX
row's ``text`` apart from its ``textId``, a domain found by the raw ``text`` of its
creation row. Their results depend on exactly that (the order of pace iterations, which
rows are dropped as incomplete, which domain is NCCL), so these recipes read the SQLite
behind the report (itself, or the export of an ``.nsys-rep``) with plain queries instead of
the columnar model, which sorts rows and fills NULLs. Integer columns come back as pandas'
nullable ``Int64`` (exact: globalTids pass 2^53), text as ``object`` (None for NULL).

A table the report lacks reads as an empty one (nsys exports it so); a report lacking a
column a recipe reads, a table read whole, or a session row gives no data, as in nsys (its
``DataService.read_tables`` returns None there).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis._sqlite import ReportDatabase, quote_ident
from strata.analysis.model import ReportInfo
from strata.analysis.open import open_report, sqlite_source

__all__ = ["RawTables", "filter_time_range", "read_tables", "strings_of"]

log = logging.getLogger(__name__)

#: The session tables every recipe here reads beside its own (first row each).
SESSION_TABLES = {
    "TARGET_INFO_SESSION_START_TIME": ("utcEpochNs",),
    "ANALYSIS_DETAILS": ("duration",),
}


@dataclass(frozen=True)
class RawTables:
    """One report's tables as read: table name -> DataFrame, and the report's info."""

    info: ReportInfo
    frames: Mapping[str, pd.DataFrame]

    def __getitem__(self, table: str) -> pd.DataFrame:
        return self.frames[table]

    def first_int(self, table: str, column: str) -> int:
        """The first row's value of an integer column (the session tables)."""
        return int(self.frames[table][column].iloc[0])


def _column(values: list, declared: str) -> pd.Series | np.ndarray:
    if declared == "TEXT":
        return pd.Series(values, dtype=object)
    if declared in ("REAL", "DOUBLE", "FLOAT"):
        return pd.Series(values, dtype=np.float64)
    return pd.Series(pd.array(values, dtype="Int64"))


def _declared_types(db: ReportDatabase, table: str) -> dict[str, str]:
    rows = db.execute(f"PRAGMA table_info({quote_ident(table)})")
    return {name: (kind or "").upper() for _, name, kind, *_ in rows}


def read_tables(
    path: Path, use_cache: bool, tables: Mapping[str, Sequence[str] | None]
) -> RawTables | None:
    """Read ``tables`` (name -> columns, None: all) of one report in row order.

    Returns None when the report has no SQLite behind it (a Kineto trace) or lacks one of
    the tables or columns (nsys's recipes give no data then).
    """
    report = open_report(path, use_cache=use_cache, tables=())
    source = sqlite_source(report.path)
    if source is None:
        log.info("%s: no SQLite tables to read", report.name)
        return None
    frames: dict[str, pd.DataFrame] = {}
    with ReportDatabase(source) as db:
        for table, wanted in tables.items():
            if not db.has_table(table):
                # nsys exports an absent table as an empty one: no rows, not "no data".
                if wanted is None:
                    log.info("%s: no %s table", report.name, table)
                    return None
                frames[table] = pd.DataFrame({c: _column([], "") for c in wanted})
                continue
            declared = _declared_types(db, table)
            columns = list(declared) if wanted is None else list(wanted)
            missing = [c for c in columns if c not in declared]
            if missing:
                log.info("%s: %s lacks %s", report.name, table, ", ".join(missing))
                return None
            select = ", ".join(quote_ident(c) for c in columns)
            rows = db.execute(f"SELECT {select} FROM {quote_ident(table)}")
            values = list(zip(*rows, strict=True)) if rows else [[] for _ in columns]
            frames[table] = pd.DataFrame(
                {c: _column(list(v), declared[c]) for c, v in zip(columns, values, strict=True)}
            )
    for table in SESSION_TABLES:
        if table in frames and frames[table].empty:
            log.info("%s: %s is empty", report.name, table)
            return None
    return RawTables(report.info, frames)


def strings_of(raw: RawTables) -> dict[int, str]:
    """``StringIds`` as a dict id -> value."""
    strings = raw["StringIds"]
    return dict(zip(strings["id"].astype("int64").tolist(), strings["value"].tolist(), strict=True))


def filter_time_range(
    frame: pd.DataFrame, start_ns: int | None, end_ns: int | None, columns: tuple[str, str]
) -> pd.DataFrame:
    """Keep the rows that start at or before ``end_ns`` and end at or after ``start_ns``.

    nsys's ``filter_by_time_range`` (``--start``/``--end``): ``columns`` are the row's
    (start, end) columns, the same one twice for instants; a NULL time never passes a bound.
    """
    if frame.empty:
        return frame
    keep = np.ones(len(frame), dtype=bool)
    if end_ns is not None:
        keep &= (frame[columns[0]] <= end_ns).fillna(False).to_numpy(bool)
    if start_ns is not None:
        keep &= (frame[columns[1]] >= start_ns).fillna(False).to_numpy(bool)
    return frame[keep]
