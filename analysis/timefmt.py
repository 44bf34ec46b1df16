"""Human-readable times and counts: the one formatter every label, tooltip and line uses.

Durations keep three significant digits in the largest unit that keeps them >= 1; points in
time are seconds with microsecond digits (as ``info`` prints them). Qt-free.
"""

from __future__ import annotations

__all__ = ["format_count", "format_duration_ns", "format_range_ns", "format_time_ns"]

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
