"""Picking and describing events: what is under the cursor, and what it correlates with.

Qt-free; reads the report's columns only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.event_fields import backtrace_lines
from strata.analysis.kinds import table_kind
from strata.analysis.kinds.details import EventDetail
from strata.analysis.model import Report
from strata.analysis.names import NAMED_KINDS, event_name
from strata.analysis.projection import correlated_row
from strata.analysis.timefmt import format_duration_ns, format_time_ns
from strata.analysis.tracks import GPU_TABLES, SliceTable, Track

__all__ = [
    "EventRef",
    "describe_event",
    "event_ref",
    "find_partner",
    "pick_event",
    "shown_name",
    "spoken_event",
]


@dataclass(frozen=True)
class EventRef:
    """A picked event.

    Attributes
    ----------
    report_index
        Index of the report in the view.
    table
        Slice-table name (``kernels``, ``cuda_api``, ``cpu``...).
    index
        Position in that slice table (for report tables, the row of ``report.tables[table]``).
    source, source_row
        The report table and its row ('' and -1 for derived rows without a source).
    track_key
        Key of the row it was picked on ('' when found through correlation).
    name
        The event's label.
    start_ns, end_ns
        Bounds on the report's own time base (add the report's offset to draw).
    """

    report_index: int
    table: str
    index: int
    source: str
    source_row: int
    track_key: str
    name: str
    start_ns: int
    end_ns: int

    @property
    def duration_ns(self) -> int:
        """End minus start (ns)."""
        return self.end_ns - self.start_ns


def _ref(report_index: int, name: str, table: SliceTable, index: int, key: str) -> EventRef:
    label_id = int(table.label_ids[index])
    label = table.labels[label_id] if 0 <= label_id < len(table.labels) else None
    return EventRef(
        report_index=report_index,
        table=name,
        index=index,
        source=table.source,
        source_row=table.source_row(index) if table.source else -1,
        track_key=key,
        name=str(label) if label is not None else "",
        start_ns=int(table.start_ns[index]),
        end_ns=int(table.end_ns[index]),
    )


def event_ref(tables: dict[str, SliceTable], report_index: int, table: str, index: int) -> EventRef:
    """Return the :class:`EventRef` of row ``index`` of slice table ``table`` (for report
    tables such as ``kernels`` the row of ``report.tables[table]``)."""
    return _ref(report_index, table, tables[table], int(index), "")


def pick_event(
    tables: dict[str, SliceTable], track: Track, t_ns: int, tolerance_ns: int
) -> EventRef | None:
    """Return the event of ``track`` under time ``t_ns`` (report time), or the nearest one
    within ``tolerance_ns``; the shortest containing event wins on overlapping rows."""
    best: tuple[float, int, str] | None = None
    for name, track_id in track.parts:
        table = tables.get(name)
        if table is None:
            continue
        lo, hi = table.window(track_id, t_ns - tolerance_ns, t_ns + tolerance_ns + 1)
        if hi <= lo:
            continue
        starts, ends = table.start_ns[lo:hi], table.end_ns[lo:hi]
        distance = np.maximum(np.maximum(starts - t_ns, t_ns - ends), 0).astype(np.float64)
        # Prefer containing events; among them the shortest (a kernel over "all streams").
        score = distance * 1e6 + (ends - starts) * 1e-9
        i = int(np.argmin(score))
        if distance[i] <= tolerance_ns and (best is None or score[i] < best[0]):
            best = (float(score[i]), lo + i, name)
    if best is None:
        return None
    return _ref(track.report_index, best[2], tables[best[2]], best[1], track.key)


def find_partner(report: Report, tables: dict[str, SliceTable], event: EventRef) -> EventRef | None:
    """Return the correlated partner: CUDA API call ↔ the kernel/memcpy/memset it launched.

    The match is :func:`analysis.projection.correlated_row`'s (spec: nsys-sqlite.md §1.4
    "How CUDA rows relate": same ``correlationId``, same process).
    """
    if event.source_row < 0:
        return None
    partner = correlated_row(report, event.source, event.source_row, GPU_TABLES)
    if partner is None:
        return None
    table, row = partner
    return _ref(event.report_index, table, tables[table], row, "")


def _first_lines(
    report: Report, event: EventRef, row_label: str, offset_ns: int
) -> list[tuple[str, str]]:
    return [
        ("Name", shown_name(report, event) or "(unnamed)"),
        ("Start", format_time_ns(event.start_ns + offset_ns)),
        ("Duration", format_duration_ns(event.duration_ns)),
        ("Row", row_label),
    ]


def spoken_event(report: Report, event: EventRef, row_label: str, offset_ns: int = 0) -> str:
    """Return one line a screen reader says for ``event``: its name, duration, start, row."""
    lines = dict(_first_lines(report, event, row_label, offset_ns))
    return f"{lines['Name']}, {lines['Duration']} at {lines['Start']}, row {lines['Row']}"


def describe_event(
    report: Report,
    event: EventRef,
    row_label: str,
    offset_ns: int = 0,
    tables: dict[str, SliceTable] | None = None,
    fields: Mapping[str, object] | None = None,
    projection: pd.DataFrame | None = None,
) -> list[tuple[str, str]]:
    """Return (field, value) lines describing an event: the hover text and the details pane.

    Parameters
    ----------
    report, event, row_label, offset_ns
        The event, the row it is drawn on and its report's shift to the shared axis.
    tables
        The report's slice tables (its ReportSet's); built afresh when omitted.
    fields
        The event's extra source fields (:func:`analysis.event_fields.read_event_fields`:
        a kernel's launch type and local memory, an NVTX payload); lines need them only
        where they say so.
    projection
        :func:`analysis.projection.project_nvtx` of the report, when computed: an NVTX
        range then shows the time of the GPU work it launched.
    """
    lines = _first_lines(report, event, row_label, offset_ns)
    if event.source_row < 0:
        return lines
    # What else an event says is its kind's (analysis.kinds: EventKind.details).
    kind = table_kind(event.source)
    if kind is not None and kind.details is not None:
        lines += kind.details(
            EventDetail(
                report, event.source, event.source_row, event.start_ns, event.end_ns,
                offset_ns, lambda: _tables_for(report, tables)[event.table], fields or {},
                projection, GPU_TABLES,
            )
        )  # fmt: skip
    # Backtraces (CUDA API), a sample's call chain, the thread's nearest sample's stack.
    lines += backtrace_lines(report, event.source, event.source_row)
    return lines


def shown_name(report: Report, event: EventRef) -> str:
    """The event's name as the stats tables spell it (a kernel's demangled name, an NVTX
    range's ``domain:text``...), or its row label for derived rows (CPU, projected NVTX)."""
    if event.source and event.source_row >= 0:
        name = event_name(report, event.source, event.source_row)
        if name is not None or event.source in NAMED_KINDS:
            return name or ""
    return event.name


def _tables_for(report: Report, tables: dict[str, SliceTable] | None) -> dict[str, SliceTable]:
    from strata.analysis.tracks import build_slice_tables

    return tables if tables is not None else build_slice_tables(report)
