"""The GPU idle-time rules of ``nsys analyze``: gpu_gaps and gpu_time_util.

The computation is the one of the recipes of the same names (:mod:`analysis.gpu_idle`):
GPU operations plus CUDA profiler overhead, per process and device. The rules add nsys's
row limit, which cuts the gap (chunk) query before the ranking as well as after it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import AnalysisError
from strata.analysis.gpu_idle import find_gaps, gpu_ops, low_utilization, time_utilization
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.rules._base import Rule, SkipRule, limit_rows, register, row_filter

__all__ = ["GPU_TABLES"]

#: The GPU operation tables of nsys's GPUOperation rules; without any of them, SKIPPED.
GPU_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "VULKAN_WORKLOAD",
    "OPENGL_WORKLOAD",
    "DX12_WORKLOAD",
)
_GRAPHICS = GPU_TABLES[3:]
_SUGGESTIONS = (
    "Addressing {what} might improve application performance.\n\nSuggestions:\n"
    "   1. Use CPU sampling data, OS Runtime blocked state backtraces, and/or OS Runtime"
    " APIs related to thread synchronization to understand if a sluggish or blocked CPU is"
    " causing the gaps.\n"
    "   2. Add NVTX annotations to CPU code to understand the reason behind the gaps."
)


def _ops(report: Report, options: Mapping[str, object]) -> pd.DataFrame:
    if not any(report.has_source(t) for t in GPU_TABLES):
        raise SkipRule(
            f"{report.name} could not be analyzed because it does not contain the required"
            " data. Does the application launch GPU operations?"
        )
    _refuse_graphics(report)
    return gpu_ops(report, row_filter(report, options))


def _refuse_graphics(report: Report) -> None:
    """Graphics GPU work (Vulkan, OpenGL, DX12) is not modelled: refuse rather than leave
    it out of the idle time silently."""
    columns = report.source_columns
    for table in _GRAPHICS:
        if table in columns and _has_rows(report, table):
            raise AnalysisError(
                f"{report.name}: {table} has GPU work, which Strata's GPU rules do not read "
                "yet (CUDA only); run 'nsys analyze' for this report"
            )


def _has_rows(report: Report, table: str) -> bool:
    source = sqlite_source(report.path)
    if source is None:
        return False
    with ReportDatabase(source) as db:
        return db.count(table) > 0


def _gaps(report: Report, options: Mapping[str, object]):
    ops = _ops(report, options)
    rows = int(options["rows"])
    gap_ns = int(options["gap"]) * 1_000_000
    # nsys's gap query has its own LIMIT, in (process, device, time) order; SQLite drops it
    # when the query is the only GPU table (flattened into the ranking query), not when the
    # report has graphics tables too (a UNION of per-API views, even empty ones).
    graphics = any(report.has_source(t) for t in _GRAPHICS)
    table = find_gaps(ops, gap_ns, limit=rows if graphics else None)
    table = table.assign(_kind="gap")
    return limit_rows(table, rows), {"Duration": "dur", "Start": "ts"}


def _time_util(report: Report, options: Mapping[str, object]):
    ops = _ops(report, options)
    rows = int(options["rows"])
    columns = ["Row#", "In-Use", "Duration", "Start", "PID", "Device ID", "Context ID"]
    if len(ops):
        chunks = time_utilization(ops, int(options["chunks"]))
        # The chunk query's LIMIT applies first (an aggregate: never flattened).
        table = low_utilization(chunks, int(options["threshold"]), limit=rows)
    else:
        table = pd.DataFrame({c: np.empty(0, np.int64) for c in columns})
    table = table.assign(_kind="gap")
    return limit_rows(table, rows), {"In-Use": "ratio", "Duration": "dur", "Start": "ts"}


def _check_chunks(options: Mapping[str, object]) -> None:
    # nsys lets chunks=0 through (its check tests 'if chunks and ...') and prints nothing.
    if not 1 <= int(options["chunks"]) <= 1000:
        raise AnalysisError(
            f"gpu_time_util: chunks must be between 1 and 1000, not {options['chunks']}"
        )


register(
    Rule(
        "gpu_gaps",
        "GPU Gaps",
        "The following are ranges where a GPU is idle for more than {gap}ms. "
        + _SUGGESTIONS.format(what="these gaps"),
        "There were no problems detected with GPU utilization. GPU was not found to be idle"
        " for more than {gap}ms.",
        _gaps,
        options={"gap": (int, 500)},
    )
)
register(
    Rule(
        "gpu_time_util",
        "GPU Time Utilization",
        # '%%': nsys formats these with str.format, which leaves the doubled sign as is.
        "The following are time regions with an average GPU utilization below {threshold}%%. "
        + _SUGGESTIONS.format(what="the gaps"),
        "There were no problems detected with GPU utilization. No time regions have an"
        " average GPU utilization below {threshold}%%.",
        _time_util,
        options={"threshold": (int, 50), "chunks": (int, 30)},
        check=_check_chunks,
    )
)
