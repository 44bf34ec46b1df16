"""Wire the stats panel to the reports, the timeline and the job runner.

``install_stats_panel(window)`` docks a :class:`~viewer.stats_panel.StatsPanel` on the right
of the main window and returns the :class:`StatsController` that

* follows the shown reports and their offsets (``TimelineBinding.layout_changed``), the
  visible range and the Shift-drag selection of the timeline;
* computes the current tab's table on a worker through a per-kind
  :class:`~analysis.window_stats.WindowIndex` (built once per report set and offsets; with
  CuPy its columns stay on the GPU), coalescing requests: while one job runs, newer requests
  only mark the table dirty, and the latest scope runs next (a result computed for a scope
  that has changed meanwhile is dropped);
* finds outliers once per report set, lists them and marks them on the timeline;
* pushes highlights back: a clicked name's instances stand out (others dimmed), Next /
  Previous step through them in time order, a double-click zooms to the longest, the
  histogram's region selects instances by duration.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow

from analysis.errors import StrataError
from analysis.model import Report
from analysis.outliers import DEFAULT_THRESHOLD, Outliers
from analysis.reportset import ReportSet
from analysis.window_stats import (
    WindowIndex,
    robust_threshold,
)
from app.event_lookup import (
    highlight_rows,
    scroll_track_into_view,
    slice_index,
    slice_indices,
    track_key,
    with_shared_start,
)
from app.stats_jobs import StatsRequest, StatsResult, stats_frame, window_index
from viewer.events import EventRef
from viewer.stats_panel import OUTLIERS_TAB, Scope, StatsPanel, group_of

__all__ = ["MAX_MARKS", "StatsController", "install_stats_panel"]

log = logging.getLogger(__name__)

#: Outlier instances marked on the timeline (the worst ones; the tab lists them all).
MAX_MARKS = 500
_DOCK_WIDTH_PX = 560


@dataclass(frozen=True)
class _Active:
    """The name whose instances are highlighted: what it is called and which group it is.

    ``group`` is ``(key, style)`` (:meth:`WindowIndex.groups`): two CUDA API groups can be
    shown by one name (``cudaMalloc``, ``cudaMalloc_v3020``), two NVTX groups differ by
    their style only; the highlights and the histogram follow the group, as the table row.
    """

    name: str
    kind: str
    group: tuple = (None, None)

    def groups_in(self, index: WindowIndex) -> np.ndarray:
        key, style = self.group
        return index.groups(self.name if key is None else key, style)


@dataclass(frozen=True)
class _Histogram:
    """The histogram of the active name: its instances in one scope (a worker computes it
    with the same index, window and report as the table's counts)."""

    active: _Active
    in_scope: pd.DataFrame
    median: float
    threshold: float


@dataclass(frozen=True)
class _NameResult:
    """What a click on a name needs, gathered on a worker."""

    active: _Active
    key: tuple
    instances: pd.DataFrame  # whole run, shared-time order, with shared_start_ns
    histogram: _Histogram
    rows: dict


class StatsController(QObject):
    """Keep a :class:`StatsPanel` in step with a main window's reports and timeline.

    Signals
    -------
    table_ready(str)
        The current tab (this kind) shows a fresh result.
    outliers_ready(object)
        :class:`~analysis.outliers.Outliers` of the shown reports are listed and marked.
    instances_changed(object)
        The instances Next/Previous step through (a DataFrame as
        :meth:`WindowIndex.instances`, plus ``shared_start_ns``), after a click or a
        histogram selection.
    failed(str)
        A job failed (one line).
    """

    table_ready = Signal(str)
    outliers_ready = Signal(object)
    instances_changed = Signal(object)
    failed = Signal(str)

    def __init__(self, window: QMainWindow, panel: StatsPanel, dock: QDockWidget | None = None):
        super().__init__(window)
        self._window, self.panel, self.dock = window, panel, dock
        self._timeline = window.timeline
        self._runner = window.runner
        self._set = ReportSet()  # a snapshot of the window's set: what is shown
        self._reports: tuple[Report, ...] = ()
        self._labels: list[str] = []
        self._offsets: list[int] = []
        self._key: tuple = ()
        self._is_running = False
        self._is_dirty = False
        self._previous_range_mode = "all"
        self._outliers: Outliers | None = None
        self._marks: list[EventRef] = []
        self._rows: dict[tuple[int, str], np.ndarray] = {}
        self._active: _Active | None = None
        self._instances = pd.DataFrame()
        self._position = -1
        self._histogram_values: pd.DataFrame = pd.DataFrame()
        self._connect()

    def _connect(self) -> None:
        window, panel, timeline = self._window, self.panel, self._timeline
        window.binding.layout_changed.connect(self._on_layout_changed)
        timeline.view_range_changed.connect(self._on_view_range_changed)
        timeline.selection_changed.connect(self._on_selection_changed)
        panel.scope_changed.connect(self._on_scope_changed)
        panel.kind_changed.connect(self._on_kind_changed)
        panel.name_activated.connect(
            lambda name, kind, group: self.activate_name(name, kind, group=group)
        )
        panel.name_double_clicked.connect(self.zoom_to_longest)
        panel.instance_step.connect(self.step)
        panel.outlier_selected.connect(self.focus_outlier)
        panel.export_requested.connect(self._on_export_requested)
        panel.histogram.range_selected.connect(self.select_durations)

    # -- reports --------------------------------------------------------------------------

    def reports(self) -> tuple[Report, ...]:
        return self._reports

    def _on_layout_changed(self, *_args) -> None:
        reports = tuple(self._window.binding.shown_reports())
        offsets = [int(o) for o in self._window.binding.offsets_ns()]
        is_new = len(reports) != len(self._reports) or any(
            a is not b for a, b in zip(reports, self._reports, strict=False)
        )
        if not is_new and offsets == self._offsets:
            self._push_highlights()  # set_data dropped them
            return
        self._reports, self._offsets = reports, offsets
        self._set = self._window.binding.shown_set()
        self._labels = self._set.labels
        self._key = (tuple(id(r) for r in reports), tuple(offsets))
        if is_new:
            self.panel.set_reports(self._labels)
            self._outliers, self._marks, self._rows, self._active = None, [], {}, None
            self._instances = pd.DataFrame()
            self.panel.histogram.clear()
            self._find_outliers()
        self.request_stats()

    # -- stats jobs -----------------------------------------------------------------------

    def _window_ns(self, scope: Scope) -> tuple[int | None, int | None] | None:
        if scope.range_mode == "visible":
            return tuple(int(t) for t in self._timeline.view_range())
        if scope.range_mode == "selection":
            selection = self._timeline.time_selection()
            return None if selection is None else (int(selection[0]), int(selection[1]))
        return None, None

    def request_stats(self) -> None:
        """Recompute the current tab for the current scope (coalesced, on a worker)."""
        kind = self.panel.kind()
        if kind == OUTLIERS_TAB or not self._reports:
            return
        if self._is_running:
            self._is_dirty = True
            return
        scope = self.panel.scope()
        window = self._window_ns(scope)
        if window is None:
            self.panel.show_table(kind, pd.DataFrame(), "Shift-drag on the timeline to select")
            return
        request = StatsRequest(kind, scope, window[0], window[1], self._key)
        reports, offsets = self._set, self._offsets
        n_reports, active = len(reports), self._active

        def work(_progress, cancel):
            index = window_index(reports, kind, offsets)
            started = time.perf_counter()
            frame = stats_frame(index, request, n_reports)
            elapsed = (time.perf_counter() - started) * 1e3
            counts = [c for c in frame.columns if c == "count" or c.endswith("|count")]
            events = int(frame[counts].to_numpy().sum()) if counts else 0
            # The histogram follows the table's window in the same job: one count.
            histogram = None
            if active is not None:
                active_index = window_index(reports, active.kind, offsets)
                histogram = _histogram(active_index, active, request)
            return StatsResult(request, frame, events, elapsed, histogram)

        self._is_running, self._is_dirty = True, False
        if window_index(reports, kind, offsets, build=False) is None:  # the first sorts once
            self.panel.set_status("Indexing the events (once per set of reports)…")
        job = self._runner.submit(work, channel="stats")
        job.finished.connect(self._on_stats_ready)
        job.failed.connect(self._on_stats_failed)

    def _on_stats_ready(self, result: StatsResult) -> None:
        self._is_running = False
        request = result.request
        # Another tab, report set or scope: drop it. A window that moved on while the job
        # ran is still shown (the panel follows a drag live), then the latest one runs.
        is_stale = (
            request.key != self._key
            or request.kind != self.panel.kind()
            or request.scope != self.panel.scope()
        )
        if not is_stale:
            reports = "1 report" if len(self._reports) == 1 else f"{len(self._reports)} reports"
            status = f"{result.events:,} events · {reports} · {result.elapsed_ms:,.0f} ms"
            self.panel.show_table(request.kind, result.frame, status)
            histogram = result.histogram
            if histogram is not None and histogram.active == self._active:
                self._show_histogram(histogram)
        if self._is_dirty or is_stale:
            self._is_dirty = False
            self.request_stats()
        elif not is_stale:
            self.table_ready.emit(request.kind)

    def _on_stats_failed(self, error: Exception) -> None:
        self._is_running = False
        text = _error_text(error)
        self.panel.set_status(f"Failed: {text}")
        self.failed.emit(text)
        if self._is_dirty:
            self._is_dirty = False
            self.request_stats()

    def _on_scope_changed(self, _scope: Scope) -> None:
        self._refresh_histogram()
        self.request_stats()

    def _on_kind_changed(self, _kind: str) -> None:
        self.request_stats()

    def _on_view_range_changed(self, *_range) -> None:
        if self.panel.scope().range_mode == "visible":
            self.request_stats()

    def _on_selection_changed(self, selection) -> None:
        scope = self.panel.scope()
        if selection is not None and scope.range_mode != "selection":
            self._previous_range_mode = scope.range_mode
            self.panel.set_scope(Scope("selection", scope.report_index, scope.by_report))
        elif selection is None and scope.range_mode == "selection":
            self.panel.set_scope(Scope(self._previous_range_mode, scope.report_index,
                                       scope.by_report))  # fmt: skip
        elif scope.range_mode == "selection":
            self.request_stats()

    # -- outliers -------------------------------------------------------------------------

    def _find_outliers(self) -> None:
        reports = self._set
        if not len(reports):
            self.panel.show_outliers(pd.DataFrame())
            return
        self.panel.show_outliers(pd.DataFrame(), "Finding outliers…")
        job = self._runner.submit(
            lambda _p, _c: reports.outliers(DEFAULT_THRESHOLD), channel="outliers"
        )
        job.finished.connect(lambda found, key=self._key: self._on_outliers_ready(key, found))
        job.failed.connect(self._on_outliers_failed)

    def _on_outliers_failed(self, error: Exception) -> None:
        text = _error_text(error)
        self.panel.show_outliers(pd.DataFrame(), f"Outliers failed: {text}")
        self.failed.emit(text)

    def outliers(self) -> Outliers | None:
        return self._outliers

    def _on_outliers_ready(self, key: tuple, found: Outliers) -> None:
        if key[0] != self._key[0]:
            return
        self._outliers = found
        instances = found.instances.copy()
        if len(instances):
            instances["report"] = np.asarray(self._labels, dtype=object)[
                instances["report_index"].to_numpy(np.int64)
            ]
        status = f"{len(instances):,} outlier instances (|robust z| > {found.threshold:g})"
        status += _slow_reports_text(found.reports, self._labels)
        self.panel.show_outliers(instances, status)
        self._marks = self._outlier_marks(instances.head(MAX_MARKS))
        self._push_highlights()
        self.outliers_ready.emit(found)

    def _outlier_marks(self, top: pd.DataFrame) -> list[EventRef]:
        """EventRefs of outlier rows (slice indices found per report and table at once)."""
        marks = []
        for (r, table), group in top.groupby(["report_index", "table"], sort=False):
            starts = group["start_ns"].to_numpy(np.int64)
            ends = starts + group["duration_ns"].to_numpy(np.int64)
            rows = group["index"].to_numpy(np.int64)
            found = slice_indices(self._set, int(r), str(table), rows, starts, ends)
            source = "" if table == "nvtx_gpu" else str(table)
            marks += [
                EventRef(int(r), str(table), int(i), source, int(row), "", str(n), int(s), int(e))
                for i, row, n, s, e in zip(found, rows, group["name"], starts, ends, strict=True)
                if i >= 0
            ]  # a loop over at most MAX_MARKS outliers
        return marks

    def _outlier_ref(self, record: dict) -> EventRef | None:
        report_index, table = int(record["report_index"]), str(record["table"])
        start = int(record["start_ns"])
        end = start + int(record["duration_ns"])
        index = slice_index(self._set, report_index, table, int(record["index"]), start, end)
        if index is None:
            return None
        source = "" if table == "nvtx_gpu" else table
        return EventRef(report_index, table, index, source, int(record["index"]), "",
                        str(record["name"]), start, end)  # fmt: skip

    def focus_outlier(self, record: dict) -> None:
        """Centre and zoom the timeline on an outlier, with its report's row in view; its
        name becomes the active one (highlighted, in the histogram)."""
        ref = self._outlier_ref(record)
        if ref is None:
            return
        self._focus(ref, zoom=True)

        def point_at_it() -> None:
            inst = self._instances
            here = np.flatnonzero(
                (inst["report_index"].to_numpy() == ref.report_index)
                & (inst["start_ns"].to_numpy() == ref.start_ns)
            )
            if len(here):
                self._position = int(here[0])
                self.panel.set_instance_text(f"{self._position + 1:,} / {len(inst):,}")

        self.activate_name(str(record["name"]), str(record["kind"]), point_at_it, group_of(record))

    # -- names, instances, highlights -----------------------------------------------------

    def _index(self, kind: str) -> WindowIndex | None:
        return window_index(self._set, kind, self._offsets, build=False)

    def activate_name(
        self,
        name: str,
        kind: str,
        then: Callable[[], None] | None = None,
        group: tuple | None = None,
    ) -> None:
        """Highlight every instance of a name (others dimmed) and show its histogram.

        ``group`` is the table row's ``(key, style)`` (see :class:`_Active`); without it the
        group whose full name is ``name`` is meant. The instances are gathered on a worker
        (a name can have millions); ``then`` runs on the GUI thread once they are shown,
        before :attr:`instances_changed` is emitted.
        """
        if not self._reports:
            return
        key, reports, offsets = self._key, self._set, self._offsets
        active = _Active(name, kind, tuple(group) if group is not None else (None, None))
        scope = self.panel.scope()
        window = self._window_ns(scope) or (None, None)
        request = StatsRequest(kind, scope, window[0], window[1], key)

        def work(_progress, _cancel) -> _NameResult:
            index = window_index(reports, kind, offsets)
            groups = active.groups_in(index)
            every = with_shared_start(index.instances(groups, report_index=scope.report_index),
                                       offsets)  # fmt: skip
            rows = highlight_rows(reports, kind, every)
            return _NameResult(active, key, every, _histogram(index, active, request), rows)

        job = self._runner.submit(work, channel="instances")
        job.finished.connect(lambda result: self._on_name_ready(result, then))
        job.failed.connect(self._on_job_failed)

    def _on_name_ready(self, result: _NameResult, then: Callable[[], None] | None) -> None:
        if result.key != self._key:
            return
        self._active = result.active
        self._instances, self._position = result.instances, -1
        self.panel.set_instance_text(f"{len(result.instances):,} instances")
        self._rows = result.rows
        self._push_highlights()
        self._show_histogram(result.histogram)
        if then is not None:
            then()
        self.instances_changed.emit(self._instances)

    def _on_job_failed(self, error: Exception) -> None:
        text = _error_text(error)
        self.panel.set_status(f"Failed: {text}")
        self.failed.emit(text)

    def instances(self) -> pd.DataFrame:
        """Return the instances Next/Previous step through, in shared-axis time order."""
        return self._instances

    def clear_highlights(self) -> None:
        self._rows, self._active = {}, None
        self._push_highlights()

    def _push_highlights(self) -> None:
        if not self._reports:
            return
        tables = [self._set.slice_tables(i) for i in range(len(self._set))]
        rows = {k: v for k, v in self._rows.items() if k[1] in tables[k[0]]}
        try:
            self._timeline.set_highlights(rows, self._marks)
        except (IndexError, KeyError) as exc:  # the timeline shows another report set
            log.debug("highlights not applied: %s", exc)

    def step(self, direction: int) -> None:
        """Go to the next (+1) or previous (-1) instance in time order and show it."""
        if not len(self._instances):
            return
        count = len(self._instances)
        self._position = (
            (0 if direction > 0 else count - 1)
            if self._position < 0
            else (self._position + direction) % count
        )
        self.panel.set_instance_text(f"{self._position + 1:,} / {count:,}")
        self._focus(self._instance_ref(self._position), zoom=False)

    def position(self) -> int:
        return self._position

    def zoom_to_longest(self, name: str, kind: str, group: tuple | None = None) -> None:
        """Zoom the timeline to the longest instance of ``name`` (of ``group``, as
        :meth:`activate_name`)."""
        wanted = _Active(name, kind, tuple(group) if group is not None else (None, None))
        if self._active != wanted:
            self.activate_name(name, kind, lambda: self.zoom_to_longest(name, kind, group), group)
            return
        if not len(self._instances):
            return
        inst = self._instances
        duration = (inst["end_ns"] - inst["start_ns"]).to_numpy()
        self._position = int(np.argmax(duration))
        self.panel.set_instance_text(f"{self._position + 1:,} / {len(inst):,}")
        self._focus(self._instance_ref(self._position), zoom=True)

    def _instance_ref(self, position: int) -> EventRef | None:
        row = self._instances.iloc[position]
        report_index, table = int(row["report_index"]), str(row["table"])
        start, end = int(row["start_ns"]), int(row["end_ns"])
        name = self._active.name if self._active else ""
        index = slice_index(self._set, report_index, table, int(row["row"]), start, end)
        if index is None:
            return None
        source = "" if table == "nvtx_gpu" else table
        return EventRef(report_index, table, index, source, int(row["row"]), "", name, start,
                        end)  # fmt: skip

    def _focus(self, ref: EventRef | None, zoom: bool) -> None:
        if ref is None:
            return
        offset = self._offsets[ref.report_index] if ref.report_index < len(self._offsets) else 0
        start, end = ref.start_ns + offset, ref.end_ns + offset
        duration = max(end - start, 1)
        t0, t1 = self._timeline.view_range()
        if zoom or duration > (t1 - t0) * 0.8:
            pad = max(duration, 200)
            self._timeline.set_view_range(start - pad, end + pad)
        else:
            middle, half = (start + end) // 2, (t1 - t0) // 2
            self._timeline.set_view_range(middle - half, middle + half)
        self._timeline.select_event(ref)
        key = track_key(self._timeline, self._set, ref)
        if key is not None:
            scroll_track_into_view(self._timeline, key)

    # -- histogram ------------------------------------------------------------------------

    def _refresh_histogram(self) -> None:
        """Recompute the active name for a new scope (its instances follow the report)."""
        if self._active is not None:
            active = self._active
            self.activate_name(active.name, active.kind, group=active.group)

    def _show_histogram(self, histogram: _Histogram) -> None:
        inst = histogram.in_scope
        self._histogram_values = inst
        report_index = inst["report_index"].to_numpy()
        values = inst["value"].to_numpy()
        series = {self._labels[r]: values[report_index == r]
                  for r in np.unique(report_index).tolist() if r < len(self._labels)}  # fmt: skip
        unit = "B" if histogram.active.kind == "memcpy_bytes" else "ns"
        title = f"{histogram.active.name}  ({len(inst):,} instances)"
        self.panel.histogram.set_data(title, series, histogram.median, histogram.threshold, unit)

    def select_durations(self, lo: float, hi: float) -> None:
        """Make the instances whose value lies in ``[lo, hi]`` the highlighted ones."""
        inst = self._histogram_values
        if self._active is None or not len(inst):
            return
        values = inst["value"].to_numpy()
        chosen = with_shared_start(inst[(values >= lo) & (values <= hi)], self._offsets)
        self._instances, self._position = chosen, -1
        self.panel.set_instance_text(f"{len(chosen):,} instances")
        self._rows = highlight_rows(self._set, self._active.kind, chosen)
        self._push_highlights()
        self.instances_changed.emit(self._instances)

    # -- export ---------------------------------------------------------------------------

    def export_csv(self, path: str | Path) -> Path:
        """Write the rows the panel shows (filtered, sorted) to ``path`` as CSV."""
        path = Path(path)
        path.write_text(self.panel.visible_rows_text(","), encoding="utf-8")
        return path

    def _on_export_requested(self, suggested: str, _text: str) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.panel, "Export CSV", str(Path.home() / suggested), "CSV files (*.csv)"
        )
        if path:
            try:
                self.export_csv(path)
            except OSError as exc:
                self.panel.set_status(f"Could not write {path}: {exc.strerror or exc}")


def _histogram(index: WindowIndex, active: _Active, request: StatsRequest) -> _Histogram:
    """The active name's instances in the request's window and report (on a worker)."""
    scope = request.scope
    in_scope = index.instances(active.groups_in(index), request.t0_ns, request.t1_ns,
                               scope.report_index)  # fmt: skip
    median, threshold = robust_threshold(in_scope["value"].to_numpy(), DEFAULT_THRESHOLD)
    return _Histogram(active, in_scope, median, threshold)


def _error_text(error: Exception) -> str:
    """One line for a failed job: our own message, or the type and text of a bug."""
    return str(error) if isinstance(error, StrataError) else f"{type(error).__name__}: {error}"


def _slow_reports_text(reports: pd.DataFrame, labels: list[str]) -> str:
    """' · slow: rank2 (41 names, ×1.30)' — reports whose medians exceed the others'."""
    if reports is None or not len(reports) or len(labels) < 2:
        return ""
    slow = reports[reports["robust_z"] > 0]
    if not len(slow):
        return ""
    per = slow.groupby("report_index").agg(names=("name", "size"), ratio=("ratio", "median"))
    per = per.sort_values("names", ascending=False).head(2)
    parts = [f"{labels[int(i)]} ({int(r.names)} names, ×{r.ratio:.2f})" for i, r in per.iterrows()]
    return " · slower: " + ", ".join(parts)


def install_stats_panel(window: QMainWindow) -> StatsController:
    """Dock the stats panel on the right of ``window`` and wire it; return the controller.

    ``window`` must have ``timeline``, ``runner`` (:class:`app.jobs.JobRunner`) and
    ``binding`` (:class:`app.timeline_binding.TimelineBinding`), as :class:`MainWindow`.
    """
    panel = StatsPanel(window)
    if hasattr(window, "add_side_panel"):
        dock = window.add_side_panel(panel, "Statistics", "statsDock")
    else:
        dock = QDockWidget("Statistics", window)
        dock.setObjectName("statsDock")
        dock.setWidget(panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resizeDocks([dock], [_DOCK_WIDTH_PX], Qt.Orientation.Horizontal)
    controller = StatsController(window, panel, dock)
    controller._on_layout_changed()  # reports already shown
    return controller
