"""What the window does with one event: its details pane, and its context menu's requests.

The timeline's right-click menu (viewer/event_menu.py) zooms, copies and pins by itself; it
asks app/ for the rest through signals, handled here: highlight every event of the name
(the stats highlight), show the name in the stats panel, show the event in the Events view,
make the event its report's alignment anchor (the binding aligns once each report has one).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget

from strata.analysis.event_fields import read_event_fields
from strata.analysis.timefmt import pluralize
from strata.app.context import AppContext
from strata.viewer.details_pane import EventDetailsPane
from strata.viewer.event_menu import stats_kind
from strata.viewer.events import EventRef, shown_name
from strata.viewer.state import AlignmentAnchor

__all__ = ["EventActions"]

log = logging.getLogger(__name__)


class EventActions(QObject):
    """The details dock of a window and its timeline's event requests.

    ``context`` is the window's :class:`~app.context.AppContext`: its stats panel and
    Events view, once installed, are ``context.stats`` and ``context.events``.
    """

    def __init__(self, context: AppContext) -> None:
        window = context.window
        super().__init__(window)
        self._context = context
        self.timeline = context.timeline
        self.pane = EventDetailsPane(window)
        self.dock = QDockWidget("Event Details", window)
        self.dock.setObjectName("detailsDock")
        self.dock.setWidget(self.pane)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        self.timeline.event_fields = read_event_fields
        context.state.event_selected.connect(self.show_details)
        self.timeline.name_highlight_requested.connect(self.highlight_name)
        self.timeline.show_in_stats_requested.connect(self.show_in_stats)
        self.timeline.show_in_events_requested.connect(self.show_in_events)
        self.timeline.anchor_requested.connect(self.use_as_anchor)
        self.timeline.collective_anchor_requested.connect(self.align_on_collective)

    def show_details(self, ref: EventRef | None) -> None:
        """Show every field of ``ref`` in the pane (its hover text's lines)."""
        try:
            lines = [] if ref is None else self.timeline.describe(ref)
        except (IndexError, KeyError) as exc:  # a ref of reports no longer shown
            log.debug("no details for %s: %s", ref, exc)
            lines = []
        self.pane.show_lines(lines)

    def _name_and_kind(self, ref: EventRef) -> tuple[str, str] | None:
        kind, reports = stats_kind(ref), self._context.binding.shown_reports()
        if kind is None or not 0 <= ref.report_index < len(reports):
            return None
        return shown_name(reports[ref.report_index], ref), kind

    def _stats(self):
        controller = self._context.stats
        if controller is None:
            self._context.show_status("The statistics panel is not open", 5000)
        return controller

    def highlight_name(self, ref: EventRef) -> None:
        """Highlight every event of ``ref``'s name (others dimmed), as a click in the stats
        table does."""
        found, controller = self._name_and_kind(ref), self._stats()
        if found is not None and controller is not None:
            controller.highlighter.activate_name(*found)

    def show_in_stats(self, ref: EventRef) -> None:
        """Show the stats panel's tab of ``ref``'s kind with its name's row selected."""
        found, controller = self._name_and_kind(ref), self._stats()
        if found is None or controller is None:
            return
        name, kind = found
        if controller.dock is not None:
            controller.dock.show()
            controller.dock.raise_()
        panel = controller.panel
        if panel.kind() == kind and panel.select_name(name):
            return

        def select(ready_kind: str) -> None:
            if ready_kind == kind:
                controller.table_ready.disconnect(select)
                panel.select_name(name)

        controller.table_ready.connect(select)
        panel.set_kind(kind)  # its table is computed on a worker, then selected

    def show_in_events(self, ref: EventRef) -> None:
        """Show ``ref`` among its row's events in the Events view: its row over the visible
        range (widened to take the whole event) becomes the area the view lists, and the view
        selects ``ref``'s line (it follows the timeline's selected event).

        Only the event's own time as the area listed the event alone: its neighbours, the
        context a user opens the list for, were missing.

        The Events view's controller is ``context.events`` (with its ``dock``).
        """
        controller = self._context.events
        dock = None if controller is None else controller.dock
        if dock is None:
            self._context.show_status("The Events view is not available", 5000)
            return
        dock.show()
        dock.raise_()
        state = self._context.state
        offset = state.offsets_ns()[ref.report_index]
        start, end = ref.start_ns + offset, max(ref.end_ns, ref.start_ns + 1) + offset
        view_start, view_end = state.view_range()
        state.select_event(ref)
        rows = (ref.track_key,) if ref.track_key else ()
        state.select(min(start, view_start), max(end, view_end), rows)

    def use_as_anchor(self, ref: EventRef) -> AlignmentAnchor | None:
        """Make ``ref`` its report's alignment anchor: once every report has one, their
        clocks are made to agree on the anchors' ends (the binding re-aligns)."""
        binding = self._context.binding
        path = binding.shown_path(ref.report_index)
        if path is None:
            return None
        table, row = (ref.source, ref.source_row) if ref.source else (ref.table, ref.index)
        anchor = AlignmentAnchor(path, table, int(row), int(ref.end_ns), ref.name)
        state = self._context.state
        state.set_anchor(anchor)
        paths = [binding.shown_path(i) for i in range(len(binding.shown_reports()))]
        missing = sum(a is None for a in state.anchors_of([p for p in paths if p]))
        if missing:
            text = (f"Alignment anchor set; {pluralize(missing, 'report')} still without one "
                    "(right-click an event of each: Use as Alignment Anchor)")  # fmt: skip
        else:
            text = "Every report has an anchor: the reports are aligned on the anchors' ends"
        self._context.show_status(text, 8000)
        return anchor

    def align_on_collective(self, _ref: EventRef, instance: int) -> list[AlignmentAnchor]:
        """Anchor every rank of the matched collective ``instance`` (of the timeline state's
        collectives) on its own event of it: the reports are aligned on its end."""
        state, binding = self._context.state, self._context.binding
        overlay = state.collectives()
        if overlay is None or not 0 <= instance < len(overlay):
            return []
        anchors = []
        for index, table, row, end_ns in overlay.members(instance):
            path = binding.shown_path(index)
            if path is not None:
                anchors.append(AlignmentAnchor(path, table, row, end_ns))
        state.set_anchors([*(a for p, a in state.anchors().items()
                             if p not in {b.report for b in anchors}), *anchors])  # fmt: skip
        text = f"Aligning {pluralize(len(anchors), 'report')} on this collective's end"
        self._context.show_status(text, 8000)
        return anchors
