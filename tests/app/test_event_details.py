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

from strata.analysis.timefmt import format_duration_ns, format_time_ns
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
    key = next(t.key for t in timeline.state.tracks() if t.label == f"Stream {stream}")
    offset = timeline.state.offsets_ns()[0]
    timeline.state.set_view_range(start + offset - (end - start), end + offset + (end - start))
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
    offset = timeline.state.offsets_ns()[0]
    ref = timeline.event_at(point.x(), point.y())
    _right_click(qtbot, timeline, point)
    timeline.state.set_view_range(*timeline.state.full_range())
    _menu_action(timeline, "Zoom to Event").trigger()
    t0, t1 = timeline.state.view_range()
    assert t0 <= start + offset
    assert end + offset <= t1
    assert (end - start) / (t1 - t0) > 0.5
    _menu_action(timeline, "Copy Name").trigger()
    assert QGuiApplication.clipboard().text() == timeline.describe(ref)[0][1]
    _menu_action(timeline, "Copy Details").trigger()
    copied = QGuiApplication.clipboard().text()
    assert f"Grid: {row[2]}×{row[3]}×{row[4]}" in copied.splitlines()
    _menu_action(timeline, "Pin Row").trigger()
    assert timeline.state.pinned_keys() == [ref.track_key]


def test_context_menu_highlights_the_name_and_shows_it_in_stats(qtbot, kernel_window) -> None:
    from strata.app.stats_controller import install_stats_panel

    window, _point, row = kernel_window
    controller = install_stats_panel(window.context)
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
    from strata.viewer.render import render_to_image

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

    from strata.analysis import __version__
    from strata.app.dialogs import about_text

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


def _click_at(qtbot, window, start: int, end: int, key: str) -> dict[str, str]:
    """Zoom to [start, end] (report time) on row ``key``, click its middle as a user does,
    and return the details pane's lines."""
    timeline = window.timeline
    offset = timeline.state.offsets_ns()[0]
    span = max(end - start, 1_000)
    timeline.state.set_view_range(start + offset - span, end + offset + span)
    timeline.scroll_to_track(key)
    y, h = timeline.row_rect(key)
    point = QPoint(int(timeline.x_of((start + end) // 2 + offset)), y + h // 2)
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=point)
    pane = window.event_actions.pane
    qtbot.waitUntil(lambda: bool(pane.lines()), timeout=3000)
    return dict(pane.lines())


def _api_call(path, correlation_id: int) -> tuple[str, int]:
    """(name as cuda_api_sum spells it, tid) of the runtime call with ``correlation_id``."""
    name, tid = sql_rows(
        path,
        "SELECT s.value, r.globalTid % 16777216 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId WHERE r.correlationId = ?",
        correlation_id,
    )[0]
    return (name[:-6] if name[-6:-4] == "_v" else name), tid


def test_the_pane_lists_a_kernels_resources_and_its_launch(qtbot, kernel_window) -> None:
    window, _point, row = kernel_window
    start, end = row[0], row[1]
    regs, static, dynamic, corr = sql_rows(
        small_real(0),
        "SELECT registersPerThread, staticSharedMemory, dynamicSharedMemory, correlationId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = ? AND end = ?",
        start,
        end,
    )[0]
    key = next(t.key for t in window.timeline.state.tracks() if t.label == f"Stream {row[8]}")
    lines = _click_at(qtbot, window, start, end, key)
    assert lines["Registers/thread"] == str(regs)
    assert lines["Shared memory"] == f"{static:,} B static, {dynamic:,} B dynamic"
    assert lines["Correlation ID"] == str(corr)
    api, tid = _api_call(small_real(0), corr)
    assert lines["Launched by"].startswith(f"{api} at ")
    assert lines["Launch thread"] == f"tid {tid}" or lines["Launch thread"].endswith(f"(tid {tid})")


def test_the_pane_lists_a_copys_kinds_bytes_and_throughput(qtbot, kernel_window) -> None:
    window = kernel_window[0]
    start, end, size, copy_kind, src, dst, stream, corr = sql_rows(
        small_real(0),
        "SELECT start, end, bytes, copyKind, srcKind, dstKind, streamId, correlationId "
        "FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY bytes DESC, start LIMIT 1",
    )[0]
    key = next(t.key for t in window.timeline.state.tracks() if t.label == f"Stream {stream}")
    lines = _click_at(qtbot, window, start, end, key)
    # CUDA's enums (nsys-sqlite.md: ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND).
    assert lines["Kind"] == {1: "Host-to-Device", 2: "Device-to-Host"}[copy_kind]
    assert lines["Bytes"] == f"{size:,}"
    assert lines["Throughput"] == f"{size / (end - start):.2f} GB/s"  # bytes/ns = GB/s
    memory = {0: "Pageable", 1: "Pinned", 2: "Device"}
    assert (lines["Source memory"], lines["Destination memory"]) == (memory[src], memory[dst])
    assert lines["Correlation ID"] == str(corr)
    assert lines["Launched by"].startswith(_api_call(small_real(0), corr)[0] + " at ")


def test_the_pane_lists_an_nvtx_ranges_colour_and_gpu_projection(qtbot, make_window) -> None:
    path = small_real(2)  # cupy: coloured push/pop ranges around kernels
    window = make_window()
    window.open_paths([path])
    wait_idle(qtbot, window)
    # The NVTX → GPU rows come in a second job; the pane shows the projection once they do.
    qtbot.waitUntil(
        lambda: any(t.kind == "nvtx_gpu" for t in window.binding.tracks()), timeout=60_000
    )
    rowid, start, end, color, tid = sql_rows(
        path,
        "SELECT rowid, start, end, color, globalTid % 16777216 FROM NVTX_EVENTS "
        "WHERE end > start AND color IS NOT NULL ORDER BY end - start LIMIT 1",
    )[0]
    report = window.binding.shown_reports()[0]
    level = int(report.nvtx["level"][(report.nvtx["row_id"] == rowid).nonzero()[0][0]])
    key = next(t.key for t in window.timeline.state.tracks() if t.key.endswith(f"/nvtx/L{level}"))
    lines = _click_at(qtbot, window, start, end, key)
    assert window.timeline.state.selected_event().source_row >= 0
    assert lines["Domain"] == "(default)"
    assert lines["Colour"] == f"#{color & 0xFFFFFF:06X}"
    assert lines["Thread"] == f"tid {tid}" or lines["Thread"].endswith(f"(tid {tid})")
    # The time of the GPU work it launched: where the NVTX (GPU) row draws that range.
    projection = window.binding.shown_set().projection(0)
    mine = projection[projection["range_id"] == rowid].iloc[0]
    gpu_start, gpu_end = int(mine["start_ns"]), int(mine["end_ns"])
    assert gpu_start >= start
    offset = window.timeline.state.offsets_ns()[0]
    assert lines["GPU projection"].startswith(
        f"{format_time_ns(gpu_start + offset)}, {format_duration_ns(gpu_end - gpu_start)} ("
    )


def test_the_event_menu_lists_each_action_once(qtbot, kernel_window) -> None:
    window, point, _ = kernel_window
    timeline = window.timeline
    _right_click(qtbot, timeline, point)
    texts = [a.text() for a in timeline.context_menu.actions() if not a.isSeparator()]
    assert len(texts) == len(set(texts)), texts
    assert sum(t.startswith(("Pin", "Unpin")) for t in texts) == 1, texts
