"""Render the timeline headless to a ``QImage`` (``main.py render`` and the tests)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from PySide6.QtCore import QPoint, QSize
from PySide6.QtGui import QImage, QPaintDevice
from PySide6.QtWidgets import QApplication

from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import Track
from strata.viewer.timeline import TimelineWidget

__all__ = ["ensure_application", "render_into", "render_to_image"]


def ensure_application() -> QApplication:
    """Return the running QApplication, creating one (offscreen works) if needed."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([])
    return app


def render_to_image(
    widget_or_data: TimelineWidget | tuple[Sequence[Report], Sequence[Track], Sequence[int]],
    size: tuple[int, int] | QSize = (1600, 900),
) -> QImage:
    """Paint a timeline into a new ``QImage`` of ``size`` (width, height).

    Parameters
    ----------
    widget_or_data
        A configured :class:`TimelineWidget` (resized to ``size`` while painting, then put
        back), or ``(reports, tracks, offsets_ns)`` for a fresh widget fitted to all events.
    size
        Image size in px.
    """
    width, height = _size(size)
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    with _sized(widget_or_data, (width, height)) as widget:
        # PySide6 needs the explicit target offset (design.md pitfalls).
        widget.render(image, QPoint(0, 0))
    return image


def render_into(
    device: QPaintDevice,
    widget_or_data: TimelineWidget | tuple[Sequence[Report], Sequence[Track], Sequence[int]],
    size: tuple[int, int] | QSize = (1600, 900),
) -> None:
    """Paint a timeline of ``size`` onto any paint device (an SVG generator, a printer):
    the picture of :func:`render_to_image`."""
    with _sized(widget_or_data, _size(size)) as widget:
        widget.render(device, QPoint(0, 0))


def _size(size: tuple[int, int] | QSize) -> tuple[int, int]:
    return (size.width(), size.height()) if isinstance(size, QSize) else tuple(size)


@contextmanager
def _sized(widget_or_data, size: tuple[int, int]) -> Iterator[TimelineWidget]:
    """Yield the widget to paint at ``size``: a given one resized (then put back), or a
    fresh one fitted to all events of ``(reports, tracks, offsets_ns)`` (then dropped)."""
    ensure_application()
    width, height = size
    if isinstance(widget_or_data, TimelineWidget):
        widget, owned = widget_or_data, False
    else:
        reports, tracks, offsets = widget_or_data
        widget, owned = TimelineWidget(), True
        reports = reports if isinstance(reports, ReportSet) else ReportSet(reports)
        if tracks is None:
            tracks = reports.tracks()
        widget.resize(width, height)
        widget.state.set_data(reports, list(tracks), list(offsets))
    old_size = widget.size()
    view = widget.state.view_range()
    widget.resize(width, height)
    widget.state.set_view_range(*view)
    try:
        yield widget
    finally:
        if owned:
            widget.deleteLater()
        else:
            widget.resize(old_size)
