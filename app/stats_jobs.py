"""Worker-side half of the stats panel: per-kind window indexes and the table a request asks.

Runs on :mod:`app.jobs` workers, never on the GUI thread. An index sorts a report set's events
by name and value once (:meth:`analysis.reportset.ReportSet.window_index`, which keeps it);
every moving window is then answered without sorting again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.engine import sqlite_round
from analysis.errors import StrataError
from analysis.reportset import ReportSet
from analysis.stats._base import time_percent
from analysis.window_stats import WindowIndex, pivot_by_report
from analysis.xp import get_xp
from viewer.stats_panel import Scope

__all__ = ["StatsRequest", "StatsResult", "stats_frame", "window_index"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StatsRequest:
    kind: str
    scope: Scope
    t0_ns: int | None
    t1_ns: int | None
    key: tuple


@dataclass(frozen=True)
class StatsResult:
    """A table for a request, and the active name's histogram for the same window (or None).

    ``histogram`` is the controller's own record (``app.stats_controller._Histogram``).
    """

    request: StatsRequest
    frame: pd.DataFrame
    events: int
    elapsed_ms: float
    histogram: object = None


def window_index(
    reports: ReportSet, kind: str, offsets_ns: Sequence[int], build: bool = True
) -> WindowIndex | None:
    """The set's window index of ``kind`` in the panel's array module (None: not built yet
    and ``build`` is False). The :class:`ReportSet` keeps it: two workers never build one
    index twice."""
    return reports.window_index(kind, offsets_ns, _array_module(), build=build)


def _array_module():
    try:
        return get_xp()
    except StrataError as exc:  # a forced but unusable backend: say so, use NumPy
        log.warning("%s; the stats panel uses NumPy", exc)
        return np


def stats_frame(index: WindowIndex, request: StatsRequest, n_reports: int) -> pd.DataFrame:
    """Run one request on a worker: the table the panel shows."""
    scope = request.scope
    by_report = scope.by_report and scope.report_index is None and n_reports > 1
    frame = index.stats(request.t0_ns, request.t1_ns, scope.report_index, by_report=by_report)
    if by_report:
        return pivot_by_report(frame, index.report_names)
    # Exact even past int64 (a damaged report): the panel shows it rather than failing.
    frame["time_pct"] = time_percent(frame["total_ns"].to_numpy(), strict=False)
    if request.kind != "memcpy_bytes":  # spec: nsys-sqlite.md §3.1, one-decimal rounding
        for column in ("mean_ns", "median_ns", "std_ns"):
            frame[column] = sqlite_round(frame[column].to_numpy())
    return frame
