"""The list of open reports: add (loading in the background), remove, keep order, no duplicates.

Each report is an entry that is *loading* until ``analysis.open_report`` returns on a worker
thread, then *loaded*. The load is progressive: while it runs, the entry's report is the
partial report of the tables read so far (``report.complete`` False), replaced in the list's
:class:`ReportSet` as more tables arrive, so that the window draws a report long before it is
read whole. A file that fails to load leaves the list and its error is announced with
:attr:`ReportList.report_failed`; the other reports are not affected.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from strata.analysis import Report, find_reports, open_report
from strata.analysis.errors import StrataError
from strata.analysis.recipes.output import is_recipe_output
from strata.analysis.reportset import ReportSet
from strata.app.jobs import Job, JobProgress, JobRunner

__all__ = ["LOADED", "LOADING", "ReportEntry", "ReportList"]

log = logging.getLogger(__name__)

LOADING = "loading"
LOADED = "loaded"


@dataclass(eq=False)
class ReportEntry:
    """One report of the list.

    Attributes
    ----------
    path
        The resolved path of the file the user opened (the list's identity key).
    state
        :data:`LOADING` or :data:`LOADED`.
    fraction, text
        The last progress report while loading.
    report
        The loaded report; while loading, ``None`` until the first tables arrive, then the
        partial report of the tables read so far (``report.complete`` False).
    manual_offset_ns
        The user's extra time shift for this report, added to the alignment offset.
    """

    path: Path
    state: str = LOADING
    fraction: float = 0.0
    text: str = "queued"
    report: Report | None = None
    manual_offset_ns: int = 0
    job: Job | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.path.name


class ReportList(QObject):
    """The ordered set of open reports and their background loads.

    Signals
    -------
    entry_added(ReportEntry)
        A new report started loading.
    entry_progressed(ReportEntry)
        Its ``fraction``/``text`` changed.
    report_partial(ReportEntry)
        Its ``report`` is a newer partial report (more tables read; still loading).
    report_loaded(ReportEntry)
        Its ``report`` is ready (complete).
    report_failed(Path, Exception)
        A path could not be opened (the entry, if any, has been removed).
    entry_removed(ReportEntry)
        A report was closed (or its load was cancelled).
    reports_changed()
        The reports to show changed (a partial report arrived, a load finished, a report
        closed); :attr:`report_set` holds them already.
    duplicate_ignored(Path)
        A path was not added because it is already open.
    offsets_changed()
        A manual offset changed.
    recipe_output_found(Path)
        A path given to :meth:`add_paths` is a recipe output folder, not reports; the main
        window opens it as tables.
    """

    entry_added = Signal(object)
    entry_progressed = Signal(object)
    report_partial = Signal(object)
    report_loaded = Signal(object)
    report_failed = Signal(object, object)
    entry_removed = Signal(object)
    reports_changed = Signal()
    offsets_changed = Signal()
    duplicate_ignored = Signal(object)
    recipe_output_found = Signal(object)

    def __init__(self, runner: JobRunner, parent: QObject | None = None, use_cache: bool = True):
        super().__init__(parent)
        self._runner = runner
        self._use_cache = use_cache
        self._entries: list[ReportEntry] = []
        #: The loaded reports and everything derived from them: the window's one set.
        self.report_set = ReportSet()

    def entries(self) -> list[ReportEntry]:
        """Return every entry, loading or loaded, in the order they were added."""
        return list(self._entries)

    def loaded_entries(self) -> list[ReportEntry]:
        return [e for e in self._entries if e.state == LOADED]

    def reports(self) -> list[Report]:
        """Return the reports to show in list order: loaded ones, and the partial reports of
        loads under way (``report.complete`` False)."""
        return [e.report for e in self._entries if e.report is not None]

    def is_loading(self) -> bool:
        return any(e.state == LOADING for e in self._entries)

    def has_every_report(self) -> bool:
        """Whether every entry has a report to show (loaded, or partial while loading)."""
        return all(e.report is not None for e in self._entries)

    def find(self, path: str | Path) -> ReportEntry | None:
        resolved = Path(path).resolve()
        return next((e for e in self._entries if e.path == resolved), None)

    def add_paths(self, paths: Iterable[str | Path]) -> list[ReportEntry]:
        """Start loading every report in ``paths`` (folders add the reports inside them).

        Paths already in the list are ignored. A path that does not exist or a folder without
        reports is announced with :attr:`report_failed` at once; the others still load. A
        recipe output folder is announced with :attr:`recipe_output_found` instead.

        Returns
        -------
        list of ReportEntry
            The entries that were added.
        """
        added = []
        for raw in paths:
            if is_recipe_output(raw):
                self.recipe_output_found.emit(Path(raw))
                continue
            try:
                files = find_reports([raw])
            except StrataError as exc:
                self.report_failed.emit(Path(raw), exc)
                continue
            for file in files:
                entry = self._add_file(file)
                if entry is not None:
                    added.append(entry)
        return added

    def _add_file(self, file: Path) -> ReportEntry | None:
        resolved = file.resolve()
        if self.find(resolved) is not None:
            self.duplicate_ignored.emit(resolved)
            return None
        entry = ReportEntry(resolved)
        self._entries.append(entry)
        job = self._runner.submit(partial(_load, resolved, self._use_cache), long=True)
        entry.job = job
        job.progressed.connect(partial(self._on_progressed, entry))
        job.published.connect(partial(self._on_partial, entry))
        job.finished.connect(partial(self._on_loaded, entry))
        job.failed.connect(partial(self._on_failed, entry))
        self.entry_added.emit(entry)
        return entry

    def remove(self, path: str | Path) -> bool:
        """Close one report (cancelling its load); return whether it was in the list."""
        entry = self.find(path)
        if entry is None:
            return False
        if entry.job is not None and not entry.job.is_done:
            entry.job.cancel()
        self._drop(entry)
        return True

    def _drop(self, entry: ReportEntry) -> None:
        self._entries.remove(entry)
        self.entry_removed.emit(entry)
        if entry.report is not None:  # it was shown, loaded or partial
            self.report_set.set_reports(self.reports())
            self.reports_changed.emit()

    def clear(self) -> None:
        """Close every report."""
        for entry in list(self._entries):
            self.remove(entry.path)

    def set_manual_offset(self, path: str | Path, offset_ns: int) -> None:
        """Set the user's extra time shift of one report."""
        entry = self.find(path)
        if entry is not None and entry.manual_offset_ns != int(offset_ns):
            entry.manual_offset_ns = int(offset_ns)
            self.offsets_changed.emit()

    def manual_offsets_ns(self) -> list[int]:
        """Return the manual offsets of the reports to show (:meth:`reports`), in list order."""
        return [e.manual_offset_ns for e in self._entries if e.report is not None]

    def _on_progressed(self, entry: ReportEntry, fraction: float, text: str) -> None:
        entry.fraction, entry.text = fraction, text
        self.entry_progressed.emit(entry)

    def _on_partial(self, entry: ReportEntry, report: Report) -> None:
        if entry not in self._entries or entry.state == LOADED:
            return
        # The set drops what it derived from the older partial report, nothing else.
        entry.report = report
        self.report_set.set_reports(self.reports())
        self.report_partial.emit(entry)
        self.reports_changed.emit()

    def _on_loaded(self, entry: ReportEntry, report: Report) -> None:
        if entry not in self._entries:
            return
        entry.report, entry.state, entry.fraction, entry.text = report, LOADED, 1.0, "loaded"
        entry.job = None
        self.report_set.set_reports(self.reports())
        self.report_loaded.emit(entry)
        self.reports_changed.emit()

    def _on_failed(self, entry: ReportEntry, error: Exception) -> None:
        if entry not in self._entries:
            return
        self._drop(entry)
        self.report_failed.emit(entry.path, error)


def _load(path: Path, use_cache: bool, progress: JobProgress, cancel: threading.Event) -> Report:
    return open_report(
        path, progress=progress, cancel=cancel, use_cache=use_cache, on_partial=progress.publish
    )
