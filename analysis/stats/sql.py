"""Summaries of a small report computed inside SQLite: no columns loaded, no cache written,
and neither NumPy, pandas nor pyarrow imported (plain Python from the query to the table).

``nsys stats`` computes its summaries in SQL. On a report of about a thousand events, asking
SQLite for the rows (Python's ``sqlite3``) takes half the time of the column path's columnar
read (:func:`analysis.stats.lean.open_for_stats` then :func:`analysis.stats.run_report`), and
writes no cache entry; from ~10,000 events on, the columnar read wins. Without the heavy
imports a first ``stats`` on a small report is a few times the interpreter's own start-up.
:mod:`analysis.stats.compute` chooses between the two per report.

The answers are the column path's to the byte:

* the report is checked by the loader's own rules, read from plain data: its version and
  descriptive tables (:mod:`analysis._metarows`), StringIds (:mod:`analysis._stringpool`),
  and per event table a missing start or end column or any row the loader might refuse
  (:func:`analysis._tablespecs.suspect_rows`); such a report is not answered here
  (:class:`NotServed`), so the column path refuses it with its own message;
* SQLite selects each summary's rows, resolves what names them (``coalesce`` of the kernel
  name columns, the copy kinds that have a label, OS runtime calls only) and returns one
  ``(group key, value)`` per event (for ``nvtx_sum``, every NVTX row: the loader's rules for
  open ranges and domains are applied in Python, labels and styles by
  :mod:`analysis.nametext`); :func:`analysis.plainstats.group_stats` reduces them as
  the column path's engine does (totals exact, medians exact, every double the engine's to
  the last bit: a Hypothesis test compares the two);
* the groups are labelled by the shared spelling rules (:mod:`analysis.nametext`) and
  turned into :class:`~analysis.stats.plain.PlainResult` tables by
  :mod:`analysis.stats.plaintables` (nsys's percent column, rounding, ordering and units),
  printed by :mod:`analysis.stats.text` as the column path's tables are.

What is not answered here (:class:`NotServed`) goes to the column path: other summaries,
a kernel or memory-operation name held by two string ids (the column path merges them),
a total beyond int64, a report the checks refuse or suspect, anything that is not a plain
SQLite file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from strata.analysis._metarows import check_descriptive_tables, info_fields, read_enums
from strata.analysis._sqlfile import SqliteReport, quote_ident
from strata.analysis._stringpool import PlainStrings
from strata.analysis._tablespecs import ALL_SPECS, REQUIRED, SPECS, suspect_rows
from strata.analysis.errors import StrataError
from strata.analysis.nametext import (
    MEMSET_NAME,
    api_display_name,
    memcpy_name,
    nvtx_domain_names,
    nvtx_label,
    nvtx_style,
)
from strata.analysis.plainstats import PlainGroupStats, group_stats
from strata.analysis.schema import NVTX_RANGE_TYPES, NVTX_TYPE_DOMAIN_CREATE
from strata.analysis.stats import plaintables
from strata.analysis.stats.absent_specs import (
    ABSENT_REPORTS,
    UM_TOTAL_COLUMNS,
    AbsentSkip,
    absent_verdict,
)
from strata.analysis.stats.catalog import parse_spec
from strata.analysis.stats.plain import PlainColumn, PlainResult

__all__ = ["SQL_REPORTS", "NotServed", "sql_summaries"]

_KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
_MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
_NVTX = "NVTX_EVENTS"


class NotServed(Exception):  # noqa: N818 - a control-flow signal, caught by compute
    """This report (or summary) is left to the column path, which gives the answer."""


class _Skip(Exception):  # noqa: N818 - a control-flow signal, caught by _result
    """The report lacks the summary's tables: nsys's SKIPPED message."""


class _Db:
    """The open report, its string pool and name, for the summary functions."""

    def __init__(self, db: SqliteReport, strings: PlainStrings) -> None:
        self.db = db
        self.strings = strings
        self.name = db.path.name

    def has(self, table: str) -> bool:
        return table in self.db.tables

    def column(self, table: str, column: str, fill: str = "NULL") -> str:
        """``column`` quoted, or ``fill`` where the table lacks it (as the loader fills)."""
        return quote_ident(column) if self.db.has_column(table, column) else fill

    def string_id(self, table: str, column: str) -> str:
        """A StringIds id column as the loader reads it: NULL or negative ids are NULL."""
        col = self.column(table, column)
        return f"CASE WHEN {col} >= 0 THEN {col} END"

    def texts(self, ids: Sequence[int | None]) -> list[str | None]:
        """The string of each id (None for None), as the column path labels groups."""
        try:
            return [None if i is None else self.strings.text(i) for i in ids]
        except KeyError as exc:  # the checks refuse such a report before: never here
            raise NotServed(f"StringIds lacks id {exc}") from exc


def _group_rows(ctx: _Db, source: str) -> tuple[list, PlainGroupStats]:
    """Group ``source``'s ``(k, v)`` rows by ``k`` (ascending, NULL last); return (the key
    of each group, its statistics).

    SQLite selects, filters and names; :func:`analysis.plainstats.group_stats` reduces the
    values it returns as the column path's engine does, to the last bit (and one reduction
    in Python is cheaper than SQLite's window functions for the exact median: 0.05 s for
    the 33,681 API calls of a real report).
    """
    groups: dict[object, list[int]] = {}
    for key, value in ctx.db.execute(source):
        groups.setdefault(key, []).append(value)
    keys = sorted(k for k in groups if k is not None)
    if None in groups:
        keys.append(None)  # NULL groups last, as the column path orders its codes
    return keys, group_stats([groups[k] for k in keys])


def _duration(table: str) -> str:
    return f'SELECT {{k}} AS k, "end" - "start" AS v FROM {quote_ident(table)}'


def _distinct_labels(labels: list) -> list:
    """``labels`` when no text names two groups; else NotServed (the column path merges)."""
    named = [t for t in labels if t is not None]
    if len(set(named)) != len(named):
        raise NotServed("two groups with one name")
    return labels


#: What a summary function returns: the table builder, one label per group, the groups.
_Groups = tuple[Callable[..., plaintables.Table], list, PlainGroupStats]


def _kernels(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    if not ctx.has(_KERNEL):
        raise _Skip(f"{ctx.name} does not contain CUDA kernel data.")
    # coalesce(<variant>, demangledName), as analysis.names.kernel_name_ids.
    key = ctx.string_id(_KERNEL, "demangledName")
    variant = {"base": "shortName", "mangled": "mangledName"}.get(args[0] if args else "")
    if variant and ctx.db.has_column(_KERNEL, variant):
        key = f"coalesce({ctx.string_id(_KERNEL, variant)}, {key})"
    keys, stats = _group_rows(ctx, _duration(_KERNEL).format(k=key))
    return plaintables.kernel_table, _distinct_labels(ctx.texts(keys)), stats


def _api(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    if not ctx.has(_RUNTIME):
        raise _Skip(f"{ctx.name} does not contain CUDA trace data.")
    keys, stats = _group_rows(ctx, _duration(_RUNTIME).format(k=ctx.string_id(_RUNTIME, "nameId")))
    return plaintables.calls_table, [api_display_name(t) for t in ctx.texts(keys)], stats


def _osrt(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    table = "OSRT_API"
    if not ctx.has(table):
        raise _Skip(f"{ctx.name} does not contain OS Runtime trace data.")
    source = _duration(table).format(k=ctx.string_id(table, "nameId"))
    # The osrt kind's own filter (its table spec's, as analysis.kinds reads it), in SQL.
    calls = SPECS["osrt"].row_filter
    source += f" WHERE {calls.sql(ctx.db.has_column(table, calls.source))}"
    keys, stats = _group_rows(ctx, source)
    return plaintables.calls_table, ctx.texts(keys), stats


def _memory(ctx: _Db, value: str) -> tuple[list, PlainGroupStats]:
    """Memcpy rows whose copy kind has a label (nsys's inner join), then memsets, grouped
    by operation name; ``value``: 'duration' or 'bytes'."""
    if ctx.has(_MEMCPY) and not ctx.has("ENUM_CUDA_MEMCPY_OPER"):
        raise _Skip(f"{ctx.name} does not contain ENUM_CUDA_MEMCPY_OPER table.")
    if not ctx.has(_MEMCPY) and not ctx.has(_MEMSET):
        raise _Skip(f"{ctx.name} does not contain GPU memory data.")
    labels = read_enums(ctx.db)["memcpy_kind"]
    parts = []
    for table, key in ((_MEMCPY, f"coalesce({ctx.column(_MEMCPY, 'copyKind', '0')}, 0)"),
                       (_MEMSET, "NULL")):  # fmt: skip
        if not ctx.has(table):
            continue
        v = (
            '"end" - "start"'
            if value == "duration"
            else f"coalesce({ctx.column(table, 'bytes', '0')}, 0)"
        )
        part = f"SELECT {key} AS k, {v} AS v FROM {quote_ident(table)}"
        if table == _MEMCPY:
            part += f" WHERE {key} IN ({', '.join(str(int(k)) for k in labels) or 'NULL'})"
        parts.append(part)
    keys, stats = _group_rows(ctx, " UNION ALL ".join(parts))
    names = [MEMSET_NAME if k is None else memcpy_name(labels[k]) for k in keys]
    return _distinct_labels(names), stats


def _memory_time(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    return plaintables.memory_time_table, *_memory(ctx, "duration")


def _memory_size(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    return plaintables.memory_size_table, *_memory(ctx, "bytes")


def _pid(global_tid: int) -> int:
    """:func:`analysis.schema.pid_of` of one id."""
    return (global_tid >> 24) & 0xFFFFFF


def _nvtx_rows(ctx: _Db) -> list[tuple]:
    """Every NVTX_EVENTS row as the loader reads it: (rowid, start, end or -1, event type,
    pid (bits 24-47 of globalTid), domain id, text or None), the text
    ``coalesce(StringIds[textId], text)``.

    Text that is not UTF-8 reads with U+FFFD for each bad sequence, as the loader reads it
    (:func:`analysis.loader._text_column`); NotServed where an inline text is not text at
    all (a number or blob: the column path reads it through Arrow).
    """
    t = _NVTX
    text = ctx.column(t, "text")
    if text != "NULL" and ctx.db.any_row(t, "typeof(text) NOT IN ('text', 'null')"):
        raise NotServed("NVTX text that is not text")

    def filled(column: str, fill: int) -> str:
        return f"coalesce({ctx.column(t, column)}, {fill})"

    rows = ctx.db.execute(
        f'SELECT rowid, "start", {filled("end", -1)}, {filled("eventType", 0)}, '
        f"{filled('globalTid', 0)}, {filled('domainId', 0)}, "
        f"{ctx.string_id(t, 'textId')}, CAST({text} AS BLOB) FROM {quote_ident(t)}"
    )
    out = []
    try:
        for rowid, start, end, event_type, tid, domain, text_id, inline in rows:
            if text_id is not None:
                label = ctx.strings.text(text_id)
            else:  # bytes that are not UTF-8 read as the loader reads them (U+FFFD)
                label = None if inline is None else inline.decode("utf-8", "replace")
            out.append((rowid, start, end, event_type, _pid(tid), domain, label))
    except KeyError as exc:  # the checks refuse such a report before: never here
        raise NotServed(f"StringIds lacks id {exc}") from exc
    return out


def _nvtx(ctx: _Db, args: tuple[str, ...]) -> _Groups:
    """nvtx_sum: ranges grouped by (label, style), as analysis.stats.nvtx_reports."""
    if not ctx.has(_NVTX):
        raise _Skip(f"{ctx.name} does not contain NV Tools Extension (NVTX) data.")
    rows = _nvtx_rows(ctx)
    # The loader's rules (analysis.loader._finish_nvtx): an open range (no end, or -1)
    # ends at the largest NVTX timestamp.
    last = max((max(r[1], r[2]) if r[2] != -1 else r[1] for r in rows), default=0)
    domains = nvtx_domain_names(
        (start, rowid, pid, domain, "" if text is None else text)
        for rowid, start, _, event_type, pid, domain, text in rows
        if event_type == NVTX_TYPE_DOMAIN_CREATE
    )
    groups: dict[tuple, list[int]] = {}
    for _, start, end, event_type, pid, domain, text in rows:
        if event_type in NVTX_RANGE_TYPES:
            label = nvtx_label(domains.get((pid, domain)), text)
            key = (label, nvtx_style(event_type))
            groups.setdefault(key, []).append((last if end == -1 else end) - start)
    # (label, style) ascending, NULL labels last: the column path's group order.
    keys = sorted(groups, key=lambda k: (k[0] is None, k[0] or "", k[1]))
    return _range_table, keys, group_stats([groups[k] for k in keys])


def _range_table(keys: list[tuple], stats: PlainGroupStats) -> plaintables.Table:
    return plaintables.nvtx_table([k[0] for k in keys], [k[1] for k in keys], stats)


#: Summary spec (name and arguments as :func:`parse_spec` normalises them) -> function.
_SUMMARIES: dict[str, Callable] = {
    "nvtx_sum": _nvtx,
    "cuda_gpu_kern_sum": _kernels,
    "cuda_gpu_kern_sum:base": _kernels,
    "cuda_gpu_kern_sum:mangled": _kernels,
    "cuda_api_sum": _api,
    "osrt_sum": _osrt,
    "cuda_gpu_mem_time_sum": _memory_time,
    "cuda_gpu_mem_size_sum": _memory_size,
}
#: The summaries this path computes.
SQL_REPORTS = frozenset(_SUMMARIES)
_FILTERS = ("start=", "end=", "nvtx=")


def normal_spec(spec: str) -> str:
    """``name[:arg...]`` as :func:`analysis.stats.run_report` names its result."""
    report_spec, args = parse_spec(spec)
    return ":".join((report_spec.name, *args))


def serves(name: str) -> bool:
    """Whether this path computes the summary ``name`` (a :func:`normal_spec`): one of
    :data:`SQL_REPORTS`, or a report of data Strata does not load (nsys's SKIPPED line or
    empty table, :mod:`analysis.stats.absent_specs`) without a filter."""
    base, *args = name.split(":")
    if name in _SUMMARIES:
        return True
    return base in ABSENT_REPORTS and not any(a.startswith(_FILTERS) for a in args)


def _absent(ctx: _Db, name: str, title: str) -> PlainResult:
    """A report of data Strata does not load, as :mod:`analysis.stats.absent` prints it."""

    def has_rows(sources: list[str]) -> bool:
        for source in sources:
            query = (
                source if source.startswith("SELECT") else f"SELECT 1 FROM {quote_ident(source)}"
            )
            if ctx.db.execute(f"{query} LIMIT 1"):
                return True
        return False

    try:
        verdict = absent_verdict(name.split(":")[0], ctx.name, ctx.db.tables, has_rows)
    except AbsentSkip as skip:
        return PlainResult(name, title, (), {}, str(skip))
    except StrataError as exc:  # rows Strata does not summarise: the column path says so
        raise NotServed(str(exc)) from exc
    if verdict == "empty":
        return PlainResult(name, title, ())
    columns = tuple(
        PlainColumn(c, "<i8", [0])
        if c == "Total CPU Page Faults"
        else PlainColumn(c, "object", [None])
        for c in UM_TOTAL_COLUMNS
    )
    units = {"Total HtoD Migration Size": "mem", "Total DtoH Migration Size": "mem"}
    return PlainResult(name, title, columns, units)


def sql_summaries(path: str | Path, specs: Sequence[str]) -> tuple[str, list[PlainResult]]:
    """Compute ``specs`` inside SQLite; return (report name, one result per spec).

    Raises
    ------
    NotServed
        The column path must answer (a summary not in :data:`SQL_REPORTS`, a report the
        checks refuse, see the module docstring).
    """
    names = [normal_spec(s) for s in specs]
    if not all(map(serves, names)):
        raise NotServed("a summary this path does not compute")
    try:
        with SqliteReport(path) as db:
            ctx = _Db(db, _checked_strings(db))
            return ctx.name, [_result(ctx, n) for n in names]
    except StrataError as exc:
        raise NotServed(str(exc)) from exc


def _checked_strings(db: SqliteReport) -> PlainStrings:
    """Check the report as ``info``'s load does (inside SQLite); return its string pool.

    The loader's own rules, read from plain data: its version and descriptive-table checks
    (:mod:`analysis._metarows`), StringIds (:mod:`analysis._stringpool`) and, per event
    table, a missing start or end column or any row the loader might refuse
    (:func:`analysis._tablespecs.suspect_rows`): such a report is the column path's, which
    refuses it with its own message (or answers it, for the rare row only suspected).
    """
    if not db.has_table("StringIds"):
        raise NotServed("no StringIds table")
    info_fields(db)
    strings = PlainStrings.read(db)
    check_descriptive_tables(db)
    for kind, spec in ALL_SPECS.items():
        table, cols = spec.source, spec.columns
        present = set(db.columns(table))  # a view named like an nsys table raises
        if not present:
            continue
        if any(c.name in REQUIRED and c.source not in present for c in cols):
            raise NotServed(f"{table} lacks its start or end column")
        where = suspect_rows(db, kind, strings, set())
        if where and db.any_row(table, where):
            raise NotServed(f"{table} has rows the loader may refuse")
    return strings


def _result(ctx: _Db, name: str) -> PlainResult:
    report_spec, args = parse_spec(name)
    if name not in _SUMMARIES:
        return _absent(ctx, name, report_spec.title)
    try:
        build, labels, stats = _SUMMARIES[name](ctx, args)
        return PlainResult(name, report_spec.title, *build(labels, stats))
    except plaintables.TotalOverflowError as exc:
        # nsys's sum() fails there; the column path names the group as nsys fails.
        raise NotServed(str(exc)) from exc
    except _Skip as skip:
        return PlainResult(name, report_spec.title, (), {}, str(skip))
