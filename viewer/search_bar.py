"""The timeline's search bar: a name or regular expression, the match count, Next / Previous.

It renders a :class:`~viewer.state.SearchState` and says what the user asked for through
signals; the matching itself runs elsewhere (:func:`analysis.search.search_events`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QWidget,
)

from strata.viewer.access import name_control
from strata.viewer.state import SearchState

__all__ = ["SearchBar"]

#: Typing waits this long before searching (a search of 10 M events takes ~0.1-0.3 s).
_TYPING_DELAY_MS = 250


class _SearchField(QLineEdit):
    """Enter steps forward, Shift+Enter back, Esc closes the bar."""

    step = Signal(int)
    closed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.step.emit(-1 if shift else 1)
        elif event.key() == Qt.Key.Key_Escape:
            self.closed.emit()
        else:
            super().keyPressEvent(event)


class SearchBar(QWidget):
    """Search field, regex switch, count, Previous / Next and close buttons.

    Signals
    -------
    search_requested(str, bool)
        Search for this text (a regular expression when True); '' clears.
    step_requested(int)
        Show the next (+1) or previous (-1) match.
    closed()
        The user closed the bar (Esc or ✕).
    """

    search_requested = Signal(str, bool)
    step_requested = Signal(int)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchBar")
        self.field = _SearchField(self)
        self.field.setPlaceholderText("Search events by name (Enter: next, Shift+Enter: back)")
        self.field.setClearButtonEnabled(True)
        name_control(self.field, "Search events", "Find events by name in every report")
        self.regex_box = QCheckBox("Regex", self)
        self.regex_box.setToolTip("Treat the text as a regular expression")
        self.count_label = name_control(QLabel("", self), "Matches")
        self.count_label.setMinimumWidth(110)
        self.previous_button = QToolButton(self)
        self.previous_button.setText("▲")
        name_control(self.previous_button, "Previous match")
        self.previous_button.setToolTip("Previous match (Shift+Enter)")
        self.next_button = QToolButton(self)
        self.next_button.setText("▼")
        name_control(self.next_button, "Next match")
        self.next_button.setToolTip("Next match (Enter)")
        close = QToolButton(self)
        close.setText("✕")
        name_control(close, "Close search")
        close.setToolTip("Close the search (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for widget in (self.field, self.regex_box, self.count_label, self.previous_button,
                       self.next_button, close):  # fmt: skip
            layout.addWidget(widget, 1 if widget is self.field else 0)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(_TYPING_DELAY_MS)
        self._timer.timeout.connect(self.submit)
        self.field.textChanged.connect(lambda _text: self._timer.start())
        self.regex_box.toggled.connect(lambda _on: self.submit())
        self.field.step.connect(self._on_step)
        self.field.closed.connect(self.closed)
        close.clicked.connect(self.closed)
        self.previous_button.clicked.connect(lambda: self._on_step(-1))
        self.next_button.clicked.connect(lambda: self._on_step(1))

    def submit(self) -> None:
        """Ask for a search of the text now (typing asks after a short pause)."""
        self._timer.stop()
        self.search_requested.emit(self.field.text(), self.regex_box.isChecked())

    def _on_step(self, direction: int) -> None:
        if self._timer.isActive():  # Enter right after typing: search first, then step
            self.submit()
        self.step_requested.emit(direction)

    def focus_field(self) -> None:
        """Show the bar and put the cursor in the field, its text selected."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def show_state(self, search: SearchState) -> None:
        """Say the matches' count, the current match and any error."""
        if search.error:
            text, tip = search.error, search.error
        elif not search.text:
            text, tip = "", ""
        elif search.count is None:
            text, tip = "searching…", ""
        elif search.count == 0:
            text, tip = "no match", ""
        elif search.current < 0:
            text, tip = f"{search.count:,} matches", ""
        else:
            text, tip = f"{search.current + 1:,} / {search.count:,}", ""
        self.count_label.setText(text)
        self.count_label.setToolTip(tip)
        self.count_label.setProperty("error", bool(search.error))
        has_matches = bool(search.count)
        self.previous_button.setEnabled(has_matches)
        self.next_button.setEnabled(has_matches)
