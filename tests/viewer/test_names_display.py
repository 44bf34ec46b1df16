"""Names a user can read and tell apart: kernel names cut at the end with the full name in
the tooltip, the Kernel Names toggle, same-prefix report names told apart, the label column."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics

import strata.viewer.chrome as chrome
from strata.analysis.names import kernel_display_names
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import alignment_offsets
from strata.viewer.render import render_to_image
from strata.viewer.stats_panel import OUTLIERS_TAB, StatsPanel, columns_for
from strata.viewer.timeline import TimelineWidget
from tests.conftest import REAL_DIR, requires_shared

V3 = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
V4 = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v4.sqlite"
CLOVER = REAL_DIR / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"
FULL = "void clover::par_ranged2d_kernel<ideal_gas_kernel(int, int)::[lambda(int, int)]>(T1)"


@pytest.fixture
def panel(qtbot):
    widget = StatsPanel()
    qtbot.addWidget(widget)
    widget.resize(700, 600)
    widget.show()
    return widget


def _cell(panel: StatsPanel, key: str, row: int = 0, role=Qt.ItemDataRole.DisplayRole):
    return panel.proxy.index(row, panel.model.column_of(key)).data(role)


def test_names_elide_at_the_end_with_the_full_name_in_the_tooltip(panel):
    assert panel.table.textElideMode() == Qt.TextElideMode.ElideRight
    panel.set_name_display({FULL: "par_ranged2d_kernel"})
    panel.show_table("kernels", pd.DataFrame({"name": [FULL], "total_ns": [5]}))
    assert _cell(panel, "name") == "par_ranged2d_kernel"
    assert _cell(panel, "name", role=Qt.ItemDataRole.ToolTipRole) == FULL
    panel.set_name_display({})  # View > Kernel Names > Full
    assert _cell(panel, "name") == FULL


def test_outlier_report_column_follows_name_and_values_with_short_labels(panel):
    labels = [V3.name, V4.name]
    panel.set_reports(labels, [str(V3), str(V4)])
    frame = pd.DataFrame(
        {"name": ["k", "k"], "report": labels, "mads": [9.0, 8.0], "duration_ns": [5, 4],
         "median_ns": [1.0, 1.0], "row": ["GPU 0 stream 7"] * 2, "start_ns": [1, 2]}
    )  # fmt: skip
    keys = [c.key for c in columns_for(OUTLIERS_TAB, frame, labels)]
    assert keys.index("report") > max(keys.index(k) for k in ("name", "mads", "duration_ns"))
    panel.set_kind(OUTLIERS_TAB)
    panel.show_outliers(frame)
    shown = {_cell(panel, "report", r) for r in range(2)}
    assert len(shown) == 2  # told apart
    assert all(len(s) < len(V3.name) for s in shown)
    tips = {_cell(panel, "report", r, Qt.ItemDataRole.ToolTipRole) for r in range(2)}
    assert tips == {str(V3), str(V4)}


@requires_shared
@pytest.mark.skipif(not CLOVER.is_file(), reason=f"needs {CLOVER}")
def test_kernel_names_toggle_switches_between_base_full_and_mangled(panel, load_report, tmp_path):
    from strata.app.kernel_names import KernelNameChoice
    from strata.app.settings import Settings

    report = load_report(CLOVER)
    full = str(report.strings.lookup(report.tables["kernels"]["name_id"][:1])[0])
    choice = KernelNameChoice(Settings(tmp_path / "s.ini"))
    assert choice.variant() == "base"  # nsys's :base is the default

    def show(variant: str) -> None:
        panel.set_name_display(kernel_display_names([report], variant))

    choice.variant_changed.connect(show)
    show(choice.variant())
    panel.show_table("kernels", pd.DataFrame({"name": [full], "total_ns": [1]}))
    base = _cell(panel, "name")
    assert base != full
    assert base.split(" · ")[0] in full  # the short name is part of the demangled one
    choice.actions["mangled"].trigger()
    mangled = _cell(panel, "name")
    assert mangled not in (base, full)
    choice.actions["demangled"].trigger()
    assert _cell(panel, "name") == full
    assert Settings(tmp_path / "s.ini").kernel_names() == "demangled"  # persisted
    assert _cell(panel, "name", role=Qt.ItemDataRole.ToolTipRole) == full


@pytest.fixture
def timeline(qtbot, load_report):
    if not (V3.is_file() and V4.is_file()):
        pytest.skip(f"needs {V3} and {V4}")
    reports = [load_report(V3), load_report(V4)]
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(1000, 500)
    widget.state.set_data(reports, ReportSet(reports).tracks(), alignment_offsets(reports))
    with qtbot.waitExposed(widget):
        widget.show()
    return widget


def _report_row(widget: TimelineWidget, label: str):
    for y in range(widget.theme.ruler_height_px, widget.height(), 4):
        hit = widget.row_at(y)
        if hit is not None and hit[0].kind == "report" and hit[0].label == label:
            return hit[0], y
    raise AssertionError(f"no row for {label}")


@requires_shared
def test_same_prefix_report_rows_are_told_apart_and_cut_at_the_end(timeline, monkeypatch):
    drawn: list[tuple[str, Qt.TextElideMode]] = []

    class Spy(QFontMetrics):
        def elidedText(self, text, mode, width, flags=0):
            drawn.append((text, mode))
            return super().elidedText(text, mode, width, flags)

    monkeypatch.setattr(chrome, "QFontMetrics", Spy)
    timeline.set_label_width(140)  # narrow: the full names do not fit
    first, _y = _report_row(timeline, V3.name)
    timeline.state.set_collapsed(first.path, True)  # both report rows on screen
    render_to_image(timeline, (1000, 500))
    assert drawn
    assert {mode for _, mode in drawn if mode != Qt.TextElideMode.ElideLeft} == {
        Qt.TextElideMode.ElideRight
    }
    texts = {text for text, _ in drawn}
    assert V3.name not in texts  # the shared prefix is cut, not the part that differs
    assert any("v3" in t for t in texts)
    assert any("v4" in t for t in texts)
    row, _y = _report_row(timeline, V4.name)
    assert str(V4) in timeline.header_tip(row)


@requires_shared
def test_label_column_can_be_dragged_wider(timeline, qtbot):
    start = timeline.label_width()
    _row, y = _report_row(timeline, V3.name)
    with qtbot.waitSignal(timeline.label_width_changed) as signal:
        qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, pos=QPoint(start, y))
        qtbot.mouseMove(timeline, QPoint(start + 100, y))
        qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, pos=QPoint(start + 100, y))
    assert timeline.label_width() == start + 100
    assert signal.args == [start + 100]
    assert timeline.time_at(start + 100) == timeline.state.view_range()[0]  # the time area moved


@requires_shared
def test_event_menu_cuts_a_long_name_at_the_end(timeline, monkeypatch):
    from PySide6.QtWidgets import QMenu

    from strata.viewer.event_menu import add_event_actions
    from strata.viewer.events import EventRef

    monkeypatch.setattr(timeline, "describe", lambda _ref, _row=None: [("Name", FULL)])
    menu = QMenu(timeline)
    add_event_actions(menu, timeline, EventRef(0, "kernels", 0, "kernels", 0, "", "", 0, 1))
    select = next(a.text() for a in menu.actions() if a.text().startswith("Select All"))
    shown = select.removeprefix("Select All “").removesuffix("”")
    assert shown.endswith("…")
    assert FULL.startswith(shown.removesuffix("…"))
    menu.deleteLater()


def test_the_name_column_takes_the_room_the_other_columns_leave(qtbot, panel) -> None:
    frame = pd.DataFrame({"name": [FULL * 3, "k"], "total_ns": [5, 6], "count": [1, 2]})
    panel.show_table("kernels", frame)
    header = panel.table.horizontalHeader()
    column = panel.model.column_of("name")
    others = sum(header.sectionSize(c) for c in range(header.count()) if c != column)
    narrow = header.sectionSize(column)
    assert narrow < panel.table.fontMetrics().horizontalAdvance(FULL * 3)  # cut: too long
    panel.resize(2000, 600)
    # Wider: the name takes what the others leave (all of it here), never more than it needs.
    qtbot.waitUntil(lambda: header.sectionSize(column) > narrow)
    assert header.sectionSize(column) + others <= panel.table.viewport().width()
