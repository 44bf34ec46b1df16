"""Compute one nsys stats summary of a loaded report (:func:`run_report`)."""

from __future__ import annotations

from types import ModuleType

import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.filters import FilterSkip, RowFilter, filter_report, resolve_filter
from strata.analysis.filterspec import split_filter
from strata.analysis.model import Report
from strata.analysis.stats import absent, cuda, nvtx_reports, trace  # noqa: F401 - they register reports
from strata.analysis.stats._base import REGISTRY, ReportSpec, SkipReport, StatsResult
from strata.analysis.stats.catalog import parse_spec
from strata.analysis.xp import get_xp

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
    report_spec = REGISTRY[info.name]
    options, own = split_filter(args)
    try:
        if options:
            report = _filtered(report, report_spec, own, options, module)
        frame, units = report_spec.func(report, own, module)
    except SkipReport as skip:
        return StatsResult(name, info.title, pd.DataFrame(), {}, str(skip))
    return StatsResult(name, info.title, frame, units, None)


#: The tables each nsys report checks before it sets the filter up (its ``table_checks``;
#: what its ``setup`` checks after, the filter's SKIPPED text comes first).
_CHECKED_FIRST = {
    "cuda_api_sum": ("CUPTI_ACTIVITY_KIND_RUNTIME",),
    "cuda_api_trace": ("ThreadNames", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "cuda_gpu_kern_gb_sum": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "cuda_gpu_kern_sum": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "cuda_gpu_trace": ("TARGET_INFO_GPU",),
    "cuda_kern_exec_sum": ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "cuda_kern_exec_trace": ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "nvtx_gpu_proj_sum": ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "nvtx_gpu_proj_trace": ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "nvtx_kern_sum": ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "nvtx_pushpop_sum": ("NVTX_EVENTS",),
    "nvtx_pushpop_trace": ("NVTX_EVENTS",),
    "nvtx_startend_sum": ("NVTX_EVENTS",),
    "nvtx_sum": ("NVTX_EVENTS",),
    "opengl_khr_gpu_range_sum": ("KHR_DEBUG_EVENTS",),
    "opengl_khr_range_sum": ("KHR_DEBUG_EVENTS",),
    "osrt_sum": ("OSRT_API",),
    "um_cpu_page_faults_sum": ("CUDA_UM_CPU_PAGE_FAULT_EVENTS",),
    "um_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUDA_UM_CPU_PAGE_FAULT_EVENTS",
               "CUDA_UM_GPU_PAGE_FAULT_EVENTS"),
    "um_total_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUDA_UM_CPU_PAGE_FAULT_EVENTS",
                     "CUDA_UM_GPU_PAGE_FAULT_EVENTS"),
    "vulkan_api_sum": ("VULKAN_API",),
    "vulkan_api_trace": ("ThreadNames", "VULKAN_API"),
    "vulkan_gpu_marker_sum": ("VULKAN_WORKLOAD",),
    "vulkan_marker_sum": ("VULKAN_DEBUG_API",),
    "wddm_queue_sum": ("TARGET_INFO_WDDM_CONTEXTS",),
}  # fmt: skip


def _filtered(
    report: Report, report_spec: ReportSpec, own: tuple[str, ...], options, xp: ModuleType
) -> Report:
    """``report`` as nsys's filtered views show it (:func:`analysis.filters.filter_report`).

    nsys checks some of a report's tables before it sets up the filter (:data:`_CHECKED_FIRST`):
    a report lacking one is SKIPPED for it, not for a missing NVTX range.

    Raises
    ------
    SkipReport
        The summary's own SKIPPED text, else the filter's (NVTX range not found...).
    AnalysisError
        A partial report (no times): the caller opens the full model for filters.
    """
    if not report.complete:
        raise AnalysisError(f"{report.name}: a filtered summary needs the full report")
    start, end = options.get("start"), options.get("end")
    try:
        keep = resolve_filter(
            report,
            None if start is None else int(start),
            None if end is None else int(end),
            options.get("nvtx"),
        )
    except FilterSkip as skip:
        if not all(report.has_source(t) for t in _CHECKED_FIRST.get(report_spec.name, ())):
            nothing = RowFilter(-(2**63), -(2**63))  # keeps no row
            report_spec.func(filter_report(report, nothing), own, xp)  # its own SKIPPED
        raise SkipReport(str(skip)) from None
    return report if keep is None else filter_report(report, keep)
