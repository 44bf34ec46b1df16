"""The one home of each statistics formula that both stats engines apply: plain Python, no NumPy.

The NumPy engine (:mod:`analysis.engine`, the column path and the panel's window indexes) and
its plain-Python mirror (:mod:`analysis.plainstats`, the small-report SQL path) must give the
same doubles to the last bit (tests/analysis/test_plainstats.py). Each rule they share is
written here once:

* :func:`sqlite_round`: SQLite's ``round()``, half away from zero on the decimal form (spec
  nsys-sqlite.md §3.1); the engine's array form rounds in bulk with NumPy and sends the
  values :func:`is_near_half` picks to :func:`round_decimal`;
* :func:`midpoint` and :func:`median_is_value`: the exact median of a sorted run from its two
  middle values, and whether nsys's ``median()`` gives one stored integer there (written with
  operators only, so the same expression serves Python ints and int64 arrays);
* :func:`sample_std`: the sample standard deviation from the summed squared deviations;
* :func:`sum_is_risky`, :func:`group_mean`, :func:`exact_mean`: the mean, from a float64
  division of the sum, or the exact integer division where an int64 sum might overflow;
* :func:`key_layout` (with :func:`offset_base`): how the engine packs (group, value) keys
  and which base it subtracts from the values, which decides the bits of its means and
  deviations;
* :func:`pairwise_half`: where NumPy's pairwise summation cuts a run (plain Python mirrors
  NumPy's order of additions with it).

Imported by the cold small-report path: keep it free of NumPy and pandas.
"""

from __future__ import annotations

import math

__all__ = [
    "HALF_TOLERANCE",
    "PAIRWISE_LEAF",
    "SAFE_SUM",
    "exact_mean",
    "group_mean",
    "is_near_half",
    "key_layout",
    "median_is_value",
    "midpoint",
    "offset_base",
    "pairwise_half",
    "round_decimal",
    "sample_std",
    "sqlite_round",
    "sum_is_risky",
]

#: A group whose count times its largest |value| stays below this has an int64 sum that
#: cannot overflow (a float64 bound, with room for its rounding); others are summed exactly.
SAFE_SUM = float(2**62)
#: A scaled value this close to ``k + 0.5`` is rounded on its decimal form (SQLite's way).
HALF_TOLERANCE = 1e-6
#: NumPy's pairwise summation: unrolled by 8, leaves of at most this many values.
PAIRWISE_LEAF = 128


# -- rounding ---------------------------------------------------------------------------------


def is_near_half(frac):  # noqa: ANN001, ANN201 - a float or a float64 array
    """Whether the fractional part(s) ``frac`` of ``|value| * 10^digits`` may be a half, where
    binary and decimal rounding can disagree (a float, or elementwise for an array)."""
    return abs(frac - 0.5) < HALF_TOLERANCE


def round_decimal(value: float, digits: int = 1) -> float:
    """Round the shortest decimal form of ``value`` half away from zero to ``digits``."""
    from decimal import ROUND_HALF_UP, Decimal  # rarely needed: not at start-up

    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP))


def sqlite_round(value: float, digits: int = 1) -> float:
    """Round half away from zero on the decimal representation, as SQLite's ``round``.

    spec: nsys-sqlite.md §3.1 — ``round(0.15, 1)`` is 0.2 in SQLite, 0.1 in Python. Only a
    value whose scaled form is near a half (:func:`is_near_half`) needs the decimal path
    (:func:`round_decimal`); the others round as NumPy's ``round`` does (``rint(value *
    10^digits) / 10^digits``, keeping the sign of zero), which agrees with SQLite there.
    :func:`analysis.engine.sqlite_round` is this rule on arrays, to the bit.
    """
    if not math.isfinite(value):
        return value
    factor = 10.0**digits
    scaled = value * factor
    magnitude = abs(value) * factor
    if is_near_half(magnitude - math.floor(magnitude)):
        return round_decimal(value, digits)
    return math.copysign(float(round(scaled)), scaled) / factor


# -- median, mean, std ------------------------------------------------------------------------


def midpoint(lo, hi):  # noqa: ANN001, ANN201 - ints, or int64 arrays
    """``(lo + hi) / 2`` as a float, without forming the sum (which could pass 2^63):
    ``(lo >> 1) + (hi >> 1) + (lo & hi & 1)`` plus one half when exactly one is odd, so that
    e.g. [5, 3000000000] gives 1500000002.5 exactly (spec §3.1 median).

    The median of a sorted run of ``n`` values is ``midpoint(v[(n - 1) // 2], v[n // 2])``.
    Operators only: Python ints give a float, int64 arrays a float64 array, the same bits.
    """
    whole = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
    return whole + ((lo ^ hi) & 1) * 0.5


def median_is_value(lo, hi):  # noqa: ANN001, ANN201 - ints, or arrays
    """Whether the median of a run whose middle values are ``lo``, ``hi`` is one stored value
    (an odd count, or two equal middle values): nsys's ``median()`` then gives that integer,
    else the REAL mean of the two (spec §3.1). Elementwise for arrays."""
    return lo == hi


def sample_std(squares, count, xp=None):  # noqa: ANN001, ANN201
    """The sample standard deviation (divisor ``count - 1``) from the sum of squared
    deviations from the mean; 0.0 for a single value, as nsys.

    Scalars with ``xp`` None; with ``xp`` (NumPy or CuPy), elementwise over arrays.
    """
    if xp is None:
        return math.sqrt(squares / float(count - 1)) if count > 1 else 0.0
    return xp.where(count > 1, xp.sqrt(squares / xp.maximum(count - 1, 1)), 0.0)


def sum_is_risky(count: int, first: float, last: float) -> bool:
    """Whether an int64 sum of ``count`` sorted values from ``first`` to ``last`` might
    overflow (:data:`SAFE_SUM`): such a group is summed and divided exactly."""
    return count * max(abs(float(first)), abs(float(last))) >= SAFE_SUM


def group_mean(total: int, count: int) -> float:
    """A group's mean: its exact total over its count, one rounding each, as nsys's ``avg()``
    divides its (exact, below 2^53) sum."""
    return float(total) / float(count)


def exact_mean(total: int, count: int) -> float:
    """The correctly rounded ``total / count`` of Python ints (a sum past int64's safe range,
    :func:`sum_is_risky`)."""
    return total / count


# -- the engine's key layout and summation order -----------------------------------------------


def key_layout(vmin: int, vmax: int, code_min: int, code_max: int) -> tuple[int, int, bool, int]:
    """The engine's key layout for values ``vmin..vmax`` in groups ``code_min..code_max``:
    ``(code_bits, bits, packed, base)``. :func:`analysis.engine.group_stats` sorts (group,
    value) pairs in one packed key of ``code_bits + bits`` bits when ``packed``, else by a
    lexsort; ``base`` is subtracted from every value first (0: the values as they are).

    Codes are packed from the smallest one. A packed key needs ``code_bits + bits <= 62``;
    non-negative values that fit ``bits`` then need no offset (one pass less over the
    values). Values spanning 2^62 or more (only a damaged report's) are never offset, so that
    no subtraction wraps.
    """
    bits = max(vmax - vmin, 1).bit_length()
    code_bits = (code_max - code_min + 1).bit_length()
    if code_bits + bits <= 62:
        base = 0 if vmin >= 0 and vmax.bit_length() <= bits else vmin
        return code_bits, bits, True, base
    return code_bits, bits, False, 0 if bits > 62 else vmin


def offset_base(vmin: int, vmax: int, groups: int) -> int:
    """The base the engine subtracts from the values of ``groups`` groups (codes
    ``0..groups - 1``) spanning ``vmin..vmax``."""
    return key_layout(vmin, vmax, 0, groups - 1)[3]


def pairwise_half(n: int) -> int:
    """Where NumPy's pairwise summation splits a run of ``n`` values longer than
    :data:`PAIRWISE_LEAF`: at half, rounded down to a multiple of 8."""
    half = n // 2
    return half - half % 8
