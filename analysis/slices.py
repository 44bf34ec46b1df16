"""The slice table: read-only intervals of one kind, sorted by (track, start), ready to paint."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from analysis.model import freeze

__all__ = ["Extent", "SliceTable", "interval_extent"]

#: ``(full, lasting)`` of some intervals: from the earliest start to the latest end of all
#: of them, and of those that last (``end > start``; None without one).
Extent = tuple[tuple[int, int], tuple[int, int] | None]


def interval_extent(start_ns: np.ndarray, end_ns: np.ndarray) -> Extent | None:
    """Return the :data:`Extent` of the intervals ``[start_ns, end_ns)`` (None: none)."""
    if not len(start_ns):
        return None
    full = (int(start_ns.min()), int(end_ns.max()))
    is_lasting = end_ns > start_ns
    if is_lasting.all():
        return full, full
    if not is_lasting.any():
        return full, None
    return full, (int(start_ns[is_lasting].min()), int(end_ns[is_lasting].max()))


@dataclass(frozen=True)
class SliceTable:
    """Read-only intervals of one kind, sorted by ``(track, start_ns)``, ready to paint.

    Attributes
    ----------
    kind
        The slice-table name (a report table name, or ``cpu`` / ``nvtx_gpu`` when derived).
    start_ns, end_ns
        Interval bounds (int64 ns, the report's session time base).
    track_offsets
        ``[lo, hi)`` row bounds of track ``i`` are ``track_offsets[i:i+2]`` (int64).
    label_ids
        Per interval, an index into ``labels`` (int32; -1 = no label).
    labels
        Label strings (object array); also the key of the per-name colour.
    argb
        Per interval an explicit 0xAARRGGBB colour, or -1 to colour by label; ``None`` when
        the table has no explicit colours.
    source
        The report table the rows come from ('' when derived without a 1:1 source).
    source_rows
        Row index into the source table per interval; ``None`` means the identity.
    is_overlapping
        Whether intervals on one track may overlap (then the paint window looks back by the
        track's longest interval instead of one interval).
    values
        For a counter (:mod:`analysis.counters`), the value each interval holds (float64);
        ``None`` for events.
    """

    kind: str
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    track_offsets: npt.NDArray[np.int64]
    label_ids: npt.NDArray[np.int32]
    labels: npt.NDArray[np.object_]
    argb: npt.NDArray[np.int64] | None = None
    source: str = ""
    source_rows: npt.NDArray[np.int64] | None = None
    is_overlapping: bool = False
    values: npt.NDArray[np.float64] | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.start_ns)

    @property
    def track_count(self) -> int:
        """Number of tracks in the table."""
        return len(self.track_offsets) - 1

    def bounds(self, track_id: int) -> tuple[int, int]:
        """Return the ``[lo, hi)`` rows of ``track_id``."""
        return int(self.track_offsets[track_id]), int(self.track_offsets[track_id + 1])

    def busy_prefix_ns(self) -> npt.NDArray[np.int64]:
        """Return the exclusive prefix sum of durations (length n + 1), computed once.

        Only differences of it are used (the busy time of a run of rows); they are exact in
        int64's modular arithmetic even where the running sum itself wraps (a damaged
        report's durations near 2^62), since the busy time of a window of one track is at
        most the window.
        """
        prefix = self._cache.get("busy")
        if prefix is None:
            prefix = np.zeros(len(self) + 1, dtype=np.int64)
            np.cumsum(self.end_ns - self.start_ns, out=prefix[1:])
            self._cache["busy"] = freeze(prefix)
        return prefix

    def extent_ns(self) -> Extent | None:
        """Return the :data:`Extent` of the intervals (None when empty), computed once."""
        if "extent" not in self._cache:
            self._cache["extent"] = interval_extent(self.start_ns, self.end_ns)
        return self._cache["extent"]

    def max_duration_ns(self) -> npt.NDArray[np.int64]:
        """Return the longest interval per track (int64, 0 for empty tracks), computed once."""
        longest = self._cache.get("longest")
        if longest is None:
            longest = np.zeros(self.track_count, dtype=np.int64)
            duration = self.end_ns - self.start_ns
            nonempty = np.flatnonzero(np.diff(self.track_offsets) > 0)
            if len(nonempty):
                longest[nonempty] = np.maximum.reduceat(duration, self.track_offsets[nonempty])
            self._cache["longest"] = freeze(longest)
        return longest

    def window(self, track_id: int, t0_ns: int, t1_ns: int) -> tuple[int, int]:
        """Return the ``[lo, hi)`` rows of ``track_id`` that may intersect ``[t0_ns, t1_ns)``."""
        lo, hi = self.bounds(track_id)
        if lo == hi:
            return lo, lo
        starts = self.start_ns[lo:hi]
        if self.is_overlapping:
            back = int(self.max_duration_ns()[track_id])
            first = int(np.searchsorted(starts, t0_ns - back, side="left"))
        else:
            first = int(np.searchsorted(starts, t0_ns, side="right"))
            if first > 0 and self.end_ns[lo + first - 1] > t0_ns:
                first -= 1
        last = int(np.searchsorted(starts, t1_ns, side="left"))
        return lo + first, lo + max(first, last)

    def source_row(self, index: int) -> int:
        """Return the source-table row of interval ``index``."""
        return index if self.source_rows is None else int(self.source_rows[index])

    def index_of_source_row(self, row: int) -> int | None:
        """Return the interval that shows source row ``row``, or ``None``."""
        if self.source_rows is None:
            return row if 0 <= row < len(self) else None
        hits = np.flatnonzero(self.source_rows == row)
        return int(hits[0]) if len(hits) else None
