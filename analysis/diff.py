"""Per-name change between two runs (or two groups of runs): count, total, median with a CI.

Each side is one or more reports; per panel kind (kernels, NVTX ranges, projected ranges,
CUDA API calls) the instances are grouped and named exactly as the stats panel groups them
(:func:`analysis.window_stats.build_window_index`, names from :mod:`analysis.names`), pooled
over the side's reports. A name's change is after - before.

The confidence interval is a percentile bootstrap of the difference of medians. It is drawn
without resampling instances: the k-th smallest of n draws from a sorted sample ``x`` is
``x[ceil(n U) - 1]`` with ``U ~ Beta(k, n - k + 1)`` (the k-th order statistic of n uniforms),
and the next one up is ``U + (1 - U) Beta(1, n - k)``. A resampled median thus costs O(1)
whatever n (1 M instances take no longer than 10), vectorised over names, and the interval is
the one a resampling bootstrap of the instances gives.

A name present on both sides with at least :data:`MIN_INSTANCES` instances on each is
*slower* / *faster* when the interval excludes 0 and the median moved by more than
``tolerance_pct`` percent; otherwise its change is *noise*. A name with fewer instances on a
side has no spread to judge noise by (one instance says nothing of its own spread), so it is
never called noise: it is *slower, few* / *faster, few* when its median moved by the
outliers' minimum effect (:data:`analysis.outliers.DEFAULT_MIN_RATIO` times and
:data:`analysis.outliers.DEFAULT_MIN_DELTA_NS` ns: a 25 ms kernel taking 414 ms), and *too
few* otherwise (a one-off init call varies by 10 % run to run).
*appeared* / *vanished*: only the after / before side has it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import panel_kinds, resolve_kind, resolve_kinds
from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_TOLERANCE_PCT",
    "DIFF_COLUMNS",
    "DIFF_KINDS",
    "MIN_INSTANCES",
    "STATUSES",
    "UNCHANGED",
    "DiffOptions",
    "NameSamples",
    "by_impact",
    "classify",
    "diff_kind",
    "diff_samples",
    "diff_sets",
    "median_bootstrap",
    "name_samples",
]

#: The kinds compared by default (the stats panel's duration kinds with outliers; written
#: out: its order is the output's).
DIFF_KINDS = ("kernels", "nvtx", "nvtx_gpu", "cuda_api")
#: Every status, changes first; ``…, few``: fewer than MIN_INSTANCES on a side (docstring).
STATUSES = ("slower", "faster", "slower, few", "faster, few", "appeared", "vanished",
            "too few", "noise")  # fmt: skip
#: The statuses that are no change worth ranking first (:func:`by_impact`).
UNCHANGED = ("too few", "noise")
DEFAULT_CONFIDENCE = 0.95
#: Instances a side needs before a change of its median can be told from noise.
MIN_INSTANCES = 2
DEFAULT_RESAMPLES = 2000
#: Run-to-run jitter of a few percent is common on GPUs; with thousands of instances a 1 %
#: move is significant, and it is still noise to a user.
DEFAULT_TOLERANCE_PCT = 5.0
#: Columns of :func:`diff_samples` after the name columns (``Name`` [, ``Style``]).
DIFF_COLUMNS = [
    "Status", "Total Delta", "Total Before", "Total After", "Instances Before",
    "Instances After", "Instances Delta", "Med Before", "Med After", "Med Delta",
    "Med Delta Low", "Med Delta High", "Med Change (%)",
]  # fmt: skip
#: Cells of (names x resamples) drawn at once: bounds the memory of a chunk (~32 MB each).
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class DiffOptions:
    """How a diff decides (picklable, hashable).

    Attributes
    ----------
    confidence
        Level of the median-difference interval, in (0, 1).
    tolerance_pct
        A median that moved by at most this percentage is noise even when the interval
        excludes 0 (with a million instances, 0.1 % is significant and still noise to a user).
    resamples
        Bootstrap draws per name (>= 100).
    seed
        Seed of the draws: the same inputs and seed give the same intervals.
    """

    confidence: float = DEFAULT_CONFIDENCE
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    def check(self) -> None:
        """Raise :class:`AnalysisError` (one line) for a value out of range."""
        if not 0 < self.confidence < 1:
            raise AnalysisError(f"the confidence must lie between 0 and 1, not {self.confidence}")
        if not np.isfinite(self.tolerance_pct) or self.tolerance_pct < 0:
            raise AnalysisError(f"the tolerance must be a number >= 0, not {self.tolerance_pct}")
        if not 100 <= self.resamples <= 100_000:
            raise AnalysisError(f"resamples must lie in 100..100000, not {self.resamples}")


@dataclass(frozen=True)
class NameSamples:
    """One side's instances of one kind, grouped by name (picklable).

    Attributes
    ----------
    labels, styles
        Per name: the name shown, and the NVTX style (None for other kinds / no styles).
    keys
        Per name: what it is keyed by across sides (full name; with the style for NVTX).
    counts, totals, medians
        Per name: instances (int64), total (int64, or Python ints past its range), exact
        median (float64), as the stats panel reduces them.
    values, bounds
        Name ``i`` is ``values[bounds[i]:bounds[i + 1]]``, ascending (int64).
    """

    labels: np.ndarray
    styles: np.ndarray | None
    keys: list[tuple]
    counts: np.ndarray
    totals: np.ndarray
    medians: np.ndarray
    values: np.ndarray
    bounds: np.ndarray


def name_samples(reports: ReportSet | Sequence[Report], kind: str) -> NameSamples:
    """Return the instances of ``kind`` of ``reports`` (pooled), grouped by name.

    A :class:`ReportSet` reuses its window index (the one the stats panel built).

    Raises
    ------
    AnalysisError
        ``kind`` is not a panel kind (:func:`analysis.kinds.resolve_kind` reads it).
    """
    kind = resolve_kind(kind, panel_kinds())
    rset = reports if isinstance(reports, ReportSet) else ReportSet(list(reports))
    index = rset.window_index(kind)  # whole-run stats: the alignment does not matter
    stats = index.stats()
    values, bounds = index.sorted_values() if len(stats) else (np.zeros(0, np.int64), None)
    groups = stats["group"].to_numpy(np.int64)
    order = np.argsort(groups, kind="stable")  # by group code: the values' order
    stats = stats.iloc[order]
    groups = groups[order]
    starts = bounds[groups] if len(groups) else np.zeros(0, np.int64)
    counts = stats["count"].to_numpy(np.int64)
    # The present groups' runs, packed: name i is values[new_bounds[i]:new_bounds[i + 1]].
    take = np.repeat(starts - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
    styles = stats["style"].to_numpy(object) if "style" in stats else None
    keys = stats["key"].tolist()
    keys = list(zip(keys, styles.tolist(), strict=True)) if styles is not None else keys
    return NameSamples(
        labels=stats["name"].to_numpy(object),
        styles=styles,
        keys=[k if isinstance(k, tuple) else (k, None) for k in keys],
        counts=counts,
        totals=stats["total_ns"].to_numpy(),
        medians=stats["median_ns"].to_numpy(np.float64),
        values=values[take.astype(np.int64)] if len(take) else np.zeros(0, np.int64),
        bounds=np.r_[0, np.cumsum(counts)].astype(np.int64),
    )


def median_bootstrap(
    values: np.ndarray, bounds: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Return bootstrap medians per group: shape ``(groups, resamples)``, float64.

    Group ``g`` is ``values[bounds[g]:bounds[g + 1]]``, ascending and not empty. Each draw is
    the median of n instances resampled with replacement, drawn through the order-statistic
    identity of the module docstring (no n-sized work per draw).
    """
    starts = np.asarray(bounds[:-1], dtype=np.int64)
    n = np.asarray(bounds[1:], dtype=np.int64) - starts
    out = np.empty((len(n), resamples), dtype=np.float64)
    per_chunk = max(1, _CHUNK_CELLS // resamples)
    for lo in range(0, len(n), per_chunk):  # a loop over chunks of names, not instances
        size, first = n[lo : lo + per_chunk, None], starts[lo : lo + per_chunk, None]
        k = (size + 1) // 2  # the lower middle (the middle for odd n)
        u = rng.beta(k, size - k + 1, size=(len(size), resamples))
        low = values[first + _rank(u, size)].astype(np.float64)
        even = (size % 2 == 0) & (size > 0)
        # The next order statistic: the smallest of the n - k draws above u (Beta(1, n - k)).
        rest = np.where(even, size - k, 1)
        u2 = u + (1 - u) * rng.beta(1, rest, size=u.shape)
        high = values[first + _rank(u2, size)].astype(np.float64)
        out[lo : lo + per_chunk] = np.where(even, (low + high) / 2, low)
    return out


def _rank(u: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The order-statistic index ``ceil(n u) - 1`` of the empirical quantile at ``u``."""
    return np.clip(np.ceil(u * size).astype(np.int64) - 1, 0, size - 1)


def _matched(before: NameSamples, after: NameSamples) -> tuple[list[tuple], np.ndarray, np.ndarray]:
    """Every name of either side (before's order, then after-only ones) and its index per
    side (-1 where the side lacks it)."""
    names = list(dict.fromkeys([*before.keys, *after.keys]))
    at_b = {k: i for i, k in enumerate(before.keys)}
    at_a = {k: i for i, k in enumerate(after.keys)}
    ib = np.array([at_b.get(k, -1) for k in names], dtype=np.int64)
    ia = np.array([at_a.get(k, -1) for k in names], dtype=np.int64)
    return names, ib, ia


def _side_column(values: np.ndarray, index: np.ndarray, missing: object, dtype) -> np.ndarray:
    out = np.full(len(index), missing, dtype=dtype)
    has = index >= 0
    out[has] = np.asarray(values, dtype=dtype)[index[has]]
    return out


def _delta_ci(before: NameSamples, after: NameSamples, ib: np.ndarray, ia: np.ndarray,
              options: DiffOptions) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The percentile interval of median(after) - median(before), NaN where a side lacks it."""
    both = (ib >= 0) & (ia >= 0)
    low = np.full(len(ib), np.nan)
    high = np.full(len(ib), np.nan)
    if not both.any():
        return low, high
    rng = np.random.default_rng(options.seed)

    def draws(side: NameSamples, idx: np.ndarray) -> np.ndarray:
        bounds = np.stack([side.bounds[idx], side.bounds[idx + 1]], axis=1).ravel()
        starts, ends = bounds[0::2], bounds[1::2]
        # median_bootstrap takes consecutive runs: give it each name's run by its own bounds.
        packed = np.r_[0, np.cumsum(ends - starts)]
        take = np.repeat(starts - packed[:-1], ends - starts) + np.arange(packed[-1])
        return median_bootstrap(side.values[take], packed, options.resamples, rng)

    delta = draws(after, ia[both]) - draws(before, ib[both])
    tail = (1 - options.confidence) / 2
    low[both], high[both] = np.quantile(delta, [tail, 1 - tail], axis=1)
    return low, high


def classify(
    med_before: np.ndarray, med_after: np.ndarray, low: np.ndarray, high: np.ndarray,
    tolerance_pct: float, counts: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Return (status, median change in %) per name (module docstring's rule).

    A missing median (NaN) is a side without the name; a missing interval (NaN) is a
    comparison without instances (recipe outputs): the tolerance alone decides. ``counts``
    (instances before, after) make names below :data:`MIN_INSTANCES` on a side *slower,
    few* / *faster, few* (a minimum effect, :func:`analysis.outliers.has_effect`) or *too
    few*, never noise.
    """
    from strata.analysis.outliers import has_effect

    delta = med_after - med_before
    with np.errstate(divide="ignore", invalid="ignore"):
        change = np.where(
            med_before > 0, 100.0 * delta / med_before, np.where(delta > 0, np.inf, 0.0)
        )
    before, after = ~np.isnan(med_before), ~np.isnan(med_after)
    both = before & after
    outside = ~((low <= 0) & (high >= 0))  # NaN bounds: no interval, nothing to exclude
    moved = both & outside & (np.abs(change) > tolerance_pct)
    few = np.zeros(len(change), dtype=bool)
    if counts is not None:
        few = both & (
            (np.asarray(counts[0]) < MIN_INSTANCES) | (np.asarray(counts[1]) < MIN_INSTANCES)
        )
        moved &= ~few
    status = np.full(len(change), "noise", dtype=object)
    status[moved & (delta > 0)] = "slower"
    status[moved & (delta < 0)] = "faster"
    large = few & has_effect(np.nan_to_num(med_after), np.nan_to_num(med_before))
    status[few] = "too few"
    status[large & (delta > 0)] = "slower, few"
    status[large & (delta < 0)] = "faster, few"
    status[after & ~before] = "appeared"
    status[before & ~after] = "vanished"
    change[~both] = np.nan
    return status, change


def diff_samples(
    before: NameSamples, after: NameSamples, options: DiffOptions | None = None,
    with_keys: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """Compare two sides name by name.

    ``with_keys`` adds ``Key`` (str) after ``Name``: the full name a row is keyed by (two
    CUDA API groups can show one name), what :meth:`WindowIndex.groups` takes to find the
    row's instances again.

    Returns
    -------
    pandas.DataFrame
        ``Name`` (str), [``Key``], [``Style`` (str), when a side has styles], then
        :data:`DIFF_COLUMNS`:
        ``Status`` (one of :data:`STATUSES`); ``Total Delta``, ``Total Before``,
        ``Total After`` (int64 ns; 0 for a missing side); ``Instances Before/After/Delta``
        (int64); ``Med Before``, ``Med After`` (float64 ns, NaN for a missing side),
        ``Med Delta`` and its interval ``Med Delta Low`` / ``Med Delta High`` (float64 ns),
        ``Med Change (%)`` (float64). Sorted by impact: changes (not noise) first, then by
        the absolute total delta, largest first, then by name.
    """
    options = options or DiffOptions()
    options.check()
    names, ib, ia = _matched(before, after)
    frame = pd.DataFrame({"Name": _names(before, after, ib, ia)})
    if with_keys:
        frame["Key"] = [k[0] for k in names]
    if before.styles is not None or after.styles is not None:
        frame["Style"] = [k[1] for k in names]
    med_b = _side_column(before.medians, ib, np.nan, np.float64)
    med_a = _side_column(after.medians, ia, np.nan, np.float64)
    low, high = _delta_ci(before, after, ib, ia, options)
    count_b = _side_column(before.counts, ib, 0, np.int64)
    count_a = _side_column(after.counts, ia, 0, np.int64)
    status, change = classify(med_b, med_a, low, high, options.tolerance_pct, (count_b, count_a))
    total_b = _side_column(before.totals, ib, 0, object)
    total_a = _side_column(after.totals, ia, 0, object)
    frame["Status"] = status
    frame["Total Delta"] = _exact(total_a - total_b)
    frame["Total Before"], frame["Total After"] = _exact(total_b), _exact(total_a)
    frame["Instances Before"], frame["Instances After"] = count_b, count_a
    frame["Instances Delta"] = count_a - count_b
    frame["Med Before"], frame["Med After"] = med_b, med_a
    frame["Med Delta"] = med_a - med_b
    frame["Med Delta Low"], frame["Med Delta High"] = low, high
    frame["Med Change (%)"] = change
    return by_impact(frame)


def _names(before: NameSamples, after: NameSamples, ib: np.ndarray, ia: np.ndarray):
    return np.where(ib >= 0, _side_column(before.labels, ib, None, object),
                    _side_column(after.labels, ia, None, object))  # fmt: skip


def _exact(totals: np.ndarray) -> np.ndarray:
    """int64 where every value fits (always, short of a damaged report), else Python ints."""
    values = totals.tolist()
    if all(-(2**63) <= int(v) < 2**63 for v in values):
        return np.asarray(values, dtype=np.int64).reshape(len(values))
    return totals


def by_impact(frame: pd.DataFrame, label_column: str = "Name") -> pd.DataFrame:
    """Sort a diff table by impact: changes (not :data:`UNCHANGED`) first, then by the
    absolute ``Total Delta``, largest first, then by ``label_column``."""
    noise = frame["Status"].isin(UNCHANGED).to_numpy()
    impact = -np.abs(frame["Total Delta"].to_numpy(np.float64))
    label = frame[label_column].astype(str).to_numpy()
    order = np.lexsort((label, impact, noise))
    return frame.iloc[order].reset_index(drop=True)


def diff_kind(
    before: ReportSet | Sequence[Report], after: ReportSet | Sequence[Report], kind: str,
    options: DiffOptions | None = None, with_keys: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """Return :func:`diff_samples` of the instances of ``kind`` of the two sides."""
    return diff_samples(name_samples(before, kind), name_samples(after, kind), options,
                        with_keys)  # fmt: skip


def diff_sets(
    before: ReportSet | Sequence[Report], after: ReportSet | Sequence[Report],
    kinds: Sequence[str] = DIFF_KINDS, options: DiffOptions | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Return the diff of every kind in ``kinds`` in one table, sorted by impact.

    Returns
    -------
    pandas.DataFrame
        ``Kind`` (str), ``Name``, ``Style`` (str, None outside NVTX kinds), then
        :data:`DIFF_COLUMNS`, as :func:`diff_samples`.

    Raises
    ------
    AnalysisError
        A side holds no report, a kind is unknown, or an option is out of range.
    """
    if not len(before) or not len(after):
        raise AnalysisError("a diff needs at least one report on each side (before, after)")
    frames = []
    for kind in resolve_kinds(kinds, panel_kinds()):  # a loop over kinds
        frame = diff_kind(before, after, kind, options)
        if "Style" not in frame:
            frame.insert(1, "Style", np.full(len(frame), None, dtype=object))
        frame.insert(0, "Kind", kind)
        frames.append(frame)
    columns = ["Kind", "Name", "Style", *DIFF_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns)
    return by_impact(pd.concat(frames, ignore_index=True)[columns])
