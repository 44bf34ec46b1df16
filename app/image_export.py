"""File → Export Image and Edit → Copy Image: the timeline as ``main.py render`` draws it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect, QSize
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QWidget

from strata.analysis.cache import cache_root
from strata.analysis.errors import StrataError
from strata.analysis.outputs import atomic_file, check_file_target, check_output
from strata.viewer.render import render_into, render_to_image
from strata.viewer.timeline import TimelineWidget

__all__ = [
    "IMAGE_FILTERS",
    "copy_image",
    "encode_image",
    "export_image",
    "image_dialog_path",
    "svg_bytes",
    "view_image",
]

#: File dialog filters -> the suffix each writes.
IMAGE_FILTERS = {"PNG image (*.png)": ".png", "SVG image (*.svg)": ".svg"}


def view_image(timeline: TimelineWidget) -> QImage:
    """Return the timeline as shown (its size, view, pins), painted as ``render`` paints."""
    return render_to_image(timeline, timeline.size())


def export_image(timeline: TimelineWidget, path: str | Path, inputs: Iterable[str | Path]) -> Path:
    """Write the view to ``path``: SVG for a ``.svg`` name, PNG otherwise.

    The file is written whole or not at all, and never onto, into or around an input.

    Parameters
    ----------
    timeline
        The timeline to paint.
    path
        Where to write.
    inputs
        The open reports' paths (refused as targets, as is the cache folder).

    Raises
    ------
    AnalysisError
        The target overlaps an input, or cannot be written.
    StrataError
        The image cannot be encoded.
    """
    out = check_output(path, inputs, "image", cache=cache_root())
    check_file_target(out, "image")
    if out.suffix.lower() == ".svg":
        data = svg_bytes(timeline)
    else:
        data = encode_image(view_image(timeline), "PNG")
    with atomic_file(out, binary=True) as fh:
        fh.write(data)
    return out


def svg_bytes(timeline: TimelineWidget, title: str = "Strata timeline") -> bytes:
    """Return the view as an SVG document (vector boxes and text; its size in px)."""
    width, height = timeline.width(), timeline.height()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRect(0, 0, width, height))
    generator.setTitle(title)
    render_into(generator, timeline, (width, height))
    buffer.close()
    return bytes(data)


def encode_image(image: QImage, image_format: str = "PNG") -> bytes:
    """Return ``image`` encoded in memory (``PNG``, ``JPG``...).

    Raises
    ------
    StrataError
        Qt cannot encode it (an unknown format, an empty image).
    """
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, image_format):
        raise StrataError(
            f"cannot encode the {image.width()}x{image.height()} image as {image_format}"
        )
    buffer.close()
    return bytes(data)


def copy_image(timeline: TimelineWidget) -> QImage:
    """Put the view on the clipboard as an image; return it."""
    image = view_image(timeline)
    QGuiApplication.clipboard().setImage(image)
    return image


def image_dialog_path(parent: QWidget, folder: str) -> Path | None:
    """Ask where to save the image; the chosen filter's suffix is added when missing."""
    name, chosen = QFileDialog.getSaveFileName(
        parent, "Export Image", str(Path(folder) / "timeline.png"), ";;".join(IMAGE_FILTERS)
    )
    if not name:
        return None
    path = Path(name)
    if path.suffix.lower() not in IMAGE_FILTERS.values():
        path = path.with_name(path.name + IMAGE_FILTERS.get(chosen, ".png"))
    return path
