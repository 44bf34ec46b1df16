"""The application context: the panels' controllers get the window's services and each other
from it, not by looking attributes up on the window; the demo builder is handed in."""

from __future__ import annotations

import ast

from PySide6.QtCore import Qt

from strata.app.gui import install_panels
from tests.app.conftest import wait_idle
from tests.conftest import ROOT

#: The stats panel's own modules are restructured apart (issue #23, the tab protocol); the
#: context is there for them (``window.context``) too.
_STATS_MODULES = {"stats_controller.py"}


def test_the_panels_controllers_are_kept_in_the_context(make_window) -> None:
    window = make_window()
    context = window.context
    assert (context.stats, context.calltree, context.search, context.events) == (None,) * 4
    install_panels(window)
    assert context.window is window
    assert context.state is window.timeline.state
    assert window.stats_controller is context.stats is not None
    assert window.calltree_controller is context.calltree is not None
    assert window.search_controller is context.search is not None
    assert window.events_controller is context.events is not None
    # The Events view docks under the timeline, listed in the View menu.
    bottom = Qt.DockWidgetArea.BottomDockWidgetArea
    assert window.dockWidgetArea(context.events.dock) == bottom
    assert context.events.dock.toggleViewAction() in context.view_menu.actions()


def test_without_a_demo_builder_open_demo_says_there_is_none(qtbot, settings) -> None:
    from strata.app.main_window import MainWindow

    window = MainWindow(settings)  # no build_demo: an installation without the demo
    qtbot.addWidget(window)
    window.open_demo()
    wait_idle(qtbot, window)
    assert window.report_list.entries() == []
    (message,) = window.messages.messages()
    assert "the built-in demo is not available in this installation" in message
    window.close()


def test_no_controller_looks_the_window_up_by_name() -> None:
    """``getattr(window, "stats_controller", None)`` and the like: gone from app/ (what a
    controller needs is an attribute of its context)."""
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path.name in _STATS_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in {"getattr", "hasattr"} or len(node.args) < 2:
                continue
            # A name looked up on a window (the menus' table names its methods: not this).
            is_name = isinstance(node.args[1], ast.Constant)
            if is_name and "window" in ast.unparse(node.args[0]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
