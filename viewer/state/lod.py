"""Level of detail for the timeline painter: pure NumPy, no Qt.

Zoomed out, a row is drawn as one strip of pixels: per pixel the busy fraction (from the
per-table prefix sum of durations, so the cost is rows × pixels, not events) and the event
whose colour the pixel takes (the last one starting before the pixel ends, which is the one
covering it on a row whose intervals do not overlap). A pixel touched by any event, even a
zero-length one, gets at least :data:`PEAK_MIN_ALPHA` so that short events never vanish
(style.md §8, the "peak" reduction).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from strata.analysis.tracks import SliceTable

__all__ = [
    "PEAK_MIN_ALPHA",
    "CounterStrip",
    "RowStrip",
    "counter_strip",
    "merge_strips",
    "pixel_edges_ns",
    "row_strip",
    "spaced_labels",
]

#: Least opacity of a pixel that any event touches (measured: readable on both themes).
PEAK_MIN_ALPHA = 0.45


@dataclass(frozen=True)
class RowStrip:
    """One row's pixels: ``alpha`` in [0, 1] (float32) and ``event`` index (int64, -1 none).

    ``table`` names the slice table ``event`` indexes into, per pixel (int8 index into the
    caller's list of parts).
    """

    alpha: npt.NDArray[np.float32]
    event: npt.NDArray[np.int64]
    part: npt.NDArray[np.int8]


def pixel_edges_ns(t0_ns: int, ns_per_px: float, width_px: int) -> npt.NDArray[np.int64]:
    """Return the ``width_px + 1`` pixel edges of the view in int64 ns."""
    offsets = np.rint(np.arange(width_px + 1, dtype=np.float64) * ns_per_px).astype(np.int64)
    return offsets + np.int64(t0_ns)


def row_strip(
    table: SliceTable, lo: int, hi: int, edges_ns: npt.NDArray[np.int64], part: int = 0
) -> RowStrip:
    """Reduce rows ``[lo, hi)`` of ``table`` (one track) to one value per pixel.

    Parameters
    ----------
    table
        The slice table; its busy prefix sum is computed once and cached.
    lo, hi
        The visible rows of one track (``SliceTable.window``).
    edges_ns
        Pixel edges (from :func:`pixel_edges_ns`), ascending.
    part
        Stored in ``RowStrip.part`` so that merged strips remember their table.

    Returns
    -------
    RowStrip
        For overlapping tracks the busy fraction is the sum over intervals, clipped to 1.
    """
    width = len(edges_ns) - 1
    alpha = np.zeros(width, dtype=np.float32)
    event = np.full(width, -1, dtype=np.int64)
    part_ids = np.full(width, part, dtype=np.int8)
    if hi <= lo or width <= 0:
        return RowStrip(alpha, event, part_ids)
    starts = table.start_ns[lo:hi]
    ends = table.end_ns[lo:hi]
    before = np.searchsorted(starts, edges_ns, side="left")
    last = before - 1
    safe = np.maximum(last, 0)
    covered = np.minimum(ends[safe], edges_ns) - starts[safe]
    busy = np.where(
        last >= 0, table.busy_before(lo + safe) + np.maximum(covered, 0), table.busy_before(lo)
    )
    span = np.diff(edges_ns).astype(np.float64)
    fraction = np.diff(busy).astype(np.float64) / np.maximum(span, 1.0)
    candidate = before[1:] - 1
    safe_c = np.maximum(candidate, 0)
    touched = (before[1:] > before[:-1]) | ((candidate >= 0) & (ends[safe_c] > edges_ns[:-1]))
    np.clip(fraction, 0.0, 1.0, out=fraction)
    alpha[:] = np.where(touched, np.maximum(fraction, PEAK_MIN_ALPHA), 0.0)
    event[:] = np.where(touched, lo + safe_c, -1)
    return RowStrip(alpha, event, part_ids)


def merge_strips(strips: list[RowStrip]) -> RowStrip:
    """Combine the strips of one row's parts: alphas add (clipped); the densest part wins."""
    if len(strips) == 1:
        return strips[0]
    alphas = np.stack([s.alpha for s in strips])
    winner = np.argmax(alphas, axis=0)
    columns = np.arange(alphas.shape[1])
    events = np.stack([s.event for s in strips])[winner, columns]
    parts = np.stack([s.part for s in strips])[winner, columns]
    alpha = np.minimum(alphas.sum(axis=0), 1.0).astype(np.float32)
    return RowStrip(alpha, events, parts)


@dataclass(frozen=True)
class CounterStrip:
    """One counter row's pixels: the largest and the time-weighted mean value per pixel
    (float64), and whether any sample covers the pixel."""

    peak: npt.NDArray[np.float64]
    mean: npt.NDArray[np.float64]
    covered: npt.NDArray[np.bool_]


def counter_strip(
    table: SliceTable, lo: int, hi: int, edges_ns: npt.NDArray[np.int64]
) -> CounterStrip:
    """Reduce the counter intervals ``[lo, hi)`` of one track to its pixels.

    A counter track's intervals follow one another (:mod:`analysis.counters`), so the
    intervals a pixel sees are those from the one covering its left edge to the last one
    starting before its right edge: a max-reduction over consecutive segments, with the
    interval straddling each edge counted in both pixels. The mean integrates value ×
    time through a prefix sum (cached per table), so zoomed out a pixel shows both the
    spike (peak) and the level (mean); zoomed in both are the step's value. Cost: O(pixels
    + visible intervals).
    """
    width = len(edges_ns) - 1
    peak = np.zeros(width, np.float64)
    mean = np.zeros(width, np.float64)
    if hi <= lo or width <= 0:
        return CounterStrip(peak, mean, np.zeros(width, bool))
    starts, ends = table.start_ns[lo:hi], table.end_ns[lo:hi]
    values = table.values[lo:hi]
    cover = np.searchsorted(starts, edges_ns, side="right") - 1  # interval at each edge
    last = np.searchsorted(starts, edges_ns[1:], side="left") - 1  # last one inside a pixel
    safe_last = np.maximum(last, 0)
    covered = (last >= 0) & (ends[safe_last] > edges_ns[:-1])
    # Segment k runs from the interval at edge k to the next segment's start; the last one
    # must stop at the last interval starting before the last edge, not at ``hi``.
    inside = max(int(last[-1]) + 1, 1)
    first = np.clip(cover[:-1], 0, inside - 1)
    peak[:] = np.maximum(np.maximum.reduceat(values[:inside], first), values[safe_last])
    prefix = table.value_prefix()
    integral = _integral(prefix, table, lo, starts, ends, values, cover, edges_ns)
    time = _covered_time(table, lo, starts, ends, cover, edges_ns)
    span = np.diff(time).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean[:] = np.where(span > 0, np.diff(integral) / np.maximum(span, 1.0), values[safe_last])
    peak[~covered] = 0.0
    mean[~covered] = 0.0
    return CounterStrip(peak, mean, covered)


def _integral(prefix, table, lo, starts, ends, values, cover, edges_ns) -> np.ndarray:
    """Integral of the counter from its track's first interval up to each edge."""
    safe = np.maximum(cover, 0)
    inside = np.clip(np.minimum(edges_ns, ends[safe]) - starts[safe], 0, None)
    partial = values[safe] * inside.astype(np.float64)
    return np.where(cover >= 0, prefix[lo + safe] - prefix[lo] + partial, 0.0)


def _covered_time(table, lo, starts, ends, cover, edges_ns) -> np.ndarray:
    """Time covered by intervals from the track's first one up to each edge (int64)."""
    safe = np.maximum(cover, 0)
    inside = np.clip(np.minimum(edges_ns, ends[safe]) - starts[safe], 0, None)
    busy = table.busy_before(lo + safe) - table.busy_before(lo)
    return np.where(cover >= 0, busy + inside, 0)


def spaced_labels(
    x0_px: npt.NDArray[np.float64], x1_px: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """Return which labels of one row to draw so that no two drawn ones overlap.

    Rows whose intervals can overlap (``All streams``, ``NVTX (GPU)``) would otherwise print
    text on text. Left to right, a label spanning ``[x0_px, x1_px)`` is kept when it starts at
    or after the end of the last kept one; a skipped label's box stays bare.

    Parameters
    ----------
    x0_px, x1_px
        Left and right edge of each label's box on screen (px), in any order.

    Returns
    -------
    numpy.ndarray of bool
        True for the labels to draw, in the order given.
    """
    x0 = np.asarray(x0_px, dtype=np.float64)
    x1 = np.asarray(x1_px, dtype=np.float64)
    keep = np.zeros(len(x0), dtype=bool)
    end_px = -np.inf
    # A loop over the labels of one row only: at most the boxes wide enough to hold text.
    for i in np.lexsort((-x1, x0)).tolist():
        if x0[i] >= end_px:
            keep[i] = True
            end_px = x1[i]
    return keep
