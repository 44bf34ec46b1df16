"""The application context: what the window's controllers work with, handed to them explicitly.

:class:`~app.main_window.MainWindow` builds one (:attr:`MainWindow.context`) and the
controllers of its panels receive it instead of looking attributes up on the window
(``getattr(window, "stats_controller", None)``): the services (settings, job runner, report
list, the timeline and its binding), the window's places (status bar, docks, View menu), the
panels installed so far, and the demo builder the start-up hands in (app/ does not import
the demo: :mod:`strata.launch` passes it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QWidget

from strata.analysis.errors import StrataError
from strata.analysis.progress import Progress
from strata.app.jobs import JobRunner
from strata.app.loading import ReportList
from strata.app.settings import Settings
from strata.app.timeline_binding import TimelineBinding
from strata.viewer.state import TimelineState
from strata.viewer.timeline import TimelineWidget

__all__ = ["AppContext", "DemoBuilder"]

#: Builds (or reuses) the built-in demo reports in a folder; returns their paths.
DemoBuilder = Callable[[Path], list[Path]]


@dataclass(eq=False)
class AppContext:
    """The services and places of one main window, for the controllers of its panels.

    Attributes
    ----------
    window
        The main window: where panels dock and messages show.
    settings, runner, report_list, timeline, binding
        The window's settings, job runner, reports, timeline widget and the binding that
        keeps the timeline showing the reports.
    build_demo
        Builds the demo reports (None: this installation has none).
    view_menu, reports_dock
        The View menu (each dock gets an entry) and the Reports panel's dock, once built.
    kernel_names, theme_switcher
        The kernel-name spelling choice and the colour-scheme switcher, once built.
    is_collective_overlay_chosen
        The user switched the collectives overlay from the View menu: it no longer follows
        the Collectives tab.
    stats, calltree, search, events
        The controllers of the panels (:func:`app.gui.install_panels`), None until
        installed: :class:`~app.stats_controller.StatsController`,
        :class:`~app.calltree_controller.CallTreeController`,
        :class:`~app.search_controller.SearchController`,
        :class:`~app.events_controller.EventsController`.
    """

    window: QMainWindow
    settings: Settings
    runner: JobRunner
    report_list: ReportList
    timeline: TimelineWidget
    binding: TimelineBinding
    build_demo: DemoBuilder | None = None
    view_menu: QMenu | None = None
    reports_dock: QDockWidget | None = None
    kernel_names: QObject | None = None
    theme_switcher: QObject | None = None
    is_collective_overlay_chosen: bool = False
    stats: QObject | None = None
    calltree: QObject | None = None
    search: QObject | None = None
    events: QObject | None = None

    @property
    def state(self) -> TimelineState:
        """The timeline's state: what every panel reads and changes."""
        return self.timeline.state

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        """Show ``text`` in the window's status bar (for ``timeout_ms``; 0: until replaced)."""
        self.window.statusBar().showMessage(text, timeout_ms)

    def add_side_panel(self, widget: QWidget, title: str, object_name: str) -> QDockWidget:
        """Dock ``widget`` on the right (the stats panel's place) and return its dock."""
        return self._dock(widget, title, object_name, Qt.DockWidgetArea.RightDockWidgetArea)

    def add_bottom_panel(self, widget: QWidget, title: str, object_name: str) -> QDockWidget:
        """Dock ``widget`` under the timeline, tabbed with the Reports panel; return its dock."""
        dock = self._dock(widget, title, object_name, Qt.DockWidgetArea.BottomDockWidgetArea)
        if self.reports_dock is not None:
            self.window.tabifyDockWidget(self.reports_dock, dock)
            dock.raise_()
        return dock

    def _dock(
        self, widget: QWidget, title: str, object_name: str, area: Qt.DockWidgetArea
    ) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(object_name)
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        if self.view_menu is not None:
            self.view_menu.addAction(dock.toggleViewAction())
        return dock

    def demo_job(self) -> Callable[[Progress, threading.Event], list[Path]]:
        """Return the job that builds (or reuses) the demo reports in the cache folder.

        The job raises :class:`StrataError` when this installation has no demo builder.
        """
        builder = self.build_demo

        def build(progress: Progress, _cancel: threading.Event) -> list[Path]:
            from strata.analysis.cache import cache_root

            if builder is None:
                raise StrataError("the built-in demo is not available in this installation")
            progress(0.0, "building the demo reports")
            return builder(cache_root() / "demo")

        return build
