"""The details pane: every field of the selected event, as its hover text shows them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from viewer.access import name_control

__all__ = ["EventDetailsPane"]

_EMPTY_TEXT = "Click an event on the timeline to see its details."


class EventDetailsPane(QWidget):
    """A two-column table (field, value) of one event's :func:`viewer.events.describe_event`
    lines; values are selectable and copy with Ctrl+C."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines: list[tuple[str, str]] = []
        self.placeholder = QLabel(_EMPTY_TEXT, self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.table = name_control(
            QTableWidget(0, 2, self), "Event details", "Every field of the selected event"
        )
        self.table.setObjectName("eventDetails")
        self.table.setHorizontalHeaderLabels(["Field", "Value"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.placeholder)
        layout.addWidget(self.table, 1)
        self.show_lines([])

    def show_lines(self, lines: list[tuple[str, str]]) -> None:
        """Show ``lines`` (field, value); none shows the hint to click an event."""
        self._lines = list(lines)
        self.table.setRowCount(len(lines))
        for i, (field, value) in enumerate(lines):
            name = QTableWidgetItem(field)
            font = name.font()
            font.setBold(True)
            name.setFont(font)
            item = QTableWidgetItem(value)
            item.setToolTip(value)  # a long kernel name reads whole on hover
            self.table.setItem(i, 0, name)
            self.table.setItem(i, 1, item)
        self.table.resizeRowsToContents()
        self.table.setVisible(bool(lines))
        self.placeholder.setVisible(not lines)

    def lines(self) -> list[tuple[str, str]]:
        """Return the lines shown."""
        return list(self._lines)
