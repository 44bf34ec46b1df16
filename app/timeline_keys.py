"""The timeline's keys (W/A/S/D, Z, Esc) as window-wide shortcuts, quiet in text fields."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from strata.viewer.timeline import TimelineWidget

__all__ = ["TIMELINE_KEYS", "install_timeline_keys", "is_editing_text"]

#: Keys the timeline answers wherever the focus is in its window. F is the Fit action's
#: (app/menus.py), which is window-wide already; Ctrl+F is kept for search.
TIMELINE_KEYS = ("W", "A", "S", "D", "Z", "Escape")


def is_editing_text(widget: QWidget | None) -> bool:
    """Whether ``widget`` is a field the user types into (line edit, text edit, spin box,
    editable combo box): there, letters are text and Esc is the field's own."""
    if isinstance(widget, QLineEdit | QTextEdit | QPlainTextEdit | QAbstractSpinBox):
        return not getattr(widget, "isReadOnly", lambda: False)()
    return False


def install_timeline_keys(window: QWidget, timeline: TimelineWidget) -> list[QShortcut]:
    """Make :data:`TIMELINE_KEYS` drive ``timeline`` whenever ``window`` is active.

    Without them the keys worked only while the timeline had the keyboard focus: after a
    click in the stats table, W did nothing. A line edit takes a printable key before any
    shortcut sees it (Qt's shortcut override), so typing "w" in a filter field stays text;
    Esc in a text field is handed to the field (there it closes the search bar).
    """
    shortcuts = []
    for text in TIMELINE_KEYS:
        sequence = QKeySequence(text)
        shortcut = QShortcut(sequence, window)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        key = sequence[0].key()
        shortcut.activated.connect(lambda key=key, s=shortcut: _press(timeline, key, s))
        shortcuts.append(shortcut)
    return shortcuts


def _press(timeline: TimelineWidget, key: Qt.Key, shortcut: QShortcut) -> None:
    focus = QApplication.focusWidget()
    if not is_editing_text(focus):
        timeline.press_key(key)
    elif key == Qt.Key.Key_Escape:
        # A line edit claims printable keys before shortcuts see them, but not Esc: the
        # shortcut took it, and Esc in the search field no longer closed the search. Hand it
        # to the field (which may pass it on to its parents, as an unclaimed key goes), with
        # the shortcut off meanwhile: the key would trigger it again.
        shortcut.setEnabled(False)
        try:
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier)
                QApplication.sendEvent(focus, event)
        finally:
            shortcut.setEnabled(True)
