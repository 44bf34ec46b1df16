"""Parity with the real ``nsys stats`` 2023.4 on every real report (skipped without nsys).

Both tools print CSV for the same list of reports; every section must be identical: the same
rows in the same order and every printed value equal, SKIPPED lines included. The reports are
copied to ``tmp_path`` first and nsys is given the copy's name (it may write next to a report;
the shared folder is read-only). ``cuda_gpu_trace`` runs last because nsys 2023.4 leaks its
``greenContextId`` column check into reports run after it in the same invocation (it then
SKIPs them for old exports) — a quirk of running several reports at once that Strata does not
copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from strata.analysis.open import find_nsys
from strata.app.cli import main as cli_main
from tests.analysis.test_stats_fixtures import parse_sections
from tests.conftest import FIXTURES_DIR, REAL_DIR, real_reports, requires_fixtures, requires_shared

REPORTS = ",".join(
    [
        "cuda_gpu_kern_sum", "cuda_gpu_kern_sum:base", "cuda_gpu_kern_sum:mangled",
        "cuda_gpu_kern_sum:nvtx-name", "cuda_gpu_kern_gb_sum", "cuda_api_sum",
        "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_pushpop_sum",
        "nvtx_startend_sum", "osrt_sum", "nvtx_gpu_proj_sum", "nvtx_gpu_proj_trace",
        "cuda_kern_exec_sum", "nvtx_kern_sum", "cuda_api_gpu_sum", "cuda_gpu_sum",
        "cuda_api_gpu_sum:base", "cuda_api_gpu_sum:nvtx-name", "cuda_gpu_sum:mangled",
        "cuda_gpu_sum:nvtx-name:base",
        "nvtx_pushpop_trace",
        "cuda_gpu_trace",
    ]
)  # fmt: skip

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys (PATH or $NSYS)")


def _nsys_csv(report: Path) -> str:
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", "-f", "csv", "-r", REPORTS, report.name],
        cwd=report.parent, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@requires_shared
@requires_nsys
@pytest.mark.parametrize("source", real_reports(), ids=lambda p: p.stem)
def test_same_tables_as_nsys(source: Path, tmp_path: Path, capsys) -> None:
    report = tmp_path / source.name
    shutil.copyfile(source, report)
    expected = parse_sections(_nsys_csv(report))
    capsys.readouterr()
    assert cli_main(["stats", str(report), "-r", REPORTS, "-f", "csv", "--no-cache"]) == 0
    ours = parse_sections(capsys.readouterr().out)
    assert [s.spec for s in ours] == [s.spec for s in expected]
    for mine, theirs in zip(ours, expected, strict=True):
        assert mine.db == theirs.db == source.name
        assert mine.body == theirs.body, mine.spec


NSYS_REPS = sorted((REAL_DIR / "nsys-rep").glob("*.nsys-rep")) if REAL_DIR.is_dir() else []
REP_REPORTS = "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,osrt_sum"


@requires_shared
@requires_nsys
@pytest.mark.parametrize("source", NSYS_REPS, ids=lambda p: p.stem)
def test_nsys_rep_same_tables_or_same_refusal(source: Path, tmp_path: Path, capsys) -> None:
    """An .nsys-rep goes through ``nsys export``: where nsys 2023.4 can read it, the tables
    must match; where it cannot (written by a newer nsys), we refuse too, in one line."""
    report = tmp_path / source.name
    shutil.copyfile(source, report)
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", "-f", "csv", "-r", REP_REPORTS, report.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    capsys.readouterr()
    status = cli_main(["stats", str(report), "-r", REP_REPORTS, "-f", "csv"])
    out, err = capsys.readouterr()
    if "newer than your current version" in proc.stdout + proc.stderr:
        assert status == 2
        assert "newer" in err
        assert len(err.strip().splitlines()) == 1
        return
    assert status == 0, err
    expected = parse_sections(proc.stdout)
    ours = parse_sections(out)
    assert [s.spec for s in ours] == [s.spec for s in expected]
    for mine, theirs in zip(ours, expected, strict=True):
        # nsys names the .sqlite it exported; we name the file given.
        assert [line.replace(".nsys-rep", ".sqlite") for line in mine.body] == theirs.body


TIMEUNIT_REPORTS = (
    "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_trace,nvtx_gpu_proj_trace,nvtx_gpu_proj_sum,"
    "cuda_kern_exec_sum,nvtx_pushpop_trace,nvtx_sum,nvtx_kern_sum,cuda_gpu_mem_time_sum"
)


@requires_fixtures
@requires_nsys
@pytest.mark.parametrize("unit", ["us", "msec", "seconds"])
@pytest.mark.parametrize("fmt", ["column", "csv"])
def test_timeunit_like_nsys(unit: str, fmt: str, tmp_path: Path, capsys) -> None:
    report = tmp_path / "syn.sqlite"
    shutil.copyfile(FIXTURES_DIR / "syn.sqlite", report)
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", "-f", fmt, "--timeunit", unit, "-r", TIMEUNIT_REPORTS, report.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    capsys.readouterr()
    args = ["stats", str(report), "-r", TIMEUNIT_REPORTS, "-f", fmt, "--timeunit", unit]
    assert cli_main([*args, "--no-cache"]) == 0
    ours = parse_sections(capsys.readouterr().out)
    theirs = parse_sections(proc.stdout)
    assert [(s.spec, s.lines) for s in ours] == [(s.spec, s.lines) for s in theirs]
