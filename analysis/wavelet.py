"""Rank and k-th-smallest queries over ranges of a sequence of small integers (a wavelet matrix).

The live stats panel needs exact medians, minima and maxima of every name's events inside a
moving window. With each name's events kept in start order, a window is one position range per
name and report; :func:`kth_smallest` then finds the k-th smallest value of a union of such
ranges in ``width`` steps (one per bit of the values), whatever the ranges' sizes: no pass over
the events of the window, no sort, no mask.

:class:`WaveletMatrix` stores the values' bits level by level (most significant first), each
level stably partitioned by the bit above it (zeros first), plus the number of ones before
every 64-bit word: ``width / 8 + width / 16`` bytes per value (~4.5 B for 24-bit values).
Built in ``width`` passes over the values, each in cache-sized steps and optionally in spans on
threads (NumPy; ~85 ms per level for 10 M values on one core here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from functools import partial

import numpy as np

__all__ = ["WaveletMatrix", "kth_smallest"]


class WaveletMatrix:
    """The non-negative integers ``values`` (each below ``2**width``), level by level.

    Attributes
    ----------
    width
        Bits per value (levels); values below ``2**width``.
    zeros
        Per level, how many values have a 0 at that level's bit.
    """

    def __init__(
        self,
        values: np.ndarray,
        width: int,
        pool: Executor | None = None,
        parts: int = 1,
        on_level: Callable[[int], None] | None = None,
    ) -> None:
        """Build the levels of ``values`` (each below ``2**width``).

        ``pool`` and ``parts``: split every level in ``parts`` spans, built on ``pool``'s
        threads (NumPy releases the GIL in its loops). ``on_level(done)`` is called after
        each level (``done`` of ``width``); an exception it raises (a cancelled build)
        stops the build.
        """
        n = len(values)
        self.size = n
        self.width = width
        self.zeros = np.zeros(width, dtype=np.int64)
        self._words: list[np.ndarray] = []
        self._ranks: list[np.ndarray] = []
        rank_type = np.uint32 if n < 2**32 else np.int64
        current = np.asarray(values)
        buffers = [np.empty(n, dtype=current.dtype) for _ in range(min(width - 1, 2))]
        bit = np.empty(n, dtype=np.bool_)
        spans = _spans(n, parts if pool is not None else 1)
        run = pool.map if pool is not None and len(spans) > 1 else map
        for level in range(width):
            shift = width - 1 - level
            words = np.zeros(n // 64 + 1, dtype=np.uint64)
            ones = list(run(partial(_bits, current, shift, bit, words), spans))
            ranks = np.zeros(len(words) + 1, dtype=rank_type)
            np.cumsum(np.bitwise_count(words), out=ranks[1:])
            self._words.append(words)
            self._ranks.append(ranks)
            self.zeros[level] = n - int(ranks[-1])
            if level < width - 1:  # the next level's order: zeros first, stable
                following = buffers[level % 2]  # two buffers in turn; values stay untouched
                targets = _targets(spans, ones, int(self.zeros[level]))
                list(run(partial(_partition, current, bit, following), targets))
                current = following
            if on_level is not None:
                on_level(level + 1)

    @property
    def nbytes(self) -> int:
        return sum(w.nbytes + r.nbytes for w, r in zip(self._words, self._ranks, strict=True))

    def ones_before(self, level: int, positions: np.ndarray) -> np.ndarray:
        """Return how many of the first ``positions`` values of ``level`` have a 1 (int64)."""
        word = positions >> 6
        below = np.left_shift(np.uint64(1), (positions & 63).astype(np.uint64)) - np.uint64(1)
        partial = np.bitwise_count(self._words[level][word] & below)
        return self._ranks[level][word].astype(np.int64) + partial


#: Values per step of a level's passes: the step's values, bits and outputs stay in cache
#: (a level of 10 M int32 values took 150 ms in whole-array passes, 85 ms in such steps).
_CHUNK = 1 << 16


def _spans(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` ranges of ``[0, n)``, split at multiples of :data:`_CHUNK` (of 64 bits)."""
    chunks = -(-n // _CHUNK)
    edges = [min(n, (chunks * i // max(parts, 1)) * _CHUNK) for i in range(parts + 1)]
    edges[-1] = n
    return [(lo, hi) for lo, hi in zip(edges, edges[1:], strict=False) if hi > lo] or [(0, n)]


def _targets(spans: list[tuple[int, int]], ones: list[int], zeros: int) -> list[tuple]:
    """Per span ``(span, zero_at, one_at)``: where its zeros and its ones go in the next level
    (the zeros of every span first, in span order, then the ones)."""
    out, zero_at, one_at = [], 0, zeros
    for span, count in zip(spans, ones, strict=True):
        out.append((span, zero_at, one_at))
        zero_at += span[1] - span[0] - count
        one_at += count
    return out


def _bits(current: np.ndarray, shift: int, bit: np.ndarray, words: np.ndarray,
          span: tuple[int, int]) -> int:  # fmt: skip
    """Set ``bit`` and ``words`` (packed) to bit ``shift`` of ``current`` over ``span``;
    return how many are ones."""
    scratch = np.empty(_CHUNK, dtype=current.dtype)
    packed = words.view(np.uint8)
    ones = 0
    for lo in range(span[0], span[1], _CHUNK):
        chunk = current[lo : lo + _CHUNK]
        step = scratch[: len(chunk)]
        np.right_shift(chunk, shift, out=step)
        np.bitwise_and(step, 1, out=step)
        flags = bit[lo : lo + len(chunk)]
        np.not_equal(step, 0, out=flags)
        bits = np.packbits(flags, bitorder="little")
        packed[lo // 8 : lo // 8 + len(bits)] = bits
        ones += int(np.count_nonzero(flags))
    return ones


def _partition(current: np.ndarray, bit: np.ndarray, following: np.ndarray,
               target: tuple[tuple[int, int], int, int]) -> None:  # fmt: skip
    """Copy ``current[span]`` into ``following``: its zeros from ``zero_at``, its ones from
    ``one_at``, each in their order (a stable partition, in cache-sized steps); ``target``
    is ``(span, zero_at, one_at)``."""
    span, zero_at, one_at = target
    inverse = np.empty(_CHUNK, dtype=np.bool_)
    for lo in range(span[0], span[1], _CHUNK):
        chunk = current[lo : lo + _CHUNK]
        flags = bit[lo : lo + len(chunk)]
        ones = int(np.count_nonzero(flags))
        np.compress(flags, chunk, out=following[one_at : one_at + ones])
        one_at += ones
        zeros = inverse[: len(chunk)]
        np.logical_not(flags, out=zeros)
        np.compress(zeros, chunk, out=following[zero_at : zero_at + len(chunk) - ones])
        zero_at += len(chunk) - ones


def kth_smallest(
    matrices: Sequence[WaveletMatrix],
    starts: Sequence[np.ndarray],
    ends: Sequence[np.ndarray],
    k: np.ndarray,
    extra_query: np.ndarray | None = None,
    extra_values: np.ndarray | None = None,
) -> np.ndarray:
    """Return, per query ``q``, the ``k[q]``-th smallest (0-based) value of a union of ranges.

    Query ``q`` covers ``matrices[j]``'s values at positions ``[starts[j][q], ends[j][q])``
    for every ``j`` (an empty range adds nothing), plus the loose values ``extra_values[i]``
    where ``extra_query[i] == q``. ``k[q]`` must be below the query's size. The matrices may
    have different widths: a narrower one's missing high bits are zeros.
    """
    k = np.asarray(k, dtype=np.int64).copy()
    n_queries = len(k)
    width = max([m.width for m in matrices] + [0])
    if extra_values is not None and len(extra_values):
        width = max(width, int(extra_values.max()).bit_length())
    result = np.zeros(n_queries, dtype=np.int64)
    s = [np.asarray(a, dtype=np.int64).copy() for a in starts]
    e = [np.asarray(b, dtype=np.int64).copy() for b in ends]
    has_extra = extra_values is not None and len(extra_values) > 0
    if has_extra:
        extra_query = np.asarray(extra_query, dtype=np.int64)
        extra_values = np.asarray(extra_values, dtype=np.int64)
        alive = np.ones(len(extra_values), dtype=np.bool_)
    for top in range(width):
        shift = width - 1 - top
        zeros = np.zeros(n_queries, dtype=np.int64)
        ones: list[tuple[np.ndarray, np.ndarray] | None] = []
        for j, matrix in enumerate(matrices):
            level = matrix.width - 1 - shift
            if level < 0:  # above this matrix's width: every value has a 0 here
                zeros += e[j] - s[j]
                ones.append(None)
                continue
            both = matrix.ones_before(level, np.concatenate([s[j], e[j]]))
            one_s, one_e = both[:n_queries], both[n_queries:]
            zeros += (e[j] - one_e) - (s[j] - one_s)
            ones.append((one_s, one_e))
        if has_extra:
            bit = (extra_values >> shift) & 1
            zeros += np.bincount(extra_query[alive & (bit == 0)], minlength=n_queries)
        right = k >= zeros
        k -= np.where(right, zeros, 0)
        result |= right.astype(np.int64) << shift
        for j, matrix in enumerate(matrices):
            pair = ones[j]
            if pair is None:
                s[j] = np.where(right, e[j], s[j])  # going right: nothing of it is left
                continue
            level = matrix.width - 1 - shift
            one_s, one_e = pair
            z = matrix.zeros[level]
            s[j] = np.where(right, z + one_s, s[j] - one_s)
            e[j] = np.where(right, z + one_e, e[j] - one_e)
        if has_extra:
            alive &= bit == right[extra_query]
    return result
