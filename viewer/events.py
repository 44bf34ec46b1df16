"""Picking and describing events: what is under the cursor, and what it correlates with.

Qt-free; reads the report's columns only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.counters import COUNTER_TABLES, counter_lines
from strata.analysis.event_fields import backtrace_lines
from strata.analysis.model import Report
from strata.analysis.names import NAMED_KINDS, event_name
from strata.analysis.projection import correlated_row
from strata.analysis.schema import LAUNCH_TYPE_LABELS, pid_of, tid_of
from strata.analysis.timefmt import format_duration_ns, format_time_ns, pluralize
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
    row, fields = event.source_row, fields or {}
    if row < 0:
        return lines
    if event.source in GPU_TABLES:
        lines += _gpu_lines(report, event, fields)
        partner = find_partner(report, _tables_for(report, tables), event)
        if partner is not None:
            when = format_time_ns(partner.start_ns + offset_ns)
            lines.append(("Launched by", f"{shown_name(report, partner)} at {when}"))
            thread = report.tables["cuda_api"]["global_tid"][partner.source_row]
            lines.append(("Launch thread", _thread_text(report, int(thread))))
    elif event.source in COUNTER_TABLES:
        # The value under the mouse (and for memory, the allocations and frees).
        lines += counter_lines(report, _tables_for(report, tables)[event.table], row, offset_ns)
    elif event.source == "cuda_api":
        api = report.tables["cuda_api"]
        lines.append(("Thread", _thread_text(report, int(api["global_tid"][row]))))
        lines.append(("Correlation ID", str(int(api["correlation_id"][row]))))
        partner = find_partner(report, _tables_for(report, tables), event)
        if partner is not None:
            lines.append(("Launched", shown_name(report, partner) or "(unnamed)"))
    elif event.source == "nvtx":
        lines += _nvtx_lines(report, row, fields, projection, offset_ns)
    # Backtraces (CUDA API), a sample's call chain, the thread's nearest sample's stack.
    lines += backtrace_lines(report, event.source, row)
    return lines


def _gpu_lines(report: Report, event: EventRef, fields: Mapping[str, object]) -> list:
    """Stream, then a kernel's launch configuration or a memory operation's sizes and kinds."""
    gpu, row = report.tables[event.source], event.source_row
    lines = [("Stream", f"{int(gpu['stream_id'][row])} (device {int(gpu['device_id'][row])})")]
    if event.source == "kernels":
        lines += _kernel_lines(gpu, row, fields)
    else:
        mem_kinds = report.enums.get("mem_kind", {})
        size = int(gpu["bytes"][row])
        if event.source == "memcpy":
            kind = int(gpu["copy_kind"][row])
            lines.append(("Kind", report.enums.get("memcpy_kind", {}).get(kind, str(kind))))
        lines.append(("Bytes", f"{size:,}"))
        if event.source == "memcpy":
            if event.duration_ns > 0:
                lines.append(("Throughput", f"{size / event.duration_ns:.2f} GB/s"))
            for label, column in (
                ("Source memory", "src_kind"),
                ("Destination memory", "dst_kind"),
            ):
                lines.append((label, _label(mem_kinds, int(gpu[column][row]))))
        else:
            lines.append(("Value", str(int(gpu["value"][row]))))
            lines.append(("Memory", _label(mem_kinds, int(gpu["mem_kind"][row]))))
    lines.append(("Correlation ID", str(int(gpu["correlation_id"][row]))))
    return lines


def _kernel_lines(kernels, row: int, fields: Mapping[str, object]) -> list:
    def xyz(prefix: str) -> str:
        return "×".join(str(int(kernels[f"{prefix}_{c}"][row])) for c in "xyz")

    static, dynamic = (int(kernels[c][row]) for c in ("static_smem_bytes", "dynamic_smem_bytes"))
    lines = [
        ("Grid", xyz("grid")),
        ("Block", xyz("block")),
        ("Registers/thread", str(int(kernels["registers_per_thread"][row]))),
        ("Shared memory", f"{static:,} B static, {dynamic:,} B dynamic"),
    ]
    if "localMemoryPerThread" in fields or "localMemoryTotal" in fields:
        per_thread, total = fields.get("localMemoryPerThread"), fields.get("localMemoryTotal")
        parts = [f"{per_thread:,} B/thread" if isinstance(per_thread, int) else "",
                 f"{total:,} B total" if isinstance(total, int) else ""]  # fmt: skip
        lines.append(("Local memory", ", ".join(p for p in parts if p)))
    launch = fields.get("launchType")
    if isinstance(launch, int):
        lines.append(("Launch type", LAUNCH_TYPE_LABELS.get(launch, str(launch))))
    return lines


def _nvtx_lines(
    report: Report,
    row: int,
    fields: Mapping[str, object],
    projection: pd.DataFrame | None,
    offset_ns: int,
) -> list:
    """Domain, category, colour, payload and thread of an NVTX row; its GPU projection."""
    nvtx = report.tables["nvtx"]
    gtid, domain = int(nvtx["global_tid"][row]), int(nvtx["domain_id"][row])
    pid = int(pid_of(np.int64(gtid)))
    lines = [("Domain", _nvtx_name(report.nvtx_domains, pid, domain, "domain_id", domain)
              or ("(default)" if domain == 0 else str(domain)))]  # fmt: skip
    category = int(nvtx["category"][row])
    if category:
        name = _nvtx_name(report.nvtx_categories, pid, category, "category", domain)
        lines.append(("Category", f"{name} ({category})" if name else str(category)))
    color = int(nvtx["color"][row])
    if color >= 0:
        lines.append(("Colour", f"#{color & 0xFFFFFF:06X}"))  # nsys ignores the alpha byte
    payload = next(((c, fields[c]) for c in _PAYLOAD_COLUMNS if c in fields), None)
    if payload is not None:
        lines.append(("Payload", f"{payload[1]} ({_PAYLOAD_COLUMNS[payload[0]]})"))
    lines.append(("Thread", _thread_text(report, gtid)))
    if projection is not None and len(projection):
        found = projection[projection["range_id"].to_numpy() == int(nvtx["row_id"][row])]
        if len(found):
            p = found.iloc[0]
            start, end, ops = int(p["start_ns"]), int(p["end_ns"]), int(p["num_gpu_ops"])
            when = f"{format_time_ns(start + offset_ns)}, {format_duration_ns(end - start)}"
            lines.append(("GPU projection", f"{when} ({pluralize(ops, 'GPU op')})"))
    return lines


#: NVTX payload columns (spec §1.5: at most one is set) -> the type shown.
_PAYLOAD_COLUMNS = {"int64Value": "int64", "uint64Value": "uint64", "doubleValue": "double",
                    "int32Value": "int32", "uint32Value": "uint32", "floatValue": "float",
                    "jsonText": "JSON"}  # fmt: skip


def _nvtx_name(frame: pd.DataFrame, pid: int, value: int, column: str, domain: int) -> str:
    """The name of an NVTX domain or category of process ``pid`` ('' when unnamed)."""
    if frame.empty or (column == "domain_id" and value == 0):
        return ""
    mine = frame[(frame["pid"].to_numpy() == pid) & (frame[column].to_numpy() == value)]
    if column == "category" and "domain_id" in mine:
        mine = mine[mine["domain_id"].to_numpy() == domain]
    if "start_ns" in mine:  # a process that re-creates an id: the earliest wins (spec §1.5)
        mine = mine.sort_values("start_ns", kind="stable")
    return str(mine["name"].iloc[0]) if len(mine) and mine["name"].iloc[0] is not None else ""


def _thread_text(report: Report, global_tid: int) -> str:
    """``name (tid N)``, or ``tid N`` for a thread without a name."""
    tid = int(tid_of(np.int64(global_tid)))
    threads = report.threads
    if not threads.empty:
        found = threads[threads["global_tid"].to_numpy() == global_tid]
        if len(found) and found["name"].iloc[0]:
            return f"{found['name'].iloc[0]} (tid {tid})"
    return f"tid {tid}"


def _label(labels: Mapping[int, str], value: int) -> str:
    return labels.get(value, str(value))


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
