"""Small descriptive tables of a report: version, processes, threads, GPUs, streams, enums.

The rows are read and checked by :mod:`analysis._metarows` (plain Python); the frames are
built here. Every value is checked for its type as it is read
(:func:`analysis._metarows.select`): an integer column that holds text, a blob or a real
number is refused with one line naming the table and column, and text columns read NULL as
'' and blobs as (leniently decoded) text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis._metarows import (
    check_descriptive_tables,
    context_rows,
    cuda_device_rows,
    gpu_rows,
    info_fields,
    metric_rows,
    read_enums,
    select,
    stream_rows,
    text_of,
)
from strata.analysis._sqlite import ReportDatabase
from strata.analysis._strings import StringTable
from strata.analysis.errors import CorruptReportError
from strata.analysis.model import (
    CONTEXT_COLUMNS,
    CUDA_DEVICE_COLUMNS,
    EventTable,
    ReportInfo,
    StringIds,
)
from strata.analysis.schema import pid_of, tid_of

if TYPE_CHECKING:
    import pandas as pd
# pandas is imported where a frame is built (see analysis.model).

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


def _thread_ids(tables: Mapping[str, EventTable]) -> np.ndarray:
    # The track keys of these tables hold every row's globalTid, so no pass over the events
    # (np.unique over 10 M API calls took 1 s).
    import pandas as pd

    parts = [
        tables[k].track_keys["global_tid"].to_numpy(np.int64)
        for k in _THREAD_KINDS
        if len(tables[k])
    ]
    parts.append(pd.unique(tables["sched"]["global_tid"]).astype(np.int64))
    return np.unique(np.concatenate(parts))


def _gpu_pids(tables: Mapping[str, EventTable]) -> list[np.ndarray]:
    import pandas as pd

    out = []
    # nsys's GPU work tables (keyed by the CUDA process's globalPid), not a list of kinds:
    # this module runs inside the loader, below the kind registry.
    for kind in ("kernels", "memcpy", "memset"):
        table = tables[kind]
        if len(table):
            used = pd.unique(table["track_id"])
            out.append(pid_of(table.track_keys["global_pid"].to_numpy(np.int64)[used]))
    return out


def read_processes(db: ReportDatabase, tables: Mapping[str, EventTable]) -> pd.DataFrame:
    """Return processes that own events: ``pid``, ``global_pid``, ``name``, ``thread_count``."""
    import pandas as pd

    gtids = _thread_ids(tables)
    pids = np.unique(np.concatenate([pid_of(gtids), *_gpu_pids(tables)]))
    names: dict[int, str] = {}
    if db.has_column("PROCESSES", "pid") and db.has_column("PROCESSES", "name"):
        for pid, name in select(db, "PROCESSES", ("pid", "name"), ints=("pid",)):
            if pid is not None:
                names.setdefault(pid, text_of(name))
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
    import pandas as pd

    gtids = _thread_ids(tables)
    names: dict[int, str] = {}
    cols = ("nameId", "globalTid")
    if all(db.has_column("ThreadNames", c) for c in cols):
        for name_id, gtid in select(db, "ThreadNames", cols, ints=cols):
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


def read_info(db: ReportDatabase) -> ReportInfo:
    """Return version and time base; raise for a schema newer than we read."""
    return ReportInfo(**info_fields(db))


def read_gpus(db: ReportDatabase) -> pd.DataFrame:
    """Return GPUs, one row per device id (spec §1.4 "Device name", §2 step 5).

    Columns: ``device_id`` (int64), ``name`` (str), ``bus_location`` (str), ``uuid`` (str,
    '' when unknown), ``sm_count`` and ``total_memory_bytes`` (int64, -1 when unknown).
    ``TARGET_INFO_GPU`` (2022.4+: ``id``; older: ``deviceId``) comes first, then
    ``TARGET_INFO_CUDA_GPU`` (2020-2022) fills devices and attributes it lacks.
    """
    import pandas as pd

    rows = gpu_rows(db)
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
    import pandas as pd

    values = context_rows(db)
    if values is None:
        return pd.DataFrame({c: np.empty(0, np.int64) for c in CONTEXT_COLUMNS})
    return pd.DataFrame(
        {
            c: np.array(column, dtype=np.int64)
            for c, column in zip(CONTEXT_COLUMNS, values.values(), strict=True)
        }
    )


def read_cuda_devices(db: ReportDatabase) -> pd.DataFrame:
    """Return the CUDA-ordinal to physical-GPU map: ``pid``, ``device_id`` (the CUDA
    ordinal that event tables carry), ``gpu_id`` (``TARGET_INFO_GPU.id``), all int64.

    From ``TARGET_INFO_CUDA_DEVICE`` (2024+); empty when the report lacks it. Under
    ``CUDA_VISIBLE_DEVICES`` the physical GPU of ``(pid, deviceId)`` is ``gpu_id``, spec §1.4.
    """
    import pandas as pd

    rows = cuda_device_rows(db)
    if rows is None:
        return pd.DataFrame({c: np.empty(0, np.int64) for c in CUDA_DEVICE_COLUMNS})
    return pd.DataFrame(
        {
            c: np.array([r[i] for r in rows], dtype=np.int64)
            for i, c in enumerate(CUDA_DEVICE_COLUMNS)
        }
    )


def read_streams(db: ReportDatabase) -> pd.DataFrame:
    """Return CUDA streams: ``pid``, ``context_id``, ``stream_id``, ``priority``, ``flag``."""
    import pandas as pd

    rows = stream_rows(db)
    return pd.DataFrame(
        rows if rows is not None else None,
        columns=["pid", "context_id", "stream_id", "priority", "flag"],
    )


def read_gpu_metric_names(db: ReportDatabase) -> pd.DataFrame:
    """Return ``type_id``, ``metric_id``, ``name`` of the GPU metrics catalogue."""
    import pandas as pd

    rows = metric_rows(db)
    return pd.DataFrame(
        rows if rows is not None else None, columns=["type_id", "metric_id", "name"]
    )


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
