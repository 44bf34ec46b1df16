"""Columnar cache of loaded reports: Arrow IPC files, memory-mapped on reopen.

An entry lives in ``<cache root>/reports/<key>/`` where the key hashes the report's resolved
path, size and mtime and the cache format. A stale entry (the report changed) simply has
another key and is pruned when the new entry is written; an entry that fails to read or
whose row counts disagree with its ``meta.json`` is moved aside and rebuilt, never trusted.

Concurrency: an entry is written in a private temporary folder and appears with one atomic
``rename``; when two processes race, the first rename wins and the loser discards its copy.
A present entry is never rewritten in place, so a reader never sees a half-written one, and
columns already memory-mapped by a reader stay valid even if the entry is later removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from analysis.model import EVENT_TABLES, EventTable, Report, ReportInfo, StringIds

__all__ = [
    "EntryWriter",
    "cache_key",
    "cache_root",
    "load_cached",
    "prune_stale",
    "store",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 5
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
)


def cache_root() -> Path:
    """Return the cache folder: ``$STRATA_CACHE_DIR`` or the user cache dir (platformdirs)."""
    env = os.environ.get("STRATA_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("strata", appauthor=False))


def cache_key(path: Path) -> str:
    """Return the cache key of ``path``: its resolved path, size, mtime and our format."""
    st = path.stat()
    text = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{FORMAT_VERSION}"
    # surrogateescape: a file name that is not valid UTF-8 keys by its bytes, not a crash.
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _entry(key: str) -> Path:
    return cache_root() / "reports" / key


def _write_table(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_table(path: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def _column(table: pa.Table, name: str) -> np.ndarray:
    column = table.column(name)
    chunk = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return chunk.to_numpy(zero_copy_only=True)


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
        root = cache_root() / "reports"
        final = _entry(key)
        if final.exists() and not (final / "meta.json").is_file():
            _discard(final)  # incomplete (e.g. copied or left by an older version): rebuild
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        except OSError as exc:
            log.warning("could not create the cache folder %s: %s", root, exc)

    def write_table(self, kind: str, table: EventTable) -> EventTable | None:
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
        constants = {
            name: [col[:1].item(), col.dtype.str]
            for name, col in table.columns.items()
            if n and col.min() == col.max()
        }
        stored = {name: col for name, col in table.columns.items() if name not in constants}
        try:
            _write_table(self.tmp / f"{kind}.arrow", pa.table(stored))
            _write_table(
                self.tmp / f"{kind}.keys.arrow",
                pa.Table.from_pandas(table.track_keys, preserve_index=False),
            )
            self.layout[kind] = {"columns": list(table.columns), "constants": constants}
            if not _MAP_WHILE_WRITING:
                return None
            columns = _mapped_columns(self.tmp, kind, n, self.layout[kind])
        except (OSError, pa.ArrowException) as exc:
            self._fail(exc)
            return None
        return EventTable(kind, columns, table.track_keys, table.source)

    def finish(self, report: Report) -> bool:
        """Write what is left, publish the entry; return whether the entry is now present."""
        if self.tmp is None:
            return False
        final = _entry(self.key)
        try:
            for kind in set(report.tables) - set(self.layout):
                self.write_table(kind, report.tables[kind])
            if self.tmp is None:
                return False
            _write_small(self.tmp, report, self.layout)
            try:
                os.rename(self.tmp, final)
            except OSError:
                # Another process published the same entry first (rename onto a non-empty
                # folder fails); theirs is as good as ours.
                self.abort()
                return (final / "meta.json").is_file()
        except OSError as exc:
            self._fail(exc)
            return False
        self.tmp = None
        prune_stale(cache_root() / "reports", report.info.path, self.key)
        return True

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def _fail(self, exc: Exception) -> None:
        log.warning("could not write the cache entry %s: %s", self.key, exc)
        self.abort()


def store(report: Report, key: str) -> bool:
    """Write ``report`` under ``key`` atomically; return whether the entry is now present."""
    if (_entry(key) / "meta.json").is_file():
        return True
    return EntryWriter(key).finish(report)


#: Windows cannot rename a folder whose files are mapped, so there the written tables are
#: not swapped for their mapped copies until the entry is published.
_MAP_WHILE_WRITING = os.name != "nt"

#: A temporary entry folder older than this was left by a process that died mid-write.
_ABANDONED_S = 3600.0


def _mapped_columns(entry: Path, kind: str, rows: int, layout: dict) -> dict[str, np.ndarray]:
    """Return one table's columns: memory-mapped from the entry, constants as views."""
    arrow = _read_table(entry / f"{kind}.arrow")
    if arrow.num_columns and arrow.num_rows != rows:
        raise ValueError(f"{kind}: {arrow.num_rows} rows, meta.json says {rows}")
    columns = {}
    for name in layout["columns"]:
        if name in layout["constants"]:
            value, dtype = layout["constants"][name]
            columns[name] = np.broadcast_to(np.array(value, dtype=np.dtype(dtype)), (rows,))
        else:
            columns[name] = _column(arrow, name)
    return columns


def _write_small(tmp: Path, report: Report, layout: dict[str, dict]) -> None:
    _write_table(
        tmp / "strings.arrow",
        pa.table({"value": pa.array(report.strings.values.tolist(), pa.string())}),
    )
    for name in _FRAMES:
        frame = getattr(report, name)
        _write_table(tmp / f"{name}.frame.arrow", pa.Table.from_pandas(frame, preserve_index=False))
    info = report.info
    meta = {
        "format": FORMAT_VERSION,
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
        "enums": {k: {str(i): v for i, v in m.items()} for k, m in report.enums.items()},
        "source_columns": {k: list(v) for k, v in report.source_columns.items()},
        "nvtx_max_ns": report.nvtx_max_ns,
    }
    # meta.json last: an entry without it is incomplete and never read.
    (tmp / "meta.json").write_text(json.dumps(meta))


def prune_stale(folder: Path, path: Path, keep: str) -> None:
    """Remove the entries in ``folder`` of the same report but another key; best effort.

    An entry names its report in ``meta.json`` (``"source"``: the resolved path); an older
    size or mtime of that file gave the others their keys. Abandoned temporary folders
    (``.tmp-*``, ``.trash-*``) older than an hour go too.
    """
    source = str(Path(path).resolve())
    now = time.time()
    for entry in folder.iterdir():
        if entry.name.startswith((".tmp-", ".trash-")):
            with contextlib.suppress(OSError):
                if now - entry.stat().st_mtime > _ABANDONED_S:
                    shutil.rmtree(entry, ignore_errors=True)
            continue
        if entry.name == keep:
            continue
        try:
            meta = json.loads((entry / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        if meta.get("source") == source:
            _discard(entry)


def _discard(entry: Path) -> None:
    """Move an entry aside atomically, then delete it (readers keep their mappings)."""
    trash = entry.parent / f".trash-{entry.name}-{os.getpid()}-{id(entry)}"
    try:
        os.rename(entry, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def load_cached(key: str, path: Path) -> Report | None:
    """Return the cached report for ``key``, or None when there is no usable entry."""
    entry = _entry(key)
    if not (entry / "meta.json").is_file():
        return None
    try:
        return _load(entry, path)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        log.warning("discarding a damaged cache entry for %s (%s)", path, exc)
        _discard(entry)
        return None


def _load(entry: Path, path: Path) -> Report:
    meta = json.loads((entry / "meta.json").read_text())
    if meta.get("format") != FORMAT_VERSION:
        raise ValueError("cache format mismatch")
    tables = {}
    for kind in EVENT_TABLES:
        columns = _mapped_columns(entry, kind, meta["rows"][kind], meta["layout"][kind])
        keys = _read_table(entry / f"{kind}.keys.arrow").to_pandas()
        tables[kind] = EventTable(kind, columns, keys, meta["sources"][kind])
    strings = _read_table(entry / "strings.arrow").column("value").to_pylist()
    frames = {name: _read_table(entry / f"{name}.frame.arrow").to_pandas() for name in _FRAMES}
    info = dict(meta["info"])
    info["path"] = path
    return Report(
        info=ReportInfo(**info),
        strings=StringIds(np.array(strings, dtype=object)),
        tables=tables,
        enums={k: {int(i): v for i, v in m.items()} for k, m in meta["enums"].items()},
        source_columns={k: tuple(v) for k, v in meta["source_columns"].items()},
        nvtx_max_ns=int(meta["nvtx_max_ns"]),
        **frames,
    )
