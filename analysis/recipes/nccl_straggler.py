"""``nccl_straggler``: collectives matched across a folder of ranks, and who made whom wait.

Strata's own recipe (no nsys counterpart). ``map`` finds one report's collectives
(:func:`analysis.collectives.find_collectives`: NCCL kernels, torch.distributed records or
NCCL NVTX ranges); ``reduce`` puts the reports on one clock by their UTC session starts
(the earliest at 0, as ``nsys recipe`` does) and matches them
(:func:`analysis.collectives.match_collectives`). Tables: ``collectives`` (one row per
matched collective), ``ranks`` (one per collective and rank), ``summary`` (per collective
type), ``rank_waits`` (each rank's wait and straggler count per type), ``files``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from strata.analysis.collectives import find_collectives, match_collectives
from strata.analysis.escape import escape_text
from strata.analysis.recipes.base import FilePartial, Recipe, RecipeOptions, RecipeOutput
from strata.analysis.timefmt import pluralize

__all__ = ["NcclStraggler"]


@dataclass(frozen=True)
class StragglerPartial:
    """One report's collectives (:func:`find_collectives`) and its UTC session start."""

    ops: pd.DataFrame
    session_start_utc_ns: int


class NcclStraggler(Recipe):
    """``nccl_straggler`` over the reports of a run, one per rank."""

    name = "nccl_straggler"
    description = "collectives matched across ranks: arrival skew, waits, straggler ranks"
    tables = ("kernels", "nvtx")

    def map(self, report_path: Path, options: RecipeOptions) -> StragglerPartial:
        report = self.load_report(report_path, options)
        # A rank without collectives is kept (empty): the match says so in a note.
        return StragglerPartial(find_collectives(report), int(report.info.session_start_utc_ns))

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        files = [p.file for p in partials]
        first = min((p.partial.session_start_utc_ns for p in partials), default=0)
        offsets = [p.partial.session_start_utc_ns - first for p in partials]
        found = match_collectives([p.partial.ops for p in partials], files, offsets)
        tables = {
            "collectives": found.instances,
            "ranks": found.ranks,
            "summary": found.summary,
            "rank_waits": found.rank_waits,
            "notes": pd.DataFrame({"Note": pd.Series(list(found.notes), dtype=object)}),
        }
        lines = [f"nccl_straggler: {pluralize(len(found.instances), 'matched collective')} "
                 f"in {pluralize(len(files), 'report')}"]  # fmt: skip
        for row in found.summary.itertuples(index=False):
            lines.append(
                f"{row.collective} ({escape_text(str(row.communicator))}): "
                f"{pluralize(int(row.count), 'instance')}, max skew {int(row.max_skew_ns):,} ns; "
                f"worst straggler {escape_text(str(row.worst_straggler))} (last in "
                f"{int(row.straggler_count)}, others waited {int(row.caused_wait_ns):,} ns)"
            )
        lines += [escape_text(n) for n in found.notes]
        return self.output(partials, tables, "\n".join(lines))
