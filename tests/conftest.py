"""Test set-up shared by every test: offscreen Qt, a private cache, real-data locations."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

# Before any QApplication exists (style.md §7).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The nsys oracle: $NSYS, else nsys on PATH (analysis.open.find_nsys), else where
# shared/tools/get-nsys.sh installs it by default, so every parity test finds the same one.
_GET_NSYS_DEFAULT = Path.home() / ".cache" / "strata-nsys" / "usr" / "bin" / "nsys"
if "NSYS" not in os.environ and _GET_NSYS_DEFAULT.is_file():
    os.environ["NSYS"] = str(_GET_NSYS_DEFAULT)

# ``stats`` computes a small report inside SQLite and writes no cache entry then; the tests
# of the cache (written by ``stats``) run the column path. The SQL path has its own tests
# (tests/analysis/test_stats_sql.py) and the fuzz suite compares the two.
os.environ.setdefault("STRATA_STATS_PATH", "columns")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
REAL_DIR = SHARED / "reports" / "real"
FIXTURES_DIR = SHARED / "spec" / "nsys-fixtures"
EXPECTED_DIR = FIXTURES_DIR / "expected-2023.4"

requires_shared = pytest.mark.skipif(
    not REAL_DIR.is_dir(), reason=f"needs the shared real reports at {REAL_DIR}"
)
requires_fixtures = pytest.mark.skipif(
    not FIXTURES_DIR.is_dir(), reason=f"needs the nsys fixtures at {FIXTURES_DIR}"
)


def real_reports() -> list[Path]:
    return sorted(REAL_DIR.glob("*.sqlite")) if REAL_DIR.is_dir() else []


def fixture_reports() -> list[Path]:
    return sorted(FIXTURES_DIR.glob("*.sqlite")) if FIXTURES_DIR.is_dir() else []


def fingerprint(path: Path) -> tuple[str, int]:
    """Return (sha256, mtime_ns): what 'a report is never written to' is checked against."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test run gets its own cache folder, never the user's."""
    os.environ["STRATA_CACHE_DIR"] = str(tmp_path_factory.mktemp("strata-cache"))


@pytest.fixture(scope="session")
def load_report():
    """Open a report once per test session (reports are immutable)."""
    from strata.analysis import open_report

    cache: dict[tuple[str, bool], object] = {}

    def _load(path: Path | str, use_cache: bool = False):
        key = (str(path), use_cache)
        if key not in cache:
            cache[key] = open_report(path, use_cache=use_cache)
        return cache[key]

    return _load


#: Rows per read chunk and rows of the kernels' lead chunk under :func:`held_kernels`.
SMALL_CHUNK_ROWS = 50
SMALL_LEAD_ROWS = 30


@pytest.fixture
def held_kernels(monkeypatch: pytest.MonkeyPatch):
    """Read tables in chunks of 50 rows, the kernels first in a lead chunk of 30 rows, and
    hold every other kernel chunk until the returned event is set (at most 60 s, so that a
    failing test does not hang): a progressive open then hands over the first kernels while
    the rest of their table is still being read."""
    import re
    import threading

    from strata.analysis import _native, _sqlite, loader

    # Held at ADBC's chunk reads: the native readers (reader-independent here) stay off.
    monkeypatch.setattr(_native, "_LIB", None)
    monkeypatch.setattr(_native, "_LOADED", True)
    monkeypatch.setattr(_sqlite, "CHUNK_ROWS", SMALL_CHUNK_ROWS)
    monkeypatch.setattr(loader, "_LEAD_ROWS", SMALL_LEAD_ROWS)
    release = threading.Event()
    read_chunk = _sqlite.ReportDatabase._read_chunk
    kernel_chunk = re.compile(
        r'"CUPTI_ACTIVITY_KIND_KERNEL" WHERE rowid >= (\d+) AND rowid < (\d+)'
    )

    def held_read_chunk(self, sql: str):
        found = kernel_chunk.search(sql)
        if found and int(found[2]) - int(found[1]) != SMALL_LEAD_ROWS:
            release.wait(60)
        return read_chunk(self, sql)

    monkeypatch.setattr(_sqlite.ReportDatabase, "_read_chunk", held_read_chunk)
    yield release
    release.set()
