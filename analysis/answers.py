"""Stored summary answers: a result table computed once per unchanged report, printed again.

``main.py stats -r cuda_gpu_kern_sum`` run twice on the same report computes the same table
twice; the second time it is read from ``<cache root>/answers/<report key>/<spec>.answer``
(a few KB) without opening the report's columns. What is stored is the result table (the
:class:`~analysis.stats.StatsResult`: columns, dtypes, values, units), not printed text, so
one answer serves every output format and ``--timeunit``.

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
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from analysis import cachesize
from analysis._cachefiles import DamagedEntryError, digest, file_fingerprint

__all__ = ["Answers", "FORMAT_VERSION", "summaries"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
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


def _versions() -> dict:
    from analysis import __version__, cache

    return {"strata": __version__, "cache_format": cache.FORMAT_VERSION, "format": FORMAT_VERSION}


def _key(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _record_checksum(record: dict) -> str:
    return digest(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())


def _encode(result) -> dict | None:  # noqa: ANN001 - a StatsResult
    """The result as JSON-ready data; None when a column would not come back the same."""
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


def _decode(payload: object):  # noqa: ANN202 - a StatsResult (pandas imported lazily)
    """Rebuild the StatsResult of :func:`_encode`; raise on anything else."""
    import numpy as np
    import pandas as pd

    from analysis.stats import StatsResult

    if not isinstance(payload, dict):
        raise DamagedEntryError("the answer is not a JSON object")
    data = {}
    for name, dtype, values in payload["columns"]:
        if not isinstance(values, list) or name in data:
            raise DamagedEntryError(f"column {name!r}: not a list of values, or repeated")
        if dtype == "object":
            data[name] = pd.Series(values, dtype=object)
        elif dtype[:1] in "<>|=":  # a NumPy dtype's .str
            if np.dtype(dtype).kind not in _NUMPY_KINDS:
                raise DamagedEntryError(f"column {name!r}: dtype {dtype}")
            data[name] = pd.Series(np.array(values, dtype=np.dtype(dtype)))
        else:
            data[name] = pd.Series(pd.array(values, dtype=dtype))
    if len({len(v) for v in data.values()}) > 1:
        raise DamagedEntryError("columns of different lengths")
    units = payload["units"]
    texts = (payload["name"], payload["title"], payload["skipped"] or "", *units)
    if not all(isinstance(t, str) for t in texts) or not isinstance(units, dict):
        raise DamagedEntryError("name, title, units or skipped is not text")
    frame = pd.DataFrame(data)
    return StatsResult(payload["name"], payload["title"], frame, units, payload["skipped"])


def _same(a, b) -> bool:  # noqa: ANN001 - two DataFrames
    """Whether two frames hold the same columns, dtypes, and cells of the same types."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for name in a.columns:
        if a[name].dtype != b[name].dtype:
            return False
        for u, v in zip(a[name].tolist(), b[name].tolist(), strict=True):
            if u is v:
                continue
            if type(u) is not type(v) or (repr(u) != repr(v) if isinstance(u, float) else u != v):
                return False
    return True


class Answers:
    """The stored answers of one report, as it is now (see :meth:`for_report`)."""

    def __init__(self, folder: Path, identity: dict) -> None:
        self.folder = folder
        self.identity = identity

    @classmethod
    def for_report(cls, path: str | Path) -> Answers | None:
        """Return the answers of the report at ``path``; None when it cannot have any."""
        from analysis import cache

        identity = _identity(Path(path))
        if identity is None:
            return None
        name = f"{_key(identity['source'])[:12]}-{_key(identity, _versions())}"
        return cls(cache.cache_root() / "answers" / name, identity)

    def _file(self, spec: str) -> Path:
        return self.folder / f"{_key(spec)[:16]}.answer"

    def get(self, spec: str) -> tuple[str, object] | None:
        """Return ``(report name, StatsResult)`` stored for ``spec``, or None.

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
        if record["dtypes"] != _dtypes(result.frame):
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
        if not _same(_decode(json.loads(body)).frame, result.frame):
            return
        record = {"format": FORMAT_VERSION, "spec": spec, "identity": self.identity,
                  "versions": _versions(), "report_name": report_name,
                  "dtypes": _dtypes(result.frame), "size": len(body),
                  "body": digest(body)}  # fmt: skip
        record["checksum"] = _record_checksum(record)
        data = json.dumps(record).encode() + b"\n" + body
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.folder)
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


def _dtypes(frame) -> list[list[str]]:  # noqa: ANN001 - a DataFrame
    return [[str(name), str(dtype)] for name, dtype in frame.dtypes.items()]


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
