"""The timeline's state without Qt: rows, pins, hidden and collapsed rows, view range,
selection, highlighted name, the diff (before / after reports, colours on or off), the
collectives overlay and the alignment anchors, with listeners told of each change.

The widgets render a :class:`TimelineState` and change it through its methods; the Qt side
connects its signals to the state's :class:`Notifier` attributes. Tests drive it with no
``QApplication`` (``tests/test_layering.py`` keeps this module free of Qt).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from strata.analysis.slices import Extent, interval_extent
from strata.analysis.tracks import Track
from strata.viewer.collective_overlay import CollectiveOverlay
from strata.viewer.rows import RowLayout, default_collapsed, layout_rows, match_tracks

__all__ = [
    "MIN_SPAN_NS",
    "AlignmentAnchor",
    "DiffState",
    "NameHighlight",
    "Notifier",
    "Scope",
    "SearchState",
    "TimelineSelection",
    "TimelineState",
    "activity_span",
    "extents_span",
    "scope_window",
]

#: The narrowest view range (ns): zooming further in keeps this span about the middle.
MIN_SPAN_NS = 50


class Notifier:
    """A Qt-free signal: callbacks called in the order connected, with the same arguments."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., object]] = []

    def connect(self, callback: Callable[..., object]) -> None:
        """Call ``callback(*args)`` on every :meth:`emit`."""
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., object]) -> None:
        """Stop calling ``callback`` (a callback never connected is ignored)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, *args: object) -> None:
        """Call every connected callback with ``args``."""
        for callback in list(self._callbacks):  # a callback may disconnect itself
            callback(*args)


@dataclass(frozen=True)
class TimelineSelection:
    """A Shift-drag selection: ``[t0_ns, t1_ns)`` on the shared axis, over ``rows`` (track
    keys; empty means every row)."""

    t0_ns: int
    t1_ns: int
    rows: tuple[str, ...] = ()

    @property
    def time_range(self) -> tuple[int, int]:
        """``(t0_ns, t1_ns)``."""
        return self.t0_ns, self.t1_ns


@dataclass(frozen=True)
class NameHighlight:
    """The name whose instances stand out: what it is called, its kind and its group.

    ``group`` is ``(key, style)`` as :meth:`analysis.window_stats.WindowIndex.groups` takes
    it: two CUDA API groups can be shown by one name (``cudaMalloc``, ``cudaMalloc_v3020``),
    two NVTX groups differ by their style only. ``(None, None)``: the group named ``name``.
    """

    name: str
    kind: str
    group: tuple = (None, None)


@dataclass(frozen=True)
class SearchState:
    """The timeline's search: what is searched for and where the stepping is.

    ``count`` is the number of matches (``None`` while a search runs); ``current`` the
    position of the match shown (-1: none yet); ``error`` a one-line reason the text cannot
    be searched for (an invalid regular expression), else ''.
    """

    text: str = ""
    is_regex: bool = False
    count: int | None = 0
    current: int = -1
    error: str = ""

    @property
    def is_active(self) -> bool:
        """Whether a text is searched for."""
        return bool(self.text)


@dataclass(frozen=True)
class DiffState:
    """What is compared: the *before* reports (the baseline) and the *after* ones, by path,
    and whether the timeline colours the names that changed.

    Groups on either side are pooled, as :func:`analysis.diff.diff_sets` pools them. A
    report is on one side at most. ``is_colored`` holds only while both sides are set.
    """

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    is_colored: bool = False

    @property
    def is_ready(self) -> bool:
        """Whether both sides have a report: there is something to compare."""
        return bool(self.before) and bool(self.after)

    def with_before(self, paths: Iterable[str]) -> DiffState:
        """``paths`` as the baseline (they leave the after side)."""
        before = tuple(dict.fromkeys(str(p) for p in paths))
        return _diff(before, tuple(p for p in self.after if p not in before), self.is_colored)

    def with_after(self, paths: Iterable[str]) -> DiffState:
        """``paths`` as the after side (they leave the baseline)."""
        after = tuple(dict.fromkeys(str(p) for p in paths))
        return _diff(tuple(p for p in self.before if p not in after), after, self.is_colored)

    def without(self, paths: Iterable[str]) -> DiffState:
        """The diff with ``paths`` (closed reports) left out of both sides."""
        gone = {str(p) for p in paths}
        return _diff(tuple(p for p in self.before if p not in gone),
                     tuple(p for p in self.after if p not in gone), self.is_colored)  # fmt: skip


def _diff(before: tuple[str, ...], after: tuple[str, ...], is_colored: bool) -> DiffState:
    ready = bool(before) and bool(after)
    return DiffState(before, after, is_colored and ready)


@dataclass(frozen=True)
class AlignmentAnchor:
    """One report's alignment anchor: an event whose end the reports' clocks are made to
    agree on (:func:`analysis.alignment.anchor_offsets`).

    ``report`` is the report's path; ``table`` and ``row`` the event's model table and row;
    ``end_ns`` its end on the report's own clock; ``name`` its label (for messages).
    """

    report: str
    table: str
    row: int
    end_ns: int
    name: str = ""


@dataclass(frozen=True)
class Scope:
    """What the user asked the stats panel to summarise: ``range_mode`` (``all``,
    ``visible`` or ``selection``), ``report_index`` (None = every report), ``by_report``
    (one column group per report)."""

    range_mode: str = "all"
    report_index: int | None = None
    by_report: bool = False


class TimelineState:
    """What the timeline shows, apart from pixels: the one place that changes it.

    Every setter notifies only when the value actually changes, once per call.

    Notifiers
    ---------
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
        """Replace the rows of the same reports, keeping pins, hidden rows and groups."""
        self._tracks = list(tracks)
        self._fold_new_groups()
        self.rows_changed.emit()

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
        """Pin every track that ``pattern`` names (see :func:`viewer.rows.match_tracks`).

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
        self._span = _span_of(lo_ns, hi_ns)
        if activity is None:
            self._activity = self._span
        else:  # inside the full span, so that a second fit only ever widens
            lo = min(max(int(activity[0]), self._span[0]), self._span[1])
            self._activity = _span_of(lo, min(int(activity[1]), self._span[1]))

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
            t0, t1 = _inside(t0, t1, self.zoom_out_limit())
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

    # -- diff --------------------------------------------------------------------------

    def diff(self) -> DiffState:
        """Return what is compared (:class:`DiffState`)."""
        return self._diff

    def set_diff(self, diff: DiffState) -> None:
        """Compare as ``diff`` says (colours need both sides: they go off without)."""
        diff = _diff(diff.before, diff.after, diff.is_colored)
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


def activity_span(
    spans: Iterable[tuple[np.ndarray, np.ndarray, int]],
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Return ``(full, activity)`` spans of events given as ``(start_ns, end_ns, offset_ns)``
    arrays per table, on the shared axis (``None`` when there is no event).

    ``full`` covers every event. ``activity`` is where :meth:`TimelineState.fit` looks first:
    from the earliest start to the latest end of the events that last (``end > start``).
    Instantaneous events (NVTX marks and domain creations, zero-length calls) only tell
    that something was set up, and a report often has them long before or after its work
    (a domain created at time 0, the work 40 s later): they are left out of the activity
    span, and those inside it are shown anyway. Without a lasting event, ``activity`` is
    ``full``.
    """
    return extents_span((interval_extent(start, end), offset) for start, end, offset in spans)


def extents_span(
    extents: Iterable[tuple[Extent | None, int]],
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """:func:`activity_span` of tables given by their extents (e.g. a slice table's cached
    :meth:`~analysis.slices.SliceTable.extent_ns`) and offsets: no pass over the events."""
    full: list[tuple[int, int]] = []
    lasting: list[tuple[int, int]] = []
    for extent, offset in extents:
        if extent is None:
            continue
        (lo, hi), last = extent
        full.append((lo + offset, hi + offset))
        if last is not None:
            lasting.append((last[0] + offset, last[1] + offset))
    if not full:
        return None
    whole = (min(lo for lo, _ in full), max(hi for _, hi in full))
    if not lasting:
        return whole, whole
    return whole, (min(lo for lo, _ in lasting), max(hi for _, hi in lasting))


def _inside(t0_ns: int, t1_ns: int, limit: tuple[int, int]) -> tuple[int, int]:
    """Return ``[t0_ns, t1_ns)`` moved inside ``limit``, or ``limit`` when it is wider."""
    lo, hi = limit
    if t1_ns - t0_ns >= hi - lo:
        return lo, hi
    shift = max(lo - t0_ns, 0) - max(t1_ns - hi, 0)
    return t0_ns + shift, t1_ns + shift


def _span_of(lo_ns: int, hi_ns: int) -> tuple[int, int]:
    lo_ns, hi_ns = int(lo_ns), int(hi_ns)
    return (lo_ns, hi_ns) if hi_ns > lo_ns else (lo_ns, lo_ns + 1000)


def scope_window(scope: Scope, state: TimelineState) -> tuple[int | None, int | None] | None:
    """The time window ``scope`` means now: ``(None, None)`` for the whole run, the view
    range, or the selection (``None`` when nothing is selected)."""
    if scope.range_mode == "visible":
        return state.view_range()
    if scope.range_mode == "selection":
        return state.time_selection()
    return None, None
