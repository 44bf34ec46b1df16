"""The engine's group reduction in plain Python, bit for bit: for the few groups of a small
report, where importing NumPy would cost more than the whole answer.

:func:`group_stats` gives what :func:`analysis.engine.group_stats` gives for the same groups
(count, exact total, min, max, mean, exact median, sample standard deviation), every double
the same to the last bit (tests/analysis/test_plainstats.py checks it with random data):

* the values are offset by the engine's ``vmin`` (its choice depends on the span of all the
  values and the number of groups, see :func:`_offset_base`);
* the mean of the offsets is ``float(sum) / count`` where the engine's int64 sum is sure to
  fit, else the exact sum divided as Python ints, as ``_segment_totals`` does;
* the squared deviations are summed in NumPy's ``np.add.reduceat`` order: the first value
  plus the pairwise sum of the rest (blocks of 8 accumulators, leaves of 128, halves cut at a
  multiple of 8), :func:`_pairwise`.

Every formula the two share (the offset base, the overflow test, the mean, the median and
its nsys rule, the sample std, SQLite's rounding, NumPy's pairwise cuts) is written once, in
:mod:`analysis.formulas`; :func:`sqlite_round` is that module's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strata.analysis import formulas
from strata.analysis.formulas import sqlite_round

__all__ = ["PlainGroupStats", "group_stats", "sqlite_round"]


@dataclass(frozen=True)
class PlainGroupStats:
    """Per group (in the order given), as :class:`analysis.engine.GroupStats` holds them."""

    count: list[int]
    total: list[int]
    minimum: list[int]
    maximum: list[int]
    mean: list[float]
    median: list[float]
    std: list[float]
    #: Whether each median is one stored value (an odd count, or two equal middle values):
    #: nsys's ``median()`` then gives that integer, else the REAL mean of the two (spec
    #: §3.1). None where it was not worked out (it matters only to unrounded medians).
    median_is_value: list[bool] | None = None

    def __len__(self) -> int:
        return len(self.count)


def _pairwise(a: list[float], lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``a[lo:lo + n]`` (``pairwise_sum`` in its loops)."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= formulas.PAIRWISE_LEAF:
        r = a[lo : lo + 8]
        i = 8
        stop = n - n % 8
        while i < stop:
            base = lo + i
            r[0] += a[base]
            r[1] += a[base + 1]
            r[2] += a[base + 2]
            r[3] += a[base + 3]
            r[4] += a[base + 4]
            r[5] += a[base + 5]
            r[6] += a[base + 6]
            r[7] += a[base + 7]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for j in range(lo + i, lo + n):
            res += a[j]
        return res
    half = formulas.pairwise_half(n)
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def _reduceat_sum(a: list[float]) -> float:
    """``np.add.reduceat`` of one segment: its first value plus the pairwise sum of the rest."""
    return a[0] + _pairwise(a, 1, len(a) - 1) if len(a) > 1 else a[0]


def group_stats(groups: Sequence[Sequence[int]]) -> PlainGroupStats:
    """Reduce each group of integers (non-empty; codes are the positions, as the engine's).

    The values of a group may come in any order; every group is sorted here.
    """
    count, total, minimum, maximum, mean, median, std = [], [], [], [], [], [], []
    one_value: list[bool] = []
    if not groups:
        return PlainGroupStats(count, total, minimum, maximum, mean, median, std, one_value)
    vmin = min(min(g) for g in groups)
    vmax = max(max(g) for g in groups)
    base = formulas.offset_base(vmin, vmax, len(groups))
    for group in groups:
        offsets = sorted(v - base for v in group) if base else sorted(group)
        n = len(offsets)
        first, last = offsets[0], offsets[-1]
        sums = sum(offsets)
        if formulas.sum_is_risky(n, first, last):
            mean_off = formulas.exact_mean(sums, n)  # the engine's exact path
        else:
            mean_off = formulas.group_mean(sums, n)
        count.append(n)
        group_total = sums + base * n
        total.append(group_total)
        minimum.append(first + base)
        maximum.append(last + base)
        mean.append(formulas.group_mean(group_total, n))
        lo, hi = offsets[(n - 1) // 2], offsets[n // 2]
        median.append(formulas.midpoint(lo, hi) + base)
        one_value.append(formulas.median_is_value(lo, hi))
        if n > 1:
            squares = [(float(v) - mean_off) * (float(v) - mean_off) for v in offsets]
            std.append(formulas.sample_std(_reduceat_sum(squares), n))
        else:
            std.append(0.0)
    return PlainGroupStats(count, total, minimum, maximum, mean, median, std, one_value)
