"""The duration histogram: series, lines, log axis, and the tail selection."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.histogram import DurationHistogramWidget


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
