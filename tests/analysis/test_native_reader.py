"""The native integer column reader (native/sqlread.c, analysis._native) against ADBC: the
same models, the same summaries and the same refusals, and its own contract on odd values."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import _native, open_report
from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import StrataError
from strata.analysis.stats.lean import LEAN_REPORTS, open_for_stats
from strata.analysis.stats.run import run_report
from tests.conftest import fixture_reports, real_reports, requires_shared
from tests.fuzz.cases import REPORT_CLASSES
from tests.fuzz.checks import NotApplicable, prepare
from tests.helpers import assert_same_report

requires_native = pytest.mark.skipif(
    not _native.available(),
    reason="the native reader is not built (`make native`) or STRATA_SQLITE_READER=adbc",
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@pytest.fixture
def adbc_only(monkeypatch):
    """Read through ADBC in this test, as a machine without the native reader does."""
    monkeypatch.setattr(_native, "_LIB", None)
    monkeypatch.setattr(_native, "_LOADED", True)


def _uri(path: Path) -> str:
    with ReportDatabase(path) as db:
        return db._uri


@pytest.fixture
def odd_table(tmp_path: Path) -> Path:
    path = tmp_path / "odd.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a INTEGER, b INTEGER, c)")
    rows = [(i, i * 3, i) for i in range(70_000)]  # more than one batch
    rows[5] = (_INT64_MIN, None, 1.5)
    rows[6] = (_INT64_MAX, 7, "text")
    rows[69_999] = (0, None, b"\x00blob")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


@requires_native
def test_batches_hold_the_integers_and_their_nulls(odd_table: Path) -> None:
    summaries: dict[str, _native.ColumnSummary] = {}
    uri = _uri(odd_table)
    got = list(_native.read_batches(uri, "SELECT a, b, c FROM t ORDER BY rowid", 2, summaries))
    assert [len(v[0]) for _, v, _ in got] == [_native.BATCH_ROWS, 70_000 - _native.BATCH_ROWS]
    assert all(names == ["a", "b"] for names, _, _ in got)
    a = np.concatenate([v[0] for _, v, _ in got])
    b = np.concatenate([v[1] for _, v, _ in got])
    assert a[5:8].tolist() == [_INT64_MIN, _INT64_MAX, 7]
    null_b = np.concatenate(
        [m[1] if m[1] is not None else np.zeros(len(v[1]), bool) for _, v, m in got]
    )
    assert np.flatnonzero(null_b).tolist() == [5, 69_999]
    assert b[[6, 8]].tolist() == [7, 24]
    assert summaries["a"] == _native.ColumnSummary(0, 0, 0, 0, _INT64_MIN, _INT64_MAX)
    assert summaries["b"].nulls == 2
    assert (summaries["c"].reals, summaries["c"].texts, summaries["c"].blobs) == (1, 1, 1)
    assert summaries["c"].others == 3
    assert summaries["c"].max == 69_998


@requires_native
def test_reused_arrays_are_refilled_batch_by_batch(odd_table: Path) -> None:
    uri = _uri(odd_table)
    firsts = [int(v[0][0]) for _, v, _ in _native.read_batches(uri, "SELECT a FROM t", reuse=True)]
    assert firsts == [0, _native.BATCH_ROWS]


@requires_native
@pytest.mark.parametrize("column", ["c", "CAST(a AS TEXT)", "a * 1.0"])
def test_a_value_that_is_not_an_integer_declines_the_read(odd_table: Path, column: str) -> None:
    with pytest.raises(_native.NotIntegers):
        list(_native.read_batches(_uri(odd_table), f"SELECT a, {column} FROM t"))


@requires_native
def test_no_rows_and_sqlite_errors_decline(odd_table: Path) -> None:
    uri = _uri(odd_table)
    with pytest.raises(_native.Declined, match="no rows"):
        list(_native.read_batches(uri, "SELECT a FROM t WHERE 0"))
    with pytest.raises(_native.NativeReadError, match="no such table"):
        list(_native.read_batches(uri, "SELECT a FROM missing"))


@requires_native
def test_the_reader_never_writes_next_to_the_report(odd_table: Path) -> None:
    con = sqlite3.connect(odd_table)
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    before = sorted(p.name for p in odd_table.parent.iterdir())
    list(_native.read_batches(_uri(odd_table), "SELECT a FROM t"))
    assert sorted(p.name for p in odd_table.parent.iterdir()) == before


def _open(path: Path):
    """The report, or the (type, message) of its refusal."""
    try:
        return open_report(path, use_cache=False)
    except StrataError as exc:
        return (type(exc).__name__, str(exc))


@requires_native
@requires_shared
@pytest.mark.parametrize("path", real_reports() + fixture_reports(), ids=lambda p: p.name)
def test_every_real_report_loads_the_same_through_both_readers(path: Path, monkeypatch) -> None:
    native = _open(path)
    monkeypatch.setattr(_native, "_LIB", None)
    monkeypatch.setattr(_native, "_LOADED", True)
    adbc = _open(path)
    if isinstance(native, tuple) or isinstance(adbc, tuple):
        assert native == adbc  # the same refusal (one fixture has no StringIds rows)
    else:
        assert_same_report(native, adbc)


#: The lean read of the default pair (names beyond the demangled one only judged), then of
#: all four summaries it serves (every name column returned).
LEAN_SETS = (("cuda_gpu_kern_sum", "cuda_api_sum"), tuple(LEAN_REPORTS))


def _lean_outcome(path: Path) -> list[tuple]:
    """Per set of summaries: ('ok', their rows) or ('error', type, message) of a cold read."""
    outcomes = []
    for specs in LEAN_SETS:
        try:
            report = open_for_stats(path, specs, use_cache=False)
            outcomes.append(("ok", [run_report(report, s).frame.to_csv() for s in specs]))
        except StrataError as exc:
            outcomes.append(("error", type(exc).__name__, str(exc)))
    return outcomes


@requires_native
@pytest.mark.parametrize("label", sorted(REPORT_CLASSES))
def test_hostile_reports_get_the_same_answer_through_both_readers(
    label: str, demo_seed, tmp_path: Path, monkeypatch
) -> None:
    """The lean `stats` read judges the columns it does not return from the native reader's
    summaries, ADBC's path by a test of every row in SQL; the model is read either way."""
    try:
        path = prepare(demo_seed, REPORT_CLASSES[label](demo_seed), tmp_path)
    except NotApplicable as exc:
        pytest.skip(str(exc))
    native_lean, native_model = _lean_outcome(path), _model_outcome(path)
    monkeypatch.setattr(_native, "_LIB", None)
    monkeypatch.setattr(_native, "_LOADED", True)
    assert _lean_outcome(path) == native_lean
    assert _model_outcome(path) == native_model


def _model_outcome(path: Path) -> tuple:
    report = _open(path)
    if isinstance(report, tuple):
        return ("error", *report)
    return ("ok", {k: {c: report.tables[k][c].tolist() for c in report.tables[k].columns}
                   for k in report.tables})  # fmt: skip


def test_a_missing_library_is_said_once_then_adbc_reads(monkeypatch, tmp_path, caplog) -> None:
    monkeypatch.setattr(_native, "LIBRARIES", (tmp_path / "a.so", tmp_path / "b.so"))
    monkeypatch.setattr(_native, "_LIB", None)
    monkeypatch.setattr(_native, "_LOADED", False)
    monkeypatch.delenv("STRATA_SQLITE_READER", raising=False)
    with caplog.at_level("INFO", logger=_native.__name__):
        assert not _native.available()
        assert not _native.available()
    records = [r for r in caplog.records if r.name == _native.__name__]
    assert len(records) == 1
    assert "ADBC" in records[0].getMessage()
    assert str(tmp_path) in records[0].getMessage()
