"""The row tree of the timeline, flattened for painting: group headers and track rows.

Qt-free. Pinned tracks leave the scrolling list and sit, in the order pinned, in the fixed
area above it; hidden tracks and the children of collapsed groups are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from strata.analysis.tracks import Track

__all__ = ["Row", "RowLayout", "default_collapsed", "layout_rows", "match_tracks", "pin_regex"]

#: Track kinds whose group starts collapsed (many rows that say little at first sight).
_FOLDED_KINDS = ("gpu_metric",)

#: A collapsed group row draws the merged activity of at most this many of its parts.
_SUMMARY_PARTS = 64
#: Kinds that best summarise a collapsed group, drawn first.
_SUMMARY_ORDER = {"gpu_all": 0, "gpu_stream": 3, "cpu": 1, "cuda_api": 2, "nvtx": 4}


@dataclass(frozen=True)
class Row:
    """One painted row.

    Attributes
    ----------
    kind
        ``report`` (a report's title row), ``group`` or ``track``.
    label
        Header text.
    depth
        Indentation level in the tree.
    height_px
        Row height.
    path
        For ``report``/``group`` rows the group path it heads (its collapse key); for
        track rows the track's group.
    track
        The track of a ``track`` row.
    is_collapsed
        For group rows: whether the children are hidden.
    context
        For pinned rows: where the row comes from (report and group), shown dimmed.
    """

    kind: str
    label: str
    depth: int
    height_px: int
    path: tuple[str, ...]
    track: Track | None = None
    is_collapsed: bool = False
    context: str = ""
    summary: tuple[Track, ...] = ()

    @property
    def report_index(self) -> int:
        """The report a track row, or a collapsed group's summary, belongs to (-1: none)."""
        if self.track is not None:
            return self.track.report_index
        return self.summary[0].report_index if self.summary else -1

    @property
    def draw_parts(self) -> tuple[tuple[str, int], ...]:
        """The ``(table, track id)`` parts this row draws (a collapsed group: its summary)."""
        if self.track is not None:
            return self.track.parts
        seen: dict[tuple[str, int], None] = {}
        for track in self.summary:
            for part in track.parts:
                seen.setdefault(part, None)
        return tuple(seen)[:_SUMMARY_PARTS]


@dataclass(frozen=True)
class RowLayout:
    """Rows with their top edge (px, relative to the area they live in)."""

    rows: tuple[Row, ...]
    tops_px: npt.NDArray[np.int64]

    @property
    def height_px(self) -> int:
        """Total height of the rows (px)."""
        if not self.rows:
            return 0
        return int(self.tops_px[-1] + self.rows[-1].height_px)

    def index_at(self, y_px: float) -> int | None:
        """Return the row at ``y_px`` (relative to the area top), or None."""
        if not self.rows or y_px < 0:
            return None
        i = int(np.searchsorted(self.tops_px, y_px, side="right")) - 1
        if i < 0 or y_px >= self.tops_px[i] + self.rows[i].height_px:
            return None
        return i

    def visible(self, y0_px: float, y1_px: float) -> range:
        """Return the indices of rows that intersect ``[y0_px, y1_px)``."""
        if not self.rows:
            return range(0)
        bottoms = self.tops_px + np.array([r.height_px for r in self.rows])
        lo = int(np.searchsorted(bottoms, y0_px, side="right"))
        hi = int(np.searchsorted(self.tops_px, y1_px, side="left"))
        return range(lo, max(lo, hi))


def _layout(rows: list[Row]) -> RowLayout:
    heights = np.array([r.height_px for r in rows], dtype=np.int64)
    tops = np.zeros(len(rows), dtype=np.int64)
    if len(rows) > 1:
        np.cumsum(heights[:-1], out=tops[1:])
    return RowLayout(tuple(rows), tops)


def layout_rows(
    tracks: Sequence[Track],
    collapsed: Iterable[tuple[str, ...]],
    hidden: Iterable[str],
    pinned: Sequence[str],
    heights: tuple[int, int, int] = (26, 22, 20),
) -> tuple[RowLayout, RowLayout]:
    """Return (pinned rows, scrolling rows).

    Parameters
    ----------
    tracks
        Every track, in display order (from ``build_tracks``).
    collapsed
        Group paths whose children are not shown.
    hidden
        Track keys not shown anywhere.
    pinned
        Track keys shown in the fixed area, in this order.
    heights
        Row heights in px: report title, group header, track.
    """
    report_h, group_h, track_h = heights
    collapsed = set(collapsed)
    hidden = set(hidden)
    by_key = {t.key: t for t in tracks}
    pinned_rows = [
        Row(
            "track",
            by_key[k].label,
            0,
            track_h,
            by_key[k].group,
            by_key[k],
            context=_context(by_key[k]),
        )
        for k in pinned
        if k in by_key and k not in hidden
    ]
    pinned_set = {r.track.key for r in pinned_rows}
    rows: list[Row] = []
    opened: tuple[str, ...] = ()
    for track in tracks:
        if track.key in hidden or track.key in pinned_set:
            continue
        common = 0
        while common < min(len(opened), len(track.group)) and opened[common] == track.group[common]:
            common += 1
        if _is_under_collapsed(track.group[:common], collapsed):
            opened = track.group[:common]
            continue
        for depth in range(common, len(track.group)):
            path = track.group[: depth + 1]
            is_collapsed = path in collapsed
            kind = "report" if depth == 0 else "group"
            rows.append(
                Row(
                    kind,
                    path[-1],
                    depth,
                    report_h if depth == 0 else group_h,
                    path,
                    is_collapsed=is_collapsed,
                    summary=_summary(tracks, path, hidden) if is_collapsed else (),
                )
            )
            if is_collapsed:
                break
        opened = track.group
        if _is_under_collapsed(track.group, collapsed):
            continue
        rows.append(Row("track", track.label, len(track.group), track_h, track.group, track))
    return _layout(pinned_rows), _layout(rows)


def default_collapsed(tracks: Iterable[Track]) -> set[tuple[str, ...]]:
    """The groups shown collapsed until the user opens them: each GPU's metrics group."""
    return {t.group for t in tracks if t.kind in _FOLDED_KINDS}


def _summary(tracks: Sequence[Track], path: tuple[str, ...], hidden: set[str]) -> tuple:
    """Tracks under a collapsed group, the most telling first (all-streams rows, cores)."""
    inside = [t for t in tracks if t.group[: len(path)] == path and t.key not in hidden]
    if any(t.kind == "gpu_all" for t in inside):
        # A rank or GPU folded away reads best as its GPU activity alone.
        inside = [t for t in inside if t.kind == "gpu_all"]
    inside.sort(key=lambda t: _SUMMARY_ORDER.get(t.kind, 9))
    return tuple(inside)


def _context(track: Track) -> str:
    """Where a pinned row comes from: report, and the GPU or thread it belongs to."""
    if not track.group:
        return ""
    parts = [track.group[0]]
    if len(track.group) > 2:
        parts.append(track.group[-1].split(" · ")[0])
    return " · ".join(parts)


def _is_under_collapsed(group: tuple[str, ...], collapsed: set[tuple[str, ...]]) -> bool:
    return any(group[: i + 1] in collapsed for i in range(len(group)))


def pin_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Pin-by-Name pattern the one way every caller (GUI, ``render --pin``) does:
    a case-insensitive regular expression.

    Raises
    ------
    re.error
        ``pattern`` is not a valid regular expression.
    """
    return re.compile(pattern, re.IGNORECASE)


def match_tracks(tracks: Sequence[Track], pattern: str) -> list[Track]:
    """Return the tracks that ``pattern`` names: the one matching rule of Pin by Name, of
    ``render --pin`` and of the dialog's preview count.

    ``pattern`` is a case-insensitive regular expression (:func:`pin_regex`) matched against
    the row's label as its header shows it (``Stream 7``, ``All streams``, ``Thread state``),
    never the names of the groups above it (so a thread called ``vectorAdd_streams`` does not
    make ``Stream`` pin that thread's rows):

    - a pattern that matches some rows' whole label names exactly those (``Stream 7`` pins
      ``Stream 7`` and not ``Stream 70``);
    - otherwise every row whose label contains a match is named (``stream`` names every
      ``Stream N`` row and ``All streams``);
    - a pattern holding ``/`` is searched in the row's full path instead,
      ``report / group / ... / label`` (``MPI Rank 0 .*/ Thread state``).

    Raises
    ------
    re.error
        ``pattern`` is not a valid regular expression.
    """
    regex = pin_regex(pattern)
    if "/" in pattern:
        return [t for t in tracks if regex.search(t.path)]
    exact = [t for t in tracks if regex.fullmatch(t.label)]
    if exact:
        return exact
    return [t for t in tracks if regex.search(t.label)]
