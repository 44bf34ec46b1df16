"""A dismissible strip of one-line messages (a file that failed to load, a bad request)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.timefmt import pluralize
from strata.viewer.access import name_control
from strata.viewer.labels import ElidedLabel

__all__ = ["MessageArea"]

MAX_MESSAGES = 200
VISIBLE_ROWS = 4
#: level -> (background, text) on the dark shell
_COLORS = {
    "error": ("#3b2224", "#f2b8b5"),
    "warning": ("#3a3020", "#f5d48a"),
    "info": ("#1f2d40", "#a8c7fa"),
}


#: A message wraps onto at most this many lines; only a longer one is cut (at its end, the
#: whole text on hover and in Details…). A one-line instruction is read whole.
MESSAGE_LINES = 3


class _WrappedLabel(ElidedLabel):
    """An :class:`ElidedLabel` that wraps onto :data:`MESSAGE_LINES` lines before it cuts."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:  # Qt's own name
        return QLabel.sizeHint(self)

    def minimumSizeHint(self) -> QSize:  # Qt's own name
        return QSize(40, QLabel.minimumSizeHint(self).height())

    def _elide(self) -> None:
        room = max(self.contentsRect().width() - 2 * self.margin(), 1)
        metrics = self.fontMetrics()
        flags = int(Qt.TextFlag.TextWordWrap)
        full, shown = self._full, self._full
        limit = MESSAGE_LINES * metrics.lineSpacing()
        if metrics.boundingRect(QRect(0, 0, room, 1 << 20), flags, full).height() > limit:
            lo, hi = 0, len(full)  # the longest start of the text that fits, cut with "…"
            while lo < hi:
                mid = (lo + hi + 1) // 2
                text = full[:mid].rstrip() + "…"
                fits = metrics.boundingRect(QRect(0, 0, room, 1 << 20), flags, text).height()
                lo, hi = (mid, hi) if fits <= limit else (lo, mid - 1)
            shown = full[:lo].rstrip() + "…"
        QLabel.setText(self, shown)
        parts = (full if shown != full else "", self._details)
        self.setToolTip("\n\n".join(p for p in parts if p and p != shown))


class _MessageRow(QFrame):
    dismissed = Signal(object)

    def __init__(self, text: str, level: str, tooltip: str, parent: QWidget | None = None):
        super().__init__(parent)
        background, foreground = _COLORS.get(level, _COLORS["info"])
        self.setObjectName("messageRow")
        self.setStyleSheet(
            f"#messageRow {{ background: {background}; border: 1px solid {foreground}40;"
            f" border-radius: 4px; }} QLabel {{ color: {foreground}; }}"
        )
        self.text = text
        self.level = level
        self.key = ""  # set by MessageArea.set_message: the one row about that subject
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 3, 4, 3)
        icon = QLabel({"error": "\u26a0", "warning": "\u26a0"}.get(level, "\u2139"), self)
        # Wrapped, never clipped; cut at the end past MESSAGE_LINES lines, the full text on
        # hover and in Details….
        self.label = label = _WrappedLabel(text, self)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.set_details(tooltip if tooltip != text else "")
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        label.setSizePolicy(policy)
        self.details_text = tooltip if tooltip != text else ""
        details = QToolButton(self)
        details.setText("Details…")
        details.setAutoRaise(True)
        details.setToolTip("Show the whole message, to read or copy")
        details.clicked.connect(self._show_details)
        close = QToolButton(self)
        close.setText("\u2715")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        name_control(close, "Dismiss message")
        close.clicked.connect(lambda: self.dismissed.emit(self))
        layout.addWidget(icon)
        layout.addWidget(label, 1)
        layout.addWidget(details)
        layout.addWidget(close)

    def _show_details(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "Strata: message", self.text, parent=self)
        if self.details_text:
            box.setDetailedText(self.details_text)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()


class MessageArea(QWidget):
    """Show messages one per line, newest last; hidden when there is none.

    Up to :data:`VISIBLE_ROWS` lines are visible at once; more scroll, so that a folder of
    forty bad files does not push the timeline off the window. The newest line is always
    in view.

    Signals
    -------
    messages_changed(int)
        The number of messages held.
    """

    messages_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._rows: list[_MessageRow] = []
        self._rows_widget = QWidget(self)
        self._rows_layout = QVBoxLayout(self._rows_widget)
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.setSpacing(3)
        self._rows_layout.addStretch(1)
        self._scroll = QScrollArea(self)
        self._scroll.setWidget(self._rows_widget)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = self._scroll.verticalScrollBar()
        bar.rangeChanged.connect(lambda _lo, hi: bar.setValue(hi))  # newest line in view
        self._count_label = name_control(QLabel(self), "Message count")
        self._clear_button = QToolButton(self)
        self._clear_button.setText("Dismiss all")
        self._clear_button.setAutoRaise(True)
        self._clear_button.clicked.connect(self.clear)
        footer = QHBoxLayout()
        footer.addWidget(self._count_label)
        footer.addStretch(1)
        footer.addWidget(self._clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(2)
        layout.addWidget(self._scroll)
        layout.addLayout(footer)
        self.setVisible(False)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._refresh_height()

    def _refresh_height(self) -> None:
        width = self._scroll.viewport().width()
        shown = self._rows[-VISIBLE_ROWS:]
        heights = [max(r.heightForWidth(width), r.sizeHint().height()) + 3 for r in shown]
        self._scroll.setFixedHeight(sum(heights))

    def add_message(self, text: str, level: str = "error", tooltip: str = "") -> None:
        """Show one line of ``text``; ``level`` is 'error', 'warning' or 'info'."""
        row = _MessageRow(text, level, tooltip, self._rows_widget)
        row.dismissed.connect(self._on_row_dismissed)
        self._rows.append(row)
        self._rows_layout.insertWidget(self._rows_layout.count() - 1, row)
        while len(self._rows) > MAX_MESSAGES:
            self._drop(self._rows[0])
        self._refresh()

    def set_message(self, key: str, text: str, level: str = "warning", tooltip: str = "") -> None:
        """Show the one message about ``key`` (e.g. 'alignment'), replacing the one shown
        before; an empty ``text`` removes it (its cause is gone).

        A condition that is found again (every layout of the same reports re-checks the
        alignment) is then shown once, not once per check.
        """
        old = next((row for row in self._rows if row.key == key), None)
        if old is not None and old.text == text and old.level == level:
            return
        if old is not None:
            self._drop(old)
        if text:
            self.add_message(text, level, tooltip)
            self._rows[-1].key = key
        else:
            self._refresh()

    def messages(self) -> list[str]:
        """Return the texts held, oldest first."""
        return [row.text for row in self._rows]

    def clear(self) -> None:
        for row in list(self._rows):
            self._drop(row)
        self._refresh()

    def _drop(self, row: _MessageRow) -> None:
        self._rows.remove(row)
        self._rows_layout.removeWidget(row)
        row.deleteLater()

    def _on_row_dismissed(self, row: _MessageRow) -> None:
        if row in self._rows:
            self._drop(row)
            self._refresh()

    def _refresh(self) -> None:
        count = len(self._rows)
        self._refresh_height()  # wrapped rows differ in height
        self._count_label.setText(f"{pluralize(count, 'message')} (scroll for more)")
        self._count_label.setVisible(count > VISIBLE_ROWS)
        self._clear_button.setVisible(count > 1)
        self.setVisible(bool(count))
        self.messages_changed.emit(count)
