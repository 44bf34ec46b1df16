"""Histogram of the durations of one name, one coloured series per report.

pyqtgraph: each report is a stepped, filled curve over shared bin edges; the median and the
outlier threshold are vertical lines; a ``LinearRegionItem`` (initially over the tail above
the threshold) selects a duration range, announced by :attr:`range_selected`. The x axis is
linear or log10 (bins and item positions are then in log10 ns and the axis labels say the
duration).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from strata.analysis.timefmt import format_duration_ns
from strata.viewer.access import name_control
from strata.viewer.labels import ElidedLabel
from strata.viewer.style import REPORT_COLORS

__all__ = ["SERIES_COLORS", "DurationHistogramWidget", "distinct_tick_labels"]

#: One colour per report (cycled): the colour-blind-safe report palette.
SERIES_COLORS = REPORT_COLORS
_BINS = 60


_TIME_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_BYTE_UNITS = ((1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))


def distinct_tick_labels(values, unit: str = "ns") -> list[str]:
    """Label ``values`` (ns or bytes) in one unit with as few decimals as keep them apart.

    ``format_duration_ns`` gives three significant digits per tick, so two ticks 5 µs apart
    near 1.86 ms both read "1.86 ms".
    """
    values = [float(v) for v in values]
    if not values:
        return []
    units = _TIME_UNITS if unit == "ns" else _BYTE_UNITS
    top = max(abs(v) for v in values)
    scale, name = next(((f, n) for f, n in units if top >= f), units[-1])
    for decimals in range(7):
        labels = [f"{v / scale:,.{decimals}f} {name}" for v in values]
        if len(set(labels)) == len(labels):
            return labels
    return labels


class _DurationAxis(pg.AxisItem):
    """Bottom axis whose ticks read as durations (the values are log10 ns in log mode)."""

    is_log = False
    unit = "ns"

    def tickStrings(self, values, scale, spacing):  # pyqtgraph override
        return distinct_tick_labels([10.0**v if self.is_log else v for v in values], self.unit)


class _CountAxis(pg.AxisItem):
    """Left axis of whole instance counts: never a tick at 0.5 instances."""

    def tickSpacing(self, minVal, maxVal, size):  # pyqtgraph override
        levels = []
        for spacing, offset in super().tickSpacing(minVal, maxVal, size):
            whole = max(1.0, float(math.ceil(spacing)))
            if all(whole != s for s, _ in levels):
                levels.append((whole, offset))
        return levels

    def tickValues(self, minVal, maxVal, size):  # pyqtgraph override
        return [(spacing, [v for v in ticks if float(v).is_integer()])
                for spacing, ticks in super().tickValues(minVal, maxVal, size)]  # fmt: skip

    def tickStrings(self, values, scale, spacing):  # pyqtgraph override
        return [f"{v:,.0f}" for v in values]


class DurationHistogramWidget(QWidget):
    """Durations of the selected name as a histogram per report.

    Signals
    -------
    range_selected(lo, hi)
        The user moved the region: instances with ``lo <= value <= hi`` (ns, or bytes for
        sizes; Python numbers) are wanted.
    """

    range_selected = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._axis = _DurationAxis("bottom")
        self._count_axis = _CountAxis("left")
        self.plot = pg.PlotWidget(axisItems={"bottom": self._axis, "left": self._count_axis},
                                  background="#1e1f22")  # fmt: skip
        self.plot.setMenuEnabled(False)
        name_control(
            self.plot,
            "Duration histogram",
            "Instances per duration of the selected name, per report; the shaded "
            "region selects instances",
        )
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setLabel("left", "instances")
        # The legend is a line below the plot: drawn inside it hid the bars it names.
        self.legend = name_control(QLabel(self), "Histogram legend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self._title = ElidedLabel("Click a row to see its durations", self)
        self._title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._log = QCheckBox("Log scale", self)
        self._log.setToolTip("Logarithmic duration axis")
        self._log.toggled.connect(self._redraw)
        self._region = pg.LinearRegionItem(
            orientation="vertical", brush=pg.mkBrush(255, 200, 60, 50), movable=True,
            pen=pg.mkPen("#ffc83c", width=2),
        )  # fmt: skip
        self._region.setZValue(10)
        # Says what the region does: it selects the instances in it (the tail, at first).
        self.region_label = pg.InfLineLabel(self._region.lines[0], text="selection ▸",
                                            position=0.62, anchors=[(1, 0), (1, 0)],
                                            color="#ffc83c")  # fmt: skip
        self._region.sigRegionChangeFinished.connect(self._on_region_changed)
        self._median_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#ffffff", width=1.5), label="median",
            labelOpts={"position": 0.97, "anchors": [(1, 0), (1, 0)]},
        )  # fmt: skip
        self._threshold_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#ff5c5c", width=1.5, style=Qt.PenStyle.DashLine),
            label="threshold", labelOpts={"position": 0.80, "color": "#ff5c5c",
                                                  "anchors": [(1, 0), (1, 0)]},
        )  # fmt: skip
        self._series: dict[str, np.ndarray] = {}
        self._median = math.nan
        self._threshold = math.inf
        self._curves: list[pg.PlotDataItem] = []
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self._title, 1)
        top.addWidget(self._log)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        layout.addStretch(0)
        self.plot.setVisible(False)
        self._edges = np.empty(0)

    # -- data -----------------------------------------------------------------------------

    def set_data(
        self,
        title: str,
        series: Mapping[str, np.ndarray],
        median: float,
        threshold: float,
        unit: str = "ns",
    ) -> None:
        """Show ``series`` (label -> values) with the median and outlier threshold lines.

        The selection region is put over the tail above ``threshold`` (or the top 5 % of
        the range when nothing is above it).
        """
        self._title.setText(title)
        self._series = {k: np.asarray(v, dtype=np.float64) for k, v in series.items()}
        self._median, self._threshold = float(median), float(threshold)
        self._axis.unit = unit
        self._redraw()

    def title_text(self) -> str:
        """Return the full title (it may be drawn elided, with the full text on hover)."""
        return self._title.text()

    def clear(self, title: str = "Click a row to see its durations") -> None:
        self.set_data(title, {}, math.nan, math.inf)

    def is_log(self) -> bool:
        return self._log.isChecked()

    def set_log(self, on: bool) -> None:
        self._log.setChecked(on)

    def bin_edges(self) -> np.ndarray:
        """Return the bin edges in data units (ns), for tests and tooltips."""
        return self._to_value(self._edges) if len(self._series) else np.empty(0)

    def region(self) -> tuple[float, float]:
        """Return the selection region in data units."""
        lo, hi = self._region.getRegion()
        return float(self._to_value(lo)), float(self._to_value(hi))

    def select_range(self, lo: float, hi: float) -> None:
        """Move the region to ``[lo, hi]`` (data units) and announce it."""
        self._region.setRegion((self._to_x(lo), self._to_x(hi)))  # emits range_selected

    # -- drawing --------------------------------------------------------------------------

    def _to_x(self, value):
        if not self.is_log():
            return value
        return np.log10(np.maximum(value, 1.0))

    def _to_value(self, x):
        return 10.0**x if self.is_log() else x

    def _redraw(self) -> None:
        plot = self.plot.getPlotItem()
        for item in [*self._curves, self._region, self._median_line, self._threshold_line]:
            plot.removeItem(item)
        self._curves = []
        self._axis.is_log = self.is_log()
        values = [v for v in self._series.values() if len(v)]
        self.plot.setVisible(bool(values))  # no empty axes with meaningless ticks
        self.legend.setVisible(bool(values))
        if not values:
            self._edges = np.empty(0)
            self.legend.clear()
            return
        every = self._to_x(np.concatenate(values))
        lo, hi = float(every.min()), float(every.max())
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        self._edges = np.linspace(lo, hi, _BINS + 1)
        for i, (label, v) in enumerate(self._series.items()):
            counts, _ = np.histogram(self._to_x(v), bins=self._edges)
            color = pg.mkColor(SERIES_COLORS[i % len(SERIES_COLORS)])
            fill = pg.mkColor(color)
            fill.setAlpha(60)
            curve = pg.PlotDataItem(self._edges, counts, stepMode="center", fillLevel=0,
                                    brush=fill, pen=pg.mkPen(color, width=1.5),
                                    name=label)  # fmt: skip
            plot.addItem(curve)
            self._curves.append(curve)
        self.legend.setText("   ".join(
            f'<span style="color:{pg.mkColor(SERIES_COLORS[i % len(SERIES_COLORS)]).name()}">'
            f"■</span> {html.escape(label)}" for i, label in enumerate(self._series)
        ))  # fmt: skip
        self._place_lines(lo, hi)
        plot.setXRange(lo, hi, padding=0.02)
        plot.enableAutoRange(axis="y")

    def set_dark(self, is_dark: bool) -> None:
        """Follow the window's colour scheme: plot background, axes and median line."""
        background, ink = ("#1e1f22", "#d5d8de") if is_dark else ("#ffffff", "#24292f")
        self.plot.setBackground(background)
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(ink))
            axis.setTextPen(pg.mkPen(ink))
        self._median_line.setPen(pg.mkPen(ink, width=1.5))
        self._region.setBrush(
            pg.mkBrush(255, 200, 60, 50) if is_dark else pg.mkBrush(230, 150, 0, 45)
        )

    def _place_lines(self, lo: float, hi: float) -> None:
        plot = self.plot.getPlotItem()
        if math.isfinite(self._median):
            self._median_line.setValue(float(self._to_x(self._median)))
            self._median_line.setToolTip(f"median {format_duration_ns(self._median)}")
            plot.addItem(self._median_line)
        tail_lo = hi - 0.05 * (hi - lo)
        if math.isfinite(self._threshold):
            x = float(self._to_x(self._threshold))
            self._threshold_line.setToolTip(
                f"outlier threshold {format_duration_ns(self._threshold)}"
            )
            plot.addItem(self._threshold_line)
            self._threshold_line.setValue(x)
            tail_lo = min(max(x, lo), tail_lo) if x < hi else tail_lo
        self._region.blockSignals(True)
        self._region.setRegion((tail_lo, hi))
        self._region.setBounds((lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo)))
        self._region.blockSignals(False)
        plot.addItem(self._region)

    def _on_region_changed(self) -> None:
        lo, hi = self.region()
        self.range_selected.emit(lo, hi)
