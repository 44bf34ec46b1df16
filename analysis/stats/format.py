"""A computed summary's pandas table turned into printed text (:mod:`analysis.stats.text`).

Whole columns at a time where the dtype allows, cell by cell through
:func:`analysis.stats.text.number_text` otherwise, so a table prints the same digits here as
after a trip through the answer cache (:class:`~analysis.stats.plain.PlainResult`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from strata.analysis.escape import escape_texts
from strata.analysis.stats.text import header_of, is_numeric_text, number_text
from strata.analysis.stats.text import json_value as plain_json_value
from strata.analysis.stats.units import DisplayUnits, display_units

__all__ = [
    "column_strings",
    "json_records",
    "json_table",
    "json_value",
    "printed_cells",
    "table_strings",
]


def _python(value: object) -> object:
    """A cell as a Python value: NumPy scalars unboxed, pandas' NA as None."""
    if value is pd.NA:
        return None
    return value.item() if isinstance(value, np.generic) else value


def _number_text(value: object, unit: str | None, timeunit: str) -> str:
    return number_text(_python(value), unit, timeunit)


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


def _scale(unit: str | None, timeunit: DisplayUnits | str | None) -> tuple[bool, float, int] | None:
    """How a number of ``unit`` is printed: (divide?, by or times this, decimals); None: as is.

    The same operation as :func:`_number_text` (``v / 1e6`` for sizes, ``v * factor`` for
    times), so the digits are the same to the last rounding.
    """
    return display_units(timeunit).scale(unit)


def _scaled_texts(
    values: np.ndarray, missing: np.ndarray, scale: tuple[bool, float, int]
) -> list[str]:
    """Each value scaled and printed with fixed decimals; "" where missing."""
    divide, operand, decimals = scale
    scaled = (values / operand if divide else values * operand).tolist()
    spec = f".{decimals}f"
    return ["" if m else format(v, spec) for v, m in zip(scaled, missing.tolist(), strict=True)]


def _numeric_column(series: pd.Series, texts: list[str]) -> bool:
    """Whether a column prints as numbers (right-aligned): by dtype, else by its texts."""
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return True
    return is_numeric_text(texts)


def printed_cells(
    table: pd.DataFrame,
    units: Mapping[str, str | None],
    timeunit: str = "nsec",
    escape: bool = True,
) -> tuple[list[str], list[list[str]], list[bool]]:
    """Return (headers, printed cells column by column, whether each is numeric).

    Text cells are escaped (:func:`~analysis.escape.escape_text`) unless ``escape`` is
    False (nsys's json, which escapes them itself). Columns named ``_...`` are not printed.
    """
    visible = [c for c in table.columns if not str(c).startswith("_")]
    frame = table[visible]
    headers = [header_of(c, units.get(c), timeunit) for c in visible]
    cells = column_strings(frame, units, timeunit)
    cells = [
        col if not escape or pd.api.types.is_numeric_dtype(dtype) else escape_texts(col)
        for dtype, col in zip(frame.dtypes, cells, strict=True)
    ]
    numeric = [_numeric_column(frame[c], col) for c, col in zip(visible, cells, strict=True)]
    return headers, cells, numeric


def json_value(value: object) -> object:
    """One cell as JSON (:func:`analysis.stats.text.json_value` of its Python value)."""
    return plain_json_value(_python(value))


def json_table(frame: pd.DataFrame) -> tuple[list[str], list[list[object]]]:
    """(every column name, rows of JSON-ready values) of a result's frame."""
    rows = [[json_value(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return list(frame.columns), rows


def json_records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """The frame's rows as JSON-ready objects keyed by column name (the CLI tables' JSON)."""
    columns = [str(c) for c in frame.columns]
    return [
        dict(zip(columns, map(json_value, row), strict=True))
        for row in frame.itertuples(index=False, name=None)
    ]
