"""``cuda_gpu_trace``: one row per kernel, memcpy and memset, in start order.

spec: nsys-sqlite.md §3.8. Quirks kept from nsys 2023.4: the throughput is
``bytes * (1000000000 // duration)`` (integer division first; NULL for a zero duration), the
device is ``'<TARGET_INFO_GPU.name> (<deviceId>)'`` (`` (0)`` when the GPU is unknown), a
green context id of 0 prints blank, and ties in start keep kernels, then memcpys, then
memsets, each in rowid order (the UNION ALL order).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pandas as pd

from analysis.model import Report
from analysis.names import MEMSET_NAME, memcpy_names
from analysis.stats._base import SkipReport, register
from analysis.stats.cuda import kernel_names

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


@register("cuda_gpu_trace", "CUDA GPU Trace", ("nvtx-name", "base", "mangled"))
def cuda_gpu_trace(report: Report, args: tuple[str, ...], xp: ModuleType):
    kinds = _checks(report)
    frame = pd.concat([_part(report, k, args) for k in kinds], ignore_index=True)
    order = np.lexsort((frame["_row"], frame["_part"], frame["Start"].to_numpy(np.int64)))
    frame = frame.iloc[order].drop(columns=["_part", "_row"]).reset_index(drop=True)
    for col in ("Start", "Duration", "CorrId", "Ctx", "Strm"):
        frame[col] = frame[col].astype(np.int64)
    return frame, {c: _UNITS.get(c) for c in frame.columns}
