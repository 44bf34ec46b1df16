"""The timeline's input: what its keys, wheel and mouse do (zoom, pan, select, drag the
dividers and the scroll bar, click a row header, hover for a tooltip, the context menu).

:class:`TimelineInputMixin` is a part of :class:`~viewer.timeline.TimelineWidget` kept in a
module of its own: the widget's Qt input overrides and the state of a gesture under way.
It changes what is shown through the widget's ``state``
(:class:`~viewer.state.TimelineState`) and asks the widget's geometry and hit tests
(``row_at``, ``event_at``, ``time_at``, the pinned area, the scroll bar), which stay in
viewer/timeline.py.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QMenu, QToolTip

from strata.viewer.event_menu import add_event_actions
from strata.viewer.events import EventRef

__all__ = ["TimelineInputMixin"]

_ZOOM_STEP = 1.25
_PAN_FRACTION = 0.15
_DRAG_THRESHOLD_PX = 4


class TimelineInputMixin:
    """The keys, wheel and mouse of :class:`~viewer.timeline.TimelineWidget` (a mixin of it:
    it uses the widget's state, theme, geometry and hit tests)."""

    def _init_input(self) -> None:
        """Set up the state of the gestures (no press, no drag, no hover)."""
        self._thumb_drag: tuple[int, int] | None = None
        self._divider_drag = False
        self._label_drag = False
        self._press: tuple[QPoint, int, int, str] | None = None
        self._dragged = False
        self._hover_x: float | None = None
        self._tooltips: dict[tuple[EventRef, int], str] = {}
        #: The last context menu shown (the tests trigger its actions).
        self.context_menu: QMenu | None = None

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt override
        if not self.press_key(Qt.Key(event.key())):
            super().keyPressEvent(event)

    def press_key(self, key: Qt.Key) -> bool:
        """Do what the timeline's key ``key`` does; return whether it is one of them.

        The main window also calls this from its window-wide shortcuts, so that W/A/S/D, F,
        Z and Esc work whichever widget has the focus (except a text field).
        """
        anchor = self._hover_x
        if key == Qt.Key.Key_W:
            self.zoom(_ZOOM_STEP, anchor)
        elif key == Qt.Key.Key_S:
            self.zoom(1 / _ZOOM_STEP, anchor)
        elif key == Qt.Key.Key_A:
            self.state.pan(-_PAN_FRACTION)
        elif key == Qt.Key.Key_D:
            self.state.pan(_PAN_FRACTION)
        elif key == Qt.Key.Key_F:
            self.state.toggle_fit()
        elif key == Qt.Key.Key_Z:
            if self.state.selection() is not None:
                self.state.set_view_range(*self.state.time_selection())
        elif key == Qt.Key.Key_Escape:
            self.state.select(None)
            self.state.select_event(None)
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = self.theme.row_height_px
            self.scroll_rows(step if key == Qt.Key.Key_Down else -step)
        elif key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            page = max(self.height() - self._scroll_top() - self.theme.row_height_px, 1)
            self.scroll_rows(page if key == Qt.Key.Key_PageDown else -page)
        else:
            return False
        return True

    def wheelEvent(self, event: QWheelEvent) -> None:  # Qt override
        delta = event.angleDelta()
        x = event.position().x()
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        y = event.position().y()
        top = self.theme.ruler_height_px
        in_pins = top <= y < top + self._pinned_height()
        overflows = self._pinned_layout.height_px > self._pinned_height()
        if in_pins and overflows and delta.y() and (shift or x < self.theme.header_width_px):
            self.scroll_pinned(-1 if delta.y() > 0 else 1)  # pinned rows scroll on their own
        elif shift or x < self.theme.header_width_px:
            self.scroll_rows(-delta.y() // 2 if delta.y() else -delta.x() // 2)
        elif abs(delta.x()) > abs(delta.y()):
            self.state.pan(-delta.x() / 1200)
        elif delta.y():
            self.zoom(_ZOOM_STEP ** (delta.y() / 120), x)
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # Qt override
        pos = event.position().toPoint()
        if event.button() == Qt.MouseButton.RightButton:
            self._show_menu(pos)
            return
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if self._on_label_edge(pos.x()):
            self._label_drag = True
            return
        if pos.x() < self.theme.header_width_px:
            self._click_header(pos)
            return
        if self._on_scrollbar(pos.x(), pos.y()):
            self._press_scrollbar(pos.y())
            return
        if self._on_divider(pos.y()):
            self._divider_drag = True
            return
        self._press = (pos, *self.state.view_range(), _drag_mode(event))
        self._dragged = False

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # Qt override
        pos = event.position().toPoint()
        in_data = pos.x() >= self.theme.header_width_px
        self._hover_x = float(pos.x()) if in_data else None
        if self._label_drag:
            self.set_label_width(pos.x())
            return
        if self._divider_drag:
            area = max(self.height() - self.theme.ruler_height_px, 1)
            self.set_pinned_fraction((pos.y() - self.theme.ruler_height_px) / area)
            return
        if self._press is None and self._thumb_drag is None:
            cursor = Qt.CursorShape
            shape = cursor.SplitVCursor if self._on_divider(pos.y()) else cursor.ArrowCursor
            self.setCursor(cursor.SplitHCursor if self._on_label_edge(pos.x()) else shape)
        if self._thumb_drag is not None:
            start_y, start_scroll = self._thumb_drag
            view_h = max(self.height() - self._scroll_top(), 1)
            travel = max(view_h - self._thumb()[1], 1)
            self._set_scroll(start_scroll + (pos.y() - start_y) * self._max_scroll() / travel)
            return
        if self._press is None:
            self._show_tooltip(event)
            self.update()
            return
        start, t0, t1, mode = self._press
        if abs(pos.x() - start.x()) + abs(pos.y() - start.y()) >= _DRAG_THRESHOLD_PX:
            self._dragged = True
        if not self._dragged:
            return
        if mode == "time":
            self.state.select(self.time_at(start.x()), self.time_at(pos.x()))
        elif mode == "area":
            rows = self.track_keys_between(start.y(), pos.y())
            self.state.select(self.time_at(start.x()), self.time_at(pos.x()), rows)
        else:
            shift_ns = int((start.x() - pos.x()) * (t1 - t0) / self._data_width())
            self.state.set_view_range(t0 + shift_ns, t1 + shift_ns)
            self.scroll_rows(start.y() - pos.y())
            self._press = (pos, *self.state.view_range(), mode)

    def _press_scrollbar(self, y_px: int) -> None:
        thumb_top, thumb_h = self._thumb()
        if thumb_top <= y_px < thumb_top + thumb_h:
            self._thumb_drag = (y_px, self._scroll_px)
        else:
            page = max(self.height() - self._scroll_top(), 1)
            self.scroll_rows(page if y_px > thumb_top else -page)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # Qt override
        if self._label_drag:
            self._label_drag = False
            self.label_width_changed.emit(self.theme.header_width_px)
            return
        if self._divider_drag:
            self._divider_drag = False
            self.pinned_fraction_changed.emit(self._pinned_fraction)
            return
        if self._thumb_drag is not None:
            self._thumb_drag = None
            return
        if self._press is not None and not self._dragged:
            event_ref = self.event_at(event.position().x(), event.position().y())
            self.state.select_event(event_ref)
            self.event_clicked.emit(event_ref)
        self._press = None
        self._dragged = False

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # Qt override
        if event.position().x() >= self.theme.header_width_px:
            self.state.fit()

    def leaveEvent(self, _event) -> None:  # Qt override
        self._hover_x = None
        self.update()

    def _show_tooltip(self, event: QMouseEvent) -> None:
        pos = event.position()
        hit = self.row_at(pos.y())
        if hit is not None and pos.x() < self.theme.header_width_px:
            QToolTip.showText(event.globalPosition().toPoint(), self.header_tip(hit[0]), self)
            return
        ref = self.event_at(pos.x(), pos.y())
        if ref is None or hit is None:
            QToolTip.hideText()
            return
        key = (ref, self.state.offsets_ns()[ref.report_index])
        html = self._tooltips.get(key)
        if html is None:
            # The partner lookup scans the correlation ids (~5 ms at 5 M kernels): once per event.
            lines = self.describe(ref, hit[0].track.path)
            html = (
                "<table>"
                + "".join(
                    f"<tr><td><b>{k}</b>&nbsp;</td><td>{_escape(v)}</td></tr>" for k, v in lines
                )
                + "</table>"
            )
            if len(self._tooltips) > 256:
                self._tooltips.clear()
            self._tooltips[key] = html
        QToolTip.showText(event.globalPosition().toPoint(), html, self)

    def _click_header(self, pos: QPoint) -> None:
        hit = self.row_at(pos.y())
        if hit is None:
            return
        row = hit[0]
        if row.kind != "track":
            self.state.set_collapsed(row.path, not row.is_collapsed)

    def _show_menu(self, pos: QPoint) -> None:
        hit = self.row_at(pos.y())
        if hit is None:
            return
        row = hit[0]
        menu = QMenu(self)
        ref = self.event_at(pos.x(), pos.y())
        if ref is not None:
            add_event_actions(menu, self, ref)
            menu.addSeparator()
        if row.track is not None:
            key = row.track.key
            # The row's actions, once: the event's part above has none of its own.
            if self.state.is_pinned(key):
                menu.addAction("Unpin Row", lambda: self.state.unpin(key))
            else:
                menu.addAction("Pin Row", lambda: self.state.pin(key))
            menu.addAction("Hide Row", lambda: self.state.hide(key))
        else:
            label = "Expand" if row.is_collapsed else "Collapse"
            menu.addAction(label, lambda: self.state.set_collapsed(row.path, not row.is_collapsed))
        hidden = self.state.hidden_keys()
        if hidden:
            menu.addAction(
                f"Show {len(hidden)} hidden rows", lambda: self.state.set_hidden_keys([])
            )
        self.context_menu = menu  # what the tests drive
        menu.popup(self.mapToGlobal(pos))


def _drag_mode(event: QMouseEvent) -> str:
    """What a left-button drag does: ``area`` (Ctrl+Shift), ``time`` (Shift) or ``pan``."""
    modifiers = event.modifiers()
    if modifiers & Qt.KeyboardModifier.ShiftModifier:
        is_area = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        return "area" if is_area else "time"
    return "pan"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
