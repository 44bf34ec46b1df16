"""NVTX and OS-runtime summaries: nvtx_sum (+ push/pop, start/end), nvtx_kern_sum, the GPU
projection reports nvtx_gpu_proj_sum / nvtx_gpu_proj_trace, and osrt_sum.

spec: nsys-sqlite.md §3.4, §3.5, §3.11, §3.12, §4.1. Range labels follow nsys 2023.4: a
default-domain range is its plain text (nsys 2024+ prints ``:text``).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis.engine import group_stats, sqlite_round
from strata.analysis.kinds import get_kind
from strata.analysis.model import Report
from strata.analysis.nvtx import contained_pairs, range_labels, range_rows, range_styles
from strata.analysis.projection import api_matches, projection_details
from strata.analysis.schema import (
    NVTX_PUSHPOP_TYPES,
    NVTX_RANGE_TYPES,
    NVTX_STARTEND_TYPES,
    pid_of,
    tid_of,
)
from strata.analysis.stats import _base, plaintables
from strata.analysis.stats._base import SkipReport, register, require
from strata.analysis.stats.cuda import calls_frame, kernel_names

__all__: list[str] = []

_NVTX = "NVTX_EVENTS"
_KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_NVTX_MISSING = "NV Tools Extension (NVTX) data"
_STAT_COLS = ("Total Time", "Avg", "Med", "Min", "Max", "StdDev")


def _dur_units(frame: pd.DataFrame, timed: tuple[str, ...] = _STAT_COLS) -> dict:
    units = {c: ("dur" if c in timed else None) for c in frame.columns}
    if "Time" in units:
        units["Time"] = "ratio"
    return units


def _range_summary(report: Report, types: tuple[int, ...], with_style: bool, xp: ModuleType):
    require(report, report.has_source(_NVTX), _NVTX_MISSING)
    rows = range_rows(report, types)
    nvtx = report.nvtx
    labels = range_labels(report, rows)
    styles = range_styles(nvtx["event_type"][rows])
    dur = nvtx["end_ns"][rows] - nvtx["start_ns"][rows]
    style_col = None
    if with_style:
        codes, keys = _base.factorize_rows(pd.DataFrame({"r": labels, "s": styles}))
        stats = group_stats(codes, dur, xp)
        key_rows = keys.iloc[stats.keys]
        range_col = key_rows.iloc[:, 0].to_numpy(object)
        style_col = key_rows.iloc[:, 1].to_numpy(object).tolist()
    else:
        range_col, stats = _base.grouped(labels, dur, xp)
    # The rules of the table (the SQL path's nvtx_sum too): analysis.stats.plaintables.
    table = plaintables.nvtx_table(range_col.tolist(), style_col, stats.plain())
    return _base.table_frame(table)


@register("nvtx_sum")
def nvtx_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _range_summary(report, NVTX_RANGE_TYPES, True, xp)


@register("nvtx_pushpop_sum")
def nvtx_pushpop_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _range_summary(report, NVTX_PUSHPOP_TYPES, False, xp)


@register("nvtx_startend_sum")
def nvtx_startend_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _range_summary(report, NVTX_STARTEND_TYPES, False, xp)


@register("osrt_sum")
def osrt_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    require(report, report.has_source("OSRT_API"), "OS Runtime trace data")
    osrt = report.osrt
    calls = get_kind("osrt").row_indices(report)
    ids = osrt["name_id"][calls]
    codes = np.where(ids >= 0, ids, len(report.strings)).astype(np.int64)
    stats = group_stats(codes, osrt.duration_ns[calls], xp)
    names = report.strings.lookup(np.where(stats.keys == len(report.strings), -1, stats.keys))
    return calls_frame(names, stats)


@register("nvtx_kern_sum")
def nvtx_kern_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    require(report, report.has_source(_NVTX), _NVTX_MISSING)
    require(report, report.has_source(_KERNEL), "CUDA kernel data")
    require(report, report.has_source(_RUNTIME), "CUDA API data")
    kernels, api, nvtx = report.kernels, report.cuda_api, report.nvtx
    # SQL: kernel LEFT JOIN runtime LEFT JOIN ranges, one row per (kernel, call, range).
    k_of, a_of = api_matches(report, kernels["correlation_id"], kernels["global_pid"])
    rows = range_rows(report, same_thread_only=True)
    r_idx, p_idx = contained_pairs(
        nvtx["global_tid"][rows], nvtx["start_ns"][rows], nvtx["end_ns"][rows],
        api["global_tid"][a_of], api.start_ns[a_of], api.end_ns[a_of],
    )  # fmt: skip
    alone = np.setdiff1d(np.arange(len(k_of)), p_idx)
    unlaunched = np.setdiff1d(np.arange(len(kernels)), k_of)
    kernel_rows = np.concatenate([k_of[p_idx], k_of[alone], unlaunched])
    call_rows = np.concatenate([a_of[p_idx], a_of[alone], np.full(len(unlaunched), -1)])
    r_all = np.concatenate([r_idx, np.full(len(alone) + len(unlaunched), -1)])
    gtid = pd.array(api["global_tid"][np.maximum(call_rows, 0)], dtype="Int64")
    gtid[call_rows < 0] = pd.NA
    labels = np.append(range_labels(report, rows), None)[r_all]
    styles = np.append(range_styles(nvtx["event_type"][rows]), None)[r_all]
    key = pd.DataFrame({
        "range": pd.Series(labels, dtype=object).fillna(""),
        "style": pd.Series(styles, dtype=object).fillna(""),
        "pid": (gtid // (1 << 24)) % (1 << 24), "tid": gtid % (1 << 24),
        "kernel": kernel_names(report, args)[kernel_rows],
    })  # fmt: skip
    codes, keys = _base.factorize_rows(key)
    stats = group_stats(codes, kernels.duration_ns[kernel_rows], xp)
    key_rows = keys.iloc[stats.keys].reset_index(drop=True)
    range_ids = np.where(r_all >= 0, nvtx["row_id"][rows][np.maximum(r_all, 0)], -1)
    distinct = pd.DataFrame({"g": codes, "r": range_ids, "k": kernel_rows})
    n_ranges = distinct[distinct["r"] >= 0].groupby("g")["r"].nunique()
    n_kernels = distinct.groupby("g")["k"].nunique()
    block = _base.stat_block(stats, count_name=None, labels=key_rows["kernel"].to_numpy(object))
    frame = pd.DataFrame({
        "NVTX Range": key_rows["range"].to_numpy(object),
        "Style": key_rows["style"].to_numpy(object),
        "PID": key_rows["pid"].astype("Int64").array,
        "TID": key_rows["tid"].astype("Int64").array,
        "NVTX Inst": n_ranges.reindex(stats.keys).fillna(0).to_numpy(np.int64),
        "Kern Inst": n_kernels.reindex(stats.keys).to_numpy(np.int64),
        **block,
        "Kernel Name": key_rows["kernel"].to_numpy(object),
    })  # fmt: skip
    frame = _base.order_rows(frame, ["NVTX Range", "PID", "TID", "Total Time"],
                       [True, True, True, False])  # fmt: skip
    return frame, _dur_units(frame)


def _child_sums(parent: np.ndarray, duration: np.ndarray, n: int) -> np.ndarray:
    """Per range, the exact sum of its children's durations (int64).

    A float64 ``bincount`` is exact while every sum stays below 2^53 (always, in practice);
    otherwise the sums are redone exactly, and one past int64 fails as nsys's SQL does.
    """
    has_parent = parent >= 0
    sums = np.bincount(parent[has_parent], weights=duration[has_parent], minlength=n)
    if not len(sums) or float(np.abs(sums).max()) < 2.0**53:
        return sums.astype(np.int64)
    stats = group_stats(parent[has_parent], duration[has_parent])
    exact = np.zeros(n, dtype=np.int64)
    exact[stats.keys] = _base.checked_totals(stats.total)
    return exact


def _projection(report: Report):
    require(report, report.has_source(_NVTX), _NVTX_MISSING)
    require(report, report.has_source(_RUNTIME), "CUDA API data")
    if not any(report.has_source(t) for t in (_KERNEL, "CUPTI_ACTIVITY_KIND_MEMCPY",
                                               "CUPTI_ACTIVITY_KIND_MEMSET")):  # fmt: skip
        raise SkipReport(f"{report.name} does not contain GPU operation data.")
    return projection_details(report)


_PROJ_TIMED = ("Total Proj Time", "Total Range Time", "Proj Avg", "Proj Med", "Proj Min",
               "Proj Max", "Proj StdDev")  # fmt: skip


@register("nvtx_gpu_proj_sum")
def nvtx_gpu_proj_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    proj = _projection(report).frame
    proj = proj[proj["name"].notna()]
    codes, keys = _base.factorize_rows(
        pd.DataFrame({"r": proj["name"].to_numpy(object), "s": proj["style"].to_numpy(object)})
    )
    span = (proj["end_ns"] - proj["start_ns"]).to_numpy(np.int64)
    stats = group_stats(codes, span, xp)
    key_rows = keys.iloc[stats.keys]
    per = pd.DataFrame({"g": codes,
                        "ops": proj["num_gpu_ops"], "lvl": proj["level"],
                        "child": proj["num_child"]}).groupby("g")  # fmt: skip
    block = _base.stat_block(stats, "Proj ", count_name=None, total_name=None)
    labels = key_rows.iloc[:, 0].to_numpy(object)
    orig = (proj["orig_end_ns"] - proj["orig_start_ns"]).to_numpy(np.int64)
    frame = pd.DataFrame({
        "Range": labels,
        "Style": key_rows.iloc[:, 1].to_numpy(object),
        "Total Proj Time": _base.checked_totals(stats.total, labels),
        # Same codes as ``stats``: the groups come out in the same order.
        "Total Range Time": _base.checked_totals(group_stats(codes, orig).total, labels),
        "Range Instances": stats.count,
        **block,
        "Total GPU Ops": per["ops"].sum().reindex(stats.keys).to_numpy(np.int64),
        "Avg GPU Ops": sqlite_round(per["ops"].mean().reindex(stats.keys).to_numpy(float)),
        "Avg Range Lvl": sqlite_round(per["lvl"].mean().reindex(stats.keys).to_numpy(float)),
        "Avg Num Child": sqlite_round(per["child"].mean().reindex(stats.keys).to_numpy(float)),
    })  # fmt: skip
    frame = _base.order_rows(frame, ["Total Proj Time"], [False])
    return frame, _dur_units(frame, _PROJ_TIMED)


@register("nvtx_gpu_proj_trace")
def nvtx_gpu_proj_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    details = _projection(report)
    proj = details.frame
    frame = pd.DataFrame({
        "Name": proj["name"].astype(object),
        "Projected Start": proj["start_ns"],
        "Projected Duration": proj["end_ns"] - proj["start_ns"],
        "Orig Start": proj["orig_start_ns"].astype(object),
        "Orig Duration": (proj["orig_end_ns"] - proj["orig_start_ns"]).astype(object),
        "Style": proj["style"].astype(object),
        "PID": proj["pid"], "TID": proj["tid"], "NumGPUOps": proj["num_gpu_ops"],
        "Lvl": proj["level"], "NumChild": proj["num_child"],
        "RangeId": proj["range_id"].astype(object), "ParentId": proj["parent_id"],
        "RangeStack": proj["range_stack"].astype(object),
    })  # fmt: skip
    outside = details.outside
    if outside is not None:
        # nsys 2023.4 prints ops launched outside every range as one nameless first row.
        anon = {col: None for col in frame.columns}
        anon.update({
            "Projected Start": outside["start_ns"],
            "Projected Duration": outside["end_ns"] - outside["start_ns"],
            "PID": outside["pid"], "TID": outside["tid"],
            "NumGPUOps": outside["num_gpu_ops"], "NumChild": 0,
            "Lvl": np.nan, "ParentId": np.nan,
        })  # fmt: skip
        frame = pd.concat([pd.DataFrame([anon]), frame], ignore_index=True)
    for col in ("Lvl", "ParentId"):
        frame[col] = frame[col].astype("Int64")
    units = {c: None for c in frame.columns}
    units.update({"Projected Start": "ts", "Orig Start": "ts", "Projected Duration": "dur",
                  "Orig Duration": "dur"})  # fmt: skip
    return frame, units


@register("nvtx_pushpop_trace")
def nvtx_pushpop_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    """Every push/pop range with its place in the tree of tightest enclosing ranges.

    spec §6.4 and the 2023.4 report: unclosed ranges end at the largest push/pop timestamp,
    ``DurChild`` sums the children's durations, and ranges not reachable from a root
    (identical twins point at each other) are not listed.
    """
    from strata.analysis.projection import range_levels, range_parents, range_stacks

    require(report, report.has_source(_NVTX), _NVTX_MISSING)
    nvtx = report.nvtx
    rows = range_rows(report, NVTX_PUSHPOP_TYPES)
    start = nvtx["start_ns"][rows]
    end = nvtx["end_ns"][rows].copy()
    is_open = nvtx["is_open"][rows].astype(bool)
    if is_open.any():
        closed_ends = end[~is_open]
        end[is_open] = max(int(start.max()), int(closed_ends.max()) if len(closed_ends) else 0)
    tid, row_id = nvtx["global_tid"][rows], nvtx["row_id"][rows]
    parent = range_parents(tid, start, end, row_id)
    duration = end - start
    has_parent = parent >= 0
    child_dur = _child_sums(parent, duration, len(rows))
    num_child = np.bincount(parent[has_parent], minlength=len(rows))
    level = range_levels(parent)
    stacks = range_stacks(parent, level, row_id)
    labels = range_labels(report, rows)
    shown = np.flatnonzero(level >= 0)
    shown = shown[np.lexsort((duration[shown], start[shown]))]
    p = parent[shown]
    frame = pd.DataFrame({
        "Start": start[shown], "End": end[shown], "Duration": duration[shown],
        "DurChild": child_dur[shown],
        "DurNonChild": duration[shown] - child_dur[shown],
        "Name": labels[shown], "PID": pid_of(tid[shown]), "TID": tid_of(tid[shown]),
        "Lvl": level[shown], "NumChild": num_child[shown].astype(np.int64),
        "RangeId": row_id[shown],
        "ParentId": pd.array(np.where(p >= 0, row_id[np.maximum(p, 0)], 0), dtype="Int64"),
        "RangeStack": stacks[shown],
        "NameTree": ["--" * lv + (n or "") for lv, n in zip(level[shown].tolist(),
                                                            labels[shown].tolist(), strict=True)],
    })  # fmt: skip
    frame.loc[p < 0, "ParentId"] = pd.NA
    units = {c: None for c in frame.columns}
    units.update({"Start": "ts", "End": "ts", "Duration": "dur", "DurChild": "dur",
                  "DurNonChild": "dur"})  # fmt: skip
    return frame, units
