"""The main window: menus, tool bars, drag-and-drop, the timeline, the reports panel."""

# Over 600 lines: each menu action is one public method of the window (app/menus.py names
# them); the panels' controllers live apart (app/context.py, app/gui.install_panels).

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QRect, QSize, Qt, QUrl
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDragLeaveEvent,
    QDragMoveEvent,
    QDropEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from strata.analysis import __version__
from strata.analysis.cache import cache_root
from strata.analysis.discover import REPORT_SUFFIXES
from strata.analysis.dropped import DropPreview, preview_paths
from strata.analysis.errors import ReportError, StrataError
from strata.analysis.timefmt import format_count, format_range_ns, pluralize
from strata.app.alignment_bar import AlignmentToolBar
from strata.app.context import AppContext, DemoBuilder
from strata.app.dialogs import PinByNameDialog, ShortcutsDialog, about_text
from strata.app.drop_overlay import DropOverlay
from strata.app.event_actions import EventActions
from strata.app.icon import make_app_icon
from strata.app.image_export import copy_image, export_image, image_dialog_path
from strata.app.jobs import JobRunner
from strata.app.kernel_names import KernelNameChoice
from strata.app.loading import LOADING, ReportEntry, ReportList
from strata.app.menus import build_actions, build_menu_bar, build_tool_bar, fill_recent_menu
from strata.app.message_area import MessageArea
from strata.app.recipe_window import RecipeOutputOpener
from strata.app.reports_panel import ReportsPanel
from strata.app.settings import Settings
from strata.app.theme import ThemeSwitcher
from strata.app.timeline_binding import TimelineBinding, TimelineWidget
from strata.app.timeline_keys import install_timeline_keys
from strata.viewer.access import name_control
from strata.viewer.events import EventRef
from strata.viewer.state import DiffState

__all__ = ["DEFAULT_SIZE", "MainWindow", "fit_into"]

log = logging.getLogger(__name__)

DEFAULT_SIZE = QSize(1600, 1000)
_ZOOM_FACTOR = 2.0
_EMPTY_TEXT = (
    "<p style='font-size:x-large'>Drop Nsight Systems reports or folders here</p>"
    "<p>.sqlite exports open directly; .nsys-rep files are converted with nsys.<br>"
    "File → Open (Ctrl+O), Open Folder (Ctrl+Shift+O), or File → Open Demo.</p>"
)


class MainWindow(QMainWindow):
    """Strata's main window.

    Parameters
    ----------
    settings
        Where to remember recent files, pins and the window layout (a fresh platform
        ``QSettings`` store when omitted).
    build_demo
        Builds the demo reports that File → Open Demo opens (None: the action says there is
        no demo in this installation); :mod:`strata.launch` hands in the built-in one.

    Attributes
    ----------
    context
        The :class:`~app.context.AppContext` the panels' controllers receive.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        parent: QWidget | None = None,
        build_demo: DemoBuilder | None = None,
    ):
        super().__init__(parent)
        self.settings = settings or Settings()
        self.runner = JobRunner(self)
        self.report_list = ReportList(self.runner, self)
        #: The one ReportSet of the window: the loaded reports and what is derived from them.
        self.report_set = self.report_list.report_set
        self.timeline = TimelineWidget(self)
        self.binding = TimelineBinding(
            self.report_list, self.timeline, self.runner, self.settings, self
        )
        self.context = AppContext(self, self.settings, self.runner, self.report_list,
                                  self.timeline, self.binding, build_demo)  # fmt: skip
        self.messages = MessageArea(self)
        self.reports_panel = ReportsPanel(self.report_list, self)
        self.alignment_bar = AlignmentToolBar(self)
        self.recipe_outputs = RecipeOutputOpener(self.runner, self)
        self._pin_pattern = ""
        self._drop_preview: DropPreview | None = None
        self.setWindowTitle("Strata")
        self.setWindowIcon(make_app_icon())
        self.setAcceptDrops(True)
        self._build_central()
        self._build_docks()
        self.actions_by_name = build_actions(self)
        install_timeline_keys(self, self.timeline)
        self._recent_menu, self._view_menu = build_menu_bar(
            self, self.actions_by_name, self.alignment_bar.mode_actions()
        )
        self._recent_menu.aboutToShow.connect(self._on_recent_menu_about_to_show)
        self.context.view_menu = self._view_menu
        self.theme_switcher = self.context.theme_switcher = ThemeSwitcher(self)
        self.theme_switcher.add_menu(self._view_menu)
        self.kernel_names = self.context.kernel_names = KernelNameChoice(self.settings, self)
        self.kernel_names.add_menu(self._view_menu)
        # The panels come last, together: the docks added later (add_side_panel, the
        # Events view) append their entries below these two.
        self._view_menu.addSeparator()
        self._view_menu.addAction(self.reports_dock.toggleViewAction())
        self.event_actions = EventActions(self.context)
        self._view_menu.addAction(self.event_actions.dock.toggleViewAction())
        self._view_menu.aboutToShow.connect(self._list_every_dock)
        self.addToolBar(build_tool_bar(self, self.actions_by_name))
        self.addToolBar(self.alignment_bar)
        self._build_status_bar()
        self._connect()
        self._restore_layout()
        # Each set of reports gets its own alignment once shown; the NVTX name typed last is
        # offered in the field.
        self.alignment_bar.set_alignment("session", self.settings.alignment_nvtx_name())

    # -- construction ---------------------------------------------------------------------

    def _build_central(self) -> None:
        self._empty_label = QLabel(_EMPTY_TEXT, self)
        self._empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty_label.setObjectName("emptyState")
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self._empty_label)
        self._stack.addWidget(self.timeline)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.messages)
        layout.addWidget(self._stack, 1)
        self.setCentralWidget(central)
        self.drop_overlay = DropOverlay(central)
        # Drops anywhere in the window open files; the timeline's views must not eat them.
        for widget in [self.timeline, *self.timeline.findChildren(QWidget)]:
            widget.setAcceptDrops(False)

    def _build_docks(self) -> None:
        self.reports_dock = QDockWidget("Reports", self)
        self.reports_dock.setObjectName("reportsDock")
        self.reports_dock.setWidget(self.reports_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.reports_dock)
        self.context.reports_dock = self.reports_dock
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.reports_dock], [175], Qt.Orientation.Vertical)

    def add_side_panel(self, widget: QWidget, title: str, object_name: str) -> QDockWidget:
        """Dock ``widget`` on the right (the stats panel's place) and return its dock
        (:meth:`AppContext.add_side_panel`; the stats panel's installer docks through here)."""
        return self.context.add_side_panel(widget, title, object_name)

    # The panels' controllers live in the context; these name them for scripts and tests.

    @property
    def stats_controller(self):
        """The stats panel's controller (None until installed): ``context.stats``."""
        return self.context.stats

    @stats_controller.setter
    def stats_controller(self, controller) -> None:
        self.context.stats = controller

    @property
    def calltree_controller(self):
        """The call-tree panel's controller (None until installed): ``context.calltree``."""
        return self.context.calltree

    @property
    def search_controller(self):
        """The search bar's controller (None until installed): ``context.search``."""
        return self.context.search

    @property
    def events_controller(self):
        """The Events view's controller (None until installed): ``context.events``."""
        return self.context.events

    def childEvent(self, event) -> None:  # Qt override
        super().childEvent(event)
        # Qt adds a tab bar of its own when docks are tabified: name it for screen readers.
        child = event.child()
        if event.polished() and isinstance(child, QTabBar) and not child.accessibleName():
            child.setAccessibleName("Docked panels")

    def _build_status_bar(self) -> None:
        self._summary_label = name_control(QLabel("No report", self), "Reports shown")
        self._range_label = name_control(QLabel("", self), "View range")
        self.statusBar().addPermanentWidget(self._range_label)
        self.statusBar().addPermanentWidget(self._summary_label)

    def _connect(self) -> None:
        self.report_list.report_failed.connect(self._on_report_failed)
        self.report_list.report_loaded.connect(self._on_report_loaded)
        self.report_list.recipe_output_found.connect(self.open_recipe_output)
        self.recipe_outputs.failed.connect(self._on_report_failed)
        self.report_list.entry_added.connect(self._on_entries_changed)
        self.report_list.entry_removed.connect(self._on_entries_changed)
        self.reports_panel.close_requested.connect(self.report_list.remove)
        state = self.timeline.state
        self.reports_panel.baseline_requested.connect(
            lambda paths: state.set_baseline(str(p) for p in paths)
        )
        self.reports_panel.compare_requested.connect(self._compare_paths)
        self.reports_panel.diff_clear_requested.connect(state.clear_diff)
        state.diff_changed.connect(self._on_diff_changed)
        state.collectives_changed.connect(self._on_collectives_changed)
        self.report_list.duplicate_ignored.connect(
            lambda path: self.statusBar().showMessage(f"{path.name} is already open", 5000)
        )
        self.alignment_bar.alignment_changed.connect(self.binding.set_alignment)
        self.binding.nvtx_names_changed.connect(self.alignment_bar.set_nvtx_names)
        self.binding.layout_changed.connect(self._on_layout_changed)
        self.binding.problem_found.connect(lambda text: self.messages.add_message(text, "warning"))
        self.binding.alignment_problem_changed.connect(
            lambda text: self.messages.set_message("alignment", text, "warning")
        )
        self.binding.alignment_restored.connect(self.alignment_bar.set_alignment)
        state.view_range_changed.connect(self._on_view_range_changed)
        self.timeline.event_clicked.connect(self._on_event_clicked)

    def _restore_layout(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(_fit_to_screen(DEFAULT_SIZE))
        self.restore_dock_state()
        self._keep_on_screen()

    def _keep_on_screen(self) -> None:
        """Clamp a restored window to its screen: one saved wider than the screen (a long
        name once widened a dock to 3,896 px) would otherwise start broken every time."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        fitted = fit_into(self.geometry(), screen.availableGeometry())
        if fitted != self.geometry():
            self.setGeometry(fitted)

    def restore_dock_state(self) -> None:
        """Put docks and tool bars where the user left them (again after adding a panel)."""
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)

    # -- opening and closing reports --------------------------------------------------------

    def open_paths(self, paths: Iterable[str | Path]) -> list[ReportEntry]:
        """Open report files and folders (in the background); return the new entries."""
        return self.report_list.add_paths(paths)

    def open_demo(self) -> None:
        """Build the demo reports into the cache folder (on a worker), then open them."""
        self.statusBar().showMessage("Building the demo reports…")
        job = self.runner.submit(self.context.demo_job(), channel="demo")
        job.finished.connect(self._on_demo_built)
        job.failed.connect(lambda exc: self._on_report_failed(Path("demo"), exc))

    def _on_demo_built(self, paths: list[Path]) -> None:
        self.statusBar().clearMessage()
        self.open_paths(paths)

    def open_files_dialog(self) -> None:
        """Ask for report files and open them."""
        patterns = " ".join(f"*{s}" for s in REPORT_SUFFIXES)
        files, _ = QFileDialog.getOpenFileNames(
            self,
            "Open reports",
            self._last_folder(),
            f"Nsight Systems reports and PyTorch profiler traces ({patterns} *.json *.json.gz)"
            ";;All files (*)",
        )
        self.open_paths(files)

    def open_folder_dialog(self) -> None:
        """Ask for a folder and open every report in it."""
        folder = QFileDialog.getExistingDirectory(
            self, "Open a folder of reports", self._last_folder()
        )
        if folder:
            self.open_paths([folder])

    def open_recipe_output(self, folder: str | Path) -> None:
        """Show a recipe output folder's tables, summary and plots in a window of its own."""
        self.recipe_outputs.open(folder)

    def open_recipe_output_dialog(self) -> None:
        """Ask for a folder that ``main.py recipe … --output`` wrote and open it."""
        folder = QFileDialog.getExistingDirectory(
            self, "Open a recipe output folder", self._last_folder()
        )
        if folder:
            self.open_recipe_output(folder)

    def _last_folder(self) -> str:
        recent = self.settings.recent_files()
        return str(Path(recent[0]).parent) if recent else str(Path.home())

    def close_selected_report(self) -> None:
        """Close the report selected in the Reports panel, or the last one opened."""
        path = self.reports_panel.selected_path()
        entries = self.report_list.entries()
        if path is None and entries:
            path = entries[-1].path
        if path is not None:
            self.report_list.remove(path)

    def close_all_reports(self) -> None:
        """Close every report (loads in progress are cancelled)."""
        self.report_list.clear()

    def _on_recent_menu_about_to_show(self) -> None:
        fill_recent_menu(self._recent_menu, self.settings, self._open_recent)

    def _user_report_paths(self) -> list[Path]:
        """Return the open reports that the user opened (not the demo in the cache folder)."""
        root = cache_root()
        return [e.path for e in self.report_list.loaded_entries() if root not in e.path.parents]

    def _open_recent(self, paths: list[str]) -> None:
        for path in paths:
            if not Path(path).exists():
                self.settings.remove_recent_file(path)
        self.open_paths(paths)

    def _on_report_loaded(self, entry: ReportEntry) -> None:
        self._on_entries_changed(entry)
        if cache_root() not in entry.path.parents:  # not the demo
            self.settings.add_recent_files([entry.path])

    def _on_report_failed(self, path: Path, error: Exception) -> None:
        if isinstance(error, ReportError):
            text, tip = f"{error.path.name}: {error.reason}", str(error)
        elif isinstance(error, StrataError):
            text, tip = f"{Path(path).name}: {error}", str(error)
        else:  # a bug: the job runner has logged the traceback
            text = f"{Path(path).name}: internal error ({type(error).__name__}: {error})"
            tip = text
        self.messages.add_message(text, "error", tip)

    def _on_entries_changed(self, _entry: ReportEntry) -> None:
        has_any = bool(self.report_list.entries())
        self._stack.setCurrentIndex(1 if has_any else 0)
        self.reports_dock.setVisible(has_any or self.reports_dock.isVisible())
        loading = sum(1 for e in self.report_list.entries() if e.state == LOADING)
        if loading:
            self.statusBar().showMessage(f"Loading {pluralize(loading, 'report')}…")
        else:
            self.statusBar().clearMessage()
        self._update_title()

    def _update_title(self) -> None:
        entries = self.report_list.entries()
        if not entries:
            self.setWindowTitle("Strata")
        elif len(entries) == 1:
            self.setWindowTitle(f"{entries[0].name} — Strata")
        else:
            self.setWindowTitle(f"{pluralize(len(entries), 'report')} — Strata")

    # -- drag and drop --------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # Qt's own name
        paths = _local_paths(event.mimeData().urls())
        if not paths:
            event.ignore()
            return
        # Say what the drop would open before it happens (names and magic bytes only).
        open_now = [e.path for e in self.report_list.entries()]
        self._drop_preview = preview = preview_paths(paths, open_now)
        self.drop_overlay.show_preview(preview)
        self.statusBar().showMessage(preview.summary())
        # Accepted even when nothing would open: the move events then refuse the drop
        # (a "no" cursor) and the leave event takes the highlight away.
        event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # Qt's own name
        if self._drop_preview is not None and self._drop_preview.opens_anything:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, _event: QDragLeaveEvent) -> None:  # Qt's own name
        self._end_drag()

    def _end_drag(self) -> None:
        self._drop_preview = None
        self.drop_overlay.hide()
        self.statusBar().clearMessage()

    def dropEvent(self, event: QDropEvent) -> None:  # Qt's own name
        self._end_drag()
        paths = _local_paths(event.mimeData().urls())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_paths(paths)

    # -- view -----------------------------------------------------------------------------

    def fit(self) -> None:
        """Show where the activity is; pressed again, every event of every report."""
        self.timeline.state.toggle_fit()

    def zoom_in(self) -> None:
        """Halve the visible time range around its middle."""
        self.zoom(_ZOOM_FACTOR)

    def zoom_out(self) -> None:
        """Double the visible time range around its middle."""
        self.zoom(1 / _ZOOM_FACTOR)

    def zoom(self, factor: float) -> None:
        """Zoom the timeline by ``factor`` (> 1 zooms in) around the middle of the view."""
        self.timeline.zoom(factor)  # zooming out stops at the data (TimelineState.zoom)

    def show_pin_dialog(self) -> int:
        """Ask for a pattern and pin the rows it matches; return how many were pinned."""
        dialog = PinByNameDialog(self.binding.count_matches, self._pin_pattern, self)
        if not dialog.exec():
            return 0
        return self.pin_by_name(dialog.pattern_text())

    def pin_by_name(self, pattern: str) -> int:
        """Pin every row that ``pattern`` names (:func:`viewer.state.rows.match_tracks`: a
        case-insensitive regular expression on the row's label as shown)."""
        self._pin_pattern = pattern
        count = self.timeline.state.pin_matching(pattern)
        self.statusBar().showMessage(f"Pinned {pluralize(count, 'row')}", 5000)
        return count

    def unpin_all(self) -> None:
        """Unpin every row."""
        self.timeline.state.set_pinned_keys([])

    def collapse_all_groups(self) -> None:
        """Fold every report down to its sections."""
        self.set_groups_collapsed(True)

    def expand_all_groups(self) -> None:
        """Expand every collapsed group."""
        self.set_groups_collapsed(False)

    def choose_nvtx_range(self) -> None:
        """Switch to NVTX alignment and put the cursor in the range name field."""
        self.alignment_bar.focus_nvtx_name()

    def set_groups_collapsed(self, collapsed: bool) -> None:
        """Collapse every report's sections (CPU, processes, CUDA HW), or expand every group."""
        state = self.timeline.state
        if collapsed:
            sections = {t.group[:2] for t in self.binding.tracks() if len(t.group) >= 2}
            state.set_collapsed_groups(sections | set(state.collapsed_groups()))
        else:
            state.set_collapsed_groups([])

    def show_hidden_rows(self) -> None:
        """Show every hidden row again."""
        self.timeline.state.set_hidden_keys([])
        self.binding.save_view_state()

    def _list_every_dock(self) -> None:
        """Give every dock a View menu entry, also one docked by a later panel."""
        listed = set(self._view_menu.actions())
        for dock in self.findChildren(QDockWidget):
            if dock.toggleViewAction() not in listed:
                self._view_menu.addAction(dock.toggleViewAction())

    # -- diff -----------------------------------------------------------------------------

    def set_diff_baseline(self) -> None:
        """Make the reports selected in the Reports panel (else the first) the baseline."""
        entries = self.report_list.entries()
        paths = self.reports_panel.selected_paths() or [e.path for e in entries[:1]]
        if paths:
            self.timeline.state.set_baseline(str(p) for p in paths)
            self.statusBar().showMessage(
                f"Baseline: {', '.join(p.name for p in paths)}. Choose what to compare with it "
                "(Compare with Baseline, Ctrl+Shift+B)", 8000)  # fmt: skip

    def compare_with_baseline(self) -> None:
        """Compare the reports selected in the Reports panel (else the last report that is
        not the baseline) with the baseline."""
        before = set(self.timeline.state.diff().before)
        others = [e.path for e in self.report_list.entries() if str(e.path) not in before]
        self._compare_paths(self.reports_panel.selected_paths() or others[-1:])

    def _compare_paths(self, paths: list[Path]) -> None:
        state = self.timeline.state
        if not state.diff().before:
            self.statusBar().showMessage("Set a baseline first (Set as Baseline, Ctrl+B)", 5000)
            return
        if paths:
            state.compare_with_baseline(str(p) for p in paths)
        stats = self.context.stats
        if stats is not None and state.diff().is_ready:
            stats.panel.set_kind("diff")
            if stats.dock is not None:
                stats.dock.show()
                stats.dock.raise_()

    def toggle_diff_colors(self) -> None:
        """Colour the names that changed on the timeline, or stop."""
        state = self.timeline.state
        if not state.diff().is_ready:
            text = "Nothing to colour: set a baseline and reports to compare with it"
            self.statusBar().showMessage(text, 5000)
        state.set_diff_colored(not state.diff().is_colored)
        self.actions_by_name["diff_colors"].setChecked(state.diff().is_colored)

    def clear_diff(self) -> None:
        """Compare nothing (the timeline's colours go back to normal)."""
        self.timeline.state.clear_diff()

    # -- collectives and anchors -----------------------------------------------------------

    def toggle_collective_overlay(self) -> None:
        """Draw the matched collectives over the timeline, or stop (the user's choice from
        now on: showing the Collectives tab no longer turns it on)."""
        state = self.timeline.state
        self.context.is_collective_overlay_chosen = True
        state.set_collectives_shown(not state.collectives_shown())
        if state.collectives_shown() and state.collectives() is None:
            text = "No collectives matched yet (the Statistics panel's Collectives tab)"
            self.statusBar().showMessage(text, 5000)

    def _on_collectives_changed(self) -> None:
        shown = self.timeline.state.collectives_shown()
        self.actions_by_name["collective_overlay"].setChecked(shown)

    def clear_alignment_anchors(self) -> None:
        """Forget every alignment anchor (an anchor alignment goes back to session start)."""
        self.timeline.state.clear_anchors()
        if self.binding.alignment().mode == "anchor":
            self.alignment_bar.set_alignment("session")

    def _on_diff_changed(self, diff: DiffState) -> None:
        self.reports_panel.show_diff(diff)
        self.actions_by_name["diff_colors"].setChecked(diff.is_colored)

    def export_image_dialog(self) -> Path | None:
        """Ask for a PNG or SVG file name and save the timeline as shown into it."""
        path = image_dialog_path(self, self._last_folder())
        return None if path is None else self.export_image(path)

    def export_image(self, path: str | Path) -> Path | None:
        """Save the timeline as shown to ``path`` (SVG for ``.svg``, else PNG)."""
        inputs = [e.path for e in self.report_list.entries()]
        try:
            out = export_image(self.timeline, path, inputs)
        except StrataError as exc:
            self.messages.add_message(str(exc), "error")
            return None
        self.statusBar().showMessage(f"Saved {out}", 5000)
        return out

    def copy_image(self) -> None:
        """Put the timeline as shown on the clipboard."""
        copy_image(self.timeline)
        self.statusBar().showMessage("Timeline image copied", 3000)

    def show_shortcuts(self) -> None:
        """Show the keyboard shortcuts dialog."""
        ShortcutsDialog(list(self.actions_by_name.values()), self).exec()

    def show_about(self) -> None:
        """Show the About box."""
        QMessageBox.about(self, "About Strata", about_text(__version__))

    def _on_layout_changed(self, report_count: int, row_count: int) -> None:
        events = sum(r.event_count for r in self.binding.shown_reports())
        self._summary_label.setText(
            f"{pluralize(report_count, 'report')} · {pluralize(row_count, 'row')} · "
            f"{pluralize(events, 'event', number=format_count(events))}"
            if report_count
            else "No report"
        )
        shifts = dict(
            zip(
                [r.path for r in self.binding.shown_reports()],
                self.binding.offsets_ns(),
                strict=False,
            )
        )
        self.reports_panel.show_shifts(shifts)

    def _on_view_range_changed(self, t0_ns: int, t1_ns: int) -> None:
        self._range_label.setText(format_range_ns(t0_ns, t1_ns))

    def _on_event_clicked(self, event: EventRef | None) -> None:
        reports = self.binding.shown_reports()
        if event is None or not 0 <= event.report_index < len(reports):
            self.statusBar().clearMessage()
            return
        lines = self.timeline.describe(event)[:4]  # every field: the details pane
        self.statusBar().showMessage("   ·   ".join(f"{k}: {v}" for k, v in lines))

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's own name
        self.binding.save_view_state()
        self.settings.set_last_session(self._user_report_paths())
        self.settings.set_window_layout(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.runner.cancel_all()
        self.runner.wait_for_done(10_000)
        self.recipe_outputs.close_all()
        super().closeEvent(event)


def _local_paths(urls: Iterable[QUrl]) -> list[Path]:
    return [Path(u.toLocalFile()) for u in urls if u.isLocalFile() and u.toLocalFile()]


def fit_into(rect: QRect, available: QRect) -> QRect:
    """Return ``rect`` shrunk to at most ``available``'s size and moved inside it."""
    width, height = min(rect.width(), available.width()), min(rect.height(), available.height())
    left = min(max(rect.left(), available.left()), available.left() + available.width() - width)
    top = min(max(rect.top(), available.top()), available.top() + available.height() - height)
    return QRect(left, top, width, height)


def _fit_to_screen(size: QSize) -> QSize:
    screen = QApplication.primaryScreen()
    if screen is None:
        return size
    available = screen.availableGeometry().size()
    return QSize(min(size.width(), available.width()), min(size.height(), available.height()))
