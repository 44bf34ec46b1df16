"""Worker-side half of the Diff tab: the diff of two groups of the shown reports, as the tab
shows it, and the timeline tints of the names that changed.

Runs on :mod:`app.jobs` workers, never on the GUI thread; Qt-free. The numbers are
:func:`analysis.diff.diff_kind`'s (those ``main.py diff`` prints), computed once per set of
reports, sides and kind (:meth:`analysis.reportset.ReportSet.derived`); each side is a
:meth:`~analysis.reportset.ReportSet.subset` of the shown set, so it reuses their projections.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from strata.analysis.diff import DiffOptions, diff_kind
from strata.app.event_lookup import highlight_rows
from strata.app.stats_jobs import ShownReports
from strata.viewer.table_model import format_cell

__all__ = [
    "CHANGE_TEXT",
    "TINTED",
    "DiffRequest",
    "DiffResult",
    "compute_diff",
    "diff_frame",
    "tint_codes",
]

#: The Change column's words (the colour says it too, not alone).
CHANGE_TEXT = {"slower": "▲ slower", "faster": "▼ faster", "slower, few": "▲ slower, n=1",
               "faster, few": "▼ faster, n=1", "appeared": "+ appeared",
               "vanished": "− vanished", "too few": "too few instances",
               "noise": "noise"}  # fmt: skip
#: Statuses the timeline colours, in the order of their tint codes (1, 2).
TINTED = ("slower", "faster")


@dataclass(frozen=True)
class DiffRequest:
    """One diff to compute: ``before`` / ``after`` are positions in the shown reports (the
    result is for those whose identities ``key`` lists: ``ShownReports.key[0]``), ``kind``
    one of :data:`analysis.diff.DIFF_KINDS`."""

    kind: str
    before: tuple[int, ...]
    after: tuple[int, ...]
    key: tuple
    options: DiffOptions = field(default_factory=DiffOptions)


@dataclass(frozen=True)
class DiffResult:
    """A request's table (:func:`diff_frame`), sorted by impact."""

    request: DiffRequest
    frame: pd.DataFrame


def compute_diff(shown: ShownReports, request: DiffRequest) -> DiffResult:
    """Compute a request on a worker (once per set of reports, sides, kind and options)."""
    reports = shown.reports
    key = ("strata.app.diff_jobs", request.kind, request.before, request.after, request.options)

    def compute(snap) -> pd.DataFrame:
        before, after = snap.subset(request.before), snap.subset(request.after)
        return diff_kind(before, after, request.kind, request.options, with_keys=True)

    return DiffResult(request, diff_frame(reports.derived(key, compute)))


def diff_frame(raw: pd.DataFrame) -> pd.DataFrame:
    """The Diff tab's columns of a :func:`analysis.diff.diff_kind` table (``with_keys``).

    Returns
    -------
    pandas.DataFrame
        ``name``, ``key``, ``style`` (str), ``status`` (of :data:`analysis.diff.STATUSES`),
        ``change`` (its words), ``total_delta_ns``, ``total_before_ns``, ``total_after_ns``
        (int64 ns), ``count_before``, ``count_after``, ``count_delta`` (int64),
        ``med_before_ns``, ``med_after_ns``, ``med_delta_ns``, ``med_low_ns``,
        ``med_high_ns`` (float64 ns), ``interval`` (text), ``med_change_pct`` (float64);
        the rows in ``raw``'s order (by impact).
    """
    frame = pd.DataFrame({
        "name": raw["Name"], "key": raw["Key"],
        "style": raw.get("Style"),
        "status": raw["Status"], "change": raw["Status"].map(CHANGE_TEXT),
        "total_delta_ns": raw["Total Delta"], "total_before_ns": raw["Total Before"],
        "total_after_ns": raw["Total After"], "count_before": raw["Instances Before"],
        "count_after": raw["Instances After"], "count_delta": raw["Instances Delta"],
        "med_before_ns": raw["Med Before"], "med_after_ns": raw["Med After"],
        "med_delta_ns": raw["Med Delta"], "med_low_ns": raw["Med Delta Low"],
        "med_high_ns": raw["Med Delta High"], "med_change_pct": raw["Med Change (%)"],
    })  # fmt: skip
    low, high = frame["med_low_ns"].to_numpy(float), frame["med_high_ns"].to_numpy(float)
    frame["interval"] = [
        "" if np.isnan(lo) else f"{format_cell(lo, 'delta')} … {format_cell(hi, 'delta')}"
        for lo, hi in zip(low.tolist(), high.tolist(), strict=True)
    ]
    return frame.reset_index(drop=True)


def tint_codes(
    shown: ShownReports, kind: str, frame: pd.DataFrame, report_positions: tuple[int, ...]
) -> dict[tuple[int, str], np.ndarray]:
    """Per ``(report, slice table)`` of ``kind`` in ``report_positions``: one ``uint8`` per
    event, ``k`` for an instance of a name of status ``TINTED[k - 1]``, 0 for the others.

    Names are found by the group each row stands for (its ``key`` and ``style``), in the
    shown set's window index (the one the stats panel built).
    """
    reports = shown.reports
    codes: dict[tuple[int, str], np.ndarray] = {}
    for r in report_positions:  # loops over reports, statuses and names, not events
        table = reports.projected_slices(r) if kind == "nvtx_gpu" else None
        size = len(table) if table is not None else len(reports.slice_tables(r).get(kind, ()))
        codes[(r, kind)] = np.zeros(size, dtype=np.uint8)
    index = shown.index(kind)
    for code, status in enumerate(TINTED, start=1):
        rows = frame[frame["status"] == status]
        groups = [index.groups(k, _style(s)) for k, s in zip(rows["key"], rows["style"],
                                                               strict=True)]  # fmt: skip
        if not groups:
            continue
        instances = index.instances(np.unique(np.concatenate(groups)))
        instances = instances[instances["report_index"].isin(report_positions)]
        for where, found in highlight_rows(reports, kind, instances).items():
            target = codes.get(where)
            if target is not None and len(found):
                target[found[found < len(target)]] = code
    return codes


def _style(value: object) -> str | None:
    """A row's NVTX style as :meth:`WindowIndex.groups` takes it (None: any)."""
    if value is None or (isinstance(value, float) and value != value) or value == "":
        return None
    return str(value)
