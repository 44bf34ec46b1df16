"""Tell an ``.nsys-rep`` by its content, and find the SQLite export nsys wrote beside it.

Plain Python, so that ``stats`` and ``analyze`` can decide what to read before NumPy,
pandas or the readers are imported (:mod:`analysis.open` reads what they decide).
"""

from __future__ import annotations

from pathlib import Path

from strata.analysis._files import read_head
from strata.analysis.errors import ReportError

__all__ = ["NSYS_REP_MAGIC", "SQLITE_MAGIC", "beside_export", "is_newer_export", "is_nsys_rep"]

#: "NVIDIA Tegra Profiler Report ..." (MANIFEST §3).
NSYS_REP_MAGIC = b"NVIDIA"
#: The first bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def _magic(path: Path) -> bytes:
    # Never a plain open(): a FIFO would block it (read_head refuses non-regular files).
    return read_head(path, 16)[0]


def is_nsys_rep(path: str | Path) -> bool:
    """Whether ``path`` is an ``.nsys-rep``/``.qdrep`` (by its content), which nsys exports.

    Raises
    ------
    NotAReportError, CorruptReportError
        The file cannot be read.
    """
    magic = _magic(Path(path))
    return magic.startswith(NSYS_REP_MAGIC) and not magic.startswith(SQLITE_MAGIC)


def is_newer_export(export: str | Path, report: str | Path) -> bool:
    """nsys 2023.4's test of an existing export of ``report``: its modification time, in whole
    seconds, is later than the report's (an export of the same second counts as older)."""
    return int(Path(export).stat().st_mtime) > int(Path(report).stat().st_mtime)


def beside_export(path: str | Path) -> Path | None:
    """The export ``nsys stats`` wrote beside the ``.nsys-rep`` at ``path`` (``r.sqlite``
    beside ``r.nsys-rep``), when it is there and newer than the report, as nsys decides
    (:func:`is_newer_export`); else None. nsys reuses it; Strata reads it when nsys is not
    there to export the report (``stats`` and ``analyze`` always, as nsys).
    """
    path = Path(path)
    export = path.with_suffix(".sqlite")
    try:
        if export == path or not export.is_file() or not is_newer_export(export, path):
            return None
        return export if _magic(export).startswith(SQLITE_MAGIC) else None
    except (OSError, ReportError):
        return None
