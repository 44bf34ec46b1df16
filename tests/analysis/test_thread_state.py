"""Thread-state and CPU-sample rows of threads, checked against SCHED_EVENTS and
COMPOSITE_EVENTS read with sqlite3."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.reportset import ReportSet
from strata.analysis.schema import tid_of
from strata.viewer.state import TimelineState
from strata.viewer.state.rows import match_tracks
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
ICON_CPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__cpu.sqlite"
EX_GPU = REAL_DIR / "extra-p__extrap__ex-gpu.s10.sqlite"

#: Per thread, each sched-in paired with the thread's next row (out first on a tie).
_RUNS = (
    "SELECT globalTid, start, nxt, cpu FROM (SELECT globalTid, start, cpu, isSchedIn, "
    "LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, isSchedIn, rowid) AS nxt "
    "FROM SCHED_EVENTS) WHERE isSchedIn != 0 AND nxt IS NOT NULL ORDER BY globalTid, start"
)


def _rows(report, kind: str):
    reports = ReportSet([report])
    tracks = [t for t in reports.tracks() if t.kind == kind]
    return reports, tracks


@requires_shared
@pytest.mark.parametrize("path", [SAXPY, ICON_CPU, EX_GPU], ids=lambda p: p.stem[:24])
def test_thread_state_rows_are_the_sched_intervals(load_report, path) -> None:
    report = load_report(path)
    expected = sql_rows(path, _RUNS)
    reports, tracks = _rows(report, "thread_state")
    table = reports.slice_tables(0)["thread_state"]
    by_thread = {}
    for gtid, start, end, cpu in expected:
        by_thread.setdefault(gtid, []).append((start, end, cpu))
    # One row per thread that ran, under that thread's group.
    assert len(tracks) == len(by_thread)
    for track in tracks:
        ((part, track_id),) = track.parts
        gtid = int(table.track_keys["global_tid"].iloc[track_id])
        assert track.group[-1].endswith(f"[{int(tid_of(gtid))}]")
        lo, hi = table.bounds(track_id)
        want = by_thread[gtid]
        assert table.start_ns[lo:hi].tolist() == [s for s, _e, _c in want]
        # An interval is cut only where its core ran another thread first (a lost
        # sched-out): never longer than the thread's own next row says.
        ends = table.end_ns[lo:hi]
        assert (ends <= np.array([e for _s, e, _c in want])).all()
        assert (ends >= table.start_ns[lo:hi]).all()
        labels = table.labels[table.label_ids[lo:hi]].tolist()
        assert labels == [f"Running on core {c}" for _s, _e, c in want]
    # Nothing cut in these reports: the running time per thread is SQL's exactly.
    total = int((table.end_ns - table.start_ns).sum())
    assert total == sum(e - s for _g, s, e, _c in expected)


@requires_shared
@pytest.mark.parametrize("path", [SAXPY, ICON_CPU], ids=lambda p: p.stem[:24])
def test_sample_rows_hold_each_threads_samples(load_report, path) -> None:
    report = load_report(path)
    expected = sql_rows(
        path, "SELECT globalTid, count(*), min(start), max(start) FROM COMPOSITE_EVENTS "
        "GROUP BY globalTid ORDER BY globalTid",
    )  # fmt: skip
    reports, tracks = _rows(report, "samples")
    table = reports.slice_tables(0)["samples"]
    keys = report.tables["samples"].track_keys
    got = []
    for track in tracks:
        ((_part, track_id),) = track.parts
        lo, hi = table.bounds(track_id)
        starts = table.start_ns[lo:hi]
        got.append((int(keys["global_tid"].iloc[track_id]), hi - lo, int(starts.min()),
                    int(starts.max())))  # fmt: skip
        assert (table.end_ns[lo:hi] == starts).all()  # ticks: instants
    assert sorted(got) == expected


@requires_shared
def test_thread_state_rows_pin_hide_and_match(load_report) -> None:
    report = load_report(SAXPY)
    tracks = ReportSet([report]).tracks()
    state = TimelineState()
    state.set_tracks(tracks)
    named = match_tracks(tracks, r"MPI Rank 0 .*/ Thread state")
    assert len(named) == 1
    assert state.pin_matching(r"MPI Rank 0 .*/ Thread state") == 1
    pinned, rest = state.layout((26, 22, 20))
    assert [r.track.key for r in pinned.rows] == [named[0].key]
    assert named[0].key not in {r.track.key for r in rest.rows if r.track is not None}
    others = [t for t in tracks if t.kind == "thread_state" and t.key != named[0].key]
    for track in others:
        state.hide(track.key)
    _, rest = state.layout((26, 22, 20))
    shown = {r.track.key for r in rest.rows if r.track is not None}
    assert not shown & {t.key for t in others}
