"""The ``nsys analyze`` expert rules of nsys 2023.4, computed from the columnar report.

Usage from Python or Jupyter::

    from strata.analysis import open_report
    from strata.analysis.rules import run_rule, format_rule_results
    report = open_report("run.sqlite")
    result = run_rule(report, "gpu_gaps:gap=1")
    result.frame                    # one row per finding; '_kind'/'_row' name the event
    print(format_rule_results({report.name: [result]}, "csv"))

Rules (:data:`RULE_NAMES`, run in nsys's default order :data:`DEFAULT_RULES`):
cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync, cuda_api_sync, gpu_gaps,
gpu_time_util, dx12_mem_ops. Options as nsys takes them, after colons: ``rows``, ``start``,
``end``, ``nvtx`` for all; ``process``/``thread`` (cuda_api_sync), ``gap`` (ms, gpu_gaps),
``threshold`` (%) and ``chunks`` (gpu_time_util).

Differences from nsys 2023.4, on purpose: a bad option value (``gap=abc``, ``chunks=0``)
is refused before any report is read, where nsys prints an ERROR per report (and runs
``chunks=0``, printing nothing); GPU work of Vulkan, OpenGL or DX12 (not modelled) makes
the GPU rules refuse the report rather than leave it out.
"""

from __future__ import annotations

import pandas as pd

from strata.analysis.model import Report
from strata.analysis.rules import cuda, dx12, gpu  # noqa: F401 - they register the rules
from strata.analysis.rules._base import REGISTRY, RuleResult, SkipRule, parse_rule_spec
from strata.analysis.rules.format import RULE_FORMATS, format_rule_results

__all__ = [
    "DEFAULT_RULES",
    "RULE_FORMATS",
    "RULE_NAMES",
    "RuleResult",
    "format_rule_results",
    "parse_rule_spec",
    "run_rule",
]

#: What ``nsys analyze`` runs without ``-r``, in its order.
DEFAULT_RULES = (
    "cuda_memcpy_async",
    "cuda_memcpy_sync",
    "cuda_memset_sync",
    "cuda_api_sync",
    "gpu_gaps",
    "gpu_time_util",
    "dx12_mem_ops",
)
RULE_NAMES: tuple[str, ...] = tuple(sorted(REGISTRY))


def run_rule(report: Report, spec: str) -> RuleResult:
    """Run one rule (``name[:option=value...]``) on a loaded report.

    Returns
    -------
    RuleResult
        With ``skipped`` set (and an empty frame) when the report lacks the rule's tables.

    Raises
    ------
    AnalysisError
        Unknown rule, unknown option or bad option value.
    """
    rule, options = parse_rule_spec(spec)
    messages = {k: v for k, v in options.items() if v is not None}
    advice, noresult = rule.advice.format(**messages), rule.noresult.format(**messages)
    name = spec.strip()
    try:
        frame, units = rule.func(report, options)
    except SkipRule as skip:
        return RuleResult(name, rule.title, pd.DataFrame(), {}, advice, noresult, skipped=str(skip))
    return RuleResult(name, rule.title, frame, units, advice, noresult, int(options["rows"]))
