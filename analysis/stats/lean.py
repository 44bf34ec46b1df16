"""Open a report for a few summaries only: read just the columns they need.

``main.py stats -r cuda_gpu_kern_sum,cuda_api_sum`` on a cold 10 M-kernel report needs three
columns of two tables, not the whole model: reading those (parallel rowid chunks, as the
loader does) takes a few seconds where a full first open takes tens of seconds on the 2-core
reference machine. Only durations (SQLite computes ``end - start``) and name ids are read,
into a partial :class:`~analysis.model.Report` of :class:`~analysis.model.DurationTable`
(``report.complete`` False), which serves the duration summaries and nothing else.

What is read is kept as a *partial entry* of the columnar cache (:mod:`analysis.cache`):
same key, format, writer, checksums and checks as the full model's entry, so a second run
maps ~12 bytes per event instead of reading the report. A partial entry lists the tables
and columns it holds; a run that needs more reads the wanted tables again (with the columns
the entry holds of them) and writes an entry holding both. When the cache holds the full
model, that is used; when a summary needs more than these columns, the full
:func:`analysis.open_report` is used instead, and its entry replaces the partial one.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis import _native, metadata
from strata.analysis._sqlfile import is_sqlite_file
from strata.analysis._sqlite import ColumnRead, NumpyBatch, ReportDatabase, quote_ident
from strata.analysis._strings import StringTable, read_string_table
from strata.analysis._tablespecs import (
    SPECS,
    ranged_columns,
    suspect_in_summaries,
    unchecked_columns,
)
from strata.analysis.errors import CorruptReportError, NotAReportError
from strata.analysis.model import DurationTable, Report, ReportInfo, StringIds, freeze

if TYPE_CHECKING:
    import pyarrow as pa
# analysis.loader and analysis.open import pandas and pyarrow.compute: they are imported
# where they are called, after the columns are read (a cold `stats` imports pandas on
# another thread meanwhile, analysis.stats.compute).

__all__ = ["LEAN_REPORTS", "open_for_stats", "read_columns", "wait_for_cache_writes"]

#: Report specs computable from the lean columns alone -> (table kind, name columns read).
LEAN_REPORTS = {
    "cuda_gpu_kern_sum": ("kernels", ("name_id",)),
    "cuda_gpu_kern_sum:base": ("kernels", ("name_id", "short_name_id")),
    "cuda_gpu_kern_sum:mangled": ("kernels", ("name_id", "mangled_name_id")),
    "cuda_api_sum": ("cuda_api", ("name_id",)),
}
#: table kind -> (source table, [(our column, source column, dtype, NULL fill)]): the name
#: columns of the lean tables, as their kinds' table specs (analysis._tablespecs) say.
_LEAN_COLUMNS = {
    kind: (
        SPECS[kind].source,
        [(c.name, c.source, np.dtype(c.dtype), c.fill) for c in SPECS[kind].columns
         if c.name in SPECS[kind].names],
    )
    for kind in dict.fromkeys(kind for kind, _ in LEAN_REPORTS.values())
}  # fmt: skip


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
        Either the full model, or a partial one (``report.complete`` False) holding a
        :class:`~analysis.model.DurationTable` of each kind ``specs`` read, empty when the
        file lacks its table (``report.has_source`` answers for every table of the file).
    """
    path = Path(path)
    needs = [LEAN_REPORTS.get(s.strip()) for s in specs]
    if None in needs or not needs or not is_sqlite_file(path):
        from strata.analysis.open import open_report

        return open_report(path, use_cache=use_cache, tables=tables)
    wanted: dict[str, set[str]] = {}
    for kind, names in needs:
        wanted.setdefault(kind, set()).update(names)
    if not use_cache:
        return _read_lean(path, wanted)
    from strata.analysis import cache  # Arrow IPC: pyarrow, which a read without a cache skips

    key = cache.cache_key(path)
    cached = cache.load_cached(key, path, partial=True)
    if cached is not None and (cached.complete or cached.holds(wanted)):
        return cached
    # No entry, or a partial one that lacks a table (or column) these summaries read: read
    # the wanted tables with the columns the entry holds of them, so that the new entry
    # serves this run and the earlier ones; the entry's other tables are carried over.
    have = {} if cached is None else cached.tables
    read = {kind: names | (set(have[kind].columns) if kind in have else set())
            for kind, names in wanted.items()}  # fmt: skip
    read = {kind: names - {"duration_ns"} for kind, names in read.items()}
    # An entry whose verdict says this same file (path, size, mtime, content) passed the
    # whole validation: adding a table to it need not check the report again.
    report = _read_lean(path, read, validate=cached is None or not cache.validated(key))
    if have:
        report = replace(report, tables={**have, **report.tables})
    # Written while the summaries run (~1 s for 10 M events on a busy 2-core machine);
    # wait_for_cache_writes() or interpreter exit waits for it. Validated either way.
    writer = threading.Thread(target=cache.store, args=(report, key, True), daemon=False)
    writer.start()
    _WRITERS.append(writer)
    return report


_WRITERS: list[threading.Thread] = []


def wait_for_cache_writes() -> None:
    """Block until the cache entries being written in the background are on disk."""
    while _WRITERS:
        _WRITERS.pop().join()


#: ``end - start`` of numeric timestamps only. SQLite would read the text 'abc' as 0; here
#: text or a blob (never equal to itself plus 0) or NULL makes the duration NULL, and a real
#: number (or an overflowing difference) makes it real: either way the column is then
#: described as the loader describes it. Comparing beats ``typeof()`` calls: +0.025 s
#: instead of +0.043 s per million rows on top of a plain difference (2-core machine).
_DURATION = 'CASE WHEN "start" = "start" + 0 AND "end" = "end" + 0 THEN "end" - "start" END AS _dur'


def _column_read(
    db: ReportDatabase,
    kind: str,
    names: set[str],
    strings: StringTable,
    suspects: set[str] | None = None,
) -> ColumnRead:
    """Read the durations (``end - start``) and the names.

    The columns read are checked as the full loader checks them, with the same messages:
    start and end present, integer and never NULL; durations that fit in int64 (SQLite
    turns an overflowing difference into a real number); names integer and in StringIds
    (mapped to pool codes, so an id >= 2^32 cannot fold onto another one).

    With ``suspects``, the table's other columns are checked in the same scan: with the
    native reader, each is summarized (:func:`_summary_verdict` judges them after the read);
    through ADBC, the SELECT has one more column, :func:`analysis.loader.suspect_condition`
    (0 or 1 per row, computed by SQLite: ``end - start`` too, one column instead of two), and
    ``kind`` is added to ``suspects`` when a row matches it. One scan of the table instead
    of two: a separate scan visits every row again (~0.2 s CPU per million kernels).
    """
    table, extra = _LEAN_COLUMNS[kind]
    extra = [c for c in extra if c[0] in names]
    present = set(db.columns(table))
    for required in ("start", "end"):
        if required not in present:
            raise CorruptReportError(db.path, f"{table} lacks its {required} column")
    names = [c for c in extra if c[1] in present]
    where = None
    scanned: list[str] = []
    sources: list[str] | None = None
    checked = _checked_sources(kind, {c[0] for c in extra})
    if _native.available():
        # Start and end as they are (the native reader may then read the table's pages
        # itself), durations computed here; the other columns only scanned and summarized
        # (types, NULLs, largest id), judged after the read by the rules SQL tests row by
        # row on the ADBC path (10 M kernels: ~1 s CPU instead of ~5 s).
        if suspects is not None:
            scanned = unchecked_columns(db, kind, checked)
        sources = ["start", "end", *(c[1] for c in names), *scanned]
        select = ", ".join(quote_ident(c) for c in sources)
    else:
        select = ", ".join([_DURATION] + [quote_ident(c[1]) for c in names])
        if suspects is not None:
            from strata.analysis.loader import suspect_condition

            where = suspect_condition(db, kind, strings, checked)
            select += "" if where is None else f", {where} AS _suspect"

    def difference(s: np.ndarray, e: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            dur = e - s  # wraps where it overflows: the signs tell
        # No start or end below 0 (any real trace): the difference cannot overflow, one
        # pass instead of the three of the sign test (10 M + 10 M rows: ~0.05 s of CPU).
        if len(s) and np.bitwise_or(s, e).min() < 0 and np.any((e ^ s) & (e ^ dur) < 0):
            raise _timestamp_error(db, table)
        return dur

    def durations(arrow: pa.RecordBatch) -> np.ndarray:
        """``end - start`` of a batch, refused as the SQL ``_DURATION`` column would be: a
        start or end that is NULL or not an integer, or a difference beyond int64."""
        import pyarrow as pa

        if "_dur" in arrow.schema.names:
            dur = arrow.column("_dur")
            if dur.null_count or not pa.types.is_integer(dur.type):
                raise _timestamp_error(db, table)
            return db.integers(dur, table, "end")
        start, end = arrow.column("start"), arrow.column("end")
        if (
            start.null_count
            or end.null_count
            or not (pa.types.is_integer(start.type) and pa.types.is_integer(end.type))
        ):
            raise _timestamp_error(db, table)
        return difference(db.integers(start, table, "start"), db.integers(end, table, "end"))

    def convert_numpy(batch: NumpyBatch) -> dict[str, np.ndarray]:
        """:func:`convert` of the native reader's batch: integers only (it declines others)."""
        (s, s_nulls), (e, e_nulls) = batch.column("start"), batch.column("end")
        if s_nulls is not None or e_nulls is not None:
            raise _timestamp_error(db, table)
        data: dict[str, object] = {"duration_ns": difference(s, e)}
        for name, source, dtype, fill in extra:
            if source in present:
                ids, nulls = batch.column(source)
                if nulls is not None:
                    ids = np.where(nulls, fill, ids)
                data[name] = strings.codes(ids, table)
            else:
                data[name] = np.full(batch.num_rows, fill, dtype=dtype)
        return data

    def convert(arrow: pa.RecordBatch | NumpyBatch) -> dict[str, np.ndarray]:
        if isinstance(arrow, NumpyBatch):
            return convert_numpy(arrow)
        n = arrow.num_rows
        data: dict[str, object] = {"duration_ns": durations(arrow)}
        if where is not None and np.any(arrow.column("_suspect").to_numpy(zero_copy_only=False)):
            suspects.add(kind)  # set.add: atomic, reader threads may add at once
        for name, source, dtype, fill in extra:
            if source in present:
                ids = db.integers(arrow.column(source), table, source, fill)
                data[name] = strings.codes(ids, table)
            else:
                data[name] = np.full(n, fill, dtype=dtype)
        return data

    dtypes = {"duration_ns": np.int64, **{c[0]: c[2] for c in extra}}
    return ColumnRead(
        table,
        f"SELECT {select} FROM {quote_ident(table)}",
        convert,
        dtypes,
        integers=True,
        outputs=2 + len(names) if scanned else None,
        sources=sources,
        ranged=ranged_columns(kind),
        numpy_batches=True,
    )


def _summary_verdict(kind: str, read: ColumnRead, strings: StringTable) -> bool:
    """Whether the columns that ``read`` only scanned (those after its ``outputs``, judged
    from the native reader's summaries) hold a row the loader might refuse; True where a
    range was read without a summary (ADBC)."""
    seen = read.summaries
    scanned = read.sources[read.outputs :]
    if seen is None or any(c not in seen for c in scanned):
        return True
    return suspect_in_summaries(kind, strings, {c: seen[c] for c in scanned})


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
    from strata.analysis.loader import duration_error

    before, overflowed = db.execute(
        f'SELECT total("end" < "start"), total("end" >= "start" AND '
        f'typeof("end" - "start") = \'real\') FROM {quote_ident(table)}'
    )[0]
    return duration_error(db.path, table, int(before), int(overflowed)) or CorruptReportError(
        db.path, f"{table} has durations that are not integers"
    )


def _read_lean(path: Path, wanted: dict[str, set[str]], validate: bool = True) -> Report:
    """Read the ``wanted`` columns; with ``validate``, refuse all the full loader refuses.

    ``validate`` False: the report was validated before (its partial cache entry says so).
    """
    return _build(*read_columns(path, wanted, validate))


def read_columns(
    path: Path, wanted: dict[str, set[str]], validate: bool = True
) -> tuple[
    ReportInfo,
    np.ndarray,
    dict[str, set[str]],
    dict[str, dict[str, np.ndarray]],
    dict[str, tuple[str, ...]],
]:
    """What :func:`_read_lean` builds its report from: (info, the string pool's values,
    ``wanted``, the columns read per table kind, every table's source columns).

    The report itself holds pandas frames (empty here): a caller that only needs the
    columns (:mod:`analysis.stats.lean_plain`) need not import pandas.
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
        # With ``validate``, the suspect-row test of each table read rides along in its read.
        suspects: set[str] | None = set() if validate else None
        reads = [_column_read(db, k, wanted[k], strings, suspects) for k in kinds]
        data = db.read_tables(reads)
        for kind, read in zip(kinds, reads, strict=True):
            if read.outputs is not None and _summary_verdict(kind, read, strings):
                suspects.add(kind)
        columns = dict(zip(kinds, data, strict=True))
        from strata.analysis.loader import check_event_tables, duration_error

        for kind, cols in columns.items():
            before = int(np.count_nonzero(cols["duration_ns"] < 0))
            error = duration_error(path, _LEAN_COLUMNS[kind][0], before, 0)
            if error is not None:
                raise error
        if suspects is not None:
            # What the columns above did not show: the other columns of these tables (tested
            # by the reads themselves) and the other tables, checked inside SQLite.
            scanned = {k: k in suspects for k in kinds}
            checked = {k: _checked_sources(k, wanted[k]) for k in kinds}
            check_event_tables(db, strings, checked, scanned=scanned)
        source_columns = {t: tuple(db.columns(t)) for t in sorted(db.tables)}
    return info, strings.values, wanted, columns, source_columns


def _checked_sources(kind: str, names: Collection[str]) -> set[str]:
    """The source columns of ``kind`` that :func:`_column_read` reads and checks."""
    return {"start", "end"} | {c[1] for c in _LEAN_COLUMNS[kind][1] if c[0] in names}


def _build(
    info: ReportInfo,
    strings: np.ndarray,
    wanted: dict[str, set[str]],
    columns: dict[str, dict[str, np.ndarray]],
    source_columns: dict[str, tuple[str, ...]],
) -> Report:
    """Return the partial report of the ``wanted`` kinds (empty where the file lacks one)."""
    tables = {}
    for kind, names in wanted.items():
        source, extra = _LEAN_COLUMNS[kind]
        cols = columns.get(kind)
        if cols is None:
            source = ""
            cols = {"duration_ns": np.empty(0, np.int64)}
            cols.update({c[0]: np.empty(0, c[2]) for c in extra if c[0] in names})
        tables[kind] = DurationTable(kind, {k: freeze(v) for k, v in cols.items()}, source)
    return Report.from_durations(info, StringIds(strings), tables, source_columns)
