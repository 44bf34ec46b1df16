"""``-f NAME[:ARG...]``: nsys 2023.4's output formats with the arguments its formatters take.

What ``nsys stats --help-formats ALL`` lists, checked against its binary
(tests/cli/test_nsys_options.py):

- every format: unit specifications ``CATEGORY=UNIT`` (``dur=us``, ``mem=KiB``,
  ``time=ms``...), ``noconv`` (values native: ns, bytes) and ``nohdrunit`` (headers without
  their unit), see :mod:`analysis.stats.units`;
- ``column`` and ``table``: ``nohdr``, ``nofmt``, ``autolines=N`` (columns sized from the
  header and the first N rows, 100 by default, 0 all), ``colmax=N`` (auto-sized columns at
  most N characters, 100 by default, 0 no limit), ``nolimit`` (no ``colmax``, wherever it
  comes), and widths: the i-th number is the i-th column's width, ``.`` its automatic one,
  ``0`` hides it; text wider than its column is cut to one character less and ``…``,
  numbers too;
- ``csv``: ``nohdr``; ``tsv``: ``nohdr``, ``esc`` (a tab in a value is written ``\\t``
  rather than a space); ``hdoc``: ``title=TEXT``, ``css=URL``; ``json``, ``htable``: units.

nsys ignores what it does not know (``column:limit=5``, ``dur=days``, a ``nohdr`` given to
``json``) and so does Strata, listing it in :attr:`FormatSpec.ignored` so the command line
can say so. ``nofmt`` changes nothing here: nsys's reformatting of numbers only adds a
locale's thousands separators, and Strata prints as nsys does under ``LANG=C``, without them.
A malformed number of a known argument (``colmax=abc``) is refused: nsys then prints a table
clipped by another rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from strata.analysis.errors import AnalysisError
from strata.analysis.spelling import did_you_mean
from strata.analysis.stats.layouts import NSYS_FORMATS, ColumnLayout
from strata.analysis.stats.units import CATEGORIES, META_CATEGORIES, DisplayUnits, unit_named

__all__ = [
    "FLAGS",
    "VALUE_ARGS",
    "FormatSpec",
    "as_format_spec",
    "ignored_hint",
    "parse_format",
]

#: Arguments without a value, as nsys's formatters spell them.
FLAGS = ("nohdr", "nofmt", "nolimit", "noconv", "nohdrunit", "esc")
#: Arguments with a value: name -> whether the value is a whole number.
VALUE_ARGS = {"autolines": True, "colmax": True, "title": False, "css": False}
#: A column width as nsys reads one (``+5`` too); ``.`` is the automatic width.
_WIDTH = re.compile(r"\+?[0-9]+")
_DEFAULT_LINES = 100
_DEFAULT_COLMAX = 100


@dataclass(frozen=True)
class FormatSpec:
    """A format and its arguments (see the module docstring).

    Attributes
    ----------
    name
        The format: one of :data:`~analysis.stats.layouts.NSYS_FORMATS`.
    text
        The format as given, arguments included.
    units
        ``(category, unit)`` settings in the order given.
    ignored
        The arguments nsys would ignore, as given.
    """

    name: str
    text: str = ""
    nohdr: bool = False
    nofmt: bool = False
    autolines: int = _DEFAULT_LINES
    colmax: int = _DEFAULT_COLMAX
    nolimit: bool = False
    widths: tuple[int | None, ...] = ()
    esc: bool = False
    title: str | None = None
    css: str | None = None
    units: tuple[tuple[str, str], ...] = ()
    noconv: bool = False
    nohdrunit: bool = False
    ignored: tuple[str, ...] = ()

    def display_units(self, timeunit: str | None = None) -> DisplayUnits:
        """The units cells are printed in: the format's settings, then ``--timeunit``."""
        return DisplayUnits.build(self.units, timeunit, not self.noconv, not self.nohdrunit)

    def layout(self) -> ColumnLayout:
        """How ``column`` and ``table`` size their columns."""
        colmax = 0 if self.nolimit else self.colmax
        return ColumnLayout(not self.nohdr, self.autolines, colmax, self.widths)


def parse_format(text: str) -> FormatSpec:
    """Read ``NAME[:ARG...]`` as nsys's ``-f`` does.

    Raises
    ------
    AnalysisError
        Not a format of nsys, or a known argument with a malformed number.
    """
    name, *args = text.strip().split(":")
    if name not in NSYS_FORMATS:
        hint = did_you_mean(name, NSYS_FORMATS) or f" (choose from {', '.join(NSYS_FORMATS)})"
        raise AnalysisError(f"-f: invalid choice '{name}'{hint}")
    fields: dict[str, object] = {}
    units: list[tuple[str, str]] = []
    widths: list[int | None] = []
    ignored: list[str] = []
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep and key in FLAGS:
            fields[key] = True
        elif sep and key in VALUE_ARGS:
            fields[key] = _whole(name, arg, value) if VALUE_ARGS[key] else value
        elif sep and (key in CATEGORIES or key in META_CATEGORIES):
            unit = unit_named(key, value)
            if unit is None:
                ignored.append(arg)
            else:
                units.append((key, unit))
        elif arg == "." or _WIDTH.fullmatch(arg):
            widths.append(None if arg == "." else int(arg))
        else:
            ignored.append(arg)
    return FormatSpec(
        name, text.strip(), units=tuple(units), widths=tuple(widths), ignored=tuple(ignored),
        **fields,
    )  # fmt: skip


def _whole(name: str, arg: str, value: str) -> int:
    if not value.isascii() or not value.isdigit():
        raise AnalysisError(f"-f {name}: {arg!r}: the value must be a whole number (0: none)")
    return int(value)


def as_format_spec(fmt: FormatSpec | str) -> FormatSpec:
    """``fmt`` itself, or the format it names (``csv``, ``column:nohdr``...)."""
    return fmt if isinstance(fmt, FormatSpec) else parse_format(fmt)


def ignored_hint(arg: str) -> str:
    """``"; did you mean 'nohdr'?"`` for an argument nsys would ignore, or ``""``."""
    key = arg.partition("=")[0]
    return did_you_mean(key, (*FLAGS, *VALUE_ARGS, *CATEGORIES, *META_CATEGORIES))
