"""View → Theme: light, dark or the desktop's scheme, saved; the colour-blind-safe report
palette of the histogram."""

from __future__ import annotations

import numpy as np
import pytest

from strata.viewer.render import render_to_image
from strata.viewer.style import DARK, LIGHT, REPORT_COLORS
from tests.app.conftest import small_real, wait_idle
from tests.conftest import requires_shared


@pytest.fixture
def keep_app_look(qapp):
    """Put the application's palette, style sheet and style back after the test."""
    palette, sheet, style = qapp.palette(), qapp.styleSheet(), qapp.style().name()
    yield
    qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)


def _background_pixel(window) -> int:
    """The colour below the last row (the painter's background), as 0xRRGGBB."""
    timeline = window.timeline
    window.collapse_all_groups()
    image = render_to_image(timeline, timeline.size())
    return image.pixel(timeline.width() - 40, timeline.height() - 3) & 0xFFFFFF


@requires_shared
def test_theme_menu_switches_the_painter_and_is_saved(
    qtbot, make_window, settings, keep_app_look
) -> None:
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from strata.app.settings import Settings

    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    switcher = window.theme_switcher
    switcher.actions["light"].trigger()
    assert window.timeline.theme == LIGHT
    assert _background_pixel(window) == LIGHT.background & 0xFFFFFF
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() > 192
    switcher.actions["dark"].trigger()
    assert _background_pixel(window) == DARK.background & 0xFFFFFF
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() < 64
    settings.sync()
    assert Settings(settings.qsettings.fileName()).theme_choice() == "dark"


def test_auto_follows_the_desktop(make_window, monkeypatch, keep_app_look) -> None:
    window = make_window()
    switcher = window.theme_switcher
    monkeypatch.setattr("strata.app.theme.system_scheme", lambda: "light")
    switcher.set_choice("auto")
    assert window.timeline.theme == LIGHT
    monkeypatch.setattr("strata.app.theme.system_scheme", lambda: "dark")
    switcher._on_desktop_changed(None)  # what QStyleHints.colorSchemeChanged calls
    assert window.timeline.theme == DARK
    switcher.set_choice("light")
    switcher._on_desktop_changed(None)  # a fixed choice ignores the desktop
    assert window.timeline.theme == LIGHT


def test_report_palette_is_distinct_and_used_by_the_histogram(qtbot) -> None:
    from PySide6.QtGui import QColor

    from strata.viewer.histogram import DurationHistogramWidget

    colours = [QColor(c) for c in REPORT_COLORS]
    assert len({c.rgb() for c in colours}) == len(colours) >= 7
    # Every pair differs clearly (orange and vermilion, the closest pair, by 82).
    for i, a in enumerate(colours):
        for b in colours[i + 1 :]:
            diff = abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())
            assert diff > 60
    histogram = DurationHistogramWidget()
    qtbot.addWidget(histogram)
    series = {f"r{i}": np.arange(1, 50) * (i + 1) for i in range(3)}
    histogram.set_data("name", series, 10.0, 100.0, "ns")
    pens = [c.opts["pen"].color().name().upper() for c in histogram._curves]
    assert pens == [c.upper() for c in REPORT_COLORS[:3]]


def test_by_report_columns_carry_the_report_colours() -> None:
    import pandas as pd
    from PySide6.QtCore import Qt

    from strata.viewer.stats_panel import columns_for
    from strata.viewer.table_model import DataFrameModel

    labels = ["a.sqlite", "b.sqlite"]
    frame = pd.DataFrame({"name": ["k"], "slowest": ["a.sqlite"], "spread": [1.0]})
    for label in labels:
        for stat in ("median_ns", "count", "total_ns"):
            frame[f"{label}|{stat}"] = [1]
    columns = columns_for("kernels", frame, labels)
    model = DataFrameModel()
    model.set_frame(frame, columns)
    columns = model.columns()
    swatches = {
        columns[i].key.split("|")[0]: model.headerData(
            i, Qt.Orientation.Horizontal, Qt.ItemDataRole.DecorationRole
        )
        for i in range(len(columns))
        if "|" in columns[i].key
    }
    assert swatches["a.sqlite"].name().upper() == REPORT_COLORS[0].upper()
    assert swatches["b.sqlite"].name().upper() == REPORT_COLORS[1].upper()
