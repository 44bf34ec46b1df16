"""Area selection: Ctrl+Shift-drag takes the rows the drag crosses and the time it spans."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from strata.analysis.area import area_track_ids
from strata.analysis.selection import Selection, aggregate
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle

JOB_TIMEOUT_MS = 60_000
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def demo(qtbot, make_window, demo_reports):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.outliers_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(demo_reports[:2])
    wait_idle(qtbot, window)
    return window, controller


def _drag(qtbot, timeline, start: QPoint, end: QPoint, modifiers) -> None:
    qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, modifiers, start)
    for f in (0.25, 0.5, 1.0):
        pos = start + (end - start) * f
        qtbot.mouseMove(timeline, pos)
    qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, modifiers, end)


def _stream_rows(window) -> list[tuple[str, int, int]]:
    """(key, top y, height) of the GPU stream rows on screen."""
    timeline = window.timeline
    keys = [t.key for t in window.binding.tracks() if t.kind == "gpu_stream"]
    assert keys
    assert timeline.scroll_to_track(keys[0])
    return [(k, *timeline.row_rect(k)) for k in keys if timeline.row_rect(k) is not None]


def test_an_area_drag_selects_rows_and_time_and_the_panel_counts_them(qtbot, demo) -> None:
    window, controller = demo
    timeline = window.timeline
    rows = _stream_rows(window)
    assert len(rows) >= 2
    (_k0, y0, h0), (_k1, y1, h1) = rows[0], rows[1]
    x0 = timeline.theme.header_width_px + timeline.width() // 5
    x1 = timeline.width() * 3 // 5
    with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
        _drag(qtbot, timeline, QPoint(x0, y0 + h0 // 2), QPoint(x1, y1 + h1 // 2), CTRL_SHIFT)
    selection = timeline.state.selection()
    assert set(selection.rows) == {rows[0][0], rows[1][0]}
    assert controller.panel.scope().range_mode == "selection"
    qtbot.waitUntil(lambda: not window.runner.active_jobs(), timeout=JOB_TIMEOUT_MS)

    tracks = [t for t in window.binding.tracks() if t.key in selection.rows]
    reports, offsets = window.binding.shown_reports(), window.binding.offsets_ns()
    expected_counts: dict[str, int] = {}
    for i, report in enumerate(reports):
        sel = Selection(selection.t0_ns - offsets[i], selection.t1_ns - offsets[i],
                        track_ids=area_track_ids(tracks, i))  # fmt: skip
        frame = aggregate(report, "kernels", sel)
        for name, count in zip(frame["name"], frame["count"], strict=True):
            expected_counts[name] = expected_counts.get(name, 0) + int(count)
    ours = controller.panel.current_frame()
    assert dict(zip(ours["name"], ours["count"].astype(int), strict=True)) == expected_counts
    everything = sum(int(c) for c in expected_counts.values())
    assert 0 < everything < sum(len(r.kernels) for r in reports)


def test_a_shift_drag_still_selects_time_over_every_row(qtbot, demo) -> None:
    window, _controller = demo
    timeline = window.timeline
    (_k0, y0, h0), (_k1, y1, h1) = _stream_rows(window)[:2]
    x0 = timeline.theme.header_width_px + 50
    _drag(qtbot, timeline, QPoint(x0, y0 + 2), QPoint(x0 + 200, y1 + 2),
          Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    selection = timeline.state.selection()
    assert selection.rows == ()
    assert selection.t1_ns > selection.t0_ns


def test_crossing_a_group_header_takes_every_row_under_it(qtbot, demo) -> None:
    window, _controller = demo
    timeline = window.timeline
    # Thread rows (thread state, samples) fill the first screen: bring the GPU rows in.
    gpu = next(t.key for t in window.binding.tracks() if t.kind == "gpu_all")
    assert timeline.scroll_to_track(gpu)
    group_y = None
    for row, y, _pinned in timeline._frame().placed_rows():
        if row.kind == "group" and row.track is None and "CUDA HW" in row.path:
            group_y, path = y, tuple(row.path)
            break
    assert group_y is not None
    keys = timeline.track_keys_between(group_y + 1, group_y + 2)
    under = [t.key for t in window.binding.tracks() if t.group[: len(path)] == path]
    assert keys == under
    assert np.all([k in under for k in keys])
