"""The stats panel's Expert tab: the nsys analyze rules' findings of the loaded reports,
listed as the CLI finds them; clicking one centres the timeline on its event or gap."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from strata.analysis.reportset import ReportSet
from strata.analysis.rules import run_rule
from strata.analysis.rules.findings import set_findings
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle


@pytest.fixture
def expert(qtbot, make_window, demo_reports):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.findings_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(demo_reports)
    wait_idle(qtbot, window)
    controller.panel.set_kind("expert")
    return window, controller


def _click_row(qtbot, panel, row: int) -> None:
    index = panel.proxy.index(row, 0)
    panel.table.scrollTo(index)
    rect = panel.table.visualRect(index)
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _row_of(panel, rule: str, report_index: int) -> int:
    """Position (in the shown order) of the first finding of ``rule`` in a report."""
    frame = panel.current_frame()
    hits = frame.index[(frame["rule"] == rule) & (frame["report_index"] == report_index)]
    return int(hits[0])


def test_the_tab_lists_what_analyze_finds(qtbot, expert) -> None:
    window, controller = expert
    listed = controller.panel.current_frame()
    reports = window.binding.shown_reports()
    expected = []
    for i, report in enumerate(reports):
        for rule in ("cuda_memcpy_async", "cuda_memcpy_sync", "cuda_api_sync", "gpu_time_util"):
            result = run_rule(report, rule)
            expected.append(pd.DataFrame({"report_index": i, "rule": rule,
                                          "start_ns": result.frame["Start"]}))  # fmt: skip
    expected = pd.concat(expected, ignore_index=True)
    assert len(listed) == len(expected) > 0
    key = ["report_index", "rule", "start_ns"]
    assert sorted(map(tuple, listed[key].to_numpy().tolist())) == sorted(
        map(tuple, expected[key].to_numpy().tolist())
    )
    assert controller.panel.model.columnCount() == 5  # rule, report, what, where, start
    assert "findings of 4 rules in 4 reports" in controller.panel.status_label.text()


def test_clicking_a_finding_centres_and_selects_its_event(qtbot, expert) -> None:
    window, controller = expert
    panel = controller.panel
    last = len(window.binding.shown_reports()) - 1
    for rule, report_index in (("cuda_api_sync", 0), ("cuda_memcpy_async", last)):
        row = _row_of(panel, rule, report_index)
        record = panel.current_frame().iloc[row]
        _click_row(qtbot, panel, row)
        offset = window.binding.offsets_ns()[report_index]
        start = int(record["start_ns"]) + offset
        end = start + int(record["duration_ns"])
        t0, t1 = window.timeline.state.view_range()
        assert t0 <= start
        assert end <= t1
        assert t1 - t0 < 10 * max(end - start, 200)
        picked = window.timeline.state.selected_event()
        assert picked is not None
        assert (picked.report_index, picked.table) == (report_index, record["table"])
        assert (picked.start_ns, picked.end_ns) == (int(record["start_ns"]), end - offset)
        assert picked.track_key or any(
            k.startswith(str(record["report"])) for k in window.timeline.visible_track_keys()
        )


def test_clicking_a_gap_selects_it_on_its_gpu_row(qtbot, expert) -> None:
    window, controller = expert
    panel = controller.panel
    row = _row_of(panel, "gpu_time_util", 1)
    record = panel.current_frame().iloc[row]
    _click_row(qtbot, panel, row)
    offset = window.binding.offsets_ns()[1]
    start = int(record["start_ns"]) + offset
    end = start + int(record["duration_ns"])
    selection = window.timeline.state.selection()
    assert selection is not None
    assert selection.time_range == (start, end)
    assert selection.rows
    assert all(k.startswith(f"{record['report']}/gpu") for k in selection.rows)
    t0, t1 = window.timeline.state.view_range()
    assert t0 <= start
    assert end <= t1
    assert selection.rows[0] in window.timeline.visible_track_keys()


def test_findings_are_computed_once_per_report_set(demo_reports) -> None:
    from strata.analysis.open import open_report

    reports = ReportSet(open_report(p) for p in demo_reports)
    first = set_findings(reports.snapshot())
    assert set_findings(reports) is first
    reports.remove(0)
    assert set_findings(reports) is not first
    assert set(set_findings(reports).frame["report"]) == set(reports.labels)
