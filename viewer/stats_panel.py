"""The stats side panel: one tab per summary, a scope, a name filter, a sortable table, the
duration histogram of the clicked name, the outliers list, the expert rules' findings and
the diff of two reports (or two groups).

The panel computes nothing: :mod:`app.stats_controller` reads :meth:`StatsPanel.scope`,
runs the aggregation on a worker and calls :meth:`StatsPanel.show_table` /
:meth:`StatsPanel.show_outliers` / :meth:`StatsPanel.show_findings` /
:meth:`StatsPanel.show_diff`. It writes no file
either: *Export CSV…* emits :attr:`StatsPanel.export_requested` with the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTabBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.diff import DIFF_KINDS
from strata.analysis.outliers import Z_MAD
from strata.analysis.shortnames import distinct_short_labels
from strata.viewer.access import fit_rows, name_control
from strata.viewer.collectives_view import COLLECTIVE_VIEW_TITLES, collectives_columns
from strata.viewer.histogram import DurationHistogramWidget
from strata.viewer.labels import ElidedLabel
from strata.viewer.ops_view import OPS_VIEW_TITLES, ops_columns
from strata.viewer.state import Scope
from strata.viewer.style import report_color
from strata.viewer.table_model import SORT_ROLE, Column, DataFrameModel

__all__ = [
    "COLLECTIVES_TAB",
    "DIFF_KIND_TITLES",
    "DIFF_TAB",
    "EXPERT_TAB",
    "LIST_TABS",
    "OPS_TAB",
    "OUTLIERS_TAB",
    "OWN_TABS",
    "RANGE_SCOPES",
    "TABS",
    "StatsPanel",
    "columns_for",
    "group_of",
]

#: (kind, tab title): kinds as :data:`analysis.window_stats.WINDOW_KINDS`.
TABS = (
    ("kernels", "CUDA kernels"),
    ("cuda_api", "CUDA API"),
    ("memcpy", "MemOps time"),
    ("memcpy_bytes", "MemOps size"),
    ("nvtx", "NVTX ranges"),
    ("nvtx_gpu", "NVTX → GPU"),
    ("osrt", "OS runtime"),
    ("outliers", "Outliers"),
    ("expert", "Expert"),
    ("collectives", "Collectives"),
    ("ops", "Ops"),
    ("diff", "Diff"),
)
OUTLIERS_TAB = "outliers"
EXPERT_TAB = "expert"
COLLECTIVES_TAB = "collectives"
DIFF_TAB = "diff"
OPS_TAB = "ops"  # a DLProf aggregation: app/stats_ops.py fills it
#: Tabs that list instances (one row per event or gap), not statistics per name.
LIST_TABS = (OUTLIERS_TAB, EXPERT_TAB, COLLECTIVES_TAB, OPS_TAB)
#: Tabs their own controllers fill (not a summary of the scope).
OWN_TABS = (*LIST_TABS, DIFF_TAB)
#: (kind, title) the Diff tab compares, one at a time (:data:`analysis.diff.DIFF_KINDS`).
DIFF_KIND_TITLES = tuple((kind, dict(TABS)[kind]) for kind in DIFF_KINDS)
_HISTOGRAM_MIN_PX = 140
_HISTOGRAM_START_PX = 220
#: Time scopes (:attr:`viewer.state.Scope.range_mode`): whole run, the visible range, the
#: Shift-drag selection.
RANGE_SCOPES = (("all", "Whole run"), ("visible", "Visible range"), ("selection", "Selection"))


def columns_for(
    kind: str,
    frame: pd.DataFrame,
    report_labels: list[str],
    short_labels: Mapping[str, str] | None = None,
) -> list[Column]:
    """Return the columns to show for a ``kind`` tab's ``frame`` (units in headers).

    A by-report column group is headed by its report's ``short_labels`` entry (default: the
    label without ``.sqlite``). In list tabs the report column follows the name and value
    columns: the short label, a column that says what differs, not a wide lead column.
    """
    if kind == EXPERT_TAB:
        return [
            Column("rule", "Rule", "text", "The nsys analyze rule that found it (-r NAME)"),
            Column("what", "What", "text"), Column("where", "Where", "text"),
            Column("start_ns", "Start (ns)"), Column("report", "Report", "text"),
        ]  # fmt: skip
    if kind == COLLECTIVES_TAB:
        return collectives_columns(frame)
    if kind == DIFF_TAB:
        return _DIFF_COLUMNS
    if kind == OPS_TAB:
        return ops_columns(frame)
    if kind == OUTLIERS_TAB:
        return [
            Column("name", "Name", "text"),
            Column("mads", "MADs off", "z", "How many median absolute deviations from the "
                   "name's median duration (over every report)"),
            Column("duration_ns", "Duration (ns)"),
            Column("median_ns", "Median (ns)", "dec1", "The name's median over every report"),
            Column("report", "Report", "text"),
            Column("row", "Row", "text"), Column("start_ns", "Start (ns)"),
            Column("kind", "Kind", "text"),
            Column("robust_z", "Robust z", "z", f"{Z_MAD} × MADs off (Iglewicz–Hoaglin)"),
        ]  # fmt: skip
    unit = "B" if kind == "memcpy_bytes" else "ns"
    head = [Column("name", "Name", "text"), Column("style", "Style", "text")]
    if "slowest" in frame.columns:  # by-report view: the comparison first, then per report
        cols = [*head,
                Column("slowest", "Slowest", "text", "Report with the largest median"),
                Column("spread", "Spread", "ratio", "Largest / smallest median over reports"),
                Column("total_ns", f"Total ({unit})", "int", "Over every report")]  # fmt: skip
        for i, label in enumerate(report_labels):
            short = (short_labels or {}).get(label) or label.removesuffix(".sqlite")
            color = report_color(i)  # as in the histogram
            cols += [
                Column(f"{label}|median_ns", f"{short} Med ({unit})", "dec1",
                       f"{label}: median", color),
                Column(f"{label}|count", f"{short} Count", "int", f"{label}: instances", color),
                Column(f"{label}|total_ns", f"{short} Total ({unit})", "int",
                       f"{label}: total", color),
            ]  # fmt: skip
        return cols
    total = "Total" if unit == "B" else "Total Time"
    # nsys's cuda_gpu_mem_size_sum has no share column; ours is of the bytes, not of time.
    share = (
        Column("time_pct", "Size (%)", "pct", "Share of the bytes moved by every name")
        if unit == "B"
        else Column("time_pct", "Time (%)", "pct")
    )
    return [
        *head, share, Column("total_ns", f"{total} ({unit})"),
        Column("count", "Count"), Column("mean_ns", f"Avg ({unit})", "dec1"),
        Column("median_ns", f"Med ({unit})", "dec1"), Column("min_ns", f"Min ({unit})"),
        Column("max_ns", f"Max ({unit})"), Column("std_ns", f"StdDev ({unit})", "dec1"),
    ]  # fmt: skip


_DIFF_COLUMNS = [
    Column("change", "Change", "text", "slower / faster: the median moved beyond the noise "
           "(interval and tolerance); noise: it did not; n=1: one instance on a side, slower / "
           "faster by x1.2 and 1 µs, else too few instances; appeared / vanished: one side only"),
    Column("name", "Name", "text"), Column("style", "Style", "text"),
    Column("total_delta_ns", "Total Δ (ns)", "delta", "After - before, over each side's reports"),
    Column("med_change_pct", "Med Δ (%)", "delta_pct", "Change of the median duration"),
    Column("med_delta_ns", "Med Δ (ns)", "delta"),
    Column("interval", "Med Δ interval (ns)", "text",
           "Bootstrap interval of the median change (95 %)"),
    Column("count_before", "Count before"), Column("count_after", "Count after"),
    Column("med_before_ns", "Med before (ns)", "dec1"),
    Column("med_after_ns", "Med after (ns)", "dec1"),
    Column("total_before_ns", "Total before (ns)"), Column("total_after_ns", "Total after (ns)"),
]  # fmt: skip


def group_of(record: dict) -> tuple[object, object]:
    """The ``(key, style)`` of a table row: which group it is, not only what it is called."""
    key, style = record.get("key", record.get("name")), record.get("style")
    return (None if _is_missing(key) else key, None if _is_missing(style) or not style else style)


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # None or NaN


class _NameFilterProxy(QSortFilterProxyModel):
    """Sorts on :data:`SORT_ROLE` (numbers as numbers) and filters the ``name`` column."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setDynamicSortFilter(False)


class StatsPanel(QWidget):
    """Summaries of the loaded reports for a scope, linked to the timeline by the controller.

    Signals
    -------
    scope_changed(Scope)
        The range, report or by-report toggle changed.
    kind_changed(str)
        Another tab was chosen (a kind of :data:`TABS`).
    name_activated(str, str, object)
        A row was clicked: (name, kind, group): ``group`` is the row's ``(key, style)``,
        which of the groups shown by that name it is (two CUDA API groups can show one
        name, two NVTX groups differ by style only); ``(name, None)`` when the table has no
        ``key`` column.
    name_double_clicked(str, str, object)
        A row was double-clicked: as :attr:`name_activated`.
    instance_step(int)
        Next (+1) or Previous (-1) instance of the active name.
    diff_kind_changed(str)
        The Diff tab is to compare another kind (of :data:`DIFF_KIND_TITLES`).
    outlier_selected(object)
        An outlier row was chosen (a ``dict`` of its fields).
    finding_selected(object)
        A row of the Expert tab was chosen (a ``dict`` of its fields).
    collective_selected(object)
        A row of the Collectives tab was chosen (a ``dict`` of its fields).
    op_selected(object)
        A row of the Ops tab was chosen (a ``dict`` of its fields).
    ops_view_changed(str)
        The Ops tab is to show another view (of :data:`viewer.ops_view.OPS_VIEW_TITLES`).
    collective_view_changed(str)
        The Collectives tab is to show another view (of
        :data:`viewer.collectives_view.COLLECTIVE_VIEW_TITLES`).
    export_requested(str, str)
        Export CSV…: (suggested file name, the CSV text of the rows shown).
    """

    scope_changed = Signal(object)
    kind_changed = Signal(str)
    name_activated = Signal(str, str, object)
    name_double_clicked = Signal(str, str, object)
    instance_step = Signal(int)
    diff_kind_changed = Signal(str)
    outlier_selected = Signal(object)
    finding_selected = Signal(object)
    collective_selected = Signal(object)
    op_selected = Signal(object)
    ops_view_changed = Signal(str)
    collective_view_changed = Signal(str)
    export_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statsPanel")
        self._report_labels: list[str] = []
        self._report_short: dict[str, str] = {}  # label -> what report columns show
        self._report_tips: dict[str, str] = {}  # label -> its tooltip (the file)
        self._name_display: dict[str, str] = {}  # full name -> the name shown
        self._frames: dict[str, pd.DataFrame] = {}
        self._loading_text = ""  # what every tab says while the reports are being read
        self._list_status: dict[str, str] = {}  # the status line of each list tab
        self._row_colors: dict[str, list] = {}  # per tab: the text colour of each row
        self.model = DataFrameModel(self)
        self._name_content_px = 0  # the name column's text width, when last fitted
        self.proxy = _NameFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self._build()
        self._connect()
        # One minimum width for every tab: the widest tab's (the summaries', whose scope row
        # holds the most). A minimum that changed with the tab made a window at its minimum
        # width grow or shrink as tabs were switched.
        self.setMinimumWidth(self.minimumSizeHint().width())

    # -- construction ---------------------------------------------------------------------

    def _build(self) -> None:
        self.tabs = name_control(
            QTabBar(self),
            "Statistics views",
            "What the table below lists: a summary, outliers, a diff…",
        )
        self.tabs.setExpanding(False)
        self.tabs.setUsesScrollButtons(True)
        for _kind, title in TABS:
            self.tabs.addTab(title)
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
        self.diff_kind_combo = name_control(QComboBox(self), "Diff kind")
        for key, text in DIFF_KIND_TITLES:
            self.diff_kind_combo.addItem(text, key)
        self.diff_kind_combo.setToolTip("What the diff compares")
        self.diff_kind_combo.hide()
        self.ops_view_combo = name_control(QComboBox(self), "Ops grouping")
        for key, text in OPS_VIEW_TITLES:
            self.ops_view_combo.addItem(text, key)
        self.ops_view_combo.setToolTip("What the Ops tab aggregates by")
        self.ops_view_combo.hide()
        self.collective_view_combo = name_control(QComboBox(self), "Collectives view")
        for key, text in COLLECTIVE_VIEW_TITLES:
            self.collective_view_combo.addItem(text, key)
        self.collective_view_combo.setToolTip("Each matched collective, each type or each rank")
        self.collective_view_combo.hide()
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter names (substring)")
        self.filter_edit.setClearButtonEnabled(True)
        name_control(
            self.filter_edit,
            "Filter names",
            "Show only the rows whose name contains this text (a pattern with Regex)",
        )
        self.regex_box = QCheckBox("Regex", self)
        self.regex_box.setToolTip("Filter names with a regular expression")
        self.table = name_control(QTableView(self), "Statistics table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        # Cut at the end, as nsys does: a name's start says what it is (two template
        # instances cut in the middle read the same); the full name is in the tooltip.
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().setVisible(False)
        fit_rows(self.table)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setHighlightSections(False)
        # The arrows are read aloud as "black left-pointing triangle": names without them.
        self.prev_button = name_control(
            QPushButton("◀ Previous", self),
            "Previous instance",
            "Show the previous instance on the timeline",
        )
        self.next_button = name_control(
            QPushButton("Next ▶", self), "Next instance", "Show the next instance on the timeline"
        )
        self.export_button = QPushButton("Export CSV…", self)
        self.instance_label = name_control(ElidedLabel("", self), "Instance")
        self.status_label = name_control(ElidedLabel("", self), "Statistics status")
        self.status_label.setObjectName("statsStatus")
        self.histogram = DurationHistogramWidget(self)
        self._layout()

    def _layout(self) -> None:
        scope_row = QHBoxLayout()
        scope_row.addWidget(self.range_combo)
        scope_row.addWidget(self.report_combo, 1)
        scope_row.addWidget(self.by_report)
        scope_row.addWidget(self.diff_kind_combo)
        scope_row.addWidget(self.ops_view_combo)
        scope_row.addWidget(self.collective_view_combo)
        filter_row = QHBoxLayout()
        filter_row.addWidget(self.filter_edit, 1)
        filter_row.addWidget(self.regex_box)
        step_row = QHBoxLayout()
        step_row.addWidget(self.prev_button)
        step_row.addWidget(self.next_button)
        step_row.addWidget(self.instance_label, 1)
        step_row.addWidget(self.export_button)
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        for row in (scope_row, filter_row):
            top_layout.addLayout(row)
        top_layout.addWidget(self.table, 1)
        top_layout.addLayout(step_row)
        top_layout.addWidget(self.status_label)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.histogram)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        # Room for a readable histogram from the start (it began ~50 px tall, axes only).
        self.histogram.setMinimumHeight(_HISTOGRAM_MIN_PX)
        self.splitter.setSizes([3 * _HISTOGRAM_START_PX, _HISTOGRAM_START_PX])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tabs)
        layout.addWidget(self.splitter, 1)

    def _connect(self) -> None:
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.range_combo.currentIndexChanged.connect(self._emit_scope)
        self.report_combo.currentIndexChanged.connect(self._emit_scope)
        self.by_report.toggled.connect(self._emit_scope)
        self.diff_kind_combo.currentIndexChanged.connect(
            lambda _i: self.diff_kind_changed.emit(self.diff_kind())
        )
        self.ops_view_combo.currentIndexChanged.connect(
            lambda _i: self.ops_view_changed.emit(self.ops_view())
        )
        self.collective_view_combo.currentIndexChanged.connect(
            lambda _i: self.collective_view_changed.emit(self.collective_view())
        )
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.regex_box.toggled.connect(self._apply_filter)
        self.table.clicked.connect(self._on_clicked)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.prev_button.clicked.connect(lambda: self.instance_step.emit(-1))
        self.next_button.clicked.connect(lambda: self.instance_step.emit(1))
        self.export_button.clicked.connect(self._on_export_clicked)
        copy = QShortcut(QKeySequence(QKeySequence.StandardKey.Copy), self.table)
        copy.setContext(Qt.ShortcutContext.WidgetShortcut)
        copy.activated.connect(self.copy_selection)

    # -- state ----------------------------------------------------------------------------

    def kind(self) -> str:
        return TABS[max(self.tabs.currentIndex(), 0)][0]

    def set_kind(self, kind: str) -> None:
        self.tabs.setCurrentIndex([k for k, _ in TABS].index(kind))

    def diff_kind(self) -> str:
        """Return the kind the Diff tab compares."""
        return self.diff_kind_combo.currentData() or DIFF_KINDS[0]

    def set_diff_kind(self, kind: str) -> None:
        """Compare ``kind`` in the Diff tab (emits :attr:`diff_kind_changed` on a change)."""
        self.diff_kind_combo.setCurrentIndex(max(self.diff_kind_combo.findData(kind), 0))

    def ops_view(self) -> str:
        """Return the view the Ops tab shows (``op``, ``op_type`` or ``group_node``)."""
        return self.ops_view_combo.currentData() or OPS_VIEW_TITLES[0][0]

    def set_ops_view(self, view: str) -> None:
        """Show ``view`` in the Ops tab (emits :attr:`ops_view_changed` on a change)."""
        self.ops_view_combo.setCurrentIndex(max(self.ops_view_combo.findData(view), 0))

    def collective_view(self) -> str:
        """Return the view the Collectives tab shows (``instance``, ``type`` or ``rank``)."""
        return self.collective_view_combo.currentData() or COLLECTIVE_VIEW_TITLES[0][0]

    def set_collective_view(self, view: str) -> None:
        """Show ``view`` in the Collectives tab (emits :attr:`collective_view_changed`)."""
        index = max(self.collective_view_combo.findData(view), 0)
        self.collective_view_combo.setCurrentIndex(index)

    def _row_kind(self) -> str:
        """The kind of the current tab's rows (the compared kind on the Diff tab)."""
        return self.diff_kind() if self.kind() == DIFF_TAB else self.kind()

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

    def set_reports(self, labels: list[str], paths: Sequence[str] | None = None) -> None:
        """Offer ``labels`` in the report selector (keeps the choice when still valid).

        Report columns and the selector show each label cut around the part where the
        labels differ (:func:`analysis.shortnames.distinct_short_labels`); the tooltip
        says the full label, or ``paths`` (per report, its file) when given."""
        current = self.report_combo.currentData()
        self._report_labels = list(labels)
        short = distinct_short_labels(self._report_labels)
        self._report_short = dict(zip(self._report_labels, short, strict=True))
        tips = list(paths) if paths is not None and len(paths) == len(labels) else labels
        self._report_tips = dict(zip(self._report_labels, map(str, tips), strict=True))
        self._apply_display_names()
        self.report_combo.blockSignals(True)
        self.report_combo.clear()
        self.report_combo.addItem("All reports", None)
        for i, label in enumerate(labels):
            self.report_combo.addItem(short[i], i)
            self.report_combo.setItemData(
                i + 1, self._report_tips[label], Qt.ItemDataRole.ToolTipRole
            )
        if current is not None and current < len(labels):
            self.report_combo.setCurrentIndex(current + 1)
        self.report_combo.blockSignals(False)
        self.by_report.setEnabled(len(labels) > 1)

    def report_labels(self) -> list[str]:
        return list(self._report_labels)

    def short_report_label(self, label: str) -> str:
        """Return how report columns show report ``label`` (:meth:`set_reports`)."""
        return self._report_short.get(label, label)

    def set_name_display(self, names: Mapping[str, str]) -> None:
        """Show each name of the ``name`` columns as ``names.get(name, name)`` (a kernel's
        base or mangled name for its demangled one); the tooltip keeps the full name."""
        self._name_display = dict(names)
        self._apply_display_names()

    def shown_name(self, name: str) -> str:
        """Return how the ``name`` columns show ``name`` (:meth:`set_name_display`)."""
        return self._name_display.get(name, name)

    def _apply_display_names(self) -> None:
        report = {k: v for k, v in self._report_short.items() if k != v}
        self.model.set_display_names(
            {"name": self._name_display, "report": report, "slowest": report},
            {"report": self._report_tips, "slowest": self._report_tips},
        )

    def current_frame(self) -> pd.DataFrame:
        """Return the frame shown in the current tab (unfiltered)."""
        return self.model.frame()

    def selected_name(self) -> str | None:
        """Return the name of the current row (None when no row is current)."""
        index = self.table.currentIndex()
        if not index.isValid() or self.kind() in LIST_TABS:
            return None
        row = self.proxy.mapToSource(index).row()
        value = self.model.frame()["name"].iloc[row]
        return None if value is None else str(value)

    # -- showing results ------------------------------------------------------------------

    def show_table(self, kind: str, frame: pd.DataFrame, status: str = "") -> None:
        """Show ``frame`` (stats of ``kind``); ignored unless ``kind`` is the current tab."""
        self._frames[kind] = frame
        self._loading_text = ""
        if kind != self.kind():
            return
        name = self.selected_name()
        header = self.table.horizontalHeader()
        sort_key = self._sort_key()
        self.model.set_frame(
            frame, columns_for(kind, frame, self._report_labels, self._report_short)
        )
        self._restore_sort(sort_key, header.sortIndicatorOrder())
        self.status_label.setText(status)
        self._fit_columns()
        if name is not None:
            self.select_name(name, emit=False)

    def show_loading(self, text: str) -> None:
        """Show no numbers on any tab, only ``text``, until the next :meth:`show_table`
        (the reports are still being read: partial numbers must not pass for final)."""
        self._frames.clear()
        self.model.set_frame(pd.DataFrame(), [])
        self._loading_text = text
        self.status_label.setText(text)

    def show_outliers(self, frame: pd.DataFrame, status: str = "") -> None:
        """Show the outlier instances (worst first) in the Outliers tab."""
        frame = frame.copy()
        if "mad_ns" in frame and len(frame):
            mad = frame["mad_ns"].to_numpy(float)
            dev = frame["duration_ns"].to_numpy(float) - frame["median_ns"].to_numpy(float)
            # MAD 0: the score used the mean absolute deviation; show it in MAD-like units.
            by_z = frame["robust_z"].to_numpy(float) / Z_MAD
            frame["mads"] = np.where(mad > 0, dev / np.where(mad > 0, mad, 1.0), by_z)
        self._show_list(OUTLIERS_TAB, frame, status)

    def show_findings(self, frame: pd.DataFrame, status: str = "") -> None:
        """Show the expert rules' findings (:mod:`analysis.rules.findings`) in the Expert tab."""
        self._show_list(EXPERT_TAB, frame, status)

    def show_collectives(self, frame: pd.DataFrame, status: str = "") -> None:
        """Show collectives matched across ranks (:mod:`analysis.collectives`)."""
        self._show_list(COLLECTIVES_TAB, frame, status)

    def show_ops(self, frame: pd.DataFrame, status: str = "") -> None:
        """Show a DLProf view (:mod:`analysis.dlprof.views`) in the Ops tab, in its order."""
        self._show_list(OPS_TAB, frame, status)

    def show_diff(self, frame: pd.DataFrame, status: str = "", row_colors=None) -> None:
        """Show a diff (one row per name, by impact, the app's columns) in the Diff tab;
        ``row_colors``: per row, its text colour (``#RRGGBB``, None: the usual)."""
        self._row_colors[DIFF_TAB] = list(row_colors) if row_colors is not None else []
        self._show_list(DIFF_TAB, frame, status)

    def _show_list(self, kind: str, frame: pd.DataFrame, status: str) -> None:
        """Keep a list tab's rows; show them, in their own order, when it is the current tab."""
        self._frames[kind] = frame
        self._list_status[kind] = status
        self._loading_text = ""
        if self.kind() == kind:
            colors = self._row_colors.get(kind) or None
            self.model.set_frame(
                frame, columns_for(kind, frame, self._report_labels, self._report_short), colors
            )
            self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self.proxy.sort(-1)
            self.status_label.setText(status)
            self._fit_columns()
            self._apply_filter()

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)

    def set_instance_text(self, text: str) -> None:
        self.instance_label.setText(text)

    def select_name(self, name: str, emit: bool = True) -> bool:
        """Make the row named ``name`` current; return whether it is shown."""
        column = self.model.column_of("name")
        names = self.model.frame()["name"].to_numpy(object) if len(self.model.frame()) else []
        rows = [i for i, n in enumerate(names) if n == name]
        if column < 0 or not rows:
            return False
        record = self.model.frame().iloc[rows[0]].to_dict()
        index = self.proxy.mapFromSource(self.model.index(rows[0], column))
        if not index.isValid():
            return False
        self.table.blockSignals(not emit)
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)  # fmt: skip
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index)
        self.table.blockSignals(False)
        if emit:
            self.name_activated.emit(name, self._row_kind(), group_of(record))
        return True

    def _sort_key(self) -> str | None:
        column = self.table.horizontalHeader().sortIndicatorSection()
        columns = self.model.columns()
        return columns[column].key if 0 <= column < len(columns) else None

    def _restore_sort(self, key: str | None, order: Qt.SortOrder) -> None:
        column = self.model.column_of(key) if key else -1
        if column < 0:  # keep the frame's own order (total time, descending)
            self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self.proxy.sort(-1)
            return
        self.table.sortByColumn(column, order)

    def _fit_columns(self) -> None:
        self.table.resizeColumnsToContents()
        name_col = self.model.column_of(self._filter_key())
        self._name_content_px = (
            self.table.horizontalHeader().sectionSize(name_col) if name_col >= 0 else 0
        )
        self._fit_name_column()

    def _fit_name_column(self) -> None:
        """Give the name column its text's width, at most the room the other columns leave
        (at least 220 px, 320 px for names, when they leave less: the others scroll)."""
        header = self.table.horizontalHeader()
        name_col = self.model.column_of(self._filter_key())
        if name_col < 0 or not self._name_content_px:
            return
        others = sum(header.sectionSize(c) for c in range(header.count())
                     if c != name_col and not header.isSectionHidden(c))  # fmt: skip
        room = self.table.viewport().width() - others
        widest = max(220 if self.kind() == OUTLIERS_TAB else 320, room)
        width = min(max(self._name_content_px, 120), widest)
        if width != header.sectionSize(name_col):
            header.resizeSection(name_col, width)

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._fit_name_column()  # a wider panel gives the names the room

    # -- reactions ------------------------------------------------------------------------

    def _on_tab_changed(self, index: int) -> None:
        kind = self.kind()
        frame = self._frames.get(kind)
        # A screen reader names the table by what it lists now.
        self.table.setAccessibleName(f"{self.tabs.tabText(index)} table")
        is_list = kind in LIST_TABS
        for widget in (self.prev_button, self.next_button):  # an op's instances step too
            widget.setEnabled(not is_list or kind == OPS_TAB)
        # The highlighted name's histogram and count belong to the summaries (and an op's
        # instances): under Outliers, Expert, Diff and Collectives they described rows that
        # tab does not show.
        own_list = kind in OWN_TABS and kind != OPS_TAB
        self.histogram.setVisible(not own_list)
        self.instance_label.setVisible(not own_list)
        is_diff = kind == DIFF_TAB  # the whole reports: the scope does not apply
        # Diff, Ops and Collectives cover the whole reports: no time range to choose (and
        # their own selector takes its place, so the panel keeps its width).
        whole = is_diff or kind in (OPS_TAB, COLLECTIVES_TAB)
        shown = {
            self.diff_kind_combo: is_diff,
            self.ops_view_combo: kind == OPS_TAB,
            self.collective_view_combo: kind == COLLECTIVES_TAB,
            self.range_combo: not whole,
            self.by_report: not whole,
            self.report_combo: not is_diff,
        }
        # Hide before showing: never both selectors at once, not even between two layouts.
        for visible in (False, True):
            for widget, wanted in shown.items():
                if wanted is visible:
                    widget.setVisible(visible)
        if frame is not None and kind in OWN_TABS:
            self._show_list(kind, frame, self._list_status.get(kind, ""))
        elif frame is not None:
            self.show_table(kind, frame, "")
        else:
            self.model.set_frame(pd.DataFrame(), [])
            self.status_label.setText(self._loading_text)
        self._apply_filter()  # each kind filters its own column
        self.kind_changed.emit(kind)

    def _emit_scope(self) -> None:
        self.scope_changed.emit(self.scope())

    def _apply_filter(self) -> None:
        text = self.filter_edit.text()
        if self.regex_box.isChecked():
            try:
                re.compile(text)
            except re.error:
                self.filter_edit.setStyleSheet("color: #ff6b6b")
                return
            pattern = text
        else:
            pattern = QRegularExpression.escape(text)
        self.filter_edit.setStyleSheet("")
        self.proxy.setFilterKeyColumn(max(self.model.column_of(self._filter_key()), 0))
        self.proxy.setFilterRegularExpression(
            QRegularExpression(pattern, QRegularExpression.PatternOption.CaseInsensitiveOption)
        )

    def _filter_key(self) -> str:
        """The column the filter matches: a finding's text, or the name."""
        return {EXPERT_TAB: "what", COLLECTIVES_TAB: "collective"}.get(self.kind(), "name")

    def _row_record(self, index: QModelIndex) -> dict:
        row = self.proxy.mapToSource(index).row()
        return self.model.frame().iloc[row].to_dict()

    def _on_clicked(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        record = self._row_record(index)
        if self.kind() == OUTLIERS_TAB:
            self.outlier_selected.emit(record)
        elif self.kind() == EXPERT_TAB:
            self.finding_selected.emit(record)
        elif self.kind() == COLLECTIVES_TAB:
            self.collective_selected.emit(record)
        elif self.kind() == OPS_TAB:
            self.op_selected.emit(record)
        elif record.get("name") is not None:
            self.name_activated.emit(str(record["name"]), self._row_kind(), group_of(record))

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        # Keyboard navigation follows the same path as a click.
        if current.isValid() and QGuiApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self._on_clicked(current)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if not index.isValid() or self.kind() in LIST_TABS:
            return
        record = self._row_record(index)
        if record.get("name") is not None:
            self.name_double_clicked.emit(str(record["name"]), self._row_kind(), group_of(record))

    def visible_rows_text(self, sep: str = ",", selected_only: bool = False) -> str:
        """Return the rows shown (after filter and sort; or only the selected) as text."""
        if selected_only:
            proxy_rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        else:
            proxy_rows = list(range(self.proxy.rowCount()))
        rows = [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in proxy_rows]
        return self.model.rows_as_text(rows, sep)

    def copy_selection(self) -> None:
        """Copy the selected rows (all shown rows when none is selected), tab-separated."""
        selected = bool(self.table.selectionModel().selectedRows())
        QGuiApplication.clipboard().setText(self.visible_rows_text("\t", selected))

    def _on_export_clicked(self) -> None:
        title = dict(TABS)[self.kind()].replace(" ", "_").replace("→", "to").lower()
        self.export_requested.emit(f"{title}.csv", self.visible_rows_text(","))
