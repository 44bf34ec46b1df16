"""Machinery shared by the nsys-compatible summaries: the result type, the report registry,
the SKIPPED rule, and the standard "Total Time / Instances / Avg / Med / ..." block.

spec: nsys-sqlite.md §3.1 (formulas, rounding, ordering, percent column).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from analysis.engine import GroupStats, exact_sum, group_stats, sqlite_round
from analysis.errors import AnalysisError
from analysis.model import DurationTable, EventTable, Report
from analysis.names import api_display_names, string_codes
from analysis.stats.catalog import SUMMARIES
from analysis.stats.format import json_table, printed_cells

__all__ = [
    "REGISTRY",
    "TotalOverflowError",
    "ReportSpec",
    "SkipReport",
    "StatsResult",
    "register",
    "checked_totals",
    "overflow_error",
    "stat_block",
    "string_codes",
    "strip_api_version",
    "time_percent",
    "timed_block",
]


@dataclass(frozen=True)
class StatsResult:
    """One nsys stats report computed for one Strata report.

    Attributes
    ----------
    name
        The report spec as asked, e.g. ``cuda_gpu_kern_sum:base``.
    title
        nsys's display name, e.g. "CUDA GPU Kernel Summary".
    frame
        One column per nsys column, named by the nsys header without its unit suffix
        ("Total Time"), holding numbers in native units (ns, bytes) rounded as nsys's SQL
        rounds them; missing values are None/NaN.
    units
        Column -> unit category of the nsys tag: 'dur', 'ts', 'mem', 'thru' or None.
    skipped
        nsys's "SKIPPED: ... does not contain ..." text when the report lacks the data.
    """

    name: str
    title: str
    frame: pd.DataFrame
    units: Mapping[str, str | None] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def base_name(self) -> str:
        """The report name without its ``:args``."""
        return self.name.split(":")[0]

    @property
    def args(self) -> tuple[str, ...]:
        return tuple(self.name.split(":")[1:])

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    def printed(
        self, timeunit: str = "nsec", escape: bool = True
    ) -> tuple[list[str], list[list[str]], list[bool]]:
        """(headers, printed cells column by column, whether each is numeric); text cells
        escaped (:func:`~analysis.escape.escape_text`) unless ``escape`` is False."""
        return printed_cells(self.frame, self.units, timeunit, escape)

    def json_table(self) -> tuple[list[str], list[list[object]]]:
        """(every column name, rows of JSON-ready values)."""
        return json_table(self.frame)


class SkipReport(Exception):  # noqa: N818 - a control-flow signal, caught by run_report
    """Raised by a report function when the report lacks its tables (message = why)."""


@dataclass(frozen=True)
class ReportSpec:
    """A registered summary: name, nsys title, allowed arguments, and its function."""

    name: str
    title: str
    args: tuple[str, ...]
    func: Callable[..., StatsResult]


REGISTRY: dict[str, ReportSpec] = {}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def register(name: str) -> Callable:
    """Register ``func(report, args, xp) -> (frame, units)`` as summary ``name``.

    The name, title and options are :data:`analysis.stats.catalog.SUMMARIES`'s.
    """
    info = SUMMARIES[name]  # a KeyError here: a summary missing from the catalog

    def wrap(func: Callable) -> Callable:
        @functools.wraps(func)
        def guarded(report: Report, spec_args: tuple[str, ...], xp: ModuleType):
            try:
                return func(report, spec_args, xp)
            except TotalOverflowError as exc:
                raise overflow_error(report.name, name, exc) from exc

        REGISTRY[name] = ReportSpec(info.name, info.title, info.args, guarded)
        return func

    return wrap


def overflow_error(report_name: str, name: str, exc: TotalOverflowError) -> AnalysisError:
    """The error summary ``name`` of a report ends with when a total passes int64."""
    return AnalysisError(
        f"{report_name}: {name}: {exc} (nsys stats stops on the same 'integer overflow'); "
        "the report's durations look damaged"
    )


class TotalOverflowError(AnalysisError):
    """A summary's sum (one group's, or the sum of the groups') passes the int64 range.

    nsys's SQL ``sum()`` raises "integer overflow" there and prints no table; so do we
    (:func:`register` adds the report and summary to the message).
    """


#: The CUDA API suffix rule (spec §3.3); kept under its old name for callers.
strip_api_version = api_display_names


def checked_totals(total: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
    """Return exact group totals as int64, or raise where nsys's ``sum()`` overflows.

    Raises
    ------
    TotalOverflowError
        A total lies outside the int64 range (:attr:`GroupStats.total` is then exact
        Python ints).
    """
    total = np.asarray(total)
    if total.dtype != object:
        return total
    big = [i for i, v in enumerate(total.tolist()) if not _INT64_MIN <= int(v) <= _INT64_MAX]
    if not big:
        return total.astype(np.int64)
    what = f" of {labels[big[0]]!r}" if labels is not None and len(labels) > big[0] else ""
    raise TotalOverflowError(f"integer overflow: the total{what} passes 2^63 - 1")


def time_percent(total: np.ndarray, strict: bool = True) -> np.ndarray:
    """``round(100 * total / sum(total), 1)`` as the nsys SQL (spec §3.1 percent column).

    The sum of the totals is exact, and converted to float64 once, as SQLite divides by its
    integer ``sum(total)``. ``strict`` (the summaries): raise :class:`TotalOverflowError`
    where that sum passes the int64 range, as nsys does; otherwise (the live panel) the
    exact sum is used.
    """
    values = np.asarray(total)
    if values.dtype.kind == "f":
        whole = float(values.sum())
    else:
        exact = values.tolist() if values.dtype == object else None
        whole_int = sum(int(v) for v in exact) if exact is not None else exact_sum(values)
        if strict and not _INT64_MIN <= whole_int <= _INT64_MAX:
            raise TotalOverflowError("integer overflow: the sum of the totals passes 2^63 - 1")
        whole = float(whole_int)
        if exact is not None:
            values = np.array([float(v) for v in exact])
    if whole == 0:
        return np.zeros(len(values))
    return sqlite_round(100.0 * values.astype(np.float64) / whole)


def stat_block(
    stats: GroupStats,
    prefix: str = "",
    count_name: str = "Instances",
    total_name: str | None = "Total Time",
    rounded: bool = True,
    labels: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Return the standard statistics columns of a summary, in nsys column order.

    ``{prefix}Avg``, ``Med`` and ``StdDev`` are rounded to one decimal as nsys's SQL does
    (unless ``rounded`` is False: the size summary keeps full doubles); totals, min and max
    stay integers. A total beyond int64 raises :class:`TotalOverflowError` naming its
    group's label (``labels``, one per group) when given.
    """
    rnd = sqlite_round if rounded else (lambda v: np.asarray(v, dtype=np.float64))
    cols: dict[str, np.ndarray] = {}
    if total_name:
        cols[total_name] = checked_totals(stats.total, labels)
    if count_name:
        cols[count_name] = stats.count
    cols[f"{prefix}Avg"] = rnd(stats.mean)
    cols[f"{prefix}Med"] = rnd(stats.median)
    cols[f"{prefix}Min"] = stats.minimum
    cols[f"{prefix}Max"] = stats.maximum
    cols[f"{prefix}StdDev"] = rnd(stats.std)
    return cols


def timed_block(stats: GroupStats, **kwargs) -> dict[str, np.ndarray]:
    """Return ``Time`` (the percent column) then :func:`stat_block`'s columns.

    The totals are checked first, so that an overflowing group is named (nsys fails there).
    """
    block = stat_block(stats, **kwargs)
    return {"Time": time_percent(block["Total Time"]), **block}


def grouped(
    labels: np.ndarray, values: np.ndarray, xp: ModuleType
) -> tuple[np.ndarray, GroupStats]:
    """Group ``values`` by string ``labels``; return (label per group, stats)."""
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    stats = group_stats(codes, np.asarray(values), xp)  # the engine takes int32/int64 as is
    return np.asarray(uniques, dtype=object)[stats.keys], stats


def order_rows(frame: pd.DataFrame, by: list[str], ascending: list[bool]) -> pd.DataFrame:
    """Sort stably (nsys ties come out in ascending group-key order, spec §3.1)."""
    return frame.sort_values(by, ascending=ascending, kind="mergesort").reset_index(drop=True)


def require(report: Report, condition: bool, what: str) -> None:
    """Raise SkipReport with nsys's message unless ``condition``."""
    if not condition:
        raise SkipReport(f"{report.name} does not contain {what}.")


def factorize_rows(frame: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """Return (int64 group code per row, one key row per code) with codes in sorted key order.

    NULL keys form their own groups (as SQL GROUP BY does).
    """
    groups = frame.groupby(list(frame.columns), sort=True, dropna=False)
    codes = groups.ngroup().to_numpy(np.int64)
    keys = groups.size().index.to_frame(index=False)
    return codes, keys


def durations(table: EventTable | DurationTable) -> np.ndarray:
    """Return the durations of a table's rows: ``end - start``, or a duration table's own."""
    return table.duration_ns
