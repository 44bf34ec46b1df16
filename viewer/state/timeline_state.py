"""The timeline's state without Qt: the reports shown (their slice tables and time offsets),
rows, pins, hidden and collapsed rows, view range, selection, the picked event, highlighted
name and emphasised events, the diff (before / after reports, colours on or off), the
collectives overlay, the alignment anchors and the search, with listeners told of each change.

The widgets render a :class:`TimelineState` and change it through its methods, and so does
app/: the Qt side connects to the state's :class:`~viewer.state.notifier.Notifier` attributes
(napari's model / ``_qt`` split). Tests drive it with no ``QApplication``
(``tests/test_layering.py`` and an import contract keep this package free of Qt).
"""

# Over 600 lines: one model class, every field of it a documented setter and notifier (its
# helpers are emphasis.py, spans.py and values.py).

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet
from strata.analysis.tracks import SliceTable, Track
from strata.viewer.events import EventRef, find_partner
from strata.viewer.state.collective_overlay import CollectiveOverlay
from strata.viewer.state.emphasis import emphasis_masks, marked_events, padded_offsets, shown_tints
from strata.viewer.state.notifier import Notifier
from strata.viewer.state.rows import RowLayout, default_collapsed, layout_rows, match_tracks
from strata.viewer.state.spans import extents_span, inside_limit, nonempty_span
from strata.viewer.state.values import (
    AlignmentAnchor,
    DiffState,
    EventTints,
    NameHighlight,
    Scope,
    SearchState,
    TimelineSelection,
    diff_state,
)

__all__ = ["MIN_SPAN_NS", "TimelineState", "scope_window"]

#: The narrowest view range (ns): zooming further in keeps this span about the middle.
MIN_SPAN_NS = 50


class TimelineState:
    """What the timeline shows, apart from pixels: the one place that changes it.

    Every setter notifies only when the value actually changes, once per call (except
    :meth:`select_event`: picking the picked event again shows it again).

    Notifiers
    ---------
    data_changed()
        Other reports, or newer versions of them, are shown (:meth:`set_data`,
        :meth:`replace_reports`): what was cached of the older slice tables is stale; the
        picked event and the emphasis are gone.
    offsets_changed(list)
        The reports' shifts on the shared axis (ns).
    event_selected(EventRef | None)
        The picked event (its correlated partner is :meth:`partner_event`), or ``None``.
    emphasis_changed()
        The emphasised events, the marked ones or the tints (:meth:`set_highlights`).
    rows_changed()
        The tracks, pins, hidden rows or collapsed groups changed: the rows need a new layout.
    pins_changed(list)
        The pinned track keys, in order.
    view_range_changed(t0_ns, t1_ns)
        The visible time range (shared-axis ns).
    selection_changed(TimelineSelection | None)
        The selection, or ``None`` when cleared.
    highlight_changed(NameHighlight | None)
        The highlighted name, or ``None``.
    search_changed(SearchState)
        The search text, its matches' count or the current match changed.
    diff_changed(DiffState)
        The compared reports, or whether the timeline colours what changed.
    collectives_changed()
        The matched collectives drawn over the timeline, or whether they are shown.
    anchors_changed(dict)
        The alignment anchors, by report path.
    """

    def __init__(self) -> None:
        self.data_changed = Notifier()
        self.offsets_changed = Notifier()
        self.event_selected = Notifier()
        self.emphasis_changed = Notifier()
        self.rows_changed = Notifier()
        self.pins_changed = Notifier()
        self.view_range_changed = Notifier()
        self.selection_changed = Notifier()
        self.highlight_changed = Notifier()
        self.search_changed = Notifier()
        self.diff_changed = Notifier()
        self.collectives_changed = Notifier()
        self.anchors_changed = Notifier()
        self._collectives: CollectiveOverlay | None = None
        self._collectives_shown = False
        self._anchors: dict[str, AlignmentAnchor] = {}
        self._search = SearchState()
        self._diff = DiffState()
        self._tracks: list[Track] = []
        self._pinned: list[str] = []
        self._hidden: set[str] = set()
        self._collapsed: set[tuple[str, ...]] = set()
        #: Groups collapsed by default once already (the user may have opened them since).
        self._folded: set[tuple[str, ...]] = set()
        self._span = (0, 1)
        self._activity = (0, 1)
        self._fitted: tuple[int, int] | None = None  # the view the last activity fit showed
        self._t0, self._t1 = 0, 1
        self._selection: TimelineSelection | None = None
        self._highlight: NameHighlight | None = None
        self._set = ReportSet()
        self._tables: list[dict[str, SliceTable]] = []
        self._offsets: list[int] = []
        self._selected: EventRef | None = None
        self._partner: EventRef | None = None
        self._highlights: dict[tuple[int, str], np.ndarray] = {}
        self._marks: list[EventRef] = []
        self._tints = EventTints()
        #: Counts the changes of the slice tables shown: what a view caches of them is keyed
        #: by it (an ``id()`` of a freed list can come back for a new one).
        self.data_version = 0
        #: Counts the changes of the emphasis, marks and tints (the same, for them).
        self.emphasis_version = 0

    # -- the reports shown ---------------------------------------------------------------

    def set_data(
        self,
        reports: ReportSet | Sequence[Report],
        tracks: Sequence[Track],
        offsets_ns: Sequence[int],
    ) -> None:
        """Show ``tracks`` of ``reports`` shifted by ``offsets_ns``; fits the view.

        ``reports``: a :class:`ReportSet` (its slice tables are drawn), or reports to put in
        a new one. The picked event and the emphasis are dropped.
        """
        self._take_data(reports, offsets_ns)
        self.reset_tracks(tracks)
        self._update_span()
        self.fit()

    def replace_reports(
        self,
        reports: ReportSet | Sequence[Report],
        tracks: Sequence[Track],
        offsets_ns: Sequence[int],
    ) -> None:
        """Show newer versions of the same reports (more tables read by a progressive open).

        Keeps the view range, pins (also of rows still to come), hidden rows, collapsed
        groups and the time selection; the picked event and the emphasis are dropped, as
        their rows belong to the older tables. The full range grows with what arrived.
        """
        self._take_data(reports, offsets_ns)
        self.set_tracks(tracks)
        self._update_span()

    def _take_data(self, reports: ReportSet | Sequence[Report], offsets_ns: Sequence[int]) -> None:
        self._set = reports if isinstance(reports, ReportSet) else ReportSet(reports)
        self._tables = [self._set.slice_tables(i) for i in range(len(self._set))]
        self._offsets = padded_offsets(offsets_ns, len(self._set))
        self._selected = self._partner = None
        self._highlights, self._marks, self._tints = {}, [], EventTints()
        self.data_version += 1
        self.emphasis_version += 1
        self.data_changed.emit()

    def report_set(self) -> ReportSet:
        """Return the reports shown (a :class:`ReportSet`; what is drawn is derived by it)."""
        return self._set

    def tables(self) -> list[dict[str, SliceTable]]:
        """Return per report its slice tables by name, as drawn."""
        return list(self._tables)

    def offsets_ns(self) -> list[int]:
        """Return the ns shift of each report on the shared axis."""
        return list(self._offsets)

    def set_offsets(self, offsets_ns: Sequence[int]) -> None:
        """Shift each report by ``offsets_ns`` (ns); keeps the view range."""
        offsets = padded_offsets(offsets_ns, len(self._set))
        if offsets != self._offsets:
            self._offsets = offsets
            self._update_span()
            self.offsets_changed.emit(list(offsets))

    def _update_span(self) -> None:
        spans = extents_span(
            (table.extent_ns(), offset)
            for tables, offset in zip(self._tables, self._offsets, strict=False)
            for table in tables.values()
        )
        full, activity = spans if spans is not None else ((0, 1_000_000), None)
        self.set_full_range(*full, activity=activity)

    # -- rows --------------------------------------------------------------------------

    def tracks(self) -> list[Track]:
        """Return every track, in display order."""
        return list(self._tracks)

    def reset_tracks(self, tracks: Sequence[Track]) -> None:
        """Show the tracks of a new set of reports: pins of rows that are gone are dropped
        (silently: the caller restores the pins it keeps for that set)."""
        self._tracks = list(tracks)
        keys = {t.key for t in self._tracks}
        self._pinned = [k for k in self._pinned if k in keys]
        self._fold_new_groups()
        self.rows_changed.emit()

    def set_tracks(self, tracks: Sequence[Track]) -> None:
        """Replace the rows of the same reports, keeping view, pins, hidden rows and groups.

        For rows computed later, e.g. ``build_tracks(reports)`` with the NVTX projection
        after a first one without: they draw tables the report set derived meanwhile.
        """
        self._tables = [self._set.slice_tables(i) for i in range(len(self._set))]
        self.data_version += 1
        self._tracks = list(tracks)
        self._fold_new_groups()
        self.rows_changed.emit()

    def track(self, key: str) -> Track | None:
        """Return the track ``key`` (None: no row has it)."""
        return next((t for t in self._tracks if t.key == key), None)

    def _fold_new_groups(self) -> None:
        """Collapse the groups that start collapsed (GPU metrics) when they first appear."""
        new = default_collapsed(self._tracks) - self._folded
        self._folded |= new
        self._collapsed |= new

    def layout(self, heights: tuple[int, int, int]) -> tuple[RowLayout, RowLayout]:
        """Return (pinned rows, scrolling rows) with ``heights`` (report, group, track px)."""
        return layout_rows(self._tracks, self._collapsed, self._hidden, self._pinned, heights)

    def pinned_keys(self) -> list[str]:
        """Return the pinned track keys, in the order pinned."""
        return list(self._pinned)

    def is_pinned(self, key: str) -> bool:
        """Whether the track ``key`` is pinned."""
        return key in self._pinned

    def set_pinned_keys(self, keys: Sequence[str]) -> None:
        """Pin exactly ``keys`` (unknown keys are kept for when their report is loaded)."""
        keys = list(dict.fromkeys(keys))
        if keys == self._pinned:
            return
        self._pinned = keys
        self.rows_changed.emit()
        self.pins_changed.emit(list(self._pinned))

    def pin(self, key: str) -> None:
        """Pin the track ``key`` below those already pinned."""
        if key not in self._pinned:
            self.set_pinned_keys([*self._pinned, key])

    def unpin(self, key: str) -> None:
        """Unpin the track ``key``."""
        if key in self._pinned:
            self.set_pinned_keys([k for k in self._pinned if k != key])

    def pin_matching(self, pattern: str) -> int:
        """Pin every track that ``pattern`` names (see :func:`viewer.state.rows.match_tracks`).

        Returns the number of newly pinned tracks. Raises ``re.error`` for a bad pattern.
        """
        new = [t.key for t in match_tracks(self._tracks, pattern) if t.key not in self._pinned]
        if new:
            self.set_pinned_keys(self._pinned + new)
        return len(new)

    def hidden_keys(self) -> list[str]:
        """Return the keys of hidden tracks, sorted."""
        return sorted(self._hidden)

    def set_hidden_keys(self, keys: Iterable[str]) -> None:
        """Hide exactly the tracks ``keys``."""
        hidden = set(keys)
        if hidden != self._hidden:
            self._hidden = hidden
            self.rows_changed.emit()

    def hide(self, key: str) -> None:
        """Hide the track ``key`` too."""
        self.set_hidden_keys(self._hidden | {key})

    def collapsed_groups(self) -> list[tuple[str, ...]]:
        """Return the group paths that are collapsed, sorted."""
        return sorted(self._collapsed)

    def set_collapsed(self, path: Sequence[str], collapsed: bool) -> None:
        """Collapse or expand the group at ``path``."""
        path = tuple(path)
        if collapsed:
            self.set_collapsed_groups(self._collapsed | {path})
        else:
            self.set_collapsed_groups(self._collapsed - {path})

    def set_collapsed_groups(self, paths: Iterable[Sequence[str]]) -> None:
        """Collapse exactly the groups ``paths`` (every other group is expanded)."""
        collapsed = {tuple(p) for p in paths}
        if collapsed != self._collapsed:
            self._collapsed = collapsed
            self.rows_changed.emit()

    # -- view range --------------------------------------------------------------------

    def full_range(self) -> tuple[int, int]:
        """Return the span of every event on the shared axis (set by the owner of the data)."""
        return self._span

    def activity_range(self) -> tuple[int, int]:
        """Return where the activity is (see :func:`activity_span`): what :meth:`fit` shows."""
        return self._activity

    def set_full_range(
        self, lo_ns: int, hi_ns: int, activity: tuple[int, int] | None = None
    ) -> None:
        """Set the span of every event and, inside it, the ``activity`` span :meth:`fit`
        shows (the whole span when omitted); an empty or reversed span becomes 1 µs long."""
        self._span = nonempty_span(lo_ns, hi_ns)
        if activity is None:
            self._activity = self._span
        else:  # inside the full span, so that a second fit only ever widens
            lo = min(max(int(activity[0]), self._span[0]), self._span[1])
            self._activity = nonempty_span(lo, min(int(activity[1]), self._span[1]))

    def view_range(self) -> tuple[int, int]:
        """Return the visible time range ``(t0_ns, t1_ns)`` on the shared axis."""
        return self._t0, self._t1

    def set_view_range(self, t0_ns: int, t1_ns: int) -> None:
        """Show ``[t0_ns, t1_ns)``; a span under :data:`MIN_SPAN_NS` widens about its middle."""
        t0, t1 = int(min(t0_ns, t1_ns)), int(max(t0_ns, t1_ns))
        if t1 - t0 < MIN_SPAN_NS:
            mid = (t0 + t1) // 2
            t0, t1 = mid - MIN_SPAN_NS // 2, mid + MIN_SPAN_NS // 2
        if (t0, t1) == (self._t0, self._t1):
            return
        self._t0, self._t1 = t0, t1
        self.view_range_changed.emit(t0, t1)

    def fit(self, everything: bool = False) -> None:
        """Show where the activity is (:meth:`activity_range`), or every event with
        ``everything``, with a small margin."""
        lo, hi = self._span if everything else self._activity
        margin = max((hi - lo) // 50, 1)
        self.set_view_range(lo - margin, hi + margin)
        self._fitted = None if everything else self.view_range()

    def toggle_fit(self) -> None:
        """Fit the activity; when the view shows just that already, fit every event (the F
        key: a first press shows the activity, a second one everything, a third the
        activity again)."""
        is_fitted = self._fitted is not None and self.view_range() == self._fitted
        self.fit(everything=is_fitted and self._activity != self._span)

    def zoom_out_limit(self) -> tuple[int, int]:
        """Return the widest view zooming out reaches: every event with the margin of
        ``fit(everything=True)``."""
        lo, hi = self._span
        margin = max((hi - lo) // 50, 1)
        return lo - margin, hi + margin

    def zoom(self, factor: float, fraction: float = 0.5) -> None:
        """Zoom by ``factor`` (> 1 zooms in) about the point ``fraction`` (0 to 1) across
        the view, which stays where it is.

        Zooming out stops at :meth:`zoom_out_limit`: a view wider than it becomes it, and one
        that would reach past it is moved inside it (the anchor then moves too).
        """
        fraction = min(max(fraction, 0.0), 1.0)
        span = self._t1 - self._t0
        anchor = self._t0 + span * fraction
        new_span = max(span / factor, MIN_SPAN_NS)
        t0 = int(round(anchor - new_span * fraction))
        t1 = t0 + int(round(new_span))
        if factor < 1:
            t0, t1 = inside_limit(t0, t1, self.zoom_out_limit())
        self.set_view_range(t0, t1)

    def pan(self, fraction: float) -> None:
        """Move the view by ``fraction`` of its span (positive = later)."""
        shift = int(round((self._t1 - self._t0) * fraction))
        self.set_view_range(self._t0 + shift, self._t1 + shift)

    # -- selection and highlight -------------------------------------------------------

    def selection(self) -> TimelineSelection | None:
        """Return the selection, or None."""
        return self._selection

    def time_selection(self) -> tuple[int, int] | None:
        """Return the selected time range ``(t0_ns, t1_ns)``, or None."""
        return None if self._selection is None else self._selection.time_range

    def select(self, t0_ns: int | None, t1_ns: int | None = None, rows: Sequence[str] = ()) -> None:
        """Select ``[t0_ns, t1_ns)`` (either order) over ``rows``, or clear with ``None``."""
        selection = None
        if t0_ns is not None and t1_ns is not None:
            t0, t1 = int(min(t0_ns, t1_ns)), int(max(t0_ns, t1_ns))
            selection = TimelineSelection(t0, t1, tuple(rows))
        if selection == self._selection:
            return
        self._selection = selection
        self.selection_changed.emit(selection)

    def highlight(self) -> NameHighlight | None:
        """Return the highlighted name, or None."""
        return self._highlight

    def set_highlight(self, highlight: NameHighlight | None) -> None:
        """Highlight ``highlight``'s instances (None: no name)."""
        if highlight != self._highlight:
            self._highlight = highlight
            self.highlight_changed.emit(highlight)

    # -- the picked event and the emphasised ones ----------------------------------------

    def selected_event(self) -> EventRef | None:
        """Return the event picked last, or None."""
        return self._selected

    def partner_event(self) -> EventRef | None:
        """Return the correlated partner of the picked event, or None."""
        return self._partner

    def select_event(self, event: EventRef | None) -> None:
        """Pick ``event`` (None: none) and find its correlated partner (API call ↔ GPU work)."""
        self._selected, self._partner = event, None
        if event is not None:
            i = event.report_index
            self._partner = find_partner(self._set[i], self._tables[i], event)
        self.event_selected.emit(event)

    def set_highlights(
        self,
        rows: Mapping[tuple[int, str], Sequence[int] | np.ndarray] | None = None,
        marks: Sequence[EventRef | tuple[int, str, int]] = (),
        tints: EventTints | None = None,
    ) -> None:
        """Emphasise some events and dim the rest of their tables; mark outliers; tint.

        Parameters
        ----------
        rows
            ``(report_index, table) -> row indices`` into ``report.tables[table]`` (``kernels``,
            ``cuda_api``, ``nvtx``...). Other events of those tables are dimmed; tables not
            named are drawn as usual. ``None`` or empty clears.
        marks
            Events to flag with a marker (outliers): ``EventRef`` or
            ``(report_index, table, row)``.
        tints
            Colours of some events (a diff's slower / faster names), under the emphasis;
            ``None`` or empty: none. Tables not shown are left out.
        """
        self._highlights = emphasis_masks(self._tables, rows or {})
        self._marks = marked_events(self._tables, marks)
        self._tints = shown_tints(self._tables, tints)
        self.emphasis_version += 1
        self.emphasis_changed.emit()

    def highlights(self) -> dict[tuple[int, str], np.ndarray]:
        """Return per ``(report_index, table)`` which events are emphasised (bool per event)."""
        return dict(self._highlights)

    def marks(self) -> list[EventRef]:
        """Return the events flagged with a marker (outliers)."""
        return list(self._marks)

    def tints(self) -> EventTints:
        """Return the tints applied (see :meth:`set_highlights`)."""
        return self._tints

    # -- diff --------------------------------------------------------------------------

    def diff(self) -> DiffState:
        """Return what is compared (:class:`DiffState`)."""
        return self._diff

    def set_diff(self, diff: DiffState) -> None:
        """Compare as ``diff`` says (colours need both sides: they go off without)."""
        diff = diff_state(diff.before, diff.after, diff.is_colored)
        if diff != self._diff:
            self._diff = diff
            self.diff_changed.emit(diff)

    def set_baseline(self, paths: Iterable[str]) -> None:
        """Make the reports at ``paths`` the *before* side."""
        self.set_diff(self._diff.with_before(paths))

    def compare_with_baseline(self, paths: Iterable[str]) -> None:
        """Make the reports at ``paths`` the *after* side."""
        self.set_diff(self._diff.with_after(paths))

    def set_diff_colored(self, is_colored: bool) -> None:
        """Colour the names that got slower / faster on the timeline, or stop (needs both
        sides)."""
        self.set_diff(replace(self._diff, is_colored=bool(is_colored)))

    def clear_diff(self) -> None:
        """Compare nothing: no baseline, no colours."""
        self.set_diff(DiffState())

    # -- collectives and alignment anchors ---------------------------------------------

    def collectives(self) -> CollectiveOverlay | None:
        """Return the matched collectives of the reports shown (None: not matched yet)."""
        return self._collectives

    def set_collectives(self, overlay: CollectiveOverlay | None) -> None:
        """Hold ``overlay``, the matched collectives of the reports shown (None: none)."""
        if overlay is not self._collectives:
            self._collectives = overlay
            self.collectives_changed.emit()

    def collectives_shown(self) -> bool:
        """Whether the collectives are drawn over the timeline."""
        return self._collectives_shown

    def set_collectives_shown(self, shown: bool) -> None:
        """Draw the collectives over the timeline, or stop."""
        if bool(shown) != self._collectives_shown:
            self._collectives_shown = bool(shown)
            self.collectives_changed.emit()

    def shown_collectives(self) -> CollectiveOverlay | None:
        """Return the collectives to draw: None while hidden or not matched."""
        return self._collectives if self._collectives_shown else None

    def anchors(self) -> dict[str, AlignmentAnchor]:
        """Return the alignment anchors by report path."""
        return dict(self._anchors)

    def set_anchor(self, anchor: AlignmentAnchor) -> None:
        """Make ``anchor`` its report's alignment anchor (replacing one set before)."""
        self.set_anchors([*(a for p, a in self._anchors.items() if p != anchor.report), anchor])

    def set_anchors(self, anchors: Iterable[AlignmentAnchor]) -> None:
        """Make exactly ``anchors`` the alignment anchors (one per report; the last wins)."""
        new = {a.report: a for a in anchors}
        if new != self._anchors:
            self._anchors = new
            self.anchors_changed.emit(dict(new))

    def clear_anchors(self) -> None:
        """Forget every alignment anchor."""
        self.set_anchors([])

    def anchors_of(self, paths: Sequence[str]) -> list[AlignmentAnchor | None]:
        """Return the anchor of each report at ``paths`` (None: it has none)."""
        return [self._anchors.get(str(p)) for p in paths]

    # -- search ------------------------------------------------------------------------

    def search(self) -> SearchState:
        """Return the search state."""
        return self._search

    def set_search(self, text: str, is_regex: bool = False) -> None:
        """Search for ``text`` (a regular expression when ``is_regex``): the count is
        unknown (``None``) until :meth:`set_search_result`; '' clears the search."""
        if (text, is_regex) == (self._search.text, self._search.is_regex):
            return
        self._set_search(SearchState(text, is_regex, None if text else 0))

    def set_search_result(self, count: int, error: str = "") -> None:
        """Record the matches' ``count`` of the current text (or why it has none)."""
        self._set_search(replace(self._search, count=int(count), current=-1, error=error))

    def step_search(self, direction: int) -> int:
        """Make the next (+1) or previous (-1) match current, wrapping at either end;
        the first step forward goes to the first match, back to the last.

        Returns the new position, or -1 when there is no match.
        """
        count = self._search.count or 0
        if not count:
            return -1
        current = self._search.current
        if current < 0:
            position = 0 if direction > 0 else count - 1
        else:
            position = (current + direction) % count
        self._set_search(replace(self._search, current=position))
        return position

    def _set_search(self, search: SearchState) -> None:
        if search != self._search:
            self._search = search
            self.search_changed.emit(search)


def scope_window(scope: Scope, state: TimelineState) -> tuple[int | None, int | None] | None:
    """The time window ``scope`` means now: ``(None, None)`` for the whole run, the view
    range, or the selection (``None`` when nothing is selected)."""
    if scope.range_mode == "visible":
        return state.view_range()
    if scope.range_mode == "selection":
        return state.time_selection()
    return None, None
