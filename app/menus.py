"""The main window's actions, menus and tool bar, declared as data.

Each action names a public method of :class:`~app.main_window.MainWindow` that it triggers,
so the window holds behaviour and this module holds only the menu structure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

from strata.analysis.timefmt import pluralize
from strata.app.settings import Settings
from strata.viewer.access import name_control

__all__ = [
    "ACTIONS",
    "ActionSpec",
    "build_actions",
    "build_menu_bar",
    "build_tool_bar",
    "fill_recent_menu",
]


@dataclass(frozen=True)
class ActionSpec:
    """One action: its id, menu text, the window method it calls, keys, status tip, and
    whether it is an on/off switch (the window keeps its check mark in step)."""

    name: str
    text: str
    method: str
    shortcuts: tuple[str, ...] = ()
    tip: str = ""
    checkable: bool = False


ACTIONS = (
    ActionSpec("open", "&Open…", "open_files_dialog", ("Ctrl+O",), "Open report files"),
    ActionSpec(
        "open_folder", "Open &Folder…", "open_folder_dialog", ("Ctrl+Shift+O",),
        "Open every report in a folder",
    ),
    ActionSpec(
        "open_recipe", "Open Recipe O&utput…", "open_recipe_output_dialog", (),
        "Open the tables, summary and plots written by main.py recipe … --output DIR",
    ),
    ActionSpec("open_demo", "Open &Demo", "open_demo", (), "Open the built-in demo reports"),
    ActionSpec(
        "close_report", "&Close Report", "close_selected_report", ("Ctrl+W",),
        "Close the report selected in the Reports panel (or the last one)",
    ),
    ActionSpec("close_all", "Close &All Reports", "close_all_reports", ("Ctrl+Shift+W",)),
    ActionSpec(
        "export_image", "Export &Image…", "export_image_dialog", ("Ctrl+Shift+S",),
        "Save the timeline as shown as a PNG or SVG image (the picture main.py render makes)",
    ),
    ActionSpec(
        "copy_image", "Copy &Image", "copy_image", ("Ctrl+Shift+I",),
        "Put the timeline as shown on the clipboard as an image",
    ),
    ActionSpec("quit", "&Quit", "close", ("Ctrl+Q",)),
    ActionSpec("fit", "&Fit", "fit", ("F",), "Show the whole time range"),
    ActionSpec("zoom_in", "Zoom &In", "zoom_in", ("Ctrl++", "+", "=")),
    ActionSpec("zoom_out", "Zoom &Out", "zoom_out", ("Ctrl+-", "-")),
    ActionSpec(
        "pin_by_name", "&Pin by Name…", "show_pin_dialog", ("Ctrl+P",),
        "Pin every row whose name matches a regular expression, in every report",
    ),
    ActionSpec("unpin_all", "&Unpin All", "unpin_all"),
    ActionSpec("show_hidden", "Show &Hidden Rows", "show_hidden_rows", ("Ctrl+Shift+H",)),
    ActionSpec(
        "collapse_all", "&Collapse All Groups", "collapse_all_groups", ("Ctrl+Shift+C",),
        "Fold every report down to its sections (CPU, processes, GPUs)",
    ),
    ActionSpec("expand_all", "&Expand All Groups", "expand_all_groups", ("Ctrl+Shift+E",)),
    ActionSpec(
        "choose_nvtx", "Align on NVTX Range…", "choose_nvtx_range", ("Ctrl+L",),
        "Line the reports up on the first instance of an NVTX range",
    ),
    ActionSpec(
        "diff_baseline", "Set as &Baseline", "set_diff_baseline", ("Ctrl+B",),
        "Compare against the reports selected in the Reports panel (the first one if none)",
    ),
    ActionSpec(
        "diff_compare", "&Compare with Baseline", "compare_with_baseline", ("Ctrl+Shift+B",),
        "Compare the reports selected in the Reports panel (the last one if none) with the "
        "baseline: the Diff tab of the Statistics panel",
    ),
    ActionSpec(
        "diff_colors", "C&olour What Changed", "toggle_diff_colors", ("Ctrl+D",),
        "Colour the events of names that got slower / faster; dim the rest", True,
    ),
    ActionSpec("diff_clear", "C&lear Diff", "clear_diff", (), "Compare nothing"),
    ActionSpec(
        "collective_overlay", "Co&llectives Overlay", "toggle_collective_overlay", (),
        "Draw the collectives matched across ranks over the timeline: each rank's wait "
        "shaded, the ranks of each joined (on by default with the Collectives tab)", True,
    ),
    ActionSpec(
        "clear_anchors", "Clear Alignment &Anchors", "clear_alignment_anchors", (),
        "Forget the anchor events (right-click an event: Use as Alignment Anchor)",
    ),
    ActionSpec("shortcuts", "&Keyboard Shortcuts", "show_shortcuts", ("F1",)),
    ActionSpec("about", "&About Strata", "show_about"),
)  # fmt: skip


def build_actions(window: QMainWindow) -> dict[str, QAction]:
    """Create every action of :data:`ACTIONS` on ``window``, connected to its method."""
    actions = {}
    for spec in ACTIONS:
        action = QAction(spec.text, window)
        action.setObjectName(spec.name)
        action.setCheckable(spec.checkable)
        if spec.shortcuts:
            action.setShortcuts([QKeySequence(s) for s in spec.shortcuts])
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            action.setToolTip(f"{spec.tip or spec.text.replace('&', '')}  ({keys})")
        action.setStatusTip(spec.tip)
        action.triggered.connect(_caller(getattr(window, spec.method)))
        window.addAction(action)  # the shortcuts work even with the menu bar hidden
        actions[spec.name] = action
    return actions


def _caller(method: Callable[[], object]) -> Callable[[], None]:
    # QAction.triggered passes `checked`; the window's methods take no argument.
    return lambda *_args: method()


def build_menu_bar(
    window: QMainWindow, actions: dict[str, QAction], alignment_actions: list[QAction]
) -> tuple[QMenu, QMenu]:
    """Fill ``window``'s menu bar; return the Open Recent menu and the View menu."""
    name_control(window.menuBar(), "Menu bar")
    file_menu = window.menuBar().addMenu("&File")
    file_menu.addActions([actions["open"], actions["open_folder"], actions["open_recipe"]])
    file_menu.addAction(actions["open_demo"])
    recent_menu = file_menu.addMenu("Open &Recent")
    file_menu.addSeparator()
    file_menu.addActions([actions["close_report"], actions["close_all"]])
    file_menu.addSeparator()
    file_menu.addAction(actions["export_image"])
    file_menu.addSeparator()
    file_menu.addAction(actions["quit"])
    edit = window.menuBar().addMenu("&Edit")
    edit.addAction(actions["copy_image"])
    view = window.menuBar().addMenu("&View")
    view.addActions([actions["fit"], actions["zoom_in"], actions["zoom_out"]])
    view.addSeparator()
    align = view.addMenu("&Alignment")
    align.addActions(alignment_actions)
    align.addSeparator()
    align.addAction(actions["choose_nvtx"])
    align.addAction(actions["clear_anchors"])
    view.addSeparator()
    view.addActions([actions["pin_by_name"], actions["unpin_all"], actions["show_hidden"]])
    view.addActions([actions["collapse_all"], actions["expand_all"]])
    view.addSeparator()
    diff = view.addMenu("&Diff")
    diff.addActions([actions["diff_baseline"], actions["diff_compare"], actions["diff_colors"],
                     actions["diff_clear"]])  # fmt: skip
    view.addAction(actions["collective_overlay"])
    view.addSeparator()
    help_menu = window.menuBar().addMenu("&Help")
    help_menu.addActions([actions["shortcuts"], actions["about"]])
    return recent_menu, view


def build_tool_bar(window: QMainWindow, actions: dict[str, QAction]) -> QToolBar:
    """Return the main tool bar: open, navigation, pin by name."""
    bar = QToolBar("Main", window)
    bar.setObjectName("mainToolBar")
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.addActions([actions["open"], actions["open_folder"]])
    bar.addSeparator()
    bar.addActions([actions["fit"], actions["zoom_in"], actions["zoom_out"]])
    bar.addSeparator()
    bar.addAction(actions["pin_by_name"])
    return bar


def fill_recent_menu(
    menu: QMenu, settings: Settings, open_paths: Callable[[list[str]], object]
) -> None:
    """Rebuild the Open Recent menu from ``settings`` (called as it is about to show)."""
    menu.clear()
    session = settings.last_session()
    if session:
        text = f"Last Session ({pluralize(len(session), 'report')})"
        action = menu.addAction(text)
        action.setToolTip("\n".join(session))
        action.triggered.connect(lambda _checked=False: open_paths(session))
        menu.addSeparator()
    recent = settings.recent_files()
    for path in recent:
        action = menu.addAction(Path(path).name)
        action.setToolTip(path)
        action.setStatusTip(path)
        action.triggered.connect(lambda _checked=False, p=path: open_paths([p]))
    if recent:
        menu.addSeparator()
        menu.addAction("Clear Recent", settings.clear_recent_files)
    else:
        menu.addAction("No recent reports").setEnabled(False)
