"""Nesting levels: exact depth for nested intervals, no overlap for crossing ones."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis.levels import nesting_levels, overlaps_on_level


def test_nested_stack_depths() -> None:
    start = np.array([0, 10, 20, 50, 60], dtype=np.int64)
    end = np.array([100, 40, 30, 90, 60], dtype=np.int64)
    groups = np.zeros(5, dtype=np.int64)
    assert nesting_levels(groups, start, end).tolist() == [0, 1, 2, 1, 2]


def test_same_start_longer_is_parent() -> None:
    levels = nesting_levels(np.zeros(2, np.int64), np.array([0, 0]), np.array([5, 10]))
    assert levels.tolist() == [1, 0]


def test_groups_are_independent() -> None:
    levels = nesting_levels(np.array([1, 2]), np.array([0, 0]), np.array([10, 10]))
    assert levels.tolist() == [0, 0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 30), st.integers(0, 2)), max_size=40))
def test_no_two_intervals_overlap_on_a_level(items: list[tuple[int, int, int]]) -> None:
    start = np.array([s for s, _, _ in items], dtype=np.int64)
    end = start + np.array([d for _, d, _ in items], dtype=np.int64)
    groups = np.array([g for _, _, g in items], dtype=np.int64)
    levels = nesting_levels(groups, start, end)
    for g in np.unique(groups):
        mask = groups == g
        assert not overlaps_on_level(levels[mask], start[mask], end[mask])
