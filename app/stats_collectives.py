"""The stats panel's Collectives tab: collectives matched across the shown reports (one per
rank), found once per set and offsets on a worker; choosing one centres the timeline on it
across every rank and selects its span over the ranks' collective rows. The match is also
handed to the timeline state, which draws it over the rows (each rank's wait shaded, the
ranks joined) while the overlay is on. The tab's view selector lists each instance, each
collective type (count, total wait, worst straggler; choosing one centres its worst
instance) or each rank's share of the wait. Aligned on anchor events, the status says how far
apart the other collectives' ends still are (the residual skew).

Like the Expert tab it lists the whole reports, not the panel's time scope: matching the
n-th collective needs every occurrence.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.collectives import CollectiveMatch, anchored_instance, collectives
from strata.analysis.timefmt import format_duration_ns, pluralize
from strata.app.event_lookup import scroll_track_into_view
from strata.app.jobs import JobRunner
from strata.app.stats_jobs import ShownReports, run_for_set
from strata.viewer.collectives_view import collective_view_frame
from strata.viewer.state.collective_overlay import CollectiveOverlay
from strata.viewer.stats_panel import StatsPanel
from strata.viewer.timeline import TimelineWidget

__all__ = ["CollectiveList"]


class CollectiveList(QObject):
    """Match and list the collectives of the shown reports.

    Signals
    -------
    collectives_ready(object)
        :class:`~analysis.collectives.CollectiveMatch` of the shown reports is listed.
    failed(str)
        The collectives could not be matched (one line).
    """

    collectives_ready = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        panel: StatsPanel,
        runner: JobRunner,
        timeline: TimelineWidget,
        anchor_rows: Callable[[], dict[int, tuple[str, int]]] = dict,
    ):
        super().__init__(panel)
        self._panel, self._runner, self._timeline = panel, runner, timeline
        #: Per report index, its anchor event (table, row) when aligned on anchors.
        self._anchor_rows = anchor_rows
        self._shown = ShownReports()
        self._found: CollectiveMatch | None = None
        self._status = ""  # the status line of the listed match
        panel.collective_view_changed.connect(lambda _view: self._show())

    def found(self) -> CollectiveMatch | None:
        return self._found

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; new reports or offsets are matched again (on a worker)."""
        moved = shown.offsets != self._shown.offsets
        self._shown = shown
        if is_new or moved:
            self._found = None
            self._match()

    def _match(self) -> None:
        shown = self._shown
        self._timeline.state.set_collectives(None)  # of other reports or offsets
        if not len(shown.reports):
            self._panel.show_collectives(pd.DataFrame())
            return
        self._panel.show_collectives(pd.DataFrame(), "Matching collectives across ranks…")
        offsets, alignment = shown.offsets, shown.alignment
        run_for_set(self._runner, shown,
                    lambda rs: collectives(rs, alignment, offsets_ns=offsets),
                    "collectives", lambda: self._shown, self._on_ready,
                    self._on_failed)  # fmt: skip

    def _on_failed(self, text: str) -> None:
        self._panel.show_collectives(pd.DataFrame(), f"Collectives failed: {text}")
        self.failed.emit(text)

    def _on_ready(self, found: CollectiveMatch) -> None:
        self._found = found
        shown = self._shown
        overlay = CollectiveOverlay.from_match(found, shown.reports.reports, shown.offsets)
        self._timeline.state.set_collectives(overlay)
        status = _status(found)
        anchors = self._anchor_rows()
        if anchors:
            status = _residual_status(found, anchored_instance(found, anchors)) + " · " + status
        self._status = status
        self._show()
        self.collectives_ready.emit(found)

    def _show(self) -> None:
        """List the chosen view of the match."""
        if self._found is not None:
            frame = collective_view_frame(self._found, self._panel.collective_view())
            self._panel.show_collectives(frame, self._status)

    def focus_collective(self, record: dict) -> None:
        """Centre the timeline on one matched collective (of a type: its worst) across every
        rank and select its span (first start to last end) over the rows of its ranks'
        collective events."""
        found, row = self._found, record.get("instance_row")
        if found is None or row is None or pd.isna(row):  # a rank's wait: nothing to centre
            return
        ranks = found.ranks[found.ranks["instance_row"] == int(row)]
        if ranks.empty:
            return
        start, end = int(ranks["start_ns"].min()), int(ranks["end_ns"].max())
        pad = max((end - start) // 4, 1_000)
        rows = self._rows_of(ranks)
        state = self._timeline.state
        state.set_view_range(start - pad, end + pad)
        state.select(start, end, rows)
        if rows:
            scroll_track_into_view(self._timeline, rows[0])

    def _rows_of(self, ranks: pd.DataFrame) -> list[str]:
        """Keys of the timeline rows holding each rank's collective event."""
        reports = self._shown.reports
        wanted = set()
        for index, table, row in zip(ranks["report_index"], ranks["table"], ranks["row"],
                                     strict=True):  # fmt: skip
            events = reports[int(index)].tables.get(str(table))
            if events is not None and "track_id" in events and 0 <= int(row) < len(events):
                wanted.add((int(index), str(table), int(events["track_id"][int(row)])))
        keys = []
        for track in self._timeline.state.tracks():
            if any((track.report_index, t, i) in wanted for t, i in track.parts):
                keys.append(track.key)
        return keys


def _status(found: CollectiveMatch) -> str:
    """'40 collectives matched across 4 reports; worst straggler rank2.sqlite · notes'."""
    inst = found.instances
    if not len(inst):
        text = "No collectives matched"
    else:
        reports = pluralize(int(inst["ranks"].max()), "report")
        text = f"{pluralize(len(inst), 'collective')} matched across {reports}"
        worst = found.summary.sort_values("caused_wait_ns", ascending=False).iloc[0]
        text += f"; worst straggler {worst['worst_straggler']} ({worst['collective']})"
    if found.alignment:
        text += f" · alignment: {found.alignment}"
    if found.notes:
        text += " · " + "; ".join(found.notes)
    return text


def _residual_status(found: CollectiveMatch, anchor: int | None) -> str:
    """'Aligned on AllReduce #11: the other 39 collectives' ends 3.1 µs apart at most …'."""
    inst = found.instances
    others = np.ones(len(inst), bool)
    if anchor is None:
        text = "Aligned on the anchor events"
    else:
        others[anchor] = False
        row = inst.iloc[anchor]
        text = f"Aligned on {row['collective']} #{int(row['instance'])}"
    skew = inst["end_skew_ns"].to_numpy(np.int64)[others & (inst["ranks"].to_numpy() > 1)]
    if not len(skew):
        return text
    what = pluralize(len(skew), "other collective") if anchor is not None else \
        pluralize(len(skew), "collective")  # fmt: skip
    return (f"{text}: residual skew (last end − first end) of the {what}: median "
            f"{format_duration_ns(float(np.median(skew)))}, max "
            f"{format_duration_ns(int(skew.max()))}")  # fmt: skip
