"""Rows of the timeline on real reports, checked against the SQLite files directly."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.cpu import core_intervals
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import build_slice_tables, report_labels
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
SERIAL = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_serial.sqlite"
CLOVERLEAF = REAL_DIR / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"


@requires_shared
@pytest.mark.parametrize("path", [CONCURRENT, SERIAL, CLOVERLEAF], ids=lambda p: p.stem[:30])
def test_one_row_per_gpu_stream_in_the_data(load_report, path) -> None:
    report = load_report(path)
    tracks = ReportSet([report]).tracks()
    streams = sql_rows(
        path,
        "SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "UNION SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY",
    )
    rows = {(t.key.split("/")[-2], t.label) for t in tracks if t.kind == "gpu_stream"}
    assert rows == {(f"gpu{d}", f"Stream {s}") for d, s in streams}
    devices = {d for d, _s in streams}
    assert sum(t.kind == "gpu_all" for t in tracks) == len(devices)


@requires_shared
def test_stream_rows_draw_every_kernel_once(load_report) -> None:
    report = load_report(CONCURRENT)
    tables = build_slice_tables(report)
    tracks = [t for t in ReportSet([report]).tracks() if t.kind == "gpu_stream"]
    drawn = sum(
        np.subtract(*tables[name].bounds(track_id)[::-1])
        for t in tracks
        for name, track_id in t.parts
        if name == "kernels"
    )
    assert drawn == sql_rows(CONCURRENT, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]


@requires_shared
def test_nvtx_rows_one_per_nesting_level(load_report) -> None:
    report = load_report(SERIAL)
    tracks = ReportSet([report]).tracks()
    nvtx = [t for t in tracks if t.kind == "nvtx"]
    # Nesting by containment, computed here with a plain stack on the push/pop ranges.
    ranges = sql_rows(
        SERIAL,
        "SELECT globalTid, start, end FROM NVTX_EVENTS WHERE eventType = 59 "
        "ORDER BY globalTid, start, end DESC",
    )
    depth_by_tid: dict[int, int] = {}
    stack: list[tuple[int, int]] = []
    for gtid, start, end in ranges:
        stack = [(g, e) for g, e in stack if g == gtid and e > start]
        depth_by_tid[gtid] = max(depth_by_tid.get(gtid, 0), len(stack) + 1)
        stack.append((gtid, end))
    assert len(nvtx) == sum(depth_by_tid.values())
    assert sorted(t.level for t in nvtx) == sorted(
        lvl for d in depth_by_tid.values() for lvl in range(d)
    )
    for track in nvtx:
        ((name, track_id),) = track.parts
        lo, hi = build_slice_tables(report)[name].bounds(track_id)
        starts = report.tables["nvtx"]["start_ns"][lo:hi]
        ends = report.tables["nvtx"]["end_ns"][lo:hi]
        assert (starts[1:] >= ends[:-1]).all(), "intervals on one NVTX row overlap"


@requires_shared
def test_cpu_core_rows_match_sched_events(load_report) -> None:
    report = load_report(SERIAL)
    expected = sql_rows(
        SERIAL,
        "SELECT cpu, count(*) FROM (SELECT cpu, isSchedIn, LEAD(start) OVER "
        "(PARTITION BY globalTid ORDER BY start, rowid) AS nxt FROM SCHED_EVENTS) "
        "WHERE isSchedIn != 0 AND nxt IS NOT NULL GROUP BY cpu ORDER BY cpu",
    )
    runs = core_intervals(report)
    cores, counts = np.unique(runs.cpu, return_counts=True)
    assert list(zip(cores.tolist(), counts.tolist(), strict=True)) == expected
    rows = [t for t in ReportSet([report]).tracks() if t.kind == "cpu"]
    assert [t.label for t in rows] == [f"Core {c}" for c, _n in expected]
    same_core = runs.cpu[1:] == runs.cpu[:-1]
    assert (runs.start_ns[1:][same_core] >= runs.end_ns[:-1][same_core]).all()


@requires_shared
def test_keys_unique_and_stable_across_reports(load_report) -> None:
    reports = [load_report(CONCURRENT), load_report(SERIAL), load_report(CONCURRENT)]
    tracks = ReportSet(reports).tracks()
    assert len({t.key for t in tracks}) == len(tracks)
    labels = report_labels(reports)
    assert len(set(labels)) == 3
    again = ReportSet(reports).tracks()
    assert [t.key for t in again] == [t.key for t in tracks]
    assert {t.report_index for t in tracks} == {0, 1, 2}


@requires_shared
def test_thread_rows_sit_under_their_process(load_report) -> None:
    report = load_report(SERIAL)
    pid = sql_rows(
        SERIAL, "SELECT DISTINCT globalTid / 16777216 % 16777216 FROM CUPTI_ACTIVITY_KIND_RUNTIME"
    )
    api = [t for t in ReportSet([report]).tracks() if t.kind == "cuda_api"]
    assert api
    assert all(t.group[1] == "Processes" and t.group[2].endswith(f"[{pid[0][0]}]") for t in api)


@requires_shared
def test_a_one_core_report_says_one_core(tmp_path) -> None:
    """The CPU group once read 'CPU (1 cores)'."""
    import shutil

    from strata.analysis import open_report
    from tests.helpers import mutate_sqlite

    copy = tmp_path / "one_core.sqlite"
    shutil.copyfile(SERIAL, copy)
    mutate_sqlite(copy, "DELETE FROM SCHED_EVENTS WHERE cpu != (SELECT min(cpu) FROM SCHED_EVENTS)")
    report = open_report(copy, use_cache=False)
    groups = {t.group[-1] for t in ReportSet([report]).tracks() if t.kind == "cpu"}
    assert groups == {"CPU (1 core)"}
