"""The report's small descriptive tables read as plain rows, with the loader's checks.

Plain Python (no NumPy, no pandas): :mod:`analysis.metadata` builds the model's frames from
these rows; the lean stats reader and the SQL path of ``stats`` (:mod:`analysis.stats.sql`)
run the same checks (:func:`check_descriptive_tables`) without building them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from strata.analysis._sqlfile import SqliteReport, quote_ident
from strata.analysis.errors import CorruptReportError, UnsupportedVersionError
from strata.analysis.schema import (
    MAX_SCHEMA_MAJOR,
    MEM_KIND_LABELS,
    MEMCPY_KIND_LABELS,
    SYNC_TYPE_LABELS,
)

__all__ = [
    "GPU_NUMBERS",
    "check_descriptive_tables",
    "context_rows",
    "cuda_device_rows",
    "gpu_rows",
    "info_fields",
    "keyed",
    "metric_rows",
    "read_enums",
    "select",
    "stream_rows",
    "text_of",
]


def text_of(value: object) -> str:
    """A metadata value as text: NULL -> '', a blob decoded leniently, numbers as written."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def select(
    db: SqliteReport,
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


def _meta(db: SqliteReport) -> dict[str, str]:
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if db.has_table(table):
            rows = select(db, table, ("name", "value"))
            return {text_of(k): text_of(v) for k, v in rows if k is not None and v is not None}
    return {}


def keyed(rows: list[tuple], keys: int | None = None) -> list[tuple]:
    """Drop rows whose first ``keys`` values (all when None) hold a NULL: they name nothing."""
    return [r for r in rows if None not in r[:keys]]


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for a message (a report's own strings may be huge)."""
    return text if len(text) <= limit else text[:limit] + "..."


def _first_int(db: SqliteReport, table: str, column: str) -> int:
    """The first row's integer ``table.column``; 0 when the table, column or value is absent."""
    if not db.has_column(table, column):
        return 0
    rows = select(db, table, (column,), ints=(column,), tail="LIMIT 1")
    return int(rows[0][0] or 0) if rows else 0


def info_fields(db: SqliteReport) -> dict[str, object]:
    """Return :class:`~analysis.model.ReportInfo`'s fields (version, time base); raise for a
    schema newer than we read."""
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
        os_name = text_of(rows[0][0]) if rows else ""
    return dict(
        path=db.path,
        name=db.path.name,
        nsys_version=product or ("unknown (pre-2021 schema)" if not meta else "unknown"),
        schema_version=schema or "unknown",
        session_start_utc_ns=start,
        duration_ns=duration,
        os=os_name,
    )


def check_descriptive_tables(db: SqliteReport) -> None:
    """Read every small table the loader reads, for its checks only (the lean stats reader,
    the SQL path of ``stats``).

    Raises
    ------
    CorruptReportError
        As the full loader would for the same tables.
    """
    for table, cols in (("PROCESSES", ("pid",)), ("ThreadNames", ("nameId", "globalTid"))):
        if all(db.has_column(table, c) for c in cols):
            select(db, table, cols, ints=cols)
    for read in (gpu_rows, context_rows, cuda_device_rows, stream_rows, read_enums, metric_rows):
        read(db)


GPU_NUMBERS = ("sm_count", "total_memory_bytes")


def gpu_rows(db: SqliteReport) -> dict[int, dict[str, object]]:
    """Device id -> its attributes (``name``, ``bus_location``, ``uuid``, ``sm_count``,
    ``total_memory_bytes``, each where known), as :func:`analysis.metadata.read_gpus` merges
    them: ``TARGET_INFO_GPU`` first, then ``TARGET_INFO_CUDA_GPU`` fills the gaps."""
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
        ints = [id_col] + [src for ours, src in have.items() if ours in GPU_NUMBERS]
        for dev, *values in select(db, table, [id_col, *have.values()], ints=ints):
            if dev is None:
                continue
            row = rows.setdefault(dev, {})
            for ours, value in zip(have, values, strict=True):
                if ours not in GPU_NUMBERS:
                    value = text_of(value) or None
                if row.get(ours) in (None, "") and value is not None:
                    row[ours] = value
    return rows


def context_rows(db: SqliteReport) -> dict[str, list] | None:
    """Source column -> values of the CUDA contexts table (process, device, context, null
    stream, then ``parentContextId`` and ``isGreenContext`` filled where absent or NULL), in
    :data:`analysis.model.CONTEXT_COLUMNS`' order; None without the table."""
    if db.has_table("TARGET_INFO_CUDA_CONTEXT_INFO"):
        table, stream = "TARGET_INFO_CUDA_CONTEXT_INFO", "nullStreamId"
    elif db.has_table("TARGET_INFO_CUDA_NULL_STREAM"):
        table, stream = "TARGET_INFO_CUDA_NULL_STREAM", "streamId"
    else:
        return None
    cols = ["processId", "deviceId", "contextId", stream]
    extra = [c for c in ("parentContextId", "isGreenContext") if db.has_column(table, c)]
    rows = select(
        db, table, cols + extra, ints=cols + extra, tail="ORDER BY processId, deviceId, contextId"
    )
    rows = keyed(rows, len(cols))
    values = {c: [r[i] for r in rows] for i, c in enumerate(cols + extra)}
    fills = {"parentContextId": -1, "isGreenContext": 0}
    for name, fill in fills.items():
        values[name] = [fill if v is None else v for v in values.get(name, [fill] * len(rows))]
    return {c: values[c] for c in (*cols, *fills)}


def cuda_device_rows(db: SqliteReport) -> list[tuple] | None:
    """``(pid, cudaId, gpuId)`` rows of ``TARGET_INFO_CUDA_DEVICE``; None without it."""
    cols = ("pid", "cudaId", "gpuId")
    if not all(db.has_column("TARGET_INFO_CUDA_DEVICE", c) for c in cols):
        return None
    return keyed(
        select(db, "TARGET_INFO_CUDA_DEVICE", cols, ints=cols, tail="ORDER BY pid, cudaId")
    )


def stream_rows(db: SqliteReport) -> list[tuple] | None:
    """``(processId, contextId, streamId, priority, flag)`` rows; None without the table."""
    cols = ("processId", "contextId", "streamId", "priority", "flag")
    if not db.has_table("TARGET_INFO_CUDA_STREAM") or not all(
        db.has_column("TARGET_INFO_CUDA_STREAM", c) for c in cols
    ):
        return None
    return keyed(select(db, "TARGET_INFO_CUDA_STREAM", cols, ints=cols), 3)


def metric_rows(db: SqliteReport) -> list[tuple] | None:
    """Distinct ``(typeId, metricId, name)`` of the GPU metrics catalogue; None without it."""
    cols = ("typeId", "metricId", "metricName")
    if not all(db.has_column("TARGET_INFO_GPU_METRICS", c) for c in cols):
        return None
    rows = select(db, "TARGET_INFO_GPU_METRICS", cols, ints=cols[:2])
    # DISTINCT in Python: first occurrences in table order, as SQLite's DISTINCT gives them.
    return list(dict.fromkeys((t, m, text_of(name)) for t, m, name in rows))


def _enum(db: SqliteReport, table: str, fallback: dict[int, str]) -> dict[int, str]:
    if db.has_column(table, "label") and db.has_column(table, "id"):
        rows = select(db, table, ("id", "label"), ints=("id",))
        return {i: text_of(label) for i, label in rows if i is not None}
    return dict(fallback)


def read_enums(db: SqliteReport) -> dict[str, dict[int, str]]:
    """Return enum label maps, from the report's ENUM_* tables or the built-in lists."""
    return {
        "memcpy_kind": _enum(db, "ENUM_CUDA_MEMCPY_OPER", MEMCPY_KIND_LABELS),
        "mem_kind": _enum(db, "ENUM_CUDA_MEM_KIND", MEM_KIND_LABELS),
        "sync_type": _enum(db, "ENUM_CUPTI_SYNC_TYPE", SYNC_TYPE_LABELS),
    }
