"""The stacked timeline widget: one shared time axis over the rows of several reports.

A plain ``QWidget`` whose ``paintEvent`` hands one :class:`~viewer.frame.Frame` to the
painter — not a pyqtgraph item. Reasons: the painter keeps int64 ns until it converts to
float px relative to the view origin (a ``QGraphicsView`` transform would put absolute ns in
doubles); the fixed pinned area, the row headers and the ruler are part of the same pass;
and there is no scene graph to keep in sync with thousands of rows.

Navigation (as Perfetto / chrome://tracing): wheel zooms about the cursor, drag pans,
W/S zoom, A/D pan, F or double-click fits, Shift-drag selects a time range over every row
(Z zooms to it), Ctrl+Shift-drag an area: the time range over the rows the drag crosses (as
Perfetto's area selection), Esc clears; Shift+wheel, the scroll bar, a wheel over the row
headers, the arrow and page keys scroll rows.

What the timeline shows (the reports, their offsets, rows, pins, hidden and collapsed rows,
view range, selection, the picked event, emphasis, marks and tints) lives in a Qt-free
:class:`~viewer.state.TimelineState`, :attr:`TimelineWidget.state` (napari's model / ``_qt``
split): the widget renders it and follows its notifications, its input handlers change it,
and app/ reads and changes it there, never through the widget. What stays here is what
needs pixels: geometry, scrolling, hit tests and the label column. What the keys, wheel and
mouse do (tooltips and the context menu included) is viewer/timeline_input.py; all painting
lives in painter.py and chrome.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QPainter
from PySide6.QtWidgets import QWidget

from strata.analysis.model import Report
from strata.viewer.access import describe_timeline
from strata.viewer.events import EventRef, describe_event, pick_event, spoken_event
from strata.viewer.frame import Frame
from strata.viewer.painter import TimelinePainter
from strata.viewer.state import TimelineState
from strata.viewer.state.rows import Row, RowLayout
from strata.viewer.style import DARK, Theme, fit_theme
from strata.viewer.timeline_input import TimelineInputMixin

__all__ = ["TimelineWidget"]

#: Share of the row area the pinned rows may take: at first, and at most after dragging
#: the divider below them (the scrolling rows keep the rest).
_PINNED_FRACTION = 0.45
_MAX_PINNED_FRACTION = 0.85
#: Half-height (px) of the band around the pinned/scrolling divider that grabs a drag.
_DIVIDER_GRAB_PX = 4
_MIN_LABEL_PX = 80
_SCROLLBAR_PX = 10


class TimelineWidget(TimelineInputMixin, QWidget):
    """Rows of CPU cores, threads, GPUs and streams of one or more reports on one axis.

    ``state`` (:class:`~viewer.state.TimelineState`) is what it shows; app/ reads and
    changes the timeline there. The signals below that repeat a notification of the state
    are there for Qt code (``qtbot.waitSignal``); they are emitted once the widget followed.

    Signals
    -------
    view_range_changed(t0_ns, t1_ns)
        The visible time range (shared-axis ns; Python ints, 64-bit safe).
    selection_changed(range_or_none)
        The Shift-drag time range ``(t0_ns, t1_ns)``, or ``None`` when cleared.
    event_clicked(EventRef)
        An event was picked with the mouse (``None`` when a click hit no event).
    pins_changed(list)
        The pinned track keys, in order.
    name_highlight_requested(EventRef), show_in_stats_requested(EventRef),
    show_in_events_requested(EventRef), anchor_requested(EventRef)
        The event's context menu asked to highlight every event of its name, to show its
        name in the stats panel, to show it in the Events view, or to align the reports on
        it (app/ does these).
    """

    view_range_changed = Signal(object, object)
    selection_changed = Signal(object)
    event_clicked = Signal(object)
    pins_changed = Signal(list)
    #: The user dragged the divider below the pinned rows: the new :meth:`pinned_fraction`.
    pinned_fraction_changed = Signal(float)
    #: The user dragged the label column's edge to this width (px).
    label_width_changed = Signal(int)
    name_highlight_requested = Signal(object)
    show_in_stats_requested = Signal(object)
    show_in_events_requested = Signal(object)
    #: The picked event changed (a click, or ``state.select_event``): it, or ``None``.
    event_selected = Signal(object)
    #: The event's context menu asked to make the event its report's alignment anchor.
    anchor_requested = Signal(object)
    #: ... or every rank's event of the matched collective (an instance of
    #: ``state.collectives()``) it belongs to: (EventRef, instance).
    collective_anchor_requested = Signal(object, int)

    def __init__(
        self,
        parent: QWidget | None = None,
        theme: Theme = DARK,
        state: TimelineState | None = None,
    ) -> None:
        super().__init__(parent)
        self._base_theme = theme
        #: The theme painted: ``theme`` with rows as tall as the fonts need (:func:`fit_theme`).
        self.theme = fit_theme(theme, self.font())
        #: What the timeline shows: read and change it there.
        self.state = state if state is not None else TimelineState()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        # The paint covers every pixel: skip Qt's background erase.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumSize(400, 200)
        self._painter = TimelinePainter()
        self._painter.set_font(self.font())
        # The scroll bar is painted, not a child QScrollBar: a child widget made every
        # repaint ~6 ms slower at 2000x1000 here (measured offscreen).
        self._scroll_px = 0
        self._pinned_fraction = _PINNED_FRACTION
        self._label_width_px: int | None = None  # the user's width of the label column
        self._pinned_layout = RowLayout((), np.zeros(0, np.int64))
        self._pinned_scroll_px = 0
        self._layout = RowLayout((), np.zeros(0, np.int64))
        #: Counts the row layouts made: the painter's caches of them are keyed by it.
        self._layout_version = 0
        self._init_input()
        #: ``(report, table, row) -> {column: value}``: an event's extra source fields for
        #: its details (app/ sets :func:`analysis.event_fields.read_event_fields`; the viewer
        #: opens no file itself).
        self.event_fields: Callable[[Report, str, int], Mapping[str, object]] | None = None
        #: What a screen reader was told of the selected event ('' when none).
        self.spoken_event = ""
        # The painted rows say nothing to a screen reader: the widget says what it shows.
        self.setAccessibleName("Timeline")
        self._connect_state()
        self._describe_for_screen_readers()

    def _connect_state(self) -> None:
        state = self.state
        state.data_changed.connect(self._on_data_changed)
        state.offsets_changed.connect(lambda _offsets: self.update())
        state.rows_changed.connect(self._relayout)
        state.pins_changed.connect(self.pins_changed.emit)
        state.view_range_changed.connect(self._on_view_range_changed)
        state.selection_changed.connect(self._on_selection_changed)
        state.event_selected.connect(self._on_event_selected)
        state.emphasis_changed.connect(self.update)
        state.collectives_changed.connect(self.update)

    def _on_data_changed(self) -> None:
        self._painter.reset()  # its level-of-detail images are of the older tables
        self._tooltips.clear()
        self.update()

    def _on_view_range_changed(self, t0_ns: int, t1_ns: int) -> None:
        self.update()
        self._describe_for_screen_readers()
        self.view_range_changed.emit(t0_ns, t1_ns)

    def _on_selection_changed(self, selection) -> None:
        self.update()
        self._describe_for_screen_readers()
        self.selection_changed.emit(None if selection is None else selection.time_range)

    def _describe_for_screen_readers(self) -> None:
        """Say what is shown in the accessible description (:func:`describe_timeline`)."""
        rows = sum(r.track is not None for r in (*self._pinned_layout.rows, *self._layout.rows))
        text = describe_timeline(len(self.state.report_set()), rows, self.state.view_range(),
                                 self.state.time_selection(), self.spoken_event)  # fmt: skip
        if text != self.accessibleDescription():
            self.setAccessibleDescription(text)  # Qt sends DescriptionChanged

    def _on_event_selected(self, event: EventRef | None) -> None:
        """Say the picked event to a screen reader, draw it, and tell Qt code."""
        self.spoken_event = ""
        if event is not None:
            report = self.state.report_set()[event.report_index]
            track = self.state.track(event.track_key)
            row = track.path if track is not None else report.name
            offset = self.state.offsets_ns()[event.report_index]
            self.spoken_event = spoken_event(report, event, row, offset)
            # Read out now, whatever the screen reader is focused on (Qt 6.8+).
            QAccessible.updateAccessibility(QAccessibleAnnouncementEvent(self, self.spoken_event))
        self._describe_for_screen_readers()
        self.update()
        self.event_selected.emit(event)

    def zoom(self, factor: float, anchor_x: float | None = None) -> None:
        """Zoom by ``factor`` (> 1 zooms in) about ``anchor_x`` (widget px; centre if None)."""
        fraction = (
            0.5
            if anchor_x is None
            else (anchor_x - self.theme.header_width_px) / (self._data_width())
        )
        self.state.zoom(factor, fraction)

    # -- layout ----------------------------------------------------------------------------

    def _relayout(self) -> None:
        t = self.theme
        heights = (t.report_height_px, t.group_height_px, t.row_height_px)
        self._pinned_layout, self._layout = self.state.layout(heights)
        self._layout_version += 1
        self._set_scroll(self._scroll_px)
        self.scroll_pinned(0)
        self._describe_for_screen_readers()
        self.update()

    def _data_width(self) -> int:
        return max(1, self.width() - self.theme.header_width_px - _SCROLLBAR_PX)

    def _pinned_height(self) -> int:
        """Height of the pinned area: every pinned row while they fit in the pinned share of
        the row area, else the whole rows that fit (at least the first one), so that no
        pinned row is cut in half and drawn over the scrolling rows below it."""
        layout = self._pinned_layout
        cap = max(int((self.height() - self.theme.ruler_height_px) * self._pinned_fraction), 0)
        if layout.height_px <= cap:
            return layout.height_px
        bottoms = layout.tops_px + np.array([r.height_px for r in layout.rows], dtype=np.int64)
        whole = bottoms[bottoms <= cap]
        return int(whole[-1]) if len(whole) else int(bottoms[0])

    def scroll_pinned(self, rows: int) -> None:
        """Scroll the pinned rows by ``rows`` whole rows (positive = down) when they
        outgrow their area; the scroll stays on a row's top."""
        tops = self._pinned_layout.tops_px
        if not len(tops):
            self._pinned_scroll_px = 0
            return
        # The last scroll that still shows the last row: the first top whose rest fits.
        rest = self._pinned_layout.height_px - tops
        fits = np.flatnonzero(rest <= self._pinned_height())
        last = int(fits[0]) if len(fits) else len(tops) - 1
        i = int(np.searchsorted(tops, self._pinned_scroll_px)) + rows
        value = int(tops[min(max(i, 0), last)])
        if value != self._pinned_scroll_px:
            self._pinned_scroll_px = value
            self.update()

    def pinned_scroll_offset(self) -> int:
        """Return how far the pinned rows are scrolled inside their area (px)."""
        return self._pinned_scroll_px

    def pinned_fraction(self) -> float:
        """Return the share of the row area the pinned rows may take (before they scroll off)."""
        return self._pinned_fraction

    def set_pinned_fraction(self, fraction: float) -> None:
        """Let the pinned rows take up to ``fraction`` of the row area (0.1 to 0.85)."""
        self._pinned_fraction = min(max(float(fraction), 0.1), _MAX_PINNED_FRACTION)
        self._set_scroll(self._scroll_px)
        self.update()

    def label_width(self) -> int:
        """Return the width of the label column (row headers, px)."""
        return self.theme.header_width_px

    def set_label_width(self, width_px: int) -> None:
        """Make the label column ``width_px`` wide (at least 80 px, leaving 120 px of time)."""
        width_px = int(min(max(width_px, _MIN_LABEL_PX), max(self.width() - 120, _MIN_LABEL_PX)))
        self._label_width_px = width_px
        self.set_theme(self._base_theme)

    def _on_label_edge(self, x_px: float) -> bool:
        """Whether ``x_px`` is on the edge between the label column and the time area."""
        return abs(x_px - self.theme.header_width_px) <= _DIVIDER_GRAB_PX

    def _on_divider(self, y_px: float) -> bool:
        """Whether ``y_px`` is on the divider below the pinned rows (when there are any)."""
        if not self._pinned_layout.height_px:
            return False
        y = self.theme.ruler_height_px + self._pinned_height() + 1
        return abs(y_px - y) <= _DIVIDER_GRAB_PX

    def _on_scrollbar(self, x_px: float, y_px: float) -> bool:
        """Whether (``x_px``, ``y_px``) is on the scroll bar of the scrolling rows."""
        return x_px >= self.width() - _SCROLLBAR_PX and y_px >= self._scroll_top()

    def _scroll_top(self) -> int:
        gap = 3 if self._pinned_height() else 0
        return self.theme.ruler_height_px + self._pinned_height() + gap

    def _max_scroll(self) -> int:
        view_h = max(self.height() - self._scroll_top(), 1)
        return max(self._layout.height_px - view_h, 0)

    def _set_scroll(self, value: int) -> None:
        value = int(min(max(value, 0), self._max_scroll()))
        if value != self._scroll_px:
            self._scroll_px = value
            self.update()

    def scroll_rows(self, dy_px: int) -> None:
        """Scroll the row area by ``dy_px`` (positive = down)."""
        self._set_scroll(self._scroll_px + dy_px)

    def scroll_offset(self) -> int:
        """Return how far the row area is scrolled (px)."""
        return self._scroll_px

    def _thumb(self) -> tuple[int, int]:
        """Return (top y, height) of the scroll thumb in widget px."""
        top = self._scroll_top()
        view_h = max(self.height() - top, 1)
        content = max(self._layout.height_px, 1)
        thumb_h = max(int(view_h * min(view_h / content, 1.0)), 24)
        travel = max(view_h - thumb_h, 0)
        frac = self._scroll_px / self._max_scroll() if self._max_scroll() else 0.0
        return top + int(travel * frac), thumb_h

    def row_at(self, y_px: float) -> tuple[Row, int, bool] | None:
        """Return (row, its top y in widget px, is_pinned) under ``y_px``."""
        top = self.theme.ruler_height_px
        if top <= y_px < top + self._pinned_height():
            for row, y, is_pinned in self._frame().placed_rows():
                if is_pinned and y <= y_px < y + row.height_px:
                    return row, y, True
            return None
        scroll_top = self._scroll_top()
        if y_px < scroll_top:
            return None
        i = self._layout.index_at(y_px - scroll_top + self._scroll_px)
        if i is None:
            return None
        y = scroll_top + int(self._layout.tops_px[i]) - self._scroll_px
        return self._layout.rows[i], y, False

    def visible_track_keys(self) -> list[str]:
        """Return the keys of track rows currently on screen (pinned ones first)."""
        return [r.track.key for r, _y, _p in self._frame().placed_rows() if r.track is not None]

    def row_rect(self, key: str) -> tuple[int, int] | None:
        """Return (top y, height) in widget px of the track row ``key`` if on screen."""
        for row, y, _pinned in self._frame().placed_rows():
            if row.track is not None and row.track.key == key:
                return y, row.height_px
        return None

    def scroll_to_track(self, key: str) -> bool:
        """Scroll the row area so the track row ``key`` is on screen (a third from the top).

        Returns False when no row has that key or it is inside a collapsed group. Pinned rows
        are always on screen and need no scrolling.
        """
        if self.row_rect(key) is not None:
            return True
        for i, row in enumerate(self._layout.rows):
            if row.track is not None and row.track.key == key:
                target = int(self._layout.tops_px[i]) - self.height() // 3
                self._set_scroll(max(target, 0))
                return True
        return False

    def track_keys_between(self, y0_px: float, y1_px: float) -> list[str]:
        """Return the keys of the track rows on screen between two widget y (either order),
        in display order; a group or report row crossed brings every track under it
        (collapsed or not), a row of the group's summary included."""
        lo, hi = min(y0_px, y1_px), max(y0_px, y1_px)
        keys: dict[str, None] = {}
        for row, y, _pinned in self._frame().placed_rows():
            if y + row.height_px <= lo or y > hi:
                continue
            if row.track is not None:
                keys[row.track.key] = None
            else:
                depth, hidden = len(row.path), set(self.state.hidden_keys())
                keys.update(dict.fromkeys(t.key for t in self.state.tracks()
                                          if t.group[:depth] == tuple(row.path)
                                          and t.key not in hidden))  # fmt: skip
        return list(keys)

    def x_of(self, t_ns: int) -> float:
        """Return the widget x of shared-axis time ``t_ns``."""
        return self._frame().x_of(t_ns)

    def time_at(self, x_px: float) -> int:
        """Return the shared-axis time under widget x ``x_px``."""
        t0, t1 = self.state.view_range()
        return int(t0 + (x_px - self.theme.header_width_px) * (t1 - t0) / self._data_width())

    def set_theme(self, theme: Theme) -> None:
        """Paint with ``theme`` from now on (the light or dark colour scheme); a label
        column width the user chose (:meth:`set_label_width`) stays, and rows grow to the
        widget's font (:func:`viewer.style.fit_theme`)."""
        self._base_theme = theme
        theme = fit_theme(theme, self.font())
        if self._label_width_px is not None:
            theme = dataclasses.replace(theme, header_width_px=self._label_width_px)
        if theme != self.theme:
            self.theme = theme
            self._painter.reset()  # its cached images hold the old colours
            self._relayout()

    # -- painting --------------------------------------------------------------------------

    def _frame(self) -> Frame:
        state = self.state
        t0, t1 = state.view_range()
        return Frame(
            width=self.width(),
            height=self.height(),
            theme=self.theme,
            t0_ns=t0,
            t1_ns=t1,
            pinned=self._pinned_layout,
            rows=self._layout,
            scroll_px=self._scroll_px,
            tables=state.tables(),
            offsets_ns=state.offsets_ns(),
            pinned_height_px=self._pinned_height(),
            pinned_scroll_px=self._pinned_scroll_px,
            scrollbar_px=_SCROLLBAR_PX,
            thumb=self._thumb() if self._max_scroll() else None,
            selection=state.time_selection(),
            selection_rows=frozenset(state.selection().rows if state.selection() else ()),
            selected=state.selected_event(),
            partner=state.partner_event(),
            highlights=state.highlights(),
            marks=state.marks(),
            tints=state.tints(),
            hover_x=self._hover_x,
            collectives=state.shown_collectives(),
            layout_version=self._layout_version,
            data_version=state.data_version,
            emphasis_version=state.emphasis_version,
        )

    def paintEvent(self, _event) -> None:  # Qt override
        painter = QPainter(self)
        try:
            frame = self._frame()
            # The device painted on: the screen's (2.0 at 200 %), or the image render() fills.
            frame.pixel_ratio = painter.paintEngine().paintDevice().devicePixelRatioF()
            self._painter.paint(painter, frame)
        finally:
            painter.end()

    def changeEvent(self, event: QEvent) -> None:  # Qt override
        # The user's font size (the application's font, or one set on the widget) sizes the
        # labels and the rows that hold them.
        if event.type() == QEvent.Type.FontChange:
            self._painter.set_font(self.font())
            self._painter.reset()
            self.set_theme(self._base_theme)
            self.update()
        super().changeEvent(event)

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._set_scroll(self._scroll_px)

    # -- what is under the pointer ---------------------------------------------------------

    def event_at(self, x_px: float, y_px: float) -> EventRef | None:
        """Return the event drawn at widget position (x_px, y_px), or None."""
        hit = self.row_at(y_px)
        if hit is None or hit[0].track is None or x_px < self.theme.header_width_px:
            return None
        track = hit[0].track
        offset = self.state.offsets_ns()[track.report_index]
        t0, t1 = self.state.view_range()
        ns_per_px = (t1 - t0) / self._data_width()
        t = self.time_at(x_px) - offset
        tables = self.state.tables()[track.report_index]
        return pick_event(tables, track, t, int(3 * ns_per_px))

    def describe(self, ref: EventRef, row_label: str | None = None) -> list[tuple[str, str]]:
        """Return the (field, value) lines of ``ref``: its hover text and details pane.

        ``row_label``: the row it is shown on (found from ``ref.track_key`` when omitted).
        """
        i, state = ref.report_index, self.state
        reports, tables = state.report_set(), state.tables()[i]
        if row_label is None:
            track = state.track(ref.track_key)
            row_label = track.path if track is not None else reports[i].name
        fields = {}
        if self.event_fields is not None and ref.source and ref.source_row >= 0:
            fields = self.event_fields(reports[i], ref.source, ref.source_row)
        # The projection is shown once computed (its rows are drawn), never computed here.
        projection = reports.projection(i) if "nvtx_gpu" in tables else None
        offset = state.offsets_ns()[i]
        return describe_event(reports[i], ref, row_label, offset, tables, fields, projection)

    def header_tip(self, row: Row) -> str:
        """Return a row header's tooltip: the full label (it may be drawn cut), and for a
        report's row the report's file."""
        if row.kind == "report":
            reports = self.state.report_set()
            labels = list(reports.labels)
            if row.label in labels:
                return f"{row.label}\n{reports[labels.index(row.label)].path}"
        return row.label
