"""Counter rows: GPU metrics and CUDA memory usage as step functions of time, per track.

A counter is drawn from a :class:`~analysis.slices.SliceTable` whose ``values`` hold, per
interval, the counter's value from one sample (or allocation / free) to the next: sample
``i`` of a track holds from its timestamp until sample ``i + 1``. So the value at time
``t`` is the one of the last sample at or before ``t`` (:func:`counter_value_at`), exactly
the table's, and every path that draws or picks intervals (windows, level of detail,
picking) works unchanged. Qt-free; vectorised, the only loops run over tracks.

* GPU metrics (``GPU_METRICS``, spec §1.10): one track per ``(typeId, metricId)``, named by
  ``TARGET_INFO_GPU_METRICS``; its GPU is ``typeId & 0xFF``. The last sample holds for one
  more sampling period (the gap before it). The table's ``scale`` is what a full row means:
  100 for percentages, else the track's largest value.
* CUDA memory usage (``CUDA_GPU_MEMORY_USAGE_EVENTS``, spec §1.4): one track per device;
  the value is the bytes allocated minus freed since the trace started (memory allocated
  before the trace is unknown, so the row starts at 0), every memory kind together. The
  last value holds until the end of the report.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.model import EventTable, Report, freeze
from strata.analysis.slices import SliceTable
from strata.analysis.timefmt import format_time_ns

__all__ = [
    "COUNTER_TABLES",
    "MEMORY_FREE",
    "counter_lines",
    "counter_value_at",
    "format_bytes",
    "memory_slices",
    "metric_slices",
]

#: Report tables drawn as counters.
COUNTER_TABLES = ("gpu_metrics", "memory_usage")
#: ``memoryOperationType`` of a free (0 is an allocation; spec §1.4).
MEMORY_FREE = 1
#: Most allocation / free events a tooltip lists.
_MAX_LISTED = 6


def _step_ends(table: EventTable, last_end: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per row, the next row's start on its track; the track's last row ends at
    ``last_end[track]`` (never before it starts)."""
    start = table.start_ns
    end = np.empty_like(start)
    if not len(start):
        return end
    end[:-1] = start[1:]
    lasts = table.track_offsets[1:] - 1
    lasts = lasts[table.track_offsets[1:] > table.track_offsets[:-1]]
    tracks = table["track_id"][lasts]
    end[lasts] = np.maximum(last_end[tracks], start[lasts])
    return end


def _counter_table(
    kind: str,
    table: EventTable,
    ends: np.ndarray,
    values: np.ndarray,
    labels: list[str],
    track_keys: pd.DataFrame,
    scale: np.ndarray,
) -> SliceTable:
    track = table["track_id"]
    label_ids = track.astype(np.int32) if len(labels) > 1 else np.zeros(len(track), np.int32)
    return SliceTable(
        kind=kind,
        start_ns=table.start_ns,
        end_ns=freeze(ends),
        track_offsets=table.track_offsets,
        label_ids=freeze(label_ids),
        labels=np.array(labels, dtype=object),
        source=kind,
        values=freeze(np.asarray(values, dtype=np.float64)),
        track_keys=track_keys,
        scale=freeze(np.asarray(scale, dtype=np.float64)),
    )


def _track_peaks(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The largest value per track (0 for an empty track)."""
    peaks = np.zeros(len(offsets) - 1, np.float64)
    nonempty = np.flatnonzero(np.diff(offsets) > 0)
    if len(nonempty):
        peaks[nonempty] = np.maximum.reduceat(np.asarray(values, np.float64), offsets[nonempty])
    return peaks


def _is_percent(name: str, peak: float, low: float) -> bool:
    """Whether a metric reads as a percentage: nsys's throughput, "Active", "Issue" and
    warp-occupancy metrics are (0 to 100); clocks are in Hz."""
    return "Frequency" not in name and low >= 0 and peak <= 100


def metric_slices(report: Report) -> SliceTable:
    """The GPU metric counters: one track per metric, labelled by the report's metric name.

    ``track_keys``: per track ``device_id`` (``typeId & 0xFF``), ``type_id``, ``metric_id``,
    ``name`` and ``percent`` (whether it reads as a percentage).
    """
    table = report.tables["gpu_metrics"]
    keys = table.track_keys
    names = report.gpu_metric_names
    lookup = {}
    if len(names):
        pairs = zip(names["type_id"], names["metric_id"], names["name"], strict=False)
        lookup = {(int(t), int(m)): str(n) for t, m, n in pairs}
    type_ids = keys["type_id"].to_numpy(np.int64) if len(keys) else np.empty(0, np.int64)
    metric_ids = keys["metric_id"].to_numpy(np.int64) if len(keys) else np.empty(0, np.int64)
    labels = [
        lookup.get((int(t), int(m))) or f"Metric {int(m)}"
        for t, m in zip(type_ids.tolist(), metric_ids.tolist(), strict=True)
    ]
    # The last sample holds for one more sampling period: the gap before it on its track.
    start, offsets = table.start_ns, table.track_offsets
    last_end = np.zeros(len(keys), np.int64)
    for track in range(len(keys)):
        lo, hi = int(offsets[track]), int(offsets[track + 1])
        if hi > lo:
            gap = int(start[hi - 1] - start[hi - 2]) if hi - lo > 1 else 0
            last_end[track] = int(start[hi - 1]) + max(gap, 0)
    peaks = _track_peaks(table["value"], offsets)
    lows = -_track_peaks(-table["value"], offsets)
    percent = np.array([_is_percent(n, p, q) for n, p, q in zip(labels, peaks, lows, strict=True)])
    track_keys = pd.DataFrame(
        {"device_id": type_ids & 0xFF, "type_id": type_ids, "metric_id": metric_ids,
         "name": np.array(labels, dtype=object), "percent": percent.astype(bool)}
    )  # fmt: skip
    # Percentages are drawn against 100 (a GPU 1 % busy looks 1 % busy), others against
    # their own largest value.
    scale = np.where(percent, 100.0, np.maximum(peaks, 1.0))
    return _counter_table("gpu_metrics", table, _step_ends(table, last_end), table["value"],
                          labels, track_keys, scale)  # fmt: skip


def memory_slices(report: Report) -> SliceTable:
    """The CUDA memory usage counters: one track per device, bytes allocated minus freed.

    ``track_keys``: per track ``device_id``.
    """
    table = report.tables["memory_usage"]
    keys = table.track_keys
    signed = np.where(table["operation"] == MEMORY_FREE, -table["bytes"], table["bytes"])
    signed = np.where(table["operation"] > MEMORY_FREE, 0, signed)  # an unknown operation
    values = np.cumsum(signed, dtype=np.int64)
    offsets = table.track_offsets
    if len(values):
        # Restart the running sum at each track: subtract the sum before the track.
        before = np.concatenate(([0], values))[offsets[:-1]]
        values = values - np.repeat(before, np.diff(offsets))
    end = report.span_ns()[1]
    device = keys["device_id"].to_numpy(np.int64) if len(keys) else np.empty(0, np.int64)
    return _counter_table(
        "memory_usage", table, _step_ends(table, np.full(len(keys), end, np.int64)), values,
        ["Memory usage"], pd.DataFrame({"device_id": device}),
        np.maximum(_track_peaks(values, offsets), 1.0),
    )  # fmt: skip


def counter_value_at(table: SliceTable, track_id: int, t_ns: int) -> float | None:
    """Return the value of counter ``track_id`` at ``t_ns`` (the last sample at or before
    it), or None before its first sample or after its last one ends."""
    lo, hi = table.bounds(track_id)
    i = lo + int(np.searchsorted(table.start_ns[lo:hi], t_ns, side="right")) - 1
    if i < lo or t_ns >= table.end_ns[i] > table.start_ns[i]:
        return None
    return float(table.values[i])


def format_bytes(value: float) -> str:
    """``1,234,567 B (1.23 MB)``: exact bytes and the decimal unit nsys prints (MB = 10^6)."""
    size = abs(value)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{int(value):,} B ({value / scale:.2f} {unit})"
    return f"{int(value):,} B"


def _format_value(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.3f}"


def counter_lines(
    report: Report, table: SliceTable, row: int, offset_ns: int = 0
) -> list[tuple[str, str]]:
    """Tooltip lines for interval ``row`` of a counter table: its value, and for memory
    usage the allocations and frees at that time (the event that set the value first)."""
    value = float(table.values[row])
    if table.kind != "memory_usage":
        metrics = report.tables["gpu_metrics"]
        track = int(metrics["track_id"][row])
        unit = " %" if bool(table.track_keys["percent"].iloc[track]) else ""
        gpu = int(metrics["type_id"][row]) & 0xFF
        return [("Value", _format_value(value) + unit), ("GPU", str(gpu))]
    events = report.tables["memory_usage"]
    lines = [("Allocated", format_bytes(value)), ("Device", str(int(events["device_id"][row])))]
    lo, hi = table.bounds(int(events["track_id"][row]))
    same = lo + np.flatnonzero(table.start_ns[lo:hi] == table.start_ns[row])
    kinds = report.enums.get("mem_kind", {})
    for i in same[:_MAX_LISTED].tolist():
        what = "Free" if int(events["operation"][i]) == MEMORY_FREE else "Alloc"
        kind = kinds.get(int(events["mem_kind"][i]), f"kind {int(events['mem_kind'][i])}")
        when = format_time_ns(int(table.start_ns[i]) + offset_ns)
        address = f"0x{int(events['address'][i]) & 0xFFFFFFFFFFFFFFFF:x}"
        lines.append((what, f"{format_bytes(int(events['bytes'][i]))} {kind} at {address}, {when}"))
    if len(same) > _MAX_LISTED:
        lines.append(("…", f"{len(same) - _MAX_LISTED} more at this time"))
    return lines
