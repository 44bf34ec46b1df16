"""``stats`` and ``analyze`` options as nsys 2023.4 takes them, against the real nsys.

Each test runs nsys and Strata with the same arguments on a copy of a small real report (or
an nsys fixture) in ``tmp_path``, from that folder, and compares what each prints on stdout
and stderr. nsys names its report script by its install path (``with
[/…/reports/nvtx_sum.py]``); Strata names the script alone, so the path is dropped from
nsys's text first. Skipped without nsys or the shared reports.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.open import find_nsys
from app.cli import main
from app.cli.stats import DEFAULT_REPORTS
from tests.conftest import FIXTURES_DIR, REAL_DIR, requires_fixtures, requires_shared

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys ($NSYS or PATH) as the oracle")
_SCRIPT_PATH = re.compile(r"with \[/[^\]]*/(reports|rules)/")

CUPY = "quasiben__nvtx-examples__cupy.sqlite"
#: Memory copies (sizes, throughputs) and kernels, 100-odd rows of trace.
TEST_CUDA = "0x822a5b87__test-cuda__report1.sqlite"


def nsys_run(folder: Path, *argv: str) -> tuple[int, str, str]:
    """nsys's (exit status, stdout, stderr), run in ``folder``, script paths dropped."""
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, *argv], cwd=folder, capture_output=True, text=True, timeout=300, env=env,
        check=False,
    )  # fmt: skip
    return proc.returncode, _SCRIPT_PATH.sub("with [", proc.stdout), proc.stderr


def strata_run(capsys, *argv: str) -> tuple[int, str, str]:
    """Strata's (exit status, stdout, stderr), run in the current folder."""
    capsys.readouterr()
    try:
        status = main(list(argv))
    except SystemExit as done:  # the --help-... options exit as argparse's help does
        status = done.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def copy_real(name: str, folder: Path) -> str:
    shutil.copyfile(REAL_DIR / name, folder / name)
    return name


@requires_shared
@requires_nsys
def test_default_set_prints_every_summary_as_nsys(in_tmp: Path, capsys) -> None:
    """No -r: nsys's 19 summaries in its order, the SKIPPED ones included, nothing on stderr."""
    report = copy_real(CUPY, in_tmp)
    status, out, err = nsys_run(in_tmp, "stats", report)
    assert status == 0
    ours = strata_run(capsys, "stats", "--no-cache", report)
    assert ours == (0, out, err)
    assert out.count("Processing [") == len(DEFAULT_REPORTS) == 19
    assert "SKIPPED: " in out


@requires_fixtures
@requires_nsys
@pytest.mark.parametrize("fixture", ["syn.sqlite", "real-2023.4-nvtx.sqlite"])
@pytest.mark.parametrize("quiet", [(), ("-q",)])
def test_default_set_on_the_fixtures_equals_nsys(fixture: str, quiet, in_tmp: Path, capsys):
    shutil.copyfile(FIXTURES_DIR / fixture, in_tmp / fixture)
    expected = nsys_run(in_tmp, "stats", *quiet, fixture)
    assert strata_run(capsys, "stats", "--no-cache", *quiet, fixture) == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["column", "csv", "json"])
def test_analyze_quiet_prints_the_results_alone_as_nsys(fmt: str, in_tmp: Path, capsys) -> None:
    """analyze -q: no Processing lines, no SKIPPED rules (test-cuda SKIPs two of seven)."""
    report = copy_real(TEST_CUDA, in_tmp)
    expected = nsys_run(in_tmp, "analyze", "-q", "-f", fmt, report)
    ours = strata_run(capsys, "analyze", "-q", "--no-cache", "-f", fmt, report)
    assert ours == expected
    assert "Processing [" not in ours[1]
    assert "SKIPPED" not in ours[1]


@requires_shared
@requires_nsys
@pytest.mark.parametrize("command", ["stats", "analyze"])
def test_timeunit_takes_the_words_and_prefixes_nsys_takes(command: str, in_tmp: Path, capsys):
    """--timeunit: a prefix of one of nsys's words, case and all; the others are refused."""
    report = copy_real(TEST_CUDA, in_tmp)
    what = ["-r", "cuda_gpu_trace"] if command == "stats" else ["-r", "gpu_time_util"]
    for unit in ("na", "nanoseconds", "micro", "microseconds", "milli", "milliseconds", "se"):
        expected = nsys_run(in_tmp, command, *what, "-f", "csv", "--timeunit", unit, report)
        assert expected[0] == 0
        ours = strata_run(
            capsys, command, "--no-cache", *what, "-f", "csv", "--timeunit", unit, report
        )
        assert ours == expected, unit
    for unit in ("n", "mi", "secs", "NSEC", "Usec", ""):
        assert nsys_run(in_tmp, command, *what, "--timeunit", unit, report)[0] != 0
        status, out, err = strata_run(capsys, command, *what, "--timeunit", unit, report)
        assert (status, out) == (2, "")
        assert err.startswith(f"strata: unknown time unit '{unit}'")
        assert err.count("\n") == 1
