"""The cache entry's verdict: a report validated once is not checked again by a later read.

``stats -r cuda_gpu_kern_sum R`` checks the whole report (the loader's rules, the columns it
does not read in SQLite) and records in its partial cache entry that ``R`` passed; a later
``stats -r cuda_api_sum R`` or a partial open (``open_report(tables=...)``, recipes) reads
what it needs without that check. Only a verdict under the report's own key counts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import _cachefiles, cache, loader, open_report
from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import CorruptReportError
from strata.analysis.stats import lean, run_report
from strata.analysis.stats.lean import open_for_stats, wait_for_cache_writes
from tests.helpers import mutate_sqlite


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each call of the SQL check of the report (by the lean read or the loader)."""
    calls: list[str] = []
    real = loader.check_event_tables

    def spy(*args: object, **kwargs: object) -> None:
        calls.append("check")
        real(*args, **kwargs)

    monkeypatch.setattr(loader, "check_event_tables", spy)
    monkeypatch.setattr(lean, "check_event_tables", spy)
    return calls


def _summary(path: Path, spec: str, use_cache: bool) -> pd.DataFrame:
    report = open_for_stats(path, [spec], use_cache=use_cache)
    wait_for_cache_writes()
    return run_report(report, spec).frame


def _meta_path(path: Path) -> Path:
    return cache.cache_root() / "reports" / cache.cache_key(path) / "meta.json"


def test_second_lean_read_of_another_table_does_not_check_again(
    report_copy: Path, checks: list[str]
) -> None:
    _summary(report_copy, "cuda_gpu_kern_sum", use_cache=True)
    assert checks == ["check"]
    assert cache.validated(cache.cache_key(report_copy))
    api = _summary(report_copy, "cuda_api_sum", use_cache=True)  # reads the runtime table
    assert checks == ["check"]
    # --no-cache neither reads nor trusts the verdict: it checks, and answers the same.
    assert api.equals(_summary(report_copy, "cuda_api_sum", use_cache=False))
    assert checks == ["check", "check"]


def test_partial_open_after_a_lean_read_does_not_check_again(
    report_copy: Path, checks: list[str]
) -> None:
    _summary(report_copy, "cuda_gpu_kern_sum", use_cache=True)
    assert checks == ["check"]
    nvtx = open_report(report_copy, tables=["nvtx"]).nvtx
    assert checks == ["check"]
    fresh = open_report(report_copy, use_cache=False, tables=["nvtx"]).nvtx
    assert checks == ["check", "check"]
    assert len(nvtx)
    assert all(np.array_equal(nvtx[c], fresh[c]) for c in fresh.columns)


def test_no_cache_writes_no_verdict(report_copy: Path, checks: list[str]) -> None:
    _summary(report_copy, "cuda_gpu_kern_sum", use_cache=False)
    assert not _meta_path(report_copy).exists()
    assert not cache.validated(cache.cache_key(report_copy))


def test_the_full_open_records_the_verdict(report_copy: Path) -> None:
    open_report(report_copy)
    assert cache.validated(cache.cache_key(report_copy))


@pytest.mark.parametrize("tamper", ["damaged", "absent", "another key"])
def test_a_damaged_or_foreign_verdict_is_not_trusted(
    report_copy: Path, checks: list[str], tamper: str
) -> None:
    _summary(report_copy, "cuda_gpu_kern_sum", use_cache=True)
    meta_path = _meta_path(report_copy)
    if tamper == "damaged":
        raw = bytearray(meta_path.read_bytes())
        at = raw.index(b'"validated": "') + len(b'"validated": "')
        raw[at] = ord("0") if raw[at] != ord("0") else ord("1")
        meta_path.write_bytes(bytes(raw))
    else:
        meta = _cachefiles.read_meta(meta_path)  # rewritten with a valid checksum
        meta["validated"] = None if tamper == "absent" else "0" * 24
        _cachefiles.write_meta(meta_path, meta)
    assert not cache.validated(cache.cache_key(report_copy))
    _summary(report_copy, "cuda_api_sum", use_cache=True)
    assert checks == ["check", "check"]


def test_an_entry_copied_from_a_good_report_does_not_let_a_bad_one_through(
    report_copy: Path, tmp_path: Path
) -> None:
    good = report_copy
    _summary(good, "cuda_gpu_kern_sum", use_cache=True)
    bad = tmp_path / "bad.sqlite"
    shutil.copyfile(good, bad)
    # Text in a table stats -r cuda_api_sum does not read: only the check can see it.
    mutate_sqlite(bad, "UPDATE NVTX_EVENTS SET category = 'x' WHERE rowid = 3")
    with pytest.raises(CorruptReportError, match="NVTX_EVENTS.category") as info:
        open_report(bad, use_cache=False)
    # The good report's entry, checksum and all, put under the bad report's key.
    shutil.copytree(_meta_path(good).parent, _meta_path(bad).parent)
    meta = json.loads(_meta_path(bad).read_text())
    assert meta["validated"] == cache.cache_key(good) != cache.cache_key(bad)
    assert not cache.validated(cache.cache_key(bad))
    with pytest.raises(CorruptReportError) as stats:
        _summary(bad, "cuda_api_sum", use_cache=True)
    assert str(stats.value) == str(info.value)


def test_the_tables_the_lean_read_reads_are_not_scanned_again(
    report_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Their other columns are tested by the read's own SELECT; only the tables it does not
    # read get a scan of their own.
    scanned: list[str] = []
    real = ReportDatabase.any_row

    def spy(self: ReportDatabase, table: str, where: str) -> bool:
        scanned.append(table)
        return real(self, table, where)

    monkeypatch.setattr(ReportDatabase, "any_row", spy)
    _summary(report_copy, "cuda_gpu_kern_sum", use_cache=False)
    assert "NVTX_EVENTS" in scanned
    assert "CUPTI_ACTIVITY_KIND_KERNEL" not in scanned
    assert "CUPTI_ACTIVITY_KIND_RUNTIME" in scanned  # not read by this summary
