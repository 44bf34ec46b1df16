"""Open reports by content: SQLite exports directly, ``.nsys-rep``/``.qdrep`` through nsys.

Nothing is ever written next to a report. What has to be written (an ``nsys export``, the
checkpointed copy of a report whose newest data are in its ``-wal`` file) goes to the cache
folder, under a name unique to the writer, and is renamed into place (with ``use_cache``
False, the checkpointed copy goes to a private folder removed once the report is read).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import selectors
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path

from strata.analysis import cache, cachesize
from strata.analysis._files import pending_wal, read_head
from strata.analysis._sqlite import SQLITE_MAGIC, release_freed_memory
from strata.analysis.discover import export_dir_format, looks_like_json
from strata.analysis.errors import (
    CorruptReportError,
    ExportError,
    NotAReportError,
    ReportError,
    UnsupportedVersionError,
)
from strata.analysis.exportdir import export_dir_sqlite
from strata.analysis.kineto import load_kineto
from strata.analysis.loader import load_sqlite
from strata.analysis.model import EventTable, Report
from strata.analysis.nsysrep import beside_export, is_newer_export, is_nsys_rep
from strata.analysis.progress import Progress

__all__ = [
    "beside_export",
    "export_path",
    "export_sqlite",
    "find_nsys",
    "is_newer_export",
    "is_nsys_rep",
    "open_report",
    "sqlite_source",
]

log = logging.getLogger(__name__)

_NSYS_REP_MAGIC = b"NVIDIA"  # "NVIDIA Tegra Profiler Report ..." (MANIFEST §3)
#: Seconds an ``nsys export`` may run before it is killed ($STRATA_EXPORT_TIMEOUT_S).
#: nsys 2023.4 exports ~1 M events a minute on the 2-core reference machine, so 30 minutes
#: covers reports far larger than Strata opens comfortably.
EXPORT_TIMEOUT_S = 1800.0


def find_nsys() -> str | None:
    """Return the nsys executable: ``$NSYS`` if set and executable, else ``nsys`` on PATH."""
    env = os.environ.get("NSYS")
    if env and Path(env).is_file() and os.access(env, os.X_OK):
        return env
    return shutil.which("nsys")


def _magic(path: Path) -> bytes:
    # Never a plain open(): a FIFO would block it (read_head refuses non-regular files).
    return read_head(path, 16)[0]


def open_report(
    path: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    use_cache: bool = True,
    tables: Collection[str] | None = None,
    on_partial: Callable[[Report], None] | None = None,
) -> Report:
    """Open one report read-only and return its columnar model.

    Parameters
    ----------
    path
        An SQLite export, an ``.nsys-rep``/``.qdrep`` (converted with ``nsys export``), a
        PyTorch profiler (Kineto) trace (``.json``, ``.json.gz``, by content), or a
        folder written by ``nsys export --type arrowdir|parquetdir``.
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
    on_partial
        A progressive open: called (on the calling thread) with partial reports
        (``report.complete`` False, the kinds still being read in ``report.pending``) as
        the event tables arrive, GPU tables first (the first kernels as soon as they are
        read), so that a viewer draws them before the whole report is read. Not called
        when the report comes from the cache or ``tables`` is given. The cache entry is
        written from the complete read only.

    Raises
    ------
    NotAReportError, CorruptReportError, UnsupportedVersionError, ExportError
    """
    path = Path(path)
    read = _Read(progress, cancel, use_cache, tables, on_partial)
    if export_dir_format(path) is not None:
        # Its tables are copied into one SQLite file in the cache folder (the first 30 % of
        # the bar), then read by the loader as any export.
        return _open_sqlite(export_dir_sqlite(path, progress), path, read.after(0.3))
    magic = _magic(path)
    if looks_like_json(magic):
        # A PyTorch profiler (Kineto) trace: parsed directly, never cached (a read costs
        # about what a cache entry would: ~5 us an event).
        return load_kineto(path, progress, cancel)
    wal = pending_wal(path) if magic.startswith(SQLITE_MAGIC) else None
    if wal is not None:
        if use_cache:
            return _open_sqlite(_checkpointed_copy(path, wal), path, read)
        # Without the cache nothing is left behind: the copy lives in a private folder for
        # the time of the read (the model holds its own arrays).
        with tempfile.TemporaryDirectory(prefix="strata-") as private:
            return _open_sqlite(_checkpointed_copy(path, wal, Path(private)), path, read)
    if magic.startswith(_NSYS_REP_MAGIC) and not magic.startswith(SQLITE_MAGIC):
        # An export (minutes for a big report) is kept in the cache folder even with
        # use_cache False: nsys's own output, reused, rather than a Strata cache entry.
        # Without nsys, the export nsys stats wrote beside it is read, if newer.
        # The export takes the first 30 % of the bar.
        return _open_sqlite(_export(path, progress), path, read.after(0.3))
    return _open_sqlite(path, path, read)


@dataclass(frozen=True)
class _Read:
    """How :func:`open_report` was asked to read, handed down to the SQLite read."""

    progress: Progress | None
    cancel: threading.Event | None
    use_cache: bool
    tables: Collection[str] | None
    on_partial: Callable[[Report], None] | None

    def after(self, done: float) -> _Read:
        """The same read, its progress on the rest of the bar after the fraction ``done``."""
        if self.progress is None:
            return self
        progress = self.progress
        return replace(self, progress=lambda f, text: progress(done + (1 - done) * f, text))


def _open_sqlite(path: Path, shown_as: Path, read: _Read) -> Report:
    """Read the SQLite file ``path`` that stands for the user's ``shown_as`` (itself, or its
    export, checkpointed copy or export folder's tables in the cache or a private folder):
    the model and every refusal name ``shown_as``, never a copy the user did not give."""
    try:
        return _read_sqlite(path, shown_as, read)
    except ReportError as exc:
        if shown_as == path or exc.path != path:
            raise
        raise type(exc)(shown_as, exc.reason) from exc


def _read_sqlite(path: Path, shown_as: Path, read: _Read) -> Report:
    progress, cancel, use_cache = read.progress, read.cancel, read.use_cache
    tables, on_partial = read.tables, read.on_partial
    key = cache.cache_key(path) if use_cache else ""
    if use_cache:
        cached = cache.load_cached(key, shown_as)
        if cached is not None:
            if progress:
                progress(1.0, "loaded from cache")
            return cached
    if tables is not None:
        # A partial model is never a cache entry; an entry's verdict (a lean stats read's
        # partial entry) spares the check of the tables not read.
        checked = use_cache and cache.validated(key)
        report = load_sqlite(path, progress, cancel, kinds=tables, validated=checked)
        release_freed_memory()
        return _shown_as(report, path, shown_as)
    # With the cache, reading takes the first 90 % of the bar and writing the rest.
    scaled = progress if progress is None or not use_cache else (lambda f, t: progress(0.9 * f, t))
    writer = cache.EntryWriter(key) if use_cache else None
    named = None if on_partial is None else lambda part: on_partial(_shown_as(part, path, shown_as))
    try:
        report = load_sqlite(
            path,
            scaled,
            cancel,
            table_sink=writer.write_table if writer else None,
            on_partial=named,
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    report = _shown_as(report, path, shown_as)
    if writer is None:
        release_freed_memory()  # the reader's temporaries
        return report
    if progress:
        progress(0.95, "writing cache")
    if writer.finish(report, validated=True):
        # The event tables are the entry's memory-mapped files (file-backed, so the freshly
        # read arrays are freed: 2 M events, 450 MiB -> 20 MiB resident).
        if not all(_is_mapped(t) for t in report.tables.values()):
            report = cache.load_cached(key, shown_as) or report
        release_freed_memory()
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


def _path_digest(path: Path) -> str:
    return hashlib.sha1(os.fsencode(path.resolve())).hexdigest()[:12]


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
    if export_dir_format(path) is not None:
        try:
            return export_dir_sqlite(path)
        except (NotAReportError, CorruptReportError):
            return None
    try:
        if _magic(path).startswith(SQLITE_MAGIC):
            wal = pending_wal(path)
            return path if wal is None else _checkpointed_copy(path, wal)
    except (NotAReportError, CorruptReportError):
        return None
    export = export_path(path)
    if not export.is_file() and find_nsys() is None:
        return beside_export(path)
    return export if export.is_file() else None


def _checkpointed_copy(path: Path, wal: Path, into: Path | None = None) -> Path:
    """Return a private copy of ``path`` with the committed transactions of ``wal`` folded in.

    The report and its log are copied into the cache folder (never written next to the
    report; a read-only folder is fine), SQLite replays the log into the copy there
    (``wal_checkpoint(TRUNCATE)``, then rollback-journal mode so that the copy is one
    self-contained file), and the result is renamed into place. It is keyed by both files'
    path, size and mtime, so a later transaction gives a new copy, which replaces the old.
    ``into``: another folder for the copy (``--no-cache``: a private one, removed after).

    Raises
    ------
    CorruptReportError
        The cache folder lacks the space for the copy, or SQLite cannot replay the log.
    """
    out_dir = into or cache.cache_root() / "wal-checkpointed"
    digest = _path_digest(path)
    out = out_dir / f"{digest}-{cache.cache_key(path)}-{cache.cache_key(wal)}.sqlite"
    if out.is_file():
        if into is None:
            cachesize.mark_used(out)
        return out
    fix = f"'sqlite3 {path.name} \"PRAGMA wal_checkpoint(TRUNCATE)\"' folds it in"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        need = path.stat().st_size + wal.stat().st_size
        if shutil.disk_usage(out_dir).free < 2 * need:
            raise CorruptReportError(
                path,
                f"its newest data are in {wal.name} and the cache folder lacks the "
                f"{2 * need:,} bytes to read them from a copy; {fix}",
            )
        with tempfile.TemporaryDirectory(prefix=".tmp-", dir=out_dir) as tmp:
            copy = Path(tmp) / "report.sqlite"
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, Path(tmp) / "report.sqlite-wal")
            _fold_wal(copy)
            os.replace(copy, out)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise CorruptReportError(
            path, f"its newest data are in {wal.name}, which cannot be read ({exc}); {fix}"
        ) from exc
    for old in out_dir.glob(f"{digest}-*.sqlite"):
        if old != out:
            old.unlink(missing_ok=True)
    if into is None:
        cachesize.written(out)
    return out


def _fold_wal(copy: Path) -> None:
    """Checkpoint the log beside ``copy`` into it and leave one self-contained file."""
    con = sqlite3.connect(copy)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode = DELETE")
    finally:
        con.close()


def export_sqlite(
    path: str | Path, out: str | Path | None = None, progress: Progress | None = None
) -> Path:
    """Export the ``.nsys-rep`` at ``path`` with ``nsys export`` again; return the .sqlite.

    ``out``: the file to write (``stats --sqlite FILE``), replaced once complete; None: the
    cache folder's export (:func:`export_path`), written again even when it is there
    (``--force-export true``).

    Raises
    ------
    ExportError, UnsupportedVersionError
        nsys is missing, fails, or cannot read the report.
    """
    return _export(Path(path), progress, None if out is None else Path(out), force=True)


def _export(
    path: Path, progress: Progress | None, target: Path | None = None, force: bool = False
) -> Path:
    """Convert an ``.nsys-rep`` with ``nsys export`` into the cache folder (or ``target``);
    return the .sqlite.

    The export is keyed like a cache entry (path, size, mtime), written under a name unique
    to this process and renamed into place, so two processes exporting the same report never
    read each other's half-written file. Nothing is ever written next to the report (but
    ``target``, a file the user named). ``force``: export even when the cache has it.

    nsys runs in its own process group with a time limit (:func:`_export_timeout_s`); past
    it, the whole group is killed. The report is passed after ``--`` and as an absolute
    path, so a file named ``-x.nsys-rep`` is a file, not an option (nsys 2023.4 accepts
    ``--``).
    """
    timeout_s = _export_timeout_s(path)
    nsys = find_nsys()
    if nsys is None:
        beside = beside_export(path)
        if beside is not None and target is None and not force:
            return beside  # what nsys stats wrote beside it, newer than the report
        stale = path.with_suffix(".sqlite")
        hint = (
            f"; {stale.name} beside it is older than the report, so nsys would not use it"
            if stale != path and stale.is_file()
            else ""
        )
        raise ExportError(
            path,
            "is an Nsight Systems report file and nsys was not found (PATH or $NSYS); install "
            f"Nsight Systems, or run 'nsys export --type sqlite {path.name}' and open the "
            f".sqlite{hint}",
        )
    out = export_path(path) if target is None else target
    out_dir, digest = out.parent, _path_digest(path)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(path, f"cannot write its export into {out_dir} ({exc})") from exc
    if out.is_file() and target is None and not force:
        cachesize.mark_used(out)
        return out
    tmp = out_dir / f".{out.stem}.{os.getpid()}.{threading.get_ident()}.sqlite"
    if progress:
        progress(0.0, "nsys export")
    cmd = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", str(tmp)]
    try:
        code, text = _run_with_progress([*cmd, "--", os.path.abspath(path)], progress, timeout_s)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(path, f"nsys export failed to run ({exc})") from exc
    if code is None:
        tmp.unlink(missing_ok=True)
        raise ExportError(
            path,
            f"nsys export did not finish within {timeout_s:g} s and was stopped; set "
            f"{_TIMEOUT_ENV} to allow longer, or export it yourself with "
            "'nsys export --type sqlite'",
        )
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
    if target is not None:
        return out
    for old in out_dir.glob(f"{digest}-*.sqlite"):
        if old != out:
            old.unlink(missing_ok=True)
    cachesize.written(out)
    return out


_PROGRESS = re.compile(r"Processing .*?(\d+)%")
_TIMEOUT_ENV = "STRATA_EXPORT_TIMEOUT_S"


def _export_timeout_s(path: Path) -> float:
    """Return the time limit of an ``nsys export``: ``$STRATA_EXPORT_TIMEOUT_S`` or 1800 s.

    Raises
    ------
    ExportError
        The variable is set to something other than a positive number of seconds.
    """
    raw = os.environ.get(_TIMEOUT_ENV, "").strip()
    if not raw:
        return EXPORT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ExportError(path, f"{_TIMEOUT_ENV}={raw!r} is not a positive number of seconds")
    return value


def _run_with_progress(
    cmd: list[str], progress: Progress | None, timeout_s: float
) -> tuple[int | None, str]:
    """Run nsys, forwarding its "Processing N events: [..x%]" bar; return (status, output).

    The status is None when nsys ran past ``timeout_s``: its process group was killed.
    Any other way out (cancel, Ctrl-C) kills the group too, so no nsys is left behind.
    """
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    with subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    ) as proc:
        try:
            if not _read_until(proc, deadline, chunks, progress):
                _kill_group(proc)
                return None, b"".join(chunks).decode("utf-8", "replace")
            code = proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            code = None
        except BaseException:
            _kill_group(proc)
            raise
    return code, b"".join(chunks).decode("utf-8", "replace")


def _read_until(
    proc: subprocess.Popen, deadline: float, chunks: list[bytes], progress: Progress | None
) -> bool:
    """Collect ``proc``'s output until it closes it (True) or ``deadline`` passes (False)."""
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not selector.select(left):
                continue
            data = os.read(fd, 65536)
            if not data:
                return True
            chunks.append(data)
            found = _PROGRESS.findall(data.decode("utf-8", "replace"))
            if progress and found:
                progress(0.3 * int(found[-1]) / 100, "nsys export")


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc`` and every process it started (its own session), then reap it."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass  # already gone
    proc.wait()


def _nsys_version(nsys: str) -> str:
    try:
        out = subprocess.run(
            [nsys, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"version\s+(\S+)", out)
    return found.group(1) if found else ""
