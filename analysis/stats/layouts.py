"""The table layouts nsys 2023.4 prints, shared by ``stats`` and ``analyze``.

Given printed cells (headers, cells column by column, whether each column is numeric):
``column`` (one leading space, columns two spaces apart, headers centred, numbers
right-aligned), ``table`` (the same inside ``+---+`` boxes), ``tsv``, nsys's ``json`` (a list
of row objects, numbers bare) and the HTML ones (``htable``, ``hdoc``). Both commands print
their sections with these, so their formats cannot drift apart.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

__all__ = [
    "HDOC_HEAD",
    "NSYS_FORMATS",
    "boxed_table",
    "column_table",
    "format_extension",
    "hdoc_page",
    "html_table",
    "json_rows",
    "tsv_rows",
]

#: Every format of ``nsys stats`` / ``nsys analyze`` 2023.4, in its help's order.
NSYS_FORMATS = ("column", "table", "csv", "tsv", "json", "hdoc", "htable")
#: The file extension nsys gives each format's output file (``-o PREFIX``).
_EXTENSIONS = {"column": "txt", "table": "txt", "csv": "csv", "tsv": "tsv", "json": "json",
               "hdoc": "html", "htable": "html"}  # fmt: skip
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


def json_rows(headers: Sequence[str], cells: Cells, numeric: Sequence[bool]) -> str:
    """nsys's ``json``: one object per row, numbers bare and empty cells ``""``."""
    rows = []
    for row in zip(*cells, strict=True):
        fields = []
        for header, text, num in zip(headers, row, numeric, strict=True):
            value = text if num and text != "" else json.dumps(text, ensure_ascii=False)
            fields.append(f"    {json.dumps(header)}: {value}")
        rows.append("  {\n" + ",\n".join(fields) + "\n  }")
    return "[\n" + ",\n".join(rows) + "\n]"


def html_table(headers: Sequence[str], cells: Cells) -> str:
    """nsys's ``htable``: the rows as an HTML table (an empty one is a bare ``</tbody>``)."""
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
    return f"{HDOC_HEAD}<h1>{html.escape(heading)}</h1>\n{table}\n</body>\n</html>"
