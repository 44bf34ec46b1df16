"""Counter rows: GPU metrics and CUDA memory usage, checked against the SQLite tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import open_report
from strata.analysis.counters import counter_lines, counter_value_at
from strata.analysis.errors import CorruptReportError
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import METRICS_GROUP
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import mutate_sqlite, run_cli, sql_rows

METRICS = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
MEMORY = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"

pytestmark = requires_shared


def _tracks(path: Path, load_report, kind: str):
    reports = ReportSet([load_report(path)])
    return reports, [t for t in reports.tracks() if t.kind == kind]


def test_gpu_metric_rows_are_the_reports_metrics(load_report) -> None:
    reports, tracks = _tracks(METRICS, load_report, "gpu_metric")
    names = sql_rows(METRICS, "SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS")
    assert sorted(t.label for t in tracks) == sorted(n for _, n in names)
    assert all(t.group[-1] == METRICS_GROUP and t.group[-2].startswith("GPU 0") for t in tracks)
    assert tracks[0].label == "SM Active"  # the folded group draws it
    table = reports.slice_tables(0)["gpu_metrics"]
    counts = dict(sql_rows(METRICS, "SELECT metricId, count(*) FROM GPU_METRICS GROUP BY 1"))
    ids = {n: m for m, n in names}
    for track in tracks:
        ((_, track_id),) = track.parts
        lo, hi = table.bounds(track_id)
        assert hi - lo == counts[ids[track.label]], track.label


def test_gpu_metric_values_match_the_table(load_report) -> None:
    reports, tracks = _tracks(METRICS, load_report, "gpu_metric")
    table = reports.slice_tables(0)["gpu_metrics"]
    rng = np.random.default_rng(15)
    names = dict(sql_rows(METRICS, "SELECT metricName, metricId FROM TARGET_INFO_GPU_METRICS"))
    for track in tracks:
        ((_, track_id),) = track.parts
        lo, hi = table.bounds(track_id)
        starts = table.start_ns[lo:hi]
        # Between two samples (ties at one timestamp have no order in SQL).
        for i in rng.integers(0, hi - lo - 1, 5).tolist():
            t = int(starts[i] + (starts[i + 1] - starts[i]) // 2)
            ((expected,),) = sql_rows(
                METRICS,
                "SELECT value FROM GPU_METRICS WHERE metricId = ? AND timestamp <= ? "
                "ORDER BY timestamp DESC LIMIT 1",
                names[track.label],
                t,
            )
            assert counter_value_at(table, track_id, t) == expected, (track.label, t)
    assert counter_value_at(table, 0, int(table.start_ns[0]) - 1) is None  # before any sample


def test_gpu_metric_tooltip_says_the_value(load_report) -> None:
    reports, tracks = _tracks(METRICS, load_report, "gpu_metric")
    table = reports.slice_tables(0)["gpu_metrics"]
    sm = next(t for t in tracks if t.label == "SM Active")
    lo, hi = table.bounds(sm.parts[0][1])
    row = lo + int(np.argmax(table.values[lo:hi]))
    lines = dict(counter_lines(reports[0], table, row))
    assert lines["Value"] == f"{int(table.values[row])} %"
    assert lines["GPU"] == "0"


def test_memory_row_per_device_follows_allocations_and_frees(load_report) -> None:
    reports, tracks = _tracks(MEMORY, load_report, "memory_usage")
    devices = sql_rows(MEMORY, "SELECT DISTINCT deviceId FROM CUDA_GPU_MEMORY_USAGE_EVENTS")
    assert [t.label for t in tracks] == ["Memory usage"] * len(devices)
    assert tracks[0].group[1:] == ("CUDA HW", "GPU 0 · GeForce GTX 1060 with Max-Q Design")
    table = reports.slice_tables(0)["memory_usage"]
    ((_, track_id),) = tracks[0].parts
    lo, hi = table.bounds(track_id)
    assert hi - lo == 60
    starts = table.start_ns[lo:hi]
    for t in [int(s) for s in starts] + [int(s) + 1 for s in starts]:
        ((expected,),) = sql_rows(
            MEMORY,
            "SELECT sum(CASE memoryOperationType WHEN 0 THEN bytes ELSE -bytes END) "
            "FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE deviceId = 0 AND start <= ?",
            t,
        )
        assert counter_value_at(table, track_id, t) == expected, t
    assert table.values.max() == 40_000_000
    assert table.values[-1] == 0


def test_memory_tooltip_lists_the_allocation(load_report) -> None:
    reports, _tracks_ = _tracks(MEMORY, load_report, "memory_usage")
    table = reports.slice_tables(0)["memory_usage"]
    lines = counter_lines(reports[0], table, 0)
    assert lines[0] == ("Allocated", "4,000,000 B (4.00 MB)")
    assert lines[2][0] == "Alloc"
    assert lines[2][1].startswith("4,000,000 B (4.00 MB) Pinned at 0x")


def test_reports_without_counters_have_no_counter_rows(load_report) -> None:
    reports = ReportSet([load_report(REAL_DIR / "Lianhang666__gpu4__report2.sqlite")])
    assert not [t for t in reports.tracks() if t.kind in ("gpu_metric", "memory_usage")]


@pytest.mark.parametrize(
    ("statement", "words"),
    [
        ("UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET bytes = 'lots' WHERE rowid = 3", "bytes"),
        ("UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET start = NULL WHERE rowid = 3", "NULL start"),
        ("UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET deviceId = 1.5 WHERE rowid = 3", "deviceId"),
    ],
    ids=["text bytes", "NULL start", "real device"],
)
def test_hostile_memory_usage_table_is_refused(tmp_path, statement, words) -> None:
    copy = tmp_path / "memory.sqlite"
    shutil.copyfile(MEMORY, copy)
    schema = sql_rows(
        copy, "SELECT sql FROM sqlite_master WHERE name = 'CUDA_GPU_MEMORY_USAGE_EVENTS'"
    )[0][0]
    # Without NOT NULL, so that the NULL goes in (as a careless writer would put it).
    loose = schema.replace("NOT NULL", "").replace("CUDA_GPU_MEMORY_USAGE_EVENTS", "loose", 1)
    mutate_sqlite(
        copy,
        loose,
        "INSERT INTO loose SELECT * FROM CUDA_GPU_MEMORY_USAGE_EVENTS",
        "DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS",
        "ALTER TABLE loose RENAME TO CUDA_GPU_MEMORY_USAGE_EVENTS",
        statement,
    )
    with pytest.raises(CorruptReportError, match="CUDA_GPU_MEMORY_USAGE_EVENTS") as info:
        open_report(copy, use_cache=False)
    assert words.split()[-1] in str(info.value)
    # The lean stats read checks the tables it does not read as the loader does.
    result = run_cli("stats", "-r", "cuda_gpu_kern_sum", str(copy), timeout_s=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("strata: ")
    assert result.stderr.count("\n") == 1
    assert "CUDA_GPU_MEMORY_USAGE_EVENTS" in result.stderr
