"""Strata's analysis layer: reports, the columnar model, summaries. No Qt here.

The names below are imported on first use (PEP 562): ``from strata.analysis import __version__``
or ``analysis.errors`` must not pay for NumPy, pandas and pyarrow, which the model, the
loader and the cache import; ``main.py --version`` needs none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: Strata's version (the package metadata reads it from here; caches are keyed by it).
__version__ = "0.2.0"

from strata.analysis.errors import (
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
    from strata.analysis.discover import find_reports
    from strata.analysis.model import EVENT_TABLES, EventTable, Report, ReportInfo, StringIds
    from strata.analysis.open import open_report
    from strata.analysis.reportset import ReportSet, open_reports

#: name -> the module that defines it, imported by ``__getattr__`` when first asked for.
_LAZY = {
    "EVENT_TABLES": "strata.analysis.model",
    "EventTable": "strata.analysis.model",
    "Report": "strata.analysis.model",
    "ReportInfo": "strata.analysis.model",
    "StringIds": "strata.analysis.model",
    "find_reports": "strata.analysis.discover",
    "open_report": "strata.analysis.open",
    "ReportSet": "strata.analysis.reportset",
    "open_reports": "strata.analysis.reportset",
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
