"""The CUDA rules of ``nsys analyze``: cuda_api_sync, cuda_memcpy_async, cuda_memcpy_sync,
cuda_memset_sync, computed from the report's cuda_api, memcpy and memset tables.

Rows are those of nsys's queries, in its order: by duration, longest first, ties in the
order of the source table's rows (SQLite's sort keeps it). API names are matched as SQL
``LIKE`` matches them: ``%`` any text, ``_`` one character, ASCII letters in either case.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import CorruptReportError
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.rules._base import Rule, SkipRule, limit_rows, register, row_filter
from strata.analysis.schema import pid_of, tid_of

__all__ = ["like", "like_name_ids"]

_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
_MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
_NO_RUNTIME = (
    "{DBFILE} could not be analyzed because it does not contain the required CUDA data."
    " Does the application use CUDA runtime APIs?"
)
_SYNC_ADVICE = (
    "The following are synchronization APIs that block the host until all issued CUDA calls"
    " are complete.\n\nSuggestions:\n   1. Avoid excessive use of synchronization.\n"
    "   2. Use asynchronous CUDA event calls, such as cudaStreamWaitEvent() and"
    " cudaEventSynchronize(), to prevent host synchronization."
)
_SYNC_NORESULT = "There were no problems detected related to synchronization APIs."
#: cudaMemcpy* of at most this many bytes from host to device are not reported as sync.
_SMALL_H2D_BYTES = 64000
_COPY_H2D = 1
_MEM_PAGEABLE = 0
_MEMSET_KINDS = (1, 4)  # pinned host memory, managed memory


def like(pattern: str) -> re.Pattern[str]:
    """Return the regular expression of an SQL ``LIKE`` pattern (SQLite's: ASCII case-blind)."""
    parts = (".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.IGNORECASE | re.ASCII | re.DOTALL)


def like_name_ids(
    report: Report, ids: np.ndarray, pattern: str, unlike: str | None = None
) -> np.ndarray:
    """Return, per name id of ``ids``, whether its string is LIKE ``pattern`` (NOT LIKE
    ``unlike``)."""
    wanted, unwanted = like(pattern), like(unlike) if unlike else None
    uniq, inverse = np.unique(ids, return_inverse=True)
    texts = report.strings.lookup(uniq)
    hits = np.array(
        [
            t is not None
            and wanted.fullmatch(t) is not None
            and (unwanted is None or unwanted.fullmatch(t) is None)
            for t in texts.tolist()
        ],
        dtype=bool,
    )
    return hits[inverse.ravel()] if len(uniq) else np.zeros(len(ids), bool)


def _check_tables(report: Report, *tables: tuple[str, str]) -> None:
    for table, message in tables:
        if not report.has_source(table):
            raise SkipRule(message.format(DBFILE=report.name))


def _check_green(report: Report, table: str) -> None:
    if "greenContextId" not in report.source_columns.get(table, ()):
        raise SkipRule(
            f"{report.name} could not be analyzed due to missing 'greenContextId'."
            " Please re-export the report file with a recent version of Nsight Systems."
        )


def _in_source_order(table) -> pd.DataFrame:
    """The table as a frame in its source rowid order (the model sorts by track)."""
    frame = table.to_frame([c for c in table.columns if c not in ("track_id", "level")])
    return frame.sort_values("row_id", kind="stable").reset_index(drop=True)


def _by_duration(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    ordered = frame.sort_values("Duration", ascending=False, kind="stable")
    return limit_rows(ordered.reset_index(drop=True), rows)


# --------------------------------------------------------------------------- cuda_api_sync
def _api_sync(report: Report, options: Mapping[str, object]):
    _check_tables(report, (_RUNTIME, _NO_RUNTIME))
    keep = row_filter(report, options)
    api = _in_source_order(report.tables["cuda_api"])
    names = api["name_id"].to_numpy()
    hit = like_name_ids(report, names, "cudaDeviceSynchronize%")
    hit |= like_name_ids(report, names, "cudaStreamSynchronize%")
    if keep is not None:
        hit &= keep.mask(api["start_ns"], api["end_ns"], global_tid=api["global_tid"])
    api = api[hit]
    gtid = api["global_tid"].to_numpy(np.int64)
    frame = pd.DataFrame(
        {
            "Duration": (api["end_ns"] - api["start_ns"]).to_numpy(np.int64),
            "Start": api["start_ns"].to_numpy(np.int64),
            "PID": pid_of(gtid),
            "TID": tid_of(gtid),
            "API Name": report.strings.lookup(api["name_id"].to_numpy()),
            "_Global ID": gtid,
            "_kind": "cuda_api",
            "_row": api["row_id"].to_numpy(np.int64),
        }
    )
    return _by_duration(frame, int(options["rows"])), {"Duration": "dur", "Start": "ts"}


register(
    Rule(
        "cuda_api_sync",
        "CUDA Synchronization APIs",
        _SYNC_ADVICE,
        _SYNC_NORESULT,
        _api_sync,
        options={"process": (int, -1), "thread": (int, -1)},
    )
)


# --------------------------------------------------------------------------- memory rules
def _runtime_names(report: Report, pattern: str, unlike: str | None) -> pd.DataFrame:
    """``correlation_id`` -> ``API Name`` of the runtime calls LIKE ``pattern`` (unfiltered:
    nsys reads ``main.CUPTI_ACTIVITY_KIND_RUNTIME``)."""
    api = _in_source_order(report.tables["cuda_api"])
    hit = like_name_ids(report, api["name_id"].to_numpy(), pattern, unlike)
    api = api[hit]
    return pd.DataFrame(
        {
            "correlation_id": api["correlation_id"].to_numpy(np.int64),
            "API Name": report.strings.lookup(api["name_id"].to_numpy()),
        }
    )


def _mem_kind(report: Report, kinds: pd.Series) -> np.ndarray:
    labels = report.enums.get("mem_kind", {})
    return np.array([labels.get(int(k)) for k in kinds.tolist()], dtype=object)


def _gpu_columns(report: Report, ops: pd.DataFrame) -> dict[str, object]:
    green = ops["green_context_id"].astype("Int64")
    return {
        "Bytes": ops["bytes"].to_numpy(np.int64),
        "PID": pid_of(ops["global_pid"].to_numpy(np.int64)),
        "Device ID": ops["device_id"].to_numpy(np.int64),
        "Context ID": ops["context_id"].to_numpy(np.int64),
        "Green Context ID": green.mask(green == 0).to_numpy(),
        "Stream ID": ops["stream_id"].to_numpy(np.int64),
        "API Name": ops["API Name"].to_numpy(object),
        "_Global ID": ops["global_pid"].to_numpy(np.int64),
    }


_MEM_UNITS = {"Duration": "dur", "Start": "ts", "Bytes": "mem"}


def _memory_rule(
    report: Report,
    kind: str,
    ops: pd.DataFrame,
    names: pd.DataFrame,
    options: Mapping[str, object],
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The rows of a memcpy/memset rule: ``ops`` (filtered) joined with their API names."""
    keep = row_filter(report, options)
    if keep is not None:
        ops = ops[keep.mask(ops["start_ns"], ops["end_ns"], global_pid=ops["global_pid"])]
    ops = ops.merge(names, on="correlation_id", how="inner", sort=False)
    frame = pd.DataFrame(
        {
            "Duration": (ops["end_ns"] - ops["start_ns"]).to_numpy(np.int64),
            "Start": ops["start_ns"].to_numpy(np.int64),
        }
    )
    if kind == "memcpy":
        frame["Src Kind"] = _mem_kind(report, ops["src_kind"])
        frame["Dst Kind"] = _mem_kind(report, ops["dst_kind"])
    else:
        frame["Memory Kind"] = _mem_kind(report, ops["mem_kind"])
    for column, values in _gpu_columns(report, ops).items():
        frame[column] = values
    frame["_kind"] = kind
    frame["_row"] = ops["row_id"].to_numpy(np.int64)
    return _by_duration(frame, int(options["rows"])), _MEM_UNITS


def _memcpy_checks(report: Report, table: str, what: str) -> None:
    _check_tables(
        report,
        (_RUNTIME, _NO_RUNTIME),
        (
            table,
            "{DBFILE} could not be analyzed because it does not contain the required CUDA"
            f" data. Does the application use CUDA {what} APIs?",
        ),
        ("ENUM_CUDA_MEM_KIND", "{DBFILE} does not contain ENUM_CUDA_MEM_KIND table."),
    )
    _check_green(report, table)


def _memcpy_async(report: Report, options: Mapping[str, object]):
    _memcpy_checks(report, _MEMCPY, "memcpy")
    ops = _in_source_order(report.tables["memcpy"])
    ops = ops[(ops["src_kind"] == _MEM_PAGEABLE) | (ops["dst_kind"] == _MEM_PAGEABLE)]
    names = _runtime_names(report, "cudaMemcpy%Async%", None)
    return _memory_rule(report, "memcpy", ops, names, options)


def _same_device_rows(report: Report) -> np.ndarray:
    """Source rowids of the memcpy rows within one device (``srcDeviceId == dstDeviceId``).

    The model does not carry these two columns; they are read here, for the rows where
    both are set (none in most reports: nsys fills them for peer copies).
    """
    columns = report.source_columns.get(_MEMCPY, ())
    source = sqlite_source(report.path)
    if "srcDeviceId" not in columns or "dstDeviceId" not in columns or source is None:
        return np.empty(0, np.int64)
    with ReportDatabase(source) as db:
        rows = db.execute(
            f"SELECT rowid FROM {_MEMCPY} WHERE srcDeviceId IS NOT NULL "
            "AND srcDeviceId == dstDeviceId"
        )
    if any(type(r[0]) is not int for r in rows):
        raise CorruptReportError(report.path, f"{_MEMCPY} has a rowid that is not an integer")
    return np.array([r[0] for r in rows], dtype=np.int64)


def _memcpy_sync(report: Report, options: Mapping[str, object]):
    _memcpy_checks(report, _MEMCPY, "memcpy")
    ops = _in_source_order(report.tables["memcpy"])
    small_h2d = (ops["bytes"] <= _SMALL_H2D_BYTES) & (ops["copy_kind"] == _COPY_H2D)
    same_device = ops["row_id"].isin(_same_device_rows(report))
    ops = ops[~small_h2d & ~same_device]
    names = _runtime_names(report, "cudaMemcpy%", "%Async%")
    return _memory_rule(report, "memcpy", ops, names, options)


def _memset_sync(report: Report, options: Mapping[str, object]):
    _memcpy_checks(report, _MEMSET, "memset")
    ops = _in_source_order(report.tables["memset"])
    ops = ops[ops["mem_kind"].isin(_MEMSET_KINDS)]
    names = _runtime_names(report, "cudaMemset%", "%async%")
    return _memory_rule(report, "memset", ops, names, options)


register(
    Rule(
        "cuda_memcpy_async",
        "CUDA Async Memcpy with Pageable Memory",
        "The following APIs use PAGEABLE memory which causes asynchronous CUDA memcpy"
        " operations to block and be executed synchronously. This leads to low GPU"
        " utilization.\n\nSuggestion: If applicable, use PINNED memory instead.",
        "There were no problems detected related to memcpy operations using pageable memory.",
        _memcpy_async,
    )
)
register(
    Rule(
        "cuda_memcpy_sync",
        "CUDA Synchronous Memcpy",
        "The following are synchronous memory transfers that block the host. This does not"
        " include host to device transfers of a memory block of 64 KB or less.\n\n"
        "Suggestion: Use cudaMemcpy*Async() APIs instead.",
        "There were no problems detected related to synchronous memcpy operations.",
        _memcpy_sync,
    )
)
register(
    Rule(
        "cuda_memset_sync",
        "CUDA Synchronous Memset",
        _SYNC_ADVICE,
        _SYNC_NORESULT,
        _memset_sync,
    )
)
