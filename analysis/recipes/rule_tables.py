"""Recipes that list one per-report table: the CUDA expert rules ``cuda_api_sync``,
``cuda_memcpy_async``, ``cuda_memcpy_sync``, ``cuda_memset_sync``, and the
``nvtx_gpu_proj_trace`` stats report.

spec: nsys-sqlite.md §5.4 (rules as recipes). Each report's findings are those of
``main.py analyze -r NAME`` (:func:`analysis.rules.run_rule`, nsys 2023.4's rules) with the
recipe's ``--rows`` (default -1: no row limit, as nsys's recipe runs them), ``--start``,
``--end`` and ``--nvtx``, which nsys's recipe hands to the rule as they are; the hidden columns
(``_Global ID``, …) are dropped. The reduce step concatenates them into one ``analysis``
table (``trace`` for ``nvtx_gpu_proj_trace``) with a ``File`` column. A report the rule
SKIPS (it lacks the tables, or is an export too old for the rule) or where it finds nothing
gives no data, as in nsys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from strata.analysis.model import Report
from strata.analysis.recipes._filter import filter_args
from strata.analysis.recipes.base import (
    RULE_FILTER,
    TIME_FILTER,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    table_or_empty,
)
from strata.analysis.timefmt import pluralize

__all__ = ["NvtxGpuProjTrace", "RuleRecipe", "cuda_rule_recipes"]


@dataclass(frozen=True)
class RuleFindings:
    """One report's findings of the rule: nsys's visible columns, in its row order."""

    frame: pd.DataFrame


class RuleRecipe(Recipe):
    """A recipe that runs one expert rule per report and lists every finding.

    Parameters
    ----------
    name, description
        The rule's name (the recipe's) and a line for the recipe list.
    tables
        The event tables the rule reads (:attr:`Recipe.tables`).
    finding
        What one finding is, for the console summary.
    """

    #: What one finding is, for the console summary.
    finding: str = "finding"
    #: The output table's name (nsys's file name).
    table_name: str = "analysis"
    options_taken = RULE_FILTER

    def __init__(self, name: str, description: str, tables: tuple[str, ...], finding: str) -> None:
        self.name, self.description, self.tables, self.finding = name, description, tables, finding

    def findings(self, report: Report, options: RecipeOptions) -> pd.DataFrame | None:
        """Return the report's rows (hidden ``_`` columns included), or None if SKIPPED."""
        from strata.analysis.rules import run_rule

        spec = ":".join((self.name, f"rows={options.rows}", *filter_args(options)))
        result = run_rule(report, spec)
        return None if result.skipped is not None else result.frame

    def map(self, report_path: Path, options: RecipeOptions) -> RuleFindings | None:
        report = self.load_report(report_path, options)
        frame = self.findings(report, options)
        if frame is None or frame.empty:
            return None
        return RuleFindings(frame[[c for c in frame.columns if not c.startswith("_")]])

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        frames = [p.partial.frame.assign(File=p.file) for p in partials]
        columns = list(frames[0].columns) if frames else ["File"]
        table = table_or_empty(frames, columns)
        files = [p.file for p in partials]
        lines = [
            f"{self.name}: {pluralize(len(table), self.finding)} "
            f"in {pluralize(len(files), 'report')}"
        ]
        if len(table) and "Duration" in table:
            top = table.sort_values("Duration", ascending=False, kind="stable").head(5)
            for row in top.to_dict("records"):
                api = f" {row['API Name']}" if "API Name" in row else ""
                lines.append(
                    f"  {row['File']}:{api} {int(row['Duration']):,d} ns at {int(row['Start']):,d}"
                    f" ns (PID {row['PID']})"
                )
        return self.output(partials, {self.table_name: table}, "\n".join(lines))


#: nsys's CUDA expert rules as recipes: name -> (description, tables read, what one finding is).
_CUDA_RULES = {
    "cuda_api_sync": ("CUDA synchronization APIs that block the host, per report",
                      ("cuda_api", "kernels", "memcpy", "memset", "sync"), "synchronizing call"),
    "cuda_memcpy_async": (
        "asynchronous memcpys that use pageable memory (and so run synchronously)",
        ("cuda_api", "memcpy"), "memcpy call"),
    "cuda_memcpy_sync": ("synchronous memcpys that block the host", ("cuda_api", "memcpy"),
                         "memcpy call"),
    "cuda_memset_sync": ("synchronous memsets that block the host", ("cuda_api", "memset"),
                         "memset call"),
}  # fmt: skip


def cuda_rule_recipes() -> list[RuleRecipe]:
    """Return the recipes of nsys's CUDA expert rules (``cuda_api_sync``, ``cuda_memcpy_async``,
    ``cuda_memcpy_sync``, ``cuda_memset_sync``)."""
    return [RuleRecipe(name, *row) for name, row in _CUDA_RULES.items()]


class NvtxGpuProjTrace(RuleRecipe):
    """``nvtx_gpu_proj_trace``: every NVTX range projected onto the GPU, per report.

    The rows are ``main.py stats -r nvtx_gpu_proj_trace``'s (nsys 2023.4's, its nameless row
    of the GPU work outside every range included), as nsys's recipe takes them.
    """

    table_name = "trace"
    options_taken = TIME_FILTER | {"nvtx"}  # nsys's recipe has no --rows
    notebook = "trace.ipynb"

    def __init__(self) -> None:
        super().__init__(
            "nvtx_gpu_proj_trace",
            "NVTX ranges projected onto the GPU, one row per range, per report",
            ("nvtx", "cuda_api", "kernels", "memcpy", "memset"),
            "range",
        )

    def findings(self, report: Report, options: RecipeOptions) -> pd.DataFrame | None:
        from strata.analysis.stats import run_report

        result = run_report(report, ":".join((self.name, *filter_args(options))))
        return None if result.skipped is not None else result.frame
