"""Controls for multi-report time alignment: the mode and, for NVTX mode, the range name."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QComboBox, QCompleter, QLabel, QToolBar, QWidget

from strata.viewer.access import name_control

__all__ = ["ALIGNMENT_MODES", "AlignmentToolBar"]

#: mode -> label, in menu order (the math is analysis.alignment.alignment_offsets)
ALIGNMENT_MODES = {
    "session": "Session start",
    "wallclock": "Wall clock (UTC)",
    "nvtx": "First NVTX range",
    "anchor": "Anchor events",
}


class AlignmentToolBar(QToolBar):
    """A tool bar: ``Align [mode ▾] [NVTX range name ▾]``.

    The mode is also available as a group of checkable actions (:meth:`mode_actions`) for the
    View → Alignment menu; both stay in step.

    Signals
    -------
    alignment_changed(str, str)
        The mode ('session', 'wallclock', 'nvtx', 'anchor') and the NVTX range name ('' unless
        'nvtx').
    """

    alignment_changed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Alignment", parent)
        self.setObjectName("alignmentToolBar")
        self._mode_combo = name_control(QComboBox(self), "Alignment")
        self._mode_combo.setToolTip("How the reports are placed on one time axis")
        self._group = QActionGroup(self)
        self._group.setExclusive(True)
        for mode, label in ALIGNMENT_MODES.items():
            self._mode_combo.addItem(label, mode)
            action = QAction(label, self._group)
            action.setCheckable(True)
            action.setData(mode)
        self._group.actions()[0].setChecked(True)
        self._name_combo = name_control(QComboBox(self), "Alignment NVTX range")
        self._name_combo.setEditable(True)
        self._name_combo.setMinimumContentsLength(24)
        self._name_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._name_combo.lineEdit().setPlaceholderText("NVTX range name")
        name_control(self._name_combo.lineEdit(), "Alignment NVTX range name")
        self._name_combo.setToolTip("Align every report on the first instance of this NVTX range")
        self._name_combo.completer().setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self._name_combo.setEnabled(False)
        # The tool bar's actions for its widgets get their names too (a menu of hidden
        # tool bar items lists them).
        self.addWidget(QLabel(" Align ", self)).setText("Align")
        self.addWidget(self._mode_combo).setText("Alignment")
        self.addWidget(QLabel(" on ", self)).setText("on")
        self.addWidget(self._name_combo).setText("Alignment NVTX range")
        self._mode_combo.currentIndexChanged.connect(self._on_mode_index_changed)
        self._group.triggered.connect(self._on_mode_action_triggered)
        self._name_combo.lineEdit().editingFinished.connect(self._on_name_edited)
        self._name_combo.activated.connect(self._on_name_edited)
        self._last_emitted: tuple[str, str] | None = None

    def mode_actions(self) -> list[QAction]:
        """Return the checkable mode actions (for a menu)."""
        return self._group.actions()

    def mode(self) -> str:
        return self._mode_combo.currentData()

    def nvtx_name(self) -> str:
        return self._name_combo.currentText().strip()

    def set_alignment(self, mode: str, nvtx_name: str = "") -> None:
        """Show ``mode`` and ``nvtx_name`` and emit :attr:`alignment_changed` if they changed."""
        self._name_combo.setEditText(nvtx_name)
        index = self._mode_combo.findData(mode)
        if index >= 0:
            self._mode_combo.setCurrentIndex(index)
        self._sync()

    def set_nvtx_names(self, names: list[str]) -> None:
        """Offer ``names`` in the NVTX range field, keeping what the user typed."""
        text = self._name_combo.currentText()
        self._name_combo.blockSignals(True)
        self._name_combo.clear()
        self._name_combo.addItems(names)
        self._name_combo.setEditText(text)
        self._name_combo.blockSignals(False)

    def focus_nvtx_name(self) -> None:
        """Switch to NVTX mode and put the cursor in the range name field."""
        self.set_alignment("nvtx", self.nvtx_name())
        self._name_combo.setFocus()
        self._name_combo.lineEdit().selectAll()

    def _on_mode_index_changed(self, _index: int) -> None:
        self._sync()

    def _on_mode_action_triggered(self, action: QAction) -> None:
        if action.data() == "nvtx" and not self.nvtx_name():
            self.focus_nvtx_name()
            return
        self.set_alignment(action.data(), self.nvtx_name())

    def _on_name_edited(self, *_args: object) -> None:
        self._sync()

    def _sync(self) -> None:
        mode = self.mode()
        self._name_combo.setEnabled(mode == "nvtx")
        for action in self._group.actions():
            action.setChecked(action.data() == mode)
        state = (mode, self.nvtx_name() if mode == "nvtx" else "")
        if mode == "nvtx" and not state[1]:
            return  # wait for a name before re-aligning
        if state != self._last_emitted:
            self._last_emitted = state
            self.alignment_changed.emit(*state)
