"""A label that never widens its panel: long text is cut at its end, between words, with the
full text on hover."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["ElidedLabel", "elide_words"]

#: The most a label asks for by itself; a 2,000-character kernel name would ask for ~14,000 px
#: and the dock holding it would grow to fit (issue #14: a window 3,896 px wide).
_PREFERRED_MAX_PX = 240
_MINIMUM_PX = 40


def elide_words(text: str, metrics: QFontMetrics, width_px: int) -> str:
    """Return ``text`` cut at its end to ``width_px``, between two words where one fits, and
    ended with "…" (the whole of ``text`` when it fits).

    Cut in the middle, 'GPU utilization 91.4 %, Tensor…' read 'GPU utilizatio…1.4 %': a number
    that is not the one measured. Cut inside a word, '91.4' could read '9…'.
    """
    if metrics.horizontalAdvance(text) <= width_px:
        return text
    cut = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width_px)
    kept = cut[:-1] if cut.endswith("…") else cut
    if kept and not text[len(kept)].isspace() and " " in kept.strip():
        kept = kept[: kept.rstrip().rfind(" ")]  # back to the end of the last whole word
    kept = kept.rstrip(" ,;:·–-(")
    return f"{kept}…" if kept else cut


class ElidedLabel(QLabel):
    """A one-line :class:`QLabel` whose width never follows its text.

    ``text()`` is the full text; what is drawn is that text cut at its end, between words,
    to the width the layout gives (:func:`elide_words`), and the tooltip then holds the full
    text.
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
        shown = elide_words(self._full, self.fontMetrics(), room)
        super().setText(shown)
        parts = (self._full if shown != self._full else "", self._details)
        self.setToolTip("\n\n".join(p for p in parts if p and p != shown))
