"""The one time formatter: every label, tooltip and line rounds the same way."""

from __future__ import annotations

import re

import pytest

from strata.analysis.timefmt import (
    format_count,
    format_duration_ns,
    format_range_ns,
    format_time_ns,
    pluralize,
)
from tests.conftest import ROOT


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


@pytest.mark.parametrize(
    ("count", "noun", "text"),
    [
        (1, "instance", "1 instance"),
        (0, "instance", "0 instances"),
        (1_234, "core", "1,234 cores"),
        (2, "match", "2 matches"),
        (2, "entry", "2 entries"),
        (2, "day", "2 days"),
        (1, "kernel name", "1 kernel name"),
    ],
)
def test_pluralize_says_one_noun_or_many(count: int, noun: str, text: str) -> None:
    assert pluralize(count, noun) == text


def test_pluralize_takes_an_irregular_plural_and_a_shown_number() -> None:
    assert pluralize(3, "child", "children") == "3 children"
    assert pluralize(12_300, "event", number=format_count(12_300)) == "12.3 k events"
    assert pluralize(1, "event", number=format_count(1)) == "1 event"


#: Messages whose count comes with a verb that agrees with it too (loader refusals), and
#: ``__repr__`` texts for developers: reviewed, not shown to a user as a count of things.
_COUNTED_PLURAL_ALLOWED = (
    "end before they start",
    "whose duration",
    "<EventTable",
    "<Duration",
    "<Report ",
    "<Outliers",
    "meta.json says",
    "names no summary",
)


def test_no_user_text_puts_a_count_before_a_fixed_plural() -> None:
    """'1 instances', 'CPU (1 cores)', 'report(s)': every count and noun goes through
    :func:`pluralize`, so a new f-string with a hard-coded plural fails here."""
    nouns = "instances|events|rows|reports|names|cores|messages|gaps|regions|workers|kernels"
    fixed = re.compile(rf"\{{[^{{}}]*\}} ({nouns})\b|[a-z]\(s\)[^\w]|\{{'s' if|\{{\"s\" if")
    found = []
    for package in ("app", "viewer", "analysis"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, 1):
                if 'f"' not in line and "f'" not in line:
                    continue
                if fixed.search(line) and not any(a in line for a in _COUNTED_PLURAL_ALLOWED):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
