"""Outliers need a minimum effect, not only a large robust z-score (a 2 ns spread)."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis import AnalysisError, open_report, open_reports
from strata.analysis.outliers import (
    DEFAULT_MIN_DELTA_NS,
    DEFAULT_MIN_RATIO,
    find_outliers,
    has_effect,
)
from strata.analysis.reportset import ReportSet
from strata.resources import demo
from tests.conftest import REAL_DIR

V3 = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
V4 = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v4.sqlite"
requires_pair = pytest.mark.skipif(
    not (V3.exists() and V4.exists()), reason=f"needs the vector_add v3/v4 reports in {REAL_DIR}"
)


@pytest.fixture(scope="module")
def demo_reports(tmp_path_factory: pytest.TempPathFactory):
    paths = demo.build_demo_reports(tmp_path_factory.mktemp("demo"))
    return [open_report(p, use_cache=False) for p in paths]


def test_has_effect_needs_both_the_ratio_and_the_delta() -> None:
    median = np.full(5, 10_000.0)
    values = np.array([10_000, 11_000, 12_000, 8_000, 8_400])
    # 12 000 is x1.2 and 2 µs away; 8 000 is x1.25 faster; 11 000 only x1.1; 8 400 x1.19.
    assert has_effect(values, median, 1.2, 1000).tolist() == [False, False, True, True, False]
    small = np.array([1_000.0]), np.array([500.0])  # x2 but only 500 ns away
    assert not has_effect(*small, 1.2, 1000)[0]
    assert has_effect(*small, 1.2, 500)[0]
    assert has_effect(np.array([2000]), np.array([0.0]), 1.2, 1000)[0]  # a zero median


def test_bad_minimum_effect_is_refused(demo_reports) -> None:
    with pytest.raises(AnalysisError, match="min_ratio"):
        find_outliers(demo_reports, min_ratio=0.5)
    with pytest.raises(AnalysisError, match="min_delta_ns"):
        find_outliers(demo_reports, min_delta_ns=-1)


def test_planted_outliers_are_above_the_minimum_effect(demo_reports) -> None:
    truth = demo.demo_truth()
    found = ReportSet(demo_reports).outliers()
    assert (found.min_ratio, found.min_delta_ns) == (DEFAULT_MIN_RATIO, DEFAULT_MIN_DELTA_NS)
    kept = set(zip(found.instances["start_ns"], found.instances["duration_ns"], strict=True))
    planted = {(p.start_ns, p.duration_ns) for p in truth.slow_instances}
    assert planted <= kept
    straggler = found.reports[found.reports["report_index"] == truth.straggler_rank]
    assert len(straggler)
    # Raising the minimum ratio above every planted slowdown drops them all.
    slowest = max(p.duration_ns / m for p, m in zip(truth.slow_instances,
                  found.instances["median_ns"], strict=False))  # fmt: skip
    none = find_outliers(demo_reports, kinds=("kernels",), min_ratio=slowest * 10)
    assert not len(none.instances)


@requires_pair
def test_a_two_ns_spread_flags_no_vector_add_instance_nor_v4() -> None:
    rs = open_reports([V3, V4])
    found = rs.outliers()
    inst = found.instances
    vector = inst[inst["name"].str.startswith("vectorAdd")]
    # At most a warm-up instance far (many times the spread) from the median, none of the
    # hundreds a few ns from it.
    far = (vector["duration_ns"] - vector["median_ns"]).abs() > 100 * vector["mad_ns"]
    assert far.all(), vector[["duration_ns", "median_ns", "mad_ns"]]
    assert len(vector) <= 2
    # v4 is no differing report for vectorAdd (a 1.001x median ratio).
    assert not found.reports["name"].str.startswith("vectorAdd").any()
    # Without the minimum effect the z-score alone does flag them (the bug this guards).
    z_only = rs.outliers(min_ratio=1.0, min_delta_ns=0)
    flagged = z_only.instances[z_only.instances["name"].str.startswith("vectorAdd")]
    assert len(flagged) > 100
    assert z_only.reports["name"].str.startswith("vectorAdd").any()
