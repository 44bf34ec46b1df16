"""Progressive open: partial reports while the tables arrive, then the same complete report."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from analysis import cache, open_report
from analysis.model import EVENT_TABLES, EventTable, Report
from analysis.reportset import ReportSet
from tests.conftest import REAL_DIR, requires_shared

#: A small real report with kernels, memcpy, CUDA API and NVTX (55 events).
CUPY = REAL_DIR / "quasiben__nvtx-examples__cupy.sqlite"


def _same_table(a: EventTable, b: EventTable) -> None:
    assert a.kind == b.kind
    assert sorted(a.columns) == sorted(b.columns)
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f"{a.kind}.{name}")
    assert a.track_keys.equals(b.track_keys)


def _same_report(a: Report, b: Report) -> None:
    assert a.complete
    assert b.complete
    for kind in EVENT_TABLES:
        _same_table(a.tables[kind], b.tables[kind])
    assert list(a.strings.values) == list(b.strings.values)
    assert a.threads.equals(b.threads)
    assert a.processes.equals(b.processes)


@pytest.fixture
def cold_copy(tmp_path: Path) -> Path:
    """A copy of the report under a new path: no cache entry yet."""
    copy = tmp_path / CUPY.name
    shutil.copyfile(CUPY, copy)
    return copy


@requires_shared
def test_partials_hold_the_tables_read_so_far_and_end_in_the_same_report(cold_copy) -> None:
    partials: list[Report] = []
    final = open_report(cold_copy, use_cache=True, on_partial=partials.append)
    assert partials, "the progressive open handed over no partial report"
    for part in partials:
        assert not part.complete
        assert part.pending
        assert set(part.tables) == set(EVENT_TABLES)  # pending kinds are empty tables
        assert part.path == final.path
        for kind in EVENT_TABLES:
            if kind in part.pending:
                assert len(part.tables[kind]) == 0
            else:
                _same_table(part.tables[kind], final.tables[kind])
    pending = [part.pending for part in partials]
    assert all(b < a for a, b in zip(pending, pending[1:], strict=False)), pending
    assert final.complete
    assert not final.pending
    _same_report(final, open_report(CUPY, use_cache=False))


@requires_shared
def test_the_cache_entry_is_written_from_the_complete_read_only(cold_copy) -> None:
    open_report(cold_copy, use_cache=True, on_partial=lambda _part: None)
    cached = cache.load_cached(cache.cache_key(cold_copy), cold_copy)
    assert cached is not None
    assert cached.complete
    again: list[Report] = []
    # From the cache the report is whole at once: no partial reports.
    _same_report(open_report(cold_copy, on_partial=again.append), cached)
    assert again == []


@requires_shared
def test_a_partial_report_gets_no_projection_rows_until_it_is_complete(load_report) -> None:
    final = load_report(CUPY)
    # As a progressive open hands it over while the CUDA API is still being read.
    partial = replace(final, pending=frozenset({"cuda_api"}))
    tracks = ReportSet([partial]).tracks()
    assert any(t.kind == "gpu_stream" for t in tracks)
    assert not any(t.kind == "nvtx_gpu" for t in tracks)
    assert any(t.kind == "nvtx_gpu" for t in ReportSet([final]).tracks())
