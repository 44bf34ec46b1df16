"""GPU idle time per process and device: the computation behind the ``gpu_gaps`` and
``gpu_time_util`` rules (:mod:`analysis.rules.gpu`) and recipes (:mod:`analysis.recipes.gaps`).

spec: nsys-sqlite.md §5.4. The GPU operations are the kernel, memcpy and memset rows with
``start > 0``, keyed by process (PID from ``globalPid``) and device, plus the CUDA profiler
overhead rows of ``PROFILER_OVERHEAD`` (§1.12) whose span lies strictly inside that
process/device's [first op start, last op end] — an overhead on one thread counts for every
device of its process. (A module of its own, below both the rules and the recipes: the
recipes run rules too.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis._sqlite import ReportDatabase
from strata.analysis.engine import exact_sum, sqlite_round
from strata.analysis.errors import CorruptReportError
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.schema import pid_of

__all__ = [
    "CUDA_OVERHEAD_NAMES",
    "GPU_OPS_TABLES",
    "RowMask",
    "find_gaps",
    "gpu_ops",
    "low_utilization",
    "time_utilization",
]

log = logging.getLogger(__name__)


def _sum_fits_int64(values: npt.NDArray[np.int64]) -> bool:
    """Whether the exact sum of non-negative int64 ``values`` lies in the int64 range."""
    if float(np.add.reduce(np.asarray(values, np.float64))) < 2.0**62:
        return True
    return exact_sum(np.asarray(values, np.int64)) < 2**63


def _concat_or_empty(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """Concatenate ``frames`` (skipping empty ones), or return an empty frame with ``columns``."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return pd.concat(frames, ignore_index=True)


#: PROFILER_OVERHEAD names the CUDA GPU rules count as GPU time (spec §1.12).
CUDA_OVERHEAD_NAMES = (
    "CUDA profiling data flush overhead",
    "CUDA profiling stop overhead",
    "CUDA profiling overhead",
)
_GAP_COLUMNS = ["Row#", "Duration", "Start", "PID", "Device ID", "Context ID"]
_UTIL_COLUMNS = ["Row#", "In-Use", "Duration", "Start", "PID", "Device ID", "Context ID"]


def _overhead(report: Report) -> pd.DataFrame:
    """Return the CUDA profiler overhead rows: ``start_ns``, ``end_ns``, ``pid``,
    ``global_tid`` (int64)."""
    columns = ("start_ns", "end_ns", "pid", "global_tid")
    empty = pd.DataFrame({c: np.empty(0, np.int64) for c in columns})
    if not report.has_source("PROFILER_OVERHEAD"):
        return empty
    source = sqlite_source(report.path)
    if source is None:
        log.info("%s: no SQLite file to read PROFILER_OVERHEAD from", report.name)
        return empty
    marks = ", ".join("?" * len(CUDA_OVERHEAD_NAMES))
    with ReportDatabase(source) as db:
        rows = db.execute(
            "SELECT po.start, po.end, po.globalTid FROM PROFILER_OVERHEAD AS po "
            "JOIN StringIds AS s ON s.id = po.nameId "
            f"WHERE s.value IN ({marks}) AND po.start IS NOT NULL AND po.end IS NOT NULL "
            # A row of no thread belongs to no process: nsys's join on the PID drops it too.
            "AND po.globalTid IS NOT NULL",
            CUDA_OVERHEAD_NAMES,
        )
    if not rows:
        return empty
    _check_overhead(report, rows)
    data = np.asarray(rows, dtype=np.int64)
    return pd.DataFrame(
        {"start_ns": data[:, 0], "end_ns": data[:, 1], "pid": pid_of(data[:, 2]),
         "global_tid": data[:, 2]}
    )  # fmt: skip


def _check_overhead(report: Report, rows: list[tuple]) -> None:
    """Refuse overhead rows that would count as wrong busy time (the loader's event rules).

    Raises
    ------
    CorruptReportError
        A start, end or thread that is not an integer (text, a blob, a real number: SQLite
        stores what it is given), or a row that ends before it starts.
    """
    if any(type(v) is not int for row in rows for v in row):
        raise CorruptReportError(
            report.path, "PROFILER_OVERHEAD has a start, end or globalTid that is not an integer"
        )
    backwards = sum(1 for start, end, _ in rows if end < start)
    if backwards:
        raise CorruptReportError(
            report.path, f"PROFILER_OVERHEAD has {backwards} rows that end before they start"
        )


#: The event tables :func:`gpu_ops` reads.
GPU_OPS_TABLES = ("kernels", "memcpy", "memset")


class RowMask(Protocol):
    """Which rows a time/process filter keeps (:class:`analysis.rules.RowFilter`)."""

    def mask(
        self, start: npt.ArrayLike, end: npt.ArrayLike, global_tid=None, global_pid=None
    ) -> npt.NDArray[np.bool_]: ...


def gpu_ops(report: Report, keep: RowMask | None = None) -> pd.DataFrame:
    """Return the GPU operations the GPU rules look at, sorted by (pid, device_id, start_ns).

    ``keep``: only the operations and overhead rows it keeps (``nsys analyze``'s
    ``start``/``end``/``nvtx`` options); None: all of them.

    Returns
    -------
    DataFrame
        ``start_ns``, ``end_ns`` (int64 ns), ``pid``, ``device_id``, ``context_id``,
        ``range_context_id`` (int64): the context nsys's rules name for a process/device
        (see :func:`_range_contexts`), which overhead rows carry as their own.
    """
    parts = []
    for kind in GPU_OPS_TABLES:
        table = report.tables[kind]
        rows = table.start_ns > 0
        if keep is not None:
            rows &= keep.mask(table.start_ns, table.end_ns, global_pid=table["global_pid"])
        # In the source's row order: nsys's SQL scans the tables so (see _range_contexts).
        rows = np.flatnonzero(rows)
        rows = rows[np.argsort(table["row_id"][rows], kind="stable")]
        parts.append(
            pd.DataFrame(
                {
                    "start_ns": table.start_ns[rows],
                    "end_ns": table.end_ns[rows],
                    "pid": pid_of(table["global_pid"][rows]),
                    "device_id": table["device_id"][rows].astype(np.int64),
                    "context_id": table["context_id"][rows].astype(np.int64),
                }
            )
        )
    scanned = pd.concat(parts, ignore_index=True)
    contexts = _range_contexts(scanned)
    ops = scanned.sort_values(["pid", "device_id", "start_ns"], kind="stable")
    overhead = _overhead(report)
    if keep is not None and len(overhead):
        overhead = overhead[
            keep.mask(overhead["start_ns"], overhead["end_ns"], global_tid=overhead["global_tid"])
        ]
    if len(ops) and len(overhead):
        spans = ops.groupby(["pid", "device_id"], sort=False).agg(
            lo=("start_ns", "min"), hi=("end_ns", "max")
        )
        spans = spans.join(contexts)
        joined = overhead.merge(spans.reset_index(), on="pid")
        inside = (joined["start_ns"] > joined["lo"]) & (joined["end_ns"] < joined["hi"])
        extra = joined.loc[inside, ["start_ns", "end_ns", "pid", "device_id", "context_id"]]
        ops = pd.concat([ops, extra], ignore_index=True).sort_values(
            ["pid", "device_id", "start_ns"], kind="stable"
        )
    if len(ops):
        keys = pd.MultiIndex.from_frame(ops[["pid", "device_id"]])
        ops["range_context_id"] = contexts.reindex(keys).to_numpy(np.int64)
    else:
        ops["range_context_id"] = np.empty(0, np.int64)
    return ops.reset_index(drop=True)


def _range_contexts(scanned: pd.DataFrame) -> pd.Series:
    """(pid, device_id) -> the context of its operation that ends last.

    nsys's SQL takes it as a bare column beside ``min(start), max(end)``, which SQLite fills
    from the row of the last aggregate: the first row, in scan order (kernels, memcpy,
    memset, each in rowid order), that reaches the largest end.
    """
    if scanned.empty:
        index = pd.MultiIndex.from_arrays([[], []], names=["pid", "device_id"])
        return pd.Series(np.empty(0, np.int64), index=index, name="context_id")
    last = scanned.groupby(["pid", "device_id"], sort=False)["end_ns"].transform("max")
    at_last = scanned[scanned["end_ns"].to_numpy() == last.to_numpy()]
    first = at_last.drop_duplicates(["pid", "device_id"], keep="first")
    return first.set_index(["pid", "device_id"])["context_id"]


def _group_bounds(ops: pd.DataFrame) -> npt.NDArray[np.int64]:
    """Row bounds of each (pid, device) of ``ops`` sorted by them."""
    # Both columns compared: one packed key would let a device id past 2^32 (a damaged
    # report) merge two processes' devices.
    pid, device = ops["pid"].to_numpy(), ops["device_id"].to_numpy()
    change = np.flatnonzero(np.r_[True, (pid[1:] != pid[:-1]) | (device[1:] != device[:-1])])
    return np.r_[change, len(pid)].astype(np.int64)


def find_gaps(ops: pd.DataFrame, min_gap_ns: int, limit: int | None = None) -> pd.DataFrame:
    """Return the idle stretches longer than ``min_gap_ns`` between GPU operations.

    Per process and device, starts and ends are sorted separately; end #j paired with
    start #j+1 bounds a stretch where every started operation has ended (spec §5.4). Leading
    and trailing idle time is never a gap. ``limit``: only the first gaps by (process,
    device, time), before they are ranked (the rule's ``rows=`` cuts its gap query so).

    Returns
    -------
    DataFrame
        ``Row#`` (by duration desc, then start), ``Duration`` (ns), ``Start`` (ns), ``PID``,
        ``Device ID``, ``Context ID`` (of the operation that ended), all int64.
    """
    if len(ops) < 2:
        return pd.DataFrame({c: np.empty(0, np.int64) for c in _GAP_COLUMNS})
    bounds = _group_bounds(ops)
    group = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    by_start = np.lexsort((ops["start_ns"].to_numpy(), group))
    by_end = np.lexsort((ops["end_ns"].to_numpy(), group))
    starts = ops["start_ns"].to_numpy()[by_start]
    ends = ops["end_ns"].to_numpy()[by_end]
    same = group[:-1] == group[1:]
    gap_start, gap_end = ends[:-1], starts[1:]
    keep = same & (gap_end > gap_start) & ((gap_end - gap_start) > min_gap_ns)
    rows = np.flatnonzero(keep)
    if limit is not None and limit >= 0:
        rows = rows[:limit]
    ended = by_end[rows]
    table = pd.DataFrame(
        {
            "Duration": (gap_end - gap_start)[rows],
            "Start": gap_start[rows],
            "PID": ops["pid"].to_numpy()[ended],
            "Device ID": ops["device_id"].to_numpy()[ended],
            "Context ID": ops["context_id"].to_numpy()[ended],
        }
    )
    table = table.sort_values(["Duration", "Start"], ascending=[False, True], kind="stable")
    table.insert(0, "Row#", np.arange(1, len(table) + 1, dtype=np.int64))
    return table.reset_index(drop=True)


def _busy_until(starts: np.ndarray, ends: np.ndarray, t: np.ndarray, exact: bool) -> np.ndarray:
    """Return, per time ``t``, the summed busy time of all operations up to ``t``.

    sum_i clip(t - start_i, 0, dur_i) = sum_{s <= t} (t - s) - sum_{e <= t} (t - e), from the
    sorted starts and ends and their prefix sums; busy time in [a, b] is F(b) - F(a).

    The int64 prefix sums wrap on long traces with many operations, but every step is a
    sum or product, so F(b) - F(a) is still right modulo 2^64, hence exact when it fits
    int64: it does when the operations' durations add up to less than 2^63. Otherwise
    (``exact``: durations near 2^62, a damaged report) the sums are Python integers.
    """
    s = np.sort(starts)
    e = np.sort(ends)
    ns = np.searchsorted(s, t, side="right")
    ne = np.searchsorted(e, t, side="right")
    dtype = object if exact else np.int64
    s, e, t = s.astype(dtype), e.astype(dtype), t.astype(dtype)
    cs = np.concatenate([np.zeros(1, dtype), np.cumsum(s)])
    ce = np.concatenate([np.zeros(1, dtype), np.cumsum(e)])
    return (ns * t - cs[ns]) - (ne * t - ce[ne])


def _chunk_bounds(span: int, chunks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, start, end) of the non-empty chunks of ``[0, span]`` (int64 ns), nsys's rule.

    Chunks last ``ceil(float(span) / chunks)`` ns (float, as the nsys rule computes it), the
    last one clipped to the span. In Python integers: near 2^63 that size times the chunk
    count can pass int64 (only chunks that start inside the span are kept).
    """
    size = int(np.ceil(float(span) / chunks))
    kept = [(k, k * size, min(k * size + size, span)) for k in range(chunks) if k * size < span]
    if not kept:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    index, cstart, cend = (np.asarray(c, dtype=np.int64) for c in zip(*kept, strict=True))
    return index, cstart, cend


def time_utilization(ops: pd.DataFrame, chunks: int) -> pd.DataFrame:
    """Return every chunk's GPU time utilisation, per process and device (spec §5.4).

    The span [first start, last end] is cut into ``chunks`` chunks of
    ``ceil(span / chunks)`` ns (the last one clipped, empty ones dropped); a chunk's
    utilisation is 100 x (time covered by operations, overlapping streams added) / length.

    Returns
    -------
    DataFrame
        ``PID``, ``Device ID``, ``Context ID``, ``Chunk`` (int64 index), ``Start``,
        ``Duration`` (int64 ns) and ``In-Use`` (float64 %, unrounded).
    """
    frames = []
    bounds = _group_bounds(ops) if len(ops) else np.zeros(1, np.int64)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        group = ops.iloc[lo:hi]
        # Times relative to the span start keep the prefix sums far from int64 overflow.
        # Starts are > 0 and ends >= starts: neither difference can wrap.
        origin = int(group["start_ns"].min())
        starts = group["start_ns"].to_numpy() - origin
        ends = group["end_ns"].to_numpy() - origin
        index, cstart, cend = _chunk_bounds(int(ends.max()), chunks)
        exact = not _sum_fits_int64(ends - starts)
        busy = _busy_until(starts, ends, cend, exact) - _busy_until(starts, ends, cstart, exact)
        frames.append(
            pd.DataFrame(
                {
                    "PID": int(group["pid"].iloc[0]),
                    "Device ID": int(group["device_id"].iloc[0]),
                    "Context ID": int(group["range_context_id"].iloc[0]),
                    "Chunk": index,
                    "Start": cstart + origin,
                    "Duration": cend - cstart,
                    "In-Use": (100.0 * busy / (cend - cstart)).astype(np.float64),
                }
            )
        )
    columns = ["PID", "Device ID", "Context ID", "Chunk", "Start", "Duration", "In-Use"]
    return _concat_or_empty(frames, columns)


def low_utilization(
    chunks: pd.DataFrame, threshold_pct: float, limit: int | None = None
) -> pd.DataFrame:
    """Return runs of consecutive chunks below ``threshold_pct``, merged (spec §5.4).

    ``limit``: only the first runs by (run, device, process), before they are ranked (the
    rule's ``rows=`` cuts its chunk query so; a run is numbered by its first chunk less its
    rank among the low chunks of its process and device).

    Returns
    -------
    DataFrame
        ``Row#`` (by In-Use, then Duration), ``In-Use`` (size-weighted mean %, rounded to
        0.1), ``Duration``, ``Start`` (int64 ns), ``PID``, ``Device ID``, ``Context ID``.
    """
    low = chunks[chunks["In-Use"] < threshold_pct]
    if low.empty:
        return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in _UTIL_COLUMNS})
    low = low.assign(
        _run=low["Chunk"]
        - low.groupby(["PID", "Device ID"], sort=False).cumcount().to_numpy(np.int64),
        _weighted=low["Duration"] * low["In-Use"],
        _end=low["Start"] + low["Duration"],
    )
    runs = low.groupby(["PID", "Device ID", "_run"], sort=False).agg(
        start=("Start", "min"),
        end=("_end", "max"),
        weighted=("_weighted", "sum"),
        size=("Duration", "sum"),
        context=("Context ID", "first"),
    )
    runs = runs.reset_index()
    if limit is not None and limit >= 0:
        runs = runs.sort_values(["_run", "Device ID", "PID"], kind="stable").iloc[:limit]
    table = pd.DataFrame(
        {
            "In-Use": sqlite_round(runs["weighted"].to_numpy() / runs["size"].to_numpy()),
            "Duration": (runs["end"] - runs["start"]).to_numpy(np.int64),
            "Start": runs["start"].to_numpy(np.int64),
            "PID": runs["PID"].to_numpy(np.int64),
            "Device ID": runs["Device ID"].to_numpy(np.int64),
            "Context ID": runs["context"].to_numpy(np.int64),
        }
    )
    table = table.sort_values(["In-Use", "Duration"], kind="stable").reset_index(drop=True)
    table.insert(0, "Row#", np.arange(1, len(table) + 1, dtype=np.int64))
    return table
