"""A read-only, step-bounded ``sqlite3`` connection to a report: header check, schema probe,
small queries. Plain Python (no NumPy, no Arrow), so that ``stats`` can answer a small report
inside SQLite without importing them (:mod:`analysis.stats.sql`); :mod:`analysis._sqlite`'s
:class:`~analysis._sqlite.ReportDatabase` adds the columnar reads.

Reports are opened with a ``file:...?mode=ro&immutable=1`` URI, so SQLite neither writes nor
creates a journal or ``-shm`` file next to them. A report is untrusted input: only real
tables are read (a view, possibly an endless recursive one, named like an nsys table is
refused, other views are ignored), identifiers are quoted, and every ``sqlite3`` statement
runs under a budget of VM steps proportional to the file's size.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from strata.analysis._files import pending_wal, read_head
from strata.analysis.errors import CorruptReportError, NotAReportError
from strata.analysis.timefmt import pluralize

__all__ = [
    "CHUNK_ROWS",
    "SQLITE_MAGIC",
    "SqliteReport",
    "check_sqlite_header",
    "is_sqlite_file",
    "limit_read_threads",
    "quote_ident",
    "read_workers",
    "usable_cores",
]

SQLITE_MAGIC = b"SQLite format 3\x00"
_PAGE_SIZE_OFFSET = 16
#: Rows per parallel read. ADBC's per-value cost is ~2x SQLite's own scan (measured on the
#: scaled 1 M-kernel report: 21 kernel columns, 1.31 s vs 0.63 s), so tables are cut into
#: rowid ranges read by one thread each; ADBC releases the GIL while it steps.
CHUNK_ROWS = 500_000
#: Rows from which :meth:`SqliteReport.any_row` scans a table on several threads.
_SPLIT_ROWS = 100_000

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


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a plain SQLite file to read as it is (not a folder, no ``-wal``)."""
    if path.is_dir():
        return False  # an arrowdir/parquetdir export folder: open_report reads it
    # read_head refuses a FIFO or device without blocking. A report whose newest data are
    # in a -wal file is read through open_report's private checkpointed copy instead.
    head, _size = read_head(path, 16)
    return head == SQLITE_MAGIC and pending_wal(path) is None


class SqliteReport:
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
    def _rowid_range(self, table: str) -> tuple[int, int] | None:
        # Two queries: SQLite answers min() or max() alone from the b-tree's ends, but
        # "min(rowid), max(rowid)" together with a full scan.
        lo = self.execute(f"SELECT min(rowid) FROM {quote_ident(table)}")[0][0]
        hi = self.execute(f"SELECT max(rowid) FROM {quote_ident(table)}")[0][0]
        return None if lo is None else (int(lo), int(hi))

    def close(self) -> None:
        for con in self._opened:
            con.close()
        self._opened.clear()
        self.con.close()

    def __enter__(self) -> SqliteReport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
