"""A label that never widens its panel: long text elides in the middle, the full text on hover."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["ElidedLabel"]

#: The most a label asks for by itself; a 2,000-character kernel name would ask for ~14,000 px
#: and the dock holding it would grow to fit (issue #14: a window 3,896 px wide).
_PREFERRED_MAX_PX = 240
_MINIMUM_PX = 40


class ElidedLabel(QLabel):
    """A one-line :class:`QLabel` whose width never follows its text.

    ``text()`` is the full text; what is drawn is that text elided in the middle to the width
    the layout gives, and the tooltip then holds the full text.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._details = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # Qt's own name
        self._full = text
        self._elide()
        self.updateGeometry()

    def text(self) -> str:  # Qt's own name
        return self._full

    def set_details(self, details: str) -> None:
        """Show ``details`` on hover, below the full text when that is elided."""
        self._details = details
        self._elide()

    def sizeHint(self) -> QSize:  # Qt's own name
        hint = super().sizeHint()
        wanted = self.fontMetrics().horizontalAdvance(self._full) + 2 * self.margin() + 4
        return QSize(min(wanted, _PREFERRED_MAX_PX), hint.height())

    def minimumSizeHint(self) -> QSize:  # Qt's own name
        return QSize(_MINIMUM_PX, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt's own name
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(self.contentsRect().width() - 2 * self.margin(), 1)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, room)
        super().setText(shown)
        parts = (self._full if shown != self._full else "", self._details)
        self.setToolTip("\n\n".join(p for p in parts if p and p != shown))
