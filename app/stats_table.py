"""The stats panel's table: the current tab's summary for the current scope (whole run, the
visible range or the timeline state's selection), computed on a worker.

Requests are coalesced: while one job runs, newer requests only mark the table dirty, and
the latest scope runs next (a result computed for a scope that has changed meanwhile is
dropped). The same job computes the highlighted name's histogram for the table's window.

Every table is :meth:`analysis.reportset.ReportSet.summary`'s (:func:`app.stats_jobs.panel_table`).
The panel never waits for a kind's window index: the first request starts its build on a
worker (progress in the status line, cancelled when the reports change or the window
closes) and is answered by the one-shot strategy meanwhile (the same numbers; an answer for
a window the user has already left is dropped); once the index is built, the table asks
again and the index answers.
"""

from __future__ import annotations

import time

import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.errors import CancelledError
from strata.analysis.timefmt import pluralize
from strata.app.jobs import Job, JobRunner
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import (
    ShownReports,
    StatsPanelResult,
    StatsRequest,
    error_text,
    histogram_of,
    panel_table,
)
from strata.viewer.state import Scope, TimelineSelection, TimelineState, scope_window
from strata.viewer.stats_panel import StatsPanel

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
        self._builds: dict[tuple, Job] = {}  # (reports key, kind) -> its index build
        self._unbuildable: set[tuple] = set()  # builds that failed: the one-shot answers
        self._build_done: dict[str, float] = {}  # kind -> fraction of its index built
        self._status: dict[str, str] = {}  # kind -> its shown result's status line
        state.view_range_changed.connect(self._on_view_range_changed)
        state.selection_changed.connect(self._on_selection_changed)

    def set_shown(self, shown: ShownReports) -> None:
        """Follow the shown reports (then call :meth:`request_stats`); the index builds for
        other reports or offsets stop."""
        self._shown = shown
        for key in [k for k in self._builds if k[0] != shown.key]:
            self._builds.pop(key).cancel()
        self._build_done.clear()
        self._status.clear()

    def cancel_builds(self) -> None:
        """Stop every index build (a report was closed: they index a set that is gone)."""
        for job in self._builds.values():
            job.cancel()
        self._builds.clear()
        self._build_done.clear()

    def is_indexing(self, kind: str | None = None) -> bool:
        """Whether an index (of ``kind``; None: any) of the shown reports is being built."""
        return any(k[0] == self._shown.key and kind in (None, k[1]) for k in self._builds)

    def is_running(self) -> bool:
        """Whether a table job is running."""
        return self._is_running

    def request_stats(self) -> None:
        """Recompute the current tab for the current scope (coalesced, on a worker)."""
        kind, shown = self._panel.kind(), self._shown
        if not self._panel.current_tab().is_summary or not shown.reports:
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
        tracks = self._state.tracks() if rows else None

        indexed = bool(rows) or shown.index(kind, build=False) is not None
        if not indexed:
            self._build_index(kind, shown)
        if active is not None and shown.index(active.kind, build=False) is None:
            self._build_index(active.kind, shown)  # its histogram, once it is built

        def work(_progress, cancel) -> StatsPanelResult:
            # The index if it is built (maybe since this request), else the one-shot path.
            started = time.perf_counter()
            frame, is_indexed = panel_table(shown, request, tracks, cancel)
            elapsed = (time.perf_counter() - started) * 1e3
            counts = [c for c in frame.columns if c == "count" or c.endswith("|count")]
            events = int(frame[counts].to_numpy().sum()) if counts else 0
            # The histogram follows the table's window in the same job: one count (once
            # the highlighted kind's index is built; the table asks again then).
            histogram = None
            hist_index = None if active is None else shown.index(active.kind, build=False)
            if hist_index is not None:
                histogram = histogram_of(hist_index, active, request)
            return StatsPanelResult(request, frame, events, elapsed, histogram, is_indexed)

        self._is_running, self._is_dirty = True, False
        if not indexed and not self._status.get(kind):
            self._panel.set_status(self._with_progress("Computing…", kind))
        job = self._runner.submit(work, channel="stats")
        job.finished.connect(self._on_stats_ready)
        job.failed.connect(self._on_stats_failed)

    # -- the index build --------------------------------------------------------------------

    def _build_index(self, kind: str, shown: ShownReports) -> None:
        """Build ``kind``'s index of ``shown`` on a worker, once; ask again when it is built."""
        key = (shown.key, kind)
        if key in self._builds or key in self._unbuildable:
            return
        self._build_done[kind] = 0.0
        job = self._runner.submit(
            lambda progress, cancel: shown.index(kind, True, progress, cancel),
            channel=f"stats-index:{kind}",
        )
        self._builds[key] = job
        job.progressed.connect(lambda fraction, _text: self._on_index_progress(key, fraction))
        job.finished.connect(lambda _index: self._on_index_built(key))
        job.failed.connect(lambda error: self._on_index_failed(key, error))

    def _on_index_progress(self, key: tuple, fraction: float) -> None:
        kind = key[1]
        if key not in self._builds or self._build_done.get(kind, 0.0) >= fraction:
            return
        self._build_done[kind] = fraction
        if kind == self._panel.kind():
            status = self._status.get(kind) or "Computing…"
            self._panel.set_status(self._with_progress(status, kind))

    def _on_index_built(self, key: tuple) -> None:
        self._builds.pop(key, None)
        self._build_done.pop(key[1], None)
        if key[0] == self._shown.key:
            self.request_stats()  # the index answers from now on (the same numbers)

    def _on_index_failed(self, key: tuple, error: Exception) -> None:
        self._builds.pop(key, None)
        self._build_done.pop(key[1], None)
        if isinstance(error, CancelledError) or key[0] != self._shown.key:
            return
        self._unbuildable.add(key)  # the one-shot path keeps answering
        text = error_text(error)
        self._panel.set_status(f"Indexing failed: {text}")
        self.failed.emit(text)

    def _with_progress(self, status: str, kind: str) -> str:
        """``status``, plus how far the index of ``kind`` is while it is being built."""
        done = self._build_done.get(kind)
        if done is None:
            return status
        return f"{status} · indexing {done:.0%}".replace("%", " %")

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
        if not result.is_indexed and not is_stale:
            # The one-shot path takes ~0.5 s per 10 M events: an answer for a window the
            # user has left is dropped, the latest window runs next.
            window = scope_window(panel.scope(), self._state)
            is_stale = window is None or tuple(window) != (request.t0_ns, request.t1_ns)
        if not is_stale:
            n = len(self._shown.reports)
            events, reports = pluralize(result.events, "event"), pluralize(n, "report")
            status = f"{events} · {reports} · {result.elapsed_ms:,.0f} ms"
            status = status if result.is_indexed else f"{status} (unindexed)"
            self._status[request.kind] = status
            panel.show_table(request.kind, result.frame,
                             self._with_progress(status, request.kind))  # fmt: skip
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
