"""The stats panel's Outliers tab: outliers found once per set of reports on a worker, listed
for the panel's scope, the worst marked on the timeline; choosing one shows it where it
happened and highlights its name.

Outliers are *scored* over the whole run and every report, then *filtered* to the scope (its
report, and the whole run, the visible range or the selection), as
:meth:`analysis.outliers.Outliers.within` explains: an instance is an outlier against every
instance of its name, so panning does not change which instances are outliers, only which
are listed; scoring within a window would judge a kernel against the few neighbours that
happen to be in view, and would need a new pass per window. The tab's columns are
:mod:`viewer.outliers_view`'s (the panel shows the tab on its own).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from strata.analysis.outliers import DEFAULT_THRESHOLD, Outliers
from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import pluralize
from strata.app.event_lookup import instance_refs
from strata.app.stats_list import ListTab
from strata.viewer.events import EventRef
from strata.viewer.outliers_view import OUTLIERS_VIEW, with_mads
from strata.viewer.stats_panel import group_of
from strata.viewer.stats_scope import RANGE_SCOPES
from strata.viewer.stats_tabs import TabScope

__all__ = ["MAX_MARKS", "OUTLIERS", "OutlierList"]

#: Outlier instances marked on the timeline (the worst ones; the tab lists them all).
MAX_MARKS = 500


def _find(reports: ReportSet, _scope: TabScope) -> Outliers:
    return reports.outliers(DEFAULT_THRESHOLD)


def _rows(found: Outliers, scope: TabScope) -> tuple[pd.DataFrame, str]:
    """The outlier instances of the scope (worst first, with their report's label), and
    '12 of 40 outlier instances in the visible range (|robust z| > 3.5 over the whole run)
    · slower: …'."""
    if scope.window_ns is None:
        return pd.DataFrame(), "Shift-drag on the timeline to select"
    where = scope.scope.report_index
    instances = found.within(*scope.window_ns, where, scope.offsets_ns).copy()
    if len(instances):
        instances["report"] = np.asarray(scope.labels, dtype=object)[
            instances["report_index"].to_numpy(np.int64)
        ]
    total = len(found.instances)
    mode = scope.scope.range_mode
    text = "" if mode == "all" else f" in the {dict(RANGE_SCOPES).get(mode, mode).lower()}"
    if where is not None and where < len(scope.labels):
        text += f" of {scope.labels[where]}"
    shown = f"{len(instances):,} of {total:,}" if text else f"{total:,}"
    noun = "outlier instance" if total == 1 else "outlier instances"
    scored = f"|robust z| > {found.threshold:g} over the whole run"
    tail = _slow_reports_text(found.reports, list(scope.labels))
    return with_mads(instances), f"{shown} {noun}{text} ({scored}){tail}"


class OutlierList(ListTab):
    """The Outliers tab: it also marks the listed outliers (the worst) on the timeline."""

    def outliers(self) -> Outliers | None:
        return self.result()

    def relist(self) -> pd.DataFrame | None:
        frame = super().relist()
        if frame is not None:
            self.context.highlighter.set_marks(self._marks(frame.head(MAX_MARKS)))
        return frame

    def _marks(self, top: pd.DataFrame) -> list[EventRef]:
        """EventRefs of outlier rows (slice indices found per report and table at once)."""
        marks = []
        if not len(top):
            return marks
        for (r, table), group in top.groupby(["report_index", "table"], sort=False):
            starts = group["start_ns"].to_numpy(np.int64)
            ends = starts + group["duration_ns"].to_numpy(np.int64)
            marks += instance_refs(self.shown.reports, int(r), str(table),
                                   group["index"], starts, ends, group["name"])  # fmt: skip
        return marks

    def focus_outlier(self, record: dict) -> None:
        """Centre and zoom the timeline on an outlier, with its report's row in view; its
        name becomes the highlighted one (instances, histogram)."""
        report_index, start = int(record["report_index"]), int(record["start_ns"])
        end = start + int(record["duration_ns"])
        name = str(record["name"])
        if not self.focus_row(report_index, str(record["table"]), record["index"], start, end,
                              name):  # fmt: skip
            return
        highlighter = self.context.highlighter
        highlighter.activate_name(
            name,
            str(record["kind"]),
            lambda: highlighter.point_at(report_index, start),
            group_of(record),
        )


OUTLIERS = dataclasses.replace(
    OUTLIERS_VIEW,
    compute=_find,
    rows=_rows,
    on_row=OutlierList.focus_outlier,
    follows=frozenset({"offsets", "scope", "view_range", "selection"}),
    loading="Finding outliers…",
    lifecycle=OutlierList,
)


def _slow_reports_text(reports: pd.DataFrame, labels: list[str]) -> str:
    """' · slower: rank2 (41 names, ×1.30)' — reports whose medians exceed the others'."""
    if reports is None or not len(reports) or len(labels) < 2:
        return ""
    slow = reports[reports["robust_z"] > 0]
    if not len(slow):
        return ""
    per = slow.groupby("report_index").agg(names=("name", "size"), ratio=("ratio", "median"))
    per = per.sort_values("names", ascending=False).head(2)
    parts = [
        f"{labels[int(i)]} ({pluralize(int(r.names), 'name')}, ×{r.ratio:.2f})"
        for i, r in per.iterrows()
    ]
    return " · slower: " + ", ".join(parts)
