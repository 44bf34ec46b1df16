"""Progressive open in the window: kernel rows drawn before the load ends, the UI live, the
user's view kept as the rest arrives, and the same end state as a whole load."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QThreadPool, QTimer

from strata.analysis import cache, loader, open_report
from strata.analysis.reportset import ReportSet
from strata.app.loading import LOADED, LOADING
from tests.app.conftest import LOAD_TIMEOUT_MS, small_real, wait_idle
from tests.conftest import REAL_DIR, SMALL_LEAD_ROWS, requires_shared

HOLD_TIMEOUT_S = 60


@pytest.fixture
def held_cuda_api(monkeypatch):
    """Hold the read of the CUDA API table until the test sets the returned event."""
    release = threading.Event()
    plan = loader._column_read

    def held_read(db, kind, strings):
        read = plan(db, kind, strings)
        if kind != "cuda_api":
            return read
        convert = read.convert

        def slow_convert(batch):
            release.wait(HOLD_TIMEOUT_S)  # bounded: a failing test must not hang
            return convert(batch)

        read.convert = slow_convert  # a fresh plan of this load: changing it is private
        return read

    monkeypatch.setattr(loader, "_column_read", held_read)
    yield release
    release.set()


def _kernel_events_drawn(window, parts: tuple[str, ...] | None = None) -> int:
    """Events on the kernel (GPU stream) rows of the timeline (of the slice tables
    ``parts`` only, e.g. ``("kernels",)``; None: all)."""
    shown = window.binding.shown_set()
    count = 0
    for track in window.binding.tracks():
        if track.kind == "gpu_stream":
            for name, track_id in track.parts:
                if parts is None or name in parts:
                    offsets = shown.slice_tables(track.report_index)[name].track_offsets
                    count += int(offsets[track_id + 1] - offsets[track_id])
    return count


@requires_shared
def test_kernel_rows_are_drawn_before_the_load_ends_and_the_view_survives(
    qtbot, make_window, settings, held_cuda_api, tmp_path: Path
) -> None:
    from strata.app.stats_controller import install_stats_panel

    report = tmp_path / small_real(2).name  # a new path: no cache entry, a cold read
    shutil.copyfile(small_real(2), report)
    held_cuda_api.set()
    whole = ReportSet([open_report(report, use_cache=False)])
    held_cuda_api.clear()
    # A pin saved last time, on a CUDA API row: that row arrives last.
    api_row = next(t.key for t in whole.tracks() if t.kind == "cuda_api")
    settings.set_pinned_keys([report.resolve()], [api_row])
    window = make_window()
    controller = install_stats_panel(window.context)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    (entry,) = window.open_paths([report])

    # The newest partial report shown (an older one may be laid out first), kernels drawn.
    qtbot.waitUntil(
        lambda: (
            any(r is entry.report for r in window.binding.shown_reports())
            and _kernel_events_drawn(window) > 0
        ),
        timeout=LOAD_TIMEOUT_MS,
    )
    assert entry.state == LOADING
    assert not entry.report.complete
    assert "cuda_api" in entry.report.pending
    # The statistics wait for the whole report rather than show partial totals.
    assert controller.panel.current_frame().empty
    assert "Loading" in controller.panel.status_label.text()
    # The UI thread is free while the CUDA API is held: the timer keeps firing.
    before = len(ticks)
    qtbot.wait(100)
    assert len(ticks) > before
    assert entry.state == LOADING

    # The user pans, zooms, pins and selects while the rest streams in.
    timeline = window.timeline
    kernel_row = next(t.key for t in window.binding.tracks() if t.kind == "gpu_stream")
    timeline.state.pin(kernel_row)
    lo, hi = timeline.state.full_range()
    view = (lo + (hi - lo) // 4, lo + (hi - lo) // 2)
    timeline.state.set_view_range(*view)
    timeline.state.select(view[0], view[0] + (view[1] - view[0]) // 2)
    selection = timeline.state.time_selection()

    held_cuda_api.set()
    qtbot.waitUntil(lambda: entry.state == LOADED, timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
    assert entry.report.complete
    assert timeline.state.pinned_keys() == [api_row, kernel_row]
    assert tuple(timeline.state.view_range()) == view
    assert timeline.state.time_selection() == selection

    # The same rows and slice tables as a report loaded whole.
    assert [t.key for t in window.binding.tracks()] == [t.key for t in whole.tracks()]
    shown, expected = window.binding.shown_set().slice_tables(0), whole.slice_tables(0)
    assert sorted(shown) == sorted(expected)
    for name, table in expected.items():
        np.testing.assert_array_equal(shown[name].start_ns, table.start_ns, err_msg=name)
        np.testing.assert_array_equal(shown[name].track_offsets, table.track_offsets)
    # The statistics follow for the whole report (the visible range's, by default).
    status = controller.panel.status_label
    qtbot.waitUntil(lambda: "events" in status.text(), timeout=LOAD_TIMEOUT_MS)
    timer.stop()


#: A real report with 200 kernels on four streams.
FOUR_STREAMS = REAL_DIR / "Lianhang666__gpu4__report2.sqlite"


@requires_shared
def test_the_first_kernels_are_drawn_while_their_table_is_read(
    qtbot, make_window, held_kernels, tmp_path: Path
) -> None:
    report = tmp_path / FOUR_STREAMS.name  # a new path: no cache entry, a cold read
    shutil.copyfile(FOUR_STREAMS, report)
    window = make_window()
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    (entry,) = window.open_paths([report])

    qtbot.waitUntil(lambda: _kernel_events_drawn(window) > 0, timeout=LOAD_TIMEOUT_MS)
    # What is drawn is the lead chunk of the kernel table, which is still being read.
    assert entry.state == LOADING
    assert "kernels" in entry.report.pending
    drawn = _kernel_events_drawn(window)
    assert drawn == _kernel_events_drawn(window, ("kernels",)) == SMALL_LEAD_ROWS
    assert len(entry.report.tables["kernels"]) == SMALL_LEAD_ROWS
    # The UI is live and the view moves while the rest of the kernels are held.
    before = len(ticks)
    qtbot.wait(100)
    assert len(ticks) > before
    timeline = window.timeline
    lo, hi = timeline.state.full_range()
    timeline.state.set_view_range(lo, lo + (hi - lo) // 3)
    timeline.grab()  # paints the partial rows
    assert tuple(timeline.state.view_range()) == (lo, lo + (hi - lo) // 3)
    assert entry.state == LOADING

    held_kernels.set()
    qtbot.waitUntil(lambda: entry.state == LOADED, timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
    timer.stop()
    kernels = len(entry.report.tables["kernels"])
    assert _kernel_events_drawn(window, ("kernels",)) == kernels > SMALL_LEAD_ROWS
    assert tuple(timeline.state.view_range()) == (lo, lo + (hi - lo) // 3)


@requires_shared
def test_closing_a_report_while_its_first_kernels_are_shown_cancels_its_load(
    qtbot, make_window, held_kernels, tmp_path: Path
) -> None:
    report = tmp_path / FOUR_STREAMS.name
    shutil.copyfile(FOUR_STREAMS, report)
    window = make_window()
    (entry,) = window.open_paths([report])
    qtbot.waitUntil(lambda: _kernel_events_drawn(window) > 0, timeout=LOAD_TIMEOUT_MS)
    job = entry.job
    assert window.report_list.remove(report)
    held_kernels.set()
    qtbot.waitUntil(lambda: job.is_done, timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
    assert window.report_list.entries() == []
    assert window.binding.shown_reports() == ()
    assert cache.load_cached(cache.cache_key(report), report) is None


@requires_shared
def test_reports_opened_together_each_draw_their_first_kernels_while_loading(
    qtbot, make_window, held_kernels, tmp_path: Path
) -> None:
    # As many reports as the job runner has workers: their loads must not leave the layout
    # of what they hand over queued behind them.
    window = make_window()
    count = max(2, QThreadPool.globalInstance().maxThreadCount())
    paths = []
    for i in range(count):
        paths.append(tmp_path / f"r{i}" / FOUR_STREAMS.name)
        paths[-1].parent.mkdir()
        shutil.copyfile(FOUR_STREAMS, paths[-1])
    entries = window.open_paths(paths)

    def drawn_per_report() -> list[int]:
        shown = window.binding.shown_set()
        counts = [0] * len(shown)
        for track in window.binding.tracks():
            if track.kind == "gpu_stream":
                for name, track_id in track.parts:
                    offsets = shown.slice_tables(track.report_index)[name].track_offsets
                    counts[track.report_index] += int(offsets[track_id + 1] - offsets[track_id])
        return counts

    qtbot.waitUntil(
        lambda: drawn_per_report() == [SMALL_LEAD_ROWS] * count, timeout=LOAD_TIMEOUT_MS
    )
    assert all(entry.state == LOADING for entry in entries)
    held_kernels.set()
    qtbot.waitUntil(lambda: all(e.state == LOADED for e in entries), timeout=LOAD_TIMEOUT_MS)
    wait_idle(qtbot, window)
