"""Find where an analysis row is drawn on the timeline: slice indices, row keys, highlights.

The stats panel speaks in report rows (``report_index``, event table, row); the timeline draws
slice tables (projected NVTX ranges are reordered there). These helpers translate, vectorised
per report and table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from strata.analysis.kinds import panel_tables
from strata.analysis.reportset import ReportSet
from strata.viewer.events import EventRef

__all__ = [
    "focus_event",
    "highlight_rows",
    "instance_refs",
    "scroll_track_into_view",
    "slice_index",
    "slice_indices",
    "track_key",
    "with_shared_start",
]


def with_shared_start(instances: pd.DataFrame, offsets_ns: list[int]) -> pd.DataFrame:
    """Add ``shared_start_ns`` (report time + offset); rows stay in shared-time order."""
    offsets = np.asarray([*offsets_ns, 0], dtype=np.int64)
    out = instances.reset_index(drop=True)
    out["shared_start_ns"] = (
        out["start_ns"].to_numpy(np.int64) + offsets[out["report_index"].to_numpy(np.int64)]
    )
    return out


def highlight_rows(reports: ReportSet, kind: str, instances: pd.DataFrame) -> dict:
    """``(report_index, slice table) -> rows`` to emphasise; other rows of the kind dim.

    Exactly the given instances (rows of a :meth:`WindowIndex.instances` frame): a name's
    highlights are its table row's instances, never every event that shows the same name.
    """
    rows: dict[tuple[int, str], np.ndarray] = {}
    report_index = instances["report_index"].to_numpy(np.int64)
    table = instances["table"].to_numpy(object)
    source_rows = instances["row"].to_numpy(np.int64)
    tables = panel_tables(kind)  # the member kinds' rows (memcpy: memcpy and memset)
    for r in range(len(reports)):  # loops over reports and tables, not events
        for t in tables:
            mine = source_rows[(report_index == r) & (table == t)]
            if t == "nvtx_gpu":
                found = _projected_indices(reports, r, mine)
                rows[(r, t)] = np.sort(found[found >= 0])
            else:
                rows[(r, t)] = mine
    return rows


def _projected_indices(
    reports: ReportSet, report_index: int, projection_rows: np.ndarray
) -> np.ndarray:
    """Slice indices of ``project_nvtx`` rows on the projected rows (-1: not drawn)."""
    sliced = reports.projected_slices(report_index)
    if sliced is None:
        return np.full(len(projection_rows), -1)
    drawn = sliced.projection_rows
    where = np.full(int(max(drawn.max(initial=-1), projection_rows.max(initial=-1))) + 1, -1)
    where[drawn] = np.arange(len(drawn))
    return where[projection_rows] if len(projection_rows) else np.empty(0, np.int64)


def slice_index(
    reports: ReportSet, report_index: int, table: str, row: int, start_ns: int, end_ns: int
) -> int | None:
    """Return the slice-table index that draws ``row`` of ``table`` (None if not drawn)."""
    found = slice_indices(reports, report_index, table, np.array([row]), np.array([start_ns]),
                          np.array([end_ns]))  # fmt: skip
    return None if found[0] < 0 else int(found[0])


def slice_indices(
    reports: ReportSet, report_index: int, table: str, rows, starts_ns, ends_ns
) -> np.ndarray:
    """Vectorised :func:`slice_index`: -1 where not drawn. Projected NVTX ranges (rows of
    ``project_nvtx``) are reordered on the timeline: looked up through that order."""
    rows = np.asarray(rows, dtype=np.int64)
    if table != "nvtx_gpu":
        tables = reports.slice_tables(report_index)
        return rows if table in tables else np.full(len(rows), -1)
    return _projected_indices(reports, report_index, rows)


def instance_refs(
    reports: ReportSet, report_index: int, table: str, rows, starts_ns, ends_ns, names
) -> list[EventRef]:
    """EventRefs of analysis rows of one report and table, for the ones the timeline draws
    (the slice indices are found at once; callers pass at most a few hundred rows)."""
    starts, ends = np.asarray(starts_ns, np.int64), np.asarray(ends_ns, np.int64)
    rows = np.asarray(rows, np.int64)
    found = slice_indices(reports, report_index, table, rows, starts, ends)
    source = "" if table == "nvtx_gpu" else table
    return [
        EventRef(report_index, table, int(i), source, int(row), "", str(n), int(s), int(e))
        for i, row, n, s, e in zip(found, rows, names, starts, ends, strict=True)
        if i >= 0
    ]


def track_key(timeline, reports: ReportSet, ref: EventRef) -> str | None:
    """Return the key of the stream/thread row that draws ``ref`` (not 'All streams')."""
    table = reports.slice_tables(ref.report_index).get(ref.table)
    if table is None:
        return None
    track_id = int(np.searchsorted(table.track_offsets, ref.index, side="right")) - 1
    candidates = [
        t
        for t in timeline.state.tracks()
        if t.report_index == ref.report_index and (ref.table, track_id) in t.parts
    ]
    candidates.sort(key=lambda t: t.kind == "gpu_all")
    return candidates[0].key if candidates else None


def scroll_track_into_view(timeline, key: str) -> None:
    timeline.scroll_to_track(key)


def focus_event(timeline, reports: ReportSet, offsets_ns, ref: EventRef | None, zoom: bool) -> None:
    """Show ``ref`` on ``timeline`` (zoomed to it, or centred at the same zoom), select it and
    scroll its row into view; ``offsets_ns``: per report, its shift on the shared axis."""
    if ref is None:
        return
    offset = offsets_ns[ref.report_index] if ref.report_index < len(offsets_ns) else 0
    start, end = ref.start_ns + offset, ref.end_ns + offset
    duration = max(end - start, 1)
    state = timeline.state
    t0, t1 = state.view_range()
    if zoom or duration > (t1 - t0) * 0.8:
        pad = max(duration, 200)
        state.set_view_range(start - pad, end + pad)
    else:
        middle, half = (start + end) // 2, (t1 - t0) // 2
        state.set_view_range(middle - half, middle + half)
    timeline.state.select_event(ref)
    key = ref.track_key or track_key(timeline, reports, ref)
    if key:
        scroll_track_into_view(timeline, key)
