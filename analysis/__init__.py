"""Strata's analysis layer: reports, the columnar model, summaries. No Qt here."""

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
from analysis.model import EVENT_TABLES, EventTable, Report, ReportInfo, StringIds
from analysis.open import find_reports, open_report
from analysis.reportset import ReportSet, open_reports

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
