"""The one time formatter: every label, tooltip and line rounds the same way."""

from __future__ import annotations

import pytest

from analysis.timefmt import format_count, format_duration_ns, format_range_ns, format_time_ns


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0 ns"),
        (850, "850 ns"),
        (12_300, "12.3 µs"),
        (123_456, "123 µs"),
        (4_560_000, "4.56 ms"),
        (1_234_000_000, "1.23 s"),
        (-4_560_000, "-4.56 ms"),
    ],
)
def test_durations_keep_three_significant_digits(ns: int, text: str) -> None:
    assert format_duration_ns(ns) == text


def test_times_counts_and_ranges() -> None:
    assert format_time_ns(1_234_567_891) == "1.234568 s"
    assert [format_count(n) for n in (950, 12_345, 4_560_000)] == ["950", "12.3 k", "4.56 M"]
    assert format_range_ns(0, 2_000_000) == "0.000 – 2.000 ms  (2.00 ms)"
