"""The report list: background loads, order, duplicates, folders, failures, close."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from strata.app.jobs import JobRunner
from strata.app.loading import LOADED, ReportList
from tests.app.conftest import LOAD_TIMEOUT_MS, small_real
from tests.conftest import FIXTURES_DIR, requires_fixtures, requires_shared


@pytest.fixture
def report_list(qtbot):
    runner = JobRunner(max_threads=2)
    reports = ReportList(runner, use_cache=False)
    yield reports
    runner.cancel_all()
    runner.wait_for_done(30_000)


def _wait_loaded(qtbot, report_list) -> None:
    qtbot.waitUntil(lambda: not report_list.is_loading(), timeout=LOAD_TIMEOUT_MS)


@requires_shared
def test_reports_load_in_the_order_they_were_added(qtbot, report_list) -> None:
    # The bigger report first: it finishes last, but stays first in the list.
    big, small = small_real(2), small_real(0)
    added = report_list.add_paths([big, small])
    assert [e.path for e in added] == [big.resolve(), small.resolve()]
    _wait_loaded(qtbot, report_list)
    assert [r.name for r in report_list.reports()] == [big.name, small.name]
    assert all(e.state == LOADED and e.fraction == 1.0 for e in report_list.entries())


@requires_shared
def test_a_report_already_open_is_ignored(qtbot, report_list) -> None:
    report_list.add_paths([small_real(0)])
    ignored = []
    report_list.duplicate_ignored.connect(ignored.append)
    assert report_list.add_paths([small_real(0), Path(str(small_real(0)))]) == []
    assert ignored == [small_real(0).resolve()] * 2
    _wait_loaded(qtbot, report_list)
    assert len(report_list.reports()) == 1


@requires_shared
def test_a_folder_adds_every_report_in_it(qtbot, report_list, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for i in (0, 1):
        shutil.copy(small_real(i), folder / small_real(i).name)
    (folder / "notes.txt").write_text("not a report")
    report_list.add_paths([folder])
    _wait_loaded(qtbot, report_list)
    assert sorted(r.name for r in report_list.reports()) == sorted(
        small_real(i).name for i in (0, 1)
    )


@requires_shared
def test_a_failing_file_is_reported_and_the_others_load(qtbot, report_list, tmp_path) -> None:
    bad = tmp_path / "garbage.sqlite"
    bad.write_text("not a database\n" * 50)
    failures = []
    report_list.report_failed.connect(lambda path, exc: failures.append((path, exc)))
    report_list.add_paths([small_real(0), bad, tmp_path / "missing.sqlite"])
    _wait_loaded(qtbot, report_list)
    assert [r.name for r in report_list.reports()] == [small_real(0).name]
    reasons = {Path(p).name: str(exc) for p, exc in failures}
    assert "not an SQLite database" in reasons["garbage.sqlite"]
    assert "no such file" in reasons["missing.sqlite"]


@requires_shared
def test_remove_closes_a_loaded_report_and_cancels_a_loading_one(qtbot, report_list) -> None:
    report_list.add_paths([small_real(0)])
    _wait_loaded(qtbot, report_list)
    with qtbot.waitSignal(report_list.reports_changed):
        assert report_list.remove(small_real(0))
    assert report_list.reports() == []
    report_list.add_paths([small_real(2)])
    report_list.remove(small_real(2))  # still loading: its result must be dropped
    qtbot.wait(50)
    report_list._runner.wait_for_done(30_000)
    qtbot.wait(50)
    assert report_list.entries() == []
    assert not report_list.remove(small_real(2))


@requires_fixtures
def test_manual_offsets_follow_the_loaded_reports(qtbot, report_list) -> None:
    report_list.add_paths([FIXTURES_DIR / "syn.sqlite"])
    _wait_loaded(qtbot, report_list)
    with qtbot.waitSignal(report_list.offsets_changed):
        report_list.set_manual_offset(FIXTURES_DIR / "syn.sqlite", 2_500_000)
    assert report_list.manual_offsets_ns() == [2_500_000]


def test_a_folder_adds_its_reports_in_natural_order(qtbot, report_list, tmp_path: Path) -> None:
    from tests.cli.conftest import plant

    folder = tmp_path / "sweep"
    folder.mkdir()
    names = ["s1.sqlite", "s2.sqlite", "s4.sqlite", "s8.sqlite", "s16.sqlite"]
    for name in reversed(names):
        plant(folder / name)
    added = report_list.add_paths([folder])
    assert [e.path.name for e in added] == names  # not s1, s16, s2, s4, s8
    _wait_loaded(qtbot, report_list)
    assert [r.name for r in report_list.reports()] == names
