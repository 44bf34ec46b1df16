"""The built-in demo reports: real nsys schema, loadable, deterministic, planted facts present.

Expected values come from direct SQL on the written files, from nsys itself, or from what
was planted by construction (``resources.demo``'s constants), never from our analysis code.
"""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import open_report
from strata.analysis.open import find_nsys
from strata.resources import demo
from tests.helpers import SOURCE_TABLES, sql_rows

_NSYS = find_nsys()  # tests/conftest.py points $NSYS at get-nsys.sh's install when present
requires_nsys = pytest.mark.skipif(
    _NSYS is None, reason="needs nsys ($NSYS, PATH or ~/.cache/strata-nsys)"
)


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    demo.build_demo_reports(folder)
    return folder


@pytest.fixture(scope="module")
def truth() -> demo.DemoTruth:
    return demo.demo_truth()


def _kernel_durations(path: Path, name: str) -> np.ndarray:
    rows = sql_rows(
        path,
        "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName WHERE s.value = ?",
        name,
    )
    return np.array([r[0] for r in rows], dtype=np.int64)


def test_writes_one_report_per_rank(demo_dir: Path, truth: demo.DemoTruth) -> None:
    names = sorted(p.name for p in demo_dir.glob("*.sqlite"))
    assert names == list(truth.file_names) == [f"rank{r}.sqlite" for r in range(4)]
    assert not list(demo_dir.glob(".*tmp"))


def test_loader_counts_equal_sql(demo_dir: Path) -> None:
    for path in sorted(demo_dir.glob("*.sqlite")):
        report = open_report(path, use_cache=False)
        written = {r[0] for r in sql_rows(path, "SELECT name FROM sqlite_master")}
        for kind, table in SOURCE_TABLES.items():
            if table not in written:  # the demo records no GPU metrics, memory usage, graph nodes
                assert kind in ("gpu_metrics", "memory_usage", "cuda_graph")
                assert len(report.tables[kind]) == 0
                continue
            (count,) = sql_rows(path, f"SELECT count(*) FROM {table}")[0]
            assert len(report.tables[kind]) == count, (path.name, kind)
            assert count > 0, (path.name, kind)
        assert report.event_count > 30_000
        assert report.info.schema_version == "3.7.2"
        assert report.info.nsys_version.startswith("2023.4")
        assert list(report.gpus["name"]) == ["NVIDIA H100 80GB HBM3"]
        assert sorted(report.threads["name"]) == ["data_loader", "nccl_progress", "python3"]


def test_schema_matches_nsys_2023_4(demo_dir: Path) -> None:
    from tests.conftest import FIXTURES_DIR

    base = FIXTURES_DIR / "base-2023.4-empty-full-schema.sqlite"
    if not base.is_file():
        pytest.skip(f"needs the nsys 2023.4 schema fixture at {base}")
    path = demo_dir / "rank0.sqlite"
    tables = [r[0] for r in sql_rows(path, "SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        ours = sql_rows(path, f"PRAGMA table_info({table})")
        theirs = sql_rows(base, f"PRAGMA table_info({table})")
        assert ours == theirs, table
        if table.startswith("ENUM_"):
            enum_ours = set(sql_rows(path, f"SELECT * FROM {table}"))
            assert enum_ours <= set(sql_rows(base, f"SELECT * FROM {table}")), table


def test_correlation_ids_pair_gpu_rows_with_api_calls(demo_dir: Path) -> None:
    path = demo_dir / "rank1.sqlite"
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"):
        unpaired = sql_rows(
            path,
            f"SELECT count(*) FROM {table} g LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
            "ON r.correlationId = g.correlationId "
            "AND g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) WHERE r.rowid IS NULL",
        )
        assert unpaired == [(0,)], table
    late = sql_rows(
        path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "USING (correlationId) WHERE k.start < r.start",
    )
    assert late == [(0,)]


def test_straggler_is_slower_and_others_wait(demo_dir: Path, truth: demo.DemoTruth) -> None:
    gemm = "ampere_sgemm_128x128_tn"
    medians = [np.median(_kernel_durations(demo_dir / n, gemm)) for n in truth.file_names]
    others = np.delete(medians, truth.straggler_rank)
    ratio = medians[truth.straggler_rank] / np.median(others)
    assert ratio == pytest.approx(truth.straggler_factor, rel=0.05)
    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"
    waits = [np.median(_kernel_durations(demo_dir / n, nccl)) for n in truth.file_names]
    assert np.argmin(waits) == truth.straggler_rank
    # the straggler's GPU work per training step (NVTX train_step ranges) is longer
    busy = []
    for name in truth.file_names:
        rows = sql_rows(
            demo_dir / name,
            "SELECT sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.shortName WHERE s.value NOT LIKE 'nccl%'",
        )
        busy.append(rows[0][0])
    others = np.delete(busy, truth.straggler_rank)
    assert busy[truth.straggler_rank] / np.mean(others) == pytest.approx(1.3, rel=0.05)


def test_planted_slow_kernels_are_ten_times_typical(demo_dir: Path, truth: demo.DemoTruth) -> None:
    assert 3 <= len(truth.slow_instances) <= 5
    assert all(p.rank != truth.straggler_rank for p in truth.slow_instances)
    normal = [r for r in range(truth.ranks) if r != truth.straggler_rank]
    typical = np.median(
        np.concatenate([_kernel_durations(demo_dir / f"rank{r}.sqlite", truth.slow_kernel_name)
                        for r in normal])
    )  # fmt: skip
    for planted in truth.slow_instances:
        rows = sql_rows(
            demo_dir / f"rank{planted.rank}.sqlite",
            "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName WHERE s.value = ? AND k.start = ?",
            truth.slow_kernel_name,
            planted.start_ns,
        )
        assert rows == [(planted.duration_ns,)]
        assert planted.duration_ns / typical == pytest.approx(truth.slow_factor, rel=0.1)
    for r in range(truth.ranks):
        durations = _kernel_durations(demo_dir / f"rank{r}.sqlite", truth.slow_kernel_name)
        planted_here = sum(p.rank == r for p in truth.slow_instances)
        assert (durations > 5 * typical).sum() == planted_here


def test_nvtx_training_loop_structure(demo_dir: Path, truth: demo.DemoTruth) -> None:
    path = demo_dir / "rank0.sqlite"
    counts = dict(
        sql_rows(path, "SELECT text, count(*) FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY text")
    )
    for name in ("train_step", "forward", "backward", "allreduce", "optimizer"):
        assert counts[name] == truth.steps
    assert sql_rows(path, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60") == [(1,)]
    assert sql_rows(path, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34")[0][0] >= 3
    assert sql_rows(path, "SELECT text FROM NVTX_EVENTS WHERE eventType = 75") == [("NCCL",)]
    # every forward range lies inside a train_step range of the same thread
    outside = sql_rows(
        path,
        "SELECT count(*) FROM NVTX_EVENTS f WHERE f.text = 'forward' AND NOT EXISTS ("
        "SELECT 1 FROM NVTX_EVENTS t WHERE t.text = 'train_step' AND t.globalTid = f.globalTid "
        "AND t.start <= f.start AND f.end <= t.end)",
    )
    assert outside == [(0,)]


def test_session_starts_a_few_microseconds_apart(demo_dir: Path, truth: demo.DemoTruth) -> None:
    starts = [
        sql_rows(demo_dir / n, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0]
        for n in truth.file_names
    ]
    gaps = np.diff(starts)
    assert np.all(gaps > 0)
    assert np.all(gaps < 20_000)


def _dump(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def test_deterministic_for_a_seed(tmp_path: Path, demo_dir: Path) -> None:
    again = demo.build_demo_reports(tmp_path / "a", steps=demo.DEFAULT_STEPS, seed=0)
    assert _dump(again[3]) == _dump(demo_dir / "rank3.sqlite")
    other = demo.build_demo_reports(tmp_path / "b", ranks=2, steps=6, seed=1)
    assert len(other) == 2
    small = demo.build_demo_reports(tmp_path / "c", ranks=2, steps=6, seed=0)
    assert _dump(other[0]) != _dump(small[0])


def test_reuses_complete_files_and_rebuilds_damaged_ones(tmp_path: Path) -> None:
    paths = demo.build_demo_reports(tmp_path, ranks=2, steps=4)
    mtimes = [p.stat().st_mtime_ns for p in paths]
    assert demo.build_demo_reports(tmp_path, ranks=2, steps=4) == paths
    assert [p.stat().st_mtime_ns for p in paths] == mtimes
    size = paths[1].stat().st_size
    with paths[1].open("r+b") as fh:
        fh.truncate(size // 2)
    demo.build_demo_reports(tmp_path, ranks=2, steps=4)
    assert paths[1].stat().st_size == size
    assert len(open_report(paths[1], use_cache=False).kernels) > 0


def test_command_line_builds_reports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert demo.main([str(tmp_path), "--ranks", "2", "--steps", "3"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "rank0.sqlite"), str(tmp_path / "rank1.sqlite")]


def _nsys_stats(path: Path, reports: str) -> str:
    proc = subprocess.run(
        [_NSYS, "stats", "-r", reports, "-f", "csv", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


@requires_nsys
def test_nsys_stats_accepts_the_report(demo_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "rank0.sqlite"
    shutil.copyfile(demo_dir / "rank0.sqlite", copy)
    reports = "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,cuda_gpu_mem_time_sum,osrt_sum"
    text = _nsys_stats(copy, reports)
    assert "SKIPPED" not in text
    for name in reports.split(","):
        assert f"/{name}.py]" in text
    kern = _nsys_stats(copy, "cuda_gpu_kern_sum")
    body = kern[kern.index("Time (%)") - 1 :]
    rows = list(csv.DictReader(io.StringIO(body.strip())))
    printed = {r["Name"]: (int(r["Total Time (ns)"]), int(r["Instances"])) for r in rows}
    expected = sql_rows(
        copy,
        "SELECT s.value, sum(k.end - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value",
    )
    assert printed == {name: (total, n) for name, total, n in expected}


def test_small_sets_and_bad_sizes(tmp_path: Path) -> None:
    (one,) = demo.build_demo_reports(tmp_path, ranks=1, steps=1)
    report = open_report(one, use_cache=False)
    assert len(report.kernels) > 0
    assert demo.demo_truth(ranks=1, steps=1).straggler_rank == -1
    with pytest.raises(ValueError, match="at least 1 rank"):
        demo.build_demo_reports(tmp_path, ranks=0)
    with pytest.raises(ValueError, match="1 step"):
        demo.build_demo_reports(tmp_path, steps=0)
