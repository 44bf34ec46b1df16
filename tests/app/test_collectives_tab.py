"""The stats panel's Collectives tab: the demo's all-reduces matched across its ranks;
clicking one centres the timeline on it across every rank and selects its span."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from resources import demo
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle


@pytest.fixture
def tab(qtbot, make_window, demo_reports):
    from app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window)
    with qtbot.waitSignal(controller.collectives_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(demo_reports)
    wait_idle(qtbot, window)
    controller.panel.set_kind("collectives")
    return window, controller


def _click_row(qtbot, panel, row: int) -> None:
    index = panel.proxy.index(row, 0)
    panel.table.scrollTo(index)
    rect = panel.table.visualRect(index)
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_tab_lists_every_all_reduce_with_its_straggler(qtbot, tab) -> None:
    window, controller = tab
    truth = demo.demo_truth()
    listed = controller.panel.current_frame()
    assert len(listed) == truth.steps
    assert set(listed["collective"]) == {"AllReduce"}
    assert (listed["ranks"] == truth.ranks).all()
    late = {a.step for a in truth.late_arrivals}
    for step in range(truth.steps):
        rank = demo.LATE_RANK if step in late else truth.straggler_rank
        assert listed["straggler"].iloc[step] == f"rank{rank}.sqlite"
    assert "40 collectives matched across 4 reports" in controller.panel.status_label.text()


def test_clicking_a_collective_centres_it_across_every_rank(qtbot, tab) -> None:
    window, controller = tab
    panel = controller.panel
    found = controller.collective_list.found()
    step = demo.demo_truth().late_arrivals[0].step
    _click_row(qtbot, panel, step)
    ranks = found.ranks[found.ranks["instance_row"] == step]
    offsets = window.binding.offsets_ns()
    kernels = [window.binding.shown_reports()[int(i)].tables["kernels"] for i in
               ranks["report_index"]]  # fmt: skip
    # The kernels' own times, on the timeline's axis, all inside the view.
    starts = [int(k.start_ns[r]) + offsets[int(i)] for k, r, i in
              zip(kernels, ranks["row"], ranks["report_index"], strict=True)]  # fmt: skip
    ends = [int(k.end_ns[r]) + offsets[int(i)] for k, r, i in
            zip(kernels, ranks["row"], ranks["report_index"], strict=True)]  # fmt: skip
    t0, t1 = window.timeline.view_range()
    assert t0 <= min(starts)
    assert max(ends) <= t1
    assert t1 - t0 < 2 * (max(ends) - min(starts))
    selection = window.timeline.state.selection()
    assert (selection.t0_ns, selection.t1_ns) == (min(starts), max(ends))
    assert len(selection.rows) >= 4
