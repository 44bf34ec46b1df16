"""The ``dx12_mem_ops`` rule of ``nsys analyze``: DX12 memory operations that may stall.

The model has no DX12 tables; this rule reads the two it needs (DX12_API,
DX12_MEMORY_OPERATION), checks that their values are integers, and joins them here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import CorruptReportError
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.rules._base import Rule, SkipRule, limit_rows, register, row_filter
from strata.analysis.rules.cuda import like
from strata.analysis.schema import tid_of

__all__ = ["warning_types"]

_API = "DX12_API"
_MEMOP = "DX12_MEMORY_OPERATION"
_NOT_ZEROED = 0x1000
_HEAP_UPLOAD, _HEAP_READBACK = 1, 2
_PAGE_WRITE_COMBINE, _PAGE_WRITE_BACK = 2, 3
_READ = "ID3D12Resource::ReadFromSubresource"
_WRITE = "ID3D12Resource::WriteToSubresource"


def _read(report: Report) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The DX12_API (with its names) and DX12_MEMORY_OPERATION columns the rule reads
    (NULL: None)."""
    source = sqlite_source(report.path)
    if source is None:
        raise CorruptReportError(report.path, "no SQLite file to read the DX12 tables from")
    with ReportDatabase(source) as db:
        # Names from StringIds itself: the model's pool holds the strings its tables use.
        api = db.execute(
            f"SELECT a.id, a.start, a.end, a.globalTid, s.value FROM {_API} AS a "
            "JOIN StringIds AS s ON s.id = a.nameId ORDER BY a.rowid"
        )
        memop = db.execute(
            f"SELECT traceEventId, gpu, heapFlags, heapType, cpuPageProperty FROM {_MEMOP} "
            "ORDER BY rowid"
        )
    if any(type(row[4]) is not str for row in api):
        raise CorruptReportError(report.path, f"{_API} has a name that is not text")
    for table, rows in ((_API, [r[:4] for r in api]), (_MEMOP, memop)):
        if any(v is not None and type(v) is not int for row in rows for v in row):
            raise CorruptReportError(report.path, f"{table} has a value that is not an integer")
    api_frame = pd.DataFrame(api, columns=["id", "start", "end", "global_tid", "name"])
    memop_frame = pd.DataFrame(
        memop, columns=["id", "gpu", "heap_flags", "heap_type", "page"], dtype=object
    )
    return api_frame, memop_frame


def warning_types(names: list, flags: list, heaps: list, pages: list) -> list[str | None]:
    """nsys's CASE of the warning type, per operation (None: no warning)."""
    heap, committed = (
        like("ID3D12Device::CreateHeap%"),
        like("ID3D12Device::CreateCommittedResource%"),
    )
    out: list[str | None] = []
    for name, flag, heap_type, page in zip(names, flags, heaps, pages, strict=True):
        zeroed = flag is not None and flag & _NOT_ZEROED == 0
        text = name or ""
        if name is not None and heap.fullmatch(text) and zeroed:
            out.append("D3D12_HEAP_CREATED_WITH_ZEROING")
        elif name is not None and committed.fullmatch(text) and zeroed:
            out.append("D3D12_COMMITTED_RESOURCE_CREATED_WITH_ZEROING")
        elif name == _READ and heap_type == _HEAP_UPLOAD:
            out.append("D3D12_READ_FROM_UPLOAD_HEAP_SUBRESOURCE")
        elif name == _READ and page == _PAGE_WRITE_COMBINE:
            out.append("D3D12_READ_FROM_SUBRESOURCE_TO_WRITE_COMBINE_PAGE")
        elif name == _WRITE and heap_type == _HEAP_READBACK:
            out.append("D3D12_WRITE_TO_READBACK_HEAP_SUBRESOURCE")
        elif name == _WRITE and page == _PAGE_WRITE_BACK:
            out.append("D3D12_WRITE_TO_SUBRESOURCE_FROM_WRITE_BACK_PAGE")
        else:
            out.append(None)
    return out


def _mem_ops(report: Report, options: Mapping[str, object]):
    for table, what in ((_API, "use DX12 APIs"), (_MEMOP, "perform DX12 memory operations")):
        if not report.has_source(table):
            raise SkipRule(
                f"{report.name} could not be analyzed because it does not contain the required"
                f" DX12 data. Does the application {what}?"
            )
    keep = row_filter(report, options)
    api, memop = _read(report)
    if keep is not None and len(api):
        api = api[keep.mask(api["start"], api["end"], global_tid=api["global_tid"].fillna(0))]
    ops = memop.merge(api, on="id", how="inner", sort=False)
    names = ops["name"].tolist()
    warning = warning_types(
        names, ops["heap_flags"].tolist(), ops["heap_type"].tolist(), ops["page"].tolist()
    )
    gtid = ops["global_tid"]
    frame = pd.DataFrame(
        {
            "Duration": (ops["end"] - ops["start"]).to_numpy(np.int64),
            "Start": ops["start"].to_numpy(np.int64),
            "TID": pd.array([None if pd.isna(g) else int(tid_of(int(g))) for g in gtid], "Int64"),
            "Device ID": pd.array(ops["gpu"].tolist(), dtype="Int64"),
            "Warning Type": np.array(warning, dtype=object),
            "_kind": "dx12_api",
        }
    )
    frame = frame[frame["Warning Type"].notna().to_numpy()]
    frame = frame.sort_values("Duration", ascending=False, kind="stable").reset_index(drop=True)
    return limit_rows(frame, int(options["rows"])), {"Duration": "dur", "Start": "ts"}


register(
    Rule(
        "dx12_mem_ops",
        "DX12 Memory Operations",
        "The following are host-side memory operations that can be blocking and result in"
        # nsys 2023.4 prints the placeholder as is (never formatted).
        " stuttering.\n\nFor more information on each warning, use the option"
        " '--help-rules={{SCRIPT}}'.",
        "There were no problems detected related to memory operations.",
        _mem_ops,
    )
)
