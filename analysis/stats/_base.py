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

from strata.analysis.engine import GroupStats, group_stats
from strata.analysis.model import DurationTable, EventTable, Report
from strata.analysis.names import api_display_names, string_codes
from strata.analysis.specname import SpecName
from strata.analysis.stats import plaintables
from strata.analysis.stats.catalog import SUMMARIES
from strata.analysis.stats.format import json_table, printed_cells
from strata.analysis.stats.plaintables import TotalOverflowError, overflow_error

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
    "table_frame",
    "time_percent",
    "timed_block",
]


@dataclass(frozen=True)
class StatsResult(SpecName):
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


#: The CUDA API suffix rule (spec §3.3); kept under its old name for callers.
strip_api_version = api_display_names


def checked_totals(total: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
    """Return exact group totals as int64, or raise where nsys's ``sum()`` overflows
    (:func:`analysis.stats.plaintables.checked_totals`, the one rule).

    Raises
    ------
    TotalOverflowError
        A total lies outside the int64 range (:attr:`GroupStats.total` is then exact
        Python ints).
    """
    total = np.asarray(total)
    if total.dtype != object:
        return total
    names = None if labels is None else list(labels)
    return np.array(plaintables.checked_totals(total.tolist(), names), dtype=np.int64)


def time_percent(total: np.ndarray, strict: bool = True) -> np.ndarray:
    """``round(100 * total / sum(total), 1)`` as the nsys SQL (spec §3.1 percent column):
    :func:`analysis.stats.plaintables.percent_column` of integer totals (``strict``: the
    summaries, a sum past int64 raises :class:`TotalOverflowError`; otherwise, the live
    panel, the exact sum is used); float totals are summed as NumPy sums them.
    """
    values = np.asarray(total)
    if values.dtype.kind == "f":
        out = plaintables.percents(values.tolist(), float(values.sum()))
    else:
        out = plaintables.percent_column(values.tolist(), strict)
    return np.array(out, dtype=np.float64)


def _column_array(dtype: str, values: list) -> np.ndarray:
    if dtype != "object":
        return np.array(values, dtype=dtype)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def stat_block(stats: GroupStats, *options, labels=None, **named) -> dict[str, np.ndarray]:
    """Return the standard statistics columns of a summary, in nsys column order:
    :func:`analysis.stats.plaintables.stat_columns` of ``stats`` (the one rule: rounding,
    overflow check; ``prefix``, ``count_name``, ``total_name``, ``rounded`` as it takes
    them) as NumPy columns. A total beyond int64 raises :class:`TotalOverflowError` naming
    its group's label (``labels``, one per group) when given.
    """
    names = None if labels is None else list(labels)
    block = plaintables.stat_columns(stats.plain(), *options, labels=names, **named)
    return {name: _column_array(dtype, values) for name, dtype, values in block}


def timed_block(stats: GroupStats, **kwargs) -> dict[str, np.ndarray]:
    """Return ``Time`` (the percent column) then :func:`stat_block`'s columns.

    The totals are checked first, so that an overflowing group is named (nsys fails there).
    """
    block = stat_block(stats, **kwargs)
    return {"Time": time_percent(block["Total Time"]), **block}


def table_frame(table: plaintables.Table) -> tuple[pd.DataFrame, dict[str, str | None]]:
    """A table built by :mod:`analysis.stats.plaintables` as the column path's
    (frame, units)."""
    columns, units = table
    frame = pd.DataFrame({c.name: _column_array(c.dtype, c.values) for c in columns})
    return frame, dict(units)


def grouped(
    labels: np.ndarray, values: np.ndarray, xp: ModuleType
) -> tuple[np.ndarray, GroupStats]:
    """Group ``values`` by string ``labels``; return (label per group, stats)."""
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    stats = group_stats(codes, np.asarray(values), xp)  # the engine takes int32/int64 as is
    return np.asarray(uniques, dtype=object)[stats.keys], stats


def order_rows(frame: pd.DataFrame, by: list[str], ascending: list[bool]) -> pd.DataFrame:
    """Sort stably, NULL last (nsys ties come out in ascending group-key order, spec §3.1):
    :func:`analysis.stats.plaintables.row_order`, the one rule, on the key columns."""
    keys = {col: _plain_values(frame[col]) for col in by}
    order = plaintables.row_order(keys, list(zip(by, ascending, strict=True)), len(frame))
    return frame.take(order).reset_index(drop=True)


def _plain_values(column: pd.Series) -> list:
    """A column's values as Python objects, every missing one (NaN, NA, NaT) None."""
    values = column.astype(object)
    return values.where(column.notna(), None).tolist()


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
