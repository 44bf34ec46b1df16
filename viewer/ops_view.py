"""What the stats panel's Ops tab shows: its views (ops, op types, group nodes of a DLProf
aggregation, :mod:`analysis.dlprof.views`) and their columns. Qt-free."""

from __future__ import annotations

import pandas as pd

from strata.viewer.table_model import Column

__all__ = ["OPS_VIEW_TITLES", "ops_columns"]

#: (view, title) of the Ops tab's view selector, as :data:`analysis.dlprof.views.OPS_VIEWS`.
OPS_VIEW_TITLES = (("op", "Per op"), ("op_type", "Per op type"), ("group_node", "Per group node"))

# The report (short label) after the name and the times: it tells rows of several reports
# apart, it is not what a row is about.
_COLUMNS = [
    Column("name", "Name", "text", "The op's path (modules and calls above it), its op type, "
           "or a group node (a path prefix: every op below it)"),
    Column("direction", "Direction", "text", "fprop: forward; bprop: backward"),
    Column("gpu_ns", "GPU Time (ns)", "int", "Its kernels, memcpy and memset, summed"),
    Column("cpu_ns", "CPU Time (ns)", "int", "Its ranges' durations, summed"),
    Column("report", "Report", "text"),
    Column("kernels", "Kernels", "int", "Kernel launches"),
    Column("uses_tc", "Uses TC", "text", "A kernel of it uses Tensor Cores"),
    Column("ops", "Ops", "int", "Distinct ops of the type"),
    Column("calls", "Calls", "int", "Op instances"),
    Column("tc_eligible_ops", "TC eligible", "int", "Ops below it that could use Tensor Cores"),
    Column("tc_ops", "Using TC", "int", "Ops below it that use Tensor Cores"),
    Column("overhead_ns", "CPU Overhead (ns)", "int", "CPU time outside its CUDA API calls"),
    Column("op_type", "Op Type", "text"),
    Column("op_id", "Op ID", "text", "DLProf's id: the op type and the ordinal of its name"),
]  # fmt: skip


def ops_columns(frame: pd.DataFrame) -> list[Column]:
    """Return the Ops tab's columns for ``frame`` (those it has; the report when it mixes
    several)."""
    several = "report" in frame.columns and frame["report"].nunique() > 1
    return [c for c in _COLUMNS if c.key in frame.columns and (c.key != "report" or several)]
