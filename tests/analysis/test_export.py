"""``.nsys-rep``/``.qdrep`` through the real ``nsys export``: into the cache folder, with
progress; a report newer than the installed nsys; nsys missing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from strata.analysis import ExportError, UnsupportedVersionError, cache, open_report
from strata.analysis.open import find_nsys
from tests.conftest import REAL_DIR, fingerprint, requires_shared
from tests.helpers import run_cli

NSYS = find_nsys()
REP_DIR = REAL_DIR / "nsys-rep"
requires_nsys = pytest.mark.skipif(
    NSYS is None, reason="needs the nsys CLI ($NSYS or nsys on PATH; shared/tools/get-nsys.sh)"
)
# nsys 2023.4 reads these; the matching .sqlite exports in ../shared are the cross-check.
READABLE = [
    "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.nsys-rep",
    "ayush-os__nsight-systems-deep-dive__vector_add_profile_v4.nsys-rep",
    "quasiben__nvtx-examples__cudf.qdrep",
]
# Written by nsys 2025.1 and 2026.1 (MANIFEST §3): newer than the 2023.4 oracle.
NEWER = ["NTHU-SC__ISC25-ICON-C__gpu.nsys-rep", "0x822a5b87__test-cuda__report1.nsys-rep"]


def _nsys_major() -> int:
    out = subprocess.run([NSYS, "--version"], capture_output=True, text=True, check=False).stdout
    return int(out.split("version", 1)[1].split(".")[0]) if "version" in out else 0


def _count(path: Path, table: str) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(root))
    return root


@requires_shared
@requires_nsys
@pytest.mark.parametrize("name", READABLE)
def test_report_file_is_exported_into_the_cache_with_progress(
    name: str, private_cache: Path
) -> None:
    path = REP_DIR / name
    before = fingerprint(path)
    siblings = set(path.parent.iterdir())
    steps: list[tuple[float, str]] = []
    report = open_report(path, progress=lambda f, text: steps.append((f, text)))
    (exported,) = (private_cache / "exports").glob(f"*-{cache.cache_key(path)}.sqlite")
    assert any(text == "nsys export" for _, text in steps)
    assert [f for f, _ in steps] == sorted(f for f, _ in steps)
    assert steps[-1][0] == 1.0
    assert report.info.path == path
    assert report.name == name
    assert len(report.kernels) == _count(exported, "CUPTI_ACTIVITY_KIND_KERNEL")
    assert len(report.cuda_api) == _count(exported, "CUPTI_ACTIVITY_KIND_RUNTIME")
    assert len(report.kernels) > 0
    shipped = REAL_DIR / name.replace(".nsys-rep", ".sqlite").replace(".qdrep", ".sqlite")
    if shipped.is_file():
        # The export the repository's owners made from the same file.
        assert len(report.kernels) == _count(shipped, "CUPTI_ACTIVITY_KIND_KERNEL")
    assert fingerprint(path) == before
    assert set(path.parent.iterdir()) == siblings
    assert not [p for p in exported.parent.iterdir() if p.name.startswith(".")]


@requires_shared
@requires_nsys
def test_second_open_of_a_report_file_reuses_the_export(private_cache: Path) -> None:
    path = REP_DIR / READABLE[0]
    open_report(path, use_cache=False)
    (exported,) = (private_cache / "exports").glob(f"*-{cache.cache_key(path)}.sqlite")
    mtime = exported.stat().st_mtime_ns
    steps: list[str] = []
    open_report(path, progress=lambda _f, text: steps.append(text), use_cache=False)
    assert exported.stat().st_mtime_ns == mtime
    assert "nsys export" not in steps


@requires_shared
@requires_nsys
@pytest.mark.parametrize("name", NEWER)
def test_report_newer_than_nsys_gives_nsys_reason_in_one_line(
    name: str, private_cache: Path
) -> None:
    if _nsys_major() >= 2025:
        pytest.skip("the installed nsys is new enough to read this report")
    path = REP_DIR / name
    with pytest.raises(UnsupportedVersionError) as info:
        open_report(path)
    message = str(info.value)
    assert "\n" not in message
    assert name in message
    assert "newer than your current version" in message
    assert not list((private_cache / "exports").iterdir())


@requires_shared
@requires_nsys
def test_cli_exits_2_with_the_newer_version_line(private_cache: Path) -> None:
    if _nsys_major() >= 2025:
        pytest.skip("the installed nsys is new enough to read this report")
    path = REP_DIR / NEWER[0]
    env = {**os.environ, "STRATA_CACHE_DIR": str(private_cache), "NSYS": NSYS}
    proc = run_cli("info", str(path), env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert path.name in lines[0]
    assert "newer than your current version" in lines[0]


def _fake_report_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.nsys-rep"
    path.write_bytes(b"NVIDIA Tegra Profiler Report 1.\x00" + bytes(64))
    return path


def test_without_nsys_the_error_says_how_to_export(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NSYS", raising=False)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    path = _fake_report_file(tmp_path)
    with pytest.raises(ExportError) as info:
        open_report(path)
    message = str(info.value)
    assert "\n" not in message
    assert "nsys export --type sqlite run.nsys-rep" in message
    assert "not found" in message
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == [
        "bin",
        "run.nsys-rep",
    ]


def test_nsys_failure_is_an_export_error_naming_the_file(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "nsys"
    fake.write_text("#!/bin/sh\necho 'Exportation error: could not open the report' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("NSYS", str(fake))
    path = _fake_report_file(tmp_path)
    with pytest.raises(ExportError, match="run.nsys-rep.*could not open the report"):
        open_report(path)


@requires_shared
@requires_nsys
def test_touched_report_file_replaces_its_old_export(tmp_path: Path, private_cache: Path) -> None:
    import shutil

    path = tmp_path / "run.nsys-rep"
    shutil.copyfile(REP_DIR / READABLE[0], path)
    first = open_report(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = open_report(path)
    assert len(again.kernels) == len(first.kernels)
    exports = list((private_cache / "exports").glob("*.sqlite"))
    assert [p.name.split("-", 1)[1] for p in exports] == [f"{cache.cache_key(path)}.sqlite"]
    assert len(list((private_cache / "reports").iterdir())) == 1
