"""The native integer column reader (native/sqlread.c), loaded with ctypes when built.

``pip install .`` (setup.py) and ``make native`` compile ``native/sqlread.c`` into
``libstrata_sqlread.so`` next to this module (a checkout built before that has it in
``build/native/``); without it (no C compiler at install time) every read goes through ADBC,
with the same results, 2-3x slower on big reports, and the first read logs why, once.
``STRATA_SQLITE_READER=adbc`` turns the native reader off (tests compare the two).

Two readers, in C with the GIL released, both handing back NumPy int64 columns a batch at a
time plus a summary of every column (NULL, real, text and blob counts, the integers' min
and max): :func:`direct_batches` decodes a rowid table's b-tree pages itself (no SQL, a few
ns per value); :func:`read_batches` steps any SELECT on its own read-only connection. Both
read only integers: a value of another type in a column they return, or anything
unexpected, is :class:`Declined`, and the caller reads the range the next way (in the end
through ADBC, whose path names the defect in the loader's words). docs/design.md.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "ColumnSummary",
    "Declined",
    "NativeReadError",
    "NotIntegers",
    "available",
    "direct_batches",
    "read_batches",
]

log = logging.getLogger(__name__)

_LIBRARY_NAME = "libstrata_sqlread.so"
#: Where the library is looked for, in order: inside the package (``pip install``, ``pip
#: install -e`` and ``make native`` build it there), then where ``make native`` built it
#: before (``build/native/`` of a checkout).
LIBRARIES = (
    Path(__file__).resolve().parent / _LIBRARY_NAME,
    Path(__file__).resolve().parents[1] / "build" / "native" / _LIBRARY_NAME,
)
#: Rows per batch handed back (as ADBC's batches: 65,536).
BATCH_ROWS = 65_536
_ERR_LEN = 512
_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


class Declined(Exception):
    """The native reader does not serve this query: the caller reads it through ADBC."""


class NotIntegers(Declined):
    """A column the reader returns holds a value that is not an integer (or NULL)."""


class NativeReadError(Declined):
    """SQLite failed inside the native reader (the message is SQLite's)."""


@dataclass
class ColumnSummary:
    """What one scan saw in a column: counts of values by non-integer type, integer range."""

    nulls: int
    reals: int
    texts: int
    blobs: int
    min: int | None  # None: no integer at all
    max: int | None

    @property
    def others(self) -> int:
        """Values that are neither integers nor NULL."""
        return self.reals + self.texts + self.blobs

    def merged(self, other: ColumnSummary) -> ColumnSummary:
        """The summary of both scans (two row ranges of one column)."""
        lows = [v for v in (self.min, other.min) if v is not None]
        highs = [v for v in (self.max, other.max) if v is not None]
        return ColumnSummary(
            self.nulls + other.nulls,
            self.reals + other.reals,
            self.texts + other.texts,
            self.blobs + other.blobs,
            min(lows) if lows else None,
            max(highs) if highs else None,
        )


_LIB: ctypes.CDLL | None = None
_LOADED = False


def _library() -> ctypes.CDLL | None:
    global _LIB, _LOADED  # loaded once per process
    if _LOADED:
        return _LIB
    _LOADED = True
    if os.environ.get("STRATA_SQLITE_READER", "").lower() == "adbc":
        log.info("native reader off (STRATA_SQLITE_READER=adbc); reading through ADBC")
        return None
    library = next((path for path in LIBRARIES if path.is_file()), None)
    if library is None:
        log.info(
            "native reader not built (no %s in %s: installed without a C compiler?); "
            "reading through ADBC, 2-3x slower on big reports",
            _LIBRARY_NAME,
            LIBRARIES[0].parent,
        )
        return None
    try:
        lib = ctypes.CDLL(str(library))
    except OSError as exc:
        log.info("native reader not loaded (%s); reading through ADBC", exc)
        return None
    lib.strata_open.restype = ctypes.c_void_p
    lib.strata_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.strata_ncols.restype = ctypes.c_int
    lib.strata_ncols.argtypes = [ctypes.c_void_p]
    lib.strata_colname.restype = ctypes.c_char_p
    lib.strata_colname.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.strata_fetch.restype = ctypes.c_int64
    lib.strata_fetch.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
        ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
        ctypes.c_int,
    ]  # fmt: skip
    lib.strata_close.restype = None
    lib.strata_close.argtypes = [ctypes.c_void_p]
    _LIB = lib
    return lib


def available() -> bool:
    """Whether the native reader is built, loadable and not turned off."""
    return _library() is not None


def read_batches(
    uri: str,
    sql: str,
    outputs: int | None = None,
    summaries: dict[str, ColumnSummary] | None = None,
    reuse: bool = False,
) -> Iterator[tuple[list[str], list[np.ndarray], list[np.ndarray | None]]]:
    """Run ``sql`` on ``uri`` and yield (names, values, null masks) per batch of rows.

    ``outputs``: how many leading columns to return (None: all); the others are only
    summarized. ``summaries``, when given, receives a :class:`ColumnSummary` of every column
    of the result (by name) once the statement is done. A mask is None where a batch has no NULL in
    that column (a NULL reads as 0). With ``reuse``, every batch is read into the same
    arrays: a batch is valid until the next one is asked for (no allocation per batch: the
    fresh pages cost more system time than the copy).

    Raises
    ------
    NotIntegers
        A returned column holds a real, text or blob value.
    NativeReadError
        SQLite's error (a damaged page, say).
    """
    lib = _library()
    if lib is None:
        raise RuntimeError("the native reader is not available")
    err = ctypes.create_string_buffer(_ERR_LEN)
    handle = lib.strata_open(uri.encode(), sql.encode(), err, _ERR_LEN)
    if not handle:
        raise NativeReadError(err.value.decode("utf-8", "replace"))

    def fetch(nout: int, pointers, nulls, counts, mins, maxs) -> int:  # noqa: ANN001
        n = lib.strata_fetch(
            handle, nout, pointers, nulls, BATCH_ROWS, counts, mins, maxs, err, _ERR_LEN
        )
        if n == -2:
            raise NotIntegers(sql)
        if n < 0:
            raise NativeReadError(err.value.decode("utf-8", "replace"))
        return n

    try:
        ncols = lib.strata_ncols(handle)
        names = [lib.strata_colname(handle, i).decode("utf-8", "replace") for i in range(ncols)]
        yield from _batches(fetch, names, outputs, summaries, reuse)
    finally:
        lib.strata_close(handle)


def _direct_library() -> ctypes.CDLL | None:
    lib = _library()
    if lib is None or getattr(lib, "_direct_ready", False):
        return lib
    lib.strata_direct_open.restype = ctypes.c_void_p
    lib.strata_direct_open.argtypes = [ctypes.c_char_p]
    lib.strata_direct_fetch.restype = ctypes.c_int64
    lib.strata_direct_fetch.argtypes = [
        ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int64),
    ]  # fmt: skip
    lib.strata_direct_close.restype = None
    lib.strata_direct_close.argtypes = [ctypes.c_void_p]
    lib._direct_ready = True
    return lib


def direct_batches(
    path: str,
    root: int,
    rowids: tuple[int, int],
    fields: list[int],
    names: list[str],
    outputs: int | None = None,
    summaries: dict[str, ColumnSummary] | None = None,
    reuse: bool = False,
    ranged: Collection[str] | None = None,
) -> Iterator[tuple[list[str], list[np.ndarray], list[np.ndarray | None]]]:
    """The rows of one rowid table with rowids in ``rowids`` (``[lo, hi)``), read from its
    b-tree pages directly (no SQL): record fields ``fields`` (named ``names``), as
    :func:`read_batches` yields them.

    ``ranged``: the summarized columns whose min and max are wanted (None: all); the others'
    summaries count their values by type only (min and max None), and their integers are
    not decoded at all in most records (10 M kernels: 15 of 20 fields skipped).

    The file must be a report SQLite reads without a write-ahead log (the caller opens it
    ``immutable``); the table a rowid table whose root page is ``root`` and whose records
    hold ``fields`` at those positions (no generated or rowid-alias column among them).

    Raises
    ------
    Declined
        Anything the page reader does not expect (a damaged or unusual page, a record
        spilling to overflow pages, a value that is not an integer in a returned column,
        no rows): the caller reads the range through SQLite.
    """
    lib = _direct_library()
    if lib is None:
        raise Declined("the native reader is not available")
    handle = lib.strata_direct_open(os.fsencode(path))
    if not handle:
        raise Declined("the direct reader cannot open the file")
    field_array = np.asarray(fields, dtype=np.intc)
    nout = len(names) if outputs is None else min(outputs, len(names))
    ranged_mask = np.array(
        [i < nout or ranged is None or n in ranged for i, n in enumerate(names)], dtype=np.uint8
    )
    last = ctypes.c_int64(rowids[0] - 1)

    def fetch(nout: int, pointers, nulls, counts, mins, maxs) -> int:  # noqa: ANN001
        n = lib.strata_direct_fetch(
            handle, root, rowids[0], rowids[1], last.value, len(fields),
            field_array.ctypes.data, ranged_mask.ctypes.data, nout, pointers, nulls,
            BATCH_ROWS, counts, mins, maxs, ctypes.byref(last),
        )  # fmt: skip
        if n < 0:
            raise Declined("the direct reader declined the range")
        return n

    try:
        yield from _batches(fetch, names, outputs, summaries, reuse, ranged_mask)
    finally:
        lib.strata_direct_close(handle)


def _batches(
    fetch: Callable[..., int],
    names: list[str],
    outputs: int | None,
    summaries: dict[str, ColumnSummary] | None,
    reuse: bool,
    ranged: np.ndarray | None = None,
) -> Iterator[tuple[list[str], list[np.ndarray], list[np.ndarray | None]]]:
    """The batch loop of both readers: ``fetch(nout, pointers, nulls, counts, mins, maxs)``
    fills up to :data:`BATCH_ROWS` rows (fewer: done) and returns how many."""
    ncols = len(names)
    nout = ncols if outputs is None else min(outputs, ncols)
    counts = np.zeros(4 * max(ncols, 1), np.int64)
    mins = np.full(max(ncols, 1), _INT64_MAX, np.int64)
    maxs = np.full(max(ncols, 1), _INT64_MIN, np.int64)
    values: list[np.ndarray] = []
    seen = 0
    while True:
        if not values or not reuse:
            values = [np.empty(BATCH_ROWS, np.int64) for _ in range(nout)]
            pointers = (ctypes.c_void_p * max(nout, 1))(*[v.ctypes.data for v in values])
            nulls = np.empty((max(nout, 1), BATCH_ROWS), np.uint8)
        before = counts[::4].copy()
        n = fetch(
            nout, pointers, nulls.ctypes.data, counts.ctypes.data, mins.ctypes.data,
            maxs.ctypes.data,
        )  # fmt: skip
        if n == 0 and not seen:
            # No rows: ADBC's empty result carries the column types callers expect.
            raise Declined("no rows")
        seen += n
        if n:
            masks = [
                nulls[c, :n].view(bool) if counts[4 * c] > before[c] else None for c in range(nout)
            ]
            yield names[:nout], [v[:n] for v in values], masks
        if n < BATCH_ROWS:
            break
    if summaries is not None:
        if ranged is not None:  # min and max of the other columns are not kept
            mins[: len(ranged)][ranged == 0] = _INT64_MAX
            maxs[: len(ranged)][ranged == 0] = _INT64_MIN
        summaries.update(_summaries(names, counts, mins, maxs))


def _summaries(
    names: list[str], counts: np.ndarray, mins: np.ndarray, maxs: np.ndarray
) -> dict[str, ColumnSummary]:
    c4 = counts.reshape(-1, 4)
    out = {}
    for c, name in enumerate(names):
        seen = mins[c] <= maxs[c]
        out[name] = ColumnSummary(
            int(c4[c, 0]), int(c4[c, 1]), int(c4[c, 2]), int(c4[c, 3]),
            int(mins[c]) if seen else None, int(maxs[c]) if seen else None,
        )  # fmt: skip
    return out
