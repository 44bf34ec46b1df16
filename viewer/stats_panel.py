"""The stats panel: one tab per summary or list, a scope, a name filter, a sortable table and
the duration histogram of the clicked name.

The panel shows the tabs it is given (:class:`viewer.stats_tabs.StatsTab`, registered by
:mod:`app.stats_tabs`; on its own, :data:`DEFAULT_TABS`) and names none of them: each tab
says its columns, its own option and which of the controls apply. It computes nothing: the
app reads :meth:`StatsPanel.scope` and :meth:`StatsPanel.option`, runs the work on a worker
and calls :meth:`StatsPanel.show_table` (a summary) or :meth:`StatsPanel.show_rows` (a list
tab). It writes no file either: *Export CSV…* emits :attr:`StatsPanel.export_requested`
with the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

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

from strata.analysis.shortnames import distinct_short_labels
from strata.viewer.access import fit_rows, name_control
from strata.viewer.histogram import DurationHistogramWidget
from strata.viewer.labels import ElidedLabel
from strata.viewer.outliers_view import OUTLIERS_TAB, OUTLIERS_VIEW, with_mads
from strata.viewer.state import Scope
from strata.viewer.stats_scope import StatsScopeWidget
from strata.viewer.stats_tabs import SUMMARY_TABS, StatsTab
from strata.viewer.table_model import SORT_ROLE, Column, DataFrameModel

__all__ = [
    "DEFAULT_TABS",
    "OUTLIERS_TAB",
    "OWN_TABS",
    "TABS",
    "StatsPanel",
    "columns_for",
    "group_of",
]

#: The tabs a panel shows when it is given none: the summaries and the outlier instances
#: of their names (the window's panel shows :func:`app.stats_tabs.stats_tabs`).
DEFAULT_TABS: tuple[StatsTab, ...] = (*SUMMARY_TABS, OUTLIERS_VIEW)
#: (id, title) of :data:`DEFAULT_TABS`, in tab order.
TABS = tuple((tab.id, tab.title) for tab in DEFAULT_TABS)
#: The tabs of :data:`DEFAULT_TABS` with rows of their own (not a summary of the scope).
OWN_TABS = tuple(tab.id for tab in DEFAULT_TABS if not tab.is_summary)
_HISTOGRAM_MIN_PX = 140
_HISTOGRAM_START_PX = 220


def columns_for(
    kind: str,
    frame: pd.DataFrame,
    report_labels: list[str],
    short_labels: Mapping[str, str] | None = None,
) -> list[Column]:
    """Return the columns the tab ``kind`` of :data:`DEFAULT_TABS` shows for ``frame``
    (:meth:`viewer.stats_tabs.StatsTab.columns_of`)."""
    tab = next(t for t in DEFAULT_TABS if t.id == kind)
    return tab.columns_of(frame, report_labels, short_labels)


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
    """Summaries and lists of the loaded reports for a scope, linked to the timeline by the
    controller; one tab per :class:`~viewer.stats_tabs.StatsTab` of ``tabs``.

    Signals
    -------
    scope_changed(Scope)
        The range, report or by-report toggle changed.
    kind_changed(str)
        Another tab was chosen (its id).
    name_activated(str, str, object)
        A name row was clicked: (name, kind, group): ``group`` is the row's ``(key, style)``,
        which of the groups shown by that name it is (two CUDA API groups can show one
        name, two NVTX groups differ by style only); ``(name, None)`` when the table has no
        ``key`` column.
    name_double_clicked(str, str, object)
        A name row was double-clicked: as :attr:`name_activated`.
    instance_step(int)
        Next (+1) or Previous (-1) instance of the active name.
    option_changed(str, str)
        A tab's own option changed: (tab id, value).
    row_chosen(str, object)
        A row of a list tab was chosen: (tab id, a ``dict`` of its fields).
    outlier_selected(object)
        A row of the Outliers tab was chosen (as :attr:`row_chosen`, kept for its callers).
    export_requested(str, str)
        Export CSV…: (suggested file name, the CSV text of the rows shown).
    """

    scope_changed = Signal(object)
    kind_changed = Signal(str)
    name_activated = Signal(str, str, object)
    name_double_clicked = Signal(str, str, object)
    instance_step = Signal(int)
    option_changed = Signal(str, str)
    row_chosen = Signal(str, object)
    outlier_selected = Signal(object)
    export_requested = Signal(str, str)

    def __init__(
        self, parent: QWidget | None = None, tabs: Sequence[StatsTab] | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("statsPanel")
        self._tab_list = tuple(DEFAULT_TABS if tabs is None else tabs)
        ids = [tab.id for tab in self._tab_list]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError(f"a stats panel needs tabs of distinct ids, not {ids}")
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
        for tab in self._tab_list:
            self.tabs.addTab(tab.title)
        self.scope_row = StatsScopeWidget(self._tab_list, self)
        self.range_combo = self.scope_row.range_combo
        self.report_combo = self.scope_row.report_combo
        self.by_report = self.scope_row.by_report
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
        top_layout.addWidget(self.scope_row)
        top_layout.addLayout(filter_row)
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
        self.scope_row.scope_changed.connect(self.scope_changed)
        self.scope_row.option_changed.connect(self.option_changed)
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

    def stats_tabs(self) -> tuple[StatsTab, ...]:
        """Return the panel's tabs, in tab order."""
        return self._tab_list

    def current_tab(self) -> StatsTab:
        return self._tab_list[max(self.tabs.currentIndex(), 0)]

    def kind(self) -> str:
        """Return the current tab's id."""
        return self.current_tab().id

    def set_kind(self, kind: str) -> None:
        self.tabs.setCurrentIndex([tab.id for tab in self._tab_list].index(kind))

    def option(self, tab_id: str | None = None) -> str | None:
        """Return the value of a tab's own option (the current tab's by default; None for a
        tab without one)."""
        return self.scope_row.option(self.kind() if tab_id is None else tab_id)

    def set_option(self, tab_id: str, value: str) -> None:
        """Choose ``value`` for the tab's own option (emits :attr:`option_changed`)."""
        self.scope_row.set_option(tab_id, value)

    def option_combo(self, tab_id: str) -> QComboBox | None:
        return self.scope_row.option_combo(tab_id)

    # The built-in tabs' options by the names their callers and tests knew them by.
    def diff_kind(self) -> str | None:
        return self.option("diff")

    def set_diff_kind(self, kind: str) -> None:
        self.set_option("diff", kind)

    def set_ops_view(self, view: str) -> None:
        self.set_option("ops", view)

    @property
    def ops_view_combo(self) -> QComboBox | None:
        return self.option_combo("ops")

    def set_collective_view(self, view: str) -> None:
        self.set_option("collectives", view)

    def _row_kind(self) -> str:
        """The kind of the current tab's name rows (a summary's own; the Diff's compared)."""
        tab = self.current_tab()
        return tab.name_kind(self.option(tab.id)) if tab.name_kind is not None else tab.id

    def scope(self) -> Scope:
        return self.scope_row.scope()

    def set_scope(self, scope: Scope) -> None:
        """Set every scope control; emits :attr:`scope_changed` once."""
        self.scope_row.set_scope(scope)

    def set_reports(self, labels: list[str], paths: Sequence[str] | None = None) -> None:
        """Offer ``labels`` in the report selector (keeps the choice when still valid).

        Report columns and the selector show each label cut around the part where the
        labels differ (:func:`analysis.shortnames.distinct_short_labels`); the tooltip
        says the full label, or ``paths`` (per report, its file) when given."""
        self._report_labels = list(labels)
        short = distinct_short_labels(self._report_labels)
        self._report_short = dict(zip(self._report_labels, short, strict=True))
        tips = list(paths) if paths is not None and len(paths) == len(labels) else labels
        self._report_tips = dict(zip(self._report_labels, map(str, tips), strict=True))
        self._apply_display_names()
        self.scope_row.set_reports(short, [self._report_tips[label] for label in labels])

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
        """Return the name of the current row (None when no row is current or the tab's
        rows are not names)."""
        index = self.table.currentIndex()
        if not index.isValid() or self.current_tab().name_kind is None:
            return None
        row = self.proxy.mapToSource(index).row()
        value = self.model.frame()["name"].iloc[row]
        return None if value is None else str(value)

    # -- showing results ------------------------------------------------------------------

    def _columns(self, tab: StatsTab, frame: pd.DataFrame) -> list[Column]:
        return tab.columns_of(frame, self._report_labels, self._report_short)

    def show_table(self, kind: str, frame: pd.DataFrame, status: str = "") -> None:
        """Show ``frame`` (stats of ``kind``); ignored unless ``kind`` is the current tab."""
        self._frames[kind] = frame
        self._loading_text = ""
        if kind != self.kind():
            return
        name = self.selected_name()
        header = self.table.horizontalHeader()
        sort_key = self._sort_key()
        self.model.set_frame(frame, self._columns(self.current_tab(), frame))
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

    def show_rows(
        self, tab_id: str, frame: pd.DataFrame, status: str = "", row_colors=None
    ) -> None:
        """Keep a list tab's rows and show them, in their own order, when it is the current
        tab; ``row_colors``: per row, its text colour (``#RRGGBB``, None: the usual)."""
        self._row_colors[tab_id] = list(row_colors) if row_colors is not None else []
        self._show_list(tab_id, frame, status)

    def show_outliers(self, frame: pd.DataFrame, status: str = "") -> None:
        """Show outlier instances (worst first) in the Outliers tab, with how many MADs
        each is off (:func:`viewer.outliers_view.with_mads`)."""
        self.show_rows(OUTLIERS_TAB, with_mads(frame), status)

    def _show_list(self, kind: str, frame: pd.DataFrame, status: str) -> None:
        """Keep a list tab's rows; show them, in their own order, when it is the current tab."""
        self._frames[kind] = frame
        self._list_status[kind] = status
        self._loading_text = ""
        if self.kind() == kind:
            colors = self._row_colors.get(kind) or None
            self.model.set_frame(frame, self._columns(self.current_tab(), frame), colors)
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
        widest = max(self.current_tab().name_min_px, room)
        width = min(max(self._name_content_px, 120), widest)
        if width != header.sectionSize(name_col):
            header.resizeSection(name_col, width)

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._fit_name_column()  # a wider panel gives the names the room

    # -- reactions ------------------------------------------------------------------------

    def _on_tab_changed(self, index: int) -> None:
        tab = self.current_tab()
        frame = self._frames.get(tab.id)
        # A screen reader names the table by what it lists now.
        self.table.setAccessibleName(f"{self.tabs.tabText(index)} table")
        for widget in (self.prev_button, self.next_button):
            widget.setEnabled(tab.steps_instances)
        # The highlighted name's histogram and count belong to the summaries (and an op's
        # instances): under a list of other rows they described rows that tab does not show.
        self.histogram.setVisible(tab.shows_histogram)
        self.instance_label.setVisible(tab.shows_histogram)
        self.scope_row.show_for(tab)
        if frame is not None and not tab.is_summary:
            self._show_list(tab.id, frame, self._list_status.get(tab.id, ""))
        elif frame is not None:
            self.show_table(tab.id, frame, "")
        else:
            self.model.set_frame(pd.DataFrame(), [])
            self.status_label.setText(self._loading_text)
        self._apply_filter()  # each kind filters its own column
        self.kind_changed.emit(tab.id)

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
        """The column the filter matches (a finding's text, a collective, the name)."""
        return self.current_tab().filter_key

    def _row_record(self, index: QModelIndex) -> dict:
        row = self.proxy.mapToSource(index).row()
        return self.model.frame().iloc[row].to_dict()

    def _on_clicked(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        record, tab = self._row_record(index), self.current_tab()
        if tab.name_kind is None:
            self.row_chosen.emit(tab.id, record)
            if tab.id == OUTLIERS_TAB:
                self.outlier_selected.emit(record)
        elif record.get("name") is not None:
            self.name_activated.emit(str(record["name"]), self._row_kind(), group_of(record))

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        # Keyboard navigation follows the same path as a click.
        if current.isValid() and QGuiApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self._on_clicked(current)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if not index.isValid() or self.current_tab().name_kind is None:
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
        title = self.current_tab().title.replace(" ", "_").replace("→", "to").lower()
        self.export_requested.emit(f"{title}.csv", self.visible_rows_text(","))
