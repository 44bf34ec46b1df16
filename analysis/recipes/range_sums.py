"""Duration statistics per name across reports: ``mpi_sum``, ``nccl_sum``, ``nccl_gpu_proj_sum``.

spec: nsys-sqlite.md §5.3 family (b); nsys 2023.4's recipes of the same names. The events:

* ``mpi_sum``: the rows of ``MPI_P2P_EVENTS``, ``MPI_START_WAIT_EVENTS``, ``MPI_OTHER_EVENTS``
  and ``MPI_COLLECTIVES_EVENTS``, named by their ``textId``;
* ``nccl_sum``: the ranges of the ``NCCL`` NVTX domain (:func:`._ranges.domain_ranges`);
* ``nccl_gpu_proj_sum``: those ranges projected onto the GPU through kernels, memcpys and
  memsets (:func:`._ranges.project_onto_gpu`).

Events with a duration of 0 or less, no end or no name are left out; ``--start``/``--end``
filter the events (the GPU operations for the projection). Each report's map step keeps its
durations per name, so the statistics are pandas' (``describe``: linear quartiles, ddof 1)
over the events of that report (``rank_stats``, nsys's per-report numbers) and over every
report's events together (``all_stats``: exact, where nsys approximates the standard
deviation by the mean of the reports', Q1 by their minimum, the median by their median and
Q3 by their maximum). Values are rounded to 0.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.recipes._ranges import (
    domain_ranges,
    gpu_calls,
    project_onto_gpu,
    projection_tables,
    range_text,
)
from strata.analysis.recipes._raw import RawTables, filter_time_range, read_tables, strings_of
from strata.analysis.recipes.base import (
    TIME_FILTER,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
)
from strata.analysis.recipes.pace import describe
from strata.analysis.timefmt import pluralize

__all__ = ["MpiSum", "NcclGpuProjSum", "NcclSum", "RangeSum"]

_STATS = ["Count", "Mean", "Std", "Min", "Q1", "Median", "Q3", "Max", "Sum"]
_NVTX = ("text", "start", "end", "textId", "globalTid", "endGlobalTid", "domainId", "eventType")
_MPI_TABLES = (
    "MPI_P2P_EVENTS",
    "MPI_START_WAIT_EVENTS",
    "MPI_OTHER_EVENTS",
    "MPI_COLLECTIVES_EVENTS",
)


@dataclass(frozen=True)
class Durations:
    """One report's positive durations (ns) per name, names sorted."""

    names: tuple[str, ...]
    values: tuple[npt.NDArray[np.int64], ...]


def _durations(names: pd.Series, start: pd.Series, end: pd.Series) -> Durations | None:
    """Group ``end - start`` by name, keeping named events with a positive duration."""
    frame = pd.DataFrame({"name": names.to_numpy(object), "start": start, "end": end})
    frame = frame[(frame["name"].notna() & frame["end"].notna()).to_numpy(bool)]
    duration = frame["end"].astype("int64").to_numpy(np.int64) - frame["start"].astype(
        "int64"
    ).to_numpy(np.int64)
    keep = duration > 0
    if not keep.any():
        return None
    # Codes, not a pandas groupby: pandas takes a key array of one element for a list of one
    # key, and its get_group then refused the name of a report's only event (KeyError).
    codes, labels = pd.factorize(frame["name"].to_numpy(object)[keep], sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(labels)))[:-1]
    grouped = np.split(duration[keep][order], bounds)
    return Durations(tuple(str(label) for label in labels), tuple(grouped))


def _stats(names: Sequence[str], values: Sequence[np.ndarray]) -> pd.DataFrame:
    rows = [describe(pd.DataFrame({"v": v}), axis=0) for v in values]
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in ["Text", *_STATS]})
    table = pd.concat(rows, ignore_index=True)
    table.insert(0, "Text", np.asarray(names, dtype=object))
    return table


class RangeSum(Recipe):
    """A family-(b) summary: per-name duration statistics per report and over all reports."""

    #: What one event is, for the console summary.
    event = "event"
    options_taken = TIME_FILTER
    notebook = "stats.ipynb"
    #: The tables :meth:`durations` reads: table -> columns (None: all).
    raw_tables: dict[str, tuple[str, ...] | None] = {}

    def durations(self, raw: RawTables, options: RecipeOptions) -> Durations | None:
        """Return the report's durations per name, or None for none."""
        raise NotImplementedError

    def map(self, report_path: Path, options: RecipeOptions) -> Durations | None:
        raw = read_tables(report_path, options.use_cache, self.raw_tables)
        return None if raw is None else self.durations(raw, options)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        frames = []
        pooled: dict[str, list[np.ndarray]] = {}
        for rank, p in enumerate(partials):
            part: Durations = p.partial
            frames.append(_stats(part.names, part.values).assign(Rank=rank, File=p.file))
            for name, values in zip(part.names, part.values, strict=True):
                pooled.setdefault(name, []).append(values)
        names = sorted(pooled)
        all_stats = _stats(names, [np.concatenate(pooled[n]) for n in names])
        rank_stats = pd.concat(frames, ignore_index=True)
        files = [p.file for p in partials]
        lines = [
            f"{self.name}: {pluralize(len(all_stats), 'name')} over "
            f"{pluralize(len(files), 'report')}, "
            f"{pluralize(int(all_stats['Count'].sum()), self.event)}"
        ]
        for row in all_stats.sort_values("Sum", ascending=False).head(5).to_dict("records"):
            lines.append(
                f"  {str(row['Text'])[:50]:50s}  total {row['Sum']:>17,.0f} ns"
                f"  x{int(row['Count']):<8d}  mean {row['Mean']:>14,.1f} ns"
            )
        tables = {"all_stats": all_stats, "rank_stats": rank_stats}
        return self.output(partials, tables, "\n".join(lines))


class MpiSum(RangeSum):
    """``mpi_sum``: MPI call durations per name."""

    name = "mpi_sum"
    description = "MPI call durations per name, per report and across reports"
    event = "MPI call"
    raw_tables = {"StringIds": None, **dict.fromkeys(_MPI_TABLES, ("start", "end", "textId"))}

    def durations(self, raw: RawTables, options: RecipeOptions) -> Durations | None:
        calls = pd.concat(
            [
                filter_time_range(raw[t], options.start_ns, options.end_ns, ("start", "end"))
                for t in _MPI_TABLES
            ],
            ignore_index=True,
        )
        strings = strings_of(raw)
        names = calls["textId"].map(lambda i: strings.get(int(i)) if pd.notna(i) else None)
        return _durations(names, calls["start"], calls["end"])


def _nccl(raw: RawTables) -> pd.DataFrame:
    nccl = domain_ranges(raw["NVTX_EVENTS"], "NCCL")
    return nccl.assign(name=range_text(nccl, strings_of(raw)))


class NcclSum(RangeSum):
    """``nccl_sum``: durations of the NCCL NVTX domain's ranges per name."""

    name = "nccl_sum"
    description = "NCCL NVTX range durations per name, per report and across reports"
    event = "range"
    raw_tables = {"StringIds": None, "NVTX_EVENTS": _NVTX}

    def durations(self, raw: RawTables, options: RecipeOptions) -> Durations | None:
        nccl = filter_time_range(_nccl(raw), options.start_ns, options.end_ns, ("start", "end"))
        if nccl.empty:
            return None
        return _durations(nccl["name"], nccl["start"], nccl["end"])


class NcclGpuProjSum(RangeSum):
    """``nccl_gpu_proj_sum``: the NCCL ranges projected onto the GPU, per name."""

    name = "nccl_gpu_proj_sum"
    description = "NCCL NVTX ranges projected onto the GPU, per name"
    event = "range"
    raw_tables = projection_tables(_NVTX)

    def durations(self, raw: RawTables, options: RecipeOptions) -> Durations | None:
        cuda = gpu_calls(raw, options.start_ns, options.end_ns)
        nccl = _nccl(raw)
        if nccl.empty or cuda.empty:
            return None
        projected = project_onto_gpu(nccl, cuda)
        if projected.empty:
            return None
        return _durations(projected["name"], projected["start"], projected["end"])
