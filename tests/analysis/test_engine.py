"""The group-by engine against pandas and nsys's documented values (spec §3.1, §6.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis.engine import group_stats, sqlite_round
from strata.analysis.xp import cupy_available, get_xp

BACKENDS = [
    "numpy",
    pytest.param(
        "cupy", marks=pytest.mark.skipif(not cupy_available(), reason="needs CuPy and a CUDA GPU")
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_values_from_the_spec(backend: str) -> None:
    # spec §6.1: kB durations 5 and 3e9 -> avg/med 1500000002.5, std 2121320340.0;
    # kA 10,20,30,40,50 -> avg 30, med 30, std 15.8
    codes = np.array([0, 0, 1, 1, 1, 1, 1])
    values = np.array([5, 3_000_000_000, 10, 20, 30, 40, 50])
    s = group_stats(codes, values, get_xp(backend))
    assert s.total.tolist() == [3_000_000_005, 150]
    assert s.median.tolist() == [1500000002.5, 30.0]
    assert sqlite_round(s.std).tolist() == [2121320340.0, 15.8]
    assert s.minimum.tolist() == [5, 10]
    assert s.maximum.tolist() == [3_000_000_000, 50]


def test_single_value_std_is_zero() -> None:
    s = group_stats(np.array([3]), np.array([7]))
    assert s.std.tolist() == [0.0]
    assert s.keys.tolist() == [3]


def test_sqlite_rounding_is_half_away_from_zero() -> None:
    assert sqlite_round(np.array([0.15, 2.25, 12.35, -2.25])).tolist() == [0.2, 2.3, 12.4, -2.3]


def test_huge_values_fall_back_to_lexsort_exactly() -> None:
    values = np.array([2**61, 1, 2**61 + 3, 5], dtype=np.int64)
    s = group_stats(np.array([0, 0, 1, 1]), values)
    assert s.median.tolist() == [float(2**60) + 0.5, float((2**61 + 8) // 2) - 1.0]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(-(2**40), 2**40)), min_size=1, max_size=200)
)
def test_matches_pandas(items: list[tuple[int, int]]) -> None:
    codes = np.array([c for c, _ in items])
    values = np.array([v for _, v in items], dtype=np.int64)
    s = group_stats(codes, values, quantiles=(0.25, 0.75))
    g = pd.Series(values).groupby(codes)
    assert s.keys.tolist() == sorted(set(codes.tolist()))
    assert s.count.tolist() == g.count().tolist()
    assert s.total.tolist() == g.sum().tolist()
    np.testing.assert_allclose(s.median, g.median().to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(s.std, g.std().fillna(0.0).to_numpy(), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(s.quantiles[0.25], g.quantile(0.25).to_numpy(), rtol=1e-12)


def _random_case(seed: int, n: int = 20_000, groups: int = 50, span: int = 2**34):
    rng = np.random.default_rng(seed)
    return rng.integers(0, groups, n), rng.integers(0, span, n, dtype=np.int64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_give_identical_results(backend: str) -> None:
    # One body for both: the CuPy half runs where a GPU is present.
    codes, values = _random_case(1)
    ref = group_stats(codes, values, np, quantiles=(0.1, 0.9))
    got = group_stats(codes, values, get_xp(backend), quantiles=(0.1, 0.9))
    for field in ("keys", "count", "total", "minimum", "maximum", "mean", "median"):
        assert np.array_equal(getattr(got, field), getattr(ref, field)), field
    np.testing.assert_allclose(got.std, ref.std, rtol=1e-12)
    for q in (0.1, 0.9):
        np.testing.assert_array_equal(got.quantiles[q], ref.quantiles[q])


def test_medians_above_2_31_are_exact() -> None:
    # spec §3.1: nsys's median has no 32-bit truncation: [5, 3e9] -> 1500000002.5
    values = np.array([5, 3_000_000_000, 2**40 + 1, 2**40 + 4], dtype=np.int64)
    s = group_stats(np.array([0, 0, 1, 1]), values)
    assert s.median.tolist() == [1_500_000_002.5, 2**40 + 2.5]


@pytest.mark.parametrize(
    ("codes", "values"),
    [
        (np.array([5_000_000, 7, 5_000_000]), np.array([3, 1, 4])),  # sparse codes
        (np.array([1, 1, 2]), np.array([-5, 7, -(2**33)])),  # negative values
    ],
)
def test_unusual_codes_and_values_match_pandas(codes: np.ndarray, values: np.ndarray) -> None:
    s = group_stats(codes, values)
    g = pd.Series(values).groupby(codes)
    assert s.keys.tolist() == sorted(set(codes.tolist()))
    assert s.total.tolist() == g.sum().tolist()
    assert s.minimum.tolist() == g.min().tolist()
    assert s.median.tolist() == g.median().tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(-3000, 3000)), min_size=1, max_size=300))
def test_small_keys_sort_as_int32_and_match_pandas(items: list[tuple[int, int]]) -> None:
    # Small codes and spans pack into 31 bits: the int32 path, with negative values shifted.
    codes = np.array([c for c, _ in items])
    values = np.array([v for _, v in items], dtype=np.int64)
    s = group_stats(codes, values, quantiles=(0.5,))
    g = pd.Series(values).groupby(codes)
    assert s.count.tolist() == g.count().tolist()
    assert s.total.tolist() == g.sum().tolist()
    assert s.minimum.tolist() == g.min().tolist()
    assert s.maximum.tolist() == g.max().tolist()
    assert s.median.tolist() == g.median().tolist()
    assert s.quantiles[0.5].tolist() == g.median().tolist()
    np.testing.assert_allclose(s.std, g.std().fillna(0.0).to_numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_totals_past_int64_are_exact_python_ints(backend: str) -> None:
    big = 2**62 + 7
    s = group_stats(np.array([0, 0, 0, 1]), np.array([big, big, big, 5]), get_xp(backend))
    assert s.total.dtype == object  # 3·big passes 2^63 - 1: exact, not wrapped
    assert s.total.tolist() == [3 * big, 5]
    assert s.mean.tolist() == [float(3 * big) / 3, 5.0]
    assert s.median.tolist() == [float(big), 5.0]
    assert s.std.tolist() == [0.0, 0.0]
    assert s.minimum.tolist() == [big, 5]


def test_totals_that_fit_stay_int64_and_exact() -> None:
    s = group_stats(np.array([0, 0]), np.array([2**62, 2**62 - 1]))
    assert s.total.dtype == np.int64
    assert s.total.tolist() == [2**63 - 1]
    assert s.median.tolist() == [float(2**62 - 1) + 0.5]


def test_values_spanning_more_than_int64_do_not_wrap() -> None:
    lo, hi = -(2**62) - 5, 2**62 + 5  # hi - lo passes 2^63: no offset from the minimum
    s = group_stats(np.array([0, 0, 1]), np.array([lo, hi, hi]), quantiles=(0.5,))
    assert s.minimum.tolist() == [lo, hi]
    assert s.maximum.tolist() == [hi, hi]
    assert s.total.tolist() == [0, hi]
    assert s.median.tolist() == [0.0, float(hi)]
    assert s.quantiles[0.5].tolist() == [0.0, float(hi)]


def test_exact_sum_of_int64() -> None:
    from strata.analysis.engine import exact_sum

    rng = np.random.default_rng(4)
    values = rng.integers(-(2**63), 2**63 - 1, 1000, dtype=np.int64)
    assert exact_sum(values) == sum(int(v) for v in values.tolist())
