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
from PySide6.QtCore import Signal

from strata.analysis.dlprof.reports import DlprofResult, set_results
from strata.analysis.dlprof.views import (
    EVENT_TABLES,
    OpEvents,
    SummaryFigures,
    op_events,
    summary_figures,
    view_frame,
)
from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import pluralize
from strata.app.stats_jobs import error_text
from strata.app.stats_list import ListTab, TabContext
from strata.viewer.ops_view import OPS_VIEW_TITLES, ops_columns
from strata.viewer.stats_tabs import StatsTab, TabOption, TabScope

__all__ = ["OPS", "OPS_TAB", "OpsList"]

OPS_TAB = "ops"
_NOUNS = {"op": "op", "op_type": "op type", "group_node": "group node"}


def _aggregate(reports: ReportSet, _scope: TabScope) -> list[DlprofResult]:
    return set_results(reports)


def _rows(results: list[DlprofResult], scope: TabScope) -> tuple[pd.DataFrame, str]:
    """The chosen view of the reports in the panel's report scope, largest GPU time first."""
    labels, view = scope.labels, scope.option
    wanted = scope.scope.report_index
    indices = range(len(results)) if wanted is None else [wanted]
    indices = [i for i in indices if 0 <= i < len(results)]
    frames = [view_frame(results[i], view).assign(report_index=i, report=labels[i])
              for i in indices]  # fmt: skip
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(frame):
        frame = frame.sort_values("gpu_ns", ascending=False, kind="stable")
    figures = [(labels[i], summary_figures(results[i])) for i in indices]
    return frame.reset_index(drop=True), _status(len(frame), view, figures)


class OpsList(ListTab):
    """The Ops tab: choosing a row finds its events on a worker and highlights them.

    Signals
    -------
    ops_ready(object)
        The aggregation of the shown reports is listed: a list of
        :class:`~analysis.dlprof.reports.DlprofResult`, one per report.
    op_focused(object)
        A chosen row's events are highlighted: ``(report_index, OpEvents)``.
    """

    ops_ready = Signal(object)
    op_focused = Signal(object)

    def __init__(self, tab: StatsTab, context: TabContext) -> None:
        super().__init__(tab, context)
        self.ready.connect(self.ops_ready)

    def results(self) -> list[DlprofResult] | None:
        """The aggregation of the shown reports (None: not computed yet)."""
        return self.result()

    def focus_op(self, record: dict) -> None:
        """Highlight the events of a row of the tab (its op instances and the GPU work they
        launched, in its report; every other event of those kinds dimmed) and centre the
        longest instance."""
        results, shown = self.result(), self.shown
        report_index = int(record.get("report_index", -1))
        if results is None or not 0 <= report_index < len(results):
            return
        view, name = self.context.panel.option(OPS_TAB), str(record["name"])
        direction = str(record["direction"]) if view == "op" and "direction" in record else None
        result = results[report_index]

        def work(_progress, _cancel) -> tuple:
            return shown.key, report_index, name, op_events(result, view, name, direction)

        # The highlighter's channel: the last click (a name or an op) wins.
        job = self.context.runner.submit(work, channel="instances")
        job.finished.connect(self._on_events)
        job.failed.connect(lambda error: self.failed.emit(error_text(error)))

    def _on_events(self, found: tuple[tuple, int, str, OpEvents]) -> None:
        key, report_index, name, events = found
        shown, highlighter = self.shown, self.context.highlighter
        if key != shown.key:
            return
        rows = {(r, t): np.empty(0, np.int64) for r in range(len(shown.reports))
                for t in EVENT_TABLES}  # fmt: skip
        rows.update({(report_index, t): found_rows for t, found_rows in events.rows.items()})
        instances = events.instances.assign(report_index=report_index)
        highlighter.highlight_events(rows, instances)
        if len(instances):
            longest = int(np.argmax((instances["end_ns"] - instances["start_ns"]).to_numpy()))
            at = instances.iloc[longest]
            if self.focus_row(report_index, str(at["table"]), at["row"], at["start_ns"],
                              at["end_ns"], name, zoom=False):  # fmt: skip
                highlighter.point_at(report_index, int(at["start_ns"]))
        self.op_focused.emit((report_index, events))


OPS = StatsTab(
    OPS_TAB,
    "Ops",
    lambda frame, _labels, _short: ops_columns(frame),
    option=TabOption("Ops grouping", "What the Ops tab aggregates by", OPS_VIEW_TITLES),
    time_scoped=False,
    shows_histogram=True,  # an op's instances, as a name's
    steps_instances=True,
    compute=_aggregate,
    rows=_rows,
    on_row=OpsList.focus_op,
    follows=frozenset({"scope", "option"}),
    lazy=True,
    loading="Aggregating the ops (DLProf)…",
    lifecycle=OpsList,
)


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
