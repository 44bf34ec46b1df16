"""Open reports by content: SQLite exports directly, ``.nsys-rep``/``.qdrep`` through nsys."""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from pathlib import Path

from analysis import cache
from analysis._sqlite import SQLITE_MAGIC
from analysis.errors import ExportError, NotAReportError, UnsupportedVersionError
from analysis.loader import load_sqlite
from analysis.model import EventTable, Report

__all__ = [
    "REPORT_SUFFIXES",
    "export_path",
    "find_nsys",
    "find_reports",
    "open_report",
    "open_reports",
    "sqlite_source",
]

log = logging.getLogger(__name__)

REPORT_SUFFIXES = (".sqlite", ".nsys-rep", ".qdrep")
_NSYS_REP_MAGIC = b"NVIDIA"  # "NVIDIA Tegra Profiler Report ..." (MANIFEST §3)

Progress = Callable[[float, str], None]


def find_nsys() -> str | None:
    """Return the nsys executable: ``$NSYS`` if set and executable, else ``nsys`` on PATH."""
    env = os.environ.get("NSYS")
    if env and Path(env).is_file() and os.access(env, os.X_OK):
        return env
    return shutil.which("nsys")


def find_reports(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders into report files, in a stable order.

    A folder adds every ``.sqlite``/``.nsys-rep``/``.qdrep`` directly inside it; when both
    ``x.nsys-rep`` and ``x.sqlite`` exist, only the SQLite export is taken.

    Raises
    ------
    NotAReportError
        A path does not exist, or a folder holds no report.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in REPORT_SUFFIXES)
            sqlite_stems = {p.stem for p in files if p.suffix == ".sqlite"}
            files = [p for p in files if p.suffix == ".sqlite" or p.stem not in sqlite_stems]
            if not files:
                raise NotAReportError(
                    path, "folder holds no Nsight Systems reports (.sqlite, .nsys-rep, .qdrep)"
                )
            found.extend(files)
        elif path.exists():
            found.append(path)
        else:
            raise NotAReportError(path, "no such file or folder")
    return found


def _magic(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(16)
    except IsADirectoryError as exc:
        raise NotAReportError(path, "is a folder; open the reports inside it") from exc
    except OSError as exc:
        raise NotAReportError(path, f"cannot read file ({exc.strerror})") from exc


def open_report(
    path: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    use_cache: bool = True,
    tables: Collection[str] | None = None,
) -> Report:
    """Open one report read-only and return its columnar model.

    Parameters
    ----------
    path
        An SQLite export, or an ``.nsys-rep``/``.qdrep`` (converted with ``nsys export``).
    progress
        ``progress(fraction, text)`` callback.
    cancel
        Event that aborts the load with :class:`~analysis.errors.CancelledError`.
    use_cache
        Read and write the columnar cache (keyed by path, size and mtime).
    tables
        Only these event tables are needed (``"kernels"``, ``"nvtx"``, …): without a cache
        entry, only they are read and the others stay empty (``report.has_source`` still
        answers for the file), and no entry is written, as the model is partial. A recipe
        mapping hundreds of reports needs a table or two of each. None: every table.

    Raises
    ------
    NotAReportError, CorruptReportError, UnsupportedVersionError, ExportError
    """
    path = Path(path)
    magic = _magic(path)
    if magic.startswith(_NSYS_REP_MAGIC) and not magic.startswith(SQLITE_MAGIC):
        path_sqlite = _export(path, progress)
        # The export took the first 30 % of the bar.
        rest = None if progress is None else (lambda f, text: progress(0.3 + 0.7 * f, text))
        return _open_sqlite(path_sqlite, rest, cancel, use_cache, path, tables)
    return _open_sqlite(path, progress, cancel, use_cache, path, tables)


def _open_sqlite(
    path: Path,
    progress: Progress | None,
    cancel: threading.Event | None,
    use_cache: bool,
    shown_as: Path,
    tables: Collection[str] | None = None,
) -> Report:
    key = cache.cache_key(path) if use_cache else ""
    if use_cache:
        cached = cache.load_cached(key, shown_as)
        if cached is not None:
            if progress:
                progress(1.0, "loaded from cache")
            return cached
    if tables is not None:
        # A partial model is never a cache entry.
        report = load_sqlite(path, progress, cancel, kinds=tables)
        _release_freed_memory()
        return _shown_as(report, path, shown_as)
    # With the cache, reading takes the first 90 % of the bar and writing the rest.
    scaled = progress if progress is None or not use_cache else (lambda f, t: progress(0.9 * f, t))
    writer = cache.EntryWriter(key) if use_cache else None
    try:
        report = load_sqlite(
            path, scaled, cancel, table_sink=writer.write_table if writer else None
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    report = _shown_as(report, path, shown_as)
    if writer is None:
        _release_freed_memory()  # the reader's temporaries
        return report
    if progress:
        progress(0.95, "writing cache")
    if writer.finish(report):
        # The event tables are the entry's memory-mapped files (file-backed, so the freshly
        # read arrays are freed: 2 M events, 450 MiB -> 20 MiB resident).
        if not all(_is_mapped(t) for t in report.tables.values()):
            report = cache.load_cached(key, shown_as) or report
        _release_freed_memory()
    if progress:
        progress(1.0, "loaded")
    return report


def _shown_as(report: Report, path: Path, shown_as: Path) -> Report:
    """Name the report read from ``path`` after the file the user gave (an ``.nsys-rep``)."""
    if shown_as == path:
        return report
    return replace(report, info=replace(report.info, path=shown_as, name=shown_as.name))


def _is_mapped(table: EventTable) -> bool:
    """Whether a table's columns are views (mapped or zero-stride), not owned arrays."""
    return all(column.base is not None for column in table.columns.values())


def _release_freed_memory() -> None:
    """Hand the reader threads' freed buffers back to the OS (glibc keeps them otherwise).

    Measured after a 2 M-event first open: 168 MiB still resident after the arrays were
    freed, 77 MiB (the ADBC driver and SQLite themselves) after ``malloc_trim``.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        log.debug("malloc_trim is not available (not glibc)")


def open_reports(paths: Iterable[str | Path], use_cache: bool = True) -> list[Report]:
    """Open several reports (folders expanded) one after the other."""
    return [open_report(p, use_cache=use_cache) for p in find_reports(paths)]


def _path_digest(path: Path) -> str:
    return hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]


def export_path(path: str | Path) -> Path:
    """Return where the SQLite export of the ``.nsys-rep`` at ``path`` lives in the cache.

    ``<cache>/exports/<path digest>-<cache key>.sqlite``: keyed like a cache entry (path, size,
    mtime), so a re-recorded report gets a new export that replaces its old one.
    """
    path = Path(path)
    return cache.cache_root() / "exports" / f"{_path_digest(path)}-{cache.cache_key(path)}.sqlite"


def sqlite_source(path: str | Path) -> Path | None:
    """Return the SQLite file behind a report path: itself, or its export in the cache.

    None when the file is unreadable, or an ``.nsys-rep`` that has not been exported yet.
    """
    path = Path(path)
    try:
        if _magic(path).startswith(SQLITE_MAGIC):
            return path
    except NotAReportError:
        return None
    export = export_path(path)
    return export if export.is_file() else None


def _export(path: Path, progress: Progress | None) -> Path:
    """Convert an ``.nsys-rep`` with ``nsys export`` into the cache folder; return the .sqlite.

    The export is keyed like a cache entry (path, size, mtime), written under a name unique
    to this process and renamed into place, so two processes exporting the same report never
    read each other's half-written file. Nothing is ever written next to the report.
    """
    nsys = find_nsys()
    if nsys is None:
        raise ExportError(
            path,
            "is an Nsight Systems report file and nsys was not found (PATH or $NSYS); install "
            f"Nsight Systems, or run 'nsys export --type sqlite {path.name}' and open the .sqlite",
        )
    out = export_path(path)
    out_dir, digest = out.parent, _path_digest(path)
    out_dir.mkdir(parents=True, exist_ok=True)
    if out.is_file():
        return out
    tmp = out_dir / f".{out.stem}.{os.getpid()}.{threading.get_ident()}.sqlite"
    if progress:
        progress(0.0, "nsys export")
    cmd = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", str(tmp)]
    try:
        code, text = _run_with_progress([*cmd, str(path)], progress)
    except OSError as exc:
        raise ExportError(path, f"nsys export failed to run ({exc})") from exc
    if code != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        lines = [ln.strip() for ln in re.split(r"[\r\n]+", text) if ln.strip()]
        lines = [ln for ln in lines if not _PROGRESS.search(ln)] or lines
        reason = next((ln for ln in lines if "newer" in ln.lower()), None)
        if reason:
            raise UnsupportedVersionError(
                path, f"nsys {_nsys_version(nsys)} cannot read it: {reason}"
            )
        detail = lines[-1] if lines else f"exit status {code}"
        raise ExportError(path, f"nsys export failed: {detail}")
    os.replace(tmp, out)
    for old in out_dir.glob(f"{digest}-*.sqlite"):
        if old != out:
            old.unlink(missing_ok=True)
    return out


_PROGRESS = re.compile(r"Processing .*?(\d+)%")


def _run_with_progress(cmd: list[str], progress: Progress | None) -> tuple[int, str]:
    """Run nsys, forwarding its "Processing N events: [..x%]" bar; return (status, output)."""
    chunks: list[bytes] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None
        while data := proc.stdout.read1(65536):
            chunks.append(data)
            found = _PROGRESS.findall(data.decode("utf-8", "replace"))
            if progress and found:
                progress(0.3 * int(found[-1]) / 100, "nsys export")
        code = proc.wait()
    return code, b"".join(chunks).decode("utf-8", "replace")


def _nsys_version(nsys: str) -> str:
    try:
        out = subprocess.run(
            [nsys, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"version\s+(\S+)", out)
    return found.group(1) if found else ""
