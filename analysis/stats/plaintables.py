"""The rules of the summary tables, in plain Python: the one owner of nsys's percent column,
the statistics block and its rounding, the overflow check, the row order and the units, and
of the tables both ways of ``stats`` compute (cuda_gpu_kern_sum, cuda_api_sum, osrt_sum,
the two memory summaries, nvtx_sum).

:mod:`analysis.stats.sql` computes a small report's summaries without NumPy or pandas: one
label and :class:`~analysis.plainstats.PlainGroupStats` per group go in, the columns of a
:class:`~analysis.stats.plain.PlainResult` come out, printed by :mod:`analysis.stats.text`.
The column path (:mod:`analysis.stats._base` and the summaries over it) calls the same
functions on its group rows (a summary has few: one per name) and makes a DataFrame of what
they return, so both print the same bytes (parity tests in tests/analysis/test_stats_sql.py
compare every format on every real report).

The rules are nsys's (spec: nsys-sqlite.md §3.1): ``Time`` is ``round(100 * total /
sum(total), 1)``, averages, medians and deviations rounded to one decimal as SQLite rounds
(not in the size summary), a total (or the sum of the totals) past int64 fails as nsys's
``sum()`` fails, rows ordered stably with NULL values last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from strata.analysis.errors import AnalysisError
from strata.analysis.plainstats import PlainGroupStats, sqlite_round
from strata.analysis.stats.plain import PlainColumn

__all__ = [
    "Table",
    "TotalOverflowError",
    "calls_table",
    "checked_totals",
    "kernel_table",
    "memory_size_table",
    "memory_time_table",
    "nvtx_table",
    "overflow_error",
    "percent_column",
    "percents",
    "row_order",
    "stat_columns",
    "units_of",
]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_TIMED = frozenset({"Total Time", "Avg", "Med", "Min", "Max", "StdDev", "Total"})
#: dtype texts of the pandas columns the column path builds (:mod:`analysis.stats.plain`).
_INT, _FLOAT, _OBJECT = "<i8", "<f8", "object"

#: One column of a table: (name, dtype text, values).
_Column = tuple[str, str, list]
#: A built table: its columns in order, and the unit of each.
Table = tuple[tuple[PlainColumn, ...], dict[str, str | None]]


class TotalOverflowError(AnalysisError):
    """A summary's sum (one group's, or the sum of the groups') passes the int64 range.

    nsys's SQL ``sum()`` raises "integer overflow" there and prints no table; so do we
    (:func:`analysis.stats._base.register` adds the report and summary to the message; the
    SQL path leaves such a report to the column path, which says so).
    """


def units_of(columns: Iterable[str], mem: bool = False) -> dict[str, str | None]:
    """Unit categories of a summary's standard columns (everything else is unit-less):
    durations (``mem``: sizes) for the totals and statistics, ``ratio`` for ``Time``."""
    kind = "mem" if mem else "dur"
    units: dict[str, str | None] = {}
    for col in columns:
        base = col
        for prefix in ("Proj ", "T", "A", "Q", "K"):
            if col.startswith(prefix) and col[len(prefix) :] in _TIMED:
                base = col[len(prefix) :]
        units[col] = kind if base in _TIMED else None
    if "Time" in units:
        units["Time"] = "ratio"
    return units


def overflow_error(report_name: str, name: str, exc: TotalOverflowError) -> AnalysisError:
    """The error summary ``name`` of a report ends with when a total passes int64."""
    return AnalysisError(
        f"{report_name}: {name}: {exc} (nsys stats stops on the same 'integer overflow'); "
        "the report's durations look damaged"
    )


def checked_totals(totals: list[int], labels: Sequence | None = None) -> list[int]:
    """The exact group totals, or :class:`TotalOverflowError` where one passes int64, naming
    its group's label (``labels``, one per group) when given."""
    for i, total in enumerate(totals):
        if not _INT64_MIN <= total <= _INT64_MAX:
            what = f" of {labels[i]!r}" if labels is not None and len(labels) > i else ""
            raise TotalOverflowError(f"integer overflow: the total{what} passes 2^63 - 1")
    return totals


def percents(values: Sequence[float], whole: float) -> list[float]:
    """``round(100 * value / whole, 1)`` of each value, as SQLite divides and rounds; all
    0.0 when ``whole`` is 0."""
    if whole == 0:
        return [0.0] * len(values)
    return [sqlite_round(100.0 * float(v) / whole) for v in values]


def percent_column(totals: Sequence[int], strict: bool = True) -> list[float]:
    """nsys's ``Time`` column of integer totals: the sum is exact, converted to a double
    once, as SQLite divides by its integer ``sum(total)``. ``strict`` (the summaries): a sum
    past int64 raises :class:`TotalOverflowError`, as nsys does; otherwise (the live panel)
    the exact sum is used."""
    whole = sum(totals)
    if strict and not _INT64_MIN <= whole <= _INT64_MAX:
        raise TotalOverflowError("integer overflow: the sum of the totals passes 2^63 - 1")
    return percents(totals, float(whole))


def stat_columns(
    stats: PlainGroupStats,
    prefix: str = "",
    count_name: str | None = "Instances",
    total_name: str | None = "Total Time",
    rounded: bool = True,
    labels: Sequence | None = None,
) -> list[_Column]:
    """The standard statistics columns in nsys's order: ``total_name``, ``count_name``
    (each left out when None), then ``{prefix}Avg``, ``Med``, ``Min``, ``Max``, ``StdDev``.

    Averages, medians and deviations are rounded to one decimal as nsys's SQL does (unless
    ``rounded`` is False: the size summary keeps full doubles); totals, min and max stay
    integers. A total past int64 raises :class:`TotalOverflowError` (:func:`checked_totals`).
    """
    rnd: Callable[[list], list] = (
        (lambda v: [sqlite_round(x) for x in v]) if rounded else (lambda v: [float(x) for x in v])
    )
    cols: list[_Column] = []
    if total_name:
        cols.append((total_name, _INT, checked_totals(stats.total, labels)))
    if count_name:
        cols.append((count_name, _INT, stats.count))
    cols += [
        (f"{prefix}Avg", _FLOAT, rnd(stats.mean)),
        (f"{prefix}Med", _FLOAT, rnd(stats.median)),
        (f"{prefix}Min", _INT, stats.minimum),
        (f"{prefix}Max", _INT, stats.maximum),
        (f"{prefix}StdDev", _FLOAT, rnd(stats.std)),
    ]
    return cols


def _timed_columns(stats: PlainGroupStats, count_name: str, labels: Sequence) -> list[_Column]:
    """``Time`` (the percent column) then :func:`stat_columns`; the totals are checked first,
    so that an overflowing group is named."""
    block = stat_columns(stats, count_name=count_name, labels=labels)
    return [("Time", _FLOAT, percent_column(block[0][2])), *block]


def _is_null(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # None, NaN


def _sort_key(values: list, ascending: bool) -> Callable[[int], tuple]:
    def key(i: int) -> tuple:
        v = values[i]
        if _is_null(v):
            return (True, 0)
        return (False, v if ascending else -v)

    return key


def row_order(columns: Mapping[str, list], by: Sequence[tuple[str, bool]], n: int) -> list[int]:
    """The order of ``n`` rows sorted by ``by`` ((column, ascending) pairs; descending only
    for numbers), stably, NULL (None, NaN) last: pandas' ``sort_values(kind="mergesort")``,
    nsys's tie order (ties in ascending group-key order, spec §3.1)."""
    order = list(range(n))
    for col, ascending in reversed(by):  # least significant first: the sorts are stable
        order.sort(key=_sort_key(columns[col], ascending))
    return order


def _table(columns: list[_Column], by: Sequence[tuple[str, bool]], mem: bool = False) -> Table:
    """The columns with their rows in :func:`row_order`, and their units."""
    order = row_order({c: v for c, _, v in columns}, by, len(columns[0][2]))
    cols = tuple(PlainColumn(c, dtype, [v[i] for i in order]) for c, dtype, v in columns)
    return cols, units_of((c for c, _, _ in columns), mem)


def kernel_table(labels: list, stats: PlainGroupStats) -> Table:
    """cuda_gpu_kern_sum's table from one name and statistics per group."""
    columns = [*_timed_columns(stats, "Instances", labels), ("Name", _OBJECT, labels)]
    return _table(columns, [("Total Time", False), ("Instances", True), ("Name", True)])


def calls_table(labels: list, stats: PlainGroupStats) -> Table:
    """cuda_api_sum's and osrt_sum's table: groups in name-id order (NULL last) in."""
    columns = [*_timed_columns(stats, "Num Calls", labels), ("Name", _OBJECT, labels)]
    return _table(columns, [("Total Time", False)])


def memory_time_table(labels: list, stats: PlainGroupStats) -> Table:
    """cuda_gpu_mem_time_sum's table from one operation name per group."""
    columns = [*_timed_columns(stats, "Count", labels), ("Operation", _OBJECT, labels)]
    return _table(columns, [("Total Time", False), ("Operation", True)])


def memory_size_table(labels: list, stats: PlainGroupStats) -> Table:
    """cuda_gpu_mem_size_sum's table: sizes, full doubles (spec §3.7: no rounding).

    A median that is one stored size (``stats.median_is_value``) is that integer, as nsys's
    unrounded ``median()`` gives it (``Med (B)`` 8, not 8.0, under ``-f csv:mem=B``).
    """
    block = stat_columns(stats, count_name="Count", total_name="Total", rounded=False,
                         labels=labels)  # fmt: skip
    if stats.median_is_value is not None:
        medians = zip(stats.median, stats.median_is_value, strict=True)
        whole = [int(m) if one else float(m) for m, one in medians]
        block = [("Med", _OBJECT, whole) if c[0] == "Med" else c for c in block]
    columns = [*block, ("Operation", _OBJECT, labels)]
    return _table(columns, [("Total", False), ("Operation", True)], mem=True)


def nvtx_table(labels: list, styles: list | None, stats: PlainGroupStats) -> Table:
    """nvtx_sum's table (and nvtx_pushpop_sum's, nvtx_startend_sum's without ``styles``):
    one range label (and style) per group, groups in (label, style) order."""
    columns = [*_timed_columns(stats, "Instances", labels)]
    if styles is not None:
        columns.append(("Style", _OBJECT, styles))
    columns.append(("Range", _OBJECT, labels))
    return _table(columns, [("Total Time", False), ("Range", True)])
