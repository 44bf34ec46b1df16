"""The stats panel's outliers: found once per set of reports on a worker, listed in the
Outliers tab for the panel's scope, the worst marked on the timeline; selecting one shows it
where it happened.

Outliers are *scored* over the whole run and every report, then *filtered* to the scope (its
report, and the whole run, the visible range or the selection), as
:meth:`analysis.outliers.Outliers.within` explains: an instance is an outlier against every
instance of its name, so panning does not change which instances are outliers, only which
are listed; scoring within a window would judge a kernel against the few neighbours that
happen to be in view, and would need a new pass per window.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, QTimer, Signal

from strata.analysis.outliers import DEFAULT_THRESHOLD, Outliers
from strata.analysis.timefmt import pluralize
from strata.app.event_lookup import instance_refs
from strata.app.jobs import JobRunner
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports, run_for_set
from strata.viewer.events import EventRef
from strata.viewer.state import TimelineState, scope_window
from strata.viewer.stats_panel import RANGE_SCOPES, StatsPanel, group_of

__all__ = ["MAX_MARKS", "OutlierList"]

#: Outlier instances marked on the timeline (the worst ones; the tab lists them all).
MAX_MARKS = 500
#: A moving view re-filters the list once it rests this long (a drag moves it every frame).
_REFILTER_MS = 60


class OutlierList(QObject):
    """Find, list and mark the outliers of the shown reports.

    Signals
    -------
    outliers_ready(object)
        :class:`~analysis.outliers.Outliers` of the shown reports are listed and marked.
    failed(str)
        Finding them failed (one line).
    """

    outliers_ready = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        panel: StatsPanel,
        runner: JobRunner,
        highlighter: NameHighlighter,
        state: TimelineState | None = None,
    ):
        super().__init__(panel)
        self._panel, self._runner, self._highlighter = panel, runner, highlighter
        self._state = state if state is not None else TimelineState()
        self._shown = ShownReports()
        self._outliers: Outliers | None = None
        self._status_tail = ""
        self._refilter_timer = QTimer(self)
        self._refilter_timer.setSingleShot(True)
        self._refilter_timer.setInterval(_REFILTER_MS)
        self._refilter_timer.timeout.connect(self.refresh)
        self._state.view_range_changed.connect(self._on_view_range_changed)
        self._state.selection_changed.connect(lambda _selection: self.refresh())

    def outliers(self) -> Outliers | None:
        return self._outliers

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set is searched for outliers (on a worker)."""
        self._shown = shown
        if is_new:
            self._outliers = None
            self._find()
        else:  # new offsets move the instances on the shared axis
            self.refresh()

    def _find(self) -> None:
        reports = self._shown.reports
        if not len(reports):
            self._panel.show_outliers(pd.DataFrame())
            return
        self._panel.show_outliers(pd.DataFrame(), "Finding outliers…")
        run_for_set(self._runner, self._shown, lambda rs: rs.outliers(DEFAULT_THRESHOLD),
                    "outliers", lambda: self._shown, self._on_ready, self._on_failed)  # fmt: skip

    def _on_failed(self, text: str) -> None:
        self._panel.show_outliers(pd.DataFrame(), f"Outliers failed: {text}")
        self.failed.emit(text)

    def _on_ready(self, found: Outliers) -> None:
        self._outliers = found
        self._status_tail = _slow_reports_text(found.reports, list(self._shown.labels))
        self.refresh()
        self.outliers_ready.emit(found)

    def refresh(self) -> None:
        """List and mark the outliers of the panel's scope (the report and time range)."""
        self._refilter_timer.stop()
        found = self._outliers
        if found is None:
            return
        scope = self._panel.scope()
        window = scope_window(scope, self._state)
        if window is None:
            self._panel.show_outliers(pd.DataFrame(), "Shift-drag on the timeline to select")
            self._highlighter.set_marks([])
            return
        instances = found.within(*window, scope.report_index, self._shown.offsets).copy()
        if len(instances):
            instances["report"] = np.asarray(self._shown.labels, dtype=object)[
                instances["report_index"].to_numpy(np.int64)
            ]
        self._panel.show_outliers(instances, self._status(found, len(instances), scope))
        self._highlighter.set_marks(self._marks(instances.head(MAX_MARKS)))

    def _status(self, found: Outliers, count: int, scope) -> str:
        """'12 of 40 outlier instances in the visible range (|robust z| > 3.5 over the
        whole run) · slower: …'."""
        total = len(found.instances)
        where = "" if scope.range_mode == "all" else f" in the {_scope_text(scope.range_mode)}"
        if scope.report_index is not None and scope.report_index < len(self._shown.labels):
            where += f" of {self._shown.labels[scope.report_index]}"
        shown = f"{count:,} of {total:,}" if where else f"{total:,}"
        noun = "outlier instance" if total == 1 else "outlier instances"
        scored = f"|robust z| > {found.threshold:g} over the whole run"
        return f"{shown} {noun}{where} ({scored}){self._status_tail}"

    def _on_view_range_changed(self, *_range) -> None:
        if self._panel.scope().range_mode == "visible" and self._outliers is not None:
            self._refilter_timer.start()

    def _marks(self, top: pd.DataFrame) -> list[EventRef]:
        """EventRefs of outlier rows (slice indices found per report and table at once)."""
        marks = []
        for (r, table), group in top.groupby(["report_index", "table"], sort=False):
            starts = group["start_ns"].to_numpy(np.int64)
            ends = starts + group["duration_ns"].to_numpy(np.int64)
            marks += instance_refs(self._shown.reports, int(r), str(table),
                                   group["index"], starts, ends, group["name"])  # fmt: skip
        return marks

    def focus_outlier(self, record: dict) -> None:
        """Centre and zoom the timeline on an outlier, with its report's row in view; its
        name becomes the highlighted one (instances, histogram)."""
        report_index, start = int(record["report_index"]), int(record["start_ns"])
        refs = instance_refs(self._shown.reports, report_index,
                             str(record["table"]), [record["index"]], [start],
                             [start + int(record["duration_ns"])], [record["name"]])  # fmt: skip
        if not refs:
            return
        highlighter = self._highlighter
        highlighter.focus(refs[0], zoom=True)
        highlighter.activate_name(
            str(record["name"]),
            str(record["kind"]),
            lambda: highlighter.point_at(report_index, start),
            group_of(record),
        )


def _scope_text(range_mode: str) -> str:
    return dict(RANGE_SCOPES).get(range_mode, range_mode).lower()


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
