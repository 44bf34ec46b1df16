"""The main window: menus, tool bars, drag-and-drop, the timeline, the reports panel."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from analysis.cache import cache_root
from analysis.errors import ReportError, StrataError
from analysis.open import REPORT_SUFFIXES
from app.alignment_bar import AlignmentToolBar
from app.dialogs import PinByNameDialog, ShortcutsDialog, about_text
from app.format import format_count, format_range_ns
from app.icon import make_app_icon
from app.jobs import JobRunner
from app.loading import LOADING, ReportEntry, ReportList, build_demo
from app.message_area import MessageArea
from app.reports_panel import ReportsPanel
from app.settings import Settings
from app.timeline_binding import TimelineBinding, TimelineWidget
from viewer.events import EventRef, describe_event

__all__ = ["DEFAULT_SIZE", "MainWindow"]

log = logging.getLogger(__name__)

DEFAULT_SIZE = QSize(1600, 1000)
_ZOOM_FACTOR = 2.0
_EMPTY_TEXT = (
    "<p style='font-size:15pt'>Drop Nsight Systems reports or folders here</p>"
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
    """

    def __init__(self, settings: Settings | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings or Settings()
        self.runner = JobRunner(self)
        self.report_list = ReportList(self.runner, self)
        self.timeline = TimelineWidget(self)
        self.binding = TimelineBinding(
            self.report_list, self.timeline, self.runner, self.settings, self
        )
        self.messages = MessageArea(self)
        self.reports_panel = ReportsPanel(self.report_list, self)
        self.alignment_bar = AlignmentToolBar(self)
        self._pin_pattern = ""
        self.actions_by_name: dict[str, QAction] = {}
        self.setWindowTitle("Strata")
        self.setWindowIcon(make_app_icon())
        self.setAcceptDrops(True)
        self._build_central()
        self._build_docks()
        self._build_actions()
        self._build_menus()
        self._build_tool_bars()
        self._build_status_bar()
        self._connect()
        self._restore_layout()
        self.alignment_bar.set_alignment(
            self.settings.alignment_mode(), self.settings.alignment_nvtx_name()
        )

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
        # Drops anywhere in the window open files; the timeline's views must not eat them.
        for widget in [self.timeline, *self.timeline.findChildren(QWidget)]:
            widget.setAcceptDrops(False)

    def _build_docks(self) -> None:
        self.reports_dock = QDockWidget("Reports", self)
        self.reports_dock.setObjectName("reportsDock")
        self.reports_dock.setWidget(self.reports_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.reports_dock)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.reports_dock], [175], Qt.Orientation.Vertical)

    def add_side_panel(self, widget: QWidget, title: str, object_name: str) -> QDockWidget:
        """Dock ``widget`` on the right (the stats panel's place) and return its dock."""
        dock = QDockWidget(title, self)
        dock.setObjectName(object_name)
        dock.setWidget(widget)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._view_menu.addAction(dock.toggleViewAction())
        return dock

    def _action(self, name: str, text: str, slot, shortcuts=(), tip: str = "") -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcuts:
            action.setShortcuts([QKeySequence(s) for s in shortcuts])
        action.setStatusTip(tip)
        action.setToolTip(f"{tip or text.replace('&', '')}  ({action.shortcut().toString()})")
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work even when the menu bar is hidden
        self.actions_by_name[name] = action
        return action

    def _build_actions(self) -> None:
        a = self._action
        a("open", "&Open…", self._on_open_triggered, ["Ctrl+O"], "Open report files")
        a(
            "open_folder",
            "Open &Folder…",
            self._on_open_folder_triggered,
            ["Ctrl+Shift+O"],
            "Open every report in a folder",
        )
        a("open_demo", "Open &Demo", self.open_demo, [], "Open the built-in demo reports")
        a(
            "close_report",
            "&Close Report",
            self._on_close_report_triggered,
            ["Ctrl+W"],
            "Close the report selected in the Reports panel (or the last one)",
        )
        a("close_all", "Close &All Reports", self.report_list.clear, ["Ctrl+Shift+W"])
        a("quit", "&Quit", self.close, ["Ctrl+Q"])
        a("fit", "&Fit", self.timeline.fit, ["F"], "Show the whole time range")
        a("zoom_in", "Zoom &In", lambda: self.zoom(_ZOOM_FACTOR), ["Ctrl++", "+", "="])
        a("zoom_out", "Zoom &Out", lambda: self.zoom(1 / _ZOOM_FACTOR), ["Ctrl+-", "-"])
        a(
            "pin_by_name",
            "&Pin by Name…",
            self.show_pin_dialog,
            ["Ctrl+P"],
            "Pin every row whose name matches a regular expression",
        )
        a("unpin_all", "&Unpin All", lambda: self.timeline.set_pinned_keys([]), [])
        a("show_hidden", "Show &Hidden Rows", self._on_show_hidden_triggered, ["Ctrl+Shift+H"])
        a(
            "collapse_all",
            "&Collapse All Groups",
            lambda: self.set_groups_collapsed(True),
            ["Ctrl+Shift+C"],
            "Fold every report down to its sections (CPU, processes, GPUs)",
        )
        a(
            "expand_all",
            "&Expand All Groups",
            lambda: self.set_groups_collapsed(False),
            ["Ctrl+Shift+E"],
        )
        a("choose_nvtx", "Align on NVTX Range…", self.alignment_bar.focus_nvtx_name, ["Ctrl+L"])
        a("shortcuts", "&Keyboard Shortcuts", self.show_shortcuts, ["F1"])
        a("about", "&About Strata", self.show_about, [])

    def _build_menus(self) -> None:
        acts = self.actions_by_name
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addActions([acts["open"], acts["open_folder"], acts["open_demo"]])
        self._recent_menu = file_menu.addMenu("Open &Recent")
        self._recent_menu.aboutToShow.connect(self._on_recent_menu_about_to_show)
        file_menu.addSeparator()
        file_menu.addActions([acts["close_report"], acts["close_all"]])
        file_menu.addSeparator()
        file_menu.addAction(acts["quit"])
        self._view_menu = view = self.menuBar().addMenu("&View")
        view.addActions([acts["fit"], acts["zoom_in"], acts["zoom_out"]])
        view.addSeparator()
        align = view.addMenu("&Alignment")
        align.addActions(self.alignment_bar.mode_actions())
        align.addSeparator()
        align.addAction(acts["choose_nvtx"])
        view.addSeparator()
        view.addActions([acts["pin_by_name"], acts["unpin_all"], acts["show_hidden"]])
        view.addActions([acts["collapse_all"], acts["expand_all"]])
        view.addSeparator()
        view.addAction(self.reports_dock.toggleViewAction())
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addActions([acts["shortcuts"], acts["about"]])

    def _build_tool_bars(self) -> None:
        bar = QToolBar("Main", self)
        bar.setObjectName("mainToolBar")
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        acts = self.actions_by_name
        bar.addActions([acts["open"], acts["open_folder"]])
        bar.addSeparator()
        bar.addActions([acts["fit"], acts["zoom_in"], acts["zoom_out"]])
        bar.addSeparator()
        bar.addAction(acts["pin_by_name"])
        self.addToolBar(bar)
        self.addToolBar(self.alignment_bar)

    def _build_status_bar(self) -> None:
        self._summary_label = QLabel("No report", self)
        self._range_label = QLabel("", self)
        self.statusBar().addPermanentWidget(self._range_label)
        self.statusBar().addPermanentWidget(self._summary_label)

    def _connect(self) -> None:
        self.report_list.report_failed.connect(self._on_report_failed)
        self.report_list.report_loaded.connect(self._on_report_loaded)
        self.report_list.entry_added.connect(self._on_entries_changed)
        self.report_list.entry_removed.connect(self._on_entries_changed)
        self.reports_panel.close_requested.connect(self.report_list.remove)
        self.alignment_bar.alignment_changed.connect(self.binding.set_alignment)
        self.binding.nvtx_names_changed.connect(self.alignment_bar.set_nvtx_names)
        self.binding.layout_changed.connect(self._on_layout_changed)
        self.binding.problem_found.connect(lambda text: self.messages.add_message(text, "warning"))
        self.timeline.view_range_changed.connect(self._on_view_range_changed)
        self.timeline.event_clicked.connect(self._on_event_clicked)

    def _restore_layout(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(_fit_to_screen(DEFAULT_SIZE))
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
        job = self.runner.submit(build_demo, channel="demo")
        job.finished.connect(self._on_demo_built)
        job.failed.connect(lambda exc: self._on_report_failed(Path("demo"), exc))

    def _on_demo_built(self, paths: list[Path]) -> None:
        self.statusBar().clearMessage()
        self.open_paths(paths)

    def _on_open_triggered(self) -> None:
        patterns = " ".join(f"*{s}" for s in REPORT_SUFFIXES)
        files, _ = QFileDialog.getOpenFileNames(
            self,
            "Open reports",
            self._last_folder(),
            f"Nsight Systems reports ({patterns});;All files (*)",
        )
        self.open_paths(files)

    def _on_open_folder_triggered(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Open a folder of reports", self._last_folder()
        )
        if folder:
            self.open_paths([folder])

    def _last_folder(self) -> str:
        recent = self.settings.recent_files()
        return str(Path(recent[0]).parent) if recent else str(Path.home())

    def _on_close_report_triggered(self) -> None:
        path = self.reports_panel.selected_path()
        entries = self.report_list.entries()
        if path is None and entries:
            path = entries[-1].path
        if path is not None:
            self.report_list.remove(path)

    def _on_recent_menu_about_to_show(self) -> None:
        menu = self._recent_menu
        menu.clear()
        recent = self.settings.recent_files()
        for path in recent:
            action = menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _checked=False, p=path: self._open_recent(p))
        if recent:
            menu.addSeparator()
            menu.addAction("Clear Recent", self.settings.clear_recent_files)
        else:
            menu.addAction("No recent reports").setEnabled(False)

    def _open_recent(self, path: str) -> None:
        if not Path(path).exists():
            self.settings.remove_recent_file(path)
        self.open_paths([path])

    def _on_report_loaded(self, entry: ReportEntry) -> None:
        self._on_entries_changed(entry)
        if cache_root() not in entry.path.parents:  # not the demo or an nsys export
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
            self.statusBar().showMessage(f"Loading {loading} report{'s' if loading > 1 else ''}…")
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
            self.setWindowTitle(f"{len(entries)} reports — Strata")

    # -- drag and drop --------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # Qt's own name
        if _local_paths(event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # Qt's own name
        if _local_paths(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # Qt's own name
        paths = _local_paths(event.mimeData().urls())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_paths(paths)

    # -- view -----------------------------------------------------------------------------

    def zoom(self, factor: float) -> None:
        """Zoom the timeline by ``factor`` (> 1 zooms in) around the middle of the view."""
        t0_ns, t1_ns = self.timeline.view_range()
        middle_ns, half_ns = (t0_ns + t1_ns) / 2, max((t1_ns - t0_ns) / (2 * factor), 50)
        self.timeline.set_view_range(int(middle_ns - half_ns), int(middle_ns + half_ns))

    def show_pin_dialog(self) -> int:
        """Ask for a pattern and pin the rows it matches; return how many were pinned."""
        dialog = PinByNameDialog(self.binding.count_matches, self._pin_pattern, self)
        if not dialog.exec():
            return 0
        return self.pin_by_name(dialog.pattern_text())

    def pin_by_name(self, pattern: str) -> int:
        """Pin every row whose name matches ``pattern`` (case-insensitive regular expression)."""
        self._pin_pattern = pattern
        count = self.timeline.pin_matching(f"(?i){pattern}")
        self.statusBar().showMessage(f"Pinned {count} row{'s' if count != 1 else ''}", 5000)
        return count

    def set_groups_collapsed(self, collapsed: bool) -> None:
        """Collapse every report's sections (CPU, processes, CUDA HW), or expand every group."""
        if collapsed:
            paths = sorted({t.group[:2] for t in self.binding.tracks() if len(t.group) >= 2})
        else:
            paths = self.timeline.collapsed_groups()
        for path in paths:
            self.timeline.set_collapsed(path, collapsed)

    def _on_show_hidden_triggered(self) -> None:
        self.timeline.set_hidden_keys([])
        self.binding.save_view_state()

    def show_shortcuts(self) -> None:
        ShortcutsDialog(list(self.actions_by_name.values()), self).exec()

    def show_about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = about_text(version("strata"))
        except PackageNotFoundError:
            text = about_text("(development)")
        QMessageBox.about(self, "About Strata", text)

    def _on_layout_changed(self, report_count: int, row_count: int) -> None:
        events = sum(r.event_count for r in self.binding.shown_reports())
        self._summary_label.setText(
            f"{report_count} report{'s' if report_count != 1 else ''} · {row_count} rows · "
            f"{format_count(events)} events"
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
        track = next((t for t in self.binding.tracks() if t.key == event.track_key), None)
        row_label = track.path if track is not None else reports[event.report_index].name
        offset_ns = self.binding.offsets_ns()[event.report_index]
        lines = describe_event(reports[event.report_index], event, row_label, offset_ns)
        self.statusBar().showMessage("   ·   ".join(f"{k}: {v}" for k, v in lines))

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's own name
        self.binding.save_view_state()
        self.settings.set_window_layout(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.runner.cancel_all()
        self.runner.wait_for_done(10_000)
        super().closeEvent(event)


def _local_paths(urls: Iterable[QUrl]) -> list[Path]:
    return [Path(u.toLocalFile()) for u in urls if u.isLocalFile() and u.toLocalFile()]


def _fit_to_screen(size: QSize) -> QSize:
    screen = QApplication.primaryScreen()
    if screen is None:
        return size
    available = screen.availableGeometry().size()
    return QSize(min(size.width(), available.width()), min(size.height(), available.height()))
