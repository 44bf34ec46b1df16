"""Where the events of the shown reports lie on the shared axis: what a fit shows."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from strata.analysis.slices import Extent, interval_extent

__all__ = ["activity_span", "extents_span", "inside_limit", "nonempty_span"]


def activity_span(
    spans: Iterable[tuple[np.ndarray, np.ndarray, int]],
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Return ``(full, activity)`` spans of events given as ``(start_ns, end_ns, offset_ns)``
    arrays per table, on the shared axis (``None`` when there is no event).

    ``full`` covers every event. ``activity`` is where :meth:`TimelineState.fit` looks first:
    from the earliest start to the latest end of the events that last (``end > start``).
    Instantaneous events (NVTX marks and domain creations, zero-length calls) only tell
    that something was set up, and a report often has them long before or after its work
    (a domain created at time 0, the work 40 s later): they are left out of the activity
    span, and those inside it are shown anyway. Without a lasting event, ``activity`` is
    ``full``.
    """
    return extents_span((interval_extent(start, end), offset) for start, end, offset in spans)


def extents_span(
    extents: Iterable[tuple[Extent | None, int]],
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """:func:`activity_span` of tables given by their extents (e.g. a slice table's cached
    :meth:`~analysis.slices.SliceTable.extent_ns`) and offsets: no pass over the events."""
    full: list[tuple[int, int]] = []
    lasting: list[tuple[int, int]] = []
    for extent, offset in extents:
        if extent is None:
            continue
        (lo, hi), last = extent
        full.append((lo + offset, hi + offset))
        if last is not None:
            lasting.append((last[0] + offset, last[1] + offset))
    if not full:
        return None
    whole = (min(lo for lo, _ in full), max(hi for _, hi in full))
    if not lasting:
        return whole, whole
    return whole, (min(lo for lo, _ in lasting), max(hi for _, hi in lasting))


def inside_limit(t0_ns: int, t1_ns: int, limit: tuple[int, int]) -> tuple[int, int]:
    """Return ``[t0_ns, t1_ns)`` moved inside ``limit``, or ``limit`` when it is wider."""
    lo, hi = limit
    if t1_ns - t0_ns >= hi - lo:
        return lo, hi
    shift = max(lo - t0_ns, 0) - max(t1_ns - hi, 0)
    return t0_ns + shift, t1_ns + shift


def nonempty_span(lo_ns: int, hi_ns: int) -> tuple[int, int]:
    """Return ``(lo_ns, hi_ns)``, or 1 µs from ``lo_ns`` when it is empty or reversed."""
    lo_ns, hi_ns = int(lo_ns), int(hi_ns)
    return (lo_ns, hi_ns) if hi_ns > lo_ns else (lo_ns, lo_ns + 1000)
