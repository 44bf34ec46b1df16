"""The loader on every real report and fixture: counts, samples and invariants vs direct SQL."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strata.analysis import CorruptReportError, open_report
from strata.analysis.levels import overlaps_on_level
from tests.conftest import (
    FIXTURES_DIR,
    fingerprint,
    fixture_reports,
    real_reports,
    requires_fixtures,
    requires_shared,
)
from tests.helpers import SOURCE_TABLES, sql_rows

# The base fixture's README: "all data rows, strings ... removed", yet 8 OSRT rows remain
# pointing into the emptied StringIds. It is the one inconsistent file; see test below.
BROKEN_FIXTURE = "base-2023.4-empty-full-schema.sqlite"
ALL = [p for p in real_reports() + fixture_reports() if p.name != BROKEN_FIXTURE]


def _tables(path: Path) -> set[str]:
    return {r[0] for r in sql_rows(path, "SELECT name FROM sqlite_master WHERE type='table'")}


@requires_shared
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:60])
def test_row_counts_match_sql(path: Path, load_report) -> None:
    report = load_report(path)
    tables = _tables(path)
    for kind, source in SOURCE_TABLES.items():
        expected = sql_rows(path, f"SELECT count(*) FROM {source}")[0][0] if source in tables else 0
        assert len(report.tables[kind]) == expected, (kind, source)


@requires_shared
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:60])
def test_sorted_by_track_then_start_and_frozen(path: Path, load_report) -> None:
    report = load_report(path)
    for kind, table in report.tables.items():
        track, start = table["track_id"], table.start_ns
        assert np.all(np.diff(track) >= 0), kind
        same = np.diff(track) == 0
        assert np.all(np.diff(start)[same] >= 0), kind
        # GPU tables share one stream key table, so a track may be empty in one of them.
        assert len(track) == 0 or int(track.max()) < len(table.track_keys)
        assert not table.track_keys.duplicated().any()
        for name, column in table.columns.items():
            assert not column.flags.writeable, (kind, name)


@requires_shared
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:60])
def test_nested_levels_never_overlap(path: Path, load_report) -> None:
    report = load_report(path)
    for kind in ("nvtx", "cuda_api", "osrt"):
        table = report.tables[kind]
        for track_id in range(len(table.track_keys)):
            if table.track_keys["level"][track_id] < 0:
                continue  # marks and NVTX meta rows are points, not intervals
            rows = table.track_slice(track_id)
            s, e = table.start_ns[rows], table.end_ns[rows]
            assert not overlaps_on_level(np.zeros(len(s), np.int32), s, e), (kind, track_id)


@requires_shared
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:60])
def test_names_and_times_sample_match_sql(path: Path, load_report) -> None:
    report = load_report(path)
    tables = _tables(path)
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        rows = sql_rows(
            path,
            "SELECT k.rowid, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.rowid LIMIT 50",
        )
        kernels = report.kernels
        by_row = {int(r): i for i, r in enumerate(kernels["row_id"])}
        for rowid, start, end, name in rows:
            i = by_row[rowid]
            assert (kernels.start_ns[i], kernels.end_ns[i]) == (start, end)
            assert report.strings[int(kernels["name_id"][i])] == name
    if "NVTX_EVENTS" in tables:
        rows = sql_rows(
            path,
            "SELECT n.rowid, n.start, coalesce(s.value, n.text) FROM NVTX_EVENTS n "
            "LEFT JOIN StringIds s ON s.id = n.textId ORDER BY n.rowid LIMIT 200",
        )
        nvtx = report.nvtx
        by_row = {int(r): i for i, r in enumerate(nvtx["row_id"])}
        for rowid, start, text in rows:
            i = by_row[rowid]
            assert nvtx.start_ns[i] == start
            assert report.strings[int(nvtx["name_id"][i])] == text


@requires_shared
def test_unclosed_nvtx_range_ends_at_nvtx_max(load_report) -> None:
    path = FIXTURES_DIR / "syn2.sqlite"
    report = load_report(path)
    nvtx = report.nvtx
    i = int(np.flatnonzero(report.strings.lookup(nvtx["name_id"]) == "unclosed")[0])
    assert nvtx["is_open"][i] == 1
    (max_ts,) = sql_rows(
        path, "SELECT max(max(start), max(coalesce(end, start))) FROM NVTX_EVENTS"
    )[0]
    assert nvtx.end_ns[i] == max_ts == report.nvtx_max_ns


@requires_shared
def test_windows_cp1252_text_is_replaced_not_fatal(load_report) -> None:
    path = next(p for p in real_reports() if "concurrent.s1" in p.name)
    report = load_report(path)
    assert report.info.nsys_version.startswith("2022.1")
    assert len(report.nvtx) == 77


@requires_fixtures
def test_fixture_with_stripped_strings_is_reported_corrupt() -> None:
    path = FIXTURES_DIR / BROKEN_FIXTURE
    with pytest.raises(CorruptReportError, match="StringIds lacks id"):
        open_report(path, use_cache=False)


@requires_shared
@pytest.mark.parametrize("path", ALL[:: max(1, len(ALL) // 6)], ids=lambda p: p.name[:60])
def test_opening_never_writes_the_report(path: Path, tmp_path: Path) -> None:
    before = fingerprint(path)
    siblings = set(path.parent.iterdir())
    open_report(path, use_cache=True)
    open_report(path, use_cache=True)
    assert fingerprint(path) == before
    assert set(path.parent.iterdir()) == siblings


@requires_shared
def test_cached_reopen_equals_fresh_load(tmp_path: Path) -> None:
    path = next(p for p in real_reports() if "cloverleaf" in p.name)
    fresh = open_report(path, use_cache=False)
    first = open_report(path, use_cache=True)
    again = open_report(path, use_cache=True)
    for report in (first, again):
        assert report.info == fresh.info
        for kind, table in fresh.tables.items():
            other = report.tables[kind]
            assert set(other.columns) == set(table.columns)
            for name in table.columns:
                np.testing.assert_array_equal(other[name], table[name])
            assert other.track_keys.equals(table.track_keys)
        assert list(report.strings.values) == list(fresh.strings.values)
        assert report.threads.equals(fresh.threads)


@requires_shared
def test_damaged_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    from strata.analysis import cache

    path = next(p for p in real_reports() if "cupy" in p.name)
    expected = np.array(open_report(path, use_cache=False).kernels.start_ns)
    open_report(path, use_cache=True)
    entry = cache.cache_root() / "reports" / cache.cache_key(path)
    # Replace (not truncate) the file: the entry may still be memory-mapped by this process.
    (entry / "kernels.arrow").unlink()
    (entry / "kernels.arrow").write_bytes(b"garbage")
    rebuilt = open_report(path, use_cache=True)
    np.testing.assert_array_equal(rebuilt.kernels.start_ns, expected)
    assert (entry / "kernels.arrow").read_bytes() != b"garbage"
