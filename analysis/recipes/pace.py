"""The pace recipes: how one kernel or range progresses, instance by instance, in every report.

spec: nsys-sqlite.md §5.4. ``cuda_gpu_kern_pace`` selects kernels by ``shortName`` equal to
``--name``, in start order (the NVTX pace recipes are in :mod:`analysis.recipes.nvtx_pace`).
Per instance: duration = end - start, delta = start - previous end
(first instance: start - 0), and their running sums. Across reports each report's times are
shifted by its session start relative to the earliest one (``utcEpochNs``), so ranks of one
job line up on one clock. Tables have one row per iteration and one column per report.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.engine import sqlite_round
from strata.analysis.errors import AnalysisError
from strata.analysis.recipes._exact import (
    RecipeOverflowError,
    checked_add,
    checked_cumsum,
    checked_subtract,
)
from strata.analysis.recipes.base import (
    TIME_FILTER,
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
)
from strata.analysis.timefmt import duration_unit, pluralize

__all__ = ["CudaGpuKernPace", "PacePartial", "PaceRecipe", "describe"]

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
    ``Q1``, ``Median``, ``Q3`` (linear interpolation), ``Max``, ``Sum`` (float64 ns); one
    row per row of ``values`` (``axis=1``) or per column (``axis=0``). Missing values are
    skipped, as pandas does. Computed on one float64 copy of ``values`` with NumPy: pandas
    took 1.2 s and ~600 MiB for 70 k instances x 64 reports, most of a pace reduce.
    """
    data = values.to_numpy(dtype=np.float64, na_value=np.nan)
    index = values.index if axis == 1 else values.columns
    if axis == 0:
        data = data.T
    if data.shape[1] == 0:  # nothing to describe: one missing value per row reads the same
        data = np.full((len(data), 1), np.nan)
    ok = ~np.isnan(data)
    count = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: NaN, as in pandas
        total = np.where(ok, data, 0.0).sum(axis=1)
        mean = np.where(count > 0, total / count, np.nan)
        dev = np.where(ok, data - mean[:, None], 0.0)
        std = np.where(count > 1, np.sqrt((dev * dev).sum(axis=1) / (count - 1)), np.nan)
        del dev
        ordered = np.sort(data, axis=1)  # NaN last: row r's values are ordered[r, :count[r]]
        q1, median, q3 = (_row_quantile(ordered, count, q) for q in (0.25, 0.5, 0.75))
        rows = np.arange(len(count))
        lo = np.where(count > 0, ordered[:, 0], np.nan)
        hi = np.where(count > 0, ordered[rows, np.maximum(count - 1, 0)], np.nan)
    return pd.DataFrame(
        {
            "Count": count.astype(np.int64),
            "Mean": sqlite_round(mean),
            "Std": sqlite_round(std),
            "Min": lo,
            "Q1": sqlite_round(q1),
            "Median": sqlite_round(median),
            "Q3": sqlite_round(q3),
            "Max": hi,
            "Sum": total,
        },
        index=index,
    )


def _row_quantile(
    ordered: npt.NDArray[np.float64], count: npt.NDArray[np.int64], q: float
) -> npt.NDArray[np.float64]:
    """The ``q`` quantile of each row's first ``count`` values (ascending), as NumPy's
    ``linear`` method computes it (pandas' default; NaN for an empty row).

    ``np.nanquantile`` along an axis loops over the rows in Python (seconds for 70 k rows).
    """
    rows = np.arange(len(count))
    last = np.maximum(count - 1, 0)
    virtual = last * q
    below = np.floor(virtual).astype(np.int64)
    above = np.minimum(below + 1, last)
    gamma = virtual - below
    a, b = ordered[rows, below], ordered[rows, above]
    # numpy's _lerp: from the nearer end, so that q = 1 gives b exactly.
    diff = b - a
    value = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    return np.where(count > 0, value, np.nan)


def _series(partial: PacePartial, offset_ns: int = 0) -> dict[str, np.ndarray]:
    """The pace columns of one report, its times shifted by ``offset_ns``.

    Raises
    ------
    RecipeOverflowError
        A value or running sum passes the int64 range (nsys's pandas ``cumsum`` wraps
        there); :meth:`CudaGpuKernPace.map` checks each report with ``offset_ns = 0``.
    """
    start, end = partial.start_ns, partial.end_ns
    duration = checked_subtract(end, start, "a duration")
    delta = checked_subtract(start, np.r_[0, end[:-1]], "a delta (start - previous end)")
    return {
        "start": checked_add(start, offset_ns, "a start shifted to the earliest session"),
        "end": checked_add(end, offset_ns, "an end shifted to the earliest session"),
        "duration": duration,
        "duration_accum": checked_cumsum(duration, "the running sum of durations"),
        "delta": delta,
        "delta_accum": checked_cumsum(delta, "the running sum of deltas"),
    }


def _shifted(partial: FilePartial, offset_ns: int) -> dict[str, np.ndarray]:
    """:func:`_series` of one report on the common clock; an overflow names the report."""
    try:
        return _series(partial.partial, offset_ns)
    except RecipeOverflowError as exc:
        raise RecipeOverflowError(f"{partial.file}: {exc}") from exc


class PaceRecipe(Recipe):
    """How one named thing progresses, instance by instance, in every report (spec §5.4).

    Subclasses return a report's instances (start order of nsys's recipe) from
    :meth:`instances`; the reduce step is common.
    """

    #: What ``--name`` names, for messages and plot titles.
    what = "thing's"
    options_taken = TIME_FILTER
    notebook = "pace.ipynb"

    def check_options(self, options: RecipeOptions) -> None:
        if not options.kernel_name:
            raise AnalysisError(f"{self.name} needs --name NAME (the {self.what} name)")

    def instances(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        """Return the report's instances of ``--name`` in pace order, or None (no data)."""
        raise NotImplementedError

    def map(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        partial = self.instances(report_path, options)
        if partial is None or len(partial.start_ns) == 0:
            return None
        _series(partial)  # a report whose own sums do not fit is skipped, named, here
        return partial

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        files = [p.file for p in partials]
        first = min(p.partial.session_start_utc_ns for p in partials)
        # Python ints: two session starts far apart (a damaged one) give an offset past int64,
        # which checked_add refuses instead of numpy raising or wrapping.
        series = [_shifted(p, int(p.partial.session_start_utc_ns) - int(first)) for p in partials]
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
        duration = tables["pace_duration"].set_index("Iteration").astype(np.float64)
        # In the unit of the durations (25-105 ms kernels read '1e8' over ns ticks).
        scale, unit = duration_unit(duration.to_numpy())
        plots = {
            "pace": PlotSpec(
                kind="lines",
                title=f"{options.kernel_name}: duration per instance",
                xlabel="instance",
                ylabel=f"duration ({unit})",
                data=duration / scale,
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
            f"{self.name} {options.kernel_name}: "
            f"{pluralize(int(stats['Count']), 'instance')} in {pluralize(len(files), 'report')}; "
            f"mean {stats['Mean']:,.1f} ns, median "
            f"{stats['Median']:,.1f} ns, max {stats['Max']:,.0f} ns"
        )
        return self.output(partials, tables, summary, plots)


class CudaGpuKernPace(PaceRecipe):
    """``cuda_gpu_kern_pace --name KERNEL`` across reports."""

    name = "cuda_gpu_kern_pace"
    description = "progress of one kernel (--name, its short name) instance by instance"
    tables = ("kernels",)
    what = "kernel's short"

    def instances(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        report = self.load_report(report_path, options)
        kernels = report.kernels
        ids = report.strings.find(options.kernel_name or "")
        keep = np.isin(kernels["short_name_id"], ids)
        if options.end_ns is not None:
            keep &= kernels.start_ns <= options.end_ns
        if options.start_ns is not None:
            keep &= kernels.end_ns >= options.start_ns
        rows = np.flatnonzero(keep)
        if len(rows) == 0:
            return None
        rows = rows[np.argsort(kernels.start_ns[rows], kind="stable")]
        return PacePartial(
            start_ns=np.ascontiguousarray(kernels.start_ns[rows]),
            end_ns=np.ascontiguousarray(kernels.end_ns[rows]),
            session_start_utc_ns=report.info.session_start_utc_ns,
        )
