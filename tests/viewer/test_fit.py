"""Fit (F) without Qt: where the activity is first, everything on a second press."""

from __future__ import annotations

import numpy as np

from strata.viewer.state import TimelineState, activity_span, extents_span


def _table(*intervals: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = zip(*intervals, strict=True)
    return np.asarray(starts, np.int64), np.asarray(ends, np.int64)


def test_a_zero_length_marker_far_away_is_not_activity() -> None:
    # An NVTX domain created at time 0, the work 40 s later.
    nvtx = _table((0, 0), (40_500_000_000, 40_500_000_000))
    kernels = _table((40_000_000_000, 40_100_000_000), (40_900_000_000, 41_000_000_000))
    full, activity = activity_span([(*nvtx, 0), (*kernels, 0)])
    assert full == (0, 41_000_000_000)
    assert activity == (40_000_000_000, 41_000_000_000)


def test_offsets_shift_the_spans_and_markers_alone_are_all_there_is() -> None:
    marks = _table((5, 5), (9, 9))
    assert activity_span([(*marks, 100)]) == ((105, 109), (105, 109))
    assert activity_span([]) is None
    assert activity_span([(np.zeros(0, np.int64), np.zeros(0, np.int64), 0)]) is None


def test_f_fits_the_activity_then_everything_then_the_activity_again() -> None:
    state = TimelineState()
    state.set_full_range(0, 41_000, activity=(40_000, 41_000))
    state.toggle_fit()
    t0, t1 = state.view_range()
    assert 39_900 < t0 < 40_000
    assert 41_000 < t1 < 41_100
    state.toggle_fit()
    t0, t1 = state.view_range()
    assert t0 < 0
    assert t1 > 41_000
    state.toggle_fit()
    assert 39_900 < state.view_range()[0] < 40_000


def test_after_moving_f_fits_the_activity_again() -> None:
    state = TimelineState()
    state.set_full_range(0, 41_000, activity=(40_000, 41_000))
    state.fit()
    state.pan(0.5)
    state.toggle_fit()
    assert 39_900 < state.view_range()[0] < 40_000


def test_without_a_separate_activity_span_fit_is_the_whole_range() -> None:
    state = TimelineState()
    state.set_full_range(100, 200)
    assert state.activity_range() == (100, 200)
    state.toggle_fit()
    first = state.view_range()
    state.toggle_fit()
    assert state.view_range() == first
    # An activity span reaching outside the whole one is clipped to it.
    state.set_full_range(100, 200, activity=(50, 300))
    assert state.activity_range() == (100, 200)


def test_a_slice_tables_extent_gives_the_same_spans_and_is_computed_once() -> None:
    from strata.analysis.slices import SliceTable

    start, end = _table((0, 0), (10, 30), (20, 25), (50, 50))
    table = SliceTable(
        "nvtx", start, end, np.array([0, 4]), np.zeros(4, np.int32), np.array([""], object)
    )
    extent = table.extent_ns()
    assert extent == ((0, 50), (10, 30))
    assert table.extent_ns() is extent
    assert extents_span([(extent, 7), (None, 0)]) == activity_span([(start, end, 7)])
    assert extents_span([(extent, 7)]) == ((7, 57), (17, 37))
