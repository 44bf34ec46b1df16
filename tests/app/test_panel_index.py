"""The stats panel never waits for its window index: it answers by the one-shot path while
the index builds on a worker (the event loop runs on), then the index answers the same."""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from strata.analysis.errors import CancelledError
from strata.analysis.model import EventTable, freeze
from strata.resources.demo import build_demo_reports
from tests.app.conftest import LOAD_TIMEOUT_MS

JOB_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def demo_paths(tmp_path_factory):
    return build_demo_reports(tmp_path_factory.mktemp("demo"))


class _Gate:
    """Holds every window-index build until :meth:`open`; a cancelled build stops."""

    def __init__(self, monkeypatch) -> None:
        import strata.analysis.window_stats as window_stats

        self.release, self.cancelled = threading.Event(), threading.Event()
        self.waiting = 0
        real = window_stats.build_window_index

        def gated(*args, cancel=None, **kwargs):
            self.waiting += 1
            while not self.release.wait(0.005):
                if cancel is not None and cancel.is_set():
                    self.cancelled.set()
                    raise CancelledError("indexing cancelled")
            return real(*args, cancel=cancel, **kwargs)

        monkeypatch.setattr(window_stats, "build_window_index", gated)


def _ticking(qtbot, controller) -> list[bool]:
    """A 10 ms timer on the GUI thread; per tick, whether the kernels' index was building."""
    ticks: list[bool] = []
    timer = QTimer(controller)
    timer.timeout.connect(lambda: ticks.append(controller.table.is_indexing("kernels")))
    timer.start(10)
    return ticks


def _open_gated(qtbot, make_window, demo_paths, monkeypatch):
    from strata.app.stats_controller import install_stats_panel

    gate = _Gate(monkeypatch)
    window = make_window()
    controller = install_stats_panel(window.context)
    ticks = _ticking(qtbot, controller)
    window.open_paths(demo_paths)
    status = controller.panel.status_label
    qtbot.waitUntil(lambda: "unindexed" in status.text(), timeout=LOAD_TIMEOUT_MS)
    return window, controller, gate, ticks


def _by_key(frame):
    keys = [c for c in ("key", "style") if c in frame]
    return frame.drop(columns="group").sort_values(keys).reset_index(drop=True)


def test_the_one_shot_answer_comes_first_then_the_index_gives_the_same(
    qtbot, make_window, demo_paths, monkeypatch
):
    window, controller, gate, ticks = _open_gated(qtbot, make_window, demo_paths, monkeypatch)
    status = controller.panel.status_label
    assert controller.table.is_indexing("kernels")
    assert "indexing 0 %" in status.text()  # the build's progress, in the panel
    unindexed = controller.panel.current_frame().copy()
    assert unindexed["count"].sum() == sum(len(r.kernels) for r in window.binding.shown_reports())
    # A selection is answered at once too, while the index still waits.
    lo, hi = window.timeline.state.full_range()
    t0, t1 = lo + (hi - lo) // 3, lo + (hi - lo) // 2
    window.timeline.state.select(t0, t1)
    qtbot.waitUntil(lambda: not controller.table.is_running() and "unindexed" in status.text()
                    and controller.panel.scope().range_mode == "selection",
                    timeout=JOB_TIMEOUT_MS)  # fmt: skip
    selected = controller.panel.current_frame().copy()
    assert selected["count"].sum() < unindexed["count"].sum()
    qtbot.waitUntil(lambda: sum(ticks) >= 5, timeout=JOB_TIMEOUT_MS)  # the event loop runs on
    gate.release.set()
    qtbot.waitUntil(lambda: not controller.table.is_indexing() and not controller.table.is_running()
                    and "unindexed" not in status.text(), timeout=JOB_TIMEOUT_MS)  # fmt: skip
    assert "indexing" not in status.text()
    indexed = controller.panel.current_frame()
    assert _by_key(indexed).equals(_by_key(selected))  # the index took over: same table
    shown = window.binding.shown_set()
    assert shown.window_index("kernels", window.binding.offsets_ns(), build=False) is not None


def test_removing_a_report_cancels_its_index_build(qtbot, make_window, demo_paths, monkeypatch):
    window, controller, gate, _ticks = _open_gated(qtbot, make_window, demo_paths, monkeypatch)
    assert controller.table.is_indexing("kernels")
    window.report_list.remove(demo_paths[0])
    assert not controller.table.is_indexing()  # at once, before the smaller set's layout
    qtbot.waitUntil(gate.cancelled.is_set, timeout=2_000)  # the worker stops within a step


def _scaled(report, copies: int):
    """``report`` with its kernels repeated ``copies`` times after each other (in memory)."""
    kernels = report.kernels
    span = int(kernels.end_ns.max() - kernels.start_ns.min()) + 1
    columns = {n: np.tile(np.asarray(c), copies) for n, c in kernels.columns.items()}
    shift = np.repeat(np.arange(copies, dtype=np.int64) * span, len(kernels))
    columns["start_ns"] += shift
    columns["end_ns"] += shift
    order = np.lexsort((columns["start_ns"], columns["track_id"]))
    table = EventTable("kernels", {n: freeze(c[order]) for n, c in columns.items()},
                       kernels.track_keys, kernels.source)  # fmt: skip
    return dataclasses.replace(report, tables={**report.tables, "kernels": table})


def test_the_event_loop_runs_while_a_big_index_builds(qtbot, demo_paths):
    """1.4 M kernels: the build (on a JobRunner worker, threads, NumPy releasing the GIL)
    lets a 10 ms timer of the GUI thread fire throughout; closing stops it within a step."""
    from strata.analysis import open_report
    from strata.analysis.reportset import ReportSet
    from strata.app.jobs import JobRunner

    big = ReportSet([_scaled(open_report(demo_paths[0], use_cache=False), 100)])
    runner = JobRunner()
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(10)
    fractions: list[float] = []
    job = runner.submit(lambda progress, cancel: big.window_index("kernels", None, None, True,
                                                                  progress, cancel))  # fmt: skip
    job.progressed.connect(lambda fraction, _text: fractions.append(fraction))
    began = time.perf_counter()
    with qtbot.waitSignal(job.finished, timeout=JOB_TIMEOUT_MS):
        pass
    ended = time.perf_counter()
    timer.stop()
    during = [t for t in ticks if began <= t <= ended]
    assert len(big.window_index("kernels", build=False)) == len(big[0].kernels)
    assert fractions[-1] == pytest.approx(1.0)
    assert len(during) >= 5, (len(during), ended - began)
    gaps = np.diff([began, *during, ended])
    assert gaps.max() < 0.5, gaps.max()  # never frozen for long (a 2-core machine, shared)


def test_a_big_index_build_stops_within_a_step_when_cancelled(qtbot, demo_paths):
    """As MainWindow.closeEvent cancels every job: set once the build is under way."""
    from strata.analysis import open_report
    from strata.analysis.reportset import ReportSet
    from strata.app.jobs import JobRunner

    big = ReportSet([_scaled(open_report(demo_paths[0], use_cache=False), 100)])
    runner = JobRunner()
    times: dict[str, float] = {}

    def work(progress, cancel):
        def closing(fraction: float, text: str) -> None:
            if fraction > 0.2 and not cancel.is_set():  # the sort done, levels under way
                times["cancel"] = time.perf_counter()
                cancel.set()
            progress(fraction, text)

        try:
            return big.window_index("kernels", None, None, True, closing, cancel)
        except CancelledError:
            times["end"] = time.perf_counter()
            raise

    runner.submit(work)  # a cancelled job delivers nothing: wait for the worker itself
    qtbot.waitUntil(lambda: "end" in times, timeout=JOB_TIMEOUT_MS)
    assert runner.wait_for_done(10_000)
    assert times["end"] - times["cancel"] < 0.5
    assert big.window_index("kernels", build=False) is None  # a cancelled build keeps nothing
