"""Compute one nsys stats summary of a loaded report (:func:`run_report`)."""

from __future__ import annotations

from types import ModuleType

import pandas as pd

from analysis.model import Report
from analysis.stats import absent, cuda, nvtx_reports, trace  # noqa: F401 - they register reports
from analysis.stats._base import REGISTRY, SkipReport, StatsResult
from analysis.stats.catalog import parse_spec
from analysis.xp import get_xp

__all__ = ["run_report"]


def run_report(report: Report, spec: str, xp: ModuleType | None = None) -> StatsResult:
    """Compute one nsys stats report.

    Parameters
    ----------
    report
        A loaded report.
    spec
        ``name[:arg...]``, e.g. ``cuda_gpu_kern_sum``, ``cuda_gpu_kern_sum:base``,
        ``cuda_gpu_kern_sum:nvtx-name``.
    xp
        Array module for the group-by engine (default: :func:`analysis.xp.get_xp`).

    Returns
    -------
    StatsResult
        With ``skipped`` set (and an empty frame) when the report lacks the tables.

    Raises
    ------
    AnalysisError
        Unknown report name or option.
    """
    info, args = parse_spec(spec)
    name = ":".join((info.name, *args))
    module = xp if xp is not None else get_xp()
    try:
        frame, units = REGISTRY[info.name].func(report, args, module)
    except SkipReport as skip:
        return StatsResult(name, info.title, pd.DataFrame(), {}, str(skip))
    return StatsResult(name, info.title, frame, units, None)
