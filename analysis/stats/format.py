"""Print :class:`StatsResult` tables the way ``nsys stats`` does (column, csv) or as JSON.

spec: nsys-sqlite.md §3.1 "Column-name tags → headers and units", "Console framing",
"Number presentation": durations and timestamps in ns (integers as is, REALs with their
digits), sizes in MB = 10^6 B and throughputs in MB/s with 3 decimals, no thousands
separators (nsys under ``LANG=C.UTF-8``; with ``en_US`` it would print ``10,000``). The column
layout: one leading space, columns two spaces apart, headers centred (extra space on the
right), numbers right-aligned, text left-aligned, text wider than 100 characters cut to 99
plus ``…``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError

__all__ = [
    "FORMATS",
    "TIME_UNITS",
    "format_results",
    "format_table",
    "header_of",
    "parse_timeunit",
    "table_strings",
]

FORMATS = ("column", "csv", "json")
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


def table_strings(
    frame: pd.DataFrame, units: Mapping[str, str | None], timeunit: str = "nsec"
) -> list[list[str]]:
    """Return the printed text of every cell, row by row."""
    columns = []
    for name in frame.columns:
        series = frame[name]
        unit = units.get(name)
        if (
            pd.api.types.is_integer_dtype(series.dtype)
            and series.hasnans
            and (unit not in ("dur", "ts") or timeunit == "nsec")
        ):
            texts = ["" if _is_missing(v) else str(int(v)) for v in series.tolist()]
        else:
            texts = [_number_text(v, unit, timeunit) for v in series.tolist()]
        columns.append(texts)
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


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


def _column_layout(headers: list[str], rows: list[list[str]]) -> str:
    n = len(headers)
    cells = [[row[i] for row in rows] for i in range(n)]
    numeric = [_is_numeric(col) for col in cells]
    for i, col in enumerate(cells):
        if not numeric[i]:
            cells[i] = [t if len(t) <= _COLUMN_MAX else t[: _COLUMN_MAX - 1] + "…" for t in col]
    widths = [max([len(headers[i])] + [len(t) for t in cells[i]]) for i in range(n)]
    lines = []

    def centred(text: str, width: int) -> str:
        pad = width - len(text)
        return " " * (pad // 2) + text + " " * (pad - pad // 2)

    lines.append(" " + "  ".join(centred(h, w) for h, w in zip(headers, widths, strict=True)))
    lines.append(" " + "  ".join("-" * w for w in widths))
    for r in range(len(rows)):
        parts = [
            cells[i][r].rjust(widths[i]) if numeric[i] else cells[i][r].ljust(widths[i])
            for i in range(n)
        ]
        lines.append(" " + "  ".join(parts))
    return "\n".join(lines)


def format_table(result, fmt: str = "column", timeunit: str = "nsec") -> str:
    """Return one result's table (or its SKIPPED / no-data line), without the framing."""
    if result.skipped:
        return f"SKIPPED: {result.skipped}"
    visible = [c for c in result.frame.columns if not str(c).startswith("_")]
    frame = result.frame[visible]
    headers = [header_of(c, result.units.get(c), timeunit) for c in visible]
    rows = table_strings(frame, result.units, timeunit)
    if fmt == "csv":
        if not rows:
            return ""
        return "\n".join(",".join(_csv_field(t) for t in line) for line in [headers, *rows])
    if not rows:
        return _NO_DATA
    return _column_layout(headers, rows)


def _section(report_name: str, result, fmt: str, timeunit: str) -> str:
    """One report's text as nsys prints it, blank line after (none after an empty csv)."""
    args = "".join(f"({a})" for a in result.args)
    head = f"Processing [{report_name}] with [{result.base_name}.py]{args}... "
    body = format_table(result, fmt, timeunit)
    if result.skipped:
        return f"{head}\n{body}\n\n"
    if fmt == "csv":
        return f"{head}\n{body}\n\n" if body else f"{head}\n"
    return f"{head}\n\n ** {result.title} ({result.base_name}):\n\n{body}\n\n"


def _json_value(value: object) -> object:
    if _is_missing(value):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
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
                    "rows": [[_json_value(v) for v in row]
                             for row in frame.itertuples(index=False, name=None)],
                })  # fmt: skip
        return json.dumps(out, indent=1) + "\n"
    return "".join(
        _section(report_name, res, fmt, timeunit)
        for report_name, results in results_by_report.items()
        for res in results
    )
