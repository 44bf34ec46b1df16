"""The event tables the loader reads, and the SQL test for rows it would refuse.

Plain data (no NumPy): the loader (:mod:`analysis.loader`) reads and checks the tables
described here; the lean stats reader and the SQL path of ``stats``
(:mod:`analysis.stats.sql`) check the tables they do not load with :func:`suspect_rows`,
which needs only SQLite.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Protocol

from strata.analysis._sqlfile import SqliteReport, quote_ident
from strata.analysis.schema import NVTX_RANGE_TYPES, OSRT_CLASS_CALL

__all__ = [
    "OSRT_CALLS",
    "EventFilter",
    "suspect_in_summaries",
    "unchecked_columns",
    "ALL_SPECS",
    "BUILTIN_TABLES",
    "ColumnSpec",
    "CHAIN_COLUMNS",
    "CHAIN_SPECS",
    "REQUIRED",
    "SPECS",
    "StringPool",
    "TableSpec",
    "add_table",
    "column_spec",
    "event_tables",
    "suspect_rows",
]


class StringPool(Protocol):
    """What :func:`suspect_rows` needs of a report's StringIds."""

    #: The pool's size when it is nsys's dense, complete layout (every id 0..size-1 has a
    #: text), else None.
    dense_size: int | None

    def absent_sql(self, column: str) -> str:
        """An SQL condition true where an id in ``column`` (quoted) names no string."""
        ...


class _Summary(Protocol):
    """What one scan saw in a column (:class:`analysis._native.ColumnSummary`)."""

    nulls: int
    others: int  # reals, texts and blobs
    max: int | None  # the largest integer; None: no integer


@dataclass(frozen=True)
class ColumnSpec:
    """One column of an event table: our name, its source column(s), dtype and NULL fill."""

    name: str
    source: str
    dtype: str = "int64"
    fill: int = 0


@dataclass(frozen=True)
class EventFilter:
    """Which rows of a table are events of a kind: those whose ``column`` is in ``values``.

    Defined once, on the kind, and read in both forms: a NumPy mask over the loaded column
    (the timeline, panel, column-path summaries and recipes) and an SQL condition over the
    source table (the SQL path of ``stats``), so the forms cannot drift apart.

    Attributes
    ----------
    column
        Our column (``event_class``).
    source
        Its source column (``eventClass``).
    values
        The values that keep a row.
    fill
        What a NULL (or a missing column) reads as, as the loader fills it.
    """

    column: str
    source: str
    values: tuple[int, ...]
    fill: int = 0

    def mask(self, table: Mapping[str, object]) -> object:
        """Return a bool array: which rows of ``table`` (its loaded columns) pass."""
        import numpy as np  # a plain module (the SQL path reads it): NumPy where called

        column = np.asarray(table[self.column])
        if len(self.values) == 1:
            return column == self.values[0]
        return np.isin(column, self.values)

    def rows(self, table: Mapping[str, object]) -> object:
        """Return the indices (int64) of the rows of ``table`` that pass."""
        import numpy as np

        return np.flatnonzero(self.mask(table))

    def sql(self, has_column: bool = True) -> str:
        """Return the SQL condition on the source table (``has_column``: whether it has
        :attr:`source`; else every row reads :attr:`fill`)."""
        column = (
            f"coalesce({quote_ident(self.source)}, {self.fill})" if has_column else str(self.fill)
        )
        if len(self.values) == 1:
            return f"{column} = {self.values[0]}"
        return f"{column} IN ({', '.join(str(v) for v in self.values)})"


#: OS runtime calls: the rows of OSRT_API that ``osrt_sum`` and the timeline count (not its
#: other event classes, spec §3.5).
OSRT_CALLS = EventFilter("event_class", "eventClass", (OSRT_CLASS_CALL,))


def column_spec(name: str, source: str, dtype: str = "int32", fill: int = 0) -> ColumnSpec:
    """Return the spec of column ``name`` read from ``source`` (int32 unless said; NULL and
    a missing column read as ``fill``)."""
    return ColumnSpec(name, source, dtype, fill)


_c = column_spec


@dataclass(frozen=True)
class TableSpec:
    """How the loader reads one kind's table: the event kind's table and column spec.

    Attributes
    ----------
    source
        The report's table (``CUPTI_ACTIVITY_KIND_KERNEL``).
    columns
        Our columns and their source columns, dtypes and NULL fills.
    names
        The columns holding StringIds ids (mapped to pool codes on read; -1 when NULL).
    key
        The track key columns (one track per distinct key); ``level`` is the nesting level
        of :attr:`nested` tables. Empty for the GPU tables, which share one stream key
        table, and NVTX (marks and ranges), which the loader keys itself.
    nested
        Its events nest per thread: the loader adds their nesting ``level`` column.
    row_filter
        Which rows are the kind's events (None: all).
    """

    source: str
    columns: tuple[ColumnSpec, ...]
    names: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    nested: bool = False
    row_filter: EventFilter | None = None

    def column(self, name: str) -> ColumnSpec:
        """Return the column ``name`` of the spec."""
        return next(c for c in self.columns if c.name == name)


_TIME = (_c("start_ns", "start", "int64"), _c("end_ns", "end", "int64"))
_GPU = (
    _c("device_id", "deviceId"),
    _c("context_id", "contextId"),
    _c("green_context_id", "greenContextId"),
    _c("stream_id", "streamId"),
    _c("correlation_id", "correlationId", "int64"),
    _c("global_pid", "globalPid", "int64"),
)

#: kind -> its table spec: the tables of the built-in kinds (analysis.kinds.builtin), here
#: as plain data because the SQL path of ``stats`` reads them without NumPy; a kind
#: registered elsewhere brings its own (:func:`add_table`).
SPECS: dict[str, TableSpec] = {
    "kernels": TableSpec(
        "CUPTI_ACTIVITY_KIND_KERNEL",
        _TIME
        + _GPU
        + (
            _c("name_id", "demangledName", fill=-1),
            _c("short_name_id", "shortName", fill=-1),
            _c("mangled_name_id", "mangledName", fill=-1),
            _c("grid_x", "gridX"),
            _c("grid_y", "gridY"),
            _c("grid_z", "gridZ"),
            _c("block_x", "blockX"),
            _c("block_y", "blockY"),
            _c("block_z", "blockZ"),
            _c("registers_per_thread", "registersPerThread"),
            _c("static_smem_bytes", "staticSharedMemory"),
            _c("dynamic_smem_bytes", "dynamicSharedMemory"),
        ),
        names=("name_id", "short_name_id", "mangled_name_id"),
    ),
    "memcpy": TableSpec(
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        _TIME
        + _GPU
        + (
            _c("bytes", "bytes", "int64"),
            _c("copy_kind", "copyKind"),
            _c("src_kind", "srcKind"),
            _c("dst_kind", "dstKind"),
        ),
    ),
    "memset": TableSpec(
        "CUPTI_ACTIVITY_KIND_MEMSET",
        _TIME
        + _GPU
        + (_c("bytes", "bytes", "int64"), _c("value", "value"), _c("mem_kind", "memKind")),
    ),
    "sync": TableSpec(
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", _TIME + _GPU + (_c("sync_type", "syncType"),)
    ),
    "cuda_api": TableSpec(
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        _TIME
        + (
            _c("global_tid", "globalTid", "int64"),
            _c("correlation_id", "correlationId", "int64"),
            _c("name_id", "nameId", fill=-1),
            _c("event_class", "eventClass"),
            _c("return_value", "returnValue", "int64"),
            # The call's backtrace in CUDA_CALLCHAINS (-1: none; spec §1.4).
            _c("callchain_id", "callchainId", "int64", fill=-1),
        ),
        names=("name_id",),
        key=("global_tid", "level"),
        nested=True,
    ),
    "osrt": TableSpec(
        "OSRT_API",
        _TIME
        + (
            _c("global_tid", "globalTid", "int64"),
            _c("name_id", "nameId", fill=-1),
            _c("event_class", "eventClass"),
        ),
        names=("name_id",),
        key=("global_tid", "level"),
        nested=True,
        row_filter=OSRT_CALLS,
    ),
    "nvtx": TableSpec(
        "NVTX_EVENTS",
        (
            _c("start_ns", "start", "int64"),
            _c("end_raw", "end", "int64", fill=-1),
            _c("event_type", "eventType"),
            _c("global_tid", "globalTid", "int64"),
            _c("end_global_tid", "endGlobalTid", "int64"),
            _c("text_id", "textId", fill=-1),
            _c("domain_id", "domainId", "int64"),
            _c("category", "category"),
            _c("color", "color", "int64", fill=-1),
            _c("range_id", "rangeId", "int64"),
        ),
        names=("text_id",),
    ),
    "sched": TableSpec(
        "SCHED_EVENTS",
        (
            _c("start_ns", "start", "int64"),
            _c("cpu", "cpu"),
            _c("is_sched_in", "isSchedIn", "int8"),
            _c("global_tid", "globalTid", "int64"),
        ),
        key=("cpu",),
    ),
    "samples": TableSpec(
        "COMPOSITE_EVENTS",
        (
            _c("start_ns", "start", "int64"),
            _c("cpu", "cpu"),
            _c("thread_state", "threadState"),
            _c("global_tid", "globalTid", "int64"),
            _c("sample_id", "id", "int64"),
        ),
        key=("global_tid",),
    ),
    "gpu_metrics": TableSpec(
        "GPU_METRICS",
        (
            _c("start_ns", "timestamp", "int64"),
            _c("type_id", "typeId", "int64"),  # 2^48 and above in real reports
            _c("metric_id", "metricId"),
            _c("value", "value", "int64"),
        ),
        key=("type_id", "metric_id"),
    ),
    # Allocations and frees of CUDA memory (spec §1.4): one instant per row; the name
    # column is an inline text (a variable name, mostly NULL) and is not read.
    "memory_usage": TableSpec(
        "CUDA_GPU_MEMORY_USAGE_EVENTS",
        (
            _c("start_ns", "start", "int64"),
            _c("global_pid", "globalPid", "int64"),
            _c("device_id", "deviceId"),
            _c("context_id", "contextId"),
            _c("address", "address", "int64"),
            _c("bytes", "bytes", "int64"),
            _c("mem_kind", "memKind"),
            _c("operation", "memoryOperationType", "int8"),
            _c("correlation_id", "correlationId", "int64"),
        ),
        key=("device_id",),
    ),
    # CUDA graph nodes (analysis/kinds/cuda_graph.py): nsys's DDL (export schema 3.x, spec §1.4):
    # eventClass 77, nameId the creating call, originalGraphNodeId NULL unless a clone (-1).
    "cuda_graph": TableSpec(
        "CUDA_GRAPH_NODE_EVENTS",
        (
            _c("start_ns", "start", "int64"),
            _c("end_ns", "end", "int64"),
            _c("global_tid", "globalTid", "int64"),
            _c("name_id", "nameId", fill=-1),
            _c("event_class", "eventClass"),
            _c("graph_node_id", "graphNodeId", "int64"),
            _c("original_graph_node_id", "originalGraphNodeId", "int64", fill=-1),
        ),
        names=("name_id",),
        key=("global_tid", "level"),
        nested=True,
    ),
}

CHAIN_COLUMNS = (
    _c("chain_id", "id", "int64", fill=-1),
    _c("depth", "stackDepth", "int64"),
    _c("symbol", "symbol", fill=-1),
    _c("module", "module", fill=-1),
)
#: Call chains (spec §1.4, §1.7): not events but frames, one row per (chain id, depth),
#: depth 0 the innermost. Read and checked as the event tables are (one validation), kept
#: as :attr:`Report.sample_chains` / :attr:`Report.cuda_chains` sorted by (chain, depth).
CHAIN_SPECS: dict[str, TableSpec] = {
    "sample_chains": TableSpec("SAMPLING_CALLCHAINS", CHAIN_COLUMNS, ("symbol", "module")),
    "cuda_chains": TableSpec("CUDA_CALLCHAINS", CHAIN_COLUMNS, ("symbol", "module")),
}
#: The event tables, then the call chains: every table the loader reads and checks.
ALL_SPECS: dict[str, TableSpec] = {**SPECS, **CHAIN_SPECS}
#: The kinds whose tables are the built-in ones (the others came through add_table).
BUILTIN_TABLES = tuple(SPECS)


def add_table(kind: str, spec: TableSpec) -> None:
    """Add the table of an event kind registered outside the built-in ones.

    Called by :func:`analysis.kinds.register` for a kind that brings a :class:`TableSpec`:
    from then on the loader reads it (its rows in ``report.tables[kind]``), checks it and
    caches it as any built-in table. The registry is filled when :mod:`analysis.kinds` is
    imported (a ReportSet, the export, the viewer import it): a report read before that
    lacks the table, and its cache entry is read again later. The ``stats`` SQL path and
    lean read, which import no kind module (no NumPy, no pandas), check the tables of the
    kinds registered in the process: in a plain ``stats`` run, the built-in ones.

    Raises
    ------
    ValueError
        ``kind`` has a table already, or the spec lacks a start column.
    """
    if kind in ALL_SPECS:
        raise ValueError(f"event table {kind!r} is specified already")
    if not any(c.name == "start_ns" for c in spec.columns):
        raise ValueError(f"event table {kind!r} has no start_ns column")
    SPECS[kind] = spec
    ALL_SPECS[kind] = spec


def event_tables() -> tuple[str, ...]:
    """Return the kinds of every event table the loader reads (built-in first)."""
    return tuple(SPECS)


#: Columns a present table must have, and that must never be NULL: without them every
#: event would silently start (or end) at 0. NVTX's NULL end means "a mark / still open".
REQUIRED = ("start_ns", "end_ns")


def suspect_rows(db: SqliteReport, kind: str, strings: StringPool, checked: set[str]) -> str | None:
    """An SQL condition true on every row the loader would refuse (and on a few others).

    Text, blobs (and a NULL where a value is required) sort above any number, so one
    ``max(...) >= ''`` per row finds them; a real number, or a duration beyond int64, makes
    a sum of the columns real. ``max()`` and ``+`` give NULL when one value is NULL, so the
    exact test wraps every column in ``coalesce``; that costs as much as the two tests
    themselves (2 M kernels x 17 columns). So each row is first tested without it, with
    ``coalesce`` only on the columns that are NULL in the table's first row (a column NULL
    throughout, like ``greenContextId``): a sum that is an integer proves that no other value
    is NULL, and then ``max()`` is exact; a real sum is suspect; a NULL sum (a NULL the
    sample did not predict) takes the exact test. CPU per million kernels (17 columns, busy
    2-core machine): 0.56 s instead of 0.60 s alone, 0.57 s instead of 0.74 s for the lean
    stats read plus a separate scan when selected with the read's columns. None: nothing
    left to check.
    """
    todo = unchecked_columns(db, kind, checked)
    if not todo:
        return None
    spec = ALL_SPECS[kind]
    table, cols = spec.source, spec.columns
    present = set(db.columns(table))
    names = {c.source for c in cols if c.name in spec.names}
    q = {c: quote_ident(c) for c in todo}
    required = {c.source for c in cols if c.name in REQUIRED and c.source in q}
    first = db.execute(
        f"SELECT {', '.join(f'{q[s]} IS NULL' for s in q)} FROM {quote_ident(table)} LIMIT 1"
    )
    sampled_null = {s for s, null in zip(q, first[0] if first else (), strict=False) if null}
    # Timestamps enter the sum as a duration (small), so that real ones or an overflowing
    # difference make it real but two large timestamps do not overflow it.
    ends = kind != "nvtx" and {"start", "end"} <= set(q)

    def tests(nullable: set[str]) -> tuple[str, str]:
        """``max(...) >= ''`` and the sum, ``coalesce`` around the ``nullable`` columns."""
        terms = [
            f"coalesce({q[s]}, x'')" if s in required
            else f"coalesce({q[s]}, 0)" if s in nullable else q[s]
            for s in q
        ]  # fmt: skip
        summed = ['("end" - "start")'] if ends else []  # both required: max() catches a NULL
        for s in q:
            if kind == "nvtx" and s == "end":  # NULL: a mark or an open range
                summed.append(
                    'coalesce("end" - "start", 0)' if s in nullable else '("end" - "start")'
                )
            elif not (ends and s in ("start", "end")):
                summed.append(f"coalesce({q[s]}, 0)" if s in nullable else q[s])
        return f"max(0, {', '.join(terms)}) >= ''", " + ".join(summed)

    exact_max, exact_sum = tests(set(q))
    exact = f"{exact_max} OR typeof({exact_sum}) = 'real'"
    fast_max, fast_sum = tests(sampled_null - required)
    if fast_sum == exact_sum:
        suspect = [exact]
    else:
        suspect = [
            f"CASE typeof({fast_sum}) WHEN 'integer' THEN {fast_max} "
            f"WHEN 'real' THEN 1 ELSE ({exact}) END"
        ]
    if ends:
        suspect.append('"end" < "start"')
    elif kind == "nvtx":
        # A range that ends before it starts, or an open one lasting beyond int64 (both
        # judged by _finish_nvtx); -1 is the loader's "no end".
        suspect.append(_open_overflow(db, table, present))
        if "end" in q:
            suspect.append('("end" < "start" AND "end" != -1)')
    suspect += [strings.absent_sql(q[s]) for s in names if s in q]
    return " OR ".join(suspect)


def unchecked_columns(db: SqliteReport, kind: str, checked: Collection[str]) -> list[str]:
    """The source columns of ``kind``'s table that :func:`suspect_rows` tests: those present
    but not ``checked`` by the caller (start and end only as a pair)."""
    spec = ALL_SPECS[kind]
    present = set(db.columns(spec.source))
    times = {"start", "end"} if {"start", "end"} <= set(checked) else set()
    return [
        c.source for c in spec.columns if c.source in present and c.source not in {*checked, *times}
    ]


def ranged_columns(kind: str) -> set[str]:
    """The source columns of ``kind`` whose largest value :func:`suspect_in_summaries`
    reads (name ids); of the others it reads only the counts by type."""
    spec = ALL_SPECS[kind]
    return {c.source for c in spec.columns if c.name in spec.names}


def suspect_in_summaries(kind: str, strings: StringPool, summaries: Mapping[str, _Summary]) -> bool:
    """Whether a row might break a rule, judged from one scan's summary of each column of
    :func:`unchecked_columns` (``summaries``, by source column): what :func:`suspect_rows`
    tests row by row, for the tables whose start and end the caller checked itself.

    A value that is not an integer, a NULL where a value is required, a name id the pool
    may lack; a pool that is not nsys's dense layout makes any name id suspect. NVTX (whose
    open ranges depend on other rows) is always suspect here.
    """
    if kind == "nvtx" or {"start", "end"} & set(summaries):
        return True  # open ranges, durations: judged across columns, not per column
    spec = ALL_SPECS[kind]
    by_source = {c.source: c for c in spec.columns}
    names = spec.names
    for source, seen in summaries.items():
        col = by_source[source]
        if seen.others or (seen.nulls and col.name in REQUIRED):
            return True
        if col.name in names and seen.max is not None:
            # Negative ids mean "no name"; others must be in the pool (one comparison where
            # it is dense, any id >= 0 otherwise).
            limit = 0 if strings.dense_size is None else strings.dense_size
            if seen.max >= limit:
                return True
    return False


def _open_overflow(db: SqliteReport, table: str, present: set[str]) -> str:
    """An SQL condition true on the NVTX rows whose loaded duration passes int64: the open
    ranges (no end, or -1) that start so far before the largest NVTX timestamp (where the
    loader ends them) that ``end - start`` overflows. A mark or a closed range starting
    before 0 is fine (a closed range's own ``end - start`` is summed by the caller).

    Where that largest timestamp is not one integer (a table the other terms refuse
    anyway), every row starting before 0.
    """
    end = '"end"' if "end" in present else "NULL"
    last_end = f"max(CASE WHEN {end} != -1 THEN {end} END)"
    row = db.execute(f'SELECT max("start"), {last_end} FROM {quote_ident(table)}')
    ends = [v for v in row[0] if v is not None] if row else []
    if not ends:
        return "0"  # no rows: nothing to refuse
    if not all(type(v) is int for v in ends):
        return '"start" < 0'
    event_type = 'coalesce("eventType", 0)' if "eventType" in present else "0"
    ranges = ", ".join(str(t) for t in NVTX_RANGE_TYPES)
    return (
        f'("start" < 0 AND coalesce({end}, -1) = -1 AND {event_type} IN ({ranges}) '
        f"AND typeof({max(ends)} - \"start\") = 'real')"
    )
