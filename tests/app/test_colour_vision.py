"""Colours that carry a meaning stay apart for colour-blind users.

Each pair is compared as a deuteranope and a protanope see it: the colours go through the
dichromacy matrices of Machado, Oliveira & Fernandes (2009, severity 1.0, on linear RGB) and
their distance is CIE76 ΔE in CIELAB (about 2.3 is a just-noticeable difference; nsys's
memcpy green and red come out ~6 apart for a deuteranope).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from strata.app.theme import DIFF_COLORS
from strata.viewer.histogram import SERIES_COLORS
from strata.viewer.style import DARK, LIGHT, MEMCPY_COLORS, name_argb

#: Machado et al. 2009, Table 1 at severity 1.0 (rows: R, G, B of linear RGB).
_DEUTERANOPIA = np.array(
    [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
     [-0.011820, 0.042940, 0.968881]]
)  # fmt: skip
_PROTANOPIA = np.array(
    [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
     [-0.003882, -0.048116, 1.051998]]
)  # fmt: skip
VISIONS = {"typical": np.eye(3), "deuteranopia": _DEUTERANOPIA, "protanopia": _PROTANOPIA}

#: sRGB (D65) to XYZ, and the D65 white point.
_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
     [0.0193339, 0.1191920, 0.9503041]]
)  # fmt: skip
_WHITE = np.array([0.95047, 1.0, 1.08883])


def _linear(color: int | str) -> np.ndarray:
    """Linear RGB (0..1) of 0xAARRGGBB or '#RRGGBB'."""
    value = int(color.lstrip("#"), 16) if isinstance(color, str) else int(color)
    srgb = np.array([(value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF]) / 255.0
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    xyz = _TO_XYZ @ linear / _WHITE
    delta = 6 / 29
    f = np.where(xyz > delta**3, np.cbrt(xyz), xyz / (3 * delta**2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen_distance(a: int | str, b: int | str, vision: str) -> float:
    """ΔE between ``a`` and ``b`` as someone with ``vision`` sees them."""
    matrix = VISIONS[vision]
    seen = [np.clip(matrix @ _linear(c), 0.0, 1.0) for c in (a, b)]
    return float(np.linalg.norm(_lab(seen[0]) - _lab(seen[1])))


def test_the_simulation_finds_nsys_green_and_red_alike_for_a_deuteranope() -> None:
    # The matrices as published: the old memcpy pair looks alike, black and white do not.
    assert seen_distance("#3FB950", "#E5534B", "typical") > 100
    assert seen_distance("#3FB950", "#E5534B", "deuteranopia") < 10
    assert seen_distance("#000000", "#FFFFFF", "deuteranopia") > 99


@pytest.mark.parametrize("vision", list(VISIONS))
def test_copy_directions_are_told_apart(vision: str) -> None:
    h2d = name_argb("[CUDA memcpy Host-to-Device]")
    d2h = name_argb("[CUDA memcpy Device-to-Host]")
    assert seen_distance(h2d, d2h, vision) >= 40
    for (a_name, a), (b_name, b) in itertools.combinations(MEMCPY_COLORS.items(), 2):
        assert seen_distance(a, b, vision) >= 15, (a_name, b_name, vision)


@pytest.mark.parametrize("vision", list(VISIONS))
def test_a_diffs_slower_and_faster_are_told_apart(vision: str) -> None:
    assert seen_distance(DIFF_COLORS["slower"], DIFF_COLORS["faster"], vision) >= 30


@pytest.mark.parametrize("vision", list(VISIONS))
@pytest.mark.parametrize("theme", [DARK, LIGHT], ids=["dark", "light"])
def test_an_outlier_mark_stands_out_from_a_green_event(vision: str, theme) -> None:
    # The red mark alone vanishes on a green kernel for a deuteranope; its edge must not.
    green = 0xFF3FB950
    assert seen_distance(theme.outlier_edge, green, vision) >= 40
    assert seen_distance(theme.outlier_edge, theme.outlier_mark, vision) >= 40


@pytest.mark.parametrize("vision", list(VISIONS))
def test_the_first_reports_colours_are_told_apart(vision: str) -> None:
    # Two or three reports side by side in the histogram: the usual comparison.
    for a, b in itertools.combinations(SERIES_COLORS[:3], 2):
        assert seen_distance(a, b, vision) >= 20, (a, b, vision)
