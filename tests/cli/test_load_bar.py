"""A report load draws a progress bar on a terminal, and nothing on a pipe (issue #13).

The terminal is a pseudo-terminal (``pty``): stdout and stderr both go to it, as in a shell.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import plant
from tests.conftest import ROOT
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

_BAR = "[#"  # the bar's first filled cell: every drawn bar holds one (a load starts at 2 %)


def _run_on_terminal(*args: str, timeout_s: float = 120) -> tuple[int, str]:
    """Run ``main.py ARGS`` with stdout and stderr on a pty; return (status, what it wrote)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        status = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    return status, b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return plant(tmp_path / "r.sqlite")


def test_terminal_shows_a_bar_then_erases_it(report: Path) -> None:
    status, text = _run_on_terminal("info", "--no-cache", str(report))
    assert status == 0, text
    assert _BAR in text
    assert "r.sqlite" in text
    # Erased before the result is printed: the summary starts on a clean line.
    before, _, after = text.rpartition("\r\x1b[K")
    assert _BAR in before
    assert _BAR not in after
    assert after.startswith("r.sqlite\r\n  path:")


def test_quiet_terminal_shows_no_bar(report: Path) -> None:
    status, text = _run_on_terminal("-q", "info", "--no-cache", str(report))
    assert status == 0, text
    assert _BAR not in text
    assert "\x1b[K" not in text


def test_pipe_gets_the_result_only(report: Path) -> None:
    proc = run_cli("info", "--no-cache", str(report), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("r.sqlite\n  path:")
    assert "\r" not in proc.stdout
    assert "\x1b" not in proc.stdout


def test_recipe_draws_its_bar_on_a_terminal_only(report: Path, tmp_path: Path) -> None:
    argv = ["recipe", "nvtx_sum", "--mode", "serial", "--input", str(report)]
    status, text = _run_on_terminal(*argv, "--output", str(tmp_path / "tty"))
    assert status == 0, text
    assert "\rnvtx_sum [" in text
    proc = run_cli(*argv, "--output", str(tmp_path / "pipe"), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr  # a log gets no frames
    assert "nvtx_sum [" not in proc.stderr
