"""An event's details (hover, pane), its context menu, and Export / Copy Image, as a user
drives them in the main window."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QToolTip

from tests.app.conftest import small_real, wait_idle
from tests.conftest import requires_shared
from tests.helpers import sql_rows

pytestmark = requires_shared


def _longest_kernel(path):
    return sql_rows(
        path,
        "SELECT start, end, gridX, gridY, gridZ, blockX, blockY, blockZ, streamId, launchType, "
        "localMemoryTotal FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY end - start DESC LIMIT 1",
    )[0]


def _zoom_to(window, row) -> QPoint:
    """Zoom to the kernel ``row`` and return the point over it (after any layout change)."""
    start, end, stream = row[0], row[1], row[8]
    timeline = window.timeline
    key = next(t.key for t in timeline.tracks() if t.label == f"Stream {stream}")
    offset = timeline.offsets()[0]
    timeline.set_view_range(start + offset - (end - start), end + offset + (end - start))
    timeline.scroll_to_track(key)
    y, h = timeline.row_rect(key)
    return QPoint(int(timeline.x_of((start + end) // 2 + offset)), y + h // 2)


@pytest.fixture
def kernel_window(qtbot, make_window):
    """A window on a small real report, zoomed to its longest kernel: (window, point, row)."""
    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    row = _longest_kernel(small_real(0))
    return window, _zoom_to(window, row), row


def test_hover_and_details_pane_show_grid_block_and_launch(qtbot, kernel_window) -> None:
    window, point, row = kernel_window
    _start, _end, gx, gy, gz, bx, by, bz, _stream, launch, local_total = row
    timeline = window.timeline
    qtbot.mouseMove(timeline, point)
    qtbot.waitUntil(lambda: "Grid" in QToolTip.text(), timeout=3000)
    tip = QToolTip.text()
    assert f"{gx}×{gy}×{gz}" in tip
    assert f"{bx}×{by}×{bz}" in tip
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=point)
    pane = window.event_actions.pane
    qtbot.waitUntil(lambda: bool(pane.lines()), timeout=3000)
    lines = dict(pane.lines())
    assert lines["Grid"] == f"{gx}×{gy}×{gz}"
    assert lines["Block"] == f"{bx}×{by}×{bz}"
    # Read on demand from the SQLite row (not a model column).
    assert lines["Launch type"] == {1: "Regular"}.get(launch, lines["Launch type"])
    assert f"{local_total:,} B total" in lines["Local memory"]
    assert lines["Launched by"].startswith("cuda")
    # The pane and the hover text are one formatter's lines.
    for field, value in pane.lines():
        assert f"<b>{field}</b>" in tip
        assert value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in tip
    assert pane.table.item(0, 1).text() == lines["Name"]


def _menu_action(timeline, text: str):
    actions = {a.text(): a for a in timeline.context_menu.actions()}
    found = [a for t, a in actions.items() if t.startswith(text)]
    assert found, sorted(actions)
    return found[0]


def _right_click(qtbot, timeline, point) -> None:
    qtbot.mouseClick(timeline, Qt.MouseButton.RightButton, pos=point)
    assert timeline.context_menu is not None
    timeline.context_menu.hide()


def test_context_menu_zooms_pins_and_copies(qtbot, kernel_window) -> None:
    window, point, row = kernel_window
    timeline = window.timeline
    start, end = row[0], row[1]
    offset = timeline.offsets()[0]
    ref = timeline.event_at(point.x(), point.y())
    _right_click(qtbot, timeline, point)
    timeline.set_view_range(*timeline.full_range())
    _menu_action(timeline, "Zoom to Event").trigger()
    t0, t1 = timeline.view_range()
    assert t0 <= start + offset
    assert end + offset <= t1
    assert (end - start) / (t1 - t0) > 0.5
    _menu_action(timeline, "Copy Name").trigger()
    assert QGuiApplication.clipboard().text() == timeline.describe(ref)[0][1]
    _menu_action(timeline, "Copy Details").trigger()
    copied = QGuiApplication.clipboard().text()
    assert f"Grid: {row[2]}×{row[3]}×{row[4]}" in copied.splitlines()
    _menu_action(timeline, "Pin Row").trigger()
    assert timeline.pinned_keys() == [ref.track_key]


def test_context_menu_highlights_the_name_and_shows_it_in_stats(qtbot, kernel_window) -> None:
    from app.stats_controller import install_stats_panel

    window, _point, row = kernel_window
    controller = install_stats_panel(window)
    window.stats_controller = controller
    wait_idle(qtbot, window)
    point = _zoom_to(window, row)  # the docked panel narrowed the timeline
    timeline = window.timeline
    name = timeline.describe(timeline.event_at(point.x(), point.y()))[0][1]
    _right_click(qtbot, timeline, point)
    _menu_action(timeline, "Select All").trigger()
    qtbot.waitUntil(lambda: timeline.state.highlight() is not None, timeout=10_000)
    assert timeline.state.highlight().name == name
    controller.panel.set_kind("cuda_api")
    wait_idle(qtbot, window)
    point = _zoom_to(window, row)
    _right_click(qtbot, timeline, point)
    _menu_action(timeline, "Show in Statistics").trigger()
    qtbot.waitUntil(lambda: controller.panel.selected_name() == name, timeout=10_000)
    assert controller.panel.kind() == "kernels"
    # The Events view hook: without the view, the status bar says so.
    _right_click(qtbot, timeline, point)
    _menu_action(timeline, "Show in Events View").trigger()
    assert "Events view" in window.statusBar().currentMessage()


def test_export_image_png_matches_render_and_svg_is_valid(qtbot, kernel_window, tmp_path) -> None:
    from viewer.render import render_to_image

    window, _point, _row = kernel_window
    timeline = window.timeline
    png = window.export_image(tmp_path / "view.png")
    image = QImage(str(png))
    expected = render_to_image(timeline, timeline.size())
    assert (image.width(), image.height()) == (expected.width(), expected.height())
    assert image.convertToFormat(expected.format()) == expected
    svg = window.export_image(tmp_path / "view.svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert root.get("viewBox") == f"0 0 {timeline.width()} {timeline.height()}"
    assert not [p for p in tmp_path.iterdir() if "strata-tmp" in p.name]
    # Drawn back, the SVG's row headers sit where the PNG's are (the SVG engine once
    # ignored the header column's source rectangle and shifted every label down).
    drawn = QImage(image.size(), QImage.Format.Format_ARGB32)
    drawn.fill(0)
    painter = QPainter(drawn)
    QSvgRenderer(str(svg)).render(painter)
    painter.end()
    top = timeline.theme.ruler_height_px
    column = [(image.pixel(3, y), drawn.pixel(3, y)) for y in range(top, image.height() - 2)]
    assert sum(a != b for a, b in column) < len(column) // 50


def test_export_image_refuses_an_input_and_copy_image_fills_the_clipboard(
    qtbot, make_window, tmp_path
) -> None:
    report = tmp_path / "r.sqlite"
    shutil.copy(small_real(0), report)
    window = make_window()
    window.open_paths([report])
    wait_idle(qtbot, window)
    before = report.read_bytes()
    assert window.export_image(report) is None
    assert report.read_bytes() == before
    assert "write it somewhere else" in window.messages.messages()[-1]
    window.copy_image()
    copied = QGuiApplication.clipboard().image()
    assert (copied.width(), copied.height()) == (window.timeline.width(), window.timeline.height())


def test_view_menu_lists_every_dock_and_about_has_the_version(make_window) -> None:
    from PySide6.QtWidgets import QDockWidget

    from analysis import __version__
    from app.dialogs import about_text

    window = make_window()
    extra = QDockWidget("Late panel", window)
    extra.setObjectName("lateDock")
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, extra)
    window._view_menu.aboutToShow.emit()
    texts = {a.text() for a in window._view_menu.actions()}
    assert {"Reports", "Event Details", "Late panel"} <= texts
    assert __version__ in about_text(__version__)
    assert {"export_image", "copy_image", "collapse_all", "expand_all", "shortcuts"} <= set(
        window.actions_by_name
    )
