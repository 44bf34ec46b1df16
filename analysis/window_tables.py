"""A window's statistics as the stats panel shows them: by report side by side, and the
outlier bound of a name's histogram (re-exported by :mod:`analysis.window_stats`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from strata.analysis.outliers import Z_MAD, Z_MEAN_AD

__all__ = ["pivot_by_report", "robust_threshold"]


def robust_threshold(values: np.ndarray, threshold: float) -> tuple[float, float]:
    """Return (median, value above which an instance is an outlier) of ``values``.

    The score is :func:`analysis.outliers.robust_z`'s: ``0.6745 (x − median) / MAD``, or
    ``(x − median) / (1.253314 · MeanAD)`` when MAD is 0; the bound is where it reaches
    ``threshold`` (``inf`` when every value is equal).
    """
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return float("nan"), float("inf")
    median = float(np.median(values))
    dev = np.abs(values - median)
    mad = float(np.median(dev))
    if mad > 0:
        return median, median + threshold * mad / Z_MAD
    mean_ad = float(dev.mean())
    if mean_ad > 0:
        return median, median + threshold * Z_MEAN_AD * mean_ad
    return median, float("inf")


def pivot_by_report(frame: pd.DataFrame, report_names: Sequence[str]) -> pd.DataFrame:
    """Spread a by-report stats frame into one column group per report, plus the spread.

    Parameters
    ----------
    frame
        :meth:`WindowIndex.stats` output with ``by_report=True``.
    report_names
        Reports in column order.

    Returns
    -------
    pandas.DataFrame
        ``name`` (str), [``style``], then per report ``<report>|count`` (int64, 0 when
        absent), ``<report>|total_ns`` (int64), ``<report>|median_ns`` (float64, NaN when
        absent); then ``slowest`` (str, the report with the largest median; None when only
        one report ran it), ``spread`` (float64, largest / smallest median among the
        reports that ran it), ``total_ns`` (int64, over every report; rows sorted by it,
        descending).
    """
    shown = ["name", "style"] if "style" in frame else ["name"]
    keys = ["group"] if "group" in frame else shown
    codes = frame[keys].astype(object).fillna("").groupby(keys, sort=False).ngroup()
    codes = codes.to_numpy(np.int64)
    first = np.unique(codes, return_index=True)[1]  # each group's first row, in code order
    out = frame[shown].iloc[first].astype(object).fillna("").reset_index(drop=True)
    for column in ("group", "key"):  # which group a row is, for its instances
        if column in frame:
            out[column] = frame[column].iloc[first].to_numpy()
    n = len(out)
    medians = np.full((n, len(report_names)), np.nan)
    report_of = frame["report"].to_numpy(object)
    # Python ints where a total passes int64 (analysis.engine.GroupStats.total).
    total_type = object if frame["total_ns"].dtype == object else np.int64
    # Columns are gathered, then joined once: inserting them one by one fragments the frame
    # (pandas' PerformanceWarning past ~33 reports, and a copy per insert).
    per_report: dict[str, np.ndarray] = {}
    for j, report in enumerate(report_names):  # a loop over reports, not events
        mine = report_of == report
        count, total = np.zeros(n, np.int64), np.zeros(n, total_type)
        count[codes[mine]] = frame["count"].to_numpy()[mine]
        total[codes[mine]] = frame["total_ns"].to_numpy()[mine]
        medians[codes[mine], j] = frame["median_ns"].to_numpy()[mine]
        per_report[f"{report}|count"] = count
        per_report[f"{report}|total_ns"] = total
        per_report[f"{report}|median_ns"] = medians[:, j]
    out = pd.concat([out, pd.DataFrame(per_report, index=out.index)], axis=1)
    ran = ~np.isnan(medians)
    filled = np.where(ran, medians, -np.inf)
    slowest = np.full(n, None, dtype=object)
    several = ran.sum(axis=1) > 1
    names = np.asarray(list(report_names), dtype=object)
    slowest[several] = names[filled.argmax(axis=1)[several]] if n else slowest[several]
    out["slowest"] = slowest
    lo = np.where(ran, medians, np.inf).min(axis=1) if n else np.zeros(0)
    hi = filled.max(axis=1) if n else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["spread"] = np.where(several & (lo > 0), hi / lo, np.nan)
    out["total_ns"] = _exact_row_sums([out[f"{r}|total_ns"].to_numpy() for r in report_names])
    if out["total_ns"].dtype != object:
        out = out.sort_values(["total_ns", "name"], ascending=[False, True], kind="mergesort")
    else:  # a total past int64: order by its float value (only a damaged report gets here)
        out = out.iloc[np.lexsort((out["name"].astype(str).to_numpy(),
                                   -out["total_ns"].to_numpy(np.float64)))]  # fmt: skip
    return out.reset_index(drop=True)


def _exact_row_sums(columns: list[np.ndarray]) -> np.ndarray:
    """Sum per-report totals row by row exactly: int64, or Python ints past its range."""
    if not columns:
        return np.zeros(0, np.int64)
    parts = np.stack([np.asarray(c, dtype=object) for c in columns], axis=1)
    bound = np.abs(parts.astype(np.float64)).sum(axis=1)
    if parts.size == 0 or float(bound.max()) < 2.0**62:
        return parts.astype(np.int64).sum(axis=1)
    exact = np.array([sum(int(v) for v in row) for row in parts.tolist()], dtype=object)
    if all(-(2**63) <= v < 2**63 for v in exact.tolist()):
        return exact.astype(np.int64)
    return exact
