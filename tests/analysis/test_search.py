"""Searching event names across reports: spelled as the timeline spells them, vectorised."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.reportset import ReportSet
from strata.analysis.search import compile_search, match_names, search_events
from strata.resources.demo import SLOW_KERNEL_NAME, SLOW_KERNEL_SHORT_NAME, build_demo_reports


@pytest.fixture(scope="module")
def demo_set(tmp_path_factory, load_report):
    paths = build_demo_reports(tmp_path_factory.mktemp("demo"))
    return ReportSet([load_report(p) for p in paths[:2]])


def test_a_kernel_is_found_by_its_box_name_and_by_its_demangled_name(demo_set) -> None:
    short = search_events(demo_set, SLOW_KERNEL_SHORT_NAME.upper())  # case-insensitive
    full = search_events(demo_set, SLOW_KERNEL_NAME)
    expected = sum(
        int((r.strings.lookup(r.kernels["name_id"]) == SLOW_KERNEL_NAME).sum()) for r in demo_set
    )
    assert len(full) == expected > 0
    assert len(short) >= expected
    assert set(full.tables) == {"kernels"}
    assert np.all(np.diff(full.start_ns) >= 0)  # shared-axis time order
    assert set(full.report_index.tolist()) == {0, 1}


def test_offsets_shift_the_matches_onto_the_shared_axis(demo_set) -> None:
    plain = search_events(demo_set, SLOW_KERNEL_NAME, offsets_ns=[0, 0])
    shifted = search_events(demo_set, SLOW_KERNEL_NAME, offsets_ns=[0, 1000])
    second = plain.report_index == 1
    np.testing.assert_array_equal(
        np.sort(shifted.start_ns[shifted.report_index == 1]), np.sort(plain.start_ns[second] + 1000)
    )


def test_a_regex_and_an_empty_text(demo_set) -> None:
    assert len(search_events(demo_set, "")) == 0
    both = search_events(demo_set, f"^({SLOW_KERNEL_SHORT_NAME}|cudaLaunchKernel)$", True)
    assert {"kernels", "cuda_api"} <= set(both.tables)
    # Plain text has no regex meaning: "(" is the parenthesis of demangled kernel names.
    assert search_events(demo_set, "(", False).tables == ("kernels",)


def test_an_invalid_regex_is_one_line() -> None:
    with pytest.raises(AnalysisError, match=r"^invalid regular expression: .* at position \d+$"):
        compile_search("a(b", True)


def test_each_distinct_name_is_tried_once() -> None:
    calls = []

    class Counting:
        def search(self, text):
            calls.append(text)
            return text.startswith("k") or None

    pool = np.array(["k1", "x", "k2", None, "unused"], dtype=object)
    codes = np.array([0, 1, 0, 2, -1, 3, 0] * 1000, dtype=np.int64)
    hit = match_names(pool, codes, Counting())
    assert sorted(calls) == ["k1", "k2", "x"]
    np.testing.assert_array_equal(hit[:7], [True, False, True, True, False, False, True])
