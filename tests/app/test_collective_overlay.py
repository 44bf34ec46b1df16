"""Collectives on the timeline, as a user sees them in the main window on the demo: each
rank's wait shaded up to the last arrival (the planted late rank's partners wait exactly
as long as it was late, in pixels), the overlay toggled from the View menu; and the ranks
aligned on anchor events chosen from the event context menu."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from strata.resources import demo
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle


@pytest.fixture
def window(qtbot, make_window, demo_reports):
    """The demo on wall-clock alignment (the truth's own axis), the stats panel docked on
    another tab, each rank's NCCL stream row pinned."""
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    window.stats_controller = controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.collectives_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(demo_reports)
    wait_idle(qtbot, window)
    with qtbot.waitSignal(controller.collectives_ready, timeout=LOAD_TIMEOUT_MS):
        window.alignment_bar.set_alignment("wallclock")
    wait_idle(qtbot, window)
    state = window.timeline.state
    for key in _nccl_rows(window):
        state.pin(key)
    return window


def _nccl_rows(window) -> list[str]:
    """Per rank, the key of the stream row holding its all-reduce kernels."""
    found = window.stats_controller.collective_list.found()
    reports = window.binding.shown_reports()
    keys = []
    for index in range(len(reports)):
        rows = found.ranks[found.ranks["report_index"] == index]
        track = int(reports[index].tables["kernels"]["track_id"][int(rows["row"].iloc[0])])
        keys.append(next(t.key for t in window.timeline.state.tracks()
                         if t.kind == "gpu_stream" and t.report_index == index
                         and ("kernels", track) in t.parts))  # fmt: skip
    return keys


def _show_late_step(window, late) -> int:
    """Zoom to the late step's all-reduce (its arrivals and 5 ms more, in whole 10 µs per
    pixel), paint, and return the zoom in ns per pixel."""
    timeline = window.timeline
    width = timeline._data_width()
    span = max(late.starts_ns) - min(late.starts_ns) + 5_000_000
    ns_per_px = -(-span // (width * 10_000)) * 10_000
    t0 = min(late.starts_ns) - 10 * ns_per_px
    timeline.state.set_view_range(t0, t0 + width * ns_per_px)
    timeline.repaint()
    return ns_per_px


def _menu_action(qtbot, window, rank: int, row: int, text: str):
    """Right-click kernel ``row`` of rank ``rank`` on its pinned row; return the menu's
    action ``text``."""
    timeline = window.timeline
    kernels = window.binding.shown_reports()[rank].tables["kernels"]
    y, h = timeline.row_rect(_nccl_rows(window)[rank])
    middle = (int(kernels["start_ns"][row]) + int(kernels["end_ns"][row])) // 2
    point = QPoint(int(timeline.x_of(middle + timeline.state.offsets_ns()[rank])), y + h // 2)
    qtbot.mouseClick(timeline, Qt.MouseButton.RightButton, pos=point)
    timeline.context_menu.hide()
    return next(a for a in timeline.context_menu.actions() if a.text() == text)


def _aligned_ends(window, ranks) -> set[int]:
    """The ends of the instance's kernels on the timeline's axis."""
    offsets, reports = window.binding.offsets_ns(), window.binding.shown_reports()
    pairs = zip(ranks["report_index"], ranks["row"], strict=True)
    return {int(reports[int(i)].tables["kernels"]["end_ns"][int(r)]) + offsets[int(i)]
            for i, r in pairs}  # fmt: skip


def test_the_late_ranks_partners_wait_as_long_as_it_was_late(qtbot, window) -> None:
    state, timeline = window.timeline.state, window.timeline
    assert not state.collectives_shown()  # off until the Collectives tab is shown
    window.stats_controller.panel.set_kind("collectives")
    assert state.collectives_shown()
    assert window.actions_by_name["collective_overlay"].isChecked()
    truth = demo.demo_truth()
    late = truth.late_arrivals[0]
    ns_per_px = _show_late_step(window, late)
    plan = timeline._painter.collective_plan
    assert not plan.merged
    assert list(plan.instances) == [late.step]  # the instance in view, drawn one by one
    # The three partners wait from their own start to the late rank's; it waits for none.
    partners = [r for r in range(truth.ranks) if r != late.rank]
    assert sorted(plan.wait_reports) == partners
    last = late.starts_ns[late.rank]
    assert last == max(late.starts_ns)  # planted 20 ms late: the last to arrive
    for (x, _y, width, _h), rank in zip(plan.waits, plan.wait_reports, strict=True):
        start = late.starts_ns[rank]
        assert x == pytest.approx(timeline.x_of(start), abs=1e-6)
        assert width == pytest.approx((last - start) / ns_per_px, abs=1e-6)
    # The ranks are joined, and the last arrival marked across them.
    assert len(plan.links) == 1
    assert len(plan.links[0]) == truth.ranks
    assert plan.arrivals[0][0] == pytest.approx(timeline.x_of(last), abs=1e-6)
    # The shade is on screen: a pixel inside a partner's wait differs from the same
    # pixel with the overlay off.
    x, y, width, h = plan.waits[0]
    point = QPoint(int(x + width / 2), int(y + h / 2))
    shaded = timeline.grab().toImage().pixel(point)
    window.toggle_collective_overlay()
    assert not state.collectives_shown()
    assert not window.actions_by_name["collective_overlay"].isChecked()
    timeline.repaint()
    assert timeline._painter.collective_plan is None
    assert timeline.grab().toImage().pixel(point) != shaded
    # The user's choice holds: showing the tab again does not turn it back on.
    window.stats_controller.panel.set_kind("kernels")
    window.stats_controller.panel.set_kind("collectives")
    assert not state.collectives_shown()


def test_fitted_out_the_collectives_are_merged_per_row(qtbot, window) -> None:
    window.stats_controller.panel.set_kind("collectives")
    timeline = window.timeline
    lo, hi = timeline.state.activity_range()
    timeline.state.set_view_range(lo - (hi - lo), hi + (hi - lo))  # 40 steps in a third of it
    timeline.repaint()
    plan = timeline._painter.collective_plan
    truth = demo.demo_truth()
    assert len(plan.instances) == truth.steps
    assert plan.merged
    assert plan.links == []
    assert len(plan.waits) <= truth.ranks * timeline._data_width()


def test_anchors_from_the_context_menu_align_the_ranks_on_a_collective(qtbot, window) -> None:
    state = window.timeline.state
    controller = window.stats_controller
    controller.panel.set_kind("collectives")
    truth = demo.demo_truth()
    late = truth.late_arrivals[0]
    found = controller.collective_list.found()
    ranks = found.ranks[found.ranks["instance_row"] == late.step]
    _show_late_step(window, late)
    for rank in range(truth.ranks):
        row = int(ranks["row"][ranks["report_index"] == rank].iloc[0])
        kernels = window.binding.shown_reports()[rank].tables["kernels"]
        action = _menu_action(qtbot, window, rank, row, "Use as Alignment Anchor")
        if rank == truth.ranks - 1:
            with qtbot.waitSignal(controller.collectives_ready, timeout=LOAD_TIMEOUT_MS):
                action.trigger()
        else:
            action.trigger()
            assert window.binding.alignment().mode == "wallclock"  # not every rank yet
        anchor = state.anchors()[str(window.report_list.entries()[rank].path)]
        assert (anchor.table, anchor.row) == ("kernels", row)
        assert anchor.end_ns == int(kernels["end_ns"][row])
    wait_idle(qtbot, window)
    # Every rank anchored: aligned on the anchors' ends, and the controls say so.
    assert window.binding.alignment().mode == "anchor"
    assert window.alignment_bar.mode() == "anchor"
    assert len(_aligned_ends(window, ranks)) == 1
    found = controller.collective_list.found()
    assert found.instances["end_skew_ns"].iloc[late.step] == 0
    status = controller.panel.status_label.text()
    assert f"Aligned on AllReduce #{late.step}" in status
    assert f"residual skew (last end − first end) of the {truth.steps - 1} other" in status
    # Clearing the anchors goes back to the session start.
    window.clear_alignment_anchors()
    assert state.anchors() == {}
    assert window.binding.alignment().mode == "session"


def test_one_menu_action_aligns_every_rank_on_a_collective(qtbot, window) -> None:
    controller, binding = window.stats_controller, window.binding
    controller.panel.set_kind("collectives")
    # Anchor events chosen before any report has one: which lack one, and no shift meanwhile.
    window.alignment_bar.set_alignment("anchor")
    wait_idle(qtbot, window)
    problem = binding.alignment_problem()
    assert "no anchor event in rank0.sqlite, rank1.sqlite, rank2.sqlite, rank3.sqlite" in problem
    assert binding.offsets_ns() == [0, 0, 0, 0]
    truth = demo.demo_truth()
    late = truth.late_arrivals[1]
    found = controller.collective_list.found()
    ranks = found.ranks[found.ranks["instance_row"] == late.step]
    _show_late_step(window, late)
    row = int(ranks["row"][ranks["report_index"] == 2].iloc[0])
    action = _menu_action(qtbot, window, 2, row, "Align Ranks on This Collective")
    with qtbot.waitSignal(controller.collectives_ready, timeout=LOAD_TIMEOUT_MS):
        action.trigger()
    wait_idle(qtbot, window)
    anchors = window.timeline.state.anchors()
    assert len(anchors) == truth.ranks
    assert binding.alignment_problem() == ""
    assert len(_aligned_ends(window, ranks)) == 1
    assert f"Aligned on AllReduce #{late.step}" in controller.panel.status_label.text()
