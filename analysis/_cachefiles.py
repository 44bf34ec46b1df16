"""Cache files that are checked before they are parsed: a checksum per file, in meta.json.

The columnar cache (:mod:`analysis.cache`, complete and partial entries alike) records, for
every file of an entry, its size and a checksum in the entry's ``meta.json``, and
``meta.json`` carries a checksum of itself. A reader compares size and checksum *before* a
byte reaches Arrow or NumPy: a damaged string table made Arrow
segfault, and a flipped bit in a column was read as another number. Any mismatch raises
:class:`DamagedEntryError`; the caller discards the entry and reads the report instead.

The checksum is a position-weighted sum of 64-bit words (Fletcher-like, modulo 2^64) computed
with NumPy in 1 MiB blocks (in plain Python below 64 KiB), with the size: a single bit flip
and a truncation always change it; a zeroed, replaced or reordered range is missed only when
two 64-bit sums cancel at once (a plain sum alone misses a zeroed -1 and 1 of one int64
column, whose words add up to 2^64).
Measured on a 400 MB file in a fresh process on the 2-core reference machine (page faults
of the mapping included): 70-90 ms, against 160 ms for ``zlib.crc32`` over 8 MiB blocks and
180 ms for SHA-1; ``xxhash`` is not installed. On the 775 MB entry of a 10 M-kernel report,
a cached ``open_report`` takes 106 ms in-process (21 ms unchecked), whole process 0.41 s
(0.32 s); reading the report instead takes ~9 s.
"""

from __future__ import annotations

import errno
import json
import mmap
import operator
import os
import stat
import struct
from pathlib import Path

try:
    # CPython's own SHA-1: hashlib loads its OpenSSL binding first (~2 ms, a 30th of a
    # small report's `stats`, benchmarks/bench_startup.py); the digests are the same.
    from _sha1 import sha1
except ImportError:  # an interpreter built without it
    from hashlib import sha1

__all__ = [
    "DamagedEntryError",
    "content_fingerprint",
    "file_fingerprint",
    "digest",
    "file_record",
    "is_unavailable",
    "map_file",
    "map_verified",
    "read_meta",
    "read_verified",
    "sha1",
    "write_meta",
]

#: Words per block: 1 MiB blocks stay in the L2 cache between the sum and the weighted sum.
_BLOCK_WORDS = 1 << 17
_MASK = (1 << 64) - 1
#: Below this many bytes the sums are taken in plain Python (no NumPy import: a stored
#: answer or a meta record is checked in a command that never needs NumPy).
_SMALL = 1 << 16
#: Words per chunk released from the page tables after summing (64 MiB, page-aligned).
_RELEASE_WORDS = 1 << 23

#: OSError numbers that say "not now" (memory, descriptors, permissions), not "damaged".
_UNAVAILABLE_ERRNOS = {errno.ENOMEM, errno.EMFILE, errno.ENFILE, errno.EACCES, errno.EPERM}


class DamagedEntryError(ValueError):
    """A cache file does not hold what the entry's ``meta.json`` recorded for it."""


def is_unavailable(exc: BaseException) -> bool:
    """Return whether ``exc`` says the entry cannot be used now, though it is not damaged.

    Lack of memory or address space (``MemoryError``, ``ENOMEM`` from ``mmap``), of file
    descriptors, or of permission: such an entry is kept, not thrown away.
    """
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, OSError) and exc.errno in _UNAVAILABLE_ERRNOS


def digest(data: object) -> str:
    """Return the checksum of a bytes-like object, with its size: ``"<size>-<32 hex>"``.

    A memory map is read in 64 MiB chunks, each dropped from this process's page tables
    once summed (``MADV_DONTNEED``; the page cache keeps it): checking a 775 MB entry would
    otherwise leave it all resident (+781 MiB measured after a cached open of 20 M events,
    against +48 MiB unchecked). Arrow faults back in only the columns that are used.
    """
    view = memoryview(data).cast("B")
    if len(view) < _SMALL:
        return _small_digest(view)
    return _large_digest(data, view)


def _small_digest(view: memoryview) -> str:
    """:func:`digest` in plain Python: the same sums (of little-endian 64-bit words)."""
    n_words = len(view) // 8
    words = struct.unpack(f"<{n_words}Q", view[: n_words * 8])
    total = sum(words)
    weighted = sum(map(operator.mul, words, range(1, n_words + 1)))
    if len(view) % 8:
        last = int.from_bytes(view[n_words * 8 :], "little")
        total += last
        weighted += last * (n_words + 1)
    return f"{len(view)}-{total & _MASK:016x}{weighted & _MASK:016x}"


def _large_digest(data: object, view: memoryview) -> str:
    import numpy as np

    raw = np.frombuffer(view, dtype=np.uint8)
    n_words = len(raw) // 8
    words = raw[: n_words * 8].view("<u8")
    weights = np.arange(1, _BLOCK_WORDS + 1, dtype=np.uint64)
    release = getattr(data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
    total = weighted = 0
    for lo in range(0, n_words, _BLOCK_WORDS):
        block = words[lo : lo + _BLOCK_WORDS]
        block_sum = int(block.sum(dtype=np.uint64))
        total += block_sum
        # sum of word * (its index + 1): the dot product wraps modulo 2^64 like the sum.
        weighted += int(np.dot(block, weights[: len(block)])) + lo * block_sum
        end = lo + len(block)
        if release is not None and (end % _RELEASE_WORDS == 0 or end == n_words):
            start = (end - 1) // _RELEASE_WORDS * _RELEASE_WORDS
            release(mmap.MADV_DONTNEED, start * 8, (end - start) * 8)
    if len(raw) % 8:
        last = int.from_bytes(raw[n_words * 8 :].tobytes(), "little")
        total += last
        weighted += last * (n_words + 1)
    return f"{len(raw)}-{total & _MASK:016x}{weighted & _MASK:016x}"


_SQLITE_MAGIC = b"SQLite format 3\x00"
_SAMPLES = 8


def content_fingerprint(fh, size: int) -> str:  # noqa: ANN001 - a binary file object
    """Return a SHA-1 of a few pages of a report: cheap, for any size (~40 KB read).

    The first page (SQLite's header, whose change counter every committed write through
    SQLite bumps), the last one and seven spread between them, at the file's page size.
    With size and mtime it tells a report changed in place with its mtime put back.
    """
    fh.seek(0)
    head = fh.read(100)
    page = 4096
    if head.startswith(_SQLITE_MAGIC) and len(head) >= 18:
        page = int.from_bytes(head[16:18], "big")
        page = 65536 if page == 1 else page if 512 <= page <= 65536 else 4096
    last = max(size - 1, 0) // page
    pages = {0, last} | {size * k // _SAMPLES // page for k in range(1, _SAMPLES)}
    sha = sha1()
    for index in sorted(pages):
        fh.seek(index * page)
        sha.update(fh.read(page))
    return sha.hexdigest()


def file_fingerprint(path: Path) -> tuple[os.stat_result, str | None]:
    """Return ``(stat, content fingerprint)`` of ``path``; the fingerprint is None unless it
    is a regular file.

    Opened without blocking and checked on the open descriptor: a FIFO (or a file swapped
    for one after a ``stat``) is never read, so it can never hang the caller.

    Raises
    ------
    OSError
        The file cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return st, None
        return st, content_fingerprint(fh, st.st_size)


def map_file(path: Path) -> mmap.mmap | bytes:
    """Memory-map a whole file read-only (an empty file gives ``b""``)."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def file_record(path: Path) -> list[object]:
    """Return ``[size, checksum]`` of a file just written, for ``meta.json``."""
    mapped = map_file(path)
    return [len(mapped), digest(mapped)]


def _check_size(path: Path, actual: int, record: object) -> int:
    if not (isinstance(record, list) and len(record) == 2 and isinstance(record[0], int)):
        raise DamagedEntryError(f"{path.name}: no size and checksum in meta.json")
    if actual != record[0]:
        raise DamagedEntryError(f"{path.name}: {actual} bytes, meta.json says {record[0]}")
    return actual


def map_verified(path: Path, record: object) -> mmap.mmap | bytes:
    """Memory-map a cache file after checking its size and checksum against ``record``.

    Arrow reads this same mapping (through ``pyarrow.py_buffer``): the bytes it parses are
    the bytes checked, at the cost of one pass over the file and no copy.

    Raises
    ------
    DamagedEntryError
        The size or the checksum differs.
    OSError, MemoryError
        The file is missing or cannot be mapped (see :func:`is_unavailable`).
    """
    mapped = map_file(path)
    _check_size(path, len(mapped), record)
    if digest(mapped) != record[1]:  # type: ignore[index]
        raise DamagedEntryError(f"{path.name}: checksum differs from meta.json")
    return mapped


def read_verified(path: Path, record: object):  # noqa: ANN201 - a NumPy uint8 array
    """Read a cache file into memory after checking its size; return it as uint8 once verified.

    Only the file's real size is ever allocated, never a size taken from ``meta.json``.
    """
    import numpy as np

    with path.open("rb", buffering=0) as fh:
        size = _check_size(path, os.fstat(fh.fileno()).st_size, record)
        data = np.empty(size, dtype=np.uint8)
        if fh.readinto(memoryview(data)) != size:
            raise DamagedEntryError(f"{path.name}: shorter than its size")
    if digest(data) != record[1]:  # type: ignore[index]
        raise DamagedEntryError(f"{path.name}: checksum differs from meta.json")
    return data


def _meta_digest(body: dict) -> str:
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())


def write_meta(path: Path, body: dict) -> None:
    """Write ``body`` as JSON to ``path`` with a ``"checksum"`` of the rest added."""
    path.write_text(json.dumps({**body, "checksum": _meta_digest(body)}))


def read_meta(path: Path) -> dict:
    """Read a ``meta.json`` written by :func:`write_meta` and check its own checksum.

    Raises
    ------
    DamagedEntryError
        Not JSON, not an object, or its checksum differs.
    """
    try:
        meta = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise DamagedEntryError(f"{path.name}: not JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise DamagedEntryError(f"{path.name}: not a JSON object")
    checksum = meta.pop("checksum", None)
    if checksum != _meta_digest(meta):
        raise DamagedEntryError(f"{path.name}: checksum differs")
    return meta
