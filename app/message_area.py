"""A dismissible strip of one-line messages (a file that failed to load, a bad request)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["MessageArea"]

MAX_MESSAGES = 8
#: level -> (background, text) on the dark shell
_COLORS = {
    "error": ("#3b2224", "#f2b8b5"),
    "warning": ("#3a3020", "#f5d48a"),
    "info": ("#1f2d40", "#a8c7fa"),
}


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
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 3, 4, 3)
        icon = QLabel({"error": "\u26a0", "warning": "\u26a0"}.get(level, "\u2139"), self)
        label = QLabel(text, self)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setToolTip(tooltip or text)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        close = QToolButton(self)
        close.setText("\u2715")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(lambda: self.dismissed.emit(self))
        layout.addWidget(icon)
        layout.addWidget(label, 1)
        layout.addWidget(close)


class MessageArea(QWidget):
    """Show messages one per line, newest last; hidden when there is none.

    Signals
    -------
    messages_changed(int)
        The number of messages shown.
    """

    messages_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._rows: list[_MessageRow] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(6, 4, 6, 2)
        self._layout.setSpacing(3)
        header = QHBoxLayout()
        header.addStretch(1)
        self._clear_button = QToolButton(self)
        self._clear_button.setText("Dismiss all")
        self._clear_button.setAutoRaise(True)
        self._clear_button.clicked.connect(self.clear)
        header.addWidget(self._clear_button)
        self._layout.addLayout(header)
        self.setVisible(False)

    def add_message(self, text: str, level: str = "error", tooltip: str = "") -> None:
        """Show one line of ``text``; ``level`` is 'error', 'warning' or 'info'."""
        row = _MessageRow(text, level, tooltip, self)
        row.dismissed.connect(self._on_row_dismissed)
        self._rows.append(row)
        self._layout.insertWidget(self._layout.count() - 1, row)
        while len(self._rows) > MAX_MESSAGES:
            self._drop(self._rows[0])
        self._refresh()

    def messages(self) -> list[str]:
        """Return the texts shown, oldest first."""
        return [row.text for row in self._rows]

    def clear(self) -> None:
        for row in list(self._rows):
            self._drop(row)
        self._refresh()

    def _drop(self, row: _MessageRow) -> None:
        self._rows.remove(row)
        self._layout.removeWidget(row)
        row.deleteLater()

    def _on_row_dismissed(self, row: _MessageRow) -> None:
        if row in self._rows:
            self._drop(row)
            self._refresh()

    def _refresh(self) -> None:
        self._clear_button.setVisible(len(self._rows) > 1)
        self.setVisible(bool(self._rows))
        self.messages_changed.emit(len(self._rows))
