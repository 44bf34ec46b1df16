"""The stats panel's outliers: found once per set of reports on a worker, listed in the
Outliers tab, the worst marked on the timeline; selecting one shows it where it happened."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Signal

from analysis.outliers import DEFAULT_THRESHOLD, Outliers
from analysis.timefmt import pluralize
from app.event_lookup import instance_refs
from app.jobs import JobRunner
from app.stats_highlight import NameHighlighter
from app.stats_jobs import ShownReports, error_text
from viewer.events import EventRef
from viewer.stats_panel import StatsPanel, group_of

__all__ = ["MAX_MARKS", "OutlierList"]

#: Outlier instances marked on the timeline (the worst ones; the tab lists them all).
MAX_MARKS = 500


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

    def __init__(self, panel: StatsPanel, runner: JobRunner, highlighter: NameHighlighter):
        super().__init__(panel)
        self._panel, self._runner, self._highlighter = panel, runner, highlighter
        self._shown = ShownReports()
        self._outliers: Outliers | None = None

    def outliers(self) -> Outliers | None:
        return self._outliers

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set is searched for outliers (on a worker)."""
        self._shown = shown
        if is_new:
            self._outliers = None
            self._find()

    def _find(self) -> None:
        reports = self._shown.reports
        if not len(reports):
            self._panel.show_outliers(pd.DataFrame())
            return
        self._panel.show_outliers(pd.DataFrame(), "Finding outliers…")
        job = self._runner.submit(
            lambda _p, _c: reports.outliers(DEFAULT_THRESHOLD), channel="outliers"
        )
        job.finished.connect(lambda found, key=self._shown.key: self._on_ready(key, found))
        job.failed.connect(self._on_failed)

    def _on_failed(self, error: Exception) -> None:
        text = error_text(error)
        self._panel.show_outliers(pd.DataFrame(), f"Outliers failed: {text}")
        self.failed.emit(text)

    def _on_ready(self, key: tuple, found: Outliers) -> None:
        if key[0] != self._shown.key[0]:
            return
        self._outliers = found
        labels = list(self._shown.labels)
        instances = found.instances.copy()
        if len(instances):
            instances["report"] = np.asarray(labels, dtype=object)[
                instances["report_index"].to_numpy(np.int64)
            ]
        status = f"{len(instances):,} outlier instances (|robust z| > {found.threshold:g})"
        status += _slow_reports_text(found.reports, labels)
        self._panel.show_outliers(instances, status)
        self._highlighter.set_marks(self._marks(instances.head(MAX_MARKS)))
        self.outliers_ready.emit(found)

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
