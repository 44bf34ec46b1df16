"""The application icon, drawn with QPainter: stacked timeline strata on a dark tile."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

__all__ = ["make_app_icon"]

# (row, start, end) in units of the tile, one colour per row: CPU, CUDA API, NVTX, kernels
_BARS = (
    (0, 0.10, 0.55, "#7cb342"),
    (0, 0.62, 0.90, "#7cb342"),
    (1, 0.18, 0.40, "#42a5f5"),
    (1, 0.48, 0.80, "#42a5f5"),
    (2, 0.10, 0.90, "#ab47bc"),
    (3, 0.30, 0.52, "#ff7043"),
    (3, 0.58, 0.86, "#ff7043"),
)


def _draw(size_px: int) -> QPixmap:
    pixmap = QPixmap(size_px, size_px)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#263238"))
    radius_px = size_px * 0.18
    painter.drawRoundedRect(QRectF(0, 0, size_px, size_px), radius_px, radius_px)
    row_px = size_px * 0.16
    gap_px = size_px * 0.05
    top_px = (size_px - 4 * row_px - 3 * gap_px) / 2
    for row, start, end, color in _BARS:
        painter.setBrush(QColor(color))
        y_px = top_px + row * (row_px + gap_px)
        rect = QRectF(start * size_px, y_px, (end - start) * size_px, row_px)
        painter.drawRoundedRect(rect, row_px * 0.2, row_px * 0.2)
    painter.end()
    return pixmap


def make_app_icon() -> QIcon:
    """Return Strata's icon at the usual sizes."""
    icon = QIcon()
    for size_px in (16, 24, 32, 48, 64, 128, 256):
        icon.addPixmap(_draw(size_px))
    return icon
