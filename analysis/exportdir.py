"""Open the folders that ``nsys export --type arrowdir|parquetdir`` writes, as their report.

Such a folder holds one file per table of the SQLite export (``StringIds.arrow``,
``CUPTI_ACTIVITY_KIND_KERNEL.arrow``, ... or ``.parquet``), the same columns with Arrow
types. It is recognised by content: a folder with a ``StringIds`` file of one format. Its
tables are copied, through Arrow (ADBC's bulk ingest, no Python per row), into one SQLite
file in the cache folder, which the loader then reads as any export: the same column
checks, validation, model and cache entry as the ``.sqlite`` of the same report, so there
is no second reader to keep in step. The copy is keyed by the folder's path and its files'
names, sizes and mtimes, and reused until one of them changes, as ``nsys export`` of an
``.nsys-rep`` is.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from strata.analysis import cache, cachesize
from strata.analysis._files import os_reason
from strata.analysis._tablespecs import ALL_SPECS
from strata.analysis.discover import EXPORT_DIR_SUFFIXES, export_dir_format
from strata.analysis.errors import CorruptReportError, NotAReportError
from strata.analysis.progress import Progress

__all__ = ["export_dir_sqlite"]

#: File suffix -> the ``nsys export --type`` that writes a folder of such files.
#: The table every Nsight Systems export has (the loader refuses a report without it).


def _table_files(folder: Path, suffix: str) -> list[Path]:
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == suffix)
    except OSError as exc:
        raise NotAReportError(folder, f"cannot list folder ({os_reason(exc)})") from exc
    # Table names become SQL identifiers: only the names nsys writes (letters, digits, _).
    return [p for p in files if p.stem.replace("_", "").isalnum() and p.stem.isascii()]


def _content_key(folder: Path, files: list[Path]) -> str:
    """The folder's path and its table files' names, sizes and mtimes, hashed."""
    parts = [str(folder.resolve())]
    for file in files:
        try:
            st = file.stat()
        except OSError as exc:
            raise CorruptReportError(folder, f"{file.name}: {os_reason(exc)}") from exc
        parts.append(f"{file.name}|{st.st_size}|{st.st_mtime_ns}")
    text = "\n".join(parts).encode("utf-8", "surrogateescape")
    return hashlib.sha1(text).hexdigest()[:24]


def export_dir_sqlite(folder: Path, progress: Progress | None = None) -> Path:
    """Return an SQLite file holding the tables of the export folder ``folder``.

    Written once into ``<cache>/exports/`` under a name unique to the writer, renamed into
    place, and reused while the folder's files are unchanged.

    Raises
    ------
    NotAReportError
        ``folder`` is not an arrowdir/parquetdir export folder.
    CorruptReportError
        A table file cannot be read (truncated, not Arrow/Parquet, a link loop) or holds a
        column type SQLite cannot store.
    """
    kind = export_dir_format(folder)
    if kind is None:
        raise NotAReportError(folder, "is a folder; open the reports inside it")
    suffix = next(s for s, k in EXPORT_DIR_SUFFIXES.items() if k == kind)
    files = _table_files(folder, suffix)
    out_dir = cache.cache_root() / "exports"
    digest = hashlib.sha1(os.fsencode(folder.resolve())).hexdigest()[:12]
    out = out_dir / f"{digest}-{_content_key(folder, files)}.sqlite"
    if out.is_file():
        cachesize.mark_used(out)
        return out
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".tmp-", dir=out_dir) as tmp:
            copy = Path(tmp) / "report.sqlite"
            _write_sqlite(folder, files, copy, progress)
            os.replace(copy, out)
    except OSError as exc:
        raise CorruptReportError(
            folder, f"cannot write its SQLite copy ({os_reason(exc)})"
        ) from exc
    _drop_older_copies(out, digest)
    cachesize.written(out)
    return out


def _drop_older_copies(out: Path, digest: str) -> None:
    """Remove the copies of the same folder made before its files last changed."""
    stale = [p for p in out.parent.glob(f"{digest}-*.sqlite") if p != out]
    for path in stale:
        path.unlink(missing_ok=True)


def _write_sqlite(folder: Path, files: list[Path], out: Path, progress: Progress | None) -> None:
    """Ingest every table file of ``folder`` into a new SQLite database at ``out``."""
    import adbc_driver_sqlite.dbapi as adbc

    with adbc.connect(str(out)) as con, con.cursor() as cur:
        for i, file in enumerate(files):
            if progress is not None:
                progress(0.3 * i / max(1, len(files)), f"reading {file.name}")
            table = _sqlite_types(folder, file, _read_table(folder, file))
            try:
                cur.adbc_ingest(file.stem, table, mode="create")
            except Exception as exc:  # noqa: BLE001 - ADBC raises its own DB-API errors
                raise CorruptReportError(
                    folder, f"{file.name} cannot be copied into SQLite ({_first_line(exc)})"
                ) from exc
        con.commit()


def _read_table(folder: Path, file: Path) -> pa.Table:
    """Read one table file (Arrow IPC stream or file, or Parquet)."""
    try:
        if file.suffix == ".parquet":
            return pq.read_table(file)
        with pa.memory_map(str(file)) as source:
            try:
                return ipc.open_stream(source).read_all()
            except pa.ArrowInvalid:
                source.seek(0)
                return ipc.open_file(source).read_all()
    except OSError as exc:
        raise CorruptReportError(folder, f"{file.name}: {os_reason(exc)}") from exc
    except (pa.ArrowException, ValueError) as exc:
        raise CorruptReportError(
            folder, f"{file.name} is not a readable {file.suffix[1:]} table ({_first_line(exc)})"
        ) from exc


#: The tables besides the event tables (:data:`ALL_SPECS`) that the model is built from: the
#: string pool and the descriptive tables :mod:`analysis._metarows` and
#: :mod:`analysis.metadata` read (versions, time base, processes, threads, GPUs, streams).
_MODEL_TABLES = frozenset({
    "StringIds", "ThreadNames", "PROCESSES", "ANALYSIS_DETAILS", "META_DATA_EXPORT",
    "EXPORT_META_DATA", "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SYSTEM_ENV",
    "TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU", "TARGET_INFO_CUDA_DEVICE",
    "TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_NULL_STREAM", "TARGET_INFO_CUDA_STREAM",
    "TARGET_INFO_GPU_METRICS", "GPU_NUMBERS", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
    "ENUM_CUPTI_SYNC_TYPE",
})  # fmt: skip


def _sqlite_types(folder: Path, file: Path, table: pa.Table) -> pa.Table:
    """Cast columns to what SQLite stores: unsigned and narrow integers and booleans to int64,
    dictionaries to their values.

    An unsigned value beyond int64 in a table the model is built from is refused, not
    wrapped. In any other table (``GENERIC_EVENTS.rawTimestamp`` holds 2^64 - 66163 in a real
    report) it is stored as nsys's own SQLite export of the same report stores it, the same
    64 bits read as signed, so that every reader (a recipe, a rule) sees what it sees in that
    export and a table Strata does not load never blocks the report.
    """
    columns = []
    # ALL_SPECS read when needed: a kind registered after import adds its table.
    is_needed = file.stem in _MODEL_TABLES or file.stem in {s.source for s in ALL_SPECS.values()}
    for field, column in zip(table.schema, table.columns, strict=True):
        t = field.type
        if pa.types.is_dictionary(t):
            column, t = column.cast(t.value_type), t.value_type
        if pa.types.is_boolean(t) or (pa.types.is_integer(t) and t != pa.int64()):
            try:
                column = column.cast(pa.int64())
            except pa.ArrowInvalid as exc:
                if is_needed or t != pa.uint64():
                    raise CorruptReportError(
                        folder,
                        f"{file.name} column {field.name} holds values beyond 64-bit integers",
                    ) from exc
                # spec: nsys's .sqlite export stores a uint64 as the int64 of the same bits.
                column = column.cast(pa.int64(), safe=False)
        columns.append(column)
    return pa.table(columns, names=table.schema.names)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
