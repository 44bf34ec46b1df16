"""The stats panel on its own: numeric sort, name filter, clicks, copy, export text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel

from strata.viewer.state import Scope
from strata.viewer.stats_panel import OWN_TABS, TABS, StatsPanel, columns_for
from strata.viewer.table_model import format_cell


def _frame() -> pd.DataFrame:
    names = ["alpha_kernel", "beta_kernel", "gamma_copy", "delta_kernel"]
    total = np.array([9, 100, 10, 1_234_567], dtype=np.int64)
    return pd.DataFrame(
        {
            "name": names,
            "count": [1, 2, 3, 4],
            "total_ns": total,
            "mean_ns": total / 2,
            "median_ns": total / 2,
            "min_ns": total,
            "max_ns": total,
            "std_ns": np.zeros(4),
            "time_pct": 100 * total / total.sum(),
        }
    )


@pytest.fixture
def panel(qtbot):
    widget = StatsPanel()
    qtbot.addWidget(widget)
    widget.resize(700, 600)
    widget.show()
    widget.show_table("kernels", _frame())
    return widget


def _column(panel: StatsPanel, key: str) -> list[str]:
    col = panel.model.column_of(key)
    return [panel.proxy.index(r, col).data() for r in range(panel.proxy.rowCount())]


def test_numbers_sort_as_numbers(panel):
    col = panel.model.column_of("total_ns")
    panel.table.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    assert _column(panel, "total_ns") == ["9", "10", "100", "1,234,567"]
    panel.table.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    assert _column(panel, "name")[0] == "delta_kernel"


def test_headers_carry_units(panel):
    headers = [c.header for c in panel.model.columns()]
    assert "Total Time (ns)" in headers
    assert "Med (ns)" in headers
    panel.set_kind("memcpy_bytes")
    panel.show_table("memcpy_bytes", _frame())
    assert "Total (B)" in [c.header for c in panel.model.columns()]


def test_filter_substring_and_regex(panel):
    panel.filter_edit.setText("KERNEL")
    assert sorted(_column(panel, "name")) == ["alpha_kernel", "beta_kernel", "delta_kernel"]
    panel.regex_box.setChecked(True)
    panel.filter_edit.setText(r"^(alpha|gamma)_")
    assert sorted(_column(panel, "name")) == ["alpha_kernel", "gamma_copy"]
    panel.filter_edit.setText("[unclosed")  # a bad pattern keeps the last good filter
    assert sorted(_column(panel, "name")) == ["alpha_kernel", "gamma_copy"]
    panel.regex_box.setChecked(False)
    panel.filter_edit.setText("a.k")  # substring: regex characters are literal
    assert _column(panel, "name") == []
    panel.filter_edit.setText("ta_k")
    assert sorted(_column(panel, "name")) == ["beta_kernel", "delta_kernel"]


def test_click_and_double_click_emit_the_name(panel, qtbot):
    col = panel.model.column_of("name")
    index = panel.proxy.index(1, col)
    rect = panel.table.visualRect(index)
    with qtbot.waitSignal(panel.name_activated) as blocker:
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [index.data(), "kernels", (index.data(), None)]
    with qtbot.waitSignal(panel.name_double_clicked) as blocker:
        qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [index.data(), "kernels", (index.data(), None)]


def test_steps_and_scope_signals(panel, qtbot):
    with qtbot.waitSignal(panel.instance_step) as blocker:
        qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [1]
    with qtbot.waitSignal(panel.instance_step) as blocker:
        qtbot.mouseClick(panel.prev_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [-1]
    panel.set_reports(["a.sqlite", "b.sqlite"])
    with qtbot.waitSignal(panel.scope_changed) as blocker:
        panel.set_scope(Scope("visible", 1, False))
    assert blocker.args == [Scope("visible", 1, False)]


def test_copy_and_export_give_the_rows_shown(panel, qtbot):
    panel.filter_edit.setText("kernel")
    panel.table.selectRow(0)
    panel.copy_selection()
    lines = QApplication.clipboard().text().splitlines()
    assert lines[0].split("\t")[0] == "Name"
    assert len(lines) == 2
    with qtbot.waitSignal(panel.export_requested) as blocker:
        qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    name, text = blocker.args
    assert name.endswith(".csv")
    rows = text.splitlines()[1:]
    assert sorted(r.split(",")[0] for r in rows) == ["alpha_kernel", "beta_kernel", "delta_kernel"]
    assert "1234567" in text  # raw numbers, no thousands separators


def test_outliers_tab_emits_the_record(panel, qtbot):
    frame = pd.DataFrame(
        {"name": ["k"], "kind": ["kernels"], "report": ["r"], "report_index": [0],
         "row": ["GPU 0 stream 7"], "table": ["kernels"], "index": [5], "track_id": [0],
         "start_ns": [100], "duration_ns": [50], "median_ns": [10.0], "mad_ns": [2.0],
         "robust_z": [0.6745 * 20]}
    )  # fmt: skip
    panel.set_kind("outliers")
    panel.show_outliers(frame)
    assert _column(panel, "mads") == ["20.0"]
    rect = panel.table.visualRect(panel.proxy.index(0, 0))
    with qtbot.waitSignal(panel.outlier_selected) as blocker:
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args[0]["index"] == 5


def test_format_cell():
    assert format_cell(1234567, "int") == "1,234,567"
    assert format_cell(1234.55, "dec1") == "1,234.5" or format_cell(1234.55, "dec1") == "1,234.6"
    assert format_cell(float("nan"), "int") == ""
    assert format_cell(1.3, "ratio") == "1.30×"


def test_integers_show_every_digit():
    # float() rounded totals past 2^53; exact totals past int64 are Python ints.
    assert format_cell(np.int64(2**53 + 1), "int") == "9,007,199,254,740,993"
    assert format_cell(3 * (2**62 + 7), "int") == "13,835,058,055,282,163,733"
    assert format_cell(np.float64(1234.5), "int") == "1,234"


def _docked(qtbot):
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

    window = QMainWindow()
    qtbot.addWidget(window)
    window.setCentralWidget(QWidget())
    panel = StatsPanel()
    dock = QDockWidget("Statistics", window)
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resize(1400, 900)
    window.show()
    window.resizeDocks([dock], [420], Qt.Orientation.Horizontal)
    qtbot.waitExposed(window)
    return panel, dock, window


def test_switching_tabs_keeps_the_panel_width(qtbot):
    panel, dock, _window = _docked(qtbot)
    statuses = ["1 event", "123,456,789 events · 38 reports · 1,234 ms" * 3, ""]
    widths = set()
    for i, (kind, _title) in enumerate(TABS):
        if kind in OWN_TABS:  # the summaries only
            continue
        panel.tabs.setCurrentIndex(i)
        panel.show_table(kind, _frame(), statuses[i % 3])
        QApplication.processEvents()
        widths.add(dock.width())
    assert len(widths) == 1, widths


def test_the_histogram_starts_readable(qtbot):
    panel, _dock, _window = _docked(qtbot)
    QApplication.processEvents()
    assert panel.histogram.height() >= 140


def test_the_size_tab_names_its_share_of_bytes_not_time():
    headers = [c.header for c in columns_for("memcpy_bytes", _frame(), [])]
    assert "Size (%)" in headers
    assert not any("Time" in h for h in headers)
    assert "Time (%)" in [c.header for c in columns_for("memcpy", _frame(), [])]


def test_a_2000_character_name_does_not_widen_the_dock(qtbot):
    """A long name once widened the dock until the window was 3,896 px wide."""
    panel, dock, window = _docked(qtbot)
    width, window_width = dock.width(), window.width()
    long_name = "void very_long_template_kernel<" + "x" * 2000 + ">(float*)"
    frame = _frame()
    frame.loc[0, "name"] = long_name
    panel.set_reports(["a" * 300 + ".sqlite"])
    panel.show_table("kernels", frame, "status " + long_name)
    panel.set_instance_text(f"{long_name} (3 instances)")
    panel.histogram.set_data(f"{long_name}  (3 instances)", {"a": np.array([1.0, 2.0])}, 1.5, 9.0)
    assert panel.select_name(long_name)
    QApplication.processEvents()
    assert window.width() == window_width
    assert dock.width() <= width + 1
    # The full name is one hover away, in the table and on the histogram's title.
    row = _column(panel, "name").index(long_name)
    index = panel.proxy.index(row, panel.model.column_of("name"))
    assert index.data(Qt.ItemDataRole.ToolTipRole) == long_name
    assert long_name in panel.histogram.title_text()


def test_a_cut_status_line_never_shows_part_of_a_number(qtbot) -> None:
    from strata.viewer.labels import ElidedLabel, elide_words

    status = ("78 ops · 40 iterations (all aggregated), GPU utilization 91.4 %, "
              "Tensor Core utilization 0.0 %, 1 piece of advice")  # fmt: skip
    label = ElidedLabel(status)
    qtbot.addWidget(label)
    metrics = label.fontMetrics()
    words = status.split()
    for width in range(40, metrics.horizontalAdvance(status) + 20, 7):
        shown = elide_words(status, metrics, width)
        assert metrics.horizontalAdvance(shown) <= max(width, metrics.horizontalAdvance("…"))
        if shown == status:
            continue
        # What is left reads as the status's first words, whole ('91.4', never '1.4' or '9').
        kept = shown.removesuffix("…").split()
        if len(kept) > 1:  # (a first word alone may be cut: it has nothing to fall back to)
            whole = words[: len(kept)]
            assert kept[:-1] == whole[:-1], (width, shown)
            assert kept[-1].rstrip(",;:·") == whole[-1].rstrip(",;:·"), (width, shown)
    label.resize(metrics.horizontalAdvance(status) // 2, 20)
    label.show()
    assert QLabel.text(label).endswith("…")
    assert label.toolTip() == status
