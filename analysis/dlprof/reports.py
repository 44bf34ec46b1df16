"""Build DLProf's reports for every report of a set (``main.py dlprof``).

Each report is analysed on its own (its ops, iterations and selection); with several, each
table gets a ``Report`` column first. The ops of a report are computed once per set and
options through :meth:`analysis.reportset.ReportSet.derived`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.dlprof.iterations import find_iterations, select_iterations
from strata.analysis.dlprof.markers import TC_KERNEL_PATTERNS
from strata.analysis.dlprof.ops import attribute_ops
from strata.analysis.dlprof.summary import SummaryInputs, expert_table, summary_table
from strata.analysis.dlprof.tables import (
    detailed_table,
    group_node_table,
    iteration_table,
    kernel_table,
    op_ids,
    op_type_table,
)
from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet

__all__ = [
    "DLPROF_REPORTS",
    "DlprofOptions",
    "DlprofResult",
    "analyze_report",
    "dlprof_reports",
    "set_results",
]

#: The reports, in the order they are printed (spec §3; ``detailed`` is DLProf's per-op one).
DLPROF_REPORTS = ("summary", "detailed", "kernel", "iteration", "op_type", "group_node",
                  "expert_systems")  # fmt: skip


@dataclass(frozen=True)
class DlprofOptions:
    """What ``main.py dlprof`` was asked (hashable: it keys the set's derived values).

    Attributes
    ----------
    key_node
        Name of the NVTX range or op whose instances end the iterations; None: the defaults
        of :data:`analysis.dlprof.iterations.DEFAULT_KEY_NODES`.
    iter_start, iter_stop
        The iterations aggregated, both included; None: the first, the last.
    domains
        NVTX domains whose ranges count ('default': the unnamed one); None: all.
    tc_patterns
        Kernel name substrings meaning Tensor Core use.
    """

    key_node: str | None = None
    iter_start: int | None = None
    iter_stop: int | None = None
    domains: tuple[str, ...] | None = None
    tc_patterns: tuple[str, ...] = TC_KERNEL_PATTERNS


@dataclass(frozen=True)
class DlprofResult:
    """DLProf's tables of one report: name -> DataFrame (see :data:`DLPROF_REPORTS`).

    What ties a table row to the report's events: ``ops``, the op instances the per-op
    tables aggregate (those of the selected iterations; :class:`analysis.dlprof.ops.OpData`'s
    columns plus ``op_id``, ``overhead_ns`` and ``iteration``, indexed by their row in
    ``OpData.ops``), and ``gpu``, every GPU operation of the report with ``op`` (that index,
    -1: none) and ``iteration`` (of its launch).
    """

    tables: dict[str, pd.DataFrame]
    iterations: pd.DataFrame
    ops: pd.DataFrame
    gpu: pd.DataFrame


def _system(report: Report, devices: np.ndarray) -> dict:
    gpus = report.gpus
    names = sorted({str(n) for n in gpus["name"]}) if len(gpus) else []
    return {"GPU Count": len(devices), "GPU Name(s)": "; ".join(names),
            "NSys Version": report.info.nsys_version, "Report": report.name}  # fmt: skip


def analyze_report(report: Report, options: DlprofOptions = DlprofOptions()) -> DlprofResult:
    """Return DLProf's tables for one report.

    Raises
    ------
    AnalysisError
        The report is partial, a domain is unknown, or the iterations asked are not there.
    """
    if not report.complete:
        raise AnalysisError(f"{report.name}: still loading; wait for the whole report")
    data = attribute_ops(report, options.domains, options.tc_patterns)
    iterations = find_iterations(report, data, options.key_node)
    start, stop = select_iterations(iterations, options.iter_start, options.iter_stop, report)
    ops = data.ops.copy()
    ops["op_id"] = op_ids(ops)
    ops["overhead_ns"] = ops["cpu_ns"] - ops["api_ns"]
    ops["iteration"] = iterations.of(ops["start_ns"].to_numpy())
    gpu = data.gpu.copy()
    launch = np.where(gpu["api_start_ns"] >= 0, gpu["api_start_ns"], gpu["start_ns"])
    gpu["iteration"] = iterations.of(launch)
    keep_ops = ops["iteration"].between(start, stop).to_numpy()
    keep_gpu = gpu["iteration"].between(start, stop).to_numpy()
    # GPU work of an op outside the range (an op that started before it) is still its own.
    gpu_kept = gpu[keep_gpu]
    ops_kept = ops[keep_ops]
    devices = np.unique(data.gpu["device_id"].to_numpy()) if len(data.gpu) else np.zeros(1, int)
    detailed = detailed_table(ops_kept)
    inputs = SummaryInputs(
        ops=ops_kept, gpu=gpu_kept, detailed=detailed, iterations=iterations.frame,
        selected=(start, stop), key_node=iterations.key_node, asked_key=iterations.asked,
        framework=data.framework, devices=devices, system=_system(report, devices),
    )  # fmt: skip
    summary = summary_table(inputs)
    tables = {
        "summary": summary,
        "detailed": detailed,
        "kernel": kernel_table(gpu_kept, ops),
        "iteration": iteration_table(gpu_kept, ops),
        "op_type": op_type_table(ops_kept),
        "group_node": group_node_table(ops_kept),
        "expert_systems": expert_table(inputs, summary),
    }
    return DlprofResult(tables, iterations.frame, ops_kept, gpu)


def set_results(
    report_set: ReportSet, options: DlprofOptions = DlprofOptions()
) -> list[DlprofResult]:
    """Return :func:`analyze_report` of every report of the set, in its order, computed once
    per membership and options (the CLI and the window share them).

    Raises
    ------
    AnalysisError
        One report cannot be analysed as asked.
    """
    return report_set.derived(
        ("strata.analysis.dlprof", options),
        lambda s: [analyze_report(r, options) for r in s.reports],
    )


def dlprof_reports(
    report_set: ReportSet,
    options: DlprofOptions = DlprofOptions(),
    names: Sequence[str] = DLPROF_REPORTS,
) -> dict[str, pd.DataFrame]:
    """Return the ``names`` tables over every report of the set (``Report`` first if several).

    Raises
    ------
    AnalysisError
        Unknown report name, or one report cannot be analysed as asked.
    """
    unknown = [n for n in names if n not in DLPROF_REPORTS]
    if unknown:
        raise AnalysisError(
            f"unknown DLProf report {unknown[0]!r}; choose among {', '.join(DLPROF_REPORTS)}"
        )
    snap = report_set.snapshot()
    results = set_results(snap, options)
    out = {}
    for name in names:
        frames = [result.tables[name] for result in results]
        if len(frames) == 1:
            out[name] = frames[0]
            continue
        parts = [f.assign(Report=label) for f, label in zip(frames, snap.labels, strict=True)]
        stacked = pd.concat(parts, ignore_index=True)
        out[name] = stacked[["Report", *[c for c in stacked.columns if c != "Report"]]]
    return out
