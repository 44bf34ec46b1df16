"""One event's rarely shown fields, read on demand from its SQLite row by rowid.

The columnar model keeps only what the timeline and the summaries need for every event;
a kernel's launch type and local memory or an NVTX range's payload are wanted for the one
event a user hovers or selects, so they are read from the report's own row instead of
costing a column for every event (one ``rowid`` lookup: a B-tree search, not a scan).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from analysis._files import pending_wal
from analysis._sqlite import ReportDatabase, quote_ident
from analysis.errors import StrataError
from analysis.model import Report
from analysis.open import sqlite_source

__all__ = ["EXTRA_COLUMNS", "read_event_fields"]

log = logging.getLogger(__name__)

#: Model table -> the source columns read on demand (those the model lacks; spec §1.4, §1.5).
EXTRA_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "kernels": (
        "launchType",
        "cacheConfig",
        "localMemoryPerThread",
        "localMemoryTotal",
        "sharedMemoryExecuted",
        "gridId",
        "graphNodeId",
    ),
    "memcpy": ("srcDeviceId", "dstDeviceId", "migrationCause", "graphNodeId"),
    "memset": ("graphNodeId",),
    "nvtx": (
        "int64Value",
        "uint64Value",
        "doubleValue",
        "int32Value",
        "uint32Value",
        "floatValue",
        "jsonText",
    ),
}


def read_event_fields(report: Report, table: str, row: int) -> dict[str, object]:
    """Return the extra source fields of row ``row`` of ``report.tables[table]``.

    Parameters
    ----------
    report
        A loaded report (its ``info.path`` names the file; an ``.nsys-rep`` is read through
        its export in the cache folder).
    table
        A model table with extra columns (:data:`EXTRA_COLUMNS`); others give ``{}``.
    row
        Row index into that model table.

    Returns
    -------
    dict
        Source column name -> value, for the columns the file has and that are not NULL.
        Empty when the file is gone, unreadable, has a pending ``-wal`` log, or changed
        since it was loaded (the row's start differs): the details then show what the model
        holds, as hover text must never fail.
    """
    wanted = EXTRA_COLUMNS.get(table, ())
    events = report.tables.get(table)
    if not wanted or events is None or "row_id" not in events or not 0 <= row < len(events):
        return {}
    path = Path(report.info.path)
    # A report whose newest data sit in a -wal file is read through a private copy, which a
    # later transaction would make again (a whole-file copy): not on a hover.
    if not events.source or (path.suffix == ".sqlite" and pending_wal(path) is not None):
        return {}
    source = sqlite_source(path)
    if source is None:
        return {}
    row_id, start_ns = int(events["row_id"][row]), int(events["start_ns"][row])
    try:
        with ReportDatabase(source) as db:
            present = [c for c in wanted if c in db.columns(events.source)]
            if not present:
                return {}
            select = ", ".join(quote_ident(c) for c in ("start", *present))
            found = db.execute(
                f"SELECT {select} FROM {quote_ident(events.source)} WHERE rowid = ?", (row_id,)
            )
    except (StrataError, OSError, sqlite3.Error) as exc:
        log.info("%s: extra fields of %s row %d not read: %s", report.name, table, row_id, exc)
        return {}
    # A file rewritten since it was loaded may hold another event under that rowid.
    if not found or found[0][0] != start_ns:
        return {}
    return {c: v for c, v in zip(present, found[0][1:], strict=True) if v is not None}
