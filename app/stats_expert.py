"""The stats panel's Expert tab, all of it: the ``nsys analyze`` rules' findings of the shown
reports, found once per set of reports on a worker and listed; choosing one shows the event
or gap it names.

The findings are those of the whole reports (nsys's default rules and options, as
``main.py analyze`` prints them), so the tab does not follow the panel's time scope: a
rule's row limit and ordering are over the whole report, and re-running them per window would
list other findings than the CLI does.
"""

from __future__ import annotations

import pandas as pd

from strata.analysis.reportset import ReportSet
from strata.analysis.rules.findings import ExpertFindings, set_findings
from strata.analysis.schema import pid_of
from strata.analysis.timefmt import pluralize
from strata.app.stats_jobs import ShownReports
from strata.app.stats_list import ListTab
from strata.viewer.stats_tabs import StatsTab, TabScope
from strata.viewer.table_model import Column

__all__ = ["EXPERT", "EXPERT_TAB"]

EXPERT_TAB = "expert"
_COLUMNS = (
    Column("rule", "Rule", "text", "The nsys analyze rule that found it (-r NAME)"),
    Column("what", "What", "text"), Column("where", "Where", "text"),
    Column("start_ns", "Start (ns)"), Column("report", "Report", "text"),
)  # fmt: skip


def _find(reports: ReportSet, _scope: TabScope) -> ExpertFindings:
    return set_findings(reports)


def _rows(found: ExpertFindings, _scope: TabScope) -> tuple[pd.DataFrame, str]:
    return found.frame, _status(found)


def _focus_finding(tab: ListTab, record: dict) -> None:
    """Centre the timeline on a finding: its event, selected; or its gap, selected as a
    time range over its GPU's row."""
    report_index, start = int(record["report_index"]), int(record["start_ns"])
    end = start + int(record["duration_ns"])
    table, index = str(record["table"]), int(record["index"])
    if table and index >= 0 and tab.focus_row(report_index, table, index, start, end,
                                              record["name"]):  # fmt: skip
        return
    offsets = tab.shown.offsets
    offset = offsets[report_index] if report_index < len(offsets) else 0
    rows = _gpu_rows(tab.shown, tab.context.timeline.state.tracks(), report_index,
                     int(record["pid"]), int(record["device"]))  # fmt: skip
    tab.select_span(start + offset, end + offset, rows, max((end - start) // 10, 200))


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


EXPERT = StatsTab(
    EXPERT_TAB,
    "Expert",
    _COLUMNS,
    filter_key="what",
    compute=_find,
    rows=_rows,
    on_row=_focus_finding,
    loading="Running the expert rules…",
    failure="Expert rules",
)
