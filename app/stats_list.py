"""One lifecycle for every list tab of the stats panel (:class:`~viewer.stats_tabs.StatsTab`
with ``compute``): compute its result on a worker for the shown reports, drop a result that
is no longer asked for, say it is computing, list the result for the panel's scope and its
option with a status line, say what failed, and run the tab's ``on_row`` when a row is
chosen.

When it computes again and when it only lists again is the tab's description: a new set of
reports always computes again (``lazy``: once the tab is shown), ``recompute_on`` names what
else does (offsets, scope, option), ``follows`` what lists the same result again. A tab that
does more (marks on the timeline, an overlay) subclasses :class:`ListTab` and names the
subclass as its ``lifecycle``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from PySide6.QtCore import QObject, QTimer, Signal

from strata.analysis.reportset import ReportSet
from strata.app.context import AppContext
from strata.app.event_lookup import instance_refs, scroll_track_into_view
from strata.app.jobs import JobRunner
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports, error_text
from strata.viewer.state import scope_window
from strata.viewer.stats_panel import StatsPanel
from strata.viewer.stats_tabs import StatsTab, TabScope
from strata.viewer.timeline import TimelineWidget

__all__ = ["ListTab", "TabContext"]

#: A moving view lists a tab that follows it again once it rests this long (a drag moves it
#: every frame).
_RELIST_MS = 60


@dataclass(frozen=True)
class TabContext:
    """What a running tab works with: the panel, the job runner, the name highlighter, the
    timeline and the window's :class:`~app.context.AppContext` (its report list, binding,
    theme; never the window itself)."""

    panel: StatsPanel
    runner: JobRunner
    highlighter: NameHighlighter
    timeline: TimelineWidget
    app: AppContext


class ListTab(QObject):
    """Run one list tab of the panel.

    Signals
    -------
    ready(object)
        The tab's result for the shown reports is computed and listed.
    failed(str)
        Computing it failed (one line).
    """

    ready = Signal(object)
    failed = Signal(str)

    def __init__(self, tab: StatsTab, context: TabContext) -> None:
        super().__init__(context.panel)
        self.tab, self.context = tab, context
        self.shown = ShownReports()
        self._result: object | None = None
        self._asked: object | None = None  # what the result (or the running job) is for
        panel, state = context.panel, context.timeline.state
        panel.kind_changed.connect(self._on_kind_changed)
        panel.scope_changed.connect(lambda _scope: self._update("scope"))
        panel.option_changed.connect(self._on_option_changed)
        panel.row_chosen.connect(self._on_row_chosen)
        self._relist_timer = QTimer(self)
        self._relist_timer.setSingleShot(True)
        self._relist_timer.setInterval(_RELIST_MS)
        self._relist_timer.timeout.connect(lambda: self._update("view_range"))
        if "view_range" in tab.follows:
            state.view_range_changed.connect(self._on_view_range_changed)
        if "selection" in tab.follows:
            state.selection_changed.connect(lambda _selection: self._update("selection"))

    # -- what callers ask -----------------------------------------------------------------

    def result(self) -> object | None:
        """The tab's result for the shown reports (None: not computed yet)."""
        return self._result

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports: a new set is computed again (on a worker)."""
        moved = shown.offsets != self.shown.offsets
        self.shown = shown
        if is_new:
            self._result, self._asked = None, None
        self._update("offsets" if moved and not is_new else "reports")

    def scope(self) -> TabScope:
        """What the tab is asked for now (:class:`viewer.stats_tabs.TabScope`)."""
        panel, shown = self.context.panel, self.shown
        scope = panel.scope()
        return TabScope(scope, scope_window(scope, self.context.timeline.state),
                        panel.option(self.tab.id), shown.labels, shown.offsets,
                        shown.alignment)  # fmt: skip

    def relist(self) -> pd.DataFrame | None:
        """List the result for the scope now; return the rows shown (None: no result)."""
        self._relist_timer.stop()
        if self._result is None:
            return None
        frame, status = self.rows(self._result, self.scope())
        self.show(frame, status)
        return frame

    def choose(self, record: dict) -> None:
        """Run the tab's row action on ``record`` (a row's fields), as a chosen row does."""
        if self.tab.on_row is not None:
            self.tab.on_row(self, record)

    def show(self, frame: pd.DataFrame, status: str = "", row_colors=None) -> None:
        """Show ``frame`` in the tab (see :meth:`StatsPanel.show_rows`)."""
        self.context.panel.show_rows(self.tab.id, frame, status, row_colors)

    # -- what a tab's description or subclass fills in ------------------------------------

    def rows(self, result: object, scope: TabScope) -> tuple[pd.DataFrame, str]:
        """The rows to list for ``result`` now, and the status line."""
        if self.tab.rows is not None:
            return self.tab.rows(result, scope)
        return result, ""

    def compute(self, reports: ReportSet, scope: TabScope) -> object:
        """The tab's result (on a worker)."""
        return self.tab.compute(reports, scope)

    def cleared(self) -> None:
        """The result is gone (new reports, or what it was computed for changed); a
        computation follows unless there is nothing to compute yet."""

    def finished(self, result: object) -> None:
        """``result`` is the tab's now, before it is listed."""

    def became_current(self) -> None:
        """The tab was chosen."""

    # -- what row actions use -------------------------------------------------------------

    def focus_row(self, report_index: int, table: str, row: int, start_ns: int, end_ns: int,
                  name: str, zoom: bool = True) -> bool:  # fmt: skip
        """Show an event of a shown report (its ``table`` row, report time) on the timeline,
        selected; return whether the timeline draws it."""
        refs = instance_refs(self.shown.reports, report_index, table, [row], [start_ns],
                             [end_ns], [name])  # fmt: skip
        if refs:
            self.context.highlighter.focus(refs[0], zoom=zoom)
        return bool(refs)

    def select_span(self, start_ns: int, end_ns: int, rows: list[str], pad_ns: int) -> None:
        """Show ``[start_ns, end_ns)`` (shared axis) with ``pad_ns`` on each side, selected
        over ``rows`` (track keys), the first of them scrolled into view."""
        timeline = self.context.timeline
        timeline.state.set_view_range(start_ns - pad_ns, end_ns + pad_ns)
        timeline.state.select(start_ns, end_ns, rows)
        if rows:
            scroll_track_into_view(timeline, rows[0])

    # -- the lifecycle --------------------------------------------------------------------

    def _wanted(self, scope: TabScope) -> tuple:
        """What a result must have been computed for to be listed under ``scope``."""
        fields = {"offsets": scope.offsets_ns, "scope": scope.scope, "option": scope.option}
        return (self.shown.key[0], *(fields[f] for f in sorted(self.tab.recompute_on)))

    def _update(self, change: str) -> None:
        """Compute again when ``change`` makes the result another one; else list it again
        when the tab follows ``change``."""
        scope = self.scope()
        wanted = self._wanted(scope)
        if wanted != self._asked:
            self._start(scope, wanted)
        elif change in self.tab.follows:
            self.relist()

    def _start(self, scope: TabScope, wanted: tuple) -> None:
        self._result = None
        self.cleared()
        is_shown = self.context.panel.kind() == self.tab.id
        if not len(self.shown.reports) or (self.tab.lazy and not is_shown):
            self._asked = None if self.tab.lazy else wanted
            self.show(pd.DataFrame())  # no rows of a set that is gone
            return
        self.show(pd.DataFrame(), self.tab.loading)
        reports = self.shown.reports
        self._submit(lambda: self.compute(reports, scope), wanted)

    def _submit(self, work: Callable[[], object], wanted: object) -> None:
        """Run ``work()`` on a worker for ``wanted``; its result is the tab's unless another
        is asked for meanwhile."""
        self._asked = wanted
        job = self.context.runner.submit(lambda _p, _c: work(), channel=self.tab.id)
        job.finished.connect(lambda value: self._on_computed(wanted, value))
        job.failed.connect(lambda error: self._on_failed(wanted, error))

    def _on_computed(self, wanted: object, value: object) -> None:
        if wanted != self._asked:
            return  # computed for reports, offsets or a scope no longer shown
        self._result = value
        self.finished(value)
        self.relist()
        self.ready.emit(value)

    def _on_failed(self, wanted: object, error: Exception) -> None:
        if wanted == self._asked:
            self.show_failure(error)

    def show_failure(self, error: Exception) -> None:
        """Say in the tab what failed, and emit :attr:`failed`."""
        text = error_text(error)
        self.show(pd.DataFrame(), f"{self.tab.failure or self.tab.title} failed: {text}")
        self.failed.emit(text)

    def _on_kind_changed(self, kind: str) -> None:
        if kind == self.tab.id:
            self.became_current()
            if self.tab.lazy:
                self._update("shown")

    def _on_option_changed(self, tab_id: str, _value: str) -> None:
        if tab_id == self.tab.id:
            self._update("option")

    def _on_view_range_changed(self, *_range) -> None:
        if self.context.panel.scope().range_mode == "visible" and self._result is not None:
            self._relist_timer.start()

    def _on_row_chosen(self, tab_id: str, record: dict) -> None:
        if tab_id == self.tab.id:
            self.choose(record)
