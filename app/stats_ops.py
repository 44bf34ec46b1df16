"""The stats panel's Ops tab: the DLProf aggregation of the shown reports (``main.py dlprof``'s
tables, :mod:`analysis.dlprof`) per op, op type or group node, largest GPU time first;
choosing a row highlights its op instances' NVTX ranges (or calls) and the GPU work they
launched, others dimmed, and centres the longest instance.

The aggregation is computed once per set of reports, on a worker, when the tab is first shown
(it walks every NVTX range and CUDA call: no cost for those who never look). Like the Expert
tab it covers the whole reports, as DLProf aggregates whole iterations, not the panel's time
range; the panel's report selector picks whose ops are listed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.dlprof.reports import DlprofResult, set_results
from strata.analysis.dlprof.views import (
    EVENT_TABLES,
    OpEvents,
    SummaryFigures,
    op_events,
    summary_figures,
    view_frame,
)
from strata.analysis.timefmt import pluralize
from strata.app.event_lookup import instance_refs
from strata.app.jobs import JobRunner
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports, error_text, run_for_set
from strata.viewer.stats_panel import OPS_TAB, StatsPanel

__all__ = ["OpsList"]

_NOUNS = {"op": "op", "op_type": "op type", "group_node": "group node"}


class OpsList(QObject):
    """Aggregate the shown reports' ops, list one view of them and show a chosen row's events.

    Signals
    -------
    ops_ready(object)
        The aggregation of the shown reports is listed: a list of
        :class:`~analysis.dlprof.reports.DlprofResult`, one per report.
    op_focused(object)
        A chosen row's events are highlighted: ``(report_index, OpEvents)``.
    failed(str)
        The aggregation or a row's events could not be computed (one line).
    """

    ops_ready = Signal(object)
    op_focused = Signal(object)
    failed = Signal(str)

    def __init__(self, panel: StatsPanel, runner: JobRunner, highlighter: NameHighlighter):
        super().__init__(panel)
        self._panel, self._runner, self._highlighter = panel, runner, highlighter
        self._shown = ShownReports()
        self._results: list[DlprofResult] | None = None
        self._asked: tuple | None = None  # the set whose aggregation was started
        panel.kind_changed.connect(self._on_kind_changed)
        panel.ops_view_changed.connect(lambda _view: self._show())
        panel.scope_changed.connect(lambda _scope: self._show())
        panel.op_selected.connect(self.focus_op)

    def results(self) -> list[DlprofResult] | None:
        """The aggregation of the shown reports (None: not computed yet)."""
        return self._results

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set is aggregated again once the tab is shown."""
        self._shown = shown
        if not is_new:
            return
        self._results, self._asked = None, None
        if self._panel.kind() == OPS_TAB:
            self._aggregate()
        else:
            self._panel.show_ops(pd.DataFrame())  # no rows of a set that is gone

    def _on_kind_changed(self, kind: str) -> None:
        if kind == OPS_TAB and self._results is None and self._asked != self._shown.key[0]:
            self._aggregate()

    def _aggregate(self) -> None:
        shown = self._shown
        if not len(shown.reports):
            self._panel.show_ops(pd.DataFrame())
            return
        self._asked = key = shown.key[0]
        self._panel.show_ops(pd.DataFrame(), "Aggregating the ops (DLProf)…")

        def failed(text: str) -> None:
            if self._shown.key[0] == key:
                self._panel.show_ops(pd.DataFrame(), f"Ops failed: {text}")
                self.failed.emit(text)

        run_for_set(self._runner, shown, set_results, "ops", lambda: self._shown,
                    self._on_ready, failed)  # fmt: skip

    def _on_ready(self, results: list[DlprofResult]) -> None:
        self._results = results
        self._show()
        self.ops_ready.emit(results)

    def _show(self) -> None:
        """List the chosen view of the reports in the panel's report scope."""
        results = self._results
        if results is None:
            return
        labels, view = self._shown.labels, self._panel.ops_view()
        wanted = self._panel.scope().report_index
        indices = range(len(results)) if wanted is None else [wanted]
        indices = [i for i in indices if 0 <= i < len(results)]
        frames = [view_frame(results[i], view).assign(report_index=i, report=labels[i])
                  for i in indices]  # fmt: skip
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if len(frame):
            frame = frame.sort_values("gpu_ns", ascending=False, kind="stable")
        figures = [(labels[i], summary_figures(results[i])) for i in indices]
        self._panel.show_ops(frame.reset_index(drop=True), _status(len(frame), view, figures))

    # -- a row ----------------------------------------------------------------------------

    def focus_op(self, record: dict) -> None:
        """Highlight the events of a row of the tab (its op instances and the GPU work they
        launched, in its report; every other event of those kinds dimmed) and centre the
        longest instance."""
        results, shown = self._results, self._shown
        report_index = int(record.get("report_index", -1))
        if results is None or not 0 <= report_index < len(results):
            return
        view, name = self._panel.ops_view(), str(record["name"])
        direction = str(record["direction"]) if view == "op" and "direction" in record else None
        result = results[report_index]

        def work(_progress, _cancel) -> tuple:
            return shown.key, report_index, name, op_events(result, view, name, direction)

        # The highlighter's channel: the last click (a name or an op) wins.
        job = self._runner.submit(work, channel="instances")
        job.finished.connect(self._on_events)
        job.failed.connect(lambda error: self.failed.emit(error_text(error)))

    def _on_events(self, found: tuple[tuple, int, str, OpEvents]) -> None:
        key, report_index, name, events = found
        shown = self._shown
        if key != shown.key:
            return
        rows = {(r, t): np.empty(0, np.int64) for r in range(len(shown.reports))
                for t in EVENT_TABLES}  # fmt: skip
        rows.update({(report_index, t): found_rows for t, found_rows in events.rows.items()})
        instances = events.instances.assign(report_index=report_index)
        self._highlighter.highlight_events(rows, instances)
        if len(instances):
            longest = int(np.argmax((instances["end_ns"] - instances["start_ns"]).to_numpy()))
            at = instances.iloc[longest]
            refs = instance_refs(shown.reports, report_index, str(at["table"]), [at["row"]],
                                 [at["start_ns"]], [at["end_ns"]], [name])  # fmt: skip
            if refs:
                self._highlighter.focus(refs[0], zoom=False)
                self._highlighter.point_at(report_index, int(at["start_ns"]))
        self.op_focused.emit((report_index, events))


def _status(rows: int, view: str, figures: list[tuple[str, SummaryFigures]]) -> str:
    """'78 ops · 40 iterations (all aggregated), GPU utilization 91.4 %, Tensor Core
    utilization 0.0 %, 1 piece of advice' (each report's figures when several)."""
    parts = [pluralize(rows, _NOUNS[view])]
    for label, f in figures:
        some = "all" if f.aggregated_iterations == f.iterations else f"{f.aggregated_iterations:,}"
        advice = pluralize(f.advice, "piece of advice", "pieces of advice")
        text = (
            f"{pluralize(f.iterations, 'iteration')} ({some} aggregated), "
            f"GPU utilization {f.gpu_utilization_pct:.1f} %, "
            f"Tensor Core utilization {f.tc_utilization_pct:.1f} %, {advice}"
        )
        parts.append(f"{label}: {text}" if len(figures) > 1 else text)
    return " · ".join(parts)
