"""The answer cache: a summary stored per unchanged report, printed again without columns.

Each test runs ``stats`` in this process (``app.cli.main``) on a copy of a small real report
with a private cache folder, and compares with ``--no-cache``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import strata.analysis
from strata.analysis import answers
from strata.analysis import summary as stats_summary
from strata.analysis.stats import lean
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import mutate_sqlite

pytestmark = requires_shared

SPECS = "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_kern_sum:base"


@pytest.fixture
def report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of a small real report with kernels and CUDA API calls; a private cache."""
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "in" / "report.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(REAL_DIR / "0x822a5b87__test-cuda__report1.sqlite", copy)
    return copy


def _stats(report: Path, capsys, *options: str) -> str:
    from strata.app.cli import main

    assert main(["stats", "-r", SPECS, *options, str(report)]) == 0
    return capsys.readouterr().out


def _answer_files(report: Path) -> list[Path]:
    root = Path(os.environ["STRATA_CACHE_DIR"]) / "answers"
    return sorted(root.glob("*/*.answer")) if root.is_dir() else []


class _Forbidden(Exception):
    pass


def _forbid_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every way to the report's columns (lean read, cache entry, full open) raise."""

    def refuse(*_args, **_kwargs):
        raise _Forbidden("the report's columns were read")

    monkeypatch.setattr("strata.app.cli.stats.compute_summaries", refuse)  # SQL or column path
    monkeypatch.setattr(lean, "_read_lean", refuse)
    monkeypatch.setattr("strata.analysis.cache.load_cached", refuse)


def test_hit_reads_no_columns_and_prints_the_same(report, capsys, monkeypatch) -> None:
    first = _stats(report, capsys)
    assert len(_answer_files(report)) == 3
    # One stored table serves every format and time unit.
    for options in (
        (),
        ("-f", "csv"),
        ("-f", "json"),
        ("-f", "strata-json"),
        ("--timeunit", "usec"),
    ):
        with monkeypatch.context() as patched:
            _forbid_reads(patched)
            got = _stats(report, capsys, *options)
        assert got == _stats(report, capsys, "--no-cache", *options)
    assert got != first


def test_no_cache_neither_reads_nor_writes_answers(report, capsys, monkeypatch) -> None:
    _stats(report, capsys, "--no-cache")
    assert _answer_files(report) == []
    first = _stats(report, capsys)
    calls = []
    monkeypatch.setattr(answers.Answers, "get", lambda *a: calls.append(a))
    assert _stats(report, capsys, "--no-cache") == first
    assert calls == []


def _recomputed(report: Path, capsys, monkeypatch) -> bool:
    """Run stats again; return whether it read the report (and check its output)."""
    calls = []
    real = stats_summary.compute_file

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr("strata.app.cli.stats.compute_summaries", counting)
        got = _stats(report, capsys)
    assert got == _stats(report, capsys, "--no-cache")
    return bool(calls)


def test_touch_invalidates(report, capsys, monkeypatch) -> None:
    _stats(report, capsys)
    assert not _recomputed(report, capsys, monkeypatch)
    st = report.stat()
    os.utime(report, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _recomputed(report, capsys, monkeypatch)


def test_same_size_change_with_mtime_restored_invalidates(report, capsys, monkeypatch) -> None:
    first = _stats(report, capsys)
    st = report.stat()
    # One kernel lasts a microsecond longer: same size, another table.
    mutate_sqlite(
        report,
        'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + 1000 '
        "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
    )
    os.utime(report, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert report.stat().st_size == st.st_size
    assert report.stat().st_mtime_ns == st.st_mtime_ns
    assert _recomputed(report, capsys, monkeypatch)
    assert _stats(report, capsys) != first


def test_version_change_invalidates(report, capsys, monkeypatch) -> None:
    _stats(report, capsys)
    assert not _recomputed(report, capsys, monkeypatch)
    monkeypatch.setattr(strata.analysis, "__version__", strata.analysis.__version__ + ".post1")
    assert _recomputed(report, capsys, monkeypatch)


def test_cache_format_change_invalidates(report, capsys, monkeypatch) -> None:
    _stats(report, capsys)
    monkeypatch.setattr("strata.analysis.cachedir.COLUMNS_FORMAT", 999)
    assert _recomputed(report, capsys, monkeypatch)


def test_option_change_is_another_answer(report, capsys, monkeypatch) -> None:
    from strata.app.cli import main

    _stats(report, capsys)
    for spec in ("cuda_gpu_kern_sum:mangled", "nvtx_sum"):
        with monkeypatch.context() as patched:
            _forbid_reads(patched)
            with pytest.raises(_Forbidden):
                main(["stats", "-r", spec, str(report)])
    # The summaries stored before are still served alongside a new one.
    assert main(["stats", "-r", f"{SPECS},cuda_gpu_kern_sum:mangled", str(report)]) == 0
    capsys.readouterr()
    _forbid_reads(monkeypatch)
    assert main(["stats", "-r", "cuda_gpu_kern_sum:mangled,cuda_api_sum", str(report)]) == 0


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-10],  # truncated table
        lambda b: b[:40] + bytes([b[40] ^ 4]) + b[41:],  # meta record bit flip
        lambda b: b[:-5] + bytes([b[-5] ^ 1]) + b[-4:],  # table bit flip
        lambda b: b"",  # emptied
        lambda b: b.replace(b"\n", b" ", 1),  # no meta record
    ],
    ids=["truncated", "meta-flip", "table-flip", "emptied", "no-record"],
)
def test_damaged_answer_is_recomputed(report, capsys, monkeypatch, caplog, damage) -> None:
    first = _stats(report, capsys)
    for path in _answer_files(report):
        path.write_bytes(damage(path.read_bytes()))
    assert _recomputed(report, capsys, monkeypatch)
    assert "discarding a damaged stored answer" in caplog.text
    assert _stats(report, capsys) == first
    assert not _recomputed(report, capsys, monkeypatch)  # stored again, undamaged


def test_answer_of_another_summary_is_refused(report, capsys, monkeypatch) -> None:
    """An answer file copied over another (valid checksums, other spec) is not trusted."""
    _stats(report, capsys)
    kern, api = (answers.Answers.for_report(report)._file(s) for s in SPECS.split(",")[:2])
    shutil.copyfile(api, kern)
    assert _recomputed(report, capsys, monkeypatch)


def test_report_with_wal_file_is_not_answered(report, capsys) -> None:
    (report.parent / f"{report.name}-wal").write_bytes(b"")
    _stats(report, capsys)
    assert _answer_files(report) == []


def test_odd_tables_come_back_exactly_or_are_not_stored(tmp_path, monkeypatch) -> None:
    import numpy as np
    import pandas as pd

    from strata.analysis.stats import StatsResult, format_results

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    report = tmp_path / "r.sqlite"
    report.write_bytes(b"SQLite format 3\x00" + bytes(5000))
    store = answers.Answers.for_report(report)
    frame = pd.DataFrame({
        "ints": pd.array([1, None, 3], dtype="Int64"),
        "mixed": pd.Series([1, None, 2.5], dtype=object),
        "text": pd.Series(["a", None, "c\n,"], dtype="string"),
        "floats": np.array([-0.0, np.nan, np.inf]),
        "flags": np.array([True, False, True]),
    })  # fmt: skip
    result = StatsResult("odd", "Odd", frame, {"ints": "dur"})
    store.put("odd", "r.sqlite", result)
    name, back = store.get("odd")
    assert name == "r.sqlite"
    assert back.units == {"ints": "dur"}
    assert [c.name for c in back.columns] == list(frame.columns)
    floats = back.columns[3].values
    assert repr(floats[0]) == "-0.0"
    assert floats[1] != floats[1]  # NaN
    assert floats[2] == float("inf")
    for fmt in ("column", "csv", "json", "strata-json", "table", "tsv", "htable"):
        for unit in ("nsec", "usec", "seconds"):
            ours = format_results({"r": [back]}, fmt, unit)
            assert ours == format_results({"r": [result]}, fmt, unit), (fmt, unit)
    numpy_cells = pd.DataFrame({"x": pd.Series([np.int64(1)], dtype=object)})
    store.put("numpy", "r.sqlite", StatsResult("numpy", "N", numpy_cells))
    assert store.get("numpy") is None  # it would come back as a Python int: not stored
