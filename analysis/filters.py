"""nsys's time and NVTX filter (``start=``, ``end=``, ``nvtx=``): which rows a run counts.

``nsys stats`` and ``nsys analyze`` 2023.4 (``--filter-time``, ``--filter-nvtx``; the
``start``/``end``/``nvtx`` options of every report and rule) replace each table that has
``start`` and ``end`` columns by a view of the rows that overlap ``[start, end)``: rows that
start inside, end inside, or span it (a NULL end, an NVTX mark or unclosed range, only
counts by its start). With an NVTX range, its first instance (or the INDEX-th, by start)
gives the bounds, and rows of other threads go too: a push/pop range keeps its thread's
rows, a start/end range its process's (a table with a process id only: its process).
Every query of the run then reads the views, so joins see filtered tables on both sides,
an unclosed NVTX range ends at the largest NVTX timestamp *left*, and an NVTX domain whose
creation lies outside the window loses its name.

:class:`RowFilter` is that filter; :func:`resolve_filter` finds it for a report,
:func:`filter_report` applies it to a whole :class:`~analysis.model.Report` (what the stats
summaries read), :meth:`RowFilter.mask` to one table (what the rules read).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.model import EventTable, Report
from strata.analysis.schema import NVTX_RANGE_TYPES, pid_of, tid_of

__all__ = [
    "MAX_TIME",
    "FilterSkip",
    "RowFilter",
    "filter_report",
    "resolve_filter",
]

#: The largest timestamp nsys's filter uses for an open end.
MAX_TIME = 0x7FFFFFFFFFFFFFFF
#: The filter's options, as every nsys report and rule takes them.


class FilterSkip(Exception):  # noqa: N818 - a control-flow signal: the run is SKIPPED
    """The filter cannot be set up (message = nsys's SKIPPED text)."""


@dataclass(frozen=True)
class RowFilter:
    """nsys's ``start``/``end``/``nvtx``/``process``/``thread`` filter of a run's tables.

    A row is kept when it overlaps ``[start, end)`` and, where the table has the ids,
    belongs to the process, thread or NVTX range's thread (or process) asked for.
    """

    start: int = 0
    end: int = MAX_TIME
    pid: int | None = None
    tid: int | None = None
    nvtx_gtid: int | None = None

    def mask(
        self,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
        global_tid: npt.ArrayLike | None = None,
        global_pid: npt.ArrayLike | None = None,
        end_is_null: npt.ArrayLike | None = None,
    ) -> npt.NDArray[np.bool_]:
        """The rows kept; ``end_is_null``: rows whose SQL end is NULL (only their start
        counts)."""
        s, e = np.asarray(start, np.int64), np.asarray(end, np.int64)
        lo, hi = self.start, self.end
        by_end = ((e >= lo) & (e < hi)) | ((s < lo) & (e >= hi))
        if end_is_null is not None:
            by_end &= ~np.asarray(end_is_null, bool)
        keep = ((s >= lo) & (s < hi)) | by_end
        if global_tid is not None:
            gtid = np.asarray(global_tid, np.int64)
            if self.pid is not None:
                keep &= pid_of(gtid) == self.pid
            if self.tid is not None:
                keep &= tid_of(gtid) == self.tid
            if self.nvtx_gtid is not None:
                keep &= self._nvtx_thread(gtid)
        elif global_pid is not None:
            gpid = np.asarray(global_pid, np.int64)
            if self.pid is not None:
                keep &= pid_of(gpid) == self.pid
            if self.nvtx_gtid is not None:
                keep &= (gpid >> 24) == (self.nvtx_gtid >> 24)
        return keep

    def _nvtx_thread(self, gtid: np.ndarray) -> npt.NDArray[np.bool_]:
        nvtx = self.nvtx_gtid
        if int(pid_of(nvtx)) != int(tid_of(nvtx)):
            return gtid == nvtx  # a push/pop range: its thread
        return (gtid >> 24) == (nvtx >> 24)  # a start/end range: its process


def resolve_filter(
    report: Report,
    start: int | None = None,
    end: int | None = None,
    nvtx: str | None = None,
    pid: int | None = None,
    tid: int | None = None,
) -> RowFilter | None:
    """Return the filter of a run's options on ``report``, or None when they filter nothing
    (nsys's ``filter_time_range``: an NVTX range's bounds give what start and end leave out).

    Raises
    ------
    FilterSkip
        The NVTX range is not in the report, start > end, or an NVTX range with a process
        or thread (nsys's SKIPPED texts).
    """
    if all(v is None for v in (start, end, nvtx, pid, tid)):
        return None
    nvtx_gtid = None
    if nvtx is None:
        start = 0 if start is None else start
        end = MAX_TIME if end is None else end
    else:
        nvtx_start, nvtx_end, nvtx_gtid = _nvtx_range(report, nvtx)
        start = nvtx_start if start is None else start
        end = nvtx_end if end is None else end
    if start > end:
        raise FilterSkip("The start time cannot be greater than the end time.")
    if (pid is not None or tid is not None) and nvtx is not None:
        raise FilterSkip("The 'nvtx' option cannot be used with 'pid' or 'tid'.")
    return RowFilter(int(start), int(end), pid, tid, nvtx_gtid)


def _nvtx_range(report: Report, spec: str) -> tuple[int, int, int]:
    """(start, end, globalTid) of the NVTX range ``name[@domain][/index]``, as nsys finds it."""
    if not report.has_source("NVTX_EVENTS"):
        raise FilterSkip(f"{report.name} does not contain NV Tools Extension (NVTX) data.")
    name, index = spec, 0
    head, slash, tail = spec.rpartition("/")
    if slash and tail.strip().lstrip("+").isdigit():
        name, index = head, int(tail)
    if "'" in name:
        _quoted_name_error(name, index)
    nvtx = report.tables["nvtx"]
    rows = np.flatnonzero(np.isin(nvtx["event_type"], NVTX_RANGE_TYPES))
    texts = report.strings.lookup(nvtx["name_id"][rows], missing="")
    domains = report.nvtx_domains
    labels = {
        (int(p), int(d)): f"@{n}"
        for p, d, n in zip(domains["pid"], domains["domain_id"], domains["name"], strict=True)
    }
    pids = pid_of(nvtx["global_tid"][rows]).tolist()
    full = [
        f"{t}{labels.get((p, int(d)), '')}"
        for t, p, d in zip(texts.tolist(), pids, nvtx["domain_id"][rows].tolist(), strict=True)
    ]
    hits = rows[np.asarray(full, dtype=object) == name] if full else rows[:0]
    hits = hits[np.argsort(nvtx.start_ns[hits], kind="stable")]
    if index >= len(hits):
        raise FilterSkip(f"NVTX range '{spec}' could not be found in {report.name}.")
    row = hits[index]
    end = MAX_TIME if bool(nvtx["is_open"][row]) else int(nvtx.end_ns[row])
    return int(nvtx.start_ns[row]), end, int(nvtx["global_tid"][row])


#: The statement nsys 2023.4 looks the range up with, the name pasted in between quotes.
_FIND_RANGE = """
    SELECT nvtx.start, nvtx.end, nvtx.globalTid
    FROM NVTX_EVENTS AS nvtx
    LEFT JOIN NVTX_EVENTS AS domain
        ON nvtx.domainId == domain.domainId AND nvtx.globalTid >> 24 == domain.globalTid >> 24
    LEFT JOIN StringIds AS sid ON nvtx.textId == sid.id
    WHERE nvtx.eventType IN (59, 60, 70, 71)
        AND coalesce(nvtx.text, sid.value) || coalesce('@' || domain.text, '') == '{NAME}'
        ORDER BY 1
        LIMIT 1 OFFSET {INDEX}
    """  # the text after the name as nsys's (SQLite may quote it in its error)


def _quoted_name_error(name: str, index: int) -> None:
    """nsys pastes the range name into its SQL between single quotes: a name holding one
    ends the string early, and nsys SKIPs with SQLite's error. The same statement prepared
    on empty tables gives that error; a name that still parses is looked up as a name.

    Raises
    ------
    FilterSkip
        SQLite's error, as nsys prints it.
    """
    con = sqlite3.connect(":memory:")
    try:
        con.execute(
            "CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, rangeId INT, "
            "category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT, "
            "textId INT, domainId INT, uint64Value INT, int64Value INT, doubleValue REAL, "
            "uint32Value INT, int32Value INT, floatValue REAL, jsonTextId INT, jsonText TEXT)"
        )
        con.execute("CREATE TABLE StringIds (id INT PRIMARY KEY, value TEXT)")
        con.execute(_FIND_RANGE.format(NAME=name, INDEX=index)).fetchall()
    except sqlite3.Error as err:
        raise FilterSkip(str(err)) from None
    finally:
        con.close()


def filter_report(report: Report, keep: RowFilter) -> Report:
    """Return ``report`` as nsys's filtered views show it to a query.

    Each event table whose source table has ``start`` and ``end`` keeps the rows ``keep``
    keeps (by ``globalTid`` where the source has it, else by ``globalPid``). Unclosed NVTX
    ranges end at the largest NVTX timestamp kept; NVTX domains and categories are kept
    when their creating row is. Tables without both times (scheduling, samples, metrics)
    and every other frame are the report's own; ``unfiltered`` is the report (nsys's
    kernel name helper reads ``main.NVTX_EVENTS`` and ``main.CUPTI_ACTIVITY_KIND_RUNTIME``,
    the tables under the views, for the ``:nvtx-name`` prefix).

    The report must be the full model (:attr:`Report.complete`): a partial one has no times.
    """
    tables = dict(report.tables)
    nvtx_max = report.nvtx_max_ns
    for kind, table in report.tables.items():
        columns = report.source_columns.get(table.source, ())
        if not isinstance(table, EventTable) or "start" not in columns or "end" not in columns:
            continue
        is_open = table["is_open"].astype(bool) if "is_open" in table else None
        rows = keep.mask(
            table.start_ns,
            table.end_ns,
            table["global_tid"] if "globalTid" in columns and "global_tid" in table else None,
            table["global_pid"] if "globalPid" in columns and "global_pid" in table else None,
            end_is_null=is_open,
        )
        data = {name: np.asarray(column)[rows] for name, column in table.columns.items()}
        if kind == "nvtx":
            nvtx_max = _reopen(data)
        for column in data.values():
            column.flags.writeable = False
        tables[kind] = EventTable(kind, data, table.track_keys, table.source)
    return replace(
        report,
        tables=tables,
        nvtx_domains=_kept_meta(report.nvtx_domains, keep),
        nvtx_categories=_kept_meta(report.nvtx_categories, keep),
        nvtx_max_ns=nvtx_max,
        unfiltered=report.unfiltered or report,
    )


def _reopen(data: dict[str, np.ndarray]) -> int:
    """End the unclosed NVTX ranges of ``data`` (in place) at the largest NVTX timestamp
    kept, nsys's ``max(max(start), max(end))`` over the filtered view; return it."""
    start, end = data["start_ns"], data["end_ns"]
    if not len(start):
        return 0
    is_open = data["is_open"].astype(bool) if "is_open" in data else np.zeros(len(start), bool)
    closed = end[~is_open]
    nvtx_max = int(max(start.max(), closed.max() if len(closed) else start.max()))
    data["end_ns"] = np.where(is_open, np.int64(nvtx_max), end).astype(np.int64)
    return nvtx_max


def _kept_meta(frame: pd.DataFrame, keep: RowFilter) -> pd.DataFrame:
    """The NVTX domain (category) rows whose creating event the filter keeps: their SQL end
    is NULL, so their start decides."""
    if frame.empty or "start_ns" not in frame:
        return frame
    start = frame["start_ns"].to_numpy(np.int64)
    gtid = frame["global_tid"].to_numpy(np.int64) if "global_tid" in frame else None
    rows = keep.mask(start, start, gtid, end_is_null=np.ones(len(start), bool))
    return frame[rows].reset_index(drop=True)
