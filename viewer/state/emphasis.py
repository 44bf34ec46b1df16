"""What the timeline emphasises, marks and tints, resolved against the slice tables shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from strata.analysis.slices import SliceTable
from strata.viewer.events import EventRef, event_ref
from strata.viewer.state.values import EventTints

__all__ = ["emphasis_masks", "marked_events", "padded_offsets", "shown_tints"]

#: Per report, its slice tables by name (what the timeline draws).
Tables = Sequence[Mapping[str, SliceTable]]


def emphasis_masks(
    tables: Tables, rows: Mapping[tuple[int, str], Sequence[int] | np.ndarray]
) -> dict[tuple[int, str], npt.NDArray[np.bool_]]:
    """Return per ``(report_index, table)`` a bool per event: True for the ``rows`` named."""
    masks = {}
    for (report_index, table), index in rows.items():
        mask = np.zeros(len(tables[report_index][table]), dtype=bool)
        mask[np.asarray(index, dtype=np.int64)] = True
        masks[(report_index, table)] = mask
    return masks


def marked_events(
    tables: Tables, marks: Sequence[EventRef | tuple[int, str, int]]
) -> list[EventRef]:
    """Return ``marks`` as events: an ``EventRef`` as it is, ``(report_index, table, row)``
    resolved in ``tables``."""
    return [
        m if isinstance(m, EventRef) else event_ref(tables[m[0]], m[0], m[1], m[2]) for m in marks
    ]


def shown_tints(tables: Tables, tints: EventTints | None) -> EventTints:
    """Return the part of ``tints`` whose tables are shown, with one code per event."""
    codes = {}
    for (report_index, table), code in (tints.codes if tints else {}).items():
        shown = tables[report_index].get(table) if report_index < len(tables) else None
        if shown is not None and len(code) == len(shown):
            codes[(report_index, table)] = code
    return EventTints(codes, tints.colors) if codes else EventTints()


def padded_offsets(offsets_ns: Sequence[int], report_count: int) -> list[int]:
    """Return ``offsets_ns`` as ints, with 0 for the reports it has no offset for."""
    return [int(o) for o in offsets_ns] + [0] * (report_count - len(offsets_ns))
