"""Print :class:`~analysis.rules.RuleResult` sections the way ``nsys analyze`` 2023.4 does.

Formats: column (the console default: title, advice wrapped at 80 columns, the table, the
row-limit line), table (the same with a boxed table), csv, tsv, json, hdoc and htable (the
bare rows). Cells are printed as ``nsys stats`` prints them (:mod:`analysis.stats.text`):
durations in ns (or ``--timeunit``), sizes in MB with 3 decimals, report text escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from strata.analysis.escape import escape_texts
from strata.analysis.stats.format import column_strings
from strata.analysis.stats.formatspec import FormatSpec, as_format_spec
from strata.analysis.stats.layouts import (
    NSYS_FORMATS,
    boxed_table,
    column_table,
    json_rows,
    tsv_rows,
)
from strata.analysis.stats.text import (
    display_units_of,
    header_of,
    html_section,
    sections,
    written_section,
)
from strata.analysis.stats.units import DisplayUnits

__all__ = ["RULE_FORMATS", "format_rule_results", "rule_cells", "rule_file_section"]

RULE_FORMATS = NSYS_FORMATS
_WIDTH = 80


def rule_cells(
    result, timeunit: DisplayUnits | str | None = None
) -> tuple[list[str], list[list[str]], list[bool]]:
    """Return (headers, printed cells column by column, whether each column is numeric).

    ``timeunit``: a ``--timeunit`` word or the :class:`~analysis.stats.units.DisplayUnits`
    of a format's arguments.
    """
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


def _csv_field(text: str) -> str:
    if "," in text or "\n" in text or "\r" in text or '"' in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _framed(result, spec: FormatSpec, cells_of) -> str:
    """The column/table sections: title, advice or no-result message, table, limit line."""
    title = f"\n ** {result.title} ({result.base_name}):\n\n"
    if result.frame.empty:
        box = "+--+\n" if spec.name == "table" else ""
        return f"{box}{title}{_wrap(result.noresult)}\n\n"
    headers, cells, _ = cells_of()
    draw = boxed_table if spec.name == "table" else column_table
    text = f"{title}{_wrap(result.advice)}\n\n{draw(headers, cells, spec.layout())}\n\n"
    limit = result.limit_message()
    return f"{text}{limit}\n\n\n" if limit else text


def _bare(result, spec: FormatSpec, cells_of) -> str:
    """The csv/tsv/json/hdoc/htable sections: the rows alone."""
    headers, cells, _ = cells_of()
    empty = result.frame.empty
    fmt = spec.name
    if fmt == "csv":
        if empty:
            return ""
        lines = [] if spec.nohdr else [",".join(map(_csv_field, headers))]
        lines += [",".join(map(_csv_field, row)) for row in zip(*cells, strict=True)]
        return "\n".join(lines) + "\n\n"
    if fmt == "tsv":
        return "" if empty else tsv_rows(headers, cells, header=not spec.nohdr) + "\n\n"
    if fmt == "json":
        return "[\n]\n" if empty else json_rows(headers, cells) + "\n\n"
    return html_section(result, spec, headers, cells, empty)


def _body(result, spec: FormatSpec, units: DisplayUnits) -> str:
    """A rule's text after its ``Processing`` line (not for a SKIPPED rule)."""

    def cells_of():
        return rule_cells(result, units)

    if spec.name in ("column", "table"):
        return _framed(result, spec, cells_of)
    return _bare(result, spec, cells_of)


def rule_file_section(
    report_name: str,
    result,
    fmt: FormatSpec | str,
    timeunit: DisplayUnits | str | None,
    target: str,
    quiet: bool = False,
    exists: bool = False,
) -> tuple[str, str | None]:
    """One rule written to a file, as ``nsys analyze -o PREFIX`` writes it.

    Returns
    -------
    tuple
        (the console line naming the file, the file's text: empty for a SKIPPED rule, as
        nsys leaves it; None for a file that ``exists`` and may not be replaced). As nsys, the
        line ends with ``PROCESSED`` and a blank line, but stays open (the next rule's line
        follows on it) for a rule that found nothing, whose file holds its text whole;
        ``quiet`` (``-q``): no console line.
    """
    spec = as_format_spec(fmt)

    def body() -> str:
        return _body(result, spec, display_units_of(spec, timeunit))

    has_rows = not result.frame.empty
    return written_section(report_name, result, target, body, has_rows, quiet, exists)


def format_rule_results(
    results_by_report: Mapping[str, Sequence],
    fmt: FormatSpec | str = "column",
    timeunit: DisplayUnits | str | None = None,
    quiet: bool = False,
) -> str:
    """Render rule results as ``nsys analyze`` prints them, a section per report and rule.

    Parameters
    ----------
    results_by_report
        Report file name -> its :class:`RuleResult` list, in printing order.
    fmt
        One of :data:`RULE_FORMATS`, with its formatter's arguments if any (``csv:nohdr``,
        ``column:dur=us``: :mod:`analysis.stats.formatspec`).
    timeunit
        Unit of durations and timestamps (see :func:`analysis.stats.text.parse_timeunit`),
        after the format's own units; None: nsys's default (ns).
    quiet
        nsys's ``-q``: the results alone, without ``Processing`` lines and SKIPPED rules.

    Raises
    ------
    AnalysisError
        Not a format of nsys, or a malformed formatter argument.
    """
    spec = as_format_spec(fmt)
    units = display_units_of(spec, timeunit)
    return sections(results_by_report, lambda result: _body(result, spec, units), quiet)
