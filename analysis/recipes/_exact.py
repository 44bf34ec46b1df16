"""Integer sums for the recipes that never wrap: exact, or refused in one line.

NumPy's and pandas' int64 sums and running sums wrap without a word past 2^63 - 1 (nsys's
pandas recipes print such wrapped numbers; its SQL ``sum()`` stops with "integer overflow").
Durations near 2^62 ns only come from a damaged report, so the fast int64 path stays the
rule: a float64 bound on the magnitudes says when a sum might not fit, and only those sums
are redone with Python integers (:func:`analysis.engine.exact_sum`). A result that truly
passes the int64 range is refused with :class:`RecipeOverflowError`; a recipe's ``map``
raising it skips that report (named with the reason), its ``reduce`` ends the run.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from strata.analysis.engine import exact_sum
from strata.analysis.errors import AnalysisError

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "RecipeOverflowError",
    "checked_add",
    "checked_cumsum",
    "checked_subtract",
    "first_outside_int64",
    "group_sums",
    "overflow_error",
    "segment_sums",
    "sum_fits_int64",
]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: A sum whose magnitudes add up (in float64) to less than this fits int64 for sure: the
#: float bound errs by far less than the factor of two of room left.
_SAFE = float(2**62)


class RecipeOverflowError(AnalysisError):
    """A recipe's sum (a total, a running sum, a shifted time) passes the int64 range."""


def overflow_error(what: str) -> RecipeOverflowError:
    """The one line for ``what`` (e.g. "the total of 'k'") outside the int64 range."""
    # Only a damaged report gets there: say so, so that nobody hunts for a Strata bug.
    return RecipeOverflowError(
        f"integer overflow: {what} passes the int64 range; the durations look damaged"
    )


def first_outside_int64(values: npt.ArrayLike) -> int | None:
    """Index of the first value outside the int64 range (values are ints), or None."""
    array = np.asarray(values)
    if array.dtype != object:
        return None
    for index, value in enumerate(array.tolist()):
        if not INT64_MIN <= int(value) <= INT64_MAX:
            return index
    return None


def _magnitudes(values: npt.NDArray[np.int64]) -> np.ndarray:
    """|values|, for a float64 bound on their sums: the values themselves when none is
    negative (durations: no 80 MB float copy of 10 M values, the sum casts as it goes)."""
    if len(values) == 0 or int(values.min()) >= 0:
        return values
    return np.abs(values.astype(np.float64))


def sum_fits_int64(values: npt.NDArray[np.int64]) -> bool:
    """Whether the exact sum of int64 ``values`` lies in the int64 range."""
    values = np.asarray(values, dtype=np.int64)
    if float(np.add.reduce(_magnitudes(values), dtype=np.float64)) < _SAFE:
        return True
    return INT64_MIN <= exact_sum(values) <= INT64_MAX


def _narrowest(exact: npt.NDArray[np.object_]) -> np.ndarray:
    """Python ints as int64 when every one fits, else kept as Python ints."""
    return exact if first_outside_int64(exact) is not None else exact.astype(np.int64)


def segment_sums(values: npt.NDArray[np.int64], starts: npt.NDArray[np.int64]) -> np.ndarray:
    """Exact sum of every segment ``values[starts[g]:starts[g + 1]]`` (the last runs to the end).

    ``starts`` are strictly increasing. Returns int64, or an object array of Python ints
    when some sum lies outside the int64 range (see :func:`first_outside_int64`).
    """
    if len(starts) == 0:
        return np.empty(0, dtype=np.int64)
    sums = np.add.reduceat(values, starts, dtype=np.int64)  # wraps where a sum does not fit
    bound = np.add.reduceat(_magnitudes(values), starts, dtype=np.float64)
    risky = np.flatnonzero(bound >= _SAFE)
    if not len(risky):
        return sums
    ends = np.r_[starts[1:], len(values)]
    exact = sums.astype(object)
    for g in risky.tolist():  # a loop over damaged groups only
        exact[g] = exact_sum(values[int(starts[g]) : int(ends[g])])
    return _narrowest(exact)


def group_sums(codes: npt.NDArray[np.int64], values: npt.ArrayLike, groups: int) -> np.ndarray:
    """Exact sum of ``values`` per code in ``range(groups)``, as :func:`segment_sums` returns.

    ``values`` are int64, or Python ints (an object array, e.g. sums that did not fit).
    """
    values = np.asarray(values)
    if values.dtype == object:
        exact = np.zeros(groups, dtype=object)  # Python int 0s: + stays exact
        np.add.at(exact, codes, values)
        return _narrowest(exact)
    values = values.astype(np.int64, copy=False)
    sums = np.zeros(groups, dtype=np.int64)
    np.add.at(sums, codes, values)  # wraps where a sum does not fit
    bound = np.bincount(codes, weights=_magnitudes(values), minlength=groups)
    risky = np.flatnonzero(bound >= _SAFE)
    if not len(risky):
        return sums
    exact = sums.astype(object)
    for g in risky.tolist():
        exact[g] = exact_sum(values[codes == g])
    return _narrowest(exact)


def checked_cumsum(values: npt.NDArray[np.int64], what: str) -> npt.NDArray[np.int64]:
    """Running sum of ``values`` (int64), or :class:`RecipeOverflowError` naming ``what``."""
    values = np.asarray(values, dtype=np.int64)
    if float(np.add.reduce(_magnitudes(values), dtype=np.float64)) < _SAFE:
        return np.cumsum(values)
    running = list(itertools.accumulate(values.tolist()))  # Python ints: exact
    if any(not INT64_MIN <= v <= INT64_MAX for v in running):
        raise overflow_error(what)
    return np.asarray(running, dtype=np.int64)


def checked_add(values: npt.NDArray[np.int64], offset: int, what: str) -> npt.NDArray[np.int64]:
    """``values + offset`` (int64), or :class:`RecipeOverflowError` naming ``what``."""
    values = np.asarray(values, dtype=np.int64)
    if len(values) and not (
        int(values.min()) + offset >= INT64_MIN and int(values.max()) + offset <= INT64_MAX
    ):
        raise overflow_error(what)
    return values + np.int64(offset)


def checked_subtract(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], what: str
) -> npt.NDArray[np.int64]:
    """``a - b`` elementwise (int64), or :class:`RecipeOverflowError` naming ``what``."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if len(a) and len(b) and int(a.min()) >= 0 and int(b.min()) >= 0:
        return a - b  # two values >= 0 are less than 2^63 apart: the common case, two passes
    out = a - b  # wraps; it did iff a and b differ in sign and out's sign differs from a's
    if bool((((a ^ b) & (a ^ out)) < 0).any()):
        raise overflow_error(what)
    return out
