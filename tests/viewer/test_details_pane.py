"""The Event Details pane: every field in view at once, a long name wrapped then cut."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from strata.viewer.details_pane import FIELD_SHARE, MAX_NAME_LINES, EventDetailsPane, wrap_lines

#: A CloverLeaf kernel's demangled name and the other fields of a kernel, as describe_event
#: lists them (the values' lengths matter here, not their truth).
NAME = ("void clover::par_ranged2d_kernel<advec_mom_kernel(int, int, clover::Buffer2D<double> &,"
        " clover::Buffer2D<double> &, clover::Buffer2D<double> &, int, int)::[lambda(int, int)"
        " (instance 16)]>(clover::Range2d, T1)")  # fmt: skip
LINES = [("Name", NAME), ("Start", "0.536585 s"), ("Duration", "3.52 µs"),
         ("Row", "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite · GPU 0 · Stream 7"),
         ("Stream", "7 (device 0)"), ("Grid", "16×1×1"), ("Block", "256×1×1"),
         ("Registers/thread", "16"), ("Shared memory", "0 B static, 0 B dynamic"),
         ("Local memory", "0 B/thread, 127,401,984 B total"), ("Launch type", "Regular"),
         ("Correlation ID", "462"), ("Launched by", "cudaLaunchKernel at 0.536579 s"),
         ("Launch thread", "cuda-cloverleaf (tid 1701896)")]  # fmt: skip


@pytest.fixture
def pane(qtbot):
    widget = EventDetailsPane()
    qtbot.addWidget(widget)
    widget.resize(300, 420)
    widget.show()
    widget.show_lines(LINES)
    return widget


def _row_bottoms(pane: EventDetailsPane) -> list[int]:
    table = pane.table
    return [table.rowViewportPosition(r) + table.rowHeight(r) for r in range(table.rowCount())]


def test_every_field_is_in_view_at_once_in_a_narrow_pane(qtbot, pane) -> None:
    table = pane.table
    qtbot.waitUntil(lambda: max(_row_bottoms(pane)) <= table.viewport().height())
    line = QFontMetrics(table.font()).lineSpacing()
    # The name wraps (it is read in full on hover), on a few lines: not ten.
    assert line * 2 <= table.rowHeight(0) <= line * MAX_NAME_LINES + 12
    assert table.item(0, 1).toolTip() == NAME
    assert all(table.rowHeight(r) < 2 * line for r in range(1, table.rowCount()))


def test_the_rows_follow_the_panes_width(qtbot, pane) -> None:
    table = pane.table
    qtbot.waitUntil(lambda: table.rowHeight(0) > 2 * QFontMetrics(table.font()).lineSpacing())
    narrow = table.rowHeight(0)
    pane.resize(2400, 420)
    qtbot.waitUntil(lambda: table.rowHeight(0) < narrow)  # a wide pane: the name on one line
    pane.resize(300, 420)
    qtbot.waitUntil(lambda: table.rowHeight(0) == narrow)


def test_wrap_lines_cuts_the_last_line_at_its_end() -> None:
    font = QFont()
    metrics = QFontMetrics(font)
    width = metrics.horizontalAdvance("x" * 30)
    lines = wrap_lines(NAME, font, width, 3)
    assert len(lines) == 3
    assert lines[-1].endswith("…")
    assert "".join(lines[:2]) == NAME[: len("".join(lines[:2]))]  # the start, in order
    assert all(metrics.horizontalAdvance(t) <= width for t in lines)
    assert wrap_lines("short", font, width, 3) == ["short"]
    assert wrap_lines(NAME, font, 10**5, 1) == [NAME]


def test_in_a_narrow_pane_the_values_keep_most_of_the_width(qtbot, pane) -> None:
    table = pane.table
    pane.resize(200, 420)
    # The field names are cut (whole in their tooltips), not the values to a few characters.
    qtbot.waitUntil(lambda: table.columnWidth(0) <= table.viewport().width() * FIELD_SHARE)
    assert table.columnWidth(1) > table.columnWidth(0)
    assert table.item(7, 0).toolTip() == "Registers/thread"
    pane.resize(900, 420)  # wide: every field name whole
    metrics = QFontMetrics(table.item(7, 0).font())
    qtbot.waitUntil(lambda: table.columnWidth(0) > metrics.horizontalAdvance("Registers/thread"))
