"""The time ruler: 1-2-5 steps at least the asked spacing apart, labels in a fitting unit."""

from __future__ import annotations

import pytest

from strata.viewer.chrome import ruler_ticks, tick_label


@pytest.mark.parametrize("span_ns", [50, 7_777, 3_000_000, 1_234_567_890, 86_400 * 10**9])
def test_ticks_are_1_2_5_steps_spaced_enough(span_ns) -> None:
    width_px = 1600
    step, ticks = ruler_ticks(1000, 1000 + span_ns, width_px, min_px=90)
    mantissa = int(str(step)[0])
    assert mantissa in (1, 2, 5)
    assert set(str(step)[1:]) <= {"0"}
    assert step * width_px / span_ns >= 90
    assert step * width_px / span_ns < 90 * 2.5 + 1
    assert all(t % step == 0 for t in ticks)
    assert ticks[0] >= 1000
    assert ticks[-1] <= 1000 + span_ns


def test_labels_use_the_unit_of_the_step() -> None:
    assert tick_label(1_500_000_000, 500_000_000) == "1.5 s"
    assert tick_label(2_000_000_000, 1_000_000_000) == "2 s"
    assert tick_label(1_040_000_000, 2_000_000) == "1040 ms"
    assert tick_label(350_000, 50_000) == "350 µs"
    assert tick_label(300_000, 100_000) == "0.3 ms"
    assert tick_label(12_000, 1_000) == "12 µs"
    assert tick_label(40, 10) == "40 ns"


def test_deep_ticks_count_from_an_anchor() -> None:
    from strata.viewer.chrome import ruler_anchor

    step, ticks = ruler_ticks(275_100_000_000, 275_650_000_000, 1600)
    anchor = ruler_anchor(ticks, step)
    assert anchor % step == 0
    assert anchor <= ticks[0]
    assert ticks[-1] - anchor < 1000 * step
    near_step, near_ticks = ruler_ticks(0, 2_000_000_000, 1600)
    assert ruler_anchor(near_ticks, near_step) == 0
