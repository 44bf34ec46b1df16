"""CUDA summaries: kernels, API calls, memory operations, the GPU trace, launch/exec time.

spec: nsys-sqlite.md §3.2 (cuda_gpu_kern_sum, _gb_sum), §3.3 (cuda_api_sum), §3.6/§3.7
(cuda_gpu_mem_time_sum, _size_sum), §3.8 (cuda_gpu_trace), §3.9 (cuda_api_gpu_sum,
cuda_gpu_sum), §3.10 (cuda_kern_exec_sum), §4.2 (the ``:nvtx-name`` prefix). Names and
SKIPPED messages follow nsys 2023.4; memcpy operations are named
``[CUDA memcpy <ENUM_CUDA_MEMCPY_OPER label>]`` (``Host-to-Device``...), the 2023.x labels,
not the ``HtoD`` of 2022.4 and of 2024+.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis import names as names_mod
from strata.analysis.engine import GroupStats, group_stats
from strata.analysis.formulas import median_is_value as median_rule
from strata.analysis.kinds import panel_rows
from strata.analysis.model import Report
from strata.analysis.names import api_display_names, string_codes
from strata.analysis.nvtx import contained_pairs, range_rows, range_texts
from strata.analysis.projection import api_index_of, api_matches
from strata.analysis.schema import pid_of, tid_of
from strata.analysis.stats import plaintables
from strata.analysis.stats._base import (
    SkipReport,
    durations,
    factorize_rows,
    grouped,
    order_rows,
    register,
    require,
    stat_block,
    table_frame,
    timed_block,
)

__all__ = [
    "calls_frame",
    "kernel_frame",
    "kernel_names",
    "memory_op_names",
    "memory_size_frame",
    "memory_time_frame",
]

_KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
_MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"


def kernel_name_ids(report: Report, args: tuple[str, ...]) -> np.ndarray:
    """Return the StringIds id naming each kernel: demangled, ``base`` or ``mangled``."""
    return names_mod.kernel_name_ids(report, names_mod.kernel_variant(args))


def kernel_names(report: Report, args: tuple[str, ...] = ()) -> np.ndarray:
    """Return each kernel's display name (object array), with the ``nvtx-name`` prefix."""
    names = report.strings.lookup(kernel_name_ids(report, args))
    if "nvtx-name" in args:
        names = _nvtx_prefixed(report, names)
    return names


def _nvtx_prefixed(report: Report, names: np.ndarray) -> np.ndarray:
    """Prefix ``<innermost enclosing range text>/`` (spec §4.2).

    Of a filtered report's kernels too, from its unfiltered API calls and ranges: nsys's
    kernel name helper reads the tables under the filter's views (``main.``).
    """
    kernels = report.kernels
    report = report.unfiltered or report
    api_idx = api_index_of(report, kernels["correlation_id"], kernels["global_pid"])
    launched = np.flatnonzero(api_idx >= 0)
    if len(launched) == 0 or len(report.nvtx) == 0:
        return names
    api = report.cuda_api
    rows = range_rows(report, same_thread_only=True)
    nvtx = report.nvtx
    r_idx, k_idx = contained_pairs(
        nvtx["global_tid"][rows], nvtx["start_ns"][rows], nvtx["end_ns"][rows],
        api["global_tid"][api_idx[launched]], api.start_ns[api_idx[launched]],
        api.end_ns[api_idx[launched]],
    )  # fmt: skip
    if len(r_idx) == 0:
        return names
    # Innermost = the containing range with the largest start (ties: lowest rowid).
    start = nvtx["start_ns"][rows][r_idx]
    order = np.lexsort((-nvtx["row_id"][rows][r_idx], start, k_idx))
    last = np.flatnonzero(np.append(k_idx[order][1:] != k_idx[order][:-1], True))
    best = order[last]
    texts = range_texts(report, rows[r_idx[best]])
    out = names.copy()
    target = launched[k_idx[best]]
    out[target] = [
        n if t is None else f"{t}/{n}"
        for t, n in zip(texts.tolist(), names[target].tolist(), strict=True)
    ]
    return out


def _kernel_summary(report: Report, args: tuple[str, ...], xp: ModuleType, gb: bool):
    require(report, report.has_source(_KERNEL), "CUDA kernel data")
    if "nvtx-name" in args:
        require(report, report.has_source("NVTX_EVENTS"), "NV Tools Extension (NVTX) data")
    if gb:
        return _kernel_gb_summary(report, args, xp)
    dur = durations(report.kernels)
    if "nvtx-name" in args:
        names = kernel_names(report, args)
        labels, stats = grouped(names, dur, xp)
    else:
        labels, stats = _group_by_string_ids(report, kernel_name_ids(report, args), dur, xp)
    return kernel_frame(labels, stats)


def kernel_frame(labels: np.ndarray, stats: GroupStats):
    """cuda_gpu_kern_sum's (frame, units) from one name and statistics per group
    (:func:`analysis.stats.plaintables.kernel_table`, the SQL path's table too)."""
    return table_frame(plaintables.kernel_table(labels.tolist(), stats.plain()))


def _group_by_string_ids(report: Report, ids: np.ndarray, values: np.ndarray, xp: ModuleType):
    """Group by the *string* of StringIds ids (two ids with one text are one group)."""
    codes, labels = string_codes(report, ids)
    stats = group_stats(codes, values, xp)
    return labels[stats.keys], stats


def _kernel_gb_summary(report: Report, args: tuple[str, ...], xp: ModuleType):
    kernels = report.kernels
    names = kernel_names(report, args)
    grid = [kernels[c] for c in ("grid_x", "grid_y", "grid_z")]
    block = [kernels[c] for c in ("block_x", "block_y", "block_z")]
    frame = pd.DataFrame({"name": names, "gx": grid[0], "gy": grid[1], "gz": grid[2],
                          "bx": block[0], "by": block[1], "bz": block[2]})  # fmt: skip
    codes, keys = factorize_rows(frame)
    stats = group_stats(codes, kernels.duration_ns, xp)
    key_rows = keys.iloc[stats.keys]
    out = pd.DataFrame(
        {
            **timed_block(stats, labels=key_rows["name"].to_numpy(object)),
            "GridXYZ": _xyz(key_rows, "gx", "gy", "gz"),
            "BlockXYZ": _xyz(key_rows, "bx", "by", "bz"),
            "Name": key_rows["name"].to_numpy(object),
        }
    )
    out = order_rows(out, ["Total Time", "Instances", "Name"], [False, True, True])
    return out, _units(out)


def _xyz(frame: pd.DataFrame, x: str, y: str, z: str) -> np.ndarray:
    # spec §3.2: printf('%4d %4d %4d', x, y, z)
    return np.array(
        [f"{a:4d} {b:4d} {c:4d}" for a, b, c in frame[[x, y, z]].to_numpy().tolist()],
        dtype=object,
    )


def _units(frame: pd.DataFrame, mem: bool = False) -> dict[str, str | None]:
    """Unit categories of the standard columns (:func:`analysis.stats.plaintables.units_of`)."""
    return plaintables.units_of(frame.columns, mem)


@register("cuda_gpu_kern_sum")
def cuda_gpu_kern_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _kernel_summary(report, args, xp, gb=False)


@register("cuda_gpu_kern_gb_sum")
def cuda_gpu_kern_gb_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _kernel_summary(report, args, xp, gb=True)


@register("cuda_api_sum")
def cuda_api_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    require(report, report.has_source(_RUNTIME), "CUDA trace data")
    api = report.cuda_api
    # Grouped by string id, *then* the version suffix is dropped (spec §3.3).
    stats = group_stats(_null_last(api["name_id"], report), durations(api), xp)
    names = api_display_names(report.strings.lookup(_null_back(stats.keys, report)))
    return calls_frame(names, stats)


def calls_frame(names: np.ndarray, stats: GroupStats):
    """cuda_api_sum's and osrt_sum's (frame, units): groups in name-id order, NULL last
    (:func:`analysis.stats.plaintables.calls_table`)."""
    return table_frame(plaintables.calls_table(names.tolist(), stats.plain()))


def _null_last(ids: np.ndarray, report: Report) -> np.ndarray:
    """Map NULL ids (-1) to one past the pool so that they group last, as a code >= 0."""
    if len(ids) == 0 or int(ids.min()) >= 0:
        return ids
    return np.where(ids >= 0, ids, len(report.strings))  # any int dtype: no second copy


def _null_back(codes: np.ndarray, report: Report) -> np.ndarray:
    return np.where(codes == len(report.strings), -1, codes)


def memory_op_names(report: Report) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return (names, durations, bytes, is_memset) of every memcpy then memset row.

    Raises SkipReport as nsys 2023.4 does when the memcpy table exists without the
    ``ENUM_CUDA_MEMCPY_OPER`` table (exports older than 2023).
    """
    has_memcpy = report.has_source(_MEMCPY)
    if has_memcpy and not report.has_source("ENUM_CUDA_MEMCPY_OPER"):
        raise SkipReport(f"{report.name} does not contain ENUM_CUDA_MEMCPY_OPER table.")
    if not has_memcpy and not report.has_source(_MEMSET):
        raise SkipReport(f"{report.name} does not contain GPU memory data.")
    # The memory kinds' events as the panel pools them (analysis.kinds): memcpy rows whose
    # copy kind has a label (an inner join, spec §3.6), then memsets.
    ops = panel_rows(report, "memcpy_bytes")
    is_set = np.asarray(ops.tables, dtype=object)[ops.table_codes] == "memset"
    return (ops.labels[ops.codes], ops.end_ns - ops.start_ns, ops.values, is_set)


@register("cuda_gpu_mem_time_sum")
def cuda_gpu_mem_time_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    names, durs, _, _ = memory_op_names(report)
    return memory_time_frame(*grouped(names, durs, xp))


def memory_time_frame(labels: np.ndarray, stats: GroupStats):
    """cuda_gpu_mem_time_sum's (frame, units) from one operation name per group
    (:func:`analysis.stats.plaintables.memory_time_table`)."""
    return table_frame(plaintables.memory_time_table(labels.tolist(), stats.plain()))


@register("cuda_gpu_mem_size_sum")
def cuda_gpu_mem_size_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    names, _, sizes, _ = memory_op_names(report)
    labels, stats = grouped(names, sizes, xp)
    return memory_size_frame(labels, stats, median_is_value(names, sizes, labels))


def memory_size_frame(labels: np.ndarray, stats: GroupStats, one_value: list[bool] | None = None):
    """cuda_gpu_mem_size_sum's (frame, units) from one operation name per group
    (:func:`analysis.stats.plaintables.memory_size_table`: no rounding, spec §3.7);
    ``one_value``: whether each group's median is one of its sizes."""
    plain = replace(stats.plain(), median_is_value=one_value)
    return table_frame(plaintables.memory_size_table(labels.tolist(), plain))


def median_is_value(names: np.ndarray, values: np.ndarray, labels: np.ndarray) -> list[bool]:
    """For each group of ``labels``, whether its median is one stored value: an odd count,
    or two equal middle values (nsys's ``median()`` is then that integer, spec §3.1)."""
    codes, uniques = pd.factorize(pd.Series(names, dtype=object), sort=False)
    ordered = np.asarray(values)[np.lexsort((np.asarray(values), codes))]
    counts = np.bincount(codes, minlength=len(uniques))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    same = median_rule(ordered[starts + (counts - 1) // 2], ordered[starts + counts // 2])
    by_name = dict(zip(uniques.tolist(), same.tolist(), strict=True))
    return [by_name[label] for label in labels.tolist()]


def _category_rows(report: Report, with_api: bool, args: tuple[str, ...]):
    """(names, categories, durations) of the union behind cuda_api_gpu_sum / cuda_gpu_sum.

    Kernels are named as ``args`` say (``base``, ``mangled``, ``nvtx-name``), as nsys's
    kernel view names them; ``nvtx-name`` needs NVTX and API tables only with kernels.
    """
    names, cats, durs = [], [], []
    if with_api and report.has_source(_RUNTIME):
        api = report.cuda_api
        names.append(api_display_names(report.strings.lookup(api["name_id"])))
        cats.append(np.full(len(api), "CUDA_API", dtype=object))
        durs.append(api.duration_ns)
    if report.has_source(_KERNEL):
        if "nvtx-name" in args:
            require(report, report.has_source("NVTX_EVENTS"), "NV Tools Extension (NVTX) data")
            require(report, report.has_source(_RUNTIME), "CUDA API data")
        names.append(kernel_names(report, args))
        cats.append(np.full(len(report.kernels), "CUDA_KERNEL", dtype=object))
        durs.append(report.kernels.duration_ns)
    if report.has_source(_MEMCPY) or report.has_source(_MEMSET):
        mem_names, mem_durs, _, _ = memory_op_names(report)
        names.append(mem_names)
        cats.append(np.full(len(mem_names), "MEMORY_OPER", dtype=object))
        durs.append(mem_durs)
    return names, cats, durs


def _category_summary(
    report: Report, args: tuple[str, ...], xp: ModuleType, with_api: bool, missing: str
):
    names, cats, durs = _category_rows(report, with_api, args)
    if not names:
        raise SkipReport(f"{report.name} does not contain {missing}.")
    names_all = np.concatenate(names)
    cats_all = np.concatenate(cats)
    labels, stats = grouped(names_all, np.concatenate(durs), xp)
    # Grouped by name only; the category comes from one row of the group (spec §3.9).
    first_cat = pd.Series(cats_all).groupby(pd.Series(names_all, dtype=object)).first()
    frame = pd.DataFrame(
        {**timed_block(stats, labels=labels),
         "Category": first_cat.reindex(labels).to_numpy(object), "Operation": labels}
    )  # fmt: skip
    frame = order_rows(frame, ["Total Time", "Operation"], [False, True])
    return frame, _units(frame)


@register("cuda_api_gpu_sum")
def cuda_api_gpu_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _category_summary(
        report, args, xp, True, "CUDA API, GPU kernel, nor memory operations data"
    )


@register("cuda_gpu_sum")
def cuda_gpu_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    return _category_summary(report, args, xp, False, "GPU kernel/memory operations data")


@register("cuda_kern_exec_sum")
def cuda_kern_exec_sum(report: Report, args: tuple[str, ...], xp: ModuleType):
    require(report, report.has_source(_KERNEL), "CUDA kernel data")
    require(report, report.has_source(_RUNTIME), "CUDA API data")
    kernels, api = report.kernels, report.cuda_api
    k, a = api_matches(report, kernels["correlation_id"], kernels["global_pid"])
    r_start, r_end = api.start_ns[a], api.end_ns[a]
    k_start, k_end = kernels.start_ns[k], kernels.end_ns[k]
    gtid = api["global_tid"][a]
    key = pd.DataFrame({
        "PID": pid_of(gtid), "TID": tid_of(gtid), "DevId": kernels["device_id"][k],
        "API Name": api_display_names(report.strings.lookup(api["name_id"][a])),
        "Kernel Name": kernel_names(report, args)[k],
    })  # fmt: skip
    codes, keys = factorize_rows(key)
    queue = k_start - r_end
    has_q = queue >= 0
    parts = {
        "T": group_stats(codes, np.maximum(r_end, k_end) - r_start, xp),
        "A": group_stats(codes, r_end - r_start, xp),
        "K": group_stats(codes, k_end - k_start, xp),
    }
    group_keys = parts["T"].keys
    key_rows = keys.iloc[group_keys].reset_index(drop=True)
    frame = key_rows[["PID", "TID", "DevId"]].copy()
    frame["Count"] = parts["T"].count
    q_block = _queue_block(group_stats(codes[has_q], queue[has_q], xp), group_keys)
    frame["QCount"] = q_block.pop("QCount")
    for prefix in ("T", "A", "Q", "K"):
        block = q_block if prefix == "Q" else stat_block(parts[prefix], prefix, None, None)
        for col, values in block.items():
            frame[col] = values
    frame["API Name"] = key_rows["API Name"].to_numpy(object)
    frame["Kernel Name"] = key_rows["Kernel Name"].to_numpy(object)
    frame = order_rows(frame, ["TAvg"], [False])
    return frame, _units(frame)


def _queue_block(q_stats, group_keys: np.ndarray) -> dict[str, object]:
    """Queue statistics aligned to every group: NULL where a group has no queue time, except
    the standard deviation, which the SQL extension returns as 0.0 for no values."""
    pos = pd.Index(q_stats.keys).get_indexer(group_keys)
    has = pos >= 0
    block = stat_block(q_stats, "Q", None, None)
    out: dict[str, object] = {"QCount": np.where(has, q_stats.count[np.maximum(pos, 0)], 0)
                              if len(q_stats) else np.zeros(len(pos), np.int64)}  # fmt: skip
    for col, values in block.items():
        values = np.asarray(values)
        picked = values[np.maximum(pos, 0)] if len(values) else np.zeros(len(pos), values.dtype)
        series = pd.Series(picked).astype("Int64" if col in ("QMin", "QMax") else "float64")
        fill = 0.0 if col == "QStdDev" else None
        out[col] = series.where(pd.Series(has), fill).array
    return out
