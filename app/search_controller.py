"""Wire the search bar (Ctrl+F) to the shown reports, the timeline state and a worker.

The text is matched on a worker (:func:`analysis.search.search_events`, a few hundred ms at
10 M events); the count and the current match live in the timeline state
(:meth:`viewer.state.TimelineState.search`); the matching events stand out on the timeline,
every other event dimmed, and Enter / Shift+Enter centre and select them in time order.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QToolBar

from strata.analysis.errors import AnalysisError
from strata.analysis.search import SearchMatches, compile_search, search_events
from strata.app.context import AppContext
from strata.app.event_lookup import focus_event
from strata.app.stats_jobs import error_text
from strata.viewer.access import name_control
from strata.viewer.events import EventRef, event_ref
from strata.viewer.search_bar import SearchBar
from strata.viewer.state import SearchState

__all__ = ["SearchController", "install_search"]


class SearchController(QObject):
    """Keep the search bar, the timeline state and the matches in step.

    Signals
    -------
    matches_ready(object)
        The :class:`~analysis.search.SearchMatches` of the current text.
    cleared()
        The search ended: the timeline's own highlights (a stats-panel name) may come back.
    """

    matches_ready = Signal(object)
    cleared = Signal()

    def __init__(self, context: AppContext, bar: SearchBar) -> None:
        super().__init__(context.window)
        self._context, self.bar = context, bar
        self._timeline = context.timeline
        self._state = context.state
        self._matches: SearchMatches | None = None
        self._pending_step = 0
        bar.search_requested.connect(self.search)
        bar.step_requested.connect(self.step)
        bar.closed.connect(self.close)
        self._state.search_changed.connect(bar.show_state)
        context.binding.layout_changed.connect(self._on_layout_changed)

    def matches(self) -> SearchMatches | None:
        """Return the matches of the current text (None while searching or cleared)."""
        return self._matches

    def search(self, text: str, is_regex: bool = False) -> None:
        """Search the shown reports for ``text`` (on a worker); '' clears."""
        state = self._state
        is_new = (text, is_regex) != (state.search().text, state.search().is_regex)
        state.set_search(text, is_regex)
        if not text:
            self._clear_matches()
            return
        try:
            compile_search(text, is_regex)
        except AnalysisError as exc:  # said in the bar at once, no worker
            self._clear_matches()
            self._state.set_search_result(0, str(exc))
            return
        if is_new or self._matches is None:
            self._run(text, is_regex)

    def _run(self, text: str, is_regex: bool) -> None:
        binding = self._context.binding
        reports, offsets = binding.shown_set(), list(binding.offsets_ns())
        self._matches = None
        self._state.set_search(text, is_regex)

        def work(_progress, _cancel) -> SearchMatches:
            return search_events(reports, text, is_regex, offsets)

        job = self._context.runner.submit(work, channel="search")
        job.finished.connect(lambda matches: self._on_matches(matches, is_regex, reports))
        job.failed.connect(self._on_failed)

    def _on_matches(self, matches: SearchMatches, is_regex: bool, reports) -> None:
        search = self._state.search()
        if (matches.pattern, is_regex) != (search.text, search.is_regex):
            return  # an older text's answer
        if reports is not self._context.binding.shown_set():
            self._run(search.text, search.is_regex)  # the reports changed meanwhile
            return
        self._matches = matches
        self._state.set_search_result(len(matches))
        self._highlight(matches)
        self.matches_ready.emit(matches)
        step, self._pending_step = self._pending_step, 0
        if step:
            self.step(step)

    def _on_failed(self, error: Exception) -> None:
        self._matches = None
        self._state.set_search_result(0, error_text(error))

    def _highlight(self, matches: SearchMatches) -> None:
        reports = self._context.binding.shown_set()
        tables = [list(reports.slice_tables(r)) for r in range(len(reports))]
        rows = matches.rows(len(reports), tables)
        self._state.set_highlights(rows, self._state.marks(), self._state.tints())

    def step(self, direction: int) -> EventRef | None:
        """Centre and select the next (+1) or previous (-1) match; return it (None when
        there is none, or when the search still runs: the step follows its answer)."""
        if self._matches is None:
            self._pending_step = direction if self._state.search().is_active else 0
            return None
        position = self._state.step_search(direction)
        if position < 0:
            return None
        m = self._matches
        binding = self._context.binding
        r, table = int(m.report_index[position]), m.tables[int(m.table_codes[position])]
        ref = event_ref(binding.shown_set().slice_tables(r), r, table, int(m.index[position]))
        focus_event(self._timeline, binding.shown_set(), binding.offsets_ns(), ref, zoom=False)
        self._timeline.event_clicked.emit(ref)
        return ref

    def close(self) -> None:
        """End the search: highlights go, the bar hides, the timeline takes the keys."""
        self.bar.field.clear()
        self.search("")
        self.bar.hide()
        self._timeline.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _clear_matches(self) -> None:
        had = self._matches is not None
        self._matches, self._pending_step = None, 0
        if had:
            self._state.set_highlights(None, self._state.marks(), self._state.tints())
            self.cleared.emit()

    def _on_layout_changed(self, *_args) -> None:
        search: SearchState = self._state.search()
        if search.is_active and self._matches is not None:
            self._run(search.text, search.is_regex)  # new reports or offsets: match again


def install_search(context: AppContext) -> SearchController:
    """Put the search bar above the timeline of ``context.window`` (hidden until Ctrl+F) and
    wire it; return its controller.

    When the stats panel is installed (``context.stats``), its highlighted name comes back
    once the search ends.
    """
    window = context.window
    bar = SearchBar(window)
    tool_bar = QToolBar("Search", window)
    tool_bar.setObjectName("searchToolBar")
    tool_bar.setMovable(False)
    tool_bar.addWidget(bar).setText("Search")
    name_control(bar, "Search bar")
    window.addToolBarBreak()
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, tool_bar)
    tool_bar.hide()
    controller = SearchController(context, bar)
    bar.closed.connect(tool_bar.hide)

    def open_search() -> None:
        tool_bar.show()
        bar.focus_field()

    shortcut = QShortcut(QKeySequence.StandardKey.Find, window)
    shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
    shortcut.activated.connect(open_search)
    controller.open_search = open_search
    stats = context.stats
    if stats is not None:
        controller.cleared.connect(stats.highlighter.push_highlights)
    return controller
