"""Make text from a report safe to print: control and format characters become escapes.

A kernel, NVTX range, thread or file name comes from whoever wrote the report. Printed as is,
``\\x1b]...`` sequences can retitle or drive the user's terminal, ``\\r`` can overwrite a line,
and U+202E (right-to-left override) can make one name read as another. Every
human-readable printer passes names through :func:`escape_text`, which writes C0 and C1
control characters, DEL, line/paragraph separators and the Unicode format characters
(category Cf: bidi overrides and isolates, zero-width characters) as ``\\xHH`` /
``\\uHHHH``, and writes the bytes of a file name that is not valid UTF-8 (which Python holds as
lone surrogates, and a UTF-8 terminal cannot print at all) as the bytes they were, ``\\xHH``.
Everything else, backslashes included, is kept, so ordinary names print exactly as ``nsys``
prints them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["escape_frame", "escape_text", "escape_texts"]

#: Categories escaped: control, format, surrogate, line and paragraph separator.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: Anything but printable ASCII: the only cells that need a closer look.
_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")


def _escape_char(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        # A byte of a file name that is not UTF-8 (surrogateescape): show the byte itself.
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape_text(text: str) -> str:
    """Return ``text`` with every control or format character written as an escape.

    Parameters
    ----------
    text
        Any text: a name from a report, a path, an error message.

    Returns
    -------
    str
        ``text`` itself when it holds nothing unsafe (the common case), else a copy in
        which each unsafe character is ``\\xHH`` (up to U+00FF), ``\\uHHHH`` or
        ``\\UHHHHHHHH``.
    """
    if not _NOT_PLAIN.search(text):
        return text
    # isprintable() is False for every unsafe category (and for a few harmless ones, such
    # as non-breaking spaces, which the per-character test below keeps).
    if text.isprintable():
        return text
    return "".join(
        _escape_char(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES else c for c in text
    )


def escape_texts(texts: Sequence[str]) -> list[str]:
    """Return :func:`escape_text` of each text; one scan in C when all are plain ASCII.

    A 1 M-row table column is checked with one regular-expression search over the joined
    texts instead of one Python call per cell.
    """
    texts = list(texts)
    if not _NOT_PLAIN.search("".join(texts)):
        return texts
    return [escape_text(t) for t in texts]


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with its text cells (and column names) escaped, for CSV written out.

    Numbers and missing values are kept; a frame with nothing to escape is returned as is.
    """
    import pandas as pd  # here: error messages escape too, and must not import pandas

    out = None
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if values.dtype != object and not pd.api.types.is_string_dtype(values.dtype):
            continue
        cells = values.tolist()
        texts = [c for c in cells if isinstance(c, str)]
        if not _NOT_PLAIN.search("".join(texts)):
            continue
        if out is None:
            out = frame.copy()
        escaped = [escape_text(c) if isinstance(c, str) else c for c in cells]
        out.isetitem(position, pd.Series(escaped, index=frame.index, dtype=values.dtype))
    names = [escape_text(str(c)) for c in frame.columns]
    if names != [str(c) for c in frame.columns]:
        out = (frame if out is None else out).copy()
        out.columns = names
    return frame if out is None else out
