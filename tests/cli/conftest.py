"""Fixtures of the CLI tests: small planted reports, bad files, and snapshots of inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import fingerprint

#: Every character class a report must not send to a terminal, in one name.
HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\u202eexe.txt\r\n\x9b\x7f\u200b\u2028end"


def plant(path: Path, kernel: str = "k", nvtx: str = "step", slow: int = 0) -> Path:
    """A tiny valid report: two kernels (``kernel`` lasts 100 + ``slow`` ns) in one range."""
    return write_report(
        path,
        kernels=[K(kernel, 10_000, 10_100 + slow), K("j", 20_000, 20_050)],
        ranges=[(nvtx, 9_000, 30_000)],
    )


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A folder of two good reports (r1, r2) and two bad ones (bad: text, trunc: truncated)."""
    folder = tmp_path / "in"
    folder.mkdir()
    plant(folder / "r1.sqlite")
    plant(folder / "r2.sqlite", slow=50)
    (folder / "bad.sqlite").write_text("not a report\n")
    (folder / "trunc.sqlite").write_bytes((folder / "r1.sqlite").read_bytes()[:4096])
    return folder


def snapshot(*roots: Path) -> dict[str, object]:
    """Every file and folder under ``roots``: content and mtime of files, names of folders."""
    seen: dict[str, object] = {}
    for root in roots:
        if root.is_file():
            seen[str(root)] = fingerprint(root)
            continue
        for here, dirs, files in os.walk(root):
            seen[here] = sorted(dirs + files)
            for name in files:
                path = Path(here) / name
                if path.is_file() and not path.is_symlink():
                    seen[str(path)] = fingerprint(path)
    return seen


def one_line(err: str) -> str:
    """The single line of ``err`` (asserting there is exactly one, without a traceback)."""
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("strata: "), err
    return lines[0]
