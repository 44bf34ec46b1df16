"""The detail lines of an event, per kind: what the hover text and the details pane list.

Each kind's :attr:`~analysis.kinds.EventKind.details` takes an :class:`EventDetail` (the
event's report, source row and bounds, and what the view has computed) and returns its
``(label, text)`` lines after the name, start, duration and row lines every event has.
The built-in kinds' functions are here; a new kind brings its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from strata.analysis.counters import counter_lines
from strata.analysis.model import Report
from strata.analysis.names import event_name
from strata.analysis.projection import correlated_row
from strata.analysis.schema import LAUNCH_TYPE_LABELS, pid_of, tid_of
from strata.analysis.slices import SliceTable
from strata.analysis.timefmt import format_duration_ns, format_time_ns, pluralize

__all__ = [
    "EventDetail",
    "Lines",
    "counter_details",
    "cuda_api_details",
    "gpu_details",
    "nvtx_details",
    "thread_details",
    "thread_text",
]

#: ``(label, text)`` lines.
Lines = list[tuple[str, str]]


@dataclass(frozen=True)
class EventDetail:
    """One event, as a kind's :attr:`~analysis.kinds.EventKind.details` reads it.

    Attributes
    ----------
    report
        Its report.
    table, row
        Its report table and row there (``report.tables[table]``).
    start_ns, end_ns
        Its bounds, on the report's own time base.
    offset_ns
        The report's shift to the shared axis (times shown are shifted by it).
    slice_table
        ``slice_table()``: the slice table the event is drawn from (built when asked).
    fields
        Its extra source fields (:func:`analysis.event_fields.read_event_fields`).
    projection
        :func:`analysis.projection.project_nvtx` of the report, when computed.
    gpu_tables
        The GPU kinds' tables a CUDA call may have launched work in.
    """

    report: Report
    table: str
    row: int
    start_ns: int
    end_ns: int
    offset_ns: int = 0
    slice_table: Callable[[], SliceTable] | None = None
    fields: Mapping[str, object] = field(default_factory=dict)
    projection: pd.DataFrame | None = None
    gpu_tables: tuple[str, ...] = ("kernels", "memcpy", "memset")

    @property
    def duration_ns(self) -> int:
        """End minus start (ns)."""
        return self.end_ns - self.start_ns

    def when(self, start_ns: int) -> str:
        """A time of the report, as shown on the shared axis."""
        return format_time_ns(start_ns + self.offset_ns)


def _partner(event: EventDetail) -> tuple[str, int] | None:
    """The correlated row: CUDA API call ↔ the kernel/memcpy/memset it launched (spec §1.4
    "How CUDA rows relate": same ``correlationId``, same process)."""
    return correlated_row(event.report, event.table, event.row, event.gpu_tables)


def _name(report: Report, table: str, row: int) -> str:
    return event_name(report, table, row) or ""


def thread_text(report: Report, global_tid: int) -> str:
    """``name (tid N)``, or ``tid N`` for a thread without a name."""
    tid = int(tid_of(np.int64(global_tid)))
    threads = report.threads
    if not threads.empty:
        found = threads[threads["global_tid"].to_numpy() == global_tid]
        if len(found) and found["name"].iloc[0]:
            return f"{found['name'].iloc[0]} (tid {tid})"
    return f"tid {tid}"


def thread_details(event: EventDetail) -> Lines:
    """The thread of a thread kind's event (a ``global_tid`` column)."""
    gtid = int(event.report.tables[event.table]["global_tid"][event.row])
    return [("Thread", thread_text(event.report, gtid))]


def gpu_details(event: EventDetail) -> Lines:
    """Stream, a kernel's launch configuration or a memory operation's sizes and kinds,
    the correlation id, and the CUDA call that launched it."""
    report, row = event.report, event.row
    gpu = report.tables[event.table]
    lines = [("Stream", f"{int(gpu['stream_id'][row])} (device {int(gpu['device_id'][row])})")]
    if event.table == "kernels":
        lines += _kernel_lines(gpu, row, event.fields)
    else:
        lines += _memory_lines(report, event, gpu)
    lines.append(("Correlation ID", str(int(gpu["correlation_id"][row]))))
    partner = _partner(event)
    if partner is not None:
        table, call = partner
        when = event.when(int(report.tables[table]["start_ns"][call]))
        lines.append(("Launched by", f"{_name(report, table, call)} at {when}"))
        thread = report.tables["cuda_api"]["global_tid"][call]
        lines.append(("Launch thread", thread_text(report, int(thread))))
    return lines


def _memory_lines(report: Report, event: EventDetail, gpu) -> Lines:
    row = event.row
    mem_kinds = report.enums.get("mem_kind", {})
    size = int(gpu["bytes"][row])
    lines = []
    if event.table == "memcpy":
        kind = int(gpu["copy_kind"][row])
        lines.append(("Kind", report.enums.get("memcpy_kind", {}).get(kind, str(kind))))
    lines.append(("Bytes", f"{size:,}"))
    if event.table == "memcpy":
        if event.duration_ns > 0:
            lines.append(("Throughput", f"{size / event.duration_ns:.2f} GB/s"))
        for label, column in (("Source memory", "src_kind"), ("Destination memory", "dst_kind")):
            lines.append((label, _label(mem_kinds, int(gpu[column][row]))))
    else:
        lines.append(("Value", str(int(gpu["value"][row]))))
        lines.append(("Memory", _label(mem_kinds, int(gpu["mem_kind"][row]))))
    return lines


def _kernel_lines(kernels, row: int, fields: Mapping[str, object]) -> Lines:
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


def counter_details(event: EventDetail) -> Lines:
    """The value under the mouse (and for memory, the allocations and frees)."""
    if event.slice_table is None:
        return []
    return counter_lines(event.report, event.slice_table(), event.row, event.offset_ns)


def cuda_api_details(event: EventDetail) -> Lines:
    """Thread, correlation id, and the GPU work the call launched."""
    api = event.report.tables["cuda_api"]
    lines = thread_details(event)
    lines.append(("Correlation ID", str(int(api["correlation_id"][event.row]))))
    partner = _partner(event)
    if partner is not None:
        lines.append(("Launched", _name(event.report, *partner) or "(unnamed)"))
    return lines


def nvtx_details(event: EventDetail) -> Lines:
    """Domain, category, colour, payload and thread of an NVTX row; its GPU projection."""
    report, row, fields = event.report, event.row, event.fields
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
    lines.append(("Thread", thread_text(report, gtid)))
    projection = event.projection
    if projection is not None and len(projection):
        found = projection[projection["range_id"].to_numpy() == int(nvtx["row_id"][row])]
        if len(found):
            p = found.iloc[0]
            start, end, ops = int(p["start_ns"]), int(p["end_ns"]), int(p["num_gpu_ops"])
            when = f"{event.when(start)}, {format_duration_ns(end - start)}"
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


def _label(labels: Mapping[int, str], value: int) -> str:
    return labels.get(value, str(value))
