"""``nsys export`` runs bounded and cannot be fed an option: a time limit that kills the
whole process group, and ``--`` plus an absolute path before the report file."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from strata.analysis import ExportError, open_report
from strata.analysis.open import find_nsys
from strata.resources import demo
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

_REP = b"NVIDIA Tegra Profiler Report 1.\x00" + bytes(64)


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(root))
    return root


def _fake_nsys(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake-nsys"
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)
    monkeypatch.setenv("NSYS", str(fake))


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state == "Z"  # killed, waiting for its (re)parent to reap it


def test_export_past_its_time_limit_is_killed_with_its_children(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: a hung nsys blocked the open (and the GUI job) forever.
    pid_file = tmp_path / "sleep.pid"
    _fake_nsys(tmp_path, f'sleep 600 &\necho $! > "{pid_file}"\nwait\n', monkeypatch)
    monkeypatch.setenv("STRATA_EXPORT_TIMEOUT_S", "1")
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(_REP)
    with pytest.raises(ExportError, match="did not finish within 1 s.*STRATA_EXPORT_TIMEOUT_S"):
        open_report(report)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid)
    assert not list((private_cache / "exports").glob(".*"))  # no half-written export left


def test_report_named_like_an_option_is_passed_after_double_dash(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite = demo.build_demo_reports(tmp_path / "demo", ranks=1, steps=1)[0]
    argv = tmp_path / "argv.txt"
    _fake_nsys(
        tmp_path,
        f'printf "%s\\n" "$@" > "{argv}"\n'
        'while [ $# -gt 0 ]; do [ "$1" = --output ] && out="$2"; shift; done\n'
        f'cp "{sqlite}" "$out"\n',
        monkeypatch,
    )
    folder = tmp_path / "reports"
    folder.mkdir()
    report = folder / "-x.nsys-rep"
    report.write_bytes(_REP)
    monkeypatch.chdir(folder)
    opened = open_report(Path("-x.nsys-rep"))
    args = argv.read_text().splitlines()
    assert args[-2:] == ["--", str(report)]
    assert (
        len(opened.kernels)
        == sql_rows(sqlite, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
    )


@pytest.mark.parametrize("value", ["soon", "-5", "0", "nan", "inf"])
def test_bad_export_time_limit_is_one_line(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("STRATA_EXPORT_TIMEOUT_S", value)
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(_REP)
    with pytest.raises(ExportError, match="STRATA_EXPORT_TIMEOUT_S"):
        open_report(report)


_READABLE = (
    REAL_DIR / "nsys-rep" / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.nsys-rep"
)


@requires_shared
@pytest.mark.skipif(find_nsys() is None, reason="needs the nsys CLI ($NSYS or nsys on PATH)")
def test_real_nsys_accepts_double_dash_before_a_dash_named_report(
    tmp_path: Path, private_cache: Path
) -> None:
    report = tmp_path / "-x.nsys-rep"
    shutil.copyfile(_READABLE, report)
    opened = open_report(report)
    export = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
    rows = sql_rows(export, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
    assert len(opened.kernels) == rows
    assert sorted(os.listdir(tmp_path)) == ["-x.nsys-rep", "cache"]  # nothing written beside it
