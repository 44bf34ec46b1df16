"""Nesting levels: give every interval of a group a level so that intervals never overlap
on one (group, level) pair, and nested intervals sit one level below their parent.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

__all__ = ["nesting_levels", "overlaps_on_level"]


def nesting_levels(
    groups: npt.NDArray[np.int64], start_ns: npt.NDArray[np.int64], end_ns: npt.NDArray[np.int64]
) -> npt.NDArray[np.int32]:
    """Return a level per interval: 0 for outermost, depth of nesting otherwise.

    Properly nested intervals (push/pop ranges, nested API calls) get their exact stack
    depth with sort + binary search: the depth of an interval is the number of intervals of
    its group that started before it minus those that had already ended. Groups where that
    guess overlaps (crossing start/end ranges) fall back to first-fit colouring, whose Python
    loop touches only those groups.

    Parameters
    ----------
    groups
        Group key per interval (e.g. a thread's globalTid).
    start_ns, end_ns
        Interval bounds, ``end_ns >= start_ns``.

    Returns
    -------
    numpy.ndarray of int32, one level per input row.
    """
    n = len(start_ns)
    levels = np.zeros(n, dtype=np.int32)
    if n == 0:
        return levels
    order = np.lexsort((-end_ns, start_ns, groups))
    g_sorted = groups[order]
    cuts = np.flatnonzero(np.diff(g_sorted)) + 1
    bounds = np.concatenate(([0], cuts, [n]))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=False):
        idx = order[lo:hi]
        s, e = start_ns[idx], end_ns[idx]
        rank = np.arange(hi - lo)
        closed = np.searchsorted(np.sort(e), s, side="right")
        depth = np.maximum(rank - closed, 0).astype(np.int32)
        if overlaps_on_level(depth, s, e):
            depth = _first_fit(s, e)
        levels[idx] = depth
    return levels


def overlaps_on_level(
    levels: npt.NDArray[np.int32], start_ns: npt.NDArray[np.int64], end_ns: npt.NDArray[np.int64]
) -> bool:
    """Return whether two intervals on one level overlap (touching ends do not overlap)."""
    if len(levels) < 2:
        return False
    order = np.lexsort((start_ns, levels))
    same = levels[order][1:] == levels[order][:-1]
    return bool(np.any(same & (start_ns[order][1:] < end_ns[order][:-1])))


def _first_fit(start_ns: np.ndarray, end_ns: np.ndarray) -> np.ndarray:
    """Assign each interval (given sorted by start, longer first) the lowest free level."""
    levels = np.empty(len(start_ns), dtype=np.int32)
    free: list[int] = []  # levels free again, smallest first
    busy: list[tuple[int, int]] = []  # (end, level) of intervals still open
    next_level = 0
    for i, (s, e) in enumerate(zip(start_ns.tolist(), end_ns.tolist(), strict=False)):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            level = heapq.heappop(free)
        else:
            level = next_level
            next_level += 1
        levels[i] = level
        heapq.heappush(busy, (e, level))
    return levels
