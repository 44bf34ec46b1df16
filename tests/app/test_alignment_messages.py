"""The alignment warning: shown once, gone with its cause; an alignment belongs to the set
of reports it was chosen for, not to reports opened later."""

from __future__ import annotations

import pytest

from tests.app.conftest import small_real, wait_idle
from tests.conftest import requires_shared

MISSING = "no such range anywhere"


def _alignment_lines(window) -> list[str]:
    return [m for m in window.messages.messages() if "Alignment" in m or MISSING in m]


def _open(qtbot, window, paths) -> None:
    window.open_paths(paths)
    wait_idle(qtbot, window)
    qtbot.waitUntil(
        lambda: [r.path for r in window.binding.shown_reports()] == list(paths), timeout=60_000
    )
    wait_idle(qtbot, window)


def _close_all(qtbot, window) -> None:
    window.close_all_reports()
    qtbot.waitUntil(lambda: not window.binding.shown_reports(), timeout=20_000)
    wait_idle(qtbot, window)


@pytest.fixture
def two_runs(qtbot, make_window):
    window = make_window()
    _open(qtbot, window, [small_real(0), small_real(1)])
    return window


@requires_shared
def test_an_impossible_alignment_is_one_message_whatever_happens_next(qtbot, two_runs) -> None:
    window = two_runs
    window.alignment_bar.set_alignment("nvtx", MISSING)
    qtbot.waitUntil(lambda: bool(_alignment_lines(window)), timeout=20_000)
    wait_idle(qtbot, window)
    # Another layout of the same set (a report more) and a manual shift re-check it.
    _open(qtbot, window, [small_real(0), small_real(1), small_real(2)])
    window.report_list.set_manual_offset(small_real(1), 5_000)
    wait_idle(qtbot, window)
    lines = _alignment_lines(window)
    assert len(lines) == 1
    assert MISSING in lines[0]
    assert len(window.messages.messages()) == 1
    # The manual shift applies on the session start meanwhile.
    qtbot.waitUntil(lambda: window.timeline.state.offsets_ns()[1] == 5_000, timeout=20_000)


@requires_shared
def test_the_warning_goes_when_its_cause_does(qtbot, two_runs) -> None:
    window = two_runs
    window.alignment_bar.set_alignment("nvtx", MISSING)
    qtbot.waitUntil(lambda: bool(_alignment_lines(window)), timeout=20_000)
    window.alignment_bar.set_alignment("nvtx", "main")  # a range both reports have
    qtbot.waitUntil(lambda: not _alignment_lines(window), timeout=20_000)
    window.alignment_bar.set_alignment("nvtx", MISSING)
    qtbot.waitUntil(lambda: bool(_alignment_lines(window)), timeout=20_000)
    _close_all(qtbot, window)
    assert _alignment_lines(window) == []
    assert not window.messages.isVisible()


@requires_shared
def test_an_alignment_stays_with_its_reports(qtbot, make_window, settings) -> None:
    window = make_window()
    runs = [small_real(0), small_real(1)]
    _open(qtbot, window, runs)
    window.alignment_bar.set_alignment("nvtx", "main")
    qtbot.waitUntil(lambda: window.timeline.state.offsets_ns() != [0, 0], timeout=20_000)
    _close_all(qtbot, window)
    # An unrelated report opened next starts from the session start, with no warning.
    _open(qtbot, window, [small_real(2)])
    assert window.alignment_bar.mode() == "session"
    assert window.binding.alignment().mode == "session"
    assert _alignment_lines(window) == []
    _close_all(qtbot, window)
    # The two runs get their alignment back, in this window and in the next one.
    _open(qtbot, window, runs)
    qtbot.waitUntil(lambda: window.timeline.state.offsets_ns() != [0, 0], timeout=20_000)
    assert (window.alignment_bar.mode(), window.alignment_bar.nvtx_name()) == ("nvtx", "main")
    window.close()
    again = make_window()
    assert again.alignment_bar.mode() == "session"
    _open(qtbot, again, runs)
    qtbot.waitUntil(lambda: again.timeline.state.offsets_ns() != [0, 0], timeout=20_000)
    assert again.alignment_bar.mode() == "nvtx"


@requires_shared
def test_a_report_added_to_an_aligned_set_keeps_the_alignment(qtbot, two_runs) -> None:
    window = two_runs
    window.alignment_bar.set_alignment("wallclock")
    qtbot.waitUntil(lambda: window.timeline.state.offsets_ns() != [0, 0], timeout=20_000)
    _open(qtbot, window, [small_real(0), small_real(1), small_real(2)])
    assert window.alignment_bar.mode() == "wallclock"
    assert window.binding.alignment().mode == "wallclock"
