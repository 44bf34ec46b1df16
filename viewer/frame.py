"""What one paint of the timeline needs: geometry, view range, rows, overlays (Qt-free)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from strata.analysis.tracks import SliceTable
from strata.viewer.events import EventRef
from strata.viewer.state.collective_overlay import CollectiveOverlay
from strata.viewer.state.rows import Row, RowLayout
from strata.viewer.state.values import EventTints
from strata.viewer.style import Theme

__all__ = ["Frame"]


@dataclass
class Frame:
    """Everything one paint needs (the widget builds it; the painter only reads it)."""

    width: int
    height: int
    theme: Theme
    t0_ns: int
    t1_ns: int
    pinned: RowLayout
    rows: RowLayout
    scroll_px: int
    tables: list[dict[str, SliceTable]]
    offsets_ns: list[int]
    pinned_height_px: int
    scrollbar_px: int = 12
    selection: tuple[int, int] | None = None
    selected: EventRef | None = None
    partner: EventRef | None = None
    highlights: dict[tuple[int, str], npt.NDArray[np.bool_]] = field(default_factory=dict)
    marks: list[EventRef] = field(default_factory=list)
    tints: EventTints = field(default_factory=EventTints)
    hover_x: float | None = None
    #: Track keys of an area selection (rows × time); empty: the selection spans every row.
    selection_rows: frozenset[str] = frozenset()
    hover_row: int | None = None
    thumb: tuple[int, int] | None = None
    #: The matched collectives to draw over the rows (None: hidden or none).
    collectives: CollectiveOverlay | None = None
    #: How far the pinned rows are scrolled inside their area (px, a row's top).
    pinned_scroll_px: int = 0
    #: Device pixels per logical pixel of the paint target (2.0 at 200 % scaling): the
    #: row image is computed at this resolution so that it is as sharp as the text.
    pixel_ratio: float = 1.0
    #: Counters naming the versions of ``pinned``/``rows``, ``tables`` and the emphasis
    #: (``highlights``, ``tints``): the painter's caches are keyed by them, never by ``id()``
    #: (a freed object's id comes back for a new one).
    layout_version: int = 0
    data_version: int = 0
    emphasis_version: int = 0

    @property
    def data_x(self) -> int:
        """Left edge of the event area (px)."""
        return self.theme.header_width_px

    @property
    def data_width(self) -> int:
        """Width of the event area (px)."""
        return max(1, self.width - self.theme.header_width_px - self.scrollbar_px)

    @property
    def pinned_y(self) -> int:
        """Top of the pinned area (px)."""
        return self.theme.ruler_height_px

    @property
    def scroll_y(self) -> int:
        """Top of the scrolling rows (px)."""
        gap = 3 if self.pinned_height_px else 0
        return self.theme.ruler_height_px + self.pinned_height_px + gap

    @property
    def image_size(self) -> tuple[int, int]:
        """(width, height) in device pixels of the row image (event area, below the ruler)."""
        height = max(1, self.height - self.pinned_y)
        return max(1, round(self.data_width * self.pixel_ratio)), max(
            1, round(height * self.pixel_ratio)
        )

    def image_row(self, y: float) -> int:
        """Return the row image's device row at widget y ``y`` (px)."""
        return round((y - self.pinned_y) * self.pixel_ratio)

    @property
    def ns_per_px(self) -> float:
        """Nanoseconds per pixel of the view."""
        return max(self.t1_ns - self.t0_ns, 1) / self.data_width

    def x_of(self, t_ns: int) -> float:
        """Return the widget x of shared-axis time ``t_ns``."""
        return self.data_x + (t_ns - self.t0_ns) / self.ns_per_px

    def clip_row(self, y: int, h: int, pinned: bool) -> tuple[int, int]:
        """Return the part of a row at ``y`` that its area (pinned or scrolling) shows."""
        if pinned:
            lo, hi = self.pinned_y, self.pinned_y + self.pinned_height_px
        else:
            lo, hi = self.scroll_y, self.height
        return max(y, lo), min(y + h, hi)

    def placed_rows(self) -> list[tuple[Row, int, bool]]:
        """Return (row, top y in widget px, is_pinned) for every row on screen."""
        s, area = self.pinned_scroll_px, self.pinned_height_px
        placed = [  # whole rows only: one cut in half would spill onto the rows below
            (row, self.pinned_y + int(top) - s, True)
            for row, top in zip(self.pinned.rows, self.pinned.tops_px, strict=False)
            if top >= s and top + row.height_px <= s + area
        ]
        view_h = self.height - self.scroll_y
        for i in self.rows.visible(self.scroll_px, self.scroll_px + view_h):
            top = self.scroll_y + int(self.rows.tops_px[i]) - self.scroll_px
            placed.append((self.rows.rows[i], top, False))
        return placed
