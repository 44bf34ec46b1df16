"""Columnar reads of an SQLite report: Arrow through ADBC, copied into NumPy columns.

:class:`ReportDatabase` is :class:`~analysis._sqlfile.SqliteReport` (the read-only,
step-bounded ``sqlite3`` connection: header check, schema probe, small queries; plain
Python) plus the column reads. Columns are read with ADBC's SQLite driver into Arrow (about
4x faster than a Python ``sqlite3`` row loop: 10 M rows x 4 columns in ~4 s vs ~15 s on the
2-core reference machine, design.md) and fall back to ``sqlite3`` when ADBC is not
importable.
"""

from __future__ import annotations

import ctypes
import logging
import sqlite3
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis import _native
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
        self, plan: _TablePlan, start: int, sql: str, store: Callable[[Iterable], int]
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
            arrays = [_int64_array(v, m) for v, m in zip(values, masks, strict=True)]
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    def _direct_plan(self, plan: _TablePlan) -> tuple[int, list[int]] | None:
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
        plans = [_TablePlan(read, self._rowid_range(read.table), max_rows) for read in reads]
        for plan in plans:
            plan.direct = self._direct_plan(plan)
        jobs = [(plan, a) for plan in plans for a in plan.chunk_starts()]
        left = [len(plan.chunk_starts()) for plan in plans]

        def run(job: tuple[_TablePlan, int]) -> None:
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


@dataclass(frozen=True)
class NumpyBatch:
    """One batch of the native reader as NumPy columns, for a :class:`ColumnRead` that asks
    for them (``numpy_batches``): no Arrow array built, no pyarrow imported."""

    names: list[str]
    values: list[np.ndarray]  # int64, a NULL read as 0
    nulls: list[np.ndarray | None]  # bool per row, None where the batch has no NULL

    @property
    def num_rows(self) -> int:
        return len(self.values[0]) if self.values else 0

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """(values, NULL mask or None) of column ``name``."""
        i = self.names.index(name)
        return self.values[i], self.nulls[i]


class ColumnRead:
    """One table to read: the SELECT (without WHERE), a chunk converter, output dtypes.

    ``convert`` turns one Arrow record batch into arrays; those named in ``dtypes`` are copied
    (with a cast) into preallocated columns, any others (e.g. an Arrow text column) are
    joined chunk by chunk. ``rowid_name`` names an output column (in ``dtypes``) that
    receives each row's rowid; ``convert`` gets it as an ``_rowid`` column only when the
    rowids cannot be inferred from the range.
    """

    def __init__(
        self,
        table: str,
        select: str,
        convert: Callable[[pa.RecordBatch], dict[str, object]],
        dtypes: dict[str, type],
        rowid_name: str | None = None,
        lead_rows: int = 0,
        integers: bool = False,
        outputs: int | None = None,
        sources: Sequence[str] | None = None,
        ranged: Collection[str] | None = None,
        numpy_batches: bool = False,
    ) -> None:
        self.table = table
        self.select = select
        self.convert = convert
        self.dtypes = dtypes
        self.rowid_name = rowid_name
        #: Rows of a short first chunk (0: none), read first for an early look at the table
        #: (``read_tables``'s ``on_lead``); only a table of more rows than that gets one.
        self.lead_rows = lead_rows
        #: Every column of the SELECT is an integer one (no text): the native reader may
        #: read it (:mod:`analysis._native`).
        self.integers = integers
        #: How many leading columns of the SELECT ``convert`` needs (None: all). The native
        #: reader only scans the others; their summaries, merged over the table, land in
        #: :attr:`summaries` (by column name), which is None after the read where a range
        #: was read through ADBC instead (no summary then).
        self.outputs = outputs
        self.summaries: dict[str, _native.ColumnSummary] | None = {}
        #: The SELECT's columns when each is a plain column of ``table`` (no expression), in
        #: order: the native reader may then read them from the table's pages directly.
        self.sources = list(sources) if sources is not None else None
        #: The summarized columns whose min and max the caller reads (None: all): the page
        #: reader skips the others' integers (:func:`analysis._native.direct_batches`).
        self.ranged = set(ranged) if ranged is not None else None
        #: ``convert`` takes the native reader's batches as :class:`NumpyBatch` (through
        #: ADBC it still gets Arrow record batches).
        self.numpy_batches = numpy_batches


class _TablePlan:
    """Where each rowid chunk of one table lands in its preallocated output columns."""

    def __init__(self, read: ColumnRead, span: tuple[int, int] | None, max_rows: int) -> None:
        self.read = read
        self.lo, hi = span if span is not None else (None, None)
        rows = 0 if span is None else hi - self.lo + 1
        self.hi = hi
        self.dense = rows <= max_rows
        # Far-apart rowids (not written by nsys): one read, no split into empty ranges.
        self.step = CHUNK_ROWS if self.dense else rows
        size = rows if self.dense else 0
        self.size = size
        # Dense columns are allocated when a batch first holds more than one value: until
        # then a column is its one value (``constants``), handed over as a zero-stride view.
        # A real report's device, context, stream, process and launch-config columns often
        # hold one value; 10 M kernels: 60 of their 104 bytes a row never allocated.
        lazy = self.dense and span is not None
        self.constants: dict[str, int] = {}
        self.out = {
            name: np.empty(size, dtype=dt)
            for name, dt in read.dtypes.items()
            if not lazy or name == read.rowid_name
        }
        # Dense rowids (nsys writes 1..n) are not read at all: a full chunk's rowids are its
        # range. ADBC spends ~1/8 of a CUDA API read on that column otherwise.
        self.synthesizes_rowids = read.rowid_name is not None and self.dense and span is not None
        self.select = read.select
        if read.rowid_name is not None and not self.synthesizes_rowids:
            self.select = "SELECT rowid AS _rowid, " + read.select.removeprefix("SELECT ")
        self.counts: dict[int, int] = {}
        self.parts: dict[int, dict[str, object]] = {}
        #: (root page, record fields) when the native reader reads the table's pages itself
        #: (:meth:`ReportDatabase._direct_plan`), else None.
        self.direct: tuple[int, list[int]] | None = None
        self._lock = threading.Lock()
        # Chunk starts: every ``step`` rows, after a short lead chunk when one is asked for.
        self.lead = read.lead_rows if self.dense and 0 < read.lead_rows < rows else 0
        if self.lo is None:
            self.starts = [0]
        elif self.lead:
            self.starts = [self.lo, *range(self.lo + self.lead, self.hi + 1, self.step)]
        else:
            self.starts = list(range(self.lo, self.hi + 1, self.step))
        ends = [*self.starts[1:], (self.hi + 1) if self.hi is not None else 0]
        self._ends = dict(zip(self.starts, ends, strict=True))

    def chunk_starts(self) -> list[int]:
        return list(self.starts)

    def chunk_end(self, start: int) -> int:
        """The rowid after the last one of the chunk at ``start``."""
        return self._ends[start]

    def is_lead(self, start: int) -> bool:
        """Whether ``start`` is this table's short lead chunk."""
        return bool(self.lead) and start == self.lo

    def lead_columns(self) -> dict[str, np.ndarray]:
        """Read-only views of the lead chunk's rows (its chunk has arrived)."""
        rows = self.counts[self.lo]
        with self._lock:  # another chunk may be allocating a column that was one value
            views = {
                name: self.out[name][:rows] if name in self.out else self._constant(name, rows)
                for name in self.read.dtypes
            }
        for view in views.values():
            view.flags.writeable = False
        return views

    def store(self, start: int, offset: int, index: int, data: dict[str, object]) -> None:
        """Place one batch of chunk ``start`` (``offset`` rows into it)."""
        n = len(next(iter(data.values()))) if data else 0
        if self.lo is None:
            data = {k: v for k, v in data.items() if k not in self.read.dtypes}
        elif self.dense:
            off = start - self.lo + offset
            for name in self.read.dtypes:
                if name in data:
                    values = data.pop(name)
                    column = self._column(name, values) if n else None
                    if column is not None:
                        np.copyto(column[off : off + n], values, casting="unsafe")
        with self._lock:
            self.parts[(start, index)] = data

    def _column(self, name: str, values: np.ndarray) -> np.ndarray | None:
        """The output column for a non-empty batch of ``name``, or None while every value
        seen so far (these included) is one value: nothing to copy then."""
        with self._lock:
            column = self.out.get(name)
            if column is not None:
                return column
            first = values[0]
            if values.min() == first == values.max() and self.constants.get(name, first) == first:
                self.constants[name] = first.item()
                return None
            # A second value: allocate, with the one value where earlier batches held it
            # (the rows of batches still to come are written by them).
            column = np.empty(self.size, dtype=self.read.dtypes[name])
            if name in self.constants:
                column.fill(self._value(name))
            self.out[name] = column
            return column

    def _value(self, name: str) -> np.ndarray:
        """The one value of a column not allocated, in the column's dtype (cast as stored)."""
        value = np.array([self.constants[name]])
        return value.astype(self.read.dtypes[name], casting="unsafe")[0]

    def _constant(self, name: str, rows: int) -> np.ndarray:
        """A read-only zero-stride column of ``rows`` rows: its one value (0 if none seen)."""
        if name not in self.constants:
            return np.zeros(rows, dtype=self.read.dtypes[name])
        return np.broadcast_to(self._value(name), (rows,))

    def add_summaries(self, summaries: dict[str, _native.ColumnSummary] | None) -> None:
        """Merge one range's column summaries into the read's (None: a range without)."""
        read = self.read
        with self._lock:
            if summaries is None or read.summaries is None:
                read.summaries = None
                return
            for name, seen in summaries.items():
                have = read.summaries.get(name)
                read.summaries[name] = seen if have is None else have.merged(seen)

    def forget_chunk(self, start: int) -> None:
        """Drop what chunk ``start`` stored so far (it is read again from its first row)."""
        with self._lock:
            self.parts = {k: v for k, v in self.parts.items() if k[0] != start}

    def expected_rows(self, start: int) -> int:
        return self._ends[start] - start

    def finish_chunk(self, start: int, rows: int, rowids: np.ndarray | None) -> None:
        if self.synthesizes_rowids:
            off = start - self.lo
            target = self.out[self.read.rowid_name][off : off + rows]
            target[:] = np.arange(start, start + rows) if rowids is None else rowids
        with self._lock:
            self.counts[start] = rows

    def release(self) -> None:
        """Drop this plan's references to the columns (the caller owns them now)."""
        self.out = {}
        self.parts = {}

    def result(self) -> dict[str, object]:
        starts = sorted(self.counts)
        keys = sorted(self.parts)
        full = self.lo is None or all(self.counts[a] == self.expected_rows(a) for a in starts)
        if self.dense and full:
            out: dict[str, object] = dict(self.out)
        elif self.dense:
            # Rowid gaps: keep each chunk's filled prefix, in rowid order.
            out = {
                name: np.concatenate(
                    [col[a - self.lo : a - self.lo + self.counts[a]] for a in starts]
                )
                for name, col in self.out.items()
            }
        if self.dense:
            rows = sum(self.counts.values())
            out = {
                name: out[name] if name in out else self._constant(name, rows)
                for name in self.read.dtypes
            }
        else:
            out = _concat_chunks(
                [{n: self.parts[k].pop(n) for n in self.read.dtypes} for k in keys]
            )
            out = {n: np.asarray(v, dtype=self.read.dtypes[n]) for n, v in out.items()}
        rest = [self.parts[k] for k in keys]
        if rest and rest[0]:
            out.update(_concat_chunks(rest))
        return out


def _int64_array(values: np.ndarray, nulls: np.ndarray | None) -> pa.Array:
    """An Arrow int64 array on ``values``' own buffer, NULL where ``nulls`` (bool) says.

    Built from buffers: ``pa.array`` would first import pandas (to ask whether the values
    are a Series), which a reader thread must not wait for (analysis.stats.compute).
    """
    import pyarrow as pa

    if nulls is None:
        return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
    valid = np.packbits(~nulls, bitorder="little")
    return pa.Array.from_buffers(
        pa.int64(),
        len(values),
        [pa.py_buffer(valid), pa.py_buffer(values)],
        null_count=int(np.count_nonzero(nulls)),
    )


def _concat_chunks(chunks: list[dict[str, object]]) -> dict[str, object]:
    """Join per-chunk columns (NumPy, or Arrow text), freeing each part once copied."""
    import pyarrow as pa

    if len(chunks) == 1:
        return chunks[0]
    out: dict[str, object] = {}
    for name in list(chunks[0]):
        parts = [c.pop(name) for c in chunks]
        if isinstance(parts[0], pa.ChunkedArray | pa.Array):
            pieces = [
                ch for p in parts for ch in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])
            ]
            out[name] = pa.chunked_array(pieces, type=pieces[0].type)
        else:
            out[name] = np.concatenate(parts)
    return out


def to_numpy(column: pa.ChunkedArray | pa.Array, dtype: type | None, fill: int = 0) -> np.ndarray:
    """Convert an Arrow integer column to NumPy, NULL -> ``fill``.

    ``dtype=None`` keeps Arrow's integer type, without a copy where Arrow allows it. A column
    of another type is a caller's bug: report columns go through
    :meth:`ReportDatabase.integers`, which names the table and column instead.
    """
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_null(column.type):
        return np.full(len(column), fill, dtype=dtype or np.int64)
    if not pa.types.is_integer(column.type):
        raise TypeError(f"to_numpy needs an integer column, not {column.type}")
    # The values' buffer viewed as it is (what ``Array.to_numpy`` gives for integers without
    # NULLs), NULLs filled from the validity bitmap: pyarrow's own conversions (and
    # ``fill_null``) first import pandas, which a reader thread must not wait for (a cold
    # ``stats`` imports it on another thread, analysis.stats.compute).
    kind = "int" if pa.types.is_signed_integer(column.type) else "uint"
    own = np.dtype(f"{kind}{column.type.bit_width}")
    if len(column) == 0:  # its values' buffer may be absent
        return np.empty(0, dtype=dtype or own)
    validity, data = column.buffers()[:2]
    values = np.frombuffer(data, dtype=own, count=len(column), offset=column.offset * own.itemsize)
    if column.null_count:
        bits = np.unpackbits(
            np.frombuffer(validity, dtype=np.uint8),
            count=column.offset + len(column),
            bitorder="little",
        )
        valid = bits[column.offset :].view(bool)
        values = np.where(valid, values, np.array(fill).astype(own))
    return values if dtype is None else np.asarray(values, dtype=dtype)
