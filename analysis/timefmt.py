"""Human-readable times and counts: the one formatter every label, tooltip and line uses.

Durations keep three significant digits in the largest unit that keeps them >= 1; points in
time are seconds with microsecond digits (as ``info`` prints them). Qt-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "duration_unit",
    "format_count",
    "format_duration_ns",
    "format_range_ns",
    "format_time_ns",
    "pluralize",
]

_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


def format_duration_ns(duration_ns: float) -> str:
    """Return ``duration_ns`` with the largest unit that keeps it >= 1, 3 significant digits.

    >>> format_duration_ns(1_234_567)
    '1.23 ms'
    """
    value = abs(float(duration_ns))
    sign = "-" if duration_ns < 0 else ""
    for scale, unit in _UNITS:
        if value >= scale or scale == 1:
            scaled = value / scale
            digits = 0 if scale == 1 else max(0, 2 - (len(str(int(scaled))) - 1))
            return f"{sign}{scaled:.{digits}f} {unit}"
    raise AssertionError("unreachable")


def duration_unit(durations_ns: npt.ArrayLike) -> tuple[int, str]:
    """Return (ns per unit, unit) for an axis of ``durations_ns``: the largest unit that keeps
    their median >= 1 (a plot of 25-105 ms kernels reads in ms, not '1e8 ns').

    >>> duration_unit([25_021_861, 52_219_637])
    (1000000, 'ms')
    """
    import numpy as np  # here: a small report's `stats` imports this module, never NumPy

    values = np.abs(np.asarray(durations_ns, dtype=np.float64).ravel())
    values = values[np.isfinite(values)]  # a report without the instance: NaN
    typical = float(np.median(values)) if len(values) else 0.0
    return next(((s, u) for s, u in _UNITS if typical >= s), (1, "ns"))


def format_time_ns(time_ns: float) -> str:
    """Return a point in time (ns since the session start) as seconds to the microsecond.

    >>> format_time_ns(1_234_567_891)
    '1.234568 s'
    """
    return f"{time_ns / 1e9:.6f} s"


def format_range_ns(t0_ns: float, t1_ns: float) -> str:
    """Return a view range as 'start – end (width)' in the unit that suits its width."""
    width = t1_ns - t0_ns
    scale, unit = next(((s, u) for s, u in _UNITS if abs(width) >= s), (1, "ns"))
    decimals = 3 if scale > 1 else 0
    return (
        f"{t0_ns / scale:,.{decimals}f} – {t1_ns / scale:,.{decimals}f} {unit}"
        f"  ({format_duration_ns(width)})"
    )


def format_count(count: int) -> str:
    """Return a count as '950', '12.3 k', '4.56 M'."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.3g} k"
    return f"{count / 1_000_000:.3g} M"


def pluralize(
    count: int, noun: str, plural: str | None = None, *, number: str | None = None
) -> str:
    """Return ``count`` and ``noun``, the noun plural unless the count is one.

    Parameters
    ----------
    count
        How many.
    noun
        The singular (``"instance"``); ``-s``/``-x``/``-ch``/``-sh`` take ``-es``, a
        consonant and ``-y`` take ``-ies``, others ``-s``.
    plural
        The plural where the rule above is wrong (``"children"``).
    number
        The count as shown (e.g. :func:`format_count`'s ``"12.3 k"``); default ``1,234``.

    >>> pluralize(1, "instance"), pluralize(2_500, "core"), pluralize(3, "match")
    ('1 instance', '2,500 cores', '3 matches')
    """
    shown = f"{count:,}" if number is None else number
    if count == 1:
        return f"{shown} {noun}"
    if plural is None:
        if noun.endswith(("s", "x", "ch", "sh")):
            plural = f"{noun}es"
        elif noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
            plural = f"{noun[:-1]}ies"
        else:
            plural = f"{noun}s"
    return f"{shown} {plural}"
