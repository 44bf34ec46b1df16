"""Stored summary answers: a result table computed once per unchanged report, printed again.

``main.py stats -r cuda_gpu_kern_sum`` run twice on the same report computes the same table
twice; the second time it is read from ``<cache root>/answers/<report key>/<spec>.answer``
(a few KB) without opening the report's columns. What is stored is the result table (the
:class:`~analysis.stats.StatsResult`: columns, dtypes, values, units), not printed text, so
one answer serves every output format and ``--timeunit``. It comes back as a
:class:`~analysis.stats.plain.PlainResult`, printed without importing NumPy or pandas (a
hit on a small report: 0.06 s whole process instead of 0.5 s); a table is stored only when
its stored form prints exactly what the computed one prints (checked when it is stored).

An answer is keyed by the report's identity, the summary spec as given (``:base`` and
``:mangled`` are other specs), Strata's version and the cache format (both in the key and
in the file). The identity is the resolved path, size, mtime and a content fingerprint
(:func:`analysis._cachefiles.content_fingerprint`, which the columnar cache's key holds
too): a same-size change with the mtime put back is seen whenever it goes through SQLite
(the header's change counter) or touches one of the sampled pages. A report with a
``-wal`` file beside it is not answered from here (its newest data may be in the log).

Each file holds one line of meta record (JSON: format, spec, the body's size and checksum,
and a checksum of itself) then the body (JSON). Both are checked before the body is
parsed, and the decoded table's columns and dtypes against the record; a damaged answer is
deleted and the summary computed again. An answer is written to a private name and renamed
into place, so a reader never sees half of one. Large results (traces) are not stored.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from strata.analysis import cachedir, cachesize
from strata.analysis._cachefiles import DamagedEntryError, digest, file_fingerprint, sha1
from strata.analysis.lazylog import get_logger
from strata.analysis.stats.plain import PlainColumn, PlainResult

# No tempfile (it imports shutil and random: ~5 % of a small report's first `stats`, which is
# mostly start-up, benchmarks/bench_startup.py): _private_file.

__all__ = ["Answers", "FORMAT_VERSION", "summaries"]

log = get_logger(__name__)

FORMAT_VERSION = 2
#: Results with more cells are not stored: a trace's table is as big as the report.
_MAX_CELLS = 200_000
_NUMPY_KINDS = "biuf"


def _identity(path: Path) -> dict | None:
    """The report's identity (path, size, mtime, fingerprint), or None when not answerable."""
    try:
        if os.path.lexists(f"{path}-wal"):
            return None
        st, fingerprint = file_fingerprint(path)
        if fingerprint is None:
            return None  # a FIFO or device: nothing stable to key on (and never opened)
        source = str(path.resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop in resolve()
        return None
    return {"source": source, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "fingerprint": fingerprint}  # fmt: skip


def _private_file(folder: Path) -> tuple[int, str]:
    """Create a new file in ``folder`` that only this process writes, as ``tempfile.mkstemp``
    does (created here, mode 0600, not a link followed), named ``.tmp-*`` like the cache's
    other files being written; return its descriptor and path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = os.path.join(folder, f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(folder))


def _versions() -> dict:
    from strata.analysis import __version__

    return {"strata": __version__, "cache_format": cachedir.COLUMNS_FORMAT,
            "format": FORMAT_VERSION}  # fmt: skip


def _key(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True)
    return sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _record_checksum(record: dict) -> str:
    return digest(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())


def _encode(result) -> dict | None:  # noqa: ANN001 - a StatsResult or PlainResult
    """The result as JSON-ready data; None when a column would not come back the same.

    A :class:`~analysis.stats.plain.PlainResult` (the SQL path's) is stored as it is,
    without importing NumPy or pandas.
    """
    if isinstance(result, PlainResult):
        if result.n_rows * len(result.columns) > _MAX_CELLS:
            return None
        return {"name": result.name, "title": result.title, "skipped": result.skipped,
                "units": dict(result.units),
                "columns": [[c.name, c.dtype, c.values] for c in result.columns]}  # fmt: skip
    import numpy as np

    frame = result.frame
    if frame.size > _MAX_CELLS or not frame.columns.is_unique:
        return None
    columns = []
    for name in frame.columns:
        series = frame[name]
        values = series.tolist()
        if not isinstance(name, str):
            return None
        if isinstance(series.dtype, np.dtype) and series.dtype.kind in _NUMPY_KINDS:
            columns.append([name, series.dtype.str, values])
        elif series.dtype == object and all(type(v) in _PLAIN for v in values):
            columns.append([name, "object", values])
        elif isinstance(series.dtype, np.dtype):  # datetimes, NumPy scalars in objects
            return None
        else:  # pandas' nullable dtypes ("Int64", "string"): missing is pd.NA
            values = [_plain(v) for v in values]
            if not all(type(v) in _PLAIN for v in values):
                return None
            columns.append([name, str(series.dtype), values])
    return {"name": result.name, "title": result.title, "skipped": result.skipped,
            "units": dict(result.units), "columns": columns}  # fmt: skip


_PLAIN = (str, int, float, bool, type(None))


def _plain(value: object) -> object:
    import pandas as pd

    return None if value is pd.NA else value


#: pandas' extension dtypes a stored column may have (as ``str(dtype)`` names them).
_EXTENSION_DTYPES = frozenset(
    {"str", "string", "boolean", "Float32", "Float64"}
    | {f"{sign}Int{bits}" for sign in ("", "U") for bits in (8, 16, 32, 64)}
)


def _stored_dtype(dtype: object) -> bool:
    """Whether ``dtype`` is one :func:`_encode` writes: a NumPy bool/int/float ``.str``,
    ``object``, or a pandas extension dtype of :data:`_EXTENSION_DTYPES`."""
    if not isinstance(dtype, str):
        return False
    if dtype[:1] in "<>|=":
        return len(dtype) >= 3 and dtype[1] in _NUMPY_KINDS and dtype[2:].isdigit()
    return dtype == "object" or dtype in _EXTENSION_DTYPES


def _decode(payload: object) -> PlainResult:
    """The :class:`~analysis.stats.plain.PlainResult` of :func:`_encode`'s data; raise on
    anything else. Plain Python: no NumPy or pandas import."""
    if not isinstance(payload, dict):
        raise DamagedEntryError("the answer is not a JSON object")
    columns, names = [], set()
    for name, dtype, values in payload["columns"]:
        if not isinstance(name, str) or name in names or not _stored_dtype(dtype):
            raise DamagedEntryError(f"column {name!r}: a repeated name or dtype {dtype!r}")
        if not isinstance(values, list) or not all(type(v) in _PLAIN for v in values):
            raise DamagedEntryError(f"column {name!r}: not a list of plain values")
        names.add(name)
        columns.append(PlainColumn(name, dtype, values))
    if len({len(c.values) for c in columns}) > 1:
        raise DamagedEntryError("columns of different lengths")
    units = payload["units"]
    if not isinstance(units, dict) or not all(
        isinstance(u, str) and (v is None or isinstance(v, str)) for u, v in units.items()
    ):
        raise DamagedEntryError("units are not text")
    texts = (payload["name"], payload["title"], payload["skipped"] or "")
    if not all(isinstance(t, str) for t in texts):
        raise DamagedEntryError("name, title or skipped is not text")
    return PlainResult(payload["name"], payload["title"], tuple(columns), units,
                       payload["skipped"])  # fmt: skip


#: Time units a stored table is printed in before it is stored: one unscaled, one scaled
#: (every unit scales through the same rule).
_CHECK_UNITS = ("nsec", "usec")


def _prints_the_same(plain: PlainResult, result) -> bool:  # noqa: ANN001 - a StatsResult
    """Whether the stored table prints exactly as the computed one, in every format.

    Every format is made of the printed cells (headers, texts, alignment) or of the JSON
    rows; those are compared, in an unscaled and a scaled time unit.
    """
    for unit in _CHECK_UNITS:
        if plain.printed(unit) != result.printed(unit):
            return False
    ours, theirs = plain.json_table(), result.json_table()
    return json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)


class Answers:
    """The stored answers of one report, as it is now (see :meth:`for_report`)."""

    def __init__(self, folder: Path, identity: dict) -> None:
        self.folder = folder
        self.identity = identity

    @classmethod
    def for_report(cls, path: str | Path) -> Answers | None:
        """Return the answers of the report at ``path``; None when it cannot have any."""
        identity = _identity(Path(path))
        if identity is None:
            return None
        name = f"{_key(identity['source'])[:12]}-{_key(identity, _versions())}"
        return cls(cachedir.cache_root() / "answers" / name, identity)

    def _file(self, spec: str) -> Path:
        return self.folder / f"{_key(spec)[:16]}.answer"

    def get(self, spec: str) -> tuple[str, object] | None:
        """Return ``(report name, PlainResult)`` stored for ``spec``, or None.

        A damaged answer is logged and deleted; the caller computes the summary again.
        """
        path = self._file(spec)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read the stored answer %s now (%s); computing it", path, exc)
            return None
        try:
            answer = self._parse(data, spec)
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError,
                RecursionError) as exc:  # fmt: skip
            # DamagedEntryError and JSON's errors are ValueErrors.
            log.warning("discarding a damaged stored answer for %s (%s)", spec, exc)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        cachesize.mark_used(self.folder)
        return answer

    def _parse(self, data: bytes, spec: str) -> tuple[str, object]:
        line, newline, body = data.partition(b"\n")
        if not newline:
            raise DamagedEntryError("no meta record")
        record = json.loads(line)
        if not isinstance(record, dict):
            raise DamagedEntryError("the meta record is not a JSON object")
        if record.pop("checksum", None) != _record_checksum(record):
            raise DamagedEntryError("the meta record's checksum differs")
        if record["size"] != len(body) or record["body"] != digest(body):
            raise DamagedEntryError("the table's size or checksum differs from its record")
        if (record["spec"], record["identity"], record["versions"]) != (
            spec, self.identity, _versions()
        ):  # fmt: skip
            raise DamagedEntryError("the answer of another report, summary or version")
        result = _decode(json.loads(body))
        if record["dtypes"] != _dtypes(result):
            raise DamagedEntryError("columns or dtypes differ from the record")
        if not isinstance(record["report_name"], str):
            raise DamagedEntryError("no report name")
        return record["report_name"], result

    def put(self, spec: str, report_name: str, result: object) -> None:
        """Store ``result`` as the answer for ``spec``; best effort, silent when not stored.

        Not stored: a table too big or with cells that would not come back the same type.
        """
        payload = _encode(result)
        if payload is None:
            return
        body = json.dumps(payload, separators=(",", ":")).encode()
        try:
            stored = _decode(json.loads(body))
        except DamagedEntryError as exc:  # a dtype or value this file format does not hold
            log.debug("not storing the answer for %s: %s", spec, exc)
            return
        if not _prints_the_same(stored, result):
            log.debug("not storing the answer for %s: it would print differently", spec)
            return
        record = {"format": FORMAT_VERSION, "spec": spec, "identity": self.identity,
                  "versions": _versions(), "report_name": report_name,
                  "dtypes": _dtypes(stored), "size": len(body),
                  "body": digest(body)}  # fmt: skip
        record["checksum"] = _record_checksum(record)
        data = json.dumps(record).encode() + b"\n" + body
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = _private_file(self.folder)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self._file(spec))
        except OSError as exc:
            log.warning("could not store the answer for %s: %s", spec, exc)
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return
        self._prune()
        cachesize.written(self.folder)

    def _prune(self) -> None:
        """Remove the answers of this report as it was before (another size, mtime, version)."""
        source = self.folder.name.split("-")[0]
        for other in self.folder.parent.glob(f"{source}-*"):
            if other != self.folder:
                cachesize.evict(other)


def _dtypes(result: PlainResult) -> list[list[str]]:
    return [[c.name, c.dtype] for c in result.columns]


def summaries(
    path: str | Path,
    specs: Sequence[str],
    compute: Callable[[list[str]], tuple[str, list]],
) -> tuple[str, list]:
    """Return the report name and one result per spec: stored answers, else ``compute``'s.

    ``compute(missing_specs)`` opens the report and returns ``(report name, results)``;
    it is called only for the specs without a stored answer, and its results are stored
    when the report did not change while they were computed.
    """
    answers = Answers.for_report(path)
    got: dict[str, object] = {}
    name = ""
    for spec in dict.fromkeys(specs) if answers is not None else ():
        hit = answers.get(spec)
        if hit is not None:
            name, got[spec] = hit
    missing = [spec for spec in dict.fromkeys(specs) if spec not in got]
    if missing:
        name, results = compute(missing)
        got.update(zip(missing, results, strict=True))
        if answers is not None and _identity(Path(path)) == answers.identity:
            for spec, result in zip(missing, results, strict=True):
                try:
                    answers.put(spec, name, result)
                except (ValueError, TypeError, AttributeError, OverflowError) as exc:
                    # A table this code cannot store: printed all the same, computed next time.
                    log.warning("could not store the answer for %s: %s", spec, exc)
    return name, [got[spec] for spec in specs]
