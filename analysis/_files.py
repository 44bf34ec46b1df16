"""File-level checks done before SQLite or nsys ever touch a path.

Opening a FIFO blocks until a writer appears, a character device may never end, and a
directory or socket named ``*.sqlite`` is no report either: every reader goes through
:func:`read_head`, which opens without blocking and refuses anything but a regular file.
:func:`pending_wal` finds a ``-wal`` file that still holds committed transactions, which an
``immutable=1`` connection would silently ignore.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from strata.analysis.errors import NotAReportError

__all__ = ["file_kind", "os_reason", "pending_wal", "read_head"]

_WAL_MAGICS = (0x377F0682, 0x377F0683)
_WAL_VERSION = 3007000
_WAL_HEADER = 32
_WAL_FRAME_HEADER = 24


def file_kind(mode: int) -> str:
    """Name what a non-regular file is, for a message (``st_mode`` of ``os.stat``)."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_head(path: Path, size: int) -> tuple[bytes, int]:
    """Return the first ``size`` bytes of ``path`` and its length, for a regular file only.

    The file is opened with ``O_NONBLOCK`` and checked with ``fstat`` on that descriptor, so
    a FIFO (which would block a plain ``open`` until a writer comes) or a device is refused
    without waiting, and a path swapped between a check and the open cannot slip through.

    Raises
    ------
    NotAReportError
        Missing, unreadable, a symbolic link loop, or not a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError as exc:
        raise NotAReportError(path, "is a folder; open the reports inside it") from exc
    except OSError as exc:
        # A socket cannot be opened at all (ENXIO): say what it is rather than why.
        mode = _mode(path)
        if mode is not None and not stat.S_ISREG(mode):
            raise NotAReportError(
                path, f"is {file_kind(mode)}, not a report file; give a regular file"
            ) from exc
        raise NotAReportError(path, os_reason(exc)) from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotAReportError(path, "is a folder; open the reports inside it")
        if not stat.S_ISREG(info.st_mode):
            raise NotAReportError(
                path, f"is {file_kind(info.st_mode)}, not a report file; give a regular file"
            )
        return os.pread(fd, size, 0), info.st_size
    except OSError as exc:
        raise NotAReportError(path, os_reason(exc)) from exc
    finally:
        os.close(fd)


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def os_reason(exc: OSError) -> str:
    """Say in a few words why opening a path failed (missing, a link loop, ...)."""
    if exc.errno == errno.ENOENT:
        return "no such file or folder"
    if exc.errno == errno.ELOOP:
        return "symbolic link loop; point at the report itself"
    return f"cannot read file ({exc.strerror or exc})"


def pending_wal(path: Path) -> Path | None:
    """Return ``path``'s ``-wal`` file when it holds a committed transaction, else None.

    A report left in WAL mode by a writer that did not checkpoint keeps its newest committed
    data in ``<name>-wal``; a read-only ``immutable=1`` connection ignores that file and
    shows the older data. The signal is a valid WAL header followed by at least one commit
    frame of the current generation (its salts match the header's). An empty file, a
    garbage one or one with only stale frames (a checkpointed log that was reset) does not
    count: SQLite ignores those too. Checksums are not verified (a Python loop over the
    whole log): a false positive only costs a private copy, never wrong data.
    """
    wal = path.with_name(path.name + "-wal")
    try:
        info = os.stat(wal)
        if not stat.S_ISREG(info.st_mode) or info.st_size < _WAL_HEADER + _WAL_FRAME_HEADER:
            return None
        with wal.open("rb") as fh:
            return wal if _has_commit_frame(fh, info.st_size) else None
    except OSError:
        return None


def _has_commit_frame(fh, size: int) -> bool:  # noqa: ANN001 - a binary file object
    header = fh.read(_WAL_HEADER)
    magic = int.from_bytes(header[0:4], "big")
    version = int.from_bytes(header[4:8], "big")
    page_size = int.from_bytes(header[8:12], "big")
    page_size = 65536 if page_size == 1 else page_size
    if magic not in _WAL_MAGICS or version != _WAL_VERSION:
        return False
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return False
    salts = header[16:24]
    frame = _WAL_FRAME_HEADER + page_size
    for offset in range(_WAL_HEADER, size - frame + 1, frame):
        fh.seek(offset)
        head = fh.read(_WAL_FRAME_HEADER)
        if head[8:16] != salts:
            return False  # the rest of the log is from an older generation
        if int.from_bytes(head[4:8], "big"):
            return True
    return False
