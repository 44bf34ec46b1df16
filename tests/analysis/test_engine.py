"""The group-by engine against pandas and nsys's documented values (spec §3.1, §6.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.engine import group_stats, sqlite_round
from analysis.xp import cupy_available, get_xp

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
