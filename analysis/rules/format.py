"""Print :class:`~analysis.rules.RuleResult` sections the way ``nsys analyze`` 2023.4 does.

Formats: column (the console default: title, advice wrapped at 80 columns, the table, the
row-limit line), table (the same with a boxed table), csv, tsv, json, hdoc and htable (the
bare rows). Cells are printed as ``nsys stats`` prints them (:mod:`analysis.stats.format`):
durations in ns (or ``--timeunit``), sizes in MB with 3 decimals, report text escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.errors import AnalysisError
from analysis.escape import escape_text, escape_texts
from analysis.stats.format import column_strings, header_of

__all__ = ["RULE_FORMATS", "format_rule_results", "rule_cells"]

RULE_FORMATS = ("column", "table", "csv", "tsv", "json", "hdoc", "htable")
_WIDTH = 80
_HDOC_HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n  <meta charset="UTF-8">\n'
    "  <title>Nsight Systems Stats Output</title>\n</head>\n<body>\n"
)


def rule_cells(result, timeunit: str = "nsec") -> tuple[list[str], list[list[str]], list[bool]]:
    """Return (headers, printed cells column by column, whether each column is numeric)."""
    visible = [c for c in result.frame.columns if not str(c).startswith("_")]
    frame = result.frame[visible]
    headers = [header_of(c, result.units.get(c), timeunit) for c in visible]
    cells = column_strings(frame, result.units, timeunit)
    numeric = [pd.api.types.is_numeric_dtype(frame[c].dtype) for c in visible]
    cells = [col if num else escape_texts(col) for col, num in zip(cells, numeric, strict=True)]
    return headers, cells, numeric


def _wrap(message: str) -> str:
    """nsys's message: each line wrapped at 80 columns, continuation lines not indented.

    A last piece of up to 80 characters stays whole; a longer rest is cut at its last
    space before column 80 (so wrapped lines have at most 79), as nsys 2023.4 prints them.
    """
    lines = []
    for rest in message.split("\n"):
        while len(rest) > _WIDTH:
            cut = rest.rfind(" ", 0, _WIDTH)
            if cut <= 0:
                break
            lines.append(rest[:cut])
            rest = rest[cut + 1 :]
        lines.append(rest)
    return "\n".join(lines)


def _centred(text: str, width: int) -> str:
    pad = width - len(text)
    return " " * (pad // 2) + text + " " * (pad - pad // 2)


def _padded(headers, cells, numeric) -> tuple[list[int], list[list[str]]]:
    widths = [max([len(h)] + [len(t) for t in col]) for h, col in zip(headers, cells, strict=True)]
    padded = [
        [t.rjust(w) if num else t.ljust(w) for t in col]
        for col, w, num in zip(cells, widths, numeric, strict=True)
    ]
    return widths, padded


def _column_table(headers, cells, numeric) -> str:
    widths, padded = _padded(headers, cells, numeric)
    head = " " + "  ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True))
    rule = " " + "  ".join("-" * w for w in widths)
    return "\n".join([head, rule, *(" " + "  ".join(row) for row in zip(*padded, strict=True))])


def _boxed_table(headers, cells, numeric) -> str:
    widths, padded = _padded(headers, cells, numeric)
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    head = "| " + " | ".join(_centred(h, w) for h, w in zip(headers, widths, strict=True)) + " |"
    body = ["| " + " | ".join(row) + " |" for row in zip(*padded, strict=True)]
    return "\n".join([rule, head, rule, *body, rule])


def _csv_field(text: str) -> str:
    if "," in text or "\n" in text or "\r" in text or '"' in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _json_table(headers, cells, numeric) -> str:
    rows = []
    for row in zip(*cells, strict=True):
        fields = []
        for header, text, num in zip(headers, row, numeric, strict=True):
            value = text if num and text != "" else json.dumps(text, ensure_ascii=False)
            fields.append(f"    {json.dumps(header)}: {value}")
        rows.append("  {\n" + ",\n".join(fields) + "\n  }")
    return "[\n" + ",\n".join(rows) + "\n]"


def _html_table(headers, cells) -> str:
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


def _framed(result, fmt: str, cells_of) -> str:
    """The column/table sections: title, advice or no-result message, table, limit line."""
    title = f"\n ** {result.title} ({result.base_name}):\n\n"
    if result.frame.empty:
        box = "+--+\n" if fmt == "table" else ""
        return f"{box}{title}{_wrap(result.noresult)}\n\n"
    headers, cells, numeric = cells_of()
    draw = _boxed_table if fmt == "table" else _column_table
    text = f"{title}{_wrap(result.advice)}\n\n{draw(headers, cells, numeric)}\n\n"
    limit = result.limit_message()
    return f"{text}{limit}\n\n\n" if limit else text


def _bare(result, fmt: str, cells_of) -> str:
    """The csv/tsv/json/hdoc/htable sections: the rows alone."""
    headers, cells, numeric = cells_of()
    empty = result.frame.empty
    if fmt in ("csv", "tsv"):
        if empty:
            return ""
        sep, field = (",", _csv_field) if fmt == "csv" else ("\t", lambda t: t)
        lines = [sep.join(map(field, headers))]
        lines += [sep.join(map(field, row)) for row in zip(*cells, strict=True)]
        return "\n".join(lines) + "\n\n"
    if fmt == "json":
        return "[\n]\n" if empty else _json_table(headers, cells, numeric) + "\n\n"
    table = _html_table(headers, cells)
    gap = "\n" if empty else "\n\n"  # nsys leaves no blank line after an empty table
    if fmt == "htable":
        return table + gap
    heading = html.escape(f"{result.title} ({result.base_name})")
    return f"{_HDOC_HEAD}<h1>{heading}</h1>\n{table}\n</body>\n</html>{gap}"


def _section(report_name: str, result, fmt: str, timeunit: str) -> str:
    args = f"({':'.join(result.args)})" if result.args else ""
    head = f"Processing [{escape_text(report_name)}] with [{result.base_name}.py]{args}... \n"
    if result.skipped:
        return f"{head}SKIPPED: {escape_text(result.skipped)}\n\n"

    def cells_of():
        return rule_cells(result, timeunit)

    if fmt in ("column", "table"):
        return head + _framed(result, fmt, cells_of)
    return head + _bare(result, fmt, cells_of)


def format_rule_results(
    results_by_report: Mapping[str, Sequence], fmt: str = "column", timeunit: str = "nsec"
) -> str:
    """Render rule results as ``nsys analyze`` prints them, a section per report and rule.

    Parameters
    ----------
    results_by_report
        Report file name -> its :class:`RuleResult` list, in printing order.
    fmt
        One of :data:`RULE_FORMATS`.
    timeunit
        Unit of durations and timestamps (see :func:`analysis.stats.format.parse_timeunit`).
    """
    if fmt not in RULE_FORMATS:
        raise AnalysisError(f"unknown format '{fmt}'; choose one of {', '.join(RULE_FORMATS)}")
    return "".join(
        _section(name, result, fmt, timeunit)
        for name, results in results_by_report.items()
        for result in results
    )
