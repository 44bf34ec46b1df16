"""The stats panel's Collectives tab: the demo's all-reduces matched across its ranks;
clicking one centres the timeline on it across every rank and selects its span."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from strata.resources import demo
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle


@pytest.fixture
def tab(qtbot, make_window, demo_reports):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
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
    t0, t1 = window.timeline.state.view_range()
    assert t0 <= min(starts)
    assert max(ends) <= t1
    assert t1 - t0 < 2 * (max(ends) - min(starts))
    selection = window.timeline.state.selection()
    assert (selection.t0_ns, selection.t1_ns) == (min(starts), max(ends))
    assert len(selection.rows) >= 4


def test_the_by_type_view_sums_each_type_and_centres_its_worst_instance(qtbot, tab) -> None:
    from strata.analysis.collectives import collectives
    from strata.analysis.reportset import ReportSet

    window, controller = tab
    panel, truth = controller.panel, demo.demo_truth()
    panel.set_collective_view("type")
    listed = panel.current_frame()
    assert list(listed["collective"]) == ["AllReduce"]
    # A fresh match of the same reports, not the tab's own: the CLI's per-type table.
    fresh = collectives(ReportSet(window.binding.shown_reports()),
                        offsets_ns=window.binding.offsets_ns())  # fmt: skip
    row, table = listed.iloc[0], fresh.summary.iloc[0]
    assert int(row["count"]) == int(table["count"]) == truth.steps
    assert int(row["total_wait_ns"]) == int(table["total_wait_ns"])
    assert int(row["total_wait_ns"]) == int(fresh.instances["total_wait_ns"].sum())
    assert row["worst_straggler"] == f"rank{truth.straggler_rank}.sqlite"
    _click_row(qtbot, panel, 0)
    worst = int(fresh.instances["total_wait_ns"].to_numpy().argmax())
    ranks = fresh.ranks[fresh.ranks["instance_row"] == worst]
    selection = window.timeline.state.selection()
    assert (selection.t0_ns, selection.t1_ns) == (ranks["start_ns"].min(), ranks["end_ns"].max())
    t0, t1 = window.timeline.state.view_range()
    assert t0 <= selection.t0_ns
    assert selection.t1_ns <= t1


def test_the_by_rank_view_shares_the_wait_out_over_every_rank(qtbot, tab) -> None:
    window, controller = tab
    panel, truth = controller.panel, demo.demo_truth()
    panel.set_collective_view("rank")
    listed = panel.current_frame()
    assert sorted(listed["report"]) == [f"rank{r}.sqlite" for r in range(truth.ranks)]
    assert listed["wait_share"].sum() == pytest.approx(100.0)
    assert (listed["instances"] == truth.steps).all()
    before = window.timeline.state.view_range()
    _click_row(qtbot, panel, 0)  # a rank's wait: nothing to centre
    assert window.timeline.state.view_range() == before
    panel.set_collective_view("instance")
    assert len(panel.current_frame()) == truth.steps


def test_the_tab_names_its_alignment_and_matches_the_cli_default(qtbot, tab) -> None:
    from strata.analysis.collectives import collectives

    window, controller = tab
    text = controller.panel.status_label.text()
    assert "alignment: session starts at 0" in text
    listed = controller.panel.current_frame()
    shown = window.binding.shown_set()
    # The CLI's default: the set's own (session) alignment, no offsets given.
    cli = collectives(shown).instances
    assert int(listed["skew_ns"].iloc[0]) == int(cli["skew_ns"].iloc[0])
