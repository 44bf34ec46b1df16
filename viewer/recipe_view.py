"""A recipe's output shown as tables: one tab per table, the summary text, the plots.

The widget reads nothing: :mod:`app.recipe_window` loads the folder that ``main.py recipe
NAME --output DIR`` wrote (tables with :func:`analysis.recipes.load_output`, the summary
text, the PNG plots as ``QImage``) on a worker and hands a :class:`RecipeOutputContent` to
:meth:`RecipeOutputWidget.set_content`. Tables reuse :class:`~viewer.table_model.DataFrameModel`
behind a sorting, filtering proxy, as the stats panel does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QGuiApplication, QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.timefmt import pluralize
from strata.viewer.access import fit_rows, name_control
from strata.viewer.table_model import SORT_ROLE, Column, DataFrameModel

__all__ = [
    "PLOTS_TAB",
    "SUMMARY_TAB",
    "RecipeOutputContent",
    "RecipeOutputWidget",
    "columns_of",
]

SUMMARY_TAB = "Summary"
PLOTS_TAB = "Plots"
#: Most decimals a float column is shown with (the raw value is copied and sorted on).
_MAX_DECIMALS = 6
_WIDEST_COLUMN_PX = 420


@dataclass(frozen=True)
class RecipeOutputContent:
    """Everything one recipe output folder shows, already read by ``app``.

    Attributes
    ----------
    recipe
        The recipe's name (``RecipeName`` of the manifest).
    folder
        The output folder, as text for the title.
    input_count
        How many reports went in.
    mode
        ``serial``, ``processes`` or ``dask`` (empty when the manifest does not say).
    tables
        Table name -> frame, in the manifest's order.
    summary
        The text of ``summary.txt``.
    plots
        Plot name -> image, in the manifest's order.
    problems
        One line per part of the folder that could not be read (a missing plot file).
    """

    recipe: str
    folder: str
    input_count: int
    mode: str = ""
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    summary: str = ""
    plots: Mapping[str, QImage] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def title(self) -> str:
        """Return the one-line heading: recipe, how many reports, mode."""
        parts = [self.recipe, pluralize(self.input_count, "report")]
        if self.mode:
            parts.append(f"mode {self.mode}")
        return " · ".join(parts)


def columns_of(frame: pd.DataFrame) -> list[Column]:
    """Return a :class:`Column` per frame column, formatted by its dtype.

    Integers show with thousands separators; floats with as many decimals as their values
    carry (at most six, ``fixedN``), so a spread of 1.31 is not shown as 1.3; anything else
    is text.
    """
    columns = []
    for key in frame.columns:
        values = frame[key]
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            fmt = "text"
        elif pd.api.types.is_integer_dtype(values):
            fmt = "int"
        else:
            fmt = f"fixed{_decimals(values.to_numpy(np.float64))}"
        columns.append(Column(str(key), str(key), fmt))
    return columns


def _decimals(values: np.ndarray) -> int:
    finite = values[np.isfinite(values)]
    for decimals in range(_MAX_DECIMALS):
        if np.allclose(np.round(finite, decimals), finite, rtol=0, atol=0.5 * 10.0**-_MAX_DECIMALS):
            return decimals
    return _MAX_DECIMALS


class _RecipeTableModel(DataFrameModel):
    """The table model, plus the ``fixedN`` format: N decimals with thousands separators."""

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and index.isValid():
            fmt = self.columns()[index.column()].fmt
            if fmt.startswith("fixed"):
                value = float(self.frame().iat[index.row(), index.column()])
                if math.isnan(value):
                    return ""
                if math.isinf(value):
                    return "∞" if value > 0 else "−∞"
                return f"{value:,.{int(fmt[5:])}f}"
        return super().data(index, role)


class _TablePage(QWidget):
    """One table: a filter field (any column, substring), the row count, a sortable view."""

    def __init__(self, frame: pd.DataFrame, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = _RecipeTableModel(self)
        self.model.set_frame(frame, columns_of(frame))
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)  # every column
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter rows (substring of any column)")
        self.filter_edit.setClearButtonEnabled(True)
        name_control(self.filter_edit, "Filter rows")
        self.count_label = name_control(QLabel(self), "Rows shown")
        self.view = name_control(QTableView(self), "Recipe table")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.proxy.sort(-1)  # the recipe's own row order until a header is clicked
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.verticalHeader().setVisible(False)
        fit_rows(self.view)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._fit_columns()
        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self.filter_edit.textChanged.connect(self._apply_filter)
        copy = QShortcut(QKeySequence(QKeySequence.StandardKey.Copy), self.view)
        copy.setContext(Qt.ShortcutContext.WidgetShortcut)
        copy.activated.connect(self.copy_selection)
        self._update_count()

    def _fit_columns(self) -> None:
        # Sized on the first rows only: resizeColumnsToContents asks every row of a big table.
        header = self.view.horizontalHeader()
        header.setResizeContentsPrecision(200)
        self.view.resizeColumnsToContents()
        for column in range(self.model.columnCount()):
            header.resizeSection(column, min(header.sectionSize(column), _WIDEST_COLUMN_PX))

    def _apply_filter(self, text: str) -> None:
        self.proxy.setFilterRegularExpression(
            QRegularExpression(
                QRegularExpression.escape(text),
                QRegularExpression.PatternOption.CaseInsensitiveOption,
            )
        )
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(
            pluralize(total, "row") if shown == total else f"{shown:,} of {total:,}"
        )

    def rows_text(self, selected_only: bool = False) -> str:
        """Return the shown rows (after filter and sort; or the selected ones), tab-separated."""
        if selected_only:
            proxy_rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        else:
            proxy_rows = list(range(self.proxy.rowCount()))
        rows = [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in proxy_rows]
        return self.model.rows_as_text(rows, "\t")

    def copy_selection(self) -> None:
        """Copy the selected rows (every shown row when none is selected) to the clipboard."""
        selected = bool(self.view.selectionModel().selectedRows())
        QGuiApplication.clipboard().setText(self.rows_text(selected))


class _PlotsPage(QScrollArea):
    """The plots one under another, each scaled down to the page's width (never up)."""

    def __init__(self, plots: Mapping[str, QImage], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        self.labels: list[QLabel] = []
        self._pixmaps: list[QPixmap] = []
        for name, image in plots.items():
            caption = QLabel(f"<b>{name}</b>", body)
            label = QLabel(body)
            label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            label.setToolTip(name)
            name_control(label, f"Plot: {name}")
            self._pixmaps.append(QPixmap.fromImage(image))
            self.labels.append(label)
            layout.addWidget(caption)
            layout.addWidget(label)
        layout.addStretch(1)
        self.setWidget(body)
        self._scale()

    def resizeEvent(self, event) -> None:  # Qt's own name
        super().resizeEvent(event)
        self._scale()

    def _scale(self) -> None:
        # In device pixels: at 200 % a plot scaled to the logical width was stretched 2x.
        ratio = self.devicePixelRatioF()
        width_px = round(max(self.viewport().width() - 24, 100) * ratio)
        for label, pixmap in zip(self.labels, self._pixmaps, strict=True):
            if pixmap.width() > width_px:
                scaled = pixmap.scaledToWidth(width_px, Qt.TransformationMode.SmoothTransformation)
                scaled.setDevicePixelRatio(ratio)
                label.setPixmap(scaled)
            else:
                label.setPixmap(pixmap)


class RecipeOutputWidget(QWidget):
    """A recipe output folder as tabs: one per table, the summary text, the plots."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recipeOutput")
        self.title_label = QLabel(self)
        self.title_label.setObjectName("recipeTitle")
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problems_label = QLabel(self)
        self.problems_label.setWordWrap(True)
        self.problems_label.setStyleSheet("color: #f2b8b5")
        self.tabs = name_control(
            QTabWidget(self), "Recipe output", "The recipe's tables, its summary and its plots"
        )
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(True)
        self._pages: dict[str, _TablePage] = {}
        self.summary_edit: QPlainTextEdit | None = None
        self.plots_page: _PlotsPage | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title_label)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.tabs, 1)
        self.set_content(RecipeOutputContent("", "", 0))

    def set_content(self, content: RecipeOutputContent) -> None:
        """Show ``content`` (replaces whatever was shown)."""
        old = [self.tabs.widget(i) for i in range(self.tabs.count())]
        self.tabs.clear()
        for page in old:
            page.deleteLater()
        self._pages = {}
        self.title_label.setText(f"<b>{content.title()}</b>" if content.recipe else "")
        self.title_label.setToolTip(content.folder)
        self.problems_label.setText("\n".join(content.problems))
        self.problems_label.setVisible(bool(content.problems))
        for name, frame in content.tables.items():
            page = _TablePage(frame, self.tabs)
            self._pages[name] = page
            self.tabs.addTab(page, name)
            self.tabs.setTabToolTip(
                self.tabs.count() - 1, f"{name}: {pluralize(len(frame), 'row')}"
            )
        self.summary_edit = QPlainTextEdit(content.summary, self.tabs)
        self.summary_edit.setReadOnly(True)
        self.summary_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.summary_edit.setStyleSheet("font-family: monospace")
        name_control(self.summary_edit, "Recipe summary")
        self.tabs.addTab(self.summary_edit, SUMMARY_TAB)
        self.plots_page = _PlotsPage(content.plots, self.tabs)
        self.tabs.addTab(self.plots_page, PLOTS_TAB)
        self.tabs.setTabEnabled(self.tabs.count() - 1, bool(content.plots))

    def table_names(self) -> list[str]:
        """Return the names of the table tabs, in tab order."""
        return list(self._pages)

    def table_view(self, name: str) -> QTableView:
        """Return the view of table ``name``."""
        return self._pages[name].view

    def table_model(self, name: str) -> DataFrameModel:
        """Return the (unfiltered, unsorted) model of table ``name``."""
        return self._pages[name].model

    def set_filter(self, name: str, text: str) -> None:
        """Type ``text`` into the filter field of table ``name``."""
        self._pages[name].filter_edit.setText(text)

    def copy_table(self, name: str) -> None:
        """Copy the selected (or every shown) row of table ``name``, as Ctrl+C does."""
        self._pages[name].copy_selection()

    def summary_text(self) -> str:
        return self.summary_edit.toPlainText() if self.summary_edit is not None else ""

    def plot_pixmaps(self) -> list[QPixmap]:
        """Return the pixmaps shown in the Plots tab, as scaled for the current width."""
        if self.plots_page is None:
            return []
        return [label.pixmap() for label in self.plots_page.labels]
