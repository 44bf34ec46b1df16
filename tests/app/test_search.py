"""Search (Ctrl+F) in the main window: type a name, step through the matches with Enter."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from strata.resources.demo import SLOW_KERNEL_SHORT_NAME
from tests.app.conftest import open_shown

JOB_TIMEOUT_MS = 60_000


@pytest.fixture
def searching(qtbot, make_window, demo_reports):
    from strata.app.search_controller import install_search

    window = make_window()
    open_shown(qtbot, window, demo_reports)
    controller = install_search(window.context)
    return window, controller


def _type(qtbot, controller, text: str) -> None:
    bar = controller.bar
    with qtbot.waitSignal(controller.matches_ready, timeout=JOB_TIMEOUT_MS):
        qtbot.keyClicks(bar.field, text)


def _kernel_starts(window, short_name: str) -> np.ndarray:
    """Shared-axis starts of every kernel whose short name contains ``short_name``."""
    starts = []
    for i, report in enumerate(window.binding.shown_reports()):
        k = report.kernels
        names = report.strings.lookup(k["short_name_id"]).astype(str)
        hit = np.char.find(names.astype("U"), short_name) >= 0
        starts.append(k.start_ns[hit] + window.binding.offsets_ns()[i])
    return np.sort(np.concatenate(starts))


def test_ctrl_f_opens_the_bar_and_enter_steps_through_matches(qtbot, searching) -> None:
    window, controller = searching
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert controller.bar.isVisible()
    assert controller.bar.field.hasFocus()
    _type(qtbot, controller, SLOW_KERNEL_SHORT_NAME)
    expected = _kernel_starts(window, SLOW_KERNEL_SHORT_NAME)
    state = window.timeline.state.search()
    assert state.count == len(expected) > 1
    assert controller.bar.count_label.text() == f"{len(expected):,} matches"

    qtbot.keyClick(controller.bar.field, Qt.Key.Key_Return)
    selected = window.timeline.state.selected_event()
    offset = window.binding.offsets_ns()[selected.report_index]
    assert selected.table == "kernels"
    assert selected.start_ns + offset == expected[0]
    t0, t1 = window.timeline.state.view_range()
    assert t0 < expected[0] < t1
    assert abs((t0 + t1) // 2 - (selected.start_ns + selected.end_ns) // 2 - offset) <= 1
    assert controller.bar.count_label.text() == f"1 / {len(expected):,}"

    qtbot.keyClick(controller.bar.field, Qt.Key.Key_Return)
    second = window.timeline.state.selected_event()
    assert second.start_ns + window.binding.offsets_ns()[second.report_index] == expected[1]
    qtbot.keyClick(controller.bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(controller.bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    last = window.timeline.state.selected_event()
    assert last.start_ns + window.binding.offsets_ns()[last.report_index] == expected[-1]
    assert window.timeline.state.search().current == len(expected) - 1


def test_matches_stand_out_and_others_are_dimmed(qtbot, searching) -> None:
    window, controller = searching
    controller.open_search()
    _type(qtbot, controller, SLOW_KERNEL_SHORT_NAME)
    highlights = window.timeline.state.highlights()
    kernels = highlights[(0, "kernels")]
    report = window.binding.shown_reports()[0]
    names = report.strings.lookup(report.kernels["short_name_id"]).astype(str)
    np.testing.assert_array_equal(
        kernels, np.char.find(names.astype("U"), SLOW_KERNEL_SHORT_NAME) >= 0
    )
    assert not highlights[(0, "cuda_api")].any()  # no API call has that name: all dimmed
    controller.close()
    assert window.timeline.state.highlights() == {}
    assert not controller.bar.isVisible()


def test_a_bad_regex_says_why_in_the_bar(qtbot, searching) -> None:
    window, controller = searching
    controller.open_search()
    controller.bar.regex_box.setChecked(True)
    qtbot.keyClicks(controller.bar.field, "gemm(")
    controller.bar.submit()
    state = window.timeline.state.search()
    assert state.error.startswith("invalid regular expression")
    assert state.count == 0
    assert "\n" not in state.error
    assert controller.bar.count_label.text() == state.error
