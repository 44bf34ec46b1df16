"""The Events view: a sortable, filterable table of the events of an area of the timeline.

:class:`EventsModel` is a ``QAbstractTableModel`` over the arrays of an
:class:`~analysis.area.AreaEvents`: Qt asks only for the cells on screen, sorting and
filtering are NumPy passes over the arrays (a permutation of positions), so a million events
build no million Python objects.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.area import AreaEvents
from strata.analysis.search import compile_search, match_names
from strata.analysis.timefmt import format_duration_ns, format_time_ns, pluralize
from strata.viewer.access import fit_rows, name_control

__all__ = ["COLUMNS", "EventsModel", "EventsView"]

COLUMNS = ("Name", "Start", "Duration", "Row", "Report", "Table", "Details")
_DETAILS = COLUMNS.index("Details")
_DISPLAY = Qt.ItemDataRole.DisplayRole


def _text_ranks(texts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per code its rank in text order (only the codes used are sorted)."""
    rank = np.zeros(len(texts), dtype=np.int64)
    used = np.unique(codes) if len(codes) else np.empty(0, np.int64)
    keys = np.array([str(t).lower() for t in texts[used].tolist()], dtype=object)
    rank[used[np.argsort(keys, kind="stable")]] = np.arange(len(used))
    return rank[codes]


class EventsModel(QAbstractTableModel):
    """The rows of an :class:`AreaEvents`, filtered and sorted by position arrays.

    ``details(position) -> str`` gives the kind's own fields of one event; it is called for
    rows on screen only.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._events: AreaEvents | None = None
        self._reports: tuple[str, ...] = ()
        self._details: Callable[[int], str] = lambda _position: ""
        self._detail_cache: dict[int, str] = {}
        self._order = np.empty(0, np.int64)
        self._filter = ""
        self._sort: tuple[int, Qt.SortOrder] = (1, Qt.SortOrder.AscendingOrder)

    def set_events(self, events: AreaEvents | None, report_labels, details=None) -> None:
        """Show ``events`` (None: none), keeping the filter and the sort order."""
        self.beginResetModel()
        self._events, self._reports = events, tuple(report_labels)
        self._details = details or (lambda _position: "")
        self._detail_cache = {}
        self._order = self._positions()
        self.endResetModel()

    def events(self) -> AreaEvents | None:
        return self._events

    def set_filter(self, text: str) -> None:
        """Keep the events whose name, row or table contains ``text`` (case-insensitive)."""
        self.beginResetModel()
        self._filter = text
        self._order = self._positions()
        self.endResetModel()

    def positions(self) -> np.ndarray:
        """Return, per table row, the event's position in :meth:`events`."""
        return self._order

    def row_of(self, position: int) -> int:
        """Return the table row showing event ``position``, or -1 (filtered out)."""
        hit = np.flatnonzero(self._order == position)
        return int(hit[0]) if len(hit) else -1

    def _positions(self) -> np.ndarray:
        e = self._events
        if e is None:
            return np.empty(0, np.int64)
        keep = np.arange(len(e), dtype=np.int64)
        if self._filter:
            pattern = compile_search(self._filter)
            rows = np.asarray(e.row_labels, dtype=object)
            tables = np.asarray(e.tables, dtype=object)
            hit = match_names(e.names, e.name_codes, pattern)
            hit |= match_names(rows, e.row, pattern)
            hit |= match_names(tables, e.table_codes, pattern)
            keep = np.flatnonzero(hit)
        column, order = self._sort
        key = self._sort_key(column, keep)
        ordered = keep[np.argsort(key, kind="stable")]
        return ordered[::-1] if order == Qt.SortOrder.DescendingOrder else ordered

    def _sort_key(self, column: int, keep: np.ndarray) -> np.ndarray:
        e = self._events
        if column == 0:
            return _text_ranks(e.names, e.name_codes[keep])
        if column == 2:
            return (e.end_ns - e.start_ns)[keep]
        if column == 3:
            return _text_ranks(np.asarray(e.row_labels, dtype=object), e.row[keep])
        if column == 4:
            return e.report_index[keep]
        if column == 5:
            return _text_ranks(np.asarray(e.tables, dtype=object), e.table_codes[keep])
        return e.start_ns[keep]

    # -- Qt's model interface -------------------------------------------------------------

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's API)
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):
        if role == _DISPLAY and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        if role not in (_DISPLAY, Qt.ItemDataRole.ToolTipRole) or not index.isValid():
            return None
        position = int(self._order[index.row()])
        return self.cell(position, index.column())

    def cell(self, position: int, column: int) -> str:
        """Return the text of one cell of event ``position``."""
        e = self._events
        if column == 0:
            return str(e.names[e.name_codes[position]])
        if column == 1:
            return format_time_ns(int(e.start_ns[position]))
        if column == 2:
            return format_duration_ns(int(e.end_ns[position] - e.start_ns[position]))
        if column == 3:
            return e.row_labels[int(e.row[position])]
        if column == 4:
            r = int(e.report_index[position])
            return self._reports[r] if r < len(self._reports) else str(r)
        if column == 5:
            return e.tables[int(e.table_codes[position])]
        if position not in self._detail_cache:
            if len(self._detail_cache) > 4096:
                self._detail_cache.clear()
            self._detail_cache[position] = self._details(position)
        return self._detail_cache[position]

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.beginResetModel()
        self._sort = (column if column != _DETAILS else 1, order)
        self._order = self._positions()
        self.endResetModel()


class EventsView(QWidget):
    """Filter field, count, Export CSV button and the table of events.

    Signals
    -------
    event_activated(int)
        The user clicked (or moved the keyboard to) the event at this position of the model's
        :class:`AreaEvents`.
    export_requested()
        The user pressed Export CSV.
    """

    event_activated = Signal(int)
    export_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = EventsModel(self)
        self.filter_field = QLineEdit(self)
        self.filter_field.setPlaceholderText("Filter by name, row or table")
        self.filter_field.setClearButtonEnabled(True)
        name_control(
            self.filter_field,
            "Filter events",
            "Show only the events whose name, row or table contains this text",
        )
        # Wide enough for its placeholder: the count label beside it holds a long hint
        # ("Shift-drag on the timeline…") that squeezed the box to "Fi…".
        metrics = self.filter_field.fontMetrics()
        hint_px = metrics.horizontalAdvance(self.filter_field.placeholderText())
        self.filter_field.setMinimumWidth(hint_px + 4 * metrics.averageCharWidth() + 16)
        self.count_label = QLabel("", self)
        self.count_label.setWordWrap(True)  # on a line of its own, under the filter box
        self.export_button = QPushButton("Export CSV…", self)
        self.table = name_control(
            QTableView(self), "Events", "The events of the selected time range and rows"
        )
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        fit_rows(self.table)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((260, 110, 90, 260, 110, 80)):
            header.resizeSection(column, width)
        top = QHBoxLayout()
        top.addWidget(self.filter_field, 1)
        top.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.count_label)
        layout.addWidget(self.table, 1)
        self._is_following = False
        self.filter_field.textChanged.connect(self._on_filter)
        self.export_button.clicked.connect(self.export_requested)
        self.table.clicked.connect(self._on_clicked)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)

    def set_events(self, events: AreaEvents | None, report_labels, details=None, hint="") -> None:
        """Show ``events`` (the area's), or ``hint`` when there are none to show."""
        self.model.set_events(events, report_labels, details)
        self._say_count(hint)

    def _say_count(self, hint: str = "") -> None:
        events = self.model.events()
        shown = self.model.rowCount()
        if events is None:
            self.count_label.setText(hint)
        elif shown == len(events):
            self.count_label.setText(pluralize(shown, "event"))
        else:
            self.count_label.setText(f"{shown:,} of {pluralize(len(events), 'event')}")

    def _on_filter(self, text: str) -> None:
        self.model.set_filter(text)
        self._say_count()

    def _on_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.event_activated.emit(int(self.model.positions()[index.row()]))

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._is_following and self.table.hasFocus():
            self.event_activated.emit(int(self.model.positions()[current.row()]))

    def follow(self, position: int) -> bool:
        """Select and show the row of event ``position`` (the timeline's pick); False when
        the table does not list it."""
        row = self.model.row_of(position) if position >= 0 else -1
        self._is_following = True
        try:
            if row < 0:
                self.table.clearSelection()
                return False
            index = self.model.index(row, 0)
            self.table.setCurrentIndex(index)
            self.table.selectRow(row)
            self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
            return True
        finally:
            self._is_following = False
