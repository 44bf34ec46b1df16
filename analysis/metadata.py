"""Small descriptive tables of a report: version, processes, threads, GPUs, streams, enums."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis._sqlite import ReportDatabase
from analysis.errors import UnsupportedVersionError
from analysis.model import EventTable, ReportInfo, StringIds
from analysis.schema import (
    MAX_SCHEMA_MAJOR,
    MEM_KIND_LABELS,
    MEMCPY_KIND_LABELS,
    SYNC_TYPE_LABELS,
    pid_of,
    tid_of,
)

__all__ = [
    "read_enums",
    "read_gpu_metric_names",
    "read_gpus",
    "read_info",
    "read_processes",
    "read_streams",
    "read_threads",
]

_THREAD_KINDS = ("cuda_api", "osrt", "nvtx", "samples")


def _meta(db: ReportDatabase) -> dict[str, str]:
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if db.has_table(table):
            return {str(k): str(v) for k, v in db.execute(f"SELECT name, value FROM {table}")}
    return {}


def read_info(db: ReportDatabase) -> ReportInfo:
    """Return version and time base; raise for a schema newer than we read."""
    meta = _meta(db)
    schema = meta.get("EXPORT_SCHEMA_VERSION", "")
    product = meta.get("EXPORT_PRODUCT_VERSION", "")
    major = schema.split(".")[0]
    if major.isdigit() and int(major) > MAX_SCHEMA_MAJOR:
        raise UnsupportedVersionError(
            db.path,
            f"export schema {schema} (nsys {product or '?'}) is newer than Strata reads "
            f"(schema {MAX_SCHEMA_MAJOR}.x); please report it with the file's nsys version",
        )
    start = 0
    if db.has_table("TARGET_INFO_SESSION_START_TIME"):
        rows = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")
        start = int(rows[0][0] or 0) if rows else 0
    duration = 0
    if db.has_column("ANALYSIS_DETAILS", "duration"):
        rows = db.execute("SELECT duration FROM ANALYSIS_DETAILS LIMIT 1")
        duration = int(rows[0][0] or 0) if rows else 0
    os_name = ""
    if db.has_table("TARGET_INFO_SYSTEM_ENV"):
        rows = db.execute(
            "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ('OsName', 'OS') LIMIT 1"
        )
        os_name = str(rows[0][0]) if rows else ""
    return ReportInfo(
        path=db.path,
        name=db.path.name,
        nsys_version=product or ("unknown (pre-2021 schema)" if not meta else "unknown"),
        schema_version=schema or "unknown",
        session_start_utc_ns=start,
        duration_ns=duration,
        os=os_name,
    )


def _thread_ids(tables: Mapping[str, EventTable]) -> np.ndarray:
    parts = [tables[k]["global_tid"] for k in _THREAD_KINDS if len(tables[k])]
    parts.append(tables["sched"]["global_tid"])
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)


def read_processes(db: ReportDatabase, tables: Mapping[str, EventTable]) -> pd.DataFrame:
    """Return processes that own events: ``pid``, ``global_pid``, ``name``, ``thread_count``."""
    gtids = _thread_ids(tables)
    gpu_pids = [pid_of(tables[k]["global_pid"]) for k in ("kernels", "memcpy", "memset")]
    pids = np.unique(np.concatenate([pid_of(gtids), *gpu_pids]))
    names: dict[int, str] = {}
    if db.has_table("PROCESSES"):
        for pid, name in db.execute("SELECT pid, name FROM PROCESSES"):
            if pid is not None:
                names.setdefault(int(pid), str(name or ""))
    counts = pd.Series(pid_of(gtids)).value_counts() if len(gtids) else pd.Series(dtype=int)
    return pd.DataFrame(
        {
            "pid": pids.astype(np.int64),
            "name": [names.get(int(p), "") for p in pids],
            "thread_count": [int(counts.get(p, 0)) for p in pids],
        }
    )


def read_threads(
    db: ReportDatabase, tables: Mapping[str, EventTable], strings: StringIds
) -> pd.DataFrame:
    """Return threads that own events: ``global_tid``, ``pid``, ``tid``, ``name``."""
    gtids = _thread_ids(tables)
    names: dict[int, str] = {}
    if db.has_table("ThreadNames"):
        for name_id, gtid in db.execute("SELECT nameId, globalTid FROM ThreadNames"):
            if gtid is not None and name_id is not None:
                names[int(gtid)] = strings[int(name_id)] or ""
    return pd.DataFrame(
        {
            "global_tid": gtids,
            "pid": pid_of(gtids),
            "tid": tid_of(gtids),
            "name": [names.get(int(g), "") for g in gtids],
        }
    )


def read_gpus(db: ReportDatabase) -> pd.DataFrame:
    """Return GPUs: ``device_id``, ``name`` (TARGET_INFO_GPU, else TARGET_INFO_CUDA_GPU)."""
    rows: dict[int, str] = {}
    if db.has_table("TARGET_INFO_GPU"):
        id_col = "id" if db.has_column("TARGET_INFO_GPU", "id") else "deviceId"
        if db.has_column("TARGET_INFO_GPU", id_col):
            for dev, name in db.execute(f"SELECT {id_col}, name FROM TARGET_INFO_GPU"):
                if dev is not None:
                    rows.setdefault(int(dev), str(name or ""))
    if db.has_column("TARGET_INFO_CUDA_GPU", "deviceId"):
        for dev, name in db.execute("SELECT deviceId, name FROM TARGET_INFO_CUDA_GPU"):
            if dev is not None:
                rows.setdefault(int(dev), str(name or ""))
    ids = sorted(rows)
    return pd.DataFrame(
        {"device_id": np.array(ids, dtype=np.int64), "name": [rows[i] for i in ids]}
    )


def read_streams(db: ReportDatabase) -> pd.DataFrame:
    """Return CUDA streams: ``pid``, ``context_id``, ``stream_id``, ``priority``, ``flag``."""
    cols = ("processId", "contextId", "streamId", "priority", "flag")
    if not db.has_table("TARGET_INFO_CUDA_STREAM") or not all(
        db.has_column("TARGET_INFO_CUDA_STREAM", c) for c in cols
    ):
        return pd.DataFrame(columns=["pid", "context_id", "stream_id", "priority", "flag"])
    rows = db.execute(f"SELECT {', '.join(cols)} FROM TARGET_INFO_CUDA_STREAM")
    return pd.DataFrame(rows, columns=["pid", "context_id", "stream_id", "priority", "flag"])


def _enum(db: ReportDatabase, table: str, fallback: dict[int, str]) -> dict[int, str]:
    if db.has_column(table, "label"):
        return {int(i): str(label) for i, label in db.execute(f"SELECT id, label FROM {table}")}
    return dict(fallback)


def read_enums(db: ReportDatabase) -> dict[str, dict[int, str]]:
    """Return enum label maps, from the report's ENUM_* tables or the built-in lists."""
    return {
        "memcpy_kind": _enum(db, "ENUM_CUDA_MEMCPY_OPER", MEMCPY_KIND_LABELS),
        "mem_kind": _enum(db, "ENUM_CUDA_MEM_KIND", MEM_KIND_LABELS),
        "sync_type": _enum(db, "ENUM_CUPTI_SYNC_TYPE", SYNC_TYPE_LABELS),
    }


def read_gpu_metric_names(db: ReportDatabase) -> pd.DataFrame:
    """Return ``type_id``, ``metric_id``, ``name`` of the GPU metrics catalogue."""
    cols = ("typeId", "metricId", "metricName")
    if not all(db.has_column("TARGET_INFO_GPU_METRICS", c) for c in cols):
        return pd.DataFrame(columns=["type_id", "metric_id", "name"])
    rows = db.execute("SELECT DISTINCT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS")
    return pd.DataFrame(rows, columns=["type_id", "metric_id", "name"])
