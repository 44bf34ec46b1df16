"""The group-by engine: per-group count, total, mean, exact median, min, max, sample std and
quantiles of int64 values, by sort + segment reductions, written once for NumPy and CuPy.

Measured on the 2-core reference machine (10 M values, 500 groups): ``np.sort`` of the packed
int64 key takes ~0.25 s while ``argsort`` takes 1.3 s, so group code and value are packed into
one key (``code << bits | value - vmin``) and sorted once in place whenever it fits in 63 bits
(always, for durations below ~2^40 ns with fewer than ~2^22 groups), as int32 when it fits in
31 bits (half the bytes, ~0.12 s to sort); otherwise a lexsort is used. Group bounds then come
from a binary search of each code's first key (O(groups log n), no pass over the values), the
low bits are the values, and everything else is a segment reduction. The whole of
``group_stats`` takes ~0.17 s there with int32 keys, ~0.3 s with int64 keys (was 1.1 s).

Exact medians and quantiles are index lookups in the sorted segments: the one sort that
finds the groups also orders each group's values, so a per-group partition would only add
work (``np.partition`` per segment is a Python loop over groups). The key is built in one
buffer from the columns as they are (int32 or int64), with no whole-column copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from strata.analysis import formulas
from strata.analysis.plainstats import PlainGroupStats
from strata.analysis.xp import to_numpy

__all__ = ["GroupStats", "exact_sum", "group_stats", "reduce_sorted", "sqlite_round"]

#: Above this many possible codes, group bounds come from a pass over the sorted codes
#: instead of one binary search per possible code.
_DENSE_CODES_MAX = 1 << 22


@dataclass(frozen=True)
class GroupStats:
    """Statistics per group, NumPy arrays indexed like ``keys``.

    Attributes
    ----------
    keys
        The group code of each row of the result (int64), ascending.
    count
        Values per group (int64).
    total
        Sum, exact: int64, or (only when some group's sum lies outside the int64 range,
        as with a damaged report's durations near 2^62) an object array of Python ints.
        It never wraps. nsys's SQL ``sum()`` fails there with "integer overflow"; the
        summaries do the same through :func:`analysis.stats._base.stat_block`.
    minimum, maximum
        Min, max (int64, exact).
    mean
        float(total) / count (float64), as SQLite's ``avg()`` for sums below 2^53.
    median
        Middle value, or the mean of the two middle values (float64; exact for int64 input
        below 2^53).
    std
        Sample standard deviation (divisor n - 1); 0.0 for single-value groups, as nsys.
    quantiles
        ``q -> float64 array`` with linear interpolation (pandas/NumPy default).
    """

    keys: np.ndarray
    count: np.ndarray
    total: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    mean: np.ndarray
    median: np.ndarray
    std: np.ndarray
    quantiles: dict[float, np.ndarray]

    def __len__(self) -> int:
        return len(self.keys)

    def plain(self) -> PlainGroupStats:
        """The statistics as lists (a summary's few groups), for the table rules of
        :mod:`analysis.stats.plaintables`."""
        return PlainGroupStats(
            count=self.count.tolist(),
            total=np.asarray(self.total).tolist(),
            minimum=self.minimum.tolist(),
            maximum=self.maximum.tolist(),
            mean=self.mean.tolist(),
            median=self.median.tolist(),
            std=self.std.tolist(),
        )


def _empty(quantiles: tuple[float, ...]) -> GroupStats:
    empty_i = np.empty(0, dtype=np.int64)
    empty_f = np.empty(0, dtype=np.float64)
    return GroupStats(
        empty_i, empty_i, empty_i, empty_i, empty_i, empty_f, empty_f, empty_f,
        {q: empty_f for q in quantiles},
    )  # fmt: skip


def _sorted_segments(xp: ModuleType, codes, values):
    """Sort by (code, value); return (keys, starts, offsets, vmin) of the non-empty groups.

    ``offsets`` are the sorted values minus ``vmin`` (int32 or int64, >= 0); when the values
    span 2^62 or more (only a damaged report does), ``vmin`` is 0 and the offsets are the
    values themselves, so that no subtraction wraps.
    """
    code_max = int(codes.max())
    code_min = int(codes.min())
    if code_min < 0:
        raise ValueError("group codes must be non-negative")
    # Codes are packed from the smallest one: a report's few CUDA API names have ids in the
    # hundreds, 4 bits apart instead of 9, and their 27-bit durations then make int32 keys.
    # Durations and sizes are >= 0: no base to subtract (one pass over 10 M values less).
    code_bits, bits, packed_key, vmin = formulas.key_layout(
        int(values.min()), int(values.max()), code_min, code_max
    )
    if packed_key:
        # A key that fits 31 bits sorts as int32: half the memory traffic, ~2x faster sort
        # (e.g. 6 API names x durations below 2^27 ns).
        dtype = xp.int32 if code_bits + bits <= 31 else xp.int64
        # The key is built in one buffer: the ufuncs cast their inputs block by block, so
        # no whole-column copy of the codes or values is made (10 M int64 values -> int32
        # keys: 80 MB and a pass less than ``astype`` then ``|=``).
        packed = xp.empty(len(values), dtype=dtype)
        # ``codes - code_min`` and ``values - vmin`` in int64 (int32 could overflow), a
        # block at a time with NumPy: 10 M durations of one kernel held two 80 MB copies at
        # the peak.
        step = _DEVIATION_ROWS if xp is np else max(len(values), 1)
        for a in range(0, len(values), step):
            part = packed[a : a + step]
            high = codes[a : a + step]
            if code_min:
                high = high.astype(xp.int64) - code_min
            xp.left_shift(high, bits, out=part, dtype=dtype)
            low = values[a : a + step]
            if vmin:
                low = low.astype(xp.int64) - vmin
            xp.bitwise_or(part, low, out=part, dtype=dtype)
            del high, low
        packed.sort()
        span = code_max - code_min
        if span < _DENSE_CODES_MAX:
            probes = xp.arange(span + 2, dtype=xp.int64) << bits
            # (span + 1) << bits < 2^(code_bits + bits): the probes fit the key dtype.
            bounds = xp.searchsorted(packed, probes.astype(dtype))
            sizes = bounds[1:] - bounds[:-1]
            keys = xp.flatnonzero(sizes)
            starts = bounds[keys]
        else:
            sorted_codes = packed >> bits
            starts = _run_starts(xp, sorted_codes)
            keys = sorted_codes[starts]
        packed &= (1 << bits) - 1
        return keys.astype(xp.int64) + code_min, starts.astype(xp.int64), packed, vmin
    order = xp.lexsort(xp.stack([values, codes]))
    sorted_codes = codes[order]
    starts = _run_starts(xp, sorted_codes)
    offsets = values[order].astype(xp.int64) - vmin
    return sorted_codes[starts].astype(xp.int64), starts, offsets, vmin


def _run_starts(xp: ModuleType, sorted_codes):
    change = sorted_codes[1:] != sorted_codes[:-1]
    return xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.flatnonzero(change) + 1])


def group_stats(
    codes: np.ndarray,
    values: np.ndarray,
    xp: ModuleType = np,
    quantiles: tuple[float, ...] = (),
) -> GroupStats:
    """Group ``values`` by ``codes`` and reduce each group.

    Parameters
    ----------
    codes
        Non-negative int group code per value (e.g. a name id).
    values
        Integer values (durations in ns, bytes); int32 and int64 are used as they are,
        anything else is converted to int64.
    xp
        ``numpy`` or ``cupy``; inputs are moved to it, results come back as NumPy.
    quantiles
        Extra quantiles in [0, 1] to compute per group (linear interpolation).

    Returns
    -------
    GroupStats
        One entry per code that occurs, in ascending code order. Totals are exact: see
        :class:`GroupStats` for a total beyond the int64 range.
    """
    codes = xp.asarray(codes)
    values = xp.asarray(values)
    if values.dtype not in (xp.int32, xp.int64):
        values = values.astype(xp.int64)  # int32 stays as it is: no 10 M-row conversion
    if len(values) == 0:
        return _empty(quantiles)
    keys, starts, offsets, vmin = _sorted_segments(xp, codes, values)
    count = xp.concatenate([starts[1:], xp.asarray([len(offsets)], dtype=starts.dtype)]) - starts
    reduced = reduce_sorted(xp, offsets, starts, count, vmin)
    result_q = {q: to_numpy(_quantile(xp, offsets, starts, count, q)) + vmin for q in quantiles}
    return GroupStats(keys=to_numpy(keys), quantiles=result_q, **reduced)


def reduce_sorted(xp: ModuleType, values, starts, count, vmin: int = 0) -> dict[str, np.ndarray]:
    """Reduce groups of sorted integers: group ``g`` is ``values[starts[g]:][:count[g]]``.

    ``values`` (int32/int64, in ``xp``) are ascending within each group and stand for
    ``values + vmin``; ``count`` is > 0. This is the one reduction behind
    :func:`group_stats` and the stats panel's windows (:mod:`analysis.window_stats`).

    Returns
    -------
    dict
        ``count``, ``total``, ``minimum``, ``maximum``, ``mean``, ``median``, ``std`` as
        :class:`GroupStats` holds them (NumPy).
    """
    n = len(values)
    count_h = to_numpy(count).astype(np.int64)
    starts_h = to_numpy(starts).astype(np.int64)
    first = to_numpy(values[starts]).astype(np.int64)
    last = to_numpy(values[starts + count - 1]).astype(np.int64)
    sums, mean_off = _segment_totals(xp, values, starts, starts_h, count_h, first, last)
    total = _plus(sums, vmin, count_h)
    mean = group_means(total, count_h)
    # Two-pass sample variance around each group's mean: exact to float64 rounding even
    # when a group sits far from the global minimum (durations up to 2^40 ns).
    if xp is np:
        sq = _squared_deviations(values, mean_off, starts_h, count_h)
    else:
        dev = _broadcast(xp, xp.asarray(mean_off), starts, count, n)
        xp.subtract(values, dev, out=dev)  # in place: one 10 M float array, not two
        dev *= dev
        sq = _segment_sum(xp, dev, starts)
        del dev
    std = formulas.sample_std(sq, count, xp)
    return {
        "count": count_h,
        "total": total,
        "minimum": first + vmin,
        "maximum": last + vmin,
        "mean": mean,
        "median": _median(xp, values, starts, count) + vmin,
        "std": to_numpy(std).astype(np.float64),
    }


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _segment_totals(xp: ModuleType, values, starts, starts_h, count_h, first, last):
    """(exact sum per group, mean per group as float64): int64 sums where they are sure to
    fit, exact Python integers (a 32-bit split) for the few groups that might not."""
    if xp is np:
        sums = _int_segment_sums(values, starts_h)  # wraps if too big
    else:
        sums = to_numpy(_segment_sum(xp, values, starts)).astype(np.int64)  # wraps if too big
    largest = np.maximum(np.abs(first.astype(np.float64)), np.abs(last.astype(np.float64)))
    risky = np.flatnonzero(count_h * largest >= formulas.SAFE_SUM)  # formulas.sum_is_risky
    if not len(risky):
        return sums, sums / count_h
    exact = sums.astype(object)
    mean = sums / count_h
    for g in risky.tolist():  # a loop over damaged groups, never over events
        part = to_numpy(values[int(starts_h[g]) : int(starts_h[g] + count_h[g])])
        exact[g] = exact_sum(part)
        mean[g] = formulas.exact_mean(exact[g], int(count_h[g]))
    return _narrowest(exact), mean


def exact_sum(values: np.ndarray) -> int:
    """Return the exact sum of int64 ``values`` as a Python int (never wraps).

    Each value is split into its high and low 32 bits (``v = hi·2^32 + lo``, ``lo >= 0``),
    whose int64 sums cannot overflow for fewer than 2^31 values at a time.
    """
    values = np.asarray(values).astype(np.int64, copy=False)
    total = 0
    for lo in range(0, len(values), 1 << 30):
        chunk = values[lo : lo + (1 << 30)]
        total += (int((chunk >> 32).sum(dtype=np.int64)) << 32) + int(
            (chunk & 0xFFFFFFFF).sum(dtype=np.int64)
        )
    return total


def _narrowest(values: np.ndarray) -> np.ndarray:
    """An object array of Python ints as int64 when every one fits, else as it is."""
    if all(_INT64_MIN <= int(v) <= _INT64_MAX for v in values.tolist()):
        return values.astype(np.int64)
    return values


def _plus(sums: np.ndarray, vmin: int, count: np.ndarray) -> np.ndarray:
    """``sums + vmin * count``, exact (int64 when every result fits, else Python ints)."""
    if vmin == 0:
        return sums
    bound = np.abs(sums.astype(np.float64)) + abs(float(vmin)) * count
    if sums.dtype != object and bool((bound < formulas.SAFE_SUM).all()):
        return sums + vmin * count
    pairs = zip(sums.tolist(), count.tolist(), strict=True)
    return _narrowest(np.array([int(s) + vmin * int(c) for s, c in pairs], dtype=object))


#: Rows of float64 deviations (8 MiB), or of int32 values cast to int64, held at once by
#: :func:`_squared_deviations` and :func:`_int_segment_sums` (NumPy).
_DEVIATION_ROWS = 1 << 20


def _squared_deviations(
    values: np.ndarray, mean_off: np.ndarray, starts: np.ndarray, count: np.ndarray
) -> np.ndarray:
    """Per group, the sum of ``(value - mean)^2`` over its sorted ``values`` (NumPy), to the
    bit what ``np.add.reduceat`` of one float64 copy of every deviation gives (that order is
    the contract analysis.plainstats reproduces), holding at most :data:`_DEVIATION_ROWS`
    deviations at a time: whole groups together, and a bigger group in the leaves of NumPy's
    own pairwise summation (:func:`_pairwise_squares`). 10 M durations of one kernel held
    80 MB more at the peak of a summary.
    """
    ends = starts + count
    out = np.empty(len(starts), dtype=np.float64)
    g = 0
    while g < len(starts):
        lo = int(starts[g])
        if count[g] > _DEVIATION_ROWS:
            # reduceat's segment sum: its first value plus the pairwise sum of the rest.
            first = np.float64(values[lo]) - mean_off[g]
            rest = _pairwise_squares(values, mean_off[g], lo + 1, int(count[g]) - 1)
            out[g] = first * first + rest
            g += 1
            continue
        stop = int(np.searchsorted(ends, lo + _DEVIATION_ROWS, side="right"))
        hi = int(ends[stop - 1])
        dev = np.repeat(mean_off[g:stop], count[g:stop])
        np.subtract(values[lo:hi], dev, out=dev)
        dev *= dev
        out[g:stop] = np.add.reduceat(dev, starts[g:stop] - lo)
        g = stop
    return out


def _pairwise_squares(values: np.ndarray, mean: np.float64, lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``(values[lo:lo + n] - mean)^2``: its halving (cut at a
    multiple of 8, as ``pairwise_sum`` cuts) down to leaves of at most
    :data:`_DEVIATION_ROWS` values, each summed by NumPy itself."""
    if n <= max(_DEVIATION_ROWS, formulas.PAIRWISE_LEAF):
        dev = np.empty(n, dtype=np.float64)
        np.subtract(values[lo : lo + n], mean, out=dev)
        dev *= dev
        return np.add.reduce(dev, initial=0.0)  # 0.0 + the leaf's pairwise sum: exact
    half = formulas.pairwise_half(n)
    return _pairwise_squares(values, mean, lo, half) + _pairwise_squares(
        values, mean, lo + half, n - half
    )


def _int_segment_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``np.add.reduceat(values, starts, dtype=np.int64)`` (wrapping as it wraps), without
    its whole-array cast of int32 values: :data:`_DEVIATION_ROWS` rows at a time (integer
    sums do not depend on the order). 10 M int32 keys: 80 MB less at the peak."""
    if values.dtype == np.int64 or len(values) <= _DEVIATION_ROWS:
        return np.add.reduceat(values, starts, dtype=np.int64)
    out = np.zeros(len(starts), dtype=np.int64)
    for a in range(0, len(values), _DEVIATION_ROWS):
        b = min(a + _DEVIATION_ROWS, len(values))
        first = int(np.searchsorted(starts, a, side="right")) - 1  # the group holding row a
        last = int(np.searchsorted(starts, b, side="left"))  # groups starting before b
        local = np.maximum(starts[first:last], a) - a
        with np.errstate(over="ignore"):
            out[first:last] += np.add.reduceat(values[a:b], local, dtype=np.int64)
    return out


def _broadcast(xp: ModuleType, per_group, starts, count, n: int):
    """Return ``per_group`` repeated over each group's rows (rows are grouped by segment)."""
    if xp is np:
        return np.repeat(per_group, count)
    segment = xp.zeros(n, dtype=xp.int32)
    segment[starts[1:]] = 1
    return per_group[xp.cumsum(segment)]


def _segment_sum(xp: ModuleType, values, starts):
    # np.add.reduceat: 16 ms for 10 M floats here, bincount(weights=) 500 ms.
    acc = xp.float64 if values.dtype.kind == "f" else xp.int64
    if xp is np:
        return np.add.reduceat(values, starts, dtype=acc)
    if acc == xp.float64:
        # No reduceat in CuPy. Differences of a float prefix sum lose the small groups'
        # digits (relative 1e-8 seen for sums of squares): a weighted bincount keeps them.
        segment = xp.zeros(len(values), dtype=xp.int32)
        segment[starts[1:]] = 1
        return xp.bincount(xp.cumsum(segment), weights=values, minlength=len(starts))
    # Integer prefix sums wrap, but their differences are right wherever the sum fits.
    csum = xp.concatenate([xp.zeros(1, dtype=acc), xp.cumsum(values, dtype=acc)])
    ends = xp.concatenate([starts[1:], xp.asarray([len(values)], dtype=starts.dtype)])
    return csum[ends] - csum[starts]


def _median(xp: ModuleType, offsets, starts, count) -> np.ndarray:
    """Exact median: the middle value, or the mean of the two middle ones, in float64.

    The two middle values are averaged without forming their sum (which could pass 2^63):
    ``(a >> 1) + (b >> 1) + (a & b & 1)`` plus one half when exactly one is odd, so that
    e.g. [5, 3000000000] gives 1500000002.5 exactly (spec §3.1 median).
    """
    lo = to_numpy(offsets[starts + (count - 1) // 2]).astype(np.int64)
    hi = to_numpy(offsets[starts + count // 2]).astype(np.int64)
    return midpoint(lo, hi)


def midpoint(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(lo + hi) / 2`` of int64 arrays in float64 (:func:`analysis.formulas.midpoint`): the
    median of a group from its two middle values."""
    return np.asarray(formulas.midpoint(lo, hi), dtype=np.float64)


def group_means(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Each group's mean: its exact total (int64, or Python ints past int64) over its count,
    one rounding, as nsys's ``avg()`` divides its (exact, below 2^53) sum."""
    if total.dtype == object:
        pairs = zip(total.tolist(), count.tolist(), strict=True)
        return np.array([formulas.group_mean(t, c) for t, c in pairs], dtype=np.float64)
    return total.astype(np.float64) / count


def _quantile(xp: ModuleType, values, starts, count, q: float):
    pos = (count - 1) * q
    lo = xp.floor(pos).astype(xp.int64)
    frac = pos - lo
    hi = xp.minimum(lo + 1, count - 1)
    a = values[starts + lo].astype(xp.float64)
    b = values[starts + hi].astype(xp.float64)
    return a + (b - a) * frac


def sqlite_round(values: np.ndarray, digits: int = 1) -> np.ndarray:
    """:func:`analysis.formulas.sqlite_round` of every value (SQLite's ``round``, half away
    from zero on the decimal form), to the bit: NumPy's rounding in bulk, the decimal path
    (:func:`~analysis.formulas.round_decimal`) for the values near a half."""
    arr = np.asarray(values, dtype=np.float64)
    flat = arr.ravel()
    out = np.round(flat, digits)
    scaled = np.abs(flat) * 10.0**digits
    near_half = np.isfinite(flat) & formulas.is_near_half(scaled - np.floor(scaled))
    for i in np.flatnonzero(near_half).tolist():
        out[i] = formulas.round_decimal(float(flat[i]), digits)
    return out.reshape(arr.shape)
