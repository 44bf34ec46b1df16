"""The stats panel's scope row: what the statistics cover (the whole run, the visible range or
the selection; every report or one; by report or pooled) and the current tab's own option
(:attr:`viewer.stats_tabs.StatsTab.option`), each shown only while it applies."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QWidget

from strata.viewer.access import name_control
from strata.viewer.state import Scope
from strata.viewer.stats_tabs import StatsTab

__all__ = ["RANGE_SCOPES", "StatsScopeWidget"]

#: Time scopes (:attr:`viewer.state.Scope.range_mode`): whole run, the visible range, the
#: Shift-drag selection.
RANGE_SCOPES = (("all", "Whole run"), ("visible", "Visible range"), ("selection", "Selection"))


class StatsScopeWidget(QWidget):
    """The range, report and by-report controls, and one combo box per tab option.

    Signals
    -------
    scope_changed(Scope)
        The range, report or by-report toggle changed.
    option_changed(str, str)
        A tab's own option changed: (tab id, value).
    """

    scope_changed = Signal(object)
    option_changed = Signal(str, str)

    def __init__(self, tabs: Sequence[StatsTab], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.range_combo = name_control(
            QComboBox(self), "Time range", "Which part of the run the statistics cover"
        )
        for key, text in RANGE_SCOPES:
            self.range_combo.addItem(text, key)
        self.report_combo = name_control(
            QComboBox(self), "Report", "Which report the statistics cover"
        )
        self.report_combo.addItem("All reports", None)
        # A long report name must not widen the panel: the combo sizes to a few characters.
        self.report_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.report_combo.setMinimumContentsLength(12)
        self.by_report = QCheckBox("By report", self)
        self.by_report.setToolTip("One column group per report, and the spread across them")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.range_combo)
        row.addWidget(self.report_combo, 1)
        row.addWidget(self.by_report)
        self._option_combos: dict[str, QComboBox] = {}
        for tab in tabs:
            if tab.option is not None:
                self._option_combos[tab.id] = combo = self._option_combo(tab)
                row.addWidget(combo)
        self.range_combo.currentIndexChanged.connect(self._emit_scope)
        self.report_combo.currentIndexChanged.connect(self._emit_scope)
        self.by_report.toggled.connect(self._emit_scope)

    def _option_combo(self, tab: StatsTab) -> QComboBox:
        combo = name_control(QComboBox(self), tab.option.name)
        for value, text in tab.option.choices:
            combo.addItem(text, value)
        combo.setToolTip(tab.option.tip)
        combo.hide()
        combo.currentIndexChanged.connect(
            lambda _i: self.option_changed.emit(tab.id, self.option(tab.id))
        )
        return combo

    def scope(self) -> Scope:
        return Scope(
            self.range_combo.currentData() or "all",
            self.report_combo.currentData(),
            self.by_report.isChecked(),
        )

    def set_scope(self, scope: Scope) -> None:
        """Set every scope control; emits :attr:`scope_changed` once."""
        for widget in (self.range_combo, self.report_combo, self.by_report):
            widget.blockSignals(True)
        try:
            self.range_combo.setCurrentIndex(max(self.range_combo.findData(scope.range_mode), 0))
            index = 0 if scope.report_index is None else scope.report_index + 1
            self.report_combo.setCurrentIndex(min(index, self.report_combo.count() - 1))
            self.by_report.setChecked(scope.by_report)
        finally:
            for widget in (self.range_combo, self.report_combo, self.by_report):
                widget.blockSignals(False)
        self._emit_scope()

    def set_reports(self, short: Sequence[str], tips: Sequence[str]) -> None:
        """Offer the reports (``short``: their names as shown, ``tips``: their tooltips) in
        the report selector; the choice stays when it is still valid."""
        current = self.report_combo.currentData()
        self.report_combo.blockSignals(True)
        self.report_combo.clear()
        self.report_combo.addItem("All reports", None)
        for i, (text, tip) in enumerate(zip(short, tips, strict=True)):
            self.report_combo.addItem(text, i)
            self.report_combo.setItemData(i + 1, tip, Qt.ItemDataRole.ToolTipRole)
        if current is not None and current < len(short):
            self.report_combo.setCurrentIndex(current + 1)
        self.report_combo.blockSignals(False)
        self.by_report.setEnabled(len(short) > 1)

    def option(self, tab_id: str) -> str | None:
        """Return the value of the tab's own option (None for a tab without one)."""
        combo = self._option_combos.get(tab_id)
        if combo is None:
            return None
        return combo.currentData() or combo.itemData(0)

    def set_option(self, tab_id: str, value: str) -> None:
        """Choose ``value`` for the tab's own option (emits :attr:`option_changed` on a
        change)."""
        combo = self._option_combos[tab_id]
        combo.setCurrentIndex(max(combo.findData(value), 0))

    def option_combo(self, tab_id: str) -> QComboBox | None:
        """Return the combo box of the tab's own option (None for a tab without one)."""
        return self._option_combos.get(tab_id)

    def show_for(self, tab: StatsTab) -> None:
        """Show the controls that apply to ``tab``: a tab of the whole reports has no time
        range to choose (its own option takes the place, so the panel keeps its width)."""
        shown = {self.range_combo: tab.time_scoped, self.by_report: tab.time_scoped,
                 self.report_combo: tab.report_scoped}  # fmt: skip
        shown.update({combo: tab_id == tab.id for tab_id, combo in self._option_combos.items()})
        # Hide before showing: never both selectors at once, not even between two layouts.
        for visible in (False, True):
            for widget, wanted in shown.items():
                if wanted is visible:
                    widget.setVisible(visible)

    def _emit_scope(self) -> None:
        self.scope_changed.emit(self.scope())
