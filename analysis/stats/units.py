"""The units nsys 2023.4's formatters print a column in: ``--timeunit`` and ``-f FMT:dur=us``.

nsys's report scripts tag columns with a category (``Total Time:dur_ns``, ``Bytes:mem_B``,
``Throughput:thru_B``, ``Time:ratio_%``); the formatter prints each category in a display
unit, converting the script's native value (ns, bytes). Defaults: times in ns (as the script
printed them), sizes in MB and throughputs in MB/s with 3 decimals. ``--timeunit U`` sets
the times; a formatter's unit arguments set any category (``dur=us``, ``mem=KiB``,
``time=ms`` for both ``ts`` and ``dur``, ``bytes=GB`` for ``mem`` and ``thru``), the last one
given winning, ``--timeunit`` after them all; ``noconv`` prints every value native (ns, B,
B/s) and ``nohdrunit`` leaves the unit out of the headers. Checked against nsys 2023.4's
binary (``nsys stats --help-formats column``; tests/cli/test_nsys_options.py): times are
multiplied (us 3 decimals, ms and sec 4), sizes divided (KB and KiB 2 decimals, MB, MiB, GB,
GiB 3); a unit spelled in another case (``mem=kib``) is taken, an unknown one ignored.

Plain Python: printed by :mod:`analysis.stats.text` for stored answers as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "CATEGORIES",
    "DEFAULT_UNITS",
    "META_CATEGORIES",
    "DisplayUnits",
    "display_units",
    "unit_named",
]

#: Time units: name -> (factor from ns, decimals); ns is the script's own text.
_TIME = {"ns": None, "us": (1e-3, 3), "ms": (1e-6, 4), "sec": (1e-9, 4)}
#: Size units: name -> (divisor from bytes, decimals); B is the script's own text.
_BYTES = {
    "B": None, "KB": (1e3, 2), "KiB": (1024.0, 2), "MB": (1e6, 3), "MiB": (1024.0**2, 3),
    "GB": (1e9, 3), "GiB": (1024.0**3, 3),
}  # fmt: skip
#: Category -> its units, as ``nsys stats --help-formats column`` lists them. Strata prints
#: no column of the ``gid`` and ``addr`` categories with values (only nsys's reports of data
#: Strata does not summarise have them), so their units are taken and change nothing.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "ts": tuple(_TIME),
    "dur": tuple(_TIME),
    "mem": tuple(_BYTES),
    "thru": tuple(_BYTES),
    "gid": ("gidint", "gidhex", "gidsubint", "gidsubhex"),
    "addr": ("uint", "hex"),
    "ratio": ("%",),
}
#: Meta-categories: one unit for several categories.
META_CATEGORIES: dict[str, tuple[str, ...]] = {"time": ("ts", "dur"), "bytes": ("mem", "thru")}
#: Each category's unit when nothing says otherwise.
DEFAULT_UNITS: dict[str, str] = {
    "ts": "ns", "dur": "ns", "mem": "MB", "thru": "MB", "gid": "gidint", "addr": "hex",
    "ratio": "%",
}  # fmt: skip
#: The native unit (``noconv``) of each category, as its header names it.
_NATIVE = {"ts": "ns", "dur": "ns", "mem": "B", "thru": "B", "ratio": "%"}
#: ``--timeunit`` word -> the time unit of the formatters.
_TIMEUNIT = {"nsec": "ns", "usec": "us", "msec": "ms", "seconds": "sec"}


def unit_named(category: str, text: str) -> str | None:
    """The unit of ``category`` that ``text`` names, in any case (``kib`` -> ``KiB``), or None.

    ``category`` may be a meta-category (``time``, ``bytes``).
    """
    category = META_CATEGORIES.get(category, (category,))[0]
    for unit in CATEGORIES.get(category, ()):
        if unit.lower() == text.lower():
            return unit
    return None


@dataclass(frozen=True)
class DisplayUnits:
    """The unit each category of column is printed in.

    Attributes
    ----------
    units
        (category, unit) pairs for every category (see :data:`CATEGORIES`).
    convert
        False for ``noconv``: every value as the script printed it (ns, bytes).
    show_unit
        False for ``nohdrunit``: headers without ``(unit)``.
    """

    units: tuple[tuple[str, str], ...] = tuple(DEFAULT_UNITS.items())
    convert: bool = True
    show_unit: bool = True

    @classmethod
    def build(
        cls,
        settings: Iterable[tuple[str, str]] = (),
        timeunit: str | None = None,
        convert: bool = True,
        show_unit: bool = True,
    ) -> DisplayUnits:
        """Apply ``(category or meta-category, unit)`` settings in order, then ``timeunit``
        (a ``--timeunit`` word: ``usec``...) to both time categories."""
        units = dict(DEFAULT_UNITS)
        pairs = list(settings)
        if timeunit is not None:
            pairs.append(("time", _TIMEUNIT[timeunit]))
        for category, unit in pairs:
            for each in META_CATEGORIES.get(category, (category,)):
                units[each] = unit
        return cls(tuple(units.items()), convert, show_unit)

    def unit_of(self, category: str | None) -> str | None:
        """The unit a column of ``category`` is printed in (None: no category)."""
        if category is None:
            return None
        if not self.convert:
            return _NATIVE.get(category)
        return dict(self.units).get(category)

    def label(self, category: str | None) -> str | None:
        """The header's unit, ``ns``, ``MB``, ``MB/s``, ``%``; None: no unit shown."""
        unit = self.unit_of(category)
        if unit is None or not self.show_unit or category not in _NATIVE:
            return None
        return f"{unit}/s" if category == "thru" else unit

    def scale(self, category: str | None) -> tuple[bool, float, int] | None:
        """How a value is converted: (divide?, by or times this, decimals); None: as is."""
        unit = self.unit_of(category)
        if category in ("ts", "dur"):
            how = _TIME.get(unit or "")
            return None if how is None else (False, how[0], how[1])
        if category in ("mem", "thru"):
            how = _BYTES.get(unit or "")
            return None if how is None else (True, how[0], how[1])
        return None


@lru_cache(maxsize=64)
def _for_timeunit(timeunit: str | None) -> DisplayUnits:
    return DisplayUnits.build(timeunit=None if timeunit in (None, "nsec") else timeunit)


def display_units(units: DisplayUnits | str | None) -> DisplayUnits:
    """``units`` itself, or the units of a ``--timeunit`` word (None or ``nsec``: defaults)."""
    if isinstance(units, DisplayUnits):
        return units
    return _for_timeunit(units)
