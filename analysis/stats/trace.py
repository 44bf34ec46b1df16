"""The trace reports: ``cuda_gpu_trace`` (one row per kernel, memcpy and memset, in start
order), ``cuda_api_trace`` (one per CUDA API call) and ``cuda_kern_exec_trace`` (one per
launched kernel, with its launch call).

spec: nsys-sqlite.md §3.8. Quirks kept from nsys 2023.4: the throughput is
``bytes * (1000000000 // duration)`` (integer division first; NULL for a zero duration), the
device is ``'<TARGET_INFO_GPU.name> (<deviceId>)'`` (`` (0)`` when the GPU is unknown), a
green context id of 0 prints blank, and ties in start keep kernels, then memcpys, then
memsets, each in rowid order (the UNION ALL order).
"""

from __future__ import annotations

import sqlite3
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis._sqlfile import _ro_uri
from strata.analysis.errors import CorruptReportError
from strata.analysis.model import Report
from strata.analysis.names import MEMSET_NAME, api_display_names, memcpy_names
from strata.analysis.open import sqlite_source
from strata.analysis.projection import api_matches
from strata.analysis.schema import pid_of, tid_of
from strata.analysis.stats._base import SkipReport, register, require
from strata.analysis.stats.cuda import kernel_names

__all__: list[str] = []

_TABLES = {
    "kernels": "CUPTI_ACTIVITY_KIND_KERNEL",
    "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
    "memset": "CUPTI_ACTIVITY_KIND_MEMSET",
}
_COLUMNS = ["Start", "Duration", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ",
            "Reg/Trd", "StcSMem", "DymSMem", "Bytes", "Throughput", "SrcMemKd", "DstMemKd",
            "Device", "Ctx", "GreenCtx", "Strm", "Name"]  # fmt: skip
_UNITS = {"Start": "ts", "Duration": "dur", "StcSMem": "mem", "DymSMem": "mem", "Bytes": "mem",
          "Throughput": "thru"}  # fmt: skip


def _checks(report: Report) -> list[str]:
    """Return the op tables to list, or raise SkipReport with nsys 2023.4's message."""
    name = report.name
    if not report.has_source("TARGET_INFO_GPU"):
        raise SkipReport(f"{name} file does not contain TARGET_INFO_GPU table.")
    kinds = [k for k, table in _TABLES.items() if report.has_source(table)]
    if "memcpy" in kinds and not report.has_source("ENUM_CUDA_MEMCPY_OPER"):
        raise SkipReport(f"{name} does not contain ENUM_CUDA_MEMCPY_OPER table.")
    if {"memcpy", "memset"} & set(kinds) and not report.has_source("ENUM_CUDA_MEM_KIND"):
        raise SkipReport(f"{name} does not contain ENUM_CUDA_MEM_KIND table.")
    if not kinds:
        raise SkipReport(f"{name} does not contain GPU trace data.")
    for kind in kinds:
        if "greenContextId" not in report.source_columns.get(_TABLES[kind], ()):
            raise SkipReport(
                f"{name} does not contain 'greenContextId' column. Please re-export the "
                "report file with a recent version of Nsight Systems."
            )
    return kinds


def _labels(mapping: dict[int, str], ids: np.ndarray) -> np.ndarray:
    codes, uniq = pd.factorize(ids, sort=False)
    table = np.array([mapping.get(int(i)) for i in uniq], dtype=object)
    return table[codes] if len(ids) else np.empty(0, dtype=object)


def _throughput(size: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """``bytes * (1000000000 / duration)`` as nsys's SQL: integer division first, NULL for a
    zero duration, and a REAL where the integer product overflows (SQLite then computes it
    in floating point instead of wrapping)."""
    out = np.full(len(size), None, dtype=object)
    ok = np.flatnonzero(dur > 0)
    per_ns = 1_000_000_000 // dur[ok]
    product = size[ok] * per_ns  # wraps where too big: those are redone below
    wide = np.abs(size[ok].astype(np.float64)) * per_ns >= float(2**62)
    out[ok] = product
    out[ok[wide]] = [
        a * b if -(2**63) <= a * b < 2**63 else float(a) * float(b)
        for a, b in zip(size[ok][wide].tolist(), per_ns[wide].tolist(), strict=True)
    ]
    return out


def _part(report: Report, kind: str, args: tuple[str, ...]) -> pd.DataFrame:
    table = report.tables[kind]
    n = len(table)
    dur = table.duration_ns
    part = {"Start": table.start_ns, "Duration": dur, "CorrId": table["correlation_id"]}
    empty = np.full(n, None, dtype=object)
    if kind == "kernels":
        for col, src in (("GrdX", "grid_x"), ("GrdY", "grid_y"), ("GrdZ", "grid_z"),
                         ("BlkX", "block_x"), ("BlkY", "block_y"), ("BlkZ", "block_z"),
                         ("Reg/Trd", "registers_per_thread"), ("StcSMem", "static_smem_bytes"),
                         ("DymSMem", "dynamic_smem_bytes")):  # fmt: skip
            part[col] = table[src].astype(object)
        part.update({"Bytes": empty, "Throughput": empty, "SrcMemKd": empty, "DstMemKd": empty})
        part["Name"] = kernel_names(report, args)
    else:
        size = table["bytes"]
        throughput = _throughput(size, dur)
        mem_kind = report.enums["mem_kind"]
        part.update({"Bytes": size.astype(object), "Throughput": throughput})
        if kind == "memcpy":
            part["SrcMemKd"] = _labels(mem_kind, table["src_kind"])
            part["DstMemKd"] = _labels(mem_kind, table["dst_kind"])
            # '[CUDA memcpy ' || label || ']' over a LEFT JOIN: NULL without a label.
            part["Name"] = memcpy_names(report)
        else:
            part["SrcMemKd"] = _labels(mem_kind, table["mem_kind"])
            part["DstMemKd"] = empty
            part["Name"] = np.full(n, MEMSET_NAME, dtype=object)
    gpu_names = dict(zip(report.gpus["device_id"].tolist(), report.gpus["name"], strict=True))
    devices = table["device_id"]
    # printf('%s (%d)', name, deviceId): a NULL name prints as an empty string.
    part["Device"] = _labels(
        {int(d): f"{gpu_names.get(int(d), '')} ({int(d)})" for d in pd.unique(devices)}, devices
    )
    part["Ctx"] = table["context_id"]
    green = table["green_context_id"].astype(object)
    green[table["green_context_id"] == 0] = None
    part["GreenCtx"] = green
    part["Strm"] = table["stream_id"]
    frame = pd.DataFrame(part, columns=_COLUMNS)
    frame["_part"] = list(_TABLES).index(kind)
    frame["_row"] = table["row_id"]
    return frame


@register("cuda_gpu_trace")
def cuda_gpu_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    kinds = _checks(report)
    frame = pd.concat([_part(report, k, args) for k in kinds], ignore_index=True)
    order = np.lexsort((frame["_row"], frame["_part"], frame["Start"].to_numpy(np.int64)))
    frame = frame.iloc[order].drop(columns=["_part", "_row"]).reset_index(drop=True)
    for col in ("Start", "Duration", "CorrId", "Ctx", "Strm"):
        frame[col] = frame[col].astype(np.int64)
    return frame, {c: _UNITS.get(c) for c in frame.columns}


_API_TRACE_COLUMNS = ["Start", "Duration", "Name", "Result", "CorrID", "Pid", "Tid", "T-Pri",
                      "Thread Name"]  # fmt: skip


def _thread_names(report: Report) -> pd.DataFrame:
    """ThreadNames rows (``global_tid``, ``T-Pri``, ``Thread Name``), in rowid order.

    Read from the SQLite file behind the report (the model keeps no priority): the file
    itself, or the copy of an export folder's tables or the export of an ``.nsys-rep`` in
    the cache; from the model's thread names, priorities unknown, for other inputs.
    """
    path = report.path
    source = sqlite_source(path) if path.exists() else None
    if source is not None:
        con = sqlite3.connect(_ro_uri(source), uri=True)
        try:
            rows = con.execute(
                "SELECT t.globalTid, t.priority, s.value FROM ThreadNames AS t "
                "LEFT JOIN StringIds AS s ON s.id = t.nameId ORDER BY t.rowid"
            ).fetchall()
        except sqlite3.Error as exc:
            raise CorruptReportError(path, f"its ThreadNames table cannot be read ({exc})") from exc
        finally:
            con.close()
        return pd.DataFrame(rows, columns=["global_tid", "T-Pri", "Thread Name"], dtype=object)
    threads = report.threads
    return pd.DataFrame({"global_tid": threads["global_tid"], "T-Pri": None,
                         "Thread Name": threads["name"]}, dtype=object)  # fmt: skip


@register("cuda_api_trace")
def cuda_api_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    if not report.has_source("ThreadNames"):
        raise SkipReport(f"{report.name} file does not contain ThreadNames table.")
    if not report.has_source("CUPTI_ACTIVITY_KIND_RUNTIME"):
        raise SkipReport(f"{report.name} does not contain CUDA trace data.")
    api = report.cuda_api
    # ORDER BY start; ties in rowid order, as nsys prints them (not in correlation id
    # order: vector_add_profile_v3 has a call of id 544 before those of 540-543).
    order = np.lexsort((api["row_id"], api.start_ns))
    gtid = api["global_tid"][order]
    frame = pd.DataFrame({
        "Start": api.start_ns[order], "Duration": api.duration_ns[order],
        "Name": api_display_names(report.strings.lookup(api["name_id"][order])),
        "Result": api["return_value"][order], "CorrID": api["correlation_id"][order],
        "Pid": pid_of(gtid), "Tid": tid_of(gtid), "global_tid": gtid.astype(object),
    })  # fmt: skip
    # LEFT JOIN ThreadNames: a thread named twice lists its calls twice, as nsys does.
    frame = frame.merge(_thread_names(report), on="global_tid", how="left", sort=False)
    frame = frame.drop(columns="global_tid")[_API_TRACE_COLUMNS]
    try:
        frame["T-Pri"] = frame["T-Pri"].astype("Int64")
    except (TypeError, ValueError, OverflowError) as exc:
        raise CorruptReportError(report.path, "a ThreadNames priority is not an integer") from exc
    return frame, {"Start": "ts", "Duration": "dur"}


def _xyz_text(table, k: np.ndarray, names: tuple[str, str, str]) -> np.ndarray:
    """printf('%4d %4d %4d', x, y, z) of each kernel (a NULL prints as 0)."""
    cols = [
        np.nan_to_num(np.asarray(table[n][k], dtype=np.float64)).astype(np.int64) for n in names
    ]
    return np.array([f"{x:4d} {y:4d} {z:4d}" for x, y, z in zip(*cols, strict=True)], dtype=object)


@register("cuda_kern_exec_trace")
def cuda_kern_exec_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    require(report, report.has_source("CUPTI_ACTIVITY_KIND_KERNEL"), "CUDA kernel data")
    require(report, report.has_source("CUPTI_ACTIVITY_KIND_RUNTIME"), "CUDA API data")
    if "nvtx-name" in args:
        require(report, report.has_source("NVTX_EVENTS"), "NV Tools Extension (NVTX) data")
    kernels, api = report.kernels, report.cuda_api
    k, a = api_matches(report, kernels["correlation_id"], kernels["global_pid"])
    # ORDER BY the API start; ties in the kernels' rowid order (the join's scan order).
    order = np.lexsort((kernels["row_id"][k], api.start_ns[a]))
    k, a = k[order], a[order]
    r_start, r_end = api.start_ns[a], api.end_ns[a]
    k_start, k_end = kernels.start_ns[k], kernels.end_ns[k]
    queued = k_start - r_end >= 0
    gtid = api["global_tid"][a]
    frame = pd.DataFrame({
        "API Start": r_start, "API Dur": r_end - r_start,
        "Queue Start": pd.array(np.where(queued, r_end, 0), dtype="Int64"),
        "Queue Dur": pd.array(np.where(queued, k_start - r_end, 0), dtype="Int64"),
        "Kernel Start": k_start, "Kernel Dur": k_end - k_start,
        "Total Dur": np.maximum(r_end, k_end) - r_start,
        "PID": pid_of(gtid), "TID": tid_of(gtid), "DevId": kernels["device_id"][k],
        "API Function": api_display_names(report.strings.lookup(api["name_id"][a])),
        "GridXYZ": _xyz_text(kernels, k, ("grid_x", "grid_y", "grid_z")),
        "BlockXYZ": _xyz_text(kernels, k, ("block_x", "block_y", "block_z")),
        "Kernel Name": kernel_names(report, args)[k],
    })  # fmt: skip
    frame.loc[~queued, ["Queue Start", "Queue Dur"]] = pd.NA
    units = {c: "ts" for c in ("API Start", "Queue Start", "Kernel Start")}
    units.update({c: "dur" for c in ("API Dur", "Queue Dur", "Kernel Dur", "Total Dur")})
    return frame, units
