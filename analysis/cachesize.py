"""The cache folder's size cap: least-recently-used entries are evicted once it is passed.

The cap covers the four kinds of entry under :func:`analysis.cachedir.cache_root`: columnar
entries (``reports/<key>/``), ``.nsys-rep`` exports (``exports/*.sqlite``), checkpointed
copies of reports left in WAL mode (``wal-checkpointed/*.sqlite``) and stored summary
answers (``answers/<key>/``). An entry is evicted whole.

The cap is ``$STRATA_CACHE_MAX_BYTES`` (bytes, or with a binary suffix: ``500M``, ``20G``,
``1.5T``; ``off`` for none), else :data:`DEFAULT_MAX_BYTES` (20 GiB) or a quarter of the
disk holding the cache, whichever is smaller: one 10 M-kernel report takes ~0.8 GB as a
columnar entry, so 20 GiB keeps a working set of a few dozen big reports.

Last use is recorded by Strata, not read from the file system's access time (``noatime``
and ``relatime`` mounts make that worthless): each use of an entry sets the time of a small
stamp file, ``.used/<area>.<name>``; an entry without a stamp counts as used when it was
written. Never evicted: what this process reads or writes now (:func:`mark_used`), and what
any process used within the last minute (another Strata may be reading it). Eviction runs
after an entry is written (:func:`enforce`) and logs one warning naming what went and why.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from strata.analysis.lazylog import get_logger

__all__ = [
    "AREAS",
    "DEFAULT_MAX_BYTES",
    "ENV_VAR",
    "enforce",
    "evict",
    "entry_usage",
    "mark_used",
    "max_bytes",
    "release",
    "written",
]

log = get_logger(__name__)

ENV_VAR = "STRATA_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 20 << 30
#: The cache folders whose entries count against the cap (``demo`` is not one: the GUI's
#: small demo reports are rebuilt by it, not cached).
AREAS = ("reports", "exports", "wal-checkpointed", "answers")
#: An entry used this recently may be in use by another process: it is not evicted.
_RECENT_S = 60.0
_STAMPS = ".used"
_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$"  # compiled when a size is read

#: Entries this process reads or writes now: never evicted by it.
_IN_USE: set[Path] = set()


def _disk_total(path: Path) -> int:
    """``shutil.disk_usage(path).total``, on POSIX as shutil computes it, without importing
    shutil (its archive modules: ~2 % of a small report's first ``stats``)."""
    if hasattr(os, "statvfs"):
        st = os.statvfs(path)
        return st.f_blocks * st.f_frsize
    import shutil

    return shutil.disk_usage(path).total


def max_bytes(root: Path) -> int | None:
    """Return the cap in bytes for the cache at ``root``; None when it is switched off."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if raw.lower() in ("off", "none", "unlimited"):
        return None
    if raw:
        match = re.match(_SIZE, raw, re.IGNORECASE)
        if match:
            return int(float(match.group(1)) * _SUFFIXES[match.group(2).lower()])
        log.warning("%s=%r is not a size (e.g. 20G or off); using the default", ENV_VAR, raw)
    try:
        disk = _disk_total(_existing(root))
    except OSError:
        return DEFAULT_MAX_BYTES
    return min(DEFAULT_MAX_BYTES, disk // 4)


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def _stamp(entry: Path) -> Path:
    return entry.parent.parent / _STAMPS / f"{entry.parent.name}.{entry.name}"


def mark_used(entry: Path) -> None:
    """Record that ``entry`` is used now; this process will not evict it (see :func:`release`).

    Best effort: a read-only cache folder records nothing.
    """
    _IN_USE.add(entry)
    stamp = _stamp(entry)
    now = time.time_ns()
    try:
        os.utime(stamp, ns=(now, now))
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
    except OSError:
        pass


def written(entry: Path) -> None:
    """Record that ``entry`` was just written (it is in use), then keep the cache in its cap."""
    mark_used(entry)
    enforce(entry.parent.parent)


def release(entry: Path) -> None:
    """Let this process evict ``entry`` again (tests; a GUI that closed its report)."""
    _IN_USE.discard(entry)


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (links are not followed)."""
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
        total = 0
        for folder, _dirs, files in os.walk(path):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total
    except OSError:
        return 0


def _last_use(entry: Path) -> float:
    """When ``entry`` was last used: its stamp's time, else when it was written."""
    times = []
    for path in (_stamp(entry), entry):
        with contextlib.suppress(OSError):
            times.append(path.lstat().st_mtime)
    return max(times, default=0.0)


def entry_usage(root: Path) -> list[tuple[Path, int, float]]:
    """Return every entry of the cache at ``root`` as ``(path, bytes, last use)``.

    Folders being written or thrown away (``.tmp-*``, ``.trash-*``) are not entries.
    """
    entries = []
    for area in AREAS:
        try:
            names = sorted(os.listdir(root / area))
        except OSError:
            continue
        for name in names:
            if not name.startswith("."):
                entry = root / area / name
                entries.append((entry, _size(entry), _last_use(entry)))
    return entries


def enforce(root: Path) -> list[Path]:
    """Evict least-recently-used entries until the cache at ``root`` is within its cap.

    Returns the evicted entries (logged in one warning). Entries in use by this process
    or used by any within the last minute stay, even when the cache remains over its cap.
    """
    cap = max_bytes(root)
    if cap is None:
        return []
    entries = entry_usage(root)
    _drop_orphan_stamps(root, {e[0] for e in entries})
    total = sum(size for _entry, size, _used in entries)
    if total <= cap:
        return []
    recent = time.time() - _RECENT_S
    evicted: list[Path] = []
    freed = 0
    for entry, size, used in sorted(entries, key=lambda e: e[2]):
        if total - freed <= cap:
            break
        if entry in _IN_USE or used > recent:
            continue
        if evict(entry):
            evicted.append(entry)
            freed += size
    if evicted:
        names = ", ".join(f"{e.parent.name}/{e.name}" for e in evicted[:5])
        more = f" and {len(evicted) - 5} more" if len(evicted) > 5 else ""
        log.warning(
            "cache %s over its %s cap (%s %s): evicted %d least recently used (%s): %s%s",
            root, _human(cap), ENV_VAR, "sets it" if ENV_VAR in os.environ else "changes it",
            len(evicted), _human(freed), names, more,
        )  # fmt: skip
    return evicted


def _drop_orphan_stamps(root: Path, entries: set[Path]) -> None:
    """Remove the stamps of entries that are gone (replaced, pruned or deleted by hand)."""
    try:
        stamps = os.listdir(root / _STAMPS)
    except OSError:
        return
    for name in stamps:
        area, _, entry = name.partition(".")
        if root / area / entry not in entries:
            with contextlib.suppress(OSError):
                os.unlink(root / _STAMPS / name)


def evict(entry: Path) -> bool:
    """Move ``entry`` aside atomically (readers keep their mappings), then delete it.

    Returns whether it was there to remove.
    """
    aside = entry.parent / f".trash-{entry.name}-{os.getpid()}-evicted"
    try:
        os.rename(entry, aside)
    except OSError:
        return False  # gone already (another process evicted or replaced it)
    if aside.is_dir() and not aside.is_symlink():
        import shutil

        shutil.rmtree(aside, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            aside.unlink()
    with contextlib.suppress(OSError):
        _stamp(entry).unlink()
    return True


def _human(n: int) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} B"
