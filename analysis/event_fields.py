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

import numpy as np

from strata.analysis._files import pending_wal
from strata.analysis._sqlite import ReportDatabase, quote_ident
from strata.analysis.calltree import chain_text
from strata.analysis.errors import StrataError
from strata.analysis.escape import escape_text
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.timefmt import format_duration_ns

__all__ = ["EXTRA_COLUMNS", "backtrace_lines", "read_event_fields"]

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


#: Most frames a backtrace in the details lists (the innermost; the rest are counted).
MAX_FRAMES = 24
#: Thread tables whose events show the call chain of their thread's nearest CPU sample.
_THREAD_TABLES = ("cuda_api", "osrt", "nvtx")


def _frame_lines(report: Report, chains, chain_id: int, title: str) -> list[tuple[str, str]]:
    frames = chain_text(report, chains, chain_id)
    lines = []
    for depth, (symbol, module) in enumerate(frames[:MAX_FRAMES]):
        where = f"  ({escape_text(Path(module).name)})" if module else ""
        lines.append((title if depth == 0 else "", f"#{depth} {escape_text(symbol)}{where}"))
    if len(frames) > MAX_FRAMES:
        lines.append(("", f"… {len(frames) - MAX_FRAMES:,} more frames"))
    return lines


def backtrace_lines(report: Report, table: str, row: int) -> list[tuple[str, str]]:
    """Return the call-chain lines of one event, innermost frame first (spec §1.4, §1.7).

    A CUDA API call: its backtrace (``CUDA_CALLCHAINS``). A CPU sample: its call chain. A
    CUDA API call, OS runtime call or NVTX range: also the call chain of the CPU sample of
    its thread nearest to its start. Frames read ``#depth symbol (module file name)``,
    escaped. Empty when there is none.
    """
    events = report.tables.get(table)
    if events is None or "start_ns" not in events or not 0 <= row < len(events):
        return []
    lines: list[tuple[str, str]] = []
    if table == "cuda_api" and "callchain_id" in events:
        chain = int(events["callchain_id"][row])
        if chain >= 0:
            lines += _frame_lines(report, report.cuda_chains, chain, "Backtrace")
    if table == "samples":
        lines += _frame_lines(report, report.sample_chains, int(events["sample_id"][row]),
                              "Call chain")  # fmt: skip
    elif table in _THREAD_TABLES:
        lines += _nearest_sample(report, int(events["global_tid"][row]),
                                 int(events["start_ns"][row]))  # fmt: skip
    return lines


def _nearest_sample(report: Report, global_tid: int, t_ns: int) -> list[tuple[str, str]]:
    samples = report.tables["samples"]
    keys = samples.track_keys
    if not len(samples) or "global_tid" not in keys:
        return []
    track = np.flatnonzero(keys["global_tid"].to_numpy() == global_tid)
    if not len(track):
        return []
    rows = samples.track_slice(int(track[0]))
    starts = samples["start_ns"][rows]
    i = int(np.searchsorted(starts, t_ns))
    near = [j for j in (i - 1, i) if 0 <= j < len(starts)]
    if not near:
        return []
    j = min(near, key=lambda k: abs(int(starts[k]) - t_ns))
    delta = int(starts[j]) - t_ns
    when = ("+" if delta >= 0 else "-") + format_duration_ns(abs(delta))
    lines = [("Nearest CPU sample", f"{when} from the start")]
    chain = int(samples["sample_id"][rows.start + j])
    return lines + _frame_lines(report, report.sample_chains, chain, "Sample stack")


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
