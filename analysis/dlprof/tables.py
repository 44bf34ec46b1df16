"""DLProf's per-op and per-kernel tables over the aggregated iterations (spec dlprof.md §3).

Each function takes the selected op instances and GPU operations of one report (see
:mod:`analysis.dlprof.reports`) and returns one DataFrame whose columns are DLProf's, times in
integer ns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "STAT_KINDS",
    "detailed_table",
    "group_node_table",
    "iteration_table",
    "kernel_table",
    "op_ids",
    "op_type_table",
]

#: The per-op measures DLProf aggregates (spec §3 ``detailed``), column name -> ops column.
STAT_KINDS = {"CPU Time": "cpu_ns", "GPU Time": "gpu_ns", "CPU Overhead": "overhead_ns"}
_STATS = (("Total", "sum"), ("Avg.", "mean"), ("Min", "min"), ("Max", "max"))


def op_ids(ops: pd.DataFrame) -> pd.Series:
    """DLProf's Op ID per op instance: upper-cased op type, ``_``, ordinal of its op name.

    The ordinal counts the distinct op names of one type in order of first appearance
    (spec §3: ``CONV2D_1``, ``UNIFORM__10`` for the tenth ``uniform_``); a forward op and its
    backward share a name, hence an ID.
    """
    first = ops.sort_values("start_ns", kind="stable").drop_duplicates("op_name")
    ordinal = first.groupby("op_type", sort=False).cumcount() + 1
    ids = first["op_type"].astype(str).str.upper() + "_" + ordinal.astype(str)
    return ops["op_name"].map(pd.Series(ids.to_numpy(), index=first["op_name"].to_numpy()))


def _stats(grouped, prefix_columns: dict) -> pd.DataFrame:
    parts = dict(prefix_columns)
    for label, column in STAT_KINDS.items():
        for stat, func in _STATS:
            values = grouped[column].agg(func)
            parts[f"{stat} {label} (ns)"] = (
                values.round().astype(np.int64) if func == "mean" else values.astype(np.int64)
            )
    return pd.DataFrame(parts)


def detailed_table(ops: pd.DataFrame) -> pd.DataFrame:
    """One row per (op, direction): calls, Tensor Core use, CPU/GPU/overhead statistics."""
    keys = ["Op ID", "Op Name", "Direction", "Op Type"]
    frame = ops.rename(columns={"op_id": "Op ID", "op_name": "Op Name",
                                "direction": "Direction", "op_type": "Op Type"})  # fmt: skip
    grouped = frame.groupby(keys, sort=False)
    out = _stats(grouped, {
        "No. Calls": grouped.size(), "TC Eligible": grouped["tc_eligible"].any(),
        "Using TC": grouped["tc_gpu_ns"].sum() > 0, "Kernels": grouped["kernels"].sum(),
    }).reset_index()  # fmt: skip
    return out.sort_values(["Total GPU Time (ns)", "Total CPU Time (ns)"], ascending=False,
                           kind="stable").reset_index(drop=True)  # fmt: skip


def op_type_table(ops: pd.DataFrame) -> pd.DataFrame:
    """One row per op type: distinct ops, calls and the statistics of ``detailed``."""
    grouped = ops.groupby("op_type", sort=False)
    out = _stats(grouped, {"# Ops": grouped["op_id"].nunique(), "# Calls": grouped.size()})
    out = out.rename_axis("Op Type").reset_index()
    return out.sort_values("Total GPU Time (ns)", ascending=False, kind="stable").reset_index(
        drop=True
    )


def _prefixes(name: str) -> list[str]:
    """``/a/b/op`` -> ``/``, ``/a/``, ``/a/b/`` (the group nodes above an op)."""
    cuts = [i for i, ch in enumerate(name) if ch == "/"]
    return [name[: i + 1] for i in cuts] if name.startswith("/") else []


def group_node_table(ops: pd.DataFrame) -> pd.DataFrame:
    """One row per group node (module path prefix): every op below it rolled up (spec §3)."""
    ops = ops[~ops["is_unassociated"]]
    names = ops["op_name"].drop_duplicates()
    pairs = [(n, p) for n in names.tolist() for p in _prefixes(n)]  # per distinct op name
    links = pd.DataFrame(pairs, columns=["op_name", "Name"])
    rolled = ops.merge(links, on="op_name")
    grouped = rolled.groupby("Name", sort=True)
    eligible = rolled[rolled["tc_eligible"]].groupby("Name")["op_id"].nunique()
    using = rolled[rolled["tc_gpu_ns"] > 0].groupby("Name")["op_id"].nunique()
    count = grouped.size()
    out = _stats(grouped, {
        "Num Calls Aggregated": count,
        "Num TC Eligible Ops": eligible.reindex(count.index, fill_value=0).astype(np.int64),
        "Num Ops Using TC": using.reindex(count.index, fill_value=0).astype(np.int64),
    })  # fmt: skip
    return out.rename_axis("Name").reset_index()


def _op_columns(gpu: pd.DataFrame, ops: pd.DataFrame) -> pd.DataFrame:
    op = gpu["op"].to_numpy()
    has = op >= 0
    at = np.maximum(op, 0)
    out = {}
    for src, dst in (("op_id", "Op ID"), ("op_name", "Op Name"), ("direction", "Direction"),
                     ("op_type", "Op Type")):  # fmt: skip
        values = ops[src].to_numpy(object)
        out[dst] = np.where(has, values[at] if len(values) else "", "")
    return pd.DataFrame(out, index=gpu.index)


def kernel_table(gpu: pd.DataFrame, ops: pd.DataFrame) -> pd.DataFrame:
    """One row per (kernel name, op, direction): launches, GPU and launch API times."""
    kernels = gpu[gpu["table"] == "kernels"]
    frame = pd.concat([kernels[["name", "uses_tc"]], _op_columns(kernels, ops)], axis=1)
    frame["gpu_ns"] = kernels["end_ns"] - kernels["start_ns"]
    frame["api_ns"] = np.where(kernels["api_start_ns"] >= 0,
                               kernels["api_end_ns"] - kernels["api_start_ns"], 0)  # fmt: skip
    keys = ["name", "Op ID", "Op Name", "Direction", "uses_tc"]
    grouped = frame.groupby(keys, sort=False)
    out = {"Calls": grouped.size()}
    for label, column in (("GPU Time", "gpu_ns"), ("API Time", "api_ns")):
        for stat, func in (("Total", "sum"), ("Avg", "mean"), ("Min", "min"), ("Max", "max")):
            values = grouped[column].agg(func)
            out[f"{stat} {label} (ns)"] = (
                values.round().astype(np.int64) if func == "mean" else values.astype(np.int64)
            )
    table = pd.DataFrame(out).reset_index()
    table = table.rename(columns={"name": "Kernel Name", "uses_tc": "Uses TC"})
    table = table[["Kernel Name", "Op ID", "Op Name", "Direction", "Uses TC",
                   *[c for c in table.columns if c.endswith("(ns)") or c == "Calls"]]]  # fmt: skip
    return table.sort_values("Total GPU Time (ns)", ascending=False, kind="stable").reset_index(
        drop=True
    )


def iteration_table(gpu: pd.DataFrame, ops: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel launch, in GPU start order, with its iteration and op."""
    kernels = gpu[gpu["table"] == "kernels"].sort_values("start_ns", kind="stable")
    ops_part = _op_columns(kernels, ops)
    has_api = kernels["api_start_ns"] >= 0
    out = pd.DataFrame({
        "Iteration": kernels["iteration"], **{c: ops_part[c] for c in ops_part.columns},
        "Kernel Name": kernels["name"], "Device ID": kernels["device_id"],
        "GPU Start Time (ns)": kernels["start_ns"],
        "GPU Duration (ns)": kernels["end_ns"] - kernels["start_ns"],
        "API Call Start (ns)": kernels["api_start_ns"],
        "API Call Time (ns)": np.where(has_api, kernels["api_end_ns"] - kernels["api_start_ns"], 0),
        "Uses TC": kernels["uses_tc"],
    })  # fmt: skip
    for axis in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
        head, tail = axis.split("_")
        out[f"{head.title()} {tail.upper()}"] = kernels[axis].astype(np.int64)
    out["Long Kernel Name"] = kernels["long_name"]
    return out.reset_index(drop=True)
