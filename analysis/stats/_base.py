"""Machinery shared by the nsys-compatible summaries: the result type, the report registry,
the SKIPPED rule, and the standard "Total Time / Instances / Avg / Med / ..." block.

spec: nsys-sqlite.md §3.1 (formulas, rounding, ordering, percent column).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from analysis.engine import GroupStats, group_stats, sqlite_round
from analysis.errors import AnalysisError
from analysis.model import Report

__all__ = [
    "REGISTRY",
    "ReportSpec",
    "SkipReport",
    "StatsResult",
    "register",
    "stat_block",
    "strip_api_version",
    "time_percent",
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


def register(name: str, title: str, args: tuple[str, ...] = ()) -> Callable:
    """Register ``func(report, spec_name, args, xp) -> (frame, units)`` as a summary."""

    def wrap(func: Callable) -> Callable:
        REGISTRY[name] = ReportSpec(name, title, args, func)
        return func

    return wrap


def parse_spec(spec: str) -> tuple[ReportSpec, tuple[str, ...]]:
    """Split ``name:arg:arg`` and check the name and arguments.

    Raises
    ------
    AnalysisError
        Unknown report name or argument.
    """
    parts = [p for p in spec.strip().split(":")]
    name, args = parts[0], tuple(a for a in parts[1:] if a)
    if name not in REGISTRY:
        raise AnalysisError(
            f"unknown stats report '{name}'; choose one of {', '.join(sorted(REGISTRY))}"
        )
    report_spec = REGISTRY[name]
    for arg in args:
        if arg not in report_spec.args:
            allowed = ", ".join(report_spec.args) or "none"
            raise AnalysisError(f"report '{name}' has no option '{arg}' (options: {allowed})")
    return report_spec, args


def strip_api_version(names: np.ndarray) -> np.ndarray:
    """Drop a ``_vNNNN`` suffix: when the 2 characters 6 from the end are ``_v`` (spec §3.3)."""
    return np.array(
        [n[:-6] if isinstance(n, str) and n[-6:-4] == "_v" else n for n in names],
        dtype=object,
    )


def time_percent(total: np.ndarray) -> np.ndarray:
    """``round(100 * total / sum(total), 1)`` as the nsys SQL (spec §3.1 percent column)."""
    total = np.asarray(total, dtype=np.float64)
    whole = total.sum()
    if whole == 0:
        return np.zeros(len(total))
    return sqlite_round(100.0 * total / whole)


def stat_block(
    stats: GroupStats,
    prefix: str = "",
    count_name: str = "Instances",
    total_name: str | None = "Total Time",
    rounded: bool = True,
) -> dict[str, np.ndarray]:
    """Return the standard statistics columns of a summary, in nsys column order.

    ``{prefix}Avg``, ``Med`` and ``StdDev`` are rounded to one decimal as nsys's SQL does
    (unless ``rounded`` is False: the size summary keeps full doubles); totals, min and max
    stay integers.
    """
    rnd = sqlite_round if rounded else (lambda v: np.asarray(v, dtype=np.float64))
    cols: dict[str, np.ndarray] = {}
    if total_name:
        cols[total_name] = stats.total
    if count_name:
        cols[count_name] = stats.count
    cols[f"{prefix}Avg"] = rnd(stats.mean)
    cols[f"{prefix}Med"] = rnd(stats.median)
    cols[f"{prefix}Min"] = stats.minimum
    cols[f"{prefix}Max"] = stats.maximum
    cols[f"{prefix}StdDev"] = rnd(stats.std)
    return cols


def grouped(
    labels: np.ndarray, values: np.ndarray, xp: ModuleType
) -> tuple[np.ndarray, GroupStats]:
    """Group ``values`` by string ``labels``; return (label per group, stats)."""
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    stats = group_stats(codes.astype(np.int64), np.asarray(values, dtype=np.int64), xp)
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


_POOL_CODES: dict[int, tuple[object, np.ndarray, np.ndarray, bool]] = {}


def string_codes(report: Report, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (group code per row, label per code) grouping StringIds ids by their *text*.

    nsys groups kernels by name string (spec §3.2), so two ids with one text are one group.
    nsys writes each string once, so the ids usually are the codes already (no pass over the
    rows); otherwise a lookup table maps them. NULL ids (-1) get the last code, labelled
    None. The pool's factorisation is cached per string pool.
    """
    pool = report.strings
    cached = _POOL_CODES.get(id(pool))
    if cached is None or cached[0] is not pool:
        codes_of_pool, uniques = pd.factorize(
            pd.Series(pool.values, dtype=object), use_na_sentinel=False
        )
        labels = np.append(np.asarray(uniques, dtype=object), None)
        labels[pd.isna(labels)] = None
        lookup = np.append(codes_of_pool, len(uniques)).astype(np.int32)
        is_identity = len(uniques) == len(pool.values) and bool(
            np.array_equal(codes_of_pool, np.arange(len(pool.values)))
        )
        if len(_POOL_CODES) > 16:
            _POOL_CODES.clear()
        cached = _POOL_CODES[id(pool)] = (pool, lookup, labels, is_identity)
    _, lookup, labels, is_identity = cached
    if is_identity and (len(ids) == 0 or int(ids.min()) >= 0):
        return ids, labels
    return lookup[ids], labels


def durations(table) -> np.ndarray:
    """Return ``end - start`` of an event table's rows.

    A lean table (:mod:`analysis.stats.lean`) stores durations as its ends with a constant
    zero start: those are returned as they are (no 10 M-row subtraction and allocation).
    """
    start = table.start_ns
    if start.ndim == 1 and start.strides == (0,) and len(start) and int(start[0]) == 0:
        return table.end_ns
    return table.duration_ns
