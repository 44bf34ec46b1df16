"""``nvtx_pace`` and ``nvtx_gpu_proj_pace``: how one NVTX range progresses, iteration by
iteration, on the CPU or projected onto the GPU, in every report.

spec: nsys-sqlite.md §5.4; nsys 2023.4's recipes of the same names. The iterations are the
NVTX rows whose name (:func:`analysis.recipes._ranges.range_text`: the ``textId`` string,
else ``text``; no domain prefix) equals ``--name`` and that have a start and an end, in the
table's row order, as nsys takes them (any event type: a named mark has no end and drops
out). ``nvtx_gpu_proj_pace`` projects those ranges onto the GPU first
(:func:`analysis.recipes._ranges.project_onto_gpu`); the GPU operations are kernels,
memcpys and memsets, and ``--start``/``--end`` filter them, not the ranges. The tables and
statistics are those of :class:`analysis.recipes.pace.PaceRecipe`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.recipes._ranges import (
    gpu_calls,
    project_onto_gpu,
    projection_tables,
    range_text,
)
from strata.analysis.recipes._raw import RawTables, filter_time_range, read_tables, strings_of
from strata.analysis.recipes.base import RecipeOptions
from strata.analysis.recipes.pace import PacePartial, PaceRecipe

__all__ = ["NvtxGpuProjPace", "NvtxPace"]

_NVTX = ("text", "start", "end", "textId", "globalTid", "endGlobalTid")


def _partial(ranges: pd.DataFrame, session_start: int) -> PacePartial | None:
    complete = ranges[(ranges["start"].notna() & ranges["end"].notna()).to_numpy(bool)]
    if complete.empty:
        return None
    return PacePartial(
        start_ns=complete["start"].astype("int64").to_numpy(np.int64),
        end_ns=complete["end"].astype("int64").to_numpy(np.int64),
        session_start_utc_ns=session_start,
    )


def _named(nvtx: pd.DataFrame, strings: dict[int, str], name: str) -> pd.DataFrame:
    named = nvtx.assign(name=range_text(nvtx, strings))
    return named[(named["name"] == name).to_numpy(bool)]


class _NvtxPaceRecipe(PaceRecipe):
    """The NVTX pace recipes: the iterations are ranges named ``--name``, from the NVTX table."""

    what = "NVTX range's"
    #: The tables :meth:`ranges` reads beside the session start: table -> columns.
    range_tables: dict[str, tuple[str, ...] | None] = {}

    def ranges(self, raw: RawTables, options: RecipeOptions) -> pd.DataFrame | None:
        """Return the iterations (``start``, ``end``), or None for none."""
        raise NotImplementedError

    def instances(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {"TARGET_INFO_SESSION_START_TIME": None, **self.range_tables},
        )
        ranges = None if raw is None else self.ranges(raw, options)
        if ranges is None:
            return None
        return _partial(ranges, raw.first_int("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"))


class NvtxPace(_NvtxPaceRecipe):
    """``nvtx_pace --name RANGE`` across reports."""

    name = "nvtx_pace"
    description = "progress of one NVTX range (--name) iteration by iteration"
    range_tables = {"StringIds": None, "NVTX_EVENTS": _NVTX}

    def ranges(self, raw: RawTables, options: RecipeOptions) -> pd.DataFrame | None:
        nvtx = filter_time_range(
            raw["NVTX_EVENTS"], options.start_ns, options.end_ns, ("start", "end")
        )
        return _named(nvtx, strings_of(raw), options.kernel_name or "")


class NvtxGpuProjPace(_NvtxPaceRecipe):
    """``nvtx_gpu_proj_pace --name RANGE`` across reports."""

    name = "nvtx_gpu_proj_pace"
    description = "progress of one NVTX range (--name) projected onto the GPU"
    range_tables = projection_tables(_NVTX)

    def ranges(self, raw: RawTables, options: RecipeOptions) -> pd.DataFrame | None:
        cuda = gpu_calls(raw, options.start_ns, options.end_ns)
        nvtx = raw["NVTX_EVENTS"]
        if cuda.empty or nvtx.empty:
            return None
        return project_onto_gpu(_named(nvtx, strings_of(raw), options.kernel_name or ""), cuda)
