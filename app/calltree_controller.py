"""Wire the call-tree panel to the shown reports and the timeline selection.

The selection (time range and rows) drives the tree as it drives the stats panel: with a
selection, its samples (of the selected threads' or cores' rows; every sample when no such
row is selected); without one, every sample of the run. Trees are built on a worker
(:class:`app.jobs.JobRunner`, one channel: a newer request supersedes a running one); each
report's stacks are computed once per report set (``ReportSet.derived``).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from strata.analysis.calltree import CallTree, sample_stacks, selection_tree
from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import pluralize
from strata.app.context import AppContext
from strata.app.stats_jobs import error_text
from strata.viewer.calltree_view import CallTreePanel

__all__ = ["CallTreeController", "install_call_tree"]


def _stacks(reports: ReportSet) -> list:
    return [sample_stacks(report) for report in reports.reports]


class CallTreeController(QObject):
    """Keep a :class:`CallTreePanel` in step with the reports and the selection.

    Signals
    -------
    tree_ready(object)
        The tree now shown (:class:`analysis.calltree.CallTree`).
    """

    tree_ready = Signal(object)

    def __init__(self, context: AppContext, panel: CallTreePanel) -> None:
        super().__init__(context.window)
        self._context, self.panel = context, panel
        context.binding.layout_changed.connect(lambda *_a: self.request())
        context.state.selection_changed.connect(lambda *_a: self.request())
        panel.mode_changed.connect(lambda _b: self.request())
        panel.report_changed.connect(lambda _r: self.request())

    def request(self) -> None:
        """Rebuild the tree for the current selection and mode (on a worker)."""
        binding = self._context.binding
        reports = binding.shown_set()
        if not len(reports) or any(not r.complete for r in reports.reports):
            self.panel.show_tree(None, None, "No CPU samples")
            return
        self.panel.set_reports(list(reports.labels), [str(r.path) for r in reports.reports])
        only = self.panel.report_index()
        offsets = [int(o) for o in binding.offsets_ns()]
        selection = self._context.state.selection()
        tracks = binding.tracks()
        rows = []
        window = (None, None)
        if selection is not None:
            window = selection.time_range
            chosen = set(selection.rows)
            rows = [t for t in tracks if t.key in chosen]
        bottom_up = self.panel.is_bottom_up()

        def work(_progress, _cancel) -> tuple[CallTree, CallTree, str]:
            stacks = reports.derived(("calltree", "stacks"), _stacks)
            tree = selection_tree(reports.reports, stacks, rows, window, offsets, bottom_up, only)
            flame = tree
            if bottom_up:
                flame = selection_tree(reports.reports, stacks, rows, window, offsets, False, only)
            where = "the selection" if selection is not None else "the whole run"
            if only is None and len(reports) > 1:
                where += f" of {pluralize(len(reports), 'report')} together"
            chained = int(tree.self_count.sum())
            status = f"{pluralize(tree.samples, 'sample')} in {where}"
            if chained != tree.samples:
                status += f" ({chained:,} with a call chain)"
            return tree, flame, status

        job = self._context.runner.submit(work, channel="calltree")
        job.finished.connect(self._on_ready)
        job.failed.connect(lambda exc: self.panel.status.setText(f"Failed: {error_text(exc)}"))

    def _on_ready(self, result: tuple[CallTree, CallTree, str]) -> None:
        tree, flame, status = result
        if tree.bottom_up != self.panel.is_bottom_up():
            return  # the mode changed meanwhile: its own request follows
        self.panel.show_tree(tree, flame, status)
        self.tree_ready.emit(tree)


def install_call_tree(context: AppContext) -> CallTreeController:
    """Dock the call-tree panel beside the stats panel (``context.stats``, when installed);
    return its controller."""
    panel = CallTreePanel(context.window)
    dock = context.add_side_panel(panel, "Call tree", "callTreeDock")
    stats = None if context.stats is None else context.stats.dock
    if stats is not None:
        context.window.tabifyDockWidget(stats, dock)
        stats.raise_()
    controller = CallTreeController(context, panel)
    controller.request()
    return controller
