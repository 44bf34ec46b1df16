"""nsys-compatible summaries (``nsys stats -r NAME``) computed from the columnar report.

Usage from Python or Jupyter::

    from analysis import open_report
    from analysis.stats import run_report, format_results
    report = open_report("run.sqlite")
    result = run_report(report, "cuda_gpu_kern_sum:base")
    result.frame                       # numbers in ns / bytes, columns named like nsys
    print(format_results({report.name: [result]}, "csv"))

Reports: cuda_gpu_kern_sum (``:base``, ``:mangled``, ``:nvtx-name``), cuda_gpu_kern_gb_sum,
cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_api_gpu_sum, cuda_gpu_sum,
cuda_gpu_trace, cuda_kern_exec_sum, nvtx_sum, nvtx_pushpop_sum, nvtx_startend_sum,
nvtx_pushpop_trace, nvtx_kern_sum, nvtx_gpu_proj_sum, nvtx_gpu_proj_trace, osrt_sum
(:data:`REPORT_NAMES`). Their column and csv output is byte for byte what nsys 2023.4
prints (``LANG=C.UTF-8``: no thousands separators), ``--timeunit`` included.

Behaviour follows nsys 2023.4 (spec: nsys-sqlite.md §3–4), including where other versions
differ:

* default-domain NVTX ranges are printed as plain ``name`` (2024+ prints ``:name``);
* memcpy operations are ``[CUDA memcpy Host-to-Device]`` (2022.4 and 2024+ print
  ``[CUDA memcpy HtoD]``);
* a report whose export lacks ``ENUM_CUDA_MEMCPY_OPER`` (exports older than 2023) is SKIPPED
  by the memory summaries and ``cuda_gpu_trace`` exactly as nsys 2023.4 skips it; exports
  without ``greenContextId`` are SKIPPED by ``cuda_gpu_trace`` only;
* the 2023.4 ``nvtx_gpu_proj_trace`` prints ops launched outside every range as one nameless
  first row (2024 drops it); the summary never shows it;
* not copied: when nsys 2023.4 runs several reports in one invocation, ``cuda_gpu_trace``
  leaks its ``greenContextId`` check into the reports after it (SKIPPING them for old
  exports); each of our reports stands alone.
"""

from __future__ import annotations

from types import ModuleType

import pandas as pd

from analysis.errors import AnalysisError
from analysis.filters import FilterSkip, RowFilter, filter_report, resolve_filter
from analysis.model import Report
from analysis.stats import absent, cuda, nvtx_reports, trace  # noqa: F401 - they register reports
from analysis.stats._base import (
    REGISTRY,
    ReportSpec,
    SkipReport,
    StatsResult,
    parse_spec,
    split_filter,
    time_percent,
)
from analysis.stats.format import FORMATS, format_results
from analysis.xp import get_xp

__all__ = [
    "FORMATS",
    "REPORT_NAMES",
    "StatsResult",
    "format_results",
    "parse_spec",
    "run_report",
    "summary_spec",
    "time_percent",
]

#: Every supported report name (arguments such as ``:base`` come after a colon).
REPORT_NAMES: tuple[str, ...] = tuple(sorted(REGISTRY))


def summary_spec(name: str) -> ReportSpec | None:
    """Return the registered summary ``name`` (its nsys title and arguments), or None."""
    return REGISTRY.get(name)


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
    report_spec, args = parse_spec(spec)
    name = ":".join((report_spec.name, *args))
    module = xp if xp is not None else get_xp()
    options, own = split_filter(args)
    try:
        if options:
            report = _filtered(report, report_spec, own, options, module)
        frame, units = report_spec.func(report, own, module)
    except SkipReport as skip:
        return StatsResult(name, report_spec.title, pd.DataFrame(), {}, str(skip))
    return StatsResult(name, report_spec.title, frame, units, None)


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
