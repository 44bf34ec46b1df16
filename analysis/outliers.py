"""Outliers: instances far from their name's typical duration, and reports that differ.

For every name (kernel, NVTX range, projected NVTX range, CUDA API call) the durations of all
its instances in every loaded report are pooled, and each instance gets the robust z-score of
Iglewicz and Hoaglin (1993). A "name" is a group as the stats tables form it, with their
spelling (:mod:`analysis.names`): NVTX ranges by label and style, CUDA API calls by their full
name (``cudaMalloc_v3020`` apart from ``cudaMalloc``, both shown as ``cudaMalloc``), with
the same instances (zero-length and unclosed ones included)::

    z = 0.6745 · (x − median) / MAD,      MAD = median(|x − median|)

When MAD is 0 (more than half the instances share one duration) the score falls back to the
mean absolute deviation around the median, as IBM SPSS does::

    z = (x − median) / (1.253314 · MeanAD)

and is 0 when that is 0 too (every instance equal). Instances with ``|z| > threshold`` are
outliers (3.5 is the authors' recommendation) when they also differ from the median by a
minimum effect: by at least :data:`DEFAULT_MIN_RATIO` (1.2: 20 % slower, or 1/1.2 faster)
*and* by at least :data:`DEFAULT_MIN_DELTA_NS` (1 µs). The z-score alone says how unusual a
duration is relative to the spread; a kernel whose instances are all within a few ns of each
other (a spread of 2 ns on a 1.8 µs kernel) would otherwise flag half its instances for a
2 % difference. 20 % is above the run-to-run jitter of GPU clocks and caches (typically a few
per cent) and 1 µs is the order of a kernel launch, below which no tuning decision changes.
Both limits are parameters (``min_ratio``, ``min_delta_ns``; 1 and 0 turn them off).

Whole reports are compared per name by their median duration: the median of report *r* is
set against the median of the *other* reports' medians (leave-one-out, so a straggler does
not hide itself), and scaled by the larger of the other medians' spread
(1.4826 · MAD) and how precisely a median of *n* instances is known
(1.2533 · 1.4826 · MAD of all instances / √n). A report is kept when ``|z|`` is above the
threshold and its median differs from the others' by the same minimum effect (ratio and
absolute difference) as an instance from its name's median.

Vectorised: one :func:`~analysis.engine.group_stats` pass gives the medians, a second one on
``|2x − 2·median|`` (integers, so exact) gives twice the MAD.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis.engine import group_stats
from strata.analysis.kinds import get_kind, outlier_kinds, resolve_kinds, row_labels
from strata.analysis.model import Report
from strata.analysis.names import EventNames
from strata.analysis.projection import project_nvtx

__all__ = [
    "DEFAULT_MIN_DELTA_NS",
    "DEFAULT_MIN_RATIO",
    "DEFAULT_THRESHOLD",
    "INSTANCE_COLUMNS",
    "OUTLIER_KINDS",
    "REPORT_COLUMNS",
    "Z_MAD",
    "Z_MEAN_AD",
    "Outliers",
    "find_outliers",
    "has_effect",
    "robust_z",
]

DEFAULT_THRESHOLD = 3.5
#: The least ratio (slower) or inverse ratio (faster) to the median an outlier shows.
DEFAULT_MIN_RATIO = 1.2
#: The least absolute difference from the median an outlier shows, in ns (1 µs).
DEFAULT_MIN_DELTA_NS = 1000
#: What can be scored (the registry's outlier kinds: kernels, CUDA API, NVTX ranges on the
#: CPU and projected on the GPU; a kind registered later is scored too).
OUTLIER_KINDS = outlier_kinds()

#: Φ⁻¹(0.75): the MAD of a normal distribution in standard deviations.
Z_MAD = 0.6745
#: √(π/2): standard deviation / mean absolute deviation, normal distribution.
Z_MEAN_AD = 1.253314
_SIGMA_PER_MAD = 1.4826  # ≈ 1 / Z_MAD (the rounded value of the literature, kept as published)
_MEDIAN_SE = 1.2533  # standard error of a median, in σ/√n

INSTANCE_COLUMNS = [
    "name",
    "kind",
    "report",
    "report_index",
    "row",
    "table",
    "index",
    "track_id",
    "start_ns",
    "duration_ns",
    "median_ns",
    "mad_ns",
    "robust_z",
    "style",
    "key",
]
REPORT_COLUMNS = [
    "name",
    "kind",
    "report",
    "report_index",
    "count",
    "median_ns",
    "others_median_ns",
    "ratio",
    "robust_z",
    "style",
    "key",
]


@dataclass(frozen=True)
class Outliers:
    """What :func:`find_outliers` found.

    Attributes
    ----------
    instances
        One row per outlying instance, worst (largest ``|robust_z|``) first:
        ``name`` (str or None, nsys's spelling: :mod:`analysis.names`), ``kind`` (str, one
        of :data:`OUTLIER_KINDS`), ``report`` (str, the
        report's name), ``report_index`` (int64, position in the input list), ``row`` (str,
        the timeline row, e.g. "GPU 0 stream 7", "thread 1234 NVTX L1"), ``table`` (str, the
        report's event table: ``kernels``, ``nvtx``, ``cuda_api``, or ``nvtx_gpu`` for rows
        of :func:`analysis.projection.project_nvtx`), ``index`` (int64, row of that table),
        ``track_id`` (int64, -1 for projected ranges), ``start_ns``, ``duration_ns`` (int64,
        as the report stores them), ``median_ns``, ``mad_ns`` (float64, of the name over
        every report), ``robust_z`` (float64), ``style`` (str, NVTX kinds' PushPop /
        StartEnd, else None) and ``key`` (str, the full name the instances are grouped by:
        a CUDA API name keeps its ``_vNNNN`` suffix there). Instances are grouped as the
        stats tables group them: by (kind, key, style).
    reports
        One row per (name, report) whose median differs from the other reports', worst
        first: ``name``, ``kind``, ``report``, ``report_index``, ``count`` (int64,
        instances in that report), ``median_ns`` (float64), ``others_median_ns`` (float64,
        median of the other reports' medians), ``ratio`` (float64, median / others'),
        ``robust_z`` (float64, module docstring), ``style``, ``key`` (as ``instances``).
    threshold
        The ``|robust_z|`` above which rows were kept.
    min_ratio, min_delta_ns
        The minimum effect a kept row shows against its median (module docstring).
    """

    instances: pd.DataFrame
    reports: pd.DataFrame
    threshold: float
    min_ratio: float = DEFAULT_MIN_RATIO
    min_delta_ns: float = DEFAULT_MIN_DELTA_NS

    def within(
        self,
        t0_ns: int | None = None,
        t1_ns: int | None = None,
        report_index: int | None = None,
        offsets_ns: Sequence[int] = (),
    ) -> pd.DataFrame:
        """Return the outlying instances of one report and time window, worst first.

        The instances were scored over the whole run and every report; this only picks
        those to show for a scope (a window's own population would make "outlier" change
        meaning as the window moves, and a small window has too few instances for a
        median and MAD to say anything).

        Parameters
        ----------
        t0_ns, t1_ns
            The window on the shared axis (None: unbounded); an instance is in it when it
            overlaps ``[t0_ns, t1_ns)``, a zero-length one when it lies in it, as the stats
            tables count.
        report_index
            Only this report's instances (None: every report).
        offsets_ns
            Each report's shift onto the shared axis (missing ones are 0).
        """
        frame = self.instances
        keep = np.ones(len(frame), dtype=bool)
        if report_index is not None:
            keep &= frame["report_index"].to_numpy(np.int64) == int(report_index)
        if (t0_ns is not None or t1_ns is not None) and len(frame):
            which = frame["report_index"].to_numpy(np.int64)
            shifts = np.zeros(int(which.max()) + 1, dtype=np.int64)
            known = np.asarray(offsets_ns, dtype=np.int64)[: len(shifts)]
            shifts[: len(known)] = known
            start = frame["start_ns"].to_numpy(np.int64) + shifts[which]
            end = start + frame["duration_ns"].to_numpy(np.int64)
            if t1_ns is not None:
                keep &= start < int(t1_ns)
            if t0_ns is not None:
                keep &= (end > int(t0_ns)) | (start >= int(t0_ns))
        return frame[keep]

    def __repr__(self) -> str:
        return (
            f"<Outliers {len(self.instances):,} instances, {len(self.reports):,} report rows: "
            f"|z| > {self.threshold:g}, x{self.min_ratio:g} and {self.min_delta_ns:g} ns>"
        )


def robust_z(
    values: np.ndarray, median: np.ndarray, mad: np.ndarray, mean_ad: np.ndarray
) -> np.ndarray:
    """Return the robust z-score of each value given its group's median, MAD and MeanAD."""
    dev = values - median
    with np.errstate(divide="ignore", invalid="ignore"):
        by_mad = Z_MAD * dev / mad
        by_mean = dev / (Z_MEAN_AD * mean_ad)
    z = np.where(mad > 0, by_mad, np.where(mean_ad > 0, by_mean, 0.0))
    return z.astype(np.float64)


def has_effect(
    values: np.ndarray,
    median: np.ndarray,
    min_ratio: float = DEFAULT_MIN_RATIO,
    min_delta_ns: float = DEFAULT_MIN_DELTA_NS,
) -> np.ndarray:
    """Whether each value differs from its median by the minimum effect (module docstring).

    Both must hold: ``|value − median| >= min_delta_ns`` and ``max(value, median) /
    min(value, median) >= min_ratio`` (a zero side makes the ratio infinite).
    """
    values = np.asarray(values, dtype=np.float64)
    median = np.asarray(median, dtype=np.float64)
    low, high = np.minimum(values, median), np.maximum(values, median)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(low > 0, high / low, np.where(high > low, np.inf, 1.0))
    return (np.abs(values - median) >= min_delta_ns) & (ratio >= min_ratio)


# --------------------------------------------------------------------------- instances
@dataclass(frozen=True)
class _Part:
    """The instances of one kind in one report; names and row labels once per distinct key."""

    kind: str
    report_index: int
    names: EventNames  # per instance a group (codes), as every view groups (analysis.names)
    row_key: np.ndarray  # per instance, indexes ``rows``
    rows: np.ndarray  # object: the timeline row label of each key
    index: np.ndarray
    track_id: np.ndarray
    start_ns: np.ndarray
    duration_ns: np.ndarray


def _part(report: Report, kind: str, i: int, projection: Callable = project_nvtx) -> _Part:
    """The instances of ``kind`` in a report, named and grouped as the stats tables."""
    entry = get_kind(kind)
    rows = entry.rows(report, projection)
    row_key, row_text = row_labels(report, entry, rows)
    track = np.full(len(rows), -1, np.int64) if rows.track_ids is None else rows.track_ids
    return _Part(
        kind, i, entry.event_names(report, rows).compact(), row_key, row_text, rows.rows,
        track.astype(np.int64), rows.start_ns, rows.end_ns - rows.start_ns,
    )  # fmt: skip


@dataclass(frozen=True)
class _Instances:
    """Every scored instance as flat NumPy columns; strings once per name and per row."""

    code: np.ndarray  # group code, dense over (kind, key, style)
    code_kind: np.ndarray
    code_key: np.ndarray  # the group's full name (analysis.names)
    code_name: np.ndarray  # the name it is shown by
    code_style: np.ndarray
    report_index: np.ndarray
    row_code: np.ndarray
    row_labels: np.ndarray
    index: np.ndarray
    track_id: np.ndarray
    start_ns: np.ndarray
    duration_ns: np.ndarray


def _none(values: np.ndarray) -> np.ndarray:
    """NaN (pandas' missing value) back to None in an object array."""
    out = np.asarray(values, dtype=object).copy()
    out[pd.isna(out)] = None
    return out


def _collect(
    reports: Sequence[Report], kinds: Iterable[str], projection: Callable = project_nvtx
) -> _Instances | None:
    parts = [
        _part(report, kind, i, projection) for kind in kinds for i, report in enumerate(reports)
    ]
    parts = [p for p in parts if len(p.index)]
    if not parts:
        return None

    def per_group(f) -> np.ndarray:
        return np.concatenate([np.asarray(f(p), dtype=object) for p in parts])

    kind_of = per_group(lambda p: np.full(len(p.names), p.kind, dtype=object))
    styles = per_group(lambda p: p.names.styles if p.names.styles is not None
                       else np.full(len(p.names), None, dtype=object))  # fmt: skip
    triples = pd.MultiIndex.from_arrays([kind_of, per_group(lambda p: p.names.keys), styles])
    global_code, distinct = triples.factorize()
    first = np.unique(global_code, return_index=True)[1]  # each group's first local name
    name_offsets = np.cumsum([0] + [len(p.names) for p in parts])
    row_offsets = np.cumsum([0] + [len(p.rows) for p in parts])

    def flat(f) -> np.ndarray:
        return np.concatenate([f(j, p) for j, p in enumerate(parts)])

    return _Instances(
        code=flat(lambda j, p: global_code[name_offsets[j] + p.names.codes]).astype(np.int64),
        code_kind=distinct.get_level_values(0).to_numpy(object),
        code_key=_none(distinct.get_level_values(1).to_numpy(object)),
        code_name=per_group(lambda p: p.names.labels)[first],
        code_style=_none(distinct.get_level_values(2).to_numpy(object)),
        report_index=flat(lambda j, p: np.full(len(p.index), p.report_index, dtype=np.int64)),
        row_code=flat(lambda j, p: row_offsets[j] + p.row_key),
        row_labels=np.concatenate([p.rows for p in parts]),
        index=flat(lambda j, p: p.index).astype(np.int64),
        track_id=flat(lambda j, p: p.track_id).astype(np.int64),
        start_ns=flat(lambda j, p: p.start_ns).astype(np.int64),
        duration_ns=flat(lambda j, p: p.duration_ns).astype(np.int64),
    )


# --------------------------------------------------------------------------- scoring
def _spread(codes: np.ndarray, values: np.ndarray, xp: ModuleType):
    """Per code (dense 0..n-1): median, MAD and mean absolute deviation around the median."""
    stats = group_stats(codes, values, xp)
    median = np.zeros(int(codes.max()) + 1)
    median[stats.keys] = stats.median
    mad, mean_ad = np.zeros_like(median), np.zeros_like(median)
    if max(abs(int(values.min())), abs(int(values.max()))) >= 1 << 61:
        # |2x - 2·median| could pass 2^63 (a damaged report's durations near 2^62): the
        # deviations in float64 instead, exact wherever they are below 2^53.
        dev = pd.Series(np.abs(values.astype(np.float64) - median[codes])).groupby(codes)
        mad[stats.keys] = dev.median().reindex(stats.keys).to_numpy()
        mean_ad[stats.keys] = dev.mean().reindex(stats.keys).to_numpy()
        return median, mad, mean_ad
    # |2x - 2·median| is an exact integer (medians of integers are k or k + ½).
    twice_median = np.round(2 * median).astype(np.int64)
    dev = np.abs(2 * values - twice_median[codes])
    dev_stats = group_stats(codes, dev, xp)
    mad[dev_stats.keys] = dev_stats.median / 2
    mean_ad[dev_stats.keys] = dev_stats.mean / 2
    return median, mad, mean_ad


def _score_reports(inst: _Instances, spread: tuple, n_reports: int, xp: ModuleType) -> pd.DataFrame:
    """Per (name, report): median against the other reports' medians (module docstring)."""
    pair = inst.code * n_reports + inst.report_index
    stats = group_stats(pair, inst.duration_ns, xp)
    name, rep = stats.keys // n_reports, stats.keys % n_reports
    medians = np.full((len(inst.code_name), n_reports), np.nan)
    medians[name, rep] = stats.median
    _, mad_all, mean_ad_all = spread
    sigma_all = np.where(mad_all > 0, _SIGMA_PER_MAD * mad_all, Z_MEAN_AD * mean_ad_all)
    others_median = np.empty(len(name))
    others_mad = np.empty(len(name))
    for r in range(n_reports):  # a loop over reports, not events
        rows = rep == r
        others = np.delete(medians[name[rows]], r, axis=1)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 'All-NaN slice': one report only
            others_median[rows] = np.nanmedian(others, axis=1)
            others_mad[rows] = np.nanmedian(np.abs(others - others_median[rows, None]), axis=1)
    noise = _MEDIAN_SE * sigma_all[name] / np.sqrt(stats.count)
    scale = np.maximum(_SIGMA_PER_MAD * others_mad, noise)
    diff = stats.median - others_median
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(scale > 0, diff / scale, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
        ratio = stats.median / others_median
    out = pd.DataFrame(
        {
            "name": inst.code_name[name],
            "kind": inst.code_kind[name],
            "style": inst.code_style[name],
            "key": inst.code_key[name],
            "report_index": rep,
            "count": stats.count,
            "median_ns": stats.median,
            "others_median_ns": others_median,
            "ratio": ratio,
            "robust_z": z,
        }
    )
    return out[np.isfinite(others_median)].reset_index(drop=True)


def _instance_frame(inst: _Instances, keep: np.ndarray, spread: tuple, z: np.ndarray):
    """The kept instances as a DataFrame (strings looked up only for them)."""
    median, mad, _ = spread
    code = inst.code[keep]
    kind = inst.code_kind[code]
    return pd.DataFrame(
        {
            "name": inst.code_name[code],
            "kind": kind,
            "style": inst.code_style[code],
            "key": inst.code_key[code],
            "report_index": inst.report_index[keep],
            "row": inst.row_labels[inst.row_code[keep]],
            "table": kind,
            "index": inst.index[keep],
            "track_id": inst.track_id[keep],
            "start_ns": inst.start_ns[keep],
            "duration_ns": inst.duration_ns[keep],
            "median_ns": median[code],
            "mad_ns": mad[code],
            "robust_z": z[keep],
        }
    )


def _worst_first(
    frame: pd.DataFrame, threshold: float, columns: list[str], effect: np.ndarray
) -> pd.DataFrame:
    magnitude = frame["robust_z"].abs()
    keep = (magnitude > threshold).to_numpy() & effect
    kept = frame[keep].assign(_m=magnitude[keep])
    extra = ["duration_ns"] if "duration_ns" in kept else ["median_ns"]
    kept = kept.sort_values(["_m", *extra, "report_index"], ascending=[False, False, True],
                            kind="stable")  # fmt: skip
    return kept[columns].reset_index(drop=True)


def find_outliers(
    reports: Sequence[Report],
    threshold: float = DEFAULT_THRESHOLD,
    kinds: Iterable[str] | None = None,
    xp: ModuleType | None = None,
    projection: Callable | None = None,
    min_ratio: float = DEFAULT_MIN_RATIO,
    min_delta_ns: float = DEFAULT_MIN_DELTA_NS,
) -> Outliers:
    """Find instances and reports whose durations lie far from their name's typical one.

    Parameters
    ----------
    reports
        Loaded reports; every instance of a name in any of them is pooled.
    threshold
        Keep rows with ``|robust_z|`` above this (default 3.5, Iglewicz and Hoaglin).
    kinds
        Which of the registry's outlier kinds to score (default: all of them;
        ``nvtx_gpu``: the ranges of :func:`analysis.projection.project_nvtx`).
    xp
        ``numpy`` (default) or ``cupy`` for the group reductions; results are NumPy/pandas.
    projection
        ``report -> project_nvtx(report)`` (a ReportSet's, computed once; default
        :func:`analysis.projection.project_nvtx`).
    min_ratio
        Keep only rows at least this many times slower or faster than their median
        (default 1.2, i.e. 20 %; 1 keeps any ratio).
    min_delta_ns
        Keep only rows at least this far from their median, in ns (default 1000; 0 keeps
        any difference).

    Returns
    -------
    Outliers
        ``instances`` and ``reports`` frames (see :class:`Outliers`), worst first.

    Raises
    ------
    AnalysisError
        An unknown kind was asked for, the threshold or ``min_delta_ns`` is negative, or
        ``min_ratio`` is below 1.
    """
    from strata.analysis.errors import AnalysisError

    known = outlier_kinds()
    kinds = known if kinds is None else resolve_kinds(kinds, known, " for outliers")
    if not threshold >= 0:
        raise AnalysisError(f"threshold must be a non-negative number, not {threshold}")
    if not (min_ratio >= 1 and np.isfinite(min_ratio)):
        raise AnalysisError(f"min_ratio must be a finite number >= 1, not {min_ratio}")
    if not (min_delta_ns >= 0 and np.isfinite(min_delta_ns)):
        raise AnalysisError(f"min_delta_ns must be a finite number >= 0, not {min_delta_ns}")
    xp = np if xp is None else xp
    inst = _collect(reports, kinds, projection if projection is not None else project_nvtx)
    if inst is None:
        return Outliers(
            pd.DataFrame(columns=INSTANCE_COLUMNS), pd.DataFrame(columns=REPORT_COLUMNS),
            threshold, min_ratio, min_delta_ns,
        )  # fmt: skip
    median, mad, mean_ad = spread = _spread(inst.code, inst.duration_ns, xp)
    code = inst.code
    z = robust_z(inst.duration_ns, median[code], mad[code], mean_ad[code])
    effect = has_effect(inst.duration_ns, median[code], min_ratio, min_delta_ns)
    instances = _instance_frame(inst, (np.abs(z) > threshold) & effect, spread, z)
    per_report = _score_reports(inst, spread, len(reports), xp)
    names = np.array([r.name for r in reports], dtype=object)
    instances["report"] = names[instances["report_index"].to_numpy()]
    per_report["report"] = names[per_report["report_index"].to_numpy()]
    report_effect = has_effect(
        per_report["median_ns"].to_numpy(),
        per_report["others_median_ns"].to_numpy(),
        min_ratio,
        min_delta_ns,
    )
    return Outliers(
        instances=_worst_first(
            instances, threshold, INSTANCE_COLUMNS, np.ones(len(instances), dtype=bool)
        ),  # fmt: skip
        reports=_worst_first(per_report, threshold, REPORT_COLUMNS, report_effect),
        threshold=threshold,
        min_ratio=min_ratio,
        min_delta_ns=min_delta_ns,
    )
