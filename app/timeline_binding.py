"""Wire the report list to the timeline: tracks and offsets computed off the GUI thread; pins,
hidden rows and collapsed groups restored per set of reports.

The alignment is chosen per set of reports (app.settings): a set seen before gets its own
back, a set that shares a report with the one aligned keeps the alignment (a rank added to
a job), any other set starts from the session start. An alignment that cannot be done is
one message, gone once its cause is (another mode, other reports), never one per layout.

A progressive open shows a report as soon as its first tables are read and lays its rows out
again as the rest arrives: the timeline then gets newer versions of the same reports
(:meth:`TimelineWidget.replace_reports`), which keep the view range, pins and selection the
user has made meanwhile.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from strata.analysis import Report
from strata.analysis.alignment import TimeAlignment
from strata.analysis.errors import StrataError
from strata.analysis.names import nvtx_range_texts
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import Track
from strata.app.jobs import JobRunner
from strata.app.loading import ReportList
from strata.app.settings import Settings
from strata.viewer.state.rows import match_tracks
from strata.viewer.timeline import TimelineWidget

__all__ = ["TimelineBinding", "TimelineWidget"]

log = logging.getLogger(__name__)

MAX_NVTX_NAMES = 2000


@dataclass(frozen=True)
class _Layout:
    report_set: ReportSet  # a snapshot: the reports below, and what is derived from them
    reports: tuple[Report, ...]
    tracks: list[Track]
    offsets_ns: list[int]
    alignment: TimeAlignment
    alignment_error: StrataError | None
    nvtx_names: list[str]


class TimelineBinding(QObject):
    """Keep a :class:`TimelineWidget` showing the loaded reports of a :class:`ReportList`.

    Signals
    -------
    layout_changed(int, int)
        The timeline now shows this many reports and rows.
    nvtx_names_changed(list)
        NVTX range names of the loaded reports (those in every report first).
    problem_found(str)
        A one-line message for the user (tracks or offsets failed).
    alignment_problem_changed(str)
        Why the chosen alignment cannot be done (one line), or '' when it can again.
    alignment_restored(str, str)
        The alignment (mode, NVTX range name) of the set of reports now shown, chosen for
        it before or the session start for a new set: for the controls to show.
    """

    layout_changed = Signal(int, int)
    nvtx_names_changed = Signal(list)
    problem_found = Signal(str)
    alignment_problem_changed = Signal(str)
    alignment_restored = Signal(str, str)

    def __init__(
        self,
        report_list: ReportList,
        timeline: TimelineWidget,
        runner: JobRunner,
        settings: Settings,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self._list = report_list
        self._timeline = timeline
        self._runner = runner
        self._settings = settings
        self._alignment_mode, self._nvtx_name = "session", ""
        self._aligned_paths: frozenset[Path] = frozenset()  # the set the alignment is of
        self._alignment_problem = ""
        self._shown: tuple[Report, ...] = ()
        self._shown_set = ReportSet()
        # Pins are remembered per *complete* set: a set shown while other reports had nothing
        # to show yet is a passing state, not one the user reopens. A set of partial reports
        # (a progressive open) is complete: its rows' keys are those of the loaded reports.
        self._is_shown_complete = False
        self._shown_alignment = TimeAlignment()
        self._tracks: list[Track] = []
        self._offsets_ns: list[int] = []
        self._fitted_range: tuple[int, int] | None = None
        self._is_layout_running = False
        self._is_layout_dirty = False
        self._is_applying = False
        report_list.reports_changed.connect(self._on_reports_changed)
        report_list.offsets_changed.connect(self._on_offsets_changed)
        report_list.entry_removed.connect(self._on_entry_removed)
        timeline.state.pins_changed.connect(self._on_pins_changed)
        timeline.state.anchors_changed.connect(self._on_anchors_changed)
        fraction = settings.pinned_fraction()
        if fraction is not None:
            timeline.set_pinned_fraction(fraction)
        timeline.pinned_fraction_changed.connect(settings.set_pinned_fraction)
        label_width = settings.label_width_px()
        if label_width is not None:
            timeline.set_label_width(label_width)
        timeline.label_width_changed.connect(settings.set_label_width_px)

    # -- state --------------------------------------------------------------------------

    def tracks(self) -> list[Track]:
        """Return the rows the timeline shows."""
        return list(self._tracks)

    def shown_reports(self) -> tuple[Report, ...]:
        return self._shown

    def shown_set(self) -> ReportSet:
        """Return the shown reports as a :class:`ReportSet` snapshot of the list's set (what
        is derived from them is computed once, for the timeline, panel and outliers)."""
        return self._shown_set

    def offsets_ns(self) -> list[int]:
        return list(self._offsets_ns)

    def count_matches(self, pattern: str) -> int:
        """Return how many rows the regular expression ``pattern`` names (pin preview).

        Raises
        ------
        re.error
            ``pattern`` is not a valid regular expression.
        """
        return len(match_tracks(self._tracks, pattern))

    def alignment(self) -> TimeAlignment:
        anchors: tuple[int | None, ...] = ()
        if self._alignment_mode == "anchor":
            found = self._timeline.state.anchors_of(self._list_paths())
            anchors = tuple(None if a is None else a.end_ns for a in found)
        return TimeAlignment(
            self._alignment_mode,
            self._nvtx_name or None,
            tuple(self._list.manual_offsets_ns()),
            anchors,
        )

    def _list_paths(self) -> list[str]:
        """The paths of the reports to show (those :meth:`ReportList.reports` returns)."""
        return [str(e.path) for e in self._list.entries() if e.report is not None]

    def shown_path(self, report_index: int) -> str | None:
        """Return the path the user opened the shown report ``report_index`` from."""
        reports = self._shown
        if not 0 <= report_index < len(reports):
            return None
        for entry in self._list.entries():
            if entry.report is reports[report_index]:
                return str(entry.path)
        return None

    def anchor_rows(self) -> dict[int, tuple[str, int]]:
        """Per shown report index, its anchor event ``(table, row)`` when the timeline is
        aligned on the anchors (empty otherwise)."""
        if self._shown_alignment.mode != "anchor" or self._alignment_problem:
            return {}
        paths = [self.shown_path(i) for i in range(len(self._shown))]
        anchors = self._timeline.state.anchors_of([p or "" for p in paths])
        return {i: (a.table, a.row) for i, a in enumerate(anchors) if a is not None}

    def _on_anchors_changed(self, _anchors: dict) -> None:
        """Align on the anchors once every report has one (and again when one moves)."""
        anchors = self._timeline.state.anchors_of(self._list_paths())
        complete = bool(anchors) and all(a is not None for a in anchors)
        if complete and self._alignment_mode != "anchor":
            self._alignment_mode, self._nvtx_name = "anchor", ""
            self.alignment_restored.emit("anchor", "")  # the controls show it
        if self._alignment_mode == "anchor":
            self._on_offsets_changed()

    def alignment_problem(self) -> str:
        """Return why the alignment cannot be done ('' when it can)."""
        return self._alignment_problem

    def set_alignment(self, mode: str, nvtx_name: str = "") -> None:
        """Align on 'session' start, 'wallclock' (UTC start) or the first 'nvtx' range; it is
        remembered for the reports open now (only)."""
        if (mode, nvtx_name) == (self._alignment_mode, self._nvtx_name):
            return
        self._alignment_mode, self._nvtx_name = mode, nvtx_name
        if nvtx_name:
            self._settings.set_alignment_nvtx_name(nvtx_name)
        paths = [e.path for e in self._list.entries()]
        if paths and mode != "anchor":  # anchors are events of this session: not kept
            self._settings.set_alignment(paths, mode, nvtx_name)
            self._aligned_paths = frozenset(paths)
        self._on_offsets_changed()

    def save_view_state(self) -> None:
        """Remember the pins, hidden rows and collapsed groups of the reports shown."""
        if self._shown and self._is_shown_complete:
            paths, state = [r.path for r in self._shown], self._timeline.state
            self._settings.set_pinned_keys(paths, state.pinned_keys())
            self._settings.set_hidden_keys(paths, state.hidden_keys())
            self._settings.set_collapsed_groups(paths, state.collapsed_groups())

    # -- reports -> tracks ------------------------------------------------------------------

    def _on_reports_changed(self) -> None:
        # Coalesce: forty reports finishing one after the other start one layout at a time,
        # and the latest list runs next, instead of forty layouts of growing lists.
        if self._is_layout_running:
            self._is_layout_dirty = True
            return
        self.save_view_state()
        snapshot = self._list.report_set.snapshot()
        alignment = self.alignment()
        is_complete = self._list.has_every_report()
        self._is_layout_running, self._is_layout_dirty = True, False
        job = self._runner.submit(lambda _p, _c: _layout(snapshot, alignment), channel="tracks")
        job.finished.connect(lambda layout: self._on_layout_ready(layout, is_complete))
        job.failed.connect(self._on_layout_failed)

    def _on_layout_failed(self, error: Exception) -> None:
        self._on_job_failed(error)
        self._finish_layout()

    def _finish_layout(self) -> bool:
        """Mark the layout job done; start the next one if the list changed meanwhile."""
        self._is_layout_running = False
        if self._is_layout_dirty:
            self._on_reports_changed()
            return True
        return False

    def _on_layout_ready(self, layout: _Layout, is_complete: bool) -> None:
        try:
            self._apply_layout(layout, is_complete)
        finally:  # even if showing it failed, the next layout must be able to run
            is_newer_running = self._finish_layout()
        if is_newer_running:
            return  # it aligns and projects itself
        if layout.alignment != self.alignment():
            self._on_offsets_changed()
        if any(r.complete for r in layout.reports):  # a partial report is projected later
            self._start_projection(layout.report_set)

    def _apply_layout(self, layout: _Layout, is_complete: bool) -> None:
        previous_range = tuple(self._timeline.state.view_range()) if self._shown else None
        # More tables of the reports shown (a progressive open): the user's view stays.
        is_newer = bool(self._shown) and _paths(layout.reports) == _paths(self._shown)
        was_complete = self._is_shown_complete
        self._is_applying = True
        try:
            if is_newer:
                self._timeline.state.replace_reports(
                    layout.report_set, layout.tracks, layout.offsets_ns
                )
            else:
                self._timeline.state.set_data(layout.report_set, layout.tracks, layout.offsets_ns)
            self._shown, self._tracks = layout.reports, layout.tracks
            self._shown_set = layout.report_set
            self._is_shown_complete = is_complete
            self._offsets_ns, self._shown_alignment = layout.offsets_ns, layout.alignment
            if layout.reports:
                if not (is_newer and was_complete):  # restored when the set was first shown
                    self._restore_view_state(_paths(layout.reports), is_complete)
                self._fit_unless_user_moved(previous_range)
        finally:
            self._is_applying = False
        if not layout.reports:
            self._set_alignment_problem(None)
        elif all(r.complete for r in layout.reports) and layout.alignment == self.alignment():
            self._set_alignment_problem(layout.alignment_error)
        # else: quiet while a report is partial; a newer alignment re-checks on its own
        self.nvtx_names_changed.emit(layout.nvtx_names)
        self.layout_changed.emit(len(layout.reports), len(layout.tracks))

    def _start_projection(self, snapshot: ReportSet) -> None:
        reports = snapshot.reports
        job = self._runner.submit(lambda _p, _c: snapshot.tracks(), channel="projection")
        job.finished.connect(lambda tracks: self._on_projection_ready(reports, tracks))
        job.failed.connect(self._on_job_failed)

    def _on_projection_ready(self, reports: tuple[Report, ...], tracks: list[Track]) -> None:
        if not _same_reports(reports, self._shown):
            return  # the reports changed meanwhile; a newer projection is on its way
        self._is_applying = True
        try:
            self._timeline.state.set_tracks(tracks)  # keeps the view, pins and collapsed groups
            self._tracks = list(tracks)
        finally:
            self._is_applying = False
        self.layout_changed.emit(len(self._shown), len(self._tracks))

    def _restore_view_state(self, paths: list[Path], is_complete: bool) -> None:
        # A set seen before gets its pins back; otherwise the pins made so far stay.
        state = self._timeline.state
        if is_complete and self._settings.has_pins(paths):
            state.set_pinned_keys(self._settings.pinned_keys(paths))
        if is_complete and self._settings.has_hidden(paths):
            state.set_hidden_keys(self._settings.hidden_keys(paths))
        if is_complete and self._settings.has_collapsed(paths):
            state.set_collapsed_groups(self._settings.collapsed_groups(paths))
        if is_complete:
            self.save_view_state()
            self._restore_alignment(paths)

    def _restore_alignment(self, paths: list[Path]) -> None:
        """Give a complete set its own alignment (see the module docstring)."""
        saved = self._settings.alignment(paths)
        if saved is None and self._aligned_paths & set(paths):
            saved = (self._alignment_mode, self._nvtx_name)  # the same job, one report more
        mode, name = saved or ("session", "")
        self._aligned_paths = frozenset(paths)
        if (mode, name) != (self._alignment_mode, self._nvtx_name):
            self._alignment_mode, self._nvtx_name = mode, name
            self.alignment_restored.emit(mode, name)  # the new offsets follow the layout

    def _on_entry_removed(self, _entry: object) -> None:
        # The last pending load failed: what is shown is now the complete set.
        if self._is_layout_running:
            self._is_layout_dirty = True  # the next layout sees the list as it is now
            return
        if self._list.has_every_report() and _same_reports(
            self._shown, tuple(self._list.reports())
        ):
            self._is_shown_complete = bool(self._shown)
            self.save_view_state()

    def _fit_unless_user_moved(self, previous_range: tuple[int, int] | None) -> None:
        # A report that finishes loading late must not undo the user's zoom; until the user
        # moves, each new layout shows everything.
        if previous_range is None or previous_range == self._fitted_range:
            self._timeline.state.fit()
            self._fitted_range = tuple(self._timeline.state.view_range())
        else:
            self._timeline.state.set_view_range(*previous_range)

    # -- alignment ------------------------------------------------------------------------

    def _on_offsets_changed(self) -> None:
        reports, alignment, snapshot = self._shown, self.alignment(), self._shown_set
        if not reports or len(alignment.manual_ns) != len(reports):
            return  # the pending layout job aligns with the current settings
        job = self._runner.submit(
            lambda _p, _c: _aligned_offsets(snapshot, alignment), channel="offsets"
        )
        job.finished.connect(lambda aligned: self._on_offsets_ready(reports, alignment, aligned))
        job.failed.connect(self._on_job_failed)

    def _on_offsets_ready(
        self,
        reports: tuple[Report, ...],
        alignment: TimeAlignment,
        aligned: tuple[list[int], StrataError | None],
    ) -> None:
        if not _same_reports(reports, self._shown):
            return  # a newer layout is on its way
        offsets_ns, error = aligned
        self._offsets_ns, self._shown_alignment = list(offsets_ns), alignment
        self._timeline.state.set_offsets(self._offsets_ns)
        if all(r.complete for r in reports) and alignment == self.alignment():
            self._set_alignment_problem(error)
        self.layout_changed.emit(len(self._shown), len(self._tracks))

    def _set_alignment_problem(self, error: StrataError | None) -> None:
        text = "" if error is None else f"Alignment: {error}"
        if text != self._alignment_problem:
            self._alignment_problem = text
            self.alignment_problem_changed.emit(text)

    def _on_job_failed(self, error: Exception) -> None:
        if isinstance(error, StrataError):
            self.problem_found.emit(str(error))
        else:  # a bug: the job runner logged its traceback; the reports stay open
            self.problem_found.emit(f"internal error ({type(error).__name__}: {error})")

    # -- pins -----------------------------------------------------------------------------

    def _on_pins_changed(self, keys: list) -> None:
        if self._is_applying or not self._shown or not self._is_shown_complete:
            return
        self._settings.set_pinned_keys([r.path for r in self._shown], keys)


def _same_reports(a: tuple[Report, ...], b: tuple[Report, ...]) -> bool:
    # Identity, not ==: a Report compares DataFrames field by field.
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _paths(reports: tuple[Report, ...]) -> list[Path]:
    return [r.path for r in reports]


def _aligned_offsets(
    reports: ReportSet, alignment: TimeAlignment
) -> tuple[list[int], StrataError | None]:
    """Return the offsets of ``alignment``, or, when it cannot be done, those of the session
    start (the manual shifts kept) and why not."""
    try:
        return reports.offsets_ns(alignment), None
    except StrataError as exc:
        fallback = TimeAlignment("session", None, alignment.manual_ns)
        return reports.offsets_ns(fallback), exc


def _layout(snapshot: ReportSet, alignment: TimeAlignment) -> _Layout:
    """Build rows and offsets for the reports of ``snapshot`` (runs on a worker)."""
    # The NVTX-on-GPU projection takes seconds on big reports: those rows come in a second job.
    reports = snapshot.reports
    tracks = snapshot.tracks(include_projection=False) if reports else []
    # A partial report may lack the NVTX range to align on only for now: the binding says
    # nothing until every report is complete.
    offsets, error = _aligned_offsets(snapshot, alignment) if reports else ([], None)
    # What the timeline needs before its first frame, computed here rather than on the GUI
    # thread (10 M kernels: ~1 s there, the window frozen): each table's time extent (the
    # full range) and its packed busy-time prefix sums (the level-of-detail strips, ~4 bytes a
    # row: ``busy_before`` computes them once).
    for index in range(len(reports)):
        for table in snapshot.slice_tables(index).values():
            table.extent_ns()
            table.busy_before(0)
    return _Layout(snapshot, reports, tracks, offsets, alignment, error, _nvtx_names(reports))


def _nvtx_names(reports: tuple[Report, ...]) -> list[str]:
    """Return NVTX range names: those found in every report first, then the rest, by name."""
    counts: Counter[str] = Counter()
    for report in reports:
        counts.update(nvtx_range_texts(report))
    ordered = sorted(counts, key=lambda n: (-counts[n], n.lower()))
    return ordered[:MAX_NVTX_NAMES]
