"""Alignment controls: session, wall clock, first NVTX range, manual offsets, the demo."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.app.conftest import small_real, wait_idle
from tests.conftest import requires_shared


def _sql_one(path: Path, sql: str) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(con.execute(sql).fetchone()[0])
    finally:
        con.close()


def _first_range_ns(path: Path, name: str) -> int:
    return _sql_one(
        path,
        "SELECT min(start) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND "
        f"coalesce((SELECT value FROM StringIds WHERE id = textId), text) = '{name}'",
    )


def _utc_start_ns(path: Path) -> int:
    return _sql_one(path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")


@pytest.fixture
def two_runs(qtbot, make_window):
    """Two runs of one program (the same NVTX ranges), opened in one window."""
    window = make_window()
    window.open_paths([small_real(0), small_real(1)])
    wait_idle(qtbot, window)
    return window


def _wait_offsets(qtbot, window, predicate) -> list[int]:
    qtbot.waitUntil(lambda: predicate(window.timeline.state.offsets_ns()), timeout=20_000)
    return window.timeline.state.offsets_ns()


@requires_shared
def test_session_alignment_is_the_default(two_runs) -> None:
    assert two_runs.alignment_bar.mode() == "session"
    assert two_runs.timeline.state.offsets_ns() == [0, 0]


@requires_shared
def test_wallclock_alignment_places_runs_by_their_utc_start(qtbot, two_runs) -> None:
    two_runs.alignment_bar.set_alignment("wallclock")
    offsets = _wait_offsets(qtbot, two_runs, lambda o: o != [0, 0])
    utc = [_utc_start_ns(small_real(i)) for i in (0, 1)]
    assert offsets[1] - offsets[0] == utc[1] - utc[0]
    assert min(offsets) == 0


@requires_shared
def test_nvtx_alignment_lines_up_the_first_instance(qtbot, two_runs) -> None:
    assert "main" in [
        two_runs.alignment_bar._name_combo.itemText(i)
        for i in range(two_runs.alignment_bar._name_combo.count())
    ]
    two_runs.alignment_bar.set_alignment("nvtx", "main")
    offsets = _wait_offsets(qtbot, two_runs, lambda o: o != [0, 0])
    firsts = [_first_range_ns(small_real(i), "main") for i in (0, 1)]
    assert firsts[0] + offsets[0] == firsts[1] + offsets[1]
    assert two_runs.settings.alignment([small_real(0), small_real(1)]) == ("nvtx", "main")
    assert two_runs.settings.alignment_nvtx_name() == "main"


@requires_shared
def test_an_nvtx_name_no_report_has_is_explained(qtbot, two_runs) -> None:
    two_runs.alignment_bar.set_alignment("nvtx", "no such range anywhere")
    qtbot.waitUntil(lambda: bool(two_runs.messages.messages()), timeout=20_000)
    assert "no such range anywhere" in two_runs.messages.messages()[-1]
    assert two_runs.timeline.state.offsets_ns() == [0, 0]


@requires_shared
def test_a_manual_offset_shifts_one_report(qtbot, two_runs) -> None:
    two_runs.report_list.set_manual_offset(small_real(1), 7_000_000)
    offsets = _wait_offsets(qtbot, two_runs, lambda o: o != [0, 0])
    assert offsets == [0, 7_000_000]


def test_the_view_menu_alignment_actions_follow_the_tool_bar(make_window) -> None:
    window = make_window()
    bar = window.alignment_bar
    bar.set_alignment("wallclock")
    checked = [a.data() for a in bar.mode_actions() if a.isChecked()]
    assert checked == ["wallclock"]
    next(a for a in bar.mode_actions() if a.data() == "session").trigger()
    assert bar.mode() == "session"


def test_the_demo_opens_through_the_loader(qtbot, make_window) -> None:
    pytest.importorskip("strata.resources.demo", reason="needs the demo builder resources/demo.py")
    from strata.analysis.cache import cache_root

    window = make_window()
    window.open_demo()
    qtbot.waitUntil(lambda: len(window.report_list.entries()) == 4, timeout=60_000)
    wait_idle(qtbot, window)
    names = [r.name for r in window.binding.shown_reports()]
    assert names == [f"rank{i}.sqlite" for i in range(4)]
    assert all(cache_root() / "demo" in e.path.parents for e in window.report_list.entries())
    assert window.messages.messages() == []
    assert window.settings.recent_files() == []  # the demo is not a recent file
