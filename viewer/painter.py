"""One paint pass for every visible row of the timeline.

Per frame: one opaque ``QImage`` (a NumPy buffer) holds the row backgrounds and every row
drawn by level of detail (per-pixel busy fraction and colour, :mod:`viewer.state.lod`); rows with
few visible events are drawn exactly, with ``drawRects`` batched per colour straight from a
NumPy buffer (PySide ≥ 6.4.3 takes a pointer and a count, so no Python ``QRectF`` objects
are built); then labels inside boxes wide enough, the overlays (:mod:`viewer.overlays`),
the ruler and the row headers (:mod:`viewer.chrome`). Work is proportional to visible
events or rows × pixels, never to the report.
"""

from __future__ import annotations

import math

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter, QPen

from strata.analysis.tracks import SliceTable
from strata.viewer.chrome import ChromePainter
from strata.viewer.frame import Frame
from strata.viewer.overlays import MARK_CLUSTER_PX, OverlayPainter, cluster_marks
from strata.viewer.state.collective_overlay import OverlayPlan
from strata.viewer.state.lod import RowStrip, counter_strip, merge_strips, row_strip, spaced_labels
from strata.viewer.state.rows import Row
from strata.viewer.style import Palette, qcolor, ui_font

__all__ = ["MARK_CLUSTER_PX", "TimelinePainter", "cluster_marks"]

#: A row whose visible events are fewer than (data width / this) is drawn with rectangles.
_MIN_PX_PER_RECT = 4.0
#: Most rectangles per frame (measured: 20 k thin rects ≈ 4 ms, 20 k 3×14 px ≈ 12 ms here).
_RECT_BUDGET = 12_000
#: Boxes at least this wide get a label; at least this wide get an outline.
_LABEL_MIN_PX = 26.0
_OUTLINE_MIN_PX = 5.0
_MAX_LABELS = 1500
#: Dense rows with at most this many visible events are scanned for boxes wide enough to label.
_WIDE_SCAN_LIMIT = 200_000


class TimelinePainter:
    """Draws a :class:`Frame`; keeps only caches (palettes, elided labels)."""

    def __init__(self) -> None:
        self._palettes: dict[tuple[int, str], Palette] = {}
        self._elided: dict[tuple[str, int], str] = {}
        self._chrome = ChromePainter()
        self._buffer: np.ndarray | None = None
        self._data_key: tuple | None = None
        self._data_refs: tuple = ()
        self._rect_jobs: list = []
        self._strip_memo: dict[tuple, RowStrip] = {}
        self._lod_cache: dict[tuple, tuple] = {}
        self._overlays = OverlayPainter()
        self.set_font(None)

    def set_font(self, base: QFont | None) -> None:
        """Size the labels from ``base`` (the widget's font; None: the application's)."""
        self._label_font = ui_font(11 / 12, base=base)
        self._label_metrics = QFontMetrics(self._label_font)
        self._elided.clear()
        self._chrome.set_font(base)
        self._overlays.set_font(base)

    @property
    def mark_clusters(self) -> list[tuple[float, float, int]]:
        """The outlier marks of the last frame: ``(x, y, count)`` per drawn mark."""
        return self._overlays.mark_clusters

    @property
    def collective_plan(self) -> OverlayPlan | None:
        """What the last frame drew of the collectives (None: nothing to draw)."""
        return self._overlays.collective_plan

    @property
    def label_font(self) -> QFont:
        """Return the font of the labels inside event boxes."""
        return self._label_font

    def reset(self) -> None:
        """Drop caches that depend on the data (call when the reports change)."""
        self._palettes.clear()
        self._chrome.reset()
        self._data_key = None
        self._lod_cache.clear()

    # -- colours -------------------------------------------------------------------------

    def colors(
        self, report_index: int, name: str, table: SliceTable, index: np.ndarray
    ) -> np.ndarray:
        """Return 0xAARRGGBB (uint32) per event ``index`` of ``table``."""
        key = (report_index, name)
        palette = self._palettes.get(key)
        if palette is None:
            palette = self._palettes[key] = Palette(table.labels)
        argb = palette.colors(table.label_ids[index])
        if table.argb is not None:
            explicit = table.argb[index]
            argb = np.where(explicit != -1, (explicit & 0xFFFFFFFF) | 0xFF000000, argb).astype(
                np.uint32
            )
        return argb

    # -- the frame -----------------------------------------------------------------------

    def paint(self, p: QPainter, frame: Frame) -> None:
        """Paint the whole widget."""
        # Data image, header image, ruler and scroll bar cover the widget; only the corner
        # right of the pinned rows is left (a full-widget fill cost ~1 ms per frame).
        p.fillRect(
            frame.width - frame.scrollbar_px,
            frame.pinned_y,
            frame.scrollbar_px,
            frame.scroll_y - frame.pinned_y,
            qcolor(frame.theme.header_bg),
        )
        placed = frame.placed_rows()
        rect_jobs = self._paint_data(p, frame, placed)
        self._paint_rects(p, frame, rect_jobs)
        self._overlays.paint(p, frame, placed)
        self._chrome.paint(p, frame, placed)

    def _paint_data(self, p: QPainter, frame: Frame, placed: list) -> list:
        """Fill the row image (backgrounds + LOD rows); return the rows to draw exactly.

        The image has the target's device pixels (``frame.pixel_ratio`` per logical pixel):
        at 200 % scaling a logical-size image would be stretched and blurred.
        """
        theme = frame.theme
        w, h = frame.image_size
        row_of = frame.image_row
        key = (
            frame.t0_ns,
            frame.t1_ns,
            frame.width,
            frame.height,
            frame.layout_version,
            frame.scroll_px,
            frame.pinned_height_px,
            frame.emphasis_version,
            tuple(frame.offsets_ns),
            frame.data_version,
            frame.theme,
            frame.pixel_ratio,
        )
        if key == self._data_key and self._buffer is not None:
            # Hover and selection repaints: the rows did not change, only the overlays.
            self._draw_buffer(p, frame)
            return self._rect_jobs
        if self._buffer is None or self._buffer.shape != (h, w):
            self._buffer = np.empty((h, w), dtype=np.uint32)
        img = self._buffer
        covered = 0
        # LOD columns sit on a grid fixed per zoom level (column c starts at c * ns_per_col), so
        # a pan reuses the columns it keeps and reduces only the new ones (off by < 1 px).
        ns_per_col = frame.ns_per_px / frame.pixel_ratio
        grid = (ns_per_col, math.floor(frame.t0_ns / ns_per_col), w)
        if len(self._lod_cache) > 1024:
            self._lod_cache.clear()
        candidates = []
        self._strip_memo = {}
        for slot, (row, y, pinned) in enumerate(placed):
            y0, y1 = frame.clip_row(y, row.height_px, pinned)
            if y1 <= y0:
                continue
            bg = {"report": theme.report_row, "group": theme.group_row}.get(row.kind)
            if bg is None:
                bg = theme.row_odd if slot % 2 else theme.row_even
            img[row_of(y0) : row_of(y1)] = bg
            covered = max(covered, row_of(y1))
            if y + row.height_px - 1 < y1:  # a one-pixel line: its device rows
                bottom = y + row.height_px
                img[row_of(bottom - 1) : max(row_of(bottom), row_of(bottom - 1) + 1)] = (
                    theme.separator
                )
            if row.track is None and not row.summary:
                continue
            parts = self._visible_parts(frame, row)
            if parts and parts[0][1].values is not None:
                # A counter row (or a folded group of them): an area chart of its first part.
                self._fill_counter(frame, img, grid, row, y, y0, y1, parts[0])
                continue
            if row.track is None:
                self._fill_strip(frame, img, grid, row, y, y0, y1, parts)
                continue
            count = sum(hi - lo for _n, _t, lo, hi in parts)
            candidates.append((count, row, y, y0, y1, parts))
        if frame.pinned_height_px and frame.scroll_y - 3 >= frame.pinned_y:
            img[row_of(frame.scroll_y - 3) : row_of(frame.scroll_y)] = theme.pin_area_edge
        img[max(covered, 0) :] = theme.background
        rect_jobs, budget = [], _RECT_BUDGET
        for count, row, y, y0, y1, parts in sorted(candidates, key=lambda c: c[0]):
            if count <= w / _MIN_PX_PER_RECT and count <= budget:
                budget -= count
                full = [(n, t, np.arange(lo, hi)) for n, t, lo, hi in parts]
                rect_jobs.append((row, y, y0, y1, full))
                continue
            self._fill_strip(frame, img, grid, row, y, y0, y1, parts)
            if count <= _WIDE_SCAN_LIMIT:
                wide = self._wide_events(frame, row, parts)
                if wide:
                    rect_jobs.append((row, y, y0, y1, wide))
        self._draw_buffer(p, frame)
        self._data_key, self._rect_jobs = key, rect_jobs
        # Holding the keyed objects keeps their ids from being reused by new ones.
        self._data_refs = (frame.rows, frame.pinned, frame.highlights, frame.tints, frame.tables)
        return rect_jobs

    def _draw_buffer(self, p: QPainter, frame: Frame) -> None:
        """Draw the row image at the event area, one image pixel per device pixel."""
        h, w = self._buffer.shape
        image = QImage(self._buffer.data, w, h, w * 4, QImage.Format.Format_RGB32)
        image.setDevicePixelRatio(frame.pixel_ratio)
        p.drawImage(QPointF(frame.data_x, frame.pinned_y), image)

    @property
    def row_image(self) -> QImage | None:
        """Return a copy of the last row image (device pixels, with its pixel ratio), or None."""
        if self._buffer is None or self._data_key is None:
            return None
        h, w = self._buffer.shape
        image = QImage(self._buffer.data, w, h, w * 4, QImage.Format.Format_RGB32).copy()
        image.setDevicePixelRatio(self._data_key[-1])
        return image

    def _wide_events(self, frame: Frame, row: Row, parts: list) -> list:
        """Events of a dense row wide enough for a label: drawn exactly over the strip."""
        wide = []
        least_ns = _LABEL_MIN_PX * frame.ns_per_px
        for name, table, lo, hi in parts:
            index = lo + np.flatnonzero(table.end_ns[lo:hi] - table.start_ns[lo:hi] >= least_ns)
            if len(index):
                wide.append((name, table, index[:_MAX_LABELS]))
        return wide

    def _visible_parts(self, frame: Frame, row: Row) -> list:
        tables = frame.tables[row.report_index]
        offset = frame.offsets_ns[row.report_index]
        parts = []
        for name, track_id in row.draw_parts:
            table = tables.get(name)
            if table is None:
                continue
            # The first pixel column starts up to one pixel before t0: an event ending in
            # that sliver colours it (as it does when a pan reuses that column).
            t0 = frame.t0_ns - offset - int(np.ceil(frame.ns_per_px))
            lo, hi = table.window(track_id, t0, frame.t1_ns - offset)
            if hi > lo:
                parts.append((name, table, lo, hi))
        return parts

    def _part_strip(self, report_index, name, table, lo, hi, offset, grid) -> RowStrip:
        """Reduce one part to the frame's columns, reusing columns of the previous frame."""

        def reduce(edges: np.ndarray) -> tuple:
            strip = row_strip(table, lo, hi, edges)
            return strip.alpha, strip.event

        track_id = int(np.searchsorted(table.track_offsets, lo, side="right")) - 1
        key = (report_index, name, track_id)
        alpha, event = self._grid_columns(key, grid, offset, reduce)
        return RowStrip(alpha, event, np.zeros(len(alpha), np.int8))

    def _grid_columns(self, key, grid, offset, reduce) -> tuple:
        """Per-column arrays of one part, ``reduce(edges_ns)``, on the frame's column grid.

        A pan keeps most columns of the previous frame: only the new ones are reduced.
        """
        ns_per_px, c0, width = grid

        def columns(first: int, last: int) -> tuple:
            index = np.arange(first, last + 1, dtype=np.float64)
            return reduce(np.rint(index * ns_per_px).astype(np.int64) - np.int64(offset))

        cached = self._lod_cache.get(key)
        if cached is not None and cached[0] == (ns_per_px, offset):
            start, arrays = cached[1], cached[2]
            keep_lo, keep_hi = max(c0, start), min(c0 + width, start + len(arrays[0]))
            if keep_hi - keep_lo > width // 4:
                pieces = [columns(c0, keep_lo)] if c0 < keep_lo else []
                pieces.append(tuple(a[keep_lo - start : keep_hi - start] for a in arrays))
                if keep_hi < c0 + width:
                    pieces.append(columns(keep_hi, c0 + width))
                arrays = tuple(np.concatenate(same) for same in zip(*pieces, strict=True))
                self._lod_cache[key] = ((ns_per_px, offset), c0, arrays)
                return arrays
        arrays = columns(c0, c0 + width)
        self._lod_cache[key] = ((ns_per_px, offset), c0, arrays)
        return arrays

    def _fill_strip(self, frame, img, grid, row, y, y0, y1, parts) -> None:
        if not parts:
            return
        report_index = row.report_index
        offset = frame.offsets_ns[report_index]
        strips = []
        for k, (name, table, lo, hi) in enumerate(parts):
            # "All streams" and each stream share parts: reduce each part once per frame.
            memo_key = (report_index, name, lo, hi)
            strip = self._strip_memo.get(memo_key)
            if strip is None:
                strip = self._part_strip(report_index, name, table, lo, hi, offset, grid)
                self._strip_memo[memo_key] = strip
            strips.append(RowStrip(strip.alpha, strip.event, np.full_like(strip.part, k)))
        strip = merge_strips(strips)
        colors = np.zeros(len(strip.alpha), dtype=np.uint32)
        for k, (name, table, _lo, _hi) in enumerate(parts):
            sel = np.flatnonzero((strip.part == k) & (strip.event >= 0))
            if len(sel):
                events = strip.event[sel]
                argb = self.colors(report_index, name, table, events)
                colors[sel] = _emphasis(frame, report_index, name, argb, events)
        bg = img[frame.image_row(y0), 0]
        line = _blend(np.uint32(bg), colors, strip.alpha)
        inset = 2 if row.track is not None else 5
        inset_top, inset_bottom = y + inset, y + row.height_px - inset
        a, b = max(y0, inset_top), min(y1, inset_bottom)
        if b > a:
            img[frame.image_row(a) : frame.image_row(b)] = line

    def _fill_counter(self, frame, img, grid, row, y, y0, y1, part) -> None:
        """Draw a counter as an area chart: the mean per pixel solid, up to the peak dimmed.

        Scaled to the row by the track's ``scale`` (analysis.counters); the columns come
        from :func:`viewer.state.lod.counter_strip` on the frame's grid (a pan reduces only
        new columns).
        """
        name, table, lo, hi = part
        report_index = row.report_index
        track_id = int(np.searchsorted(table.track_offsets, lo, side="right")) - 1

        def reduce(edges: np.ndarray) -> tuple:
            # The window of these columns, not of the view: a column kept across pans is
            # then the one a fresh paint computes.
            first, last = table.window(track_id, int(edges[0]), int(edges[-1]) + 1)
            strip = counter_strip(table, first, last, edges)
            return strip.peak, strip.mean

        key = ("counter", report_index, name, track_id)
        peak, mean = self._grid_columns(key, grid, frame.offsets_ns[report_index], reduce)
        inset = 2 if row.track is not None else 4
        # In the row image's device rows from here on.
        row_of = frame.image_row
        top, bottom = row_of(y + inset), row_of(y + row.height_px - inset)
        a, b = max(row_of(y0), top), min(row_of(y1), bottom)
        if b <= a:
            return
        # Pixels filled from the bottom; any non-zero value shows at least one pixel.
        height, scale = bottom - top, float(table.scale[track_id])
        mean_px = np.ceil(np.clip(mean * (height / scale), 0.0, height)).astype(np.int16)
        peak_px = np.ceil(np.clip(peak * (height / scale), 0.0, height)).astype(np.int16)
        levels = (bottom - np.arange(a, b, dtype=np.int16))[:, None]
        code = (levels <= peak_px).view(np.uint8) + (levels <= mean_px).view(np.uint8)
        color = self.colors(report_index, name, table, np.array([lo]))[:1]
        bg = np.uint32(img[row_of(y0), 0])
        palette = np.array([bg, _blend(bg, color, np.array([0.4], np.float32))[0], color[0]])
        img[a:b] = palette[code]

    def _paint_rects(self, p: QPainter, frame: Frame, jobs: list) -> None:
        if not jobs:
            return
        rects, colors, labels = [], [], []
        for row, y, y0, y1, parts in jobs:
            row_labels = len(labels)
            track = row.track
            offset = frame.offsets_ns[track.report_index]
            origin = frame.t0_ns - offset
            for name, table, index in parts:
                x0 = frame.data_x + (table.start_ns[index] - origin) / frame.ns_per_px
                x1 = frame.data_x + (table.end_ns[index] - origin) / frame.ns_per_px
                x0 = np.maximum(x0, frame.data_x - 2.0)
                x1 = np.minimum(x1, frame.data_x + frame.data_width + 2.0)
                width = np.maximum(x1 - x0, 1.0)
                block = np.empty((len(index), 4), dtype=np.float64)
                block[:, 0], block[:, 2] = x0, width
                block[:, 1], block[:, 3] = y + 2, row.height_px - 4
                argb = self.colors(track.report_index, name, table, index)
                argb = _emphasis(frame, track.report_index, name, argb, index)
                rects.append(block)
                colors.append(argb)
                wide = np.flatnonzero(width >= _LABEL_MIN_PX)
                if len(wide):
                    labels.append((table, index[wide], block[wide], argb[wide], y0, y1))
            labels[row_labels:] = _spaced(labels[row_labels:], frame)
        if not rects:
            return
        all_rects = np.concatenate(rects)
        all_colors = np.concatenate(colors)
        order = np.argsort(all_colors, kind="stable")
        all_rects = np.ascontiguousarray(all_rects[order])
        all_colors = all_colors[order]
        cuts = np.flatnonzero(np.diff(all_colors)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(all_colors)]))
        p.save()
        p.setClipRect(frame.data_x, frame.pinned_y, frame.data_width, frame.height)
        p.setPen(Qt.PenStyle.NoPen)
        base = all_rects.ctypes.data
        for s, e in zip(starts.tolist(), ends.tolist(), strict=False):
            p.setBrush(qcolor(int(all_colors[s])))
            p.drawRects(shiboken6.wrapInstance(base + s * 32, QRectF), e - s)
        wide = np.ascontiguousarray(all_rects[all_rects[:, 2] >= _OUTLINE_MIN_PX])
        if len(wide):
            wide[:, 0] += 0.5
            wide[:, 1] += 0.5
            wide[:, 2] -= 1.0
            wide[:, 3] -= 1.0
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(qcolor(0x66000000), 1.0))
            p.drawRects(shiboken6.wrapInstance(wide.ctypes.data, QRectF), len(wide))
        self._paint_labels(p, frame, labels)
        p.restore()

    def _paint_labels(self, p: QPainter, frame: Frame, labels: list) -> None:
        p.setFont(self._label_font)
        drawn = 0
        dark, light = qcolor(frame.theme.box_text), qcolor(frame.theme.box_text_light)
        left, right = frame.data_x, frame.data_x + frame.data_width
        for table, index, block, argb, y0, y1 in labels:
            names = table.labels
            for i, (x, y, w, h) in enumerate(block.tolist()):
                x0, x1 = max(x, left), min(x + w, right)
                if x1 - x0 < _LABEL_MIN_PX or y < y0 - 1 or y + h > y1 + 1:
                    continue
                label_id = int(table.label_ids[index[i]])
                if label_id < 0 or label_id >= len(names) or names[label_id] is None:
                    continue
                text = self._elide(str(names[label_id]), int(x1 - x0 - 6))
                if not text:
                    continue
                p.setPen(dark if _is_light(int(argb[i])) else light)
                p.drawText(QRectF(x0 + 3, y, x1 - x0 - 6, h), Qt.AlignmentFlag.AlignVCenter, text)
                drawn += 1
                if drawn >= _MAX_LABELS:
                    return

    def _elide(self, text: str, width_px: int) -> str:
        bucket = max(0, width_px // 8 * 8)
        key = (text, bucket)
        cached = self._elided.get(key)
        if cached is None:
            if len(self._elided) > 50_000:
                self._elided.clear()
            cached = self._label_metrics.elidedText(text, Qt.TextElideMode.ElideRight, bucket)
            # A label of one or two letters and an ellipsis says nothing: leave the box bare.
            if cached != text and len(cached.rstrip("…").rstrip(".")) < 4:
                cached = ""
            self._elided[key] = cached
        return cached


def _spaced(labels: list, frame: Frame) -> list:
    """One row's label jobs (one per part) less the labels that would overlap another."""
    if not labels:
        return labels
    boxes = np.concatenate([block for _table, _index, block, _argb, _y0, _y1 in labels])
    x0 = np.maximum(boxes[:, 0], frame.data_x)
    x1 = np.minimum(boxes[:, 0] + boxes[:, 2], frame.data_x + frame.data_width)
    fits = x1 - x0 >= _LABEL_MIN_PX  # what _paint_labels would draw at all
    keep = np.zeros(len(boxes), dtype=bool)
    keep[fits] = spaced_labels(x0[fits], x1[fits])
    out, at = [], 0
    for table, index, block, argb, y0, y1 in labels:
        mask = keep[at : at + len(block)]
        at += len(block)
        if mask.any():
            out.append((table, index[mask], block[mask], argb[mask], y0, y1))
    return out


def _blend(bg: np.uint32, colors: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Blend per-pixel ``colors`` over one background colour by ``alpha`` (0xFFRRGGBB)."""
    a = alpha.astype(np.float32)
    out = np.full(len(colors), 0xFF000000, dtype=np.uint32)
    for shift in (16, 8, 0):
        c = ((colors >> shift) & 0xFF).astype(np.float32)
        b = float((int(bg) >> shift) & 0xFF)
        out |= (b + (c - b) * a).astype(np.uint32) << shift
    return out


def _emphasis(
    frame: Frame, report_index: int, table: str, argb: np.ndarray, events: np.ndarray
) -> np.ndarray:
    """The colours of ``events`` once tinted (a diff) and highlighted (a name): a tinted
    event takes its tint, an untinted one of a tinted table dims; then the events a
    highlight does not emphasise dim."""
    codes = frame.tints.codes.get((report_index, table))
    if codes is not None:
        code = codes[events]
        palette = np.array([0, *frame.tints.colors], dtype=np.uint32)
        argb = np.where(code > 0, palette[code], _dim(argb, 0.3)).astype(np.uint32)
    mask = frame.highlights.get((report_index, table))
    if mask is not None:
        argb = np.where(mask[events], argb, _dim(argb, 0.25)).astype(np.uint32)
    return argb


def _dim(argb: np.ndarray, keep: float) -> np.ndarray:
    """Return colours faded toward the dark background (``keep`` of the colour kept)."""
    out = np.full(len(argb), 0xFF000000, dtype=np.uint32)
    for shift in (16, 8, 0):
        c = ((argb >> shift) & 0xFF).astype(np.float32)
        out |= (30 + (c - 30) * keep).astype(np.uint32) << shift
    return out


def _is_light(argb: int) -> bool:
    r, g, b = (argb >> 16) & 0xFF, (argb >> 8) & 0xFF, argb & 0xFF
    return 0.299 * r + 0.587 * g + 0.114 * b > 140
