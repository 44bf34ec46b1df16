"""The parallel chunked reader on tables with rowid gaps, far-apart rowids and several
chunks: every row arrives once, in rowid order, equal to direct SQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import _sqlite, open_report
from tests.conftest import SMALL_LEAD_ROWS, real_reports, requires_shared
from tests.helpers import mutate_sqlite

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"


@pytest.fixture
def report_copy(tmp_path: Path) -> Path:
    src = next(p for p in real_reports() if "cloverleaf" in p.name)
    dst = tmp_path / "r.sqlite"
    shutil.copyfile(src, dst)
    return dst


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
    mutate_sqlite(report_copy, f"DELETE FROM {KERNELS} WHERE rowid % 3 = 0")
    monkeypatch.setattr(_sqlite, "CHUNK_ROWS", chunk_rows)
    _assert_same_rows(report_copy, "kernels", KERNELS)
    _assert_same_rows(report_copy, "cuda_api", RUNTIME)


@requires_shared
def test_far_apart_rowids_are_read_in_one_piece(report_copy: Path) -> None:
    mutate_sqlite(
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

    from strata.analysis import CancelledError, cache

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


def _scale_report_module():  # noqa: ANN202 - a module
    import importlib.util

    from tests.conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "scale_report", ROOT / "benchmarks/scale_report.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@requires_shared
def test_scaled_report_keeps_counts_pairs_and_order(tmp_path: Path) -> None:
    """The benchmark input builder: copies x source rows, kernels paired with API calls."""
    src = next(p for p in real_reports() if "vector_add_profile_v3" in p.name)
    dst = _scale_report_module().scale_report(src, tmp_path / "big.sqlite", 0, copies=5)
    con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    n_kernels, n_api = (
        con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in (KERNELS, RUNTIME)
    )
    (src_duration,) = con.execute("SELECT duration FROM ANALYSIS_DETAILS").fetchone()
    con.close()
    report = open_report(dst, use_cache=False)
    assert len(report.kernels) == 5 * n_kernels
    assert len(report.cuda_api) == 5 * n_api
    con = sqlite3.connect(f"file:{dst}?mode=ro", uri=True)
    (paired,) = con.execute(
        f"SELECT count(*) FROM {KERNELS} k JOIN {RUNTIME} r ON r.correlationId = k.correlationId "
        "AND (r.globalTid >> 24) & 16777215 = (k.globalPid >> 24) & 16777215"
    ).fetchone()
    (duration,) = con.execute("SELECT duration FROM ANALYSIS_DETAILS").fetchone()
    (shift,) = con.execute(
        f"SELECT b.start - a.start FROM {KERNELS} a, {KERNELS} b "
        f"WHERE a.rowid = 1 AND b.rowid = {n_kernels + 1}"
    ).fetchone()
    con.close()
    assert paired == 5 * n_kernels
    # Each copy starts after the previous one ends; the capture grows by the added copies.
    assert shift > 0
    assert duration == src_duration + 4 * shift
    starts = report.kernels.start_ns
    assert np.all(np.diff(starts) >= 0)


@requires_shared
def test_a_lead_chunk_over_rowid_gaps_hands_over_its_rows_then_every_row(
    report_copy: Path, held_kernels
) -> None:
    mutate_sqlite(report_copy, f"DELETE FROM {KERNELS} WHERE rowid % 3 = 0")
    partials = []

    def on_partial(part) -> None:
        partials.append(part)
        held_kernels.set()  # the other kernel chunks may come now

    report = open_report(report_copy, use_cache=False, on_partial=on_partial)
    expected = _expected(report_copy, KERNELS)
    # The lead chunk is rowids 1..30 less those deleted: 20 kernels, then every kernel.
    lead = partials[0].tables["kernels"]
    order = np.argsort(lead["row_id"])
    got = list(zip(lead["row_id"][order].tolist(), lead.start_ns[order].tolist(), strict=True))
    assert got == [(r, s) for r, s, _e in expected if r <= SMALL_LEAD_ROWS]
    assert len(got) == 20
    assert sorted(report.tables["kernels"]["row_id"].tolist()) == [r for r, _s, _e in expected]
