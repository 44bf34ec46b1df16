"""Print summary results the way ``nsys stats`` does (column, table, csv, tsv, json, HTML), or
as Strata's own JSON (``strata-json``: each result with its columns' units, values native).

spec: nsys-sqlite.md §3.1 "Column-name tags → headers and units", "Console framing",
"Number presentation": durations and timestamps in ns (integers as is, REALs with their
digits), sizes in MB = 10^6 B and throughputs in MB/s with 3 decimals, no thousands
separators (nsys under ``LANG=C.UTF-8``; with ``en_US`` it would print ``10,000``). The column
layout: one leading space, columns two spaces apart, headers centred (extra space on the
right), numbers right-aligned, text left-aligned, text wider than 100 characters cut to 99
plus ``…``.

Text from the report (names, labels) is printed with its control and format characters
escaped (:mod:`analysis.escape`), in the column and CSV formats alike: a report must not be
able to drive the terminal it is printed on. The JSON formats escape them as JSON does.

Plain Python: a result is anything with the :class:`Printable` methods, a computed
:class:`~analysis.stats.StatsResult` (its pandas frame turned into text by
:mod:`analysis.stats.format`) or a stored :class:`~analysis.stats.plain.PlainResult`
(:mod:`analysis.answers`), which prints without NumPy or pandas being imported. Both go
through :func:`number_text`, so they print the same digits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Protocol

from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text, escape_texts
from strata.analysis.stats.formatspec import FormatSpec, as_format_spec
from strata.analysis.stats.layouts import (
    NSYS_FORMATS,
    boxed_table,
    column_table,
    hdoc_page,
    html_table,
    json_rows,
    tsv_rows,
)
from strata.analysis.stats.units import DisplayUnits, display_units

__all__ = [
    "FORMATS",
    "STRATA_JSON",
    "TIMEUNIT_WORDS",
    "Printable",
    "display_units_of",
    "file_section",
    "format_results",
    "format_table",
    "header_of",
    "html_section",
    "is_numeric_text",
    "json_value",
    "number_text",
    "parse_timeunit",
    "processing_line",
    "sections",
    "written_section",
]

#: ``strata-json``: one JSON list of every result with its columns' units, values native.
STRATA_JSON = "strata-json"
#: ``-f``: nsys's formats, then Strata's own JSON.
FORMATS = (*NSYS_FORMATS, STRATA_JSON)
_NO_DATA = "Report was successfully run, but no data was returned."


class Printable(Protocol):
    """What the formats need of a result (:class:`~analysis.stats.StatsResult` and
    :class:`~analysis.stats.plain.PlainResult` have it)."""

    name: str
    title: str
    units: Mapping[str, str | None]
    skipped: str | None

    @property
    def base_name(self) -> str: ...

    @property
    def args(self) -> tuple[str, ...]: ...

    @property
    def n_rows(self) -> int: ...

    def printed(
        self, timeunit: DisplayUnits | str | None = None, escape: bool = True
    ) -> tuple[list[str], list[list[str]], list[bool]]:
        """(headers, printed cells column by column, whether each is numeric) in
        ``timeunit`` (a ``--timeunit`` word or :class:`~analysis.stats.units.DisplayUnits`);
        text cells escaped unless ``escape`` is False."""
        ...

    def json_table(self) -> tuple[list[str], list[list[object]]]:
        """(every column name, rows of JSON-ready values)."""
        ...


#: ``--timeunit``'s words, matched by prefix as nsys 2023.4 matches them (``nsys stats
#: --help``), each with the unit it names.
TIMEUNIT_WORDS = {
    "nsec": "nsec",
    "nanoseconds": "nsec",
    "usec": "usec",
    "microseconds": "usec",
    "msec": "msec",
    "milliseconds": "msec",
    "seconds": "seconds",
}


def parse_timeunit(name: str) -> str:
    """Return the time unit ``name`` names, as nsys reads ``--timeunit``.

    A prefix of exactly one of nsys's words (:data:`TIMEUNIT_WORDS`), case and all:
    ``us``, ``micro``, ``milli``, ``nanoseconds``, ``s``. ``n`` and ``m`` are prefixes of two
    words, so nsys refuses them, and so does Strata.

    Raises
    ------
    AnalysisError
        No word or more than one word starts with ``name``.
    """
    words = [word for word in TIMEUNIT_WORDS if word.startswith(name)]
    if len(words) == 1:
        return TIMEUNIT_WORDS[words[0]]
    if len(words) > 1 and name:
        raise AnalysisError(f"unknown time unit '{name}': ambiguous, it starts {', '.join(words)}")
    lowered = [word for word in TIMEUNIT_WORDS if word.startswith(name.lower())]
    hint = f"; did you mean '{lowered[0]}'?" if len(lowered) == 1 and name else ""
    choices = ", ".join(TIMEUNIT_WORDS)
    raise AnalysisError(f"unknown time unit '{name}'{hint or f' (choose one of {choices})'}")


def header_of(column: str, unit: str | None, timeunit: DisplayUnits | str | None = None) -> str:
    """Return the printed header: ``Total Time (ns)``, ``Total (MB)``, ``Name``.

    ``timeunit``: a ``--timeunit`` word (None: nsys's defaults) or the
    :class:`~analysis.stats.units.DisplayUnits` of a format's arguments.
    """
    label = display_units(timeunit).label(unit)
    return f"{column} ({label})" if label else column


def number_text(value: object, unit: str | None, timeunit: DisplayUnits | str | None = None) -> str:
    """One cell's printed text (a Python value: None, bool, int, float or str).

    Sizes and throughputs are divided by their unit (10^6 for MB) and times multiplied by
    their unit's factor as floats, so a column converted as a whole
    (:mod:`analysis.stats.format`) gives the same digits; in the native unit (ns, B) a value
    is printed as the report script prints it.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    scale = display_units(timeunit).scale(unit)
    if scale is not None:
        divide, operand, decimals = scale
        scaled = float(value) / operand if divide else float(value) * operand
        return f"{scaled:.{decimals}f}"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def json_value(value: object) -> object:
    """One cell as JSON: missing is null, ±inf is a string (strict JSON has no number for it)."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return value if math.isfinite(value) else str(value)
    return value


def is_numeric_text(texts: Sequence[str]) -> bool:
    """Whether every non-empty text reads as a number (a column printed right-aligned)."""
    for text in texts:
        if text == "":
            continue
        try:
            float(text)
        except ValueError:
            return False
    return True


def _csv_field(text: str) -> str:
    # nsys quotes a field only when it holds a separator (a JSON NVTX label with quotes is
    # printed as is), unlike Python's csv module.
    if "," in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_column(texts: list[str]) -> list[str]:
    """A column's CSV fields; only texts with a separator need quoting (numbers never do)."""
    joined = "\x00".join(texts)  # one scan in C instead of a test per cell
    if "," in joined or "\n" in joined or "\r" in joined:
        return [_csv_field(t) for t in texts]
    return texts


def _format(fmt: FormatSpec | str) -> FormatSpec:
    if isinstance(fmt, str) and fmt == STRATA_JSON:
        raise AnalysisError(f"{STRATA_JSON} is printed whole, not table by table")
    return as_format_spec(fmt)


def _tsv_cells(result: Printable, units: DisplayUnits, esc: bool):
    """(headers, cells, numeric) of a tsv table: a tab in a value becomes a space (``esc``:
    the two characters ``\\t``), as nsys writes it, before the other control characters are
    escaped."""
    headers, cells, numeric = result.printed(units, escape=False)
    tab = "\\t" if esc else " "
    cells = [
        col if num else escape_texts([t.replace("\t", tab) for t in col])
        for col, num in zip(cells, numeric, strict=True)
    ]
    return headers, cells, numeric


def format_table(
    result: Printable, fmt: FormatSpec | str = "column", timeunit: DisplayUnits | str | None = None
) -> str:
    """Return one result's table (or its SKIPPED / no-data line), without the framing.

    ``timeunit``: a ``--timeunit`` word, applied after the format's own units, or the
    :class:`~analysis.stats.units.DisplayUnits` to print in.
    """
    spec = _format(fmt)
    if result.skipped:
        return f"SKIPPED: {escape_text(result.skipped)}"
    units = display_units_of(spec, timeunit)
    if spec.name == "tsv":
        headers, cells, numeric = _tsv_cells(result, units, spec.esc)
    else:
        # nsys's json escapes names itself (JSON escapes); every other format as escape_text.
        headers, cells, numeric = result.printed(units, escape=spec.name != "json")
    if not result.n_rows or not cells:
        return {"csv": "", "tsv": "", "json": "[\n]"}.get(spec.name, _NO_DATA)
    if spec.name == "csv":
        quoted = [_csv_column(col) for col in cells]
        lines = [",".join(row) for row in zip(*quoted, strict=True)]
        if not spec.nohdr:
            lines.insert(0, ",".join(_csv_field(h) for h in headers))
        return "\n".join(lines)
    if spec.name == "tsv":
        return tsv_rows(headers, cells, header=not spec.nohdr)
    if spec.name == "json":
        return json_rows(headers, cells)
    draw = boxed_table if spec.name == "table" else column_table
    return draw(headers, cells, spec.layout())


def display_units_of(spec: FormatSpec, timeunit: DisplayUnits | str | None) -> DisplayUnits:
    """Return the units to print in: ``timeunit`` itself, or the ``--timeunit`` word
    ``timeunit`` applied after the format ``spec``'s own units."""
    if isinstance(timeunit, DisplayUnits):
        return timeunit
    return spec.display_units(timeunit)


def processing_line(report_name: str, result: Printable) -> str:
    """Return nsys's ``Processing [FILE] with [NAME.py](ARGS)...`` line of a summary or rule."""
    # nsys prints the arguments as given: ``(base:mangled)``, ``(nvtx=aten::empty:base)``.
    args = f"({result.name.partition(':')[2]})" if result.args else ""
    return f"Processing [{escape_text(report_name)}] with [{result.base_name}.py]{args}..."


def written_section(
    report_name: str,
    result: Printable,
    target: str,
    body: Callable[[], str],
    has_rows: bool,
    quiet: bool = False,
    exists: bool = False,
    trim: bool = True,
) -> tuple[str, str | None]:
    """One summary or rule written to a file, as ``nsys stats -o`` and ``nsys analyze -o``
    write it: the console line naming the file, and the file's text.

    ``exists``: the file is there and may not be replaced (no ``--force-overwrite``): nsys's
    ``SKIPPED: output file ... exists.`` line, and None to write. A SKIPPED result: an empty
    text, as nsys leaves the file. Otherwise the text is ``body()``; nsys ends the line with
    ``PROCESSED`` and a blank line, but for a table without rows (``has_rows`` False) leaves
    it open (the next section's line follows on it) and writes that table's text whole
    (``trim``: a table's text without its last newline). ``quiet`` (``-q``): no console line.
    """
    head = f"{processing_line(report_name, result)[:-3]} to [{escape_text(target)}]..."
    if exists:
        return (
            "" if quiet else f"{head} SKIPPED: output file {escape_text(target)} exists.\n\n",
            None,
        )
    if result.skipped:  # nsys leaves the file, empty
        return "" if quiet else f"{head} SKIPPED: {escape_text(result.skipped)}\n\n", ""
    text = body()
    if not has_rows:
        return "" if quiet else f"{head} ", text
    return "" if quiet else f"{head} PROCESSED\n\n", text.removesuffix("\n") if trim else text


def file_section(
    report_name: str,
    result: Printable,
    fmt: FormatSpec | str,
    timeunit: DisplayUnits | str | None,
    target: str,
    quiet: bool = False,
    exists: bool = False,
) -> tuple[str, str | None]:
    """One report written to a file, as ``nsys stats -o PREFIX`` writes it
    (:func:`written_section`; the text is the section without its ``Processing`` line).

    Returns
    -------
    tuple
        (the console line naming the file, the file's text; None when the file exists and
        stays).
    """
    if fmt == STRATA_JSON:
        body = partial(format_results, {report_name: [result]}, fmt, timeunit)
        return written_section(report_name, result, target, body, True, quiet, exists, False)
    body = partial(_section_of, result, fmt, timeunit)
    return written_section(report_name, result, target, body, bool(result.n_rows), quiet, exists)


def _section_of(
    result: Printable, fmt: FormatSpec | str, timeunit: DisplayUnits | str | None
) -> str:
    return _body(result, _format(fmt), timeunit)


def sections(
    results_by_report: Mapping[str, Sequence[Printable]],
    body: Callable[[Printable], str],
    quiet: bool = False,
) -> str:
    """Return each summary's or rule's section as nsys prints them: its ``Processing`` line,
    then its ``SKIPPED`` line or its ``body``; ``quiet`` (nsys's ``-q``): the bodies alone,
    nothing for a SKIPPED result."""
    out = []
    for report_name, results in results_by_report.items():
        for result in results:
            if quiet and result.skipped:
                continue
            head = "" if quiet else processing_line(report_name, result) + " \n"
            if result.skipped:
                out.append(f"{head}SKIPPED: {escape_text(result.skipped)}\n\n")
            else:
                out.append(head + body(result))
    return "".join(out)


def _body(result: Printable, spec: FormatSpec, timeunit: DisplayUnits | str | None) -> str:
    """A report's text after its ``Processing`` line as nsys prints it, blank line after (none
    after an empty csv); not for a SKIPPED report."""
    if spec.name in ("hdoc", "htable"):
        headers, cells, _ = result.printed(display_units_of(spec, timeunit))
        return html_section(result, spec, headers, cells, not result.n_rows or not cells)
    body = format_table(result, spec, timeunit)
    if spec.name in ("csv", "tsv"):
        return f"{body}\n\n" if body else ""
    if spec.name == "json":  # nsys leaves no blank line after an empty list
        return f"{body}\n" if body == "[\n]" else f"{body}\n\n"
    # nsys's table layout draws an empty box before the title of a table with no rows.
    box = "+--+\n" if spec.name == "table" and body == _NO_DATA else ""
    return f"{box}\n ** {result.title} ({result.base_name}):\n\n{body}\n\n"


def html_section(
    result: Printable, spec: FormatSpec, headers: list[str], cells: list[list[str]], empty: bool
) -> str:
    """Return the ``hdoc``/``htable`` text of a summary or rule's printed ``cells``."""
    table = html_table(headers, cells)
    gap = "\n" if empty else "\n\n"  # nsys leaves no blank line after an empty table
    if spec.name == "htable":
        return table + gap
    heading = f"{result.title} ({result.base_name})"
    return hdoc_page(heading, table, spec.title, spec.css) + gap


def format_results(
    results_by_report: Mapping[str, Sequence[Printable]],
    fmt: FormatSpec | str = "column",
    timeunit: DisplayUnits | str | None = None,
    quiet: bool = False,
) -> str:
    """Render results the way ``nsys stats`` prints them, one section per report and name.

    Parameters
    ----------
    results_by_report
        Report file name -> its results, in printing order.
    fmt
        One of :data:`FORMATS`: 'column' (nsys's default console table), 'csv' (``-f csv``),
        'json' (nsys's: each result a list of row objects) ... or 'strata-json' (Strata's:
        one list of ``{report, name, title, skipped, columns, units, rows}`` objects,
        values in native units). An nsys format may carry its formatter's arguments, as
        ``-f`` takes them: ``csv:nohdr``, ``column:nolimit``, ``column:dur=us``
        (:mod:`analysis.stats.formatspec`).
    timeunit
        Display unit of durations and timestamps (``--timeunit``): None (nsys's default,
        ns, unless the format says otherwise), 'nsec', 'usec', 'msec' or 'seconds' (see
        :func:`parse_timeunit`), applied after the format's own units; strata-json stays
        in ns.
    quiet
        nsys's ``-q``: no ``Processing`` lines, no SKIPPED reports (strata-json: no change).

    Raises
    ------
    AnalysisError
        Not a format, or a malformed formatter argument.
    """
    if fmt == STRATA_JSON:
        out = []
        for report_name, results in results_by_report.items():
            for res in results:
                columns, rows = res.json_table()
                out.append({
                    "report": report_name, "name": res.name, "title": res.title,
                    "skipped": res.skipped, "columns": columns,
                    "units": {c: res.units.get(c) for c in columns}, "rows": rows,
                })  # fmt: skip
        return json.dumps(out, indent=1) + "\n"
    spec = _format(fmt)
    units = display_units_of(spec, timeunit)
    return sections(results_by_report, lambda result: _body(result, spec, units), quiet)
