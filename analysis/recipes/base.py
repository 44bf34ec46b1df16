"""What a recipe is: options in, small picklable partials per report, one output after reduce.

A recipe runs in two steps (spec: nsys-sqlite.md §5.2):

* ``map(report_path, options) -> partial | None`` runs once per report, where the report
  lies (in-process, in a worker process or on a Dask worker). It loads the report and returns
  small partial aggregates that can be merged exactly; ``None`` means "no data".
* ``reduce(partials, options) -> RecipeOutput`` combines the partials of every report that
  loaded, in file order, into named tables, plots and a short summary.

Only the recipe's *name*, the report path and the options travel to a worker; the recipe
object is looked up there in :data:`RECIPES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.model import Report

__all__ = [
    "NSYS_OPTIONS",
    "RECIPES",
    "FilePartial",
    "PlotSpec",
    "RULE_FILTER",
    "Recipe",
    "RecipeOptions",
    "RecipeOutput",
    "TIME_FILTER",
    "files_table",
    "get_recipe",
    "heatmap",
    "recipe_names",
    "register",
    "table_or_empty",
]


@dataclass(frozen=True)
class RecipeOptions:
    """Everything a recipe's map and reduce may depend on (picklable, hashable).

    Attributes
    ----------
    use_cache
        Read and write the columnar report cache when loading.
    kernel_name
        The pace recipes' ``--name``: the kernel's short name (``shortName``) to follow
        (``cuda_gpu_kern_pace``), or the NVTX range's name (``nvtx_pace``,
        ``nvtx_gpu_proj_pace``).
    gap_ms
        ``gpu_gaps``: report idle stretches strictly longer than this many milliseconds.
    threshold_pct
        ``gpu_time_util``: keep chunks whose in-use percentage is below this.
    chunks
        ``gpu_time_util``: number of equal chunks per process and device (1-1000).
    bins_per_decade
        ``cuda_gpu_kern_hist``: logarithmic bins per factor of ten of duration.
    tolerance_pct
        ``diff``: a median that changed by at most this percentage is noise.
    start_ns, end_ns
        ``--start``/``--end`` of nsys's recipes (pace, heatmaps, MPI and NCCL summaries):
        keep the events that end at or after ``start_ns`` and start at or before ``end_ns``
        (ns on the report's own clock); None: no bound.
    bins
        The heatmaps (``*_util_map``): number of equal time bins over the longest session.
    cumulative
        The GPU time heatmaps: add up every kernel's share of a bin (may pass 100%) instead
        of the share of time in which some kernel ran.
    nvtx
        nsys's ``--nvtx RANGE[@DOMAIN][/INDEX]`` (the rule tables, ``gpu_gaps``,
        ``gpu_time_util``, ``nvtx_gpu_proj_trace``): only what overlaps that NVTX range (its
        first instance, or the INDEX-th) on its thread (push/pop) or process (start/end);
        ``start_ns``/``end_ns`` replace the range's bounds where given. None: no range.
    rows
        nsys's ``--rows``: at most this many rows per report (the rule tables, ``gpu_gaps``,
        ``gpu_time_util``); negative (default -1): all of them.
    base, mangled
        nsys's ``--base``/``--mangled`` (``cuda_gpu_kern_sum``): kernels named by their base
        (short) name, or by their mangled name, instead of the demangled one.
    csv
        nsys's ``--csv`` ("additionally output data as CSV"): Strata writes every table as
        CSV beside its Parquet file anyway, so this changes nothing.
    """

    use_cache: bool = True
    kernel_name: str | None = None
    gap_ms: float = 500.0
    threshold_pct: float = 50.0
    chunks: int = 30
    bins_per_decade: int = 10
    tolerance_pct: float = 1.0
    start_ns: int | None = None
    end_ns: int | None = None
    bins: int = 30
    cumulative: bool = False
    nvtx: str | None = None
    rows: int = -1
    base: bool = False
    mangled: bool = False
    csv: bool = False


@dataclass(frozen=True)
class FilePartial:
    """One report's partial result, tagged with the report it came from.

    Attributes
    ----------
    file
        The report's label in every output table (its file name, made unique).
    path
        Where the report lies.
    partial
        What the recipe's ``map`` returned.
    """

    file: str
    path: Path
    partial: Any


@dataclass(frozen=True)
class PlotSpec:
    """A plot described as data; :func:`analysis.recipes.output.write_output` draws it.

    Attributes
    ----------
    kind
        ``"histogram"`` (``data``: one row per bin with ``panel``, ``bin_start``,
        ``bin_end``, ``count``), ``"lines"`` (``data``: index = x, one column per line;
        one panel), or ``"heatmap"`` (``data``: rows x columns of float values).
    title
        Figure title.
    xlabel, ylabel
        Axis labels.
    data
        The numbers to draw.
    log_x
        Logarithmic x axis (histograms of durations).
    """

    kind: str
    title: str
    xlabel: str
    ylabel: str
    data: pd.DataFrame
    log_x: bool = False


@dataclass
class RecipeOutput:
    """What a recipe produces: named tables, plots and a short text summary.

    Attributes
    ----------
    recipe
        The recipe's name.
    tables
        Table name -> DataFrame; each is written as ``<name>.parquet`` and ``<name>.csv``.
    plots
        Plot name -> :class:`PlotSpec`; each is drawn as ``<name>.png``.
    summary
        A few lines for the console and ``summary.txt``.
    files
        The labels of the reports that went into the output, in rank order.
    """

    recipe: str
    tables: dict[str, pd.DataFrame]
    plots: dict[str, PlotSpec] = field(default_factory=dict)
    summary: str = ""
    files: list[str] = field(default_factory=list)


class Recipe:
    """Base of every recipe; subclasses set ``name``/``description`` and override the steps."""

    name: str = ""
    description: str = ""
    #: Whether ``--input`` names reports (expanded from folders) or is taken verbatim (diff).
    takes_reports: bool = True
    #: The event tables ``map`` reads (``"kernels"``, ``"nvtx"``, …); only they are loaded
    #: from a report without a cache entry (see :func:`analysis.open_report`). None: all.
    tables: tuple[str, ...] | None = None
    #: Which of nsys's filter and naming options it takes (:data:`NSYS_OPTIONS`' fields of
    #: :class:`RecipeOptions`): a run that sets another one is refused, as nsys's own
    #: recipe refuses an option it does not know.
    options_taken: frozenset[str] = frozenset()
    #: The Jupyter notebook written beside the tables (nsys's name for the recipe's kind).
    notebook: str = "analysis.ipynb"

    def map(self, report_path: Path, options: RecipeOptions) -> Any:
        """Load one report and return its small partial result, or ``None`` for no data."""
        raise NotImplementedError

    def tables_for(self, options: RecipeOptions) -> tuple[str, ...] | None:
        """The event tables ``map`` loads with ``options``: :attr:`tables`, and the NVTX
        ranges where ``--nvtx`` names one (the filter finds its bounds there)."""
        if self.tables is None or options.nvtx is None or "nvtx" in self.tables:
            return self.tables
        return (*self.tables, "nvtx")

    def load_report(self, report_path: Path, options: RecipeOptions) -> Report:
        """Open the report ``map`` reads: the tables :meth:`tables_for` names, through the
        columnar cache unless ``options.use_cache`` is off."""
        from strata.analysis.open import open_report

        tables = self.tables_for(options)
        return open_report(report_path, use_cache=options.use_cache, tables=tables)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        """Combine the partials of every report that loaded (rank order) into the output."""
        raise NotImplementedError

    def check_options(self, options: RecipeOptions) -> None:
        """Raise :class:`AnalysisError` for options this recipe cannot run with."""

    def check_inputs(self, paths: Sequence[Path]) -> None:
        """Raise :class:`AnalysisError` for an input list this recipe cannot run on."""

    def output(
        self,
        partials: Sequence[FilePartial],
        tables: dict[str, pd.DataFrame],
        summary: str,
        plots: dict[str, PlotSpec] | None = None,
    ) -> RecipeOutput:
        """Return this recipe's output over the reports of ``partials`` (rank order):
        ``tables`` followed by their ``files`` table (:func:`files_table`), the plots and
        the summary, the reports' labels as its files."""
        tables = {**tables, "files": files_table(partials)}
        return RecipeOutput(self.name, tables, plots or {}, summary, [p.file for p in partials])


def heatmap(
    table: pd.DataFrame, rows: pd.Series, column: str, value: str, title: str, ylabel: str,
    xlabel: str = "bin start (ns, common clock)",
) -> PlotSpec:  # fmt: skip
    """Return the heatmap of ``table``'s ``value``: one row per label of ``rows`` (in order
    of appearance), one column per value of ``column`` (the first value of each cell)."""
    grid = table.assign(_row=rows).pivot_table(
        index="_row", columns=column, values=value, aggfunc="first", sort=False
    )
    grid.index.name = None
    return PlotSpec(kind="heatmap", title=title, xlabel=xlabel, ylabel=ylabel, data=grid)


def files_table(partials: Sequence[FilePartial]) -> pd.DataFrame:
    """Return the ``files`` table: ``Rank`` (int64), ``File`` (label), ``Path`` (str)."""
    return pd.DataFrame(
        {
            "Rank": np.arange(len(partials), dtype=np.int64),
            "File": [p.file for p in partials],
            "Path": [escape_text(str(p.path)) for p in partials],  # text Parquet can hold
        }
    )


#: nsys's recipe options a recipe may not take: :class:`RecipeOptions` field -> option.
NSYS_OPTIONS = {
    "start_ns": "--start",
    "end_ns": "--end",
    "nvtx": "--nvtx",
    "rows": "--rows",
    "base": "--base",
    "mangled": "--mangled",
}
#: What a recipe with nsys's time filter takes.
TIME_FILTER = frozenset({"start_ns", "end_ns"})
#: What nsys's rule recipes take (``cuda_api_sync``, ``gpu_gaps``...).
RULE_FILTER = TIME_FILTER | {"nvtx", "rows"}

#: Recipe name -> recipe object; filled by the recipe modules as they are imported.
RECIPES: dict[str, Recipe] = {}


def register(recipe: Recipe) -> Recipe:
    """Add ``recipe`` to :data:`RECIPES` under its name and return it."""
    RECIPES[recipe.name] = recipe
    return recipe


def recipe_names() -> list[str]:
    """Return the registered recipe names, sorted."""
    return sorted(RECIPES)


def get_recipe(name: str) -> Recipe:
    """Return the recipe called ``name``.

    Raises
    ------
    AnalysisError
        No recipe has that name.
    """
    try:
        return RECIPES[name]
    except KeyError:
        raise AnalysisError(
            f"unknown recipe {name!r}; choose one of: {', '.join(recipe_names())}"
        ) from None


def table_or_empty(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """Concatenate ``frames`` (skipping empty ones), or return an empty frame with ``columns``."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return pd.concat(frames, ignore_index=True)
