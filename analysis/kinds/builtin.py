"""The built-in event kinds of an Nsight Systems report, one registry entry each.

Every kind of :data:`analysis.model.EVENT_TABLES` has an entry, plus ``nvtx_gpu`` (NVTX
ranges projected onto the GPU work they launched, spec §4.1). Their names follow
:mod:`analysis.names`; timeline box labels are the short forms the nsys GUI draws (a
kernel's base name, an NVTX range's text) while tooltips and summaries say the full name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis._tablespecs import SPECS
from strata.analysis.counters import memory_slices, metric_slices
from strata.analysis.cpu import core_intervals, thread_intervals
from strata.analysis.kinds.details import (
    counter_details,
    cuda_api_details,
    gpu_details,
    nvtx_details,
)
from strata.analysis.kinds.registry import (
    DURATION,
    EventKind,
    KindRows,
    Panel,
    Projector,
    register,
    table_rows,
    table_view,
)
from strata.analysis.model import Report, freeze
from strata.analysis.names import EventNames, event_names, kernel_name_ids, memcpy_names, pair_names
from strata.analysis.nvtx import range_rows
from strata.analysis.schema import pid_of, tid_of
from strata.analysis.slices import SliceTable

__all__ = ["BUILTIN_KINDS"]


def _named(kind: str):
    """``names`` of a kind that :func:`analysis.names.event_names` knows."""

    def names(report: Report, rows: KindRows) -> EventNames:
        return event_names(report, kind, rows.rows)

    return names


# --------------------------------------------------------------------------- rows
def _nvtx_ranges(report: Report, _project: Projector) -> KindRows:
    """Push/pop and start/end ranges (marks and other NVTX rows are not events here)."""
    return table_rows(report, "nvtx", range_rows(report))


def _projected(report: Report, project: Projector) -> KindRows:
    """Rows of the NVTX projection: no report table, no tracks (a range spans streams)."""
    proj = project(report)
    n = len(proj)
    return KindRows(
        ("nvtx_gpu",), np.zeros(n, np.int8), np.arange(n, dtype=np.int64),
        proj["start_ns"].to_numpy(np.int64), proj["end_ns"].to_numpy(np.int64), None,
        {c: proj[c].to_numpy(object) for c in ("name", "style", "tid")},
    )  # fmt: skip


def _projected_names(_report: Report, rows: KindRows) -> EventNames:
    return pair_names(rows.columns["name"], rows.columns["style"])


def _projected_where(_report: Report, rows: KindRows) -> tuple[np.ndarray, np.ndarray]:
    row_key, tids = pd.factorize(rows.columns["tid"])
    return row_key, np.array([f"thread {t} NVTX → GPU" for t in tids], dtype=object)


def _samples_names(_report: Report, rows: KindRows) -> EventNames:
    names = np.array(["CPU sample"], dtype=object)
    return EventNames(np.zeros(len(rows), np.int64), names, names)


# --------------------------------------------------------------------------- slices
def _kernel_slices(report: Report) -> SliceTable:
    # Boxes show the short (``base``) name, as the nsys GUI draws them; tooltips say the
    # full stats name (analysis.names.event_name).
    label = np.asarray(kernel_name_ids(report, "base"), dtype=np.int32)
    return table_view("kernels", report.tables["kernels"], label, report.strings.values)


def _memcpy_slices(report: Report) -> SliceTable:
    memcpy = report.tables["memcpy"]
    kinds = memcpy["copy_kind"]
    lo, hi = (int(kinds.min()), int(kinds.max())) if len(kinds) else (0, 0)
    if lo >= 0 and hi < 1 << 10:
        # Label id = copy kind (no pass over the rows); a kind without an enum label has no
        # name (None), as in nsys.
        return table_view("memcpy", memcpy, kinds, memcpy_names(report, np.arange(hi + 1)))
    uniq, label_ids = np.unique(kinds, return_inverse=True)  # odd kinds: a damaged report
    return table_view("memcpy", memcpy, label_ids.ravel(), memcpy_names(report, uniq))


def _string_slices(kind: str, with_color: bool = False):
    """Boxes labelled by the raw ``name_id`` string (an NVTX range's text, not domain:text)."""

    def slices(report: Report) -> SliceTable:
        table = report.tables[kind]
        argb = None
        if with_color:
            colors = table["color"]
            argb = colors if bool(len(colors)) and bool((colors != -1).any()) else None
        return table_view(kind, table, table["name_id"], report.strings.values, argb=argb)

    return slices


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
    return SliceTable(
        kind="cpu",
        start_ns=runs.start_ns,
        end_ns=runs.end_ns,
        track_offsets=freeze(offsets.astype(np.int64)),
        label_ids=freeze(inverse.astype(np.int32)),
        labels=np.array(labels, dtype=object),
        source="",
        track_keys=pd.DataFrame({"cpu": runs.cores}),
    )


def _thread_state_slices(report: Report) -> SliceTable:
    """Per thread, the intervals it ran (SCHED_EVENTS), labelled by the core it ran on.

    Tracks are threads: ``track_keys`` is their ``global_tid`` frame (the thread rows' key),
    as a report table's ``track_keys`` is for the other thread kinds.
    """
    runs = thread_intervals(report)
    gtids = np.unique(runs.global_tid)
    offsets = np.searchsorted(runs.global_tid, np.append(gtids, np.iinfo(np.int64).max))
    offsets[-1] = len(runs)
    cores, label_ids = np.unique(runs.cpu, return_inverse=True)
    return SliceTable(
        kind="thread_state",
        start_ns=runs.start_ns,
        end_ns=runs.end_ns,
        track_offsets=freeze(offsets.astype(np.int64)),
        label_ids=freeze(label_ids.reshape(-1).astype(np.int32)),
        labels=np.array([f"Running on core {c}" for c in cores.tolist()], dtype=object),
        source="",
        track_keys=pd.DataFrame({"global_tid": gtids.astype(np.int64)}),
    )


def _nvtx_gpu_slices(report: Report, frame: pd.DataFrame | None = None) -> SliceTable | None:
    """The projected ranges' boxes; ``frame``: ``project_nvtx(report)`` when the caller
    keeps it (a ReportSet), else computed here."""
    if frame is None:
        from strata.analysis.projection import project_nvtx

        frame = project_nvtx(report)
    if frame is None or frame.empty:
        return None
    # Ranges unreachable from a root have no level (spec §4.1 twins): not drawn.
    drawn = np.flatnonzero(frame["level"].notna().to_numpy())
    frame = frame.iloc[drawn]
    if frame.empty:
        return None
    device = np.full(len(frame), _default_device(report), dtype=np.int64)
    level = frame["level"].to_numpy().astype(np.int64)
    start = frame["start_ns"].to_numpy(np.int64)
    keys = pd.DataFrame({"device_id": device, "level": level}).drop_duplicates()
    keys = keys.sort_values(["device_id", "level"]).reset_index(drop=True)
    track = pd.MultiIndex.from_frame(keys).get_indexer(pd.MultiIndex.from_arrays([device, level]))
    order = np.lexsort((start, track))
    names, label_ids = np.unique(frame["name"].astype(str).to_numpy(object), return_inverse=True)
    offsets = np.searchsorted(track[order], np.arange(len(keys) + 1))
    return SliceTable(
        kind="nvtx_gpu",
        start_ns=freeze(start[order]),
        end_ns=freeze(frame["end_ns"].to_numpy(np.int64)[order]),
        track_offsets=freeze(offsets.astype(np.int64)),
        label_ids=freeze(label_ids.astype(np.int32)[order]),
        labels=names.astype(object),
        source="",
        # Projected spans of sibling ranges overlap when the GPU runs behind the CPU.
        is_overlapping=True,
        track_keys=keys,
        projection_rows=freeze(drawn[order].astype(np.int64)),
    )


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


# --------------------------------------------------------------------------- the registry
def _own_table(name: str, label: str, **fields) -> EventKind:
    """A kind whose events are rows of its own report table, read by its spec in SPECS."""
    return EventKind(name, label, (name,), table=SPECS[name], **fields)


_MEMORY_PANELS = (Panel("memcpy", DURATION, "MemOps time"),
                  Panel("memcpy_bytes", "bytes", "MemOps size", "B"))  # fmt: skip
_MEMORY_SUMMARIES = ("cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_gpu_sum",
                     "cuda_api_gpu_sum", "cuda_gpu_trace", "nvtx_gpu_proj_sum")  # fmt: skip

#: Registration order is the order of panel tabs, thread rows and GPU parts.
# fmt: off
BUILTIN_KINDS = (
    _own_table("kernels", "Kernels", names=_named("kernels"), details=gpu_details,
               slices=_kernel_slices, place="gpu",
               panels=(Panel("kernels", DURATION, "CUDA kernels"),),
               outliers=True,
               summaries=("cuda_gpu_kern_sum", "cuda_gpu_kern_gb_sum", "cuda_kern_exec_sum",
                          "cuda_gpu_sum", "cuda_api_gpu_sum", "cuda_gpu_trace",
                          "nvtx_kern_sum", "nvtx_gpu_proj_sum")),
    _own_table("cuda_api", "CUDA API", names=_named("cuda_api"), place="thread",
               details=cuda_api_details,
               panels=(("cuda_api", DURATION),), outliers=True,
               summaries=("cuda_api_sum", "cuda_api_gpu_sum", "cuda_kern_exec_sum",
                          "nvtx_kern_sum")),
    _own_table("memcpy", "Memcpy", names=_named("memcpy"), slices=_memcpy_slices,
               details=gpu_details,
               place="gpu", panels=_MEMORY_PANELS, named_only=True,
               summaries=_MEMORY_SUMMARIES),
    # Boxes, panel and summaries: "[CUDA memset]" (analysis.names).
    _own_table("memset", "Memset", names=_named("memset"), place="gpu", details=gpu_details,
               panels=_MEMORY_PANELS, named_only=True, summaries=_MEMORY_SUMMARIES),
    _own_table("nvtx", "NVTX", locate=_nvtx_ranges, names=_named("nvtx"), details=nvtx_details,
               slices=_string_slices("nvtx", with_color=True), place="thread",
               panels=(Panel("nvtx", DURATION, "NVTX ranges"),), outliers=True, has_style=True,
               summaries=("nvtx_sum", "nvtx_pushpop_sum", "nvtx_startend_sum",
                          "nvtx_pushpop_trace", "nvtx_kern_sum")),
    EventKind("nvtx_gpu", "NVTX (GPU)", ("nvtx", "cuda_api", "kernels", "memcpy", "memset"),
              locate=_projected, names=_projected_names, slices=_nvtx_gpu_slices,
              place="gpu_projected", panels=(Panel("nvtx_gpu", DURATION, "NVTX → GPU"),),
              outliers=True,
              has_style=True, lazy_slices=True, where=_projected_where,
              summaries=("nvtx_gpu_proj_sum", "nvtx_gpu_proj_trace")),
    # OS runtime calls, not the other event classes of OSRT_API (its spec's row_filter).
    _own_table("osrt", "OS runtime", names=_named("osrt"),
               slices=_string_slices("osrt"), place="thread", panels=(("osrt", DURATION),),
               summaries=("osrt_sum",)),
    # Running vs not, per thread (SCHED_EVENTS): first among a thread's rows.
    EventKind("thread_state", "Thread state", ("sched",), slices=_thread_state_slices,
              place="thread"),
    _own_table("samples", "CPU samples", names=_samples_names, place="thread"),
    _own_table("sched", "CPU", slices=_cpu_slices, place="cpu", slice_name="cpu"),
    _own_table("sync", "CUDA synchronization"),
    # Counter rows (analysis.counters): drawn as area charts under their GPU.
    _own_table("gpu_metrics", "GPU metrics", slices=metric_slices,
               place="gpu_counter", details=counter_details),
    _own_table("memory_usage", "Memory usage", slices=memory_slices,
               place="gpu_counter", details=counter_details),
)
# fmt: on

for _kind in BUILTIN_KINDS:
    register(_kind)
