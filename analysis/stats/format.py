"""Print :class:`StatsResult` tables the way ``nsys stats`` does (column, csv) or as JSON.

spec: nsys-sqlite.md §3.1 "Column-name tags → headers and units", "Console framing",
"Number presentation": durations and timestamps in ns (integers as is, REALs with their
digits), sizes in MB = 10^6 B and throughputs in MB/s with 3 decimals, no thousands
separators (nsys under ``LANG=C.UTF-8``; with ``en_US`` it would print ``10,000``). The column
layout: one leading space, columns two spaces apart, headers centred (extra space on the
right), numbers right-aligned, text left-aligned, text wider than 100 characters cut to 99
plus ``…``.

Text from the report (names, labels) is printed with its control and format characters
escaped (:mod:`analysis.escape`), in the column and CSV formats alike: a report must not be
able to drive the terminal it is printed on. JSON escapes them itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.escape import escape_text, escape_texts
from analysis.stats.layouts import boxed_table, column_table, hdoc_page, html_table, tsv_rows

__all__ = [
    "FORMATS",
    "TIME_UNITS",
    "column_strings",
    "file_section",
    "format_results",
    "format_table",
    "header_of",
    "json_value",
    "parse_timeunit",
    "printed_cells",
    "table_strings",
]

#: ``-f``: nsys's formats (its ``json`` excepted: ours lists each result with its units).
FORMATS = ("column", "table", "csv", "tsv", "json", "hdoc", "htable")
_UNIT_LABEL = {"dur": "ns", "ts": "ns", "mem": "MB", "thru": "MB/s", "ratio": "%"}
#: ``--timeunit`` name -> (header label, factor from ns, decimals), as nsys 2023.4 prints
#: them (checked with its binary: it multiplies, so 50 ns is 0.0000 ms, 3000250000 ns is
#: 3.0003 s; 1500000002.5 ns is 1500000.002 us).
TIME_UNITS = {
    "nsec": ("ns", 1.0, None),
    "usec": ("us", 1e-3, 3),
    "msec": ("ms", 1e-6, 4),
    "seconds": ("sec", 1e-9, 4),
}


def parse_timeunit(name: str) -> str:
    """Return the time unit ``name`` abbreviates (nsys's prefix match: 'us' -> 'usec')."""
    text = name.strip().lower()
    for unit in TIME_UNITS:
        if text and (unit.startswith(text) or text == TIME_UNITS[unit][0]):
            return unit
    raise AnalysisError(f"unknown time unit '{name}'; choose one of {', '.join(TIME_UNITS)}")


_COLUMN_MAX = 100
_NO_DATA = "Report was successfully run, but no data was returned."


def header_of(column: str, unit: str | None, timeunit: str = "nsec") -> str:
    """Return the printed header: ``Total Time (ns)``, ``Total (MB)``, ``Name``."""
    label = _UNIT_LABEL.get(unit or "")
    if unit in ("dur", "ts"):
        label = TIME_UNITS[timeunit][0]
    return f"{column} ({label})" if label else column


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _number_text(value: object, unit: str | None, timeunit: str = "nsec") -> str:
    if _is_missing(value):
        return ""
    if unit in ("mem", "thru"):
        return f"{float(value) / 1e6:.3f}"
    if unit in ("dur", "ts") and timeunit != "nsec":
        _, factor, decimals = TIME_UNITS[timeunit]
        return f"{float(value) * factor:.{decimals}f}"
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


def column_strings(
    frame: pd.DataFrame, units: Mapping[str, str | None], timeunit: str = "nsec"
) -> list[list[str]]:
    """Return the printed text of every cell, column by column.

    Whole columns at a time where the dtype allows (a 1 M-row cuda_gpu_trace has 21 M
    cells; one Python call per cell took most of its 24 s); cell by cell otherwise.
    """
    return [_column_texts(frame[name], units.get(name), timeunit) for name in frame.columns]


def table_strings(
    frame: pd.DataFrame, units: Mapping[str, str | None], timeunit: str = "nsec"
) -> list[list[str]]:
    """Return the printed text of every cell, row by row."""
    columns = column_strings(frame, units, timeunit)
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def _column_texts(series: pd.Series, unit: str | None, timeunit: str) -> list[str]:
    missing = series.isna().to_numpy()
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind == "integer":
        try:
            if series.dtype.kind == "i":  # NumPy ints: as they are
                ints = series.to_numpy(dtype=np.int64)
            else:  # nullable ints, or Python ints (and None) in an object column
                ints = pd.array(series, dtype="Int64").to_numpy(dtype=np.int64, na_value=0)
        except (OverflowError, TypeError, ValueError):  # beyond int64: cell by cell
            return [_number_text(v, unit, timeunit) for v in series.tolist()]
        scale = _scale(unit, timeunit)
        if scale is None:
            texts = ints.astype(str)  # NumPy's int -> text is Python's str(int)
            texts[missing] = ""
            return texts.tolist()
        return _scaled_texts(ints.astype(np.float64), missing, scale)
    if kind == "floating":
        floats = series.to_numpy(dtype=np.float64, na_value=np.nan)
        scale = _scale(unit, timeunit)
        if scale is None:
            return ["" if v != v else repr(v) for v in floats.tolist()]
        return _scaled_texts(floats, missing, scale)
    if kind == "string":
        return ["" if m else v for v, m in zip(series.tolist(), missing.tolist(), strict=True)]
    return [_number_text(v, unit, timeunit) for v in series.tolist()]


def _scale(unit: str | None, timeunit: str) -> tuple[bool, float, int] | None:
    """How a number of ``unit`` is printed: (divide?, by or times this, decimals); None: as is.

    The same operation as :func:`_number_text` (``v / 1e6`` for sizes, ``v * factor`` for
    times), so the digits are the same to the last rounding.
    """
    if unit in ("mem", "thru"):
        return True, 1e6, 3
    if unit in ("dur", "ts") and timeunit != "nsec":
        _, factor, decimals = TIME_UNITS[timeunit]
        return False, factor, decimals
    return None


def _scaled_texts(
    values: np.ndarray, missing: np.ndarray, scale: tuple[bool, float, int]
) -> list[str]:
    """Each value scaled and printed with fixed decimals; "" where missing."""
    divide, operand, decimals = scale
    scaled = (values / operand if divide else values * operand).tolist()
    spec = f".{decimals}f"
    return ["" if m else format(v, spec) for v, m in zip(scaled, missing.tolist(), strict=True)]


def _csv_field(text: str) -> str:
    # nsys quotes a field only when it holds a separator (a JSON NVTX label with quotes is
    # printed as is), unlike Python's csv module.
    if "," in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _is_numeric(texts: Sequence[str]) -> bool:
    for text in texts:
        if text == "":
            continue
        try:
            float(text)
        except ValueError:
            return False
    return True


def _clipped(cells: list[list[str]], numeric: list[bool]) -> list[list[str]]:
    """Text wider than 100 characters cut to 99 plus an ellipsis (column and table)."""
    return [
        col
        if numeric[i]
        else [t if len(t) <= _COLUMN_MAX else t[: _COLUMN_MAX - 1] + "…" for t in col]
        for i, col in enumerate(cells)
    ]


def _numeric_column(series: pd.Series, texts: list[str]) -> bool:
    """Whether a column prints as numbers (right-aligned): by dtype, else by its texts."""
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return True
    return _is_numeric(texts)


def printed_cells(result, timeunit: str = "nsec") -> tuple[list[str], list[list[str]], list[bool]]:
    """Return (headers, escaped printed cells column by column, whether each is numeric)."""
    visible = [c for c in result.frame.columns if not str(c).startswith("_")]
    frame = result.frame[visible]
    headers = [header_of(c, result.units.get(c), timeunit) for c in visible]
    cells = column_strings(frame, result.units, timeunit)
    cells = [
        col if pd.api.types.is_numeric_dtype(dtype) else escape_texts(col)
        for dtype, col in zip(frame.dtypes, cells, strict=True)
    ]
    numeric = [_numeric_column(frame[c], col) for c, col in zip(visible, cells, strict=True)]
    return headers, cells, numeric


def format_table(result, fmt: str = "column", timeunit: str = "nsec") -> str:
    """Return one result's table (or its SKIPPED / no-data line), without the framing."""
    if result.skipped:
        return f"SKIPPED: {escape_text(result.skipped)}"
    headers, cells, numeric = printed_cells(result, timeunit)
    if not len(result.frame) or not cells:
        return "" if fmt in ("csv", "tsv") else _NO_DATA
    if fmt == "csv":
        quoted = [_csv_column(col) for col in cells]
        lines = map(",".join, zip(*quoted, strict=True))
        return "\n".join([",".join(_csv_field(h) for h in headers), *lines])
    if fmt == "tsv":
        return tsv_rows(headers, cells)
    draw = boxed_table if fmt == "table" else column_table
    return draw(headers, _clipped(cells, numeric), numeric)


def _csv_column(texts: list[str]) -> list[str]:
    """A column's CSV fields; only texts with a separator need quoting (numbers never do)."""
    joined = "\x00".join(texts)  # one scan in C instead of a test per cell
    if "," in joined or "\n" in joined or "\r" in joined:
        return [_csv_field(t) for t in texts]
    return texts


def _head(report_name: str, result) -> str:
    # nsys prints the arguments as given: ``(nvtx=aten::empty:base)``.
    args = f"({result.name.partition(':')[2]})" if result.args else ""
    return f"Processing [{escape_text(report_name)}] with [{result.base_name}.py]{args}..."


def file_section(
    report_name: str, result, fmt: str, timeunit: str, target: str
) -> tuple[str, str | None]:
    """One report written to a file, as ``nsys stats -o PREFIX`` writes it.

    Returns
    -------
    tuple
        (the console line naming the file, the file's text: the section without its
        ``Processing`` line; None for a SKIPPED report, which writes nothing).
    """
    head = f"{_head(report_name, result)[:-3]} to [{escape_text(target)}]..."
    if result.skipped:
        return f"{head} SKIPPED: {escape_text(result.skipped)}\n\n", None
    if fmt == "json":
        return f"{head} PROCESSED\n\n", format_results({report_name: [result]}, fmt, timeunit)
    section = _section(report_name, result, fmt, timeunit)
    body = section[len(_head(report_name, result)) + 2 :]
    return f"{head} PROCESSED\n\n", body[:-1] if body.endswith("\n") else body


def _section(report_name: str, result, fmt: str, timeunit: str) -> str:
    """One report's text as nsys prints it, blank line after (none after an empty csv)."""
    head = _head(report_name, result) + " "
    if result.skipped:
        return f"{head}\n{format_table(result, fmt, timeunit)}\n\n"
    if fmt in ("hdoc", "htable"):
        return f"{head}\n{_html_section(result, fmt, timeunit)}"
    body = format_table(result, fmt, timeunit)
    if fmt in ("csv", "tsv"):
        return f"{head}\n{body}\n\n" if body else f"{head}\n"
    # nsys's table layout draws an empty box before the title of a table with no rows.
    box = "+--+\n" if fmt == "table" and body == _NO_DATA else ""
    return f"{head}\n{box}\n ** {result.title} ({result.base_name}):\n\n{body}\n\n"


def _html_section(result, fmt: str, timeunit: str) -> str:
    headers, cells, _ = printed_cells(result, timeunit)
    empty = not len(result.frame) or not cells
    table = html_table(headers, cells)
    gap = "\n" if empty else "\n\n"  # nsys leaves no blank line after an empty table
    if fmt == "htable":
        return table + gap
    return hdoc_page(f"{result.title} ({result.base_name})", table) + gap


def json_value(value: object) -> object:
    """One cell as JSON: missing is null, NumPy scalars are Python numbers, ±inf is a string.

    An infinity as text (``"inf"``) keeps the output strict JSON, which has no number for it.
    """
    if _is_missing(value):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    return value


def format_results(
    results_by_report: Mapping[str, Sequence], fmt: str = "column", timeunit: str = "nsec"
) -> str:
    """Render results the way ``nsys stats`` prints them, one section per report and name.

    Parameters
    ----------
    results_by_report
        Report file name -> its :class:`StatsResult` list, in printing order.
    fmt
        'column' (nsys's default console table), 'csv' (``-f csv``) or 'json' (ours: a list
        of ``{report, name, title, skipped, columns, units, rows}`` objects, values in
        native units).
    timeunit
        Display unit of durations and timestamps (``--timeunit``): 'nsec' (default), 'usec',
        'msec' or 'seconds' (see :func:`parse_timeunit`); JSON stays in ns.
    """
    if fmt not in FORMATS:
        raise AnalysisError(f"unknown format '{fmt}'; choose one of {', '.join(FORMATS)}")
    if fmt == "json":
        out = []
        for report_name, results in results_by_report.items():
            for res in results:
                frame = res.frame
                out.append({
                    "report": report_name, "name": res.name, "title": res.title,
                    "skipped": res.skipped, "columns": list(frame.columns),
                    "units": {c: res.units.get(c) for c in frame.columns},
                    "rows": [[json_value(v) for v in row]
                             for row in frame.itertuples(index=False, name=None)],
                })  # fmt: skip
        return json.dumps(out, indent=1) + "\n"
    return "".join(
        _section(report_name, res, fmt, timeunit)
        for report_name, results in results_by_report.items()
        for res in results
    )
