"""``cuda_gpu_kern_hist``: distribution of kernel durations per kernel name, across reports.

Bins are fixed in advance on a logarithmic grid — bin ``k`` covers
``[10^(k/b), 10^((k+1)/b))`` ns for ``b`` bins per decade, and zero-length kernels have
their own bin ``[0, 1)`` — so every report's counts are computed where it lies and merged
exactly by addition; no second pass over the reports is needed to agree on bin edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes._exact import checked_subtract, group_sums
from strata.analysis.recipes._filter import filtered_report
from strata.analysis.recipes._labels import kernel_groups
from strata.analysis.recipes.base import (
    TIME_FILTER,
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
)
from strata.analysis.timefmt import pluralize

__all__ = ["CudaGpuKernHist", "bin_edges", "duration_bins"]

#: Kernel names drawn in the histogram plot (the largest total times).
_PLOT_PANELS = 6
_ZERO_BIN = -1


def duration_bins(durations_ns: npt.ArrayLike, bins_per_decade: int) -> npt.NDArray[np.int64]:
    """Return the logarithmic bin index of every duration (``-1`` for zero-length)."""
    d = np.asarray(durations_ns, dtype=np.int64)
    index = np.full(d.shape, _ZERO_BIN, dtype=np.int64)
    positive = d > 0
    index[positive] = np.floor(np.log10(d[positive]) * bins_per_decade).astype(np.int64)
    return index


def bin_edges(index: npt.ArrayLike, bins_per_decade: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (start, end) in ns of bins ``index`` (float64; ``[0, 1)`` for bin -1)."""
    index = np.asarray(index, dtype=np.int64)
    start = np.where(index == _ZERO_BIN, 0.0, 10.0 ** (index / bins_per_decade))
    end = np.where(index == _ZERO_BIN, 1.0, 10.0 ** ((index + 1) / bins_per_decade))
    return start, end


@dataclass(frozen=True)
class HistPartial:
    """One report's counts per (kernel name, bin) and total time per name."""

    counts: pd.DataFrame  # Name (str), Bin (int64), Count (int64)
    totals: pd.DataFrame  # Name (str), Total Time (int64; Python ints where int64 is short)


def _names_by_total(totals: Sequence[pd.DataFrame]) -> list[object]:
    """Kernel names by total time over all reports, largest first (ties: by name).

    The totals are summed exactly: a wrapped sum would put the longest kernel last.
    """
    ranked = pd.concat(totals, ignore_index=True)
    codes, names = pd.factorize(ranked["Name"], sort=True, use_na_sentinel=False)
    summed = group_sums(codes, ranked["Total Time"].to_numpy(), len(names))
    order = pd.Series(summed, index=names).sort_values(ascending=False, kind="stable")
    return list(order.index)


class CudaGpuKernHist(Recipe):
    """Kernel duration histograms per name; counts add up exactly across reports."""

    name = "cuda_gpu_kern_hist"
    description = "histogram of kernel durations per kernel name (logarithmic bins)"
    tables = ("kernels",)
    options_taken = TIME_FILTER
    notebook = "histogram.ipynb"

    def check_options(self, options: RecipeOptions) -> None:
        if not 1 <= options.bins_per_decade <= 1000:
            raise AnalysisError(
                f"--bins-per-decade must be between 1 and 1000, not {options.bins_per_decade}"
            )

    def map(self, report_path: Path, options: RecipeOptions) -> HistPartial | None:
        report = self.load_report(report_path, options)
        # --start/--end as the summaries take them: the kernels overlapping the window.
        report = filtered_report(report, options)
        if report is None or len(report.kernels) == 0:
            return None
        codes, labels = kernel_groups(report)
        kernels = report.kernels
        # Checked: a start near -2^63 wraps end - start to a negative "zero-length" kernel.
        durations = checked_subtract(kernels.end_ns, kernels.start_ns, "a kernel's duration")
        bins = duration_bins(durations, options.bins_per_decade)
        frame = pd.DataFrame({"code": codes, "Bin": bins})
        counts = frame.groupby(["code", "Bin"], sort=True).size().rename("Count").reset_index()
        # Exact (Python ints past int64): the totals only rank the names, but rank them right.
        totals = group_sums(codes, durations, len(labels))
        names = labels["Name"].to_numpy(dtype=object)
        return HistPartial(
            counts=pd.DataFrame(
                {
                    "Name": names[counts["code"].to_numpy()],
                    "Bin": counts["Bin"].to_numpy(np.int64),
                    "Count": counts["Count"].to_numpy(np.int64),
                }
            ),
            totals=pd.DataFrame({"Name": names, "Total Time": totals}),
        )

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        bpd = options.bins_per_decade
        order = _names_by_total([p.partial.totals for p in partials])
        rank_of = {name: i for i, name in enumerate(order)}
        per_file = pd.concat(
            [p.partial.counts.assign(File=p.file) for p in partials], ignore_index=True
        )
        # dropna=False: kernels without a name (NULL) are counted, as the summaries count them.
        merged = (
            per_file.groupby(["Name", "Bin"], sort=False, dropna=False)["Count"].sum().reset_index()
        )
        histogram = self._with_edges(merged, rank_of, bpd)
        per_file["_file"] = per_file["File"].map({p.file: i for i, p in enumerate(partials)})
        rank_histogram = self._with_edges(per_file, rank_of, bpd, by_file=True)
        top = list(order[:_PLOT_PANELS])
        shown = histogram[histogram["Name"].isin(top)]
        plot = PlotSpec(
            kind="histogram",
            title="kernel durations, all reports",
            xlabel="duration (ns)",
            ylabel="instances",
            data=pd.DataFrame(
                {
                    # A NULL name is drawn as nsys prints it, empty (NaN would match no row).
                    "panel": shown["Name"].fillna("").to_numpy(dtype=object),
                    "bin_start": np.maximum(shown["Bin Start"].to_numpy(), 0.5),
                    "bin_end": shown["Bin End"].to_numpy(),
                    "count": shown["Count"].to_numpy(),
                }
            ),
            log_x=True,
        )
        summary = (
            f"cuda_gpu_kern_hist: {pluralize(len(order), 'kernel name')}, "
            f"{pluralize(int(merged['Count'].sum()), 'instance')} in "
            f"{pluralize(len(partials), 'report')}, {bpd} bins per decade"
        )
        tables = {"histogram": histogram, "rank_histogram": rank_histogram}
        return self.output(partials, tables, summary, {"histogram": plot})

    @staticmethod
    def _with_edges(
        counts: pd.DataFrame, rank_of: dict[str, int], bpd: int, by_file: bool = False
    ) -> pd.DataFrame:
        """Add bin edges and sort by kernel rank (total time desc), file, then bin."""
        start, end = bin_edges(counts["Bin"].to_numpy(), bpd)
        table = counts.assign(
            **{"Bin Start": start, "Bin End": end, "_rank": counts["Name"].map(rank_of)}
        )
        by = ["_rank", "_file", "Bin"] if by_file else ["_rank", "Bin"]
        columns = ["Name", "Bin", "Bin Start", "Bin End", "Count"]
        if by_file:
            columns.append("File")
        return table.sort_values(by, kind="stable")[columns].reset_index(drop=True)
