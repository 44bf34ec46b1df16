"""Worker-side half of the stats panel: the shown reports, per-kind window indexes, the table
a request asks and a name's histogram.

Runs on :mod:`app.jobs` workers, never on the GUI thread. Every table comes from the one stats
entry, :meth:`analysis.reportset.ReportSet.summary` (:func:`panel_table`): an index sorts a
report set's events by name and value once (the set keeps it), every moving window is then
answered without sorting again; the one-shot aggregate answers while it is built. Qt-free;
the controllers that use it are :mod:`app.stats_table`, :mod:`app.stats_highlight` and
:mod:`app.stats_list`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from strata.analysis.alignment import TimeAlignment
from strata.analysis.engine import sqlite_round
from strata.analysis.errors import StrataError
from strata.analysis.outliers import DEFAULT_THRESHOLD
from strata.analysis.progress import Progress
from strata.analysis.reportset import ReportSet
from strata.analysis.stats import time_percent
from strata.analysis.summary import ONE_SHOT
from strata.analysis.window_stats import WindowIndex
from strata.analysis.window_tables import pivot_by_report, robust_threshold
from strata.analysis.xp import get_xp
from strata.viewer.state import NameHighlight, Scope

__all__ = [
    "Histogram",
    "ShownReports",
    "StatsPanelResult",
    "StatsRequest",
    "error_text",
    "histogram_of",
    "name_groups",
    "panel_table",
    "stats_frame",
    "window_index",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShownReports:
    """The reports the timeline shows (a :class:`ReportSet` snapshot, which keeps what is
    derived from them), their offsets (ns) and labels: what every job reads.

    ``key`` names this set and these offsets; a result computed for another key is dropped.
    """

    reports: ReportSet = field(default_factory=ReportSet)
    offsets: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()
    #: How ``offsets`` were made (what the Collectives tab names beside its skews).
    alignment: TimeAlignment = field(default_factory=TimeAlignment)

    @property
    def key(self) -> tuple:
        # The set's membership version, not id()s of its reports: a report closed and another
        # loaded may get the same id, and a result for the old one would be taken.
        return (self.reports.version,), tuple(self.offsets)

    def index(self, kind: str, build: bool = True, progress: Progress | None = None,
              cancel: threading.Event | None = None) -> WindowIndex | None:  # fmt: skip
        """The window index of ``kind`` for these reports (built once, on a worker; None
        when it is not built yet and ``build`` is False); ``progress`` and ``cancel`` as
        :func:`analysis.window_stats.build_window_index`'s."""
        return window_index(self.reports, kind, self.offsets, build, progress, cancel)


@dataclass(frozen=True)
class Histogram:
    """The highlighted name's instances in one scope (a worker computes it with the same
    index, window and report as the table's counts)."""

    active: NameHighlight
    in_scope: pd.DataFrame
    median: float
    threshold: float


@dataclass(frozen=True)
class StatsRequest:
    """One table to compute: ``rows`` are the track keys of an area selection (empty: the
    window over every row)."""

    kind: str
    scope: Scope
    t0_ns: int | None
    t1_ns: int | None
    key: tuple
    rows: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatsPanelResult:
    """A table for a request, and the highlighted name's histogram for the same window."""

    request: StatsRequest
    frame: pd.DataFrame
    events: int
    elapsed_ms: float
    histogram: Histogram | None = None
    is_indexed: bool = True  # else the one-shot aggregate, while the index is built


def window_index(
    reports: ReportSet,
    kind: str,
    offsets_ns: Sequence[int],
    build: bool = True,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> WindowIndex | None:
    """The set's window index of ``kind`` in the panel's array module (None: not built yet
    and ``build`` is False). The :class:`ReportSet` keeps it: two workers never build one
    index twice."""
    return reports.window_index(kind, offsets_ns, _array_module(), build, progress, cancel)


def _array_module():
    try:
        return get_xp()
    except StrataError as exc:  # a forced but unusable backend: say so, use NumPy
        log.warning("%s; the stats panel uses NumPy", exc)
        return np


def panel_table(
    shown: ShownReports,
    request: StatsRequest,
    tracks: Sequence | None = None,
    cancel: threading.Event | None = None,
) -> tuple[pd.DataFrame, bool]:
    """Run one request on a worker: (the table the panel shows, whether the window index
    or an area answered it rather than the one-shot aggregate).

    The statistics are :meth:`ReportSet.summary <analysis.reportset.ReportSet.summary>`'s,
    never waiting for the index (its strategy is then the one-shot aggregate); ``tracks``
    are where an area request's ``rows`` are found (the timeline's).
    """
    scope = request.scope
    by_report = _by_report(request, len(shown.reports))
    frame = shown.reports.summary(
        request.kind, (request.t0_ns, request.t1_ns), request.rows,
        offsets_ns=shown.offsets, report_index=scope.report_index, by_report=by_report,
        xp=_array_module(), build=False, tracks=tracks, cancel=cancel,
    )  # fmt: skip
    is_indexed = frame.attrs.pop("strategy", None) != ONE_SHOT
    return _shown_frame(frame, request, by_report, shown.labels), is_indexed


def _by_report(request: StatsRequest, n_reports: int) -> bool:
    scope = request.scope
    return scope.by_report and scope.report_index is None and n_reports > 1


def stats_frame(
    index: WindowIndex | None,
    request: StatsRequest,
    n_reports: int,
    area: Callable | None = None,
    report_names: Sequence[str] = (),
) -> pd.DataFrame:
    """The table the panel shows from ``index`` (or ``area(by_report)``, e.g.
    :func:`analysis.area.area_stats`, whose reports ``report_names`` name), without the
    report set's memo: :func:`panel_table` is the panel's way."""
    scope = request.scope
    by_report = _by_report(request, n_reports)
    if area is not None:
        frame = area(by_report)
    else:
        frame = index.stats(request.t0_ns, request.t1_ns, scope.report_index, by_report=by_report)
    names = index.report_names if index is not None else report_names
    return _shown_frame(frame, request, by_report, names)


def _shown_frame(
    frame: pd.DataFrame, request: StatsRequest, by_report: bool, report_names: Sequence[str]
) -> pd.DataFrame:
    """The statistics as the panel shows them: pivoted by report, or with the time share
    and nsys's one-decimal rounding."""
    if by_report:
        return pivot_by_report(frame, report_names)
    # Exact even past int64 (a damaged report): the panel shows it rather than failing.
    frame["time_pct"] = time_percent(frame["total_ns"].to_numpy(), strict=False)
    if request.kind != "memcpy_bytes":  # spec: nsys-sqlite.md §3.1, one-decimal rounding
        for column in ("mean_ns", "median_ns", "std_ns"):
            frame[column] = sqlite_round(frame[column].to_numpy())
    return frame


def name_groups(index: WindowIndex, active: NameHighlight) -> np.ndarray:
    """The index's groups of a highlighted name (its table row's group, or all by that name)."""
    key, style = active.group
    return index.groups(active.name if key is None else key, style)


def histogram_of(index: WindowIndex, active: NameHighlight, request: StatsRequest) -> Histogram:
    """The highlighted name's instances in the request's window and report (on a worker)."""
    scope = request.scope
    in_scope = index.instances(name_groups(index, active), request.t0_ns, request.t1_ns,
                               scope.report_index)  # fmt: skip
    median, threshold = robust_threshold(in_scope["value"].to_numpy(), DEFAULT_THRESHOLD)
    return Histogram(active, in_scope, median, threshold)


def error_text(error: Exception) -> str:
    """One line for a failed job: our own message, or the type and text of a bug."""
    return str(error) if isinstance(error, StrataError) else f"{type(error).__name__}: {error}"
