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

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.alignment import alignment_offsets
from analysis.cpu import core_intervals
from analysis.model import Report, freeze
from analysis.names import MEMSET_NAME, event_names, kernel_name_ids, memcpy_names
from analysis.schema import pid_of, tid_of

__all__ = [
    "GPU_TABLES",
    "SliceTable",
    "Track",
    "alignment_offsets",
    "build_slice_tables",
    "build_tracks",
    "projected_slice_table",
    "report_labels",
]

log = logging.getLogger(__name__)

#: Report tables whose events are drawn on GPU stream rows, in drawing order.
GPU_TABLES = ("kernels", "memcpy", "memset")


@dataclass(frozen=True)
class SliceTable:
    """Read-only intervals of one kind, sorted by ``(track, start_ns)``, ready to paint.

    Attributes
    ----------
    kind
        The slice-table name (a report table name, or ``cpu`` / ``nvtx_gpu`` when derived).
    start_ns, end_ns
        Interval bounds (int64 ns, the report's session time base).
    track_offsets
        ``[lo, hi)`` row bounds of track ``i`` are ``track_offsets[i:i+2]`` (int64).
    label_ids
        Per interval, an index into ``labels`` (int32; -1 = no label).
    labels
        Label strings (object array); also the key of the per-name colour.
    argb
        Per interval an explicit 0xAARRGGBB colour, or -1 to colour by label; ``None`` when
        the table has no explicit colours.
    source
        The report table the rows come from ('' when derived without a 1:1 source).
    source_rows
        Row index into the source table per interval; ``None`` means the identity.
    is_overlapping
        Whether intervals on one track may overlap (then the paint window looks back by the
        track's longest interval instead of one interval).
    """

    kind: str
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    track_offsets: npt.NDArray[np.int64]
    label_ids: npt.NDArray[np.int32]
    labels: npt.NDArray[np.object_]
    argb: npt.NDArray[np.int64] | None = None
    source: str = ""
    source_rows: npt.NDArray[np.int64] | None = None
    is_overlapping: bool = False
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.start_ns)

    @property
    def track_count(self) -> int:
        """Number of tracks in the table."""
        return len(self.track_offsets) - 1

    def bounds(self, track_id: int) -> tuple[int, int]:
        """Return the ``[lo, hi)`` rows of ``track_id``."""
        return int(self.track_offsets[track_id]), int(self.track_offsets[track_id + 1])

    def busy_prefix_ns(self) -> npt.NDArray[np.int64]:
        """Return the exclusive prefix sum of durations (length n + 1), computed once.

        Only differences of it are used (the busy time of a run of rows); they are exact in
        int64's modular arithmetic even where the running sum itself wraps (a damaged
        report's durations near 2^62), since the busy time of a window of one track is at
        most the window.
        """
        prefix = self._cache.get("busy")
        if prefix is None:
            prefix = np.zeros(len(self) + 1, dtype=np.int64)
            np.cumsum(self.end_ns - self.start_ns, out=prefix[1:])
            self._cache["busy"] = freeze(prefix)
        return prefix

    def max_duration_ns(self) -> npt.NDArray[np.int64]:
        """Return the longest interval per track (int64, 0 for empty tracks), computed once."""
        longest = self._cache.get("longest")
        if longest is None:
            longest = np.zeros(self.track_count, dtype=np.int64)
            duration = self.end_ns - self.start_ns
            nonempty = np.flatnonzero(np.diff(self.track_offsets) > 0)
            if len(nonempty):
                longest[nonempty] = np.maximum.reduceat(duration, self.track_offsets[nonempty])
            self._cache["longest"] = freeze(longest)
        return longest

    def window(self, track_id: int, t0_ns: int, t1_ns: int) -> tuple[int, int]:
        """Return the ``[lo, hi)`` rows of ``track_id`` that may intersect ``[t0_ns, t1_ns)``."""
        lo, hi = self.bounds(track_id)
        if lo == hi:
            return lo, lo
        starts = self.start_ns[lo:hi]
        if self.is_overlapping:
            back = int(self.max_duration_ns()[track_id])
            first = int(np.searchsorted(starts, t0_ns - back, side="left"))
        else:
            first = int(np.searchsorted(starts, t0_ns, side="right"))
            if first > 0 and self.end_ns[lo + first - 1] > t0_ns:
                first -= 1
        last = int(np.searchsorted(starts, t1_ns, side="left"))
        return lo + first, lo + max(first, last)

    def source_row(self, index: int) -> int:
        """Return the source-table row of interval ``index``."""
        return index if self.source_rows is None else int(self.source_rows[index])

    def index_of_source_row(self, row: int) -> int | None:
        """Return the interval that shows source row ``row``, or ``None``."""
        if self.source_rows is None:
            return row if 0 <= row < len(self) else None
        hits = np.flatnonzero(self.source_rows == row)
        return int(hits[0]) if len(hits) else None


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
        ``gpu_stream`` or ``nvtx_gpu``.
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
    # Box labels follow analysis.names: kernels by their short (``base``) name, as the nsys
    # GUI draws them; CUDA API calls without their _vNNNN suffix, as cuda_api_sum prints
    # them; memory operations as the memory summaries name them. Tooltips say the full
    # stats name (analysis.names.event_name).
    strings = report.strings.values
    tables: dict[str, SliceTable] = {}
    kernels = report.tables["kernels"]
    kernel_label = kernel_name_ids(report, "base").astype(np.int32)
    tables["kernels"] = _view("kernels", kernels, kernel_label, strings)
    tables["memcpy"] = _memcpy_slices(report)
    memset = report.tables["memset"]
    tables["memset"] = _view(
        "memset", memset, np.zeros(len(memset), np.int32), np.array([MEMSET_NAME], dtype=object)
    )
    api = report.tables["cuda_api"]
    api_names = event_names(report, "cuda_api")
    tables["cuda_api"] = _view("cuda_api", api, api_names.codes, api_names.labels)
    osrt = report.tables["osrt"]
    tables["osrt"] = _view("osrt", osrt, osrt["name_id"], strings)
    nvtx = report.tables["nvtx"]
    colors = nvtx["color"]
    has_color = bool(len(colors)) and bool((colors != -1).any())
    tables["nvtx"] = _view(
        "nvtx", nvtx, nvtx["name_id"], strings, argb=colors if has_color else None
    )
    samples = report.tables["samples"]
    tables["samples"] = _view(
        "samples", samples, np.zeros(len(samples), np.int32), np.array(["CPU sample"], object)
    )
    tables["cpu"] = _cpu_slices(report)
    return tables


def projected_slice_table(report: Report, projection: pd.DataFrame) -> SliceTable | None:
    """Return the slice table of ``projection`` (``project_nvtx(report)``), or None if empty.

    Separate from :func:`build_slice_tables` because the projection costs seconds on 10 M-event
    reports (measured: 4 s at 5 M kernels) while every other slice table is a view.
    """
    return _nvtx_gpu_slices(report, projection)


def _view(
    kind: str,
    table,
    label_ids: np.ndarray,
    labels: np.ndarray,
    argb: np.ndarray | None = None,
) -> SliceTable:
    return SliceTable(
        kind=kind,
        start_ns=table["start_ns"],
        end_ns=table["end_ns"],
        track_offsets=table.track_offsets,
        label_ids=np.asarray(label_ids, dtype=np.int32),
        labels=labels,
        argb=argb,
        source=kind,
    )


def _memcpy_slices(report: Report) -> SliceTable:
    memcpy = report.tables["memcpy"]
    kinds = memcpy["copy_kind"]
    lo, hi = (int(kinds.min()), int(kinds.max())) if len(kinds) else (0, 0)
    if lo >= 0 and hi < 1 << 10:
        # Label id = copy kind (no pass over the rows); a kind without an enum label has no
        # name (None), as in nsys.
        return _view("memcpy", memcpy, kinds, memcpy_names(report, np.arange(hi + 1)))
    uniq, label_ids = np.unique(kinds, return_inverse=True)  # odd kinds: a damaged report
    return _view("memcpy", memcpy, label_ids.ravel(), memcpy_names(report, uniq))


def _cpu_slices(report: Report) -> SliceTable:
    runs = core_intervals(report)
    offsets = np.searchsorted(runs.cpu, np.append(runs.cores, np.iinfo(np.int32).max))
    threads = report.threads
    names = dict(zip(threads["global_tid"].to_numpy(), threads["name"], strict=False))
    gtids, inverse = np.unique(runs.global_tid, return_inverse=True)
    process_names = dict(zip(report.processes["pid"], report.processes["name"], strict=False))
    labels = []
    for gtid in gtids.tolist():
        pid, tid = int(pid_of(gtid)), int(tid_of(gtid))
        name = names.get(gtid) or Path(str(process_names.get(pid, "") or "")).name or "thread"
        labels.append(f"{name} [{tid}]")
    table = SliceTable(
        kind="cpu",
        start_ns=runs.start_ns,
        end_ns=runs.end_ns,
        track_offsets=freeze(offsets.astype(np.int64)),
        label_ids=freeze(inverse.astype(np.int32)),
        labels=np.array(labels, dtype=object),
        source="",
    )
    table._cache["cores"] = runs.cores
    table._cache["global_tid"] = runs.global_tid
    return table


def _nvtx_gpu_slices(report: Report, frame: pd.DataFrame) -> SliceTable | None:
    if frame is None or frame.empty:
        return None
    # Ranges unreachable from a root have no level (spec §4.1 twins): not drawn.
    drawn = np.flatnonzero(frame["level"].notna().to_numpy())
    frame = frame.iloc[drawn]
    if frame.empty:
        return None
    device = (
        frame["device_id"].to_numpy(np.int64)
        if "device_id" in frame
        else np.full(len(frame), _default_device(report), dtype=np.int64)
    )
    level = frame["level"].to_numpy().astype(np.int64)
    start = frame["start_ns"].to_numpy(np.int64)
    keys = pd.DataFrame({"device_id": device, "level": level}).drop_duplicates()
    keys = keys.sort_values(["device_id", "level"]).reset_index(drop=True)
    track = pd.MultiIndex.from_frame(keys).get_indexer(pd.MultiIndex.from_arrays([device, level]))
    order = np.lexsort((start, track))
    names, label_ids = np.unique(frame["name"].astype(str).to_numpy(object), return_inverse=True)
    offsets = np.searchsorted(track[order], np.arange(len(keys) + 1))
    table = SliceTable(
        kind="nvtx_gpu",
        start_ns=freeze(start[order]),
        end_ns=freeze(frame["end_ns"].to_numpy(np.int64)[order]),
        track_offsets=freeze(offsets.astype(np.int64)),
        label_ids=freeze(label_ids.astype(np.int32)[order]),
        labels=names.astype(object),
        source="",
        # Projected spans of sibling ranges overlap when the GPU runs behind the CPU.
        is_overlapping=True,
    )
    table._cache["keys"] = keys
    # Per interval, its row of project_nvtx (what the stats panel's instances name).
    table._cache["projection_rows"] = freeze(drawn[order].astype(np.int64))
    return table


def _default_device(report: Report) -> int:
    """The device projected ranges go under: the one GPU with work, or -1 for several.

    ``project_nvtx`` does not say which device a range's GPU work ran on; with several
    devices the rows get their own group rather than a guess.
    """
    keys = report.tables["kernels"].track_keys
    devices = np.unique(keys["device_id"].to_numpy()) if len(keys) else np.empty(0)
    if len(devices) == 1:
        return int(devices[0])
    if len(devices) > 1:
        return -1
    return int(report.gpus["device_id"].min()) if len(report.gpus) else 0


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
    per stream, and the NVTX ranges projected onto that GPU (one row per level). Empty rows
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
    cpu = tables["cpu"]
    cores = cpu._cache.get("cores", np.empty(0, np.int32))
    group = (name, f"CPU ({len(cores)} cores)")
    return [
        Track(f"{name}/cpu/core{c}", f"Core {c}", group, index, "cpu", (("cpu", i),))
        for i, c in enumerate(cores.tolist())
        if cpu.bounds(i)[1] > cpu.bounds(i)[0]
    ]


_THREAD_KINDS = (
    ("cuda_api", "CUDA API"),
    ("nvtx", "NVTX"),
    ("osrt", "OS runtime"),
    ("samples", "CPU samples"),
)


def _thread_rows(report: Report, tables: dict[str, SliceTable]) -> pd.DataFrame:
    """One row per (thread, kind, level) track that has events."""
    frames = []
    for order, (kind, _label) in enumerate(_THREAD_KINDS):
        keys = report.tables[kind].track_keys
        counts = np.diff(tables[kind].track_offsets)
        frame = pd.DataFrame(
            {
                "global_tid": keys["global_tid"].to_numpy(np.int64),
                "level": keys["level"].to_numpy(np.int64) if "level" in keys else 0,
                "track_id": np.arange(len(keys)),
                "kind_order": order,
                "count": counts,
            }
        )
        if kind == "nvtx":
            frame = frame[frame["level"] >= -1]
        frames.append(frame[frame["count"] > 0])
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
    thread_names = dict(zip(report.threads["global_tid"], report.threads["name"], strict=False))
    process_names = dict(zip(report.processes["pid"], report.processes["name"], strict=False))
    tracks = []
    for row in rows.itertuples(index=False):
        kind, kind_label = _THREAD_KINDS[row.kind_order]
        pid, tid, level = int(row.pid), int(row.tid), int(row.level)
        process = Path(str(process_names.get(pid) or "")).name or "process"
        thread = thread_names.get(int(row.global_tid)) or ("main" if tid == pid else "thread")
        group = (name, "Processes", f"{process} [{pid}]", f"{thread} [{tid}]")
        base = f"{name}/pid{pid}/tid{tid}/{kind}"
        if level == -1:
            tracks.append(
                Track(
                    f"{base}/marks",
                    "NVTX marks",
                    group,
                    index,
                    "nvtx_marks",
                    ((kind, int(row.track_id)),),
                )
            )
            continue
        label = kind_label if level == 0 else f"{kind_label} ·{level}"
        key = base if kind == "samples" else f"{base}/L{level}"
        tracks.append(Track(key, label, group, index, kind, ((kind, int(row.track_id)),), level))
    return tracks


def _gpu_tracks(
    report: Report, index: int, name: str, tables: dict[str, SliceTable]
) -> list[Track]:
    keys = report.tables["kernels"].track_keys
    counts = sum(np.diff(tables[k].track_offsets) for k in GPU_TABLES)
    if len(keys) == 0:
        return []
    frame = keys.assign(track_id=np.arange(len(keys)), count=counts)
    frame = frame[frame["count"] > 0]
    gpu_names = dict(zip(report.gpus["device_id"], report.gpus["name"], strict=False))
    tracks = []
    for device, streams in frame.groupby("device_id", sort=True):
        device = int(device)
        # "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3": the vendor says nothing here.
        gpu_name = str(gpu_names.get(device) or "").removeprefix("NVIDIA ").strip()
        gpu_label = f"GPU {device} · {gpu_name}" if gpu_name else f"GPU {device}"
        group = (name, "CUDA HW", gpu_label)
        base = f"{name}/gpu{device}"
        streams = streams.sort_values(["stream_id", "global_pid", "context_id"])
        all_parts = tuple(
            (k, int(t))
            for t in streams["track_id"]
            for k in GPU_TABLES
            if tables[k].bounds(int(t))[1] > tables[k].bounds(int(t))[0]
        )
        tracks.append(Track(f"{base}/all", "All streams", group, index, "gpu_all", all_parts))
        dup = streams["stream_id"].duplicated(keep=False)
        for row, is_dup in zip(streams.itertuples(index=False), dup, strict=False):
            sid = int(row.stream_id)
            label, key = f"Stream {sid}", f"{base}/stream{sid}"
            if is_dup:
                pid, ctx = int(pid_of(row.global_pid)), int(row.context_id)
                label += f" (pid {pid}, ctx {ctx})"
                key += f"/pid{pid}/ctx{ctx}"
            parts = tuple(
                (k, int(row.track_id))
                for k in GPU_TABLES
                if tables[k].bounds(int(row.track_id))[1] > tables[k].bounds(int(row.track_id))[0]
            )
            tracks.append(Track(key, label, group, index, "gpu_stream", parts))
        tracks += _projected_tracks(tables, device, group, base, index)
    group = (name, "CUDA HW", "NVTX projected (all GPUs)")
    tracks += _projected_tracks(tables, -1, group, f"{name}/gpus", index)
    return tracks


def _projected_tracks(
    tables: dict[str, SliceTable], device: int, group: tuple[str, ...], base: str, index: int
) -> list[Track]:
    projected = tables.get("nvtx_gpu")
    if projected is None:
        return []
    keys = projected._cache["keys"]
    tracks = []
    for track_id, row in enumerate(keys.itertuples(index=False)):
        if int(row.device_id) != device:
            continue
        level = int(row.level)
        label = "NVTX (GPU)" if level == 0 else f"NVTX (GPU) ·{level}"
        tracks.append(
            Track(
                f"{base}/nvtx/L{level}",
                label,
                group,
                index,
                "nvtx_gpu",
                (("nvtx_gpu", track_id),),
                level,
            )
        )
    return tracks
