"""Progressive open: partial reports while the tables arrive, then the same complete report."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import cache, open_report
from strata.analysis.kinds import event_tables
from strata.analysis.model import EventTable, Report
from strata.analysis.reportset import ReportSet
from tests.conftest import REAL_DIR, SMALL_LEAD_ROWS, requires_shared
from tests.helpers import assert_same_report, assert_same_table

#: A small real report with kernels, memcpy, CUDA API and NVTX (55 events).
CUPY = REAL_DIR / "quasiben__nvtx-examples__cupy.sqlite"


@pytest.fixture
def cold_copy(tmp_path: Path) -> Path:
    """A copy of the report under a new path: no cache entry yet."""
    copy = tmp_path / CUPY.name
    shutil.copyfile(CUPY, copy)
    return copy


@requires_shared
def test_partials_hold_the_tables_read_so_far_and_end_in_theassert_same_report(cold_copy) -> None:
    partials: list[Report] = []
    final = open_report(cold_copy, use_cache=True, on_partial=partials.append)
    assert partials, "the progressive open handed over no partial report"
    for part in partials:
        assert not part.complete
        assert part.pending
        assert set(part.tables) == set(event_tables())  # pending kinds are empty tables
        assert part.path == final.path
        for kind in event_tables():
            if kind in part.pending:
                assert len(part.tables[kind]) == 0
            else:
                assert_same_table(part.tables[kind], final.tables[kind])
    pending = [part.pending for part in partials]
    assert all(b < a for a, b in zip(pending, pending[1:], strict=False)), pending
    assert final.complete
    assert not final.pending
    assert_same_report(final, open_report(CUPY, use_cache=False))


@requires_shared
def test_the_cache_entry_is_written_from_the_complete_read_only(cold_copy) -> None:
    open_report(cold_copy, use_cache=True, on_partial=lambda _part: None)
    cached = cache.load_cached(cache.cache_key(cold_copy), cold_copy)
    assert cached is not None
    assert cached.complete
    again: list[Report] = []
    # From the cache the report is whole at once: no partial reports.
    assert_same_report(open_report(cold_copy, on_partial=again.append), cached)
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


#: A real report with 200 kernels on four streams.
FOUR_STREAMS = REAL_DIR / "Lianhang666__gpu4__report2.sqlite"


def _track_of_rows(table: EventTable) -> dict[int, tuple]:
    """SQLite rowid -> the key of the row (track) that shows the event."""
    keys = [tuple(k) for k in table.track_keys.itertuples(index=False)]
    return dict(zip(table["row_id"].tolist(), (keys[t] for t in table["track_id"]), strict=True))


@requires_shared
def test_the_first_kernels_are_handed_over_before_the_kernel_table_is_read(
    tmp_path: Path, held_kernels, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / FOUR_STREAMS.name
    shutil.copyfile(FOUR_STREAMS, copy)
    partials: list[Report] = []

    def on_partial(part: Report) -> None:
        partials.append(part)
        held_kernels.set()  # the rest of the kernels may come now

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "progressive"))
    final = open_report(copy, use_cache=True, on_partial=on_partial)
    whole_kernels = final.tables["kernels"]
    assert len(whole_kernels) > SMALL_LEAD_ROWS

    first = partials[0]
    assert "kernels" in first.pending
    lead = first.tables["kernels"]
    # The first rows written (the start of the trace), and only those.
    first_rowid = int(whole_kernels["row_id"].min())
    assert sorted(lead["row_id"].tolist()) == list(
        range(first_rowid, first_rowid + SMALL_LEAD_ROWS)
    )
    # Each on the row (stream) it is on in the complete report, with the same times and name.
    final_rows = _track_of_rows(whole_kernels)
    assert all(final_rows[r] == key for r, key in _track_of_rows(lead).items())
    at = {r: i for i, r in enumerate(whole_kernels["row_id"].tolist())}
    index = np.array([at[r] for r in lead["row_id"].tolist()])
    for column in ("start_ns", "end_ns", "name_id", "stream_id"):
        np.testing.assert_array_equal(lead[column], whole_kernels[column][index], err_msg=column)
    # Later partials keep the first kernels until the whole GPU tables are built.
    for part in partials[1:]:
        assert len(part.tables["kernels"]) >= SMALL_LEAD_ROWS
    assert sum("kernels" in p.pending and len(p.tables["kernels"]) for p in partials) >= 1
    assert len(partials) <= len(event_tables()) + 1  # one early, then at most one per table

    # The complete report and its cache entry are those of an open without partials.
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "whole"))
    whole = open_report(copy, use_cache=True)
    assert_same_report(final, whole)
    entries = [next((tmp_path / d / "reports").iterdir()) for d in ("progressive", "whole")]
    names = [sorted(p.name for p in entry.iterdir()) for entry in entries]
    assert names[0] == names[1]
    for name in names[0]:
        a, b = ((entry / name).read_bytes() for entry in entries)
        if name == "meta.json":  # its files are listed in the order they were written
            a, b = json.loads(a), json.loads(b)
        assert a == b, name


@requires_shared
def test_a_table_of_one_chunk_gets_no_early_partial(tmp_path: Path, held_kernels) -> None:
    # Fewer kernels than the lead chunk: the first partial holds every GPU table whole.
    held_kernels.set()  # (only the small chunks wanted here)
    copy = tmp_path / CUPY.name
    shutil.copyfile(CUPY, copy)
    partials: list[Report] = []
    open_report(copy, use_cache=False, on_partial=partials.append)
    assert partials
    assert all(len(p.tables[k]) == 0 for p in partials for k in p.pending)


@requires_shared
def test_cancel_on_the_early_partial_stops_the_load(
    tmp_path: Path, held_kernels, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from strata.analysis import CancelledError

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / FOUR_STREAMS.name
    shutil.copyfile(FOUR_STREAMS, copy)
    cancel = threading.Event()
    partials: list[Report] = []

    def on_partial(part: Report) -> None:
        partials.append(part)
        cancel.set()
        held_kernels.set()

    with pytest.raises(CancelledError):
        open_report(copy, cancel=cancel, on_partial=on_partial)
    assert len(partials) == 1
    assert "kernels" in partials[0].pending
    assert cache.load_cached(cache.cache_key(copy), copy) is None


@requires_shared
def test_a_bad_kernel_among_the_first_is_refused_as_a_whole_open_refuses_it(
    tmp_path: Path, held_kernels
) -> None:
    from strata.analysis import CorruptReportError
    from tests.helpers import mutate_sqlite

    held_kernels.set()  # only the small chunks here
    copy = tmp_path / FOUR_STREAMS.name
    shutil.copyfile(FOUR_STREAMS, copy)
    # Two kernels that end before they start: one in the lead chunk, one after it.
    mutate_sqlite(
        copy,
        'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1 WHERE rowid IN (2, 150)',
    )
    with pytest.raises(CorruptReportError) as whole:
        open_report(copy, use_cache=False)
    partials: list[Report] = []
    with pytest.raises(CorruptReportError) as progressive:
        open_report(copy, use_cache=False, on_partial=partials.append)
    assert "2 events that end before they start" in str(whole.value)
    assert str(progressive.value) == str(whole.value)
    assert all(len(p.tables["kernels"]) == 0 for p in partials)
