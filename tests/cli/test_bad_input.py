"""Every kind of bad input: exit status 2, one line naming the file, file left unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_DIR, fingerprint, requires_fixtures
from tests.helpers import mutate_sqlite, run_cli


def _copy_syn(tmp_path: Path, name: str = "r.sqlite") -> Path:
    dst = tmp_path / name
    shutil.copy(FIXTURES_DIR / "syn.sqlite", dst)
    return dst


def _make_missing(tmp_path: Path) -> Path:
    return tmp_path / "missing.sqlite"


def _make_empty_dir(tmp_path: Path) -> Path:
    d = tmp_path / "nothing-here"
    d.mkdir()
    (d / "notes.txt").write_text("no reports")
    return d


def _make_empty_file(tmp_path: Path) -> Path:
    p = tmp_path / "empty.sqlite"
    p.write_bytes(b"")
    return p


def _make_text_file(tmp_path: Path) -> Path:
    p = tmp_path / "text.sqlite"
    p.write_text("this is not a database\n" * 20)
    return p


def _make_truncated(tmp_path: Path) -> Path:
    p = _copy_syn(tmp_path, "truncated.sqlite")
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 3])
    return p


def _make_foreign_db(tmp_path: Path) -> Path:
    p = tmp_path / "foreign.sqlite"
    mutate_sqlite(p, "CREATE TABLE test(a, b)", "INSERT INTO test VALUES (1, 2)")
    return p


def _make_missing_strings(tmp_path: Path) -> Path:
    p = _copy_syn(tmp_path, "nostrings.sqlite")
    mutate_sqlite(
        p,
        "DELETE FROM StringIds WHERE id IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)",
    )
    return p


def _make_null_end(tmp_path: Path) -> Path:
    p = _copy_syn(tmp_path, "nullend.sqlite")
    mutate_sqlite(
        p,
        "CREATE TABLE k2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL",
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL",
        "ALTER TABLE k2 RENAME TO CUPTI_ACTIVITY_KIND_KERNEL",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = NULL WHERE rowid = 1",
    )
    return p


def _make_end_before_start(tmp_path: Path) -> Path:
    p = _copy_syn(tmp_path, "backwards.sqlite")
    mutate_sqlite(p, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 10 WHERE rowid = 2")
    return p


def _make_newer_schema(tmp_path: Path) -> Path:
    p = _copy_syn(tmp_path, "future.sqlite")
    mutate_sqlite(
        p, "UPDATE META_DATA_EXPORT SET value = '4.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'"
    )
    return p


CASES = {
    "missing path": (_make_missing, "no such file"),
    "folder without reports": (_make_empty_dir, "no Nsight Systems reports"),
    "empty file": (_make_empty_file, "empty file"),
    "text renamed .sqlite": (_make_text_file, "not an SQLite database"),
    "truncated sqlite": (_make_truncated, "truncated"),
    "foreign sqlite": (_make_foreign_db, "without Nsight Systems tables"),
    "StringIds missing ids": (_make_missing_strings, "StringIds lacks id"),
    "NULL end": (_make_null_end, "NULL end"),
    "end before start": (_make_end_before_start, "end before they start"),
    "newer schema": (_make_newer_schema, "newer than Strata reads"),
}


@requires_fixtures
@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exits_2_with_one_line(case: str, tmp_path: Path) -> None:
    make, needle = CASES[case]
    path = make(tmp_path)
    before = fingerprint(path) if path.is_file() else None
    proc = run_cli("info", "--no-cache", str(path))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert path.name in lines[0]
    assert needle in lines[0]
    if before is not None:
        assert fingerprint(path) == before


@requires_fixtures
def test_info_prints_versions_gpus_and_counts() -> None:
    proc = run_cli("info", "--no-cache", str(FIXTURES_DIR / "syn.sqlite"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "2023.4.4.54" in out
    assert "FakeGPU" in out
    assert "kernels               7" in out
    assert "cuda_api             11" in out


def test_bad_arguments_exit_2() -> None:
    proc = run_cli("info")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1


def test_ctrl_c_exits_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import strata.app.cli.info
    from strata.app.cli import main

    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(strata.app.cli.info, "run", interrupted)
    assert main(["info", str(FIXTURES_DIR / "syn.sqlite")]) == 130
    assert capsys.readouterr().err == "strata: interrupted\n"
