"""Collectives on the timeline, without Qt: the matched instances on the shared axis, and
what one frame draws of them.

A frame shades each rank's wait (from its own start to the last rank's arrival, spec
``collectives.md`` §6) over the rank's collective event and joins the ranks of each
instance: a line through their starts and one at the last arrival. Only the instances in
view are planned (a binary search over the instances, sorted by first start). With many of
them in view (fewer than :data:`DETAIL_MIN_PX` pixels each, or more than
:data:`DETAIL_MAX`) each rank row's waits are merged into runs of whole pixels and no lines
are drawn: a pixel column is shaded when a wait touches it, found per column by a binary
search over the row's waits (sorted by start, with the running latest end), so a frame's
work is rows × pixels × log(waits), never the number of collectives in view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.collectives import CollectiveMatch
from strata.analysis.model import Report

__all__ = ["DETAIL_MAX", "DETAIL_MIN_PX", "CollectiveOverlay", "OverlayPlan", "plan_overlay"]

#: Most instances drawn one by one; more in view are merged.
DETAIL_MAX = 200
#: Fewer pixels per instance in view than this: merged.
DETAIL_MIN_PX = 8.0

Lane = tuple[int, str, int]  # (report index, table, track id): where a rank's event is drawn


@dataclass(frozen=True)
class CollectiveOverlay:
    """The matched collectives of a set, as arrays (one frame reads a window of them).

    Attributes
    ----------
    offsets_ns
        The report offsets the times are on (a frame with others draws nothing).
    first_start_ns, last_start_ns, reach_ns
        Per instance (sorted by first start): its first and last start, and the latest
        end of it and every instance before it (for the window search).
    bounds
        Instance ``i``'s ranks are entries ``bounds[i]`` to ``bounds[i + 1]``.
    lane, start_ns, wait_ns, end_ns, row
        Per rank entry: its :attr:`lanes` code, start, wait and end (ns, shared axis), and
        its event's row in the lane's table.
    lanes
        ``(report_index, table, track_id)`` per lane code: the timeline rows that draw
        the events.
    wait_starts, wait_reach
        Per lane code, the starts of its waits (those > 0) in ascending order, and the
        latest end of each and every wait before it (for the merged plan).
    """

    offsets_ns: tuple[int, ...]
    first_start_ns: npt.NDArray[np.int64]
    last_start_ns: npt.NDArray[np.int64]
    reach_ns: npt.NDArray[np.int64]
    bounds: npt.NDArray[np.int64]
    lane: npt.NDArray[np.int64]
    start_ns: npt.NDArray[np.int64]
    wait_ns: npt.NDArray[np.int64]
    lanes: tuple[Lane, ...]
    end_ns: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    row: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    wait_starts: tuple[npt.NDArray[np.int64], ...] = ()
    wait_reach: tuple[npt.NDArray[np.int64], ...] = ()

    @classmethod
    def from_match(
        cls, match: CollectiveMatch, reports: Sequence[Report], offsets_ns: Sequence[int]
    ) -> CollectiveOverlay:
        """Build the overlay of ``match`` (computed on ``offsets_ns``) of ``reports``."""
        inst, ranks = match.instances, match.ranks
        index = ranks["report_index"].to_numpy(np.int64)
        tables = ranks["table"].to_numpy(object)
        rows = ranks["row"].to_numpy(np.int64)
        track = np.full(len(ranks), -1, np.int64)
        for (i, table), at in ranks.groupby(["report_index", "table"]).indices.items():
            events = reports[int(i)].tables.get(str(table))
            if events is None or "track_id" not in events:
                continue
            row = rows[at]
            ok = (row >= 0) & (row < len(events))
            track[at[ok]] = np.asarray(events["track_id"])[row[ok]]
        codes, lanes = pd.MultiIndex.from_arrays([index, tables, track]).factorize()
        codes = np.asarray(codes, np.int64)
        start = ranks["start_ns"].to_numpy(np.int64)
        wait = ranks["wait_ns"].to_numpy(np.int64)
        wait_starts, wait_reach = [], []
        for code in range(len(lanes)):
            mine = np.flatnonzero((codes == code) & (wait > 0))
            mine = mine[np.argsort(start[mine], kind="stable")]
            wait_starts.append(start[mine])
            wait_reach.append(np.maximum.accumulate(start[mine] + wait[mine]))
        end = inst["end_ns"].to_numpy(np.int64)
        instance_rows = ranks["instance_row"].to_numpy(np.int64)
        return cls(
            offsets_ns=tuple(int(o) for o in offsets_ns),
            first_start_ns=inst["first_start_ns"].to_numpy(np.int64),
            last_start_ns=inst["last_start_ns"].to_numpy(np.int64),
            reach_ns=np.maximum.accumulate(end) if len(end) else end,
            bounds=np.searchsorted(instance_rows, np.arange(len(inst) + 1)).astype(np.int64),
            lane=codes,
            start_ns=start,
            wait_ns=wait,
            end_ns=ranks["end_ns"].to_numpy(np.int64),
            row=rows,
            lanes=tuple((int(i), str(t), int(k)) for i, t, k in lanes),
            wait_starts=tuple(wait_starts),
            wait_reach=tuple(wait_reach),
        )

    def __len__(self) -> int:
        return len(self.first_start_ns)

    def instance_of(self, report_index: int, table: str, row: int) -> int | None:
        """Return the instance whose rank ``report_index`` is event ``row`` of ``table``."""
        hit = np.flatnonzero(self.row == int(row))
        for k in hit:
            lane = self.lanes[int(self.lane[k])]
            if lane[0] == int(report_index) and lane[1] == table:
                return int(np.searchsorted(self.bounds, k, side="right") - 1)
        return None

    def members(self, instance: int) -> list[tuple[int, str, int, int]]:
        """Return the ranks of ``instance``: ``(report_index, table, row, end_ns)`` each,
        the end on the report's own clock (its offset taken off)."""
        out = []
        for k in range(int(self.bounds[instance]), int(self.bounds[instance + 1])):
            index, table, _track = self.lanes[int(self.lane[k])]
            offset = self.offsets_ns[index] if index < len(self.offsets_ns) else 0
            out.append((index, table, int(self.row[k]), int(self.end_ns[k]) - offset))
        return out

    def window(self, t0_ns: int, t1_ns: int) -> tuple[int, int]:
        """Return the instances ``[lo, hi)`` that overlap ``[t0_ns, t1_ns)``, a superset:
        from the first that ends after ``t0_ns`` to the last that starts before ``t1_ns``."""
        lo = int(np.searchsorted(self.reach_ns, t0_ns, side="right"))
        hi = int(np.searchsorted(self.first_start_ns, t1_ns, side="left"))
        return lo, max(lo, hi)


@dataclass
class OverlayPlan:
    """What one frame draws, in widget px.

    ``waits``: one rectangle ``(x, y, w, h)`` per shaded wait (float64, n × 4), with
    ``wait_instances`` (the instance row, -1 when merged) and ``wait_reports`` (the report
    index) per rectangle. ``links``: per instance drawn one by one, the points joining its
    ranks (top to bottom); ``arrivals``: per such instance ``(x, y_top, y_bottom)`` of its
    last arrival. ``instances``: the instance rows in view.
    """

    merged: bool = False
    instances: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    waits: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 4)))
    wait_instances: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    wait_reports: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    links: list[list[tuple[float, float]]] = field(default_factory=list)
    arrivals: list[tuple[float, float, float]] = field(default_factory=list)


def plan_overlay(
    overlay: CollectiveOverlay,
    t0_ns: int,
    ns_per_px: float,
    data_x: float,
    width_px: int,
    rows: Mapping[Lane, tuple[float, float]],
) -> OverlayPlan:
    """Plan one frame: ``rows`` holds the top and bottom (widget px) of each lane on
    screen; lanes not in it are not drawn."""
    lo, hi = overlay.window(t0_ns, t0_ns + int(np.ceil(width_px * ns_per_px)))
    plan = OverlayPlan(instances=np.arange(lo, hi, dtype=np.int64))
    if hi <= lo or not rows:
        return plan
    top = np.full(len(overlay.lanes), np.nan)
    bottom = np.full(len(overlay.lanes), np.nan)
    for code, lane in enumerate(overlay.lanes):
        if lane in rows:
            top[code], bottom[code] = rows[lane]
    plan.merged = hi - lo > DETAIL_MAX or width_px / (hi - lo) < DETAIL_MIN_PX
    if plan.merged:
        _merge_waits(plan, overlay, t0_ns, ns_per_px, data_x, width_px, top, bottom)
        return plan
    a, b = int(overlay.bounds[lo]), int(overlay.bounds[hi])
    lane = overlay.lane[a:b]
    entry = np.arange(a, b)[~np.isnan(top[lane])]
    owner = np.searchsorted(overlay.bounds, entry, side="right") - 1

    def x_of(t: np.ndarray) -> np.ndarray:
        x = data_x + (t - t0_ns) / ns_per_px
        return np.clip(x, data_x - 2.0, data_x + width_px + 2.0)

    x0 = x_of(overlay.start_ns[entry])
    x1 = x_of(overlay.start_ns[entry] + overlay.wait_ns[entry])
    waiting = overlay.wait_ns[entry] > 0
    lanes = overlay.lane[entry]
    w = np.maximum(x1 - x0, 1.0)
    rects = np.column_stack([x0, top[lanes] + 2, w, bottom[lanes] - top[lanes] - 4])
    plan.waits = np.ascontiguousarray(rects[waiting])
    plan.wait_instances = owner[waiting]
    reports = np.array([overlay.lanes[c][0] for c in lanes], np.int64)
    plan.wait_reports = reports[waiting] if len(reports) else reports
    middle = (top[lanes] + bottom[lanes]) / 2
    for i in np.unique(owner):
        mine = np.flatnonzero(owner == i)
        order = mine[np.argsort(middle[mine], kind="stable")]
        if len(order) > 1:
            plan.links.append([(float(x0[k]), float(middle[k])) for k in order])
        x = float(x_of(overlay.last_start_ns[i : i + 1])[0])
        y_top = float(top[lanes[order]].min() + 2)
        plan.arrivals.append((x, y_top, float(bottom[lanes[order]].max() - 2)))
    return plan


def _merge_waits(plan, overlay, t0_ns, ns_per_px, data_x, width_px, top, bottom) -> None:
    """Per lane on screen, the pixel columns a wait touches, as runs (module docstring)."""
    edges = t0_ns + np.rint(np.arange(width_px + 1) * ns_per_px).astype(np.int64)
    rects, reports = [], []
    for code in np.flatnonzero(~np.isnan(top)):
        starts, reach = overlay.wait_starts[code], overlay.wait_reach[code]
        if not len(starts):
            continue
        # The waits starting before a column's right edge: the latest of their ends.
        last = np.searchsorted(starts, edges[1:], side="left") - 1
        touched = (last >= 0) & (reach[np.maximum(last, 0)] > edges[:-1])
        step = np.diff(np.concatenate(([0], touched.view(np.int8), [0])))
        first, stop = np.flatnonzero(step == 1), np.flatnonzero(step == -1)
        if not len(first):
            continue
        run = np.column_stack([data_x + first, np.full(len(first), top[code] + 2),
                               (stop - first).astype(np.float64),
                               np.full(len(first), bottom[code] - top[code] - 4)])  # fmt: skip
        rects.append(run)
        reports.append(np.full(len(first), overlay.lanes[code][0], np.int64))
    if rects:
        plan.waits = np.ascontiguousarray(np.concatenate(rects), dtype=np.float64)
        plan.wait_reports = np.concatenate(reports)
        plan.wait_instances = np.full(len(plan.waits), -1, np.int64)
