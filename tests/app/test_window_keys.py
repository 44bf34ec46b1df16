"""The timeline's keys work wherever the focus is in the window, except in a text field;
F fits where the activity is, then everything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.app.conftest import LOAD_TIMEOUT_MS, small_real, wait_idle
from tests.conftest import requires_shared
from tests.helpers import mutate_sqlite


@pytest.fixture
def early_marker(tmp_path: Path) -> Path:
    """A small real report whose NVTX domain is created at time 0, its work ~146 ms later."""
    path = tmp_path / "early-domain.sqlite"
    shutil.copyfile(small_real(0), path)
    mutate_sqlite(path, "UPDATE NVTX_EVENTS SET start = 0 WHERE eventType = 75")
    return path


@pytest.fixture
def window(qtbot, make_window, early_marker):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    window.stats_controller = install_stats_panel(window.context)
    window.open_paths([early_marker])
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.binding.shown_reports()), timeout=LOAD_TIMEOUT_MS)
    window.activateWindow()
    qtbot.waitActive(window)
    return window


def _focus(qtbot, widget) -> None:
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=5000)


@requires_shared
def test_f_fits_the_activity_first_and_everything_on_a_second_press(qtbot, window) -> None:
    timeline = window.timeline
    lo, hi = timeline.state.full_range()
    a_lo, a_hi = timeline.state.activity_range()
    assert lo == 0
    assert a_lo > 100_000_000
    assert timeline.state.view_range()[0] > 100_000_000  # opening shows the activity
    timeline.state.set_view_range(a_lo + 1000, a_lo + 2000)
    _focus(qtbot, timeline)
    qtbot.keyClick(timeline, Qt.Key.Key_F)
    t0, t1 = timeline.state.view_range()
    assert a_lo - (a_hi - a_lo) // 20 < t0 < a_lo
    assert t1 > a_hi
    qtbot.keyClick(timeline, Qt.Key.Key_F)
    assert timeline.state.view_range()[0] < 0  # every event, the marker at 0 too
    qtbot.keyClick(timeline, Qt.Key.Key_F)
    assert timeline.state.view_range() == (t0, t1)


@requires_shared
def test_timeline_keys_work_while_the_stats_table_has_the_focus(qtbot, window) -> None:
    timeline, table = window.timeline, window.stats_controller.panel.table
    _focus(qtbot, table)
    fitted = timeline.state.view_range()
    qtbot.keyClick(table, Qt.Key.Key_W)
    zoomed = timeline.state.view_range()
    assert zoomed[1] - zoomed[0] < fitted[1] - fitted[0]
    qtbot.keyClick(table, Qt.Key.Key_D)
    assert timeline.state.view_range()[0] > zoomed[0]
    timeline.state.select(fitted[0] + 10_000, fitted[0] + 20_000)
    qtbot.keyClick(table, Qt.Key.Key_Z)
    assert timeline.state.view_range() == (fitted[0] + 10_000, fitted[0] + 20_000)
    qtbot.keyClick(table, Qt.Key.Key_Escape)
    assert timeline.state.time_selection() is None
    qtbot.keyClick(table, Qt.Key.Key_F)
    assert timeline.state.view_range() == fitted
    assert table.hasFocus()  # the keys did not move the focus


@requires_shared
def test_letters_typed_in_the_filter_field_stay_text(qtbot, window) -> None:
    timeline, edit = window.timeline, window.stats_controller.panel.filter_edit
    timeline.state.set_view_range(
        timeline.state.view_range()[0], timeline.state.view_range()[1] - 1000
    )
    timeline.state.select(timeline.state.view_range()[0], timeline.state.view_range()[0] + 5000)
    before = timeline.state.view_range()
    _focus(qtbot, edit)
    qtbot.keyClicks(edit, "fwasdz")
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert edit.text() == "fwasdz"
    assert timeline.state.view_range() == before
    assert timeline.state.time_selection() is not None  # Esc was the field's
