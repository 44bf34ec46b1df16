"""Small dialogs of the shell: pin rows by name, keyboard shortcuts, about."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.timefmt import pluralize
from strata.viewer.access import name_control

__all__ = ["PinByNameDialog", "ShortcutsDialog", "about_text"]


class PinByNameDialog(QDialog):
    """Ask for a regular expression and pin every row whose name matches it, in every report.

    Parameters
    ----------
    count_matches
        ``count_matches(pattern) -> int``: how many rows a regular expression names (preview).
    initial
        The pattern to start with (the last one used).
    """

    def __init__(
        self,
        count_matches: Callable[[str], int],
        initial: str = "",
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Pin rows by name")
        self._count_matches = count_matches
        self._edit = QLineEdit(initial, self)
        self._edit.setPlaceholderText(r"regular expression, e.g. nccl|Stream \d+|rank 0")
        self._edit.setClearButtonEnabled(True)
        self._edit.setMinimumWidth(420)
        name_control(
            self._edit, "Row name pattern", "A regular expression; matching rows are pinned"
        )
        self._hint = QLabel(self)
        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self._buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Pin")
        self._buttons.accepted.connect(self.accept)
        self._buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        # The rule of viewer.state.rows.match_tracks, which render --pin uses too.
        rule = QLabel(
            "Pin every row whose label, as its header shows it, matches this regular "
            "expression (case-insensitive). A pattern matching whole labels pins only those; "
            "one holding '/' is searched in the full path (report / group / … / label).",
            self,
        )
        rule.setWordWrap(True)
        layout.addWidget(rule)
        layout.addWidget(self._edit)
        layout.addWidget(self._hint)
        layout.addWidget(self._buttons)
        self._edit.textChanged.connect(self._on_text_changed)
        self._on_text_changed(initial)

    def pattern_text(self) -> str:
        return self._edit.text()

    def set_pattern_text(self, text: str) -> None:
        self._edit.setText(text)

    def _on_text_changed(self, text: str) -> None:
        ok_button = self._buttons.button(QDialogButtonBox.StandardButton.Ok)
        if not text:
            self._hint.setText("Type a pattern.")
            ok_button.setEnabled(False)
            return
        try:
            count = self._count_matches(text)
        except re.error as exc:
            self._hint.setText(f"<span style='color:#f2b8b5'>Invalid pattern: {exc}</span>")
            ok_button.setEnabled(False)
            return
        self._hint.setText(f"{pluralize(count, 'row')} match{'es' if count == 1 else ''}.")
        ok_button.setEnabled(count > 0)


_KEYS_MAX_PX = 220


class ShortcutsDialog(QDialog):
    """List every action that has a keyboard shortcut."""

    def __init__(self, actions: Sequence[QAction], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = [
            (
                a.text().replace("&", ""),
                a.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
            )
            for a in actions
            if not a.shortcut().isEmpty()
        ]
        rows += _TIMELINE_KEYS
        table = name_control(QTableWidget(len(rows), 2, self), "Keyboard shortcuts")
        table.setHorizontalHeaderLabels(["Action", "Shortcut"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setWordWrap(True)
        for row, (name, keys) in enumerate(rows):
            table.setItem(row, 0, QTableWidgetItem(name.rstrip(".…")))
            item = QTableWidgetItem(keys)
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            table.setItem(row, 1, item)
        # The keys column sized to its text but at most _KEYS_MAX_PX (one long entry, "↑ / ↓,
        # Page Up / Down, …", took the whole width and cut every action to two words); both
        # columns wrap, and each row is as tall as its text.
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        table.resizeColumnToContents(1)
        header.resizeSection(1, min(header.sectionSize(1), _KEYS_MAX_PX))
        header.sectionResized.connect(lambda *_: table.resizeRowsToContents())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(640, 560)
        self.table = table

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.table.resizeRowsToContents()  # once the Action column has its real width


#: What the timeline and the search bar do with keys and the mouse (viewer/timeline.py,
#: app/timeline_keys.py, app/search_controller.py): shortcuts that are no menu action.
_TIMELINE_KEYS = [
    ("Zoom in / out at the mouse", "W / S, wheel"),
    ("Pan earlier / later", "A / D, drag"),
    ("Fit where the activity is (again: everything)", "F, double-click"),
    ("Select a time range (every row)", "Shift + drag"),
    ("Select an area (rows × time)", "Ctrl + Shift + drag"),
    ("Zoom to the selected range", "Z"),
    ("Clear the selection", "Esc"),
    ("Search event names", "Ctrl+F"),
    ("Next / previous match (in the search field)", "Enter / Shift+Enter"),
    ("Close the search (in the search field)", "Esc"),
    ("Event menu: zoom, select all, statistics, Events view, copy, pin", "Right-click an event"),
    ("Scroll rows", "↑ / ↓, Page Up / Down, Shift + wheel, wheel over names"),
    ("Pin, unpin or hide a row", "Right-click its name"),
    ("Collapse or expand a group", "Click its header"),
]


def about_text(version: str) -> str:
    return (
        f"<h3>Strata {version}</h3>"
        "<p>A timeline viewer for NVIDIA Nsight Systems reports: several reports on one "
        "time axis, pinned rows, statistics for the whole run or the range under the "
        "mouse.</p>"
        "<p>Open <code>.sqlite</code> exports directly; <code>.nsys-rep</code> files are "
        "converted with <code>nsys export</code> when nsys is installed.</p>"
        "<p>MIT licence.</p>"
    )
