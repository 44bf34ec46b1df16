"""What the timeline draws over its rows: the selection, the collectives' waits and links,
the selected event and its partner, the outlier marks, the hover line and the pinned rows'
edge (one paint pass over the rows :class:`~viewer.painter.TimelinePainter` drew).
"""

from __future__ import annotations

import math

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QPainter, QPen, QPolygonF

from strata.viewer.events import EventRef
from strata.viewer.frame import Frame
from strata.viewer.state.collective_overlay import OverlayPlan, plan_overlay
from strata.viewer.style import qcolor, ui_font

__all__ = ["MARK_CLUSTER_PX", "OverlayPainter", "cluster_marks"]

#: Outlier marks closer than this (px, a mark's width) on one row are one mark with a count:
#: zoomed out, hundreds of them otherwise merge into one red bar.
MARK_CLUSTER_PX = 9.0


class OverlayPainter:
    """Draws a :class:`Frame`'s overlays; keeps what the last frame drew of them."""

    def __init__(self) -> None:
        #: The outlier marks of the last frame: ``(x, y, count)`` per drawn mark.
        self.mark_clusters: list[tuple[float, float, int]] = []
        #: What the last frame drew of the collectives (None: nothing to draw).
        self.collective_plan: OverlayPlan | None = None
        self.set_font(None)

    def set_font(self, base: QFont | None) -> None:
        """Size the marks' counts from ``base`` (the widget's font; None: the application's)."""
        self._count_font = ui_font(9 / 12, bold=True, base=base)
        self._count_metrics = QFontMetrics(self._count_font)

    def paint(self, p: QPainter, frame: Frame, placed: list) -> None:
        """Paint the overlays over the rows ``placed`` (:meth:`Frame.placed_rows`)."""
        theme = frame.theme
        p.save()
        p.setClipRect(frame.data_x, frame.pinned_y, frame.data_width, frame.height)
        if frame.selection is not None:
            a, b = sorted(frame.selection)
            x0, x1 = frame.x_of(a), frame.x_of(b)
            # An area selection shades its rows only; a time selection every row.
            bands = [(frame.pinned_y, frame.height)] if not frame.selection_rows else [
                (y, y + row.height_px) for row, y, _pinned in placed
                if row.track is not None and row.track.key in frame.selection_rows
            ]  # fmt: skip
            p.setPen(QPen(qcolor(theme.selection_edge), 1.0))
            for top, bottom in bands:
                p.fillRect(QRectF(x0, top, max(x1 - x0, 1.0), bottom - top),
                           qcolor(theme.selection_fill))  # fmt: skip
                p.drawLine(QPointF(x0, top), QPointF(x0, bottom))
                p.drawLine(QPointF(x1, top), QPointF(x1, bottom))
        self._paint_collectives(p, frame, placed)
        boxes = []
        for ref in (frame.selected, frame.partner):
            box = None if ref is None else self._event_box(frame, placed, ref)
            boxes.append(box)
            if box is not None:
                p.setPen(QPen(qcolor(theme.highlight_edge), 2.0))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(box)
        if boxes[0] is not None and boxes[1] is not None:
            a, b = boxes
            p.setPen(QPen(qcolor(theme.link_line), 1.5))
            start = QPointF(a.left(), a.bottom() if a.top() < b.top() else a.top())
            end = QPointF(b.left(), b.top() if a.top() < b.top() else b.bottom())
            p.drawLine(start, end)
        self._paint_marks(p, frame, placed)
        if frame.hover_x is not None:
            p.setPen(QPen(qcolor(theme.cursor_line), 1.0))
            p.drawLine(QPointF(frame.hover_x, frame.pinned_y), QPointF(frame.hover_x, frame.height))
        p.restore()
        if frame.pinned_height_px:
            p.fillRect(0, frame.scroll_y - 3, frame.width, 3, qcolor(theme.pin_area_edge))

    def _paint_collectives(self, p: QPainter, frame: Frame, placed: list) -> None:
        """Shade each rank's wait in the collectives in view and join their ranks
        (:mod:`viewer.state.collective_overlay`; merged when many are in view)."""
        overlay = frame.collectives
        self.collective_plan = None
        if overlay is None or not len(overlay):
            return
        if tuple(frame.offsets_ns[: len(overlay.offsets_ns)]) != overlay.offsets_ns:
            return  # matched on other offsets: a new match is on its way
        rows: dict[tuple[int, str, int], tuple[float, float, bool]] = {}
        for row, y, pinned in placed:
            track = row.track
            if track is None:
                continue
            y0, y1 = frame.clip_row(y, row.height_px, pinned)
            if y1 - y0 < 4:
                continue
            is_all = track.kind == "gpu_all"  # a stream row wins over "all streams"
            for name, track_id in track.parts:
                lane = (track.report_index, name, track_id)
                if lane not in rows or (rows[lane][2] and not is_all):
                    rows[lane] = (float(y), float(y + row.height_px), is_all)
        lanes = {lane: (top, bottom) for lane, (top, bottom, _all) in rows.items()}
        plan = plan_overlay(overlay, frame.t0_ns, frame.ns_per_px, frame.data_x,
                            frame.data_width, lanes)  # fmt: skip
        self.collective_plan = plan
        theme = frame.theme
        if len(plan.waits):
            waits = np.ascontiguousarray(plan.waits, dtype=np.float64)
            rects = shiboken6.wrapInstance(waits.ctypes.data, QRectF)
            p.setPen(Qt.PenStyle.NoPen)  # the wait dimmed, then hatched: the rank idles
            p.setBrush(qcolor(theme.collective_wait_dim))
            p.drawRects(rects, len(waits))
            p.setBrush(QBrush(qcolor(theme.collective_wait), Qt.BrushStyle.BDiagPattern))
            p.drawRects(rects, len(waits))
        if plan.links or plan.arrivals:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(qcolor(theme.collective_link), 1.0))
            for points in plan.links:
                p.drawPolyline(QPolygonF([QPointF(x, y) for x, y in points]))
            dashed = QPen(qcolor(theme.collective_link), 1.0, Qt.PenStyle.DashLine)
            p.setPen(dashed)
            for x, top, bottom in plan.arrivals:
                p.drawLine(QPointF(x, top), QPointF(x, bottom))

    def _event_box(self, frame: Frame, placed: list, ref: EventRef) -> QRectF | None:
        offset = frame.offsets_ns[ref.report_index]
        candidates = []
        for row, y, _pinned in placed:
            track = row.track
            if track is None or track.report_index != ref.report_index:
                continue
            table = frame.tables[ref.report_index].get(ref.table)
            if table is None:
                continue
            for name, track_id in track.parts:
                lo, hi = table.bounds(track_id) if name == ref.table else (0, 0)
                if lo <= ref.index < hi:
                    candidates.append((track.kind == "gpu_all", y, row.height_px))
        if not candidates:
            return None
        _all, y, h = min(candidates)
        x0 = frame.x_of(ref.start_ns + offset)
        x1 = max(frame.x_of(ref.end_ns + offset), x0 + 2.0)
        return QRectF(x0, y + 1, x1 - x0, h - 2)

    def _paint_marks(self, p: QPainter, frame: Frame, placed: list) -> None:
        self.mark_clusters = []
        if not frame.marks:
            return
        points = []
        for ref in frame.marks:
            box = self._event_box(frame, placed, ref)
            if box is not None:
                points.append((box.left(), box.top() - 1))
        self.mark_clusters = clusters = cluster_marks(points)
        color = qcolor(frame.theme.outlier_mark)
        # A dark edge: a red mark over a green event differs in hue alone, which a
        # deuteranope does not see; the edge differs in lightness over any event colour.
        edge = QPen(qcolor(frame.theme.outlier_edge), 1.0)
        p.setFont(self._count_font)
        for x, y, count in clusters:
            p.setPen(edge)
            p.setBrush(color)
            p.drawPolygon(QPolygonF([QPointF(x - 4, y), QPointF(x + 4, y), QPointF(x, y + 6)]))
            if count > 1:  # a red pill with the count, readable over any event colour
                text = f"{count:,}"
                pill = QRectF(x + 5, y, self._count_metrics.horizontalAdvance(text) + 4,
                              self._count_metrics.height())  # fmt: skip
                p.drawRoundedRect(pill, 3, 3)
                p.setPen(qcolor(frame.theme.box_text))
                p.drawText(pill, Qt.AlignmentFlag.AlignCenter, text)


def cluster_marks(
    points: list[tuple[float, float]], gap_px: float = MARK_CLUSTER_PX
) -> list[tuple[float, float, int]]:
    """Group mark positions ``(x, y)``: on one row (same ``y``), a mark less than ``gap_px``
    right of the previous one joins its cluster. Return ``(x of the first, y, count)`` per
    cluster, by row then x."""
    clusters: list[list] = []
    last_x = -math.inf
    for x, y in sorted(points, key=lambda point: (point[1], point[0])):
        if clusters and clusters[-1][1] == y and x - last_x < gap_px:
            clusters[-1][2] += 1
        else:
            clusters.append([x, y, 1])
        last_x = x
    return [(x, y, count) for x, y, count in clusters]
