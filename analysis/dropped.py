"""What dropped (or given) paths would open, judged cheaply: names, file types, magic bytes."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from strata.analysis._files import read_head
from strata.analysis._sqlite import SQLITE_MAGIC
from strata.analysis.discover import REPORT_SUFFIXES, find_reports, is_trace_file, is_trace_name
from strata.analysis.errors import NotAReportError
from strata.analysis.open import find_nsys
from strata.analysis.recipes.output import is_recipe_output
from strata.analysis.timefmt import pluralize

__all__ = ["DropPreview", "preview_paths"]

_NSYS_REP_SUFFIXES = (".nsys-rep", ".qdrep")


@dataclass(frozen=True)
class DropPreview:
    """What :func:`preview_paths` found.

    Attributes
    ----------
    reports
        Report files that would be opened (folders expanded, one level).
    recipe_outputs
        Folders written by ``main.py recipe … --output`` (opened as tables).
    skipped
        ``(path, reason)`` of what would not open, the reason a few words.
    """

    reports: tuple[Path, ...] = ()
    recipe_outputs: tuple[Path, ...] = ()
    skipped: tuple[tuple[Path, str], ...] = ()

    @property
    def opens_anything(self) -> bool:
        """Whether dropping these paths would open something."""
        return bool(self.reports or self.recipe_outputs)

    def summary(self) -> str:
        """One line: '3 reports, 1 skipped: not a report' or 'Nothing to open: …'."""
        parts = []
        if self.reports:
            parts.append(pluralize(len(self.reports), "report"))
        if self.recipe_outputs:
            parts.append(pluralize(len(self.recipe_outputs), "recipe output"))
        if self.skipped:
            reasons = list(dict.fromkeys(reason for _path, reason in self.skipped))
            parts.append(f"{len(self.skipped)} skipped: {'; '.join(reasons)}")
        text = ", ".join(parts)
        return text if self.opens_anything else f"Nothing to open: {text or 'no file'}"


def preview_paths(paths: Iterable[str | Path], already_open: Collection[Path] = ()) -> DropPreview:
    """Say what opening ``paths`` would do, without opening any report.

    A file is judged by its suffix and, for a SQLite export or an ``.nsys-rep``, its first
    16 bytes (read without blocking: a FIFO is never waited on); a folder by its listing,
    as :func:`analysis.open.find_reports` expands it. Cheap enough for every drag entering
    the window; the open itself still judges each file fully.

    Parameters
    ----------
    paths
        Files and folders.
    already_open
        Report paths open now: skipped as 'already open'.
    """
    reports: list[Path] = []
    recipes: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    seen = {Path(p) for p in already_open}
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and is_recipe_output(path):
            recipes.append(path)
            continue
        try:
            files = find_reports([path])
        except NotAReportError as exc:
            skipped.append((path, _short(exc.reason)))
            continue
        for file in files:
            reason = "already open" if file in seen else _file_problem(file)
            if reason:
                skipped.append((file, reason))
            else:
                reports.append(file)
                seen.add(file)
    return DropPreview(tuple(reports), tuple(recipes), tuple(skipped))


def _file_problem(path: Path) -> str:
    """Why ``path`` would not open as a report ('' when it looks like one)."""
    trace = is_trace_name(path)
    if path.suffix.lower() not in REPORT_SUFFIXES and not trace:
        return "not a report"
    try:
        head, _size = read_head(path, 16)  # refuses a FIFO or device without blocking
    except NotAReportError as exc:
        return _short(exc.reason)
    if trace:  # a regular file now: its first bytes say whether it is a Kineto trace
        return "" if is_trace_file(path) else "JSON, not a PyTorch profiler trace"
    if path.suffix.lower() in _NSYS_REP_SUFFIXES:
        if head.startswith(SQLITE_MAGIC):
            return ""  # a SQLite export under another name: read directly
        return "" if find_nsys() else "needs nsys to convert"
    return "" if head.startswith(SQLITE_MAGIC) else "not a SQLite file"


def _short(reason: str) -> str:
    # The first clause of a one-line reason: the overlay has room for a few words.
    return reason.split(";")[0].strip()
