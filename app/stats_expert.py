"""The stats panel's Expert tab: the ``nsys analyze`` rules' findings of the shown reports,
found once per set of reports on a worker; choosing one shows the event or gap it names.

The findings are those of the whole reports (nsys's default rules and options, as
``main.py analyze`` prints them), so the tab does not follow the panel's time scope: a
rule's row limit and ordering are over the whole report, and re-running them per window would
list other findings than the CLI does.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.rules.findings import ExpertFindings, set_findings
from strata.analysis.schema import pid_of
from strata.analysis.timefmt import pluralize
from strata.app.event_lookup import instance_refs, scroll_track_into_view
from strata.app.stats_jobs import ShownReports, run_for_set
from strata.app.stats_list import TabContext
from strata.viewer.stats_tabs import StatsTab

__all__ = ["EXPERT_TAB", "ExpertList"]

EXPERT_TAB = "expert"


class ExpertList(QObject):
    """Find and list the expert rules' findings of the shown reports.

    Signals
    -------
    ready(object)
        :class:`~analysis.rules.findings.ExpertFindings` of the shown reports are listed.
    failed(str)
        The rules could not be run (one line).
    """

    ready = Signal(object)
    failed = Signal(str)

    def __init__(self, tab: StatsTab, context: TabContext):
        super().__init__(context.panel)
        self._panel, self._runner = context.panel, context.runner
        self._highlighter, self._timeline = context.highlighter, context.timeline
        self._shown = ShownReports()
        self._findings: ExpertFindings | None = None
        self._panel.row_chosen.connect(
            lambda tab_id, record: self.focus_finding(record) if tab_id == tab.id else None
        )

    def findings(self) -> ExpertFindings | None:
        return self._findings

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set is analysed (on a worker)."""
        self._shown = shown
        if is_new:
            self._findings = None
            self._find()

    def _find(self) -> None:
        reports = self._shown.reports
        if not len(reports):
            self._panel.show_rows(EXPERT_TAB, pd.DataFrame())
            return
        self._panel.show_rows(EXPERT_TAB, pd.DataFrame(), "Running the expert rules…")
        run_for_set(self._runner, self._shown, set_findings, "expert",
                    lambda: self._shown, self._on_ready, self._on_failed)  # fmt: skip

    def _on_failed(self, text: str) -> None:
        self._panel.show_rows(EXPERT_TAB, pd.DataFrame(), f"Expert rules failed: {text}")
        self.failed.emit(text)

    def _on_ready(self, found: ExpertFindings) -> None:
        self._findings = found
        self._panel.show_rows(EXPERT_TAB, found.frame, _status(found))
        self.ready.emit(found)

    def focus_finding(self, record: dict) -> None:
        """Centre the timeline on a finding: its event, selected; or its gap, selected as a
        time range over its GPU's row."""
        report_index, start = int(record["report_index"]), int(record["start_ns"])
        end = start + int(record["duration_ns"])
        table, index = str(record["table"]), int(record["index"])
        if table and index >= 0:
            refs = instance_refs(self._shown.reports, report_index, table, [index], [start],
                                 [end], [record["name"]])  # fmt: skip
            if refs:
                self._highlighter.focus(refs[0], zoom=True)
                return
        self._focus_span(report_index, start, end, int(record["pid"]), int(record["device"]))

    def _focus_span(self, report_index: int, start: int, end: int, pid: int, device: int) -> None:
        timeline = self._timeline
        offsets = self._shown.offsets
        offset = offsets[report_index] if report_index < len(offsets) else 0
        pad = max((end - start) // 10, 200)
        rows = _gpu_rows(self._shown, timeline.state.tracks(), report_index, pid, device)
        timeline.state.set_view_range(start + offset - pad, end + offset + pad)
        timeline.state.select(start + offset, end + offset, rows)
        if rows:
            scroll_track_into_view(timeline, rows[0])


def _gpu_rows(shown: ShownReports, tracks, report_index: int, pid: int, device: int) -> list[str]:
    """Keys of the 'All streams' rows of GPU ``device`` of ``pid`` in one report (the row of
    a gap); every GPU row of the report when the rule names no device."""
    if report_index >= len(shown.reports):
        return []
    report = shown.reports[report_index]
    keys = []
    for track in tracks:
        if track.report_index != report_index or track.kind != "gpu_all":
            continue
        for table, track_id in track.parts:
            ids = report.tables[table].track_keys if table in report.tables else None
            if ids is None or track_id >= len(ids) or "device_id" not in ids:
                continue
            same_device = device < 0 or int(ids["device_id"].iloc[track_id]) == device
            gpid = ids["global_pid"].iloc[track_id] if "global_pid" in ids else None
            same_pid = pid < 0 or gpid is None or int(pid_of(int(gpid))) == pid
            if same_device and same_pid:
                keys.append(track.key)
                break
    return keys


def _status(found: ExpertFindings) -> str:
    """'84 findings of 3 rules in 4 reports (nsys analyze's default rules)'."""
    frame = found.frame
    if not len(frame):
        text = "No findings: the expert rules found nothing to report"
    else:
        rules = pluralize(int(frame["rule"].nunique()), "rule")
        reports = pluralize(int(frame["report"].nunique()), "report")
        text = f"{pluralize(len(frame), 'finding')} of {rules} in {reports}"
    if found.problems:
        text += f" · not run: {'; '.join(found.problems)}"
    return text + " (nsys analyze's default rules)"
