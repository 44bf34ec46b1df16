"""The CUDA expert-rule recipes: ``cuda_api_sync``, ``cuda_memcpy_async``,
``cuda_memcpy_sync``, ``cuda_memset_sync``.

spec: nsys-sqlite.md §5.4 (rules as recipes). Each report's findings are those of
``main.py analyze -r NAME`` (:func:`analysis.rules.run_rule`, nsys 2023.4's rules) without a
row limit, as nsys's recipe runs them (``--rows`` defaults to -1 there); the hidden columns
(``_Global ID``, …) are dropped. The reduce step concatenates them into one ``analysis``
table with a ``File`` column. A report the rule SKIPS (it lacks the tables, or is an export
too old for the rule) or where it finds nothing gives no data, as in nsys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.open import open_report
from analysis.recipes.base import (
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    table_or_empty,
)
from analysis.recipes.summaries import files_table
from analysis.timefmt import pluralize

__all__ = ["CudaApiSync", "CudaMemcpyAsync", "CudaMemcpySync", "CudaMemsetSync", "RuleRecipe"]


@dataclass(frozen=True)
class RuleFindings:
    """One report's findings of the rule: nsys's visible columns, in its row order."""

    frame: pd.DataFrame


class RuleRecipe(Recipe):
    """A recipe that runs one expert rule per report and lists every finding."""

    #: What one finding is, for the console summary.
    finding: str = "finding"

    def map(self, report_path: Path, options: RecipeOptions) -> RuleFindings | None:
        from analysis.rules import run_rule

        report = open_report(report_path, use_cache=options.use_cache, tables=self.tables)
        result = run_rule(report, f"{self.name}:rows=-1")
        if result.skipped is not None or result.frame.empty:
            return None
        frame = result.frame
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
        if len(table):
            top = table.sort_values("Duration", ascending=False, kind="stable").head(5)
            for row in top.to_dict("records"):
                api = f" {row['API Name']}" if "API Name" in row else ""
                lines.append(
                    f"  {row['File']}:{api} {int(row['Duration']):,d} ns at {int(row['Start']):,d}"
                    f" ns (PID {row['PID']})"
                )
        return RecipeOutput(
            recipe=self.name,
            tables={"analysis": table, "files": files_table(partials)},
            summary="\n".join(lines),
            files=files,
        )


class CudaApiSync(RuleRecipe):
    """``cuda_api_sync``: CUDA API calls that synchronise the host with the GPU."""

    name = "cuda_api_sync"
    description = "CUDA synchronization APIs that block the host, per report"
    tables = ("cuda_api", "kernels", "memcpy", "memset", "sync")
    finding = "synchronizing call"


class CudaMemcpyAsync(RuleRecipe):
    """``cuda_memcpy_async``: asynchronous memcpy calls with pageable host memory."""

    name = "cuda_memcpy_async"
    description = "asynchronous memcpys that use pageable memory (and so run synchronously)"
    tables = ("cuda_api", "memcpy")
    finding = "memcpy call"


class CudaMemcpySync(RuleRecipe):
    """``cuda_memcpy_sync``: synchronous memcpy calls."""

    name = "cuda_memcpy_sync"
    description = "synchronous memcpys that block the host"
    tables = ("cuda_api", "memcpy")
    finding = "memcpy call"


class CudaMemsetSync(RuleRecipe):
    """``cuda_memset_sync``: synchronous memset calls."""

    name = "cuda_memset_sync"
    description = "synchronous memsets that block the host"
    tables = ("cuda_api", "memset")
    finding = "memset call"
