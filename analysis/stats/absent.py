"""The nsys stats reports of data Strata does not load: SKIPPED, empty, or refused.

Unified Memory, OpenMP, OpenACC, MPI, network metrics and the graphics APIs (DX11/DX12,
OpenGL, Vulkan, WDDM, NvVideo). nsys 2023.4 checks for their tables first: a report without
them prints nsys's SKIPPED line, word for word. A report whose tables exist but hold no row
prints what nsys prints for it (no data; ``um_total_sum``: its one row of empty totals). A
report with rows in them is refused with one line, rather than printing a table that could
differ from nsys's. So their options (``um_sum:rows=``,
``network_congestion:ticks_threshold=``) change nothing that is printed but the
``Processing`` line and the file names, as nsys's.
"""

from __future__ import annotations

import sqlite3
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis._sqlfile import _ro_uri, quote_ident
from strata.analysis.model import Report
from strata.analysis.open import sqlite_source
from strata.analysis.stats._base import SkipReport, register
from strata.analysis.stats.absent_specs import (
    ABSENT_REPORTS,
    UM_TOTAL_COLUMNS,
    AbsentSkip,
    absent_verdict,
)

__all__ = ["ABSENT_REPORTS"]


def _has_rows(report: Report, sources: list[str]) -> bool:
    """Whether any of ``sources`` (tables or SELECTs) has a row; True when unsure."""
    # The file itself, or the SQLite copy behind an export folder or an .nsys-rep.
    path = sqlite_source(report.path) if report.path.exists() else None
    if path is None:
        return bool(sources)
    try:
        con = sqlite3.connect(_ro_uri(path), uri=True)
        try:
            for source in sources:
                query = (
                    source
                    if source.startswith("SELECT")
                    else f"SELECT 1 FROM {quote_ident(source)}"
                )
                if con.execute(f"{query} LIMIT 1").fetchone() is not None:
                    return True
        finally:
            con.close()
    except sqlite3.Error:
        return True
    return False


def _run(name: str, report: Report) -> tuple[pd.DataFrame, dict]:
    try:
        verdict = absent_verdict(
            name, report.name, report.source_columns, lambda sources: _has_rows(report, sources)
        )
    except AbsentSkip as skip:
        raise SkipReport(str(skip)) from None
    if verdict == "um_total":
        row = {c: [None] for c in UM_TOTAL_COLUMNS}
        row["Total CPU Page Faults"] = [0]
        frame = pd.DataFrame(row)
        frame["Total CPU Page Faults"] = frame["Total CPU Page Faults"].astype(np.int64)
        units = {"Total HtoD Migration Size": "mem", "Total DtoH Migration Size": "mem"}
        return frame, units
    return pd.DataFrame(), {}


def _register(name: str) -> None:
    def func(report: Report, args: tuple[str, ...], xp: ModuleType):
        return _run(name, report)

    register(name)(func)


for _name in ABSENT_REPORTS:
    _register(_name)
