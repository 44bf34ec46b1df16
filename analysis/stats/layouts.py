"""The table layouts nsys 2023.4 prints, shared by ``stats`` and ``analyze``.

Given printed cells (headers, cells column by column, whether each column is numeric):
``column`` (one leading space, columns two spaces apart, headers centred, numbers
right-aligned), ``table`` (the same inside ``+---+`` boxes), ``tsv``, nsys's ``json`` (a list
of row objects, numbers bare, see :func:`json_rows`) and the HTML ones (``htable``,
``hdoc``). Both commands print their sections with these, so their formats cannot drift
apart.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence

# html (html.entities) is imported where used: a small report's `stats` is mostly start-up
# (benchmarks/bench_startup.py).

__all__ = [
    "HDOC_HEAD",
    "NSYS_FORMATS",
    "boxed_table",
    "column_table",
    "format_extension",
    "hdoc_page",
    "html_table",
    "json_cell",
    "json_rows",
    "json_string",
    "tsv_rows",
]

#: Every format of ``nsys stats`` / ``nsys analyze`` 2023.4, in its help's order.
NSYS_FORMATS = ("column", "table", "csv", "tsv", "json", "hdoc", "htable")
#: The file extension nsys gives each format's output file (``-o PREFIX``).
_EXTENSIONS = {"column": "txt", "table": "txt", "csv": "csv", "tsv": "tsv", "json": "json",
               "hdoc": "html", "htable": "html", "strata-json": "json"}  # fmt: skip
#: A number as nsys's json formatter recognises one (it also takes ``+5`` and ``5.``).
_JSON_NUMBER = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_JSON_KEYWORDS = frozenset({"true", "false", "null"})
#: What :mod:`analysis.escape` escapes: control, format, surrogate, line/paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NOT_PLAIN = re.compile(r"[^\x00-\x7e]")
HDOC_HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="UTF-8">\n'
    "  <title>Nsight Systems Stats Output</title>\n</head>\n<body>\n"
)

Cells = Sequence[Sequence[str]]


def format_extension(fmt: str) -> str:
    """The extension (no dot) of a file nsys writes in format ``fmt``."""
    return _EXTENSIONS.get(fmt, "txt")


def _centred(text: str, width: int) -> str:
    pad = width - len(text)
    return " " * (pad // 2) + text + " " * (pad - pad // 2)


def _padded(headers: Sequence[str], cells: Cells, numeric: Sequence[bool]):
    widths = [max([len(h)] + [len(t) for t in col]) for h, col in zip(headers, cells, strict=True)]
    padded = [
        [t.rjust(w) if num else t.ljust(w) for t in col]
        for col, w, num in zip(cells, widths, numeric, strict=True)
    ]
    return widths, padded


def column_table(headers: Sequence[str], cells: Cells, numeric: Sequence[bool]) -> str:
    """nsys's ``column`` layout (no trailing newline)."""
    widths, padded = _padded(headers, cells, numeric)
    head = " " + "  ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True))
    rule = " " + "  ".join("-" * w for w in widths)
    return "\n".join([head, rule, *(" " + "  ".join(row) for row in zip(*padded, strict=True))])


def boxed_table(headers: Sequence[str], cells: Cells, numeric: Sequence[bool]) -> str:
    """nsys's ``table`` layout (no trailing newline)."""
    widths, padded = _padded(headers, cells, numeric)
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    head = "| " + " | ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True)) + " |"
    body = ["| " + " | ".join(row) + " |" for row in zip(*padded, strict=True)]
    return "\n".join([rule, head, rule, *body, rule])


def tsv_rows(headers: Sequence[str], cells: Cells) -> str:
    """Header and rows, tab-separated, as nsys prints them (nothing quoted; no newline)."""
    lines = ["\t".join(headers)] + ["\t".join(row) for row in zip(*cells, strict=True)]
    return "\n".join(lines)


def json_rows(headers: Sequence[str], cells: Cells) -> str:
    """nsys's ``json``: one object per row, no trailing newline.

    Each cell is typed by its text, as nsys's formatter types the CSV its reports print: a
    JSON number (``12``, ``-0.5``, ``1e5``, also nsys's ``+5`` and ``5.``) or keyword
    (``true``, ``false``, ``null``) is written bare, anything else as a string (``""`` when
    empty). Strings escape ``"``, ``\\`` and tabs as nsys does; other control and format
    characters, which nsys writes raw, are ``\\uXXXX`` escapes here, so the text stays
    JSON and cannot drive a terminal (the cells are the names themselves, not
    :func:`~analysis.escape.escape_text`'s).
    """
    rows = []
    for row in zip(*cells, strict=True):
        fields = [
            f"    {json_string(header)}: {json_cell(text)}"
            for header, text in zip(headers, row, strict=True)
        ]
        rows.append("  {\n" + ",\n".join(fields) + "\n  }")
    return "[\n" + ",\n".join(rows) + "\n]"


def json_cell(text: str) -> str:
    """One cell of nsys's ``json``: bare when its text is a JSON number or keyword."""
    if text in _JSON_KEYWORDS or _JSON_NUMBER.fullmatch(text):
        return text
    return json_string(text)


def json_string(text: str) -> str:
    """``text`` as a JSON string that is safe to print (see :func:`json_rows`)."""
    quoted = json.dumps(text, ensure_ascii=False)
    if not _NOT_PLAIN.search(quoted):
        return quoted
    return "".join(_json_escape(c) if _unsafe(c) else c for c in quoted)


def _unsafe(char: str) -> bool:
    return ord(char) > 0x7E and unicodedata.category(char) in _UNSAFE_CATEGORIES


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond U+FFFF
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def html_table(headers: Sequence[str], cells: Cells) -> str:
    """nsys's ``htable``: the rows as an HTML table (an empty one is a bare ``</tbody>``)."""
    import html

    if not cells or not cells[0]:
        return "<table>\n  </tbody>\n</table>"
    head = "".join(f"      <th>{html.escape(h)}</th>\n" for h in headers)
    body = "".join(
        "    <tr>\n" + "".join(f"      <td>{html.escape(t)}</td>\n" for t in row) + "    </tr>\n"
        for row in zip(*cells, strict=True)
    )
    return (
        f"<table>\n  <thead>\n    <tr>\n{head}    </tr>\n  </thead>\n  <tbody>\n{body}"
        "  </tbody>\n</table>"
    )


def hdoc_page(heading: str, table: str) -> str:
    """nsys's ``hdoc``: an HTML5 page with the heading and the table (no trailing newline)."""
    import html

    return f"{HDOC_HEAD}<h1>{html.escape(heading)}</h1>\n{table}\n</body>\n</html>"
