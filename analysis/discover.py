"""Which files are reports: folder scans and first-byte sniffing, before any reader runs.

Plain Python, apart from the readers: ``main.py stats`` expands its arguments (and answers
from a stored result) without importing NumPy, pandas or pyarrow, which the readers
(:mod:`analysis.open`, :mod:`analysis.kineto`, :mod:`analysis.exportdir`) import.
"""

from __future__ import annotations

import re
import stat
import zlib
from collections.abc import Iterable
from pathlib import Path

from strata.analysis._files import os_reason
from strata.analysis.errors import NotAReportError
from strata.analysis.lazylog import get_logger

# gzip is imported where used: a small report's `stats` is mostly start-up
# (benchmarks/bench_startup.py).

__all__ = [
    "EXPORT_DIR_SUFFIXES",
    "REPORT_SUFFIXES",
    "TRACE_SUFFIXES",
    "export_dir_format",
    "find_reports",
    "is_trace_file",
    "is_trace_name",
    "looks_like_json",
    "natural_key",
]

log = get_logger(__name__)

REPORT_SUFFIXES = (".sqlite", ".nsys-rep", ".qdrep")
#: PyTorch profiler (Kineto) traces.
TRACE_SUFFIXES = (".json", ".json.gz")
GZIP_MAGIC = b"\x1f\x8b"
#: Folders written by ``nsys export --type arrowdir|parquetdir``: table file suffix -> type.
EXPORT_DIR_SUFFIXES = {".arrow": "arrowdir", ".parquet": "parquetdir"}
#: The table every export folder holds, by which it is recognised.
EXPORT_DIR_MARKER = "StringIds"


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[str | int, ...], str]:
    """Return the sort key of ``text`` in natural order: ``s2`` before ``s16``, ``rank2``
    before ``rank10``.

    The one order of reports everywhere: a folder's reports (the window, ``stats DIR``,
    :func:`analysis.reportset.open_reports`) and a recipe's ranks. Runs of digits compare as
    numbers, the rest as text; names equal as numbers (``s01``, ``s1``) keep a fixed order.
    """
    parts = _DIGITS.split(text)  # text, digits, text, ...: types line up between two keys
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), text


def find_reports(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders into report files, in a stable order.

    Paths given by name keep their order; a folder adds its reports in natural order of
    their names (:func:`natural_key`: ``s1, s2, s4, s8, s16``). A folder adds every
    regular ``.sqlite``/``.nsys-rep``/``.qdrep`` file and every ``.json``/``.json.gz``
    PyTorch profiler trace (by its first bytes) directly inside it
    (not recursively: a symbolic link loop below it costs nothing); entries that are not
    regular files (a FIFO or folder named ``x.sqlite``, a dangling or looping link) are
    skipped. When both ``x.nsys-rep`` and ``x.sqlite`` exist, only the SQLite export is
    taken. A path given by name is returned as it is; :func:`open_report` judges it.

    Raises
    ------
    NotAReportError
        A path does not exist, is a link loop, or a folder cannot be listed or holds no
        report.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise NotAReportError(path, os_reason(exc)) from exc
        if stat.S_ISDIR(mode) and export_dir_format(path) is None:
            found.extend(_folder_reports(path))
        else:
            found.append(path)
    return found


def _folder_reports(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: natural_key(p.name))
    except OSError as exc:
        raise NotAReportError(folder, f"cannot list folder ({exc.strerror or exc})") from exc
    files = [
        p
        for p in entries
        if (p.suffix in REPORT_SUFFIXES and _is_regular(p))
        or (is_trace_name(p) and _is_regular(p) and is_trace_file(p))
    ]
    sqlite_stems = {p.stem for p in files if p.suffix == ".sqlite"}
    files = [p for p in files if p.suffix == ".sqlite" or p.stem not in sqlite_stems]
    # Folders written by 'nsys export --type arrowdir|parquetdir' directly inside, by content.
    files += [p for p in entries if p.suffix not in REPORT_SUFFIXES and export_dir_format(p)]
    if not files:
        raise NotAReportError(
            folder,
            "folder holds no Nsight Systems reports (.sqlite, .nsys-rep, .qdrep, or an "
            "arrowdir/parquetdir export folder) or PyTorch profiler traces (.json, .json.gz)",
        )
    return sorted(files, key=lambda p: natural_key(p.name))


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:  # dangling link, link loop, vanished meanwhile
        log.debug("skipping %r: not a readable regular file", path)
        return False


def is_trace_name(path: Path) -> bool:
    """Whether a file name says Kineto trace (``.json``, ``.json.gz``, ``.pt.trace.json``)."""
    return path.name.lower().endswith(TRACE_SUFFIXES)


#: How much of a ``.json`` file a folder scan reads to tell a trace from other JSON.
_SNIFF = 64 << 10


def is_trace_file(path: Path) -> bool:
    """Whether a regular file found in a folder is a Kineto trace, by name and first bytes.

    A folder of reports often holds other JSON (a manifest, a config): only files whose
    first 64 KiB (decompressed) name ``traceEvents`` or ``schemaVersion`` are taken, so
    that they do not turn a folder open into an error. Never call it on a FIFO.
    """
    import gzip

    if not is_trace_name(path):
        return False
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            head = (gzip.GzipFile(fileobj=raw) if gz else raw).read(_SNIFF)
    except (OSError, EOFError, zlib.error):
        return False
    return b'"traceEvents"' in head or b'"schemaVersion"' in head


def looks_like_json(head: bytes) -> bool:
    """Whether a file's first bytes are gzip or start a JSON object or array."""
    if head.startswith(GZIP_MAGIC):
        return True
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] in (b"{", b"[")


def export_dir_format(path: Path) -> str | None:
    """Return ``"arrowdir"`` or ``"parquetdir"`` when ``path`` is such a folder, else None.

    Never raises: a missing path, a link loop or an unreadable folder is not one.
    """
    if not _is_a(path, stat.S_ISDIR):
        return None
    found = [
        kind
        for suffix, kind in EXPORT_DIR_SUFFIXES.items()
        if _is_a(path / f"{EXPORT_DIR_MARKER}{suffix}", stat.S_ISREG)
    ]
    return found[0] if len(found) == 1 else None


def _is_a(path: Path, test) -> bool:  # noqa: ANN001 - stat.S_ISDIR or S_ISREG
    try:
        return bool(test(path.stat().st_mode))
    except (OSError, ValueError):  # missing, a link loop, a name with a NUL
        return False
