"""The table layouts nsys 2023.4 prints, shared by ``stats`` and ``analyze``.

Given printed cells (headers, cells column by column): ``column`` (one leading space,
columns two spaces apart, headers centred, numbers right-aligned, sized and clipped as
:class:`ColumnLayout` says), ``table`` (the same inside ``+---+`` boxes), ``tsv``, nsys's
``json`` (a list of row objects, numbers bare, see :func:`json_rows`) and the HTML ones
(``htable``, ``hdoc``). Both commands print their sections with these, so their formats cannot drift
apart.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# html (html.entities) is imported where used: a small report's `stats` is mostly start-up
# (benchmarks/bench_startup.py).

__all__ = [
    "HDOC_HEAD",
    "NSYS_FORMATS",
    "ColumnLayout",
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
_HDOC_TITLE = "Nsight Systems Stats Output"

Cells = Sequence[Sequence[str]]


@dataclass(frozen=True)
class ColumnLayout:
    """How nsys's ``column`` and ``table`` layouts size their columns.

    Attributes
    ----------
    header
        Print the header (``nohdr``: no).
    autolines
        Rows, after the header, that size an automatic column (0: all of them).
    colmax
        Widest automatic column (0: no limit).
    widths
        The i-th column's width; None (or past the end): automatic; 0: hidden.
    """

    header: bool = True
    autolines: int = 100
    colmax: int = 100
    widths: tuple[int | None, ...] = ()


def format_extension(fmt: str) -> str:
    """The extension (no dot) of a file nsys writes in format ``fmt`` (arguments and all:
    ``csv:nohdr`` is a .csv)."""
    return _EXTENSIONS.get(fmt.partition(":")[0], "txt")


def _centred(text: str, width: int) -> str:
    pad = width - len(text)
    return " " * (pad // 2) + text + " " * (pad - pad // 2)


def _clip(texts: Sequence[str], width: int) -> list[str]:
    """Texts wider than ``width`` cut to ``width - 1`` characters and ``…`` (nsys's mark)."""
    if max(map(len, texts), default=0) <= width:
        return list(texts)
    return [t if len(t) <= width else t[: width - 1] + "…" for t in texts]


#: The default layout (frozen, shared).
_DEFAULT = ColumnLayout()


def _right_aligned(sample: Sequence[str]) -> bool:
    """Whether nsys right-aligns a column: the rows that size it hold at least one value,
    and every value is a number (an empty sample is text, whatever comes after it)."""
    values = [t for t in sample if t]
    return bool(values) and all(_JSON_NUMBER.fullmatch(t) for t in values)


def _sized(headers: Sequence[str], cells: Cells, layout: ColumnLayout):
    """(headers, padded cells, widths) as nsys lays them out: each column's width given or
    found from the header and the first ``autolines`` rows (at most ``colmax``), wider text
    clipped; a column of numbers (as those rows say) right-aligned, text left-aligned;
    hidden columns dropped, one empty column at the end in their place."""
    out_headers, out_cells, out_numeric, widths = [], [], [], []
    hidden = False
    for i, (header, texts) in enumerate(zip(headers, cells, strict=True)):
        width = layout.widths[i] if i < len(layout.widths) else None
        sample = texts if layout.autolines <= 0 else texts[: layout.autolines]
        if width is None:
            width = max(len(header), max(map(len, sample), default=0))
            if layout.colmax > 0:
                width = min(width, layout.colmax)
        if width == 0:
            hidden = True
            continue
        out_headers.append(_clip([header], width)[0])
        out_cells.append(_clip(texts, width))
        out_numeric.append(_right_aligned(sample))
        widths.append(width)
    if hidden:  # nsys 2023.4 leaves one empty column wherever columns were hidden
        rows = len(cells[0]) if cells else 0
        out_headers.append("")
        out_cells.append([""] * rows)
        out_numeric.append(False)
        widths.append(0)
    return out_headers, _padded(out_cells, out_numeric, widths), widths


def _padded(cells: Cells, numeric: Sequence[bool], widths: Sequence[int]) -> list[list[str]]:
    return [
        [t.rjust(w) for t in col] if num else [t.ljust(w) for t in col]
        for col, w, num in zip(cells, widths, numeric, strict=True)
    ]


def column_table(headers: Sequence[str], cells: Cells, layout: ColumnLayout = _DEFAULT) -> str:
    """nsys's ``column`` layout (no trailing newline)."""
    headers, padded, widths = _sized(headers, cells, layout)
    lines = [" " + "  ".join(row) for row in zip(*padded, strict=True)]
    if layout.header:
        head = " " + "  ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True))
        lines[:0] = [head, " " + "  ".join("-" * w for w in widths)]
    return "\n".join(lines)


def boxed_table(headers: Sequence[str], cells: Cells, layout: ColumnLayout = _DEFAULT) -> str:
    """nsys's ``table`` layout (no trailing newline)."""
    headers, padded, widths = _sized(headers, cells, layout)
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    body = ["| " + " | ".join(row) + " |" for row in zip(*padded, strict=True)]
    if not layout.header:
        return "\n".join([rule, *body, rule])
    head = "| " + " | ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True)) + " |"
    return "\n".join([rule, head, rule, *body, rule])


def tsv_rows(headers: Sequence[str], cells: Cells, header: bool = True) -> str:
    """Header (unless not ``header``) and rows, tab-separated, as nsys prints them (nothing
    quoted; no newline)."""
    lines = ["\t".join(row) for row in zip(*cells, strict=True)]
    return "\n".join(["\t".join(headers), *lines] if header else lines)


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


def _html(text: str) -> str:
    # nsys escapes &, < and > only: a quote stays a quote (``'``, not ``&#x27;``). html is
    # imported here: a small report's `stats` is mostly start-up (bench_startup.py).
    import html

    return html.escape(text, quote=False)


def html_table(headers: Sequence[str], cells: Cells) -> str:
    """nsys's ``htable``: the rows as an HTML table (an empty one is a bare ``</tbody>``)."""
    if not cells or not cells[0]:
        return "<table>\n  </tbody>\n</table>"
    head = "".join(f"      <th>{_html(h)}</th>\n" for h in headers)
    body = "".join(
        "    <tr>\n" + "".join(f"      <td>{_html(t)}</td>\n" for t in row) + "    </tr>\n"
        for row in zip(*cells, strict=True)
    )
    return (
        f"<table>\n  <thead>\n    <tr>\n{head}    </tr>\n  </thead>\n  <tbody>\n{body}"
        "  </tbody>\n</table>"
    )


def hdoc_page(heading: str, table: str, title: str | None = None, css: str | None = None) -> str:
    """nsys's ``hdoc``: an HTML5 page with the heading and the table (no trailing newline).

    ``title`` and ``css`` (``hdoc:title=...:css=...``) go into the head as given, unescaped,
    as nsys writes them.
    """
    head = HDOC_HEAD
    if title is not None or css is not None:
        link = "" if css is None else f'  <link rel="stylesheet" href="{css}">\n'
        head = head.replace(
            f"  <title>{_HDOC_TITLE}</title>\n",
            f"  <title>{_HDOC_TITLE if title is None else title}</title>\n{link}",
        )
    return f"{head}<h1>{_html(heading)}</h1>\n{table}\n</body>\n</html>"
