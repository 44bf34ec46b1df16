"""The lean stats read: a partial model, kept as a partial entry of the one columnar cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import _cachefiles, cache, open_report
from strata.analysis.model import DurationTable, EventTable
from strata.analysis.stats import run_report
from strata.analysis.stats.lean import open_for_stats, wait_for_cache_writes

RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"


def _meta(path: Path) -> dict:
    entries = [p for p in (cache.cache_root() / "reports").iterdir() if not p.name.startswith(".")]
    assert [p.name for p in entries] == [cache.cache_key(path)]
    return _cachefiles.read_meta(entries[0] / "meta.json")


def test_lean_report_is_a_partial_model(report_copy: Path) -> None:
    full = open_report(report_copy, use_cache=False)
    lean = open_for_stats(report_copy, ["cuda_gpu_kern_sum"], use_cache=False)
    assert full.complete
    assert not lean.complete
    assert set(lean.tables) == {"kernels"}
    kernels = lean.kernels
    assert isinstance(kernels, DurationTable)
    assert not isinstance(kernels, EventTable)
    assert "start_ns" not in kernels
    assert "track_id" not in kernels
    assert kernels.source == full.kernels.source
    # The same durations, in the report's rowid order.
    order = np.argsort(full.kernels["row_id"], kind="stable")
    assert np.array_equal(kernels.duration_ns, full.kernels.duration_ns[order])
    assert np.array_equal(kernels["name_id"], full.kernels["name_id"][order])
    with pytest.raises(AttributeError, match="not read"):
        _ = lean.cuda_api  # not read: neither empty nor silently missing
    assert lean.has_source(RUNTIME)  # the file's tables, read or not


@pytest.mark.parametrize("use_cache", [False, True])
def test_absent_table_is_an_empty_duration_table(report_copy: Path, use_cache: bool) -> None:
    con = sqlite3.connect(report_copy)
    con.execute(f"DROP TABLE {RUNTIME}")
    con.commit()
    con.close()
    for _ in range(2):  # with the cache: the read, then the partial entry
        lean = open_for_stats(report_copy, ["cuda_api_sum"], use_cache=use_cache)
        wait_for_cache_writes()
        assert len(lean.cuda_api) == 0
        assert lean.cuda_api.source == ""
        assert not lean.has_source(RUNTIME)
        assert run_report(lean, "cuda_api_sum").skipped


def test_one_entry_grows_then_the_full_open_replaces_it(report_copy: Path) -> None:
    open_for_stats(report_copy, ["cuda_gpu_kern_sum"])
    wait_for_cache_writes()
    meta = _meta(report_copy)
    assert meta["partial"] is True
    assert sorted(meta["rows"]) == ["kernels"]
    lean = open_for_stats(report_copy, ["cuda_api_sum"])  # adds a table to the entry
    wait_for_cache_writes()
    assert set(lean.tables) == {"kernels", "cuda_api"}
    assert sorted(_meta(report_copy)["rows"]) == ["cuda_api", "kernels"]
    again = open_for_stats(report_copy, ["cuda_gpu_kern_sum", "cuda_api_sum"])
    assert not again.complete
    assert all(c.base is not None for c in again.kernels.columns.values())
    full = open_report(report_copy)  # never served by a partial entry: replaces it
    assert full.complete
    assert _meta(report_copy)["partial"] is False
    assert open_for_stats(report_copy, ["cuda_api_sum"]).complete
    # A partial report never replaces the complete entry.
    assert cache.store(lean, cache.cache_key(report_copy))
    assert _meta(report_copy)["partial"] is False


def test_the_old_side_cache_folder_is_removed(report_copy: Path) -> None:
    old = cache.cache_root() / "stats-columns" / "0123456789abcdef-3"
    old.mkdir(parents=True)
    (old / "meta.json").write_text("{}")
    open_for_stats(report_copy, ["cuda_gpu_kern_sum"])
    wait_for_cache_writes()
    assert not (cache.cache_root() / "stats-columns").exists()
