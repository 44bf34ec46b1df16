"""Summaries of a small report computed inside SQLite: no columns loaded, no cache written.

``nsys stats`` computes its summaries in SQL. On a report of about a thousand events, asking
SQLite for the rows (Python's ``sqlite3``) takes half the time of the column path's columnar
read (:func:`analysis.stats.lean.open_for_stats` then :func:`analysis.stats.run_report`), and
writes no cache entry; from ~10,000 events on, the columnar read wins.
:mod:`analysis.stats.compute` chooses between the two per report.

The answers are the column path's to the byte, by construction:

* the report is checked by the column path's own functions (those of ``info``'s load, run
  inside SQLite); a report they refuse is not answered here (:class:`NotServed`), so the
  column path refuses it with its own message;
* SQLite selects each summary's rows, resolves what names them (``coalesce`` of the kernel
  name columns, the copy kinds that have a label, OS runtime calls only) and returns one
  ``(group key, value)`` per event; the column path's engine
  (:func:`analysis.engine.group_stats`) reduces them, so totals never wrap, medians are
  exact and every double is the column path's to the last bit;
* the groups are labelled and turned into tables by the column path's own functions
  (:func:`~analysis.stats.cuda.kernel_frame` and friends), in the column path's group
  order: rounding, percent column, ordering and units are shared code.

What is not answered here (:class:`NotServed`) goes to the column path: other summaries,
a kernel or memory-operation name held by two string ids (the column path merges them),
a total beyond int64, a report the checks refuse, anything that is not a plain SQLite file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import metadata
from analysis._sqlite import ReportDatabase, quote_ident
from analysis._strings import StringTable, read_string_table
from analysis.engine import GroupStats, group_stats
from analysis.errors import StrataError
from analysis.loader import check_event_tables
from analysis.names import MEMSET_NAME, api_display_names
from analysis.schema import OSRT_CLASS_CALL
from analysis.stats import cuda
from analysis.stats._base import SkipReport, StatsResult, TotalOverflowError
from analysis.stats.catalog import parse_spec

__all__ = ["SQL_REPORTS", "NotServed", "sql_summaries"]

_KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
_MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class NotServed(Exception):  # noqa: N818 - a control-flow signal, caught by compute
    """This report (or summary) is left to the column path, which gives the answer."""


class _Db:
    """The open report, its string pool and name, for the summary functions."""

    def __init__(self, db: ReportDatabase, strings: StringTable) -> None:
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

    def texts(self, ids: Sequence[int | None]) -> np.ndarray:
        """The string of each id (None for None), as the column path labels groups."""
        known = [i for i in ids if i is not None]
        codes = self.strings.codes(np.array(known, dtype=np.int64), "StringIds")
        values = iter(self.strings.values[codes].tolist())
        return np.array([None if i is None else next(values) for i in ids], dtype=object)


def _group_rows(ctx: _Db, source: str) -> tuple[list, GroupStats]:
    """Group ``source``'s ``(k, v)`` rows by ``k`` (ascending, NULL last); return (the key
    of each group, its statistics, by the column path's engine).

    SQLite selects, filters and names; the engine reduces the values it returns. Measured on
    the 33,681 API calls of a real report: fetching them and :func:`group_stats` take
    0.015 s, SQLite's own window functions (for the exact median) 0.05 s; and one reduction
    gives the column path's doubles to the last bit (a standard deviation summed in another
    order differs there, which the unrounded size summary shows in JSON).
    """
    rows = ctx.db.execute(source)
    if not rows:
        return [], group_stats(np.empty(0, np.int64), np.empty(0, np.int64))
    keys = [r[0] for r in rows]
    distinct = sorted({k for k in keys if k is not None})
    code_of = {k: i for i, k in enumerate(distinct)}
    if len(distinct) < len(set(keys)):
        distinct.append(None)  # NULL groups last, as the column path orders its codes
    codes = np.fromiter((code_of.get(k, len(code_of)) for k in keys), np.int64, len(keys))
    values = np.fromiter((r[1] for r in rows), np.int64, len(rows))
    return distinct, group_stats(codes, values)


def _duration(table: str) -> str:
    return f'SELECT {{k}} AS k, "end" - "start" AS v FROM {quote_ident(table)}'


def _distinct_labels(labels: np.ndarray) -> np.ndarray:
    """``labels`` when no text names two groups; else NotServed (the column path merges)."""
    named = [t for t in labels.tolist() if t is not None]
    if len(set(named)) != len(named):
        raise NotServed("two groups with one name")
    return labels


def _kernels(ctx: _Db, args: tuple[str, ...]):
    if not ctx.has(_KERNEL):
        raise SkipReport(f"{ctx.name} does not contain CUDA kernel data.")
    # coalesce(<variant>, demangledName), as analysis.names.kernel_name_ids.
    key = ctx.string_id(_KERNEL, "demangledName")
    variant = {"base": "shortName", "mangled": "mangledName"}.get(args[0] if args else "")
    if variant and ctx.db.has_column(_KERNEL, variant):
        key = f"coalesce({ctx.string_id(_KERNEL, variant)}, {key})"
    keys, stats = _group_rows(ctx, _duration(_KERNEL).format(k=key))
    return cuda.kernel_frame(_distinct_labels(ctx.texts(keys)), stats)


def _api(ctx: _Db, args: tuple[str, ...]):
    if not ctx.has(_RUNTIME):
        raise SkipReport(f"{ctx.name} does not contain CUDA trace data.")
    keys, stats = _group_rows(ctx, _duration(_RUNTIME).format(k=ctx.string_id(_RUNTIME, "nameId")))
    return cuda.calls_frame(api_display_names(ctx.texts(keys)), stats)


def _osrt(ctx: _Db, args: tuple[str, ...]):
    table = "OSRT_API"
    if not ctx.has(table):
        raise SkipReport(f"{ctx.name} does not contain OS Runtime trace data.")
    source = _duration(table).format(k=ctx.string_id(table, "nameId"))
    source += f" WHERE coalesce({ctx.column(table, 'eventClass', '0')}, 0) = {OSRT_CLASS_CALL}"
    keys, stats = _group_rows(ctx, source)
    return cuda.calls_frame(ctx.texts(keys), stats)


def _memory(ctx: _Db, value: str) -> tuple[np.ndarray, GroupStats]:
    """Memcpy rows whose copy kind has a label (nsys's inner join), then memsets, grouped
    by operation name; ``value``: 'duration' or 'bytes'."""
    if ctx.has(_MEMCPY) and not ctx.has("ENUM_CUDA_MEMCPY_OPER"):
        raise SkipReport(f"{ctx.name} does not contain ENUM_CUDA_MEMCPY_OPER table.")
    if not ctx.has(_MEMCPY) and not ctx.has(_MEMSET):
        raise SkipReport(f"{ctx.name} does not contain GPU memory data.")
    labels = metadata.read_enums(ctx.db)["memcpy_kind"]
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
    names = [MEMSET_NAME if k is None else f"[CUDA memcpy {labels[k]}]" for k in keys]
    return _distinct_labels(np.array(names, dtype=object)), stats


def _memory_time(ctx: _Db, args: tuple[str, ...]):
    return cuda.memory_time_frame(*_memory(ctx, "duration"))


def _memory_size(ctx: _Db, args: tuple[str, ...]):
    return cuda.memory_size_frame(*_memory(ctx, "bytes"))


#: Summary spec (name and arguments as :func:`parse_spec` normalises them) -> function.
_SUMMARIES: dict[str, Callable] = {
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


def normal_spec(spec: str) -> str:
    """``name[:arg...]`` as :func:`analysis.stats.run_report` names its result."""
    report_spec, args = parse_spec(spec)
    return ":".join((report_spec.name, *args))


def sql_summaries(path: str | Path, specs: Sequence[str]) -> tuple[str, list[StatsResult]]:
    """Compute ``specs`` inside SQLite; return (report name, one result per spec).

    Raises
    ------
    NotServed
        The column path must answer (a summary not in :data:`SQL_REPORTS`, a report the
        checks refuse, see the module docstring).
    """
    names = [normal_spec(s) for s in specs]
    if any(n not in _SUMMARIES for n in names):
        raise NotServed("a summary this path does not compute")
    try:
        with ReportDatabase(path) as db:
            ctx = _Db(db, _checked_strings(db))
            return ctx.name, [_result(ctx, n) for n in names]
    except StrataError as exc:
        raise NotServed(str(exc)) from exc


def _checked_strings(db: ReportDatabase) -> StringTable:
    """Check the report as ``info``'s load does (inside SQLite); return its string pool."""
    if not db.has_table("StringIds"):
        raise NotServed("no StringIds table")
    metadata.read_info(db)
    strings = read_string_table(db)
    metadata.check_descriptive_tables(db)
    check_event_tables(db, strings)
    return strings


def _result(ctx: _Db, name: str) -> StatsResult:
    report_spec, args = parse_spec(name)
    try:
        frame, units = _SUMMARIES[name](ctx, args)
    except TotalOverflowError as exc:
        # nsys's sum() fails there; the column path names the group as nsys fails.
        raise NotServed(str(exc)) from exc
    except SkipReport as skip:
        return StatsResult(name, report_spec.title, pd.DataFrame(), {}, str(skip))
    return StatsResult(name, report_spec.title, frame, units, None)
