"""Level of detail without a QApplication: planted intervals, known per-pixel answers."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.tracks import SliceTable
from strata.viewer.state.lod import PEAK_MIN_ALPHA, merge_strips, pixel_edges_ns, row_strip


def _table(starts, ends, overlapping=False) -> SliceTable:
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    return SliceTable(
        kind="test",
        start_ns=starts,
        end_ns=ends,
        track_offsets=np.array([0, len(starts)], dtype=np.int64),
        label_ids=np.arange(len(starts), dtype=np.int32),
        labels=np.array([f"e{i}" for i in range(len(starts))], dtype=object),
        is_overlapping=overlapping,
    )


def test_busy_fraction_per_pixel_matches_planted_intervals() -> None:
    # 10 pixels of 100 ns; events cover pixel 1 fully, half of pixel 3, and 2..4.5 px.
    table = _table([100, 350, 600], [200, 400, 850])
    edges = pixel_edges_ns(0, 100.0, 10)
    lo, hi = table.window(0, 0, 1000)
    strip = row_strip(table, lo, hi, edges)
    expected = [0, 1.0, 0, 0.5, 0, 0, 1.0, 1.0, 0.5, 0]
    expected = [max(e, PEAK_MIN_ALPHA) if e else 0 for e in expected]
    np.testing.assert_allclose(strip.alpha, expected, rtol=1e-6)
    assert strip.event.tolist() == [-1, 0, -1, 1, -1, -1, 2, 2, 2, -1]


def test_short_events_never_vanish_when_zoomed_out() -> None:
    # 1000 one-ns events in a 1 ms view of 100 px: every pixel they touch stays visible.
    starts = np.arange(0, 1_000_000, 1000, dtype=np.int64)
    table = _table(starts, starts + 1)
    edges = pixel_edges_ns(0, 10_000.0, 100)
    strip = row_strip(table, 0, len(starts), edges)
    assert (strip.alpha >= PEAK_MIN_ALPHA).all()
    assert (strip.event >= 0).all()


def test_zero_length_samples_touch_their_pixel() -> None:
    table = _table([250, 251], [250, 251])
    strip = row_strip(table, 0, 2, pixel_edges_ns(0, 100.0, 5))
    assert strip.alpha.tolist() == pytest.approx([0, 0, PEAK_MIN_ALPHA, 0, 0])


def test_window_finds_an_event_that_started_before_the_view() -> None:
    table = _table([0, 5000], [4000, 6000])
    assert table.window(0, 3000, 3500) == (0, 1)
    assert table.window(0, 4500, 4800) == (1, 1)
    overlapping = _table([0, 10, 20], [1000, 15, 25], overlapping=True)
    lo, hi = overlapping.window(0, 500, 600)
    assert lo == 0
    assert hi == 3


def test_overlapping_intervals_clip_to_full() -> None:
    table = _table([0, 0], [100, 100], overlapping=True)
    strip = row_strip(table, 0, 2, pixel_edges_ns(0, 100.0, 1))
    assert strip.alpha.tolist() == [1.0]


def test_merge_keeps_the_densest_part() -> None:
    a = row_strip(_table([0], [100]), 0, 1, pixel_edges_ns(0, 100.0, 2), part=0)
    b = row_strip(_table([150], [160]), 0, 1, pixel_edges_ns(0, 100.0, 2), part=1)
    merged = merge_strips([a, b])
    assert merged.part.tolist() == [0, 1]
    assert merged.alpha[0] == 1.0
    assert merged.alpha[1] == pytest.approx(PEAK_MIN_ALPHA)


def test_lod_and_rows_import_no_qt() -> None:
    import ast
    from pathlib import Path

    import strata.viewer.state.lod
    import strata.viewer.state.rows

    for module in (strata.viewer.state.lod, strata.viewer.state.rows):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {
            (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
        } | {
            a.name.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
        }
        assert not names & {"PySide6", "shiboken6", "pyqtgraph"}, module.__name__


@pytest.mark.parametrize(
    ("n", "longest"),
    [(0, 10), (1, 10), (63, 10), (64, 10), (200_003, 1_000), (3_000, 3 << 30), (500, 1 << 61)],
)
def test_compact_busy_prefix_is_the_int64_prefix(n: int, longest: int) -> None:
    # busy_before (int64 base per 64 rows + uint32 offsets, or the int64 prefix when an
    # offset does not fit: 3 << 30 ns calls fill a block past 2^32) is busy_prefix_ns.
    rng = np.random.default_rng(n)
    starts = np.cumsum(rng.integers(0, longest, n, dtype=np.int64)) if n else np.empty(0)
    ends = starts + rng.integers(0, longest, n, dtype=np.int64) if n else np.empty(0)
    table = _table(starts, ends)
    rows = np.arange(n + 1)
    assert table.busy_before(rows).dtype == np.int64
    np.testing.assert_array_equal(table.busy_before(rows), table.busy_prefix_ns())
    assert all(int(table.busy_before(k)) == int(table.busy_prefix_ns()[k]) for k in (0, n // 2, n))
    base, offset = table.busy_blocks()
    assert (offset is None) == (longest >= 1 << 30)


def test_spaced_labels_never_keep_two_that_overlap() -> None:
    from strata.viewer.state.lod import spaced_labels

    rng = np.random.default_rng(3)
    x0 = rng.uniform(0, 1000, 400)
    x1 = x0 + rng.uniform(20, 200, 400)
    keep = spaced_labels(x0, x1)
    kept = np.argsort(x0[keep])
    a0, a1 = x0[keep][kept], x1[keep][kept]
    assert np.all(a0[1:] >= a1[:-1])  # sorted by start, each starts after the last ends
    # Every skipped label overlaps a kept one: nothing is left bare that had room.
    for i in np.flatnonzero(~keep):
        assert np.any((a0 < x1[i]) & (x0[i] < a1))
    # Side by side (touching) labels are all kept; one inside another is not.
    assert spaced_labels(np.array([0.0, 10.0, 20.0]), np.array([10.0, 20.0, 30.0])).all()
    assert spaced_labels(np.array([0.0, 5.0]), np.array([50.0, 20.0])).tolist() == [True, False]
