"""The cache size cap: least-recently-used entries go first, entries in use stay, it says so."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import pytest

from strata.analysis import cachesize
from tests.conftest import REAL_DIR, requires_shared

KIB = 1024


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cachesize, "_IN_USE", set())
    return tmp_path / "cache"


def _entry(root: Path, area: str, name: str, size: int, used_ago_s: float) -> Path:
    """Make an entry of ``size`` bytes last used ``used_ago_s`` seconds ago (by its stamp)."""
    entry = root / area / name
    if area in ("reports", "answers"):
        entry.mkdir(parents=True)
        (entry / "data.bin").write_bytes(bytes(size))
    else:
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_bytes(bytes(size))
    cachesize.mark_used(entry)
    cachesize.release(entry)
    when = time.time_ns() - int(used_ago_s * 1e9)
    os.utime(cachesize._stamp(entry), ns=(when, when))
    os.utime(entry, ns=(when - 10**12, when - 10**12))  # written long before its last use
    return entry


def test_cap_evicts_least_recently_used(root, monkeypatch, caplog) -> None:
    oldest = _entry(root, "reports", "a" * 24, 40 * KIB, 3000)
    export = _entry(root, "exports", "x-key.sqlite", 40 * KIB, 2000)
    newest = _entry(root, "answers", "b-c", 40 * KIB, 1000)
    monkeypatch.setenv(cachesize.ENV_VAR, "100K")
    with caplog.at_level(logging.WARNING, logger="strata.analysis.cachesize"):
        evicted = cachesize.enforce(root)
    assert evicted == [oldest]
    assert not oldest.exists()
    assert export.exists()
    assert newest.exists()
    assert not cachesize._stamp(oldest).exists()
    (line,) = caplog.messages
    assert "over its 100.0 KiB cap" in line
    assert f"reports/{oldest.name}" in line
    assert "\n" not in line
    # Using the export makes the answers the least recently used.
    cachesize.mark_used(export)
    cachesize.release(export)
    monkeypatch.setenv(cachesize.ENV_VAR, "50K")
    assert cachesize.enforce(root) == [newest]


def test_entry_in_use_is_not_evicted(root, monkeypatch) -> None:
    old = _entry(root, "reports", "a" * 24, 40 * KIB, 3000)
    other = _entry(root, "wal-checkpointed", "y.sqlite", 40 * KIB, 2000)
    cachesize.mark_used(old)  # read by this process now: stays, though least recently used
    os.utime(cachesize._stamp(old), ns=(0, 0))
    monkeypatch.setenv(cachesize.ENV_VAR, "50K")
    assert cachesize.enforce(root) == [other]
    assert old.exists()


def test_recently_used_entry_is_not_evicted(root, monkeypatch) -> None:
    """Another process may be reading an entry used a moment ago: it is left alone."""
    _entry(root, "reports", "a" * 24, 40 * KIB, 5)
    monkeypatch.setenv(cachesize.ENV_VAR, "1K")
    assert cachesize.enforce(root) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1000", 1000), ("500M", 500 << 20), ("20GiB", 20 << 30), ("1.5k", 1536), ("off", None)],
)
def test_cap_setting(root, monkeypatch, raw, expected) -> None:
    monkeypatch.setenv(cachesize.ENV_VAR, raw)
    assert cachesize.max_bytes(root) == expected


def test_bad_cap_setting_warns_and_uses_the_default(root, monkeypatch, caplog) -> None:
    monkeypatch.setenv(cachesize.ENV_VAR, "lots")
    assert 0 < cachesize.max_bytes(root) <= cachesize.DEFAULT_MAX_BYTES
    assert "is not a size" in caplog.text


@requires_shared
def test_cli_says_when_it_evicts_and_quiet_hides_it(tmp_path: Path) -> None:
    from tests.helpers import run_cli

    report = tmp_path / "report.sqlite"
    shutil.copyfile(REAL_DIR / "0x822a5b87__test-cuda__report1.sqlite", report)
    cache = tmp_path / "cache"
    _entry(cache, "reports", "0" * 24, 200 * KIB, 3600)
    env = {**os.environ, "STRATA_CACHE_DIR": str(cache), cachesize.ENV_VAR: "100K"}
    quiet = run_cli("-q", "stats", "-r", "cuda_api_sum", str(report), env=env)
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    assert not (cache / "reports" / ("0" * 24)).exists()
    _entry(cache, "exports", "old.sqlite", 200 * KIB, 3600)
    loud = run_cli("stats", "-r", "cuda_gpu_kern_sum", str(report), env=env)
    assert loud.returncode == 0
    (line,) = [ln for ln in loud.stderr.splitlines() if "evicted" in ln]
    assert "exports/old.sqlite" in line
    assert cachesize.ENV_VAR in line
