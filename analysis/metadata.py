"""Small descriptive tables of a report: version, processes, threads, GPUs, streams, enums.

Every value is checked for its type as it is read (:func:`_select`): an integer column that
holds text, a blob or a real number is refused with one line naming the table and column,
and text columns read NULL as '' and blobs as (leniently decoded) text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis._sqlite import ReportDatabase, quote_ident
from analysis._strings import StringTable
from analysis.errors import CorruptReportError, UnsupportedVersionError
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
    "check_descriptive_tables",
    "read_contexts",
    "read_cuda_devices",
    "read_enums",
    "read_gpu_metric_names",
    "read_gpus",
    "read_info",
    "read_processes",
    "read_streams",
    "read_threads",
    "table_schema",
]

_THREAD_KINDS = ("cuda_api", "osrt", "nvtx", "samples")


def _text(value: object) -> str:
    """A metadata value as text: NULL -> '', a blob decoded leniently, numbers as written."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _select(
    db: ReportDatabase,
    table: str,
    columns: Sequence[str],
    ints: Collection[str] = (),
    tail: str = "",
) -> list[tuple]:
    """Return ``SELECT columns FROM table tail``, checking that ``ints`` hold integers or NULL.

    Raises
    ------
    CorruptReportError
        A value of an ``ints`` column is text, a blob or a real number.
    """
    select = ", ".join(quote_ident(c) for c in columns)
    rows = db.execute(f"SELECT {select} FROM {quote_ident(table)} {tail}")
    for i, column in enumerate(columns):
        if column not in ints:
            continue
        if any(r[i] is not None and type(r[i]) is not int for r in rows):
            raise db.bad_values(table, column) or CorruptReportError(
                db.path, f"{table}.{column} holds values that are not integers"
            )
    return rows


def _meta(db: ReportDatabase) -> dict[str, str]:
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if db.has_table(table):
            rows = _select(db, table, ("name", "value"))
            return {_text(k): _text(v) for k, v in rows if k is not None and v is not None}
    return {}


def _keyed(rows: list[tuple], keys: int | None = None) -> list[tuple]:
    """Drop rows whose first ``keys`` values (all when None) hold a NULL: they name nothing."""
    return [r for r in rows if None not in r[:keys]]


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for a message (a report's own strings may be huge)."""
    return text if len(text) <= limit else text[:limit] + "..."


def _first_int(db: ReportDatabase, table: str, column: str) -> int:
    """The first row's integer ``table.column``; 0 when the table, column or value is absent."""
    if not db.has_column(table, column):
        return 0
    rows = _select(db, table, (column,), ints=(column,), tail="LIMIT 1")
    return int(rows[0][0] or 0) if rows else 0


def check_descriptive_tables(db: ReportDatabase) -> None:
    """Read every small table the loader reads, for its checks only (the lean stats reader).

    Raises
    ------
    CorruptReportError
        As the full loader would for the same tables.
    """
    for table, cols in (("PROCESSES", ("pid",)), ("ThreadNames", ("nameId", "globalTid"))):
        if all(db.has_column(table, c) for c in cols):
            _select(db, table, cols, ints=cols)
    for read in (
        read_gpus,
        read_contexts,
        read_cuda_devices,
        read_streams,
        read_enums,
        read_gpu_metric_names,
    ):
        read(db)


def read_info(db: ReportDatabase) -> ReportInfo:
    """Return version and time base; raise for a schema newer than we read."""
    meta = _meta(db)
    schema = meta.get("EXPORT_SCHEMA_VERSION", "")
    product = meta.get("EXPORT_PRODUCT_VERSION", "")
    major = schema.split(".")[0]
    # ASCII digits only, and few: int() refuses a 5,000-digit string with a ValueError.
    if major.isascii() and major.isdigit() and (len(major) > 6 or int(major) > MAX_SCHEMA_MAJOR):
        raise UnsupportedVersionError(
            db.path,
            f"export schema {_short(schema)} (nsys {_short(product) or '?'}) is newer than "
            "Strata reads "
            f"(schema {MAX_SCHEMA_MAJOR}.x); please report it with the file's nsys version",
        )
    start = _first_int(db, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs")
    duration = _first_int(db, "ANALYSIS_DETAILS", "duration")
    os_name = ""
    if db.has_column("TARGET_INFO_SYSTEM_ENV", "value"):
        rows = db.execute(
            "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ('OsName', 'OS') LIMIT 1"
        )
        os_name = _text(rows[0][0]) if rows else ""
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
    if db.has_column("PROCESSES", "pid") and db.has_column("PROCESSES", "name"):
        for pid, name in _select(db, "PROCESSES", ("pid", "name"), ints=("pid",)):
            if pid is not None:
                names.setdefault(pid, _text(name))
    counts = pd.Series(pid_of(gtids)).value_counts() if len(gtids) else pd.Series(dtype=int)
    return pd.DataFrame(
        {
            "pid": pids.astype(np.int64),
            "name": [names.get(int(p), "") for p in pids],
            "thread_count": [int(counts.get(p, 0)) for p in pids],
        }
    )


def read_threads(
    db: ReportDatabase,
    tables: Mapping[str, EventTable],
    pool: StringIds,
    strings: StringTable,
) -> pd.DataFrame:
    """Return threads that own events: ``global_tid``, ``pid``, ``tid``, ``name``.

    ``strings`` maps the report's ``ThreadNames.nameId`` to a code of ``pool``.
    """
    gtids = _thread_ids(tables)
    names: dict[int, str] = {}
    cols = ("nameId", "globalTid")
    if all(db.has_column("ThreadNames", c) for c in cols):
        for name_id, gtid in _select(db, "ThreadNames", cols, ints=cols):
            if gtid is not None and name_id is not None:
                names[gtid] = pool[strings.code(name_id)] or ""
    return pd.DataFrame(
        {
            "global_tid": gtids,
            "pid": pid_of(gtids),
            "tid": tid_of(gtids),
            "name": [names.get(int(g), "") for g in gtids],
        }
    )


_GPU_NUMBERS = ("sm_count", "total_memory_bytes")


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
        ints = [id_col] + [src for ours, src in have.items() if ours in _GPU_NUMBERS]
        for dev, *values in _select(db, table, [id_col, *have.values()], ints=ints):
            if dev is None:
                continue
            row = rows.setdefault(dev, {})
            for ours, value in zip(have, values, strict=True):
                if ours not in _GPU_NUMBERS:
                    value = _text(value) or None
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
    cols = ["processId", "deviceId", "contextId", stream]
    extra = [c for c in ("parentContextId", "isGreenContext") if db.has_column(table, c)]
    rows = _select(
        db, table, cols + extra, ints=cols + extra, tail="ORDER BY processId, deviceId, contextId"
    )
    rows = _keyed(rows, len(cols))
    values = {c: [r[i] for r in rows] for i, c in enumerate(cols + extra)}
    fills = {"parentContextId": -1, "isGreenContext": 0}
    for name, fill in fills.items():
        values[name] = [fill if v is None else v for v in values.get(name, [fill] * len(rows))]
    order = [*cols, *fills]
    return pd.DataFrame(
        {
            c: np.array(values[src], dtype=np.int64)
            for c, src in zip(CONTEXT_COLUMNS, order, strict=True)
        }
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
    rows = _keyed(
        _select(db, "TARGET_INFO_CUDA_DEVICE", cols, ints=cols, tail="ORDER BY pid, cudaId")
    )
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
    rows = _keyed(_select(db, "TARGET_INFO_CUDA_STREAM", cols, ints=cols), 3)
    return pd.DataFrame(rows, columns=["pid", "context_id", "stream_id", "priority", "flag"])


def _enum(db: ReportDatabase, table: str, fallback: dict[int, str]) -> dict[int, str]:
    if db.has_column(table, "label") and db.has_column(table, "id"):
        rows = _select(db, table, ("id", "label"), ints=("id",))
        return {i: _text(label) for i, label in rows if i is not None}
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
    rows = _select(db, "TARGET_INFO_GPU_METRICS", cols, ints=cols[:2])
    # DISTINCT in Python: first occurrences in table order, as SQLite's DISTINCT gives them.
    rows = list(dict.fromkeys((t, m, _text(name)) for t, m, name in rows))
    return pd.DataFrame(rows, columns=["type_id", "metric_id", "name"])


def table_schema(path: str | Path) -> list[tuple[str, int, list[tuple[str, str]]]]:
    """Return every real table of the SQLite report at ``path``: ``(name, rows, [(column,
    declared type)])``.

    Schema introspection through sqlite-utils on the report's own read-only, step-bounded
    connection (views and virtual tables are never counted: a view may not end).

    Raises
    ------
    NotAReportError, CorruptReportError
        Not an SQLite file, or one SQLite cannot read.
    """
    from sqlite_utils import Database  # only `info --schema` needs it

    with ReportDatabase(path) as db:
        try:
            found = Database(db.con, recursive_triggers=False, execute_plugins=False)
            out = []
            for name in sorted(db.tables):
                table = found.table(name)
                columns = [(str(c.name), str(c.type or "")) for c in table.columns]
                out.append((name, int(table.count), columns))
        except sqlite3.DatabaseError as exc:
            raise CorruptReportError(db.path, f"unreadable table list ({exc})") from exc
    return out
