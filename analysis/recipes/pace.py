"""``cuda_gpu_kern_pace``: how one kernel progresses, instance by instance, in every report.

spec: nsys-sqlite.md §5.4. Kernels are selected by ``shortName`` equal to ``--name`` and
taken in start order. Per instance: duration = end - start, delta = start - previous end
(first instance: start - 0), and their running sums. Across reports each report's times are
shifted by its session start relative to the earliest one (``utcEpochNs``), so ranks of one
job line up on one clock. Tables have one row per iteration and one column per report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.engine import sqlite_round
from analysis.errors import AnalysisError
from analysis.open import open_report
from analysis.recipes.base import (
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    register,
)
from analysis.recipes.summaries import files_table

__all__ = ["CudaGpuKernPace", "describe"]

_PACE_COLUMNS = ("start", "end", "duration", "duration_accum", "delta", "delta_accum")


@dataclass(frozen=True)
class PacePartial:
    """One report's instances of the kernel (start order) and its session start."""

    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    session_start_utc_ns: int


def describe(values: pd.DataFrame, axis: int) -> pd.DataFrame:
    """Return pandas statistics along ``axis`` (spec §5.3 family (b)), rounded to 0.1.

    Columns: ``Count`` (int64), ``Mean``, ``Std`` (ddof 1, NaN for one value), ``Min``,
    ``Q1``, ``Median``, ``Q3`` (linear interpolation), ``Max``, ``Sum`` (float64 ns).
    """
    data = values.astype(np.float64)
    table = pd.DataFrame(
        {
            "Count": data.count(axis=axis).astype(np.int64),
            "Mean": data.mean(axis=axis),
            "Std": data.std(axis=axis, ddof=1),
            "Min": data.min(axis=axis),
            "Q1": data.quantile(0.25, axis=axis),
            "Median": data.quantile(0.5, axis=axis),
            "Q3": data.quantile(0.75, axis=axis),
            "Max": data.max(axis=axis),
            "Sum": data.sum(axis=axis),
        }
    )
    for column in ("Mean", "Std", "Q1", "Median", "Q3"):
        table[column] = sqlite_round(table[column].to_numpy(np.float64))
    return table


def _series(partial: PacePartial, offset_ns: int) -> dict[str, np.ndarray]:
    start, end = partial.start_ns, partial.end_ns
    duration = end - start
    delta = start - np.r_[0, end[:-1]]
    return {
        "start": start + offset_ns,
        "end": end + offset_ns,
        "duration": duration,
        "duration_accum": np.cumsum(duration),
        "delta": delta,
        "delta_accum": np.cumsum(delta),
    }


class CudaGpuKernPace(Recipe):
    """``cuda_gpu_kern_pace --name KERNEL`` across reports."""

    name = "cuda_gpu_kern_pace"
    description = "progress of one kernel (--name, its short name) instance by instance"
    tables = ("kernels",)

    def check_options(self, options: RecipeOptions) -> None:
        if not options.kernel_name:
            raise AnalysisError("cuda_gpu_kern_pace needs --name KERNEL (the kernel's short name)")

    def map(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        report = open_report(report_path, use_cache=options.use_cache, tables=self.tables)
        kernels = report.kernels
        ids = report.strings.find(options.kernel_name or "")
        rows = np.flatnonzero(np.isin(kernels["short_name_id"], ids))
        if len(rows) == 0:
            return None
        rows = rows[np.argsort(kernels.start_ns[rows], kind="stable")]
        return PacePartial(
            start_ns=np.ascontiguousarray(kernels.start_ns[rows]),
            end_ns=np.ascontiguousarray(kernels.end_ns[rows]),
            session_start_utc_ns=report.info.session_start_utc_ns,
        )

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        files = [p.file for p in partials]
        first = min(p.partial.session_start_utc_ns for p in partials)
        series = [_series(p.partial, p.partial.session_start_utc_ns - first) for p in partials]
        tables: dict[str, pd.DataFrame] = {}
        for column in _PACE_COLUMNS:
            wide = pd.DataFrame(
                {f: pd.Series(s[column], dtype="Int64") for f, s in zip(files, series, strict=True)}
            )
            wide.insert(0, "Iteration", np.arange(len(wide), dtype=np.int64))
            tables[f"pace_{column}"] = wide
        tables["pace_delta_stats"] = (
            describe(tables["pace_delta"].drop(columns="Iteration"), axis=1)
            .rename_axis("Iteration")
            .reset_index()
        )
        durations = pd.DataFrame(
            {f: pd.Series(s["duration"]) for f, s in zip(files, series, strict=True)}
        )
        rank_stats = describe(durations, axis=0).rename_axis("File").reset_index()
        every = pd.DataFrame({"All": np.concatenate([s["duration"] for s in series])})
        tables["all_stats"] = describe(every, axis=0).reset_index(drop=True)
        tables["rank_stats"] = rank_stats
        tables["files"] = files_table(partials)
        plots = {
            "pace": PlotSpec(
                kind="lines",
                title=f"{options.kernel_name}: duration per instance",
                xlabel="instance",
                ylabel="duration (ns)",
                data=tables["pace_duration"].set_index("Iteration").astype(np.float64),
            ),
            "pace_start": PlotSpec(
                kind="lines",
                title=f"{options.kernel_name}: start time per instance (common clock)",
                xlabel="instance",
                ylabel="start (s)",
                data=tables["pace_start"].set_index("Iteration").astype(np.float64) / 1e9,
            ),
        }
        stats = tables["all_stats"].iloc[0]
        summary = (
            f"cuda_gpu_kern_pace {options.kernel_name}: {int(stats['Count'])} instances in "
            f"{len(files)} report(s); mean {stats['Mean']:,.1f} ns, median "
            f"{stats['Median']:,.1f} ns, max {stats['Max']:,.0f} ns"
        )
        return RecipeOutput(self.name, tables, plots, summary, files)


register(CudaGpuKernPace())
