"""What a columnar read of an SQLite report asks for and where its rows land.

:class:`ColumnRead` (one table: its SELECT, chunk converter and output dtypes), the
native reader's :class:`NumpyBatch`, :class:`TablePlan` (where each rowid chunk of a table
lands in its preallocated columns) and the Arrow-to-NumPy conversions; the reads themselves
are :meth:`analysis._sqlite.ReportDatabase.read_tables`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis import _native

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ColumnRead", "NumpyBatch", "TablePlan", "int64_array", "to_numpy"]


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
        #: (``ReportDatabase.read_tables``'s ``on_lead``); only a table of more rows than
        #: that gets one.
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


class TablePlan:
    """Where each rowid chunk of one table lands in its preallocated output columns."""

    def __init__(
        self, read: ColumnRead, span: tuple[int, int] | None, max_rows: int, chunk_rows: int
    ) -> None:
        self.read = read
        self.lo, hi = span if span is not None else (None, None)
        rows = 0 if span is None else hi - self.lo + 1
        self.hi = hi
        self.dense = rows <= max_rows
        # Far-apart rowids (not written by nsys): one read, no split into empty ranges.
        self.step = chunk_rows if self.dense else rows
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
        #: (:meth:`analysis._sqlite.ReportDatabase._direct_plan`), else None.
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


def int64_array(values: np.ndarray, nulls: np.ndarray | None) -> pa.Array:
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
    :meth:`analysis._sqlite.ReportDatabase.integers`, which names the table and column instead.
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
