"""What screen readers and large fonts need from a control: a name, a description, room.

Qt reads a button's or a label's text aloud, but a combo box says only its current item, a
filter field nothing (a placeholder is not a name), a table nothing: each such control gets
an accessible name that says what it is, and a description where the name is not enough
(Qt falls back to the tooltip).
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableView, QWidget

from strata.analysis.timefmt import format_duration_ns, format_range_ns, pluralize

__all__ = ["compact_row_px", "describe_timeline", "fit_rows", "name_control"]

_W = TypeVar("_W", bound=QWidget)


def name_control(widget: _W, name: str, description: str = "") -> _W:
    """Give ``widget`` the accessible ``name`` (and ``description``); return it."""
    widget.setAccessibleName(name)
    if description:
        widget.setAccessibleDescription(description)
    return widget


def compact_row_px(widget: QWidget, least_px: int = 20) -> int:
    """Return a compact table row's height for ``widget``'s font: ``least_px`` at the usual
    font size, taller for a larger one (a fixed 20 px cut a large font's text)."""
    return max(least_px, widget.fontMetrics().height() + 6)


def fit_rows(view: QTableView, least_px: int = 20) -> None:
    """Make ``view``'s rows compact and as tall as its font needs (see :func:`compact_row_px`),
    now and whenever its font changes (the user's font size)."""
    view.verticalHeader().setDefaultSectionSize(compact_row_px(view, least_px))
    view.installEventFilter(_RowFitter(least_px, view))


class _RowFitter(QObject):
    """Re-fits a table's rows to its font when the font changes."""

    def __init__(self, least_px: int, parent: QTableView) -> None:
        super().__init__(parent)
        self._least_px = least_px

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's own name
        if event.type() == QEvent.Type.FontChange and isinstance(watched, QTableView):
            watched.verticalHeader().setDefaultSectionSize(compact_row_px(watched, self._least_px))
        return False


def describe_timeline(
    report_count: int,
    row_count: int,
    view_ns: tuple[int, int],
    selection_ns: tuple[int, int] | None = None,
    selected_event: str = "",
) -> str:
    """Return what the painted timeline shows, for its accessible description: the reports,
    the rows, the view, the time selection, the selected event and the keys that move it."""
    if not report_count:
        return "No reports open"
    parts = [
        f"{pluralize(report_count, 'report')} on one time axis, {pluralize(row_count, 'row')}",
        f"view {format_range_ns(*view_ns)}",
    ]
    if selection_ns is not None:
        parts.append(
            f"time range selected: {format_duration_ns(selection_ns[1] - selection_ns[0])}"
        )
    if selected_event:
        parts.append(f"selected event: {selected_event}")
    parts.append("W and S zoom, A and D pan, arrow keys scroll the rows, F fits")
    return "; ".join(parts)
