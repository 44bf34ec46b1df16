"""Columnar reads of an SQLite report: Arrow through ADBC, copied into NumPy columns.

:class:`ReportDatabase` is :class:`~analysis._sqlfile.SqliteReport` (the read-only,
step-bounded ``sqlite3`` connection: header check, schema probe, small queries; plain
Python) plus the column reads. Columns are read with ADBC's SQLite driver into Arrow (about
4x faster than a Python ``sqlite3`` row loop: 10 M rows x 4 columns in ~4 s vs ~15 s on the
2-core reference machine, design.md) and fall back to ``sqlite3`` when ADBC is not
importable. What a read asks for and where its rows land (:class:`ColumnRead`, the per-table
plan, the Arrow-to-NumPy conversions): :mod:`analysis._columnread`.
"""

from __future__ import annotations

import ctypes
import logging
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis import _native
from strata.analysis._columnread import ColumnRead, NumpyBatch, TablePlan, int64_array, to_numpy
from strata.analysis._sqlfile import (
    CHUNK_ROWS,
    SQLITE_MAGIC,
    SqliteReport,
    check_sqlite_header,
    limit_read_threads,
    quote_ident,
    read_workers,
    usable_cores,
)
from strata.analysis.errors import CorruptReportError

if TYPE_CHECKING:
    import pyarrow as pa
# pyarrow (~30 ms, ~55 MB resident) is imported where it is used: the native reader hands
# NumPy batches to a reader that asks for them (ColumnRead.numpy_batches), so a cold lean
# `stats` never imports it (analysis.stats.lean_plain).

__all__ = [
    "ColumnRead",
    "NumpyBatch",
    "ReportDatabase",
    "SQLITE_MAGIC",
    "check_sqlite_header",
    "is_integer_type",
    "limit_read_threads",
    "quote_ident",
    "read_workers",
    "release_freed_memory",
    "to_numpy",
    "usable_cores",
]

log = logging.getLogger(__name__)

#: Rows per Arrow batch inside ADBC: 65,536 read 1.5x faster than the default 1,024.
_BATCH_ROWS = "65536"


_M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
_MALLOC_TUNED = False


def _tune_malloc() -> None:
    """Serve allocations below 64 MiB from the heap (glibc), once per process.

    glibc hands blocks above its (dynamic, at most 32 MiB) threshold out as fresh mmaps
    that the kernel zeroes on first touch and unmaps on free, so every batch buffer and
    every 10 M-row int32 temporary was zeroed anew. Measured on the 10 M-kernel first open
    (two runs each): sys time 8.3-8.8 s -> 6.3-6.5 s, CPU 28.6-31.0 s -> 26.9-28.9 s. The
    loader trims the heap after
    a load (``malloc_trim``), so the retained memory goes back to the OS.
    """
    global _MALLOC_TUNED  # a once-per-process switch
    if _MALLOC_TUNED or not sys.platform.startswith("linux"):
        return
    _MALLOC_TUNED = True
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, 64 << 20)
    except (OSError, AttributeError):
        log.debug("mallopt is not available (not glibc)")


def release_freed_memory() -> None:
    """Hand freed heap memory back to the OS (glibc keeps it otherwise); once per table read.

    Blocks below the 64 MiB threshold of :func:`_tune_malloc` (every int32 column of a 10 M-row
    table) come from the heap, and glibc returns freed heap pages only when asked: the raw
    columns of a table already swapped for its memory-mapped copy stayed resident until the
    end of the load (10 M kernels: ~700 MiB). Measured after a 2 M-event first open: 168 MiB
    still resident after the arrays were freed, 77 MiB (the ADBC driver and SQLite
    themselves) after ``malloc_trim``.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        log.debug("malloc_trim is not available (not glibc)")


def is_integer_type(arrow_type: pa.DataType) -> bool:
    """Whether an Arrow column of this type holds integers (or only NULLs)."""
    import pyarrow as pa

    return pa.types.is_integer(arrow_type) or pa.types.is_null(arrow_type)


class ReportDatabase(SqliteReport):
    """:class:`~analysis._sqlfile.SqliteReport` (the read-only, step-bounded connection)
    with the columnar reads: Arrow through ADBC, copied into NumPy columns."""

    def integers(
        self, column: pa.ChunkedArray | pa.Array, table: str, source: str, fill: int = 0
    ) -> np.ndarray:
        """Convert an Arrow column of ``table.source`` to NumPy integers, NULL -> ``fill``.

        Raises
        ------
        CorruptReportError
            The column holds text, blobs or real numbers (ADBC then infers a non-integer
            type, or the sqlite3 fallback builds one): named with its first odd value's type.
        """
        if not is_integer_type(column.type):
            raise self.bad_values(table, source) or CorruptReportError(
                self.path, f"{table}.{source} cannot be read as integers ({column.type})"
            )
        return to_numpy(column, None, fill)

    def read_table(self, table: str) -> pa.Table:
        """Return every row of ``table`` as an Arrow table, columns as SQLite stores them
        (ADBC; Python's ``sqlite3`` where ADBC's type inference fails: mixed types)."""
        return self._read_chunk(f"SELECT * FROM {quote_ident(table)}")

    def _read_sqlite3(self, sql: str) -> pa.Table:
        import pyarrow as pa

        try:
            with self._lock:
                cur = self.con.execute(sql)
                names = [d[0] for d in cur.description]
                rows = cur.fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._read_error(exc) from exc
        cols = list(zip(*rows, strict=False)) if rows else [() for _ in names]
        arrays = []
        for values in cols:
            try:
                arrays.append(pa.array(values))
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                arrays.append(pa.array([None if v is None else str(v) for v in values]))
        return pa.table(arrays, names=names) if names else pa.table({})

    def _thread_adbc(self):  # noqa: ANN202 - an ADBC connection
        """Return this thread's own ADBC connection (connections are not shared)."""
        con = getattr(self._local, "adbc", None)
        if con is None:
            import adbc_driver_sqlite.dbapi as adbc

            con = adbc.connect(self._uri)
            self._local.adbc = con
            with self._lock:
                self._opened.append(con)
        return con

    def _read_chunk(self, sql: str) -> pa.Table:
        """One query's rows as an Arrow table, through ADBC (``sqlite3`` when ADBC cannot)."""
        try:
            con = self._thread_adbc()
            with con.cursor() as cur:
                cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": _BATCH_ROWS})
                cur.execute(sql)
                return cur.fetch_arrow_table()
        except ImportError:
            return self._read_sqlite3(sql)
        except Exception as exc:  # noqa: BLE001 - ADBC raises its own error family
            # Mixed-type or invalid-UTF-8 columns make ADBC's type inference fail.
            log.debug("ADBC read failed for %s (%s); using sqlite3", self.path, exc)
            return self._read_sqlite3(sql)

    def _read_natively(
        self, plan: TablePlan, start: int, sql: str, store: Callable[[Iterable], int]
    ) -> int | None:
        """Read one range of ``plan`` with the native reader: from the table's pages where
        ``plan.direct`` allows, else (or when that declines) by stepping ``sql``; hand the
        batches to ``store`` and return its row count, or None where the reader does not
        serve the range (the caller reads it through ADBC).

        A dense plan copies each batch into its output columns at once, so the reader may
        read every batch into the same arrays. A declined range (odd values, no rows, a
        damaged page) is read again from its first row, over what was stored.
        """
        read = plan.read
        ways: list[tuple[str, Callable[[dict], Iterator[tuple]]]] = []
        if plan.direct is not None:
            root, fields = plan.direct
            rowids = (start, plan.chunk_end(start))
            ways.append(("pages", lambda seen: _native.direct_batches(
                self.path, root, rowids, fields, read.sources, read.outputs, seen, plan.dense,
                read.ranged,
            )))  # fmt: skip
        if read.integers and _native.available():
            ways.append(("statement", lambda seen: _native.read_batches(
                self._uri, sql, read.outputs, seen, plan.dense
            )))  # fmt: skip
        for way, batches in ways:
            summaries: dict[str, _native.ColumnSummary] = {}
            try:
                native = batches(summaries)
                rows = store(
                    (NumpyBatch(*batch) for batch in native)
                    if read.numpy_batches
                    else self._arrow_batches(native)
                )
            except _native.Declined as exc:
                log.debug("native read (%s) of %s declined: %s", way, self.path, exc)
                plan.forget_chunk(start)
                continue
            plan.add_summaries(summaries)
            return rows
        return None

    @staticmethod
    def _arrow_batches(batches: Iterable[tuple]) -> Iterator[pa.RecordBatch]:
        """The native reader's (names, values, masks) batches as Arrow record batches."""
        import pyarrow as pa

        for names, values, masks in batches:
            arrays = [int64_array(v, m) for v, m in zip(values, masks, strict=True)]
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    def _direct_plan(self, plan: TablePlan) -> tuple[int, list[int]] | None:
        """(root page, record field of each column) for reading ``plan``'s table from its
        b-tree pages directly, or None where its SELECT or its table does not allow it: not
        plain columns, rowids read as a column, a generated column in the table, the
        rowid's alias (its record field is NULL) among the columns."""
        read = plan.read
        if read.sources is None or plan.select != read.select or not _native.available():
            return None
        if plan.lo is None or not plan.dense:
            return None
        layout = self._table_layout(read.table)
        if layout is None:
            return None
        root, fields, alias = layout
        if alias in read.sources or any(s not in fields for s in read.sources):
            return None
        return root, [fields[s] for s in read.sources]

    def _table_layout(self, table: str) -> tuple[int, dict[str, int], str | None] | None:
        """(root page, record field of each column, the rowid alias column) of a plain
        rowid table, or None."""
        rows = self.execute(
            "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid", (table,)
        )
        root = self.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        )
        if not rows or not root or type(root[0][0]) is not int or root[0][0] < 1:
            return None
        if any(hidden != 0 for _, _, _, hidden in rows):
            return None
        keys = [(name, str(kind or "").upper()) for name, kind, pk, _ in rows if pk]
        alias = keys[0][0] if len(keys) == 1 and keys[0][1] == "INTEGER" else None
        return root[0][0], {str(name): i for i, (name, *_) in enumerate(rows)}, alias

    def read_tables(
        self,
        reads: Sequence[ColumnRead],
        progress: Callable[[float], None] | None = None,
        cancel: Callable[[], None] | None = None,
        on_done: Callable[[int, dict[str, np.ndarray]], None] | None = None,
        on_lead: Callable[[int, dict[str, np.ndarray]], None] | None = None,
    ) -> list[dict[str, np.ndarray] | None]:
        """Read several tables' columns in parallel rowid ranges; return NumPy columns.

        Each :class:`ColumnRead` gives one dict of arrays. Its ``convert`` runs on every
        Arrow chunk in the reader thread, and the numeric columns are copied straight into
        preallocated arrays of the final dtype, so neither a full-size Arrow table nor a
        concatenation copy ever exists (nsys writes dense rowids; a table with gaps is
        compacted at the end). ``progress`` (fraction done) and ``cancel`` (raises to stop)
        are called on the calling thread.

        With ``on_done``, each table is handed over as ``on_done(index, columns)`` on the
        calling thread as soon as its last chunk arrives (its entry in the returned list is
        then None), so the caller's work on it overlaps the reading of later tables.

        With ``on_lead``, a table whose :class:`ColumnRead` asks for a short first chunk
        (``lead_rows``) is shown early: ``on_lead(index, columns)`` is called on the calling
        thread once that chunk has arrived while the rest of the table is still being read.
        ``columns`` are read-only views of the chunk's rows in the table's preallocated
        columns (those named in ``dtypes``): valid until the table is handed over, so the
        caller copies what it keeps.
        """

        _tune_malloc()
        for read in reads:
            read.summaries = {}
        max_rows = max(CHUNK_ROWS, self.path.stat().st_size // 4)
        plans = [
            TablePlan(read, self._rowid_range(read.table), max_rows, CHUNK_ROWS) for read in reads
        ]
        for plan in plans:
            plan.direct = self._direct_plan(plan)
        jobs = [(plan, a) for plan in plans for a in plan.chunk_starts()]
        left = [len(plan.chunk_starts()) for plan in plans]

        def run(job: tuple[TablePlan, int]) -> None:
            plan, a = job
            # ORDER BY rowid costs nothing on a rowid range (no sort in the query plan) and
            # makes the order that the synthesized rowids assume explicit.
            where = (
                "WHERE 0"
                if plan.lo is None
                else f"WHERE rowid >= {a} AND rowid < {plan.chunk_end(a)} ORDER BY rowid"
            )
            sql = f"{plan.select} {where}"

            def store(batches: Iterable[pa.RecordBatch]) -> int:
                # Batch by batch: a multi-batch column would otherwise be combined (one
                # more copy of everything) before landing in its output column.
                offset = 0
                for index, batch in enumerate(batches):
                    plan.store(a, offset, index, plan.read.convert(batch))
                    offset += batch.num_rows
                return offset

            offset = self._read_natively(plan, a, sql, store)
            if offset is None:
                plan.add_summaries(None)
                offset = store(self._read_chunk(sql).to_batches())
            rowids = None
            if plan.synthesizes_rowids and offset != plan.expected_rows(a):
                # A chunk with rowid gaps: fetch its rowids (one narrow query).
                ids = self._read_chunk(f"SELECT rowid FROM {quote_ident(plan.read.table)} {where}")
                rowids = to_numpy(ids.column(0), np.int64)
            plan.finish_chunk(a, offset, rowids)

        results: list[dict[str, np.ndarray] | None] = [None] * len(plans)
        with ThreadPoolExecutor(read_workers(), thread_name_prefix="strata-read") as pool:
            futures = {
                pool.submit(run, job): (i, job[1]) for job in jobs for i in [plans.index(job[0])]
            }
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    future.result()
                    if cancel is not None:
                        cancel()
                    if progress is not None:
                        progress(done / len(jobs))
                    i, start = futures[future]
                    left[i] -= 1
                    if left[i] and on_lead is not None and plans[i].is_lead(start):
                        on_lead(i, plans[i].lead_columns())
                    if left[i] == 0 and on_done is not None:
                        data = plans[i].result()
                        plans[i].release()
                        plans[i] = None
                        on_done(i, data)
                        # The caller has built what it keeps from the raw columns (the
                        # cache swaps them for mapped copies): free them before the next
                        # table rather than at the end of the load.
                        del data
                        release_freed_memory()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        for i, plan in enumerate(plans):
            if plan is not None:
                results[i] = plan.result()
        return results
