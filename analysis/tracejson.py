"""Read a Chrome-trace JSON file (plain or gzip'd) as a stream: one event at a time.

The top-level object is read value by value from a sliding window of :data:`CHUNK`
characters (stdlib ``json`` decodes each value), so memory grows with what the caller keeps
of the events, not with the JSON text. Floats keep their text, so that a caller converts
timestamps exactly (:mod:`analysis.kineto`: microseconds to integer nanoseconds). Broken or
truncated JSON or gzip is a :class:`~analysis.errors.CorruptReportError`; JSON that is no
trace (an array, an object without ``traceEvents``) a
:class:`~analysis.errors.NotAReportError`.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable
from pathlib import Path

from strata.analysis.discover import GZIP_MAGIC
from strata.analysis.errors import CorruptReportError, NotAReportError

__all__ = ["CHUNK", "MAX_VALUE", "TraceJson", "open_text"]

#: Characters read into the window at a time.
CHUNK = 1 << 20
#: One JSON value (an event, a metadata key) larger than this is refused, so that a file
#: that is not JSON after all is not read whole into the window.
MAX_VALUE = 256 << 20


class open_text:  # noqa: N801 - used as a context manager, like open()
    """Open ``path`` as UTF-8 text, through gzip when it starts with the gzip magic."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> tuple[io.TextIOWrapper, io.BufferedReader]:
        self.raw = open(self.path, "rb")  # noqa: SIM115 - closed in __exit__
        binary = gzip.GzipFile(fileobj=self.raw) if self.raw.read(2) == GZIP_MAGIC else self.raw
        self.raw.seek(0)
        self.text = io.TextIOWrapper(binary, encoding="utf-8-sig")
        return self.text, self.raw

    def __exit__(self, *exc: object) -> None:
        self.text.close()
        self.raw.close()


class TraceJson:
    """The top-level object of a JSON file, read value by value from a sliding window."""

    def __init__(self, text: io.TextIOBase, path: Path) -> None:
        self.text, self.path = text, path
        self.buf, self.pos, self.eof = "", 0, False
        # Floats keep their text (exact nanoseconds); NaN/Infinity become floats, refused
        # where a time is read.
        self.decoder = json.JSONDecoder(parse_float=str)

    def _fill(self) -> None:
        try:
            chunk = self.text.read(CHUNK)
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
            raise CorruptReportError(self.path, f"cannot be read as (gzip'd) JSON ({exc})") from exc
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        self.eof = not chunk

    def _skip(self) -> str:
        """Skip whitespace; return the next character ('' at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos : self.pos + 1]
            self._fill()

    def _value(self) -> object:
        self._skip()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self._broken(exc.msg, exc.pos >= len(self.buf)) from exc
                if len(self.buf) - self.pos > MAX_VALUE:
                    raise self._broken(f"a value larger than {MAX_VALUE >> 20} MiB") from exc
                self._fill()
                continue
            if end == len(self.buf) and not self.eof:
                self._fill()  # a number may go on in the next chunk
                continue
            self.pos = end
            return value

    def _broken(self, what: str, at_end: bool = False) -> CorruptReportError:
        if at_end or (self.eof and not self.buf[self.pos :].strip()):
            return CorruptReportError(
                self.path, "is not valid JSON: it ends early (truncated, e.g. by a crash)"
            )
        return CorruptReportError(self.path, f"is not valid JSON: {what}")

    def _expect(self, allowed: str, where: str) -> str:
        found = self._skip()
        if not found or found not in allowed:
            seen = repr(found) if found else "the end of the file"
            raise self._broken(f"expected {' or '.join(map(repr, allowed))} {where}, got {seen}")
        self.pos += 1
        return found

    def top_level(self, each: Callable[[object], None]) -> dict[str, object]:
        """Read the object: ``each(event)`` per ``traceEvents`` item; return the other keys."""
        first = self._skip()
        if first == "[":
            raise NotAReportError(
                self.path,
                "is a JSON array, not a PyTorch profiler (Kineto) trace: a JSON object "
                "with traceEvents",
            )
        if first != "{":
            raise NotAReportError(self.path, "is not JSON (no object at its start)")
        self.pos += 1
        meta: dict[str, object] = {}
        seen_events = False
        if self._skip() == "}":
            self.pos += 1
        else:
            while True:
                key = self._value()
                self._expect(":", "after a key")
                if key == "traceEvents" and self._skip() == "[":
                    seen_events = True
                    self._array(each)
                else:
                    meta[str(key)] = self._value()
                if self._expect(",}", "between keys") == "}":
                    break
        if self._skip():
            raise self._broken("text after the top-level object")
        if not seen_events:
            raise NotAReportError(
                self.path,
                "is JSON without a traceEvents array, not a PyTorch profiler (Kineto) trace",
            )
        return meta

    def _array(self, each: Callable[[object], None]) -> None:
        self.pos += 1  # the '['
        if self._skip() == "]":
            self.pos += 1
            return
        while True:
            each(self._value())
            if self._expect(",]", "between events") == "]":
                return
