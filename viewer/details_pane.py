"""The details pane: every field of the selected event, as its hover text shows them."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPointF, QSize, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette, QTextLayout, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from strata.viewer.access import name_control

__all__ = ["FIELD_SHARE", "MAX_NAME_LINES", "EventDetailsPane", "wrap_lines"]

_EMPTY_TEXT = "Click an event on the timeline to see its details."
#: The name wraps onto at most this many lines, every other value is one line; each is cut
#: at its end (its whole text in the tooltip): a 300-character template name wrapped onto
#: ten lines, and a file name onto three, pushed the other fields out of the pane.
MAX_NAME_LINES = 3
_MARGIN_PX = 4
#: The most of the pane's width the field names take (cut at their end beyond it).
FIELD_SHARE = 0.4


def wrap_lines(text: str, font: QFont, width_px: int, max_lines: int) -> list[str]:
    """Return ``text`` wrapped to ``width_px`` (at word boundaries, else anywhere: a C++ name
    has few spaces), at most ``max_lines`` lines, the last one cut at its end with "…" when
    the text goes on."""
    width_px = max(width_px, 1)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout = QTextLayout(text, font)
    layout.setTextOption(option)
    lines: list[str] = []
    layout.beginLayout()
    try:
        while len(lines) < max_lines:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width_px)
            start, length = line.textStart(), line.textLength()
            if len(lines) == max_lines - 1 and start + length < len(text):
                rest = text[start:].replace("\n", " ")
                elided = QFontMetrics(font).elidedText(rest, Qt.TextElideMode.ElideRight, width_px)
                lines.append(elided)
                break
            lines.append(text[start : start + length].rstrip("\n"))
    finally:
        layout.endLayout()
    return lines or [""]


class _CellDelegate(QStyledItemDelegate):
    """Draws a field on one line, the name's value on at most :data:`MAX_NAME_LINES` lines
    and other values on one (see :func:`wrap_lines`), all with the same insets."""

    def _style_option(self, option: QStyleOptionViewItem, index: QModelIndex):
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)  # the item's own font (a field is bold)
        return opt

    def _lines(self, opt: QStyleOptionViewItem, index: QModelIndex, width_px: int) -> list:
        is_name = index.column() == 1 and index.siblingAtColumn(0).data() == "Name"
        return wrap_lines(opt.text, opt.font, width_px, MAX_NAME_LINES if is_name else 1)

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # Qt's
        opt = self._style_option(option, index)
        metrics = QFontMetrics(opt.font)
        if index.column() == 0:  # the field column is as wide as its words
            width = metrics.horizontalAdvance(opt.text) + 2 * _MARGIN_PX + 2
        else:
            width = self.parent().columnWidth(index.column())
        lines = self._lines(opt, index, width - 2 * _MARGIN_PX)
        return QSize(width, len(lines) * metrics.lineSpacing() + 2 * _MARGIN_PX)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = self._style_option(option, index)
        lines = self._lines(opt, index, opt.rect.width() - 2 * _MARGIN_PX)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:  # background and selection, as every other cell
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        metrics = QFontMetrics(opt.font)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setFont(opt.font)
        painter.setPen(opt.palette.color(role))
        painter.setClipRect(opt.rect)
        x, y = opt.rect.left() + _MARGIN_PX, opt.rect.top() + _MARGIN_PX + metrics.ascent()
        for line in lines:
            painter.drawText(QPointF(x, y), line)
            y += metrics.lineSpacing()
        painter.restore()


class EventDetailsPane(QWidget):
    """A two-column table (field, value) of one event's :func:`viewer.events.describe_event`
    lines; values are selectable and copy with Ctrl+C.

    The name wraps onto at most :data:`MAX_NAME_LINES` lines and every other value takes one,
    each cut at its end with its whole text in the tooltip; the rows follow the pane's
    width. Every field is in view at once, a long kernel name included.
    """

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
        self.table.setItemDelegate(_CellDelegate(self.table))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        # The rows follow the width: a narrower pane wraps the name onto more lines (the
        # value column also changes width when the scroll bar comes or goes).
        # The header settles a stretched column's width after the resize: fit the rows then.
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self._fit)
        header.sectionResized.connect(lambda *_args: self._refit.start())
        self.table.viewport().installEventFilter(self)
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
            name.setToolTip(field)  # cut in a narrow pane
            item = QTableWidgetItem(value)
            item.setToolTip(value)  # a long kernel name reads whole on hover
            self.table.setItem(i, 0, name)
            self.table.setItem(i, 1, item)
        self._fit()
        self.table.setVisible(bool(lines))
        self.placeholder.setVisible(not lines)

    def _fit(self) -> None:
        """Fit the field column to its words, at most :data:`FIELD_SHARE` of the width (in
        a narrow pane it took all but 40 px: values read '0.2', '41'), then the rows."""
        room = self.table.viewport().width()
        words = self.table.sizeHintForColumn(0) if self.table.rowCount() else 0
        width = max(min(words, int(room * FIELD_SHARE)), 40)
        if width != self.table.columnWidth(0):
            self.table.setColumnWidth(0, width)
        self.table.resizeRowsToContents()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's own name
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._refit.start()
        return False

    def lines(self) -> list[tuple[str, str]]:
        """Return the lines shown."""
        return list(self._lines)
