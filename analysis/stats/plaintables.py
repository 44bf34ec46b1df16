"""The CUDA duration and size summaries' tables in plain Python, for the SQL path of ``stats``.

:mod:`analysis.stats.sql` computes a small report's ``cuda_gpu_kern_sum``,
``cuda_api_sum``, ``osrt_sum`` and the two memory summaries without NumPy or pandas: one
label and :class:`~analysis.plainstats.PlainGroupStats` per group go in, a
:class:`~analysis.stats.plain.PlainResult` comes out, printed by :mod:`analysis.stats.text`
as the column path's :class:`~analysis.stats.StatsResult` prints (parity tests in
tests/analysis/test_stats_sql.py compare every format on every real report).

The rules are nsys's (spec: nsys-sqlite.md §3.1): ``Time`` is ``round(100 * total /
sum(total), 1)``, averages, medians and deviations rounded to one decimal as SQLite rounds
(not in the size summary), rows ordered stably with NULL names last. :func:`units_of` is the
one rule for the unit of a summary column (the column path's builders use it too).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from analysis.plainstats import PlainGroupStats, sqlite_round
from analysis.stats.plain import PlainColumn, PlainResult

__all__ = [
    "calls_table",
    "kernel_table",
    "memory_size_table",
    "memory_time_table",
    "nvtx_table",
    "units_of",
]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_TIMED = frozenset({"Total Time", "Avg", "Med", "Min", "Max", "StdDev", "Total"})
#: dtype texts of the pandas columns the column path builds (:mod:`analysis.stats.plain`).
_INT, _FLOAT, _OBJECT = "<i8", "<f8", "object"


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


def _checked(totals: list[int]) -> list[int]:
    """The totals; OverflowError where one (or their sum) passes int64, as nsys's ``sum()``
    fails (the column path names the group in its error)."""
    if any(not _INT64_MIN <= t <= _INT64_MAX for t in totals):
        raise OverflowError("a total passes the int64 range")
    return totals


def _percent(totals: list[int]) -> list[float]:
    whole_int = sum(totals)
    if not _INT64_MIN <= whole_int <= _INT64_MAX:
        raise OverflowError("the sum of the totals passes the int64 range")
    whole = float(whole_int)
    if whole == 0:
        return [0.0] * len(totals)
    return [sqlite_round(100.0 * float(t) / whole) for t in totals]


def _stat_columns(
    stats: PlainGroupStats, count_name: str, total_name: str = "Total Time", rounded: bool = True
) -> list[tuple[str, str, list]]:
    """(name, dtype, values) of the standard statistics block, in nsys's column order."""
    rnd = (lambda v: [sqlite_round(x) for x in v]) if rounded else list
    return [
        (total_name, _INT, _checked(stats.total)),
        (count_name, _INT, stats.count),
        ("Avg", _FLOAT, rnd(stats.mean)),
        ("Med", _FLOAT, rnd(stats.median)),
        ("Min", _INT, stats.minimum),
        ("Max", _INT, stats.maximum),
        ("StdDev", _FLOAT, rnd(stats.std)),
    ]


def _timed_columns(stats: PlainGroupStats, count_name: str) -> list[tuple[str, str, list]]:
    block = _stat_columns(stats, count_name)
    return [("Time", _FLOAT, _percent(block[0][2])), *block]


def _sort_key(values: list, ascending: bool):  # noqa: ANN202 - a key function
    def key(i: int) -> tuple:
        v = values[i]
        if v is None:
            return (True, 0)
        return (False, v if ascending else -v)

    return key


def _table(
    name: str,
    title: str,
    columns: list[tuple[str, str, list]],
    by: Sequence[tuple[str, bool]],
    mem: bool = False,
) -> PlainResult:
    """The result with its rows ordered by ``by`` ((column, ascending) pairs), stably, NULL
    last: pandas' ``sort_values(kind="mergesort")`` of the column path."""
    n = len(columns[0][2])
    order = list(range(n))
    values = {c: v for c, _, v in columns}
    for col, ascending in reversed(by):  # least significant first: the sorts are stable
        order.sort(key=_sort_key(values[col], ascending))
    cols = tuple(PlainColumn(c, dtype, [v[i] for i in order]) for c, dtype, v in columns)
    return PlainResult(name, title, cols, units_of((c for c, _, _ in columns), mem))


def kernel_table(name: str, title: str, labels: list, stats: PlainGroupStats) -> PlainResult:
    """cuda_gpu_kern_sum's table from one name and statistics per group."""
    columns = [*_timed_columns(stats, "Instances"), ("Name", _OBJECT, labels)]
    return _table(name, title, columns, [("Total Time", False), ("Instances", True),
                                         ("Name", True)])  # fmt: skip


def calls_table(name: str, title: str, labels: list, stats: PlainGroupStats) -> PlainResult:
    """cuda_api_sum's and osrt_sum's table: groups in name-id order (NULL last) in."""
    columns = [*_timed_columns(stats, "Num Calls"), ("Name", _OBJECT, labels)]
    return _table(name, title, columns, [("Total Time", False)])


def nvtx_table(name: str, title: str, keys: list, stats: PlainGroupStats) -> PlainResult:
    """nvtx_sum's table from one (range label, style) and statistics per group."""
    styles = [style for _, style in keys]
    labels = [label for label, _ in keys]
    columns = [*_timed_columns(stats, "Instances"), ("Style", _OBJECT, styles),
               ("Range", _OBJECT, labels)]  # fmt: skip
    return _table(name, title, columns, [("Total Time", False), ("Range", True)])


def memory_time_table(name: str, title: str, labels: list, stats: PlainGroupStats) -> PlainResult:
    """cuda_gpu_mem_time_sum's table from one operation name per group."""
    columns = [*_timed_columns(stats, "Count"), ("Operation", _OBJECT, labels)]
    return _table(name, title, columns, [("Total Time", False), ("Operation", True)])


def memory_size_table(name: str, title: str, labels: list, stats: PlainGroupStats) -> PlainResult:
    """cuda_gpu_mem_size_sum's table: sizes, full doubles (spec §3.7: no rounding)."""
    block = _stat_columns(stats, "Count", total_name="Total", rounded=False)
    columns = [*block, ("Operation", _OBJECT, labels)]
    return _table(name, title, columns, [("Total", False), ("Operation", True)], mem=True)
