"""The timeline's look: theme colours, fonts, and stable per-name event colours."""

from __future__ import annotations

import colorsys
import zlib
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QGuiApplication

__all__ = [
    "DARK",
    "LIGHT",
    "MEMCPY_COLORS",
    "REPORT_COLORS",
    "THEMES",
    "Palette",
    "Theme",
    "fit_theme",
    "name_argb",
    "report_color",
    "ui_font",
]


@dataclass(frozen=True)
class Theme:
    """Colours (0xAARRGGBB) and sizes of the timeline."""

    background: int = 0xFF1B1D21
    row_even: int = 0xFF1F2125
    row_odd: int = 0xFF23252A
    group_row: int = 0xFF2A2D33
    report_row: int = 0xFF31353D
    separator: int = 0xFF2E3137
    header_bg: int = 0xFF24272C
    header_text: int = 0xFFD5D8DE
    header_dim: int = 0xFF8D939E
    ruler_bg: int = 0xFF26292E
    ruler_text: int = 0xFFC3C7CF
    ruler_tick: int = 0xFF5A606B
    grid_line: int = 0xFF2C2F35
    selection_fill: int = 0x3364A8FF
    selection_edge: int = 0xFF64A8FF
    highlight_edge: int = 0xFFFFFFFF
    link_line: int = 0xFFFFD24A
    outlier_mark: int = 0xFFFF5C5C
    #: The outlier mark's edge: dark, so it stands out from an event of any hue.
    outlier_edge: int = 0xFF101215
    #: A rank's wait in a collective (shaded over its event) and the line joining the ranks.
    collective_wait: int = 0xE6FFE08A
    collective_wait_dim: int = 0x8C000000
    collective_link: int = 0xE6FFFFFF
    cursor_line: int = 0x66FFFFFF
    pin_area_edge: int = 0xFF4A90D9
    box_text: int = 0xFF101215
    box_text_light: int = 0xFFF2F4F7
    header_width_px: int = 256
    ruler_height_px: int = 28
    row_height_px: int = 20
    group_height_px: int = 22
    report_height_px: int = 26
    indent_px: int = 14


DARK = Theme()

#: The light scheme: the same layout, dark text on light rows (event colours unchanged).
LIGHT = Theme(
    background=0xFFFFFFFF,
    row_even=0xFFFAFAFB,
    row_odd=0xFFF1F2F4,
    group_row=0xFFE4E7EB,
    report_row=0xFFD8DCE2,
    separator=0xFFDDE0E4,
    header_bg=0xFFF0F1F3,
    header_text=0xFF1F2328,
    header_dim=0xFF656D76,
    ruler_bg=0xFFE8EAED,
    ruler_text=0xFF24292F,
    ruler_tick=0xFF8C959F,
    grid_line=0xFFE2E4E8,
    selection_fill=0x332F6FD0,
    selection_edge=0xFF2F6FD0,
    highlight_edge=0xFF000000,
    link_line=0xFFB07800,
    outlier_mark=0xFFD62828,
    collective_wait=0xE6202020,
    collective_wait_dim=0x73FFFFFF,
    collective_link=0xE61F2328,
    cursor_line=0x66000000,
    pin_area_edge=0xFF2F6FD0,
)

#: Theme by colour scheme name.
THEMES = {"dark": DARK, "light": LIGHT}

#: One colour per report in the histogram and by-report views: Okabe & Ito's palette,
#: told apart with every common colour-vision deficiency (its black is left out: it
#: vanishes on the dark theme). Cycled past seven reports.
REPORT_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")


def report_color(report_index: int) -> str:
    """Return the ``#RRGGBB`` colour of the report at ``report_index``."""
    return REPORT_COLORS[report_index % len(REPORT_COLORS)]


#: Fixed colours for the copy directions, from Okabe & Ito's palette: host-to-device sky
#: blue and device-to-host orange (nsys's green and red are the one pair deuteranopes and
#: protanopes cannot tell apart), device-to-device yellow, peer-to-peer vermillion; every
#: pair stays apart in a simulated deuteranopia and protanopia (tests/viewer/test_colour_vision.py).
MEMCPY_COLORS = {
    "[CUDA memcpy Host-to-Device]": 0xFF56B4E9,
    "[CUDA memcpy Device-to-Host]": 0xFFE69F00,
    "[CUDA memcpy Device-to-Device]": 0xFFF0E442,
    "[CUDA memcpy Peer-to-Peer]": 0xFFD55E00,
    "[CUDA memset]": 0xFF8B949E,
}

# Fixed colours for kinds whose name says what they are.
_FIXED = {**MEMCPY_COLORS, "CPU sample": 0xFFB4BAC4}


def name_argb(name: str | None) -> int:
    """Return the stable colour of an event name: hue from a CRC of the name.

    Saturation and lightness are fixed (and vary a little with the hash) so that all
    colours sit together on the dark background while neighbours stay distinguishable.
    """
    if name is None:
        return 0xFF7A808A
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    digest = zlib.crc32(name.encode("utf-8", "replace"))
    hue = (digest % 360) / 360.0
    saturation = 0.45 + ((digest >> 9) % 4) * 0.07
    lightness = 0.52 + ((digest >> 13) % 3) * 0.06
    r, g, b = colorsys.hls_to_rgb(hue, lightness, saturation)
    return 0xFF000000 | (int(r * 255) << 16) | (int(g * 255) << 8) | int(b * 255)


class Palette:
    """Per-label colours of one slice table, computed lazily for the labels on screen."""

    def __init__(self, labels: npt.NDArray[np.object_]) -> None:
        self._labels = labels
        self._argb = np.zeros(len(labels) + 1, dtype=np.uint32)

    def colors(self, label_ids: npt.NDArray[np.int32]) -> npt.NDArray[np.uint32]:
        """Return 0xAARRGGBB per label id (-1 = no label gets a neutral grey)."""
        ids = np.where(label_ids < 0, len(self._labels), label_ids)
        found = self._argb[ids]
        missing = np.unique(ids[found == 0])
        for label_id in missing.tolist():
            name = self._labels[label_id] if label_id < len(self._labels) else None
            self._argb[label_id] = name_argb(name)
        if len(missing):
            found = self._argb[ids]
        return found


def ui_font(relative: float = 1.0, bold: bool = False, base: QFont | None = None) -> QFont:
    """Return ``base`` (the application's font by default) scaled by ``relative``.

    Sizes follow the user's font size and the screen's DPI: never fixed pixels. The timeline's
    labels are ``relative`` 11/12 of the application font (11 px at Qt's usual 9 pt, 96 dpi).
    """
    font = QFont(base if base is not None else QGuiApplication.font())
    # A base given in pixels (a style sheet's) has no point size: take the one it resolves to.
    points = font.pointSizeF() if font.pointSizeF() > 0 else QFontInfo(font).pointSizeF()
    font.setPointSizeF(points * relative)
    font.setBold(bold)
    return font


def fit_theme(theme: Theme, base: QFont | None = None) -> Theme:
    """Return ``theme`` with rows and ruler tall enough for the timeline's fonts at ``base``
    (the application's font by default); never shorter than ``theme``'s own."""

    def height(relative: float, bold: bool = False) -> int:
        return QFontMetrics(ui_font(relative, bold, base)).height()

    return replace(
        theme,
        row_height_px=max(theme.row_height_px, height(1.0) + 6),
        group_height_px=max(theme.group_height_px, height(1.0, bold=True) + 8),
        report_height_px=max(theme.report_height_px, height(13 / 12, bold=True) + 10),
        ruler_height_px=max(theme.ruler_height_px, height(11 / 12) + 15),
    )


def qcolor(argb: int) -> QColor:
    """Return a QColor from 0xAARRGGBB."""
    return QColor.fromRgba(int(argb) & 0xFFFFFFFF)
