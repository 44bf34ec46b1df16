"""The Diff tab and the timeline's diff colours, in the real window on demo runs with one
planted regression (one kernel made 30 % slower in the *after* run)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from strata.analysis import open_report
from strata.analysis.diff import diff_sets
from strata.app.stats_diff import HINT
from strata.app.theme import DIFF_COLORS, diff_colors
from strata.resources.demo import build_demo_reports
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle
from tests.helpers import mutate_sqlite

PLANTED = "softmax_warp_forward"
_SLOWER = QColor(DIFF_COLORS["slower"]).rgb()


def _demo(root: Path, seed: int, name: str, slower: bool) -> Path:
    path = root / name
    shutil.copy(build_demo_reports(root / f"s{seed}", ranks=1, steps=40, seed=seed)[0], path)
    if slower:
        mutate_sqlite(
            path,
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + CAST(ROUND((end - start) * 1.3)"
            f" AS INTEGER) WHERE shortName = (SELECT id FROM StringIds WHERE value = '{PLANTED}')",
        )
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two runs before (seeds 0, 2) and two after (seeds 1, 3), the planted kernel slower."""
    root = tmp_path_factory.mktemp("diff-gui")
    return {
        "before": _demo(root, 0, "before.sqlite", False),
        "after": _demo(root, 1, "after.sqlite", True),
        "before2": _demo(root, 2, "before2.sqlite", False),
        "after2": _demo(root, 3, "after2.sqlite", True),
    }


def _window(qtbot, make_window, paths: list[Path]):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    window.stats_controller = controller = install_stats_panel(window.context)
    window.open_paths(paths)
    wait_idle(qtbot, window)
    qtbot.waitUntil(
        lambda: len(window.binding.shown_reports()) == len(paths), timeout=LOAD_TIMEOUT_MS
    )
    wait_idle(qtbot, window)
    return window, controller


def _compare(qtbot, window, controller, before: list[Path], after: list[Path]):
    window.reports_panel.select_paths(before)
    window.set_diff_baseline()
    window.reports_panel.select_paths(after)
    with qtbot.waitSignal(controller.diff_list.diff_ready, timeout=LOAD_TIMEOUT_MS) as ready:
        window.compare_with_baseline()
    return ready.args[0]


@pytest.fixture
def pair(qtbot, make_window, runs):
    window, controller = _window(qtbot, make_window, [runs["before"], runs["after"]])
    frame = _compare(qtbot, window, controller, [runs["before"]], [runs["after"]])
    return window, controller, frame


def test_the_regression_comes_first_and_the_rest_is_noise(pair) -> None:
    window, controller, frame = pair
    panel = controller.panel
    assert panel.kind() == "diff"  # Compare with Baseline shows the tab
    assert panel.diff_kind() == "kernels"
    assert panel.current_frame() is not None
    shown = panel.current_frame()
    first = shown.iloc[0]
    assert PLANTED in first["name"]
    assert first["status"] == "slower"
    assert 29 < first["med_change_pct"] < 31
    assert shown["status"].iloc[1:].isin(("noise", "too few")).all()
    # The words and the colours: slower in vermillion, noise greyed.
    model = panel.model
    change = model.column_of("change")
    assert model.data(model.index(0, change)) == "▲ slower"
    grey = diff_colors("dark")["noise"]
    assert model.data(model.index(0, 0), Qt.ItemDataRole.ForegroundRole).name() == "#d55e00"
    assert model.data(model.index(1, 0), Qt.ItemDataRole.ForegroundRole).name() == grey
    assert diff_colors("dark")["too few"] == grey
    assert "1 slower" in panel.status_label.text()
    # The same numbers as main.py diff's.
    reports = window.binding.shown_reports()
    cli = diff_sets([reports[0]], [reports[1]], kinds=("kernels",))
    assert cli["Name"].tolist() == shown["name"].tolist()
    assert cli["Status"].tolist() == shown["status"].tolist()
    np.testing.assert_array_equal(cli["Total Delta"], shown["total_delta_ns"])


def test_clicking_a_row_selects_its_name_on_the_timeline(qtbot, pair) -> None:
    window, controller, _frame = pair
    panel = controller.panel
    index = panel.proxy.index(0, 0)
    rect = panel.table.visualRect(index)
    with qtbot.waitSignal(controller.instances_changed, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    active = window.timeline.state.highlight()
    assert active is not None
    assert PLANTED in active.name
    assert active.kind == "kernels"
    instances = controller.highlighter.instances()
    reports = window.binding.shown_reports()
    planted = sum(
        int(np.sum(np.char.find(r.strings.lookup(r.kernels["name_id"]).astype(str), PLANTED) >= 0))
        for r in reports
    )
    assert len(instances) == planted > 0


def _slower_pixels(window) -> int:
    image = window.timeline.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint32, image.width() * image.height())
    return int(np.sum(pixels == np.uint32(_SLOWER)))


def test_diff_colours_paint_the_regressed_kernel(qtbot, pair) -> None:
    window, controller, _frame = pair
    diff_list = controller.diff_list
    state = window.timeline.state
    assert _slower_pixels(window) == 0
    with qtbot.waitSignal(diff_list.tints_ready, timeout=LOAD_TIMEOUT_MS) as ready:
        window.actions_by_name["diff_colors"].trigger()
    tints = ready.args[0]
    assert state.diff().is_colored
    assert window.actions_by_name["diff_colors"].isChecked()
    for i, report in enumerate(window.binding.shown_reports()):
        names = report.strings.lookup(report.kernels["name_id"]).astype(str)
        is_planted = np.char.find(names, PLANTED) >= 0
        codes = window.timeline.state.tints().codes[(i, "kernels")]
        # Code 1 (slower) on exactly the planted kernel's events, 0 (dimmed) elsewhere.
        np.testing.assert_array_equal(codes == 1, is_planted)
        assert codes is tints.codes[(i, "kernels")]
    for track in state.tracks():  # the GPU rows in sight, above the CPU ones
        if track.kind == "gpu_all":
            state.pin(track.key)
    state.set_view_range(*state.activity_range())
    qtbot.waitUntil(lambda: _slower_pixels(window) > 0, timeout=5_000)
    window.timeline.setFocus()
    view = state.view_range()
    qtbot.keyClick(window.timeline, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)  # off
    assert state.view_range() == view  # the shortcut, not D's pan
    assert not state.diff().is_colored
    assert not window.timeline.state.tints()
    assert _slower_pixels(window) == 0


def test_clearing_the_baseline_leaves_diff_mode(qtbot, pair) -> None:
    window, controller, _frame = pair
    state = window.timeline.state
    with qtbot.waitSignal(controller.diff_list.tints_ready, timeout=LOAD_TIMEOUT_MS):
        window.toggle_diff_colors()
    assert window.timeline.state.tints()
    window.clear_diff()
    assert not state.diff().is_ready
    assert not state.diff().is_colored
    assert not window.timeline.state.tints()
    assert not window.actions_by_name["diff_colors"].isChecked()
    assert controller.panel.current_frame().empty
    assert controller.panel.status_label.text() == HINT
    assert controller.diff_list.frame() is None
    wait_idle(qtbot, window)
    assert not window.timeline.state.tints()  # no late job brought them back


def test_closing_a_compared_report_clears_the_tab(qtbot, pair, runs) -> None:
    window, controller, _frame = pair
    failures = []
    controller.failed.connect(failures.append)
    with qtbot.waitSignal(controller.diff_list.tints_ready, timeout=LOAD_TIMEOUT_MS):
        window.toggle_diff_colors()
    window.report_list.remove(runs["after"])
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: len(window.binding.shown_reports()) == 1, timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
    state = window.timeline.state
    assert state.diff().before == (str(runs["before"]),)
    assert state.diff().after == ()
    assert not state.diff().is_colored
    assert controller.panel.current_frame().empty
    assert "Baseline: before.sqlite" in controller.panel.status_label.text()
    assert not window.timeline.state.tints()
    assert failures == []


def test_groups_pool_each_side(qtbot, make_window, runs) -> None:
    paths = [runs["before"], runs["before2"], runs["after"], runs["after2"]]
    window, controller = _window(qtbot, make_window, paths)
    frame = _compare(qtbot, window, controller, paths[:2], paths[2:])
    assert window.reports_panel.selected_paths() == paths[2:]
    assert PLANTED in frame["name"].iloc[0]
    assert frame["status"].iloc[0] == "slower"
    reports = {str(r.path): r for r in window.binding.shown_reports()}
    cli = diff_sets([reports[str(p)] for p in paths[:2]], [reports[str(p)] for p in paths[2:]],
                    kinds=("kernels",))  # fmt: skip
    assert cli["Name"].tolist() == frame["name"].tolist()
    np.testing.assert_array_equal(cli["Instances Before"], frame["count_before"])
    np.testing.assert_array_equal(cli["Med Delta"], frame["med_delta_ns"])
    # Another kind: the NVTX ranges of the same sides, none of which changed.
    with qtbot.waitSignal(controller.diff_list.diff_ready, timeout=LOAD_TIMEOUT_MS) as ready:
        controller.panel.set_diff_kind("nvtx")
    nvtx = ready.args[0]
    assert len(nvtx) > 0
    assert controller.panel.current_frame()["name"].tolist() == nvtx["name"].tolist()
    before = [open_report(p, use_cache=False) for p in paths[:2]]
    after = [open_report(p, use_cache=False) for p in paths[2:]]
    expected = diff_sets(before, after, kinds=("nvtx",))
    assert expected["Status"].tolist() == nvtx["status"].tolist()
