"""Wire the stats panel to the reports, the timeline state and the job runner.

``install_stats_panel(window)`` docks a :class:`~viewer.stats_panel.StatsPanel` on the right
of the main window and returns the :class:`StatsController`, which follows the shown reports
and their offsets (``TimelineBinding.layout_changed``) and hands them to its three parts:

* :class:`~app.stats_table.StatsTable` — the current tab's table for the current scope (whole
  run, visible range, the timeline state's selection), on a worker through a per-kind
  :class:`~analysis.window_stats.WindowIndex` (built once per report set and offsets);
* :class:`~app.stats_highlight.NameHighlighter` — a clicked name's instances stand out (others
  dimmed), Next / Previous step through them, a double-click zooms to the longest, the
  histogram's region selects instances by duration;
* :class:`~app.stats_outliers.OutlierList` — outliers found once per report set (scored over
  the whole run), listed and marked for the panel's scope;
* :class:`~app.stats_expert.ExpertList` — the ``nsys analyze`` rules' findings, found once per
  report set and listed in the Expert tab; choosing one shows its event or gap;
* :class:`~app.stats_collectives.CollectiveList` — collectives matched across the ranks,
  listed in the Collectives tab; choosing one centres it across every rank.
* :class:`~app.stats_ops.OpsList` — the DLProf aggregation per op, op type or group node in
  the Ops tab (once per report set, when first shown); choosing a row highlights its events.
* :class:`~app.stats_diff.DiffList` — the diff of the baseline reports and the compared ones
  in the Diff tab, and the changed names' colours on the timeline.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow

from strata.analysis.alignment import TimeAlignment
from strata.analysis.names import kernel_display_names
from strata.analysis.outliers import Outliers
from strata.app.stats_collectives import CollectiveList
from strata.app.stats_diff import DiffList
from strata.app.stats_expert import ExpertList
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports
from strata.app.stats_ops import OpsList
from strata.app.stats_outliers import MAX_MARKS, OutlierList
from strata.app.stats_table import StatsTable
from strata.viewer.state import Scope
from strata.viewer.stats_panel import COLLECTIVES_TAB, StatsPanel

__all__ = ["MAX_MARKS", "StatsController", "install_stats_panel"]

_DOCK_WIDTH_PX = 560


class StatsController(QObject):
    """Keep a :class:`StatsPanel` in step with a main window's reports and timeline state.

    Attributes
    ----------
    table, highlighter, outlier_list, expert_list, collective_list, diff_list
        The parts (see the module docstring).

    Signals
    -------
    table_ready(str), outliers_ready(object), instances_changed(object), findings_ready(object),
    collectives_ready(object)
        Relayed from :class:`StatsTable`, :class:`OutlierList`, :class:`NameHighlighter`,
        :class:`ExpertList` and :class:`CollectiveList`.
    failed(str)
        A job of any part failed (one line).
    """

    table_ready = Signal(str)
    outliers_ready = Signal(object)
    instances_changed = Signal(object)
    findings_ready = Signal(object)
    collectives_ready = Signal(object)
    failed = Signal(str)

    def __init__(self, window: QMainWindow, panel: StatsPanel, dock: QDockWidget | None = None):
        super().__init__(window)
        self._window, self.panel, self.dock = window, panel, dock
        self.highlighter = NameHighlighter(panel, window.timeline, window.runner)
        self.table = StatsTable(panel, window.timeline.state, window.runner, self.highlighter)
        self.outlier_list = OutlierList(
            panel, window.runner, self.highlighter, window.timeline.state
        )
        self.expert_list = ExpertList(panel, window.runner, self.highlighter, window.timeline)
        anchor_rows = getattr(window.binding, "anchor_rows", dict)
        self.collective_list = CollectiveList(panel, window.runner, window.timeline, anchor_rows)
        self.diff_list = DiffList(panel, window.runner, self.highlighter, window.timeline.state,
                                  self._path_of, self._scheme)  # fmt: skip
        self.ops_list = OpsList(panel, window.runner, self.highlighter)  # wires its own signals
        self._shown = ShownReports()
        self._connect()

    def _connect(self) -> None:
        panel, table, highlighter = self.panel, self.table, self.highlighter
        self._window.binding.layout_changed.connect(self._on_layout_changed)
        panel.scope_changed.connect(self._on_scope_changed)
        panel.kind_changed.connect(lambda _kind: table.request_stats())
        panel.kind_changed.connect(self._on_kind_changed)
        panel.name_activated.connect(
            lambda name, kind, group: highlighter.activate_name(name, kind, group=group)
        )
        panel.name_double_clicked.connect(highlighter.zoom_to_longest)
        panel.instance_step.connect(highlighter.step)
        panel.outlier_selected.connect(self.outlier_list.focus_outlier)
        panel.finding_selected.connect(self.expert_list.focus_finding)
        panel.collective_selected.connect(self.collective_list.focus_collective)
        panel.export_requested.connect(self._on_export_requested)
        panel.histogram.range_selected.connect(highlighter.select_durations)
        table.table_ready.connect(self.table_ready)
        highlighter.instances_changed.connect(self.instances_changed)
        self.outlier_list.outliers_ready.connect(self.outliers_ready)
        self.expert_list.findings_ready.connect(self.findings_ready)
        self.collective_list.collectives_ready.connect(self.collectives_ready)
        choice = getattr(self._window, "kernel_names", None)
        if choice is not None:
            choice.variant_changed.connect(self._show_kernel_names)
        report_list = getattr(self._window, "report_list", None)
        if report_list is not None:
            report_list.entry_removed.connect(lambda e: self.diff_list.forget_report(e.path))
            # At once, not when the smaller set is laid out: its index builds are useless.
            report_list.entry_removed.connect(lambda _e: self.table.cancel_builds())
        parts = (table, highlighter, self.outlier_list, self.expert_list, self.collective_list,
                 self.diff_list, self.ops_list)  # fmt: skip
        for part in parts:
            part.failed.connect(self.failed)

    def _on_layout_changed(self, *_args) -> None:
        binding = self._window.binding
        reports = tuple(binding.shown_reports())
        pending = [r.name for r in reports if not r.complete]
        if pending:
            self._wait_for(pending)
            return
        offsets = tuple(int(o) for o in binding.offsets_ns())
        old = self._shown.reports
        is_new = len(reports) != len(old) or any(
            a is not b for a, b in zip(reports, old, strict=False)
        )
        if not is_new and offsets == self._shown.offsets:
            self.highlighter.push_highlights()  # set_data dropped them
            return
        shown = binding.shown_set()
        self._shown = ShownReports(shown, offsets, tuple(shown.labels), _alignment_of(binding))
        if is_new:
            self.panel.set_reports(list(self._shown.labels), [str(r.path) for r in reports])
            self._show_kernel_names()
        self.table.set_shown(self._shown)
        self.highlighter.set_shown(self._shown, is_new)
        self.outlier_list.set_shown(self._shown, is_new)
        self.expert_list.set_shown(self._shown, is_new)
        self.collective_list.set_shown(self._shown, is_new)
        self.diff_list.set_shown(self._shown, is_new)
        self.ops_list.set_shown(self._shown, is_new)
        self.table.request_stats()

    def _show_kernel_names(self, *_args) -> None:
        """Name kernels in the tables as View ▸ Kernel Names says (base names by default)."""
        choice = getattr(self._window, "kernel_names", None)
        variant = "base" if choice is None else choice.variant()
        self.panel.set_name_display(kernel_display_names(self._shown.reports, variant))

    def _wait_for(self, names: list[str]) -> None:
        """Show no statistics while a report is partial (a progressive open).

        The panel's numbers are totals over whole reports; those of a partial report (its
        CUDA API, NVTX... tables still empty) would read as final ones, and its outliers
        would be scored against incomplete populations. So every part drops what it
        showed and the panel says what it waits for; the complete set recomputes it all.
        """
        self._shown = ShownReports()
        self.panel.set_reports([])
        self.table.set_shown(self._shown)
        self.highlighter.set_shown(self._shown, True)
        self.outlier_list.set_shown(self._shown, True)
        self.expert_list.set_shown(self._shown, True)
        self.collective_list.set_shown(self._shown, True)
        self.diff_list.set_shown(self._shown, True)
        self.ops_list.set_shown(self._shown, True)
        self.panel.show_loading(_loading_text(names))

    def _on_kind_changed(self, kind: str) -> None:
        """The Collectives tab turns the collectives overlay on, unless the user chose."""
        if kind == COLLECTIVES_TAB and not getattr(self._window, "is_collective_overlay_chosen",
                                                   False):  # fmt: skip
            self._window.timeline.state.set_collectives_shown(True)

    def _on_scope_changed(self, _scope: Scope) -> None:
        self.highlighter.refresh()
        self.table.request_stats()
        self.outlier_list.refresh()

    def _path_of(self, report) -> Path | None:
        """The path the user opened ``report`` from (what the diff names reports by)."""
        report_list = getattr(self._window, "report_list", None)
        for entry in report_list.entries() if report_list is not None else ():
            if entry.report is report:
                return entry.path
        return None

    def _scheme(self) -> str:
        switcher = getattr(self._window, "theme_switcher", None)
        return switcher.scheme() if switcher is not None else "dark"

    # -- what app/ and the tests ask --------------------------------------------------------

    def request_stats(self) -> None:
        """Recompute the current tab for the current scope (coalesced, on a worker)."""
        self.table.request_stats()

    def outliers(self) -> Outliers | None:
        return self.outlier_list.outliers()

    def focus_outlier(self, record: dict) -> None:
        """Show an outlier on the timeline (see :meth:`OutlierList.focus_outlier`)."""
        self.outlier_list.focus_outlier(record)

    # -- export ---------------------------------------------------------------------------

    def export_csv(self, path: str | Path) -> Path:
        """Write the rows the panel shows (filtered, sorted) to ``path`` as CSV."""
        path = Path(path)
        path.write_text(self.panel.visible_rows_text(","), encoding="utf-8")
        return path

    def _on_export_requested(self, suggested: str, _text: str) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.panel, "Export CSV", str(Path.home() / suggested), "CSV files (*.csv)"
        )
        if path:
            try:
                self.export_csv(path)
            except OSError as exc:
                self.panel.set_status(f"Could not write {path}: {exc.strerror or exc}")


def _loading_text(names: list[str]) -> str:
    return f"Loading {', '.join(names)}… statistics follow once it is read whole"


def install_stats_panel(window: QMainWindow) -> StatsController:
    """Dock the stats panel on the right of ``window`` and wire it; return the controller.

    ``window`` must have ``timeline``, ``runner`` (:class:`app.jobs.JobRunner`) and
    ``binding`` (:class:`app.timeline_binding.TimelineBinding`), as :class:`MainWindow`.
    """
    panel = StatsPanel(window)
    if hasattr(window, "add_side_panel"):
        dock = window.add_side_panel(panel, "Statistics", "statsDock")
    else:
        dock = QDockWidget("Statistics", window)
        dock.setObjectName("statsDock")
        dock.setWidget(panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resizeDocks([dock], [_DOCK_WIDTH_PX], Qt.Orientation.Horizontal)
    controller = StatsController(window, panel, dock)
    controller._on_layout_changed()  # reports already shown
    return controller


def _alignment_of(binding) -> TimeAlignment:
    """How the binding's offsets were made: its alignment, or session starts where that
    alignment could not be done (the binding then falls back to them, the shifts kept)."""
    alignment = binding.alignment() if hasattr(binding, "alignment") else TimeAlignment()
    problem = binding.alignment_problem() if hasattr(binding, "alignment_problem") else ""
    if problem:
        return TimeAlignment("session", None, alignment.manual_ns)
    return alignment
