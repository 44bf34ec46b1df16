"""The slice table: read-only intervals of one kind, sorted by (track, start), ready to paint."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.memo import Memo
from strata.analysis.model import freeze

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
    track_keys
        For a table derived without a report table's own tracks, per track what it is
        (columns by kind: ``cpu`` for the cores; ``global_tid`` for thread states;
        ``device_id`` and ``level`` for the projected NVTX ranges; ``device_id`` and the
        metric's columns for counters); ``None``: the source table's ``track_keys``.
    scale
        For a counter, per track the value a full row means (float64, > 0); else ``None``.
    projection_rows
        For the projected NVTX ranges, per interval its row of ``project_nvtx`` (int64, what
        the stats panel's instances name); else ``None``.

    Notes
    -----
    The lazily computed columns (:meth:`busy_prefix_ns`, :meth:`busy_before`,
    :meth:`extent_ns`, :meth:`max_duration_ns`, :meth:`value_prefix`) are computed once, by
    the first thread that asks, as a :class:`~analysis.reportset.ReportSet`'s derived data.
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
    track_keys: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    scale: npt.NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    projection_rows: npt.NDArray[np.int64] | None = field(default=None, repr=False, compare=False)
    _derived: Memo = field(default_factory=Memo, init=False, repr=False, compare=False)

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
        return self._derived.get("busy", lambda: _full_prefix(self.start_ns, self.end_ns))

    def busy_before(self, rows: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Return, per row index ``k`` (``0 <= k <= len``), the busy time of rows ``[0, k)``:
        ``busy_prefix_ns()[rows]``, exact in the same int64 modular arithmetic.

        Kept compact (computed once): an int64 base per block of :data:`_BLOCK` rows and a
        uint32 offset per row, 4.1 bytes a row instead of 8 (what the timeline keeps per
        drawn event). A table where some block's busy time reaches 2^32 ns (4.3 s) keeps the
        int64 prefix instead.
        """
        base, offset = self.busy_blocks()
        rows = np.asarray(rows)
        if offset is None:
            return base[rows]
        return base[rows >> _BLOCK_BITS] + offset[rows]

    def busy_blocks(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32] | None]:
        """Return the compact prefix :meth:`busy_before` reads, computed once: (int64 base per
        block of :data:`_BLOCK` rows, uint32 offset per row), or (the int64 prefix, None)
        when some offset does not fit in 32 bits."""
        return self._derived.get("busy_blocks", lambda: _packed_prefix(self.start_ns, self.end_ns))

    def extent_ns(self) -> Extent | None:
        """Return the :data:`Extent` of the intervals (None when empty), computed once."""
        return self._derived.get("extent", lambda: interval_extent(self.start_ns, self.end_ns))

    def max_duration_ns(self) -> npt.NDArray[np.int64]:
        """Return the longest interval per track (int64, 0 for empty tracks), computed once."""
        return self._derived.get("longest", self._longest_per_track)

    def _longest_per_track(self) -> npt.NDArray[np.int64]:
        longest = np.zeros(self.track_count, dtype=np.int64)
        duration = self.end_ns - self.start_ns
        nonempty = np.flatnonzero(np.diff(self.track_offsets) > 0)
        if len(nonempty):
            longest[nonempty] = np.maximum.reduceat(duration, self.track_offsets[nonempty])
        return freeze(longest)

    def value_prefix(self) -> npt.NDArray[np.float64]:
        """Return a counter's exclusive prefix sum of value × duration (float64, length
        n + 1), computed once: the integral of the counter up to each interval."""
        return self._derived.get("value_prefix", self._value_prefix)

    def _value_prefix(self) -> npt.NDArray[np.float64]:
        if self.values is None:
            raise AnalysisError(f"the {self.kind} slice table holds no counter values")
        prefix = np.zeros(len(self) + 1, np.float64)
        durations = (self.end_ns - self.start_ns).astype(np.float64)
        np.cumsum(self.values * durations, out=prefix[1:])
        return freeze(prefix)

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


_BLOCK_BITS = 6
_BLOCK = 1 << _BLOCK_BITS
#: Rows summed at a time while packing (a multiple of the block): bounds the temporaries.
_PACK_ROWS = 1 << 20


def _packed_prefix(
    start_ns: np.ndarray, end_ns: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    """The exclusive prefix sum of durations as (int64 base per block, uint32 offset per
    row), both of length covering row ``n``; (int64 prefix, None) when an offset does not
    fit. Computed chunk by chunk, so no int64 array of the table's length is made."""
    n = len(start_ns)
    base = np.zeros(n // _BLOCK + 1, dtype=np.int64)
    offset = np.zeros(n + 1, dtype=np.uint32)
    total = np.int64(0)
    for a in range(0, n, _PACK_ROWS):
        b = min(a + _PACK_ROWS, n)
        prefix = np.empty(b - a + 1, dtype=np.int64)
        prefix[0] = 0
        np.cumsum(end_ns[a:b] - start_ns[a:b], out=prefix[1:])
        prefix += total  # int64 wraps as the whole cumsum would
        total = prefix[-1]
        blocks = prefix[:-1:_BLOCK]
        base[a // _BLOCK : a // _BLOCK + len(blocks)] = blocks
        within = prefix[:-1] - np.repeat(blocks, _BLOCK)[: b - a]
        if len(within) and (int(within.min()) < 0 or int(within.max()) >= 1 << 32):
            return _full_prefix(start_ns, end_ns), None
        offset[a:b] = within
    if n % _BLOCK == 0:
        base[n // _BLOCK] = total
    last = int(total - base[n // _BLOCK])
    if not 0 <= last < 1 << 32:
        return _full_prefix(start_ns, end_ns), None
    offset[n] = last
    return freeze(base), freeze(offset)


def _full_prefix(start_ns: np.ndarray, end_ns: np.ndarray) -> np.ndarray:
    prefix = np.zeros(len(start_ns) + 1, dtype=np.int64)
    np.cumsum(end_ns - start_ns, out=prefix[1:])
    return freeze(prefix)
