"""The window for every user: named controls, a timeline that says what it shows, font sizes
that follow the user's."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QAccessible, QAction, QFontInfo
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGraphicsView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QProgressBar,
    QTabBar,
    QTabWidget,
    QTextEdit,
    QToolBar,
    QWidget,
)

from strata.viewer.events import event_ref, shown_name
from strata.viewer.timeline import TimelineWidget
from tests.app.conftest import open_shown
from tests.conftest import ROOT

#: Controls a screen reader must be able to name by what they are (their text, if any, is a
#: value: a combo box's current item, a field's contents).
_NAMED = (QComboBox, QLineEdit, QAbstractSpinBox, QAbstractItemView, QTabBar, QTabWidget,
          QGraphicsView, QPlainTextEdit, QTextEdit, QProgressBar, QMenuBar,
          TimelineWidget)  # fmt: skip


@pytest.fixture
def full_window(qtbot, make_window, demo_reports):
    """The window as main.py shows it (every panel docked) on the demo reports."""
    from strata.app.gui import install_panels

    window = make_window()
    install_panels(window)
    open_shown(qtbot, window, demo_reports)
    window.search_controller.open_search()  # its bar too
    return window


def _is_qt_internal(widget: QWidget) -> bool:
    """Qt's own parts (a spin box's editor, a combo's popup, a field's clear button, scroll
    bars and splitter handles): Qt names them, or they are not ours to name."""
    while widget is not None:
        if widget.objectName().startswith("qt_") or type(widget).__name__.startswith("QComboBox"):
            return True
        parent = widget.parentWidget()
        if isinstance(parent, QLineEdit) and isinstance(widget, QAbstractButton):
            return True
        if isinstance(parent, QComboBox) and not isinstance(widget, QLineEdit):
            return True
        widget = parent
    return False


def _spoken_name(widget: QWidget) -> str:
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Name) if interface is not None else ""


def test_every_control_has_a_name_a_screen_reader_says(full_window) -> None:
    unnamed = []
    for widget in full_window.findChildren(QWidget):
        if _is_qt_internal(widget) or isinstance(widget, QHeaderView):
            continue
        if isinstance(widget, _NAMED):
            if not widget.accessibleName().strip():
                unnamed.append(widget)
        elif isinstance(widget, QAbstractButton | QLabel):
            # A text of symbols only ('✕', '▲') is read as 'multiplication x': a name with words.
            spoken = _spoken_name(widget) if widget.isVisible() else widget.accessibleName()
            if widget.isVisible() and not re.search(r"[A-Za-z]", spoken):
                unnamed.append(widget)
    described = [f"{type(w).__name__} under {type(w.parentWidget()).__name__}" for w in unnamed]
    assert not unnamed, described
    # The names are what Qt hands the screen reader.
    assert _spoken_name(full_window.timeline) == "Timeline"
    assert _spoken_name(full_window.stats_controller.panel.filter_edit) == "Filter names"


def test_every_menu_and_tool_bar_action_has_a_text(full_window) -> None:
    def menu_actions(menu: QMenu):
        for action in menu.actions():
            yield action
            if action.menu() is not None:
                yield from menu_actions(action.menu())

    actions = [a for m in full_window.menuBar().findChildren(QMenu) for a in menu_actions(m)]
    actions += [a for bar in full_window.findChildren(QToolBar) for a in bar.actions()]
    blank = [a for a in actions if not a.isSeparator() and not a.text().replace("&", "").strip()]
    assert len(actions) > 30
    assert not blank, [(a.objectName(), a.toolTip()) for a in blank]
    assert all(isinstance(a, QAction) for a in actions)


def test_the_timeline_says_what_it_shows_and_which_event_is_selected(qtbot, full_window):
    timeline = full_window.timeline
    shown = full_window.binding.shown_set()
    description = timeline.accessibleDescription()
    assert f"{len(shown.reports)} reports" in description
    assert "view " in description
    assert "selected event" not in description
    interface = QAccessible.queryAccessibleInterface(timeline)
    assert interface.text(QAccessible.Text.Description) == description
    ref = event_ref(shown.slice_tables(1), 1, "kernels", 3)
    with qtbot.waitSignal(timeline.event_selected):
        timeline.state.select_event(ref)
    name = shown_name(shown.reports[1], ref)
    assert name
    assert name in timeline.spoken_event
    assert f"selected event: {timeline.spoken_event}" in timeline.accessibleDescription()
    timeline.state.select(*timeline.state.view_range())
    assert "time range selected" in timeline.accessibleDescription()
    timeline.state.select_event(None)
    assert timeline.spoken_event == ""
    assert "selected event" not in timeline.accessibleDescription()


def test_no_font_is_sized_in_pixels(full_window) -> None:
    pixel_font = re.compile(r"setPixelSize\(|font(-size)?\s*:[^;\"']*\d\s*px", re.IGNORECASE)
    sources = [*ROOT.glob("app/**/*.py"), *ROOT.glob("viewer/**/*.py"), *ROOT.glob("app/**/*.qss")]
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sources
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pixel_font.search(line)]  # fmt: skip
    assert not found
    in_pixels = [w for w in full_window.findChildren(QWidget) if w.font().pixelSize() > 0]
    assert not in_pixels, [type(w).__name__ for w in in_pixels]
    painter = full_window.timeline._painter
    assert painter.label_font.pixelSize() == -1
    assert painter.label_font.pointSizeF() > 0


def test_a_bigger_application_font_makes_the_labels_and_rows_bigger(qtbot, full_window) -> None:
    app = QApplication.instance()
    timeline = full_window.timeline
    table = full_window.stats_controller.panel.table
    label = full_window.findChild(QLabel, "statsStatus")
    original = app.font()

    def sizes() -> tuple[int, ...]:
        return (QFontInfo(timeline._painter.label_font).pixelSize(),
                QFontInfo(label.font()).pixelSize(), timeline.theme.row_height_px,
                table.verticalHeader().defaultSectionSize())  # fmt: skip

    before = sizes()
    bigger = app.font()
    bigger.setPointSizeF(original.pointSizeF() * 2)
    try:
        app.setFont(bigger)
        qtbot.waitUntil(lambda: sizes()[0] > before[0])
        after = sizes()
        assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)
        # Rows hold their text: a row is taller than the label font's line.
        assert timeline.theme.row_height_px > timeline._painter._label_metrics.height()
    finally:
        app.setFont(original)
    qtbot.waitUntil(lambda: sizes() == before)
