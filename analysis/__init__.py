"""Strata's analysis layer: reports, the columnar model, summaries. No Qt here.

The names below are imported on first use (PEP 562): ``from analysis import __version__``
or ``analysis.errors`` must not pay for NumPy, pandas and pyarrow, which the model, the
loader and the cache import; ``main.py --version`` needs none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: Strata's version (the package metadata reads it from here; caches are keyed by it).
__version__ = "0.2.0"

from analysis.errors import (
    AnalysisError,
    CancelledError,
    CorruptReportError,
    ExportError,
    NotAReportError,
    ReportError,
    StrataError,
    UnsupportedVersionError,
)

if TYPE_CHECKING:
    from analysis.discover import find_reports
    from analysis.model import EVENT_TABLES, EventTable, Report, ReportInfo, StringIds
    from analysis.open import open_report
    from analysis.reportset import ReportSet, open_reports

#: name -> the module that defines it, imported by ``__getattr__`` when first asked for.
_LAZY = {
    "EVENT_TABLES": "analysis.model",
    "EventTable": "analysis.model",
    "Report": "analysis.model",
    "ReportInfo": "analysis.model",
    "StringIds": "analysis.model",
    "find_reports": "analysis.discover",
    "open_report": "analysis.open",
    "ReportSet": "analysis.reportset",
    "open_reports": "analysis.reportset",
}

__all__ = [
    "__version__",
    "EVENT_TABLES",
    "AnalysisError",
    "CancelledError",
    "CorruptReportError",
    "EventTable",
    "ExportError",
    "NotAReportError",
    "Report",
    "ReportError",
    "ReportInfo",
    "ReportSet",
    "StrataError",
    "StringIds",
    "UnsupportedVersionError",
    "find_reports",
    "open_report",
    "open_reports",
]


def __getattr__(name: str) -> object:
    """Import a re-exported name's module on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'analysis' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
