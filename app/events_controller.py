"""Wire the Events view to the timeline: it lists the selected area's events, both ways linked.

The area is the timeline state's selection (rows × time; no rows: every row); its events are
gathered on a worker (:func:`analysis.area.area_events`). Clicking a row centres and selects
its event on the timeline; picking an event on the timeline selects its row in the table.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDockWidget, QFileDialog

from strata.analysis.area import AreaEvents, area_events, area_frame, write_area_csv
from strata.analysis.errors import StrataError
from strata.analysis.reportset import ReportSet
from strata.app.context import AppContext
from strata.app.event_lookup import focus_event
from strata.app.stats_jobs import error_text
from strata.viewer.events import EventRef, describe_event, event_ref
from strata.viewer.events_view import EventsView
from strata.viewer.state import TimelineSelection

__all__ = ["EventsController", "install_events_view"]

_HINT = "Shift-drag on the timeline to list a time range (Ctrl+Shift-drag: rows × time)"


class EventsController(QObject):
    """Keep an :class:`EventsView` on the timeline state's selection.

    Signals
    -------
    events_ready(object)
        The view shows the :class:`~analysis.area.AreaEvents` of the current selection.
    """

    events_ready = Signal(object)

    def __init__(self, context: AppContext, view: EventsView, dock: QDockWidget | None) -> None:
        super().__init__(context.window)
        self._context, self.view, self.dock = context, view, dock
        self._timeline = context.timeline
        self._state = context.state
        self._state.selection_changed.connect(lambda _selection: self.refresh())
        context.binding.layout_changed.connect(lambda *_args: self.refresh())
        self._timeline.event_clicked.connect(self._on_event_clicked)
        view.event_activated.connect(self.show_event)
        view.export_requested.connect(self._on_export_requested)
        if dock is not None:
            dock.visibilityChanged.connect(lambda visible: visible and self.refresh())
        view.set_events(None, (), hint=_HINT)

    def refresh(self) -> None:
        """List the events of the current selection again (on a worker)."""
        if self.dock is not None and not self.dock.isVisible():
            return  # nothing to show: no work
        selection = self._state.selection()
        binding = self._context.binding
        if selection is None or not binding.tracks():
            self.view.set_events(None, (), hint=_HINT)
            return
        reports, offsets = binding.shown_set(), list(binding.offsets_ns())
        tracks = _area_tracks(self._state, selection)

        def work(_progress, _cancel) -> AreaEvents:
            return area_events(reports, tracks, selection.t0_ns, selection.t1_ns, offsets)

        job = self._context.runner.submit(work, channel="events_view")
        job.finished.connect(lambda events: self._on_events(events, selection, reports))
        job.failed.connect(
            lambda error: self.view.set_events(None, (), hint=f"Failed: {error_text(error)}")
        )

    def _on_events(self, events: AreaEvents, selection: TimelineSelection, reports) -> None:
        if selection != self._state.selection() or reports is not self._context.binding.shown_set():
            return
        labels = tuple(reports.labels)
        self.view.set_events(events, labels, lambda position: self._details(events, position))
        selected = self._state.selected_event()
        if selected is not None:
            self.view.follow(events.find(selected.report_index, selected.table, selected.index))
        self.events_ready.emit(events)

    def _ref(self, events: AreaEvents, position: int) -> EventRef:
        r = int(events.report_index[position])
        tables = self._context.binding.shown_set().slice_tables(r)
        ref = event_ref(tables, r, events.tables[int(events.table_codes[position])],
                        int(events.index[position]))  # fmt: skip
        key = events.row_keys[int(events.row[position])]
        return replace(ref, track_key=key)

    def _details(self, events: AreaEvents, position: int) -> str:
        """The kind's own fields of one event (grid, block, bytes, launched by…)."""
        ref = self._ref(events, position)
        binding = self._context.binding
        report = binding.shown_set()[ref.report_index]
        tables = binding.shown_set().slice_tables(ref.report_index)
        lines = describe_event(report, ref, "", 0, tables)
        skip = {"Name", "Start", "Duration", "Row"}
        return "  ·  ".join(f"{k}: {v}" for k, v in lines if k not in skip)

    def show_event(self, position: int) -> None:
        """Centre and select the event at ``position`` of the listed events on the timeline."""
        events = self.view.model.events()
        if events is None or not 0 <= position < len(events):
            return
        ref = self._ref(events, position)
        binding = self._context.binding
        focus_event(self._timeline, binding.shown_set(), binding.offsets_ns(), ref, zoom=False)
        self._timeline.event_clicked.emit(ref)

    def _on_event_clicked(self, ref: EventRef | None) -> None:
        events = self.view.model.events()
        if events is None or ref is None:
            return
        self.view.follow(events.find(ref.report_index, ref.table, ref.index))

    def export_csv(self, path: str | Path) -> Path:
        """Write the rows the view lists (filtered, sorted) to ``path`` as CSV."""
        events = self.view.model.events()
        labels = tuple(self._context.binding.shown_set().labels)
        if events is None:
            return write_area_csv(
                area_frame(area_events(ReportSet(), [], None, None, []), labels), path
            )
        return write_area_csv(area_frame(events, labels, self.view.model.positions()), path)

    def _on_export_requested(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.view, "Export CSV", str(Path.home() / "events.csv"), "CSV files (*.csv)"
        )
        if path:
            try:
                self.export_csv(path)
            except StrataError as exc:
                self.view.count_label.setText(str(exc))


def _area_tracks(state, selection: TimelineSelection) -> list:
    """The tracks of an area selection: its rows, or every shown row when it names none."""
    hidden = set(state.hidden_keys())
    wanted = set(selection.rows)
    return [t for t in state.tracks()
            if (t.key in wanted if wanted else t.key not in hidden)]  # fmt: skip


def install_events_view(context: AppContext) -> EventsController:
    """Dock the Events view under the timeline (tabbed with the Reports panel) and wire it;
    return the controller."""
    view = EventsView(context.window)
    dock = context.add_bottom_panel(view, "Events", "eventsDock")
    return EventsController(context, view, dock)
