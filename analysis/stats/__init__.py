"""nsys-compatible summaries (``nsys stats -r NAME``) computed from the columnar report.

Usage from Python or Jupyter::

    from strata.analysis import open_report
    from strata.analysis.stats import run_report, format_results
    report = open_report("run.sqlite")
    result = run_report(report, "cuda_gpu_kern_sum:base")
    result.frame                       # numbers in ns / bytes, columns named like nsys
    print(format_results({report.name: [result]}, "csv"))

Reports: cuda_gpu_kern_sum (``:base``, ``:mangled``, ``:nvtx-name``), cuda_gpu_kern_gb_sum,
cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_api_gpu_sum, cuda_gpu_sum,
cuda_gpu_trace, cuda_kern_exec_sum, nvtx_sum, nvtx_pushpop_sum, nvtx_startend_sum,
nvtx_pushpop_trace, nvtx_kern_sum, nvtx_gpu_proj_sum, nvtx_gpu_proj_trace, osrt_sum
(:data:`REPORT_NAMES`, :mod:`analysis.stats.catalog`). Their column and csv output is byte
for byte what nsys 2023.4 prints (``LANG=C.UTF-8``: no thousands separators), ``--timeunit``
included.

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

from typing import TYPE_CHECKING

from strata.analysis.stats.catalog import REPORT_NAMES, parse_spec, summary_spec
from strata.analysis.stats.text import FORMATS, format_results

if TYPE_CHECKING:
    from strata.analysis.stats._base import StatsResult, time_percent
    from strata.analysis.stats.run import run_report

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

#: Names resolved on first use: they import NumPy and pandas, which the catalog, the
#: formats and a stored answer (``main.py stats`` answering from its cache) never need.
_LAZY = {
    "StatsResult": "strata.analysis.stats._base",
    "time_percent": "strata.analysis.stats._base",
    "run_report": "strata.analysis.stats.run",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'strata.analysis.stats' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
