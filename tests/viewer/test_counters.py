"""Counter rows on the timeline: area charts, their level of detail, tooltips, folding."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from strata.analysis.alignment import alignment_offsets
from strata.analysis.counters import counter_value_at
from strata.analysis.reportset import ReportSet
from strata.analysis.slices import SliceTable
from strata.analysis.tracks import METRICS_GROUP
from strata.viewer.events import describe_event
from strata.viewer.render import render_to_image
from strata.viewer.state import TimelineState
from strata.viewer.state.lod import counter_strip, pixel_edges_ns
from strata.viewer.timeline import TimelineWidget
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import run_cli

METRICS = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
MEMORY = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"


def _counter(starts, values, end) -> SliceTable:
    starts = np.asarray(starts, np.int64)
    ends = np.append(starts[1:], end).astype(np.int64)
    return SliceTable(
        kind="counter", start_ns=starts, end_ns=ends,
        track_offsets=np.array([0, len(starts)], np.int64),
        label_ids=np.zeros(len(starts), np.int32), labels=np.array(["c"], dtype=object),
        values=np.asarray(values, np.float64),
    )  # fmt: skip


def test_counter_strip_peak_and_mean_per_pixel_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    starts = np.cumsum(rng.integers(1, 40, 400)) + 50
    values = rng.integers(0, 100, 400).astype(np.float64)
    table = _counter(starts, values, int(starts[-1]) + 20)
    edges = pixel_edges_ns(0, 20.3, 300)  # ends before the samples do
    # The view's window, and every row: samples after the last edge must not count.
    windowed = counter_strip(table, *table.window(0, int(edges[0]), int(edges[-1])), edges)
    strip = counter_strip(table, 0, len(table), edges)
    assert np.array_equal(windowed.peak, strip.peak)
    for px in range(300):
        a, b = int(edges[px]), int(edges[px + 1])
        inside = np.minimum(table.end_ns, b) - np.maximum(table.start_ns, a)
        hit = np.flatnonzero(inside > 0)
        assert strip.covered[px] == bool(len(hit)), px
        if len(hit):
            assert strip.peak[px] == values[hit].max(), px
            mean = (values[hit] * inside[hit]).sum() / inside[hit].sum()
            assert strip.mean[px] == pytest.approx(mean), px


def test_counter_strip_zoomed_in_shows_the_step_value() -> None:
    table = _counter([100, 200, 300], [5, 50, 20], 400)
    edges = pixel_edges_ns(150, 10.0, 20)  # 150..350 ns, 10 ns a pixel
    strip = counter_strip(table, *table.window(0, 150, 350), edges)
    assert strip.peak.tolist() == [5] * 5 + [50] * 10 + [20] * 5
    assert strip.mean.tolist() == strip.peak.tolist()
    assert counter_value_at(table, 0, 199) == 5
    assert counter_value_at(table, 0, 200) == 50
    assert counter_value_at(table, 0, 400) is None


def test_metric_groups_start_folded_and_stay_open_once_opened(load_report) -> None:
    if not REAL_DIR.is_dir():
        pytest.skip(f"needs the shared real reports at {REAL_DIR}")
    tracks = ReportSet([load_report(METRICS)]).tracks()
    state = TimelineState()
    state.reset_tracks(tracks)
    (group,) = {t.group for t in tracks if t.kind == "gpu_metric"}
    assert group[-1] == METRICS_GROUP
    assert state.collapsed_groups() == [group]
    state.set_collapsed(group, False)
    state.set_tracks(tracks)  # more rows of the same reports (a progressive open)
    assert state.collapsed_groups() == []


def _widget(qtbot, reports, size) -> TimelineWidget:
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.state.set_data(reports, reports.tracks(), alignment_offsets(list(reports)))
    return widget


def _row_colors(image: QImage, widget: TimelineWidget, key: str) -> set[int]:
    """The distinct colours inside the data area of row ``key``."""
    y, h = widget.row_rect(key)
    x0 = widget.theme.header_width_px
    return {
        image.pixel(x, yy) & 0xFFFFFF
        for yy in range(y + 1, y + h - 1)
        for x in range(x0 + 2, image.width() - 14, 3)
    }


@requires_shared
def test_render_draws_metric_rows_and_their_folded_group(qtbot, load_report) -> None:
    reports = ReportSet([load_report(METRICS)])
    widget = _widget(qtbot, reports, (1400, 900))
    widget.state.pin_matching("GR Active")
    image = render_to_image(widget, (1400, 900))
    (gr,) = [t for t in widget.state.tracks() if t.label == "GR Active"]
    assert len(_row_colors(image, widget, gr.key)) > 2  # background and an area chart
    folded = [r for r in widget._layout.rows if r.kind == "group" and r.label == METRICS_GROUP]
    assert len(folded) == 1
    assert folded[0].is_collapsed
    assert folded[0].summary


@requires_shared
def test_render_draws_the_memory_row_and_its_tooltip_lists_the_event(qtbot, load_report) -> None:
    reports = ReportSet([load_report(MEMORY)])
    widget = _widget(qtbot, reports, (1400, 700))
    (memory,) = [t for t in widget.state.tracks() if t.kind == "memory_usage"]
    widget.state.pin(memory.key)
    table = reports.slice_tables(0)["memory_usage"]
    peak = int(np.argmax(table.values))
    widget.state.set_view_range(
        int(table.start_ns[0]) - 1_000_000, int(table.end_ns[peak]) + 1_000_000
    )
    image = render_to_image(widget, (1400, 700))
    assert len(_row_colors(image, widget, memory.key)) > 2
    y, h = widget.row_rect(memory.key)
    t = (int(table.start_ns[peak]) + int(table.end_ns[peak])) // 2
    ref = widget.event_at(widget.x_of(t), y + h // 2)
    assert ref is not None
    assert ref.source == "memory_usage"
    assert ref.index == peak
    lines = dict(describe_event(reports[0], ref, memory.path, 0, reports.slice_tables(0)))
    assert lines["Allocated"] == "40,000,000 B (40.00 MB)"
    assert "Alloc" in lines


@requires_shared
def test_cli_render_pins_counter_rows(tmp_path) -> None:
    out = tmp_path / "metrics.png"
    result = run_cli("render", str(METRICS), "--pin", "SM Active|Memory usage", "-o", str(out))
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert image.width() == 1600
    assert image.height() == 900


@requires_shared
def test_panned_counter_rows_equal_a_fresh_paint(qtbot, load_report) -> None:
    # Counter columns kept across a pan must be the ones a fresh paint computes.
    def shown():
        reports = ReportSet([load_report(METRICS), load_report(MEMORY)])
        widget = _widget(qtbot, reports, (1200, 700))
        widget.state.pin_matching("SM Active|GR Active|DRAM.*|Memory usage")
        return widget

    first = shown()
    lo, hi = first.state.full_range()
    first.state.set_view_range(lo, lo + (hi - lo) // 3)
    render_to_image(first, (1200, 700))
    for step in (0.05, 0.07, -0.11):
        first.state.pan(step)
        render_to_image(first, (1200, 700))
    fresh = shown()
    fresh.state.set_view_range(*first.state.view_range())
    assert render_to_image(first, (1200, 700)) == render_to_image(fresh, (1200, 700))
