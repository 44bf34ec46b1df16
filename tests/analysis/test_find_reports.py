"""Finding reports in folders that hold odd entries: FIFOs, folders named ``*.sqlite``,
symbolic link loops, sockets. Bounded, no traceback, the real reports still found."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from strata.analysis.discover import find_reports
from strata.analysis.errors import NotAReportError


def _touch_report(path: Path) -> Path:
    path.write_bytes(b"SQLite format 3\x00" + bytes(84))
    return path


def test_folder_skips_entries_that_are_not_regular_files(tmp_path: Path) -> None:
    good = _touch_report(tmp_path / "good.sqlite")
    os.mkfifo(tmp_path / "pipe.sqlite")
    (tmp_path / "dir.sqlite").mkdir()
    os.symlink(tmp_path / "loop-b.sqlite", tmp_path / "loop-a.sqlite")
    os.symlink(tmp_path / "loop-a.sqlite", tmp_path / "loop-b.sqlite")
    os.symlink(tmp_path / "missing.sqlite", tmp_path / "dangling.sqlite")
    os.symlink(tmp_path, tmp_path / "self.sqlite")  # a folder loop: never descended into
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.sqlite"))
        assert find_reports([tmp_path]) == [good]


def test_link_to_a_report_in_a_folder_is_found(tmp_path: Path) -> None:
    real = _touch_report(tmp_path / "real.data")
    os.symlink(real, tmp_path / "linked.sqlite")
    assert find_reports([tmp_path]) == [tmp_path / "linked.sqlite"]


def test_symlink_loop_given_by_name_is_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "a.sqlite"
    os.symlink(tmp_path / "b.sqlite", loop)
    os.symlink(loop, tmp_path / "b.sqlite")
    with pytest.raises(NotAReportError, match="symbolic link loop"):
        find_reports([loop])


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(NotAReportError, match="no such file or folder"):
        find_reports([tmp_path / "nope.sqlite"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotAReportError, match="holds no Nsight Systems reports"):
        find_reports([tmp_path / "empty"])


def test_named_fifo_is_returned_for_open_report_to_judge(tmp_path: Path) -> None:
    # find_reports only stats it (never opens it); open_report refuses it without blocking.
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    assert find_reports([fifo]) == [fifo]


def test_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    name = Path(os.fsdecode(os.fsencode(tmp_path) + b"/r\xff.sqlite"))
    _touch_report(name)
    assert find_reports([tmp_path]) == [name]
