"""Open a report for a few summaries only: read just the columns they need.

``main.py stats -r cuda_gpu_kern_sum,cuda_api_sum`` on a cold 10 M-kernel report needs three
columns of two tables, not the whole model: reading those (parallel rowid chunks, as the
loader does) takes a few seconds where a full first open takes tens of seconds on the 2-core
reference machine. Only durations are kept (SQLite computes ``end - start``; a lean
table's events all "start" at 0), so a lean report serves the duration summaries and nothing
else. The columns are kept in a small side cache (``.npy`` files) keyed like the main cache,
so a second run reads ~20 bytes per event instead of the report. When the main
columnar cache already holds the report, or a summary needs more than these columns, the
full :func:`analysis.open_report` is used instead.

A side-cache entry's ``meta.json`` lists exactly the tables and columns it holds and the
tables the report lacks; a table it does not list was not read, and a run that needs it reads
it from the report (with the columns the entry holds of it) and writes an entry holding both.
Every file is checked against the size and checksum in ``meta.json`` before NumPy parses it
(:mod:`analysis._cachefiles`); a damaged entry is discarded and the report read instead.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Collection, Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from analysis import cache, metadata
from analysis._cachefiles import (
    DamagedEntryError,
    file_record,
    is_unavailable,
    read_meta,
    read_verified,
    write_meta,
)
from analysis._files import pending_wal, read_head
from analysis._sqlite import SQLITE_MAGIC, ColumnRead, ReportDatabase, quote_ident
from analysis._strings import StringTable, read_string_table
from analysis.errors import CorruptReportError, NotAReportError
from analysis.loader import check_event_tables, duration_error
from analysis.model import EVENT_TABLES, EventTable, Report, ReportInfo, StringIds, freeze
from analysis.open import open_report

__all__ = ["LEAN_REPORTS", "open_for_stats", "wait_for_cache_writes"]

log = logging.getLogger(__name__)

#: table kind -> (source table, [(our column, source column, dtype, NULL fill)])
_LEAN_COLUMNS = {
    "kernels": (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        [("name_id", "demangledName", np.int32, -1), ("short_name_id", "shortName", np.int32, -1),
         ("mangled_name_id", "mangledName", np.int32, -1)],
    ),
    "cuda_api": ("CUPTI_ACTIVITY_KIND_RUNTIME", [("name_id", "nameId", np.int32, -1)]),
}  # fmt: skip

#: Report specs computable from the lean columns alone -> (table kind, name columns read).
LEAN_REPORTS = {
    "cuda_gpu_kern_sum": ("kernels", ("name_id",)),
    "cuda_gpu_kern_sum:base": ("kernels", ("name_id", "short_name_id")),
    "cuda_gpu_kern_sum:mangled": ("kernels", ("name_id", "mangled_name_id")),
    "cuda_api_sum": ("cuda_api", ("name_id",)),
}
_FORMAT = 3
#: What a damaged side-cache entry raises while it is read (a bad checksum: ValueError).
_DAMAGE = (OSError, MemoryError, ValueError, KeyError, TypeError, IndexError, AttributeError,
           OverflowError)  # fmt: skip


def open_for_stats(
    path: str | Path,
    specs: Iterable[str],
    use_cache: bool = True,
    tables: Collection[str] | None = None,
) -> Report:
    """Return a report holding at least what ``specs`` need.

    Parameters
    ----------
    path
        A report file (``.sqlite``; other formats go through :func:`open_report`).
    specs
        The summaries that will run, e.g. ``["cuda_gpu_kern_sum", "cuda_api_sum"]``.
    use_cache
        Use (and fill) the caches.
    tables
        When the lean columns do not serve ``specs``: the event tables they read, passed to
        :func:`analysis.open_report` (None: all).

    Returns
    -------
    Report
        Either the full model, or one whose tables other than those ``specs`` read are empty
        (``report.has_source`` still answers for every table of the file).
    """
    path = Path(path)
    needs = [LEAN_REPORTS.get(s.strip()) for s in specs]
    if None in needs or not needs or not _is_sqlite(path):
        return open_report(path, use_cache=use_cache, tables=tables)
    wanted: dict[str, set[str]] = {}
    for kind, names in needs:
        wanted.setdefault(kind, set()).update(names)
    if not use_cache:
        return _read_lean(path, wanted)
    key = cache.cache_key(path)
    cached = cache.load_cached(key, path)
    if cached is not None:
        return cached
    entry = _lean_dir(key)
    report, meta = _load_lean(entry, path, wanted)
    if report is not None:
        return report
    if meta is _UNUSABLE:
        return _read_lean(path, wanted)  # the entry is kept for a run with more memory
    # The entry lacks a table (or column) these summaries read: read the wanted tables with
    # the columns the entry holds of them, so that the new entry serves this run and the
    # earlier ones; the entry's other tables are carried over.
    held = {k: set(t["columns"]) - {"end_ns"} for k, t in (meta or {}).get("tables", {}).items()}
    read = {kind: names | held.get(kind, set()) for kind, names in wanted.items()}
    # An entry is only ever written after a validating read of this same file (its key
    # holds path, size and mtime): adding a table to it need not check the report again.
    report = _read_lean(path, read, validate=not meta)
    # Written while the summaries run (~1 s for 10 M events on a busy 2-core machine);
    # wait_for_cache_writes() or interpreter exit waits for it.
    writer = threading.Thread(target=_store_lean, args=(report, read, entry, meta), daemon=False)
    writer.start()
    _WRITERS.append(writer)
    return report


_WRITERS: list[threading.Thread] = []
#: What _load_lean answers for an entry it cannot read now (no memory, no permission).
_UNUSABLE: dict = {}


def wait_for_cache_writes() -> None:
    """Block until the side-cache entries being written in the background are on disk."""
    while _WRITERS:
        _WRITERS.pop().join()


def _is_sqlite(path: Path) -> bool:
    # read_head refuses a FIFO or device without blocking. A report whose newest data are
    # in a -wal file is read through open_report's private checkpointed copy instead.
    head, _size = read_head(path, 16)
    return head == SQLITE_MAGIC and pending_wal(path) is None


def _lean_dir(key: str) -> Path:
    return cache.cache_root() / "stats-columns" / f"{key}-{_FORMAT}"


#: ``end - start`` of numeric timestamps only. SQLite would read the text 'abc' as 0; here
#: text or a blob (never equal to itself plus 0) or NULL makes the duration NULL, and a real
#: number (or an overflowing difference) makes it real: either way the column is then
#: described as the loader describes it. Comparing beats ``typeof()`` calls: +0.025 s
#: instead of +0.043 s per million rows on top of a plain difference (2-core machine).
_DURATION = 'CASE WHEN "start" = "start" + 0 AND "end" = "end" + 0 THEN "end" - "start" END AS _dur'


def _column_read(
    db: ReportDatabase, kind: str, names: set[str], strings: StringTable
) -> ColumnRead:
    """Read ``end - start`` (computed by SQLite: one column instead of two) and the names.

    The columns read are checked as the full loader checks them, with the same messages:
    start and end present, integer and never NULL; durations that fit in int64 (SQLite
    turns an overflowing difference into a real number); names integer and in StringIds
    (mapped to pool codes, so an id >= 2^32 cannot fold onto another one).
    """
    table, extra = _LEAN_COLUMNS[kind]
    extra = [c for c in extra if c[0] in names]
    present = set(db.columns(table))
    for required in ("start", "end"):
        if required not in present:
            raise CorruptReportError(db.path, f"{table} lacks its {required} column")
    names = [c for c in extra if c[1] in present]
    select = ", ".join([_DURATION] + [quote_ident(c[1]) for c in names])

    def convert(arrow: pa.Table) -> dict[str, np.ndarray]:
        n = arrow.num_rows
        dur = arrow.column("_dur")
        if dur.null_count or not pa.types.is_integer(dur.type):
            raise _timestamp_error(db, table)
        data: dict[str, object] = {"end_ns": db.integers(dur, table, "end")}
        for name, source, dtype, fill in extra:
            if source in present:
                ids = db.integers(arrow.column(source), table, source, fill)
                data[name] = strings.codes(ids, table)
            else:
                data[name] = np.full(n, fill, dtype=dtype)
        return data

    dtypes = {"end_ns": np.int64, **{c[0]: c[2] for c in extra}}
    return ColumnRead(table, f"SELECT {select} FROM {quote_ident(table)}", convert, dtypes)


def _timestamp_error(db: ReportDatabase, table: str) -> CorruptReportError:
    """Name, in the loader's words, why a duration is not an integer (error path only).

    A start or end that is not an integer (text, blob, real, NULL), else events that end
    before they start or whose difference overflowed int64 (SQLite made it a real number),
    counted over the whole table as the loader counts them.
    """
    for column in ("start", "end"):
        error = db.bad_values(table, column) or db.bad_values(table, column, allow_null=False)
        if error is not None:
            return error
    before, overflowed = db.execute(
        f'SELECT total("end" < "start"), total("end" >= "start" AND '
        f'typeof("end" - "start") = \'real\') FROM {quote_ident(table)}'
    )[0]
    return duration_error(db.path, table, int(before), int(overflowed)) or CorruptReportError(
        db.path, f"{table} has durations that are not integers"
    )


def _read_lean(path: Path, wanted: dict[str, set[str]], validate: bool = True) -> Report:
    """Read the ``wanted`` columns; with ``validate``, refuse all the full loader refuses.

    ``validate`` False: the report was validated before (its side-cache entry says so).
    """
    with ReportDatabase(path) as db:
        if not db.has_table("StringIds"):
            raise NotAReportError(
                path, "SQLite database without Nsight Systems tables (no StringIds table)"
            )
        info = metadata.read_info(db)
        strings = read_string_table(db)
        # The loader reads (and so checks) these small tables too: refuse what it refuses.
        metadata.check_descriptive_tables(db)
        kinds = [k for k in wanted if db.has_table(_LEAN_COLUMNS[k][0])]
        data = db.read_tables([_column_read(db, k, wanted[k], strings) for k in kinds])
        columns = dict(zip(kinds, data, strict=True))
        for kind, cols in columns.items():
            before = int(np.count_nonzero(cols["end_ns"] < 0))
            error = duration_error(path, _LEAN_COLUMNS[kind][0], before, 0)
            if error is not None:
                raise error
        if validate:
            # What the columns above did not show: the other tables and columns, checked
            # inside SQLite (2 M kernels: ~0.4 s, against seconds for a full load).
            check_event_tables(db, strings, {k: _checked_sources(k, wanted[k]) for k in kinds})
        source_columns = {t: tuple(db.columns(t)) for t in sorted(db.tables)}
    return _build(info, strings.values, columns, source_columns)


def _checked_sources(kind: str, names: set[str]) -> set[str]:
    """The source columns of ``kind`` that :func:`_column_read` reads and checks."""
    return {"start", "end"} | {c[1] for c in _LEAN_COLUMNS[kind][1] if c[0] in names}


def _build(
    info: ReportInfo,
    strings: np.ndarray,
    columns: dict[str, dict[str, np.ndarray]],
    source_columns: dict[str, tuple[str, ...]],
) -> Report:
    tables = {}
    for kind in EVENT_TABLES:
        cols = dict(columns.get(kind) or {})
        n = len(cols["end_ns"]) if cols else 0
        if not cols:
            # No such table in the report (or not read): empty, with every lean column, so
            # that a summary finds nothing rather than a missing column.
            cols = {"end_ns": np.empty(0, np.int64)}
            for name, _source, dtype, _fill in _LEAN_COLUMNS.get(kind, (None, []))[1]:
                cols[name] = np.empty(0, dtype)
        # Durations only: every event starts at 0 and ends at its duration (no memory for
        # the constant columns). The rows are in no particular order, on one track.
        cols["start_ns"] = np.broadcast_to(np.int64(0), (n,))
        cols["row_id"] = np.broadcast_to(np.int64(-1), (n,))
        cols["track_id"] = np.broadcast_to(np.int32(0), (n,))
        keys = pd.DataFrame({"lean": [0]}) if n else pd.DataFrame({"lean": []})
        tables[kind] = EventTable(kind, {k: freeze(v) for k, v in cols.items()}, keys)
    empty = pd.DataFrame()
    return Report(
        info=info,
        strings=StringIds(strings),
        tables=tables,
        processes=empty,
        threads=empty,
        gpus=empty,
        streams=empty,
        nvtx_domains=empty,
        nvtx_categories=empty,
        enums={},
        gpu_metric_names=empty,
        source_columns=source_columns,
    )


def _store_lean(
    report: Report, read: dict[str, set[str]], entry: Path, old: dict | None = None
) -> None:
    """Write the tables ``read`` from the report as the entry, with ``old``'s other tables.

    Atomic: written in a private folder that replaces the entry. A failure (read-only or full
    cache folder) costs a warning and the next run a re-read, nothing else.
    """
    tmp: Path | None = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
        tables, absent = _write_columns(report, read, tmp)
        for kind, table in (old or {}).get("tables", {}).items():
            if kind not in tables and kind not in read:
                for column in table["columns"].values():
                    _link_or_copy(entry / column["file"], tmp / column["file"])
                tables[kind] = table
        absent.update(k for k in (old or {}).get("absent", []) if k not in tables)
        info = report.info
        meta = {
            "format": _FORMAT,
            "source": str(Path(info.path).resolve()),
            "info": [info.nsys_version, info.schema_version, info.session_start_utc_ns,
                     info.duration_ns, info.os],
            "strings": report.strings.values.tolist(),
            "source_columns": {t: list(c) for t, c in report.source_columns.items()},
            "tables": tables,
            "absent": sorted(absent),
        }  # fmt: skip
        write_meta(tmp / "meta.json", meta)
        old_dir = entry.with_name(f".old-{entry.name}-{os.getpid()}")
        if entry.exists() or entry.is_symlink():
            os.replace(entry, old_dir)
        os.replace(tmp, entry)
        cache.discard(old_dir)
        # The same report's entries under older keys (it was re-recorded or touched).
        cache.prune_stale(entry.parent, info.path, keep=entry.name)
    except (OSError, ValueError, MemoryError) as exc:
        log.warning("stats column cache not written (%s)", exc)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _write_columns(
    report: Report, read: dict[str, set[str]], tmp: Path
) -> tuple[dict[str, dict], set[str]]:
    """Save the columns of the tables ``read``; return their meta.json part and absent kinds."""
    tables: dict[str, dict] = {}
    absent: set[str] = set()
    for kind, names in read.items():
        if not report.has_source(_LEAN_COLUMNS[kind][0]):
            absent.add(kind)  # the report lacks the table: an empty table, not a missing one
            continue
        table = report.tables[kind]
        columns = {n: np.asarray(table[n]) for n in ("end_ns", *sorted(names)) if n in table}
        try:
            _check_lean(kind, columns, len(report.strings))
        except DamagedEntryError as exc:
            log.info("stats column cache: %s not kept (%s)", kind, exc)
            continue
        stored = {}
        for name, values in columns.items():
            if name == "end_ns" and len(values) and int(values.max()) < 2**31:
                values = values.astype(np.int32)  # durations below 2.1 s: half the bytes
            file = f"{kind}.{name}.npy"
            np.save(tmp / file, values)
            stored[name] = {
                "file": file,
                "dtype": values.dtype.str,
                "record": file_record(tmp / file),
            }
        tables[kind] = {"rows": len(table), "columns": stored}
    return tables, absent


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _check_lean(kind: str, columns: dict[str, np.ndarray], n_strings: int) -> None:
    """Raise DamagedEntryError unless durations are >= 0 and name ids -1 or in the pool."""
    for name, values in columns.items():
        if not len(values):
            continue
        lo, hi = int(values.min()), int(values.max())
        if name == "end_ns" and lo < 0:
            raise DamagedEntryError(f"{kind}: negative durations")
        if name != "end_ns" and (lo < -1 or hi >= n_strings):
            raise DamagedEntryError(f"{kind}.{name}: ids {lo}..{hi} outside {n_strings} strings")


def _load_lean(
    entry: Path, path: Path, wanted: dict[str, set[str]]
) -> tuple[Report | None, dict | None]:
    """Return (the report from the entry, the entry's checked meta.json).

    The report is None when the entry lacks a wanted table or column; the meta is None when
    there is no entry (none, or a damaged one, which is discarded), and :data:`_UNUSABLE`
    when it cannot be read now (memory, permission): then it is kept and not rewritten.
    """
    if not (entry / "meta.json").is_file():
        return None, None
    meta: dict | None = None
    try:
        meta = read_meta(entry / "meta.json")
        if meta.get("format") != _FORMAT:
            raise DamagedEntryError("side cache format mismatch")
        strings = np.array(meta["strings"], dtype=object)
        columns: dict[str, dict[str, np.ndarray]] = {}
        for kind, names in wanted.items():
            if kind in meta["absent"] and _LEAN_COLUMNS[kind][0] not in meta["source_columns"]:
                continue  # the report has no such table: it stays empty
            table = meta["tables"].get(kind)
            if table is None or not {"end_ns", *names} <= set(table["columns"]):
                return None, meta  # made for other summaries: read the report
            columns[kind] = {n: _read_column(entry, table, n) for n in ("end_ns", *sorted(names))}
            _check_lean(kind, columns[kind], len(strings))
        version, schema, start, duration, os_name = meta["info"]
        info = ReportInfo(path, path.name, version, schema, start, duration, os_name)
        source = {t: tuple(c) for t, c in meta["source_columns"].items()}
        return _build(info, strings, columns, source), meta
    except _DAMAGE as exc:
        if is_unavailable(exc):
            log.warning("cannot use the stats column cache now (%s); reading the report", exc)
            return None, _UNUSABLE
        log.warning("discarding a damaged stats column cache entry for %s (%s)", path, exc)
        cache.discard(entry)
        return None, None


def _read_column(entry: Path, table: dict, name: str) -> np.ndarray:
    """Read one ``.npy`` column after checking its bytes, dtype and length against meta."""
    spec = table["columns"][name]
    data = read_verified(entry / spec["file"], spec["record"])
    header = io.BytesIO(data[: 1 << 17].tobytes())
    version = np.lib.format.read_magic(header)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(header)
    else:
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(header)
    rows, offset = table["rows"], header.tell()
    if (
        dtype.str != spec["dtype"]
        or shape != (rows,)
        or len(data) != offset + rows * dtype.itemsize
    ):
        raise DamagedEntryError(f"{spec['file']}: header differs from meta.json")
    return freeze(data[offset:].view(dtype))
