"""The plain-Python reduction (analysis.plainstats) against the engine it mirrors
(analysis.engine): every field of every group identical, doubles to the bit."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis import engine, plainstats

_I64 = st.integers(-(2**63), 2**63 - 1)


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


def _same(plain: list, ours: np.ndarray, what: str) -> None:
    theirs = ours.tolist()
    assert len(plain) == len(theirs), what
    for i, (a, b) in enumerate(zip(plain, theirs, strict=True)):
        if isinstance(b, float):
            assert isinstance(a, float), (what, i, a)
            assert _bits(a) == _bits(b), (what, i, a, b)
        else:
            assert a == int(b), (what, i, a, b)


def _check(groups: list[list[int]]) -> None:
    codes = np.concatenate([np.full(len(g), i, np.int64) for i, g in enumerate(groups)])
    values = np.array([v for g in groups for v in g], dtype=np.int64)
    want = engine.group_stats(codes, values)
    got = plainstats.group_stats(groups)
    assert want.keys.tolist() == list(range(len(groups)))
    for field in ("count", "total", "minimum", "maximum", "mean", "median", "std"):
        _same(getattr(got, field), getattr(want, field), field)


@st.composite
def _groups(draw) -> list[list[int]]:
    kind = draw(st.sampled_from(["durations", "huge", "any", "narrow"]))
    if kind == "durations":
        values = st.integers(0, 2 ** draw(st.integers(1, 44)))
    elif kind == "huge":
        values = st.integers(2**62, 2**63 - 1)  # a damaged report's durations
    elif kind == "narrow":  # far from 0, a small span: the engine offsets by the minimum
        low = draw(st.integers(0, 2**50))
        values = st.integers(low, low + 2 ** draw(st.integers(0, 20)))
    else:
        values = _I64
    sizes = draw(st.lists(st.integers(1, 300), min_size=1, max_size=12))
    return [draw(st.lists(values, min_size=n, max_size=n)) for n in sizes]


@settings(max_examples=80, deadline=None)
@given(_groups())
def test_plain_reduction_is_the_engines_to_the_bit(groups: list[list[int]]) -> None:
    _check(groups)


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 5000), st.integers(0, 2**40), st.integers(0, 2**31))
def test_large_groups_sum_in_numpys_pairwise_order(n: int, scale: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    big = rng.integers(0, scale + 1, size=n).tolist()
    _check([big, rng.integers(0, scale + 1, size=max(1, n // 7)).tolist()])


def test_a_group_beyond_numpys_buffer() -> None:
    rng = np.random.default_rng(7)
    _check([rng.integers(0, 2**35, size=20_011).tolist(), [5], [1, 2]])


@settings(max_examples=15, deadline=None)
@given(_groups(), st.integers(1, 700))
def test_deviations_summed_a_few_groups_at_a_time_are_the_same_bits(
    groups: list[list[int]], rows: int
) -> None:
    """The engine sums squared deviations whole groups at a time (about ``rows`` rows,
    a bigger group alone) instead of over one float copy of every value: each group's sum
    stays NumPy's over its own rows, to the bit."""
    old = engine._DEVIATION_ROWS
    engine._DEVIATION_ROWS = rows
    try:
        _check(groups)
    finally:
        engine._DEVIATION_ROWS = old


def test_a_big_group_summed_in_pairwise_leaves_is_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A group of 20,011 values summed 1,000 deviations at a time: several levels of
    NumPy's pairwise halving done by the engine, the leaves by NumPy; int32 keys (a span
    of 2^20) summed 1,000 at a time too."""
    monkeypatch.setattr(engine, "_DEVIATION_ROWS", 1_000)
    rng = np.random.default_rng(11)
    _check([rng.integers(5, 2**20, size=20_011).tolist(), [3], rng.integers(0, 9, 1_500).tolist()])


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
    st.integers(0, 10**7).map(lambda k: k / 20),  # exact halves and near-halves
    st.integers(0, 10**6).map(lambda k: k / 100 + 0.05),
))  # fmt: skip
def test_plain_rounding_is_sqlite_round(value: float) -> None:
    want = engine.sqlite_round(np.array([value]))[0].item()
    got = plainstats.sqlite_round(value)
    assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want)), value


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**40), min_size=1, max_size=9), min_size=1, max_size=6))
def test_a_median_is_a_stored_value_exactly_when_its_middles_agree(groups) -> None:
    """Both ways (plain Python and the column path's NumPy) say when nsys's unrounded
    ``median()`` is an integer: an odd count, or two equal middle values (spec §3.1)."""
    import pandas as pd

    from strata.analysis.stats.cuda import median_is_value

    expected = [sorted(g)[(len(g) - 1) // 2] == sorted(g)[len(g) // 2] for g in groups]
    assert plainstats.group_stats(groups).median_is_value == expected
    names = np.array([f"g{i}" for i, g in enumerate(groups) for _ in g], dtype=object)
    values = np.array([v for g in groups for v in g], dtype=np.int64)
    labels = pd.unique(names)[::-1]
    assert median_is_value(names, values, labels) == expected[::-1]


def test_the_size_summary_prints_a_stored_median_as_an_integer() -> None:
    from strata.analysis.stats.plaintables import memory_size_table

    stats = plainstats.group_stats([[8, 48, 8, 8, 1, 8], [8, 48]])
    columns, _ = memory_size_table(["a", "b"], stats)
    medians = next(c.values for c in columns if c.name == "Med")
    assert medians == [8, 28.0]
    assert [type(m) for m in medians] == [int, float]
