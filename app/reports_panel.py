"""The open reports as a table: loading progress, what each holds, its time shift, close,
and which reports a diff compares (the context menu sets the baseline and the others)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHeaderView,
    QMenu,
    QProgressBar,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.shortnames import distinct_short_labels
from strata.analysis.timefmt import format_count, format_duration_ns, pluralize
from strata.app.loading import LOADED, ReportEntry, ReportList
from strata.viewer.access import fit_rows, name_control
from strata.viewer.state import DiffState

__all__ = ["ReportsPanel"]

_COLUMNS = ("Report", "Status", "Manual offset", "Shift", "")
_COL_NAME, _COL_STATUS, _COL_MANUAL, _COL_SHIFT, _COL_CLOSE = range(len(_COLUMNS))
_FULL_NAME_ROLE = Qt.ItemDataRole.UserRole + 2  # the name column's full report name
_NS_PER_MS = 1_000_000
#: What the Report cell adds for a report of the diff.
_ROLE_TEXT = {"before": "  · baseline", "after": "  · compared"}


class ReportsPanel(QWidget):
    """One row per report of a :class:`~app.loading.ReportList`, following its signals.

    While a report loads, its Status cell is a progress bar; once loaded it says how many
    events and how long the report is. The manual offset (milliseconds) edits the list; the
    Shift column shows the total offset the timeline applies (alignment + manual).

    Signals
    -------
    close_requested(Path)
        The row's close button was pressed.
    baseline_requested(list), compare_requested(list)
        The context menu's Set as Baseline / Compare with Baseline, with the selected
        reports' paths (several rows: a group).
    diff_clear_requested()
        The context menu's Clear Diff.
    """

    close_requested = Signal(object)
    baseline_requested = Signal(list)
    compare_requested = Signal(list)
    diff_clear_requested = Signal()

    def __init__(self, report_list: ReportList, parent: QWidget | None = None):
        super().__init__(parent)
        self._list = report_list
        self._rows: dict[Path, int] = {}
        self._diff = DiffState()
        self._table = name_control(
            QTableWidget(0, len(_COLUMNS), self),
            "Reports",
            "The open reports: loading status, time shift, close",
        )
        self._table.setHorizontalHeaderLabels(list(_COLUMNS))
        self._table.verticalHeader().setVisible(False)
        self._table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Several rows: a group of reports on one side of a diff.
        self._table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self._table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self._table.customContextMenuRequested.connect(self._show_menu)
        self._table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._table.setAlternatingRowColors(True)
        self._table.setWordWrap(False)
        # Names are shown cut around the part where they differ (distinct_short_labels), then
        # at the end when still too wide; the full path is in the tooltip.
        self._table.setTextElideMode(Qt.TextElideMode.ElideRight)
        fit_rows(self._table, 26)
        header = self._table.horizontalHeader()
        header.setSectionResizeMode(_COL_NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(_COL_STATUS, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(_COL_STATUS, 300)
        header.resizeSection(_COL_MANUAL, 120)
        header.resizeSection(_COL_SHIFT, 110)
        header.setSectionResizeMode(_COL_CLOSE, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(_COL_CLOSE, 30)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._table)
        report_list.entry_added.connect(self._on_entry_added)
        report_list.entry_progressed.connect(self._on_entry_progressed)
        report_list.report_loaded.connect(self._on_report_loaded)
        report_list.entry_removed.connect(self._on_entry_removed)

    def row_count(self) -> int:
        return self._table.rowCount()

    def selected_path(self) -> Path | None:
        """Return the path of the (first) selected row, if any."""
        paths = self.selected_paths()
        return paths[0] if paths else None

    def selected_paths(self) -> list[Path]:
        """Return the paths of the selected rows, top to bottom."""
        rows = sorted(i.row() for i in self._table.selectionModel().selectedRows())
        items = [self._table.item(row, _COL_NAME) for row in rows]
        return [Path(i.data(Qt.ItemDataRole.UserRole)) for i in items if i is not None]

    def select_paths(self, paths: list[Path]) -> None:
        """Select the rows of ``paths`` (and no other)."""
        self._table.clearSelection()
        model, flags = self._table.model(), self._table.selectionModel().SelectionFlag
        for path in paths:
            row = self._row_of(Path(path))
            if row is not None:
                self._table.selectionModel().select(
                    model.index(row, _COL_NAME), flags.Select | flags.Rows
                )

    def show_diff(self, diff: DiffState) -> None:
        """Mark the reports a diff compares: '· baseline', '· compared'."""
        self._diff = diff
        roles = {**dict.fromkeys(diff.before, "before"), **dict.fromkeys(diff.after, "after")}
        for row in range(self._table.rowCount()):
            item = self._table.item(row, _COL_NAME)
            if item is None:
                continue
            path = Path(item.data(Qt.ItemDataRole.UserRole))
            item.setText(path.name + _ROLE_TEXT.get(roles.get(str(path), ""), ""))

    def _show_menu(self, pos: QPoint) -> None:
        if not self.selected_paths():
            return
        menu = QMenu(self)
        self.fill_menu(menu)
        menu.popup(self._table.viewport().mapToGlobal(pos))

    def fill_menu(self, menu: QMenu) -> None:
        """Add the diff actions for the selected reports to ``menu``."""
        paths = self.selected_paths()
        several = len(paths) > 1
        before = menu.addAction("Set as Baseline (Group)" if several else "Set as Baseline")
        before.triggered.connect(lambda: self.baseline_requested.emit(paths))
        after = menu.addAction("Compare Group with Baseline" if several
                               else "Compare with Baseline")  # fmt: skip
        after.setEnabled(bool(self._diff.before))
        after.triggered.connect(lambda: self.compare_requested.emit(paths))
        menu.addSeparator()
        clear = menu.addAction("Clear Diff")
        clear.setEnabled(bool(self._diff.before or self._diff.after))
        clear.triggered.connect(self.diff_clear_requested.emit)

    def show_shifts(self, shifts_ns: dict[Path, int]) -> None:
        """Show the total offset applied to each report."""
        for path, shift_ns in shifts_ns.items():
            row = self._row_of(path)
            if row is not None:
                text = f"{shift_ns / _NS_PER_MS:+,.3f} ms" if shift_ns else "0"
                self._table.setItem(row, _COL_SHIFT, _item(text, path, align_right=True))

    def _shorten_names(self) -> None:
        """Show each report's name cut around the part where the names differ."""
        items = [self._table.item(r, _COL_NAME) for r in range(self._table.rowCount())]
        items = [i for i in items if i is not None and i.data(_FULL_NAME_ROLE) is not None]
        short = distinct_short_labels([str(i.data(_FULL_NAME_ROLE)) for i in items])
        for item, text in zip(items, short, strict=True):
            item.setText(text)

    def _row_of(self, path: Path) -> int | None:
        for row in range(self._table.rowCount()):
            item = self._table.item(row, _COL_NAME)
            if item is not None and Path(item.data(Qt.ItemDataRole.UserRole)) == path:
                return row
        return None

    def _on_entry_added(self, entry: ReportEntry) -> None:
        row = self._table.rowCount()
        self._table.insertRow(row)
        name = _item(entry.name, entry.path)
        name.setToolTip(str(entry.path))
        name.setData(_FULL_NAME_ROLE, entry.name)
        self._table.setItem(row, _COL_NAME, name)
        self._shorten_names()
        bar = QProgressBar(self._table)
        bar.setRange(0, 1000)
        bar.setFormat(f"%p%  {entry.text}")
        bar.setTextVisible(True)
        name_control(bar, f"Loading {entry.name}")
        self._table.setCellWidget(row, _COL_STATUS, bar)
        self._table.setCellWidget(row, _COL_MANUAL, self._make_offset_box(entry))
        self._table.setItem(row, _COL_SHIFT, _item("", entry.path))
        close = QToolButton(self._table)
        close.setText("\u2715")
        close.setAutoRaise(True)
        close.setToolTip(f"Close {entry.name}")
        name_control(close, f"Close {entry.name}")
        close.clicked.connect(lambda: self.close_requested.emit(entry.path))
        self._table.setCellWidget(row, _COL_CLOSE, close)

    def _make_offset_box(self, entry: ReportEntry) -> QDoubleSpinBox:
        box = name_control(QDoubleSpinBox(self._table), f"Time shift of {entry.name}")
        box.setDecimals(3)
        box.setRange(-1e9, 1e9)
        box.setSuffix(" ms")
        box.setSingleStep(1.0)
        box.setKeyboardTracking(False)
        box.setToolTip("Shift this report in time (added to the alignment)")
        box.setValue(entry.manual_offset_ns / _NS_PER_MS)
        box.valueChanged.connect(
            lambda value: self._list.set_manual_offset(entry.path, round(value * _NS_PER_MS))
        )
        return box

    def _on_entry_progressed(self, entry: ReportEntry) -> None:
        row = self._row_of(entry.path)
        bar = self._table.cellWidget(row, _COL_STATUS) if row is not None else None
        if isinstance(bar, QProgressBar):
            bar.setValue(round(entry.fraction * 1000))
            bar.setFormat(f"%p%  {entry.text}")

    def _on_report_loaded(self, entry: ReportEntry) -> None:
        row = self._row_of(entry.path)
        if row is None or entry.state != LOADED:
            return
        self._table.removeCellWidget(row, _COL_STATUS)
        report = entry.report
        lo_ns, hi_ns = report.span_ns()
        text = (
            f"{pluralize(report.event_count, 'event', number=format_count(report.event_count))} · "
            f"{format_duration_ns(hi_ns - lo_ns)} · nsys {report.info.nsys_version or '?'}"
        )
        self._table.setItem(row, _COL_STATUS, _item(text, entry.path))
        self._fit_status_column()

    def _fit_status_column(self) -> None:
        # Wide enough for the longest status, never narrower than a readable progress bar.
        self._table.resizeColumnToContents(_COL_STATUS)
        header = self._table.horizontalHeader()
        header.resizeSection(_COL_STATUS, max(header.sectionSize(_COL_STATUS) + 12, 300))

    def _on_entry_removed(self, entry: ReportEntry) -> None:
        row = self._row_of(entry.path)
        if row is not None:
            self._table.removeRow(row)
            self._shorten_names()


def _item(text: str, path: Path, align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setData(Qt.ItemDataRole.UserRole, str(path))
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item
