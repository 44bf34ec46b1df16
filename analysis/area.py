"""An area of the timeline — a time range over some rows — as statistics and as an event list.

The stats panel summarises an area selection with :func:`area_stats` (the one-shot
:func:`analysis.selection.aggregate`, each report's tracks and window on its own time base),
and a window over every row with :func:`aggregate_window` while its window index is built;
the Events view lists it with :func:`area_events`: columns of arrays, one entry per event,
never one Python object per event (1 M rows are ~50 MB of NumPy, built in tens of ms).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import CancelledError
from strata.analysis.kinds import event_kinds
from strata.analysis.outputs import atomic_file, check_file_target
from strata.analysis.reportset import ReportSet
from strata.analysis.selection import Selection, aggregate
from strata.analysis.tracks import Track

__all__ = [
    "AreaEvents",
    "aggregate_window",
    "area_events",
    "area_frame",
    "area_stats",
    "area_track_ids",
    "write_area_csv",
]


def area_track_ids(tracks: Sequence[Track], report_index: int) -> dict[str, tuple[int, ...]]:
    """Return, per report table of every registered kind, the track ids of ``tracks`` that
    belong to report ``report_index`` (``()`` for a table none of them draws)."""
    picked: dict[str, set[int]] = {t: set() for kind in event_kinds() for t in kind.tables}
    for track in tracks:
        if track.report_index == report_index:
            for table, track_id in track.parts:
                picked.setdefault(table, set()).add(int(track_id))
    return {table: tuple(sorted(ids)) for table, ids in picked.items()}


def _draws_derived(tracks: Sequence[Track], report_index: int, panel: str) -> bool:
    """Whether a track of the report draws a derived member of ``panel`` (projected NVTX:
    rows without track ids, selected by the window only when such a row is selected)."""
    derived = {k.drawn_as for k in event_kinds() if k.lazy_slices
               and any(p.name == panel for p in k.panels)}  # fmt: skip
    if not derived:
        return True
    return any(t.report_index == report_index and t.parts and t.parts[0][0] in derived
               for t in tracks)  # fmt: skip


def area_stats(
    reports: ReportSet,
    kind: str,
    tracks: Sequence[Track],
    t0_ns: int | None,
    t1_ns: int | None,
    offsets_ns: Sequence[int],
    report_index: int | None = None,
    by_report: bool = False,
) -> pd.DataFrame:
    """Return :func:`~analysis.selection.aggregate` of panel kind ``kind`` over the events of
    ``tracks`` overlapping ``[t0_ns, t1_ns)`` on the shared axis.

    ``report_index``: one report only (None: every report). ``by_report``: a ``report``
    column holding :attr:`ReportSet.labels`. Same columns and order as
    :meth:`analysis.window_stats.WindowIndex.stats`.
    """
    chosen = [i for i in range(len(reports)) if report_index in (None, i)]
    selections = []
    for i in chosen:
        off = int(offsets_ns[i]) if i < len(offsets_ns) else 0
        window = (None if t0_ns is None else t0_ns - off, None if t1_ns is None else t1_ns - off)
        if not _draws_derived(tracks, i, kind):
            window = (0, 0)  # nothing: no selected row draws these events
        selections.append(Selection(*window, track_ids=area_track_ids(tracks, i)))
    frame = aggregate([reports[i] for i in chosen], kind, None, by_report=by_report,
                      projection=reports.projection_of, selections=selections)  # fmt: skip
    if by_report and len(frame):
        labels = dict(zip([reports[i].name for i in chosen], [reports.labels[i] for i in chosen],
                          strict=True))  # fmt: skip
        frame["report"] = frame["report"].map(labels)
    return frame


def aggregate_window(
    reports: ReportSet,
    kind: str,
    t0_ns: int | None,
    t1_ns: int | None,
    offsets_ns: Sequence[int],
    report_index: int | None = None,
    by_report: bool = False,
    cancel: threading.Event | None = None,
) -> pd.DataFrame:
    """Return :meth:`analysis.window_stats.WindowIndex.stats`'s table without the index.

    The one-shot :func:`~analysis.selection.aggregate` of the events of ``kind`` overlapping
    ``[t0_ns, t1_ns)`` on the shared axis: what the stats panel shows while the index is
    being built (~0.5 s per 10 M events here, against seconds for the index).

    Parameters
    ----------
    reports, kind, t0_ns, t1_ns, offsets_ns, report_index
        As :func:`area_stats`, over every row.
    by_report
        One row per (report, name), ``report`` holding :attr:`ReportSet.labels` (one
        aggregate per report: two reports of one file name stay apart).
    cancel
        Checked before each report's aggregate: raises :class:`CancelledError` when set.

    Returns
    -------
    pandas.DataFrame
        [``report``], ``name``, [``style``], ``count``, ``total_ns``, ``mean_ns``,
        ``median_ns``, ``min_ns``, ``max_ns``, ``std_ns``, ``group`` (int64: rows of one
        ``(key, style)`` share it), ``key`` (the full name); sorted by ``total_ns``
        descending, then name.
    """
    chosen = [i for i in range(len(reports)) if report_index in (None, i)]
    selections = {}
    for i in chosen:
        off = int(offsets_ns[i]) if i < len(offsets_ns) else 0
        selections[i] = Selection(None if t0_ns is None else t0_ns - off,
                                  None if t1_ns is None else t1_ns - off)  # fmt: skip

    def one(indices: list[int]) -> pd.DataFrame:
        if cancel is not None and cancel.is_set():
            raise CancelledError("statistics cancelled")
        return aggregate([reports[i] for i in indices], kind, None, np,
                         projection=reports.projection_of,
                         selections=[selections[i] for i in indices], with_keys=True)  # fmt: skip

    if by_report:
        labels = reports.labels
        frames = [one([i]).assign(report=labels[i]) for i in chosen]
        frame = pd.concat(frames, ignore_index=True) if frames else one([]).assign(report="")
        frame = frame.sort_values(["total_ns", "name"], ascending=[False, True],
                                  kind="mergesort").reset_index(drop=True)  # fmt: skip
        if frame.empty:  # an object column, as the window index's (pandas infers str when not)
            frame["report"] = frame["report"].astype(object)
    else:
        frame = one(chosen)
    styles = frame["style"].tolist() if "style" in frame else [None] * len(frame)
    codes: dict[tuple, int] = {}
    group = [codes.setdefault(g, len(codes)) for g in zip(frame["key"], styles, strict=True)]
    frame["group"] = np.asarray(group, dtype=np.int64)
    first = ["report"] if by_report else []
    rest = [c for c in frame.columns if c not in ("report", "group", "key")]
    return frame[first + rest + ["group", "key"]]


@dataclass(frozen=True)
class AreaEvents:
    """The events of some rows in a time range, as arrays (one entry per event).

    Attributes
    ----------
    tables
        Slice-table names that ``table_codes`` index.
    report_index, table_codes, index
        Per event: its report, slice table and interval in that table.
    row
        Per event: its row, an index into ``row_keys`` / ``row_labels``.
    start_ns, end_ns
        Per event: bounds on the shared axis (int64).
    name_codes, names
        Per event its name's index into ``names`` (the text drawn in its box; the last entry
        of ``names`` is '' for events without one).
    row_keys, row_labels
        Per row: its track key and its path (``report / group / label``).
    """

    tables: tuple[str, ...]
    report_index: npt.NDArray[np.int32]
    table_codes: npt.NDArray[np.int16]
    index: npt.NDArray[np.int64]
    row: npt.NDArray[np.int32]
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    name_codes: npt.NDArray[np.int64]
    names: npt.NDArray[np.object_]
    row_keys: tuple[str, ...]
    row_labels: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.index)

    def find(self, report_index: int, table: str, index: int) -> int:
        """Return the position of one event, or -1 when the area does not hold it."""
        if table not in self.tables:
            return -1
        code = self.tables.index(table)
        hit = np.flatnonzero((self.index == index) & (self.table_codes == code)
                             & (self.report_index == report_index))  # fmt: skip
        return int(hit[0]) if len(hit) else -1


def area_events(
    reports: ReportSet,
    tracks: Sequence[Track],
    t0_ns: int | None,
    t1_ns: int | None,
    offsets_ns: Sequence[int],
) -> AreaEvents:
    """Return the events drawn on ``tracks`` that overlap ``[t0_ns, t1_ns)`` (shared axis;
    None: unbounded), in shared-axis start order.

    An interval drawn on two of the rows ('All streams' and its stream) is listed once, on
    the more specific row.
    """
    ordered = sorted(range(len(tracks)), key=lambda i: tracks[i].kind == "gpu_all")
    seen: set[tuple[int, str, int]] = set()
    tables: list[str] = []
    pools: dict[tuple[int, str], int] = {}
    names: list[np.ndarray] = []
    parts: list[tuple] = []
    for i in ordered:  # loops over rows and their parts, never events
        track = tracks[i]
        r = track.report_index
        slices = reports.slice_tables(r)
        off = int(offsets_ns[r]) if r < len(offsets_ns) else 0
        for table_name, track_id in track.parts:
            table = slices.get(table_name)
            if table is None or (r, table_name, track_id) in seen:
                continue
            seen.add((r, table_name, track_id))
            found = _overlapping(table, track_id, t0_ns, t1_ns, off)
            if not len(found):
                continue
            if table_name not in tables:
                tables.append(table_name)
            if (r, table_name) not in pools:
                pools[(r, table_name)] = sum(len(n) for n in names)
                names.append(np.asarray(table.labels, dtype=object))
            label = table.label_ids[found].astype(np.int64)
            parts.append((r, tables.index(table_name), found, i, table.start_ns[found] + off,
                          table.end_ns[found] + off,
                          np.where(label >= 0, label + pools[(r, table_name)], -1)))  # fmt: skip
    return _stacked(tracks, tables, names, parts)


def _overlapping(table, track_id: int, t0_ns, t1_ns, offset: int) -> np.ndarray:
    """Interval indices of one track of ``table`` overlapping the window (shared axis)."""
    if t0_ns is None or t1_ns is None:
        lo, hi = table.bounds(track_id)
    else:
        lo, hi = table.window(track_id, t0_ns - offset, t1_ns - offset)
    found = np.arange(lo, hi, dtype=np.int64)
    start, end = table.start_ns[found] + offset, table.end_ns[found] + offset
    keep = np.ones(len(found), dtype=bool)
    if t1_ns is not None:
        keep &= start < t1_ns
    if t0_ns is not None:
        keep &= (end > t0_ns) | (start >= t0_ns)  # zero-length at t0 counts, as Selection
    return found[keep]


def _stacked(tracks: Sequence[Track], tables: list[str], names: list, parts: list) -> AreaEvents:
    pool = np.concatenate([*names, np.array([""], dtype=object)])
    row_keys = tuple(t.key for t in tracks)
    row_labels = tuple(t.path for t in tracks)
    if not parts:
        empty = np.empty(0, np.int64)
        return AreaEvents(tuple(tables), empty.astype(np.int32), empty.astype(np.int16), empty,
                          empty.astype(np.int32), empty, empty, empty, pool, row_keys,
                          row_labels)  # fmt: skip
    sizes = [len(p[2]) for p in parts]
    start = np.concatenate([p[4] for p in parts])
    order = np.argsort(start, kind="stable")
    codes = np.concatenate([p[6] for p in parts])
    codes[codes < 0] = len(pool) - 1
    return AreaEvents(
        tuple(tables),
        np.repeat(np.array([p[0] for p in parts], np.int32), sizes)[order],
        np.repeat(np.array([p[1] for p in parts], np.int16), sizes)[order],
        np.concatenate([p[2] for p in parts])[order],
        np.repeat(np.array([p[3] for p in parts], np.int32), sizes)[order],
        start[order],
        np.concatenate([p[5] for p in parts])[order],
        codes[order],
        pool,
        row_keys,
        row_labels,
    )


def area_frame(
    events: AreaEvents, report_labels: Sequence[str], positions: np.ndarray | None = None
) -> pd.DataFrame:
    """Return events of an area as a table: ``name``, ``start_ns`` (shared axis),
    ``duration_ns``, ``row``, ``report``, ``table``, at ``positions`` (default: all)."""
    at = np.arange(len(events)) if positions is None else np.asarray(positions, dtype=np.int64)
    labels = np.asarray([*report_labels, ""], dtype=object)
    report = events.report_index[at]
    return pd.DataFrame({
        "name": events.names[events.name_codes[at]],
        "start_ns": events.start_ns[at],
        "duration_ns": (events.end_ns - events.start_ns)[at],
        "row": np.asarray(events.row_labels, dtype=object)[events.row[at]] if len(at) else [],
        "report": labels[np.where(report < len(report_labels), report, -1)],
        "table": np.asarray(events.tables, dtype=object)[events.table_codes[at]] if len(at)
        else [],
    })  # fmt: skip


def write_area_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` (:func:`area_frame`) to ``path`` as CSV, atomically.

    Raises
    ------
    AnalysisError
        The file cannot be written (one line: which and why).
    """
    target = check_file_target(path)
    with atomic_file(target) as fh:
        frame.to_csv(fh, index=False)
    return target
