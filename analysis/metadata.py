"""Small descriptive tables of a report: version, processes, threads, GPUs, streams, enums."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis._sqlite import ReportDatabase
from analysis.errors import UnsupportedVersionError
from analysis.model import CONTEXT_COLUMNS, CUDA_DEVICE_COLUMNS, EventTable, ReportInfo, StringIds
from analysis.schema import (
    MAX_SCHEMA_MAJOR,
    MEM_KIND_LABELS,
    MEMCPY_KIND_LABELS,
    SYNC_TYPE_LABELS,
    pid_of,
    tid_of,
)

__all__ = [
    "read_contexts",
    "read_cuda_devices",
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
    # The track keys of these tables hold every row's globalTid, so no pass over the events
    # (np.unique over 10 M API calls took 1 s).
    parts = [
        tables[k].track_keys["global_tid"].to_numpy(np.int64)
        for k in _THREAD_KINDS
        if len(tables[k])
    ]
    parts.append(pd.unique(tables["sched"]["global_tid"]).astype(np.int64))
    return np.unique(np.concatenate(parts))


def _gpu_pids(tables: Mapping[str, EventTable]) -> list[np.ndarray]:
    out = []
    for kind in ("kernels", "memcpy", "memset"):
        table = tables[kind]
        if len(table):
            used = pd.unique(table["track_id"])
            out.append(pid_of(table.track_keys["global_pid"].to_numpy(np.int64)[used]))
    return out


def read_processes(db: ReportDatabase, tables: Mapping[str, EventTable]) -> pd.DataFrame:
    """Return processes that own events: ``pid``, ``global_pid``, ``name``, ``thread_count``."""
    gtids = _thread_ids(tables)
    pids = np.unique(np.concatenate([pid_of(gtids), *_gpu_pids(tables)]))
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
    """Return GPUs, one row per device id (spec §1.4 "Device name", §2 step 5).

    Columns: ``device_id`` (int64), ``name`` (str), ``bus_location`` (str), ``uuid`` (str,
    '' when unknown), ``sm_count`` and ``total_memory_bytes`` (int64, -1 when unknown).
    ``TARGET_INFO_GPU`` (2022.4+: ``id``; older: ``deviceId``) comes first, then
    ``TARGET_INFO_CUDA_GPU`` (2020-2022) fills devices and attributes it lacks.
    """
    rows: dict[int, dict[str, object]] = {}
    gpu_cols = {
        "name": "name",
        "bus_location": "busLocation",
        "uuid": "uuid",
        "sm_count": "smCount",
        "total_memory_bytes": "totalMemory",
    }
    cuda_cols = {
        "name": "name",
        "bus_location": "pciBusId",
        "sm_count": "numMultiprocessors",
        "total_memory_bytes": "globalMemorySize",
    }
    for table, id_cols, cols in (
        ("TARGET_INFO_GPU", ("id", "deviceId"), gpu_cols),
        ("TARGET_INFO_CUDA_GPU", ("deviceId",), cuda_cols),
    ):
        id_col = next((c for c in id_cols if db.has_column(table, c)), None)
        if id_col is None:
            continue
        have = {ours: src for ours, src in cols.items() if db.has_column(table, src)}
        select = ", ".join([id_col, *have.values()])
        for dev, *values in db.execute(f"SELECT {select} FROM {table}"):
            if dev is None:
                continue
            row = rows.setdefault(int(dev), {})
            for ours, value in zip(have, values, strict=True):
                if row.get(ours) in (None, "") and value is not None:
                    row[ours] = value
    ids = sorted(rows)

    def text(col: str) -> list[str]:
        return [str(rows[i].get(col) or "") for i in ids]

    def number(col: str) -> np.ndarray:
        return np.array([int(rows[i].get(col, -1)) for i in ids], dtype=np.int64)

    return pd.DataFrame(
        {
            "device_id": np.array(ids, dtype=np.int64),
            "name": text("name"),
            "bus_location": text("bus_location"),
            "uuid": text("uuid"),
            "sm_count": number("sm_count"),
            "total_memory_bytes": number("total_memory_bytes"),
        }
    )


def read_contexts(db: ReportDatabase) -> pd.DataFrame:
    """Return CUDA contexts: ``pid``, ``device_id``, ``context_id``, ``null_stream_id``,
    ``parent_context_id`` (-1 when none) and ``is_green_context`` (0/1), all int64.

    From ``TARGET_INFO_CUDA_CONTEXT_INFO`` (2023.4+) or ``TARGET_INFO_CUDA_NULL_STREAM``
    (2022.4 and older), spec §1.4.
    """
    if db.has_table("TARGET_INFO_CUDA_CONTEXT_INFO"):
        table, stream = "TARGET_INFO_CUDA_CONTEXT_INFO", "nullStreamId"
    elif db.has_table("TARGET_INFO_CUDA_NULL_STREAM"):
        table, stream = "TARGET_INFO_CUDA_NULL_STREAM", "streamId"
    else:
        return pd.DataFrame({c: np.empty(0, np.int64) for c in CONTEXT_COLUMNS})
    parent = "parentContextId" if db.has_column(table, "parentContextId") else "NULL"
    green = "isGreenContext" if db.has_column(table, "isGreenContext") else "NULL"
    rows = db.execute(
        f"SELECT processId, deviceId, contextId, {stream}, coalesce({parent}, -1), "
        f"coalesce({green}, 0) FROM {table} ORDER BY processId, deviceId, contextId"
    )
    return pd.DataFrame(
        {c: np.array([r[i] for r in rows], dtype=np.int64) for i, c in enumerate(CONTEXT_COLUMNS)}
    )


def read_cuda_devices(db: ReportDatabase) -> pd.DataFrame:
    """Return the CUDA-ordinal to physical-GPU map: ``pid``, ``device_id`` (the CUDA
    ordinal that event tables carry), ``gpu_id`` (``TARGET_INFO_GPU.id``), all int64.

    From ``TARGET_INFO_CUDA_DEVICE`` (2024+); empty when the report lacks it. Under
    ``CUDA_VISIBLE_DEVICES`` the physical GPU of ``(pid, deviceId)`` is ``gpu_id``, spec §1.4.
    """
    cols = ("pid", "cudaId", "gpuId")
    if not all(db.has_column("TARGET_INFO_CUDA_DEVICE", c) for c in cols):
        return pd.DataFrame({c: np.empty(0, np.int64) for c in CUDA_DEVICE_COLUMNS})
    rows = db.execute("SELECT pid, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE ORDER BY pid, cudaId")
    return pd.DataFrame(
        {
            c: np.array([r[i] for r in rows], dtype=np.int64)
            for i, c in enumerate(CUDA_DEVICE_COLUMNS)
        }
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
