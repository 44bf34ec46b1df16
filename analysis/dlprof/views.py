"""Views of one report's DLProf aggregation for a panel or a notebook: one row per op, op type
or group node in snake_case columns, the summary's key figures, and the report events behind
a row (its op instances' ranges or calls, and the GPU work they launched).

The rows are :func:`analysis.dlprof.reports.analyze_report`'s ``detailed``, ``op_type`` and
``group_node`` tables, renamed and sorted by GPU time; nothing is computed twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.dlprof.ops import GPU_TABLES
from strata.analysis.dlprof.reports import DlprofResult
from strata.analysis.errors import AnalysisError

__all__ = [
    "EVENT_TABLES",
    "OPS_VIEWS",
    "OpEvents",
    "SummaryFigures",
    "op_events",
    "summary_figures",
    "view_frame",
]

#: The views and the DLProf table each shows.
OPS_VIEWS = {"op": "detailed", "op_type": "op_type", "group_node": "group_node"}

#: Per view: DLProf's column -> ours. ``name`` is what a row is called (and filtered by).
_COLUMNS = {
    "op": {
        "Op ID": "op_id", "Op Name": "name", "Direction": "direction", "Op Type": "op_type",
        "Total GPU Time (ns)": "gpu_ns", "Total CPU Time (ns)": "cpu_ns", "Kernels": "kernels",
        "Using TC": "uses_tc", "TC Eligible": "tc_eligible", "No. Calls": "calls",
        "Total CPU Overhead (ns)": "overhead_ns",
    },
    "op_type": {
        "Op Type": "name", "Total GPU Time (ns)": "gpu_ns", "Total CPU Time (ns)": "cpu_ns",
        "# Ops": "ops", "# Calls": "calls", "Total CPU Overhead (ns)": "overhead_ns",
    },
    "group_node": {
        "Name": "name", "Total GPU Time (ns)": "gpu_ns", "Total CPU Time (ns)": "cpu_ns",
        "Num Calls Aggregated": "calls", "Num TC Eligible Ops": "tc_eligible_ops",
        "Num Ops Using TC": "tc_ops", "Total CPU Overhead (ns)": "overhead_ns",
    },
}  # fmt: skip

#: The tables an op's events are drawn in: its range (or its call, unassociated) and its
#: GPU work.
EVENT_TABLES = ("nvtx", "cuda_api", *GPU_TABLES)


def _check_view(view: str) -> None:
    if view not in OPS_VIEWS:
        raise AnalysisError(f"unknown ops view {view!r}; choose among {', '.join(OPS_VIEWS)}")


def view_frame(result: DlprofResult, view: str = "op") -> pd.DataFrame:
    """Return one report's rows of ``view`` (:data:`OPS_VIEWS`), largest GPU time first.

    Columns: ``name`` and the view's own (``op``: ``op_id``, ``direction``, ``op_type``,
    ``gpu_ns``, ``cpu_ns``, ``kernels``, ``uses_tc``...; the others: ``gpu_ns``, ``cpu_ns``,
    ``calls``...), times in int64 ns totalled over the aggregated iterations.
    """
    _check_view(view)
    columns = _COLUMNS[view]
    table = result.tables[OPS_VIEWS[view]]
    frame = table[list(columns)].rename(columns=columns)
    return frame.sort_values("gpu_ns", ascending=False, kind="stable").reset_index(drop=True)


def _instances(result: DlprofResult, view: str, name: str, direction: str | None) -> pd.DataFrame:
    ops = result.ops
    if view == "op":
        mask = ops["op_name"] == name
        if direction is not None:
            mask &= ops["direction"] == direction
    elif view == "op_type":
        mask = ops["op_type"] == name
    else:  # a group node: every op below it, as group_node_table rolls them up
        names = ops["op_name"].astype(str)
        mask = ~ops["is_unassociated"] & names.str.startswith(name) & name.endswith("/")
    return ops[mask.to_numpy(bool)]


@dataclass(frozen=True)
class OpEvents:
    """The report events behind one row of a view.

    Attributes
    ----------
    instances
        One row per op instance, in time order: ``table`` (``nvtx`` for an op's range,
        ``cuda_api`` for a call outside every op), ``row`` (of that report table),
        ``start_ns``, ``end_ns``.
    rows
        Per table of :data:`EVENT_TABLES`: the sorted report rows of the instances and of
        the GPU work (kernels, memcpy, memset) they launched.
    """

    instances: pd.DataFrame
    rows: dict[str, np.ndarray]


def op_events(result: DlprofResult, view: str, name: str, direction: str | None = None) -> OpEvents:
    """Return the events of the row of ``view`` called ``name`` (an op also by its
    ``direction``; None: both). Unknown names give no events."""
    _check_view(view)
    ops = _instances(result, view, name, direction).sort_values("start_ns", kind="stable")
    has_range = ops["nvtx_row"].to_numpy() >= 0
    instances = pd.DataFrame({
        "table": np.where(has_range, "nvtx", "cuda_api"),
        "row": np.where(has_range, ops["nvtx_row"], ops["api_row"]).astype(np.int64),
        "start_ns": ops["start_ns"].to_numpy(np.int64),
        "end_ns": ops["end_ns"].to_numpy(np.int64),
    })  # fmt: skip
    gpu = result.gpu
    launched = gpu[np.isin(gpu["op"].to_numpy(), ops.index.to_numpy())]
    rows = {}
    for table in EVENT_TABLES:
        if table in GPU_TABLES:
            mine = launched["row"][launched["table"].to_numpy() == table]
        else:
            mine = instances["row"][instances["table"].to_numpy() == table]
        rows[table] = np.sort(mine.to_numpy(np.int64))
    return OpEvents(instances, rows)


@dataclass(frozen=True)
class SummaryFigures:
    """The key figures of one report's DLProf summary (percentages rounded to 0.1)."""

    iterations: int
    aggregated_iterations: int
    gpu_utilization_pct: float
    tc_utilization_pct: float
    advice: int


def summary_figures(result: DlprofResult) -> SummaryFigures:
    """Return the iterations, GPU utilization, Tensor Core kernel utilization and how many
    pieces of advice the expert systems give."""
    values = result.tables["summary"].set_index("Metric")["Value"]
    return SummaryFigures(
        int(values["Total Iterations"]), int(values["Aggregated Iterations"]),
        float(values["GPU Utilization %"]), float(values["Tensor Core Kernel Utilization %"]),
        len(result.tables["expert_systems"]),
    )  # fmt: skip
