"""The viewer's Qt-free part: the timeline's state and the pure logic the widgets render.

- :mod:`~viewer.state.timeline_state`: :class:`TimelineState`, what the timeline shows (the
  reports, rows, pins, view range, selection, the picked and emphasised events, diff,
  collectives, anchors, search), with a :class:`~viewer.state.notifier.Notifier` per change;
- :mod:`~viewer.state.values`: the frozen values it holds and hands out;
- :mod:`~viewer.state.rows`: the row tree laid out; :mod:`~viewer.state.lod`: per-pixel
  level of detail; :mod:`~viewer.state.collective_overlay`: the collectives drawn over the
  rows; :mod:`~viewer.state.spans`, :mod:`~viewer.state.emphasis`: helpers of the state.

Nothing here imports Qt, directly or through what it imports: an import-linter contract
(pyproject.toml) and ``tests/test_layering.py`` hold the package to it, so all of it runs
and is tested without a ``QApplication`` (napari's model / ``_qt`` split, glue's state
objects). The Qt widgets (viewer/timeline.py and the rest) observe and change it.
"""

from __future__ import annotations

from strata.viewer.state.notifier import Notifier
from strata.viewer.state.spans import activity_span, extents_span
from strata.viewer.state.timeline_state import MIN_SPAN_NS, TimelineState, scope_window
from strata.viewer.state.values import (
    AlignmentAnchor,
    DiffState,
    EventTints,
    NameHighlight,
    Scope,
    SearchState,
    TimelineSelection,
)

__all__ = [
    "MIN_SPAN_NS",
    "AlignmentAnchor",
    "DiffState",
    "EventTints",
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
