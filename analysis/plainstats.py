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

:func:`sqlite_round` is :func:`analysis.engine.sqlite_round` of one value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PlainGroupStats", "group_stats", "sqlite_round"]

#: As the engine: a group whose count times its largest |offset| stays below this has an
#: int64 sum that cannot overflow; others are summed exactly (the same numbers here).
_SAFE_SUM = float(2**62)
#: NumPy's pairwise summation: unrolled by 8, leaves of at most this many values.
_PW_BLOCK = 128


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


def _offset_base(vmin: int, vmax: int, groups: int) -> int:
    """The ``vmin`` that :func:`analysis.engine._sorted_segments` subtracts from the values
    of ``groups`` groups (codes 0..groups-1) spanning ``vmin..vmax``."""
    bits = max(vmax - vmin, 1).bit_length()
    code_bits = groups.bit_length()  # (code_max + 1).bit_length()
    if code_bits + bits <= 62:
        return 0 if vmin >= 0 and vmax.bit_length() <= bits else vmin
    return 0 if bits > 62 else vmin


def _pairwise(a: list[float], lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``a[lo:lo + n]`` (``pairwise_sum`` in its loops)."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= _PW_BLOCK:
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
    half = n // 2
    half -= half % 8
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
    base = _offset_base(vmin, vmax, len(groups))
    for group in groups:
        offsets = sorted(v - base for v in group) if base else sorted(group)
        n = len(offsets)
        first, last = offsets[0], offsets[-1]
        sums = sum(offsets)
        if n * max(abs(float(first)), abs(float(last))) >= _SAFE_SUM:
            mean_off = sums / n  # the engine's exact path: int / int, correctly rounded
        else:
            mean_off = float(sums) / float(n)
        count.append(n)
        group_total = sums + base * n
        total.append(group_total)
        minimum.append(first + base)
        maximum.append(last + base)
        mean.append(float(group_total) / float(n))
        lo, hi = offsets[(n - 1) // 2], offsets[n // 2]
        whole = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
        median.append(float(whole) + ((lo ^ hi) & 1) * 0.5 + base)
        one_value.append(lo == hi)
        if n > 1:
            squares = [(float(v) - mean_off) * (float(v) - mean_off) for v in offsets]
            std.append(math.sqrt(_reduceat_sum(squares) / float(n - 1)))
        else:
            std.append(0.0)
    return PlainGroupStats(count, total, minimum, maximum, mean, median, std, one_value)


def sqlite_round(value: float, digits: int = 1) -> float:
    """Round half away from zero on the decimal representation, as SQLite's ``round``:
    :func:`analysis.engine.sqlite_round` of one value, to the bit."""
    if not math.isfinite(value):
        return value
    factor = 10.0**digits
    scaled = value * factor
    # NumPy's round: rint(value * 10^digits) / 10^digits, rint keeping the sign of zero.
    out = math.copysign(float(round(scaled)), scaled) / factor
    magnitude = abs(value) * factor
    if abs(magnitude - math.floor(magnitude) - 0.5) < 1e-6:
        from decimal import ROUND_HALF_UP, Decimal

        quantum = Decimal(1).scaleb(-digits)
        out = float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP))
    return out
