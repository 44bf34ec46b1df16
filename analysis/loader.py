"""Read an Nsight Systems SQLite export into a :class:`~analysis.model.Report`.

Every table and column is probed first (spec §1.1 "lazy tables", §2 loader
recommendations); a missing table gives an empty event table, a missing optional column its
fill value. Event tables are sorted by ``(track_id, start_ns)``.

How it is fast (benchmarks/bench_load.py, 2-core machine):

* tables are read in rowid ranges by one reader thread per core, each with its own ADBC
  connection; Arrow batches are copied straight into preallocated NumPy columns of the final
  dtype (no full Arrow table, no concatenation);
* each table is built as soon as its last range arrives (validation, nesting levels, track
  codes, sort) and handed to ``table_sink`` (the cache writer) while later tables are still
  being read; the GPU tables come first, the CUDA API last; a progressive open reads the
  first 131,072 kernels as a chunk of their own and hands them over at once (:class:`_Partials`);
* track codes are O(n) (single-valued key columns cost two reductions), the (track, start)
  order is skipped when the rows already are in it and is a radix sort of int16 codes when
  only the tracks interleave; nesting levels touch only clusters of overlapping calls.
"""

# Over 600 lines: one read, from each table's plan to the Report, whose steps share the
# builder's state (its validation rules are analysis/_tablespecs.py's, its specs the kinds').
from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from strata.analysis import metadata
from strata.analysis._sqlite import ColumnRead, ReportDatabase, quote_ident
from strata.analysis._strings import StringTable, read_string_table
from strata.analysis._tablespecs import ALL_SPECS as _ALL_SPECS
from strata.analysis._tablespecs import BUILTIN_TABLES as _BUILTIN_TABLES
from strata.analysis._tablespecs import CHAIN_COLUMNS as _CHAIN_COLUMNS
from strata.analysis._tablespecs import CHAIN_SPECS as _CHAIN_SPECS
from strata.analysis._tablespecs import REQUIRED as _REQUIRED
from strata.analysis._tablespecs import SPECS as _SPECS
from strata.analysis._tablespecs import suspect_rows as _suspect_rows
from strata.analysis.errors import CancelledError, CorruptReportError, NotAReportError
from strata.analysis.levels import nesting_levels, order_by_group_start
from strata.analysis.model import EventTable, Report, ReportInfo, StringIds, freeze
from strata.analysis.progress import Progress
from strata.analysis.schema import (
    NVTX_MARK_TYPES,
    NVTX_RANGE_TYPES,
    NVTX_TYPE_CATEGORY,
    NVTX_TYPE_DOMAIN_CREATE,
    pid_of,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
# pandas and pyarrow are imported where they are used: a cold `stats` calls this module's
# checks only, and need not import them (analysis.stats.lean_plain).

__all__ = [
    "check_event_tables",
    "duration_error",
    "in_start_order",
    "load_sqlite",
    "suspect_condition",
]


#: The GPU tables: not a list of kinds but the tables that share one stream key table (a
#: stream's track id is the same in all four), built together once all four are read.
_GPU_KINDS = ("kernels", "memcpy", "memset", "sync")
_GPU_KEY = ["global_pid", "device_id", "context_id", "stream_id"]


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("loading cancelled")


def load_sqlite(
    path: Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    table_sink: Callable[[str, EventTable], EventTable | None] | None = None,
    kinds: Collection[str] | None = None,
    on_partial: Callable[[Report], None] | None = None,
    validated: bool = False,
) -> Report:
    """Read one SQLite export into a Report.

    Event tables are read in parallel rowid ranges (one ADBC connection per reader thread),
    converted chunk by chunk into narrow NumPy columns, then ordered by (track, start) with
    the cheapest sort that the data allow (see :func:`analysis.levels.order_by_group_start`).

    Parameters
    ----------
    path
        The ``.sqlite`` file (identified by content, not by extension).
    progress
        Called as ``progress(fraction, text)`` while loading.
    cancel
        When set, loading stops with :class:`CancelledError`.
    table_sink
        Called as ``table_sink(kind, table)`` with each finished event table while later
        tables are still being read (the cache writes its entry this way, overlapped); a
        returned table (the same data, memory-mapped) replaces the one handed over.
    kinds
        Read only these event tables (``"kernels"``, ``"nvtx"``, …); the others are left
        empty, as if absent, while ``report.has_source`` still answers for the file. None:
        every table.
    on_partial
        Called (on the calling thread) with a partial :class:`Report` each time an event
        table (the four GPU tables together) is built while others are still being read:
        the tables built so far, the others empty and named in ``report.pending`` (a
        progressive open draws it). The first is handed over as soon as the first rows of
        the first GPU table (the kernels) are read: those rows, still ``pending``, until
        the whole GPU tables are built. Not called when ``kinds`` is given.
    validated
        With ``kinds``: this very file passed the whole validation before (a cache entry's
        verdict, :func:`analysis.cache.validated`), so the tables not read are not checked.

    Raises
    ------
    NotAReportError, CorruptReportError, UnsupportedVersionError
    """
    report_progress = progress or (lambda _f, _t: None)
    with ReportDatabase(path) as db:
        if not db.has_table("StringIds"):
            raise NotAReportError(
                path, "SQLite database without Nsight Systems tables (no StringIds table)"
            )
        info = metadata.read_info(db)
        report_progress(0.02, "strings")
        strings = read_string_table(db)
        builder = _TableBuilder(db, strings, table_sink)
        partials = None
        if on_partial is not None and kinds is None:
            partials = _Partials(db, info, strings, builder, on_partial)
        _read_events(db, builder, report_progress, cancel, kinds, partials)
        if kinds is None:
            builder.chains = _read_chains(db, strings)
        elif not validated:
            # A partial model still refuses what a full one refuses (recipes and stats go
            # through the same validation as info): the tables not read are checked in SQLite.
            check_event_tables(db, strings, skip=kinds)
        _check_cancel(cancel)
        report_progress(0.9, "tracks")
        report = _report(db, info, strings, builder, builder.tables())
        report_progress(1.0, "loaded")
        return report


def _report(
    db: ReportDatabase,
    info: ReportInfo,
    strings: StringTable,
    builder: _TableBuilder,
    tables: dict[str, EventTable],
    pending: frozenset[str] = frozenset(),
) -> Report:
    """The Report of ``tables`` (every kind) with the report's frames."""
    texts = builder.nvtx_texts
    values = strings.values
    pool = StringIds(np.concatenate([values, texts]) if len(texts) else values)
    nvtx = tables["nvtx"]
    return Report(
        info=info,
        strings=pool,
        tables=tables,
        processes=metadata.read_processes(db, tables),
        threads=metadata.read_threads(db, tables, pool, strings),
        gpus=metadata.read_gpus(db),
        streams=metadata.read_streams(db),
        nvtx_domains=_nvtx_meta(nvtx, pool, NVTX_TYPE_DOMAIN_CREATE),
        nvtx_categories=_nvtx_meta(nvtx, pool, NVTX_TYPE_CATEGORY),
        enums=metadata.read_enums(db),
        gpu_metric_names=metadata.read_gpu_metric_names(db),
        source_columns={t: db.columns(t) for t in sorted(db.tables)},
        nvtx_max_ns=builder.nvtx_max_ns,
        contexts=metadata.read_contexts(db),
        cuda_devices=metadata.read_cuda_devices(db),
        pending=pending,
        **({} if pending else builder.chains),
    )


#: Rows of the first GPU table read first, on their own, for the first partial report: a
#: frame with events in well under a second instead of after the whole table (10 M kernels:
#: ~6 s). nsys writes GPU activity in time order, so they are the start of the trace.
_LEAD_ROWS = 131_072


class _Partials:
    """Hands ``on_partial`` a partial Report each time the builder has built more tables.

    The kinds not built yet are empty tables (built once, by the builder's own rules, so
    they have every column a consumer asks for) and are named in ``report.pending``. The
    first GPU table read (the kernels) is handed over early, too: its first rows (a short
    lead chunk, :data:`_LEAD_ROWS`) as soon as they arrive, still named in ``pending``.
    A partial report's rows hold fewer events than the complete report's, never others.
    """

    def __init__(
        self,
        db: ReportDatabase,
        info: ReportInfo,
        strings: StringTable,
        builder: _TableBuilder,
        on_partial: Callable[[Report], None],
    ) -> None:
        self.db, self.info, self.strings = db, info, strings
        self.builder, self.on_partial = builder, on_partial
        self.handed: set[str] = set()
        self._empty: dict[str, EventTable] | None = None
        # The GPU tables of the lead rows, shown until the complete ones are built.
        self.lead_tables: dict[str, EventTable] = {}

    @property
    def empty(self) -> dict[str, EventTable]:
        """Every kind as an empty table, built once by the builder's own rules."""
        if self._empty is None:
            scratch = _TableBuilder(self.db, self.strings, None)
            for kind in _read_order(self.builder.kinds):
                scratch.add(kind, _empty_columns(kind))
            self._empty = scratch.built
        return self._empty

    def __call__(self) -> None:
        built = self.builder.built
        new = set(built) - self.handed
        self.handed |= new
        if len(built) == len(self.builder.kinds) or not any(len(built[k]) for k in new):
            return  # the whole report follows, or nothing new to draw (absent tables)
        self._hand(dict(built))

    def lead(self, kind: str, columns: Mapping[str, np.ndarray]) -> None:
        """Hand over the first rows of the GPU table ``kind`` while the rest is read."""
        scratch = _TableBuilder(self.db, self.strings, None)
        try:
            # A copy: the views are of the columns still being filled, which the complete
            # table becomes (holding them would keep that whole table alive).
            scratch.add(kind, {name: np.array(column) for name, column in columns.items()})
        except CorruptReportError:
            return  # the whole table's build refuses it, counting every row, as ever
        for other in _GPU_KINDS:
            if other != kind:
                scratch.add(other, _empty_columns(other))
        # The four GPU tables share one stream key table: all four come from the scratch.
        self.lead_tables = {gpu: scratch.built[gpu] for gpu in _GPU_KINDS}
        self._hand(dict(self.builder.built))

    def _hand(self, built: dict[str, EventTable]) -> None:
        pending = frozenset(kind for kind in self.builder.kinds if kind not in built)
        if any(kind in built for kind in _GPU_KINDS):
            self.lead_tables = {}  # the complete GPU tables are built (all four at once)
        shown = {**self.empty, **self.lead_tables, **built}
        tables = {kind: shown[kind] for kind in self.builder.kinds}
        self.on_partial(_report(self.db, self.info, self.strings, self.builder, tables, pending))


def _read_order(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The event tables ``kinds`` in read order: the GPU tables first (built and written
    while the rest is read), the tables of kinds registered outside the built-in ones before
    the CUDA API, which comes last (the one table whose build cannot overlap a read)."""
    added = [kind for kind in kinds if kind not in _BUILTIN_TABLES]
    others = [k for k in _BUILTIN_TABLES if k not in (*_GPU_KINDS, "cuda_api")]
    return (*_GPU_KINDS, *others, *added, "cuda_api")


def _read_events(
    db: ReportDatabase,
    builder: _TableBuilder,
    progress: Progress,
    cancel: threading.Event | None,
    wanted: Collection[str] | None = None,
    partials: _Partials | None = None,
) -> None:
    """Read the event tables present and ``wanted`` (in parallel) into ``builder``.

    The others (absent, or not wanted) are added empty. ``partials()`` is called after each
    table read has been added, and ``partials.lead`` with the first rows of the first GPU
    table read.
    """
    known = builder.kinds
    if wanted is not None and (unknown := set(wanted) - set(known)):
        raise ValueError(f"unknown event tables {sorted(unknown)}; known: {sorted(known)}")
    order = _read_order(known)
    kinds = [
        kind
        for kind in order
        if (wanted is None or kind in wanted) and db.columns(_SPECS[kind].source)
    ]
    for kind in order:
        if kind not in kinds:
            builder.add(kind, _empty_columns(kind))

    def done(i: int, data: dict[str, np.ndarray]) -> None:
        builder.add(kinds[i], data)
        if partials is not None:
            partials()

    reads = [_column_read(db, kind, builder.strings) for kind in kinds]
    if partials is not None and kinds and kinds[0] in _GPU_KINDS:
        reads[0].lead_rows = _LEAD_ROWS
    db.read_tables(
        reads,
        progress=lambda f: progress(0.05 + 0.8 * f, "reading events"),
        cancel=lambda: _check_cancel(cancel),
        on_done=done,
        on_lead=None if partials is None else lambda i, columns: partials.lead(kinds[i], columns),
    )


def _read_chains(db: ReportDatabase, strings: StringTable) -> dict[str, pd.DataFrame]:
    """Read the call-chain tables present: frames sorted by (chain id, depth).

    Checked as event tables are: integers only, symbol and module ids in StringIds.
    """
    kinds = [kind for kind in _CHAIN_SPECS if db.columns(_CHAIN_SPECS[kind].source)]
    chains = {kind: chain_frame(_empty_columns(kind)) for kind in _CHAIN_SPECS}
    for kind, data in zip(kinds, db.read_tables([_column_read(db, k, strings) for k in kinds]),
                          strict=True):  # fmt: skip
        chains[kind] = chain_frame(data)
    return chains


def chain_frame(data: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Call-chain columns as the model keeps them: sorted by (chain id, depth), no row ids."""
    import pandas as pd

    order = np.lexsort((data["depth"], data["chain_id"]))
    return pd.DataFrame(
        {c.name: np.asarray(data[c.name], dtype=c.dtype)[order] for c in _CHAIN_COLUMNS}
    )


def _empty_columns(kind: str) -> dict[str, np.ndarray]:
    """The raw columns of an absent table (no rows)."""
    empty = {c.name: np.empty(0, dtype=c.dtype) for c in _ALL_SPECS[kind].columns}
    empty["row_id"] = np.empty(0, dtype=np.int64)
    return empty


def _column_read(db: ReportDatabase, kind: str, strings: StringTable) -> ColumnRead:
    """Plan one table's read: integer checks, NULL checks and string ids mapped per chunk.

    Raises
    ------
    CorruptReportError
        The table lacks its start (or end) column; while reading: a NULL start or end, a
        value that is not an integer, or a string id that StringIds lacks.
    """

    spec = _ALL_SPECS[kind]
    table, cols = spec.source, spec.columns
    present = set(db.columns(table))
    for c in cols:
        if c.name in _REQUIRED and c.source not in present:
            raise CorruptReportError(db.path, f"{table} lacks its {c.source} column")
    wanted = [c for c in cols if c.source in present]
    has_text = kind == "nvtx" and "text" in present
    select = ", ".join(quote_ident(c.source) for c in wanted)
    select += ", text" if has_text else ""
    names = spec.names

    def convert(arrow: pa.RecordBatch) -> dict[str, np.ndarray]:
        n = arrow.num_rows
        # Source dtype (zero copy); read_tables casts while copying into the final column.
        data: dict[str, object] = {}
        if "_rowid" in arrow.schema.names:
            data["row_id"] = db.integers(arrow.column("_rowid"), table, "rowid")
        for c in cols:
            if c.source not in present:
                data[c.name] = np.full(n, c.fill, dtype=c.dtype)
                continue
            column = arrow.column(c.source)
            values = db.integers(column, table, c.source, c.fill)
            if c.name in _REQUIRED and column.null_count:
                raise db.bad_values(table, c.source, allow_null=False) or CorruptReportError(
                    db.path, f"{table} has events with a NULL {c.source}"
                )
            # Ids >= 2^32 must not reach the int32 column: map them to pool codes first.
            data[c.name] = strings.codes(values, table) if c.name in names else values
        if has_text:
            data["_text"] = _text_column(arrow.column("text"))
        return data

    dtypes = {"row_id": np.int64, **{c.name: c.dtype for c in cols}}
    return ColumnRead(
        table,
        f"SELECT {select} FROM {quote_ident(table)}",
        convert,
        dtypes,
        "row_id",
        integers=not has_text,
        sources=None if has_text else [c.source for c in wanted],
    )


def _text_column(text: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """NVTX inline text as Arrow strings (blobs decoded leniently, numbers as their text).

    SQLite stores whatever bytes a writer gave it as TEXT, and the ADBC driver hands them
    over as an Arrow string column unchecked: text that is not UTF-8 is decoded leniently
    too (U+FFFD for each bad byte, as StringIds are), never passed on to fail later.
    """
    import pyarrow as pa

    if pa.types.is_string(text.type):
        try:
            text.validate(full=True)
            return text
        except pa.ArrowInvalid:
            text = text.cast(pa.binary())  # the same bytes, then decoded as a blob's
    if pa.types.is_binary(text.type) or pa.types.is_large_binary(text.type):
        return pa.array(
            [None if v is None else v.decode("utf-8", "replace") for v in text.to_pylist()],
            type=pa.string(),
        )
    return text.cast(pa.string())


def _finish_nvtx(
    db: ReportDatabase, nvtx: dict[str, np.ndarray], n_strings: int
) -> tuple[int, np.ndarray]:
    """Resolve NVTX labels and ends in place; return (NVTX max timestamp, interned texts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    start, end_raw = nvtx["start_ns"], nvtx.pop("end_raw")
    has_end = end_raw != -1
    if len(start):
        nvtx_max = int(max(start.max(), end_raw[has_end].max() if has_end.any() else start.max()))
    else:
        nvtx_max = 0
    is_range = np.isin(nvtx["event_type"], NVTX_RANGE_TYPES)
    # spec §3.4: an unclosed range lasts until the largest NVTX timestamp.
    nvtx["end_ns"] = np.where(has_end, end_raw, np.where(is_range, nvtx_max, start))
    nvtx["is_open"] = (~has_end & is_range).astype(np.int8)
    texts = np.empty(0, dtype=object)
    name_id = nvtx["text_id"].astype(np.int32)  # already pool codes (-1: no textId)
    text_col = nvtx.pop("_text", None)
    if isinstance(text_col, pa.Array):
        text_col = pa.chunked_array([text_col])
    if text_col is not None and len(start):
        encoded = pc.dictionary_encode(text_col).combine_chunks()
        texts = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
        idx = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
        inline = np.where(idx >= 0, idx + n_strings, -1).astype(np.int32)
        name_id = np.where(name_id >= 0, name_id, inline).astype(np.int32)
    nvtx["name_id"] = name_id
    bad = is_range & has_end & (end_raw < start)
    if bad.any():
        raise CorruptReportError(
            db.path, f"NVTX_EVENTS has {int(bad.sum())} ranges that end before they start"
        )
    error = duration_error(db.path, "NVTX_EVENTS", 0, _overflows(nvtx["start_ns"], nvtx["end_ns"]))
    if error is not None:
        raise error
    return nvtx_max, texts


def _overflows(start_ns: np.ndarray, end_ns: np.ndarray) -> int:
    """Count events (``end >= start``) whose ``end - start`` does not fit in int64.

    Only a negative start can overflow, so the common case costs one ``min``.
    """
    if not len(start_ns) or int(start_ns.min()) >= 0:
        return 0
    neg = np.flatnonzero(start_ns < 0)
    s, e = start_ns[neg], end_ns[neg]
    return int(np.count_nonzero((e >= s) & (e - s < 0)))  # int64 wraps: negative = overflow


def duration_error(
    path: Path, table: str, ended_before: int, overflowed: int
) -> CorruptReportError | None:
    """The error for events of ``table`` that end before they start or last beyond int64.

    Shared with the lean stats reader, so that both word the same defect the same way.
    """
    if ended_before:
        return CorruptReportError(
            path, f"{table} has {ended_before} events that end before they start"
        )
    if overflowed:
        return CorruptReportError(
            path, f"{table} has {overflowed} events whose duration does not fit in 64 bits"
        )
    return None


def _validate(path: Path, kind: str, data: dict[str, np.ndarray]) -> None:
    """Raise for events that end before they start or whose duration overflows int64.

    String ids were checked (and mapped) while reading, by :meth:`StringTable.codes`.
    """
    if "end_ns" in data and kind != "nvtx":
        start, end = data["start_ns"], data["end_ns"]
        before = int(np.count_nonzero(end < start))
        overflow = 0 if before else _overflows(start, end)
        error = duration_error(path, _SPECS[kind].source, before, overflow)
        if error is not None:
            raise error


def check_event_tables(
    db: ReportDatabase,
    strings: StringTable,
    checked: Mapping[str, Collection[str]] | None = None,
    skip: Collection[str] = (),
    scanned: Mapping[str, bool] | None = None,
) -> None:
    """Refuse what :func:`load_sqlite` refuses in the event tables, without loading them.

    For the lean stats reader, which reads two or three columns of one or two tables: every
    other value the loader would check is checked here, by the loader's own rules. First
    each table's plan (a view named like an nsys table, a missing start or end column),
    then one SQLite scan per table for rows that might break a rule (:func:`_suspect_rows`:
    no false negatives, rare false positives); a table with such a row is read and checked
    as :func:`load_sqlite` reads and checks it, so the message is the loader's own.

    Parameters
    ----------
    db
        The open report.
    strings
        Its StringIds (name ids are checked against them).
    checked
        Per kind, the source columns the caller has already read and checked as the loader
        does (start and end together: present, integer, not NULL, ``end >= start``, no
        overflowing duration; a name column: integer, in StringIds).
    skip
        Kinds read whole and checked by the caller.
    scanned
        Per kind, whether a row matched :func:`suspect_condition` (with ``checked``) in a
        scan the caller ran itself (the lean stats read selects it with its columns): that
        table is not scanned again, only read and checked when a row matched.

    Raises
    ------
    CorruptReportError
        As :func:`load_sqlite` would for the same report.
    """
    checked = checked or {}
    plans = {
        kind: _column_read(db, kind, strings)
        for kind in (*_read_order(tuple(_SPECS)), *_CHAIN_SPECS)
        if kind not in skip
        and db.columns(_ALL_SPECS[kind].source)  # a view named like nsys's raises
    }
    scanned = scanned or {}
    for kind, read in plans.items():
        if kind in scanned:
            suspect = scanned[kind]
        else:
            where = _suspect_rows(db, kind, strings, set(checked.get(kind, ())))
            suspect = bool(where) and db.any_row(read.table, where)
        if suspect:
            (data,) = db.read_tables([read])
            _validate(db.path, kind, data)
            if kind == "nvtx":
                _finish_nvtx(db, data, len(strings))


def suspect_condition(
    db: ReportDatabase, kind: str, strings: StringTable, checked: Collection[str]
) -> str | None:
    """The SQL condition :func:`check_event_tables` scans ``kind``'s table for.

    True (never NULL) on every row that :func:`load_sqlite` might refuse, beyond the source
    columns ``checked`` (see :func:`check_event_tables`); None when nothing is left to check.
    A caller that reads the table anyway selects it as one more column and hands the
    verdict to :func:`check_event_tables` as ``scanned``, sparing a second scan.
    """
    where = _suspect_rows(db, kind, strings, set(checked))
    return None if where is None else f"coalesce(({where}), 0)"


_SMALL_RANGE = 1 << 22


def _column_uniques(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values: min == max and bincount shortcuts before hashing."""
    import pandas as pd

    if not len(values):
        return values[:0]
    lo, hi = values.min(), values.max()
    if lo == hi:
        return values[:1].copy()
    if int(hi) - int(lo) < _SMALL_RANGE:
        return np.flatnonzero(np.bincount(values - lo)).astype(values.dtype) + lo
    return np.unique(pd.unique(values))


def _dense_codes(values: np.ndarray, uniques: np.ndarray) -> np.ndarray:
    """Return the index of each value in the sorted ``uniques`` (which hold every value)."""
    lo, hi = int(uniques[0]), int(uniques[-1])
    if hi - lo < _SMALL_RANGE:
        lut = np.zeros(hi - lo + 1, dtype=np.int32)
        lut[uniques - lo] = np.arange(len(uniques), dtype=np.int32)
        return lut[values - lo]
    return np.searchsorted(uniques, values).astype(np.int32)


def _factorize(
    parts: list[dict[str, np.ndarray]], names: list[str]
) -> tuple[list[np.ndarray], pd.DataFrame]:
    """Give each row of several column sets a track code shared by all of them.

    Returns one int32 code array per part and the key frame (row i = key of code i, sorted
    by the key columns). Per-column dense codes and a mixed-radix combined code keep it
    O(n); columns with one value (most key columns of a real report) cost two reductions.
    Measured 0.3 s for 10 M rows x 4 key columns (pandas groupby: 2 s).
    """
    import pandas as pd

    uniques = {}
    for name in names:
        seen = [_column_uniques(p[name]) for p in parts if len(p[name])]
        dtype = parts[0][name].dtype
        uniques[name] = np.unique(np.concatenate(seen)) if seen else np.empty(0, dtype)
    sizes = [max(1, len(uniques[n])) for n in names]
    total = int(np.prod(sizes, dtype=object))
    if total >= 1 << 62:
        # The mixed-radix code would overflow int64 and merge tracks silently (10^5 distinct
        # values in each of four key columns); combine one column at a time instead.
        return _factorize_wide(parts, names, uniques)
    wide = np.int32 if total < 1 << 31 else np.int64
    combined = []
    for p in parts:
        code = np.zeros(len(p[names[0]]), dtype=wide)
        for name, size in zip(names, sizes, strict=True):
            if size > 1:
                code *= size
                code += _dense_codes(p[name], uniques[name])
        combined.append(code)
    if total <= 1 << 24:
        present = np.zeros(total, dtype=bool)
        for code in combined:
            present[code] = True
        key_codes = np.flatnonzero(present)
        if len(key_codes) == total:
            codes = [c.astype(np.int32, copy=False) for c in combined]
        else:
            remap = (np.cumsum(present) - 1).astype(np.int32)
            codes = [remap[c] for c in combined]
    else:
        key_codes = np.unique(np.concatenate([pd.unique(c) for c in combined]))
        codes = [np.searchsorted(key_codes, c).astype(np.int32) for c in combined]
    keys = {}
    rest = key_codes.astype(np.int64)
    for name, size in reversed(list(zip(names, sizes, strict=True))):
        rest, index = np.divmod(rest, size)
        keys[name] = uniques[name][index] if len(uniques[name]) else uniques[name][:0]
    return codes, pd.DataFrame({name: keys[name] for name in names})


def _factorize_wide(
    parts: list[dict[str, np.ndarray]], names: list[str], uniques: dict[str, np.ndarray]
) -> tuple[list[np.ndarray], pd.DataFrame]:
    """:func:`_factorize` for key spaces beyond int64: re-rank after each column, O(n log n).

    After each step the code is a rank among the combinations seen so far (< rows), so the
    next ``rank * size + code`` stays below rows x distinct values, far from 2^63.
    """
    import pandas as pd

    cuts = np.cumsum([len(p[names[0]]) for p in parts])[:-1]
    code = np.zeros(int(sum(len(p[names[0]]) for p in parts)), dtype=np.int64)
    for name in names:
        column = np.concatenate([_dense_codes(p[name], uniques[name]) for p in parts])
        _, code = np.unique(code * len(uniques[name]) + column, return_inverse=True)
        code = code.astype(np.int64).reshape(-1)
    _, first = np.unique(code, return_index=True)
    keys = {name: np.concatenate([p[name] for p in parts])[first] for name in names}
    codes = [c.astype(np.int32) for c in np.split(code, cuts)]
    return codes, pd.DataFrame(keys)


def _sorted_table(
    kind: str, data: dict[str, np.ndarray], track_id: np.ndarray, keys: pd.DataFrame, source: str
) -> EventTable:
    # ``data`` is changed in place (the caller's raw columns): each column reordered
    # replaces its raw one, which is freed then, so the peak is the raw table plus one
    # column, not two tables.
    if "end_ns" not in data:
        data["end_ns"] = data["start_ns"]
    data["track_id"] = track_id
    order = order_by_group_start(track_id, data["start_ns"])
    if order is not None:
        for name in list(data):
            # One column at a time, so the peak is one extra column, not a second table.
            # A column of one value (a zero-stride view from the read) is its own reorder.
            if not _is_constant_view(data[name]):
                data[name] = data[name][order]
    return EventTable(
        kind,
        {
            n: freeze(c if _is_constant_view(c) else np.ascontiguousarray(c))
            for n, c in data.items()
        },
        keys,
        source,
    )


def _is_constant_view(column: np.ndarray) -> bool:
    """Whether ``column`` is a zero-stride view of one value (as the reader hands over)."""
    return len(column) > 1 and column.strides == (0,)


class _TableBuilder:
    """Turns each table's raw columns into a sorted EventTable as soon as it is read.

    GPU tables share one stream key table, so they are built together once all four have
    arrived. Every finished table goes to ``sink`` (the cache writer) right away.
    """

    def __init__(
        self,
        db: ReportDatabase,
        strings: StringTable,
        sink: Callable[[str, EventTable], EventTable | None] | None,
    ) -> None:
        self.db = db
        self.strings = strings
        self.n_strings = len(strings)
        self.sink = sink
        self.built: dict[str, EventTable] = {}
        self.gpu_raw: dict[str, dict[str, np.ndarray]] = {}
        self.nvtx_max_ns = 0
        self.nvtx_texts = np.empty(0, dtype=object)
        self.chains: dict[str, pd.DataFrame] = {}
        # The tables this load builds: those specified when it starts (a kind registered
        # meanwhile, on another thread, waits for the next load).
        self.kinds = tuple(_SPECS)

    def add(self, kind: str, data: dict[str, np.ndarray]) -> None:
        data = in_start_order(data)
        _validate(self.db.path, kind, data)
        if kind in _GPU_KINDS:
            self.gpu_raw[kind] = data
            if len(self.gpu_raw) == len(_GPU_KINDS):
                self._build_gpu()
            return
        source = _source(self.db, kind)
        if kind == "nvtx":
            self.nvtx_max_ns, self.nvtx_texts = _finish_nvtx(self.db, data, self.n_strings)
            self._done(_nvtx_table(data, source))
            return
        spec = _SPECS[kind]
        if spec.nested:
            data["level"] = nesting_levels(data["global_tid"], data["start_ns"], data["end_ns"])
        (codes,), keys = _factorize([data], list(spec.key))
        self._done(_sorted_table(kind, data, codes, keys, source))

    def _build_gpu(self) -> None:
        raw = [self.gpu_raw[kind] for kind in _GPU_KINDS]
        codes, keys = _factorize(raw, _GPU_KEY)
        self.gpu_raw = {}
        for kind, data, code in zip(_GPU_KINDS, raw, codes, strict=True):
            self._done(_sorted_table(kind, data, code, keys, _source(self.db, kind)))

    def _done(self, table: EventTable) -> None:
        if self.sink is not None:
            table = self.sink(table.kind, table) or table
        self.built[table.kind] = table

    def tables(self) -> dict[str, EventTable]:
        return {kind: self.built[kind] for kind in self.kinds}


def in_start_order(data: dict[str, np.ndarray | pa.Array]) -> dict[str, np.ndarray | pa.Array]:
    """Return a table's raw columns in start order, ties in an order fixed by their content.

    nsys up to 2025.5 writes each table in (nearly) start order, and what Strata derives
    from row order (nesting levels of identical calls, the order of events that start
    together on one row) follows that order. Newer exports write rows in no particular
    order: such a table is put in start order here, and rows that start together are
    ordered by their other columns (end, ids, names...), so the model no longer depends on
    how the file happened to be written. ``row_id`` goes along: it still names the SQLite
    row. A table already in start order is returned as it is (one pass over ``start_ns``:
    2 M rows, ~5 ms), so ties there keep the file's order, which nsys's reports use.
    """
    import pyarrow as pa

    start = data["start_ns"]
    if len(start) < 2 or bool(np.all(start[1:] >= start[:-1])):
        return data
    order = np.argsort(start, kind="stable")
    s = start[order]
    tie = s[1:] == s[:-1]
    if tie.any():
        # Only rows in runs of equal starts are ordered again, by every other column.
        in_run = np.zeros(len(s), dtype=bool)
        in_run[1:] |= tie
        in_run[:-1] |= tie
        rows = np.flatnonzero(in_run)
        run_id = np.cumsum(np.concatenate(([True], ~tie)))[rows]
        keys = [
            np.asarray(column)[order[rows]]
            for name, column in data.items()
            if name not in ("start_ns", "row_id") and isinstance(column, np.ndarray)
        ]
        order[rows] = order[rows][np.lexsort((*reversed(keys), run_id))]
    return {
        name: column.take(pa.array(order)) if isinstance(column, pa.Array | pa.ChunkedArray)
        else column if _is_constant_view(column) else column[order]
        for name, column in data.items()
    }  # fmt: skip


def _source(db: ReportDatabase, kind: str) -> str:
    table = _SPECS[kind].source
    return table if db.has_table(table) else ""


def _nvtx_table(data: dict[str, np.ndarray], source: str) -> EventTable:
    """NVTX tracks: (thread, level) for ranges, level -1 for marks, -2 for other rows."""
    event_type = data["event_type"]
    is_range = np.isin(event_type, NVTX_RANGE_TYPES)
    is_mark = np.isin(event_type, NVTX_MARK_TYPES)
    level = np.where(is_mark, -1, -2).astype(np.int32)
    gtid = data["global_tid"]
    level[is_range] = nesting_levels(
        gtid[is_range], data["start_ns"][is_range], data["end_ns"][is_range]
    )
    data["level"] = level
    (codes,), keys = _factorize([data], ["global_tid", "level"])
    return _sorted_table("nvtx", data, codes, keys, source)


def _nvtx_meta(nvtx: EventTable, pool: StringIds, event_type: int) -> pd.DataFrame:
    import pandas as pd

    rows = np.flatnonzero(nvtx["event_type"] == event_type)
    order = rows[np.argsort(nvtx["row_id"][rows], kind="stable")]
    return pd.DataFrame(
        {
            "pid": pid_of(nvtx["global_tid"][order]),
            "global_tid": nvtx["global_tid"][order],
            "domain_id": nvtx["domain_id"][order],
            "category": nvtx["category"][order],
            "name": pool.lookup(nvtx["name_id"][order], missing=""),
            "start_ns": nvtx["start_ns"][order],
        }
    )
