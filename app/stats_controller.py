"""Wire the stats panel to the reports, the timeline state and the job runner.

``install_stats_panel(window)`` docks a :class:`~viewer.stats_panel.StatsPanel` showing the
registered tabs (:func:`app.stats_tabs.stats_tabs`) on the right of the main window and
returns the :class:`StatsController`, which follows the shown reports and their offsets
(``TimelineBinding.layout_changed``) and hands them to its parts:

* :class:`~app.stats_table.StatsTable` — the current summary tab's table for the current
  scope (whole run, visible range, the timeline state's selection), on a worker through a
  per-kind :class:`~analysis.window_stats.WindowIndex` (built once per report set and
  offsets);
* :class:`~app.stats_highlight.NameHighlighter` — a clicked name's instances stand out (others
  dimmed), Next / Previous step through them, a double-click zooms to the longest, the
  histogram's region selects instances by duration;
* one :class:`~app.stats_list.ListTab` (or the subclass the tab names) per list tab — the
  Outliers, Expert, Collectives, Ops and Diff tabs (:mod:`app.stats_outliers`,
  :mod:`app.stats_expert`, ...) and any tab registered since: each computes its rows on a
  worker and reacts to a chosen row.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QFileDialog

from strata.analysis.alignment import TimeAlignment
from strata.analysis.names import kernel_display_names
from strata.analysis.outliers import Outliers
from strata.app.context import AppContext
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports
from strata.app.stats_list import ListTab, TabContext
from strata.app.stats_outliers import MAX_MARKS
from strata.app.stats_table import StatsTable
from strata.app.stats_tabs import stats_tabs
from strata.viewer.state import Scope
from strata.viewer.stats_panel import StatsPanel

__all__ = ["MAX_MARKS", "StatsController", "install_stats_panel"]

_DOCK_WIDTH_PX = 560
#: The built-in list tabs' ``ready`` under the names the controller relayed them by.
_RELAYED = {"outliers": "outliers_ready", "expert": "findings_ready",
            "collectives": "collectives_ready"}  # fmt: skip


class StatsController(QObject):
    """Keep a :class:`StatsPanel` in step with a main window's reports and timeline state.

    Attributes
    ----------
    table, highlighter
        The summaries' table and the highlighted name (see the module docstring).
    lists
        The running list tabs by id (:class:`~app.stats_list.ListTab`).

    Signals
    -------
    table_ready(str), instances_changed(object)
        Relayed from :class:`StatsTable` and :class:`NameHighlighter`.
    tab_ready(str, object)
        A list tab listed a new result: (tab id, result).
    outliers_ready(object), findings_ready(object), collectives_ready(object)
        The Outliers, Expert and Collectives tabs' results (as :attr:`tab_ready`).
    failed(str)
        A job of any part failed (one line).
    """

    table_ready = Signal(str)
    tab_ready = Signal(str, object)
    outliers_ready = Signal(object)
    instances_changed = Signal(object)
    findings_ready = Signal(object)
    collectives_ready = Signal(object)
    failed = Signal(str)

    def __init__(self, context: AppContext, panel: StatsPanel, dock: QDockWidget | None = None):
        super().__init__(context.window)
        self._context, self.panel, self.dock = context, panel, dock
        self.highlighter = NameHighlighter(panel, context.timeline, context.runner)
        self.table = StatsTable(panel, context.state, context.runner, self.highlighter)
        tabs = TabContext(panel, context.runner, self.highlighter, context.timeline, context)
        self.lists: dict[str, ListTab] = {
            tab.id: (tab.lifecycle or ListTab)(tab, tabs)
            for tab in panel.stats_tabs()
            if not tab.is_summary
        }
        self._shown = ShownReports()
        self._connect()

    def _connect(self) -> None:
        panel, table, highlighter = self.panel, self.table, self.highlighter
        self._context.binding.layout_changed.connect(self._on_layout_changed)
        panel.scope_changed.connect(self._on_scope_changed)
        panel.kind_changed.connect(lambda _kind: table.request_stats())
        panel.name_activated.connect(
            lambda name, kind, group: highlighter.activate_name(name, kind, group=group)
        )
        panel.name_double_clicked.connect(highlighter.zoom_to_longest)
        panel.instance_step.connect(highlighter.step)
        panel.export_requested.connect(self._on_export_requested)
        panel.histogram.range_selected.connect(highlighter.select_durations)
        table.table_ready.connect(self.table_ready)
        highlighter.instances_changed.connect(self.instances_changed)
        for tab_id, part in self.lists.items():
            part.ready.connect(lambda result, tab_id=tab_id: self.tab_ready.emit(tab_id, result))
            if tab_id in _RELAYED:
                part.ready.connect(getattr(self, _RELAYED[tab_id]))
        choice = self._context.kernel_names
        if choice is not None:
            choice.variant_changed.connect(self._show_kernel_names)
        # At once, not when the smaller set is laid out: its index builds are useless.
        self._context.report_list.entry_removed.connect(lambda _e: self.table.cancel_builds())
        for part in (table, highlighter, *self.lists.values()):
            part.failed.connect(self.failed)

    def _on_layout_changed(self, *_args) -> None:
        binding = self._context.binding
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
        for part in self.lists.values():
            part.set_shown(self._shown, is_new)
        self.table.request_stats()

    def _show_kernel_names(self, *_args) -> None:
        """Name kernels in the tables as View ▸ Kernel Names says (base names by default)."""
        choice = self._context.kernel_names
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
        for part in self.lists.values():
            part.set_shown(self._shown, True)
        self.panel.show_loading(_loading_text(names))

    def _on_scope_changed(self, _scope: Scope) -> None:
        # The list tabs follow the scope themselves (as their descriptions say).
        self.highlighter.refresh()
        self.table.request_stats()

    # -- what app/ and the tests ask --------------------------------------------------------

    def request_stats(self) -> None:
        """Recompute the current tab for the current scope (coalesced, on a worker)."""
        self.table.request_stats()

    # The built-in list tabs by the names app/, resources/ and the tests know them by.
    @property
    def outlier_list(self) -> ListTab:
        return self.lists["outliers"]

    @property
    def expert_list(self) -> ListTab:
        return self.lists["expert"]

    @property
    def collective_list(self) -> ListTab:
        return self.lists["collectives"]

    @property
    def ops_list(self) -> ListTab:
        return self.lists["ops"]

    @property
    def diff_list(self) -> ListTab:
        return self.lists["diff"]

    def outliers(self) -> Outliers | None:
        return self.outlier_list.result()

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


def install_stats_panel(context: AppContext) -> StatsController:
    """Dock the stats panel on the right of ``context.window`` and wire it; return the
    controller (which works with ``context``, never the window's attributes)."""
    window = context.window
    panel = StatsPanel(window, stats_tabs())
    if hasattr(window, "add_side_panel"):
        dock = window.add_side_panel(panel, "Statistics", "statsDock")
    else:
        dock = QDockWidget("Statistics", window)
        dock.setObjectName("statsDock")
        dock.setWidget(panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resizeDocks([dock], [_DOCK_WIDTH_PX], Qt.Orientation.Horizontal)
    controller = StatsController(context, panel, dock)
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
