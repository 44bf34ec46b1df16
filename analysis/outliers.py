"""Outliers: instances far from their name's typical duration, and reports that differ.

For every name (kernel, NVTX range, projected NVTX range, CUDA API call) the durations of all
its instances in every loaded report are pooled, and each instance gets the robust z-score of
Iglewicz and Hoaglin (1993)::

    z = 0.6745 · (x − median) / MAD,      MAD = median(|x − median|)

When MAD is 0 (more than half the instances share one duration) the score falls back to the
mean absolute deviation around the median, as IBM SPSS does::

    z = (x − median) / (1.253314 · MeanAD)

and is 0 when that is 0 too (every instance equal). Instances with ``|z| > threshold`` are
outliers (3.5 is the authors' recommendation).

Whole reports are compared per name by their median duration: the median of report *r* is
set against the median of the *other* reports' medians (leave-one-out, so a straggler does
not hide itself), and scaled by the larger of the other medians' spread
(1.4826 · MAD) and how precisely a median of *n* instances is known
(1.2533 · 1.4826 · MAD of all instances / √n).

Vectorised: one :func:`~analysis.engine.group_stats` pass gives the medians, a second one on
``|2x − 2·median|`` (integers, so exact) gives twice the MAD.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd

from analysis.engine import group_stats
from analysis.model import Report
from analysis.projection import project_nvtx
from analysis.schema import NVTX_RANGE_TYPES, pid_of, tid_of

__all__ = [
    "DEFAULT_THRESHOLD",
    "INSTANCE_COLUMNS",
    "OUTLIER_KINDS",
    "REPORT_COLUMNS",
    "Outliers",
    "find_outliers",
    "robust_z",
]

DEFAULT_THRESHOLD = 3.5
#: What can be scored: kernels, NVTX ranges (CPU), NVTX ranges projected on the GPU, CUDA API.
OUTLIER_KINDS = ("kernels", "nvtx", "nvtx_gpu", "cuda_api")

_Z_MAD = 0.6745  # Φ⁻¹(0.75): MAD of a normal distribution in standard deviations
_Z_MEAN_AD = 1.253314  # √(π/2): standard deviation / mean absolute deviation, normal
_SIGMA_PER_MAD = 1.4826  # 1 / 0.6745
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
]


@dataclass(frozen=True)
class Outliers:
    """What :func:`find_outliers` found.

    Attributes
    ----------
    instances
        One row per outlying instance, worst (largest ``|robust_z|``) first:
        ``name`` (str), ``kind`` (str, one of :data:`OUTLIER_KINDS`), ``report`` (str, the
        report's name), ``report_index`` (int64, position in the input list), ``row`` (str,
        the timeline row, e.g. "GPU 0 stream 7", "thread 1234 NVTX L1"), ``table`` (str, the
        report's event table: ``kernels``, ``nvtx``, ``cuda_api``, or ``nvtx_gpu`` for rows
        of :func:`analysis.projection.project_nvtx`), ``index`` (int64, row of that table),
        ``track_id`` (int64, -1 for projected ranges), ``start_ns``, ``duration_ns`` (int64,
        as the report stores them), ``median_ns``, ``mad_ns`` (float64, of the name over
        every report), ``robust_z`` (float64).
    reports
        One row per (name, report) whose median differs from the other reports', worst
        first: ``name``, ``kind``, ``report``, ``report_index``, ``count`` (int64,
        instances in that report), ``median_ns`` (float64), ``others_median_ns`` (float64,
        median of the other reports' medians), ``ratio`` (float64, median / others'),
        ``robust_z`` (float64, module docstring).
    threshold
        The ``|robust_z|`` above which rows were kept.
    """

    instances: pd.DataFrame
    reports: pd.DataFrame
    threshold: float


def robust_z(
    values: np.ndarray, median: np.ndarray, mad: np.ndarray, mean_ad: np.ndarray
) -> np.ndarray:
    """Return the robust z-score of each value given its group's median, MAD and MeanAD."""
    dev = values - median
    with np.errstate(divide="ignore", invalid="ignore"):
        by_mad = _Z_MAD * dev / mad
        by_mean = dev / (_Z_MEAN_AD * mean_ad)
    z = np.where(mad > 0, by_mad, np.where(mean_ad > 0, by_mean, 0.0))
    return z.astype(np.float64)


# --------------------------------------------------------------------------- instances
def _kernels(report: Report) -> dict[str, np.ndarray]:
    table = report.tables["kernels"]
    keys = table.track_keys
    labels = "GPU " + keys["device_id"].astype(str) + " stream " + keys["stream_id"].astype(str)
    return {
        "label": report.strings.lookup(table["name_id"], missing="(unnamed kernel)"),
        "row": labels.to_numpy(object)[table["track_id"]],
        "index": np.arange(len(table)),
        "track_id": table["track_id"].astype(np.int64),
        "start_ns": table.start_ns,
        "duration_ns": table.duration_ns,
    }


def _thread_rows(keys: pd.DataFrame, what: str) -> np.ndarray:
    tid = pd.Series(tid_of(keys["global_tid"].to_numpy())).astype(str)
    return ("thread " + tid + f" {what} L" + keys["level"].astype(str)).to_numpy(object)


def _cuda_api(report: Report) -> dict[str, np.ndarray]:
    table = report.tables["cuda_api"]
    return {
        "label": report.strings.lookup(table["name_id"], missing="(unnamed call)"),
        "row": _thread_rows(table.track_keys, "CUDA API")[table["track_id"]],
        "index": np.arange(len(table)),
        "track_id": table["track_id"].astype(np.int64),
        "start_ns": table.start_ns,
        "duration_ns": table.duration_ns,
    }


def _nvtx_labels(report: Report, rows: np.ndarray) -> np.ndarray:
    """``domain:text`` for non-default domains of the same process, else ``text``."""
    nvtx = report.tables["nvtx"]
    text = report.strings.lookup(nvtx["name_id"][rows], missing="")
    domains = report.nvtx_domains
    domain_ids = nvtx["domain_id"][rows]
    if domains.empty or not (domain_ids != 0).any():
        return text
    first = domains.sort_values("start_ns").drop_duplicates(["pid", "domain_id"])
    key = pd.MultiIndex.from_arrays([first["pid"], first["domain_id"]])
    where = key.get_indexer(
        pd.MultiIndex.from_arrays([pid_of(nvtx["global_tid"][rows]), domain_ids])
    )
    names = first["name"].to_numpy(object)
    prefix = np.where(where >= 0, names[np.maximum(where, 0)], "")
    return np.where(prefix != "", prefix + ":" + text, text)


def _nvtx(report: Report) -> dict[str, np.ndarray]:
    table = report.tables["nvtx"]
    rows = np.flatnonzero(np.isin(table["event_type"], NVTX_RANGE_TYPES))
    return {
        "label": _nvtx_labels(report, rows),
        "row": _thread_rows(table.track_keys, "NVTX")[table["track_id"][rows]],
        "index": rows,
        "track_id": table["track_id"][rows].astype(np.int64),
        "start_ns": table.start_ns[rows],
        "duration_ns": table.duration_ns[rows],
    }


def _nvtx_gpu(report: Report) -> dict[str, np.ndarray]:
    frame = project_nvtx(report)
    tid = frame["tid"].astype(str)
    return {
        "label": frame["name"].to_numpy(object),
        "row": ("thread " + tid + " NVTX → GPU").to_numpy(object),
        "index": np.arange(len(frame)),
        "track_id": np.full(len(frame), -1, dtype=np.int64),
        "start_ns": frame["start_ns"].to_numpy(np.int64),
        "duration_ns": (frame["end_ns"] - frame["start_ns"]).to_numpy(np.int64),
    }


_EXTRACT = {"kernels": _kernels, "nvtx": _nvtx, "nvtx_gpu": _nvtx_gpu, "cuda_api": _cuda_api}


def _collect(reports: Sequence[Report], kinds: Iterable[str]) -> pd.DataFrame:
    """Every scored instance of every report, one row each (names as strings)."""
    parts = []
    for kind in kinds:
        for i, report in enumerate(reports):
            cols = _EXTRACT[kind](report)
            if not len(cols["index"]):
                continue
            frame = pd.DataFrame(cols)
            frame["kind"], frame["table"] = kind, kind
            frame["report"], frame["report_index"] = report.name, i
            parts.append(frame)
    if not parts:
        return pd.DataFrame()
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- scoring
def _spread(codes: np.ndarray, values: np.ndarray, xp: ModuleType):
    """Per code (dense 0..n-1): median, MAD and mean absolute deviation around the median."""
    stats = group_stats(codes, values, xp)
    median = np.zeros(int(codes.max()) + 1)
    median[stats.keys] = stats.median
    twice_median = np.round(2 * median).astype(np.int64)  # medians of ints are k or k + 0.5
    dev = np.abs(2 * values - twice_median[codes])
    dev_stats = group_stats(codes, dev, xp)
    mad, mean_ad = np.zeros_like(median), np.zeros_like(median)
    mad[dev_stats.keys] = dev_stats.median / 2
    mean_ad[dev_stats.keys] = dev_stats.mean / 2
    return median, mad, mean_ad


def _score_reports(
    frame: pd.DataFrame, codes: np.ndarray, spread: tuple, n_reports: int, xp: ModuleType
) -> pd.DataFrame:
    """Per (name, report): median against the other reports' medians (module docstring)."""
    pair = codes.astype(np.int64) * n_reports + frame["report_index"].to_numpy(np.int64)
    stats = group_stats(pair, frame["duration_ns"].to_numpy(np.int64), xp)
    name, rep = stats.keys // n_reports, stats.keys % n_reports
    medians = np.full((int(codes.max()) + 1, n_reports), np.nan)
    medians[name, rep] = stats.median
    _, mad_all, mean_ad_all = spread
    sigma_all = np.where(mad_all > 0, _SIGMA_PER_MAD * mad_all, _Z_MEAN_AD * mean_ad_all)
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
    first = pd.DataFrame({"code": codes}).drop_duplicates("code").index.to_numpy()
    lookup = frame.iloc[first].set_index(codes[first])
    out = pd.DataFrame(
        {
            "name": lookup.loc[name, "label"].to_numpy(object),
            "kind": lookup.loc[name, "kind"].to_numpy(object),
            "report_index": rep,
            "count": stats.count,
            "median_ns": stats.median,
            "others_median_ns": others_median,
            "ratio": ratio,
            "robust_z": z,
        }
    )
    return out[np.isfinite(others_median)].reset_index(drop=True)


def _worst_first(frame: pd.DataFrame, threshold: float, columns: list[str]) -> pd.DataFrame:
    magnitude = frame["robust_z"].abs()
    kept = frame[magnitude > threshold].assign(_m=magnitude[magnitude > threshold])
    extra = ["duration_ns"] if "duration_ns" in kept else ["median_ns"]
    kept = kept.sort_values(["_m", *extra, "report_index"], ascending=[False, False, True],
                            kind="stable")  # fmt: skip
    return kept[columns].reset_index(drop=True)


def find_outliers(
    reports: Sequence[Report],
    threshold: float = DEFAULT_THRESHOLD,
    kinds: Iterable[str] = OUTLIER_KINDS,
    xp: ModuleType | None = None,
) -> Outliers:
    """Find instances and reports whose durations lie far from their name's typical one.

    Parameters
    ----------
    reports
        Loaded reports; every instance of a name in any of them is pooled.
    threshold
        Keep rows with ``|robust_z|`` above this (default 3.5, Iglewicz and Hoaglin).
    kinds
        Which of :data:`OUTLIER_KINDS` to score (``nvtx_gpu``: the ranges of
        :func:`analysis.projection.project_nvtx`).
    xp
        ``numpy`` (default) or ``cupy`` for the group reductions; results are NumPy/pandas.

    Returns
    -------
    Outliers
        ``instances`` and ``reports`` frames (see :class:`Outliers`), worst first.

    Raises
    ------
    AnalysisError
        An unknown kind was asked for, or the threshold is negative.
    """
    from analysis.errors import AnalysisError

    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in OUTLIER_KINDS]
    if unknown:
        raise AnalysisError(f"unknown outlier kind {unknown[0]!r}; use {', '.join(OUTLIER_KINDS)}")
    if not threshold >= 0:
        raise AnalysisError(f"threshold must be a non-negative number, not {threshold}")
    xp = np if xp is None else xp
    frame = _collect(reports, kinds)
    if frame.empty:
        return Outliers(
            pd.DataFrame(columns=INSTANCE_COLUMNS), pd.DataFrame(columns=REPORT_COLUMNS), threshold
        )
    codes = frame.groupby(["kind", "label"], sort=False).ngroup().to_numpy(np.int64)
    durations = frame["duration_ns"].to_numpy(np.int64)
    median, mad, mean_ad = spread = _spread(codes, durations, xp)
    frame["name"] = frame["label"]
    frame["median_ns"], frame["mad_ns"] = median[codes], mad[codes]
    frame["robust_z"] = robust_z(durations, median[codes], mad[codes], mean_ad[codes])
    per_report = _score_reports(frame, codes, spread, len(reports), xp)
    per_report["report"] = [reports[i].name for i in per_report["report_index"]]
    return Outliers(
        instances=_worst_first(frame, threshold, INSTANCE_COLUMNS),
        reports=_worst_first(per_report, threshold, REPORT_COLUMNS),
        threshold=threshold,
    )
