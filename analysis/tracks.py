"""Timeline rows ("tracks") of loaded reports, and the slice tables they draw from.

A :class:`Track` is a view, not a copy: a stable key, a label, a group path for the row tree,
and the ``(table, track_id)`` parts it draws. A part names a :class:`SliceTable` of the
report — a thin, read-only wrapper over an event table of the report (kernels, CUDA API,
NVTX...) or over derived data (CPU-core intervals, NVTX projected onto the GPU). Slice
tables share the report's arrays where they can; they are built here and kept by the
:class:`analysis.reportset.ReportSet` that owns the report (no cache in this module).

Derived data are computed vectorised; the only Python loops run over tracks, never events.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.alignment import alignment_offsets
from strata.analysis.kinds import event_kinds, get_kind, kind_slices, kinds_at
from strata.analysis.model import Report
from strata.analysis.schema import pid_of, tid_of
from strata.analysis.slices import SliceTable
from strata.analysis.timefmt import pluralize

__all__ = [
    "GPU_TABLES",
    "METRICS_GROUP",
    "SliceTable",
    "Track",
    "alignment_offsets",
    "build_slice_tables",
    "build_tracks",
    "projected_slice_table",
    "report_labels",
]

#: Slice tables of the built-in kinds drawn on GPU stream rows, in drawing order.
GPU_TABLES = tuple(kind.drawn_as for kind in kinds_at("gpu"))


@dataclass(frozen=True)
class Track:
    """One timeline row: what it is called, where it sits in the tree, what it draws.

    Attributes
    ----------
    key
        Stable string, unique across the reports of one view (used for pins and settings),
        e.g. ``"rank0.sqlite/gpu0/stream7"``.
    label
        Row header text, e.g. ``"Stream 7"``.
    group
        Path of collapsible group labels, e.g. ``("rank0.sqlite", "CUDA HW", "GPU 0 · A100")``.
    report_index
        Index of the report in the list given to :func:`build_tracks`.
    kind
        ``cpu``, ``cuda_api``, ``nvtx``, ``nvtx_marks``, ``osrt``, ``samples``, ``gpu_all``,
        ``gpu_stream``, ``nvtx_gpu``, or the counters ``memory_usage`` and ``gpu_metric``.
    parts
        ``(slice table name, track id)`` pairs drawn on this row.
    level
        Nesting level for level rows (NVTX, CUDA API, OS runtime), else 0.
    """

    key: str
    label: str
    group: tuple[str, ...]
    report_index: int
    kind: str
    parts: tuple[tuple[str, int], ...]
    level: int = 0

    @property
    def path(self) -> str:
        """The group path and label joined by ``" / "`` (what ``pin by name`` matches)."""
        return " / ".join((*self.group, self.label))


# ---------------------------------------------------------------------------------------
# Slice tables of one report (built here, owned and kept by analysis.reportset.ReportSet)


def build_slice_tables(report: Report) -> dict[str, SliceTable]:
    """Build the slice tables of ``report`` by name (uncached: a ReportSet keeps them).

    Names: ``kernels``, ``memcpy``, ``memset``, ``cuda_api``, ``osrt``, ``nvtx``, ``samples``
    (views of the report's tables) and ``cpu`` (per-core run intervals from SCHED_EVENTS).
    The projected NVTX ranges are :func:`projected_slice_table`.
    """
    # What each kind draws and how its boxes are labelled is its registry entry's
    # (analysis.kinds); the projection waits for projected_slice_table.
    return {
        kind.drawn_as: kind_slices(report, kind)
        for kind in event_kinds()
        if kind.place and not kind.lazy_slices
    }


def projected_slice_table(report: Report, projection: pd.DataFrame) -> SliceTable | None:
    """Return the slice table of ``projection`` (``project_nvtx(report)``), or None if empty.

    Separate from :func:`build_slice_tables` because the projection costs seconds on 10 M-event
    reports (measured: 4 s at 5 M kernels) while every other slice table is a view.
    """
    return _nvtx_gpu_slices(report, projection)


def _nvtx_gpu_slices(report: Report, frame: pd.DataFrame) -> SliceTable | None:
    # The projected kind's slice builder takes the projection its caller keeps.
    return get_kind("nvtx_gpu").slices(report, frame)


# ---------------------------------------------------------------------------------------
# The row tree


def report_labels(reports: list[Report]) -> list[str]:
    """Return one unique, readable label per report (file name; parent folder if needed)."""
    names = [r.name for r in reports]
    labels = []
    for report, name in zip(reports, names, strict=False):
        if names.count(name) > 1:
            name = f"{Path(report.path).parent.name}/{name}"
        labels.append(name)
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(
            label if seen[label] == 1 and labels.count(label) == 1 else f"{label} #{seen[label]}"
        )
    return unique


def build_tracks(
    reports: list[Report], tables: list[dict[str, SliceTable]], labels: list[str] | None = None
) -> list[Track]:
    """Return every timeline row of ``reports``, in display order.

    Per report: CPU cores (when SCHED_EVENTS has rows), then processes → threads (CUDA API,
    NVTX, OS runtime levels and CPU samples), then CUDA HW → GPU → "All streams", one row
    per stream, its memory usage (a counter), the NVTX ranges projected onto that GPU (one
    row per level), and its GPU metrics (counters, in a "GPU metrics" group). Empty rows
    are left out.

    Parameters
    ----------
    reports
        Loaded reports; ``Track.report_index`` indexes this list.
    tables
        Per report, its slice tables (:meth:`analysis.reportset.ReportSet.slice_tables`);
        the NVTX-projected-onto-GPU rows are added where ``nvtx_gpu`` is among them.
    labels
        Per report, the label its rows are grouped under (default :func:`report_labels`).

    Returns
    -------
    list of Track
    """
    tracks: list[Track] = []
    labels = report_labels(reports) if labels is None else labels
    for index, (report, label, own) in enumerate(zip(reports, labels, tables, strict=True)):
        tracks += _cpu_tracks(report, index, label, own)
        tracks += _thread_tracks(report, index, label, own)
        tracks += _gpu_tracks(report, index, label, own)
    return tracks


def _cpu_tracks(
    report: Report, index: int, name: str, tables: dict[str, SliceTable]
) -> list[Track]:
    tracks = []
    for kind in kinds_at("cpu"):
        part = kind.drawn_as
        cpu = tables[part]
        keys = cpu.track_keys
        cores = keys["cpu"].to_numpy() if keys is not None else np.empty(0, np.int32)
        group = (name, f"{kind.label} ({pluralize(len(cores), 'core')})")
        tracks += [
            Track(f"{name}/{part}/core{c}", f"Core {c}", group, index, part, ((part, i),))
            for i, c in enumerate(cores.tolist())
            if cpu.bounds(i)[1] > cpu.bounds(i)[0]
        ]
    return tracks


def _thread_rows(report: Report, tables: dict[str, SliceTable]) -> pd.DataFrame:
    """One row per (thread, kind, level) track that has events."""
    frames = []
    for order, kind in enumerate(kinds_at("thread")):
        # A derived kind (thread state) keys its own tracks by thread.
        keys = tables[kind.drawn_as].track_keys
        if keys is None:
            keys = report.tables[kind.tables[0]].track_keys
        counts = np.diff(tables[kind.drawn_as].track_offsets)
        frame = pd.DataFrame(
            {
                "global_tid": keys["global_tid"].to_numpy(np.int64),
                "level": keys["level"].to_numpy(np.int64) if "level" in keys else 0,
                "track_id": np.arange(len(keys)),
                "kind_order": order,
                "count": counts,
                "has_levels": "level" in keys,
            }
        )
        # Level -1: marks (drawn); below: rows that are not events (NVTX domain creation...).
        frames.append(frame[(frame["count"] > 0) & (frame["level"] >= -1)])
    rows = pd.concat(frames, ignore_index=True)
    rows["pid"] = pid_of(rows["global_tid"].to_numpy())
    rows["tid"] = tid_of(rows["global_tid"].to_numpy())
    # Marks (level -1) after the range levels of their thread.
    rows["level_order"] = np.where(rows["level"] < 0, 1 << 20, rows["level"])
    return rows.sort_values(["pid", "tid", "kind_order", "level_order"], kind="stable")


def _thread_tracks(
    report: Report, index: int, name: str, tables: dict[str, SliceTable]
) -> list[Track]:
    rows = _thread_rows(report, tables)
    kinds = kinds_at("thread")
    thread_names = dict(zip(report.threads["global_tid"], report.threads["name"], strict=False))
    process_names = dict(zip(report.processes["pid"], report.processes["name"], strict=False))
    tracks = []
    for row in rows.itertuples(index=False):
        kind = kinds[row.kind_order]
        pid, tid, level = int(row.pid), int(row.tid), int(row.level)
        process = Path(str(process_names.get(pid) or "")).name or "process"
        thread = thread_names.get(int(row.global_tid)) or ("main" if tid == pid else "thread")
        group = (name, "Processes", f"{process} [{pid}]", f"{thread} [{tid}]")
        base = f"{name}/pid{pid}/tid{tid}/{kind.name}"
        parts = ((kind.drawn_as, int(row.track_id)),)
        if level == -1:
            marks = f"{kind.name}_marks"
            tracks.append(Track(f"{base}/marks", f"{kind.label} marks", group, index, marks, parts))
            continue
        label = kind.label if level == 0 else f"{kind.label} ·{level}"
        key = f"{base}/L{level}" if row.has_levels else base
        tracks.append(Track(key, label, group, index, kind.name, parts, level))
    return tracks


def _stream_parts(
    tables: dict[str, SliceTable], track_ids: list[int]
) -> tuple[tuple[str, int], ...]:
    """The (slice table, track) parts of GPU stream tracks ``track_ids`` that have events."""
    names = [kind.drawn_as for kind in kinds_at("gpu")]
    return tuple(
        (k, t) for t in track_ids for k in names if tables[k].bounds(t)[1] > tables[k].bounds(t)[0]
    )


def _gpu_tracks(
    report: Report, index: int, name: str, tables: dict[str, SliceTable]
) -> list[Track]:
    streams = _streams_by_device(report, tables)
    counters = {kind.drawn_as: tables[kind.drawn_as] for kind in kinds_at("gpu_counter")}
    devices = set(streams)
    for table in counters.values():
        devices |= set(table.track_keys["device_id"].tolist())
    gpu_names = dict(zip(report.gpus["device_id"], report.gpus["name"], strict=False))
    tracks = []
    for device in sorted(int(d) for d in devices):
        # "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3": the vendor says nothing here.
        gpu_name = str(gpu_names.get(device) or "").removeprefix("NVIDIA ").strip()
        gpu_label = f"GPU {device} · {gpu_name}" if gpu_name else f"GPU {device}"
        group = (name, "CUDA HW", gpu_label)
        base = f"{name}/gpu{device}"
        if device in streams:
            tracks += _stream_tracks(tables, streams[device], group, base, index)
        tracks += _counter_tracks(counters, "memory_usage", device, group, base, index)
        tracks += _projected_tracks(tables, device, group, base, index)
        tracks += _counter_tracks(counters, "gpu_metrics", device, group, base, index)
    group = (name, "CUDA HW", "NVTX projected (all GPUs)")
    tracks += _projected_tracks(tables, -1, group, f"{name}/gpus", index)
    return tracks


def _streams_by_device(report: Report, tables: dict[str, SliceTable]) -> dict[int, pd.DataFrame]:
    """Per device, its stream keys with events (``track_id`` = the GPU tables' track)."""
    gpu_kinds = kinds_at("gpu")
    if not gpu_kinds:
        return {}
    # GPU kinds share one stream key table (analysis.loader builds them together).
    keys = report.tables[gpu_kinds[0].tables[0]].track_keys
    if len(keys) == 0:
        return {}
    counts = sum(np.diff(tables[k.drawn_as].track_offsets) for k in gpu_kinds)
    frame = keys.assign(track_id=np.arange(len(keys)), count=counts)
    frame = frame[frame["count"] > 0]
    return {int(device): rows for device, rows in frame.groupby("device_id", sort=True)}


def _stream_tracks(
    tables: dict[str, SliceTable], streams: pd.DataFrame, group: tuple, base: str, index: int
) -> list[Track]:
    streams = streams.sort_values(["stream_id", "global_pid", "context_id"])
    all_parts = _stream_parts(tables, [int(t) for t in streams["track_id"]])
    tracks = [Track(f"{base}/all", "All streams", group, index, "gpu_all", all_parts)]
    dup = streams["stream_id"].duplicated(keep=False)
    for row, is_dup in zip(streams.itertuples(index=False), dup, strict=False):
        sid = int(row.stream_id)
        label, key = f"Stream {sid}", f"{base}/stream{sid}"
        if is_dup:
            pid, ctx = int(pid_of(row.global_pid)), int(row.context_id)
            label += f" (pid {pid}, ctx {ctx})"
            key += f"/pid{pid}/ctx{ctx}"
        parts = _stream_parts(tables, [int(row.track_id)])
        tracks.append(Track(key, label, group, index, "gpu_stream", parts))
    return tracks


#: The group GPU metric rows sit in, under their GPU (collapsed by default in the viewer).
METRICS_GROUP = "GPU metrics"
#: GPU metrics shown first, in this order (the folded group draws the first); the others
#: follow in the report's order.
_METRICS_FIRST = ("SM Active", "SM Issue", "Tensor Active", "DRAM Read Throughput",
                  "DRAM Write Throughput", "PCIe RX Throughput", "PCIe TX Throughput",
                  "GR Active")  # fmt: skip


def _counter_tracks(
    counters: dict[str, SliceTable], part: str, device: int, group: tuple, base: str, index: int
) -> list[Track]:
    """Counter rows of ``device``: its memory usage row, or its GPU metrics (in a group)."""
    table = counters.get(part)
    if table is None:
        return []
    keys = table.track_keys
    tracks = []
    ids = np.flatnonzero(keys["device_id"].to_numpy() == device).tolist()
    if part == "gpu_metrics":
        first = {name: rank for rank, name in enumerate(_METRICS_FIRST)}
        ids.sort(key=lambda t: first.get(str(keys["name"].iloc[t]), len(first)))
    seen = set()
    for track_id in ids:
        lo, hi = table.bounds(track_id)
        if hi <= lo:
            continue
        parts = ((part, track_id),)
        if part == "gpu_metrics":
            label = str(keys["name"].iloc[track_id])
            key = f"{base}/metrics/{label}"
            if key in seen:  # one name for two metrics (two sources): keep keys unique
                row = keys.iloc[track_id]
                key += f"#{int(row['type_id'])}/{int(row['metric_id'])}"
            seen.add(key)
            tracks.append(Track(key, label, (*group, METRICS_GROUP), index, "gpu_metric", parts))
        else:
            tracks.append(Track(f"{base}/memory", "Memory usage", group, index, part, parts))
    return tracks


def _projected_tracks(
    tables: dict[str, SliceTable], device: int, group: tuple[str, ...], base: str, index: int
) -> list[Track]:
    tracks = []
    for kind in kinds_at("gpu_projected"):
        projected = tables.get(kind.drawn_as)
        if projected is None:
            continue
        # Keyed by the table the ranges come from (``nvtx``): keys stay stable for pins.
        where = f"{base}/{kind.tables[0]}"
        for track_id, row in enumerate(projected.track_keys.itertuples(index=False)):
            if int(row.device_id) != device:
                continue
            level = int(row.level)
            label = kind.label if level == 0 else f"{kind.label} ·{level}"
            part = ((kind.drawn_as, track_id),)
            tracks.append(Track(f"{where}/L{level}", label, group, index, kind.name, part, level))
    return tracks
