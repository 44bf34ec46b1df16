"""The frame around the rows: time ruler, row headers (tree, pins) and the scroll bar."""

from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPaintEngine, QPainter, QPolygonF

from strata.analysis.shortnames import distinct_short_labels
from strata.analysis.timefmt import format_duration_ns
from strata.viewer.frame import Frame
from strata.viewer.style import Theme, qcolor, ui_font

__all__ = ["ChromePainter", "ruler_anchor", "ruler_ticks", "tick_label"]


def ruler_ticks(
    t0_ns: int, t1_ns: int, width_px: int, min_px: float = 90.0
) -> tuple[int, list[int]]:
    """Return (step in ns, tick times) with a 1-2-5 step at least ``min_px`` apart."""
    span = max(t1_ns - t0_ns, 1)
    target = span * min_px / max(width_px, 1)
    decade = 1
    while True:
        for factor in (1, 2, 5):
            if decade * factor >= target:
                step = decade * factor
                first = -(-t0_ns // step) * step
                return step, list(range(first, t1_ns + 1, step))
        decade *= 10


def tick_label(t_ns: int, step_ns: int) -> str:
    """Return a tick's text in the unit that suits the step (``1.25 s``, ``340 µs``)."""
    for unit, scale, least in (("s", 10**9, 10**8), ("ms", 10**6, 10**5), ("µs", 10**3, 100)):
        if step_ns >= least:
            decimals = max(0, -math.floor(math.log10(step_ns / scale) + 1e-9))
            return f"{t_ns / scale:.{decimals}f} {unit}"
    return f"{t_ns} ns"


def ruler_anchor(ticks: list[int], step_ns: int) -> int:
    """Return the time tick labels count from (0 = absolute labels).

    Absolute labels stay while they are short; deep into a long trace (``275150 ms``) the
    ticks read ``+50 ms`` from an anchor shown once, as Perfetto does.
    """
    if not ticks or max(abs(ticks[0]), abs(ticks[-1])) < 1000 * step_ns:
        return 0
    block = step_ns * 100
    return (ticks[0] // block) * block


class ChromePainter:
    """Paints ruler, headers and scroll bar; caches the header column between pans."""

    def __init__(self) -> None:
        self._header_image: QImage | None = None
        self._header_key: tuple | None = None
        self.set_font(None)

    def set_font(self, base: QFont | None) -> None:
        """Size the ruler and header text from ``base`` (None: the application's font)."""
        self._label_font = ui_font(11 / 12, base=base)
        self._header_font = ui_font(1.0, base=base)
        self._group_font = ui_font(1.0, bold=True, base=base)
        self._report_font = ui_font(13 / 12, bold=True, base=base)
        self._header_image = None

    def reset(self) -> None:
        """Forget the cached header column."""
        self._header_image = None

    @property
    def header_image(self) -> QImage | None:
        """Return the cached header column (device pixels, with its pixel ratio), or None."""
        return self._header_image

    def paint(self, p: QPainter, frame: Frame, placed: list) -> None:
        """Paint headers, ruler and scroll bar over the rows."""
        self._paint_cached_headers(p, frame, placed)
        self._paint_ruler(p, frame)
        self._paint_scrollbar(p, frame)

    def _paint_cached_headers(self, p: QPainter, frame: Frame, placed: list) -> None:
        """Draw the row headers from a cached image: they change on scroll, not on pan/zoom."""
        key = (
            frame.layout_version,
            frame.scroll_px,
            frame.pinned_height_px,
            frame.height,
            frame.theme,
            frame.pixel_ratio,
        )
        ratio = frame.pixel_ratio
        if self._header_key != key or self._header_image is None:
            # In device pixels (the painter scales to them): text as sharp as the rest.
            image = QImage(
                max(1, round(frame.theme.header_width_px * ratio)),
                max(1, round(frame.height * ratio)),
                QImage.Format.Format_RGB32,
            )
            image.setDevicePixelRatio(ratio)
            image.fill(qcolor(frame.theme.header_bg))
            painter = QPainter(image)
            try:
                self._paint_headers(painter, frame, placed)
            finally:
                painter.end()
            self._header_image, self._header_key = image, key
        top = frame.pinned_y
        # A source rectangle is in the image's own (device) pixels.
        source = QRectF(0, top * ratio, self._header_image.width(),
                        self._header_image.height() - top * ratio)  # fmt: skip
        if p.paintEngine().type() == QPaintEngine.Type.SVG:
            # The SVG engine ignores a source rectangle (it would draw the whole column
            # shifted down by ``top``, Export Image's SVG): give it just that part.
            p.drawImage(QPointF(0, top), self._header_image.copy(source.toRect()))
            return
        p.drawImage(QPointF(0, top), self._header_image, source)

    def _paint_headers(self, p: QPainter, frame: Frame, placed: list) -> None:
        theme = frame.theme
        hw = theme.header_width_px
        p.fillRect(0, frame.pinned_y, hw, frame.height, qcolor(theme.header_bg))
        for row, y, pinned in placed:
            y0, y1 = frame.clip_row(y, row.height_px, pinned)
            if y1 <= y0:
                continue
            p.save()
            p.setClipRect(0, y0, hw, y1 - y0)
            if row.kind != "track":
                p.fillRect(
                    0,
                    y,
                    hw,
                    row.height_px,
                    qcolor(theme.report_row if row.kind == "report" else theme.group_row),
                )
            x = 8 + row.depth * theme.indent_px
            if row.kind == "track":
                if pinned:
                    p.fillRect(2, y + 3, 3, row.height_px - 6, qcolor(theme.pin_area_edge))
                p.setFont(self._header_font)
                p.setPen(qcolor(theme.header_text))
                text_rect = QRectF(x + 10, y, hw - x - 14, row.height_px)
                metrics = QFontMetrics(self._header_font)
                full_w = int(text_rect.width())
                label_w = metrics.horizontalAdvance(row.label) + 2 if row.context else full_w
                label_w = min(label_w, full_w)
                p.drawText(
                    text_rect,
                    Qt.AlignmentFlag.AlignVCenter,
                    metrics.elidedText(row.label, Qt.TextElideMode.ElideRight, label_w),
                )
                room = int(text_rect.width()) - label_w - 12
                if row.context and room > 30:
                    p.setFont(self._label_font)
                    p.setPen(qcolor(theme.header_dim))
                    context = QFontMetrics(self._label_font).elidedText(
                        row.context, Qt.TextElideMode.ElideLeft, room
                    )
                    p.drawText(
                        text_rect,
                        Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                        context,
                    )
            else:
                self._paint_disclosure(p, x, y, row.height_px, row.is_collapsed, theme)
                p.setFont(self._report_font if row.kind == "report" else self._group_font)
                p.setPen(qcolor(theme.header_text))
                text_rect = QRectF(x + 14, y, hw - x - 18, row.height_px)
                metrics = QFontMetrics(p.font())
                p.drawText(
                    text_rect,
                    Qt.AlignmentFlag.AlignVCenter,
                    metrics.elidedText(
                        self._shown_label(row, frame),
                        Qt.TextElideMode.ElideRight,
                        int(text_rect.width()),
                    ),
                )
            p.restore()
            p.fillRect(0, y + row.height_px - 1, hw, 1, qcolor(theme.separator))
        p.fillRect(hw - 1, frame.pinned_y, 1, frame.height, qcolor(theme.separator))

    @staticmethod
    def _shown_label(row, frame: Frame) -> str:
        """A report row's label cut around the part where the report labels differ (the
        full name is in the header's tooltip); other rows' labels as they are."""
        if row.kind != "report":
            return row.label
        rows = (*frame.rows.rows, *frame.pinned.rows)
        labels = sorted({r.label for r in rows if r.kind == "report"})
        return dict(zip(labels, distinct_short_labels(labels), strict=True)).get(
            row.label, row.label
        )

    @staticmethod
    def _paint_disclosure(
        p: QPainter, x: float, y: float, h: float, collapsed: bool, theme: Theme
    ) -> None:
        cy = y + h / 2
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(qcolor(theme.header_dim))
        if collapsed:
            pts = [QPointF(x + 2, cy - 4), QPointF(x + 8, cy), QPointF(x + 2, cy + 4)]
        else:
            pts = [QPointF(x, cy - 3), QPointF(x + 8, cy - 3), QPointF(x + 4, cy + 3)]
        p.drawPolygon(QPolygonF(pts))

    def _paint_ruler(self, p: QPainter, frame: Frame) -> None:
        theme = frame.theme
        rh = theme.ruler_height_px
        p.fillRect(0, 0, frame.width, rh, qcolor(theme.ruler_bg))
        p.fillRect(0, rh - 1, frame.width, 1, qcolor(theme.separator))
        step, ticks = ruler_ticks(frame.t0_ns, frame.t1_ns, frame.data_width)
        p.save()
        p.setClipRect(frame.data_x, 0, frame.data_width, rh)
        p.setFont(self._label_font)
        lines = []
        minor = step / 5
        for t in ticks:
            x = frame.x_of(t)
            lines.append(QLineF(x, rh - 9, x, rh - 1))
            for k in range(1, 5):
                xm = frame.x_of(int(t + k * minor))
                lines.append(QLineF(xm, rh - 4, xm, rh - 1))
        p.setPen(qcolor(theme.ruler_tick))
        p.drawLines(lines)
        p.setPen(qcolor(theme.ruler_text))
        anchor = ruler_anchor(ticks, step)
        for t in ticks:
            text = tick_label(t - anchor, step)
            p.drawText(QPointF(frame.x_of(t) + 4, rh - 11), f"+{text}" if anchor else text)
        if frame.selection is not None:
            a, b = sorted(frame.selection)
            x0, x1 = frame.x_of(a), frame.x_of(b)
            text = format_duration_ns(b - a)
            p.fillRect(QRectF(x0, 0, max(x1 - x0, 1.0), rh - 1), qcolor(theme.selection_fill))
            tw = QFontMetrics(self._label_font).horizontalAdvance(text) + 10
            cx = (x0 + x1) / 2
            box = QRectF(cx - tw / 2, 3, tw, rh - 8)
            p.fillRect(box, qcolor(theme.selection_edge))
            p.setPen(qcolor(theme.box_text))
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        p.restore()
        p.setFont(self._label_font)
        p.setPen(qcolor(theme.header_dim))
        span = format_duration_ns(frame.t1_ns - frame.t0_ns)
        where = f"at {tick_label(anchor, step * 100)} · " if anchor else ""
        p.drawText(
            QRectF(8, 0, theme.header_width_px - 16, rh),
            Qt.AlignmentFlag.AlignVCenter,
            f"{where}view {span}",
        )

    def _paint_scrollbar(self, p: QPainter, frame: Frame) -> None:
        x = frame.width - frame.scrollbar_px
        p.fillRect(
            x, frame.scroll_y, frame.scrollbar_px, frame.height, qcolor(frame.theme.header_bg)
        )
        if frame.thumb is not None:
            top, h = frame.thumb
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(qcolor(frame.theme.ruler_tick))
            p.drawRoundedRect(QRectF(x + 2, top + 2, frame.scrollbar_px - 4, h - 4), 3, 3)
