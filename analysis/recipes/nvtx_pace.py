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
from strata.analysis.recipes._raw import filter_time_range, read_tables, strings_of
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


class NvtxPace(PaceRecipe):
    """``nvtx_pace --name RANGE`` across reports."""

    name = "nvtx_pace"
    description = "progress of one NVTX range (--name) iteration by iteration"
    what = "NVTX range's"

    def instances(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {"TARGET_INFO_SESSION_START_TIME": None, "StringIds": None, "NVTX_EVENTS": _NVTX},
        )
        if raw is None:
            return None
        nvtx = filter_time_range(
            raw["NVTX_EVENTS"], options.start_ns, options.end_ns, ("start", "end")
        )
        ranges = _named(nvtx, strings_of(raw), options.kernel_name or "")
        return _partial(ranges, raw.first_int("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"))


class NvtxGpuProjPace(PaceRecipe):
    """``nvtx_gpu_proj_pace --name RANGE`` across reports."""

    name = "nvtx_gpu_proj_pace"
    description = "progress of one NVTX range (--name) projected onto the GPU"
    what = "NVTX range's"

    def instances(self, report_path: Path, options: RecipeOptions) -> PacePartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {"TARGET_INFO_SESSION_START_TIME": None, **projection_tables(_NVTX)},
        )
        if raw is None:
            return None
        cuda = gpu_calls(raw, options.start_ns, options.end_ns)
        nvtx = raw["NVTX_EVENTS"]
        if cuda.empty or nvtx.empty:
            return None
        ranges = _named(nvtx, strings_of(raw), options.kernel_name or "")
        projected = project_onto_gpu(ranges, cuda)
        return _partial(projected, raw.first_int("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"))
