"""Picking and describing events: what is under the cursor, and what it correlates with.

Qt-free; reads the report's columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.counters import COUNTER_TABLES, counter_lines
from analysis.model import Report
from analysis.names import NAMED_KINDS, event_name
from analysis.projection import correlated_row
from analysis.timefmt import format_duration_ns, format_time_ns
from analysis.tracks import GPU_TABLES, SliceTable, Track

__all__ = [
    "EventRef",
    "describe_event",
    "event_ref",
    "find_partner",
    "pick_event",
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


def describe_event(
    report: Report,
    event: EventRef,
    row_label: str,
    offset_ns: int = 0,
    tables: dict[str, SliceTable] | None = None,
) -> list[tuple[str, str]]:
    """Return (field, value) lines for a tooltip: name, start, duration, row, GPU details.

    ``tables``: the report's slice tables (its ReportSet's); built afresh when omitted.
    """
    lines = [
        ("Name", _shown_name(report, event) or "(unnamed)"),
        ("Start", format_time_ns(event.start_ns + offset_ns)),
        ("Duration", format_duration_ns(event.duration_ns)),
        ("Row", row_label),
    ]
    row = event.source_row
    if event.source in GPU_TABLES and row >= 0:
        gpu = report.tables[event.source]
        lines.append(
            ("Stream", f"{int(gpu['stream_id'][row])} (device {int(gpu['device_id'][row])})")
        )
        if event.source == "kernels":
            grid = "×".join(str(int(gpu[c][row])) for c in ("grid_x", "grid_y", "grid_z"))
            block = "×".join(str(int(gpu[c][row])) for c in ("block_x", "block_y", "block_z"))
            lines += [("Grid", grid), ("Block", block)]
        else:
            size = int(gpu["bytes"][row])
            lines.append(("Bytes", f"{size:,}"))
            if event.source == "memcpy" and event.duration_ns > 0:
                lines.append(("Throughput", f"{size / event.duration_ns:.2f} GB/s"))
        partner = find_partner(report, _tables_for(report, tables), event)
        if partner is not None:
            when = format_duration_ns(partner.start_ns + offset_ns)
            lines.append(("Launched by", f"{_shown_name(report, partner)} at {when}"))
    elif event.source in COUNTER_TABLES and row >= 0:
        # The value under the mouse (and for memory, the allocations and frees).
        lines += counter_lines(report, _tables_for(report, tables)[event.table], row, offset_ns)
    elif event.source == "cuda_api" and row >= 0:
        partner = find_partner(report, _tables_for(report, tables), event)
        if partner is not None:
            lines.append(("Launched", _shown_name(report, partner) or "(unnamed)"))
    return lines


def _shown_name(report: Report, event: EventRef) -> str:
    """The event's name as the stats tables spell it (a kernel's demangled name, an NVTX
    range's ``domain:text``...), or its row label for derived rows (CPU, projected NVTX)."""
    if event.source and event.source_row >= 0:
        name = event_name(report, event.source, event.source_row)
        if name is not None or event.source in NAMED_KINDS:
            return name or ""
    return event.name


def _tables_for(report: Report, tables: dict[str, SliceTable] | None) -> dict[str, SliceTable]:
    from analysis.tracks import build_slice_tables

    return tables if tables is not None else build_slice_tables(report)
