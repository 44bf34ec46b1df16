"""A read-only Qt table model over a pandas DataFrame, with units in headers and numbers that
sort as numbers.

The display role gives formatted text (thousands separators, one decimal for averages); the
sort role (:data:`SORT_ROLE`) gives the raw value, so a ``QSortFilterProxyModel`` with
``setSortRole(SORT_ROLE)`` sorts 1,000 after 999. Cells are formatted on demand (only the
visible ones are asked for), so a 100 k-row frame costs nothing up front.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

__all__ = ["SORT_ROLE", "Column", "DataFrameModel", "format_cell"]

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_ALIGN_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


@dataclass(frozen=True)
class Column:
    """One shown column: the frame column, its header (with unit) and how to format it.

    ``fmt`` is ``int`` (1,234,567), ``dec1`` (1,234.5), ``pct`` (12.3), ``ratio`` (1.31×),
    ``z`` (12.4), a signed change ``delta`` (+1,234) or ``delta_pct`` (+12.3), or ``text``.
    ``color`` (``#RRGGBB``): a swatch in the header, the colour of the report a by-report
    column belongs to ('' for none).
    """

    key: str
    header: str
    fmt: str = "int"
    tip: str = ""
    color: str = ""


def format_cell(value: object, fmt: str) -> str:
    """Return ``value`` as the panel shows it (empty for missing values)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if fmt == "text":
        return str(value)
    if fmt == "int" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"  # every digit: float() would round totals past 2^53
    number = float(value)
    if math.isinf(number):
        return ("+∞" if fmt.startswith("delta") else "∞") if number > 0 else "−∞"
    if fmt == "int":
        return f"{round(number):,}"
    if fmt == "dec1":
        return f"{number:,.1f}"
    if fmt == "pct":
        return f"{number:.1f}"
    if fmt == "ratio":
        return f"{number:.2f}×"
    if fmt == "delta":
        return f"{number:+,.0f}".replace("-", "−")
    if fmt == "delta_pct":
        return f"{number:+.1f}".replace("-", "−")
    return f"{number:,.1f}"


class DataFrameModel(QAbstractTableModel):
    """Show ``frame[column.key]`` for each of ``columns``."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._frame = pd.DataFrame()
        self._columns: list[Column] = []
        self._arrays: list[np.ndarray] = []
        self._row_colors: Sequence[str | None] | None = None
        self._shown: dict[str, Mapping[str, str]] = {}
        self._tips: dict[str, Mapping[str, str]] = {}

    def set_display_names(
        self,
        shown: Mapping[str, Mapping[str, str]],
        tips: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """Show the text of column ``key`` as ``shown[key].get(text, text)``: a kernel's base
        name for its demangled one, a report's short label for its label. The tooltip says
        ``tips[key].get(text, text)`` (the full text by default); sorting, filtering keys,
        copies and exports keep the frame's own text."""
        self.beginResetModel()
        self._shown = {k: v for k, v in shown.items() if v}
        self._tips = dict(tips or {})
        self.endResetModel()

    def display_text(self, key: str, value: object) -> str:
        """Return how a ``key`` column shows ``value`` (after :meth:`set_display_names`)."""
        mapping = self._shown.get(key)
        if mapping is not None and value is not None:
            return mapping.get(str(value), str(value))
        return "" if value is None else str(value)

    def set_frame(
        self,
        frame: pd.DataFrame,
        columns: Sequence[Column],
        row_colors: Sequence[str | None] | None = None,
    ) -> None:
        """Replace the data (columns missing from ``frame`` are left out); ``row_colors``:
        per row, the ``#RRGGBB`` of its text (None: the usual colour)."""
        self.beginResetModel()
        self._frame = frame.reset_index(drop=True)
        self._columns = [c for c in columns if c.key in frame.columns]
        self._arrays = [self._frame[c.key].to_numpy() for c in self._columns]
        fits = row_colors is not None and len(row_colors) == len(self._frame)
        self._row_colors = list(row_colors) if fits else None
        self.endResetModel()

    def frame(self) -> pd.DataFrame:
        """Return the frame shown (rows in model order)."""
        return self._frame

    def columns(self) -> list[Column]:
        return list(self._columns)

    def column_of(self, key: str) -> int:
        """Return the model column showing frame column ``key`` (-1 if not shown)."""
        return next((i for i, c in enumerate(self._columns) if c.key == key), -1)

    def rowCount(self, parent=None) -> int:  # Qt override
        return 0 if parent is not None and parent.isValid() else len(self._frame)

    def columnCount(self, parent=None) -> int:  # Qt override
        return 0 if parent is not None and parent.isValid() else len(self._columns)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        column = self._columns[index.column()]
        value = self._arrays[index.column()][index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if column.fmt == "text" and column.key in self._shown:
                return self.display_text(column.key, value)
            return format_cell(value, column.fmt)
        if role == SORT_ROLE:
            if column.fmt == "text":
                return "" if value is None else str(value)
            number = float(value) if value is not None else math.nan
            return -math.inf if math.isnan(number) else number
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _ALIGN_LEFT if column.fmt == "text" else _ALIGN_RIGHT
        if role == Qt.ItemDataRole.ToolTipRole and column.fmt == "text":
            if value is None:
                return None
            tips = self._tips.get(column.key)
            return str(value) if tips is None else tips.get(str(value), str(value))
        if role == Qt.ItemDataRole.ForegroundRole and self._row_colors is not None:
            color = self._row_colors[index.row()]
            return None if color is None else QColor(color)
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._columns):
            return None
        column = self._columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.header
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tip or column.header
        if role == Qt.ItemDataRole.DecorationRole and column.color:
            return QColor(column.color)
        return None

    def rows_as_text(self, rows: Sequence[int], sep: str = "\t") -> str:
        """Return the header and ``rows`` (model order) as delimited text, raw numbers."""
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=sep, lineterminator="\n")
        writer.writerow([c.header for c in self._columns])
        for row in rows:
            writer.writerow([_raw(self._arrays[i][row]) for i in range(len(self._columns))])
        return buffer.getvalue()


def _raw(value: object) -> object:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, np.generic):
        return value.item()
    return value
