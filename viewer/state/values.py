"""The timeline state's values: frozen descriptions of a selection, a highlighted name, the
search, the diff, an alignment anchor, the stats panel's scope and the events' tints."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = [
    "AlignmentAnchor",
    "DiffState",
    "EventTints",
    "NameHighlight",
    "Scope",
    "SearchState",
    "TimelineSelection",
    "diff_state",
]


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
        return diff_state(before, tuple(p for p in self.after if p not in before), self.is_colored)

    def with_after(self, paths: Iterable[str]) -> DiffState:
        """``paths`` as the after side (they leave the baseline)."""
        after = tuple(dict.fromkeys(str(p) for p in paths))
        return diff_state(tuple(p for p in self.before if p not in after), after, self.is_colored)

    def without(self, paths: Iterable[str]) -> DiffState:
        """The diff with ``paths`` (closed reports) left out of both sides."""
        gone = {str(p) for p in paths}
        return diff_state(tuple(p for p in self.before if p not in gone),
                     tuple(p for p in self.after if p not in gone), self.is_colored)  # fmt: skip


def diff_state(before: tuple[str, ...], after: tuple[str, ...], is_colored: bool) -> DiffState:
    """A :class:`DiffState` whose colours are on only while both sides are set."""
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


@dataclass(frozen=True)
class EventTints:
    """Colours chosen per event, over the events' own (a diff's slower / faster names).

    ``codes[(report_index, table)]`` holds one ``uint8`` per event of that slice table: 0
    dims the event (as a highlight dims the events it does not emphasise), ``k`` paints it
    ``colors[k - 1]`` (0xAARRGGBB). Tables not named are drawn as usual.
    """

    codes: dict[tuple[int, str], npt.NDArray[np.uint8]] = field(default_factory=dict)
    colors: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.codes)
