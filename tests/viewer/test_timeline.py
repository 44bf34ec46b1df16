"""The timeline widget offscreen: rows, pins, keys, pixels, and a paint soak test."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import alignment_offsets
from strata.viewer.render import render_to_image
from strata.viewer.style import name_argb
from strata.viewer.timeline import TimelineWidget
from tests.conftest import REAL_DIR, real_reports, requires_shared
from tests.helpers import sql_rows

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
SERIAL = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_serial.sqlite"

pytestmark = requires_shared


@pytest.fixture
def make_timeline(qtbot, load_report):
    def _make(*paths, size=(1200, 700)):
        reports = [load_report(p) for p in paths]
        widget = TimelineWidget()
        qtbot.addWidget(widget)
        widget.resize(*size)
        widget.state.set_data(reports, ReportSet(reports).tracks(), alignment_offsets(reports))
        with qtbot.waitExposed(widget):
            widget.show()
        return widget

    return _make


def test_row_tree_has_streams_levels_and_cores(make_timeline) -> None:
    widget = make_timeline(CONCURRENT, SERIAL)
    tracks = widget.state.tracks()
    kinds = {t.kind for t in tracks}
    assert {"cpu", "cuda_api", "nvtx", "osrt", "samples", "gpu_all", "gpu_stream"} <= kinds
    streams = sql_rows(CONCURRENT, "SELECT DISTINCT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL")
    labels = {t.label for t in tracks if t.kind == "gpu_stream" and t.report_index == 0}
    assert {f"Stream {s}" for (s,) in streams} <= labels
    assert max(t.level for t in tracks if t.kind == "nvtx") >= 1


def test_pinned_row_stays_visible_after_scrolling(make_timeline, qtbot) -> None:
    widget = make_timeline(CONCURRENT, SERIAL, size=(1000, 400))
    last_stream = [t for t in widget.state.tracks() if t.kind == "gpu_stream"][-1]
    first_core = next(t for t in widget.state.tracks() if t.kind == "cpu")
    with qtbot.waitSignal(widget.pins_changed):
        widget.state.pin(last_stream.key)
    assert widget.state.pinned_keys() == [last_stream.key]
    widget.scroll_rows(10_000)
    assert widget.scroll_offset() > 0
    assert last_stream.key in widget.visible_track_keys()
    assert widget.row_rect(last_stream.key)[0] < widget.height() // 2
    widget.scroll_rows(-10_000)
    widget.state.unpin(last_stream.key)
    assert widget.state.pinned_keys() == []
    assert first_core.key not in widget.state.pinned_keys()


def test_pin_by_name_pins_that_stream_of_every_report(make_timeline) -> None:
    widget = make_timeline(CONCURRENT, REAL_DIR / "extra-p__extrap__concurrent.s2__profile2.sqlite")
    assert widget.state.pin_matching("Stream 14") == 2
    pinned = widget.state.pinned_keys()
    assert all(k.endswith("/stream14") for k in pinned)
    assert {k.split("/")[0] for k in pinned} == {
        "extra-p__extrap__concurrent.s1__profile1.sqlite",
        "extra-p__extrap__concurrent.s2__profile2.sqlite",
    }
    assert widget.state.pin_matching("Stream 14") == 0


def test_hide_and_collapse_remove_rows(make_timeline) -> None:
    widget = make_timeline(SERIAL)
    core = next(t for t in widget.state.tracks() if t.kind == "cpu")
    assert widget.row_rect(core.key) is not None
    widget.state.set_hidden_keys([core.key])
    assert widget.row_rect(core.key) is None
    widget.state.set_hidden_keys([])
    widget.state.set_collapsed(core.group, True)
    assert widget.row_rect(core.key) is None
    widget.state.set_collapsed(core.group, False)
    assert widget.row_rect(core.key) is not None


def test_keys_zoom_pan_fit_and_select(make_timeline, qtbot) -> None:
    widget = make_timeline(SERIAL)
    t0, t1 = widget.state.view_range()
    qtbot.keyClick(widget, Qt.Key.Key_W)
    z0, z1 = widget.state.view_range()
    assert z1 - z0 < t1 - t0
    qtbot.keyClick(widget, Qt.Key.Key_D)
    d0, d1 = widget.state.view_range()
    assert d0 > z0
    assert d1 - d0 == z1 - z0
    qtbot.keyClick(widget, Qt.Key.Key_A)
    assert widget.state.view_range()[0] < d0
    qtbot.keyClick(widget, Qt.Key.Key_S)
    assert widget.state.view_range()[1] - widget.state.view_range()[0] > z1 - z0
    qtbot.keyClick(widget, Qt.Key.Key_F)
    assert widget.state.view_range() == (t0, t1)
    x0, x1 = widget.theme.header_width_px + 100, widget.theme.header_width_px + 300
    with qtbot.waitSignal(widget.selection_changed):
        qtbot.mousePress(
            widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, QPoint(x0, 200)
        )
        qtbot.mouseMove(widget, QPoint(x1, 200))
        qtbot.mouseRelease(
            widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, QPoint(x1, 200)
        )
    selection = widget.state.time_selection()
    assert selection is not None
    assert selection[0] < selection[1]
    qtbot.keyClick(widget, Qt.Key.Key_Z)
    assert widget.state.view_range() == selection
    qtbot.keyClick(widget, Qt.Key.Key_Escape)
    assert widget.state.time_selection() is None


def _longest_kernel(path):
    return sql_rows(
        path,
        "SELECT start, end, coalesce(s.value, d.value), streamId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.shortName "
        "LEFT JOIN StringIds d ON d.id = k.demangledName "
        "ORDER BY end - start DESC LIMIT 1",
    )[0]


def test_kernel_pixel_has_its_colour_and_gaps_are_background(make_timeline) -> None:
    widget = make_timeline(CONCURRENT)
    start, end, name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    duration = end - start
    widget.state.set_view_range(start - duration, end + duration)
    image = render_to_image(widget, (1200, 700))
    y, h = widget.row_rect(key)
    x_mid = int(widget.x_of((start + end) // 2))
    assert image.pixel(x_mid, y + h // 2) & 0xFFFFFF == name_argb(name) & 0xFFFFFF
    # Before the kernel (inside the view) the stream is idle unless another kernel ran there.
    busy = sql_rows(
        CONCURRENT,
        f"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE streamId = {stream} "
        f"AND end > {start - duration // 2 - 1000} AND start < {start - duration // 2 + 1000}",
    )[0][0]
    x_gap = int(widget.x_of(start - duration // 2))
    if busy == 0:
        gap = image.pixel(x_gap, y + h // 2) & 0xFFFFFF
        assert gap in {widget.theme.row_even & 0xFFFFFF, widget.theme.row_odd & 0xFFFFFF}


def test_click_selects_kernel_and_its_launch_call(make_timeline, qtbot) -> None:
    widget = make_timeline(CONCURRENT)
    start, end, name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    widget.state.set_view_range(start - (end - start), end + (end - start))
    y, h = widget.row_rect(key)
    with qtbot.waitSignal(widget.event_clicked) as blocker:
        qtbot.mouseClick(
            widget,
            Qt.MouseButton.LeftButton,
            pos=QPoint(int(widget.x_of((start + end) // 2)), y + h // 2),
        )
    event = blocker.args[0]
    assert event is not None
    assert event.source == "kernels"
    assert event.name == name
    partner = widget.state.partner_event()
    corr = sql_rows(
        CONCURRENT,
        "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL "
        f"WHERE start = {start} AND streamId = {stream}",
    )[0][0]
    api_start = sql_rows(
        CONCURRENT, f"SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = {corr}"
    )[0][0]
    assert partner is not None
    assert partner.source == "cuda_api"
    assert partner.start_ns == api_start


def test_paint_soak_hundreds_of_random_frames(make_timeline) -> None:
    # 600 random frames (zooms from 1e-6 of the span to all of it, scrolls every 20, collapses
    # every 7): 2000 cost 15 s of a suite that must stay under 10 minutes.
    widget = make_timeline(SERIAL, CONCURRENT, size=(900, 500))
    rng = np.random.default_rng(7)
    lo, hi = widget.state.full_range()
    widget.state.pin_matching("Stream")
    painted = []
    paint = widget._painter.paint
    widget._painter.paint = lambda p, frame: (painted.append(frame.t0_ns), paint(p, frame))
    for i in range(600):
        span = int((hi - lo) * 10 ** rng.uniform(-6, 0.1))
        t0 = int(lo + rng.uniform(-0.1, 1.0) * (hi - lo))
        widget.state.set_view_range(t0, t0 + span)
        if i % 20 == 0:
            widget.scroll_rows(int(rng.integers(-300, 300)))
        if i % 7 == 0:
            widget.state.set_collapsed(
                widget.state.tracks()[i % len(widget.state.tracks())].group[:2], i % 2 == 0
            )
        widget.repaint()
    assert widget.isVisible()
    assert len(painted) >= 600


def test_highlights_dim_other_events_of_the_table(make_timeline, load_report) -> None:
    widget = make_timeline(CONCURRENT)
    report = load_report(CONCURRENT)
    start, end, name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    duration = end - start
    widget.state.set_view_range(start - duration, end + duration)
    kernels = report.tables["kernels"]
    row = int(((kernels["start_ns"] == start) & (kernels["end_ns"] == end)).nonzero()[0][0])
    y, h = widget.row_rect(key)
    x_mid = int(widget.x_of((start + end) // 2))
    widget.state.set_highlights({(0, "kernels"): [row]})
    kept = render_to_image(widget, (1200, 700)).pixel(x_mid, y + h // 2) & 0xFFFFFF
    widget.state.set_highlights({(0, "kernels"): [row + 1 if row == 0 else row - 1]})
    dimmed = render_to_image(widget, (1200, 700)).pixel(x_mid, y + h // 2) & 0xFFFFFF
    widget.state.set_highlights(None)
    plain = render_to_image(widget, (1200, 700)).pixel(x_mid, y + h // 2) & 0xFFFFFF
    assert kept == plain == name_argb(name) & 0xFFFFFF
    assert dimmed != plain
    assert sum((dimmed >> s) & 0xFF for s in (0, 8, 16)) < sum(
        (plain >> s) & 0xFF for s in (0, 8, 16)
    )


def test_collapsed_report_row_summarises_its_gpu(make_timeline) -> None:
    widget = make_timeline(CONCURRENT)
    start, end, _name, _stream = _longest_kernel(CONCURRENT)
    duration = end - start
    widget.state.set_view_range(start - duration, end + duration)
    report_name = widget.state.tracks()[0].group[0]
    widget.state.set_collapsed((report_name,), True)
    assert widget.visible_track_keys() == []
    image = render_to_image(widget, (1200, 700))
    y = widget.theme.ruler_height_px + widget.theme.report_height_px // 2
    busy = image.pixel(int(widget.x_of((start + end) // 2)), y) & 0xFFFFFF
    assert busy != widget.theme.report_row & 0xFFFFFF


def test_outlier_marks_flag_an_event(make_timeline, load_report) -> None:
    widget = make_timeline(CONCURRENT)
    report = load_report(CONCURRENT)
    start, end, _name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    widget.state.set_view_range(start - (end - start), end + (end - start))
    kernels = report.tables["kernels"]
    row = int(((kernels["start_ns"] == start) & (kernels["end_ns"] == end)).nonzero()[0][0])
    y, _h = widget.row_rect(key)
    x = int(round(widget.x_of(start)))
    before = render_to_image(widget, (1200, 700)).pixel(x, y + 2) & 0xFFFFFF
    widget.state.set_highlights(None, marks=[(0, "kernels", row)])
    after = render_to_image(widget, (1200, 700)).pixel(x, y + 2) & 0xFFFFFF
    assert after == widget.theme.outlier_mark & 0xFFFFFF
    assert before != after


def test_hover_shows_a_tooltip_with_name_and_duration(make_timeline, qtbot) -> None:
    from PySide6.QtWidgets import QToolTip

    from strata.analysis.timefmt import format_duration_ns

    widget = make_timeline(CONCURRENT)
    start, end, name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    widget.state.set_view_range(start - (end - start), end + (end - start))
    y, h = widget.row_rect(key)
    qtbot.mouseMove(widget, QPoint(int(widget.x_of((start + end) // 2)), y + h // 2))
    qtbot.waitUntil(lambda: name in QToolTip.text(), timeout=2000)
    assert format_duration_ns(end - start) in QToolTip.text()
    assert f"Stream {stream}" in QToolTip.text()


@pytest.mark.parametrize("path", real_reports(), ids=lambda p: p.stem[:40])
def test_every_real_report_renders_with_its_rows(path, load_report) -> None:
    report = load_report(path)
    tracks = ReportSet([report]).tracks()
    image = render_to_image(([report], tracks, [0]), (640, 400))
    assert (image.width(), image.height()) == (640, 400)
    assert len({t.key for t in tracks}) == len(tracks)
    kernels = len(report.tables["kernels"])
    assert (kernels > 0) == any(t.kind == "gpu_stream" for t in tracks)


def test_wheel_zooms_about_the_cursor_and_drag_pans(make_timeline, qtbot) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    widget = make_timeline(SERIAL)
    t0, t1 = widget.state.view_range()
    x = widget.theme.header_width_px + 200
    anchor = widget.time_at(x)
    event = QWheelEvent(
        QPointF(x, 300),
        QPointF(widget.mapToGlobal(QPoint(x, 300))),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    z0, z1 = widget.state.view_range()
    assert z1 - z0 < t1 - t0
    assert abs(widget.time_at(x) - anchor) <= (z1 - z0) / widget.width()
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, pos=QPoint(x, 300))
    qtbot.mouseMove(widget, QPoint(x - 100, 300))
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=QPoint(x - 100, 300))
    p0, p1 = widget.state.view_range()
    assert p0 > z0
    assert p1 - p0 == z1 - z0


def test_offsets_shift_a_report_on_the_shared_axis(make_timeline) -> None:
    widget = make_timeline(CONCURRENT)
    start, end, name, stream = _longest_kernel(CONCURRENT)
    key = next(t.key for t in widget.state.tracks() if t.label == f"Stream {stream}")
    duration = end - start
    shift = 3 * duration
    widget.state.set_view_range(start - duration, end + 4 * duration)
    widget.state.set_offsets([shift])
    assert widget.state.offsets_ns() == [shift]
    image = render_to_image(widget, (1200, 700))
    y, h = widget.row_rect(key)
    moved = image.pixel(int(widget.x_of((start + end) // 2 + shift)), y + h // 2) & 0xFFFFFF
    assert moved == name_argb(name) & 0xFFFFFF


def test_arrow_and_page_keys_scroll_rows(make_timeline, qtbot) -> None:
    widget = make_timeline(CONCURRENT, SERIAL, size=(900, 300))
    qtbot.keyClick(widget, Qt.Key.Key_Down)
    assert widget.scroll_offset() == widget.theme.row_height_px
    qtbot.keyClick(widget, Qt.Key.Key_PageDown)
    assert widget.scroll_offset() > 3 * widget.theme.row_height_px
    qtbot.keyClick(widget, Qt.Key.Key_PageUp)
    qtbot.keyClick(widget, Qt.Key.Key_Up)
    assert widget.scroll_offset() == 0


def test_panned_frame_equals_a_fresh_one(make_timeline) -> None:
    # LOD columns kept across a pan must be the ones a fresh paint computes.
    first = make_timeline(SERIAL, CONCURRENT)
    lo, hi = first.state.full_range()
    first.state.set_view_range(lo, lo + (hi - lo) // 3)
    render_to_image(first, (1200, 700))
    t0, t1 = first.state.view_range()
    for step in (0.05, 0.07, -0.11):
        first.state.pan(step)
        render_to_image(first, (1200, 700))
    panned = render_to_image(first, (1200, 700))
    fresh = make_timeline(SERIAL, CONCURRENT)
    fresh.state.set_view_range(*first.state.view_range())
    assert panned == render_to_image(fresh, (1200, 700))
    assert first.state.view_range() != (t0, t1)


def test_scroll_to_track_brings_a_far_row_on_screen(make_timeline) -> None:
    widget = make_timeline(CONCURRENT, SERIAL, size=(1200, 300))
    folded = set(widget.state.collapsed_groups())  # the GPU metrics start folded
    last = [t for t in widget.state.tracks() if t.group not in folded][-1].key
    assert widget.row_rect(last) is None  # far below a 300 px view
    assert widget.scroll_to_track(last)
    assert widget.row_rect(last) is not None
    assert not widget.scroll_to_track("no such row")


def test_dragging_the_divider_gives_pinned_rows_more_room(make_timeline, qtbot) -> None:
    widget = make_timeline(CONCURRENT, SERIAL, size=(1000, 400))
    widget.state.pin_matching("Stream")
    pinned = widget.state.pinned_keys()

    def shown() -> list[str]:
        return [k for k in widget.visible_track_keys() if k in pinned]

    before = shown()
    assert 0 < len(before) < len(pinned)  # the pinned area stops at 45 % of the height
    view = widget.state.view_range()
    ruler = widget.theme.ruler_height_px
    y = ruler + widget._frame().pinned_height_px + 1  # the divider, below the last whole row
    x = widget.theme.header_width_px + 300
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    qtbot.mouseMove(widget, QPoint(x, y + 120))
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=QPoint(x, y + 120))
    assert widget.pinned_fraction() > 0.6
    assert len(shown()) > len(before)
    assert widget.state.view_range() == view  # the drag moved the divider, not the view
    widget.set_pinned_fraction(5.0)
    assert widget.pinned_fraction() == 0.85  # the scrolling rows keep some room


def test_many_wheel_and_key_zoom_outs_stay_within_the_data(make_timeline, qtbot) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    widget = make_timeline(SERIAL)
    lo, hi = widget.state.full_range()
    margin = (hi - lo) // 20  # fit-everything's margin is a 50th each side
    x = widget.theme.header_width_px + 40  # off-centre: the anchor would push the view left
    for _ in range(30):
        event = QWheelEvent(
            QPointF(x, 300),
            QPointF(widget.mapToGlobal(QPoint(x, 300))),
            QPoint(0, 0),
            QPoint(0, -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)
        t0, t1 = widget.state.view_range()
        assert lo - margin <= t0 < t1 <= hi + margin
    for _ in range(30):
        qtbot.keyClick(widget, Qt.Key.Key_S)
        widget.zoom(0.5, widget.width() - 5)
        t0, t1 = widget.state.view_range()
        assert lo - margin <= t0 < t1 <= hi + margin


def test_labels_of_concurrent_events_never_overprint(make_timeline) -> None:
    # All streams and NVTX (GPU) rows hold overlapping intervals: one label per screen span.
    widget = make_timeline(CONCURRENT, size=(1400, 900))
    widget.state.pin_matching("All streams|NVTX \\(GPU\\)")
    jobs: list = []
    paint_labels = widget._painter._paint_labels
    widget._painter._paint_labels = lambda p, frame, labels: (
        jobs.append((frame, labels)),
        paint_labels(p, frame, labels),
    )
    lo, hi = widget.state.full_range()
    drawn = 0
    for k in range(1, 40):
        t0 = lo + (hi - lo) * k // 41
        widget.state.set_view_range(t0, t0 + (hi - lo) // (2 + k))
        widget.repaint()
    for frame, labels in jobs:
        rows: dict[tuple, list] = {}
        for _table, _index, block, _argb, y0, y1 in labels:
            x0 = np.maximum(block[:, 0], frame.data_x)
            x1 = np.minimum(block[:, 0] + block[:, 2], frame.data_x + frame.data_width)
            rows.setdefault((y0, y1), []).append(np.stack([x0, x1], axis=1))
        for spans in rows.values():
            box = np.concatenate(spans)
            box = box[box[:, 1] - box[:, 0] >= 24]  # wide enough to carry text at all
            box = box[np.argsort(box[:, 0])]
            drawn += len(box)
            assert np.all(box[1:, 0] >= box[:-1, 1])
    assert drawn > 0


def test_pinned_rows_are_whole_and_never_overlap_the_scrolling_rows(make_timeline) -> None:
    widget = make_timeline(CONCURRENT, SERIAL, size=(1000, 400))
    keys = [t.key for t in widget.state.tracks()][:30]
    for fraction in (0.45, 0.23, 0.1):
        widget.set_pinned_fraction(fraction)
        widget.state.set_pinned_keys([])
        for key in keys:  # pin one more row each time, past the point where the area is full
            widget.state.pin(key)
            frame = widget._frame()
            placed = frame.placed_rows()
            pinned = [(y, y + r.height_px) for r, y, is_pinned in placed if is_pinned]
            rolling = [(y, y + r.height_px) for r, y, is_pinned in placed if not is_pinned]
            assert pinned
            bottom = frame.pinned_y + frame.pinned_height_px
            for (y0, y1), (row, y, _p) in zip(pinned, placed, strict=False):
                # Whole: the header draws its label in the row's full height, unclipped.
                assert frame.clip_row(y, row.height_px, True) == (y0, y1)
                assert frame.pinned_y <= y0 < y1 <= bottom
            assert all(s0 >= bottom for s0, _s1 in rolling)


def test_pinned_rows_past_their_area_scroll_into_it(make_timeline) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    widget = make_timeline(CONCURRENT, SERIAL, size=(1000, 400))
    keys = [t.key for t in widget.state.tracks()][:30]
    widget.state.set_pinned_keys(keys)
    assert keys[-1] not in widget.visible_track_keys()  # the area is full
    x, y = 40, widget.theme.ruler_height_px + 10  # over the pinned rows' names
    for _ in range(len(keys)):
        event = QWheelEvent(
            QPointF(x, y),
            QPointF(widget.mapToGlobal(QPoint(x, y))),
            QPoint(0, 0),
            QPoint(0, -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)
        frame = widget._frame()
        bottom = frame.pinned_y + frame.pinned_height_px
        for row, top, is_pinned in frame.placed_rows():
            if is_pinned:
                assert frame.pinned_y <= top
                assert top + row.height_px <= bottom
            else:
                assert top >= bottom
    assert keys[-1] in widget.visible_track_keys()
    row, top, is_pinned = widget.row_at(y)
    assert is_pinned
    assert row.track is not None
    assert widget.row_rect(row.track.key) == (top, row.height_px)
