"""Low-level read-only access to an SQLite report: header check, schema probe, column reads.

Reports are opened with a ``file:...?mode=ro&immutable=1`` URI, so SQLite neither writes nor
creates a journal or ``-shm`` file next to them. Columns are read with ADBC's SQLite driver
into Arrow (about 4x faster than a Python ``sqlite3`` row loop: 10 M rows x 4 columns in ~4 s
vs ~15 s on the 2-core reference machine, design.md) and fall back to ``sqlite3`` when ADBC
is not importable.

A report is untrusted input: only real tables are read (a view, possibly an endless
recursive one, named like an nsys table is refused, other views are ignored), identifiers
are quoted, and every ``sqlite3`` statement runs under a budget of VM steps proportional to
the file's size.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import sqlite3
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pyarrow as pa

from analysis._files import pending_wal, read_head
from analysis.errors import CorruptReportError, NotAReportError
from analysis.timefmt import pluralize

__all__ = [
    "ColumnRead",
    "ReportDatabase",
    "SQLITE_MAGIC",
    "check_sqlite_header",
    "is_integer_type",
    "limit_read_threads",
    "quote_ident",
    "read_workers",
    "to_numpy",
    "usable_cores",
]

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
_PAGE_SIZE_OFFSET = 16
#: Rows per parallel read. ADBC's per-value cost is ~2x SQLite's own scan (measured on the
#: scaled 1 M-kernel report: 21 kernel columns, 1.31 s vs 0.63 s), so tables are cut into
#: rowid ranges read by one thread each; ADBC releases the GIL while it steps.
CHUNK_ROWS = 500_000
#: Rows per Arrow batch inside ADBC: 65,536 read 1.5x faster than the default 1,024.
_BATCH_ROWS = "65536"
#: Rows from which :meth:`ReportDatabase.any_row` scans a table on several threads.
_SPLIT_ROWS = 100_000


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


#: Reader threads this process may use; None: one per usable core (see :func:`read_workers`).
_READ_THREADS: int | None = None


def usable_cores() -> int:
    """Return the number of cores this process may run on."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


def read_workers() -> int:
    """Return the number of reader threads: one per usable core, at most 8.

    A process that shares the cores with sibling workers (a recipe's process pool) lowers
    this with :func:`limit_read_threads`, so that the workers do not oversubscribe them.
    """
    if _READ_THREADS is not None:
        return _READ_THREADS
    return min(8, usable_cores())


def limit_read_threads(threads: int | None) -> None:
    """Use at most ``threads`` reader threads in this process (None: one per core)."""
    global _READ_THREADS  # a per-process setting, like the malloc tuning above
    _READ_THREADS = None if threads is None else max(1, min(8, threads))


#: SQLite VM steps each ``sqlite3`` connection may run per byte of its file, and at least.
#: Strata's own queries scan a table a few times at most (~10 steps per value), so only a
#: query that never ends (a recursive view) reaches it: a 1 GB file allows ~10 minutes.
_STEPS_PER_BYTE = 64
_STEPS_FLOOR = 200_000_000
_STEP_CHUNK = 100_000


class _StepBudget:
    """A progress handler that interrupts the connection once its budget is spent."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.left = steps // _STEP_CHUNK
        self.spent = False

    def __call__(self) -> int:
        self.left -= 1
        self.spent = self.left < 0
        return int(self.spent)


_VIRTUAL = re.compile(r"\s*CREATE\s+VIRTUAL\b", re.IGNORECASE)
_WITHOUT_ROWID = re.compile(r"\bWITHOUT\s+ROWID\s*;?\s*$", re.IGNORECASE)


def quote_ident(name: str) -> str:
    """Return ``name`` as an SQL identifier: in double quotes, inner quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def is_integer_type(arrow_type: pa.DataType) -> bool:
    """Whether an Arrow column of this type holds integers (or only NULLs)."""
    return pa.types.is_integer(arrow_type) or pa.types.is_null(arrow_type)


def _ro_uri(path: Path) -> str:
    # Bytes, not str: a file name that is not valid UTF-8 is percent-encoded as it is.
    resolved = os.fsencode(path.resolve())
    return "file:" + urllib.parse.quote(resolved) + "?mode=ro&immutable=1"


def _lenient_text(raw: bytes) -> str:
    # The Windows exports store cp1252 bytes in TEXT columns (MANIFEST §7.1).
    return raw.decode("utf-8", errors="replace")


def check_sqlite_header(path: Path) -> None:
    """Raise unless ``path`` is a regular file with a plausible, untruncated SQLite header."""
    head, size = read_head(path, 100)
    if size == 0:
        raise NotAReportError(path, "empty file, not an Nsight Systems report")
    if not head.startswith(SQLITE_MAGIC):
        raise NotAReportError(
            path, "not an SQLite database; export the report with 'nsys export --type sqlite'"
        )
    if len(head) < 100:
        raise CorruptReportError(path, "truncated SQLite header")
    page_size = int.from_bytes(head[_PAGE_SIZE_OFFSET : _PAGE_SIZE_OFFSET + 2], "big")
    page_size = 65536 if page_size == 1 else page_size
    page_count = int.from_bytes(head[28:32], "big")
    if page_count and size < page_count * page_size:
        raise CorruptReportError(
            path,
            f"truncated file: {size} bytes on disk, the header promises {page_count * page_size}",
        )


class ReportDatabase:
    """A read-only connection to one SQLite report with a cached schema map.

    Parameters
    ----------
    path
        The ``.sqlite`` file. It is checked by content (header), not by extension.

    Raises
    ------
    NotAReportError
        Not an SQLite file, or not a regular file.
    CorruptReportError
        Truncated or unreadable database, or committed data left in a ``-wal`` file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_sqlite_header(self.path)
        wal = pending_wal(self.path)
        if wal is not None:
            # immutable=1 would ignore the log and show older data. open_report reads such a
            # report through a private checkpointed copy; this guards every other reader.
            raise CorruptReportError(
                self.path,
                f"its newest data are still in {wal.name}; fold them in with "
                f"'sqlite3 {self.path.name} \"PRAGMA wal_checkpoint(TRUNCATE)\"' "
                "(or open it with Strata's open_report, which reads a private copy)",
            )
        self._uri = _ro_uri(self.path)
        self._budget = _StepBudget(max(_STEPS_FLOOR, _STEPS_PER_BYTE * self.path.stat().st_size))
        try:
            self.con = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
            self.con.text_factory = _lenient_text
            self.con.set_progress_handler(self._budget, _STEP_CHUNK)
            rows = self.con.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        except sqlite3.DatabaseError as exc:
            raise CorruptReportError(self.path, f"unreadable SQLite database ({exc})") from exc
        #: Real tables only: views and virtual tables are never read (see :meth:`has_table`).
        self.tables: set[str] = set()
        self._not_tables: dict[str, str] = {}
        for kind, name, sql in rows:
            if not isinstance(name, str):
                continue
            if kind == "view":
                self._not_tables[name] = "a view"
            elif kind == "table" and _VIRTUAL.match(str(sql or "")):
                self._not_tables[name] = "a virtual table"
            elif kind == "table" and _WITHOUT_ROWID.search(str(sql or "")):
                self._not_tables[name] = "a WITHOUT ROWID table"  # read by rowid ranges
            elif kind == "table":
                self.tables.add(name)
        self._columns: dict[str, tuple[str, ...]] = {}
        self._local = threading.local()
        self._opened: list = []
        # Guards the one sqlite3 connection: reader threads use it too (the fallback read,
        # the error-path queries). Re-entrant: an error query runs inside a locked read.
        self._lock = threading.RLock()

    # -- schema -----------------------------------------------------------------------------
    def has_table(self, table: str) -> bool:
        """Whether ``table`` is a real table of the report.

        Raises
        ------
        CorruptReportError
            ``table`` exists as a view or virtual table: what it yields is not what nsys
            wrote (and a recursive view may never end), so the report is refused.
        """
        if table in self._not_tables:
            raise CorruptReportError(
                self.path,
                f"{table} is {self._not_tables[table]}, not a table as nsys writes it; "
                "re-export the report with nsys",
            )
        return table in self.tables

    def columns(self, table: str) -> tuple[str, ...]:
        """Return the column names of ``table`` (empty when the table is absent)."""
        if not self.has_table(table):
            return ()
        if table not in self._columns:
            # A bound name: no quoting to get wrong for a table called 'a"b'.
            info = self.execute("SELECT name FROM pragma_table_info(?)", (table,))
            self._columns[table] = tuple(str(r[0]) for r in info)
        return self._columns[table]

    def has_column(self, table: str, column: str) -> bool:
        return column in self.columns(table)

    # -- plain queries ----------------------------------------------------------------------
    def execute(self, sql: str, params: Iterable = ()) -> list[tuple]:
        """Run a small query with Python's sqlite3 and return all rows."""
        try:
            with self._lock:
                return self.con.execute(sql, tuple(params)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._read_error(exc) from exc

    def _read_error(
        self, exc: sqlite3.DatabaseError, budget: _StepBudget | None = None
    ) -> CorruptReportError:
        budget = budget or self._budget
        if budget.spent:
            return CorruptReportError(
                self.path,
                f"a query ran past {budget.steps:,} SQLite steps, far more than a file "
                "of this size needs (a recursive view or trigger?); the file is not a plain "
                "nsys export",
            )
        return CorruptReportError(self.path, f"cannot read ({exc})")

    def count(self, table: str) -> int:
        if not self.has_table(table):
            return 0
        return int(self.execute(f"SELECT count(*) FROM {quote_ident(table)}")[0][0])

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

    def bad_values(
        self, table: str, source: str, allow_null: bool = True
    ) -> CorruptReportError | None:
        """Describe what ``table.source`` holds that is not an integer, or None when nothing.

        One query over the column, run only once a read has found something odd, so the
        loader and the lean stats reader word the same defect the same way.
        """
        allowed = "'integer', 'null'" if allow_null else "'integer'"
        col = quote_ident(source)
        rows = self.execute(
            f"SELECT typeof({col}), count(*) FROM {quote_ident(table)} "
            f"WHERE typeof({col}) NOT IN ({allowed}) GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        )
        if not rows:
            return None
        kind, count = rows[0]
        if kind == "null":
            events = pluralize(count, "event")
            return CorruptReportError(self.path, f"{table} has {events} with a NULL {source}")
        name = {"real": "real-number"}.get(kind, kind)
        return CorruptReportError(
            self.path, f"{table}.{source} holds {count} {name} values where integers belong"
        )

    def any_row(self, table: str, where: str) -> bool:
        """Whether a row of ``table`` satisfies ``where``, scanned in parallel rowid ranges.

        A full scan of a large table (the lean stats reader's checks of the columns it does
        not read) takes one range per reader thread, each on that thread's own ``sqlite3``
        connection under its own step budget.
        """
        span = self._rowid_range(table)
        if span is None:
            return False
        lo, hi = span
        rows = hi - lo + 1
        # A small table, or far-apart rowids (not written by nsys): one query.
        dense = rows <= max(CHUNK_ROWS, self.path.stat().st_size // 4)
        parts = read_workers() if dense and rows >= _SPLIT_ROWS and hi < 2**62 else 1
        step = -(-rows // parts)
        select = f"SELECT EXISTS (SELECT 1 FROM {quote_ident(table)} WHERE "

        def scan(a: int | None) -> bool:
            con, budget = self._thread_sqlite()
            try:
                if a is None:  # the whole table (rowids near 2^63 would overflow a + step)
                    return bool(con.execute(f"{select}{where})").fetchone()[0])
                sql = f"{select}rowid >= ? AND rowid < ? AND ({where}))"
                return bool(con.execute(sql, (a, a + step)).fetchone()[0])
            except sqlite3.DatabaseError as exc:
                raise self._read_error(exc, budget) from exc

        if parts == 1:
            return scan(None)
        with ThreadPoolExecutor(parts, thread_name_prefix="strata-scan") as pool:
            return any(pool.map(scan, range(lo, hi + 1, step)))

    def _thread_sqlite(self) -> tuple[sqlite3.Connection, _StepBudget]:
        """Return this thread's own ``sqlite3`` connection and its step budget."""
        found = getattr(self._local, "sqlite", None)
        if found is None:
            budget = _StepBudget(self._budget.steps)
            con = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
            con.set_progress_handler(budget, _STEP_CHUNK)
            found = self._local.sqlite = (con, budget)
            with self._lock:
                self._opened.append(con)
        return found

    # -- column reads -----------------------------------------------------------------------
    def _read_sqlite3(self, sql: str) -> pa.Table:
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

    def _rowid_range(self, table: str) -> tuple[int, int] | None:
        # Two queries: SQLite answers min() or max() alone from the b-tree's ends, but
        # "min(rowid), max(rowid)" together with a full scan.
        lo = self.execute(f"SELECT min(rowid) FROM {quote_ident(table)}")[0][0]
        hi = self.execute(f"SELECT max(rowid) FROM {quote_ident(table)}")[0][0]
        return None if lo is None else (int(lo), int(hi))

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
        max_rows = max(CHUNK_ROWS, self.path.stat().st_size // 4)
        plans = [_TablePlan(read, self._rowid_range(read.table), max_rows) for read in reads]
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
            table = self._read_chunk(f"{plan.select} {where}")
            offset = 0
            # Batch by batch: a multi-batch column would otherwise be combined (one more
            # copy of everything) before landing in its output column.
            for index, batch in enumerate(table.to_batches()):
                plan.store(a, offset, index, plan.read.convert(batch))
                offset += batch.num_rows
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
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        for i, plan in enumerate(plans):
            if plan is not None:
                results[i] = plan.result()
        return results

    def close(self) -> None:
        for con in self._opened:
            con.close()
        self._opened.clear()
        self.con.close()

    def __enter__(self) -> ReportDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    ) -> None:
        self.table = table
        self.select = select
        self.convert = convert
        self.dtypes = dtypes
        self.rowid_name = rowid_name
        #: Rows of a short first chunk (0: none), read first for an early look at the table
        #: (``read_tables``'s ``on_lead``); only a table of more rows than that gets one.
        self.lead_rows = lead_rows


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
        self.out = {name: np.empty(size, dtype=dt) for name, dt in read.dtypes.items()}
        # Dense rowids (nsys writes 1..n) are not read at all: a full chunk's rowids are its
        # range. ADBC spends ~1/8 of a CUDA API read on that column otherwise.
        self.synthesizes_rowids = read.rowid_name is not None and self.dense and span is not None
        self.select = read.select
        if read.rowid_name is not None and not self.synthesizes_rowids:
            self.select = "SELECT rowid AS _rowid, " + read.select.removeprefix("SELECT ")
        self.counts: dict[int, int] = {}
        self.parts: dict[int, dict[str, object]] = {}
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
        views = {name: column[:rows] for name, column in self.out.items()}
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
                    np.copyto(self.out[name][off : off + n], data.pop(name), casting="unsafe")
        with self._lock:
            self.parts[(start, index)] = data

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
        else:
            out = _concat_chunks(
                [{n: self.parts[k].pop(n) for n in self.read.dtypes} for k in keys]
            )
            out = {n: np.asarray(v, dtype=self.read.dtypes[n]) for n, v in out.items()}
        rest = [self.parts[k] for k in keys]
        if rest and rest[0]:
            out.update(_concat_chunks(rest))
        return out


def _concat_chunks(chunks: list[dict[str, object]]) -> dict[str, object]:
    """Join per-chunk columns (NumPy, or Arrow text), freeing each part once copied."""
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
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_null(column.type):
        return np.full(len(column), fill, dtype=dtype or np.int64)
    if not pa.types.is_integer(column.type):
        raise TypeError(f"to_numpy needs an integer column, not {column.type}")
    if column.null_count:
        column = column.fill_null(fill)
    values = column.to_numpy(zero_copy_only=False)
    return values if dtype is None else np.asarray(values, dtype=dtype)
