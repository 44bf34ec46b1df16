"""The columnar cache: stale entries rebuilt, --no-cache bypass, damaged or incomplete
entries never trusted, concurrent first opens from two processes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import cache, open_report
from tests.conftest import ROOT, real_reports, requires_shared

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"


def _small_report() -> Path:
    return next(p for p in real_reports() if "cupy" in p.name)


def _count(path: Path, table: str) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def _entries() -> set[str]:
    root = cache.cache_root() / "reports"
    return (
        {p.name for p in root.iterdir() if not p.name.startswith(".")} if root.is_dir() else set()
    )


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(root))
    return root


@pytest.fixture
def copied_report(tmp_path: Path) -> Path:
    dst = tmp_path / "copy.sqlite"
    shutil.copyfile(_small_report(), dst)
    return dst


@requires_shared
def test_changed_report_gets_a_new_entry_and_the_old_one_goes(
    private_cache: Path, copied_report: Path
) -> None:
    first = open_report(copied_report)
    assert len(first.kernels) == _count(copied_report, KERNELS)
    old_key = cache.cache_key(copied_report)
    con = sqlite3.connect(copied_report)
    con.execute(f"DELETE FROM {KERNELS} WHERE rowid = (SELECT max(rowid) FROM {KERNELS})")
    con.commit()
    con.close()
    st = copied_report.stat()
    os.utime(copied_report, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = open_report(copied_report)
    assert cache.cache_key(copied_report) != old_key
    assert len(again.kernels) == _count(copied_report, KERNELS) == len(first.kernels) - 1
    assert _entries() == {cache.cache_key(copied_report)}


@requires_shared
def test_touched_report_is_rebuilt_not_trusted(private_cache: Path, copied_report: Path) -> None:
    open_report(copied_report)
    old_key = cache.cache_key(copied_report)
    st = copied_report.stat()
    os.utime(copied_report, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    open_report(copied_report)
    assert _entries() == {cache.cache_key(copied_report)} != {old_key}


@requires_shared
def test_no_cache_writes_and_reads_nothing(private_cache: Path) -> None:
    path = _small_report()
    report = open_report(path, use_cache=False)
    assert _entries() == set()
    assert len(report.kernels) == _count(path, KERNELS)


@requires_shared
def test_cli_no_cache_option_writes_no_entry(private_cache: Path) -> None:
    env = {**os.environ, "STRATA_CACHE_DIR": str(private_cache)}
    args = [sys.executable, str(ROOT / "main.py"), "info", "--no-cache", str(_small_report())]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert _entries() == set()
    proc = subprocess.run(args[:3] + args[4:], capture_output=True, env=env, cwd=ROOT, check=False)
    assert proc.returncode == 0
    assert _entries() == {cache.cache_key(_small_report())}


@requires_shared
def test_entry_with_wrong_row_count_is_rebuilt(private_cache: Path) -> None:
    path = _small_report()
    expected = _count(path, KERNELS)
    open_report(path)
    meta_path = cache.cache_root() / "reports" / cache.cache_key(path) / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["rows"]["kernels"] += 1
    meta_path.write_text(json.dumps(meta))
    assert len(open_report(path).kernels) == expected
    assert json.loads(meta_path.read_text())["rows"]["kernels"] == expected


@requires_shared
def test_incomplete_entry_without_meta_is_replaced(private_cache: Path) -> None:
    path = _small_report()
    entry = private_cache / "reports" / cache.cache_key(path)
    entry.mkdir(parents=True)
    (entry / "kernels.arrow").write_bytes(b"half")
    report = open_report(path)
    assert len(report.kernels) == _count(path, KERNELS)
    assert (entry / "meta.json").is_file()


_OPEN_AND_PRINT = (
    "import sys; from strata.analysis import open_report; r = open_report(sys.argv[1]); "
    "print(len(r.kernels), len(r.cuda_api), int(r.kernels.start_ns.sum()))"
)


@requires_shared
def test_two_processes_opening_at_once_both_get_a_complete_report(private_cache: Path) -> None:
    path = next(p for p in real_reports() if "cloverleaf" in p.name)
    env = {**os.environ, "STRATA_CACHE_DIR": str(private_cache), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", _OPEN_AND_PRINT, str(path)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n_kernels, total = con.execute(f"SELECT count(*), sum(start) FROM {KERNELS}").fetchone()
    n_api = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    con.close()
    assert {out.strip() for out, _ in outputs} == {f"{n_kernels} {n_api} {total}"}
    assert _entries() == {cache.cache_key(path)}
    assert not [p for p in (private_cache / "reports").iterdir() if p.name.startswith(".tmp-")]
    reopened = open_report(path)
    assert int(reopened.kernels.start_ns.sum()) == total


@requires_shared
def test_cached_columns_are_read_only_and_equal_a_fresh_load(private_cache: Path) -> None:
    path = _small_report()
    first = open_report(path)
    again = open_report(path)
    for report in (first, again):
        for table in report.tables.values():
            for column in table.columns.values():
                assert not column.flags.writeable
    fresh = open_report(path, use_cache=False)
    np.testing.assert_array_equal(again.kernels.start_ns, fresh.kernels.start_ns)
    assert again.contexts.equals(fresh.contexts)
    assert again.cuda_devices.equals(fresh.cuda_devices)
    assert again.gpus.equals(fresh.gpus)


@requires_shared
def test_single_valued_columns_cost_no_bytes_and_read_the_same(private_cache: Path) -> None:
    path = next(p for p in real_reports() if "cloverleaf" in p.name)
    fresh = open_report(path, use_cache=False)
    cached = open_report(path)
    kernels = cached.kernels
    # One A100, one context: the device column holds a single value (direct SQL).
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (devices,) = con.execute(f"SELECT count(DISTINCT deviceId) FROM {KERNELS}").fetchone()
    con.close()
    assert devices == 1
    assert kernels["device_id"].strides == (0,)
    for kind, table in fresh.tables.items():
        other = cached.tables[kind]
        np.testing.assert_array_equal(other.track_offsets, table.track_offsets)
        for name, column in table.columns.items():
            assert other[name].dtype == column.dtype, (kind, name)
            np.testing.assert_array_equal(other[name], column)


@requires_shared
def test_entry_is_published_when_tables_are_not_mapped_while_writing(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Windows path: no table is swapped for its mapped copy before the rename.
    monkeypatch.setattr(cache, "_MAP_WHILE_WRITING", False)
    path = _small_report()
    report = open_report(path)
    assert _entries() == {cache.cache_key(path)}
    assert len(report.kernels) == _count(path, KERNELS)
    assert all(c.base is not None for c in report.kernels.columns.values())


@requires_shared
def test_a_partial_open_reads_the_entry_but_never_writes_one(
    private_cache: Path, copied_report: Path
) -> None:
    partial = open_report(copied_report, tables=("kernels",))
    assert _entries() == set()  # a model with empty tables is no cache entry
    assert len(partial.kernels) == _count(copied_report, KERNELS) > 0
    assert len(partial.cuda_api) == 0
    assert partial.has_source("CUPTI_ACTIVITY_KIND_RUNTIME")  # still answers for the file
    full = open_report(copied_report)
    assert len(_entries()) == 1
    assert len(full.cuda_api) == _count(copied_report, "CUPTI_ACTIVITY_KIND_RUNTIME") > 0
    # With an entry, a partial open takes the whole cached model.
    again = open_report(copied_report, tables=("kernels",))
    assert len(again.cuda_api) == len(full.cuda_api)
    with pytest.raises(ValueError, match="unknown event tables"):
        open_report(copied_report, use_cache=False, tables=("kernel",))


@requires_shared
def test_changed_report_replaces_its_partial_entry(
    private_cache: Path, copied_report: Path
) -> None:
    from strata.analysis.stats.lean import open_for_stats, wait_for_cache_writes

    first = open_for_stats(copied_report, ["cuda_gpu_kern_sum"])
    wait_for_cache_writes()
    (old,) = _entries()
    os.utime(copied_report, ns=(1_000_000_000, 1_000_000_000))  # a re-recorded report
    second = open_for_stats(copied_report, ["cuda_gpu_kern_sum"])
    wait_for_cache_writes()
    (new,) = _entries()
    assert new != old
    assert len(second.kernels) == len(first.kernels) > 0
