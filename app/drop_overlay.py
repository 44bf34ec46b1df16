"""The highlight over the window while files are dragged over it: what a drop would open."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from strata.analysis.dropped import DropPreview
from strata.viewer.access import name_control
from strata.viewer.style import ui_font

__all__ = ["DropOverlay"]

#: (border and text, fill) when the drop would open something / nothing: opaque, so
#: that the text reads over the timeline or the empty window's own text, in either theme.
_COLORS = {
    True: ("#a8c7fa", "rgb(20, 32, 48)"),
    False: ("#f2b8b5", "rgb(59, 34, 36)"),
}


class DropOverlay(QLabel):
    """A dashed frame over its parent saying what the drop would open; hidden otherwise.

    It takes no mouse or drag event: the window under it keeps handling the drag.
    """

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("dropOverlay")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        name_control(self, "Drop feedback")
        self.hide()

    def show_preview(self, preview: DropPreview) -> None:
        """Cover the parent and say what dropping would open (or why nothing)."""
        ok = preview.opens_anything
        edge, fill = _COLORS[ok]
        self.setStyleSheet(
            f"#dropOverlay {{ background: {fill}; border: 3px dashed {edge};"
            f" border-radius: 10px; color: {edge}; padding: 24px; }}"
        )
        self.setText(f"Drop to open {preview.summary()}" if ok else preview.summary())
        parent = self.parentWidget()
        # Large, and larger with the user's font (a style sheet's size would be fixed).
        self.setFont(ui_font(16 / 9, base=parent.font() if parent is not None else None))
        if parent is not None:
            self.setGeometry(parent.rect().adjusted(8, 8, -8, -8))
        self.raise_()
        self.show()
