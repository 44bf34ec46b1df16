"""The parallel chunked reader on tables with rowid gaps, far-apart rowids and several
chunks: every row arrives once, in rowid order, equal to direct SQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from analysis import _sqlite, open_report
from tests.conftest import real_reports, requires_shared

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"


@pytest.fixture
def report_copy(tmp_path: Path) -> Path:
    src = next(p for p in real_reports() if "cloverleaf" in p.name)
    dst = tmp_path / "r.sqlite"
    shutil.copyfile(src, dst)
    return dst


def _mutate(path: Path, *statements: str) -> None:
    con = sqlite3.connect(path)
    for sql in statements:
        con.execute(sql)
    con.commit()
    con.close()


def _expected(path: Path, table: str) -> list[tuple[int, int, int]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(f"SELECT rowid, start, end FROM {table} ORDER BY rowid").fetchall()
    finally:
        con.close()


def _assert_same_rows(path: Path, kind: str, table: str) -> None:
    report = open_report(path, use_cache=False)
    events = report.tables[kind]
    order = np.argsort(events["row_id"])
    got = list(
        zip(
            events["row_id"][order].tolist(),
            events.start_ns[order].tolist(),
            events.end_ns[order].tolist(),
            strict=True,
        )
    )
    assert got == _expected(path, table)


@requires_shared
@pytest.mark.parametrize("chunk_rows", [7, 100, 1_000_000])
def test_rowid_gaps_and_small_chunks_read_every_row_once(
    report_copy: Path, chunk_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mutate(report_copy, f"DELETE FROM {KERNELS} WHERE rowid % 3 = 0")
    monkeypatch.setattr(_sqlite, "CHUNK_ROWS", chunk_rows)
    _assert_same_rows(report_copy, "kernels", KERNELS)
    _assert_same_rows(report_copy, "cuda_api", RUNTIME)


@requires_shared
def test_far_apart_rowids_are_read_in_one_piece(report_copy: Path) -> None:
    _mutate(
        report_copy,
        f"INSERT INTO {KERNELS} (rowid, start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, demangledName, shortName, mangledName, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, "
        "localMemoryPerThread, localMemoryTotal, gridId) "
        f"SELECT 1000000000000, start + 1, end + 1, deviceId, contextId, streamId, "
        "correlationId, globalPid, demangledName, shortName, mangledName, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, "
        f"localMemoryPerThread, localMemoryTotal, gridId FROM {KERNELS} WHERE rowid = 1",
    )
    _assert_same_rows(report_copy, "kernels", KERNELS)


@requires_shared
def test_cancel_stops_loading_and_leaves_no_cache_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from analysis import CancelledError, cache

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_sqlite, "CHUNK_ROWS", 100)
    path = next(p for p in real_reports() if "cloverleaf" in p.name)
    cancel = threading.Event()
    seen: list[float] = []

    def progress(fraction: float, _text: str) -> None:
        seen.append(fraction)
        if fraction > 0.2:
            cancel.set()

    with pytest.raises(CancelledError):
        open_report(path, progress=progress, cancel=cancel)
    assert max(seen) < 0.9
    reports = tmp_path / "cache" / "reports"
    assert not (reports / cache.cache_key(path)).exists()
    assert not [p for p in reports.iterdir() if p.name.startswith(".tmp-")]
