"""Highlight one name on the timeline: its instances stand out, Next / Previous step through
them, a double-click zooms to the longest, and its histogram selects instances by value.
It also carries the diff's tints (:mod:`app.stats_diff`) to the timeline, under the
highlight: one path sets what the timeline emphasises.

The highlighted name is the timeline state's (:meth:`viewer.state.TimelineState.highlight`);
its instances are gathered on a worker (a name can have millions).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.kinds import panel_unit
from strata.analysis.timefmt import pluralize
from strata.app.event_lookup import focus_event, highlight_rows, instance_refs, with_shared_start
from strata.app.jobs import JobRunner
from strata.app.stats_jobs import (
    Histogram,
    ShownReports,
    StatsRequest,
    error_text,
    histogram_of,
    name_groups,
)
from strata.viewer.events import EventRef
from strata.viewer.frame import EventTints
from strata.viewer.state import NameHighlight, scope_window
from strata.viewer.stats_panel import StatsPanel
from strata.viewer.timeline import TimelineWidget

__all__ = ["NameHighlighter"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _NameResult:
    """What a click on a name needs, gathered on a worker."""

    active: NameHighlight
    key: tuple
    instances: pd.DataFrame  # whole run, shared-time order, with shared_start_ns
    histogram: Histogram
    rows: dict


class NameHighlighter(QObject):
    """The highlighted name's instances, their marks on the timeline and its histogram.

    Signals
    -------
    instances_changed(object)
        The instances Next/Previous step through (a DataFrame as
        :meth:`WindowIndex.instances`, plus ``shared_start_ns``), after a click or a
        histogram selection.
    failed(str)
        A job failed (one line).
    """

    instances_changed = Signal(object)
    failed = Signal(str)

    def __init__(self, panel: StatsPanel, timeline: TimelineWidget, runner: JobRunner) -> None:
        super().__init__(panel)
        self._panel, self._timeline, self._runner = panel, timeline, runner
        self._state = timeline.state
        self._shown = ShownReports()
        self._marks: list[EventRef] = []
        self._tints: EventTints | None = None
        self._rows: dict[tuple[int, str], np.ndarray] = {}
        self._instances = pd.DataFrame()
        self._position = -1
        self._histogram_values = pd.DataFrame()

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set drops the highlights and the histogram."""
        self._shown = shown
        if is_new:
            self._marks, self._rows, self._instances = [], {}, pd.DataFrame()
            self._position = -1
            self._tints = None
            self._state.set_highlight(None)
            self._panel.histogram.clear()
            self._panel.set_instance_text("")  # it counted the instances of other reports

    def set_marks(self, marks: list[EventRef]) -> None:
        """Flag ``marks`` (outliers) on the timeline beside the highlighted instances."""
        self._marks = marks
        self.push_highlights()

    def set_tints(self, tints: EventTints | None) -> None:
        """Colour events on the timeline (a diff's changed names; None: none), under the
        highlighted name's emphasis."""
        self._tints = tints
        self.push_highlights()

    def tints(self) -> EventTints | None:
        return self._tints

    def push_highlights(self) -> None:
        """(Re)apply the highlighted rows and marks to the timeline."""
        reports = self._shown.reports
        if not reports:
            return
        tables = [reports.slice_tables(i) for i in range(len(reports))]
        rows = {k: v for k, v in self._rows.items() if k[1] in tables[k[0]]}
        try:
            self._timeline.state.set_highlights(rows, self._marks, self._tints)
        except (IndexError, KeyError) as exc:  # the timeline shows another report set
            log.debug("highlights not applied: %s", exc)

    # -- a name ---------------------------------------------------------------------------

    def activate_name(
        self,
        name: str,
        kind: str,
        then: Callable[[], None] | None = None,
        group: tuple | None = None,
    ) -> None:
        """Highlight every instance of a name (others dimmed) and show its histogram.

        ``group`` is the table row's ``(key, style)`` (see :class:`NameHighlight`); without
        it the group whose full name is ``name`` is meant. ``then`` runs on the GUI thread
        once the instances are shown, before :attr:`instances_changed` is emitted.
        """
        shown = self._shown
        if not shown.reports:
            return
        active = NameHighlight(name, kind, tuple(group) if group is not None else (None, None))
        scope = self._panel.scope()
        window = scope_window(scope, self._state) or (None, None)
        request = StatsRequest(kind, scope, window[0], window[1], shown.key)

        def work(_progress, _cancel) -> _NameResult:
            index = shown.index(kind)
            # The instances of the scope (time range and report), as the histogram counts
            # them: Next / Previous said "10 instances" beside a histogram of 3 once a range
            # was selected.
            every = index.instances(name_groups(index, active), request.t0_ns, request.t1_ns,
                                    report_index=scope.report_index)  # fmt: skip
            every = with_shared_start(every, list(shown.offsets))
            rows = highlight_rows(shown.reports, kind, every)
            return _NameResult(active, shown.key, every, histogram_of(index, active, request), rows)

        job = self._runner.submit(work, channel="instances")
        job.finished.connect(lambda result: self._on_name_ready(result, then))
        job.failed.connect(self._on_job_failed)

    def _on_name_ready(self, result: _NameResult, then: Callable[[], None] | None) -> None:
        if result.key != self._shown.key:
            return
        self._state.set_highlight(result.active)
        self._set_instances(result.instances, result.rows)
        self.show_histogram(result.histogram)
        if then is not None:
            then()
        self.instances_changed.emit(self._instances)

    def highlight_events(self, rows: dict, instances: pd.DataFrame) -> None:
        """Emphasise exactly ``rows`` (``(report_index, table) -> rows``, over several tables:
        an op's ranges and its kernels) with no name highlighted; Next / Previous step
        through ``instances`` (``report_index``, ``table``, ``row``, ``start_ns``,
        ``end_ns``)."""
        self._state.set_highlight(None)
        self._panel.histogram.clear()
        self._set_instances(with_shared_start(instances, list(self._shown.offsets)), rows)
        self.instances_changed.emit(self._instances)

    def _set_instances(self, instances: pd.DataFrame, rows: dict) -> None:
        self._instances, self._position = instances, -1
        self._panel.set_instance_text(pluralize(len(instances), "instance"))
        self._rows = rows
        self.push_highlights()

    def _on_job_failed(self, error: Exception) -> None:
        text = error_text(error)
        self._panel.set_status(f"Failed: {text}")
        self.failed.emit(text)

    def refresh(self) -> None:
        """Recompute the highlighted name for a new scope (its instances follow the report)."""
        active = self._state.highlight()
        if active is not None:
            self.activate_name(active.name, active.kind, group=active.group)

    # -- instances ------------------------------------------------------------------------

    def instances(self) -> pd.DataFrame:
        """Return the instances Next/Previous step through, in shared-axis time order."""
        return self._instances

    def position(self) -> int:
        return self._position

    def _go_to(self, position: int, zoom: bool | None) -> None:
        """Make ``position`` current; show it on the timeline unless ``zoom`` is None."""
        self._position = position
        self._panel.set_instance_text(f"{position + 1:,} / {len(self._instances):,}")
        if zoom is not None:
            self.focus(self._instance_ref(position), zoom=zoom)

    def point_at(self, report_index: int, start_ns: int) -> None:
        """Make the instance of ``report_index`` starting at ``start_ns`` the current one."""
        inst = self._instances
        here = np.flatnonzero(
            (inst["report_index"].to_numpy() == report_index)
            & (inst["start_ns"].to_numpy() == start_ns)
        )
        if len(here):
            self._go_to(int(here[0]), zoom=None)

    def step(self, direction: int) -> None:
        """Go to the next (+1) or previous (-1) instance in time order and show it."""
        count = len(self._instances)
        if not count:
            return
        if self._position < 0:
            self._go_to(0 if direction > 0 else count - 1, zoom=False)
        else:
            self._go_to((self._position + direction) % count, zoom=False)

    def zoom_to_longest(self, name: str, kind: str, group: tuple | None = None) -> None:
        """Zoom the timeline to the longest instance of ``name`` (of ``group``, as
        :meth:`activate_name`)."""
        wanted = NameHighlight(name, kind, tuple(group) if group is not None else (None, None))
        if self._state.highlight() != wanted:
            self.activate_name(name, kind, lambda: self.zoom_to_longest(name, kind, group), group)
            return
        if not len(self._instances):
            return
        inst = self._instances
        self._go_to(int(np.argmax((inst["end_ns"] - inst["start_ns"]).to_numpy())), zoom=True)

    def _instance_ref(self, position: int) -> EventRef | None:
        row = self._instances.iloc[position]
        report_index, table = int(row["report_index"]), str(row["table"])
        active = self._state.highlight()
        refs = instance_refs(self._shown.reports, report_index, table,
                             [row["row"]], [row["start_ns"]], [row["end_ns"]],
                             [active.name if active else ""])  # fmt: skip
        return refs[0] if refs else None

    def focus(self, ref: EventRef | None, zoom: bool) -> None:
        """Show ``ref`` on the timeline (zoomed to it, or centred), select it and scroll its
        row into view."""
        focus_event(self._timeline, self._shown.reports, self._shown.offsets, ref, zoom)

    # -- histogram ------------------------------------------------------------------------

    def show_histogram(self, histogram: Histogram) -> None:
        """Draw the histogram computed for the highlighted name."""
        inst = histogram.in_scope
        self._histogram_values = inst
        labels = self._shown.labels
        report_index = inst["report_index"].to_numpy()
        values = inst["value"].to_numpy()
        series = {labels[r]: values[report_index == r]
                  for r in np.unique(report_index).tolist() if r < len(labels)}  # fmt: skip
        unit = panel_unit(histogram.active.kind)
        # The count first and the name as the table shows it: a long demangled name, cut
        # at the end, hid the count; the full name follows (whole in the tooltip).
        name = histogram.active.name
        shown = self._panel.shown_name(name)
        title = f"{pluralize(len(inst), 'instance')} of {shown}"
        title += f" · {name}" if shown != name else ""
        self._panel.histogram.set_data(title, series, histogram.median, histogram.threshold, unit)

    def histogram_instances(self) -> pd.DataFrame:
        """Return the instances the histogram shows (those of the scope)."""
        return self._histogram_values

    def select_durations(self, lo: float, hi: float) -> None:
        """Make the instances whose value lies in ``[lo, hi]`` the highlighted ones."""
        inst, active = self._histogram_values, self._state.highlight()
        if active is None or not len(inst):
            return
        values = inst["value"].to_numpy()
        chosen = with_shared_start(inst[(values >= lo) & (values <= hi)], list(self._shown.offsets))
        self._set_instances(chosen, highlight_rows(self._shown.reports, active.kind, chosen))
        self.instances_changed.emit(self._instances)
