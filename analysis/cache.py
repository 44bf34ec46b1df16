"""Columnar cache of loaded reports: Arrow IPC files, memory-mapped on reopen.

An entry lives in ``<cache root>/reports/<key>/`` where the key hashes the report's resolved
path, size and mtime and the cache format. A stale entry (the report changed) simply has
another key and is pruned when the new entry is written.

Nothing read back is trusted: ``meta.json`` records the size and checksum of every file of
the entry (and a checksum of itself), and each file is checked before Arrow parses it (see
:mod:`analysis._cachefiles`); then column names, dtypes and row counts are compared with
``meta.json``, name ids with the string table and track ids with the track keys. An entry
that fails any check is moved aside and rebuilt from the report. An entry that cannot be
mapped for lack of memory is not damaged: it is kept and the report is read instead.

Partial entries: the lean stats read (:mod:`analysis.stats.lean`) keeps what it read, the
durations and name ids of a few tables, as an entry of this same format under this same key
(``"partial": true`` in ``meta.json``, one ``<kind>.arrow`` per table held, no track keys or
frames), checked by the same code. The full open does not use a partial entry: it writes
the complete entry, which replaces it; a partial entry replaces another partial one only
when it holds more. A complete entry serves the lean read too.

The verdict: ``meta.json`` records (``"validated"``: the entry's own key) that the whole
report passed the loader's validation, every table and column :func:`analysis.loader.
load_sqlite` reads, when the writer says so (the full open; the lean read, which checks the
rest of the report in SQLite). A later read of more tables of the same report (the lean read
of another table, :func:`analysis.open_report` with ``tables``) then skips the check of the
tables it does not read (:func:`validated`). The key covers path, size, mtime, a content
fingerprint and the format, so the verdict lapses with the entry; a damaged ``meta.json``
fails its checksum (no verdict), and one copied from another report's entry names another key.

Concurrency: an entry is written in a private temporary folder and appears with one atomic
``rename``; when two processes race, the first rename wins and the loser discards its copy.
A present entry is never rewritten in place (a partial one is replaced by a rename), so a
reader never sees a half-written one, and columns already memory-mapped by a reader stay
valid even if the entry is later removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from strata.analysis import cachedir, cachesize
from strata.analysis._cachefiles import (
    DamagedEntryError,
    digest,
    is_unavailable,
    map_file,
    map_verified,
    read_meta,
    write_meta,
)
from strata.analysis._tablespecs import event_tables
from strata.analysis.cachedir import cache_key, cache_root
from strata.analysis.model import (
    CHAIN_COLUMNS,
    DurationTable,
    EventTable,
    Report,
    ReportInfo,
    StringIds,
)

__all__ = [
    "EntryWriter",
    "cache_key",
    "cache_root",
    "discard",
    "load_cached",
    "prune_stale",
    "store",
    "validated",
]

log = logging.getLogger(__name__)

#: Columns holding StringIds ids (-1: none), in any event table.
_STRING_ID_COLUMNS = ("name_id", "short_name_id", "mangled_name_id", "text_id")
#: What a damaged entry raises while it is read (a checksum mismatch is a ValueError).
_DAMAGE = (OSError, MemoryError, ValueError, KeyError, TypeError, IndexError, AttributeError,
           OverflowError, pa.ArrowException)  # fmt: skip
_FRAMES = (
    "processes",
    "threads",
    "gpus",
    "streams",
    "nvtx_domains",
    "nvtx_categories",
    "gpu_metric_names",
    "contexts",
    "cuda_devices",
    "sample_chains",
    "cuda_chains",
)
#: Frames holding call chains (analysis.model.CHAIN_COLUMNS), checked like event tables.
_CHAIN_FRAMES = ("sample_chains", "cuda_chains")


def _entry(key: str) -> Path:
    return cache_root() / "reports" / key


def _write_table(path: Path, table: pa.Table) -> tuple[list[object], pa.Table]:
    """Write ``table`` as an Arrow IPC file; return its ``meta.json`` record and mapped copy.

    The record is the file's size and checksum, taken from the same mapping the returned
    table reads: one pass over the written bytes.
    """
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    mapped = map_file(path)
    return [len(mapped), digest(mapped)], pa.ipc.open_file(pa.py_buffer(mapped)).read_all()


def _read_table(entry: Path, name: str, files: dict, full: bool = True) -> pa.Table:
    """Map one file of an entry, check it against ``meta.json``, then let Arrow read it."""
    mapped = map_verified(entry / name, files.get(name))
    table = pa.ipc.open_file(pa.py_buffer(mapped)).read_all()
    # Verified bytes are the bytes we wrote; a full validation (string offsets, UTF-8) is
    # kept for the small files, where it costs nothing.
    table.validate(full=full)
    return table


def _column(table: pa.Table, name: str) -> np.ndarray:
    column = table.column(name)
    chunk = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return chunk.to_numpy(zero_copy_only=True)


def _span(values: np.ndarray) -> tuple[int, int]:
    """Return (min, max) of a non-empty column; one value when it is a zero-stride constant."""
    if values.strides == (0,):
        return int(values[0]), int(values[0])
    return int(values.min()), int(values.max())


def _check_table(kind: str, columns: dict[str, np.ndarray], n_keys: int, n_strings: int) -> None:
    """Raise DamagedEntryError unless ``columns`` hold the invariants of every entry.

    Track ids are sorted and index the ``n_keys`` track keys; name ids are -1 or index the
    string table; a duration table's durations are >= 0. The writer checks the same before
    it publishes an entry.
    """
    durations = columns.get("duration_ns", ())
    if len(durations) and _span(durations)[0] < 0:
        raise DamagedEntryError(f"{kind}: negative durations")
    track_ids = columns.get("track_id", ())
    if len(track_ids):
        lo, hi = _span(track_ids)
        if lo < 0 or hi >= n_keys:
            raise DamagedEntryError(f"{kind}: track ids {lo}..{hi} outside {n_keys} track keys")
        if track_ids.strides != (0,) and np.any(track_ids[1:] < track_ids[:-1]):
            raise DamagedEntryError(f"{kind}: track ids not sorted")
    for name in _STRING_ID_COLUMNS:
        if name in columns and len(columns[name]):
            lo, hi = _span(columns[name])
            if lo < -1 or hi >= n_strings:
                raise DamagedEntryError(
                    f"{kind}.{name}: ids {lo}..{hi} outside the {n_strings} strings"
                )


def _check_chains(name: str, frame, n_strings: int) -> None:
    """Raise DamagedEntryError unless a call-chain frame has its columns and dtypes, ids
    that index the string table (or -1), and rows sorted by (chain id, depth)."""
    dtypes = {c: str(t) for c, t in frame.dtypes.items()}
    if dtypes != CHAIN_COLUMNS:
        raise DamagedEntryError(f"{name}: columns {dtypes}, not {CHAIN_COLUMNS}")
    if not len(frame):
        return
    for column in ("symbol", "module"):
        lo, hi = _span(frame[column].to_numpy())
        if lo < -1 or hi >= n_strings:
            raise DamagedEntryError(f"{name}.{column}: ids {lo}..{hi} outside {n_strings} strings")
    chain, depth = frame["chain_id"].to_numpy(), frame["depth"].to_numpy()
    step = np.diff(chain)
    if np.any(step < 0) or np.any((step == 0) & (np.diff(depth) < 0)):
        raise DamagedEntryError(f"{name}: frames not sorted by chain and depth")


class EntryWriter:
    """Writes one cache entry table by table while the report loads, then publishes it.

    ``write_table`` is the loader's ``table_sink``; :meth:`finish` adds the small tables and
    ``meta.json`` and renames the private folder into place (atomic). A failed write only
    logs a warning: loading goes on, the entry is simply not published.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self.tmp: Path | None = None
        self.layout: dict[str, dict] = {}
        self.files: dict[str, list[object]] = {}
        root = cache_root() / "reports"
        final = _entry(key)
        if (final / "meta.json").is_file():
            if _held(final) is None:
                # Present but not loaded: it could not be mapped now (memory), or it is
                # damaged and could not be moved aside (a read-only cache). Writing a copy
                # would not help.
                return
            # A partial entry: it serves the lean reads until ours replaces it (finish).
        elif final.exists():
            discard(final)  # incomplete (e.g. copied or left by an older version): rebuild
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        except OSError as exc:
            log.warning("could not create the cache folder %s: %s", root, exc)

    def write_table(
        self, kind: str, table: EventTable | DurationTable
    ) -> EventTable | DurationTable | None:
        """Write one event table; return the same table memory-mapped from the entry.

        Swapping to the mapped copy frees the freshly read arrays while later tables are
        still loading, so the peak holds one table in anonymous memory, not the report.
        A column holding one value throughout is stored as that value and comes back as a
        zero-stride read-only view (no bytes on disk or in memory; a real report's device,
        context, process and launch-config columns often are). Returns None when the entry
        could not be written.
        """
        if self.tmp is None:
            return None
        n = len(table)
        # The anchor is always stored, so that every entry's row count is backed by a file.
        anchor = _anchor(table)
        constants = {
            name: [col[:1].item(), col.dtype.str]
            for name, col in table.columns.items()
            if n and name != anchor and col.min() == col.max()
        }
        stored = {name: col for name, col in table.columns.items() if name not in constants}
        try:
            self.files[f"{kind}.arrow"], arrow = _write_table(
                self.tmp / f"{kind}.arrow", pa.table(stored)
            )
            if isinstance(table, EventTable):
                self.files[f"{kind}.keys.arrow"], _ = _write_table(
                    self.tmp / f"{kind}.keys.arrow",
                    pa.Table.from_pandas(table.track_keys, preserve_index=False),
                )
            self.layout[kind] = {
                "columns": list(table.columns),
                "constants": constants,
                "dtypes": {name: col.dtype.str for name, col in stored.items()},
            }
            if not _MAP_WHILE_WRITING:
                return None
            columns = _table_columns(arrow, kind, n, self.layout[kind], anchor)
        except (OSError, ValueError, pa.ArrowException) as exc:
            self._fail(exc)
            return None
        if isinstance(table, DurationTable):
            return DurationTable(kind, columns, table.source)
        return EventTable(kind, columns, table.track_keys, table.source)

    def finish(self, report: Report, validated: bool = False) -> bool:
        """Write what is left, publish the entry; return whether the entry is now present.

        ``validated``: the whole report passed the loader's validation (see :func:`validated`).
        """
        if self.tmp is None:
            return False
        final = _entry(self.key)
        try:
            for kind in set(report.tables) - set(self.layout):
                self.write_table(kind, report.tables[kind])
            if self.tmp is None:
                return False
            try:
                for kind, table in report.tables.items():
                    keys = table.track_keys if isinstance(table, EventTable) else ()
                    _check_table(kind, table.columns, len(keys), len(report.strings))
                if report.complete:
                    for name in _CHAIN_FRAMES:
                        _check_chains(name, getattr(report, name), len(report.strings))
            except DamagedEntryError as exc:
                # It would be discarded on every read: odd ids in the report itself.
                log.info("%s is not cached: %s", report.info.path, exc)
                self.abort()
                return False
            verdict = self.key if validated else None
            _write_small(self.tmp, report, self.layout, self.files, verdict)
            if not self._publish(final):
                return (final / "meta.json").is_file()
        except (OSError, ValueError, MemoryError, pa.ArrowException) as exc:
            # A full or read-only cache folder, no memory: the report is served all the same.
            self._fail(exc)
            return False
        self.tmp = None
        prune_stale(cache_root() / "reports", report.info.path, self.key)
        cachesize.written(final)
        # The stats side cache of Strata 0.2 and before: the lean read now uses this cache.
        if (cache_root() / _LEGACY_SIDE_CACHE).exists():
            discard(cache_root() / _LEGACY_SIDE_CACHE)
        return True

    def _publish(self, final: Path) -> bool:
        """Rename the written entry into place; return whether it is the entry now."""
        try:
            os.rename(self.tmp, final)
            return True
        except OSError:
            pass
        # Present (rename onto a non-empty folder fails): another process published the same
        # entry first, and theirs is as good as ours; or it is a partial entry, which ours
        # replaces (put aside first: a reader keeps its mapped files).
        if _held(final) is not None:
            aside = final.with_name(f".trash-{final.name}-{os.getpid()}-{id(self)}")
            try:
                os.rename(final, aside)
                os.rename(self.tmp, final)
            except OSError:
                self.abort()
                return False
            _remove(aside)
            return True
        self.abort()
        return False

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def _fail(self, exc: Exception) -> None:
        log.warning("could not write the cache entry %s: %s", self.key, exc)
        self.abort()


def store(report: Report, key: str, validated: bool = False) -> bool:
    """Write ``report`` under ``key`` atomically; return whether an entry is now present.

    A partial report (``report.complete`` False) replaces a partial entry only when it holds
    more than that entry, and never a complete one. ``validated``: the whole report passed
    the loader's validation (recorded in the entry, see :func:`validated`).
    """
    final = _entry(key)
    if (final / "meta.json").is_file():
        held = _held(final)
        if held is None or (not report.complete and _within(report, held)):
            return True
    return EntryWriter(key).finish(report, validated)


def validated(key: str) -> bool:
    """Whether the entry under ``key`` records that its whole report passed validation.

    Only a ``meta.json`` that passes its checksum, in the current format, whose verdict
    names this very key counts; anything else (no entry, damage, a verdict copied from
    another report's entry) is False, and the caller checks the report itself.
    """
    try:
        meta = read_meta(_entry(key) / "meta.json")
    except (OSError, ValueError):  # DamagedEntryError is a ValueError
        return False
    return meta.get("format") == cachedir.COLUMNS_FORMAT and meta.get("validated") == key


def _within(report: Report, held: dict[str, list[str]]) -> bool:
    """Whether every table and column of ``report`` is in ``held``."""
    return all(k in held and set(t.columns) <= set(held[k]) for k, t in report.tables.items())


def _held(entry: Path) -> dict[str, list[str]] | None:
    """Return what a partial entry holds (kind -> columns); None for any other entry.

    None too when ``meta.json`` cannot be read or checked: such an entry is left alone.
    """
    try:
        meta = read_meta(entry / "meta.json")
        if meta.get("format") != cachedir.COLUMNS_FORMAT or meta.get("partial") is not True:
            return None
        return {kind: list(layout["columns"]) for kind, layout in meta["layout"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _anchor(table: EventTable | DurationTable) -> str:
    """The column stored as a file even when constant: an event table's start_ns."""
    return "start_ns" if isinstance(table, EventTable) else "duration_ns"


#: Windows cannot rename a folder whose files are mapped, so there the written tables are
#: not swapped for their mapped copies until the entry is published.
_MAP_WHILE_WRITING = os.name != "nt"

#: A temporary entry folder older than this was left by a process that died mid-write.
_ABANDONED_S = 3600.0
#: Where the lean stats read kept its own cache before it used this one: removed.
_LEGACY_SIDE_CACHE = "stats-columns"


def _table_columns(
    arrow: pa.Table, kind: str, rows: int, layout: dict, anchor: str = "start_ns"
) -> dict[str, np.ndarray]:
    """Return one table's columns: memory-mapped from the entry, constants as views.

    Raises DamagedEntryError when the file's columns, dtypes or row count differ from
    ``layout`` and ``rows`` (``meta.json``), or the ``anchor`` column is not in the file.
    """
    stored = [name for name in layout["columns"] if name not in layout["constants"]]
    if arrow.column_names != stored or anchor not in stored:
        raise DamagedEntryError(f"{kind}: columns {arrow.column_names}, meta.json says {stored}")
    if arrow.num_rows != rows:
        raise DamagedEntryError(f"{kind}: {arrow.num_rows} rows, meta.json says {rows}")
    columns = {}
    for name in layout["columns"]:
        if name in layout["constants"]:
            value, dtype = layout["constants"][name]
            columns[name] = np.broadcast_to(np.array(value, dtype=np.dtype(dtype)), (rows,))
            continue
        columns[name] = _column(arrow, name)
        if columns[name].dtype.str != layout["dtypes"][name]:
            raise DamagedEntryError(f"{kind}.{name}: dtype differs from meta.json")
    return columns


def _write_small(
    tmp: Path, report: Report, layout: dict[str, dict], files: dict, verdict: str | None
) -> None:
    strings = pa.table({"value": pa.array(report.strings.values.tolist(), pa.string())})
    files["strings.arrow"], _ = _write_table(tmp / "strings.arrow", strings)
    partial = not report.complete
    for name in () if partial else _FRAMES:
        frame = pa.Table.from_pandas(getattr(report, name), preserve_index=False)
        files[f"{name}.frame.arrow"], _ = _write_table(tmp / f"{name}.frame.arrow", frame)
    info = report.info
    meta = {
        "format": cachedir.COLUMNS_FORMAT,
        "partial": partial,
        "source": str(Path(info.path).resolve()),
        "info": {
            "path": str(info.path),
            "name": info.name,
            "nsys_version": info.nsys_version,
            "schema_version": info.schema_version,
            "session_start_utc_ns": info.session_start_utc_ns,
            "duration_ns": info.duration_ns,
            "os": info.os,
        },
        "sources": {kind: t.source for kind, t in report.tables.items()},
        "rows": {kind: len(t) for kind, t in report.tables.items()},
        "layout": layout,
        "files": files,
        "enums": {k: {str(i): v for i, v in m.items()} for k, m in report.enums.items()},
        "source_columns": {k: list(v) for k, v in report.source_columns.items()},
        "nvtx_max_ns": report.nvtx_max_ns,
        "validated": verdict,
    }
    # meta.json last: an entry without it is incomplete and never read.
    write_meta(tmp / "meta.json", meta)


def prune_stale(folder: Path, path: Path, keep: str) -> None:
    """Remove the entries in ``folder`` of the same report but another key; best effort.

    An entry names its report in ``meta.json`` (``"source"``: the resolved path); an older
    size or mtime of that file gave the others their keys. Abandoned temporary folders
    (``.tmp-*``, ``.trash-*``) older than an hour go too.
    """
    source = str(Path(path).resolve())
    now = time.time()
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith((".tmp-", ".trash-")):
            with contextlib.suppress(OSError):
                if now - entry.lstat().st_mtime > _ABANDONED_S:
                    _remove(entry)
            continue
        if entry.name == keep:
            continue
        try:
            meta = json.loads((entry / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("source") == source:
            discard(entry)


def discard(entry: Path) -> None:
    """Move an entry aside atomically, then delete it (readers keep their mappings).

    A file or a symbolic link where an entry folder should be is removed too (never what it
    points to).
    """
    trash = entry.parent / f".trash-{entry.name}-{os.getpid()}-{id(entry)}"
    try:
        os.rename(entry, trash)
    except OSError:
        return
    _remove(trash)


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def load_cached(key: str, path: Path, partial: bool = False) -> Report | None:
    """Return the cached report for ``key``, or None when there is no usable entry.

    A partial entry is returned (as a partial report) only with ``partial``; else it is
    left for the full open to replace. A damaged entry (any check of :func:`_load` fails) is
    logged, moved aside and deleted, so that the caller reads the report and writes a new
    one. An entry that cannot be used now (no memory to map it, no permission) is logged
    and kept.
    """
    entry = _entry(key)
    if not (entry / "meta.json").is_file():
        return None
    try:
        report = _load(entry, path, partial)
    except _DAMAGE as exc:
        if is_unavailable(exc):
            log.warning("cannot use the cache entry for %s now (%s); reading the report", path, exc)
            return None
        log.warning("discarding a damaged cache entry for %s (%s)", path, exc)
        discard(entry)
        return None
    if report is not None:
        cachesize.mark_used(entry)
    return report


def _load(entry: Path, path: Path, partial: bool) -> Report | None:
    meta = read_meta(entry / "meta.json")
    if meta.get("format") != cachedir.COLUMNS_FORMAT:
        raise DamagedEntryError("cache format mismatch")
    is_partial = meta["partial"]
    if not isinstance(is_partial, bool):
        raise DamagedEntryError("meta.json: 'partial' is not true or false")
    if is_partial and not partial:
        return None
    kinds = list(meta["rows"]) if is_partial else event_tables()
    if not set(kinds) <= set(event_tables()):
        raise DamagedEntryError(f"meta.json: unknown tables {sorted(set(kinds))}")
    if not is_partial and (missing := set(kinds) - set(meta["rows"])):
        # Written before the kind of that table was registered: read the report again.
        raise DamagedEntryError(f"meta.json: no {', '.join(sorted(missing))} table")
    strings = _read_table(entry, "strings.arrow", meta["files"]).column("value").to_pylist()
    tables = {kind: _load_table(entry, meta, kind, len(strings), is_partial) for kind in kinds}
    info = dict(meta["info"])
    info["path"] = path
    source_columns = {k: tuple(v) for k, v in meta["source_columns"].items()}
    string_ids = StringIds(np.array(strings, dtype=object))
    if is_partial:
        return Report.from_durations(ReportInfo(**info), string_ids, tables, source_columns)
    frames = {
        name: _read_table(entry, f"{name}.frame.arrow", meta["files"]).to_pandas()
        for name in _FRAMES
    }
    for name in _CHAIN_FRAMES:
        _check_chains(name, frames[name], len(strings))
    return Report(
        info=ReportInfo(**info),
        strings=string_ids,
        tables=tables,
        enums={k: {int(i): v for i, v in m.items()} for k, m in meta["enums"].items()},
        source_columns=source_columns,
        nvtx_max_ns=int(meta["nvtx_max_ns"]),
        **frames,
    )


def _load_table(
    entry: Path, meta: dict, kind: str, n_strings: int, partial: bool
) -> EventTable | DurationTable:
    """Map and check one table of an entry: a DurationTable in a partial entry."""
    rows, layout, files = meta["rows"][kind], meta["layout"][kind], meta["files"]
    arrow = _read_table(entry, f"{kind}.arrow", files, full=False)
    columns = _table_columns(arrow, kind, rows, layout, "duration_ns" if partial else "start_ns")
    if partial:
        _check_table(kind, columns, 0, n_strings)
        return DurationTable(kind, columns, meta["sources"][kind])
    keys = _read_table(entry, f"{kind}.keys.arrow", files).to_pandas()
    _check_table(kind, columns, len(keys), n_strings)
    return EventTable(kind, columns, keys, meta["sources"][kind])
