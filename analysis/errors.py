"""The one error hierarchy of Strata.

Every message is one line a user can act on: which file, what is wrong, what to do.
"""

from __future__ import annotations

from pathlib import Path

from strata.analysis.escape import escape_text

__all__ = [
    "AnalysisError",
    "CancelledError",
    "CorruptReportError",
    "ExportError",
    "NotAReportError",
    "ReportError",
    "StrataError",
    "UnsupportedVersionError",
]


class StrataError(Exception):
    """Base of every error Strata raises on purpose (bad input, impossible request)."""


class ReportError(StrataError):
    """A report file cannot be used; carries the offending ``path``.

    The message escapes what a file name may hold that a terminal cannot print (bytes that
    are not UTF-8, control characters); ``path`` and ``reason`` keep the raw values.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(escape_text(f"{self.path}: {reason}"))


class NotAReportError(ReportError):
    """The file is not an Nsight Systems report (not SQLite, or SQLite without nsys tables)."""


class CorruptReportError(ReportError):
    """The file looks like a report but its content is damaged or inconsistent (incl. truncated)."""


class UnsupportedVersionError(ReportError):
    """The report was written by a newer Nsight Systems than we (or the installed nsys) read."""


class ExportError(ReportError):
    """A ``.nsys-rep``/``.qdrep`` could not be converted: nsys missing or failed."""


class AnalysisError(StrataError):
    """An impossible request: unknown report name, empty selection where one is required."""


class CancelledError(StrataError):
    """Work was cancelled through its ``cancel`` event before it finished."""
