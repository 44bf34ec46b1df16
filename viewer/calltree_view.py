"""The call-tree panel: CPU samples of the selection as a tree (top-down or bottom-up) and a
flame graph (top-down, drawn with QPainter).

It shows a :class:`analysis.calltree.CallTree` it is handed; what it holds (the selection's
samples) is computed elsewhere, off the GUI thread (:mod:`app.calltree_controller`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from strata.analysis.calltree import CallTree
from strata.analysis.escape import escape_text
from strata.viewer.access import name_control
from strata.viewer.style import name_argb

__all__ = ["CallTreePanel", "FlameGraph", "MAX_ITEMS", "NO_SYMBOL", "symbol_text"]

#: Most tree items the panel lists (the busiest first in preorder; the rest are summed away).
MAX_ITEMS = 20_000
#: What a frame without a symbol reads (a blank row looked like a drawing fault).
NO_SYMBOL = "(no symbol)"


def symbol_text(symbol: object) -> str:
    """Return a frame's symbol as shown: :data:`NO_SYMBOL` for an empty one."""
    text = "" if symbol is None else str(symbol)
    return text if text.strip() else NO_SYMBOL


_ROW_PX = 16


class FlameGraph(QWidget):
    """A top-down call tree as a flame graph: roots at the bottom, width = total samples."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree: CallTree | None = None
        self.setMinimumHeight(120)
        self._rects: list[tuple[QRectF, int]] = []
        self.setMouseTracking(True)

    def set_tree(self, tree: CallTree | None) -> None:
        self.tree = tree
        self.update()

    def boxes(self, width: float, height: float) -> list[tuple[QRectF, int]]:
        """Return (rectangle, node) of each node wide enough to draw (at least 1 px)."""
        tree = self.tree
        if tree is None or not len(tree) or tree.bottom_up:
            return []
        scale = width / max(int(tree.total_count[tree.level == 0].sum()), 1)
        cursor = np.zeros(len(tree) + 1, np.float64)  # next free x inside each node; -1: root
        x = np.zeros(len(tree), np.float64)
        out = []
        for node in range(len(tree)):  # preorder: a parent before its children
            parent = int(tree.parent[node])
            left = cursor[parent + 1] if parent >= 0 else cursor[0]
            x[node] = left
            w = tree.total_count[node] * scale
            if parent >= 0:
                cursor[parent + 1] += w
            else:
                cursor[0] += w
            cursor[node + 1] = left
            if w >= 1.0:
                y = height - (int(tree.level[node]) + 1) * _ROW_PX
                if y + _ROW_PX > 0:
                    out.append((QRectF(left, y, w, _ROW_PX - 1), node))
        return out

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        self._rects = self.boxes(self.width(), self.height())
        tree = self.tree
        for rect, node in self._rects:
            name = symbol_text(tree.symbols[tree.frame[node]])
            p.fillRect(rect, QColor.fromRgba(name_argb(name)))
            if rect.width() > 30:
                p.setPen(Qt.GlobalColor.black)
                text = p.fontMetrics().elidedText(
                    escape_text(name), Qt.TextElideMode.ElideRight, int(rect.width()) - 4
                )
                p.drawText(rect.adjusted(2, 0, -2, 0), Qt.AlignmentFlag.AlignVCenter, text)
        p.end()

    def node_at(self, x: float, y: float) -> int | None:
        """Return the node drawn at ``(x, y)`` (px), or None."""
        for rect, node in self._rects or self.boxes(self.width(), self.height()):
            if rect.contains(x, y):
                return node
        return None

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt's name
        node = self.node_at(event.position().x(), event.position().y())
        tree = self.tree
        if node is None or tree is None:
            self.setToolTip("")
            return
        share = 100.0 * tree.total_count[node] / max(tree.samples, 1)
        self.setToolTip(
            f"{escape_text(symbol_text(tree.symbols[tree.frame[node]]))}\n"
            f"{escape_text(str(tree.modules[tree.frame[node]]))}\n"
            f"total {int(tree.total_count[node]):,} ({share:.1f}%), "
            f"self {int(tree.self_count[node]):,}"
        )


class CallTreePanel(QWidget):
    """Tree view and flame graph of the selection's CPU samples.

    Signals
    -------
    mode_changed(bool)
        The user chose top-down (False) or bottom-up (True).
    """

    mode_changed = Signal(bool)
    report_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = name_control(QComboBox(self), "Call tree direction")
        self.mode.setToolTip("Top-down: callers first; bottom-up: the functions samples end in")
        self.mode.addItems(["Top-down", "Bottom-up"])
        # Which report's samples: four programs' stacks merged into one tree read as one
        # program that calls all their functions.
        self.report_combo = name_control(QComboBox(self), "Call tree report")
        self.report_combo.setToolTip("Whose CPU samples the tree holds")
        self.report_combo.addItem("All reports", None)
        self.report_combo.setVisible(False)
        self.status = QLabel("No CPU samples", self)
        self.tree_view = name_control(
            QTreeWidget(self),
            "Call tree",
            "CPU samples by call stack: self and total time per function",
        )
        self.tree_view.setHeaderLabels(["Function", "Self", "Total", "Total %", "Module"])
        self.tree_view.setUniformRowHeights(True)
        self.flame = name_control(
            FlameGraph(self),
            "Flame graph",
            "The call tree drawn as stacked boxes, wider for more samples",
        )
        top = QHBoxLayout()
        top.addWidget(self.mode)
        top.addWidget(self.report_combo)
        top.addWidget(self.status, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.tree_view)
        split.addWidget(self.flame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        self.mode.currentIndexChanged.connect(lambda i: self.mode_changed.emit(i == 1))
        self.report_combo.currentIndexChanged.connect(
            lambda _i: self.report_changed.emit(self.report_index())
        )
        header = self.tree_view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the names get the room
        header.setMinimumSectionSize(48)
        self.tree_view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree: CallTree | None = None

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._fit_indentation()

    def _fit_indentation(self) -> None:
        """Step each level so that the deepest listed frame keeps half the Function column:
        call chains run 20-30 frames deep, and the style's 20 px steps left the deepest
        functions no room at all in a docked panel (a step of 4 px at the least)."""
        levels = self.tree.level[:MAX_ITEMS] if self.tree is not None else np.zeros(0)
        depth = (int(levels.max()) if len(levels) else 0) + 1
        column = self.tree_view.header().sectionSize(0)
        usual = self.tree_view.fontMetrics().averageCharWidth() * 2 + 4
        step = max(4, min(usual, column // (2 * depth)))
        if step != self.tree_view.indentation():
            self.tree_view.setIndentation(step)

    def set_reports(self, labels: list[str], paths: list[str] | None = None) -> None:
        """Offer ``labels`` (one per shown report) beside "All reports"; keep the choice when
        that report is still shown. Hidden for one report."""
        chosen = self.report_index()
        self.report_combo.blockSignals(True)
        self.report_combo.clear()
        self.report_combo.addItem("All reports", None)
        for i, label in enumerate(labels):
            self.report_combo.addItem(label, i)
            if paths is not None and i < len(paths):
                self.report_combo.setItemData(i + 1, paths[i], Qt.ItemDataRole.ToolTipRole)
        if chosen is not None and chosen < len(labels):
            self.report_combo.setCurrentIndex(chosen + 1)
        self.report_combo.blockSignals(False)
        self.report_combo.setVisible(len(labels) > 1)

    def report_index(self) -> int | None:
        """The chosen report's index among those shown, or None for all of them."""
        return self.report_combo.currentData()

    def is_bottom_up(self) -> bool:
        return self.mode.currentIndex() == 1

    def show_tree(self, tree: CallTree | None, flame: CallTree | None, status: str) -> None:
        """List ``tree`` (the chosen mode's), draw ``flame`` (top-down), say ``status``."""
        self.tree = tree
        self.status.setText(status)
        self.tree_view.clear()
        self.flame.set_tree(flame)
        if tree is None or not len(tree):
            return
        items: list[QTreeWidgetItem] = []
        total = max(tree.samples, 1)
        for node in range(min(len(tree), MAX_ITEMS)):
            parent = int(tree.parent[node])
            frame = tree.frame[node]
            texts = [
                escape_text(symbol_text(tree.symbols[frame])),
                f"{int(tree.self_count[node]):,}",
                f"{int(tree.total_count[node]):,}",
                f"{100.0 * tree.total_count[node] / total:.1f}",
                escape_text(str(tree.modules[frame])),
            ]
            item = QTreeWidgetItem(texts)
            item.setToolTip(0, texts[0])
            item.setToolTip(4, texts[4])
            for column in (1, 2, 3):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
            if parent >= 0:
                items[parent].addChild(item)
            items.append(item)
        roots = [items[n] for n in range(len(items)) if tree.parent[n] < 0]
        self.tree_view.addTopLevelItems(roots)
        self._fit_indentation()
        for item in roots[:3]:
            item.setExpanded(True)
        for column in (1, 2, 3, 4):
            self.tree_view.resizeColumnToContents(column)
        module = self.tree_view.header()
        module.resizeSection(4, min(module.sectionSize(4), 140))  # a long path: cut, tooltip
