"""The duration histogram: series, lines, log axis, and the tail selection."""

from __future__ import annotations

import numpy as np
import pytest

from strata.viewer.histogram import DurationHistogramWidget


@pytest.fixture
def histogram(qtbot):
    widget = DurationHistogramWidget()
    qtbot.addWidget(widget)
    widget.resize(500, 300)
    widget.show()
    return widget


def test_one_series_per_report_and_counts(histogram):
    a = np.array([100, 110, 120, 130, 5000])
    b = np.array([105, 115, 125])
    histogram.set_data("k", {"r0": a, "r1": b}, 120.0, 1000.0)
    curves = histogram._curves
    assert len(curves) == 2
    assert [int(c.yData.sum()) for c in curves] == [5, 3]
    edges = histogram.bin_edges()
    assert edges[0] == pytest.approx(100)
    assert edges[-1] == pytest.approx(5000)


def test_region_starts_on_the_tail_and_emits_its_range(histogram, qtbot):
    values = np.array([100, 110, 120, 130, 5000], dtype=float)
    histogram.set_data("k", {"r0": values}, 120.0, 1000.0)
    lo, hi = histogram.region()
    assert lo == pytest.approx(1000.0)
    assert hi == pytest.approx(5000.0)
    with qtbot.waitSignal(histogram.range_selected) as blocker:
        histogram.select_range(900.0, 6000.0)
    lo, hi = blocker.args
    chosen = values[(values >= lo) & (values <= hi)]
    assert chosen.tolist() == [5000.0]


def test_log_axis_keeps_data_units(histogram, qtbot):
    values = np.array([10, 100, 1000, 10_000, 100_000], dtype=float)
    histogram.set_data("k", {"r0": values}, 1000.0, 50_000.0)
    histogram.set_log(True)
    edges = histogram.bin_edges()
    assert edges[0] == pytest.approx(10)
    assert edges[-1] == pytest.approx(100_000)
    # Log bins: equal ratios, so each decade gets the same number of bins.
    ratios = edges[1:] / edges[:-1]
    assert np.allclose(ratios, ratios[0])
    with qtbot.waitSignal(histogram.range_selected) as blocker:
        histogram.select_range(5_000.0, 200_000.0)
    lo, hi = blocker.args
    assert lo == pytest.approx(5_000.0)
    assert values[(values >= lo) & (values <= hi)].tolist() == [
        10_000.0,
        100_000.0,
    ]


def test_tick_labels_are_whole_counts_and_distinct_durations(histogram, qtbot) -> None:
    rng = np.random.default_rng(1)
    close = {"r0": 1.86e6 + rng.integers(0, 8000, 4), "r1": 1.86e6 + rng.integers(0, 9000, 3)}
    histogram.resize(520, 300)
    histogram.set_data("k", close, 1.864e6, 1.868e6)
    histogram.show()
    qtbot.waitExposed(histogram)
    plot = histogram.plot.getPlotItem()
    left, bottom = plot.getAxis("left"), plot.getAxis("bottom")
    y_lo, y_hi = plot.viewRange()[1]
    counts = [v for _s, ticks in left.tickValues(y_lo, y_hi, 200) for v in ticks]
    assert counts
    assert all(float(v).is_integer() for v in counts)
    x_lo, x_hi = plot.viewRange()[0]
    ticks = sorted({v for _s, t in bottom.tickValues(x_lo, x_hi, 500) for v in t})
    labels = bottom.tickStrings(ticks, 1.0, ticks[1] - ticks[0])
    assert len(set(labels)) == len(labels), labels  # never "1.86 ms" twice


def test_legend_lines_and_selection_are_labelled_outside_the_bars(histogram, qtbot) -> None:
    histogram.resize(520, 300)
    histogram.set_data("k", {"rank0": np.arange(1, 100.0), "rank1": np.arange(5, 80.0)}, 50, 90)
    histogram.show()
    qtbot.waitExposed(histogram)
    assert histogram.legend.isVisible()
    assert histogram.legend.geometry().top() >= histogram.plot.geometry().bottom()
    assert "rank0" in histogram.legend.text()
    assert "rank1" in histogram.legend.text()
    assert histogram._median_line.label.toPlainText() == "median"
    assert histogram._threshold_line.label.toPlainText() == "threshold"
    assert histogram.region_label.toPlainText().startswith("selection")
