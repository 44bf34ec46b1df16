"""GPU idle time: the ``gpu_gaps`` and ``gpu_time_util`` recipes (nsys expert rules).

spec: nsys-sqlite.md §5.4. The GPU operations are the kernel, memcpy and memset rows with
``start > 0``, keyed by process (PID from ``globalPid``) and device, plus the CUDA profiler
overhead rows of ``PROFILER_OVERHEAD`` (§1.12) whose span lies strictly inside that
process/device's [first op start, last op end] — an overhead on one thread counts for every
device of its process.

Each report's rule output is computed in its map step (it depends on that report only) and
the reduce step concatenates them with a ``File`` column, as nsys's recipes do. nsys's
recipes hand ``--start``, ``--end``, ``--nvtx`` and ``--rows`` to the rule (the operations
and overhead rows the filter keeps; at most ``--rows`` rows per report, default all), and
take a report the filter SKIPs (its NVTX range missing) as no data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.engine import sqlite_round
from strata.analysis.errors import AnalysisError
from strata.analysis.filters import FilterSkip
from strata.analysis.gpu_idle import (
    GPU_OPS_TABLES,
    find_gaps,
    gpu_ops,
    low_utilization,
    time_utilization,
)
from strata.analysis.recipes._filter import row_filter
from strata.analysis.recipes.base import (
    RULE_FILTER,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    heatmap,
    table_or_empty,
)
from strata.analysis.timefmt import pluralize

__all__ = ["GpuGaps", "GpuTimeUtil", "find_gaps", "gpu_ops", "time_utilization"]

_GAP_COLUMNS = ["Row#", "Duration", "Start", "PID", "Device ID", "Context ID"]
_UTIL_COLUMNS = ["Row#", "In-Use", "Duration", "Start", "PID", "Device ID", "Context ID"]


@dataclass(frozen=True)
class _RulePartial:
    analysis: pd.DataFrame
    chunks: pd.DataFrame | None = None


def _concat_files(partials: Sequence[FilePartial], attr: str, columns: list[str]) -> pd.DataFrame:
    frames = [getattr(p.partial, attr).assign(File=p.file) for p in partials]
    return table_or_empty(frames, [*columns, "File"])


def _limited(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    """SQLite's ``LIMIT rows`` of the rule's query: negative is no limit."""
    return frame if rows < 0 else frame.iloc[:rows]


class _GpuIdleRule(Recipe):
    """A GPU idle rule as a recipe: each report's rule output from its filtered GPU operations."""

    tables = GPU_OPS_TABLES
    options_taken = RULE_FILTER

    def rule(self, ops: pd.DataFrame, options: RecipeOptions) -> _RulePartial:
        """Return the rule's output for a report's GPU operations (at least one)."""
        raise NotImplementedError

    def map(self, report_path: Path, options: RecipeOptions) -> _RulePartial | None:
        """The filter of ``options`` picks the operations (none, or a SKIP: no data)."""
        report = self.load_report(report_path, options)
        try:
            keep = row_filter(report, options)
        except FilterSkip:
            return None
        ops = gpu_ops(report, keep)
        return None if ops.empty else self.rule(ops, options)


class GpuGaps(_GpuIdleRule):
    """``gpu_gaps``: stretches where a GPU of a process ran nothing, per report."""

    name = "gpu_gaps"
    description = "GPU idle gaps longer than --gap ms, per process and device"

    def check_options(self, options: RecipeOptions) -> None:
        if options.gap_ms < 0:
            raise AnalysisError(f"--gap must be >= 0 ms, not {options.gap_ms}")

    def rule(self, ops: pd.DataFrame, options: RecipeOptions) -> _RulePartial:
        return _RulePartial(_limited(find_gaps(ops, round(options.gap_ms * 1e6)), options.rows))

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        table = _concat_files(partials, "analysis", _GAP_COLUMNS)
        lines = [
            f"gpu_gaps: {pluralize(len(table), 'gap')} longer than {options.gap_ms:g} ms "
            f"in {pluralize(len(partials), 'report')}"
        ]
        for row in table.sort_values("Duration", ascending=False).head(5).to_dict("records"):
            lines.append(
                f"  {row['File']}: {int(row['Duration']):,d} ns idle from {int(row['Start']):,d}"
                f" ns (PID {row['PID']}, device {row['Device ID']})"
            )
        return self.output(partials, {"analysis": table}, "\n".join(lines))


class GpuTimeUtil(_GpuIdleRule):
    """``gpu_time_util``: chunks of low GPU time utilisation, per report (spec §5.4)."""

    name = "gpu_time_util"
    description = "time regions with GPU utilisation below --threshold %"

    def check_options(self, options: RecipeOptions) -> None:
        if not 1 <= options.chunks <= 1000:
            raise AnalysisError(f"--chunks must be between 1 and 1000, not {options.chunks}")

    def rule(self, ops: pd.DataFrame, options: RecipeOptions) -> _RulePartial:
        chunks = time_utilization(ops, options.chunks)
        # The rule's chunk query has the LIMIT (an aggregate: applied before the ranking).
        limit = None if options.rows < 0 else options.rows
        low = low_utilization(chunks, options.threshold_pct, limit=limit)
        return _RulePartial(_limited(low, options.rows), chunks)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        table = _concat_files(partials, "analysis", _UTIL_COLUMNS)
        chunk_columns = ["PID", "Device ID", "Context ID", "Chunk", "Start", "Duration", "In-Use"]
        chunks = _concat_files(partials, "chunks", chunk_columns)
        chunks["In-Use"] = sqlite_round(chunks["In-Use"].to_numpy(np.float64))
        plots = {}
        if len(chunks):
            rows = chunks["File"] + " pid " + chunks["PID"].astype(str)
            rows += " gpu " + chunks["Device ID"].astype(str)
            title = "GPU time utilisation (%) per chunk"
            ylabel = "report, process, device"
            plots["heatmap"] = heatmap(chunks, rows, "Chunk", "In-Use", title, ylabel, "chunk")
        summary = (
            f"gpu_time_util: {pluralize(len(table), 'region')} below {options.threshold_pct:g}% "
            f"in {pluralize(len(partials), 'report')}, "
            f"{pluralize(options.chunks, 'chunk')} per process and device"
        )
        return self.output(partials, {"analysis": table, "utilization": chunks}, summary, plots)
