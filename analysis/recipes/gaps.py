"""GPU idle time: the ``gpu_gaps`` and ``gpu_time_util`` recipes (nsys expert rules).

spec: nsys-sqlite.md §5.4. The GPU operations are the kernel, memcpy and memset rows with
``start > 0``, keyed by process (PID from ``globalPid``) and device, plus the CUDA profiler
overhead rows of ``PROFILER_OVERHEAD`` (§1.12) whose span lies strictly inside that
process/device's [first op start, last op end] — an overhead on one thread counts for every
device of its process.

Each report's rule output is computed in its map step (it depends on that report only) and
the reduce step concatenates them with a ``File`` column, as nsys's recipes do.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis._sqlite import ReportDatabase
from analysis.engine import sqlite_round
from analysis.errors import AnalysisError
from analysis.model import Report
from analysis.open import open_report, sqlite_source
from analysis.recipes.base import (
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    register,
    table_or_empty,
)
from analysis.recipes.summaries import files_table
from analysis.schema import pid_of

__all__ = ["GpuGaps", "GpuTimeUtil", "find_gaps", "gpu_ops", "time_utilization"]

log = logging.getLogger(__name__)

#: PROFILER_OVERHEAD names the CUDA GPU rules count as GPU time (spec §1.12).
CUDA_OVERHEAD_NAMES = (
    "CUDA profiling data flush overhead",
    "CUDA profiling stop overhead",
    "CUDA profiling overhead",
)
_GAP_COLUMNS = ["Row#", "Duration", "Start", "PID", "Device ID", "Context ID"]
_UTIL_COLUMNS = ["Row#", "In-Use", "Duration", "Start", "PID", "Device ID", "Context ID"]


def _overhead(report: Report) -> pd.DataFrame:
    """Return the CUDA profiler overhead rows: ``start_ns``, ``end_ns``, ``pid`` (int64)."""
    empty = pd.DataFrame({c: np.empty(0, np.int64) for c in ("start_ns", "end_ns", "pid")})
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
            f"WHERE s.value IN ({marks}) AND po.start IS NOT NULL AND po.end IS NOT NULL",
            CUDA_OVERHEAD_NAMES,
        )
    if not rows:
        return empty
    data = np.asarray(rows, dtype=np.int64)
    return pd.DataFrame({"start_ns": data[:, 0], "end_ns": data[:, 1], "pid": pid_of(data[:, 2])})


#: The event tables :func:`gpu_ops` reads.
GPU_OPS_TABLES = ("kernels", "memcpy", "memset")


def gpu_ops(report: Report) -> pd.DataFrame:
    """Return the GPU operations the GPU rules look at, sorted by (pid, device_id, start_ns).

    Returns
    -------
    DataFrame
        ``start_ns``, ``end_ns`` (int64 ns), ``pid``, ``device_id``, ``context_id`` (int64).
        Overhead rows carry the context of their process/device's first operation.
    """
    parts = []
    for kind in GPU_OPS_TABLES:
        table = report.tables[kind]
        keep = table.start_ns > 0
        parts.append(
            pd.DataFrame(
                {
                    "start_ns": table.start_ns[keep],
                    "end_ns": table.end_ns[keep],
                    "pid": pid_of(table["global_pid"][keep]),
                    "device_id": table["device_id"][keep].astype(np.int64),
                    "context_id": table["context_id"][keep].astype(np.int64),
                }
            )
        )
    ops = pd.concat(parts, ignore_index=True).sort_values(
        ["pid", "device_id", "start_ns"], kind="stable"
    )
    overhead = _overhead(report)
    if len(ops) and len(overhead):
        spans = ops.groupby(["pid", "device_id"], sort=False).agg(
            lo=("start_ns", "min"), hi=("end_ns", "max"), context_id=("context_id", "first")
        )
        joined = overhead.merge(spans.reset_index(), on="pid")
        inside = (joined["start_ns"] > joined["lo"]) & (joined["end_ns"] < joined["hi"])
        extra = joined.loc[inside, ["start_ns", "end_ns", "pid", "device_id", "context_id"]]
        ops = pd.concat([ops, extra], ignore_index=True).sort_values(
            ["pid", "device_id", "start_ns"], kind="stable"
        )
    return ops.reset_index(drop=True)


def _group_bounds(ops: pd.DataFrame) -> npt.NDArray[np.int64]:
    key = ops["pid"].to_numpy() * (1 << 32) + ops["device_id"].to_numpy()
    change = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return np.r_[change, len(key)].astype(np.int64)


def find_gaps(ops: pd.DataFrame, min_gap_ns: int) -> pd.DataFrame:
    """Return the idle stretches longer than ``min_gap_ns`` between GPU operations.

    Per process and device, starts and ends are sorted separately; end #j paired with
    start #j+1 bounds a stretch where every started operation has ended (spec §5.4). Leading
    and trailing idle time is never a gap.

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


def _busy_until(starts: np.ndarray, ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Return, per time ``t``, the summed busy time of all operations up to ``t``.

    sum_i clip(t - start_i, 0, dur_i) = sum_{s <= t} (t - s) - sum_{e <= t} (t - e), from the
    sorted starts and ends and their prefix sums; busy time in [a, b] is F(b) - F(a).
    """
    s = np.sort(starts)
    e = np.sort(ends)
    cs = np.r_[0, np.cumsum(s)]
    ce = np.r_[0, np.cumsum(e)]
    ns = np.searchsorted(s, t, side="right")
    ne = np.searchsorted(e, t, side="right")
    return (ns * t - cs[ns]) - (ne * t - ce[ne])


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
        origin = int(group["start_ns"].min())
        starts = group["start_ns"].to_numpy() - origin
        ends = group["end_ns"].to_numpy() - origin
        span = int(ends.max())
        size = int(np.ceil(float(span) / chunks))  # float then ceil, as the nsys rule
        cstart = np.arange(chunks, dtype=np.int64) * size
        cend = np.minimum(cstart + size, span)
        keep = cstart < cend
        cstart, cend = cstart[keep], cend[keep]
        busy = _busy_until(starts, ends, cend) - _busy_until(starts, ends, cstart)
        frames.append(
            pd.DataFrame(
                {
                    "PID": int(group["pid"].iloc[0]),
                    "Device ID": int(group["device_id"].iloc[0]),
                    "Context ID": int(group["context_id"].iloc[0]),
                    "Chunk": np.flatnonzero(keep).astype(np.int64),
                    "Start": cstart + origin,
                    "Duration": cend - cstart,
                    "In-Use": 100.0 * busy / (cend - cstart),
                }
            )
        )
    columns = ["PID", "Device ID", "Context ID", "Chunk", "Start", "Duration", "In-Use"]
    return table_or_empty(frames, columns)


def low_utilization(chunks: pd.DataFrame, threshold_pct: float) -> pd.DataFrame:
    """Return runs of consecutive chunks below ``threshold_pct``, merged (spec §5.4).

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


@dataclass(frozen=True)
class _RulePartial:
    analysis: pd.DataFrame
    chunks: pd.DataFrame | None = None


def _concat_files(partials: Sequence[FilePartial], attr: str, columns: list[str]) -> pd.DataFrame:
    frames = [getattr(p.partial, attr).assign(File=p.file) for p in partials]
    return table_or_empty(frames, [*columns, "File"])


class GpuGaps(Recipe):
    """``gpu_gaps``: stretches where a GPU of a process ran nothing, per report."""

    name = "gpu_gaps"
    description = "GPU idle gaps longer than --gap ms, per process and device"
    tables = GPU_OPS_TABLES

    def check_options(self, options: RecipeOptions) -> None:
        if options.gap_ms < 0:
            raise AnalysisError(f"--gap must be >= 0 ms, not {options.gap_ms}")

    def map(self, report_path: Path, options: RecipeOptions) -> _RulePartial | None:
        report = open_report(report_path, use_cache=options.use_cache, tables=self.tables)
        ops = gpu_ops(report)
        if ops.empty:
            return None
        return _RulePartial(find_gaps(ops, round(options.gap_ms * 1e6)))

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        table = _concat_files(partials, "analysis", _GAP_COLUMNS)
        lines = [
            f"gpu_gaps: {len(table)} gap(s) longer than {options.gap_ms:g} ms "
            f"in {len(partials)} report(s)"
        ]
        for row in table.sort_values("Duration", ascending=False).head(5).to_dict("records"):
            lines.append(
                f"  {row['File']}: {int(row['Duration']):,d} ns idle from {int(row['Start']):,d}"
                f" ns (PID {row['PID']}, device {row['Device ID']})"
            )
        return RecipeOutput(
            recipe=self.name,
            tables={"analysis": table, "files": files_table(partials)},
            summary="\n".join(lines),
            files=[p.file for p in partials],
        )


class GpuTimeUtil(Recipe):
    """``gpu_time_util``: chunks of low GPU time utilisation, per report (spec §5.4)."""

    name = "gpu_time_util"
    description = "time regions with GPU utilisation below --threshold %"
    tables = GPU_OPS_TABLES

    def check_options(self, options: RecipeOptions) -> None:
        if not 1 <= options.chunks <= 1000:
            raise AnalysisError(f"--chunks must be between 1 and 1000, not {options.chunks}")

    def map(self, report_path: Path, options: RecipeOptions) -> _RulePartial | None:
        report = open_report(report_path, use_cache=options.use_cache, tables=self.tables)
        ops = gpu_ops(report)
        if ops.empty:
            return None
        chunks = time_utilization(ops, options.chunks)
        return _RulePartial(low_utilization(chunks, options.threshold_pct), chunks)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        table = _concat_files(partials, "analysis", _UTIL_COLUMNS)
        chunk_columns = ["PID", "Device ID", "Context ID", "Chunk", "Start", "Duration", "In-Use"]
        chunks = _concat_files(partials, "chunks", chunk_columns)
        chunks["In-Use"] = sqlite_round(chunks["In-Use"].to_numpy(np.float64))
        plots = {}
        if len(chunks):
            rows = chunks["File"] + " pid " + chunks["PID"].astype(str)
            rows += " gpu " + chunks["Device ID"].astype(str)
            grid = chunks.assign(_row=rows).pivot_table(
                index="_row", columns="Chunk", values="In-Use", aggfunc="first", sort=False
            )
            grid.index.name = None
            plots["heatmap"] = PlotSpec(
                kind="heatmap",
                title="GPU time utilisation (%) per chunk",
                xlabel="chunk",
                ylabel="report, process, device",
                data=grid,
            )
        summary = (
            f"gpu_time_util: {len(table)} region(s) below {options.threshold_pct:g}% in "
            f"{len(partials)} report(s), {options.chunks} chunks per process and device"
        )
        return RecipeOutput(
            recipe=self.name,
            tables={"analysis": table, "utilization": chunks, "files": files_table(partials)},
            plots=plots,
            summary=summary,
            files=[p.file for p in partials],
        )


register(GpuGaps())
register(GpuTimeUtil())
