"""The context menu of an event on the timeline: zoom to it, its name, copy, pin its row,
align the reports on it."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from strata.analysis.kinds.registry import event_kinds
from strata.viewer.events import EventRef

# ``timeline`` below is a viewer.timeline.TimelineWidget; typed as QWidget because the
# timeline imports this module (no import cycle).

__all__ = ["add_event_actions", "details_text", "stats_kind", "zoom_to_event"]

#: Share of the view the zoomed-to event takes (the rest is context on both sides).
_ZOOM_SHARE = 0.6


def stats_kind(ref: EventRef) -> str | None:
    """Return the stats panel tab that lists ``ref``'s name (None: no tab lists its kind)."""
    for kind in event_kinds():
        if ref.table in (kind.name, kind.drawn_as) and kind.panels:
            return kind.panels[0].name
    return None


def details_text(lines: list[tuple[str, str]]) -> str:
    """Return detail lines as plain text, one ``Field: value`` a line (for the clipboard)."""
    return "\n".join(f"{field}: {value}" for field, value in lines)


def zoom_to_event(timeline: QWidget, ref: EventRef) -> None:
    """Show ``ref`` over the middle of the view (a zero-length event gets 1 µs around it)."""
    offset = timeline.state.offsets_ns()[ref.report_index]
    start, end = ref.start_ns + offset, ref.end_ns + offset
    span = max(int((end - start) / _ZOOM_SHARE), 1_000)
    middle = (start + end) // 2
    timeline.state.set_view_range(middle - span // 2, middle + span // 2)


def add_event_actions(menu: QMenu, timeline: QWidget, ref: EventRef) -> None:
    """Add the actions on ``ref`` to ``menu`` (the timeline's right-click menu).

    Zoom, copy and pin are done here; highlighting the name, the stats panel and the Events
    view belong to app/, which listens to the timeline's ``*_requested`` signals.
    """
    name = timeline.describe(ref)[0][1]
    # Cut at the end: a name's start says what it is (two template instances cut in the
    # middle read the same); Copy Name gives the whole name.
    short = name if len(name) <= 40 else name[:39] + "…"
    menu.addAction("Zoom to Event", lambda: zoom_to_event(timeline, ref))
    has_stats = stats_kind(ref) is not None
    for text, signal in (
        (f"Select All “{short}”", timeline.name_highlight_requested),
        ("Show in Statistics", timeline.show_in_stats_requested),
    ):
        action = menu.addAction(text, lambda s=signal: s.emit(ref))
        action.setEnabled(has_stats)
    # The Events view (a dock of app/) connects here: the event's row and time.
    menu.addAction("Show in Events View", lambda: timeline.show_in_events_requested.emit(ref))
    # Its end becomes its report's alignment anchor (app/ aligns once every report has one);
    # a matched collective's ranks can all be anchored on it at once.
    menu.addAction("Use as Alignment Anchor", lambda: timeline.anchor_requested.emit(ref))
    overlay = timeline.state.collectives()
    table, row = (ref.source, ref.source_row) if ref.source else (ref.table, ref.index)
    instance = None if overlay is None else overlay.instance_of(ref.report_index, table, row)
    if instance is not None:
        requested = timeline.collective_anchor_requested
        menu.addAction("Align Ranks on This Collective", lambda: requested.emit(ref, instance))
    menu.addSeparator()
    clipboard = QGuiApplication.clipboard()
    menu.addAction("Copy Name", lambda: clipboard.setText(name))
    menu.addAction("Copy Details", lambda: clipboard.setText(details_text(timeline.describe(ref))))
