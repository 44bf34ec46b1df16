"""The stats panel's Ops tab: the DLProf aggregation of the shown reports per op, op type or
group node; clicking a row highlights exactly its op instances and the GPU work they launched.

On a planted PyTorch run (two profiler steps, built here) and on the real DLProf-profiled
report (../shared), whose events are checked against SQL.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from strata.analysis.dlprof.reports import dlprof_reports
from strata.analysis.reportset import ReportSet
from tests.analysis.test_dlprof import DLPROF, planted_torch_report
from tests.app.conftest import LOAD_TIMEOUT_MS, open_shown, wait_idle
from tests.conftest import requires_shared
from tests.helpers import sql_rows

#: The Ops tab's columns per view and the DLProf table columns they show.
_SHOWN = {
    "op": ("detailed", {"op_id": "Op ID", "name": "Op Name", "direction": "Direction",
                        "op_type": "Op Type", "gpu_ns": "Total GPU Time (ns)",
                        "cpu_ns": "Total CPU Time (ns)", "kernels": "Kernels",
                        "uses_tc": "Using TC"}),
    "op_type": ("op_type", {"name": "Op Type", "gpu_ns": "Total GPU Time (ns)",
                            "cpu_ns": "Total CPU Time (ns)", "calls": "# Calls", "ops": "# Ops"}),
    "group_node": ("group_node", {"name": "Name", "gpu_ns": "Total GPU Time (ns)",
                                  "cpu_ns": "Total CPU Time (ns)",
                                  "calls": "Num Calls Aggregated"}),
}  # fmt: skip


def _ops_tab(qtbot, make_window, paths):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
    open_shown(qtbot, window, paths)
    with qtbot.waitSignal(controller.ops_list.ops_ready, timeout=LOAD_TIMEOUT_MS):
        controller.panel.set_kind("ops")  # aggregated when first shown
    return window, controller


def _expected(window, view: str) -> pd.DataFrame:
    """The view's DLProf table, computed afresh from the window's reports, as the tab names
    its columns."""
    reports = window.binding.shown_reports()
    table, columns = _SHOWN[view]
    frame = dlprof_reports(ReportSet(list(reports)), names=(table,))[table]
    return frame[list(columns.values())].rename(columns={v: k for k, v in columns.items()})


def _assert_rows_equal(listed: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert len(listed) == len(expected) > 0
    gpu = listed["gpu_ns"].to_numpy()
    assert (np.diff(gpu) <= 0).all()  # largest GPU time first
    keys = list(expected.columns)
    assert sorted(map(tuple, listed[keys].to_numpy().tolist())) == sorted(
        map(tuple, expected.to_numpy().tolist())
    )


def _click(qtbot, panel, row: int) -> None:
    index = panel.proxy.index(row, 0)
    panel.table.scrollTo(index)
    rect = panel.table.visualRect(index)
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _click_op(qtbot, controller, **fields) -> None:
    """Click the row whose fields are ``fields`` and wait for its events."""
    frame = controller.panel.current_frame()
    mask = np.ones(len(frame), dtype=bool)
    for column, value in fields.items():
        mask &= (frame[column] == value).to_numpy()
    (row,) = np.flatnonzero(mask)
    with qtbot.waitSignal(controller.ops_list.op_focused, timeout=LOAD_TIMEOUT_MS):
        _click(qtbot, controller.panel, int(row))


def _highlighted(window, table: str, report_index: int = 0) -> list[tuple[int, int]]:
    """(start, end) of the events of ``table`` the timeline emphasises, in time order."""
    mask = window.timeline.state.highlights().get((report_index, table))
    assert mask is not None, f"{table} is not highlighted (nor dimmed)"
    events = window.binding.shown_reports()[report_index].tables[table]
    rows = np.flatnonzero(mask)
    return sorted(zip(events.start_ns[rows].tolist(), events.end_ns[rows].tolist(), strict=True))


# --------------------------------------------------------------------------- planted
# Two profiler steps of tests/analysis/test_dlprof._step (t0 = 100 µs, 200 µs).
_STEPS = (100_000, 200_000)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    return planted_torch_report(tmp_path_factory.mktemp("ops"))


def test_the_tab_lists_each_view_as_dlprof_aggregates_it(qtbot, make_window, planted) -> None:
    window, controller = _ops_tab(qtbot, make_window, [planted])
    panel = controller.panel
    assert panel.ops_view_combo.isVisible()
    for view in ("op", "op_type", "group_node"):
        panel.set_ops_view(view)
        _assert_rows_equal(panel.current_frame(), _expected(window, view))
    summary = dlprof_reports(ReportSet(list(window.binding.shown_reports())),
                             names=("summary", "expert_systems"))  # fmt: skip
    values = summary["summary"].set_index("Metric")["Value"]
    status = panel.status_label.text()
    assert status.startswith(f"{len(panel.current_frame())} group nodes · 2 iterations")
    assert f"GPU utilization {values['GPU Utilization %']:.1f} %" in status
    assert f"Tensor Core utilization {values['Tensor Core Kernel Utilization %']:.1f} %" in status
    advice = len(summary["expert_systems"])
    assert f"{advice} piece" in status  # of advice


def test_clicking_an_op_highlights_exactly_its_ranges_and_kernels(
    qtbot, make_window, planted
) -> None:
    window, controller = _ops_tab(qtbot, make_window, [planted])
    _click_op(qtbot, controller, name="/ProfilerStep/aten::conv2d", direction="fprop")
    # The forward conv2d of each step (seq = 1) and the first kernel it launched.
    assert _highlighted(window, "nvtx") == [(t + 1_000, t + 10_000) for t in _STEPS]
    assert _highlighted(window, "kernels") == [(t + 5_000, t + 9_000) for t in _STEPS]
    assert _highlighted(window, "cuda_api") == []  # its launches dim with every other call
    # The longest instance (they tie: the first) is centred and selected.
    picked = window.timeline.state.selected_event()
    assert (picked.table, picked.start_ns, picked.end_ns) == ("nvtx", 101_000, 110_000)
    t0, t1 = window.timeline.state.view_range()
    assert t0 <= 101_000
    assert t1 >= 110_000
    assert window.timeline.state.highlight() is None  # no name: the op's own events
    assert len(controller.highlighter.instances()) == 2
    controller.panel.next_button.click()  # the next instance: the second step's
    assert window.timeline.state.selected_event().start_ns == 201_000

    controller.panel.set_ops_view("op_type")
    _click_op(qtbot, controller, name="conv2d")
    # Both conv2d calls and the backward linked to the first by its sequence number.
    ranges = [(t + a, t + b) for t in _STEPS
              for a, b in ((1_000, 10_000), (20_000, 30_000), (40_000, 60_000))]  # fmt: skip
    kernels = [(t + a, t + b) for t in _STEPS
               for a, b in ((5_000, 9_000), (22_000, 25_000), (45_000, 52_000))]  # fmt: skip
    assert _highlighted(window, "nvtx") == sorted(ranges)
    assert _highlighted(window, "kernels") == sorted(kernels)

    controller.panel.set_ops_view("group_node")
    _click_op(qtbot, controller, name="/ProfilerStep/")
    every = window.binding.shown_reports()[0].tables["kernels"]
    assert len(_highlighted(window, "kernels")) == len(every) == 8
    assert len(_highlighted(window, "nvtx")) == 8  # 4 ops per step, not the step ranges


def test_the_tab_follows_the_report_filter_and_removal(
    qtbot, make_window, planted, tmp_path
) -> None:
    other = planted_torch_report(tmp_path)
    window, controller = _ops_tab(qtbot, make_window, [planted, other])
    panel = controller.panel
    failures = []
    controller.failed.connect(failures.append)
    listed = panel.current_frame()
    _assert_rows_equal(listed, _expected(window, "op"))  # both reports' rows
    assert set(listed["report_index"]) == {0, 1}
    assert panel.model.column_of("report") >= 0  # the reports are told apart
    panel.report_combo.setCurrentIndex(2)  # the second report only
    listed = panel.current_frame()
    assert set(listed["report_index"]) == {1}
    assert panel.model.column_of("report") < 0
    _click_op(qtbot, controller, name="/ProfilerStep/aten::add_")
    assert _highlighted(window, "nvtx", 1) == [(t + 11_000, t + 14_000) for t in _STEPS]
    assert _highlighted(window, "nvtx", 0) == []  # the other report's ranges dim

    # The tab is current: the remaining report is aggregated again.
    with qtbot.waitSignal(controller.ops_list.ops_ready, timeout=LOAD_TIMEOUT_MS):
        window.report_list.remove(other)
    wait_idle(qtbot, window)
    assert len(window.binding.shown_reports()) == 1
    assert set(panel.current_frame()["report_index"]) == {0}
    assert all(not mask.any() for mask in window.timeline.state.highlights().values())
    window.report_list.remove(planted)
    qtbot.waitUntil(lambda: not window.binding.shown_reports(), timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
    assert panel.current_frame().empty
    assert controller.ops_list.results() is None
    assert failures == []


# --------------------------------------------------------------------------- real
@requires_shared
@pytest.mark.skipif(not DLPROF.is_file(), reason=f"needs {DLPROF}")
def test_the_real_dlprof_run_lists_its_ops_and_shows_their_events(qtbot, make_window) -> None:
    window, controller = _ops_tab(qtbot, make_window, [DLPROF])
    _assert_rows_equal(controller.panel.current_frame(), _expected(window, "op"))
    # The first conv2d call: its DLProf marker range, and what calls inside it launched.
    markers = sql_rows(
        DLPROF,
        "SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text LIKE ? ORDER BY start",
        "{'mod': 'torch.nn.functional', 'op': 'conv2d'%",
    )
    start, end, tid = markers[0]
    launched = {}
    for table, cupti in (("kernels", "KERNEL"), ("memcpy", "MEMCPY"), ("memset", "MEMSET")):
        launched[table] = sorted(sql_rows(
            DLPROF, f"SELECT g.start, g.end FROM CUPTI_ACTIVITY_KIND_{cupti} g JOIN "
            "CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId AND "
            "g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) "
            "WHERE r.globalTid = ? AND r.start >= ? AND r.end <= ?", tid, start, end,
        ))  # fmt: skip
    _click_op(qtbot, controller, op_id="CONV2D_1")
    assert _highlighted(window, "nvtx") == [(start, end)]
    for table, expected in launched.items():
        assert _highlighted(window, table) == [tuple(r) for r in expected]
    assert len(launched["kernels"]) > 0
    picked = window.timeline.state.selected_event()
    assert (picked.table, picked.start_ns, picked.end_ns) == ("nvtx", start, end)
