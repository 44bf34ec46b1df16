"""A summary result held as plain Python lists: printed without NumPy or pandas.

What the answer cache (:mod:`analysis.answers`) gives back. A stored answer is printed in
every format and time unit by :mod:`analysis.stats.text`, cell by cell through the same
:func:`~analysis.stats.text.number_text` rule the computed tables use, so ``main.py stats``
answers from it in a fresh interpreter without importing NumPy or pandas (0.3 s of a
0.4 s command on a small report).

Columns carry the dtype of the table they were stored from, as its text: a NumPy dtype's
``.str`` (``<i8``, ``<f8``, ``|b1``), ``object``, or a pandas extension dtype's name
(``Int64``, ``string``, ``boolean``). It decides only whether the column counts as numbers
(right-aligned) as :mod:`analysis.stats.format` decides it for the frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from strata.analysis.escape import escape_texts
from strata.analysis.specname import SpecName
from strata.analysis.stats.text import header_of, is_numeric_text, json_value, number_text

__all__ = ["PlainColumn", "PlainResult", "numeric_dtype"]

#: NumPy dtype kinds (``.str[1]``) of numbers; booleans print as numbers but are not one.
_NUMBER_KINDS = "iuf"
#: pandas' nullable number dtypes.
_NULLABLE_NUMBERS = ("Int", "UInt", "Float")


def numeric_dtype(dtype: str) -> bool:
    """Whether a stored dtype is a number type (not bool), as ``is_numeric_dtype`` and not
    ``is_bool_dtype`` say of the frame's column."""
    if dtype[:1] in "<>|=" and len(dtype) >= 2:
        return dtype[1] in _NUMBER_KINDS
    return dtype.startswith(_NULLABLE_NUMBERS)


@dataclass(frozen=True)
class PlainColumn:
    """One column: its name, its dtype as text, its values (None where missing)."""

    name: str
    dtype: str
    values: list


@dataclass(frozen=True)
class PlainResult(SpecName):
    """A summary's table as lists (see the module docstring); the attributes of
    :class:`~analysis.stats.StatsResult` but ``frame``."""

    name: str
    title: str
    columns: tuple[PlainColumn, ...]
    units: Mapping[str, str | None] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def n_rows(self) -> int:
        return len(self.columns[0].values) if self.columns else 0

    def printed(
        self, timeunit: str = "nsec", escape: bool = True
    ) -> tuple[list[str], list[list[str]], list[bool]]:
        """(headers, printed cells column by column, whether each is numeric); text cells
        escaped (:func:`~analysis.escape.escape_text`) unless ``escape`` is False."""
        visible = [c for c in self.columns if not c.name.startswith("_")]
        headers = [header_of(c.name, self.units.get(c.name), timeunit) for c in visible]
        cells, numeric = [], []
        for column in visible:
            unit = self.units.get(column.name)
            texts = [number_text(v, unit, timeunit) for v in column.values]
            number = numeric_dtype(column.dtype)
            if escape and not number and column.dtype not in ("|b1", "boolean"):
                texts = escape_texts(texts)
            cells.append(texts)
            numeric.append(number or is_numeric_text(texts))
        return headers, cells, numeric

    def json_table(self) -> tuple[list[str], list[list[object]]]:
        """(every column name, rows of JSON-ready values)."""
        rows = zip(*(c.values for c in self.columns), strict=True)
        return [c.name for c in self.columns], [[json_value(v) for v in row] for row in rows]
