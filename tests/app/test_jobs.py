"""The job runner: results and errors arrive by signal on the GUI thread; stale ones are dropped."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThread

from strata.analysis.errors import CorruptReportError
from strata.app.jobs import JobRunner


@pytest.fixture
def runner(qtbot):
    runner = JobRunner(max_threads=2)
    yield runner
    runner.cancel_all()
    runner.wait_for_done(10_000)


def test_finished_delivers_the_result_on_the_gui_thread(qtbot, runner) -> None:
    seen_threads = []

    def work(progress, cancel):
        seen_threads.append(QThread.currentThread())
        progress(0.5, "half")
        return 42

    job = runner.submit(work)
    progress_seen = []
    job.progressed.connect(lambda f, t: progress_seen.append((f, t)))
    results = []
    job.finished.connect(lambda r: results.append((r, QThread.currentThread())))
    with qtbot.waitSignal(job.finished, timeout=10_000):
        pass
    assert results[0][0] == 42
    gui_thread = qtbot_gui_thread()
    assert results[0][1] is gui_thread
    assert seen_threads[0] is not gui_thread
    assert progress_seen == [(0.5, "half")]
    assert runner.active_jobs() == []


def qtbot_gui_thread():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance().thread()


def test_failed_forwards_a_strata_error(qtbot, runner) -> None:
    def work(progress, cancel):
        raise CorruptReportError("x.sqlite", "truncated SQLite header")

    job = runner.submit(work)
    with qtbot.waitSignal(job.failed, timeout=10_000) as blocker:
        pass
    assert isinstance(blocker.args[0], CorruptReportError)
    assert "truncated" in str(blocker.args[0])


def test_failed_forwards_a_bug_too_and_logs_its_traceback(qtbot, runner, caplog) -> None:
    def work(progress, cancel):
        return 1 / 0

    job = runner.submit(work)
    with qtbot.waitSignal(job.failed, timeout=10_000) as blocker:
        pass
    assert isinstance(blocker.args[0], ZeroDivisionError)
    assert any("ZeroDivisionError" in (r.exc_text or "") for r in caplog.records)


def test_a_newer_job_on_the_same_channel_drops_the_older_result(qtbot, runner) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow(progress, cancel):
        started.set()
        release.wait(10)
        return "old"

    old = runner.submit(slow, channel="stats")
    old_results = []
    old.finished.connect(old_results.append)
    assert started.wait(10)
    new = runner.submit(lambda p, c: "new", channel="stats")
    assert old.is_cancelled
    with qtbot.waitSignal(new.finished, timeout=10_000) as blocker:
        pass
    assert blocker.args == ["new"]
    release.set()
    qtbot.waitUntil(lambda: not runner.active_jobs(), timeout=10_000)
    assert old_results == []


def test_jobs_on_other_channels_are_independent(qtbot, runner) -> None:
    a = runner.submit(lambda p, c: "a", channel="a")
    b = runner.submit(lambda p, c: "b", channel="b")
    with qtbot.waitSignals([a.finished, b.finished], timeout=10_000):
        pass


def test_cancel_sets_the_event_the_callable_sees(qtbot, runner) -> None:
    started = threading.Event()
    saw_cancel = threading.Event()

    def work(progress, cancel):
        started.set()
        if cancel.wait(10):
            saw_cancel.set()
        return "ignored"

    job = runner.submit(work)
    results = []
    job.finished.connect(results.append)
    assert started.wait(10)
    runner.cancel_all()
    qtbot.waitUntil(lambda: not runner.active_jobs(), timeout=10_000)
    assert saw_cancel.is_set()
    assert results == []
