"""The window with every panel docked, as `python main.py` builds it: the View menu lists each
panel, the Events view and the timeline follow each other, the timeline's keys work whichever
panel has the focus."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QDockWidget, QFileDialog, QTableView, QTreeView

from tests.app.conftest import LOAD_TIMEOUT_MS, small_real, wait_idle
from tests.conftest import requires_shared
from tests.helpers import sql_rows

pytestmark = requires_shared

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
#: Every dock of the window: the main window's own two and the four install_panels adds.
PANELS = {"Reports", "Event Details", "Statistics", "Call tree", "Events"}


@pytest.fixture
def window(qtbot, make_window):
    """The application's window (app.gui's panels) on a small real report, active."""
    from strata.app.gui import install_panels

    window = make_window()
    install_panels(window)
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.binding.tracks()), timeout=LOAD_TIMEOUT_MS)
    window.activateWindow()
    qtbot.waitActive(window)
    return window


def _kernel_in_context(window, context: int = 4):
    """Show the longest kernel with ``context`` times its length on each side; return
    (point over it, (start, end, stream, gridX, gridY, gridZ), the view in report time)."""
    (row,) = sql_rows(
        small_real(0),
        "SELECT start, end, streamId, gridX, gridY, gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "ORDER BY end - start DESC LIMIT 1",
    )
    start, end, stream = row[:3]
    timeline = window.timeline
    key = next(t.key for t in timeline.state.tracks() if t.label == f"Stream {stream}")
    offset = timeline.state.offsets_ns()[0]
    span = end - start
    timeline.state.set_view_range(start + offset - context * span, end + offset + context * span)
    timeline.scroll_to_track(key)
    y, h = timeline.row_rect(key)
    point = QPoint(int(timeline.x_of((start + end) // 2 + offset)), y + h // 2)
    v0, v1 = timeline.state.view_range()
    return point, row, (v0 - offset, v1 - offset)


def _stream_events(stream: int, t0: int, t1: int) -> int:
    """How many GPU operations of ``stream`` overlap [t0, t1) (report time), from SQLite."""
    where = f"WHERE streamId = {stream} AND start < {t1} AND end > {t0}"
    tables = ("KERNEL", "MEMCPY", "MEMSET")
    query = " + ".join(f"(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_{t} {where})" for t in tables)
    return sql_rows(small_real(0), f"SELECT {query}")[0][0]


def _listed_event(controller):
    """(table, index) of the Events view's current line."""
    view = controller.view
    current = view.table.currentIndex()
    assert current.isValid()
    events = view.model.events()
    position = int(view.model.positions()[current.row()])
    return events.tables[int(events.table_codes[position])], int(events.index[position])


def test_the_view_menu_lists_every_panel_together_and_toggles_it(qtbot, window) -> None:
    menu = window._view_menu
    menu.aboutToShow.emit()
    actions = menu.actions()
    last_separator = max(i for i, a in enumerate(actions) if a.isSeparator())
    panels = actions[last_separator + 1 :]
    docks = {d.windowTitle(): d for d in window.findChildren(QDockWidget)}
    assert set(docks) == PANELS
    # One entry per panel, all of them in one group at the end (the Theme menu above them).
    assert sorted(a.text() for a in panels) == sorted(PANELS)
    assert "&Theme" in [a.text() for a in actions[:last_separator]]
    for action in panels:
        dock = docks[action.text()]
        assert not dock.isHidden()
        action.trigger()
        assert dock.isHidden()
        assert not action.isChecked()
        action.trigger()
        assert not dock.isHidden()


def test_show_in_events_view_lists_the_row_around_the_event(qtbot, window) -> None:
    controller, timeline = window.events_controller, window.timeline
    window.reports_dock.raise_()  # the Events view behind its tab
    point, (start, end, stream, *_grid), (v0, v1) = _kernel_in_context(window)
    ref = timeline.event_at(point.x(), point.y())
    assert (ref.table, ref.start_ns, ref.end_ns) == ("kernels", start, end)
    qtbot.mouseClick(timeline, Qt.MouseButton.RightButton, pos=point)
    menu = timeline.context_menu
    menu.hide()
    action = next(a for a in menu.actions() if a.text() == "Show in Events View")
    with qtbot.waitSignal(controller.events_ready, timeout=LOAD_TIMEOUT_MS):
        action.trigger()
    assert controller.dock.isVisible()
    # The event's row over the view: its neighbours too, the event itself selected.
    expected = _stream_events(stream, v0, v1)
    assert controller.view.model.rowCount() == expected > 1
    assert _listed_event(controller) == ("kernels", ref.index)
    assert timeline.state.selected_event() == ref


def test_the_events_view_and_the_timeline_follow_each_other(qtbot, window, tmp_path, monkeypatch):
    controller, timeline = window.events_controller, window.timeline
    controller.dock.raise_()
    point, (start, end, stream, gx, gy, gz), _view = _kernel_in_context(window)
    # Ctrl+Shift-drag along the stream's row, over the kernel.
    x0, x1 = timeline.theme.header_width_px + 10, timeline.width() - 30
    with qtbot.waitSignal(controller.events_ready, timeout=LOAD_TIMEOUT_MS):
        qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, CTRL_SHIFT, QPoint(x0, point.y()))
        for x in (x0 + 40, (x0 + x1) // 2, x1):
            qtbot.mouseMove(timeline, QPoint(x, point.y()))
        qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, CTRL_SHIFT, QPoint(x1, point.y()))
    selection = timeline.state.selection()
    offset = timeline.state.offsets_ns()[0]
    expected = _stream_events(stream, selection.t0_ns - offset, selection.t1_ns - offset)
    view = controller.view
    assert view.model.rowCount() == expected > 1
    # A click on the kernel on the timeline: the table moves to its line, which has its grid.
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=point)
    ref = timeline.state.selected_event()
    assert (ref.table, ref.start_ns) == ("kernels", start)
    assert _listed_event(controller) == ("kernels", ref.index)
    details = view.table.currentIndex().siblingAtColumn(6).data()
    assert f"Grid: {gx}×{gy}×{gz}" in details
    # A click on another line centres and selects its event on the timeline.
    other = 0 if view.table.currentIndex().row() else 1
    index = view.model.index(other, 0)
    view.table.scrollTo(index)
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.table.visualRect(index).center())  # fmt: skip
    picked = timeline.state.selected_event()
    assert (picked.table, picked.index) == _listed_event(controller) != ("kernels", ref.index)
    t0, t1 = timeline.state.view_range()
    assert abs((t0 + t1) // 2 - ((picked.start_ns + picked.end_ns) // 2 + offset)) <= 1
    # Export CSV… writes the lines listed, in the table's order.
    target = tmp_path / "events.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(target), ""))
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    with open(target, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == expected
    assert [r["name"] for r in rows] == [view.model.index(i, 0).data() for i in range(expected)]


def _focus(qtbot, widget) -> None:
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=5000)


def test_timeline_keys_and_ctrl_f_work_whichever_panel_has_the_focus(qtbot, window) -> None:
    timeline = window.timeline
    point, _row, _view = _kernel_in_context(window)
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=point)  # details to focus
    panels = {
        "events": window.events_controller.view.table,
        "details": window.event_actions.pane.table,
        "call tree": window.calltree_controller.panel.findChild(QTreeView),
        "reports": window.reports_panel.findChild(QTableView),
    }
    for name, widget in panels.items():
        assert widget is not None, name
        dock = next(d for d in window.findChildren(QDockWidget) if d.isAncestorOf(widget))
        dock.show()
        dock.raise_()
        _focus(qtbot, widget)
        t0, t1 = timeline.state.view_range()
        qtbot.keyClick(widget, Qt.Key.Key_W)
        z0, z1 = timeline.state.view_range()
        assert z1 - z0 < t1 - t0, name
        qtbot.keyClick(widget, Qt.Key.Key_A)
        assert timeline.state.view_range()[0] < z0, name
        assert widget.hasFocus(), name
    # Ctrl+F from a table opens the search with the cursor in its field.
    bar = window.search_controller.bar
    qtbot.keyClick(panels["events"], Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible()
    assert bar.field.hasFocus()
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def _rows(timeline) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, label, path) of every row the timeline lays out, pinned ones first."""
    pinned, scrolling = timeline.state.layout((20, 20, 20))
    return [(r.kind, r.label, tuple(r.path)) for r in (*pinned.rows, *scrolling.rows)]


def test_collapse_all_and_expand_all_from_the_keyboard(qtbot, window) -> None:
    timeline, table = window.timeline, window.events_controller.view.table
    window.events_controller.dock.raise_()
    _focus(qtbot, table)
    shown = _rows(timeline)
    assert sum(kind == "track" for kind, _label, _path in shown) > 5
    qtbot.keyClick(table, Qt.Key.Key_C, CTRL_SHIFT)
    folded = _rows(timeline)
    # The report folds down to its sections: its title and one header per section.
    sections = {t.group[:2] for t in timeline.state.tracks() if len(t.group) >= 2}
    assert [kind for kind, _label, _path in folded] == ["report"] + ["group"] * len(sections)
    assert {path for kind, _label, path in folded if kind == "group"} == sections
    qtbot.keyClick(table, Qt.Key.Key_E, CTRL_SHIFT)
    assert _rows(timeline) == shown


def test_help_lists_every_shortcut_and_about_names_the_version(qtbot, window, monkeypatch):
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QKeySequence, QShortcut
    from PySide6.QtWidgets import QMessageBox

    from strata.analysis import __version__
    from strata.app.dialogs import ShortcutsDialog

    shown = []
    monkeypatch.setattr(ShortcutsDialog, "exec", lambda self: shown.append(self) or 0)
    qtbot.keyClick(window.timeline, Qt.Key.Key_F1)
    (dialog,) = shown
    table = dialog.table
    rows = [(table.item(r, 0).text(), table.item(r, 1).text()) for r in range(table.rowCount())]
    keys = {key for _name, text in rows for key in text.replace(" / ", ", ").split(", ")}
    native = QKeySequence.SequenceFormat.NativeText
    # Every window-wide key: the menu actions', the timeline's (W, Esc…) and search's Ctrl+F.
    for action in window.actions_by_name.values():
        if not action.shortcut().isEmpty():
            assert action.shortcut().toString(native) in keys, action.text()
    window_keys = [s for s in window.findChildren(QShortcut) if s.parent() is window]
    assert len(window_keys) >= 7
    for shortcut in window_keys:
        assert shortcut.key().toString(native) in keys
    assert "Ctrl + Shift + drag" in keys
    # Readable: every Action cell's text fits its cell once wrapped (one long Shortcut entry
    # took the width and cut every action to "Zoom in / out at th…").
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    metrics = table.fontMetrics()
    flags = int(Qt.TextFlag.TextWordWrap)
    for r in range(table.rowCount()):
        text = table.item(r, 0).text()
        cell = QRect(0, 0, table.columnWidth(0) - 8, 10_000)
        needed = metrics.boundingRect(cell, flags, text)
        assert needed.width() <= cell.width(), text
        assert needed.height() <= table.rowHeight(r), text
    told = []
    monkeypatch.setattr(QMessageBox, "about", lambda *args: told.append(args))
    window.actions_by_name["about"].trigger()
    ((_parent, title, text),) = told
    assert title == "About Strata"
    assert f"Strata {__version__}" in text


def test_every_tab_keeps_the_panel_width_and_the_histogram_follows_the_theme(
    qtbot, window, qapp
) -> None:
    from strata.app.stats_tabs import TABS

    palette, sheet = qapp.palette(), qapp.styleSheet()
    stats = window.stats_controller
    panel, dock = stats.panel, stats.dock
    qtbot.waitUntil(lambda: not window.runner.active_jobs(), timeout=LOAD_TIMEOUT_MS)
    width, window_width = dock.width(), window.width()
    assert panel.histogram.height() >= 140
    call_tree = next(d for d in window.findChildren(QDockWidget) if d.windowTitle() == "Call tree")
    for i, (_kind, title) in enumerate(TABS):  # the summaries and the lists of their own
        assert panel.tabs.tabText(i) == title
        panel.tabs.setCurrentIndex(i)
        qtbot.waitUntil(lambda: not window.runner.active_jobs(), timeout=LOAD_TIMEOUT_MS)
        assert (title, dock.width(), window.width()) == (title, width, window_width)
    call_tree.raise_()
    qtbot.waitUntil(lambda: not window.runner.active_jobs(), timeout=LOAD_TIMEOUT_MS)
    assert (call_tree.width(), window.width()) == (width, window_width)
    histogram = panel.histogram.plot
    try:
        window.theme_switcher.actions["light"].trigger()
        assert histogram.backgroundBrush().color().lightness() > 240
        window.theme_switcher.actions["dark"].trigger()
        assert histogram.backgroundBrush().color().lightness() < 48
    finally:
        qapp.setPalette(palette)
        qapp.setStyleSheet(sheet)
