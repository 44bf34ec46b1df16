"""Stats recipes across reports: ``cuda_gpu_kern_sum``, ``nvtx_sum``, ``nvtx_gpu_proj_sum``.

spec: nsys-sqlite.md §5.3 family (a). Per report the numbers are those of ``nsys stats`` for
that report (``rank_stats``); across reports they come from exact partials
(:mod:`analysis.recipes.partials`), so ``all_stats`` equals the stats of all instances of all
reports taken together:

* ``Total Time``, ``Instances``, ``Min``, ``Max``: exact; ``Avg`` = Total / Instances;
* ``StdDev``: the exact pooled sample standard deviation of spec §5.3;
* ``Med``, ``Q1``, ``Q3``: exact over the merged instances with nsys's percentile rule.
  (nsys 2023.4's recipe reports a median of per-rank medians, min of Q1s and max of Q3s
  there; ours are the true statistics, which is what those approximate.)
* ``Min File`` / ``Max File``: the reports that attain the extremes.

``by_file`` is the per-report view of the batch-size example of nsys's multi-report analysis:
one row per name, one column per report with its mean duration, and which report is the
fastest and slowest for that name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.engine import sqlite_round
from strata.analysis.escape import escape_text
from strata.analysis.model import DurationTable, EventTable, Report
from strata.analysis.recipes._exact import checked_subtract, group_sums
from strata.analysis.recipes._filter import filtered_report, has_filter
from strata.analysis.recipes._labels import factorize_rows, kernel_groups, nvtx_range_groups
from strata.analysis.recipes.base import (
    TIME_FILTER,
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
)
from strata.analysis.recipes.partials import GroupPartial, MergedGroups, merge_partials
from strata.analysis.timefmt import pluralize

__all__ = [
    "CudaApiSum",
    "CudaGpuKernSum",
    "CudaGpuMemSizeSum",
    "CudaGpuMemTimeSum",
    "NvtxGpuProjSum",
    "NvtxSum",
    "OsrtSum",
    "StatsRecipe",
]

#: Rows of the per-report heatmap (the names with the largest total).
_HEATMAP_ROWS = 30


@dataclass(frozen=True)
class StatsPartial:
    """One report's contribution: exact group partials and its own nsys-stats table."""

    groups: GroupPartial
    rank_stats: pd.DataFrame


class StatsRecipe(Recipe):
    """A family-(a) summary: per-report stats tables plus exact all-report statistics.

    Subclasses define the key columns, how a report becomes a :class:`GroupPartial`, and the
    output column names.
    """

    key_columns: tuple[str, ...] = ()
    #: Output names of (total, count, mean, median, min, max, std) in the stats table.
    stat_names: tuple[str, ...] = ("Total Time", "Instances", "Avg", "Med", "Min", "Max", "StdDev")
    has_time_percent = True
    has_quartiles = True
    #: The unit of the summarised values in the console summary.
    unit = "ns"
    #: Sort after the total (descending): extra (column, ascending) pairs.
    tie_break: tuple[tuple[str, bool], ...] = ()
    options_taken = TIME_FILTER
    notebook = "stats.ipynb"

    # -- what subclasses provide ------------------------------------------------------------
    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        """Return the report's exact group partial (``args``: :meth:`report_args`)."""
        raise NotImplementedError

    def report_args(self, options: RecipeOptions) -> tuple[str, ...]:
        """The arguments of the stats report this recipe runs per report (``base``...)."""
        return ()

    def extra_columns(self, merged: MergedGroups) -> dict[str, np.ndarray]:
        """Return columns added after the standard statistics (e.g. GPU op counts)."""
        return {}

    def column_order(self) -> list[str]:
        """Return the stats table's column order (nsys's, tags stripped)."""
        total, count, mean, med, lo, hi, std = self.stat_names
        head = ["Time"] if self.has_time_percent else []
        tail = ["Q1", "Q3"] if self.has_quartiles else []
        return [*head, total, count, mean, med, lo, hi, std, *self.key_columns, *tail]

    # -- map ----------------------------------------------------------------------------------
    def map(self, report_path: Path, options: RecipeOptions) -> StatsPartial | None:
        # Only the columns the summary reads (durations and names for cuda_gpu_kern_sum),
        # else the tables it reads: a map that loads every table of every report spends most
        # of its time on data no stats recipe looks at.
        from strata.analysis.stats.lean import open_for_stats

        args = self.report_args(options)
        if has_filter(options):
            # nsys's recipe hands --start/--end to the stats report, whose filtered views
            # need every column of the rows (analysis.recipes._filter).
            report = filtered_report(self.load_report(report_path, options), options)
            if report is None:
                return None
        else:
            spec = ":".join((self.name, *args))
            report = open_for_stats(
                report_path, [spec], use_cache=options.use_cache, tables=self.tables
            )
        groups = self.groups_of(report, args)
        if len(groups) == 0:
            return None
        return StatsPartial(groups, self.rank_table(report, groups, args))

    def rank_table(
        self, report: Report, groups: GroupPartial, args: tuple[str, ...] = ()
    ) -> pd.DataFrame:
        """Return the report's own stats table: what ``main.py stats`` (and nsys) prints.

        The numbers come from :func:`analysis.stats.run_report`; the quartiles nsys hides
        (``_Q1``/``_Q3``, shown by its recipes) come from this report's exact partial.
        """
        from strata.analysis.stats import run_report

        table = run_report(report, ":".join((self.name, *args)), xp=np).frame
        if not self.has_quartiles:
            return table.reset_index(drop=True)
        own = self.stats_table(
            merge_partials([groups], [escape_text(report.name)]), with_files=False
        )
        keys = list(self.key_columns)
        quartiles = own[[*keys, "Q1", "Q3"]].astype({k: object for k in keys})
        table = table.astype({k: object for k in keys})
        return table.merge(quartiles, on=keys, how="left", sort=False)

    # -- reduce -------------------------------------------------------------------------------
    def stats_table(self, merged: MergedGroups, with_files: bool) -> pd.DataFrame:
        """Return the nsys-style statistics of merged groups, sorted by total descending."""
        from strata.analysis.stats import time_percent

        total, count, mean, med, lo, hi, std = self.stat_names
        columns: dict[str, object] = {}
        if self.has_time_percent:
            # The sum of the totals is exact (nsys's pandas sum wraps past int64; each total
            # is checked to fit by merge_partials).
            columns["Time"] = time_percent(merged.total, strict=False)
        columns.update(
            {
                total: merged.total,
                count: merged.count,
                mean: sqlite_round(merged.mean),
                med: sqlite_round(merged.quantile(0.5)),
                lo: merged.minimum,
                hi: merged.maximum,
                std: sqlite_round(merged.std),
            }
        )
        for name in self.key_columns:
            columns[name] = merged.keys[name].to_numpy(dtype=object)
        if self.has_quartiles:
            columns["Q1"] = sqlite_round(merged.quantile(0.25))
            columns["Q3"] = sqlite_round(merged.quantile(0.75))
        columns.update(self.extra_columns(merged))
        order = self.column_order()
        if with_files:
            columns["Min File"] = merged.min_file
            columns["Max File"] = merged.max_file
            order = [*order, "Min File", "Max File"]
        table = pd.DataFrame(columns)[order]
        return self.sort_table(table)

    def sort_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """Sort by total descending, then the tie-break columns (spec §3.1 sort stability)."""
        by = [self.stat_names[0], *(c for c, _ in self.tie_break)]
        ascending = [False, *(a for _, a in self.tie_break)]
        return table.sort_values(by, ascending=ascending, kind="stable").reset_index(drop=True)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        files = [p.file for p in partials]
        merged = merge_partials([p.partial.groups for p in partials], files)
        all_stats = self.stats_table(merged, with_files=True)
        rank_stats = self._rank_stats(partials)
        by_file = self.by_file_table(rank_stats, files)
        plots = {}
        if len(files) > 1 and len(by_file):
            plots["heatmap"] = self._heatmap(by_file, files)
        tables = {"all_stats": all_stats, "rank_stats": rank_stats, "by_file": by_file}
        return self.output(partials, tables, self._summary(all_stats, by_file, files), plots)

    def _rank_stats(self, partials: Sequence[FilePartial]) -> pd.DataFrame:
        frames = [p.partial.rank_stats for p in partials]
        table = pd.concat(frames, ignore_index=True)
        table["File"] = np.repeat(
            np.asarray([p.file for p in partials], dtype=object), [len(f) for f in frames]
        )
        # spec §5.3: rank_stats sorted by File, then Total desc (files are in rank order).
        rank = {f: i for i, f in enumerate(p.file for p in partials)}
        table["_rank"] = table["File"].map(rank)
        table = table.sort_values(
            ["_rank", self.stat_names[0]], ascending=[True, False], kind="stable"
        )
        return table.drop(columns="_rank").reset_index(drop=True)

    def by_file_table(self, rank_stats: pd.DataFrame, files: Sequence[str]) -> pd.DataFrame:
        """Return one row per key: mean duration per report, and the fastest/slowest report.

        Columns: the key columns, one float64 column per report (its mean in ns, NaN where
        the report lacks the key), ``Fastest`` and ``Slowest`` (report labels), ``Spread``
        (slowest mean / fastest mean). Rows by total over the reports, largest first; a
        NULL name is a row of its own, as in the stats tables.
        """
        keys = list(self.key_columns)
        mean, total = self.stat_names[2], self.stat_names[0]
        codes, rows = factorize_rows(rank_stats[keys])
        present = set(rank_stats["File"])
        shown = [f for f in files if f in present]
        column = rank_stats["File"].map({f: i for i, f in enumerate(shown)}).to_numpy(np.int64)
        values = np.full((len(rows), len(shown)), np.nan)
        first = ~pd.DataFrame({"key": codes, "file": column}).duplicated().to_numpy()
        values[codes[first], column[first]] = rank_stats[mean].to_numpy(np.float64)[first]
        totals = group_sums(codes, rank_stats[total].to_numpy(), len(rows))
        order = pd.Series(totals).sort_values(ascending=False, kind="stable").index.to_numpy()
        values = values[order]
        has = ~np.isnan(values).all(axis=1)
        fastest = np.full(len(values), None, dtype=object)
        slowest = np.full(len(values), None, dtype=object)
        spread = np.full(len(values), np.nan)
        if has.any():
            cols = np.asarray(shown, dtype=object)
            lo = np.nanmin(values[has], axis=1)
            hi = np.nanmax(values[has], axis=1)
            fastest[has] = cols[np.nanargmin(values[has], axis=1)]
            slowest[has] = cols[np.nanargmax(values[has], axis=1)]
            spread[has] = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), np.nan)
        # From object arrays: pandas infers the key columns' dtype (str) as for the others.
        out = pd.DataFrame({k: rows[k].to_numpy(dtype=object)[order] for k in keys})
        for index, name in enumerate(shown):
            out[name] = values[:, index]
        out["Fastest"] = fastest
        out["Slowest"] = slowest
        out["Spread"] = sqlite_round(spread, 2)
        return out

    def name_column(self) -> str:
        """Return the key column that names a row (``Name``, ``Range`` or ``Operation``)."""
        return next(c for c in self.key_columns if c != "Style")

    def labels(self, table: pd.DataFrame) -> list[str]:
        """Return a readable label per row: the name, with ``[StartEnd]`` for such ranges."""
        name_column = self.name_column()
        # A NULL name (no string) reads as nsys prints it: empty.
        names = ["" if pd.isna(n) else str(n) for n in table[name_column].tolist()]
        if "Style" not in table:
            return names
        styles = table["Style"].astype(str).tolist()
        return [n if s == "PushPop" else f"{n} [{s}]" for n, s in zip(names, styles, strict=True)]

    def _heatmap(self, by_file: pd.DataFrame, files: Sequence[str]) -> PlotSpec:
        top = by_file.head(_HEATMAP_ROWS)
        labels = self.labels(top)
        values = top[[f for f in files if f in top.columns]].to_numpy(dtype=np.float64)
        fastest = np.nanmin(values, axis=1, initial=np.inf, where=~np.isnan(values))
        ratio = values / np.where(fastest > 0, fastest, np.nan)[:, None]
        data = pd.DataFrame(ratio, index=labels, columns=list(files))
        return PlotSpec(
            kind="heatmap",
            title=f"{self.name}: mean duration relative to the fastest report",
            xlabel="report",
            ylabel=self.name_column(),
            data=data,
        )

    def _summary(self, all_stats: pd.DataFrame, by_file: pd.DataFrame, files: list[str]) -> str:
        total, count, mean = self.stat_names[:3]
        keys = list(self.key_columns)
        names, reports = pluralize(len(all_stats), "name"), pluralize(len(files), "report")
        lines = [f"{self.name}: {names} over {reports}"]
        head = all_stats.head(5).merge(by_file[[*keys, "Fastest"]], on=keys, how="left")
        for row in head.to_dict("records"):
            label = self.labels(pd.DataFrame([row]))[0]
            fastest = f"  fastest in {row['Fastest']}" if len(files) > 1 else ""
            lines.append(
                f"  {_short(label, 50):50s}  total {int(row[total]):>15,d} {self.unit}"
                f"  x{int(row[count]):<8d}  avg {float(row[mean]):>14,.1f} {self.unit}{fastest}"
            )
        return "\n".join(lines)


def _short(text: str, width: int = 60) -> str:
    """Shorten ``text`` to ``width`` characters, keeping its start and its end."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


class CudaGpuKernSum(StatsRecipe):
    """``cuda_gpu_kern_sum`` across reports (spec §3.2, §5.3 (a))."""

    name = "cuda_gpu_kern_sum"
    description = "CUDA GPU kernel summary per report and across reports"
    tables = ("kernels",)  # when the lean columns cannot serve (an .nsys-rep, say)
    key_columns = ("Name",)
    tie_break = (("Instances", True), ("Name", True))
    options_taken = TIME_FILTER | {"base", "mangled"}

    def report_args(self, options: RecipeOptions) -> tuple[str, ...]:
        # nsys's recipe hands --base/--mangled to cuda_gpu_kern_sum (its :base/:mangled).
        return tuple(a for a, on in (("base", options.base), ("mangled", options.mangled)) if on)

    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        codes, labels = kernel_groups(report, args)
        durations = _durations(report.kernels, "a kernel's duration")
        return GroupPartial.from_codes(codes, labels, durations)


class NvtxSum(StatsRecipe):
    """``nvtx_sum`` across reports (spec §3.4, §5.3)."""

    name = "nvtx_sum"
    description = "NVTX range summary per report and across reports"
    tables = ("nvtx",)
    key_columns = ("Style", "Range")
    tie_break = (("Range", True), ("Style", True))

    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        rows, codes, labels = nvtx_range_groups(report)
        # spec §3.4: duration = coalesce(end, M) - start; the loader ends open ranges at M.
        durations = _durations(report.nvtx, "a range's duration", rows)
        return GroupPartial.from_codes(codes, labels, durations)


class NvtxGpuProjSum(StatsRecipe):
    """``nvtx_gpu_proj_sum`` across reports: NVTX ranges projected onto the GPU (spec §3.12)."""

    name = "nvtx_gpu_proj_sum"
    description = "NVTX ranges projected onto the GPU, per report and across reports"
    tables = ("nvtx", "cuda_api", "kernels", "memcpy", "memset")
    key_columns = ("Range", "Style")
    stat_names = (
        "Total Proj Time",
        "Range Instances",
        "Proj Avg",
        "Proj Med",
        "Proj Min",
        "Proj Max",
        "Proj StdDev",
    )
    has_time_percent = False
    has_quartiles = False
    tie_break = (("Range", True), ("Style", True))

    def column_order(self) -> list[str]:
        total, count, mean, med, lo, hi, std = self.stat_names
        return [
            "Range",
            "Style",
            total,
            "Total Range Time",
            count,
            mean,
            med,
            lo,
            hi,
            std,
            "Total GPU Ops",
            "Avg GPU Ops",
            "Avg Range Lvl",
            "Avg Num Child",
        ]

    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        from strata.analysis.projection import project_nvtx

        proj = project_nvtx(report)
        proj = proj[proj["name"].notna()]
        frame = pd.DataFrame(
            {"Range": proj["name"].to_numpy(dtype=object), "Style": proj["style"].to_numpy(object)}
        )
        codes, labels = factorize_rows(frame)
        extras = {
            "gpu_ops": proj["num_gpu_ops"].to_numpy(np.float64),
            "level": pd.to_numeric(proj["level"], errors="coerce").to_numpy(np.float64),
            "num_child": proj["num_child"].to_numpy(np.float64),
        }
        durations = checked_subtract(
            proj["end_ns"].to_numpy(np.int64), proj["start_ns"].to_numpy(np.int64), "a projection"
        )
        ranges = checked_subtract(
            proj["orig_end_ns"].to_numpy(np.int64),
            proj["orig_start_ns"].to_numpy(np.int64),
            "a range's duration",
        )
        return GroupPartial.from_codes(
            codes, labels, durations, extras, {"Total Range Time": ranges}
        )

    def extra_columns(self, merged: MergedGroups) -> dict[str, np.ndarray]:
        def avg(name: str) -> np.ndarray:
            n = merged.extra_counts[name]
            return sqlite_round(np.where(n > 0, merged.extras[name] / np.maximum(n, 1), np.nan))

        return {
            "Total Range Time": merged.int_sums["Total Range Time"],
            "Total GPU Ops": merged.extras["gpu_ops"].astype(np.int64),
            "Avg GPU Ops": avg("gpu_ops"),
            "Avg Range Lvl": avg("level"),
            "Avg Num Child": avg("num_child"),
        }


def _durations(
    table: EventTable | DurationTable, what: str, rows: np.ndarray | None = None
) -> np.ndarray:
    """Each row's duration (int64 ns): the lean read's, checked already, or end - start,
    checked for overflow (``rows``: of these rows only; not for a lean read)."""
    if isinstance(table, DurationTable):
        return table.duration_ns
    if rows is None:
        return checked_subtract(table.end_ns, table.start_ns, what)
    return checked_subtract(table.end_ns[rows], table.start_ns[rows], what)


def _no_groups() -> GroupPartial:
    return GroupPartial.from_codes([], pd.DataFrame({"Name": []}), [])


def _skipped(report: Report, name: str) -> bool:
    """Whether ``nsys stats -r name`` SKIPS the report (it lacks the tables)."""
    from strata.analysis.stats import run_report

    return run_report(report, name, xp=np).skipped is not None


class _CallSum(StatsRecipe):
    """A summary of calls by name (``cuda_api_sum``, ``osrt_sum``): each name's call durations."""

    key_columns = ("Name",)
    stat_names = ("Total Time", "Num Calls", "Avg", "Med", "Min", "Max", "StdDev")
    tie_break = (("Name", True),)

    def calls(self, report: Report) -> tuple[np.ndarray, np.ndarray]:
        """Return the name (object) and the duration (int64 ns) of each call of ``report``."""
        raise NotImplementedError

    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        names, durations = self.calls(report)
        if len(names) == 0:
            return _no_groups()
        codes, labels = factorize_rows(pd.DataFrame({"Name": names}))
        return GroupPartial.from_codes(codes, labels, durations)


class CudaApiSum(_CallSum):
    """``cuda_api_sum`` across reports: CUDA runtime/driver API calls (spec §3.3)."""

    name = "cuda_api_sum"
    description = "CUDA API call summary per report and across reports"
    tables = ("cuda_api",)

    def calls(self, report: Report) -> tuple[np.ndarray, np.ndarray]:
        from strata.analysis.names import api_display_names

        api = report.cuda_api
        # nsys's recipe groups its per-report rows by the displayed name (suffix dropped).
        names = api_display_names(report.strings.lookup(api["name_id"]))
        return names, _durations(api, "a call's duration")


class OsrtSum(_CallSum):
    """``osrt_sum`` across reports: OS runtime library calls (spec §3.5)."""

    name = "osrt_sum"
    description = "OS runtime call summary per report and across reports"
    tables = ("osrt",)

    def calls(self, report: Report) -> tuple[np.ndarray, np.ndarray]:
        from strata.analysis.kinds import get_kind

        osrt = report.osrt
        calls = get_kind("osrt").row_indices(report)
        names = report.strings.lookup(osrt["name_id"][calls])
        return names, _durations(osrt, "a call's duration", calls)


class _MemorySum(StatsRecipe):
    """The GPU memory operation summaries: memcpy and memset rows grouped by operation."""

    tables = ("memcpy", "memset")
    key_columns = ("Operation",)
    tie_break = (("Operation", True),)
    #: Which value of :func:`analysis.stats.cuda.memory_op_names` is summarised.
    value_index = 1

    def groups_of(self, report: Report, args: tuple[str, ...] = ()) -> GroupPartial:
        from strata.analysis.stats.cuda import memory_op_names

        if _skipped(report, self.name):
            return _no_groups()
        ops = memory_op_names(report)
        codes, labels = factorize_rows(pd.DataFrame({"Operation": ops[0]}))
        return GroupPartial.from_codes(codes, labels, np.asarray(ops[self.value_index], np.int64))


class CudaGpuMemTimeSum(_MemorySum):
    """``cuda_gpu_mem_time_sum`` across reports (spec §3.6)."""

    name = "cuda_gpu_mem_time_sum"
    description = "GPU memory operations by time, per report and across reports"
    stat_names = ("Total Time", "Count", "Avg", "Med", "Min", "Max", "StdDev")


class CudaGpuMemSizeSum(_MemorySum):
    """``cuda_gpu_mem_size_sum`` across reports: bytes moved per operation (spec §3.7)."""

    name = "cuda_gpu_mem_size_sum"
    description = "GPU memory operations by size, per report and across reports"
    stat_names = ("Total", "Count", "Avg", "Med", "Min", "Max", "StdDev")
    has_time_percent = False
    value_index = 2
    unit = "B"
