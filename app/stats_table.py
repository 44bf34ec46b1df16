"""The stats panel's table: the current tab's summary for the current scope (whole run, the
visible range or the timeline state's selection), computed on a worker.

Requests are coalesced: while one job runs, newer requests only mark the table dirty, and
the latest scope runs next (a result computed for a scope that has changed meanwhile is
dropped). The same job computes the highlighted name's histogram for the table's window.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pandas as pd
from PySide6.QtCore import QObject, Signal

from analysis.area import area_stats
from analysis.timefmt import pluralize
from analysis.tracks import Track
from app.jobs import JobRunner
from app.stats_highlight import NameHighlighter
from app.stats_jobs import (
    ShownReports,
    StatsPanelResult,
    StatsRequest,
    error_text,
    histogram_of,
    stats_frame,
)
from viewer.state import Scope, TimelineSelection, TimelineState, scope_window
from viewer.stats_panel import OWN_TABS, StatsPanel

__all__ = ["StatsTable"]


class StatsTable(QObject):
    """Keep the panel's table in step with its tab, its scope and the timeline state.

    Signals
    -------
    table_ready(str)
        The current tab (this kind) shows a fresh result.
    failed(str)
        A job failed (one line).
    """

    table_ready = Signal(str)
    failed = Signal(str)

    def __init__(
        self,
        panel: StatsPanel,
        state: TimelineState,
        runner: JobRunner,
        highlighter: NameHighlighter,
    ) -> None:
        super().__init__(panel)
        self._panel, self._state, self._runner = panel, state, runner
        self._highlighter = highlighter
        self._shown = ShownReports()
        self._is_running = False
        self._is_dirty = False
        self._previous_range_mode = "all"
        state.view_range_changed.connect(self._on_view_range_changed)
        state.selection_changed.connect(self._on_selection_changed)

    def set_shown(self, shown: ShownReports) -> None:
        """Follow the shown reports (then call :meth:`request_stats`)."""
        self._shown = shown

    def is_running(self) -> bool:
        """Whether a table job is running."""
        return self._is_running

    def request_stats(self) -> None:
        """Recompute the current tab for the current scope (coalesced, on a worker)."""
        kind, shown = self._panel.kind(), self._shown
        if kind in OWN_TABS or not shown.reports:
            return
        if self._is_running:
            self._is_dirty = True
            return
        scope = self._panel.scope()
        window = scope_window(scope, self._state)
        if window is None:
            self._panel.show_table(kind, pd.DataFrame(), "Shift-drag on the timeline to select")
            return
        selection = self._state.selection()
        rows = selection.rows if scope.range_mode == "selection" and selection else ()
        request = StatsRequest(kind, scope, window[0], window[1], shown.key, rows)
        active = self._state.highlight()
        area = _area_of(shown, request, self._state.tracks()) if rows else None

        def work(_progress, _cancel) -> StatsPanelResult:
            index = shown.index(kind)
            started = time.perf_counter()
            frame = stats_frame(index, request, len(shown.reports), area)
            elapsed = (time.perf_counter() - started) * 1e3
            counts = [c for c in frame.columns if c == "count" or c.endswith("|count")]
            events = int(frame[counts].to_numpy().sum()) if counts else 0
            # The histogram follows the table's window in the same job: one count.
            histogram = None
            if active is not None:
                histogram = histogram_of(shown.index(active.kind), active, request)
            return StatsPanelResult(request, frame, events, elapsed, histogram)

        self._is_running, self._is_dirty = True, False
        if shown.index(kind, build=False) is None:  # the first request of a kind sorts once
            self._panel.set_status("Indexing the events (once per set of reports)…")
        job = self._runner.submit(work, channel="stats")
        job.finished.connect(self._on_stats_ready)
        job.failed.connect(self._on_stats_failed)

    def _on_stats_ready(self, result: StatsPanelResult) -> None:
        self._is_running = False
        request, panel = result.request, self._panel
        # Another tab, report set or scope: drop it. A window that moved on while the job
        # ran is still shown (the panel follows a drag live), then the latest one runs.
        is_stale = (
            request.key != self._shown.key
            or request.kind != panel.kind()
            or request.scope != panel.scope()
        )
        if not is_stale:
            n = len(self._shown.reports)
            events, reports = pluralize(result.events, "event"), pluralize(n, "report")
            status = f"{events} · {reports} · {result.elapsed_ms:,.0f} ms"
            panel.show_table(request.kind, result.frame, status)
            histogram = result.histogram
            if histogram is not None and histogram.active == self._state.highlight():
                self._highlighter.show_histogram(histogram)
        if self._is_dirty or is_stale:
            self._is_dirty = False
            self.request_stats()
        elif not is_stale:
            self.table_ready.emit(request.kind)

    def _on_stats_failed(self, error: Exception) -> None:
        self._is_running = False
        text = error_text(error)
        self._panel.set_status(f"Failed: {text}")
        self.failed.emit(text)
        if self._is_dirty:
            self._is_dirty = False
            self.request_stats()

    def _on_view_range_changed(self, *_range) -> None:
        if self._panel.scope().range_mode == "visible":
            self.request_stats()

    def _on_selection_changed(self, selection: TimelineSelection | None) -> None:
        # A new selection switches the scope to it; clearing it switches back.
        scope = self._panel.scope()
        if selection is not None and scope.range_mode != "selection":
            self._previous_range_mode = scope.range_mode
            self._panel.set_scope(Scope("selection", scope.report_index, scope.by_report))
        elif selection is None and scope.range_mode == "selection":
            self._panel.set_scope(Scope(self._previous_range_mode, scope.report_index,
                                        scope.by_report))  # fmt: skip
        elif scope.range_mode == "selection":
            self.request_stats()


def _area_of(shown: ShownReports, request: StatsRequest, tracks: list[Track]) -> Callable:
    """``area(by_report)``: the request's area (its rows × its window) summarised."""
    wanted = set(request.rows)
    chosen = [t for t in tracks if t.key in wanted]
    scope = request.scope

    def area(by_report: bool) -> pd.DataFrame:
        return area_stats(shown.reports, request.kind, chosen, request.t0_ns, request.t1_ns,
                          shown.offsets, scope.report_index, by_report)  # fmt: skip

    return area
